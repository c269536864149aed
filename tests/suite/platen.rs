//! Platen allocation: the bitmap allocator against a naive
//! per-cell boolean grid over random sequences, conservative rasterization,
//! and the grant / partial / denied / deallocation semantics on real cells.

use crate::common;

use proptest::prelude::*;
use workcell_guard_core::Frame;
use workcell_guard_core::platen::geom::{Pieces, place};
use workcell_guard_core::platen::*;
use workcell_guard_description::workcell::{self, AllocationSettings, Platen, PlatenObstacle, PlatenUnit, Umbilical};

pub(crate) fn rect(w: f64, h: f64) -> Vec<[f64; 2]> {
    vec![[-w / 2.0, -h / 2.0], [w / 2.0, -h / 2.0], [w / 2.0, h / 2.0], [-w / 2.0, h / 2.0]]
}

pub(crate) fn unit(name: &str, fp: Vec<[f64; 2]>, at: [f64; 3], cord: Option<([f64; 2], f64)>) -> PlatenUnit {
    PlatenUnit {
        name: name.into(),
        footprint_xy_m: fp,
        umbilical: cord.map(|(anchor_xy_m, width_m)| Umbilical {
            anchor_xy_m,
            via_xy_m: vec![],
            attach_xy_m: [0.0, 0.0],
            width_m,
        }),
        max_decel_mps2: 2.0,
        priority: 0,
        max_speed_mps: 0.5,
        initial_pose: at,
    }
}

pub(crate) fn platen(size: [f64; 2], cell_m: f64, units: Vec<PlatenUnit>, obstacles: Vec<PlatenObstacle>) -> Platen {
    Platen {
        pose: Frame::from_xyz_rpy([0.0; 3], [0.0; 3]),
        size_xy_m: size,
        cell_m,
        units,
        obstacles,
        allocation: AllocationSettings::default(),
    }
}

fn obstacle(name: &str, x0: f64, y0: f64, x1: f64, y1: f64) -> PlatenObstacle {
    PlatenObstacle { name: name.into(), polygon_xy_m: vec![[x0, y0], [x1, y0], [x1, y1], [x0, y1]] }
}

fn sample_platen() -> Platen {
    workcell::load(&common::repo().join("config/workcell.yaml")).unwrap().platen.unwrap()
}

/// Sends every unit a pose update where it stands.
pub(crate) fn report_all<M: CellMap>(a: &mut Allocator<M>, now: f64) {
    for u in 0..a.units() {
        let p = a.pose(u);
        assert!(!matches!(a.pose_update(now, u, now, p), UnitStatus::Stopped(_)));
    }
}

fn cells<M: CellMap>(m: &M, g: &Grid) -> Vec<bool> {
    (0..g.rows).flat_map(|r| (0..g.cols).map(move |c| (r, c))).map(|c| m.get(c)).collect()
}

// ---------------------------------------------------------------- semantics

#[test]
fn the_sample_platen_grants_a_free_move_and_frees_it_on_arrival() {
    let p = sample_platen();
    let mut a = BitAllocator::new(&p).unwrap();
    a.assert_invariants();
    let before = a.unit_map(0).count();
    report_all(&mut a, 0.0);
    // mover_a from (0.2, 0.3) up by 0.2 m: nothing in the way.
    let goal = [0.2, 0.5, 0.0];
    assert_eq!(a.request(0.01, 0, 7, goal), Answer::Granted { request_id: 7, goal });
    a.assert_invariants();
    let held = a.unit_map(0).count();
    assert!(held > before + 20_000, "the swept area is held: {held} cells vs {before}");
    assert_eq!(a.status(0, 0.01), UnitStatus::Moving { request_id: 7, goal });
    // Halfway: the cells behind are freed, those ahead still held.
    let st = a.pose_update(0.02, 0, 0.02, [0.2, 0.4, 0.0]);
    assert_eq!(st, UnitStatus::Moving { request_id: 7, goal });
    a.assert_invariants();
    let g = *a.grid();
    let cell = |x: f64, y: f64| ((y / g.cell_m) as usize, (x / g.cell_m) as usize);
    assert!(!a.world().get(cell(0.2, 0.25)), "start footprint's back edge freed");
    assert!(a.world().get(cell(0.2, 0.55)), "goal still held");
    assert!(a.unit_map(0).count() < held);
    // Arrival: only the footprint and cord stay.
    assert_eq!(a.pose_update(0.03, 0, 0.03, goal), UnitStatus::Idle);
    a.assert_invariants();
    assert!(!a.world().get(cell(0.2, 0.4)), "path freed");
    assert!(a.world().get(cell(0.2, 0.5)));
    assert!(a.world().get(cell(0.05, 0.5)), "the cord to the anchor at (0, 0.5) is held");
}

#[test]
fn a_blocked_move_is_granted_up_to_the_farthest_safe_point() {
    let p = sample_platen();
    let mut a = BitAllocator::new(&p).unwrap();
    report_all(&mut a, 0.0);
    // mover_a (0.12 square at (0.2, 0.3)) right along y = 0.125: the fixture
    // plate spans x 0.45..0.6, y 0.05..0.2.
    assert!(matches!(a.request(0.0, 0, 1, [0.2, 0.125, 0.0]), Answer::Granted { .. }));
    a.pose_update(0.01, 0, 0.01, [0.2, 0.125, 0.0]);
    let ans = a.request(0.02, 0, 2, [0.8, 0.125, 0.0]);
    let Answer::Partial { goal, fraction, blocker, .. } = ans else { panic!("{ans:?}") };
    assert_eq!(blocker, Blocker::Obstacle(0));
    assert_eq!(a.blocker_name(blocker), "fixture_plate");
    // Its leading edge (x + 0.06) stops within two cells of the plate.
    let edge = goal[0] + 0.06;
    assert!(edge < 0.45 && edge > 0.45 - 0.003, "stops at {edge}");
    assert!((fraction - (goal[0] - 0.2) / 0.6).abs() < 1e-9);
    a.assert_invariants();
}

#[test]
fn the_blocker_named_is_what_stops_the_move_first_not_the_first_taken_cell_in_row_order() {
    // `ell` moves left along y = 0.12; `slim` stands in its way at x = 0.30;
    // a fixed block lies farther along and lower on the surface (its cells
    // come first in row-major order).
    let scene = |ell_x: f64, slim_y: f64| {
        let p = platen(
            [0.8, 0.4],
            0.002,
            vec![
                unit("ell", l_shape(0.1, 0.1), [ell_x, 0.12, 0.0], None),
                unit("slim", rect(0.02, 0.1), [0.30, slim_y, 0.0], None),
            ],
            vec![obstacle("block", 0.04, 0.02, 0.10, 0.08)],
        );
        let mut a = BitAllocator::new(&p).unwrap();
        report_all(&mut a, 0.0);
        a
    };
    let mut a = scene(0.60, 0.15);
    let ans = a.request(0.0, 0, 1, [0.12, 0.12, 0.0]);
    let Answer::Partial { goal, blocker, .. } = ans else { panic!("{ans:?}") };
    assert_eq!(a.blocker_name(blocker), "slim", "{ans:?}");
    // Its left edge (x − 0.05) stops just before slim's right one (0.31).
    let edge = goal[0] - 0.05;
    assert!(edge > 0.31 && edge < 0.31 + 0.005, "stops at {edge}");
    a.assert_invariants();
    // Right next to slim: denied, naming slim.
    let mut a = scene(0.363, 0.15);
    let ans = a.request(0.0, 0, 1, [0.12, 0.12, 0.0]);
    let Answer::Denied { blocker, .. } = ans else { panic!("{ans:?}") };
    assert_eq!(a.blocker_name(blocker), "slim", "{ans:?}");
    // With slim gone from the way, the block is what stops it.
    let mut a = scene(0.60, 0.33);
    let Answer::Partial { blocker, .. } = a.request(0.0, 0, 1, [0.0, 0.12, 0.0]) else { panic!() };
    assert_eq!(a.blocker_name(blocker), "block");
}

#[test]
fn a_move_with_no_room_is_denied_with_a_retry_after_and_the_blocker_named() {
    let mut p = platen(
        [0.6, 0.4],
        0.002,
        vec![unit("a", rect(0.1, 0.1), [0.2, 0.2, 0.0], None), unit("b", rect(0.1, 0.1), [0.303, 0.2, 0.0], None)],
        vec![],
    );
    p.allocation.retry_after_s = 1.0;
    let mut a = BitAllocator::new(&p).unwrap();
    report_all(&mut a, 0.0);
    let world0 = a.world().clone();
    let ans = a.request(0.0, 0, 1, [0.5, 0.2, 0.0]);
    assert_eq!(ans, Answer::Denied { request_id: 1, retry_after_s: 1.0, blocker: Blocker::Unit(1) });
    assert!(a.world().same(&world0), "the footprint went back");
    a.assert_invariants();
    report_all(&mut a, 0.5);
    let again = a.request(0.5, 0, 2, [0.2, 0.3, 0.0]);
    assert!(
        matches!(again, Answer::Refused { request_id: 2, reason: Refusal::RetryTooSoon { wait_s } } if (wait_s - 0.5).abs() < 1e-9)
    );
    report_all(&mut a, 1.0);
    assert!(matches!(a.request(1.0, 0, 3, [0.2, 0.3, 0.0]), Answer::Granted { .. }));
    a.assert_invariants();
}

#[test]
fn cords_block_moves_and_their_sweeps_are_checked() {
    // b's cord runs from its anchor on the top edge down to b; a's straight
    // path crosses only the cord.
    let p = platen(
        [1.0, 1.0],
        0.002,
        vec![
            unit("a", rect(0.1, 0.1), [0.2, 0.7, 0.0], Some(([0.0, 0.7], 0.02))),
            unit("b", rect(0.1, 0.1), [0.6, 0.4, 0.0], Some(([0.6, 1.0], 0.02))),
        ],
        vec![],
    );
    let mut a = BitAllocator::new(&p).unwrap();
    report_all(&mut a, 0.0);
    let ans = a.request(0.0, 0, 1, [0.9, 0.7, 0.0]);
    let Answer::Partial { goal, blocker, .. } = ans else { panic!("{ans:?}") };
    assert_eq!(blocker, Blocker::Unit(1));
    let edge = goal[0] + 0.05;
    assert!(edge < 0.59 && edge > 0.59 - 0.005, "stops short of the cord: {edge}");
    a.assert_invariants();

    // a's own cord sweeps a triangle from its anchor: an obstacle inside the
    // triangle, clear of the footprint's path, blocks the move.
    let p = platen(
        [1.0, 1.0],
        0.002,
        vec![unit("a", rect(0.1, 0.1), [0.2, 0.2, 0.0], Some(([0.0, 0.9], 0.02)))],
        vec![obstacle("post", 0.15, 0.55, 0.2, 0.6)],
    );
    let mut a = BitAllocator::new(&p).unwrap();
    report_all(&mut a, 0.0);
    let ans = a.request(0.0, 0, 1, [0.6, 0.2, 0.0]);
    let Answer::Partial { blocker, goal, .. } = ans else { panic!("{ans:?}") };
    assert_eq!(blocker, Blocker::Obstacle(0));
    assert!(goal[0] < 0.6);
    // Without the cord the same move is free.
    let mut p2 = p.clone();
    p2.units[0].umbilical = None;
    let mut a2 = BitAllocator::new(&p2).unwrap();
    report_all(&mut a2, 0.0);
    assert!(matches!(a2.request(0.0, 0, 1, [0.6, 0.2, 0.0]), Answer::Granted { .. }));
}

#[test]
fn requests_need_a_fresh_pose_an_idle_unit_and_a_finite_target() {
    let p = sample_platen();
    let mut a = BitAllocator::new(&p).unwrap();
    let t = [0.2, 0.4, 0.0];
    assert_eq!(a.request(0.0, 0, 1, t), Answer::Refused { request_id: 1, reason: Refusal::NoPose });
    a.pose_update(0.0, 0, 0.0, [0.2, 0.3, 0.0]);
    assert!(matches!(
        a.request(0.5, 0, 2, t),
        Answer::Refused { reason: Refusal::StalePose { age_s }, .. } if (age_s - 0.5).abs() < 1e-12
    ));
    a.pose_update(0.5, 0, 0.5, [0.2, 0.3, 0.0]);
    assert_eq!(
        a.request(0.5, 0, 3, [f64::NAN, 0.0, 0.0]),
        Answer::Refused { request_id: 3, reason: Refusal::BadTarget }
    );
    assert!(matches!(a.request(0.5, 0, 4, t), Answer::Granted { .. }));
    assert_eq!(a.request(0.5, 0, 5, t), Answer::Refused { request_id: 5, reason: Refusal::Busy { current: 4 } });
    assert_eq!(a.request(0.5, 9, 6, t), Answer::Refused { request_id: 6, reason: Refusal::UnknownUnit });
    // A moving unit whose poses stop coming must stop.
    assert!(matches!(a.status(0, 0.7), UnitStatus::Stopped(StopReason::StalePose { .. })));
    assert!(matches!(a.pose_update(0.7, 0, 0.7, [0.2, 0.32, 0.0]), UnitStatus::Moving { .. }));
    a.assert_invariants();
}

#[test]
fn bad_and_outside_poses_stop_the_unit_and_leave_the_maps_alone() {
    let p = sample_platen();
    let mut a = BitAllocator::new(&p).unwrap();
    report_all(&mut a, 0.0);
    let world = a.world().clone();
    let st = a.pose_update(0.1, 0, f64::NAN, [0.2, 0.3, 0.0]);
    assert_eq!(st, UnitStatus::Stopped(StopReason::BadPose(PoseError::NotFinite)));
    let st = a.pose_update(0.1, 0, 0.0, [0.2, 0.3, 0.0]);
    assert!(matches!(st, UnitStatus::Stopped(StopReason::BadPose(PoseError::OutOfOrder { .. }))));
    let st = a.pose_update(0.1, 0, 0.5, [0.2, 0.3, 0.0]);
    assert!(matches!(st, UnitStatus::Stopped(StopReason::BadPose(PoseError::FutureStamp { .. }))));
    assert!(matches!(a.request(0.1, 0, 1, [0.2, 0.4, 0.0]), Answer::Refused { reason: Refusal::Stopped, .. }));
    // Standing 5 cm off its footprint: a breach, in free space.
    let st = a.pose_update(0.1, 0, 0.1, [0.25, 0.3, 0.0]);
    assert!(matches!(st, UnitStatus::Stopped(StopReason::Breach { blocker: None, .. })), "{st:?}");
    // Standing on the other unit: a breach naming it.
    let st = a.pose_update(0.15, 0, 0.15, [0.75, 0.7, 0.0]);
    assert!(matches!(st, UnitStatus::Stopped(StopReason::Breach { blocker: Some(Blocker::Unit(1)), .. })), "{st:?}");
    assert!(a.world().same(&world));
    a.assert_invariants();
    // Back where it holds: released.
    assert_eq!(a.pose_update(0.2, 0, 0.2, [0.2, 0.3, 0.0]), UnitStatus::Idle);
}

#[test]
fn an_overlapping_initial_layout_is_refused_naming_both() {
    let p = platen(
        [0.5, 0.5],
        0.002,
        vec![unit("a", rect(0.1, 0.1), [0.2, 0.2, 0.0], None), unit("b", rect(0.1, 0.1), [0.28, 0.2, 0.0], None)],
        vec![],
    );
    match BitAllocator::new(&p) {
        Err(PlatenError::Overlap { a, b, .. }) => assert_eq!((a.as_str(), b.as_str()), ("a", "b")),
        other => panic!("{other:?}"),
    }
    let p = platen(
        [0.5, 0.5],
        0.002,
        vec![unit("a", rect(0.1, 0.1), [0.2, 0.2, 0.0], None)],
        vec![obstacle("o", 0.0, 0.0, 0.16, 0.16)],
    );
    assert!(matches!(BitAllocator::new(&p), Err(PlatenError::Overlap { .. })));
}

#[test]
fn both_install_strategies_give_the_same_answers() {
    let p = sample_platen();
    let mut a = BitAllocator::new(&p).unwrap();
    let mut b = BitAllocator::new(&p).unwrap();
    b.set_install(Install::AsYouGo);
    let mut rng = 1u64;
    let mut next = || {
        rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (rng >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut now = 0.0;
    for i in 0..200 {
        now += 1.1;
        report_all(&mut a, now);
        report_all(&mut b, now);
        let u = i % 2;
        let p0 = a.pose(u);
        let ang = next() * std::f64::consts::TAU;
        let t = [p0[0] + 0.2 * ang.cos(), p0[1] + 0.2 * ang.sin(), p0[2] + next() - 0.5];
        let (x, y) = (a.request(now, u, i as u64, t), b.request(now, u, i as u64, t));
        assert_eq!(x, y);
        assert!(a.world().same(b.world()));
        if let Answer::Granted { goal, .. } | Answer::Partial { goal, .. } = x {
            assert_eq!(a.pose_update(now + 0.01, u, now + 0.01, goal), UnitStatus::Idle);
            assert_eq!(b.pose_update(now + 0.01, u, now + 0.01, goal), UnitStatus::Idle);
        }
        a.assert_invariants();
    }
    assert!(a.counts().granted > 20 && a.counts().partial + a.counts().denied > 5, "{:?}", a.counts());
}

// ------------------------------------------------- conservative rasterization

/// An L (not convex) of w × h.
fn l_shape(w: f64, h: f64) -> Vec<[f64; 2]> {
    vec![[-w / 2.0, -h / 2.0], [w / 2.0, -h / 2.0], [w / 2.0, 0.0], [0.0, 0.0], [0.0, h / 2.0], [-w / 2.0, h / 2.0]]
}

fn arb_footprint() -> impl Strategy<Value = Vec<[f64; 2]>> {
    prop_oneof![
        (0.01..0.08f64, 0.01..0.08f64).prop_map(|(w, h)| rect(w, h)),
        (0.02..0.08f64, 0.02..0.08f64).prop_map(|(w, h)| l_shape(w, h)),
        // A triangle off the origin.
        (0.01..0.06f64, 0.0..0.03f64).prop_map(|(s, o)| vec![[o, o], [o + s, o], [o, o + s]]),
    ]
}

fn point_in(poly: &[[f64; 2]], u: f64, v: f64, k: usize) -> [f64; 2] {
    // A point of triangle (p0, p_k, p_k+1) of the fan; the polygons here are
    // star-shaped from vertex 0 (rectangle, L, triangle).
    let n = poly.len();
    let k = 1 + k % (n - 2);
    let (a, b, c) = (poly[0], poly[k], poly[k + 1]);
    let (u, v) = if u + v > 1.0 { (1.0 - u, 1.0 - v) } else { (u, v) };
    [a[0] + u * (b[0] - a[0]) + v * (c[0] - a[0]), a[1] + u * (b[1] - a[1]) + v * (c[1] - a[1])]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Every point the unit or its cord covers at any time of the move lies
    /// in a set cell of the rasterized sweep; and the packed rasterizer sets
    /// exactly the cells the per-cell overlap test sets.
    #[test]
    fn every_point_of_a_swept_area_lies_in_a_set_cell(
        fp in arb_footprint(),
        cell_m in 0.001..0.01f64,
        from in (0.1..0.3f64, 0.1..0.3f64, -3.2..3.2f64),
        to in (0.1..0.3f64, 0.1..0.3f64, -3.2..3.2f64),
        cord in proptest::option::of((0.0..0.4f64, 0.002..0.03f64, proptest::option::of((0.0..0.4f64, 0.0..0.4f64)))),
        samples in proptest::collection::vec((0.0..1.0f64, 0.0..1.0f64, 0.0..1.0f64, 0usize..8, 0.0..1.0f64), 300),
    ) {
        let mut u = unit("u", fp.clone(), [0.2, 0.2, 0.0], None);
        if let Some((ay, w, via)) = cord {
            u.umbilical = Some(Umbilical {
                anchor_xy_m: [0.0, ay],
                via_xy_m: via.map(|(x, y)| vec![[x, y]]).unwrap_or_default(),
                attach_xy_m: [0.005, -0.003],
                width_m: w,
            });
        }
        let shape = UnitShape::new(&u);
        let grid = Grid::new([0.4, 0.4], cell_m);
        let mut pieces = Pieces::default();
        let (from, to) = ([from.0, from.1, from.2], [to.0, to.1, to.2]);
        shape.sweep_pieces(from, to, 0.25 * cell_m, &mut pieces);
        let mut bits = BitMap::new(&grid);
        let mut bools = BoolMap::new(&grid);
        for p in pieces.iter() {
            bits.raster(&grid, p);
            bools.raster(&grid, p);
        }
        prop_assert_eq!(cells(&bits, &grid), cells(&bools, &grid));
        let check = |q: [f64; 2], what: &str| -> Result<(), TestCaseError> {
            if q[0] < 0.0 || q[1] < 0.0 || q[0] >= 0.4 || q[1] >= 0.4 {
                return Ok(());
            }
            let c = ((q[1] / cell_m) as usize, (q[0] / cell_m) as usize);
            prop_assert!(bits.get(c), "{} point {:?} (cell {:?}) not covered", what, q, c);
            Ok(())
        };
        for &(t, a, b, k, s) in &samples {
            let pose = pose_at(from, to, t);
            // Footprint: interior points of its parts, and its vertices.
            let part = &shape.parts[k % shape.parts.len()];
            let local = if part.len() >= 3 { point_in(part, a, b, k) } else { part[0] };
            check(place(pose, local), "footprint")?;
            check(place(pose, fp[k % fp.len()]), "vertex")?;
            if let Some(c) = &shape.cord {
                let end = place(pose, c.attach);
                let last = *c.fixed.last().unwrap();
                let on = [last[0] + s * (end[0] - last[0]), last[1] + s * (end[1] - last[1])];
                let ang = a * std::f64::consts::TAU;
                let r = b * c.half_width;
                check([on[0] + r * ang.cos(), on[1] + r * ang.sin()], "cord")?;
                if c.fixed.len() > 1 {
                    let (p, q) = (c.fixed[0], c.fixed[1]);
                    check([p[0] + s * (q[0] - p[0]) + r * ang.cos(), p[1] + s * (q[1] - p[1]) + r * ang.sin()], "fixed cord")?;
                }
            }
        }
    }

    /// Random convex polygons, slivers, segments and points: both
    /// rasterizers set the same cells, and every vertex's cell is set.
    #[test]
    fn packed_and_per_cell_rasterization_agree(
        pts in proptest::collection::vec((-0.05..0.45f64, -0.05..0.45f64), 1..12),
        cell_m in 0.003..0.02f64,
    ) {
        let grid = Grid::new([0.4, 0.3], cell_m);
        let mut hull: Vec<[f64; 2]> = pts.iter().map(|&(x, y)| [x, y]).collect();
        hull.sort_by(|a, b| a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])));
        hull.dedup();
        let hull = convex_hull(&hull);
        let mut bits = BitMap::new(&grid);
        let mut bools = BoolMap::new(&grid);
        bits.raster(&grid, &hull);
        bools.raster(&grid, &hull);
        prop_assert_eq!(cells(&bits, &grid), cells(&bools, &grid));
        for v in &hull {
            if v[0] >= 0.0 && v[1] >= 0.0 && v[0] < 0.4 && v[1] < 0.3 {
                prop_assert!(bits.get(((v[1] / cell_m) as usize, (v[0] / cell_m) as usize)));
            }
        }
    }
}

/// Counter-clockwise convex hull of sorted, distinct points.
fn convex_hull(p: &[[f64; 2]]) -> Vec<[f64; 2]> {
    if p.len() <= 2 {
        return p.to_vec();
    }
    let cross = |o: [f64; 2], a: [f64; 2], b: [f64; 2]| (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
    let mut h: Vec<[f64; 2]> = Vec::new();
    for pass in 0..2 {
        let start = h.len();
        let it: Box<dyn Iterator<Item = &[f64; 2]>> =
            if pass == 0 { Box::new(p.iter()) } else { Box::new(p.iter().rev()) };
        for &q in it {
            while h.len() >= start + 2 && cross(h[h.len() - 2], h[h.len() - 1], q) <= 0.0 {
                h.pop();
            }
            h.push(q);
        }
        h.pop();
    }
    h
}

// --------------------------------------------- bitmap == naive, random runs

#[derive(Clone, Debug)]
enum Op {
    /// Unit asks to move by (dx, dy, dθ).
    Request(usize, f64, f64, f64),
    /// Unit reports the pose a fraction of the way along its grant.
    Along(usize, f64),
    /// Unit reports its goal.
    Arrive(usize),
    /// Unit reports where it stands, nudged.
    Nudge(usize, f64, f64),
    /// Time passes.
    Wait(f64),
}

fn arb_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0usize..16, -0.12..0.12f64, -0.12..0.12f64, prop_oneof![Just(0.0), -1.0..1.0f64])
            .prop_map(|(u, x, y, t)| Op::Request(u, x, y, t)),
        3 => (0usize..16, -0.03..0.03f64, -0.03..0.03f64, prop_oneof![Just(0.0), -0.3..0.3f64])
            .prop_map(|(u, x, y, t)| Op::Request(u, x, y, t)),
        4 => (0usize..16, 0.0..1.0f64).prop_map(|(u, t)| Op::Along(u, t)),
        5 => (0usize..16).prop_map(Op::Arrive),
        1 => (0usize..16, -0.01..0.01f64, -0.01..0.01f64).prop_map(|(u, x, y)| Op::Nudge(u, x, y)),
        1 => (0.0..0.4f64).prop_map(Op::Wait),
    ]
}

/// 2–16 units on a 0.32 × 0.24 m surface at 4 mm (80 × 60 cells, two words
/// a row), in slots of a 4 × 4 layout; units in the outer rows have cords
/// to the nearer edge; one random obstacle.
fn arb_platen() -> impl Strategy<Value = Platen> {
    (
        2usize..=16,
        proptest::collection::vec((arb_footprint_small(), -0.4..0.4f64, -0.01..0.01f64, -0.008..0.008f64), 16),
        (0.0..0.3f64, 0.0..0.22f64, 0.004..0.02f64),
        any::<bool>(),
    )
        .prop_map(|(n, shapes, (ox, oy, os), cords)| {
            let (w, h) = (0.32, 0.24);
            let units = (0..n)
                .map(|i| {
                    let (fp, th, dx, dy) = shapes[i].clone();
                    let (sx, sy) = (i % 4, i / 4);
                    let at = [0.04 + 0.08 * sx as f64 + dx, 0.03 + 0.06 * sy as f64 + dy, th];
                    let cord = (cords && (sy == 0 || sy == 3)).then(|| ([at[0], if sy == 0 { 0.0 } else { h }], 0.006));
                    unit(&format!("u{i}"), fp, at, cord)
                })
                .collect();
            let mut p = platen([w, h], 0.004, units, vec![obstacle("o", ox, oy, ox + os, oy + os)]);
            p.allocation = AllocationSettings {
                retry_after_s: 0.3,
                pose_timeout_s: 0.5,
                arrive_tolerance_m: 0.002,
                arrive_tolerance_rad: 0.02,
                release_lag_m: 0.004,
                path_check_s: 0.02,
                priority_boost_after_s: None,
            };
            p
        })
}

fn arb_footprint_small() -> impl Strategy<Value = Vec<[f64; 2]>> {
    prop_oneof![
        (0.01..0.03f64, 0.01..0.03f64).prop_map(|(w, h)| rect(w, h)),
        (0.012..0.03f64, 0.012..0.03f64).prop_map(|(w, h)| l_shape(w, h)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Over random sequences of requests, partial grants, pose updates and
    /// arrivals, the bitmap allocator (either install strategy) and the naive
    /// boolean grid give identical answers and statuses and hold identical
    /// maps; the invariants hold after every operation.
    #[test]
    fn the_bitmap_allocator_decides_exactly_as_the_naive_grid(
        p in arb_platen(),
        ops in proptest::collection::vec(arb_op(), 1..120),
        as_you_go in any::<bool>(),
    ) {
        let bits = BitAllocator::new(&p);
        let naive = NaiveAllocator::new(&p);
        prop_assert_eq!(bits.is_ok(), naive.is_ok());
        prop_assume!(bits.is_ok());
        let (mut a, mut b) = (bits.unwrap(), naive.unwrap());
        if as_you_go {
            a.set_install(Install::AsYouGo);
        }
        let n = a.units();
        let g = *a.grid();
        let mut now = 0.0;
        let mut grants: Vec<Option<(Pose2, Pose2)>> = vec![None; n];
        let mut rest: Vec<Pose2> = (0..n).map(|u| a.pose(u)).collect();
        for u in 0..n {
            let p0 = a.pose(u);
            prop_assert_eq!(a.pose_update(now, u, now, p0), b.pose_update(now, u, now, p0));
        }
        let mut id = 0;
        for op in ops {
            now += 0.02;
            match op {
                Op::Request(u, dx, dy, dt) => {
                    let u = u % n;
                    // Units publish their pose all along: one just before.
                    let p0 = a.pose(u);
                    prop_assert_eq!(a.pose_update(now, u, now, p0), b.pose_update(now, u, now, p0));
                    now += 0.001;
                    let t = [p0[0] + dx, p0[1] + dy, p0[2] + dt];
                    id += 1;
                    let (x, y) = (a.request(now, u, id, t), b.request(now, u, id, t));
                    prop_assert_eq!(x, y);
                    if let Answer::Granted { goal, .. } | Answer::Partial { goal, .. } = x {
                        grants[u] = Some((p0, goal));
                    }
                }
                Op::Along(u, t) => {
                    let u = u % n;
                    let q = match grants[u] {
                        Some((from, goal)) => pose_at(from, goal, t),
                        None => a.pose(u),
                    };
                    prop_assert_eq!(a.pose_update(now, u, now, q), b.pose_update(now, u, now, q));
                }
                Op::Arrive(u) => {
                    let u = u % n;
                    let q = grants[u].map(|g| g.1).unwrap_or(rest[u]);
                    let (x, y) = (a.pose_update(now, u, now, q), b.pose_update(now, u, now, q));
                    prop_assert_eq!(x, y);
                    if x == UnitStatus::Idle {
                        grants[u] = None;
                        rest[u] = q;
                    }
                }
                Op::Nudge(u, dx, dy) => {
                    let u = u % n;
                    let p0 = a.pose(u);
                    let q = [p0[0] + dx, p0[1] + dy, p0[2]];
                    prop_assert_eq!(a.pose_update(now, u, now, q), b.pose_update(now, u, now, q));
                }
                Op::Wait(dt) => now += dt,
            }
            a.assert_invariants();
            b.assert_invariants();
            prop_assert_eq!(cells(a.world(), &g), cells(b.world(), &g));
            for u in 0..n {
                prop_assert_eq!(a.status(u, now), b.status(u, now));
                prop_assert_eq!(cells(a.unit_map(u), &g), cells(b.unit_map(u), &g));
            }
        }
        prop_assert_eq!(a.counts(), b.counts());
    }
}

// ------------------------------------------------------------- closed loop

/// Units move to random poses (turning on the way) under the allocator,
/// reporting their pose every 10 ms: the real shapes (footprints, cords as
/// rectangles of their width) never overlap each other or an obstacle, and
/// no unit ever leaves what it holds.
#[test]
fn closed_loop_units_never_overlap() {
    use workcell_guard_sim::platen as sim;
    let mut crowded = platen(
        [0.6, 0.6],
        0.002,
        (0..6)
            .map(|i| {
                let (x, y) = (0.1 + 0.2 * (i % 3) as f64, if i < 3 { 0.15 } else { 0.45 });
                let anchor = [x, if i < 3 { 0.0 } else { 0.6 }];
                unit(&format!("u{i}"), rect(0.08, 0.06), [x, y, 0.0], (i % 2 == 0).then_some((anchor, 0.01)))
            })
            .collect(),
        vec![obstacle("post", 0.28, 0.28, 0.32, 0.32)],
    );
    crowded.units[1].footprint_xy_m =
        vec![[-0.04, -0.03], [0.04, -0.03], [0.04, 0.0], [0.0, 0.0], [0.0, 0.03], [-0.04, 0.03]];
    for (p, episodes) in [(sample_platen(), 6), (crowded, 10)] {
        let mut t = sim::PlatenSimReport::default();
        for seed in 0..episodes {
            t.merge(&sim::episode(&p, seed, 8.0, 0.01).unwrap());
        }
        assert_eq!((t.overlaps, t.stops), (0, 0), "{t:?}");
        assert!(t.arrivals > 20 * p.units.len() && t.partial > 10 && t.granted > 10, "{t:?}");
    }
}

#[test]
fn absurd_but_finite_targets_are_answered_at_once_without_a_panic() {
    let p = sample_platen();
    let mut a = BitAllocator::new(&p).unwrap();
    report_all(&mut a, 0.0);
    for (k, target) in
        [[1e300, 0.2, 0.0], [0.2, -1e300, 0.0], [0.2, 0.3, 1e300], [1e15, 1e15, -1e15], [f64::MAX, f64::MIN, 0.0]]
            .into_iter()
            .enumerate()
    {
        let start = std::time::Instant::now();
        let ans = a.request(0.001 * k as f64, 0, k as u64, target);
        let took = start.elapsed().as_secs_f64();
        assert!(took < 0.5, "{target:?}: {took} s");
        match ans {
            Answer::Granted { .. } => panic!("{target:?} granted"),
            Answer::Partial { goal, .. } => {
                // Arrive there, freeing the rest, before the next request.
                assert!(goal.iter().all(|v| v.is_finite()), "{goal:?}");
                a.pose_update(0.001 * k as f64, 0, 0.001 * k as f64, goal);
            }
            _ => {}
        }
        a.assert_invariants();
        report_all(&mut a, 0.001 * k as f64 + 2.0);
    }
}
