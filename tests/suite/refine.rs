//! Robot pairs refined per sample: a plan braking to rest just outside the
//! clearance margin of another arm (by less than the path's longest step
//! inflates it) is not stopped, and finishes; a robot leaving a plan that
//! brakes 5 cm short of the other arm, keeping its speed where the plan
//! brakes, is stopped before contact. (Left where it brakes at the arm's
//! full deceleration 2 mm past the margin, no stop could come in time: it
//! needs the plan's whole braking distance, and more for its reaction.)

use crate::common;

use common::cell::{guard, sample_cell};
use workcell_guard_core::forecast::track::JointPlan;
use workcell_guard_core::guard::{Guard, Inputs, JointStateIn};
use workcell_guard_core::model::{PosedSpheres, SpherePoser};

const DT: f64 = 0.002;
/// The right arm's plan speed (rad/s) and braking deceleration (rad/s²,
/// its configured figure in the sample cell).
const SPEED: f64 = 1.0;
const DECEL: f64 = 5.0;
pub(crate) const LEFT_PAN: f64 = 0.3;

pub(crate) fn q_left(pan: f64) -> Vec<f64> {
    vec![pan, 0.7, 1.1, 0.0, 0.0, 0.0, 0.02]
}
pub(crate) fn q_right(j1: f64) -> Vec<f64> {
    vec![j1, 1.2, 0.0, -0.3, 0.0, 0.0, 0.0, 0.0]
}

/// Least gap between the two arms' spheres, m.
pub(crate) struct Spheres {
    posers: Vec<SpherePoser>,
    posed: Vec<PosedSpheres>,
}

impl Spheres {
    pub(crate) fn new() -> Spheres {
        let cell = sample_cell();
        let posers: Vec<SpherePoser> =
            cell.manipulators.iter().map(|m| SpherePoser::new(&m.robot, &m.spheres, m.base)).collect();
        let posed = posers.iter().map(|p| p.posed()).collect();
        Spheres { posers, posed }
    }

    pub(crate) fn gap(&mut self, right_j1: f64) -> f64 {
        self.gap_at(LEFT_PAN, right_j1)
    }

    /// The least gap with the left arm panned to `left_pan` and the right
    /// arm anywhere on its path from `from` to `to` (101 samples).
    pub(crate) fn least_on_path(&mut self, left_pan: f64, (from, to): (f64, f64)) -> f64 {
        (0..=100).map(|k| self.gap_at(left_pan, from + (to - from) * k as f64 / 100.0)).fold(f64::INFINITY, f64::min)
    }

    /// The gap with the left arm panned to `left_pan`.
    pub(crate) fn gap_at(&mut self, left_pan: f64, right_j1: f64) -> f64 {
        self.posers[0].pose(&q_left(left_pan), &mut self.posed[0]).unwrap();
        self.posers[1].pose(&q_right(right_j1), &mut self.posed[1]).unwrap();
        let (a, b) = (&self.posed[0], &self.posed[1]);
        let mut best = f64::INFINITY;
        for i in 0..a.len() {
            for j in 0..b.len() {
                let (dx, dy, dz) = (a.x[i] - b.x[j], a.y[i] - b.y[j], a.z[i] - b.z[j]);
                best = best.min(((dx * dx + dy * dy + dz * dz).sqrt() - a.r[i] - b.r[j]) as f64);
            }
        }
        best
    }

    /// The right arm's `j1` where the sphere gap first falls to `gap`,
    /// turning from −1.5 rad towards the left arm.
    fn reach(&mut self, gap: f64) -> f64 {
        let (mut lo, mut hi) = (-1.5, -1.5);
        while self.gap(hi) > gap {
            lo = hi;
            hi += 0.01;
            assert!(hi < 1.5, "the arms never come within {gap} m");
        }
        for _ in 0..40 {
            let mid = 0.5 * (lo + hi);
            if self.gap(mid) > gap { lo = mid } else { hi = mid }
        }
        lo
    }
}

/// A trapezoid of `j1` from `a` to `b` at SPEED, braking at DECEL:
/// (times, positions), waypoints every 10 ms.
fn trapezoid(a: f64, b: f64) -> (Vec<f64>, Vec<f64>) {
    let d = b - a;
    let ta = SPEED / DECEL;
    let total = 2.0 * ta + (d - SPEED * ta) / SPEED;
    let at = |t: f64| {
        if t <= ta {
            0.5 * DECEL * t * t
        } else if t >= total - ta {
            d - 0.5 * DECEL * (total - t).powi(2)
        } else {
            0.5 * SPEED * ta + SPEED * (t - ta)
        }
    };
    let n = (total / 0.01).ceil() as usize;
    let times: Vec<f64> = (0..=n).map(|k| (k as f64 * 0.01).min(total)).collect();
    let pos = times.iter().map(|&t| a + at(t)).collect();
    (times, pos)
}

fn step(g: &mut Guard, t: f64, right_j1: f64) -> bool {
    let (l, r) = (q_left(LEFT_PAN), q_right(right_j1));
    let inputs = [
        JointStateIn { robot: 0, stamp_s: t, positions: &l, velocities: None },
        JointStateIn { robot: 1, stamp_s: t, positions: &r, velocities: None },
    ];
    g.step(t, &Inputs::joints(&inputs));
    g.commands()[1].stop
}

/// Plays the plan to `end` (leaving it where it brakes with `leave`, and
/// braking at DECEL once stopped): whether it was stopped, where it came
/// to rest, and the least sphere gap on the way.
fn play(end: f64, leave: bool) -> (bool, f64, f64) {
    let mut sp = Spheres::new();
    let mut g = guard();
    let start = -1.5;
    let mut t = 0.0;
    let mut held = true;
    for _ in 0..400 {
        t += DT;
        held = step(&mut g, t, start);
    }
    assert!(!held, "the right arm stopped at rest at its start");
    let (times, pos) = trapezoid(start, end);
    let mut positions = Vec::new();
    for &x in &pos {
        positions.extend(q_right(x));
    }
    let plan = JointPlan::new(8, times.clone(), positions).unwrap();
    g.set_plan(1, Some(plan.clone())).unwrap();
    let brake_at = times[times.len() - 1] - SPEED / DECEL;
    let (mut stopped, mut braking) = (false, None::<(f64, f64)>);
    let (t0, mut j1, mut least) = (t, start, f64::INFINITY);
    let mut q = vec![0.0; 8];
    while t - t0 < times[times.len() - 1] + 2.0 {
        t += DT;
        let s = t - t0;
        j1 = match braking {
            Some((x, v)) => {
                let v2 = (v - DECEL * DT).max(0.0);
                braking = Some((x + 0.5 * (v + v2) * DT, v2));
                x + 0.5 * (v + v2) * DT
            }
            None if leave && s > brake_at => {
                plan.at_time(brake_at, &mut q);
                q[0] + SPEED * (s - brake_at)
            }
            None => {
                plan.at_time(s, &mut q);
                q[0]
            }
        };
        least = least.min(sp.gap(j1));
        if step(&mut g, t, j1) && braking.is_none() {
            stopped = true;
            let v = if leave && s > brake_at {
                SPEED
            } else {
                (j1 - {
                    plan.at_time(s - DT, &mut q);
                    q[0]
                }) / DT
            };
            braking = Some((j1, v.max(0.0)));
        }
    }
    (stopped, j1, least)
}

#[test]
fn a_plan_braking_just_outside_the_margin_of_another_arm_goes_on_and_one_left_where_it_brakes_is_stopped_before_contact()
 {
    let margin = sample_cell().margins.clearance_m;
    let mut sp = Spheres::new();
    let end = sp.reach(margin + 0.002);
    println!("margin {margin} m; the plan brakes to rest at j1 {end:.4}, {:.4} m from the left arm", sp.gap(end));
    let (stopped, rest, least) = play(end, false);
    println!("on its plan: stopped {stopped}, at rest at {rest:.4}, least sphere gap {least:.4} m");
    assert!(!stopped, "stopped on a plan braking to rest {:.4} m from the other arm", sp.gap(end));
    assert!((rest - end).abs() < 1e-3, "did not reach the end of its plan: {rest} against {end}");
    let short = sp.reach(0.05);
    let (stopped, rest, least) = play(short, true);
    println!("leaving it where it brakes: stopped {stopped}, at rest at {rest:.4}, least sphere gap {least:.4} m");
    assert!(stopped, "not stopped leaving its plan towards the other arm");
    assert!(least > 0.0, "the spheres touched leaving the plan: {least} m");
}
