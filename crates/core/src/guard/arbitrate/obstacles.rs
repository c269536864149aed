//! Robots off plan as obstacles to the robots on plans.
//!
//! A robot without a plan (parked at its last plan's end, between plans,
//! moved by hand) takes no grant, but the robots on plans must not run into
//! it and be stopped there: they hold short of it on their paths, as they
//! hold for a robot above them. So a trusted robot off plan offers one
//! place: every sample of its increment where it stands, each joint's half
//! step as far as its stopping path takes it. The conflict table then
//! holds every pair with a robot on plan. The departure bounds (either
//! robot leaving what it was forecast to do between two cycles) are left
//! to the stop check, which counts them within half the margin each: a
//! grant that held for them as well would hold a robot short of a plan
//! the stop check lets it finish.
//!
//! An increment's samples are coarse (eight over its stopping path and
//! look-ahead, each inflated by half the travel to its neighbours): against
//! a robot standing still that would hold a robot far short of where it
//! can pass, and it would wait there for ever. So each of its samples that
//! meets such an obstacle is looked at again on the stretch of path it
//! stands for (half way to each neighbour), sampled eight times finer, and
//! a finer sample that meets it on its own stretch again ([`REFINE_DEPTH`]): the
//! conflict stays only where that stretch comes within the margin. The
//! stretches cover the whole increment, so the first conflict left is still
//! before any point of the path that comes within the margin. A robot going
//! back along its plan is not refined (its samples are also grown by its
//! stopping path).

use super::conflicts::View;
use super::*;
use crate::arbiter::MAX_SAMPLES;

impl Guard {
    /// Every robot off plan whose joint state is trusted, as one place
    /// where it stands, when some robot is on plan (after the offers).
    pub(super) fn offer_obstacles(&mut self) {
        if !self.arbitration.offers.iter().any(|o| o.planned) {
            return;
        }
        for ri in 0..self.arms.len() {
            let (o, sc) = (self.arbitration.offers[ri], &self.arms[ri].scratch);
            if !o.planned && o.samples > 0 && sc.forecast.problem.is_none() {
                self.offer_obstacle(ri);
            }
        }
    }

    /// Robot `ri` (off plan, its joint state trusted, its stopping path
    /// forecast this cycle) as one place where it stands.
    fn offer_obstacle(&mut self, ri: usize) {
        let a = &self.arms[ri];
        let (sc, dof) = (&a.scratch, a.model.decel.len());
        let inc = &mut self.arbitration.inc[ri];
        let path = &sc.forecast.path_q[..sc.forecast.n_cfg * dof];
        for k in 0..MAX_SAMPLES {
            inc.q[k * dof..(k + 1) * dof].copy_from_slice(&path[..dof]);
        }
        inc.times = [0.0; MAX_SAMPLES];
        inc.half_step.fill(0.0);
        grow_by_retreat(&mut inc.half_step, path);
        inc.pose(&a.model);
    }

    /// Drops the conflicts between a robot on plan and a robot off plan
    /// whose sample's stretch of path does not come within the margin, up
    /// to the first that does (the module's text). A robot on plan that
    /// stands still, at its plan's start or setting off (the first
    /// [`SETTING_OFF_S`] of its plan) is such a place too, as far as it is
    /// committed (where it cannot help being; refined standing but not
    /// moving off, its grant and the one above it flipped each cycle it
    /// moved):
    /// only the other robots' samples against its committed ones are
    /// refined (its later samples are where it would go, not where it is).
    pub(super) fn refine_obstacle_conflicts(&mut self) {
        let n = self.arms.len();
        for p in 0..n {
            if !self.arbitration.offers[p].planned {
                continue;
            }
            for o in 0..n {
                let other = self.arbitration.offers[o];
                if o == p || !self.arbitration.inc[o].posed {
                    continue;
                }
                if other.planned {
                    // Setting off above `p` with `give_way_at_start`: left
                    // to the give-way rule, which reads these conflicts
                    // (refined, it did not give way and sent `p` back:
                    // 60 two-arm crossing episodes, 7 → 162 retreats).
                    let below = goes_before(&self.arbitration.offers, p, o);
                    let off = other.setting_off && (below || !self.arbitration.policy.give_way_at_start);
                    if other.still || other.at_start || off {
                        self.refine_against_standing(p, o, other.committed);
                    }
                    continue;
                }
                // Only the first conflict cuts the grant: the later ones
                // are left as found.
                for i in 0..MAX_SAMPLES {
                    if self.arbitration.conflicts.row(p, i, o) == 0 {
                        continue;
                    }
                    if self.stretch_meets(p, i, o) {
                        break;
                    }
                    for j in 0..MAX_SAMPLES {
                        self.arbitration.conflicts.unset(p, i, o, j);
                    }
                }
            }
        }
    }

    /// Drops the conflicts of robot `p`'s samples with the samples of
    /// robot `o` (on plan, standing or setting off) up to its committed
    /// one, for each sample of `p` whose stretch of path does not come
    /// within the margin of them, up to the first that does.
    fn refine_against_standing(&mut self, p: usize, o: usize, committed: usize) {
        let mask = ((1u16 << (committed + 1)) - 1) as u8;
        for i in 0..MAX_SAMPLES {
            let row = self.arbitration.conflicts.row(p, i, o);
            if row & mask == 0 {
                continue;
            }
            if self.stretch_meets_upto(p, i, o, committed) {
                break;
            }
            for j in 0..=committed {
                self.arbitration.conflicts.unset(p, i, o, j);
            }
        }
    }

    /// Whether the stretch of robot `p`'s plan that sample `i` of its
    /// increment stands for, sampled finer, comes within the clearance
    /// margin of robot `o` where it stands (true where it is not refined).
    pub(super) fn stretch_meets(&mut self, p: usize, i: usize, o: usize) -> bool {
        self.stretch_meets_upto(p, i, o, 0)
    }

    /// [`Guard::stretch_meets`] against robot `o`'s samples `0..=upto`.
    fn stretch_meets_upto(&mut self, p: usize, i: usize, o: usize, upto: usize) -> bool {
        let a = &self.arms[p];
        let ar = &self.arbitration;
        let t = ar.inc[p].times;
        let backing = ar.retreat_end[p].is_some_and(|e| e < t[0]);
        if a.scratch.forecast.reversing || backing || a.state.follow.tracker.plan().is_none() {
            return true;
        }
        let last = MAX_SAMPLES - 1;
        let lo = if i == 0 { t[0] } else { (t[i - 1] + t[i]) / 2.0 };
        let hi = if i == last { t[last] } else { (t[i] + t[i + 1]) / 2.0 };
        self.span_meets(p, (lo, hi), (o, upto), REFINE_DEPTH)
    }

    /// Whether robot `p`'s plan from plan time `lo` to `hi`, in
    /// [`MAX_SAMPLES`] samples each inflated by half the travel to its
    /// neighbours, comes within the clearance
    /// margin of robot `o` where it stands; a sample that does is looked at
    /// again on its own stretch, `depth` times more.
    fn span_meets(&mut self, p: usize, (lo, hi): (f64, f64), (o, upto): (usize, usize), depth: u32) -> bool {
        let a = &self.arms[p];
        let Some(plan) = a.state.follow.tracker.plan() else { return true };
        let fine = &mut self.arbitration.back[p];
        fine.sample(plan, lo, hi, plan.segment(lo), &a.scratch.forecast.offset);
        if !fine.pose(&a.model) {
            return true;
        }
        let margin = self.margins.clearance_m as f32;
        let (fine, other) = (&self.arbitration.back[p], &self.arbitration.inc[o]);
        let t = fine.times;
        let mut meets = [false; MAX_SAMPLES];
        for (k, m) in meets.iter_mut().enumerate() {
            *m = (0..=upto).any(|j| {
                !conflicts::apart(&fine.boxes[k], &other.boxes[j], margin)
                    && self.views_meet(p, &View::of(fine, k), o, &View::of(other, j), margin)
            });
        }
        let last = MAX_SAMPLES - 1;
        (0..MAX_SAMPLES).filter(|&k| meets[k]).any(|k| {
            depth == 0 || {
                let lo = if k == 0 { t[0] } else { (t[k - 1] + t[k]) / 2.0 };
                let hi = if k == last { t[last] } else { (t[k] + t[k + 1]) / 2.0 };
                self.span_meets(p, (lo, hi), (o, upto), depth - 1)
            }
        })
    }
}

/// How many times a stretch that meets an obstacle is sampled eight times
/// finer again (`8^(1 + REFINE_DEPTH)` times an increment's sampling at
/// most).
const REFINE_DEPTH: u32 = 2;

/// A robot going back along its plan (or off plan, [`Guard::offer_obstacle`]):
/// where it is stands for its whole
/// stopping path that way (`path`, its configurations one after another),
/// so the robots above keep out of that, not only of where it is now: each
/// joint's half step grows by how far that path takes it.
pub(super) fn grow_by_retreat(half_step: &mut [f64], path: &[f64]) {
    let dof = half_step.len();
    for (j, h) in half_step.iter_mut().enumerate() {
        let q0 = path[j];
        *h += path.iter().skip(j).step_by(dof).map(|q| (q - q0).abs()).fold(0.0, f64::max);
    }
}
