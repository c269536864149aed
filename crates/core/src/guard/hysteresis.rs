//! Deciding: a robot's data problem or earliest conflict stops it; a
//! stopped robot is released once nothing holds it for the hold time, or
//! at once to escape (its forecast takes it away from what stopped it:
//! [`track`](super::track)).

use super::*;
use crate::arbiter::GrantState;

impl Guard {
    /// Decides for one robot. A robot released (stopped, now not) goes on
    /// from braking or rest after its controller's latency: its estimator
    /// is told to expect that change for that latency plus one fit window
    /// ([`Estimator::expect_change`]), so the estimate follows the new
    /// acceleration at once instead of half a window late.
    pub(super) fn decide(&mut self, ri: usize, now_s: f64, release: f32, unknown: Option<u16>) -> Decision {
        let was = self.arms[ri].state.stopped;
        let d = self.decide_state(ri, now_s, release, unknown);
        let a = &mut self.arms[ri];
        if was
            && !a.state.stopped
            && let Some(last) = a.state.est.last_stamp()
        {
            let span = (now_s - last).max(0.0) + a.model.reaction_s + self.settings.velocity_fit_window_s;
            a.state.est.expect_change(last + span);
        }
        d
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
        let (true, Some(o)) = (self.arms[ri].state.stopped && c < 2, offer.filter(|o| o.planned && o.samples >= 2))
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
        plan.at_time(end_s, &mut a.scratch.ahead_q);
        if a.model.poser.pose(&a.scratch.ahead_q, &mut a.scratch.ahead).is_err() {
            return false;
        }
        pair_clearance(&a.scratch.ahead, &self.field, u32::from(la), other) > self.margins.clearance_m as f32
    }

    fn decide_state(&mut self, ri: usize, now_s: f64, release: f32, unknown: Option<u16>) -> Decision {
        let hold = self.settings.release_hold_s;
        let clear_ahead = self.clear_ahead(ri);
        let plan_clear = self.plan_clear(ri);
        let a = &mut self.arms[ri];
        let stop = |kind, reason, a: &Arm| {
            let conflict = a.scratch.track.conflict_k != usize::MAX;
            Decision::Stop(Stop {
                kind,
                reason,
                pair: if conflict { a.scratch.track.conflict_pair } else { a.scratch.track.best_pair },
                clearance_m: a.scratch.track.best,
                time_to_contact_s: conflict.then(|| a.scratch.plan.time(a.scratch.track.conflict_k) as f32),
            })
        };
        let prev = std::mem::replace(&mut a.state.prev_class_best, a.scratch.track.class_best);
        if let Some((reason, kind)) = a.scratch.problem {
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
        if escape && (conflict || a.state.stopped) {
            if let (true, Some(t)) = (a.state.stopped, Target::of(a.state.cause)) {
                a.state.escape_floor = Some((target_class(t), a.scratch.track.escape.now));
            }
            a.state.stopped = false;
            a.state.clear_since = None;
            a.state.escaping = true;
            let t = &a.scratch.track;
            return Decision::Continue { clearance_m: t.best, pair: t.best_pair, escaping: true };
        }
        a.state.escaping = escape;
        if conflict {
            a.state.stopped = true;
            a.state.clear_since = None;
            a.state.cause = match a.scratch.track.conflict_pair {
                Some(pair) => StopCause::Proximity(class_of(a.scratch.track.conflict_reason), pair),
                None => StopCause::Data,
            };
            let kind = if a.scratch.track.conflict_k == 0 { StopKind::Immediate } else { StopKind::OnPath };
            return stop(kind, a.scratch.track.conflict_reason, a);
        }
        if a.state.stopped && clear_ahead && now_s - a.state.ahead_released_s >= hold {
            // Nothing is within the margin now, and the arbiter grants it
            // its whole next increment, clear of the robot that stopped it:
            // it goes on along its plan, at once. Held here by the release
            // hysteresis, it would keep that robot waiting for it while it
            // waits for that robot to leave.
            a.state.stopped = false;
            (a.state.clear_since, a.state.escape_floor) = (None, None);
            a.state.ahead_released_s = now_s;
            let t = &a.scratch.track;
            return Decision::Continue { clearance_m: t.best, pair: t.best_pair, escaping: false };
        }
        if a.state.stopped {
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
                let cause = (c == 2 || !plan_clear)
                    && matches!(a.state.cause, StopCause::Proximity(k, pair) if k == c && a.scratch.track.class_pair[c] == Some(pair));
                let approaching = c != class_of(Reason::SelfCollision) && now < prev[c] - APPROACH_EPS_M;
                now < release && (cause || approaching)
            });
            if !held {
                let since = *a.state.clear_since.get_or_insert(now_s);
                if now_s - since >= hold {
                    a.state.stopped = false;
                    (a.state.clear_since, a.state.escape_floor) = (None, None);
                } else {
                    return stop(StopKind::OnPath, Reason::Holding { clear_for_s: (now_s - since) as f32 }, a);
                }
            } else {
                a.state.clear_since = None;
                return stop(StopKind::OnPath, Reason::Holding { clear_for_s: 0.0 }, a);
            }
        }
        Decision::Continue { clearance_m: a.scratch.track.best, pair: a.scratch.track.best_pair, escaping: escape }
    }
}

/// Stops robot `a` for its data (or another robot's). One already stopped
/// for proximity keeps that cause: it still stands where the forecast
/// stopped it, and when the data comes back it is released as that stop
/// would have been (an escape at once, the hysteresis otherwise), not
/// after a bare hold time as if nothing had come close.
fn data_stop(a: &mut Arm) {
    if !(a.state.stopped && matches!(a.state.cause, StopCause::Proximity(..))) {
        a.state.cause = StopCause::Data;
    }
    a.state.stopped = true;
    a.state.clear_since = None;
    a.state.escaping = false;
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
        (Some((c, floor)), Some(t)) if c == target_class(t) && a.state.stopped => from >= floor - ESCAPE_MIN_M,
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
