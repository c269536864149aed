//! Deciding: a robot's data problem or earliest conflict stops it; a
//! stopped robot is released once nothing holds it for the hold time, or
//! at once to escape (its forecast takes it away from what stopped it:
//! [`track`](super::track)).

use super::*;
use crate::arbiter::GrantState;

/// A robot's stop and release state, as the hysteresis carries it from
/// cycle to cycle (what stopped it is [`StopCause`], kept beside it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Phase {
    /// Stopped; `clear_since`: since when nothing has held it (the
    /// release hold time runs from there).
    Stopped { clear_since: Option<f64> },
    /// Moving; `escaping`: let go (or kept going) because its forecast
    /// takes it away from what stopped it ([`track`]'s escape).
    Moving { escaping: bool },
}

impl Phase {
    /// Stopped, nothing clear yet: at start, after a reset, on a new stop.
    pub(super) const STOPPED: Phase = Phase::Stopped { clear_since: None };

    pub(super) fn stopped(self) -> bool {
        matches!(self, Phase::Stopped { .. })
    }

    pub(super) fn escaping(self) -> bool {
        self == Phase::Moving { escaping: true }
    }
}

/// What the arbitration and the plan say about releasing a stopped robot
/// ([`Guard::release_evidence`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct Evidence {
    /// Stopped for another robot's nearness, it is granted its whole next
    /// increment, clear of that robot ([`Guard::clear_ahead`]).
    pub(super) clear_ahead: bool,
    /// Stopped on its plan for its own links or the cell, that pair is
    /// clear where its increment ends ([`Guard::plan_clear`]).
    pub(super) plan_clear: bool,
    /// Stopped for another robot that is stopped for it (or was, and goes
    /// now): whose turn it is ([`Guard::turn`]).
    pub(super) turn: Turn,
}

/// The most doublings of the hold time for a robot stopped again and
/// again for a robot right after its release ([`decide`]).
pub(super) const MAX_BACKOFF: u32 = 4;

/// Two robots stopped for each other with no plans the arbiter could
/// weigh against each other, both clear of the margin: released together,
/// each moves towards the other again (goals behind each other) and both
/// are stopped again, over and over. They take turns instead: one goes,
/// the other holds on (its stop stays) until the first is clear of it by
/// the release margin or is stopped for it again, which passes the turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Turn {
    /// Not stopped for a robot stopped for it (or both on plans).
    None,
    /// Its turn: the pair's nearness alone no longer holds it.
    Mine,
    /// The other robot's: it holds on, its release hold running.
    Theirs,
}

/// The decide stage for robot `ri`: its stop or release this cycle, from
/// its forecast's problem, its track (what the checks found), the robot
/// with no joint state (`unknown`), the release `evidence`, and its phase
/// last cycle. A robot released (stopped, now not) goes on from braking or
/// rest after its controller's latency: its estimator is told to expect
/// that change for that latency plus one fit window
/// ([`Estimator::expect_change`]), so the estimate follows the new
/// acceleration at once instead of half a window late.
///
/// A robot stopped again for a robot within the hold time of its release
/// from a stop a robot caused waits twice as long before its next such
/// release, up to `2^MAX_BACKOFF` times the hold time; going on for the
/// hold time ends that. Two robots in a knot without plans (the released
/// one turns towards the other at once, and where the links' shapes let it
/// come to rest nearer than their spheres, it is stopped again within
/// milliseconds) so flip their stops a few times, not every hold time.
pub(super) fn decide(
    a: &mut Arm,
    ri: usize,
    now_s: f64,
    (release, hold_s, fit_window_s): (f32, f64, f64),
    unknown: Option<u16>,
    evidence: Evidence,
) -> Decision {
    let was = a.state.phase.stopped();
    let by_robot = |a: &Arm| matches!(a.state.cause, StopCause::Proximity(2, _));
    let hold = if by_robot(a) { hold_s * f64::from(1u32 << a.state.quick_restops) } else { hold_s };
    let d = decide_state(a, ri, now_s, (release, hold), unknown, evidence);
    let since = now_s - a.state.robot_releases.1;
    if !was && a.state.phase.stopped() && by_robot(a) && since < hold_s {
        a.state.quick_restops = (a.state.quick_restops + 1).min(MAX_BACKOFF);
    } else if !was && !a.state.phase.stopped() && since >= hold_s {
        a.state.quick_restops = 0;
    }
    if was && !a.state.phase.stopped() && by_robot(a) {
        a.state.robot_releases = (a.state.robot_releases.0.saturating_add(1), now_s);
    }
    if was
        && !a.state.phase.stopped()
        && let Some(last) = a.state.est.last_stamp()
    {
        let span = (now_s - last).max(0.0) + a.model.reaction_s + fit_window_s;
        a.state.est.expect_change(last + span);
    }
    d
}

impl Guard {
    /// What the arbitration and robot `ri`'s plan say about releasing it.
    pub(super) fn release_evidence(&mut self, ri: usize, now_s: f64, release: f32) -> Evidence {
        let turn = self.turn(ri, now_s, release);
        Evidence { clear_ahead: self.clear_ahead(ri), plan_clear: self.plan_clear(ri), turn }
    }

    /// Whose turn it is to go for robot `ri`, stopped for another robot
    /// that was stopped for it ([`Turn`]): that robot's while it goes
    /// (released within the hold time, or its stopping path comes near a
    /// robot, or it is within `release` of `ri`); while both stand, the
    /// one released fewer times from stops robots caused, then the higher
    /// priority, then the lower index. A robot held by something else as
    /// well does not take its turn: the other goes; held within the
    /// release margin of `ri` itself, neither takes a turn.
    fn turn(&self, ri: usize, now_s: f64, release: f32) -> Turn {
        let me = &self.arms[ri];
        let StopCause::Proximity(2, (_, Body::Link { robot, .. })) = me.state.cause else { return Turn::None };
        let o = robot as usize;
        let planned = |r: usize| self.arbitration.offers.get(r).is_some_and(|x| x.planned);
        if o == ri || o >= self.arms.len() || !me.state.phase.stopped() || (planned(ri) && planned(o)) {
            return Turn::None;
        }
        let other = &self.arms[o].state;
        if !matches!(other.cause, StopCause::Proximity(2, (_, Body::Link { robot: r, .. })) if r as usize == ri) {
            return Turn::None;
        }
        let near = me.scratch.track.class_best[2] < release
            && matches!(me.scratch.track.class_pair[2], Some((_, Body::Link { robot: r, .. })) if r as usize == o);
        let going = now_s - other.robot_releases.1 < self.settings.release_hold_s
            || self.arms[o].scratch.track.approach[1].is_finite();
        match other.phase {
            Phase::Moving { .. } if near || going => Turn::Theirs,
            Phase::Moving { .. } => Turn::None,
            // Held by something else, it waits; held by `ri` itself (within
            // the release margin of it), neither goes first: the escape
            // rules release them.
            Phase::Stopped { clear_since: None } => {
                let t = &self.arms[o].scratch.track;
                let held_by_me = t.class_best[2] < release
                    && matches!(t.class_pair[2], Some((_, Body::Link { robot: r, .. })) if r as usize == ri);
                if held_by_me { Turn::None } else { Turn::Mine }
            }
            Phase::Stopped { clear_since: Some(_) } => {
                let prio = |r: usize| self.arbitration.offers.get(r).map_or(0, |x| x.priority);
                let key = |r: usize, n: u32| (n, std::cmp::Reverse(prio(r)), r);
                if key(ri, me.state.robot_releases.0) < key(o, other.robot_releases.0) {
                    Turn::Mine
                } else {
                    Turn::Theirs
                }
            }
        }
    }

    /// Whether robot `ri`, stopped for another robot's nearness, is granted
    /// its whole next increment this cycle: the arbiter found its plan
    /// ahead clear of that robot (which is on a plan too, so the pair was
    /// arbitrated) and of every robot's committed path.
    fn clear_ahead(&self, ri: usize) -> bool {
        let ar = &self.arbitration;
        let granted = ar.grants.get(ri).is_some_and(|g| g.state == GrantState::Proceed);
        let by = match self.arms[ri].state.cause {
            StopCause::Proximity(_, (_, Body::Link { robot, .. })) if robot as usize != ri => Some(robot as usize),
            _ => None,
        };
        granted && by.is_some_and(|o| ar.offers.get(o).is_some_and(|x| x.planned))
    }

    /// Whether robot `ri`, stopped on its plan for a pair of its links or
    /// one against the cell, has that pair clear of the clearance margin
    /// where its increment ends (posed without inflation: the hysteresis
    /// decides on it, the checks keep it safe). False where it cannot
    /// tell (no such stop, no plan, no increment, no joint state).
    fn plan_clear(&mut self, ri: usize) -> bool {
        let StopCause::Proximity(c, (Body::Link { link: la, .. }, b)) = self.arms[ri].state.cause else { return false };
        let offer = self.arbitration.offers.get(ri);
        let (true, Some(o)) =
            (self.arms[ri].state.phase.stopped() && c < 2, offer.filter(|o| o.planned && o.samples >= 2))
        else {
            return false;
        };
        let end_s = self.increment_time(ri, o.samples - 1);
        let other = match b {
            Body::Link { link, .. } => Some(u32::from(link)),
            _ => None,
        };
        let a = &mut self.arms[ri];
        let Some(plan) = a.state.follow.tracker.plan() else { return false };
        plan.at_time(end_s, &mut a.scratch.posed.ahead_q);
        if a.model.poser.pose(&a.scratch.posed.ahead_q, &mut a.scratch.posed.ahead).is_err() {
            return false;
        }
        pair_clearance(&a.scratch.posed.ahead, &self.cell.field, u32::from(la), other) > self.margins.clearance_m as f32
    }
}

fn decide_state(
    a: &mut Arm,
    ri: usize,
    now_s: f64,
    (release, hold): (f32, f64),
    unknown: Option<u16>,
    Evidence { clear_ahead, plan_clear, turn }: Evidence,
) -> Decision {
    let prev = std::mem::replace(&mut a.state.prev_class_best, a.scratch.track.class_best);
    if let Some((reason, kind)) = a.scratch.forecast.problem {
        data_stop(a);
        return stop(kind, reason, a);
    }
    if let Some(other) = unknown.filter(|&o| o as usize != ri) {
        data_stop(a);
        return stop(StopKind::Immediate, Reason::OtherRobotUnknown { other }, a);
    }
    // Stopped for proximity (or escaping already: only then does the
    // escape have a target), and the forecast takes it away from what
    // stopped it: it goes, at once.
    // An escape must pay off ([`escape_floor`]).
    let escape = escape_floor(a, release);
    let conflict = a.scratch.track.conflict_k != usize::MAX;
    if escape && (conflict || a.state.phase.stopped()) {
        if let (true, Some(t)) = (a.state.phase.stopped(), Target::of(a.state.cause)) {
            a.state.escape_floor = Some((target_class(t), a.scratch.track.escape.now));
        }
        a.state.phase = Phase::Moving { escaping: true };
        let t = &a.scratch.track;
        return Decision::Continue { clearance_m: t.best, pair: t.best_pair, escaping: true };
    }
    if !a.state.phase.stopped() {
        a.state.phase = Phase::Moving { escaping: escape };
    }
    if conflict {
        a.state.phase = Phase::STOPPED;
        a.state.cause = match a.scratch.track.conflict_pair {
            Some(pair) => StopCause::Proximity(class_of(a.scratch.track.conflict_reason), pair),
            None => StopCause::Data,
        };
        let kind = if a.scratch.track.conflict_k == 0 { StopKind::Immediate } else { StopKind::OnPath };
        return stop(kind, a.scratch.track.conflict_reason, a);
    }
    if a.state.phase.stopped() && clear_ahead && now_s - a.state.ahead_released_s >= hold {
        // Nothing is within the margin now, and the arbiter grants it
        // its whole next increment, clear of the robot that stopped it:
        // it goes on along its plan, at once. Held here by the release
        // hysteresis, it would keep that robot waiting for it while it
        // waits for that robot to leave.
        a.state.phase = Phase::Moving { escaping: escape };
        a.state.escape_floor = None;
        a.state.ahead_released_s = now_s;
        let t = &a.scratch.track;
        return Decision::Continue { clearance_m: t.best, pair: t.best_pair, escaping: false };
    }
    if let Phase::Stopped { clear_since } = a.state.phase
        && let Some(d) = hold_or_release(a, (now_s, clear_since), (release, hold), prev, (plan_clear, escape, turn))
    {
        return d;
    }
    Decision::Continue { clearance_m: a.scratch.track.best, pair: a.scratch.track.best_pair, escaping: escape }
}

/// A stopped robot with nothing within the margin now: still held (the
/// decision), or released (`None`, its phase moving).
fn hold_or_release(
    a: &mut Arm,
    (now_s, clear_since): (f64, Option<f64>),
    (release, hold): (f32, f64),
    prev: [f32; 3],
    (plan_clear, escape, turn): (bool, bool, Turn),
) -> Option<Decision> {
    // Two robots stopped for each other take turns ([`Turn`]): on its
    // turn the pair no longer holds it; on the other's it holds on.
    //
    // Nothing is within the margin now. Released once, for the hold
    // time, the pair that caused the stop is no longer the closest
    // of its kind within the release margin, and nothing within that
    // margin is getting closer: a robot holding still in a legal
    // pose (two of its own links between the two margins, say)
    // starts, while the hysteresis still keeps a proximity stop from
    // chattering.
    //
    // On a plan whose increment ends clear of the margin on the
    // pair that stopped it against the cell or its own links, that
    // pair no longer holds it: they come closer only as it moves,
    // along the plan its forecast checks every cycle, and where its
    // plan runs between the margins (beside a table, two links of a
    // compact wrist side by side) it would hold it there for good,
    // the plan never taking it farther away ([`Guard::plan_clear`]).
    // Anything within the release margin that comes closer (a
    // sensed obstacle, another robot) still holds it. Its own links
    // come closer only as it moves, which its stopping path checks
    // every cycle: their clearance along that path dips and recovers
    // with how old its joint state is when the cycle runs (a robot
    // that may start any moment is posed that much farther), and
    // counted as coming closer, those dips would restart the hold
    // time again and again and keep a robot standing in a legal pose
    // stopped for good.
    let held = (0..3).any(|c| {
            let now = a.scratch.track.class_best[c];
            let cause = (if c == 2 { turn != Turn::Mine } else { !plan_clear })
                && matches!(a.state.cause, StopCause::Proximity(k, pair) if k == c && a.scratch.track.class_pair[c] == Some(pair));
            let approaching = c != class_of(Reason::SelfCollision) && now < prev[c] - APPROACH_EPS_M;
            now < release && (cause || approaching)
        });
    if !held {
        let since = clear_since.unwrap_or(now_s);
        a.state.phase = Phase::Stopped { clear_since: Some(since) };
        if now_s - since >= hold && turn != Turn::Theirs {
            a.state.phase = Phase::Moving { escaping: escape };
            a.state.escape_floor = None;
        } else {
            return Some(stop(StopKind::OnPath, Reason::Holding { clear_for_s: (now_s - since) as f32 }, a));
        }
    } else {
        a.state.phase = Phase::STOPPED;
        return Some(stop(StopKind::OnPath, Reason::Holding { clear_for_s: 0.0 }, a));
    }
    None
}

/// The stop decision of `kind` and `reason` from robot `a`'s track: the
/// conflict's pair and time to contact, or the closest pair.
fn stop(kind: StopKind, reason: Reason, a: &Arm) -> Decision {
    let conflict = a.scratch.track.conflict_k != usize::MAX;
    Decision::Stop(Stop {
        kind,
        reason,
        pair: if conflict { a.scratch.track.conflict_pair } else { a.scratch.track.best_pair },
        clearance_m: a.scratch.track.best,
        time_to_contact_s: conflict.then(|| a.scratch.forecast.plan.time(a.scratch.track.conflict_k) as f32),
    })
}

/// Stops robot `a` for its data (or another robot's). One already stopped
/// for proximity keeps that cause: it still stands where the forecast
/// stopped it, and when the data comes back it is released as that stop
/// would have been (an escape at once, the hysteresis otherwise), not
/// after a bare hold time as if nothing had come close.
fn data_stop(a: &mut Arm) {
    if !(a.state.phase.stopped() && matches!(a.state.cause, StopCause::Proximity(..))) {
        a.state.cause = StopCause::Data;
    }
    a.state.phase = Phase::STOPPED;
}

/// Whether robot `a`'s escape evidence holds and the escape pays off: one
/// starting (stopped) nearer what it escaped from last time, by more than
/// noise, is not one but a creep towards it, a release at a time, each
/// forecast to end farther. That floor holds until the robot is clear of
/// that class by the release margin or let go there the ordinary way.
fn escape_floor(a: &mut Arm, release: f32) -> bool {
    if a.state.escape_floor.is_some_and(|(c, _)| a.scratch.track.class_best[c] > release) {
        a.state.escape_floor = None;
    }
    let from = a.scratch.track.escape.now;
    let paid = match (a.state.escape_floor, Target::of(a.state.cause)) {
        (Some((c, floor)), Some(t)) if c == target_class(t) && a.state.phase.stopped() => from >= floor - ESCAPE_MIN_M,
        _ => true,
    };
    a.scratch.track.escape.ok() && paid
}

/// The class ([`class_of`]) of what a stop's target is.
fn target_class(t: Target) -> usize {
    match t {
        Target::Cell => 0,
        Target::Own => 1,
        Target::Robot(_) => 2,
    }
}

/// Least clearance of link `a`'s spheres in `p` to link `b`'s (`Some`) or
/// to the cell (`None`), m.
fn pair_clearance(p: &PosedSpheres, field: &DistanceField, a: u32, b: Option<u32>) -> f32 {
    let mut best = f32::INFINITY;
    for i in (0..p.len()).filter(|&i| p.link[i] == a) {
        let d = match b {
            None => field.clearance(p.x[i], p.y[i], p.z[i], p.r[i]),
            Some(b) => (0..p.len())
                .filter(|&j| p.link[j] == b)
                .map(|j| {
                    let (dx, dy, dz) = (p.x[i] - p.x[j], p.y[i] - p.y[j], p.z[i] - p.z[j]);
                    (dx * dx + dy * dy + dz * dz).sqrt() - p.r[i] - p.r[j]
                })
                .fold(f32::INFINITY, f32::min),
        };
        best = best.min(d);
    }
    best
}
