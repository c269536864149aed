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
//! Its retreat is a [`GrantState::BackAway`] like any other (the node
//! sends its controller the way back along the finished plan); the stop
//! check guards it as it guards any robot off plan.

use super::*;
use crate::arbiter::GrantState;

impl Guard {
    /// Sets, per robot done with its plan, the back-away its grant says
    /// this cycle, if any (the module's rule; after the grants are decided).
    pub(super) fn back_parked(&mut self) {
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
            // The highest robot on plan whose increment meets where it stands.
            let mut from: Option<usize> = None;
            for l in 0..n {
                if l == o || !ar.offers[l].planned || ar.conflicts.first_meeting(l, o, 0).is_none() {
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
            ar.parked_retreat[o] = Some((end, by));
            let Some(plan) = f.parked.plan() else { continue };
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
    }
}
