//! The way ahead: the stretch of a robot's plan past its increment, for
//! [`AHEAD_S`] of plan time. A robot below it does not enter it (the
//! arbiter's rule, [`crate::arbiter::Arbiter::ahead_mut`]): it holds at its
//! edge while the one above passes, instead of going in, being overtaken
//! by the increment of the one above and sent back, and holding that one
//! up for its retreat.
//!
//! Its samples are a hint where to hold, not a bound the safety rests on
//! (the increments and the stop check are): each is grown as wide as the
//! robot's increment is now, so that the robot below, held where its
//! increment misses the way ahead, stands clear of the increment that
//! comes there (else it was sent back from there all the same). Posed only
//! for robots on plan with a robot on plan below them, and compared only
//! with those robots' increments (link pair by link pair, as the
//! increments are: [`super::conflicts`]).

use super::*;

/// How far past a robot's increment its way ahead reaches, in plan time
/// at the plan's pace, s (to its plan's end at most).
pub const AHEAD_S: f64 = 1.0;

impl Guard {
    /// Poses the way ahead of every robot on plan that has a robot on plan
    /// below it (the others' are left unposed). None with
    /// [`ArbitrationPolicy::go_on_when_clear`]: that policy lets a robot
    /// into another's way and on through where its way on is clear, which
    /// holding it at the edge would undo.
    pub(super) fn pose_ahead(&mut self) {
        let ar = &mut self.arbitration;
        let go_on = ar.policy.go_on_when_clear;
        let offers = &ar.offers;
        let below = |o: usize| (0..offers.len()).any(|r| r != o && offers[r].planned && goes_before(offers, o, r));
        for (o, (way, a)) in ar.ahead.iter_mut().zip(&self.arms).enumerate() {
            way.posed = false;
            let (Some(from), true, Some(plan)) =
                (ar.inc[o].ahead_from, offers[o].planned, a.state.follow.tracker.plan())
            else {
                continue;
            };
            if go_on || !below(o) {
                continue;
            }
            let to = (from + AHEAD_S).min(plan.duration_s());
            way.sample(plan, from, to, plan.segment(from), &a.scratch.forecast.offset);
            // As wide as its increment will be when it gets there, not by
            // the way's own coarse steps (those grown by half a step of a
            // second's plan met the robot below where it stood).
            way.half_step.copy_from_slice(&ar.inc[o].half_step);
            way.pose(&a.model);
        }
    }
}
