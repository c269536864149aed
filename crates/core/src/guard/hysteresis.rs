//! Deciding: a robot's data problem or earliest conflict stops it; a
//! stopped robot is released once nothing holds it for the hold time.

use super::*;

impl Guard {
    pub(super) fn decide(&mut self, ri: usize, now_s: f64, release: f32, unknown: Option<u16>) -> Decision {
        let hold = self.settings.release_hold_s;
        let a = &mut self.arms[ri];
        let stop = |kind, reason, a: &Arm| {
            let conflict = a.track.conflict_k != usize::MAX;
            Decision::Stop(Stop {
                kind,
                reason,
                pair: if conflict { a.track.conflict_pair } else { a.track.best_pair },
                clearance_m: a.track.best,
                time_to_contact_s: conflict.then(|| a.plan.time(a.track.conflict_k) as f32),
            })
        };
        let prev = std::mem::replace(&mut a.prev_class_best, a.track.class_best);
        if let Some((reason, kind)) = a.problem {
            a.stopped = true;
            a.clear_since = None;
            a.cause = StopCause::Data;
            return stop(kind, reason, a);
        }
        if let Some(other) = unknown.filter(|&o| o as usize != ri) {
            a.stopped = true;
            a.clear_since = None;
            a.cause = StopCause::Data;
            return stop(StopKind::Immediate, Reason::OtherRobotUnknown { other }, a);
        }
        if a.track.conflict_k != usize::MAX {
            a.stopped = true;
            a.clear_since = None;
            a.cause = match a.track.conflict_pair {
                Some(pair) => StopCause::Proximity(class_of(a.track.conflict_reason), pair),
                None => StopCause::Data,
            };
            let kind = if a.track.conflict_k == 0 { StopKind::Immediate } else { StopKind::OnPath };
            return stop(kind, a.track.conflict_reason, a);
        }
        if a.stopped {
            // Nothing is within the margin now. Released once, for the hold
            // time, the pair that caused the stop is no longer the closest
            // of its kind within the release margin, and nothing within that
            // margin is getting closer: a robot holding still in a legal
            // pose (two of its own links between the two margins, say)
            // starts, while the hysteresis still keeps a proximity stop from
            // chattering.
            let held = (0..3).any(|c| {
                let now = a.track.class_best[c];
                let cause =
                    matches!(a.cause, StopCause::Proximity(k, pair) if k == c && a.track.class_pair[c] == Some(pair));
                now < release && (cause || now < prev[c] - APPROACH_EPS_M)
            });
            if !held {
                let since = *a.clear_since.get_or_insert(now_s);
                if now_s - since >= hold {
                    a.stopped = false;
                    a.clear_since = None;
                } else {
                    return stop(StopKind::OnPath, Reason::Holding { clear_for_s: (now_s - since) as f32 }, a);
                }
            } else {
                a.clear_since = None;
                return stop(StopKind::OnPath, Reason::Holding { clear_for_s: 0.0 }, a);
            }
        }
        Decision::Continue { clearance_m: a.track.best, pair: a.track.best_pair }
    }
}
