//! A robot done with its plan that stands in another's way backs away.
//!
//! A robot that has finished its plan takes no grants: it is an obstacle
//! to the robots on plans, which hold short of it ([`super::obstacles`]).
//! Parked across the way another robot's plan still has to go, it holds
//! that robot for ever, whatever their priorities: it has nothing left to
//! do first, and [`super::ends`] can only order two plans it knows
//! (not the next plan a cell sends once one is done). So a robot done with
//! its plan, trusted, and still on that plan (within tolerance: the guard
//! keeps it while it is, `Follow::parked`) **backs away** along it from
//! the highest robot on plan whose increment meets where it stands:
//! [`RETREAT_S`] of plan time at a time, each retreat run to its end once
//! sent (stopping at the first clear point would only put it back in the
//! way of an increment that slides on), and a further one while it is
//! still in the way, to its plan's start at most. Where it comes to rest,
//! its grant says done again. A robot standing at its plan's start, or
//! off its last plan, has no way back: the robots on plans hold short of
//! it as before.
//!
//! Where a retreat to send would run into a robot on plan, where that
//! one stands or must go ([`Guard::way_back_free_along`]: often the very
//! robot it backs away from, held short of it on the spot its way back
//! passes), it is not sent: that robot **backs away first**, if it stands
//! and its own way back is free, and goes on to its retreat's end; the
//! parked robot follows once its way back is free. Sent back into it
//! instead, both were halted by the stop check for good.
//!
//! A plan finished within tolerance of its end while the robot's grant
//! ended short of it (its controller may still be finishing it) becomes
//! its way back only once the robot is tracked at the very end
//! (`Follow::parked_pending`). Dropped there before, it left the robot
//! parked in the way with no way back.
//!
//! Its retreat is a [`GrantState::BackAway`] like any other (the node
//! sends its controller the way back along the finished plan); the stop
//! check guards it as it guards any robot off plan.

use super::*;
use crate::arbiter::GrantState;

impl Guard {
    /// Sets, per robot done with its plan, the back-away its grant says
    /// this cycle, if any (the module's rule; after the grants are decided).
    pub(super) fn back_parked(&mut self, now_s: f64) {
        let n = self.arms.len();
        for o in 0..n {
            let a = &self.arms[o];
            let ar = &mut self.arbitration;
            ar.parked_grant[o] = None;
            let (f, offer) = (&a.state.follow, ar.offers[o]);
            let Some(s0) = f.parked_s.filter(|_| f.state == PlanState::Finished) else {
                ar.parked_retreat[o] = None;
                continue;
            };
            if offer.planned || offer.samples == 0 || a.scratch.forecast.problem.is_some() {
                ar.parked_retreat[o] = None;
                continue;
            }
            // The highest robot on plan whose increment meets where it
            // stands, or that backs away first from it (below).
            let mut from: Option<usize> = None;
            for l in 0..n {
                let first = ar.out[l].state == GrantState::BackAway && ar.out[l].held_by == Some(o as u16);
                if l == o || !ar.offers[l].planned || (ar.conflicts.first_meeting(l, o, 0).is_none() && !first) {
                    continue;
                }
                if from.is_none_or(|f| goes_before(&ar.offers, l, f)) {
                    from = Some(l);
                }
            }
            // A retreat sent runs to its end.
            let running = ar.parked_retreat[o].filter(|&(e, _)| s0 > e + RETREAT_S / 20.0);
            let (end, by) = match (from, running) {
                // At its retreat's end and still in the way: a further one.
                (Some(l), Some((e, _))) if s0 <= e + LOOKAHEAD_S => ((s0 - RETREAT_S).max(0.0), l as u16),
                (Some(l), Some((e, _))) => (e, l as u16),
                (None, Some((e, h))) => (e, h),
                (Some(l), None) if offer.still || ar.parked_retreat[o].is_some() => {
                    ((s0 - RETREAT_S).max(0.0), l as u16)
                }
                _ => {
                    ar.parked_retreat[o] = None;
                    continue;
                }
            };
            if s0 <= end + RETREAT_S / 20.0 {
                // At its plan's start: no way back.
                ar.parked_retreat[o] = None;
                continue;
            }
            // A retreat to send: where its way back runs into a robot on
            // plan where that one stands or must go, the robot it backs
            // away from backs away first, if it can (it stands in that
            // way; the other way round, the stop check halted both).
            if running.map(|r| r.0) != Some(end) && !self.way_back_free_along(o, true, (s0, end), now_s) {
                self.arbitration.parked_retreat[o] = None;
                let l = usize::from(by);
                if self.arbitration.offers[l].still && self.way_back_free(l, now_s) {
                    self.arbitration.grants[l] =
                        Grant { state: GrantState::BackAway, last_sample: None, held_by: Some(o as u16) };
                }
                continue;
            }
            let (a, ar) = (&self.arms[o], &mut self.arbitration);
            ar.parked_retreat[o] = Some((end, by));
            let Some(plan) = a.state.follow.parked.plan() else { continue };
            let point = plan.segment(end) as u32;
            let scaling = ((s0 - end) / LOOKAHEAD_S).clamp(0.0, 1.0);
            ar.grants[o] = Grant { state: GrantState::BackAway, last_sample: None, held_by: Some(by) };
            ar.parked_grant[o] = Some(ArmGrant {
                state: GrantState::BackAway,
                until_s: end,
                point,
                held_by: Some(by),
                scaling,
                at_s: s0,
            });
        }
        self.keep_backing_first();
    }

    /// A robot sent back first from one parked in its way (the module's
    /// rule) goes on to its retreat's end, whatever the arbiter says
    /// meanwhile (moving back, its increment no longer meets the parked
    /// one, and it would be let on again at once).
    fn keep_backing_first(&mut self) {
        let ar = &mut self.arbitration;
        for l in 0..ar.out.len() {
            let (last, g) = (ar.out[l], ar.grants[l]);
            let Some(o) = last.held_by.map(usize::from) else { continue };
            let parked = self.arms.get(o).is_some_and(|a| a.state.follow.state == PlanState::Finished);
            let running = ar.retreat_end[l].is_some_and(|e| ar.inc[l].times[0] > e + RETREAT_S / 20.0);
            if last.state == GrantState::BackAway
                && parked
                && ar.parked_grant[o].is_none()
                && running
                && ar.offers[l].planned
                && g.state != GrantState::BackAway
            {
                ar.grants[l] = Grant { state: GrantState::BackAway, last_sample: None, held_by: Some(o as u16) };
            }
        }
    }
}
