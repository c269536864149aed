//! A robot off plan is an obstacle the robots on plans hold short of: the
//! right arm's plan runs straight through the left arm, which stands
//! parked without a plan. The right arm obeys its speed scaling and grant
//! (plan time advances at the scaling, never past the grant's end): it is
//! slowed and held on its path short of the left arm, its stop flag set
//! once by its grant and never by the robot check, and it rests outside
//! the clearance margin, near it (not held at a distance for nothing).

use crate::common;

use crate::refine::{LEFT_PAN, Spheres, q_left, q_right};
use common::cell::{guard, sample_cell};
use workcell_guard_core::arbiter::GrantState;
use workcell_guard_core::forecast::track::JointPlan;
use workcell_guard_core::guard::{Guard, Inputs, JointStateIn, StopSource};

const DT: f64 = 0.002;

fn step(g: &mut Guard, t: f64, right_j1: f64) {
    let (l, r) = (q_left(LEFT_PAN), q_right(right_j1));
    let inputs = [
        JointStateIn { robot: 0, stamp_s: t, positions: &l, velocities: None },
        JointStateIn { robot: 1, stamp_s: t, positions: &r, velocities: None },
    ];
    g.step(t, &Inputs::joints(&inputs));
}

#[test]
fn a_plan_through_a_parked_arm_is_held_short_of_it_on_its_path_not_stopped() {
    let margin = sample_cell().margins.clearance_m;
    let mut sp = Spheres::new();
    // Where the right arm, turning from −1.5 rad, first touches the left arm.
    let mut touch = -1.5;
    while sp.gap(touch) > 0.0 {
        touch += 0.005;
        assert!(touch < 1.5, "the arms never meet");
    }
    let mut g = guard();
    let (start, mut t) = (-1.5, 0.0);
    for _ in 0..400 {
        t += DT;
        step(&mut g, t, start);
    }
    assert!(!g.commands()[1].stop, "the right arm stopped at rest at its start");
    // 1 rad/s through the left arm and 0.3 rad beyond, waypoints every 10 ms.
    let end = touch + 0.3;
    let n = ((end - start) / 0.01).ceil() as usize;
    let times: Vec<f64> = (0..=n).map(|k| k as f64 * 0.01).collect();
    let positions: Vec<f64> = (0..=n).flat_map(|k| q_right(start + (end - start) * k as f64 / n as f64)).collect();
    g.set_plan(1, Some(JointPlan::new(8, times, positions).unwrap())).unwrap();
    let (mut s, mut j1, mut least) = (0.0, start, f64::INFINITY);
    let (mut checks, mut flips, mut was) = (0, 0, false);
    for _ in 0..3000 {
        t += DT;
        step(&mut g, t, j1);
        let c = g.commands()[1];
        checks += usize::from(c.stop && c.source != StopSource::Grant);
        flips += usize::from(c.stop != was);
        was = c.stop;
        if c.stop {
            continue;
        }
        let until = match c.grant.state {
            GrantState::Proceed | GrantState::Hold => c.grant.until_s,
            _ => f64::INFINITY,
        };
        s = (s + DT * c.speed_scaling).min(until);
        j1 = start + s;
        least = least.min(sp.gap(j1));
    }
    let c = g.commands()[1];
    println!(
        "touches at j1 {touch:.3}; held at {j1:.3} ({:.4} m apart, least {least:.4} m), {:?} by {:?}; \
         stopped by the check {checks} cycles, stop flag changed {flips} times",
        sp.gap(j1),
        c.grant.state,
        c.grant.held_by
    );
    assert_eq!(checks, 0, "the robot check stopped the arm on its grant");
    assert_eq!((c.grant.state, c.grant.held_by), (GrantState::Hold, Some(0)), "not held for the parked arm");
    assert!(c.stop && c.source == StopSource::Grant, "held, its stop flag is its grant's");
    assert!(flips <= 2, "the stop flag changed {flips} times");
    assert!(least > margin, "came within the margin of the parked arm: {least} m");
    assert!(least < margin + 0.06, "held {least} m from the parked arm, for nothing");
}
