//! Priority arbitration in the guard's cycle (work in progress): increments
//! of the robots' plans, their conflicts, and the grants decided on them.

use crate::common;

use common::cell::{feed, guard};
use workcell_guard_core::arbiter::{GrantState, MAX_SAMPLES};
use workcell_guard_core::forecast::track::JointPlan;
use workcell_guard_core::guard::PlanState;

const DT: f64 = 0.002;

fn q_left(pan: f64) -> Vec<f64> {
    vec![pan, 0.7, 1.1, 0.0, 0.0, 0.0, 0.02]
}

fn q_right(j1: f64) -> Vec<f64> {
    vec![j1, 1.2, 0.0, -0.3, 0.0, 0.0, 0.0, 0.0]
}

/// A plan turning the first joint of `at(from)` to `to` over `secs`
/// (smooth start and stop), waypoints every 20 ms.
fn turn(at: fn(f64) -> Vec<f64>, from: f64, to: f64, secs: f64) -> JointPlan {
    let n = (secs / 0.02).round() as usize + 1;
    let (mut times, mut positions) = (Vec::new(), Vec::new());
    for i in 0..n {
        let u = i as f64 / (n - 1) as f64;
        times.push(u * secs);
        positions.extend(at(from + (to - from) * u * u * (3.0 - 2.0 * u)));
    }
    JointPlan::new(at(0.0).len(), times, positions).unwrap()
}

/// An arm following its plan at a pace (plan seconds per second) that
/// obeys its grant: it slows, its first joint within its deceleration, so
/// as to stop by the grant's end after its reaction time; it speeds up
/// again when granted more; a stop brakes it.
struct Follower {
    plan: JointPlan,
    s: f64,
    pace: f64,
    decel: f64,
    react_s: f64,
}

impl Follower {
    fn new(plan: JointPlan, decel: f64, react_s: f64) -> Follower {
        Follower { plan, s: 0.0, pace: 0.0, decel, react_s }
    }

    /// Plan seconds per second per second its first joint (the one that
    /// moves) allows on the segment where it is.
    fn rate(&self) -> f64 {
        let k = self.plan.segment(self.s);
        let w = (self.plan.point(k + 1)[0] - self.plan.point(k)[0]).abs() / (self.plan.time(k + 1) - self.plan.time(k));
        if w > 0.0 { self.decel / w } else { f64::INFINITY }
    }

    /// One cycle: towards the pace that stops it by plan time `until`;
    /// backwards at a fifth of the pace when told to back away.
    fn step(&mut self, until: f64, stop: bool, back: bool, q: &mut [f64]) {
        let room = (until - self.s).max(0.0);
        let (b, r) = (self.rate().min(1e3), self.react_s);
        let want = if stop {
            0.0
        } else if back {
            -0.2
        } else {
            (b * (-r + (r * r + 2.0 * room / b).sqrt())).min(1.0)
        };
        self.pace = if want < self.pace { (self.pace - b * DT).max(want) } else { (self.pace + b * DT).min(want) };
        self.s = (self.s + self.pace * DT).clamp(0.0, self.plan.duration_s());
        self.plan.at_time(self.s, q);
    }

    fn done(&self) -> bool {
        self.s >= self.plan.duration_s()
    }
}

#[test]
fn where_two_plans_cross_the_lower_priority_arm_waits_for_the_higher_and_both_finish() {
    let cell = common::cell::sample_cell();
    let mut g = guard();
    let mut qs = vec![q_left(1.5), q_right(-1.5)];
    let mut t = 0.0;
    for _ in 0..100 {
        t += DT;
        feed(&mut g, &qs, t);
    }
    let plans = [turn(q_left, 1.5, -1.5, 2.0), turn(q_right, -1.5, 1.5, 2.0)];
    let mut arms: Vec<Follower> = plans
        .iter()
        .zip(&cell.manipulators)
        .map(|(p, m)| Follower::new(p.clone(), m.max_decel[0], m.reaction_time_s + 2.0 * DT))
        .collect();
    for (r, p) in plans.iter().enumerate() {
        g.set_plan(r, Some(p.clone())).unwrap();
    }
    let (mut held, mut finished, mut least, mut stops) = (0usize, [None; 2], f32::INFINITY, [0usize; 2]);
    while t < 20.0 && finished.iter().any(Option::is_none) {
        t += DT;
        let d = feed(&mut g, &qs, t);
        let grants = g.grants().to_vec();
        for (r, arm) in arms.iter_mut().enumerate() {
            let gr = grants[r];
            // Off its plan (backing away) it is not granted anything: it
            // stops and waits to be tracked on it again.
            let until = match (gr.state, gr.last_sample) {
                (GrantState::Proceed, _) => f64::INFINITY,
                (GrantState::Hold, Some(k)) => g.increment_time(r, k),
                _ => arm.s,
            };
            if gr.state == GrantState::Hold && r == 1 && gr.held_by == Some(0) {
                held += 1;
            }
            stops[r] += usize::from(d[r].is_stop());
            arm.step(until, d[r].is_stop(), gr.state == GrantState::BackAway, &mut qs[r]);
            let plan_done = g.plan_state(r) == Some(PlanState::Finished);
            if (arm.done() || plan_done) && finished[r].is_none() {
                finished[r] = Some(t);
            }
        }
        let c = g.clearances(0).map_or(f32::INFINITY, |c| c.other_robots_m);
        least = least.min(c);
    }
    println!(
        "finished at {finished:?} s; arm_right held by arm_left for {held} cycles; stopped cycles {stops:?}; least sphere clearance {least:.4} m"
    );
    let [Some(f0), Some(f1)] = finished else { panic!("an arm did not finish: {finished:?}") };
    assert!(f0 < f1, "the higher arm goes first: {f0} vs {f1}");
    assert!(held > 0, "the lower arm was never held");
    assert!(least > 0.0, "the arms' spheres met: {least}");
    // Work in progress: today the lower arm creeps back into the higher
    // one's path and is sent back several times; one at a time would take
    // 4 s. The bound only catches a deadlock.
    assert!(f1 < 15.0, "took {f1} s");
}

#[test]
fn where_two_plans_cross_the_higher_priority_arm_proceeds_and_the_lower_is_held_before_the_crossing() {
    let mut g = guard();
    let (left, right) = (turn(q_left, 1.5, -0.2, 2.0), turn(q_right, -1.5, 0.2, 2.0));
    let mut qs = vec![q_left(1.5), q_right(-1.5)];
    let mut t = 0.0;
    for _ in 0..100 {
        t += DT;
        feed(&mut g, &qs, t);
    }
    g.set_plan(0, Some(left.clone())).unwrap();
    g.set_plan(1, Some(right.clone())).unwrap();
    let (mut both_proceeded, mut held) = (false, None);
    let mut s = 0.0;
    while s < 2.0 {
        t += DT;
        s += DT;
        let mut q = vec![0.0; 7];
        left.at_time(s, &mut q);
        qs[0].copy_from_slice(&q);
        let mut q = vec![0.0; 8];
        right.at_time(s, &mut q);
        qs[1].copy_from_slice(&q);
        feed(&mut g, &qs, t);
        let gr = g.grants();
        if gr.iter().all(|x| x.state == GrantState::Proceed) {
            both_proceeded = true;
        }
        if gr.iter().any(|x| x.state == GrantState::Hold) {
            held = Some((s, gr.to_vec()));
            break;
        }
    }
    assert!(both_proceeded, "apart, both arms proceed");
    let (s, gr) = held.expect("the crossing plans conflict before they meet");
    println!("at plan time {s:.3} s: {gr:?}");
    // arm_left has priority 20, arm_right 10.
    assert_eq!(gr[0].state, GrantState::Proceed, "{gr:?}");
    assert_eq!(gr[1].state, GrantState::Hold, "{gr:?}");
    assert_eq!(gr[1].held_by, Some(0));
    let last = gr[1].last_sample.expect("the held arm keeps some of its increment");
    assert!(last < MAX_SAMPLES - 1);
    // Its grant still holds its stopping path: it can stop within it.
    assert!(last >= g.offers()[1].committed, "{:?} vs {:?}", gr[1], g.offers()[1]);
    assert!(g.increment_time(1, last) > s - 1e-9);
}
