//! A plan that ends in another robot's way: that robot goes first.
//!
//! A robot `h` that goes before `l` and parks at its plan's end where `l`'s
//! plan still has to pass holds `l` there for good: `l` is held short of
//! it, and `h`, done, no longer takes grants and has no way back to be
//! sent along. So, while both are on their plans, `l` is **lifted**
//! ([`super::way_back`]) over `h` once `h`'s plan is seen to end within
//! the release margin of what remains of `l`'s, unless `l`'s plan ends in
//! `h`'s remaining way as well (then neither order helps, and priority
//! decides). `h` then holds where its increment meets `l`'s, and goes on
//! once `l` is past.
//!
//! For the same reason a robot at its plan's start or setting off does not
//! give way ([`crate::arbiter`]) to a lower one whose plan ends in its
//! remaining way (unless its own ends in that one's): let through, that
//! one parked there, and the robot above waited for it to finish and back
//! off its plan a retreat at a time.
//!
//! Per pair of plans, the last time of `l`'s plan at which it comes that
//! near `h`'s end is found once (each robot's plan end posed once, `l`'s
//! plan sampled at most [`END_SAMPLES`] times, spheres outside the box
//! of `h`'s end skipped), and kept until either plan is replaced. Every
//! cycle then compares plan times. It is a question of order, not of
//! safety: the checks stop whatever the order lets come too near.

use super::*;
use crate::forecast::track::JointPlan;

/// Most configurations of a plan looked at against another's end.
pub const END_SAMPLES: usize = 1024;

/// Largest joint travel between two of those configurations, rad or m.
const END_STEP: f64 = 0.02;

/// The pairs' findings, kept per pair of plans.
#[derive(Clone, Debug)]
pub(super) struct Ends {
    /// Per robot, a count of the plans it was given.
    seq: Vec<u64>,
    /// Per robot, its plan's end posed, and the plan count it was posed for.
    end: Vec<(PosedSpheres, u64)>,
    /// Per pair `h * n + l`: the plan counts it was found for, and the
    /// last time of `l`'s plan within the release margin of `h`'s end
    /// (−∞: none).
    until: Vec<((u64, u64), f64)>,
}

impl Ends {
    pub(super) fn new(posers: &[&SpherePoser]) -> Ends {
        let n = posers.len();
        Ends {
            seq: vec![1; n],
            end: posers.iter().map(|p| (p.posed(), 0)).collect(),
            until: vec![((0, 0), f64::NEG_INFINITY); n * n],
        }
    }

    /// Robot `r` was given a plan (or lost it).
    pub(super) fn replanned(&mut self, r: usize) {
        self.seq[r] += 1;
    }
}

impl Guard {
    /// Lifts each robot on plan whose remaining plan passes where one
    /// going before it ends its plan (the module's rule); true if any was
    /// lifted.
    pub(super) fn lift_past_ends(&mut self, now_s: f64) -> bool {
        let n = self.arms.len();
        let mut any = false;
        for l in 0..n {
            let ar = &self.arbitration;
            if !ar.offers[l].planned || ar.lifted_at[l].is_some() {
                continue;
            }
            for h in 0..n {
                let ar = &self.arbitration;
                if h == l || !ar.offers[h].planned {
                    continue;
                }
                let (ph, pl) = (ar.effective_priority(h), ar.effective_priority(l));
                if !(ph > pl || (ph == pl && h < l)) {
                    continue;
                }
                if self.parks_in_way(h, l) {
                    let ar = &mut self.arbitration;
                    ar.lifted_at[l] = Some(ar.raised_at(h).map_or(now_s, |t| t - 1e-3));
                    any = true;
                    break;
                }
            }
        }
        any
    }

    /// Tells the arbiter, per ordered pair of robots on plans, whether the
    /// second one's plan ends where the first one's still has to pass and
    /// not the other way round: the first does not give way to it (let
    /// through, it parks in the way). Each pair's finding is made once
    /// per pair of plans and kept; a cycle compares plan times.
    pub(super) fn mark_ends_in_way(&mut self) {
        let n = self.arms.len();
        for r in 0..n {
            for o in 0..n {
                let ar = &self.arbitration;
                let both = r != o && ar.offers[r].planned && ar.offers[o].planned;
                let ends = both && self.parks_in_way(o, r);
                self.arbitration.arbiter.set_ends_in_way(r, o, ends);
            }
        }
    }

    /// Whether `h`'s plan ends where what remains of `l`'s still passes,
    /// and `l`'s does not end in what remains of `h`'s (both on plans):
    /// gone first, `h` would park in `l`'s way.
    fn parks_in_way(&mut self, h: usize, l: usize) -> bool {
        let (Some(l_passes), Some(h_passes)) = (self.end_until(h, l), self.end_until(l, h)) else { return false };
        let (sl, sh) = (self.arms[l].scratch.forecast.plan_s[0], self.arms[h].scratch.forecast.plan_s[0]);
        sl < l_passes && sh >= h_passes
    }

    /// The last time of `l`'s plan within the release margin of where
    /// `h`'s plan ends (−∞: nowhere); `None` without both plans or where
    /// a configuration cannot be posed.
    fn end_until(&mut self, h: usize, l: usize) -> Option<f64> {
        let n = self.arms.len();
        let ends = &mut self.arbitration.ends;
        let key = (ends.seq[h], ends.seq[l]);
        if ends.until[h * n + l].0 == key {
            return Some(ends.until[h * n + l].1);
        }
        let reach = self.margins.release_m as f32;
        let (hp, (end, posed_for)) = (self.arms[h].state.follow.tracker.plan()?, &mut ends.end[h]);
        if *posed_for != key.0 {
            self.arms[h].model.poser.pose(hp.point(hp.len().checked_sub(1)?), end).ok()?;
            *posed_for = key.0;
        }
        let a = &mut self.arms[l];
        let plan = a.state.follow.tracker.plan()?;
        let until =
            last_near(end, plan, &a.model.poser, (&mut a.scratch.posed.ahead_q, &mut a.scratch.posed.ahead), reach)?;
        ends.until[h * n + l] = (key, until);
        Some(until)
    }
}

/// The last time of `plan` at which its robot, posed by `poser`, comes
/// within `reach_m` of the spheres `end` (−∞: never), looking from the
/// plan's end back; `None` where a configuration cannot be posed.
fn last_near(
    end: &PosedSpheres,
    plan: &JointPlan,
    poser: &SpherePoser,
    (q, out): (&mut [f64], &mut PosedSpheres),
    reach_m: f32,
) -> Option<f64> {
    if plan.is_empty() || end.is_empty() {
        return Some(f64::NEG_INFINITY);
    }
    let mut bounds =
        [f32::INFINITY, f32::INFINITY, f32::INFINITY, f32::NEG_INFINITY, f32::NEG_INFINITY, f32::NEG_INFINITY];
    for i in 0..end.len() {
        let (c, r) = ([end.x[i], end.y[i], end.z[i]], end.r[i] + reach_m);
        for d in 0..3 {
            bounds[d] = bounds[d].min(c[d] - r);
            bounds[d + 3] = bounds[d + 3].max(c[d] + r);
        }
    }
    // Samples evenly in time, as many as the largest joint travel needs.
    let travel = (1..plan.len())
        .map(|k| plan.point(k).iter().zip(plan.point(k - 1)).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max))
        .sum::<f64>();
    let m = ((travel / END_STEP).ceil() as usize).clamp(1, END_SAMPLES - 1);
    let duration = plan.duration_s();
    for k in (0..=m).rev() {
        let t = duration * k as f64 / m as f64;
        plan.at_time(t, q);
        poser.pose(q, out).ok()?;
        for i in 0..out.len() {
            let (c, r) = ([out.x[i], out.y[i], out.z[i]], out.r[i]);
            if (0..3).any(|d| c[d] + r < bounds[d] || c[d] - r > bounds[d + 3]) {
                continue;
            }
            let near = (0..end.len()).any(|j| {
                let (dx, dy, dz) = (c[0] - end.x[j], c[1] - end.y[j], c[2] - end.z[j]);
                (dx * dx + dy * dy + dz * dz).sqrt() - r - end.r[j] <= reach_m
            });
            if near {
                return Some(t);
            }
        }
    }
    Some(f64::NEG_INFINITY)
}
