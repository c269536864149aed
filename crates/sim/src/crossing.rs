//! Crossing episodes: arms whose plans cross through a shared zone, taking
//! turns by their grants, beside references for the same plans.
//!
//! Each arm shuttles between two rest configurations A and B (A → B → A
//! …, one plan per leg, `SimOptions::goals` legs). An episode is drawn
//! so that
//! - every leg is what a planner for the static cell would give (both
//!   rests and the straight path between them clear of the cell and the
//!   arm itself by the release margin, the field's voxel diagonal and the
//!   clearance margin, [`Sim::clear_goal`]);
//! - every arm's rests lie outside every other arm's sweep (grown by the
//!   release margin, a voxel's diagonal and 3 cm): the shared zone is only
//!   passed through, never parked in, so any order of turns can finish;
//! - every arm's sweep meets another's (each arm has someone to take
//!   turns with), and two arms meet at the same time on their first legs
//!   set off together: unguarded, they would collide.
//!
//! Sweeps are sets of 4 cm voxels touched by the arm's spheres, posed every
//! 10 ms of plan time. The **shared zone** is the box around the voxels two
//! arms' sweeps share (an interlock zone as robot controllers define one).
//!
//! References, for the same legs:
//! - **unguarded**: every arm follows its plans at full pace, nobody waits
//!   (the ideal makespan; the arms would collide);
//! - **one at a time** ([`one_at_a_time`]): one mutex for the whole shared
//!   zone, as robot programs interlock a zone today: an arm asks for the
//!   zone before a move that enters it, waits until it is free, and gives
//!   it back when the move ends (a point-to-point move cannot wait half
//!   way);
//! - **one at a time, split at the zone's edge** (optimistic): the zone is
//!   only the shared voxels, held from an arm's first to its last sample in
//!   them; it stops and starts at the edge instantly (no braking before
//!   it, no acceleration after).
//!
//! The guarded run obeys its grants (speed scaling, never past a grant's
//! end, retreats) and its stops, under the oracle of [`crate::arms`]; an
//! episode not finished within its bound (twice the one-at-a-time
//! makespan, plus 2 s) counts as a deadlock.

use workcell_guard_core::forecast::track::JointPlan;
use workcell_guard_core::model::coverage::Rng;

use crate::arms::{Sim, SimReport};
use crate::motion::{SimArm, straight_plan};

/// Voxel edge of the sweeps, m.
const VOXEL_M: f64 = 0.04;
/// Plan time between a sweep's samples, s.
const SAMPLE_S: f64 = 0.01;
/// Candidate legs drawn per arm.
const CANDIDATES: usize = 24;

/// The deadlock bound of a crossing episode: twice the one-at-a-time
/// makespan plus 2 s.
pub fn deadlock_bound_s(one_at_a_time_s: f64) -> f64 {
    2.0 * one_at_a_time_s + 2.0
}

/// A voxel's key (indices offset to be positive, 21 bits each).
fn key(ix: i64, iy: i64, iz: i64) -> u64 {
    let o = 1 << 20;
    (((ix + o) as u64) << 42) | (((iy + o) as u64) << 21) | ((iz + o) as u64)
}

/// Marks of the voxels one list already holds, for voxel indices within
/// ±`STAMP_HALF` on each axis (±2.56 m; voxels beyond are listed as often
/// as they are met, and the list's sort and dedup remove the repeats):
/// neighbouring spheres of a link share most of their voxels. One bit per
/// voxel (256 KiB), cleared by the list's owner when it is done.
#[derive(Default)]
pub(crate) struct Stamps {
    /// One bit per voxel; allocated at first use.
    bits: Vec<u64>,
}

const STAMP_HALF: i64 = 64;

impl Stamps {
    /// The voxel's bit, `None` out of range.
    fn at(i: [i64; 3]) -> Option<usize> {
        let side = 2 * STAMP_HALF;
        if i.iter().any(|&v| !(-STAMP_HALF..STAMP_HALF).contains(&v)) {
            return None;
        }
        Some((((i[0] + STAMP_HALF) * side + i[1] + STAMP_HALF) * side + i[2] + STAMP_HALF) as usize)
    }

    /// True when the voxel was not yet marked (it is now).
    fn take(&mut self, i: [i64; 3]) -> bool {
        let Some(at) = Self::at(i) else { return true };
        if self.bits.is_empty() {
            self.bits = vec![0; (2 * STAMP_HALF as usize).pow(3) / 64];
        }
        let (w, b) = (at / 64, 1u64 << (at % 64));
        let fresh = self.bits[w] & b == 0;
        self.bits[w] |= b;
        fresh
    }

    /// Unmarks `keys`: the next list starts empty.
    fn clear(&mut self, keys: &[u64]) {
        for &k in keys {
            if let Some(at) = Self::at(unkey(k)) {
                self.bits[at / 64] &= !(1u64 << (at % 64));
            }
        }
    }
}

/// True when two sorted voxel lists share one.
fn meet(a: &[u64], b: &[u64]) -> bool {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => return true,
        }
    }
    false
}

/// One arm's leg from A to B, and what it sweeps.
struct Leg {
    a: Vec<f64>,
    b: Vec<f64>,
    plan: JointPlan,
    /// Voxels swept (sorted).
    sweep: Vec<u64>,
    /// Per sample, its plan time and voxels (sorted).
    samples: Vec<(f64, Vec<u64>)>,
    /// Voxels of A and B grown by the release margin and a voxel (sorted).
    rests: Vec<u64>,
}

/// A leg of the one-at-a-time reference: its length and zone window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ZoneLeg {
    /// Plan length, s.
    pub duration_s: f64,
    /// Plan times at which it enters and leaves the shared zone.
    pub window: Option<(f64, f64)>,
}

/// The makespan when one arm at a time holds the whole shared zone: each
/// arm runs its legs in turn; at a leg's window it waits until the zone is
/// free (first come, first served; at the same instant the higher
/// `priority`), holds it to the window's end. Time steps of `dt_s`.
pub fn one_at_a_time(legs: &[Vec<ZoneLeg>], priority: &[i64], dt_s: f64) -> f64 {
    let n = legs.len();
    let (mut leg, mut s) = (vec![0usize; n], vec![0.0f64; n]);
    let mut waiting_since: Vec<Option<f64>> = vec![None; n];
    let mut holder: Option<usize> = None;
    let mut t = 0.0;
    let total: f64 = legs.iter().flatten().map(|l| l.duration_s).sum();
    while (0..n).any(|r| leg[r] < legs[r].len()) && t < 10.0 * total + 10.0 {
        // Who waits at a window's start: the earliest, then the highest.
        if holder.is_none() {
            holder = (0..n)
                .filter_map(|r| waiting_since[r].map(|w| (r, w)))
                .min_by(|a, b| a.1.total_cmp(&b.1).then(priority[b.0].cmp(&priority[a.0])))
                .map(|(r, _)| r);
            if let Some(r) = holder {
                waiting_since[r] = None;
            }
        }
        for r in 0..n {
            let Some(l) = legs[r].get(leg[r]) else { continue };
            if waiting_since[r].is_some() {
                continue;
            }
            let mut next = s[r] + dt_s;
            if let Some((tin, tout)) = l.window {
                if holder != Some(r) && s[r] <= tin && next >= tin {
                    // At the zone's edge: wait unless it is free now.
                    next = tin;
                    waiting_since[r] = Some(t);
                }
                if holder == Some(r) && next >= tout {
                    holder = None;
                }
            }
            s[r] = next;
            if s[r] >= l.duration_s {
                leg[r] += 1;
                s[r] = 0.0;
            }
        }
        t += dt_s;
    }
    t
}

/// A voxel key's indices.
fn unkey(k: u64) -> [i64; 3] {
    let (o, m) = (1i64 << 20, (1u64 << 21) - 1);
    [((k >> 42) & m) as i64 - o, ((k >> 21) & m) as i64 - o, (k & m) as i64 - o]
}

/// The voxels two or more legs sweep (sorted).
fn shared_voxels(legs: &[&Leg]) -> Vec<u64> {
    let mut all: Vec<u64> = legs.iter().flat_map(|l| l.sweep.iter().copied()).collect();
    all.sort_unstable();
    let mut out: Vec<u64> = all.windows(2).filter(|w| w[0] == w[1]).map(|w| w[0]).collect();
    out.dedup();
    out
}

/// The box of voxel indices around `voxels` (empty: an empty box).
fn voxel_box(voxels: &[u64]) -> ([i64; 3], [i64; 3]) {
    let (mut lo, mut hi) = ([i64::MAX; 3], [i64::MIN; 3]);
    for &k in voxels {
        let i = unkey(k);
        for c in 0..3 {
            lo[c] = lo[c].min(i[c]);
            hi[c] = hi[c].max(i[c]);
        }
    }
    (lo, hi)
}

fn in_box(k: u64, lo: [i64; 3], hi: [i64; 3]) -> bool {
    let i = unkey(k);
    (0..3).all(|c| lo[c] <= i[c] && i[c] <= hi[c])
}

/// A leg's zone windows over `goals` legs (there and back): from its first
/// to its last sample `inside` the zone.
fn zone_legs(l: &Leg, goals: usize, inside: &dyn Fn(&[u64]) -> bool) -> Vec<ZoneLeg> {
    let times: Vec<f64> = l.samples.iter().filter(|(_, v)| inside(v)).map(|(t, _)| *t).collect();
    let d = l.plan.duration_s();
    let window = match (times.first(), times.last()) {
        (Some(&a), Some(&b)) => Some(((a - SAMPLE_S).max(0.0), (b + SAMPLE_S).min(d))),
        _ => None,
    };
    let back = window.map(|(a, b)| (d - b, d - a));
    (0..goals).map(|k| ZoneLeg { duration_s: d, window: if k % 2 == 0 { window } else { back } }).collect()
}

impl Sim {
    /// The voxels of arm `r`'s spheres at `q`, grown by `grow`, added to
    /// `out` (each once, unless far out: see [`Stamps`]).
    fn voxels_at(&mut self, r: usize, q: &[f64], grow: f64, out: &mut Vec<u64>) {
        self.posers[r].pose(q, &mut self.posed[r]).expect("sized by the poser");
        let start = out.len();
        let p = &self.posed[r];
        for i in 0..p.len() {
            let c = [f64::from(p.x[i]), f64::from(p.y[i]), f64::from(p.z[i])];
            let rad = f64::from(p.r[i]) + grow;
            let lo: [i64; 3] = std::array::from_fn(|k| ((c[k] - rad) / VOXEL_M).floor() as i64);
            let hi: [i64; 3] = std::array::from_fn(|k| ((c[k] + rad) / VOXEL_M).floor() as i64);
            // Squared distance from the centre to a voxel's slab along one axis.
            let gap2 = |i: i64, v: f64| {
                let d = (i as f64 * VOXEL_M - v).max(v - (i + 1) as f64 * VOXEL_M).max(0.0);
                d * d
            };
            let r2 = rad * rad;
            for ix in lo[0]..=hi[0] {
                let dx = gap2(ix, c[0]);
                for iy in lo[1]..=hi[1] {
                    let dxy = dx + gap2(iy, c[1]);
                    if dxy > r2 {
                        continue;
                    }
                    for iz in lo[2]..=hi[2] {
                        if dxy + gap2(iz, c[2]) <= r2 && self.stamps.take([ix, iy, iz]) {
                            out.push(key(ix, iy, iz));
                        }
                    }
                }
            }
        }
        self.stamps.clear(&out[start..]);
    }

    /// A leg of arm `r` from a random rest A to a random rest B, with its
    /// plan and sweeps; `None` when no clear one was found.
    fn draw_leg(&mut self, r: usize, rng: &mut Rng) -> Option<Leg> {
        // Clear by what the guard can tell from its field: the release
        // margin, a voxel's diagonal (the field's error) and the clearance
        // margin. A plan passing closer to the cell is stopped there by the
        // cell check and, standing within the release margin as the field
        // sees it, never released (two such stalls in 1,000 episodes).
        let (m, g) = (&self.cell.margins, &self.cell.voxel_grid);
        let clear = m.release_m + g.resolution_m * 3f64.sqrt() + m.clearance_m;
        let a = self.clear_q(r, clear, rng)?;
        let b = self.clear_goal(r, &a, clear, rng)?;
        let plan = straight_plan(&a, &b, &self.vmax[r], &self.cell.manipulators[r].max_decel)?;
        let (mut q, mut samples, mut sweep) = (vec![0.0; a.len()], Vec::new(), Vec::new());
        let n = (plan.duration_s() / SAMPLE_S).ceil() as usize;
        for k in 0..=n {
            let t = (k as f64 * SAMPLE_S).min(plan.duration_s());
            plan.at_time(t, &mut q);
            let mut v = Vec::new();
            self.voxels_at(r, &q, 0.0, &mut v);
            v.sort_unstable();
            v.dedup();
            samples.push((t, v));
        }
        // Neighbouring samples share most voxels: each once in the sweep.
        for (_, v) in &samples {
            sweep.extend(v.iter().copied().filter(|&k| self.stamps.take(unkey(k))));
        }
        self.stamps.clear(&sweep);
        sweep.sort_unstable();
        sweep.dedup();
        let mut rests = Vec::new();
        // Two spheres in neighbouring voxels may touch, and the arm moves
        // up to a few centimetres between samples.
        let grow = self.cell.margins.release_m + VOXEL_M * 3f64.sqrt() + 0.03;
        self.voxels_at(r, &a, grow, &mut rests);
        self.voxels_at(r, &b, grow, &mut rests);
        rests.sort_unstable();
        rests.dedup();
        Some(Leg { a, b, plan, sweep, samples, rests })
    }

    /// Picks one candidate leg per arm: rests outside the others' sweeps,
    /// every sweep meeting another's, and two arms meeting where both are
    /// at the same time when all set off together (unguarded, they would
    /// collide). Indices into `cands`, the first such combination from a
    /// random one on.
    fn pick(cands: &[Vec<Leg>], rng: &mut Rng) -> Option<Vec<usize>> {
        let n = cands.len();
        // Per pair of arms and candidates: whether they fit, and whether they meet.
        let mut fits = std::collections::HashMap::new();
        for r in 0..n {
            for s in (r + 1)..n {
                for (i, x) in cands[r].iter().enumerate() {
                    for (j, y) in cands[s].iter().enumerate() {
                        let fit = !meet(&x.rests, &y.sweep) && !meet(&y.rests, &x.sweep);
                        let share = fit && meet(&x.sweep, &y.sweep);
                        let collide = share && x.samples.iter().zip(&y.samples).any(|((_, a), (_, b))| meet(a, b));
                        fits.insert((r, i, s, j), (fit, share, collide));
                    }
                }
            }
        }
        let get = |r: usize, i: usize, s: usize, j: usize| {
            if r < s { fits[&(r, i, s, j)] } else { fits[&(s, j, r, i)] }
        };
        let combos: usize = cands.iter().map(Vec::len).product();
        let first = ((rng.unit() * combos as f64) as usize).min(combos - 1);
        for c in 0..combos {
            let mut code = (first + c) % combos;
            let pick: Vec<usize> = cands
                .iter()
                .map(|l| {
                    let i = code % l.len();
                    code /= l.len();
                    i
                })
                .collect();
            let ok = (0..n).all(|r| (0..n).all(|s| s == r || get(r, pick[r], s, pick[s]).0))
                && (0..n).all(|r| (0..n).any(|s| s != r && get(r, pick[r], s, pick[s]).1))
                && (0..n).any(|r| (0..n).any(|s| s != r && get(r, pick[r], s, pick[s]).2));
            if ok {
                return Some(pick);
            }
        }
        None
    }

    /// Runs one crossing episode with `seed` (see the module's text):
    /// skipped when no crossing set of legs is found.
    pub fn crossing_episode(&mut self, seed: u64) -> SimReport {
        let mut rep = SimReport { episodes: 1, min_clearance_m: f64::INFINITY, ..Default::default() };
        let mut rng = Rng::new(seed);
        let n = self.cell.manipulators.len();
        let mut cands: Vec<Vec<Leg>> = Vec::with_capacity(n);
        for r in 0..n {
            let legs: Vec<Leg> = (0..CANDIDATES).filter_map(|_| self.draw_leg(r, &mut rng)).collect();
            cands.push(legs);
        }
        let picked = if cands.iter().all(|c| !c.is_empty()) { Self::pick(&cands, &mut rng) } else { None };
        let Some(picked) = picked else {
            rep.skipped = 1;
            rep.episodes = 0;
            return rep;
        };
        let legs: Vec<&Leg> = picked.iter().enumerate().map(|(r, &i)| &cands[r][i]).collect();
        let starts: Vec<SimArm> = legs.iter().map(|l| SimArm::new(l.a.clone(), Vec::new())).collect();
        if self.contacts(&starts, self.cell.margins.release_m as f32).min <= self.cell.margins.release_m {
            rep.skipped = 1;
            rep.episodes = 0;
            return rep;
        }
        // The one-at-a-time references: the box around where sweeps
        // overlap, held for every move that enters it (as robot programs
        // interlock zones); and, optimistic, the overlap itself, held only
        // while in it (moves split at its edge, stopping there instantly).
        let legs_of = |inside: &dyn Fn(&[u64]) -> bool| -> Vec<Vec<ZoneLeg>> {
            legs.iter().map(|l| zone_legs(l, self.opts.goals, inside)).collect()
        };
        let priority: Vec<i64> = self.cell.manipulators.iter().map(|m| m.priority).collect();
        let overlap = shared_voxels(&legs);
        let tight = legs_of(&|v| meet(v, &overlap));
        let (lo, hi) = voxel_box(&overlap);
        let mut boxed = legs_of(&|v| v.iter().any(|&k| in_box(k, lo, hi)));
        for l in boxed.iter_mut().flatten() {
            // A move cannot wait half way: the zone is asked for before a
            // move that enters it and given back when that move ends.
            l.window = l.window.map(|_| (0.0, l.duration_s));
        }
        let reference = one_at_a_time(&boxed, &priority, self.opts.dt_s);
        let reference_tight = one_at_a_time(&tight, &priority, self.opts.dt_s);
        let goals = self.opts.goals;
        let arms: Vec<SimArm> = legs
            .iter()
            .map(|l| {
                // Goals are taken from the back: B, A, B, … from the first.
                let goals: Vec<Vec<f64>> =
                    (0..goals).rev().map(|k| if k % 2 == 0 { l.b.clone() } else { l.a.clone() }).collect();
                SimArm::new(l.a.clone(), goals)
            })
            .collect();
        let unguarded = self.unguarded_makespan(&arms);
        self.run(&mut rep, arms, true, (unguarded, deadlock_bound_s(reference)));
        rep.list_seed(seed);
        if rep.finished > 0 {
            rep.makespan_one_at_a_time_s = reference;
            rep.makespan_one_at_a_time_tight_s = reference_tight;
        }
        rep
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leg(d: f64, w: Option<(f64, f64)>) -> ZoneLeg {
        ZoneLeg { duration_s: d, window: w }
    }

    #[test]
    fn one_at_a_time_serialises_the_zone_windows_and_nothing_else() {
        // Apart, both run at once: the longest leg.
        let apart = [vec![leg(2.0, None)], vec![leg(3.0, None)]];
        assert!((one_at_a_time(&apart, &[1, 2], 0.001) - 3.0).abs() < 0.01);
        // Both in the zone from 0.5 s to 1.5 s of their 2 s legs: the
        // higher first; the other waits at 0.5 s until 1.5 s: 3 s.
        let crossing = [vec![leg(2.0, Some((0.5, 1.5)))], vec![leg(2.0, Some((0.5, 1.5)))]];
        assert!((one_at_a_time(&crossing, &[1, 2], 0.001) - 3.0).abs() < 0.01);
        // First come, first served: the one reaching the zone first holds it.
        let early = [vec![leg(2.0, Some((0.2, 1.0)))], vec![leg(2.0, Some((0.6, 1.6)))]];
        // Arm 0 holds 0.2–1.0; arm 1 enters at 1.0 (waited 0.4 s), done at 2.4 s.
        assert!((one_at_a_time(&early, &[1, 2], 0.001) - 2.4).abs() < 0.01);
    }

    #[test]
    fn voxel_keys_give_back_their_indices_and_boxes_hold_what_they_should() {
        for i in [[0, 0, 0], [-3, 7, -1_000], [1_000, -1, 2]] {
            assert_eq!(unkey(key(i[0], i[1], i[2])), i);
        }
        let (lo, hi) = voxel_box(&[key(-1, 2, 3), key(4, -5, 6)]);
        assert_eq!((lo, hi), ([-1, -5, 3], [4, 2, 6]));
        assert!(in_box(key(0, 0, 4), lo, hi) && !in_box(key(0, 3, 4), lo, hi));
    }

    #[test]
    fn voxel_lists_meet_only_on_a_shared_voxel() {
        let a = [key(0, 0, 0), key(1, 0, 0), key(5, 5, 5)];
        assert!(meet(&a, &[key(5, 5, 5)]));
        assert!(!meet(&a, &[key(0, 0, 1), key(-1, 0, 0)]));
    }
}
