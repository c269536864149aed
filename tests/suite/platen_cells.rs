//! Platen cells as users draw them: cords grown as discs (a unit slides
//! past a diagonal cord), and cells of platen units with no manipulator.

use crate::common;

use crate::platen::{platen, rect, report_all, unit};
use workcell_guard_core::field::DistanceField;
use workcell_guard_core::guard::{Inputs, MoveRequest, PlatenPoseIn};
use workcell_guard_core::platen::*;
use workcell_guard_description::workcell;

/// A 12 mm cord on the diagonal, and a unit turned 45° whose edge runs
/// parallel to it `gap` beyond its surface (cells of 0.25 mm).
fn diagonal_cord(gap: f64) -> (BitAllocator, [f64; 2]) {
    let half = 0.02;
    let n = [std::f64::consts::FRAC_1_SQRT_2, -std::f64::consts::FRAC_1_SQRT_2];
    let off = half + 0.006 + gap;
    let at = [0.15 + off * n[0], 0.15 + off * n[1]];
    let p = platen(
        [0.4, 0.4],
        0.00025,
        vec![
            unit("slider", rect(2.0 * half, 2.0 * half), [at[0], at[1], std::f64::consts::FRAC_PI_4], None),
            unit("corded", rect(0.04, 0.04), [0.32, 0.32, 0.0], Some(([0.02, 0.02], 0.012))),
        ],
        vec![],
    );
    let mut a = BitAllocator::new(&p).unwrap();
    report_all(&mut a, 0.0);
    (a, at)
}

#[test]
fn a_unit_slides_past_a_diagonal_cord_with_two_millimetres_to_spare() {
    // Along the cord, 2 mm clear of its surface: granted. A cord grown by a
    // square reached 2.5 mm farther at 45° and denied it.
    let (mut a, at) = diagonal_cord(0.002);
    let d = 0.08 * std::f64::consts::FRAC_1_SQRT_2;
    let goal = [at[0] + d, at[1] + d, std::f64::consts::FRAC_PI_4];
    assert_eq!(a.request(0.0, 0, 1, goal), Answer::Granted { request_id: 1, goal });
    a.assert_invariants();
    // Towards it by 3 mm (1 mm into it): the cord still blocks.
    let (mut a, at) = diagonal_cord(0.002);
    let d = 0.003 * std::f64::consts::FRAC_1_SQRT_2;
    let ans = a.request(0.0, 0, 2, [at[0] - d, at[1] + d, std::f64::consts::FRAC_PI_4]);
    let Answer::Partial { blocker, fraction, .. } = ans else { panic!("{ans:?}") };
    assert_eq!(blocker, Blocker::Unit(1));
    assert!(fraction < 0.67, "stops before the cord's surface: {fraction}");
}

#[test]
fn a_guard_over_units_alone_answers_their_requests_in_its_cycle() {
    let cell = workcell::load(&common::repo().join("config/platen_cell.yaml")).unwrap();
    let field = DistanceField::from_workcell(&cell);
    let dir = tempfile::tempdir().unwrap();
    let (mut g, _) = workcell_guard_description::build_guard(&cell, field, Some(dir.path())).unwrap();
    let poses: Vec<PlatenPoseIn> = cell
        .platen
        .as_ref()
        .unwrap()
        .units
        .iter()
        .enumerate()
        .map(|(unit, u)| PlatenPoseIn { unit, stamp_s: 0.0, pose: u.initial_pose })
        .collect();
    let slider = cell.platen.as_ref().unwrap().units[1].initial_pose;
    let d = 0.08 * std::f64::consts::FRAC_1_SQRT_2;
    let goal = [slider[0] + d, slider[1] + d, slider[2]];
    let requests = [MoveRequest { unit: 1, request_id: 3, target: goal }];
    let out =
        g.step(0.0, &Inputs { joint_states: &[], platen_poses: &poses, platen_requests: &requests, platen_paths: &[] });
    assert!(out.manipulators.is_empty());
    assert_eq!(out.answers, [(1, Answer::Granted { request_id: 3, goal })]);
    assert_eq!(out.platen[1], UnitStatus::Moving { request_id: 3, goal });
    // Cycles go on with nothing to decide for arms.
    let out =
        g.step(0.01, &Inputs { joint_states: &[], platen_poses: &poses, platen_requests: &[], platen_paths: &[] });
    assert!(out.answers.is_empty() && out.manipulators.is_empty());
}
