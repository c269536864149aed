//! The robot-vs-robot check: one robot's sampled spheres deposited in the
//! spatial hash, the other's looked up there; every sphere pair exactly as
//! the benchmark's baseline.

use super::exact_pairs::{At, ExactFrames, Pending};
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

/// What a robot-vs-robot check found: the least gap, for each robot the
/// earliest of its samples within the margin (with the least gap there),
/// and for each robot the least gap at its first sample, over its later
/// ones and at its last (an escape's evidence, [`Escape::take_robot`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct PairFinds {
    best: Find,
    first_a: Find,
    first_b: Find,
    escape_a: [f32; 3],
    escape_b: [f32; 3],
    /// For each robot, the least distance of its links' shapes to the
    /// other's at its first sample and over its later ones, where the
    /// spheres come within the margin (an escape's check: [`Escape::take_robot`]).
    shapes_a: [f32; 2],
    shapes_b: [f32; 2],
    last: (usize, usize),
    /// Either robot escapes from the other: the escape gaps are wanted.
    watch: bool,
    /// Gaps up to this are stopping matters (the release margin, or the
    /// clearance margin if larger); the ones beyond, up to the slow-down
    /// distance, only tell what each robot's path approaches.
    reach: f32,
    /// For each robot, the least gap at its first sample and over its later
    /// ones ([`Track::approach`]).
    near_a: [f32; 2],
    near_b: [f32; 2],
}

/// Takes a gap at sample `k` of a path whose last sample is `last` into
/// (first, later, last) least gaps.
#[inline]
fn escape_gap(e: &mut [f32; 3], gap: f32, k: usize, last: usize) {
    let i = if k == 0 { 0 } else { 1 };
    e[i] = e[i].min(gap);
    if k == last {
        e[2] = e[2].min(gap);
    }
}

impl PairFinds {
    /// Nothing found yet, for arms `ia` and `ib`.
    fn new(arms: &[Arm], ia: usize, ib: usize, reach: f32) -> PairFinds {
        let (a, b) = (&arms[ia].scratch, &arms[ib].scratch);
        let (n_a, n_b) = (a.forecast.n_cfg, b.forecast.n_cfg);
        let watch = a.track.escape.target == Some(Target::Robot(ib as u16))
            || b.track.escape.target == Some(Target::Robot(ia as u16));
        PairFinds {
            best: Find::NONE,
            first_a: Find::NONE,
            first_b: Find::NONE,
            escape_a: [f32::INFINITY; 3],
            escape_b: [f32::INFINITY; 3],
            shapes_a: [f32::INFINITY; 2],
            shapes_b: [f32::INFINITY; 2],
            last: (n_a.saturating_sub(1), n_b.saturating_sub(1)),
            watch,
            reach,
            near_a: [f32::INFINITY; 2],
            near_b: [f32::INFINITY; 2],
        }
    }

    /// Takes one sphere pair's gap, and the same refined ([`refined_exact`]):
    /// the refined one alone decides whether it is within the clearance
    /// margin `margin_m` (a stop), and whether an escape closes in on the
    /// other robot; the others compare gaps of one path with each other,
    /// inflated alike.
    #[inline]
    fn add(&mut self, f: Find, [refined, shapes]: [f32; 2], margin_m: f32) {
        let (ia, ib) = (usize::from(f.sample_a > 0), usize::from(f.sample_b > 0));
        self.near_a[ia] = self.near_a[ia].min(f.gap_m);
        self.near_b[ib] = self.near_b[ib].min(f.gap_m);
        if f.gap_m > self.reach {
            return;
        }
        if f.gap_m < self.best.gap_m {
            self.best = f;
        }
        if self.watch {
            escape_gap(&mut self.escape_a, f.gap_m, f.sample_a, self.last.0);
            escape_gap(&mut self.escape_b, f.gap_m, f.sample_b, self.last.1);
            self.shapes_a[ia] = self.shapes_a[ia].min(shapes);
            self.shapes_b[ib] = self.shapes_b[ib].min(shapes);
        }
        if refined <= margin_m {
            let f = Find { gap_m: refined, ..f };
            let (a, b) = (&mut self.first_a, &mut self.first_b);
            if f.sample_a < a.sample_a || (f.sample_a == a.sample_a && f.gap_m < a.gap_m) {
                *a = f;
            }
            if f.sample_b < b.sample_b || (f.sample_b == b.sample_b && f.gap_m < b.gap_m) {
                *b = f;
            }
        }
    }

    /// The earliest samples of the two robots within the margin so far.
    #[inline]
    fn first(&self) -> Option<(usize, usize)> {
        (self.first_a.sample_a != usize::MAX).then_some((self.first_a.sample_a, self.first_b.sample_b))
    }

    /// The earliest conflict so far, past which refinements are cut short
    /// (later on both paths, they cannot change which sample stops either
    /// robot), and whether an escape is watched (it wants the shapes'
    /// distances past it as well: they are put off, [`PairFinds::settle`]).
    #[inline]
    fn cut(&self) -> (Option<(usize, usize)>, bool) {
        (self.first(), self.watch)
    }

    /// Measures the refinements put off past the earliest conflict
    /// ([`refined_exact`]), once per link pair and samples, only while one
    /// of them could still show a robot's links closing in (a later
    /// distance within the margin and below the first sample's, which is
    /// known by now: every pair at a first sample is measured at once), and
    /// takes them into the later shapes' distances. What is left unmeasured
    /// cannot change whether either robot's links close in.
    fn settle(&mut self, exact: &mut ExactFrames, arms: &[Arm], (ia, ib): (usize, usize), margin_m: f32) -> &Self {
        if exact.pending.is_empty() {
            return self;
        }
        // The least refined gap first in each link pair (its value where
        // the links have no exact shape).
        exact.pending.sort_unstable_by(|p, q| {
            (p.ka, p.kb, p.la, p.lb).cmp(&(q.ka, q.kb, q.la, q.lb)).then(p.fine.total_cmp(&q.fine))
        });
        let mut last = None;
        for i in 0..exact.pending.len() {
            let p = exact.pending[i];
            let key = (p.ka, p.kb, p.la, p.lb);
            if last == Some(key) {
                continue;
            }
            last = Some(key);
            let (open_a, open_b) = (!closes(self.shapes_a, margin_m), !closes(self.shapes_b, margin_m));
            if !open_a && !open_b {
                break;
            }
            let (a, b) = (At::of(&arms[ia], ia, p.la, p.ka as usize), At::of(&arms[ib], ib, p.lb, p.kb as usize));
            // A measured distance is at least 0: useless against a first
            // sample's at or below 0.
            let least = if exact.measures(&a, &b) { 0.0 } else { p.fine };
            // How far a distance can help: within the margin, and below
            // the first sample's for a robot not yet decided.
            let helps = |open: bool, now: f32| match (open, least < now || now.is_nan()) {
                (true, true) => {
                    if now.is_nan() {
                        margin_m
                    } else {
                        now.min(margin_m)
                    }
                }
                _ => f32::NEG_INFINITY,
            };
            let max = helps(open_a, self.shapes_a[0]).max(helps(open_b, self.shapes_b[0]));
            if max == f32::NEG_INFINITY {
                continue;
            }
            let shapes = exact.shapes_within(a, b, p.fine, max);
            self.shapes_a[1] = self.shapes_a[1].min(shapes);
            self.shapes_b[1] = self.shapes_b[1].min(shapes);
        }
        exact.pending.clear();
        self
    }

    /// Records the finds in both robots' tracks.
    fn apply(&self, arms: &mut [Arm], ia: usize, ib: usize, margin_m: f32) {
        arms[ia].scratch.track.approach(1, self.near_a[0], self.near_a[1]);
        arms[ib].scratch.track.approach(1, self.near_b[0], self.near_b[1]);
        if !(self.best.gap_m.is_finite() || self.best.gap_m.is_nan()) {
            return;
        }
        let (ca, cb) = (closes(self.shapes_a, margin_m), closes(self.shapes_b, margin_m));
        arms[ia].scratch.track.escape.take_robot(ib as u16, self.escape_a, ca);
        arms[ib].scratch.track.escape.take_robot(ia as u16, self.escape_b, cb);
        let link = |r: usize, l: u32| Body::Link { robot: r as u16, link: l as u16 };
        let (ra, rb) = (Reason::Robot { other: ib as u16 }, Reason::Robot { other: ia as u16 });
        let pair_a = |f: &Find| (link(ia, f.link_a), link(ib, f.link_b));
        let pair_b = |f: &Find| (link(ib, f.link_b), link(ia, f.link_a));
        // The least gap as found (what the robots' clearances report); only
        // a refined gap within the margin is a conflict (`first_a`, `first_b`).
        let f = &self.best;
        let never = f32::NEG_INFINITY;
        arms[ia].scratch.track.found(f.gap_m, f.sample_a, pair_a(f), ra, never);
        arms[ib].scratch.track.found(f.gap_m, f.sample_b, pair_b(f), rb, never);
        arms[ia].scratch.track.found_class(2, f.gap_m, pair_a(f));
        arms[ib].scratch.track.found_class(2, f.gap_m, pair_b(f));
        if self.first_a.sample_a != usize::MAX {
            let f = &self.first_a;
            arms[ia].scratch.track.found(f.gap_m, f.sample_a, pair_a(f), ra, margin_m);
            let f = &self.first_b;
            arms[ib].scratch.track.found(f.gap_m, f.sample_b, pair_b(f), rb, margin_m);
        }
    }
}

/// Escaping, a pair's links close in where their shapes come within the
/// margin at a later sample, nearer than now (`[now, later]`).
#[inline]
fn closes([now, later]: [f32; 2], margin_m: f32) -> bool {
    later <= margin_m && (later < now || now.is_nan())
}

/// The share of the clearance margin a robot on plan may come nearer by
/// when it leaves its plan between two cycles (its departure bound,
/// [`forecast::along::departure`], beyond this share still counts): two
/// robots leaving theirs at once still do not touch.
pub const DEPARTURE_MARGIN_SHARE: f32 = 0.5;

/// A gap found between link `la` of robot a at its sample `ka` and link
/// `lb` of b at `kb`, refined: of each robot's inflation, the steps' part
/// only as far as those samples' own steps need it
/// ([`ArmScratch::step_share`]), and its departure bound's part only
/// beyond [`DEPARTURE_MARGIN_SHARE`] of the margin.
///
/// Also the inflation both still need there (the allowance the exact
/// refinement keeps: [`super::exact_pairs`]).
#[inline]
fn refined(
    a: &ArmScratch,
    b: &ArmScratch,
    gap: f32,
    (la, ka): (u32, usize),
    (lb, kb): (u32, usize),
    margin: f32,
) -> (f32, f32) {
    let (back_a, back_b) = (given_back(a, la, ka, margin), given_back(b, lb, kb, margin));
    let e = a.posed.link_inflation[la as usize] as f32 + b.posed.link_inflation[lb as usize] as f32;
    (gap + back_a + back_b, (e - back_a - back_b).max(0.0))
}

/// Of link `l`'s inflation at sample `k`, what a refined check gives back
/// ([`refined`]): the steps' part beyond what that sample's own steps need
/// ([`ArmScratch::step_share`]), and the departure bound's part within
/// [`DEPARTURE_MARGIN_SHARE`] of the margin.
#[inline]
pub(super) fn given_back(s: &ArmScratch, l: u32, k: usize, margin: f32) -> f32 {
    let (e, d) = (s.posed.link_inflation[l as usize] as f32, s.posed.link_departure[l as usize]);
    (1.0 - s.posed.step_share[k]) * (e - d).max(0.0) + d.min(DEPARTURE_MARGIN_SHARE * margin)
}

/// A sphere pair's gap within the margin, refined ([`refined`]), and where
/// still within it, by the two links' exact shapes ([`super::exact_pairs`]);
/// beside it the shapes' distance (the refined gap where not measured).
/// (A stopped robot is still held by the spheres' gap within the release
/// margin: released by the refined one, it would be stopped again by the
/// next look as it starts, a flip per approach.)
#[inline]
fn refined_exact(
    exact: &mut ExactFrames,
    arms: &[Arm],
    gap: f32,
    (ia, la, ka): (usize, u32, usize),
    (ib, lb, kb): (usize, u32, usize),
    margin: f32,
    (first, watch): (Option<(usize, usize)>, bool),
) -> [f32; 2] {
    let (fine, allowance) = refined(&arms[ia].scratch, &arms[ib].scratch, gap, (la, ka), (lb, kb), margin);
    if fine > margin {
        return [fine; 2];
    }
    if first.is_some_and(|(fa, fb)| ka > fa && kb > fb) {
        // Later on both paths than a conflict already found: it cannot
        // change which sample stops either robot. Only an escape's check
        // may want the shapes' distance: put off ([`PairFinds::settle`]).
        if !watch {
            return [fine; 2];
        }
        let p = Pending { la, lb, ka: ka as u32, kb: kb as u32, fine };
        if u32::try_from(ka.max(kb)).is_ok() && exact.defer(p) {
            return [fine, f32::INFINITY];
        }
    }
    let (a, b) = (At::of(&arms[ia], ia, la, ka), At::of(&arms[ib], ib, lb, kb));
    exact.refine(a, b, fine, allowance, margin)
}

/// True when a sphere reaches within `grow` of a box (min x, y, z, then max).
#[inline]
fn near(bx: &[f32; 6], [x, y, z]: [f32; 3], r: f32, grow: f32) -> bool {
    x + r >= bx[0] - grow
        && x - r <= bx[3] + grow
        && y + r >= bx[1] - grow
        && y - r <= bx[4] + grow
        && z + r >= bx[2] - grow
        && z - r <= bx[5] + grow
}

/// Deposits robot `a`'s sampled spheres of the links in `meets` that come
/// within `grow` of the other robot's box `within`, labelled by their
/// place in `a`'s batches.
fn deposit(hash: &mut SpatialHash, a: &Arm, meets: &[bool], within: &[f32; 6], grow: f32) {
    let slots = a.model.slots;
    for bi in 0..a.scratch.forecast.n_cfg.div_ceil(BATCH) {
        let batch = &a.scratch.posed.batches[bi];
        for sl in 0..slots {
            if !meets[batch.link[sl] as usize] {
                continue;
            }
            let r = a.scratch.posed.inflated_r[sl];
            for lane in 0..BATCH {
                let i = sl * BATCH + lane;
                let at = [batch.x[i], batch.y[i], batch.z[i]];
                if bi * BATCH + lane < a.scratch.forecast.n_cfg && near(within, at, r, grow) {
                    hash.insert(at[0], at[1], at[2], r, ((bi * slots + sl) * BATCH + lane) as u32);
                }
            }
        }
    }
}

impl ArmForecast {
    /// The times sample `k` of the stopping path stands for, absolute, s:
    /// when the robot can be anywhere from sample `k − 1` to `k + 1` (the
    /// robot between two samples is within the inflation of one of them),
    /// had every robot been told to stop this cycle or the next. Open at
    /// both ends for a robot standing (or warming up).
    #[inline]
    pub(super) fn window(&self, k: usize) -> (f64, f64) {
        if self.n_cfg <= 1 { (f64::NEG_INFINITY, f64::INFINITY) } else { self.windows[k] }
    }
}

/// What the robot-vs-robot check reads besides the arms: the hash it
/// fills per pair of robots, and which links of one can meet the other.
pub(super) struct RobotCheck {
    pub(super) hash: SpatialHash,
    /// For robots `a`, `b` at `a * n + b`: per link of `a`, whether some
    /// link of `b` is checked against it (only those enter the hash).
    pub(super) meets: Vec<Vec<bool>>,
    /// Largest sphere of `a` among those links, at `a * n + b` (0: none).
    pub(super) meet_r: Vec<f32>,
    /// Robot-vs-robot by all pairs instead of the hash (benchmark baseline).
    pub(super) all_pairs: bool,
    /// Robot-vs-robot compares only samples at overlapping times (off by
    /// default: see [`Guard::set_time_matched`]).
    pub(super) time_matched: bool,
}

impl RobotCheck {
    /// The check of `arms` as the collision matrix pairs their links, with
    /// a hash of room for `max_items` spheres in cells of `base_cell_m`.
    pub(super) fn new(arms: &[Arm], matrix: &CollisionMatrix, max_items: usize, base_cell_m: f32) -> RobotCheck {
        let mut meets_all = Vec::new();
        let mut meet_r = Vec::new();
        for (ia, a) in arms.iter().enumerate() {
            for (ib, b) in arms.iter().enumerate() {
                let meets: Vec<bool> = (0..a.model.n_links)
                    .map(|la| {
                        ia != ib
                            && (0..b.model.n_links).any(|lb| {
                                matrix.class(matrix.global(ia, la), matrix.global(ib, lb)) == PairClass::Sometimes
                            })
                    })
                    .collect();
                let batch = &a.scratch.posed.batches[0];
                let r = (0..a.model.slots)
                    .filter(|&s| meets[batch.link[s] as usize])
                    .map(|s| batch.r[s])
                    .fold(0.0, f32::max);
                meets_all.push(meets);
                meet_r.push(r);
            }
        }
        RobotCheck {
            hash: SpatialHash::new(max_items.max(1), base_cell_m.max(1e-3)),
            meets: meets_all,
            meet_r,
            all_pairs: false,
            time_matched: true,
        }
    }
}

with_avx2!(pub(super) stage fn check_robots = check_robots_avx2_fma / check_robots_impl(
    robots: &mut RobotCheck,
    arms: &mut [Arm],
    checked: Checked<'_>,
    exact: &mut ExactFrames,
    lim: Limits,
    part: Part
));

/// Every pair of arms `part` covers: the one's sampled spheres against the
/// other's through the hash (or by all pairs, the baseline), compared
/// where their times overlap, noted in both tracks.
#[inline(always)]
fn check_robots_impl(
    robots: &mut RobotCheck,
    arms: &mut [Arm],
    checked: Checked<'_>,
    exact: &mut ExactFrames,
    lim: Limits,
    part: Part,
) {
    let margin = lim.margin;
    let n = arms.len();
    exact.forget();
    for ia in 0..n {
        for ib in (ia + 1)..n {
            let (a, b) = (&arms[ia], &arms[ib]);
            if a.scratch.forecast.n_cfg == 0 || b.scratch.forecast.n_cfg == 0 || !part.pair(ia, ib) {
                continue;
            }
            let Some((stop_reach, reach, grow)) = pair_reach(arms, ia, ib, lim) else { continue };
            if robots.all_pairs {
                robots_all_pairs(arms, checked, exact, robots.time_matched, (ia, ib), (stop_reach, reach), margin);
                continue;
            }
            check_pair(robots, arms, checked, exact, (ia, ib), (stop_reach, reach, grow), margin);
        }
    }
}

/// Arms `ia` and `ib` through the hash: `ia`'s spheres near `ib`'s box are
/// deposited, `ib`'s spheres near `ia`'s box looked up there; a pair of
/// samples counts where their times overlap.
#[inline(always)]
fn check_pair(
    robots: &mut RobotCheck,
    arms: &mut [Arm],
    checked: Checked<'_>,
    exact: &mut ExactFrames,
    (ia, ib): (usize, usize),
    (stop_reach, reach, grow): (f32, f32, f32),
    margin: f32,
) {
    let n = arms.len();
    let (a, b) = (&arms[ia], &arms[ib]);
    // Deposit a's spheres near b's box, then look up b's spheres near a's box.
    // Only links that can meet the other robot enter; the cell
    // edge covers the largest of them, inflated, plus the threshold.
    let (ra, rb) = (robots.meet_r[ia * n + ib], robots.meet_r[ib * n + ia]);
    if ra <= 0.0 || rb <= 0.0 {
        return;
    }
    robots.hash.set_cell_m(ra + rb + a.scratch.posed.inflate + b.scratch.posed.inflate + reach);
    let (meets_a, meets_b) = (&robots.meets[ia * n + ib], &robots.meets[ib * n + ia]);
    robots.hash.clear();
    let slots_a = a.model.slots;
    deposit(&mut robots.hash, a, meets_a, &b.scratch.posed.bounds, grow);
    if robots.hash.is_empty() {
        return;
    }
    let (sealed, mut finds) = (robots.hash.seal(), PairFinds::new(arms, ia, ib, stop_reach));
    for bi in 0..b.scratch.forecast.n_cfg.div_ceil(BATCH) {
        let batch = &b.scratch.posed.batches[bi];
        for sl in 0..b.model.slots {
            let lb = batch.link[sl];
            if !meets_b[lb as usize] {
                continue;
            }
            let gb = checked.matrix.global(ib, lb as usize);
            for lane in 0..BATCH {
                let kb = bi * BATCH + lane;
                let (lo_b, hi_b) = if robots.time_matched {
                    b.scratch.forecast.window(kb)
                } else {
                    (f64::NEG_INFINITY, f64::INFINITY)
                };
                let i = sl * BATCH + lane;
                let at = [batch.x[i], batch.y[i], batch.z[i]];
                if kb >= b.scratch.forecast.n_cfg
                    || !near(&a.scratch.posed.bounds, at, b.scratch.posed.inflated_r[sl], grow)
                {
                    continue;
                }
                let (arms, matrix, allowed) = (&*arms, checked.matrix, checked.allowed);
                let exact = &mut *exact;
                sealed.for_each_near(at[0], at[1], at[2], b.scratch.posed.inflated_r[sl], reach, |label, gap| {
                    let lane_a = label as usize % BATCH;
                    let rest = label as usize / BATCH;
                    let (bia, sla) = (rest / slots_a, rest % slots_a);
                    let ka = bia * BATCH + lane_a;
                    let (lo_a, hi_a) = arms[ia].scratch.forecast.window(ka);
                    if lo_a > hi_b || lo_b > hi_a {
                        return; // never there at the same time
                    }
                    let la = arms[ia].scratch.posed.batches[bia].link[sla];
                    let ga = matrix.global(ia, la as usize);
                    let nl = matrix.total_links();
                    let bit = ga * nl + gb;
                    if allowed[bit / 64] >> (bit % 64) & 1 == 1 || matrix.class(ga, gb) != PairClass::Sometimes {
                        return;
                    }
                    // (refined ≥ found: only one within the margin needs it)
                    let fine = if gap <= margin {
                        refined_exact(exact, arms, gap, (ia, la, ka), (ib, lb, kb), margin, finds.cut())
                    } else {
                        [gap; 2]
                    };
                    finds.add(Find { gap_m: gap, link_a: la, link_b: lb, sample_a: ka, sample_b: kb }, fine, margin);
                });
            }
        }
    }
    finds.settle(exact, arms, (ia, ib), margin).apply(arms, ia, ib, margin);
}

/// How far robots `ia` and `ib` are looked at: gaps within the stop's
/// reach (the release margin, or the clearance margin if larger), and
/// within the slow-down distance for what each robot's stopping path
/// approaches, where the other may slow either ([`Guard::slowed_by`]);
/// and how far their boxes are grown for it. `None` where their boxes
/// are farther apart than that; where they are within the stop's reach,
/// both are marked near a robot.
fn pair_reach(arms: &mut [Arm], ia: usize, ib: usize, lim: Limits) -> Option<(f32, f32, f32)> {
    let (margin, release) = (lim.margin, lim.release);
    let stop_reach = release.max(margin);
    let slows = arms[ia].scratch.look.slowed[1] || arms[ib].scratch.look.slowed[1];
    let reach = if slows { stop_reach.max(margin + lim.slow_down) } else { stop_reach };
    let (a, b) = (&arms[ia].scratch.posed, &arms[ib].scratch.posed);
    let grown = |reach: f32| {
        let grow = reach + a.inflate + b.inflate;
        (0..3).all(|c| a.bounds[c] - b.bounds[3 + c] <= grow && b.bounds[c] - a.bounds[3 + c] <= grow)
    };
    let (near_slow, near_stop) = (grown(reach), grown(stop_reach));
    let grow = reach + a.inflate + b.inflate;
    if !near_slow {
        return None;
    }
    if near_stop {
        arms[ia].scratch.track.robot_near = true;
        arms[ib].scratch.track.robot_near = true;
    }
    Some((stop_reach, reach, grow))
}

/// The baseline: every sphere of `ia`'s samples against every sphere of `ib`'s.
fn robots_all_pairs(
    arms: &mut [Arm],
    checked: Checked<'_>,
    exact: &mut ExactFrames,
    time_matched: bool,
    (ia, ib): (usize, usize),
    (stop_reach, reach): (f32, f32),
    margin: f32,
) {
    let (a, b) = (&arms[ia], &arms[ib]);
    let nl = checked.matrix.total_links();
    let mut finds = PairFinds::new(arms, ia, ib, stop_reach);
    for bia in 0..a.scratch.forecast.n_cfg.div_ceil(BATCH) {
        let batch_a = &a.scratch.posed.batches[bia];
        for sa in 0..a.model.slots {
            let ga = checked.matrix.global(ia, batch_a.link[sa] as usize);
            for bib in 0..b.scratch.forecast.n_cfg.div_ceil(BATCH) {
                let batch_b = &b.scratch.posed.batches[bib];
                for sb in 0..b.model.slots {
                    let gb = checked.matrix.global(ib, batch_b.link[sb] as usize);
                    let bit = ga * nl + gb;
                    if checked.allowed[bit / 64] >> (bit % 64) & 1 == 1
                        || checked.matrix.class(ga, gb) != PairClass::Sometimes
                    {
                        continue;
                    }
                    for la in 0..BATCH {
                        let ka = bia * BATCH + la;
                        if ka >= a.scratch.forecast.n_cfg {
                            break;
                        }
                        let (lo_a, hi_a) = a.scratch.forecast.window(ka);
                        let i = sa * BATCH + la;
                        for lb in 0..BATCH {
                            let kb = bib * BATCH + lb;
                            if kb >= b.scratch.forecast.n_cfg {
                                break;
                            }
                            let (lo_b, hi_b) = b.scratch.forecast.window(kb);
                            if time_matched && (lo_a > hi_b || lo_b > hi_a) {
                                continue;
                            }
                            let j = sb * BATCH + lb;
                            let (dx, dy, dz) =
                                (batch_a.x[i] - batch_b.x[j], batch_a.y[i] - batch_b.y[j], batch_a.z[i] - batch_b.z[j]);
                            let g = (dx * dx + dy * dy + dz * dz).sqrt()
                                - a.scratch.posed.inflated_r[sa]
                                - b.scratch.posed.inflated_r[sb];
                            if g > reach {
                                continue;
                            }
                            let (la, lb) = (batch_a.link[sa], batch_b.link[sb]);
                            let fine = if g <= margin {
                                refined_exact(exact, arms, g, (ia, la, ka), (ib, lb, kb), margin, finds.cut())
                            } else {
                                [g; 2]
                            };
                            finds.add(
                                Find {
                                    gap_m: g,
                                    link_a: batch_a.link[sa],
                                    link_b: batch_b.link[sb],
                                    sample_a: ka,
                                    sample_b: kb,
                                },
                                fine,
                                margin,
                            );
                        }
                    }
                }
            }
        }
    }
    finds.settle(exact, arms, (ia, ib), margin).apply(arms, ia, ib, margin);
}
