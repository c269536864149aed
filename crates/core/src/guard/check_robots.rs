//! The robot-vs-robot check: one robot's sampled spheres deposited in the
//! spatial hash, the other's looked up there; every sphere pair exactly as
//! the benchmark's baseline.

use super::*;

/// One sphere pair's gap between robots a and b: their links, and the
/// samples (stopping-path configurations) each sphere belongs to.
#[derive(Clone, Copy, Debug)]
struct Find {
    gap_m: f32,
    link_a: u32,
    link_b: u32,
    sample_a: usize,
    sample_b: usize,
}

impl Find {
    const NONE: Find = Find { gap_m: f32::INFINITY, link_a: 0, link_b: 0, sample_a: usize::MAX, sample_b: usize::MAX };
}

/// What a robot-vs-robot check found: the least gap, and for each robot
/// the earliest of its samples within the margin (with the least gap there).
#[derive(Clone, Copy, Debug)]
pub(super) struct PairFinds {
    best: Find,
    first_a: Find,
    first_b: Find,
}

impl PairFinds {
    const NONE: PairFinds = PairFinds { best: Find::NONE, first_a: Find::NONE, first_b: Find::NONE };

    /// Takes one sphere pair's gap; `margin_m` is the clearance margin.
    #[inline]
    fn add(&mut self, f: Find, margin_m: f32) {
        if f.gap_m < self.best.gap_m {
            self.best = f;
        }
        if f.gap_m <= margin_m {
            let (a, b) = (&mut self.first_a, &mut self.first_b);
            if f.sample_a < a.sample_a || (f.sample_a == a.sample_a && f.gap_m < a.gap_m) {
                *a = f;
            }
            if f.sample_b < b.sample_b || (f.sample_b == b.sample_b && f.gap_m < b.gap_m) {
                *b = f;
            }
        }
    }

    /// Records the finds in both robots' tracks.
    fn apply(&self, arms: &mut [Arm], ia: usize, ib: usize, margin_m: f32) {
        if !(self.best.gap_m.is_finite() || self.best.gap_m.is_nan()) {
            return;
        }
        let link = |r: usize, l: u32| Body::Link { robot: r as u16, link: l as u16 };
        let (ra, rb) = (Reason::Robot { other: ib as u16 }, Reason::Robot { other: ia as u16 });
        let pair_a = |f: &Find| (link(ia, f.link_a), link(ib, f.link_b));
        let pair_b = |f: &Find| (link(ib, f.link_b), link(ia, f.link_a));
        let f = &self.best;
        Guard::note(&mut arms[ia].scratch.track, f.gap_m, f.sample_a, pair_a(f), ra, margin_m);
        Guard::note(&mut arms[ib].scratch.track, f.gap_m, f.sample_b, pair_b(f), rb, margin_m);
        Guard::note_class(&mut arms[ia].scratch.track, 2, f.gap_m, pair_a(f));
        Guard::note_class(&mut arms[ib].scratch.track, 2, f.gap_m, pair_b(f));
        if self.first_a.sample_a != usize::MAX {
            let f = &self.first_a;
            Guard::note(&mut arms[ia].scratch.track, f.gap_m, f.sample_a, pair_a(f), ra, margin_m);
            let f = &self.first_b;
            Guard::note(&mut arms[ib].scratch.track, f.gap_m, f.sample_b, pair_b(f), rb, margin_m);
        }
    }
}

impl Guard {
    pub(super) fn check_robots(&mut self, m: f32, release: f32, part: Part) {
        let n = self.arms.len();
        for ia in 0..n {
            for ib in (ia + 1)..n {
                let (a, b) = (&self.arms[ia], &self.arms[ib]);
                if a.scratch.n_cfg == 0 || b.scratch.n_cfg == 0 || !part.pair(ia, ib) {
                    continue;
                }
                let thr = release.max(m);
                let grow = thr + a.scratch.inflate + b.scratch.inflate;
                let overlap = (0..3).all(|c| {
                    a.scratch.bounds[c] - b.scratch.bounds[3 + c] <= grow
                        && b.scratch.bounds[c] - a.scratch.bounds[3 + c] <= grow
                });
                if !overlap {
                    continue;
                }
                if self.all_pairs {
                    self.robots_all_pairs(ia, ib, thr, m);
                    continue;
                }
                // Deposit a's spheres near b's box, then look up b's spheres near a's box.
                // Only links that can meet the other robot enter; the cell
                // edge covers the largest of them, inflated, plus the threshold.
                let (ra, rb) = (self.meet_r[ia * n + ib], self.meet_r[ib * n + ia]);
                if ra <= 0.0 || rb <= 0.0 {
                    continue;
                }
                self.hash.set_cell_m(ra + rb + a.scratch.inflate + b.scratch.inflate + thr);
                let (meets_a, meets_b) = (&self.meets[ia * n + ib], &self.meets[ib * n + ia]);
                self.hash.clear();
                let near = |bx: &[f32; 6], x: f32, y: f32, z: f32, r: f32| {
                    x + r >= bx[0] - grow
                        && x - r <= bx[3] + grow
                        && y + r >= bx[1] - grow
                        && y - r <= bx[4] + grow
                        && z + r >= bx[2] - grow
                        && z - r <= bx[5] + grow
                };
                let slots_a = a.model.slots;
                for bi in 0..a.scratch.n_cfg.div_ceil(BATCH) {
                    let pb = &a.scratch.batches[bi];
                    for sl in 0..slots_a {
                        if !meets_a[pb.link[sl] as usize] {
                            continue;
                        }
                        for lane in 0..BATCH {
                            let i = sl * BATCH + lane;
                            if bi * BATCH + lane < a.scratch.n_cfg
                                && near(&b.scratch.bounds, pb.x[i], pb.y[i], pb.z[i], a.scratch.rin[sl])
                            {
                                self.hash.insert(
                                    pb.x[i],
                                    pb.y[i],
                                    pb.z[i],
                                    a.scratch.rin[sl],
                                    ((bi * slots_a + sl) * BATCH + lane) as u32,
                                );
                            }
                        }
                    }
                }
                if self.hash.is_empty() {
                    continue;
                }
                let mut finds = PairFinds::NONE;
                for bi in 0..b.scratch.n_cfg.div_ceil(BATCH) {
                    let pb = &b.scratch.batches[bi];
                    for sl in 0..b.model.slots {
                        let lb = pb.link[sl];
                        if !meets_b[lb as usize] {
                            continue;
                        }
                        let gb = self.matrix.global(ib, lb as usize);
                        for lane in 0..BATCH {
                            let kb = bi * BATCH + lane;
                            let i = sl * BATCH + lane;
                            if kb >= b.scratch.n_cfg
                                || !near(&a.scratch.bounds, pb.x[i], pb.y[i], pb.z[i], b.scratch.rin[sl])
                            {
                                continue;
                            }
                            let (arms, matrix, allowed) = (&self.arms, &self.matrix, &self.allowed);
                            self.hash.for_each_near(pb.x[i], pb.y[i], pb.z[i], b.scratch.rin[sl], thr, |label, gap| {
                                let lane_a = label as usize % BATCH;
                                let rest = label as usize / BATCH;
                                let (bia, sla) = (rest / slots_a, rest % slots_a);
                                let la = arms[ia].scratch.batches[bia].link[sla];
                                let ga = matrix.global(ia, la as usize);
                                let nl = matrix.total_links();
                                let bit = ga * nl + gb;
                                if allowed[bit / 64] >> (bit % 64) & 1 == 1
                                    || matrix.class(ga, gb) != PairClass::Sometimes
                                {
                                    return;
                                }
                                finds.add(
                                    Find {
                                        gap_m: gap,
                                        link_a: la,
                                        link_b: lb,
                                        sample_a: bia * BATCH + lane_a,
                                        sample_b: kb,
                                    },
                                    m,
                                );
                            });
                        }
                    }
                }
                finds.apply(&mut self.arms, ia, ib, m);
            }
        }
    }

    /// The baseline: every sphere of `ia`'s samples against every sphere of `ib`'s.
    pub(super) fn robots_all_pairs(&mut self, ia: usize, ib: usize, thr: f32, m: f32) {
        let (a, b) = (&self.arms[ia], &self.arms[ib]);
        let nl = self.matrix.total_links();
        let mut finds = PairFinds::NONE;
        for bia in 0..a.scratch.n_cfg.div_ceil(BATCH) {
            let pa = &a.scratch.batches[bia];
            for sa in 0..a.model.slots {
                let ga = self.matrix.global(ia, pa.link[sa] as usize);
                for bib in 0..b.scratch.n_cfg.div_ceil(BATCH) {
                    let pb = &b.scratch.batches[bib];
                    for sb in 0..b.model.slots {
                        let gb = self.matrix.global(ib, pb.link[sb] as usize);
                        let bit = ga * nl + gb;
                        if self.allowed[bit / 64] >> (bit % 64) & 1 == 1
                            || self.matrix.class(ga, gb) != PairClass::Sometimes
                        {
                            continue;
                        }
                        for la in 0..BATCH {
                            let ka = bia * BATCH + la;
                            if ka >= a.scratch.n_cfg {
                                break;
                            }
                            let i = sa * BATCH + la;
                            for lb in 0..BATCH {
                                let kb = bib * BATCH + lb;
                                if kb >= b.scratch.n_cfg {
                                    break;
                                }
                                let j = sb * BATCH + lb;
                                let (dx, dy, dz) = (pa.x[i] - pb.x[j], pa.y[i] - pb.y[j], pa.z[i] - pb.z[j]);
                                let g = (dx * dx + dy * dy + dz * dz).sqrt() - a.scratch.rin[sa] - b.scratch.rin[sb];
                                if g > thr {
                                    continue;
                                }
                                finds.add(
                                    Find {
                                        gap_m: g,
                                        link_a: pa.link[sa],
                                        link_b: pb.link[sb],
                                        sample_a: ka,
                                        sample_b: kb,
                                    },
                                    m,
                                );
                            }
                        }
                    }
                }
            }
        }
        finds.apply(&mut self.arms, ia, ib, m);
    }
}
