//! Robots in the way that go first instead of backing away.
//!
//! The arbiter sends a robot `r` standing in the increment of a higher one
//! `h` back along its plan. These cases do better otherwise:
//! - **Its way on is clear** (only with
//!   [`ArbitrationPolicy::go_on_when_clear`]; by default `r` backs away,
//!   as the method has it): `r`'s
//!   increment meets only what `h` claims, not where `h` stands or is
//!   committed to go. `h` cannot take up that claim while `r` stands in
//!   it, so sending `r` back makes both wait for its retreat (in the
//!   crossing runs often all the way back to its plan's start), where
//!   letting it through costs `h` only the pass.
//! - **Its way back is blocked.** Another robot stands in its way back
//!   (often `h` itself, come to where `r`'s plan passed a moment before):
//!   the stop check halts `r` there, and `h` waits for it for ever. So
//!   `r`'s way back (as a retreat sent now would go: [`RETREAT_S`] of plan
//!   time back or the rest of the retreat it is on) is sampled, posed and
//!   inflated as an increment is, and compared with where every other
//!   robot on plan is or is committed to go. Where it is blocked and `h`'s
//!   own way back is free, `h` backs away instead.
//! - **It stands at its plan's start** (it cannot back away; the arbiter
//!   holds it there and lets `h` proceed, the stop check guarding the
//!   pass) and `h`'s grant runs through where it stands, confirmed on the
//!   stretch of path each granted sample stands for, sampled finer
//!   ([`Guard::stretch_meets`]): `h` cannot pass, and the stop check
//!   would halt it short of `r` while `r` waits for it, for ever. So `r`
//!   goes on where its way on is clear of where `h` is or is committed to
//!   go, or `h` backs away where its own way back is free.
//! - **Its retreat would end in `h`'s way all the same**: the end of its
//!   way back (bare) still meets a sample of `h`'s increment
//!   ([`Guard::retreat_clears`]). Backing away there has `h` wait for the
//!   retreat, and `r` is sent back again from where it ends (or, at its
//!   plan's start, lifted then). It counts as one at its start.
//!
//! In all of them, `r` is **lifted**: it goes before every robot neither boosted
//! nor lifted (just above `h` where `h` is raised itself) until its plan
//! is done or replaced, and the cycle's grants are decided again: `r` goes
//! on where its increment is clear, and `h` holds, or backs away where it
//! stands in `r`'s way. Only a robot standing and told to back away is
//! looked at, so a cycle without one does no more work than before; one
//! that is lifted is looked at no more.
//!
//! Where `h` itself stands at its plan's start (it cannot back away), `r`
//! is lifted over it only to go on: where `r`'s way on is clear of where
//! `h` stands and `r`'s way back is blocked. `h` then holds at its start
//! until `r` has passed. Sent back instead, `r` was halted by the stop
//! check as it set off, and both stood stopped for good (the demo, seed
//! 1: 16 s). A robot stopped by the stop check for `h` itself counts its
//! way back as blocked whatever its samples say: the check that stopped
//! it will not let it set off back towards `h`.

use super::RETREAT_S;

/// Two robots each held by the other this long are untied
/// ([`Guard::lift_mutual_holds`]), s.
pub const MUTUAL_HOLD_S: f64 = 1.0;
use super::conflicts::{View, apart};
use super::separating::gap_cap;
use super::*;
use crate::arbiter::{GrantState, MAX_SAMPLES};

impl Guard {
    /// After the arbiter's first decision: robots in the way lifted and
    /// the grants decided again ([`Guard::lift_boxed_in`]), then robots
    /// above held short of one at its start that stays there
    /// ([`Guard::hold_short_of_at_start`]).
    pub(super) fn untie_knots(&mut self, now_s: f64) {
        let lifted = self.lift_boxed_in(now_s);
        if self.lift_past_ends(now_s) || lifted {
            let ar = &mut self.arbitration;
            for r in 0..ar.offers.len() {
                ar.offers[r].priority = ar.effective_priority(r);
            }
            ar.arbiter.decide_again(&ar.offers, &ar.conflicts, &mut ar.grants);
        }
        self.hold_short_of_at_start();
        if self.lift_mutual_holds(now_s) {
            let ar = &mut self.arbitration;
            for r in 0..ar.offers.len() {
                ar.offers[r].priority = ar.effective_priority(r);
            }
            ar.arbiter.decide_again(&ar.offers, &ar.conflicts, &mut ar.grants);
            self.hold_short_of_at_start();
        }
    }

    /// Two robots on plans, both standing, each held by the other (one at
    /// its plan's start, say, that the other was lifted over, and that one
    /// now held short of it), for [`MUTUAL_HOLD_S`]: neither would move
    /// again. The lower of the two is lifted over the higher where its way
    /// on is clear of where the higher one stands or is committed to go
    /// (it passes, the other holds), or where the higher one can back away
    /// (not at its plan's start, its way back free, or not shown free by
    /// its samples but the hold has lasted twice as long): it then backs
    /// away and the lower one passes. True if any was lifted (the grants
    /// need deciding again).
    fn lift_mutual_holds(&mut self, now_s: f64) -> bool {
        let mut any = false;
        for x in 0..self.arms.len() {
            let ar = &self.arbitration;
            let gx = ar.grants[x];
            let y = gx.held_by.map(usize::from).filter(|&y| {
                let gy = ar.grants[y];
                gx.state == GrantState::Hold && gy.state == GrantState::Hold && gy.held_by == Some(x as u16)
            });
            let Some(y) = y else {
                self.arbitration.mutual_since[x] = None;
                continue;
            };
            let (ox, oy) = (ar.offers[x], ar.offers[y]);
            let (px, py) = (ar.effective_priority(x), ar.effective_priority(y));
            let lower = px < py || (px == py && x > y);
            if !(ox.planned && oy.planned && ox.still && oy.still && lower) {
                self.arbitration.mutual_since[x] = None;
                continue;
            }
            // Only a hold that lasts: one that ends by itself (a third robot
            // moves on) is left to end, and two lifted in turn at once took
            // turns for ever.
            let since = *self.arbitration.mutual_since[x].get_or_insert(now_s);
            if now_s - since < MUTUAL_HOLD_S {
                continue;
            }
            let clear_on = self.arbitration.conflicts.first_meeting(x, y, oy.committed).is_none();
            // A way back the samples do not show free is still tried once
            // the hold has lasted twice as long: the samples are coarse
            // (inflated by the travel between them), the stop check guards
            // the retreat, and otherwise neither moves again.
            let try_back = now_s - since >= 2.0 * MUTUAL_HOLD_S;
            if !clear_on && (oy.at_start || !(try_back || self.way_back_free(y, now_s))) {
                continue;
            }
            let ar = &mut self.arbitration;
            ar.lifted_at[x] = Some(ar.raised_at(y).map_or(now_s, |t| t - 1e-3));
            ar.mutual_since[x] = None;
            any = true;
        }
        any
    }

    /// Lifts each robot told to back away while standing whose way on is
    /// clear, or whose way back is blocked (or would end in the way all
    /// the same) where the robot it backs away from can back away itself
    /// (or stands at its plan's start, and the way on is clear of where it
    /// stands), and each held at its plan's start where the grant of the
    /// robot above runs through it and its way on is clear or that robot
    /// can back away (the module's text); true if any was lifted (the
    /// grants need deciding again).
    pub(super) fn lift_boxed_in(&mut self, now_s: f64) -> bool {
        let mut any = false;
        for r in 0..self.arms.len() {
            let ar = &self.arbitration;
            let g = ar.grants[r];
            let Some(h) = g.held_by.map(usize::from) else { continue };
            let above = ar.offers[h];
            if !ar.offers[r].still || ar.lifted_at[r].is_some() || !above.planned {
                continue;
            }
            let at_start = self.held_at_start(r);
            if above.at_start && at_start {
                continue;
            }
            if g.state != GrantState::BackAway && !(at_start && self.block_at_start(r, h).is_some()) {
                continue;
            }
            let clear_on = self.arbitration.conflicts.first_meeting(r, h, above.committed).is_none();
            // A retreat that would end in `h`'s increment all the same
            // helps no more than none: as one at its start, it goes on
            // where it can, or `h` backs away.
            let stuck = at_start || (g.state == GrantState::BackAway && !self.retreat_clears(r, h, now_s));
            // One at its start cannot back away: it goes on where it can.
            let go_on = (stuck || self.arbitration.policy.go_on_when_clear) && clear_on;
            // Stopped by the stop check for `h` itself, its way back is not
            // free whatever the samples say: the stop check will not let it go.
            let free = |g: &mut Self| !g.stopped_for(r, h) && g.way_back_free(r, now_s);
            if above.at_start {
                // `h` cannot back away: `r` goes on only where its way on is
                // clear of where `h` stands and its way back is blocked.
                if !clear_on || (!stuck && free(self)) {
                    continue;
                }
            } else if !go_on && ((!stuck && free(self)) || !self.way_back_free(h, now_s)) {
                continue;
            }
            let ar = &mut self.arbitration;
            // Just above `h` where it is raised itself (earlier raises go first).
            ar.lifted_at[r] = Some(ar.raised_at(h).map_or(now_s, |t| t - 1e-3));
            any = true;
        }
        any
    }

    /// Whether robot `r` stands stopped by the stop check for nearness to
    /// robot `h`: backing away from `h` has already brought its stopping
    /// path within the margin of `h`, so the way back the samples count as
    /// free (drawing away from `h`) is not one it will be let go on.
    fn stopped_for(&self, r: usize, h: usize) -> bool {
        let s = &self.arms[r].state;
        s.phase.stopped()
            && matches!(s.cause, StopCause::Proximity(2, (_, Body::Link { robot, .. })) if usize::from(robot) == h)
    }

    /// Whether robot `r` stands at its plan's start, on plan, held there.
    fn held_at_start(&self, r: usize) -> bool {
        let (g, me) = (self.arbitration.grants[r], self.arbitration.offers[r]);
        g.state == GrantState::Hold && me.planned && me.at_start && me.still
    }

    /// Where robot `h`'s grant runs through where robot `r` stands at its
    /// plan's start: the first granted sample of `h` that meets `r`'s
    /// first, and still does on the stretch of path it stands for, sampled
    /// finer ([`Guard::stretch_meets`]). The arbiter leaves that pass to
    /// the stop check; where it is confirmed, the stop check would halt `h`
    /// short of `r` for as long as `r` waits for `h`.
    fn block_at_start(&mut self, r: usize, h: usize) -> Option<usize> {
        let last = self.arbitration.grants[h].last_sample?;
        (0..=last.min(MAX_SAMPLES - 1))
            .find(|&i| self.arbitration.conflicts.get(h, i, r, 0) && self.stretch_meets(h, i, r))
    }

    /// After the grants are final: a robot at its plan's start held there
    /// (not let go on: its way on meets where the robot above is or must
    /// go, and that one's way back is blocked; or it was lifted once
    /// already) holds that robot short of where it stands, where its grant
    /// runs through it: a knot that a plan of the cell must undo, held on
    /// the paths rather than by the stop check halting the robot above
    /// again and again as it creeps on.
    pub(super) fn hold_short_of_at_start(&mut self) {
        for r in 0..self.arms.len() {
            let ar = &self.arbitration;
            let Some(h) = ar.grants[r].held_by.map(usize::from) else { continue };
            let above = ar.offers[h];
            if !self.held_at_start(r) || !above.planned || above.at_start {
                continue;
            }
            if ar.grants[h].state != GrantState::Proceed && ar.grants[h].state != GrantState::Hold {
                continue;
            }
            let Some(i) = self.block_at_start(r, h) else { continue };
            let gh = &mut self.arbitration.grants[h];
            gh.state = GrantState::Hold;
            gh.last_sample = i.checked_sub(1);
            gh.held_by = Some(r as u16);
        }
    }

    /// Whether robot `ri` (on plan, its increment built this cycle) can
    /// back away along its plan now: it does not stand at its plan's
    /// start, and its retreat (as sent now: [`RETREAT_S`] back or the rest
    /// of the one it is on) comes within the clearance margin of no other
    /// robot on plan where that one is or is committed to go, except by
    /// drawing away from it (each such sample farther from it than the one
    /// before: [`super::separating`]).
    pub(super) fn way_back_free(&mut self, ri: usize, now_s: f64) -> bool {
        let Some(way) = self.retreat_span(ri) else { return false };
        self.way_back_free_along(ri, false, way, now_s)
    }

    /// The plan times robot `ri`'s retreat would run between if sent now:
    /// [`RETREAT_S`] back, or the rest of the one it is on (none off plan).
    fn retreat_span(&self, ri: usize) -> Option<(f64, f64)> {
        let ar = &self.arbitration;
        if !ar.offers[ri].planned {
            return None;
        }
        let s0 = ar.inc[ri].times[0];
        let end = match ar.retreat_end[ri] {
            Some(e) if e < s0 => e,
            _ => (s0 - RETREAT_S).max(0.0),
        };
        Some((s0, end))
    }

    /// Whether robot `ri`'s retreat, sent now, would end clear of every
    /// sample robot `h` claims: where its end still comes within the
    /// margin of `h`'s increment (`h` goes there next), backing away only
    /// has both wait for it, and it is sent back again from where it
    /// ends. True where it has no way back to judge (the arbiter's rule
    /// stands).
    fn retreat_clears(&mut self, ri: usize, h: usize, now_s: f64) -> bool {
        let Some(way) = self.retreat_span(ri) else { return true };
        if !self.sample_way_back(ri, false, way, now_s) {
            return true;
        }
        let margin = self.margins.clearance_m as f32;
        let ar = &self.arbitration;
        let (back, other) = (&ar.back[ri], &ar.inc[h]);
        let end = MAX_SAMPLES - 1;
        !(0..ar.offers[h].samples.min(MAX_SAMPLES)).any(|j| {
            !apart(&back.boxes[end], &other.boxes[j], margin)
                && self.views_meet(ri, &View::bare(back, end), h, &View::of(other, j), margin)
        })
    }

    /// Samples, inflates and poses robot `ri`'s way back along its plan
    /// (its last, finished one where `parked`) from plan time `s0` to
    /// `end` into its `back` samples: false where there is none.
    fn sample_way_back(&mut self, ri: usize, parked: bool, (s0, end): (f64, f64), now_s: f64) -> bool {
        let a = &self.arms[ri];
        let ar = &mut self.arbitration;
        let follow = &a.state.follow;
        let Some(plan) = (if parked { follow.parked.plan() } else { follow.tracker.plan() }) else {
            return false;
        };
        if s0 <= RETREAT_S / 20.0 || end >= s0 - 1e-6 {
            return false;
        }
        let back = &mut ar.back[ri];
        // Done with its plan, it stands on it within tolerance: no offset.
        let offset: &[f64] = if parked { &[] } else { &a.scratch.forecast.offset };
        back.sample(plan, s0, end, plan.segment(s0), offset);
        let seen = a.state.est_period + a.state.est.last_stamp().map_or(0.0, |t| (now_s - t).max(0.0));
        for (h, &acc) in back.half_step.iter_mut().zip(&a.model.accel) {
            *h += forecast::along::departure(acc, seen, a.model.reaction_s);
        }
        back.pose(&a.model)
    }

    /// Whether robot `ri`'s way back along its plan (its last, finished
    /// one where `parked`) from plan time `s0` to `end` is free, as
    /// [`Guard::way_back_free`] has it.
    pub(super) fn way_back_free_along(&mut self, ri: usize, parked: bool, way: (f64, f64), now_s: f64) -> bool {
        if !self.sample_way_back(ri, parked, way, now_s) {
            return false;
        }
        let margin = self.margins.clearance_m as f32;
        let ar = &self.arbitration;
        let back = &ar.back[ri];
        let meet = |i: usize, o: usize, j: usize| {
            let other = &ar.inc[o];
            !apart(&back.boxes[i], &other.boxes[j], margin)
                && self.views_meet(ri, &View::of(back, i), o, &View::of(other, j), margin)
        };
        // The spheres' own gap (not inflated) between its sample `i` and
        // sample `j` of robot `o`.
        let gap = |i: usize, o: usize, j: usize| {
            self.views_gap(ri, &View::bare(back, i), o, &View::bare(&ar.inc[o], j), gap_cap(margin, back, &ar.inc[o]))
        };
        // Sample `j` of `o` blocks its way back where a sample of the way
        // meets it and comes nearer than the sample before: moving away
        // from a robot it already stands within the margin of is free.
        // Sample 0 is where it stands: its way back starts after it.
        let blocks = |o: usize, j: usize| {
            let mut before = None;
            for i in 1..MAX_SAMPLES {
                if !meet(i, o, j) {
                    before = None;
                    continue;
                }
                let (b, g) = (before.unwrap_or_else(|| gap(i - 1, o, j)), gap(i, o, j));
                if g < b {
                    return true;
                }
                before = Some(g);
            }
            false
        };
        // Where others are or are committed to go.
        !ar.offers.iter().enumerate().any(|(o, offer)| {
            o != ri
                && offer.planned
                && !apart(&back.reach, &ar.inc[o].reach, margin)
                && (0..=offer.committed.min(MAX_SAMPLES - 1)).any(|j| blocks(o, j))
        })
    }
}
