//! Increments of the robots' plans, their conflicts, and the grants the
//! arbiter ([`crate::arbiter`]) decides from them (work in progress: the
//! grants are not yet published nor acted on).
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
//! sample standing for its whole stopping path, all of it committed.

use super::*;
use crate::arbiter::{Arbiter, Conflicts, Grant, GrantState, MAX_SAMPLES, Offer};

/// A robot whose every joint is estimated slower than this stands still
/// (rad/s or m/s): if it stands in the way of a higher one, it backs away.
pub const REST_SPEED: f64 = 1e-3;

/// How much longer than its stopping path at the plan's pace an increment
/// reaches (in time at that pace), s: a robot is told to hold early enough
/// to slow down, instead of being stopped when the stopping paths meet.
pub const LOOKAHEAD_S: f64 = 0.5;

/// One robot's increment, sized once.
#[derive(Clone, Debug)]
pub(super) struct Increment {
    /// Plan time of each sample, s.
    times: [f64; MAX_SAMPLES],
    /// The samples' configurations (`MAX_SAMPLES × dof`).
    q: Vec<f64>,
    /// Their poses.
    batch: PosedBatch,
    /// Per slot: radius plus its link's inflation.
    inflated_r: Vec<f32>,
    /// Per sample: the box around every inflated sphere.
    boxes: [[f32; 6]; MAX_SAMPLES],
    /// Scratch per joint: a travel, the plan's velocity.
    travel: Vec<f64>,
    half_step: Vec<f64>,
}

/// The arbiter's part of the guard.
#[derive(Clone, Debug)]
pub(super) struct Arbitration {
    pub(super) inc: Vec<Increment>,
    pub(super) offers: Vec<Offer>,
    pub(super) conflicts: Conflicts,
    arbiter: Arbiter,
    pub(super) grants: Vec<Grant>,
    /// Per robot, its priority (the workcell's).
    pub(super) priority: Vec<i64>,
}

impl Arbitration {
    /// Buffers for `cell`'s arms, posed by `posers`.
    pub(super) fn new(cell: &Workcell, posers: &[&SpherePoser]) -> Arbitration {
        let n = cell.manipulators.len();
        let inc = cell
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
                    travel: vec![0.0; dof],
                    half_step: vec![0.0; dof],
                }
            })
            .collect();
        Arbitration {
            inc,
            offers: vec![Offer { priority: 0, samples: 0, committed: 0, planned: false, still: true }; n],
            conflicts: Conflicts::new(n),
            arbiter: Arbiter::new(n),
            grants: vec![Grant::NONE; n],
            priority: cell.manipulators.iter().map(|m| m.priority).collect(),
        }
    }
}

impl Guard {
    /// This cycle's grant per manipulator (work in progress: not yet acted
    /// on by the commands).
    pub fn grants(&self) -> &[Grant] {
        &self.arbitration.grants
    }

    /// This cycle's offer per manipulator.
    pub fn offers(&self) -> &[Offer] {
        &self.arbitration.offers
    }

    /// Plan time of sample `k` of `robot`'s increment, s.
    pub fn increment_time(&self, robot: usize, k: usize) -> f64 {
        self.arbitration.inc[robot].times[k]
    }

    /// Builds every robot's offer and increment (after [`Guard::prepare`]),
    /// finds their conflicts and decides the grants.
    pub(super) fn arbitrate(&mut self, now_s: f64) {
        for ri in 0..self.arms.len() {
            self.offer(ri, now_s);
        }
        self.find_conflicts();
        let ar = &mut self.arbitration;
        ar.arbiter.decide(&ar.offers, &ar.conflicts, &mut ar.grants);
        // A robot backing away goes back along its plan: it is tracked
        // there, not dropped as off plan.
        for (a, g) in self.arms.iter_mut().zip(&ar.grants) {
            let back = if g.state == GrantState::BackAway { PLAN_WINDOW_S } else { 0.0 };
            a.state.follow.tracker.set_back_window(back);
        }
    }

    /// Robot `ri`'s offer, and its increment when it is on plan.
    fn offer(&mut self, ri: usize, now_s: f64) {
        let a = &self.arms[ri];
        let ar = &mut self.arbitration;
        let priority = ar.priority[ri];
        let sc = &a.scratch;
        let still = sc.at_rest;
        let plan = a.state.follow.tracker.plan();
        let on = matches!(a.state.follow.state, PlanState::On { .. });
        let (Some(plan), true, None, true) = (plan, on, sc.problem, sc.n_cfg > 0) else {
            let samples = usize::from(sc.n_cfg > 0);
            ar.offers[ri] = Offer { priority, samples, committed: 0, planned: false, still };
            return;
        };
        let dof = a.model.decel.len();
        let inc = &mut ar.inc[ri];
        let s0 = sc.plan_s[0];
        let s_stop = sc.plan_s[sc.n_cfg - 1].max(s0);
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
        let full = Along::new(plan, &a.state.follow.rates, s0, &inc.travel, sc.plan.react_s + LOOKAHEAD_S, None);
        let end = full.s_end.max(s_stop).min(plan.duration_s());
        let span = (end - s0).max(0.0);
        let last = MAX_SAMPLES - 1;
        inc.half_step.fill(0.0);
        for k in 0..MAX_SAMPLES {
            let s = s0 + span * k as f64 / last as f64;
            inc.times[k] = s;
            let out = &mut inc.q[k * dof..(k + 1) * dof];
            plan.at_time(s, out);
            for (o, d) in out.iter_mut().zip(&sc.offset) {
                *o += d;
            }
            if k > 0 {
                inc.travel.fill(0.0);
                plan.travel(inc.times[k - 1], s, &mut inc.travel);
                for (h, t) in inc.half_step.iter_mut().zip(&inc.travel) {
                    *h = h.max(t / 2.0);
                }
            }
        }
        let seen = a.state.est_period + a.state.est.last_stamp().map_or(0.0, |t| (now_s - t).max(0.0));
        for (h, &acc) in inc.half_step.iter_mut().zip(&a.model.accel) {
            *h += forecast::along::departure(acc, seen, a.model.reaction_s);
        }
        let committed =
            if span > 0.0 { (((s_stop - s0) / span) * last as f64 - 1e-9).ceil().clamp(0.0, last as f64) } else { 0.0 };
        let qs: [&[f64]; BATCH] = std::array::from_fn(|k| &inc.q[k * dof..(k + 1) * dof]);
        if a.model.poser.pose_batch(&qs, &mut inc.batch).is_err() {
            ar.offers[ri] = Offer { priority, samples: 0, committed: 0, planned: false, still };
            return;
        }
        let mut widest = 0.0f32;
        for s in 0..a.model.slots {
            let l = inc.batch.link[s] as usize;
            let e: f64 = a.model.lever[l * dof..(l + 1) * dof].iter().zip(&inc.half_step).map(|(x, y)| x * y).sum();
            inc.inflated_r[s] = inc.batch.r[s] + e as f32;
            widest = widest.max(e as f32);
        }
        for (lane, bx) in inc.boxes.iter_mut().enumerate() {
            *bx =
                [f32::INFINITY, f32::INFINITY, f32::INFINITY, f32::NEG_INFINITY, f32::NEG_INFINITY, f32::NEG_INFINITY];
            for &(l, _, _) in &a.model.ranges {
                let lb = &inc.batch.boxes[l as usize];
                for c in 0..3 {
                    bx[c] = bx[c].min(lb[c][lane] - widest);
                    bx[3 + c] = bx[3 + c].max(lb[3 + c][lane] + widest);
                }
            }
        }
        ar.offers[ri] = Offer { priority, samples: MAX_SAMPLES, committed: committed as usize, planned: true, still };
    }

    /// The conflict table: which sample of which robot comes within the
    /// clearance margin of which sample of another (a robot offering one
    /// sample stands with its whole stopping path).
    fn find_conflicts(&mut self) {
        let margin = self.margins.clearance_m as f32;
        self.arbitration.conflicts.clear();
        let n = self.arms.len();
        for a in 0..n {
            for b in a + 1..n {
                let (oa, ob) = (self.arbitration.offers[a], self.arbitration.offers[b]);
                // Two robots without grants: nothing to decide between them.
                if oa.samples == 0 || ob.samples == 0 || !(oa.planned || ob.planned) {
                    continue;
                }
                for i in 0..oa.samples {
                    for j in 0..ob.samples {
                        if self.samples_meet(a, i, b, j, margin) {
                            self.arbitration.conflicts.set(a, i, b, j);
                        }
                    }
                }
            }
        }
    }

    /// The box of robot `r`'s sample `k` (its increment's, or its whole
    /// stopping path's when it offers one sample).
    fn sample_box(&self, r: usize, k: usize) -> [f32; 6] {
        if self.arbitration.offers[r].planned {
            return self.arbitration.inc[r].boxes[k];
        }
        let sc = &self.arms[r].scratch;
        let w = sc.inflate;
        let b = sc.bounds;
        [b[0] - w, b[1] - w, b[2] - w, b[3] + w, b[4] + w, b[5] + w]
    }

    /// Whether sample `i` of robot `a` and sample `j` of robot `b` come
    /// within `margin` (checked link pairs only).
    fn samples_meet(&self, a: usize, i: usize, b: usize, j: usize, margin: f32) -> bool {
        let (ba, bb) = (self.sample_box(a, i), self.sample_box(b, j));
        if (0..3).any(|c| ba[c] > bb[3 + c] + margin || bb[c] > ba[3 + c] + margin) {
            return false;
        }
        let mut hit = false;
        self.for_each_sphere(a, i, &bb, margin, |la, xa, ra| {
            if hit {
                return;
            }
            self.for_each_sphere(b, j, &ba, margin, |lb, xb, rb| {
                if hit || !self.pair_matters(a, la, b, lb) {
                    return;
                }
                let d2 = (xa[0] - xb[0]).powi(2) + (xa[1] - xb[1]).powi(2) + (xa[2] - xb[2]).powi(2);
                let reach = ra + rb + margin;
                hit = d2 <= reach * reach;
            });
        });
        hit
    }

    /// Calls `f(link, centre, inflated radius)` for every sphere of robot
    /// `r`'s sample `k`: its increment's, or every sample of its stopping
    /// path when it offers one (those whose box, grown by `margin`, meets
    /// `other` only).
    fn for_each_sphere(
        &self,
        r: usize,
        k: usize,
        other: &[f32; 6],
        margin: f32,
        mut f: impl FnMut(usize, [f32; 3], f32),
    ) {
        let arm = &self.arms[r];
        if self.arbitration.offers[r].planned {
            let inc = &self.arbitration.inc[r];
            for s in 0..arm.model.slots {
                let at = s * BATCH + k;
                f(inc.batch.link[s] as usize, [inc.batch.x[at], inc.batch.y[at], inc.batch.z[at]], inc.inflated_r[s]);
            }
            return;
        }
        let sc = &arm.scratch;
        let grow = sc.inflate + margin;
        for c in 0..sc.n_cfg {
            let (bi, lane) = (c / BATCH, c % BATCH);
            let batch = &sc.batches[bi];
            let mut bx =
                [f32::INFINITY, f32::INFINITY, f32::INFINITY, f32::NEG_INFINITY, f32::NEG_INFINITY, f32::NEG_INFINITY];
            for &(l, _, _) in &arm.model.ranges {
                let lb = &batch.boxes[l as usize];
                for q in 0..3 {
                    bx[q] = bx[q].min(lb[q][lane]);
                    bx[3 + q] = bx[3 + q].max(lb[3 + q][lane]);
                }
            }
            if (0..3).any(|q| bx[q] - grow > other[3 + q] || other[q] > bx[3 + q] + grow) {
                continue;
            }
            for s in 0..arm.model.slots {
                let at = s * BATCH + lane;
                f(batch.link[s] as usize, [batch.x[at], batch.y[at], batch.z[at]], sc.inflated_r[s]);
            }
        }
    }
}
