//! Which samples of the robots' increments interfere: the conflict table
//! the arbiter decides on ([`crate::arbiter::Conflicts`]).
//!
//! Two robots whose increments' boxes come within the clearance margin are
//! compared link pair by link pair (checked pairs only), each link's boxes
//! grown by its own inflation: per sample of one robot, the samples of the
//! other whose sample and link boxes come near, then each sphere against
//! the other link's spheres in those eight samples at once (the batch's
//! lanes are contiguous), until every near sample is known to meet. With
//! [`Guard::set_all_pairs`], the same table comes sample pair by sample
//! pair, from boxes then spheres: the reference the lanes are tested and
//! measured against. Both give the same table, to the bit: the same
//! spheres, the same margin, the same arithmetic. For two robots that
//! already stand within the margin of each other, [`super::separating`]
//! then keeps only the conflicts that bring them nearer.
//!
//! A spatial hash of the inflated spheres was tried here and measured
//! slower than either: spheres inflated by a sample's travel need cells of
//! about 0.3 m, which hold whole links, so every lookup meets most of the
//! other robot.

use super::*;
use crate::arbiter::{Conflicts, MAX_SAMPLES};

// An increment's samples are the lanes of one posed batch.
const _: () = assert!(MAX_SAMPLES == BATCH);

impl Guard {
    /// This cycle's conflict table (robots on plans only).
    pub fn conflicts(&self) -> &Conflicts {
        &self.arbitration.conflicts
    }

    // The conflict table: which sample of which robot comes within the
    // clearance margin of which sample of another, for every pair with a
    // robot on plan. A robot off plan (trusted) is one place, where it
    // stands grown by its stopping path: a robot on plan holds short of
    // it instead of being stopped there; two robots off plans are left to
    // the stop check, which samples their paths finer.
    with_avx2!(pub(super) fn find_conflicts = find_conflicts_avx2_fma / find_conflicts_impl());

    #[inline(always)]
    fn find_conflicts_impl(&mut self) {
        let margin = self.margins.clearance_m as f32;
        self.arbitration.conflicts.clear();
        self.arbitration.arbiter.clear_ahead();
        let n = self.arms.len();
        for a in 0..n {
            for b in a + 1..n {
                let (oa, ob) = (self.arbitration.offers[a], self.arbitration.offers[b]);
                let (ia, ib) = (&self.arbitration.inc[a], &self.arbitration.inc[b]);
                if !(oa.planned || ob.planned) || !(ia.posed && ib.posed) {
                    continue;
                }
                let (ua, ub) = (self.arbitration.inc[a].reach, self.arbitration.inc[b].reach);
                if !apart(&ua, &ub, margin) {
                    if self.robots.all_pairs {
                        self.conflicts_by_boxes(a, b, margin);
                    } else {
                        self.conflicts_by_lanes(a, b, &ub, margin, false);
                    }
                }
                // The lower one's increment against the higher one's way
                // ahead (ties to the lower index: `a`).
                let (lo, hi) = if oa.priority >= ob.priority { (b, a) } else { (a, b) };
                let way = &self.arbitration.ahead[hi];
                if way.posed && self.arbitration.offers[lo].planned {
                    let reach = way.reach;
                    self.arbitration.arbiter.ahead_pair(lo, hi);
                    if !apart(&self.arbitration.inc[lo].reach, &reach, margin) {
                        self.conflicts_by_lanes(lo, hi, &reach, margin, true);
                    }
                }
            }
        }
    }

    /// Robots `a` and `b`'s conflicts lane by lane: for each checked link
    /// pair and each sample of `a`, the samples of `b` whose link boxes come
    /// near (each grown by its link's inflation), then group by group
    /// ([`super::groups`]) and, where two groups' covers meet, sphere by
    /// sphere against those eight samples at once, until every one of them
    /// is known to meet. With `ahead`, against `b`'s way ahead instead of
    /// its increment, into the arbiter's table of ways ahead.
    // long: one pass over link pairs, samples and sphere groups; split, each level would take the increments and the table
    #[inline(always)]
    fn conflicts_by_lanes(&mut self, a: usize, b: usize, ub: &[f32; 6], margin: f32, ahead: bool) {
        let Guard { arms, arbitration, matrix, allowed, .. } = self;
        let ia = &arbitration.inc[a];
        let (ib, conflicts) = if ahead {
            (&arbitration.ahead[b], arbitration.arbiter.ahead_mut())
        } else {
            (&arbitration.inc[b], &mut arbitration.conflicts)
        };
        // Per sample of `a`, the samples of `b` whose boxes come near.
        let mut samples_near = [0u8; MAX_SAMPLES];
        let mut sample_boxes = [[0.0f32; BATCH]; 6];
        for (j, bx) in ib.boxes.iter().enumerate() {
            for c in 0..6 {
                sample_boxes[c][j] = bx[c];
            }
        }
        for (i, bx) in ia.boxes.iter().enumerate() {
            samples_near[i] = near_lanes(&sample_boxes, [bx[0], bx[1], bx[2]], [bx[3], bx[4], bx[5]], margin);
        }
        if samples_near.iter().all(|&m| m == 0) {
            return;
        }
        for &(la, _, _) in &arms[a].model.ranges {
            let global_a = matrix.global(a, la as usize);
            let bxa = &ia.batch.boxes[la as usize];
            let reach_a = &ia.link_reach[la as usize];
            if apart(reach_a, ub, margin) {
                continue;
            }
            for &(lb, _, _) in &arms[b].model.ranges {
                if apart(reach_a, &ib.link_reach[lb as usize], margin)
                    || !link_pair_checked(matrix, allowed, global_a, matrix.global(b, lb as usize))
                {
                    continue;
                }
                let grow_b = margin + ib.inflation[lb as usize];
                let gap = grow_b + ia.inflation[la as usize];
                let bxb = &ib.batch.boxes[lb as usize];
                let (ga, gb) = (&ia.groups, &ib.groups);
                let (a0, a1) = ga.of_link[la as usize];
                let (b0, b1) = gb.of_link[lb as usize];
                for i in 0..MAX_SAMPLES {
                    let todo = !conflicts.row(a, i, b)
                        & samples_near[i]
                        & near_lanes(bxb, [bxa[0][i], bxa[1][i], bxa[2][i]], [bxa[3][i], bxa[4][i], bxa[5][i]], gap);
                    if todo == 0 {
                        continue;
                    }
                    let mut met = 0u8;
                    'groups: for g in &ga.groups[a0 as usize..a1 as usize] {
                        let k = g.rep as usize * BATCH + i;
                        let (x, y, z) = (ia.batch.x[k], ia.batch.y[k], ia.batch.z[k]);
                        let ra = g.radius + ia.inflation[la as usize];
                        // Only against the samples whose link box this group's cover reaches.
                        let c = ra + grow_b;
                        let lanes = todo & !met & near_lanes(bxb, [x - c, y - c, z - c], [x + c, y + c, z + c], 0.0);
                        if lanes == 0 {
                            continue;
                        }
                        for h in &gb.groups[b0 as usize..b1 as usize] {
                            let near =
                                lanes & !met & within(&ib.batch, h.rep as usize, [x, y, z], ra + h.radius + grow_b);
                            if near == 0 {
                                continue;
                            }
                            let hb = &gb.members[h.start as usize..h.end as usize];
                            for &sa in &ga.members[g.start as usize..g.end as usize] {
                                let k = sa as usize * BATCH + i;
                                let (x, y, z) = (ia.batch.x[k], ia.batch.y[k], ia.batch.z[k]);
                                let r = ia.inflated_r[sa as usize] + margin;
                                for &sb in hb {
                                    met |= within(&ib.batch, sb as usize, [x, y, z], r + ib.inflated_r[sb as usize]);
                                }
                            }
                            if met & todo == todo {
                                break 'groups;
                            }
                        }
                    }
                    conflicts.set_row(a, i, b, met & todo);
                }
            }
        }
    }

    /// Robots `a` and `b`'s conflicts by boxes, then spheres (the
    /// reference for the lanes: the same table, slower).
    fn conflicts_by_boxes(&mut self, a: usize, b: usize, margin: f32) {
        for i in 0..MAX_SAMPLES {
            for j in 0..MAX_SAMPLES {
                if !self.arbitration.conflicts.get(a, i, b, j) && self.samples_meet(a, i, b, j, margin) {
                    self.arbitration.conflicts.set(a, i, b, j);
                }
            }
        }
    }

    /// Whether sample `i` of robot `a`'s increment and sample `j` of robot
    /// `b`'s come within `margin` (checked link pairs only): sample boxes,
    /// then the robot's box against the other's sample, then link boxes
    /// and spheres.
    fn samples_meet(&self, a: usize, i: usize, b: usize, j: usize, margin: f32) -> bool {
        let (ia, ib) = (&self.arbitration.inc[a], &self.arbitration.inc[b]);
        if apart(&ia.boxes[i], &ib.boxes[j], margin) {
            return false;
        }
        self.views_meet(a, &View::of(ia, i), b, &View::of(ib, j), margin)
    }

    /// Whether two posed configurations of robots `a` and `b` come within
    /// `margin`: each pair of checked links whose boxes do, sphere by sphere.
    pub(super) fn views_meet(&self, a: usize, va: &View<'_>, b: usize, vb: &View<'_>, margin: f32) -> bool {
        self.sphere_pairs(a, va, b, vb, margin, |d2, radii| {
            let reach = radii + margin;
            d2 <= reach * reach
        })
    }

    /// The least gap between the spheres of two posed configurations of
    /// robots `a` and `b` (checked link pairs only), or `cap` where none
    /// is less, m.
    pub(super) fn views_gap(&self, a: usize, va: &View<'_>, b: usize, vb: &View<'_>, cap: f32) -> f32 {
        let mut least = cap;
        self.sphere_pairs(a, va, b, vb, cap, |d2, radii| {
            least = least.min(d2.sqrt() - radii);
            false
        });
        least
    }

    /// Calls `f(squared distance, sum of radii)` for each pair of spheres
    /// of two posed configurations of robots `a` and `b` on checked links
    /// whose boxes come within `gap`, until it returns true (then true).
    #[inline(always)]
    fn sphere_pairs(
        &self,
        a: usize,
        va: &View<'_>,
        b: usize,
        vb: &View<'_>,
        gap: f32,
        mut f: impl FnMut(f32, f32) -> bool,
    ) -> bool {
        let (ma, mb) = (&self.arms[a].model, &self.arms[b].model);
        for &(la, sa0, sa1) in &ma.ranges {
            let xa = va.link_box(la as usize);
            for &(lb, sb0, sb1) in &mb.ranges {
                if apart(&xa, &vb.link_box(lb as usize), gap + va.grow + vb.grow)
                    || !self.pair_matters(a, la as usize, b, lb as usize)
                {
                    continue;
                }
                for sa in sa0 as usize..sa1 as usize {
                    let pa = va.centre(sa);
                    for sb in sb0 as usize..sb1 as usize {
                        let pb = vb.centre(sb);
                        let d2 = (pa[0] - pb[0]).powi(2) + (pa[1] - pb[1]).powi(2) + (pa[2] - pb[2]).powi(2);
                        if f(d2, va.r[sa] + vb.r[sb]) {
                            return true;
                        }
                    }
                }
            }
        }
        false
    }
}

/// One posed configuration of a robot as the conflict check reads it.
pub(super) struct View<'a> {
    pub(super) batch: &'a PosedBatch,
    pub(super) lane: usize,
    /// Per slot, radius plus inflation.
    pub(super) r: &'a [f32],
    /// The largest inflation of any link, m.
    pub(super) grow: f32,
}

impl View<'_> {
    /// Sample `lane` of an increment, its spheres inflated.
    pub(super) fn of(inc: &super::Increment, lane: usize) -> View<'_> {
        View { batch: &inc.batch, lane, r: &inc.inflated_r, grow: inc.widest }
    }

    /// Sample `lane` of an increment, its spheres as they are (not
    /// inflated).
    pub(super) fn bare(inc: &super::Increment, lane: usize) -> View<'_> {
        View { batch: &inc.batch, lane, r: &inc.batch.r, grow: 0.0 }
    }

    fn centre(&self, s: usize) -> [f32; 3] {
        let at = s * BATCH + self.lane;
        [self.batch.x[at], self.batch.y[at], self.batch.z[at]]
    }

    /// Link `l`'s box (spheres without inflation).
    fn link_box(&self, l: usize) -> [f32; 6] {
        lane_box(self.batch, l, self.lane)
    }
}

/// Link `l`'s box in lane `lane` of `batch` (spheres without inflation).
fn lane_box(batch: &PosedBatch, l: usize, lane: usize) -> [f32; 6] {
    let b = &batch.boxes[l];
    std::array::from_fn(|c| b[c][lane])
}

/// Whether two boxes are farther apart than `gap` along some axis (boxes
/// without anything, at ±∞, are apart from everything).
pub(super) fn apart(x: &[f32; 6], y: &[f32; 6], gap: f32) -> bool {
    (0..3).any(|c| x[c] > y[3 + c] + gap || y[c] > x[3 + c] + gap) || (0..3).any(|c| x[c] > x[3 + c] || y[c] > y[3 + c])
}

/// The lanes of a link's boxes (`boxes`: per lane, minimum x, y, z, then
/// maximum) that come within `gap` of the box from `lo` to `hi`: bit `j`
/// for lane `j`.
#[inline(always)]
fn near_lanes(boxes: &[[f32; BATCH]; 6], lo: [f32; 3], hi: [f32; 3], gap: f32) -> u8 {
    let mut near = [true; BATCH];
    for c in 0..3 {
        for (j, n) in near.iter_mut().enumerate() {
            *n &= (lo[c] <= boxes[3 + c][j] + gap) & (boxes[c][j] <= hi[c] + gap);
        }
    }
    pack(&near)
}

/// The lanes where slot `s` of `batch` has its centre within `reach` of
/// `p`: bit `j` for lane `j`.
#[inline(always)]
fn within(batch: &PosedBatch, s: usize, p: [f32; 3], reach: f32) -> u8 {
    let at = s * BATCH;
    let (bx, by, bz) = (&batch.x[at..at + BATCH], &batch.y[at..at + BATCH], &batch.z[at..at + BATCH]);
    let mut near = [false; BATCH];
    for j in 0..BATCH {
        let d2 = (p[0] - bx[j]).powi(2) + (p[1] - by[j]).powi(2) + (p[2] - bz[j]).powi(2);
        near[j] = d2 <= reach * reach;
    }
    pack(&near)
}

/// Eight flags as the bits of a byte (flag `j`: bit `j`).
#[inline(always)]
fn pack(flags: &[bool; BATCH]) -> u8 {
    flags.iter().enumerate().fold(0u8, |m, (j, &f)| m | (u8::from(f) << j))
}
