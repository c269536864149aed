//! Exact refinement before a stop between robots: where two arms' spheres
//! come within the clearance margin but the links' exact shapes (parry3d;
//! meshes as their convex hulls) stay clear of it, the arms are not
//! stopped; with the refinement off (the spheres alone, the baseline) they
//! are. An arm driving at the other (no plan: its path extrapolated) is
//! still stopped before the shapes touch, and comes to rest nearer than
//! the spheres alone let it. The sample cell's arms: the left one panned
//! to 0, the right one turning its first joint towards it (the spheres
//! touch near j1 = −0.20, the shapes at −0.14).

use crate::common;

use crate::refine::{Spheres, q_left, q_right};
use common::cell::{guard, sample_cell};
use workcell_guard_core::guard::{Guard, Inputs, JointStateIn, Reason};

const DT: f64 = 0.002;
const PAN: f64 = 0.0;
/// The right arm's first joint: its speed towards the left arm (rad/s) and
/// its braking deceleration (its configured figure, rad/s²).
const SPEED: f64 = 1.0;
const DECEL: f64 = 5.0;

/// Least distance between the two arms' links by their solid exact shapes,
/// over the link pairs the guard checks, m.
fn exact_gap(g: &Guard, right_j1: f64) -> f64 {
    let (l, r) = (q_left(PAN), q_right(right_j1));
    let cell = sample_cell();
    let (na, nb) = (cell.manipulators[0].robot.links.len(), cell.manipulators[1].robot.links.len());
    let mut best = f64::INFINITY;
    for la in 0..na {
        for lb in 0..nb {
            if g.pair_matters(0, la, 1, lb)
                && let Some(d) = g.exact_link_distance((0, la, &l), (1, lb, &r))
            {
                best = best.min(d);
            }
        }
    }
    best
}

/// One cycle with the right arm at `j1` (moving at `v`): whether it is stopped, and for what.
fn step(g: &mut Guard, t: f64, j1: f64, v: f64) -> (bool, Option<Reason>) {
    let (l, mut r) = (q_left(PAN), q_right(j1));
    let (vl, mut vr) = (vec![0.0; l.len()], vec![0.0; r.len()]);
    vr[0] = v;
    r[0] = j1;
    let inputs = [
        JointStateIn { robot: 0, stamp_s: t, positions: &l, velocities: Some(&vl) },
        JointStateIn { robot: 1, stamp_s: t, positions: &r, velocities: Some(&vr) },
    ];
    g.step(t, &Inputs::joints(&inputs));
    let c = &g.commands()[1];
    (c.stop, c.cause.map(|c| c.reason))
}

/// Both arms standing, the right one at `j1`, for 1.5 s: whether the right
/// arm is stopped at the end, and for what.
fn stand(exact: bool, j1: f64) -> (bool, Option<Reason>) {
    let mut g = guard();
    g.set_exact_refinement(exact);
    let mut last = (true, None);
    for k in 0..750 {
        last = step(&mut g, k as f64 * DT, j1, 0.0);
    }
    last
}

#[test]
fn arms_whose_spheres_meet_within_the_margin_but_whose_shapes_do_not_are_not_stopped() {
    let g = guard();
    let mut sp = Spheres::new();
    let j1 = -0.20;
    let (spheres, exact) = (sp.gap_at(PAN, j1), exact_gap(&g, j1));
    let margin = sample_cell().margins.clearance_m;
    println!("right j1 {j1}: sphere gap {spheres:.4} m, exact {exact:.4} m (margin {margin} m)");
    assert!(spheres < margin && exact > 2.0 * margin, "the case needs spheres within the margin, shapes well clear");
    let on = stand(true, j1);
    let off = stand(false, j1);
    println!("stopped with the refinement: {on:?}; spheres alone: {off:?}");
    assert!(!on.0, "stopped although the shapes are {exact:.4} m apart: {on:?}");
    assert!(off.0 && matches!(off.1, Some(Reason::Robot { other: 0 })), "the baseline stops for the left arm: {off:?}");
    // Where the shapes themselves come within the margin, the stop stands.
    let near = -0.16;
    let exact_near = exact_gap(&g, near);
    let on_near = stand(true, near);
    println!("right j1 {near}: exact {exact_near:.4} m, stopped {on_near:?}");
    assert!(exact_near < margin);
    assert!(on_near.0 && matches!(on_near.1, Some(Reason::Robot { other: 0 })), "{on_near:?}");
}

/// The right arm drives its first joint at SPEED towards the left arm from
/// −1.0 rad (no plan), braking at DECEL a reaction time after a stop:
/// where it comes to rest, the least exact gap on the way, and whether it
/// was stopped for the left arm.
fn drive(exact: bool) -> (f64, f64, bool) {
    let mut g = guard();
    g.set_exact_refinement(exact);
    let react = sample_cell().manipulators[1].reaction_time_s;
    let (mut j1, mut v, mut t) = (-1.0, 0.0, 0.0);
    // Standing first, until released.
    for _ in 0..600 {
        step(&mut g, t, j1, 0.0);
        t += DT;
    }
    let (mut brake_at, mut least, mut for_robot) = (None::<f64>, f64::INFINITY, false);
    for k in 0..2000 {
        let (stop, why) = step(&mut g, t, j1, v);
        if stop && brake_at.is_none() {
            brake_at = Some(t + react);
            for_robot = matches!(why, Some(Reason::Robot { other: 0 }));
        }
        v = match brake_at {
            Some(b) if t >= b => (v - DECEL * DT).max(0.0),
            _ => SPEED,
        };
        j1 += v * DT;
        t += DT;
        if k % 5 == 0 || v == 0.0 {
            least = least.min(exact_gap(&g, j1));
        }
        if brake_at.is_some() && v == 0.0 {
            break;
        }
    }
    (j1, least, for_robot)
}

#[test]
fn an_arm_driving_at_another_is_stopped_before_the_shapes_touch_and_nearer_than_by_spheres_alone() {
    let (j_on, least_on, robot_on) = drive(true);
    let (j_off, least_off, robot_off) = drive(false);
    println!("refined: rest at j1 {j_on:.4}, least exact gap {least_on:.4} m (for the left arm: {robot_on})");
    println!("spheres alone: rest at j1 {j_off:.4}, least exact gap {least_off:.4} m (for the left arm: {robot_off})");
    assert!(robot_on && robot_off, "both stopped for the left arm");
    assert!(least_on > 0.0, "the shapes touched: {least_on}");
    assert!(j_on > j_off + 0.01, "the refinement let it come no nearer: {j_on} vs {j_off}");
}
