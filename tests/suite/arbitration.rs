//! Priority arbitration in the guard's cycle: increments of the robots'
//! plans, their conflicts, the grants decided on them, and arms whose
//! controllers obey them (speed scaling, stop, retreat).

use crate::common;

use common::cell::{feed, guard};
use workcell_guard_core::arbiter::{GrantState, MAX_SAMPLES};
use workcell_guard_core::cell::Workcell;
use workcell_guard_core::forecast::track::JointPlan;
use workcell_guard_core::guard::{
    ArbitrationPolicy, Body, Command, CommandPolicy, Decision, Guard, LOOKAHEAD_S, Reason, Stop, StopSource, Tuning,
};
use workcell_guard_core::model::SpherePoser;

const DT: f64 = 0.002;

pub(crate) fn q_left(pan: f64) -> Vec<f64> {
    vec![pan, 0.7, 1.1, 0.0, 0.0, 0.0, 0.02]
}

pub(crate) fn q_right(j1: f64) -> Vec<f64> {
    vec![j1, 1.2, 0.0, -0.3, 0.0, 0.0, 0.0, 0.0]
}

/// A plan turning the first joint of `at(from)` to `to` over `secs`
/// (smooth start and stop), waypoints every 20 ms.
pub(crate) fn turn(at: fn(f64) -> Vec<f64>, from: f64, to: f64, secs: f64) -> JointPlan {
    let n = (secs / 0.02).round() as usize + 1;
    let (mut times, mut positions) = (Vec::new(), Vec::new());
    for i in 0..n {
        let u = i as f64 / (n - 1) as f64;
        times.push(u * secs);
        positions.extend(at(from + (to - from) * u * u * (3.0 - 2.0 * u)));
    }
    JointPlan::new(at(0.0).len(), times, positions).unwrap()
}

/// An arm whose controller follows its plan the way a trajectory
/// controller with a speed-scaling input does: its plan time advances at
/// the commanded speed scaling (reached within its first joint's
/// deceleration), never past its grant; the stop flag brakes it; a
/// retreat runs it back along its plan at the plan's pace to the grant's
/// retreat point.
pub(crate) struct Follower {
    plan: JointPlan,
    pub(crate) s: f64,
    pub(crate) pace: f64,
    decel: f64,
    back_to: Option<f64>,
}

impl Follower {
    pub(crate) fn new(plan: JointPlan, decel: f64) -> Follower {
        Follower { plan, s: 0.0, pace: 0.0, decel, back_to: None }
    }

    /// Plan seconds per second per second its first joint (the one that
    /// moves) allows on the segment where it is.
    fn rate(&self) -> f64 {
        let k = self.plan.segment(self.s);
        let w = (self.plan.point(k + 1)[0] - self.plan.point(k)[0]).abs() / (self.plan.time(k + 1) - self.plan.time(k));
        if w > 0.0 { self.decel / w } else { f64::INFINITY }
    }

    /// One cycle under command `c`.
    pub(crate) fn step(&mut self, c: &Command, q: &mut [f64]) {
        self.step_dt(c, q, DT);
    }

    /// `dt` seconds under command `c`.
    fn step_dt(&mut self, c: &Command, q: &mut [f64], dt: f64) {
        if c.retreat {
            self.back_to = Some(c.grant.until_s);
        }
        if c.grant.state != GrantState::BackAway || c.stop {
            self.back_to = None;
        }
        let b = self.rate().min(1e3);
        let want = match self.back_to {
            Some(to) if self.s > to => -1.0,
            Some(_) => 0.0,
            None if c.stop => 0.0,
            None => c.speed_scaling,
        };
        self.pace = if want < self.pace { (self.pace - b * dt).max(want) } else { (self.pace + b * dt).min(want) };
        let mut s = (self.s + self.pace * dt).clamp(0.0, self.plan.duration_s());
        if matches!(c.grant.state, GrantState::Proceed | GrantState::Hold) && s > c.grant.until_s.max(self.s) {
            // Never past its grant: where the grant ends short of where it
            // can stop, it stops there (harder than it could: safe, and it
            // sets off again from rest).
            s = c.grant.until_s.max(self.s);
            self.pace = 0.0;
        }
        self.s = s;
        self.plan.at_time(self.s, q);
    }

    pub(crate) fn done(&self) -> bool {
        self.s >= self.plan.duration_s()
    }
}

/// Whether robot `r` is granted its whole next increment this cycle and
/// yet held stopped by the release hysteresis for another robot (each
/// would wait for the other).
fn held_with_a_clear_increment(g: &Guard, r: usize) -> bool {
    g.grants()[r].state == GrantState::Proceed
        && matches!(g.decisions()[r], Decision::Stop(Stop { reason: Reason::Holding { .. }, pair: Some((_, Body::Link { robot, .. })), .. }) if robot as usize != r)
}

/// The least distance between the two arms' spheres (which cover their
/// collision geometry) at configurations `qs`, m.
pub(crate) fn sphere_gap(cell: &Workcell, qs: &[Vec<f64>]) -> f32 {
    let posed: Vec<_> = cell
        .manipulators
        .iter()
        .zip(qs)
        .map(|(m, q)| {
            let poser = SpherePoser::new(&m.robot, &m.spheres, m.base);
            let mut p = poser.posed();
            poser.pose(q, &mut p).unwrap();
            p
        })
        .collect();
    let (a, b) = (&posed[0], &posed[1]);
    let mut best = f32::INFINITY;
    for i in 0..a.r.len() {
        for j in 0..b.r.len() {
            let d = ((a.x[i] - b.x[j]).powi(2) + (a.y[i] - b.y[j]).powi(2) + (a.z[i] - b.z[j]).powi(2)).sqrt();
            best = best.min(d - a.r[i] - b.r[j]);
        }
    }
    best
}

/// The guard after 0.2 s of both arms standing facing away from each
/// other, its speed scaling from the grants alone (the slow-down by
/// clearance would crawl arm_left, 37 mm from the cell where it starts);
/// their configurations and the clock.
pub(crate) fn at_rest_facing_away() -> (Guard, Vec<Vec<f64>>, f64) {
    let mut g = guard();
    g.set_command_policy(CommandPolicy { slow_down_m: 1e-3, ..g.command_policy() });
    let qs = vec![q_left(1.5), q_right(-1.5)];
    let mut t = 0.0;
    for _ in 0..100 {
        t += DT;
        feed(&mut g, &qs, t);
    }
    (g, qs, t)
}

#[test]
fn where_two_plans_cross_the_lower_priority_arm_waits_for_the_higher_and_both_finish() {
    let cell = common::cell::sample_cell();
    let (mut g, mut qs, mut t) = at_rest_facing_away();
    let plans = [turn(q_left, 1.5, -1.5, 2.0), turn(q_right, -1.5, 1.5, 2.0)];
    let mut arms: Vec<Follower> =
        plans.iter().zip(&cell.manipulators).map(|(p, m)| Follower::new(p.clone(), m.max_decel[0])).collect();
    for (r, p) in plans.iter().enumerate() {
        g.set_plan(r, Some(p.clone())).unwrap();
    }
    let (mut held, mut finished, mut least, mut stops) = (0usize, [None; 2], f32::INFINITY, [0usize; 2]);
    let (mut disagreements, mut hysteresis) = (0usize, 0usize);
    let start = t;
    while t < start + 20.0 && finished.iter().any(Option::is_none) {
        t += DT;
        feed(&mut g, &qs, t);
        let commands = g.commands().to_vec();
        for (r, arm) in arms.iter_mut().enumerate() {
            let c = commands[r];
            hysteresis += usize::from(held_with_a_clear_increment(&g, r));
            if r == 1 && c.grant.held_by == Some(0) && c.speed_scaling < 1.0 {
                held += 1;
            }
            if c.grant.state == GrantState::Hold && !c.stop {
                disagreements += 1;
            }
            stops[r] += usize::from(c.stop && c.source != StopSource::Grant);
            arm.step(&c, &mut qs[r]);
            if arm.done() && finished[r].is_none() {
                finished[r] = Some(t - start);
            }
        }
        let c = g.clearances(0).map_or(f32::INFINITY, |c| c.other_robots_m);
        least = least.min(c);
    }
    println!(
        "finished at {finished:?} s; arm_right held by arm_left for {held} cycles; stopped (not by a grant) {stops:?} cycles; held with a clear increment {hysteresis} cycles; least sphere clearance {least:.4} m"
    );
    assert_eq!(hysteresis, 0, "an arm granted its whole increment was held by the release hysteresis");
    let [Some(f0), Some(f1)] = finished else { panic!("an arm did not finish: {finished:?}") };
    assert!(f0 < f1, "the higher arm goes first: {f0} vs {f1}");
    assert!(held > 0, "the lower arm was never held");
    assert_eq!(disagreements, 0, "a held arm was told to go on by its stop flag");
    assert!(least > 0.0, "the arms' spheres met: {least}");
    // One at a time would take 4 s (each plan 2 s).
    assert!(f1 < 4.0, "took {f1} s");
    // Standing at their plans' ends, both are done (and stay so).
    for _ in 0..50 {
        t += DT;
        feed(&mut g, &qs, t);
    }
    let states: Vec<GrantState> = g.commands().iter().map(|c| c.grant.state).collect();
    assert_eq!(states, [GrantState::Done, GrantState::Done]);
    assert!(g.commands().iter().all(|c| !c.stop && c.grant.until_s == 2.0), "{:?}", g.commands());
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

#[test]
fn a_priority_changed_at_run_time_swaps_who_holds_where_plans_cross() {
    let (mut g, mut qs, mut t) = at_rest_facing_away();
    let (left, right) = (turn(q_left, 1.5, -0.2, 2.0), turn(q_right, -1.5, 0.2, 2.0));
    g.set_plan(0, Some(left.clone())).unwrap();
    g.set_plan(1, Some(right.clone())).unwrap();
    // arm_right 10 -> 30, above arm_left's 20.
    assert!(g.set_priority(1, 30));
    let mut s = 0.0;
    let mut held = None;
    while s < 2.0 && held.is_none() {
        t += DT;
        s += DT;
        left.at_time(s, &mut qs[0]);
        right.at_time(s, &mut qs[1]);
        feed(&mut g, &qs, t);
        held = g.grants().iter().any(|x| x.state == GrantState::Hold).then(|| g.grants().to_vec());
    }
    let gr = held.expect("the crossing plans conflict before they meet");
    assert_eq!(gr[1].state, GrantState::Proceed, "{gr:?}");
    assert_eq!((gr[0].state, gr[0].held_by), (GrantState::Hold, Some(1)), "{gr:?}");
}

/// What happened when arm_right, paused in arm_left's way, was to back
/// away from it ([`paused_in_the_way`]).
struct BackAway {
    /// Plan time where arm_right was paused, s.
    pause_at: f64,
    /// Cycles it was told to back away, and retreats sent.
    backed: usize,
    retreats: usize,
    /// The earliest plan time it went back to, s.
    least_back: f64,
    /// When each arm finished its plan, s.
    finished: [Option<f64>; 2],
    /// Cycles in which an arm granted its whole increment was held by the
    /// release hysteresis.
    hysteresis: usize,
    /// The least distance between the arms' spheres, m.
    least_gap: f32,
    /// Cycles arm_left was told to back away.
    backed_left: usize,
    /// Whether arm_right was lifted over arm_left (its way back blocked).
    lifted: bool,
    /// Cycles arm_right backed away within `LOOKAHEAD_S` of its retreat's
    /// end, and those of them its speed scaling exceeded the share of
    /// `LOOKAHEAD_S` left (it would not slow to stop at that end).
    near_end: usize,
    past_ramp: usize,
}

/// arm_right (priority 10) sets off across the front and is paused by its
/// operator once past plan time `pause_s`, in the way of arm_left's
/// (priority 20) plan across the front; arm_left then sets off; arm_right
/// stays paused until the guard sends it back (or lifts it: it goes
/// first). Runs for up to `secs`,
/// arbitrated under `policy`.
fn paused_in_the_way(pause_s: f64, secs: f64, policy: ArbitrationPolicy) -> BackAway {
    let cell = common::cell::sample_cell();
    let (mut g, mut qs, mut t) = at_rest_facing_away();
    g.set_arbitration_policy(policy);
    let right = turn(q_right, -1.5, 1.5, 2.0);
    g.set_plan(1, Some(right.clone())).unwrap();
    let mut arms: Vec<Follower> = [turn(q_left, 1.5, -1.5, 2.0), right]
        .into_iter()
        .zip(&cell.manipulators)
        .map(|(p, m)| Follower::new(p, m.max_decel[0]))
        .collect();
    let start = t;
    let paused = |arm: &Follower| arm.s >= pause_s;
    while !(paused(&arms[1]) && arms[1].pace == 0.0) && t < start + 5.0 {
        t += DT;
        feed(&mut g, &qs, t);
        let mut c = g.commands()[1];
        if paused(&arms[1]) {
            c.speed_scaling = 0.0;
        }
        arms[1].step(&c, &mut qs[1]);
    }
    let pause_at = arms[1].s;
    g.set_plan(0, Some(arms[0].plan.clone())).unwrap();
    let mut out = BackAway {
        pause_at,
        backed: 0,
        retreats: 0,
        least_back: pause_at,
        finished: [None; 2],
        hysteresis: 0,
        least_gap: f32::INFINITY,
        backed_left: 0,
        lifted: false,
        near_end: 0,
        past_ramp: 0,
    };
    let start = t;
    while t < start + secs && out.finished.iter().any(Option::is_none) {
        t += DT;
        feed(&mut g, &qs, t);
        let commands = g.commands().to_vec();
        if commands[1].grant.state == GrantState::BackAway {
            out.backed += 1;
            assert_eq!(commands[1].grant.held_by, Some(0));
            let room = commands[1].grant.at_s - commands[1].grant.until_s;
            if room < LOOKAHEAD_S {
                out.near_end += 1;
                out.past_ramp += usize::from(commands[1].speed_scaling > room.max(0.0) / LOOKAHEAD_S + 1e-9);
            }
        }
        if commands[0].grant.state == GrantState::BackAway {
            out.backed_left += 1;
        }
        out.lifted |= g.lifted(1).is_some();
        out.retreats += usize::from(commands[1].retreat);
        out.hysteresis += (0..2).filter(|&r| held_with_a_clear_increment(&g, r)).count();
        for (r, arm) in arms.iter_mut().enumerate() {
            let mut c = commands[r];
            if r == 1 && out.backed == 0 && !out.lifted {
                // Its operator's pause holds until the guard sends it back or lifts it.
                c.speed_scaling = 0.0;
            }
            arm.step(&c, &mut qs[r]);
            if arm.done() && out.finished[r].is_none() {
                out.finished[r] = Some(t - start);
            }
        }
        out.least_back = out.least_back.min(arms[1].s);
        out.least_gap = out.least_gap.min(sphere_gap(cell, &qs));
    }
    println!(
        "arm_right paused at plan time {pause_at:.2} s, backed away for {} cycles ({} retreats, {} within LOOKAHEAD_S of the end, {} of them faster than the ramp) to {:.2} s, lifted {}; arm_left backed away for {} cycles; finished at {:?} s; held with a clear increment {} cycles; least sphere gap {:.4} m",
        out.backed,
        out.retreats,
        out.near_end,
        out.past_ramp,
        out.least_back,
        out.lifted,
        out.backed_left,
        out.finished,
        out.hysteresis,
        out.least_gap
    );
    out
}

#[test]
fn a_lower_priority_arm_stopped_in_the_path_of_a_higher_one_backs_away_then_both_finish() {
    let b = paused_in_the_way(0.7, 20.0, ArbitrationPolicy::default());
    assert!((0.85..1.0).contains(&b.pause_at), "arm_right paused at plan time {}", b.pause_at);
    assert_eq!(b.hysteresis, 0, "an arm granted its whole increment was held by the release hysteresis");
    assert!(b.backed > 0 && b.retreats > 0, "arm_right was never told to back away");
    assert!(!b.lifted, "arm_right, its way back free, was lifted instead of backing away");
    assert!(
        b.least_back < b.pause_at - 0.05,
        "arm_right did not go back along its plan: {} vs {}",
        b.least_back,
        b.pause_at
    );
    // Its retreat ends at its plan's start (it paused less than RETREAT_S
    // into its plan): its scaling slows it to stop there, not past it.
    assert!(b.near_end > 0, "arm_right never came within LOOKAHEAD_S of its retreat's end");
    assert_eq!(b.past_ramp, 0, "arm_right's scaling did not fall to 0 at its retreat's end ({} cycles)", b.past_ramp);
    let [Some(f0), Some(f1)] = b.finished else { panic!("an arm did not finish: {:?}", b.finished) };
    assert!(f0 < f1, "the higher arm completes first: {f0} vs {f1}");
    assert!(b.least_gap > 0.0, "the arms' spheres met: {} m", b.least_gap);
}

/// Paused farther across, arm_right's way back swings through where
/// arm_left stands by the time it is told to back away. Going back, it is
/// forecast from its motion and the guard would stop it short of arm_left
/// each time it set off (forecast as braking along its plan ahead, the
/// retreat went unseen, and their spheres met by 11 cm); both then waited
/// for ever. Now its way back is seen blocked: it is lifted over arm_left
/// (which holds, its way back free should it have to back away), goes on,
/// and both finish, arm_right first.
#[test]
fn a_lower_arm_whose_way_back_the_higher_one_blocks_is_lifted_and_both_finish() {
    let b = paused_in_the_way(1.0, 20.0, ArbitrationPolicy::default());
    assert!(b.pause_at > 1.2, "arm_right paused at plan time {}", b.pause_at);
    assert!(b.lifted, "arm_right, its way back blocked, was not lifted");
    assert!(b.least_gap > 0.0, "the arms' spheres met: {} m", b.least_gap);
    let [Some(f0), Some(f1)] = b.finished else { panic!("an arm did not finish: {:?}", b.finished) };
    assert!(f1 < f0, "lifted, arm_right completes first: {f0} vs {f1}");
}

/// arm_left's pan swept across the front of the cell and back, `legs`
/// times, 2 s each (smooth start and stop), waypoints every 20 ms.
fn sweeps(legs: usize) -> JointPlan {
    let (mut times, mut positions) = (Vec::new(), Vec::new());
    for leg in 0..legs {
        let (from, to) = if leg % 2 == 0 { (1.5, -1.5) } else { (-1.5, 1.5) };
        let first = if leg == 0 { 0 } else { 1 };
        for i in first..=100 {
            let u = i as f64 / 100.0;
            times.push(leg as f64 * 2.0 + u * 2.0);
            positions.extend(q_left(from + (to - from) * u * u * (3.0 - 2.0 * u)));
        }
    }
    JointPlan::new(7, times, positions).unwrap()
}

/// arm_left sweeping back and forth three times, arm_right crossing once,
/// under `policy`: when each finished, whether arm_right was seen starving,
/// and the least clearance between them.
fn kept_waiting(policy: ArbitrationPolicy) -> ([Option<f64>; 2], bool, f32) {
    let cell = common::cell::sample_cell();
    let (mut g, mut qs, mut t) = at_rest_facing_away();
    g.set_arbitration_policy(policy);
    let plans = [sweeps(3), turn(q_right, -1.5, 1.5, 2.0)];
    let mut arms: Vec<Follower> =
        plans.iter().zip(&cell.manipulators).map(|(p, m)| Follower::new(p.clone(), m.max_decel[0])).collect();
    for (r, p) in plans.iter().enumerate() {
        g.set_plan(r, Some(p.clone())).unwrap();
    }
    let (mut finished, mut starving, mut least) = ([None; 2], false, f32::INFINITY);
    let start = t;
    while t < start + 25.0 && finished.iter().any(Option::is_none) {
        t += DT;
        feed(&mut g, &qs, t);
        let commands = g.commands().to_vec();
        starving |= g.waiting(1).is_some_and(|w| w.starving);
        if policy.boost_after_s.is_none() {
            assert!(g.waiting(0).is_none_or(|w| !w.starving), "arm_left (priority 20) starved");
        }
        if policy.boost_after_s.is_none() {
            assert!(g.boosted_since(1).is_none(), "boosted without a boost limit");
        }
        for (r, arm) in arms.iter_mut().enumerate() {
            arm.step(&commands[r], &mut qs[r]);
            if arm.done() && finished[r].is_none() {
                finished[r] = Some(t - start);
            }
        }
        if ((t / DT).round() as usize).is_multiple_of(10) {
            least = least.min(sphere_gap(cell, &qs));
        }
    }
    (finished, starving, least)
}

/// The method's rule (the default): a robot in the way of a higher one
/// backs away, never goes on first (`go_on_when_clear` off). arm_right,
/// held at the edge of arm_left's sweeps, goes on through them otherwise,
/// and nobody waits long enough to starve.
fn strict() -> ArbitrationPolicy {
    ArbitrationPolicy { go_on_when_clear: false, ..ArbitrationPolicy::default() }
}

#[test]
fn a_robot_kept_waiting_longer_than_the_starvation_limit_is_named() {
    let (finished, starving, least) =
        kept_waiting(ArbitrationPolicy { starvation_s: 1.0, boost_after_s: None, ..strict() });
    println!("finished at {finished:?} s; arm_right starving: {starving}; least sphere clearance {least} m");
    let [Some(l), Some(r)] = finished else { panic!("an arm did not finish: {finished:?}") };
    assert!(starving, "arm_right waited for arm_left's three sweeps ({r} s) and was never named starving");
    assert!(r > l, "arm_right waits for arm_left's sweeps: {l} vs {r}");
    assert!(least > 0.0, "the arms' spheres met: {least}");
    // Without a limit (the default, 10 s), nobody starves in this scene.
    let mut g = guard();
    assert_eq!(
        g.arbitration_policy(),
        ArbitrationPolicy { starvation_s: 10.0, boost_after_s: None, ..ArbitrationPolicy::default() }
    );
    assert!(g.set_priority(1, 30) && g.priority(1) == Some(30) && !g.set_priority(2, 1));
}

#[test]
fn a_robot_kept_waiting_longer_than_the_boost_limit_goes_first_until_its_plan_is_done() {
    let policy = |boost| ArbitrationPolicy { starvation_s: 1.0, boost_after_s: boost, ..strict() };
    let (plain, _, _) = kept_waiting(policy(None));
    let (boosted, _, least) = kept_waiting(policy(Some(0.5)));
    println!("finished at {plain:?} s without a boost, {boosted:?} s with one after 0.5 s; least clearance {least} m");
    let ([Some(l0), Some(r0)], [Some(l1), Some(r1)]) = (plain, boosted) else {
        panic!("an arm did not finish: {plain:?} {boosted:?}")
    };
    assert!(r1 + 1.0 < r0, "boosted after 0.5 s of waiting, arm_right finishes well before it did: {r1} vs {r0}");
    assert!(r1 < l1 && l1 > l0, "arm_left (priority 20) yields to the boosted arm_right: {l1} vs {l0}, {r1}");
    assert!(least > 0.0, "the arms' spheres met: {least}");
}

/// An arm stopped on its plan by two of its own links that sit between
/// the margins all along the plan (arm_left's base and upper arm as its
/// first joint turns) is released after the hold time and finishes: that
/// pair never comes closer, nor farther, as it goes; held until it did, it
/// would stand there for good.
#[test]
fn an_arm_stopped_on_its_plan_by_a_pair_its_plan_keeps_between_the_margins_is_released_and_finishes() {
    let cell = common::cell::sample_cell();
    let mut g = guard();
    // The pair's spheres decide (its links' shapes are farther apart).
    g.set_exact_refinement(false);
    g.set_command_policy(CommandPolicy { slow_down_m: 1e-3, ..g.command_policy() });
    // A release margin of 3.5 cm: that pair (2.3-2.4 cm apart, less the
    // departure bound at rest) sits between the margins.
    let tuning = Tuning { release_m: 0.035, ..g.tuning() };
    g.set_tuning(tuning).unwrap();
    let mut qs = vec![q_left(-0.6), q_right(-1.5)];
    let mut t = 0.0;
    for _ in 0..100 {
        t += DT;
        feed(&mut g, &qs, t);
    }
    let plan = turn(q_left, -0.6, -1.1, 1.0);
    g.set_plan(0, Some(plan.clone())).unwrap();
    // A margin raised past that pair's clearance stops it, for that pair;
    // put back, the pair sits between the margins.
    g.set_tuning(Tuning { clearance_m: 0.03, ..tuning }).unwrap();
    for _ in 0..10 {
        t += DT;
        feed(&mut g, &qs, t);
    }
    let own = g.clearances(0).unwrap().own_links_m;
    assert!(
        matches!(g.decisions()[0], Decision::Stop(Stop { reason: Reason::SelfCollision, .. })),
        "{:?}",
        g.decisions()[0]
    );
    g.set_tuning(tuning).unwrap();
    assert!(
        own > tuning.clearance_m as f32 && own < tuning.release_m as f32,
        "own links {own} m: not between the margins"
    );
    let mut arm = Follower::new(plan, cell.manipulators[0].max_decel[0]);
    let (start, mut released, mut least) = (t, None, f32::INFINITY);
    while t < start + 5.0 && !arm.done() {
        t += DT;
        feed(&mut g, &qs, t);
        let c = g.commands()[0];
        if !c.stop && released.is_none() {
            released = Some(t - start);
        }
        least = least.min(g.clearances(0).unwrap().own_links_m);
        arm.step(&c, &mut qs[0]);
    }
    println!(
        "own links {own:.4} m when stopped; released after {released:?} s; least {least:.4} m; done {}",
        arm.done()
    );
    let hold = tuning.release_hold_s;
    assert!(released.is_some_and(|r| r <= hold + 0.05), "held {released:?} s (hold time {hold} s)");
    assert!(arm.done(), "did not finish its plan");
    assert!(least > tuning.clearance_m as f32, "its own links came within the margin: {least}");
}

/// With `go_on_when_clear`, arm_right, standing in arm_left's sweeps where
/// its own increment meets only what arm_left claims, goes on through
/// instead of waiting for all three sweeps, without contact.
#[test]
fn with_go_on_when_clear_a_robot_in_the_way_whose_way_on_is_clear_goes_on() {
    let (strict_at, _, _) = kept_waiting(strict());
    let go_on = ArbitrationPolicy { go_on_when_clear: true, ..ArbitrationPolicy::default() };
    let (default_at, starving, least) = kept_waiting(go_on);
    println!("finished at {strict_at:?} s backing away, {default_at:?} s going on; least clearance {least} m");
    let ([Some(_), Some(r0)], [Some(_), Some(r1)]) = (strict_at, default_at) else {
        panic!("an arm did not finish: {strict_at:?} {default_at:?}")
    };
    assert!(r1 + 1.0 < r0, "arm_right did not go on through: {r1} vs {r0}");
    assert!(!starving, "arm_right starved although it went on");
    assert!(least > 0.0, "the arms' spheres met: {least}");
}
