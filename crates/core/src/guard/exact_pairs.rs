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
//! for the same sample.

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
    dists: [f32; CACHE],
    /// The refinement is on ([`Guard::set_exact_refinement`]).
    pub(super) on: bool,
}

const NONE: (usize, usize) = (usize::MAX, usize::MAX);

/// Entries of the distance cache.
const CACHE: usize = 128;

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
            dists: [0.0; CACHE],
            on,
        }
    }

    /// Forgets the frames (the samples were posed again).
    pub(super) fn forget(&mut self) {
        self.at = [NONE; 2];
        self.keys.fill(u64::MAX);
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
    pub(super) fn refine(&mut self, a: At<'_>, b: At<'_>, gap: f32, allowance: f32) -> [f32; 2] {
        if !self.on {
            return [gap; 2];
        }
        let (Some(Some(sa)), Some(Some(sb))) = (a.model.hulls.get(a.link), b.model.hulls.get(b.link)) else {
            return [gap; 2];
        };
        // Indices beyond the key's fields (a robot of more than 255 links,
        // say) are not cached: two pairs must never share a key.
        let fits = |x: &At<'_>| x.robot < 256 && x.link < 256 && x.sample < 4096;
        let k = if fits(&a) && fits(&b) { key(&a, &b) } else { u64::MAX - 1 };
        let slot = (k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 57) as usize % CACHE;
        let both = |d: f32| if d == f32::NEG_INFINITY { [gap; 2] } else { [gap.max(d - allowance), d] };
        if self.keys[slot] == k {
            return both(self.dists[slot]);
        }
        let slot_b = usize::from((a.robot, a.sample) != (b.robot, b.sample));
        if !self.pose(0, &a) || !self.pose(slot_b, &b) {
            return [gap; 2];
        }
        let (Some(pa), Some(pb)) = (self.frames[0].get(a.link), self.frames[slot_b].get(b.link)) else {
            return [gap; 2];
        };
        self.queries += 1;
        // No distance (a pair parry3d does not support): the spheres' gap.
        let d = exact::distance(sa, pa, sb, pb).map_or(f32::NEG_INFINITY, |d| d as f32);
        if k != u64::MAX - 1 {
            (self.keys[slot], self.dists[slot]) = (k, d);
        }
        both(d)
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
