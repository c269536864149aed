//! Each link's spheres in a few groups of neighbours, for the conflict
//! search: a group is covered by one of its members grown to reach every
//! other member's far side. Measured in the link's frame, so the cover
//! holds in every pose. Two groups whose covers stay apart hold no pair of
//! spheres that meet, and their members are never compared.

use crate::model::SpherePoser;

/// Added to a group's cover to absorb the `f32` rounding of posed centres
/// (a posed distance differs from the link frame's by far less), metres.
const GROUP_EPS_M: f32 = 1e-4;

/// One group of a link's spheres.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Group {
    /// The member slot whose centre is the cover's.
    pub rep: u32,
    /// The cover's radius: from `rep`'s centre to every member's far side.
    pub radius: f32,
    /// Its members are `members[start..end]`.
    pub start: u32,
    pub end: u32,
}

/// A robot's sphere groups, link by link.
#[derive(Clone, Debug, Default)]
pub(super) struct SphereGroups {
    pub groups: Vec<Group>,
    /// Member slots, group after group (the padding duplicates left out).
    pub members: Vec<u32>,
    /// Per link, the range of its groups in `groups` (empty without spheres).
    pub of_link: Vec<(u32, u32)>,
}

impl SphereGroups {
    /// Groups `poser`'s spheres: per link of n spheres, groups of about
    /// √(n/2) neighbours (measured best on the arbitration bench among
    /// fixed sizes and other roots), each gathered around the sphere
    /// farthest from the middle of those still left.
    pub fn new(poser: &SpherePoser, n_links: usize) -> SphereGroups {
        let (lx, ly, lz) = poser.local();
        let (r, _) = poser.slots();
        let centre = |s: u32| [lx[s as usize], ly[s as usize], lz[s as usize]];
        let dist =
            |a: [f32; 3], b: [f32; 3]| ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
        let mut out = SphereGroups { of_link: vec![(0, 0); n_links], ..SphereGroups::default() };
        for &(l, s0, s1) in poser.ranges() {
            let mut left: Vec<u32> = poser.model_slots().iter().copied().filter(|s| (s0..s1).contains(s)).collect();
            let size = (left.len() as f64 / 2.0).sqrt().ceil().max(1.0) as usize;
            let first = out.groups.len() as u32;
            while !left.is_empty() {
                let n = left.len() as f32;
                let mid = [0, 1, 2].map(|c| left.iter().map(|&s| centre(s)[c]).sum::<f32>() / n);
                let seed = centre(
                    *left
                        .iter()
                        .max_by(|&&a, &&b| dist(centre(a), mid).total_cmp(&dist(centre(b), mid)))
                        .unwrap_or(&left[0]),
                );
                left.sort_by(|&a, &b| dist(centre(a), seed).total_cmp(&dist(centre(b), seed)));
                let take: Vec<u32> = left.drain(..size.min(left.len())).collect();
                // The member whose cover of the others is smallest.
                let cover =
                    |m: u32| take.iter().map(|&s| dist(centre(m), centre(s)) + r[s as usize]).fold(0.0f32, f32::max);
                let (rep, radius) =
                    take.iter().map(|&m| (m, cover(m))).min_by(|a, b| a.1.total_cmp(&b.1)).unwrap_or((take[0], 0.0));
                let start = out.members.len() as u32;
                out.members.extend_from_slice(&take);
                out.groups.push(Group { rep, radius: radius + GROUP_EPS_M, start, end: out.members.len() as u32 });
            }
            out.of_link[l as usize] = (first, out.groups.len() as u32);
        }
        out
    }
}
