//! A robot standing at its plan's start, in the way of a higher robot whose
//! plan runs through it, cannot back away: it goes on first. The left arm
//! stands parked (no plan) in the right arm's path; the right arm, raised
//! above it, comes and is held short of it. The left arm then gets a plan
//! that pans it away: it stands at that plan's start, in the right arm's
//! claim. Both obey their speed scaling and grants (plan time advances at
//! the scaling, never past the grant's end). The right arm's grant runs
//! through where the left one stands, so the left arm is let go on first,
//! out of the way; the right arm is held on its path meanwhile and then
//! finishes. Neither is stopped by the robot check, and they stay outside
//! the clearance margin. (Before, the left arm waited for the right one,
//! and the right arm crept at it by stops and releases, for ever.) Where
//! neither can move (a simulated four-arm knot), the robot above is held
//! on its path short of the one at its start instead. The other way round
//! (the demo's pair, recorded): the higher arm stands at its plan's start
//! and the lower one, in its way, cannot back away (its way back runs
//! into the higher arm): the lower one goes on first.

use crate::common;

use crate::refine::{LEFT_PAN, Spheres, q_left, q_right};
use crate::scaling::obeying_every_output;
use common::cell::{cache_dir, feed, guard, sample_cell};
use workcell_guard_core::arbiter::GrantState;
use workcell_guard_core::forecast::track::JointPlan;
use workcell_guard_core::guard::{Command, Guard, Inputs, JointStateIn, StopSource};
use workcell_guard_sim::arms::{Sim, cell_with_arms};
use workcell_guard_sim::motion::{plan_speeds, straight_plan};

pub(crate) const DT: f64 = 0.002;

pub(crate) fn step(g: &mut Guard, t: f64, (left_pan, right_j1): (f64, f64)) {
    let (l, r) = (q_left(left_pan), q_right(right_j1));
    let inputs = [
        JointStateIn { robot: 0, stamp_s: t, positions: &l, velocities: None },
        JointStateIn { robot: 1, stamp_s: t, positions: &r, velocities: None },
    ];
    g.step(t, &Inputs::joints(&inputs));
}

/// The first right-arm `j1` from `start` up (5 mm steps) where its spheres
/// touch the left arm's at [`LEFT_PAN`].
pub(crate) fn first_touch(sp: &mut Spheres, start: f64) -> f64 {
    let mut touch = start;
    while sp.gap(touch) > 0.0 {
        touch += 0.005;
        assert!(touch < 1.5, "the arms never meet");
    }
    touch
}

/// One joint's plan from `a` to `b` at 1 rad/s, waypoints every 10 ms,
/// as a whole configuration of `q`.
pub(crate) fn plan(a: f64, b: f64, q: fn(f64) -> Vec<f64>) -> JointPlan {
    let n = ((b - a).abs() / 0.01).ceil() as usize;
    let times: Vec<f64> = (0..=n).map(|k| k as f64 * 0.01).collect();
    let positions: Vec<f64> = (0..=n).flat_map(|k| q(a + (b - a) * k as f64 / n as f64)).collect();
    let dof = q(a).len();
    JointPlan::new(dof, times, positions).unwrap()
}

/// Plan time after one cycle of a robot that obeys its command.
pub(crate) fn obey(c: &Command, s: f64) -> f64 {
    if c.stop {
        return s;
    }
    let until = match c.grant.state {
        GrantState::Proceed | GrantState::Hold => c.grant.until_s,
        _ => f64::INFINITY,
    };
    (s + DT * c.speed_scaling).min(until).max(s)
}

/// The two arms obeying their commands: their plan times (left, right),
/// where they stand, the cycles the robot check stopped each, the least
/// gap between their spheres, and whether the left arm was ever lifted.
pub(crate) struct Obeying {
    t: f64,
    pub(crate) q: (f64, f64),
    s: (f64, f64),
    checks: [usize; 2],
    least: f64,
    pub(crate) lifted: bool,
}

impl Obeying {
    /// The arms standing at `q` (left pan, right j1) at time `t`.
    pub(crate) fn new(t: f64, q: (f64, f64)) -> Obeying {
        Obeying { t, q, s: (0.0, 0.0), checks: [0; 2], least: f64::INFINITY, lifted: false }
    }

    /// `cycles` cycles of `g` with the arms standing, before any plan (a
    /// stop while the guard warms up is not counted).
    pub(crate) fn stand(&mut self, g: &mut Guard, cycles: usize) {
        for _ in 0..cycles {
            self.t += DT;
            step(g, self.t, self.q);
        }
    }

    /// One cycle of `g` on where the arms stand: its commands.
    pub(crate) fn look(&mut self, g: &mut Guard) -> Vec<Command> {
        self.t += DT;
        step(g, self.t, self.q);
        let c = g.commands().to_vec();
        for (r, c) in c.iter().enumerate() {
            self.checks[r] += usize::from(c.stop && c.source != StopSource::Grant);
        }
        c
    }

    /// The arms obey `c` (the left one only if `left_moves`) and stand
    /// where `at` puts their plan times; true once both plans are done.
    pub(crate) fn obey(
        &mut self,
        g: &Guard,
        c: &[Command],
        left_moves: bool,
        (sp, at): (&mut Spheres, impl Fn(f64, f64) -> (f64, f64)),
    ) -> bool {
        self.lifted |= g.lifted(0).is_some();
        if left_moves {
            self.s.0 = obey(&c[0], self.s.0);
        }
        self.s.1 = obey(&c[1], self.s.1);
        self.q = at(self.s.0, self.s.1);
        self.least = self.least.min(sp.gap_at(self.q.0, self.q.1));
        c.iter().all(|c| c.grant.state == GrantState::Done)
    }

    /// Prints the run; asserts both plans done, no stop by the robot
    /// check, and the arms outside `margin` throughout.
    pub(crate) fn finish(&self, g: &Guard, margin: f64) {
        let c = g.commands();
        let (q, least, checks) = (self.q, self.least, self.checks);
        println!(
            "left at {:.3} ({:?}), right at {:.3} ({:?}); least gap {least:.4} m; lifted {}; \
             stopped by the check {checks:?} cycles",
            q.0, c[0].grant.state, q.1, c[1].grant.state, self.lifted
        );
        assert_eq!((c[0].grant.state, c[1].grant.state), (GrantState::Done, GrantState::Done), "a plan not finished");
        assert_eq!(checks, [0, 0], "the robot check stopped an arm that obeyed its grant");
        assert!(least > margin, "came within the margin: {least} m");
    }
}

#[test]
fn a_robot_at_its_plans_start_in_a_higher_ones_way_goes_on_first() {
    let margin = sample_cell().margins.clearance_m;
    let mut sp = Spheres::new();
    let (start, touch) = (-1.5, first_touch(&mut sp, -1.5));
    let end = touch + 0.3;
    // The left arm pans away, to where the right arm's whole path is clear of it.
    let clear = |sp: &mut Spheres, pan: f64| sp.least_on_path(pan, (start, end));
    let away =
        [LEFT_PAN + 1.2, LEFT_PAN - 1.2].into_iter().max_by(|a, b| clear(&mut sp, *a).total_cmp(&clear(&mut sp, *b)));
    let away = away.unwrap();
    assert!(clear(&mut sp, away) > margin + 0.02, "no pan of the left arm clears the right arm's path");

    let mut g = guard();
    assert!(g.set_priority(1, 30), "the right arm raised above the left one");
    let mut run = Obeying::new(0.0, (LEFT_PAN, start));
    run.stand(&mut g, 400);
    g.set_plan(1, Some(plan(start, end, q_right))).unwrap();
    let mut left_planned = false;
    let at = |s_left: f64, s_right: f64| {
        (LEFT_PAN + (away - LEFT_PAN) * (s_left / (away - LEFT_PAN).abs()).min(1.0), start + s_right.min(end - start))
    };
    for k in 0..6000 {
        let c = run.look(&mut g);
        // Held short of the parked arm: now it gets a plan, away.
        if !left_planned && k > 200 && c[1].grant.state == GrantState::Hold && c[1].grant.held_by == Some(0) {
            g.set_plan(0, Some(plan(LEFT_PAN, away, q_left))).unwrap();
            left_planned = true;
            continue;
        }
        if run.obey(&g, &c, left_planned, (&mut sp, at)) {
            break;
        }
    }
    run.finish(&g, margin);
    assert!(left_planned, "the right arm was never held short of the parked left arm");
    assert!(run.lifted, "the left arm at its start was not let go on first");
}

/// Four arms, seed 31 of `simulate --arms 4 --plans always
/// --obey-scaling`: two arms each stand where the other's plan runs, one
/// at its plan's start, the other's way back blocked. No grant can move
/// either (unguarded, they collide: a hazard). The one above is held
/// short of the one at its start, on its path; before, it was granted
/// through it and the stop check halted it 24 times as it crept on.
#[test]
fn arms_knotted_at_a_plans_start_are_held_on_their_paths_not_stopped() {
    let opts = obeying_every_output();
    let mut s = Sim::new(cell_with_arms(sample_cell(), 4), opts, Some(cache_dir())).unwrap();
    let r = s.episode(31);
    println!("{}", r.summary(4, opts.dt_s));
    assert_eq!(r.contacts(), 0);
    assert_eq!((r.hazards, r.hazards_caught), (1, 1), "seed 31 no longer draws the knot");
    // Something true is in the way: none of its stops counts among those
    // of episodes without a hazard.
    assert!(r.busy_s > 0.0);
    assert_eq!(r.clear_stops, (0, 0, 0.0));
    assert_eq!(r.stops, 0, "the robot above was stopped by the check instead of held");
    assert!(r.holds > 0, "nobody was held");
}

/// The pair of the demo (`demo --seed 1`) that stood stopped for 16 s, as
/// recorded: where each plan starts and ends (straight in joint space).
const LEFT_FROM: [f64; 7] = [0.482, -0.068, 1.3, -0.123, 0.556, 0.308, 0.005];
const LEFT_TO: [f64; 7] = [-2.324, 0.68, 2.181, -0.048, 1.931, 0.445, 0.008];
const RIGHT_FROM: [f64; 8] = [-0.123, 0.131, -1.37, -1.112, -1.998, -0.163, 0.794, 0.027];
const RIGHT_TO: [f64; 8] = [1.173, 1.504, -0.516, -0.646, 0.499, 0.61, -0.256, 0.028];

/// Plan time after one cycle of a robot that obeys `c` and backs away
/// along its plan (at its plan's pace times its speed scaling) where its
/// grant sends it back.
fn obey_backing(c: &Command, s: f64) -> f64 {
    if c.grant.state == GrantState::BackAway && !c.stop {
        return if s > c.grant.until_s { (s - DT * c.speed_scaling).max(c.grant.until_s) } else { s };
    }
    obey(c, s)
}

/// The demo's two arms: the right one (priority 10) on its way out past
/// the left one (priority 20), parked; the left one then gets a plan that
/// runs through where the right one is, and stands at its start. The
/// right one is sent back, and its way back runs within the margin of the
/// left arm where it stands: the robot check halts it as it sets off. The
/// left one cannot back away (it stands at its plan's start). Before, the
/// pair stood stopped for each other for good (the demo: 16 s, to its
/// end). Now the right arm, its way on clear of where the left one stands
/// and its way back blocked, goes on first, and both finish, apart. (The
/// recording gave the left arm its plan with the right one 60 % of the way
/// out; with increments reaching 0.1 s past the stopping path, the left
/// arm's first one no longer reaches it there, and both go on unheld; half
/// way out, it still does.) Backing away, an arm moves at its speed
/// scaling, as it does on: set off at full pace from rest, the guard
/// stopped it for implausible motion.
#[test]
fn a_robot_whose_way_back_a_higher_one_at_its_start_blocks_goes_on_and_both_finish() {
    let cell = sample_cell();
    let vmax = |r: usize| plan_speeds(&cell.manipulators[r], 1.0);
    let left = straight_plan(&LEFT_FROM, &LEFT_TO, &vmax(0), &cell.manipulators[0].max_decel).unwrap();
    let right = straight_plan(&RIGHT_FROM, &RIGHT_TO, &vmax(1), &cell.manipulators[1].max_decel).unwrap();
    let mut g = guard();
    let mut qs = vec![LEFT_FROM.to_vec(), RIGHT_FROM.to_vec()];
    let mut t = 0.0;
    for _ in 0..400 {
        t += DT;
        feed(&mut g, &qs, t);
    }
    g.set_plan(1, Some(right.clone())).unwrap();
    let (mut s, mut left_planned, mut lifted, mut least) = ([0.0f64; 2], false, false, f32::INFINITY);
    let mut done = [None; 2];
    for _ in 0..(10.0 / DT) as usize {
        t += DT;
        feed(&mut g, &qs, t);
        let c = g.commands().to_vec();
        // The right arm half-way out (the recording has it 60 % of the way:
        // the left arm's first increment no longer reaches it there).
        if !left_planned && qs[1][0] >= RIGHT_FROM[0] + 0.5 * (RIGHT_TO[0] - RIGHT_FROM[0]) {
            g.set_plan(0, Some(left.clone())).unwrap();
            left_planned = true;
        }
        lifted |= g.lifted(1).is_some();
        for (r, plan) in [&left, &right].into_iter().enumerate() {
            if r == 0 && !left_planned {
                continue;
            }
            s[r] = obey_backing(&c[r], s[r]).min(plan.duration_s());
            plan.at_time(s[r], &mut qs[r]);
            if s[r] >= plan.duration_s() && done[r].is_none() {
                done[r] = Some(t);
            }
        }
        least = least.min(crate::arbitration::sphere_gap(cell, &qs));
        if done.iter().all(Option::is_some) {
            break;
        }
    }
    println!("finished at {done:?} s; plan times {s:?}; right lifted: {lifted}; least sphere gap {least:.4} m");
    assert!(left_planned, "the right arm never came 60 % of the way out");
    assert!(f64::from(least) > cell.margins.clearance_m, "the arms came within the margin: {least} m");
    let [Some(l), Some(r)] = done else { panic!("a plan did not finish in 10 s (a knot): plan times {s:?}") };
    assert!(lifted, "the right arm was not let go on over the left one");
    assert!(r < l, "the right arm, let go on, finishes first: {r} vs {l}");
}
