//! Exact refinement before a stop, for link pairs of two robots and of one
//! robot's own links: where the spheres put a pair of links within the
//! clearance margin, the distance between the two links' solid exact
//! shapes decides as well ([`exact::solid_link_shape`]: primitives as they
//! are, meshes as their convex hulls), posed at the same samples.
//!
//! Both the spheres' gap and the shapes' distance are lower bounds of the
//! true distance between the links (the spheres contain the geometry, the
//! hulls contain the meshes), so the larger of the two is one as well: the
//! refinement never reads a pair farther apart than it is. The shapes'
//! distance loses the same motion allowance the spheres' gap did (the
//! inflation each sample still needs for the path between samples and for
//! a departure from the plan), so a path that sweeps into the other link
//! between two samples is still within the margin.
//!
//! Only a pair the spheres put within the margin is looked at, so a cycle
//! without a conflict does no more work than before; the link frames of a
//! sample are computed once per check and reused while the next query asks
//! for the same sample. A query asks GJK only whether the shapes are within
//! the margin and the allowance, which it proves or refutes in fewer steps
//! than it takes to measure a distance; what it found is kept for the rest
//! of the check, by link pair and samples.

use super::*;

/// Link frames of a robot at one sample of its stopping path, computed on
/// demand: two slots, one per robot of a pair.
#[derive(Clone, Debug)]
pub(super) struct ExactFrames {
    frames: [Vec<Frame>; 2],
    /// (robot, sample) whose frames each slot holds (`usize::MAX`: none).
    at: [(usize, usize); 2],
    /// Exact distances computed since the guard was built (for measuring).
    pub(super) queries: u64,
    /// The distances computed in this check, direct-mapped by link pair
    /// and samples (many sphere pairs share them).
    keys: [u64; CACHE],
    dists: [Dist; CACHE],
    /// The refinement is on ([`Guard::set_exact_refinement`]).
    pub(super) on: bool,
    /// Pairs whose shapes' distance only an escape's check may want,
    /// measured after the pair's sphere pairs are all seen and only as far
    /// as that check is not yet decided ([`ExactFrames::defer`]).
    pub(super) pending: Vec<Pending>,
}

/// A cached shapes' distance: measured, proved beyond a cutoff, or none
/// (a pair parry3d does not support).
#[derive(Clone, Copy, Debug)]
enum Dist {
    At(f32),
    Beyond(f32),
    Unknown,
}

/// A link pair's refinement put off ([`ExactFrames::defer`]): the links,
/// their samples, and the sphere pair's refined gap.
#[derive(Clone, Copy, Debug)]
pub(super) struct Pending {
    pub(super) la: u32,
    pub(super) lb: u32,
    pub(super) ka: u32,
    pub(super) kb: u32,
    pub(super) fine: f32,
}

/// Room for deferred refinements per robot pair; past it they are
/// measured at once, as before.
const PENDING: usize = 4096;

const NONE: (usize, usize) = (usize::MAX, usize::MAX);

/// Entries of the distance cache.
const CACHE: usize = 2048;

/// The cache's key for a pair of links at their samples.
fn key(a: &At<'_>, b: &At<'_>) -> u64 {
    let part =
        |x: &At<'_>| ((x.robot as u64 & 0xFF) << 20) | ((x.link as u64 & 0xFF) << 12) | (x.sample as u64 & 0xFFF);
    (part(a) << 28) | part(b)
}

impl ExactFrames {
    /// Buffers for robots of up to `max_links` links; the refinement on
    /// with `on`.
    pub(super) fn new(max_links: usize, on: bool) -> ExactFrames {
        ExactFrames {
            frames: [Vec::with_capacity(max_links), Vec::with_capacity(max_links)],
            at: [NONE; 2],
            queries: 0,
            keys: [u64::MAX; CACHE],
            dists: [Dist::Unknown; CACHE],
            on,
            pending: Vec::with_capacity(PENDING),
        }
    }

    /// Forgets the frames (the samples were posed again).
    pub(super) fn forget(&mut self) {
        self.at = [NONE; 2];
        self.keys.fill(u64::MAX);
        self.pending.clear();
    }

    /// Puts a refinement off (false: no room left, measure it now).
    #[inline]
    pub(super) fn defer(&mut self, p: Pending) -> bool {
        let room = self.pending.len() < self.pending.capacity();
        if room {
            self.pending.push(p);
        }
        room
    }

    /// True when [`ExactFrames::refine`] would measure the shapes of the
    /// two links (the refinement on, both with an exact shape): their
    /// distance is then at least 0 (parry3d's for touching shapes).
    #[inline]
    pub(super) fn measures(&self, a: &At<'_>, b: &At<'_>) -> bool {
        self.on
            && matches!(a.model.hulls.get(a.link), Some(Some(_)))
            && matches!(b.model.hulls.get(b.link), Some(Some(_)))
    }

    /// Poses the links of `at`'s robot at its sample into slot `slot`
    /// (kept if already there); false where the kinematics refuse.
    fn pose(&mut self, slot: usize, at: &At<'_>) -> bool {
        let key = (at.robot, at.sample);
        if self.at[slot] == key {
            return true;
        }
        let kin = at.model.poser.kinematics();
        let dof = kin.dof();
        let out = &mut self.frames[slot];
        out.clear();
        out.resize(kin.link_count(), Frame::IDENTITY);
        let Some(q) = at.path_q.get(at.sample * dof..(at.sample + 1) * dof) else { return false };
        let ok = kin.forward(q, out).is_ok();
        self.at[slot] = if ok { key } else { NONE };
        ok
    }

    /// The gap between the links `a` and `b` name (a robot's own pair: the
    /// same robot and sample), refined by their exact shapes: `gap` (the
    /// spheres'), raised to the shapes' distance less `allowance` (the
    /// motion the spheres' inflation still covers there) where that is
    /// larger; `gap` as it is where a link has no exact shape. Beside it,
    /// the shapes' distance itself (what an escape compares from sample
    /// to sample, whatever the inflation there: [`super::track::Escape`]),
    /// or `gap` where there is none.
    ///
    /// Only whether they are within the clearance margin `margin` is asked
    /// of either: where the shapes' distance is beyond it and the allowance
    /// ([`exact::distance_within`] proves that sooner than it measures),
    /// both read infinity.
    pub(super) fn refine(&mut self, a: At<'_>, b: At<'_>, gap: f32, allowance: f32, margin: f32) -> [f32; 2] {
        if !self.measures(&a, &b) {
            return [gap; 2];
        }
        let cutoff = margin + allowance;
        // Indices beyond the key's fields (a robot of more than 255 links,
        // say) are not cached: two pairs must never share a key.
        let fits = |x: &At<'_>| x.robot < 256 && x.link < 256 && x.sample < 4096;
        let k = if fits(&a) && fits(&b) { key(&a, &b) } else { u64::MAX - 1 };
        let slot = (k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 53) as usize % CACHE;
        let both = |d: Dist| match d {
            Dist::Unknown => [gap; 2],
            Dist::Beyond(_) => [f32::INFINITY; 2],
            Dist::At(d) => [gap.max(d - allowance), d],
        };
        if self.keys[slot] == k {
            match self.dists[slot] {
                // Farther than a cutoff at least this one's: still beyond.
                Dist::Beyond(c) if c < cutoff => {}
                d => return both(d),
            }
        }
        let Some(d) = self.within(&a, &b, cutoff) else { return [gap; 2] };
        if k != u64::MAX - 1 {
            (self.keys[slot], self.dists[slot]) = (k, d);
        }
        both(d)
    }

    /// The shapes' distance of the links `a` and `b` name where it is at
    /// most `max`, infinity where farther; `fine` (the sphere pair's refined
    /// gap) where [`ExactFrames::refine`] would not measure it. Not cached:
    /// each pair is asked once ([`super::check_robots`]'s deferred ones).
    pub(super) fn shapes_within(&mut self, a: At<'_>, b: At<'_>, fine: f32, max: f32) -> f32 {
        match self.within(&a, &b, max) {
            Some(Dist::At(d)) => d,
            Some(Dist::Beyond(_)) => f32::INFINITY,
            Some(Dist::Unknown) | None => fine,
        }
    }

    /// Poses both links and asks parry3d whether their shapes are within
    /// `max` ([`exact::distance_within`]; `Unknown`: a pair it does not
    /// support); `None` where they are not measured (the refinement off, a
    /// link without an exact shape, kinematics refused).
    fn within(&mut self, a: &At<'_>, b: &At<'_>, max: f32) -> Option<Dist> {
        let (Some(Some(sa)), Some(Some(sb))) = (a.model.hulls.get(a.link), b.model.hulls.get(b.link)) else {
            return None;
        };
        let slot_b = usize::from((a.robot, a.sample) != (b.robot, b.sample));
        if !self.on || !self.pose(0, a) || !self.pose(slot_b, b) {
            return None;
        }
        let (Some(pa), Some(pb)) = (self.frames[0].get(a.link), self.frames[slot_b].get(b.link)) else {
            return None;
        };
        self.queries += 1;
        Some(match exact::distance_within(sa, pa, sb, pb, f64::from(max)) {
            None => Dist::Unknown,
            Some(None) => Dist::Beyond(max),
            Some(Some(d)) => Dist::At(d as f32),
        })
    }
}

/// One link of a robot at one sample of its stopping path.
pub(super) struct At<'a> {
    pub(super) model: &'a ArmModel,
    /// The robot's path configurations (sample `k` at `k * dof`).
    pub(super) path_q: &'a [f64],
    pub(super) robot: usize,
    pub(super) link: usize,
    pub(super) sample: usize,
}

impl<'a> At<'a> {
    /// Link `link` of robot `robot` (`arm`) at sample `sample`.
    pub(super) fn of(arm: &'a Arm, robot: usize, link: u32, sample: usize) -> At<'a> {
        At { model: &arm.model, path_q: &arm.scratch.forecast.path_q, robot, link: link as usize, sample }
    }
}
