//! The automatic collision matrix: which link pairs need checking at all.
//!
//! Method text: `stopping-time-forecast.txt` ("determines automatically
//! which components have potential collisions with which other
//! components"), done the way MoveIt's setup assistant does it for one
//! robot, here also across robots:
//!
//! - **adjacent**: links of one rigid body (joined by fixed joints), or of
//!   two bodies joined by one moving joint (bodies without geometry passed
//!   through); their spheres overlap at the joint by construction; never
//!   checked.
//! - **always**: within the clearance margin (sphere level) in at least 95 %
//!   of the sampled configurations (MoveIt's threshold for "always in
//!   collision"); never checked, since checking would stop the robot almost
//!   everywhere. Within a robot only.
//! - **rigid**: within a robot, the gap is the same in every sample (to
//!   0.1 mm): nothing can bring the two closer; never checked.
//! - **default**: within a robot, in contact at its home configuration
//!   (joints at 0 or the nearest limit), such as the fingers of a closed
//!   gripper; never checked, as MoveIt's setup assistant does.
//! - **never**: across robots, only where proven by reach: the two links'
//!   reach balls about their bases are farther apart than the slack
//!   (sampling two joint spaces together is too sparse to trust). Within a
//!   robot, apart by more than the slack in every one of the sampled
//!   configurations (uniform over the joint limits), as MoveIt does.
//! - **sometimes**: everything else; checked every cycle.
//!
//! Sampling is seeded, so the result is a function of the geometry alone,
//! named by a 64-bit FNV-1a [`key`] over everything it depends on (sphere
//! sets, joints, bases, sample count, slack): the description layer caches
//! it under that key, and a changed geometry gives a new key and a
//! recomputation.

use crate::cell::Workcell;
use crate::model::coverage::Rng;
use crate::model::{JointKind, PosedSpheres, Robot, SpherePoser};

/// Version of the cached format and of the sampling method.
pub const FORMAT: u32 = 6;
/// Seed of the configuration sampler.
const SEED: u64 = 0x5EED_C011_15E0;

/// What sampling says about a link pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairClass {
    /// Checked every cycle.
    Sometimes,
    /// A link and its nearest ancestor with geometry.
    Adjacent,
    /// Within the clearance margin in at least 95 % of the samples (MoveIt's
    /// "always in collision" threshold, with the margin as contact): a
    /// check would stop the robot almost everywhere.
    Always,
    /// Apart by more than the slack in every sample (or by reach).
    Never,
    /// Within a robot, the same gap in every sample (no joint between them
    /// moves one relative to the other, or only about a symmetry axis);
    /// the pair can never come closer than it is.
    Rigid,
    /// In contact at the robot's home configuration (every joint at 0,
    /// or the limit nearest 0): fingers of a closed gripper, say. MoveIt's
    /// setup assistant disables these "default" pairs too.
    Default,
}

impl PairClass {
    /// Every class, in declaration order.
    pub const ALL: [PairClass; 6] = [
        PairClass::Sometimes,
        PairClass::Adjacent,
        PairClass::Always,
        PairClass::Never,
        PairClass::Rigid,
        PairClass::Default,
    ];

    /// The class's name in snake case (as caches and reports write it).
    pub fn name(self) -> &'static str {
        match self {
            PairClass::Sometimes => "sometimes",
            PairClass::Adjacent => "adjacent",
            PairClass::Always => "always",
            PairClass::Never => "never",
            PairClass::Rigid => "rigid",
            PairClass::Default => "default",
        }
    }

    /// The class named `name` ([`PairClass::name`]).
    pub fn from_name(name: &str) -> Option<PairClass> {
        PairClass::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// Global link numbering: robot `r`'s link `l` is `offsets[r] + l`.
#[derive(Clone, Debug)]
pub struct CollisionMatrix {
    key: u64,
    offsets: Vec<usize>,
    total: usize,
    class: Vec<PairClass>,
    min_gap: Vec<f32>,
}

struct Fnv(u64);
impl Fnv {
    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 = (self.0 ^ u64::from(x)).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn f64(&mut self, v: f64) {
        self.bytes(&v.to_bits().to_le_bytes());
    }
    fn str(&mut self, s: &str) {
        self.bytes(&(s.len() as u64).to_le_bytes());
        self.bytes(s.as_bytes());
    }
}

/// The cache key of a cell's matrix.
pub fn key(cell: &Workcell) -> u64 {
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    h.bytes(&FORMAT.to_le_bytes());
    h.bytes(&(cell.guard.matrix_samples as u64).to_le_bytes());
    h.f64(cell.guard.matrix_never_slack_m);
    h.f64(cell.margins.clearance_m);
    h.bytes(&SEED.to_le_bytes());
    for spec in &cell.manipulators {
        h.str(&spec.name);
        spec.base.to_row_major().iter().for_each(|&v| h.f64(v));
        for (l, s) in spec.robot.links.iter().zip(&spec.spheres.links) {
            h.str(&l.name);
            h.bytes(&(l.parent_joint.unwrap_or(usize::MAX) as u64).to_le_bytes());
            for sp in &s.fine {
                sp.center.iter().for_each(|&v| h.f64(v));
                h.f64(sp.radius);
            }
        }
        for j in &spec.robot.joints {
            h.str(&j.name);
            h.bytes(&[j.kind as u8]);
            h.bytes(&(j.parent as u64).to_le_bytes());
            h.bytes(&(j.child as u64).to_le_bytes());
            j.origin.to_row_major().iter().for_each(|&v| h.f64(v));
            j.axis.iter().for_each(|&v| h.f64(v));
            if let Some(l) = j.limits {
                [l.lower, l.upper].iter().for_each(|&v| h.f64(v));
            }
            h.bytes(&(j.dof.unwrap_or(usize::MAX) as u64).to_le_bytes());
            if let Some(mm) = j.mimic {
                h.bytes(&(mm.dof as u64).to_le_bytes());
                h.f64(mm.multiplier);
                h.f64(mm.offset);
            }
        }
    }
    h.0
}

/// Where each robot's links start in the global numbering, and the total.
fn link_offsets(cell: &Workcell) -> (Vec<usize>, usize) {
    let mut offsets = Vec::new();
    let mut total = 0;
    for spec in &cell.manipulators {
        offsets.push(total);
        total += spec.robot.links.len();
    }
    (offsets, total)
}

/// Sampling range of each actuated joint: its limits, or ±π for
/// unbounded rotations and ±1 m for unbounded slides.
pub fn sample_ranges(robot: &Robot) -> Vec<(f64, f64)> {
    (0..robot.dof())
        .map(|d| {
            let j = robot.dof_joint(d);
            let unbounded = if j.kind.is_rotational() { std::f64::consts::PI } else { 1.0 };
            match j.limits {
                Some(l) if l.lower.is_finite() && l.upper.is_finite() && l.lower <= l.upper => (l.lower, l.upper),
                _ => (-unbounded, unbounded),
            }
        })
        .collect()
}

/// Adjacency over rigid bodies: links joined by fixed joints form one
/// body; a body is adjacent to the nearest body above it that has
/// geometry (bodies without geometry are passed through, as MoveIt's setup
/// assistant does). `adjacent(a, b)` is then "same body or one hangs from
/// the other by a single moving joint".
fn adjacency(robot: &Robot, has: &[bool]) -> impl Fn(usize, usize) -> bool {
    let n = robot.links.len();
    let mut body = vec![0usize; n];
    for l in 1..n {
        // invariant: the loop runs over non-root links, each with its parent joint
        let j = &robot.joints[robot.links[l].parent_joint.expect("non-root links have a parent joint")];
        body[l] = if j.kind == JointKind::Fixed { body[j.parent] } else { l };
    }
    let mut body_has = vec![false; n];
    for l in 0..n {
        body_has[body[l]] |= has[l];
    }
    // The body each body hangs from, skipping bodies without geometry.
    let parent_body: Vec<Option<usize>> = (0..n)
        .map(|b| {
            let mut p = robot.parent_link(b).map(|pl| body[pl]);
            while let Some(parent) = p {
                if body_has[parent] {
                    return Some(parent);
                }
                p = robot.parent_link(parent).map(|pl| body[pl]);
            }
            None
        })
        .collect();
    move |a, b| {
        let (ba, bb) = (body[a], body[b]);
        ba == bb || parent_body[ba] == Some(bb) || parent_body[bb] == Some(ba)
    }
}

/// Farthest sphere point of each link from the robot's root origin, over
/// every configuration (chain of origin lengths plus the sphere's reach).
fn reach_from_root(robot: &Robot, poser_spheres: &crate::model::SphereModel) -> Vec<f64> {
    let mut chain = vec![0.0; robot.links.len()];
    for l in 1..robot.links.len() {
        // invariant: the loop runs over non-root links, each with its parent joint
        let j = &robot.joints[robot.links[l].parent_joint.expect("non-root links have a parent joint")];
        let mut hop = j.origin.trans.norm();
        if j.kind == JointKind::Prismatic {
            hop += j.limits.map_or(f64::INFINITY, |lim| lim.lower.abs().max(lim.upper.abs()));
        }
        chain[l] = chain[j.parent] + hop;
    }
    poser_spheres
        .links
        .iter()
        .enumerate()
        .map(|(l, s)| chain[l] + s.fine.iter().map(|s| s.center.coords.norm() + s.radius).fold(0.0, f64::max))
        .collect()
}

/// Least gap between the spheres of link ranges `a` of `posed_a` and `b` of `posed_b`.
fn link_gap(posed_a: &PosedSpheres, ra: (usize, usize), posed_b: &PosedSpheres, rb: (usize, usize)) -> f32 {
    let mut best = f32::INFINITY;
    for i in ra.0..ra.1 {
        for j in rb.0..rb.1 {
            let (dx, dy, dz) = (posed_a.x[i] - posed_b.x[j], posed_a.y[i] - posed_b.y[j], posed_a.z[i] - posed_b.z[j]);
            best = best.min((dx * dx + dy * dy + dz * dz).sqrt() - posed_a.r[i] - posed_b.r[j]);
        }
    }
    best
}

/// Slot range of each link in a poser's output (empty for links without spheres).
fn link_slots(poser: &SpherePoser, links: usize) -> Vec<(usize, usize)> {
    let mut out = vec![(0, 0); links];
    for &(l, s, e) in poser.ranges() {
        out[l as usize] = (s as usize, e as usize);
    }
    out
}

impl CollisionMatrix {
    /// Computes the matrix by sampling (see the module text).
    pub fn compute(cell: &Workcell, posers: &[SpherePoser]) -> CollisionMatrix {
        let samples = cell.guard.matrix_samples;
        let slack = cell.guard.matrix_never_slack_m as f32;
        let margin = cell.margins.clearance_m as f32;
        let always = samples - samples / 20;
        let (offsets, total) = link_offsets(cell);
        let n = total;
        let mut contacts = vec![0usize; n * n];
        let mut min_gap = vec![f32::INFINITY; n * n];
        let mut max_gap = vec![f32::NEG_INFINITY; n * n];
        let mut class = vec![PairClass::Sometimes; n * n];
        let mut rng = Rng::new(SEED);
        let slots: Vec<_> =
            posers.iter().zip(&cell.manipulators).map(|(p, spec)| link_slots(p, spec.robot.links.len())).collect();
        let ranges: Vec<_> = cell.manipulators.iter().map(|spec| sample_ranges(&spec.robot)).collect();
        let mut posed: Vec<PosedSpheres> = posers.iter().map(|p| p.posed()).collect();
        let mut q: Vec<Vec<f64>> = cell.manipulators.iter().map(|spec| vec![0.0; spec.robot.dof()]).collect();
        let draw = |r: usize, rng: &mut Rng, q: &mut Vec<Vec<f64>>, posed: &mut Vec<PosedSpheres>| {
            for (d, &(lo, hi)) in ranges[r].iter().enumerate() {
                q[r][d] = rng.range(lo, hi);
            }
            // invariant: the posed buffers were made by these posers, for these robots' dofs
            posers[r].pose(&q[r], &mut posed[r]).expect("buffers sized by their poser");
        };

        // Within each robot.
        for (r, spec) in cell.manipulators.iter().enumerate() {
            let nl = spec.robot.links.len();
            let has: Vec<bool> = slots[r].iter().map(|s| s.1 > s.0).collect();
            let adjacent = adjacency(&spec.robot, &has);
            let pairs: Vec<(usize, usize)> = (0..nl)
                .flat_map(|a| ((a + 1)..nl).map(move |b| (a, b)))
                .filter(|&(a, b)| has[a] && has[b] && !adjacent(a, b))
                .collect();
            // Home configuration first.
            for (d, &(lo, hi)) in ranges[r].iter().enumerate() {
                q[r][d] = 0.0f64.clamp(lo, hi);
            }
            // invariant: the posed buffers were made by these posers, for these robots' dofs
            posers[r].pose(&q[r], &mut posed[r]).expect("buffers sized by their poser");
            let home: Vec<bool> =
                pairs.iter().map(|&(a, b)| link_gap(&posed[r], slots[r][a], &posed[r], slots[r][b]) <= 0.0).collect();
            for _ in 0..samples {
                draw(r, &mut rng, &mut q, &mut posed);
                for &(a, b) in &pairs {
                    let g = link_gap(&posed[r], slots[r][a], &posed[r], slots[r][b]);
                    let k = (offsets[r] + a) * n + offsets[r] + b;
                    min_gap[k] = min_gap[k].min(g);
                    max_gap[k] = max_gap[k].max(g);
                    contacts[k] += usize::from(g <= margin);
                }
            }
            for a in 0..nl {
                for b in (a + 1)..nl {
                    let k = (offsets[r] + a) * n + offsets[r] + b;
                    class[k] = if !has[a] || !has[b] {
                        PairClass::Never
                    } else if adjacent(a, b) {
                        PairClass::Adjacent
                    } else if contacts[k] >= always {
                        PairClass::Always
                    } else if max_gap[k] - min_gap[k] < 1e-4 {
                        PairClass::Rigid
                    } else if pairs.iter().zip(&home).any(|(&p, &h)| h && p == (a, b)) {
                        PairClass::Default
                    } else if min_gap[k] > slack {
                        PairClass::Never
                    } else {
                        PairClass::Sometimes
                    };
                }
            }
        }

        across_robots(cell, (&offsets, n), &slots, slack, (&mut class, &mut min_gap));
        mirror(n, &mut class, &mut min_gap);
        CollisionMatrix { key: key(cell), offsets, total, class, min_gap }
    }

    /// Names of every link in the global numbering, `robot/link`.
    pub fn link_names(cell: &Workcell) -> Vec<String> {
        cell.manipulators
            .iter()
            .flat_map(|spec| spec.robot.links.iter().map(move |l| format!("{}/{}", spec.name, l.name)))
            .collect()
    }

    /// The pairs that are not [`PairClass::Sometimes`], each once (`a < b`,
    /// global indices), with their least sampled gap (m; `None` where it
    /// is not finite).
    pub fn special_pairs(&self) -> impl Iterator<Item = (usize, usize, PairClass, Option<f32>)> + '_ {
        let n = self.total;
        (0..n).flat_map(move |a| {
            ((a + 1)..n).filter_map(move |b| {
                let c = self.class[a * n + b];
                let g = self.min_gap[a * n + b];
                (c != PairClass::Sometimes).then_some((a, b, c, g.is_finite().then_some(g)))
            })
        })
    }

    /// The matrix of `cell` from its special pairs, as
    /// [`CollisionMatrix::special_pairs`] lists them (a cache read back);
    /// `key` is the cache key it was stored under.
    pub fn from_special_pairs(
        cell: &Workcell,
        key: u64,
        pairs: impl IntoIterator<Item = (usize, usize, PairClass, Option<f32>)>,
    ) -> Result<CollisionMatrix, String> {
        let (offsets, total) = link_offsets(cell);
        let n = total;
        let mut class = vec![PairClass::Sometimes; n * n];
        let mut min_gap = vec![f32::NEG_INFINITY; n * n];
        for (a, b, c, g) in pairs {
            if a >= n || b >= n {
                return Err(format!("link index {} beyond the cell's {n} links", a.max(b)));
            }
            for k in [a * n + b, b * n + a] {
                class[k] = c;
                min_gap[k] = g.unwrap_or(f32::INFINITY);
            }
        }
        (0..n).for_each(|a| class[a * n + a] = PairClass::Adjacent);
        Ok(CollisionMatrix { key, offsets, total, class, min_gap })
    }

    /// The cache key.
    pub fn key(&self) -> u64 {
        self.key
    }

    /// Global index of robot `r`'s link `l`.
    pub fn global(&self, r: usize, l: usize) -> usize {
        self.offsets[r] + l
    }

    /// Links over all robots.
    pub fn total_links(&self) -> usize {
        self.total
    }

    /// Class of a pair of global link indices.
    pub fn class(&self, a: usize, b: usize) -> PairClass {
        self.class[a * self.total + b]
    }

    /// Least sampled gap of a pair (metres; −∞ where not sampled).
    pub fn min_gap(&self, a: usize, b: usize) -> f32 {
        self.min_gap[a * self.total + b]
    }

    /// Counts of each class over distinct pairs: (within robots, across robots),
    /// each `[sometimes, adjacent, always, never, rigid, default]`.
    pub fn counts(&self) -> ([usize; 6], [usize; 6]) {
        let robot_of = |g: usize| self.offsets.iter().rposition(|&o| o <= g).unwrap_or(0);
        let (mut within, mut across) = ([0; 6], [0; 6]);
        for a in 0..self.total {
            for b in (a + 1)..self.total {
                let i = self.class(a, b) as usize;
                if robot_of(a) == robot_of(b) { within[i] += 1 } else { across[i] += 1 }
            }
        }
        (within, across)
    }
}

/// Pairs of links of different robots: checked unless their bases are
/// farther apart than both links can reach (plus `slack`); sampling two
/// robots' joint spaces together is too sparse to call a pair "never".
fn across_robots(
    cell: &Workcell,
    (offsets, n): (&[usize], usize),
    slots: &[Vec<(usize, usize)>],
    slack: f32,
    (class, min_gap): (&mut [PairClass], &mut [f32]),
) {
    let reach: Vec<Vec<f64>> =
        cell.manipulators.iter().map(|spec| reach_from_root(&spec.robot, &spec.spheres)).collect();
    for ra in 0..cell.manipulators.len() {
        for rb in (ra + 1)..cell.manipulators.len() {
            let (ma, mb) = (&cell.manipulators[ra], &cell.manipulators[rb]);
            let apart = (ma.base.trans - mb.base.trans).norm();
            // What reach cannot rule out is checked: sampling two robots'
            // joint spaces together is too sparse to call a pair "never".
            for a in 0..ma.robot.links.len() {
                for b in 0..mb.robot.links.len() {
                    let k = (offsets[ra] + a) * n + offsets[rb] + b;
                    let (ha, hb) = (slots[ra][a].1 > slots[ra][a].0, slots[rb][b].1 > slots[rb][b].0);
                    let gap = apart - reach[ra][a] - reach[rb][b];
                    class[k] =
                        if !ha || !hb || gap > f64::from(slack) { PairClass::Never } else { PairClass::Sometimes };
                    min_gap[k] = gap as f32;
                }
            }
        }
    }
}

/// The upper triangle copied to the lower; a link against itself is adjacent.
fn mirror(n: usize, class: &mut [PairClass], min_gap: &mut [f32]) {
    for a in 0..n {
        for b in (a + 1)..n {
            class[b * n + a] = class[a * n + b];
            min_gap[b * n + a] = min_gap[a * n + b];
        }
        class[a * n + a] = PairClass::Adjacent;
    }
}
