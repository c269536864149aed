//! Increments of the robots' plans, their conflicts, the grants the
//! arbiter ([`crate::arbiter`]) decides from them, and what each grant
//! tells its robot ([`ArmGrant`]).
//!
//! A robot on plan offers the next stretch of its plan from where it is:
//! as far as its stopping path at the plan's own pace reaches (reaction
//! time, one cycle and braking along the plan, as the method text asks: at
//! least the stopping distance plus one check interval), or its actual
//! stopping path if that reaches farther, to the plan's end at most. It is
//! sampled at [`MAX_SAMPLES`] evenly spaced plan times and posed in one
//! batch; its spheres are inflated per link by the joints' travel between
//! neighbouring samples (half of it, as the stopping path's samples) plus
//! the departure bound. Its committed samples are those up to where its
//! actual stopping path ends.
//!
//! Any other robot (no plan, off it, or with a data problem) offers one
//! sample standing for its whole stopping path, all of it committed, and
//! takes no grant; trusted, the robots on plans hold short of where it
//! stands ([`super::obstacles`]). Two robots off plans are left to the
//! stop check, on a finer sampling of their paths.

mod ahead;
mod conflicts;
mod ends;
mod groups;
mod increment;
mod obstacles;
mod parked;
mod separating;
mod way_back;

use super::*;
use crate::arbiter::{Arbiter, Conflicts, Grant, GrantState, MAX_SAMPLES, Offer, goes_before};
use crate::forecast::track::JointPlan;
use groups::SphereGroups;

/// A robot whose every joint is estimated slower than this stands still
/// (rad/s or m/s): if it stands in the way of a higher one, it backs away.
pub const REST_SPEED: f64 = 1e-3;

/// Over how much plan time past its stopping path a grant's scaling falls
/// from 1 (and how far a robot just let go looks: below), s: told early
/// enough, a robot slows down instead of being stopped.
pub const LOOKAHEAD_S: f64 = 0.25;

/// How far an increment reaches past the stopping path, s: a robot claims
/// little more than it needs to stop. Let go from a hold, it reaches
/// [`LOOKAHEAD_S`] until clear of the robot that held it (let go on 0.1 s,
/// a crossing arm met that one's claim again and was held 0.4 s on).
pub const INCREMENT_LOOKAHEAD_S: f64 = 0.1;

/// A held robot is let go once its grant reaches this far (plan time, s)
/// past where it would stop, where it may go at full speed again: the
/// hold's hysteresis (let go at 20 ms, the lower of two crossing arms was
/// held and let go eight times as the higher one passed).
pub const HOLD_RELEASE_S: f64 = LOOKAHEAD_S;

/// A hold back within this long of being let go is let go again only once
/// its grant has stayed past it for this long, s: a sample on the edge of
/// another robot's region is granted in one cycle and not the next (the
/// robots' states come in turn), and the hold would chatter with it.
pub const HOLD_SETTLE_S: f64 = 0.03;

/// How far back along its plan a robot backing away is sent at a time, in
/// plan time, s (a further retreat follows while it is still in the way,
/// once it is within [`LOOKAHEAD_S`] of the end: only the retreat's last
/// end, its plan's start at the latest, slows it).
pub const RETREAT_S: f64 = 1.0;

/// How far into its plan (plan time, s) a robot is still setting off: it
/// gives way there to a lower robot on its way, as at its plan's start,
/// where giving way is on ([`crate::arbiter::Offer::setting_off`]).
pub const SETTING_OFF_S: f64 = 0.5;

/// What a robot's grant tells it this cycle, as `ManipulatorGrant`
/// carries it.
///
/// - **Proceed**: it may move along its plan up to `until_s`. Where that
///   is short of its increment (a robot above it claims the rest), its
///   speed scaling falls from 1, [`LOOKAHEAD_S`] of plan time beyond where
///   its stopping path ends, to 0 where its stopping path reaches
///   `until_s`: it slows down to pause there.
/// - **Hold**: its stopping path already reaches its grant's end (or where
///   it stands meets another's region): it pauses on its path, speed
///   scaling 0, and its stop flag says stop.
/// - **BackAway**: it stands in the increment of a robot above it: it goes
///   back along its plan, towards plan time `until_s`, its speed scaling
///   falling from 1 to 0 over the last [`LOOKAHEAD_S`] of plan time before
///   that end (a further end is set before that while it is still in the
///   way): it slows to stop at its retreat's end, its plan's start at the
///   latest, instead of running past it off its plan.
/// - **Done**: it reached its plan's end (`until_s` is the plan's length).
/// - **NoPlan**: no plan, off it, or no trustworthy joint state: not
///   arbitrated (an obstacle to the others; its stop flag still guards it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ArmGrant {
    /// What it may do.
    pub state: GrantState,
    /// Plan time up to which it may move (Proceed, Hold), the plan time a
    /// retreat sent now goes back to (BackAway: [`RETREAT_S`] back, or the
    /// plan's start), the plan's length (Done); 0 without a plan, s.
    pub until_s: f64,
    /// Index of the last plan point at or before `until_s`.
    pub point: u32,
    /// The robot it yields to or backs away from.
    pub held_by: Option<u16>,
    /// The speed scaling the grant allows, 0..=1 (1 but for Proceed short
    /// of its increment and Hold).
    pub scaling: f64,
    /// Plan time where it is, s (0 without a plan).
    pub at_s: f64,
}

/// How long robots may wait for others; set with
/// [`Guard::set_arbitration_policy`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ArbitrationPolicy {
    /// A robot that has waited for another (held, slowed by a grant's end,
    /// or backing away) this long is starving ([`Waiting::starving`]), s.
    pub starvation_s: f64,
    /// A robot that has waited this long goes before every robot not
    /// boosted (those boosted earlier first) until its plan is done or
    /// replaced; `None`: priorities are never boosted, s.
    pub boost_after_s: Option<f64>,
    /// A robot at its plan's start, or setting off from it
    /// ([`SETTING_OFF_S`]), gives way to a lower one already on its way
    /// through its increment (the arbiter's module text); `false`:
    /// priority alone decides, as the method has it.
    pub give_way_at_start: bool,
    /// With `give_way_at_start` off: a robot at its plan's start, or
    /// setting off from it (once per plan, while it can still stop short),
    /// gives way to a lower one already on its way that can no longer stop
    /// short of its increment (that one's stopping path reaches into it).
    /// Sent back, that one brakes in the way and backs away through the
    /// increment while this one holds all the same; let through, it clears
    /// it sooner. `false`: priority alone decides there too.
    pub give_way_when_caught: bool,
    /// A robot standing in the increment of a higher one goes on (it is
    /// lifted over it: [`Guard::lifted`]) instead of backing away, where
    /// its increment meets only what that one claims, not where it stands
    /// or is committed to go: that one cannot take up its claim while this
    /// one stands in it; `false`: it backs away, as the method has it.
    /// With it, robots are let into the way ahead of higher ones
    /// ([`ahead`]), not held at its edge.
    pub go_on_when_clear: bool,
}

impl Default for ArbitrationPolicy {
    fn default() -> Self {
        ArbitrationPolicy {
            starvation_s: 10.0,
            boost_after_s: None,
            give_way_at_start: false,
            give_way_when_caught: true,
            go_on_when_clear: false,
        }
    }
}

/// Boosted robots' priorities lie above any a workcell gives (the earlier
/// boosted, the higher).
const BOOSTED: i64 = i64::MAX / 4;

/// How long a robot has been waiting for others ([`Guard::waiting`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Waiting {
    /// For how long, s (up to the last cycle).
    pub for_s: f64,
    /// Longer than [`ArbitrationPolicy::starvation_s`].
    pub starving: bool,
}

impl ArmGrant {
    /// No plan.
    pub const NONE: ArmGrant =
        ArmGrant { state: GrantState::NoPlan, until_s: 0.0, point: 0, held_by: None, scaling: 1.0, at_s: 0.0 };
}

/// One robot's increment, sized once.
#[derive(Clone, Debug)]
pub(super) struct Increment {
    /// Plan time of each sample, s.
    pub(super) times: [f64; MAX_SAMPLES],
    /// The samples' configurations (`MAX_SAMPLES × dof`).
    pub(super) q: Vec<f64>,
    /// Their poses.
    pub(super) batch: PosedBatch,
    /// Per slot: radius plus its link's inflation.
    pub(super) inflated_r: Vec<f32>,
    /// Per sample: the box around every inflated sphere.
    pub(super) boxes: [[f32; 6]; MAX_SAMPLES],
    /// Per link, its inflation, m.
    pub(super) inflation: Vec<f32>,
    /// Per link, the box around its inflated spheres in every sample.
    pub(super) link_reach: Vec<[f32; 6]>,
    /// The box around every inflated sphere of every sample.
    pub(super) reach: [f32; 6],
    /// The largest inflation of any link, m.
    pub(super) widest: f32,
    /// Its spheres in groups of neighbours (fixed).
    groups: SphereGroups,
    /// Plan time where its stopping path ends (braking now), s.
    s_stop: f64,
    /// Posed this cycle (on plan, or as an obstacle: [`super::obstacles`]).
    pub(super) posed: bool,
    /// Where the way ahead begins (its increment's end), on a plan that
    /// goes on past it and not backing away ([`ahead`]).
    ahead_from: Option<f64>,
    /// Scratch per joint: a travel, the plan's velocity.
    travel: Vec<f64>,
    pub(super) half_step: Vec<f64>,
}

/// The arbiter's part of the guard.
#[derive(Clone, Debug)]
pub(super) struct Arbitration {
    pub(super) inc: Vec<Increment>,
    /// Per robot, scratch for its way back ([`super::way_back`]).
    pub(super) back: Vec<Increment>,
    /// Per robot, the way ahead of its increment ([`ahead`]).
    pub(super) ahead: Vec<Increment>,
    pub(super) offers: Vec<Offer>,
    pub(super) conflicts: Conflicts,
    pub(super) arbiter: Arbiter,
    pub(super) grants: Vec<Grant>,
    /// Per robot, what its grant tells it.
    pub(super) out: Vec<ArmGrant>,
    /// Per robot, its plan's length and last point index (kept for Done).
    plan_end: Vec<(f64, u32)>,
    /// Per robot, its priority (the workcell's, or as set).
    pub(super) priority: Vec<i64>,
    /// Per robot, since when it waits for others.
    wait_since: Vec<Option<f64>>,
    /// Per robot, when it was last let go from a hold, s.
    let_go_at: Vec<f64>,
    /// Per robot held: its hold came back soon after it was let go
    /// ([`HOLD_SETTLE_S`]), and since when its grant has reached past it.
    settling: Vec<(bool, Option<f64>)>,
    /// Per robot, since when its priority is boosted.
    boosted_at: Vec<Option<f64>>,
    /// Per robot, since when it is lifted ([`super::way_back`]).
    pub(super) lifted_at: Vec<Option<f64>>,
    /// Per pair `a * n + b` (`a < b`), whether the two are in a knot
    /// ([`super::separating`]).
    pub(super) knots: Vec<bool>,
    /// Per robot, when it was last told to back away, s.
    backed_at: Vec<f64>,
    /// Per robot backing away, the plan time its retreat goes back to
    /// (fixed until it gets there, then a further one).
    pub(super) retreat_end: Vec<Option<f64>>,
    /// Per robot done with its plan and backing away from another's way
    /// ([`super::parked`]): where its retreat ends, plan time, s, and the
    /// robot it backs away from.
    parked_retreat: Vec<Option<(f64, u16)>>,
    /// Per robot done with its plan, its back-away this cycle, if any.
    parked_grant: Vec<Option<ArmGrant>>,
    /// Per robot held by one it holds itself, since when ([`super::way_back`]).
    mutual_since: Vec<Option<f64>>,
    /// Per robot, the robot that last held it, and whether its increment
    /// reaches [`LOOKAHEAD_S`] (let go, until clear of it).
    waited_for: Vec<(Option<u16>, bool)>,
    pub(super) policy: ArbitrationPolicy,
    /// Where plans end in others' way ([`super::ends`]).
    ends: ends::Ends,
    /// The last cycle's time, s.
    now_s: f64,
}

impl Arbitration {
    /// Buffers for `cell`'s arms, posed by `posers`.
    pub(super) fn new(cell: &Workcell, posers: &[&SpherePoser]) -> Arbitration {
        let n = cell.manipulators.len();
        let inc: Vec<Increment> = cell
            .manipulators
            .iter()
            .zip(posers)
            .map(|(m, p)| {
                let dof = m.robot.dof();
                let batch = p.posed_batch();
                Increment {
                    times: [0.0; MAX_SAMPLES],
                    q: vec![0.0; MAX_SAMPLES * dof],
                    inflated_r: batch.r.clone(),
                    batch,
                    boxes: [[0.0; 6]; MAX_SAMPLES],
                    inflation: vec![0.0; m.robot.links.len()],
                    link_reach: vec![[0.0; 6]; m.robot.links.len()],
                    reach: [0.0; 6],
                    widest: 0.0,
                    groups: SphereGroups::new(p, m.robot.links.len()),
                    s_stop: 0.0,
                    posed: false,
                    ahead_from: None,
                    travel: vec![0.0; dof],
                    half_step: vec![0.0; dof],
                }
            })
            .collect();
        Arbitration {
            back: inc.clone(),
            ahead: inc.clone(),
            inc,
            offers: vec![Offer::off_plan(0, 0, true); n],
            conflicts: Conflicts::new(n),
            arbiter: Arbiter::new(n),
            grants: vec![Grant::NONE; n],
            out: vec![ArmGrant::NONE; n],
            plan_end: vec![(0.0, 0); n],
            priority: cell.manipulators.iter().map(|m| m.priority).collect(),
            wait_since: vec![None; n],
            let_go_at: vec![f64::NEG_INFINITY; n],
            settling: vec![(false, None); n],
            boosted_at: vec![None; n],
            lifted_at: vec![None; n],
            knots: vec![false; n * n],
            backed_at: vec![f64::NEG_INFINITY; n],
            retreat_end: vec![None; n],
            parked_retreat: vec![None; n],
            parked_grant: vec![None; n],
            mutual_since: vec![None; n],
            waited_for: vec![(None, false); n],
            policy: ArbitrationPolicy::default(),
            ends: ends::Ends::new(posers),
            now_s: f64::NEG_INFINITY,
        }
    }
}

impl Arbitration {
    /// Robot `r`'s priority this cycle: its own, or above every robot not
    /// boosted while it is.
    pub(super) fn effective_priority(&self, r: usize) -> i64 {
        match self.raised_at(r) {
            Some(t) => BOOSTED.saturating_sub((t * 1e3).clamp(0.0, 1e15) as i64),
            None => self.priority[r],
        }
    }

    /// Since when robot `r` goes before the robots neither boosted nor
    /// lifted (the earlier of the two), if it does.
    pub(super) fn raised_at(&self, r: usize) -> Option<f64> {
        match (self.boosted_at[r], self.lifted_at[r]) {
            (Some(b), Some(l)) => Some(b.min(l)),
            (b, l) => b.or(l),
        }
    }

    /// Whether robot `r`'s last grant ended short of the end of `plan`
    /// (its plan): it proceeds or holds to a plan time before it.
    pub(in crate::guard) fn short_of_end(&self, r: usize, plan: Option<&JointPlan>) -> bool {
        let (Some(g), Some(p)) = (self.out.get(r), plan) else { return false };
        matches!(g.state, GrantState::Proceed | GrantState::Hold) && g.until_s < p.duration_s() - 1e-6
    }

    /// Robot `r` got a new plan (or lost it): its wait starts over.
    pub(super) fn forget_wait(&mut self, r: usize) {
        self.wait_since[r] = None;
        self.boosted_at[r] = None;
        self.lifted_at[r] = None;
        self.ends.replanned(r);
    }

    /// Forgets every robot's waits and retreats (the guard starts over).
    pub(super) fn reset(&mut self) {
        let n = self.out.len();
        self.wait_since.iter_mut().for_each(|w| *w = None);
        self.let_go_at.fill(f64::NEG_INFINITY);
        self.settling.fill((false, None));
        self.boosted_at.iter_mut().for_each(|w| *w = None);
        self.lifted_at.fill(None);
        self.knots.fill(false);
        self.retreat_end.iter_mut().for_each(|e| *e = None);
        self.parked_retreat.fill(None);
        self.parked_grant.fill(None);
        self.mutual_since.fill(None);
        self.waited_for.fill((None, false));
        self.backed_at.iter_mut().for_each(|t| *t = f64::NEG_INFINITY);
        self.arbiter = Arbiter::new(n);
        self.arbiter.set_give_way(self.policy.give_way_at_start);
        self.arbiter.set_give_way_when_caught(self.policy.give_way_when_caught);
    }
}

impl Guard {
    /// This cycle's arbiter answer per manipulator (in samples of its
    /// increment; each [`Command`]'s `grant` says what it tells the robot).
    pub fn grants(&self) -> &[Grant] {
        &self.arbitration.grants
    }

    /// The robot `robot` gives way to this cycle (lower, and already on
    /// its way through its increment: [`ArbitrationPolicy::give_way_at_start`],
    /// or caught in it: [`ArbitrationPolicy::give_way_when_caught`]).
    pub fn giving_way(&self, robot: usize) -> Option<usize> {
        self.arbitration.arbiter.giving_way(robot)
    }

    /// `robot`'s planned trajectory, while it has one.
    pub fn joint_plan(&self, robot: usize) -> Option<&JointPlan> {
        self.arms.get(robot).and_then(|a| a.state.follow.tracker.plan())
    }

    /// This cycle's offer per manipulator.
    pub fn offers(&self) -> &[Offer] {
        &self.arbitration.offers
    }

    /// Plan time of sample `k` of `robot`'s increment, s.
    pub fn increment_time(&self, robot: usize, k: usize) -> f64 {
        self.arbitration.inc[robot].times[k]
    }

    /// Gives `robot` priority `priority` (higher goes first where plans
    /// cross) from the next cycle; false for a robot that does not exist.
    pub fn set_priority(&mut self, robot: usize, priority: i64) -> bool {
        match self.arbitration.priority.get_mut(robot) {
            Some(p) => {
                *p = priority;
                true
            }
            None => false,
        }
    }

    /// `robot`'s priority (the workcell's until set).
    pub fn priority(&self, robot: usize) -> Option<i64> {
        self.arbitration.priority.get(robot).copied()
    }

    /// Sets how long robots may wait before they are named starving.
    pub fn set_arbitration_policy(&mut self, p: ArbitrationPolicy) {
        self.arbitration.policy = p;
        self.arbitration.arbiter.set_give_way(p.give_way_at_start);
        self.arbitration.arbiter.set_give_way_when_caught(p.give_way_when_caught);
    }

    /// How long robots may wait before they are named starving.
    pub fn arbitration_policy(&self) -> ArbitrationPolicy {
        self.arbitration.policy
    }

    /// Whether and how long `robot` has been waiting for others, as of the
    /// last cycle (`None`: not waiting).
    pub fn waiting(&self, robot: usize) -> Option<Waiting> {
        let ar = &self.arbitration;
        let since = (*ar.wait_since.get(robot)?)?;
        let for_s = (ar.now_s - since).max(0.0);
        Some(Waiting { for_s, starving: for_s > ar.policy.starvation_s })
    }

    /// Since when `robot` goes before the robots not boosted (it waited
    /// longer than [`ArbitrationPolicy::boost_after_s`]), if it does.
    pub fn boosted_since(&self, robot: usize) -> Option<f64> {
        self.arbitration.boosted_at.get(robot).copied().flatten()
    }

    /// Since when `robot` is lifted, if it is: told to back away from a
    /// higher robot, it goes before it instead (its way on is clear, or
    /// its way back blocked: `way_back`), until its plan is done or
    /// replaced.
    pub fn lifted(&self, robot: usize) -> Option<f64> {
        self.arbitration.lifted_at.get(robot).copied().flatten()
    }

    /// Runs the arbitration again on this cycle's stopping paths, as the cycle at
    /// `now_s` did (to measure what it spends): its grants replace this cycle's.
    pub fn rearbitrate(&mut self, now_s: f64) {
        self.arbitrate(now_s);
    }

    /// Builds every robot's offer and increment (after [`Guard::prepare`]),
    /// finds their conflicts and decides the grants.
    pub(super) fn arbitrate(&mut self, now_s: f64) {
        for ri in 0..self.arms.len() {
            self.offer(ri, now_s);
        }
        self.offer_obstacles();
        self.pose_ahead();
        self.find_conflicts();
        self.refine_obstacle_conflicts();
        self.keep_approaching();
        self.mark_ends_in_way();
        let ar = &mut self.arbitration;
        ar.arbiter.decide(&ar.offers, &ar.conflicts, &mut ar.grants);
        self.untie_knots(now_s);
        self.back_parked(now_s);
        let ar = &mut self.arbitration;
        // A robot backing away goes back along its plan: it is tracked
        // there, not dropped as off plan, and for as long again after (it
        // brakes from its retreat).
        for ((a, g), last) in self.arms.iter_mut().zip(&ar.grants).zip(&mut ar.backed_at) {
            if g.state == GrantState::BackAway {
                *last = now_s;
            }
            let back = if now_s - *last <= PLAN_WINDOW_S { PLAN_WINDOW_S } else { 0.0 };
            a.state.follow.tracker.set_back_window(back);
        }
        for ri in 0..self.arms.len() {
            self.arbitration.out[ri] = self.arm_grant(ri, now_s);
        }
        self.follow_waits(now_s);
    }

    /// Who waits for others, since when, and for whom.
    fn follow_waits(&mut self, now_s: f64) {
        let ar = &mut self.arbitration;
        ar.now_s = now_s;
        for ri in 0..ar.out.len() {
            let (g, (by, far)) = (ar.out[ri], &mut ar.waited_for[ri]);
            if g.state == GrantState::Hold {
                *by = g.held_by.or(*by);
            } else if now_s == ar.let_go_at[ri] {
                *far = by.is_some();
            } else if by.is_some_and(|h| ar.conflicts.first_meeting(ri, h as usize, MAX_SAMPLES - 1).is_none()) {
                (*by, *far) = (None, false);
            }
            if matches!(g.state, GrantState::Done | GrantState::NoPlan) {
                ar.boosted_at[ri] = None;
                ar.lifted_at[ri] = None;
            }
            let waits = g.state == GrantState::BackAway || (g.held_by.is_some() && g.scaling < 1.0);
            if !waits {
                ar.wait_since[ri] = None;
                continue;
            }
            let since = *ar.wait_since[ri].get_or_insert(now_s);
            // Only a robot kept waiting by one that goes before it: one
            // waiting for a lower robot to clear its way gains nothing.
            let below = g.held_by.is_some_and(|h| ar.effective_priority(h as usize) > ar.effective_priority(ri));
            if below && ar.policy.boost_after_s.is_some_and(|b| now_s - since > b) {
                ar.boosted_at[ri].get_or_insert(now_s);
            }
        }
    }

    /// What robot `ri`'s grant tells it ([`ArmGrant`]).
    fn arm_grant(&mut self, ri: usize, now_s: f64) -> ArmGrant {
        let a = &self.arms[ri];
        let ar = &mut self.arbitration;
        let g = ar.grants[ri];
        let plan = a.state.follow.tracker.plan();
        if let Some(p) = plan {
            ar.plan_end[ri] = (p.duration_s(), p.len().saturating_sub(1) as u32);
        }
        let (Some(plan), true) = (plan, ar.offers[ri].planned) else {
            ar.retreat_end[ri] = None;
            if let Some(g) = ar.parked_grant[ri] {
                return g;
            }
            if a.state.follow.state == PlanState::Finished {
                let (until_s, point) = ar.plan_end[ri];
                return ArmGrant { state: GrantState::Done, until_s, point, ..ArmGrant::NONE };
            }
            return ArmGrant::NONE;
        };
        let inc = &ar.inc[ri];
        let (s0, end) = (inc.times[0], plan.duration_s());
        let point = |t: f64| if t >= end - 1e-9 { plan.len() - 1 } else { plan.segment(t) } as u32;
        let (state, until_s, scaling) = match (g.state, g.last_sample) {
            (GrantState::BackAway, _) => {
                // Back RETREAT_S of plan time, to the end it was given,
                // and on from there while still told to back away (a
                // further end set before its scaling falls for this one).
                let end = match ar.retreat_end[ri] {
                    Some(e) if s0 > e + LOOKAHEAD_S => e,
                    _ => (s0 - RETREAT_S).max(0.0),
                };
                ar.retreat_end[ri] = Some(end);
                (GrantState::BackAway, end, ((s0 - end) / LOOKAHEAD_S).clamp(0.0, 1.0))
            }
            (GrantState::Proceed | GrantState::Hold, Some(k)) => {
                let until = inc.times[k];
                // A robot standing at its grant's end is held until the
                // grant reaches HOLD_RELEASE_S past where it would stop,
                // where it lets it go at full speed: standing there, the
                // two are equal to within the noise of its position, and
                // one let go just past that met its grant's end again.
                let room = until - inc.s_stop;
                let was_held = ar.out[ri].state == GrantState::Hold;
                let clear = g.state == GrantState::Proceed || until >= end - 1e-9 || room > HOLD_RELEASE_S;
                let (chattered, clear_since) = &mut ar.settling[ri];
                *clear_since = if was_held && clear { Some(clear_since.unwrap_or(now_s)) } else { None };
                let settled = !*chattered || clear_since.is_some_and(|t| now_s - t >= HOLD_SETTLE_S);
                let held = was_held && !(clear && settled);
                let scaling = if held {
                    0.0
                } else if g.state == GrantState::Proceed || until >= end - 1e-9 {
                    1.0
                } else {
                    (room / LOOKAHEAD_S).clamp(0.0, 1.0)
                };
                let state = if scaling > 0.0 { GrantState::Proceed } else { GrantState::Hold };
                (state, until, scaling)
            }
            _ => (GrantState::Hold, s0, 0.0),
        };
        if state != GrantState::BackAway {
            ar.retreat_end[ri] = None;
        }
        match (ar.out[ri].state == GrantState::Hold, state == GrantState::Hold) {
            (true, false) => {
                ar.let_go_at[ri] = now_s;
                ar.settling[ri] = (false, None);
            }
            (false, true) => ar.settling[ri] = (now_s - ar.let_go_at[ri] < HOLD_SETTLE_S, None),
            _ => {}
        }
        // Kept on hold past the arbiter's word: by what held it.
        let held_by = match (state, g.held_by) {
            (GrantState::Hold, None) if ar.out[ri].state == GrantState::Hold => ar.out[ri].held_by,
            (_, h) => h,
        };
        ArmGrant { state, until_s, point: point(until_s), held_by, scaling, at_s: s0 }
    }

    /// Robot `ri`'s offer, and its increment when it is on plan.
    // long: the offer's steps (plan, increment, its inflation, what is committed) in the order they depend on each other
    fn offer(&mut self, ri: usize, now_s: f64) {
        let a = &self.arms[ri];
        let ar = &mut self.arbitration;
        let priority = ar.effective_priority(ri);
        let sc = &a.scratch;
        let still = sc.forecast.at_rest;
        let plan = a.state.follow.tracker.plan();
        let on = matches!(a.state.follow.state, PlanState::On { .. });
        let (dof, inc) = (a.model.decel.len(), &mut ar.inc[ri]);
        inc.posed = false;
        inc.ahead_from = None;
        let (Some(plan), true, None, true) = (plan, on, sc.forecast.problem, sc.forecast.n_cfg > 0) else {
            let samples = usize::from(sc.forecast.n_cfg > 0);
            ar.offers[ri] = Offer::off_plan(priority, samples, still);
            return;
        };
        let s0 = sc.forecast.plan_s[0];
        let s_stop = sc.forecast.plan_s[sc.forecast.n_cfg - 1].max(s0);
        inc.s_stop = s_stop;
        // The stopping path at the plan's own pace: the plan's velocity
        // there, through the same reaction.
        let k = plan.segment(s0);
        if plan.len() > 1 {
            let dt = plan.time(k + 1) - plan.time(k);
            for ((w, p), q) in inc.travel.iter_mut().zip(plan.point(k)).zip(plan.point(k + 1)) {
                *w = (q - p) / dt;
            }
        } else {
            inc.travel.fill(0.0);
        }
        let reach = if ar.waited_for[ri].1 { LOOKAHEAD_S } else { INCREMENT_LOOKAHEAD_S };
        let full = Along::new(plan, &a.state.follow.rates, s0, &inc.travel, sc.forecast.plan.react_s + reach, None);
        // Backing away: its increment is the rest of its retreat, back
        // along the plan to where the retreat ends, all of it committed
        // (the robots above keep out of the way it goes).
        let back_to = ar.retreat_end[ri].filter(|&e| e < s0);
        let end = match back_to {
            Some(e) => e,
            None => full.s_end.max(s_stop).min(plan.duration_s()),
        };
        let span = end - s0;
        let last = MAX_SAMPLES - 1;
        let goes_on = back_to.is_none() && !sc.forecast.reversing && end < plan.duration_s() - 1e-6;
        inc.ahead_from = goes_on.then_some(end);
        inc.sample(plan, s0, end, k, &sc.forecast.offset);
        let seen = a.state.est_period + a.state.est.last_stamp().map_or(0.0, |t| (now_s - t).max(0.0));
        for (h, &acc) in inc.half_step.iter_mut().zip(&a.model.accel) {
            *h += forecast::along::departure(acc, seen, a.model.reaction_s);
        }
        if sc.forecast.reversing {
            obstacles::grow_by_retreat(&mut inc.half_step, &sc.forecast.path_q[..sc.forecast.n_cfg * dof]);
        }
        // Each sample stands for the path half-way to its neighbours (its
        // spheres are inflated by that): the stopping path's end is covered
        // by the sample nearest it.
        let committed = if back_to.is_some() {
            last as f64
        } else if span > 0.0 {
            (((s_stop - s0) / span) * last as f64 - 0.5).ceil().clamp(0.0, last as f64)
        } else {
            0.0
        };
        if !inc.pose(&a.model) {
            ar.offers[ri] = Offer::off_plan(priority, 0, still);
            return;
        }
        // Stopped, for the rule: it cannot brake out of where it stands
        // (joint-state noise keeps a standing robot's estimate from 0).
        let still = still || committed == 0.0;
        let retreating = ar.retreat_end[ri].is_some_and(|e| s0 > e + RETREAT_S / 20.0);
        let at_start = s0 <= RETREAT_S / 20.0;
        ar.offers[ri] = Offer {
            priority,
            samples: MAX_SAMPLES,
            committed: committed as usize,
            planned: true,
            still,
            retreating,
            at_start,
            setting_off: s0 <= SETTING_OFF_S,
        };
    }
}
