//! The voxel distance field of the cell (method text:
//! `voxel-distance-spheres.txt`): every voxel holds its distance to the
//! nearest obstacle, and a sphere collides when the value at its centre is
//! at most its radius (plus the margin).
//!
//! # What is stored
//! One `f32` per voxel (`x` fastest): the exact Euclidean distance, in
//! voxels, from the voxel's centre to the centre of the nearest occupied
//! voxel, saturated at `max_distance_m` (a saturated value means "at least
//! this far"). A 256³ field is 67.1 MB of distances plus a 2.1 MB occupancy
//! bitset. The distance is the correctly rounded `sqrt` of the exact integer
//! squared distance, so it is deterministic and an incremental update
//! reproduces a full rebuild bit for bit.
//!
//! # Occupancy
//! A voxel is occupied when its centre lies within half a voxel diagonal
//! (`h = res·√3/2`) of an obstacle (solid: surface and interior). Every point
//! of an obstacle therefore lies in an occupied voxel's cube.
//!
//! # Conservative queries
//! The value at a voxel centre is not the value at an arbitrary point. For a
//! point `p` in the voxel of centre `c`, and the obstacle point `o` nearest
//! to `p` lying in the occupied voxel of centre `c_o`:
//! `|p − o| ≥ |c − c_o| − |p − c| − |o − c_o| ≥ d(c) − 2h`. [`DistanceField::clearance`]
//! therefore returns `d(c)·res − res·√3 − r`, a lower bound of the true
//! clearance, never above it; a collision is `clearance ≤ margin`. The price
//! is up to `res·√3` of false alarm (3.5 cm at 2 cm voxels), measured by the
//! tests.
//!
//! # Outside the grid
//! Unknown. With [`Outside::Collision`] (the default) the outside counts as
//! occupied: the distance to it is folded into every voxel (so a sphere near
//! the grid's edge is near a wall), and a centre outside the grid gets
//! `-∞`. With [`Outside::Free`] a centre outside gets `+∞`. A NaN centre is
//! always `-∞`.
//!
//! # Names
//! `distance…` is a stored value (voxel centre to nearest occupied centre);
//! `clearance…` is a sphere's conservative clearance derived from it, never
//! above the true one. A suffix says how much one call covers:
//! `clearance` one sphere, `clearance_bound` every sphere within a radius
//! of a point (one lookup for a whole link), `clearance_from` `N` spheres
//! bounded from an `anchor` by arithmetic alone (no lookup), `min_…` the
//! least over a set. The guard's cell check follows the same rule
//! (`Guard::cell_clearance`, and `exact_…` for parry3d's exact twins).

pub mod edt;
pub mod raster;
mod update;

use crate::cell::{VoxelGrid, Workcell};
use crate::frame::Frame;
use crate::model::PosedSpheres;
use crate::model::geometry::Shape;
use edt::{FAR, Region, Work};
use raster::Placed;

/// What the space outside the voxel grid counts as.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Outside {
    /// Occupied: spheres near the grid's faces are near a wall; centres
    /// outside collide.
    #[default]
    Collision,
    /// Free: the grid's faces are not walls; centres outside are clear.
    Free,
}

/// Why an obstacle was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FieldError {
    /// The pose or the shape holds a NaN, an infinity, or a size that is not positive.
    #[error("obstacle refused: {0}")]
    BadObstacle(String),
}

/// Handle of an obstacle in a [`DistanceField`], for removing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ObstacleId(u64);

/// What [`DistanceField::set_sensed_points`] did with the points it was given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PointReport {
    /// Points that marked a voxel.
    pub accepted: usize,
    /// Points outside the grid (ignored).
    pub outside: usize,
    /// Points inside a robot's own spheres (left out by self-filtering).
    pub filtered: usize,
    /// Points with a NaN or infinite coordinate (ignored).
    pub invalid: usize,
}

/// `√3`: twice the half-diagonal of a unit voxel.
const SQRT3: f32 = 1.732_050_8;

/// The distance field of one cell. See the module documentation.
#[derive(Clone, Debug)]
pub struct DistanceField {
    grid: VoxelGrid,
    dims: [usize; 3],
    origin: [f32; 3],
    inv_res: f32,
    extent: [f32; 3],
    /// Metres per voxel.
    res: f32,
    /// Subtracted from `d·res` to make the query conservative: `res·√3`.
    offset_m: f32,
    /// Saturation, squared voxels.
    cap_sq: f32,
    /// Value returned for centres outside the grid.
    outside_value: f32,
    dist: Vec<f32>,
    occ: Vec<u64>,
    sensed: Vec<u32>,
    obstacles: Vec<(ObstacleId, Placed)>,
    next_id: u64,
    threads: usize,
    work: Work,
    local: Vec<f32>,
    marks: Vec<bool>,
}

impl DistanceField {
    /// An empty field (no obstacle) over `grid`.
    pub fn new(grid: &VoxelGrid) -> DistanceField {
        let mut f = DistanceField::empty(grid);
        f.rebuild();
        f
    }

    fn empty(grid: &VoxelGrid) -> DistanceField {
        let dims = grid.dims;
        let n: usize = dims.iter().product();
        let res = grid.resolution_m as f32;
        let cap_vox = grid.max_distance_m / grid.resolution_m;
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        DistanceField {
            grid: *grid,
            dims,
            origin: grid.origin_m.map(|o| o as f32),
            inv_res: (1.0 / grid.resolution_m) as f32,
            extent: dims.map(|d| d as f32),
            res,
            offset_m: res * SQRT3,
            // The cap is an integer number of squared voxels, so that the
            // saturated value is itself a possible distance.
            cap_sq: (cap_vox * cap_vox).floor().max(1.0) as f32,
            outside_value: match grid.outside {
                Outside::Collision => f32::NEG_INFINITY,
                Outside::Free => f32::INFINITY,
            },
            dist: vec![0.0; n],
            occ: vec![0; n.div_ceil(64)],
            sensed: Vec::new(),
            obstacles: Vec::new(),
            next_id: 0,
            threads,
            work: Work::default(),
            local: Vec::new(),
            marks: Vec::new(),
        }
    }

    /// The field of a workcell's obstacles.
    pub fn from_workcell(cell: &Workcell) -> DistanceField {
        let mut f = DistanceField::empty(&cell.voxel_grid);
        for o in &cell.obstacles {
            let placed = Placed::new(o.pose, o.shape.clone(), &f.grid);
            f.insert_placed(placed);
        }
        f.rebuild();
        f
    }

    /// Threads used by full rebuilds (default: all cores).
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    /// The grid.
    pub fn grid(&self) -> &VoxelGrid {
        &self.grid
    }

    /// Voxels along x, y, z.
    pub fn dims(&self) -> [usize; 3] {
        self.dims
    }

    /// The per-voxel distances in voxels (`x` fastest), saturated at the cap.
    pub fn voxel_distances(&self) -> &[f32] {
        &self.dist
    }

    /// The saturation distance in voxels (`max_distance_m / resolution_m`,
    /// rounded down to a possible distance).
    pub fn cap_voxels(&self) -> f32 {
        self.cap_sq.sqrt()
    }

    /// Bytes held by the distances and the occupancy.
    pub fn memory_bytes(&self) -> usize {
        self.dist.len() * 4 + self.occ.len() * 8 + self.sensed.len() * 4
    }

    #[inline]
    fn index(&self, [x, y, z]: [usize; 3]) -> usize {
        (z * self.dims[1] + y) * self.dims[0] + x
    }

    /// Whether a voxel is occupied.
    pub fn occupied(&self, v: [usize; 3]) -> bool {
        let i = self.index(v);
        self.occ[i / 64] >> (i % 64) & 1 == 1
    }

    /// True when sensed points or a sensed occupancy grid are in the field
    /// (then a voxel may be occupied by something that is no obstacle).
    pub fn has_sensed(&self) -> bool {
        !self.sensed.is_empty()
    }

    /// Number of occupied voxels.
    pub fn occupied_count(&self) -> usize {
        self.occ.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The method text's integer layer value of a voxel: `0` for an occupied
    /// voxel, otherwise the `n` with `n − 1 ≤ d < n`, `d` in voxels.
    pub fn layer(&self, v: [usize; 3]) -> u32 {
        layer_of(self.dist[self.index(v)])
    }

    /// Every voxel's layer value (`x` fastest); see [`DistanceField::layer`].
    pub fn layers(&self) -> impl Iterator<Item = u32> + '_ {
        self.dist.iter().map(|&d| layer_of(d))
    }

    /// The voxel whose cube holds a point of the cell frame, if any.
    #[inline]
    pub fn voxel_of(&self, p: [f32; 3]) -> Option<[usize; 3]> {
        let fx = (p[0] - self.origin[0]) * self.inv_res;
        let fy = (p[1] - self.origin[1]) * self.inv_res;
        let fz = (p[2] - self.origin[2]) * self.inv_res;
        if self.in_grid([fx, fy, fz], [fx, fy, fz]) { Some([fx as usize, fy as usize, fz as usize]) } else { None }
    }

    /// Conservative signed clearance of a sphere (centre in the cell frame,
    /// radius), metres: never above the true distance from the sphere to the
    /// nearest obstacle (see the module documentation). A collision is
    /// `clearance ≤ margin`. Outside the grid: the policy's value (`-∞` for
    /// collision, `+∞` for free); a NaN centre: `-∞`. No allocation.
    #[inline]
    pub fn clearance(&self, x: f32, y: f32, z: f32, r: f32) -> f32 {
        let fx = (x - self.origin[0]) * self.inv_res;
        let fy = (y - self.origin[1]) * self.inv_res;
        let fz = (z - self.origin[2]) * self.inv_res;
        if self.in_grid([fx, fy, fz], [fx, fy, fz]) {
            // SAFETY: each value is in [0, extent) with extent ≤ MAX_AXIS,
            // so it is finite and representable as u32 after truncation.
            let (ix, iy, iz) =
                unsafe { (fx.to_int_unchecked::<u32>(), fy.to_int_unchecked::<u32>(), fz.to_int_unchecked::<u32>()) };
            let i = (iz as usize * self.dims[1] + iy as usize) * self.dims[0] + ix as usize;
            self.dist[i] * self.res - (self.offset_m + r)
        } else {
            self.outside(x, y, z)
        }
    }

    /// A lower bound on [`DistanceField::clearance`] of every sphere that
    /// lies inside the ball of centre `(x, y, z)` and radius `r`, from one
    /// lookup: the guard's check of a whole link (a box around its spheres)
    /// before it looks at the spheres one by one.
    ///
    /// Why it holds: the stored distances are an exact Euclidean distance
    /// transform between voxel centres (capped), so 1-Lipschitz. A sphere
    /// (c, ρ) inside the ball has |c − centre| + ρ ≤ r; the voxel centres
    /// of c and of the ball's centre lie within res·√3/2 of them, so the
    /// sphere's clearance is at least the ball's minus res·√3. `−∞` when
    /// the ball's box is not wholly inside the grid (a sphere outside gets
    /// the outside policy's value) or for NaN.
    #[inline]
    pub fn clearance_bound(&self, x: f32, y: f32, z: f32, r: f32) -> f32 {
        self.bound_and_anchor(x, y, z, r).0
    }

    /// [`DistanceField::clearance_bound`] and the [`DistanceField::anchor`]
    /// at the ball's centre (`d = −∞` outside the grid), from the one
    /// lookup both need.
    #[inline]
    pub fn bound_and_anchor(&self, x: f32, y: f32, z: f32, r: f32) -> (f32, [f32; 4]) {
        const NONE: [f32; 4] = [0.0, 0.0, 0.0, f32::NEG_INFINITY];
        let Some(a) = self.anchor(x, y, z) else { return (f32::NEG_INFINITY, NONE) };
        let lo = [x - r, y - r, z - r];
        let hi = [x + r, y + r, z + r];
        let g = |p: [f32; 3]| std::array::from_fn(|k| (p[k] - self.origin[k]) * self.inv_res);
        if !self.in_grid(g(lo), g(hi)) {
            return (f32::NEG_INFINITY, a);
        }
        // The ball's centre's clearance, as `clearance` computes it, less
        // the voxel offset; f32 rounding of the positions: 10 µm of slack.
        let centre = a[3] * self.res - (self.offset_m + r);
        (centre - self.offset_m - 1e-5, a)
    }

    /// Whether grid coordinates `lo..=hi` (in voxels from the origin) lie
    /// inside the grid. Non-short-circuit `&`: one well-predicted branch
    /// instead of six. NaN fails every comparison and lands outside.
    #[inline(always)]
    fn in_grid(&self, lo: [f32; 3], hi: [f32; 3]) -> bool {
        (lo[0] >= 0.0)
            & (lo[1] >= 0.0)
            & (lo[2] >= 0.0)
            & (hi[0] < self.extent[0])
            & (hi[1] < self.extent[1])
            & (hi[2] < self.extent[2])
    }

    /// The voxel holding a point, as `[x, y, z, d]`: the voxel's indices
    /// (as `f32`) and its stored distance in voxels. `None` outside the
    /// grid or for NaN. An anchor for [`DistanceField::clearance_from`].
    #[inline]
    pub fn anchor(&self, x: f32, y: f32, z: f32) -> Option<[f32; 4]> {
        let v = self.voxel_of([x, y, z])?;
        Some([v[0] as f32, v[1] as f32, v[2] as f32, self.dist[self.index(v)]])
    }

    /// Lower bounds on [`DistanceField::clearance`] of `N` spheres of
    /// radius `r` (centres `p`: x, y, z rows) from `N` anchors (lane `l`'s sphere from lane `l`'s
    /// anchor, laid out as x, y, z, d rows), with no lookup: the guard's
    /// way past lookups that cannot matter. Branch-free over the lanes,
    /// so they go through as vectors.
    ///
    /// Why it holds: the stored distances are an exact Euclidean distance
    /// transform between voxel centres, capped and (for
    /// [`Outside::Collision`]) folded with each axis' distance to the
    /// grid's faces: a minimum of 1-Lipschitz functions, so 1-Lipschitz
    /// over voxel centres. A sphere's voxel centre is `δ` voxels from its
    /// anchor's, so its value is at least the anchor's minus `δ`, computed
    /// exactly from the voxel indices (no `res·√3` of slack). 10⁻³ voxels
    /// cover the rounding of the stored square roots and of `δ`. `−∞` for
    /// a lane whose centre is outside the grid or NaN (its clearance is
    /// then the outside policy's value) or whose anchor's `d` is `−∞`.
    #[inline]
    pub fn clearance_from<const N: usize>(&self, anchor: &[[f32; N]; 4], p: [&[f32; N]; 3], r: f32) -> [f32; N] {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: `clearance_from_avx2` only requires the CPU feature checked just above.
            return unsafe { self.clearance_from_avx2(anchor, p, r) };
        }
        self.clearance_from_impl(anchor, p, r)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn clearance_from_avx2<const N: usize>(&self, anchor: &[[f32; N]; 4], p: [&[f32; N]; 3], r: f32) -> [f32; N] {
        self.clearance_from_impl(anchor, p, r)
    }

    #[inline(always)]
    fn clearance_from_impl<const N: usize>(&self, anchor: &[[f32; N]; 4], p: [&[f32; N]; 3], r: f32) -> [f32; N] {
        let mut out = [0.0; N];
        let (lim, off) = (self.extent.map(|e| e - 1.0), self.offset_m + r);
        for l in 0..N {
            let f: [f32; 3] = std::array::from_fn(|a| (p[a][l] - self.origin[a]) * self.inv_res);
            let inside = self.in_grid(f, f);
            let mut d2 = 0.0;
            for a in 0..3 {
                // Clamped (NaN goes to 0) so the truncation is defined;
                // truncation is the floor for values ≥ 0, and one
                // instruction where `floor` is a library call.
                let c = if f[a] > 0.0 { f[a] } else { 0.0 };
                let c = if c < lim[a] { c } else { lim[a] };
                // SAFETY: c is in [0, extent − 1], finite and below u32::MAX.
                let v = unsafe { c.to_int_unchecked::<i32>() } as f32 - anchor[a][l];
                d2 += v * v;
            }
            let b = (anchor[3][l] - d2.sqrt() - 1e-3) * self.res - off;
            out[l] = if inside { b } else { f32::NEG_INFINITY };
        }
        out
    }

    #[cold]
    fn outside(&self, x: f32, y: f32, z: f32) -> f32 {
        if x.is_nan() || y.is_nan() || z.is_nan() { f32::NEG_INFINITY } else { self.outside_value }
    }

    /// The least clearance over a set of posed spheres and the index of the
    /// sphere that has it (`(+∞, 0)` for an empty set). No allocation.
    pub fn min_clearance(&self, s: &PosedSpheres) -> (f32, usize) {
        let (mut best, mut at) = (f32::INFINITY, 0);
        for i in 0..s.len() {
            let c = self.clearance(s.x[i], s.y[i], s.z[i], s.r[i]);
            // A NaN cannot come out of `clearance`, but would be unsafe to skip.
            if c < best || c.is_nan() {
                best = c;
                at = i;
            }
        }
        (best, at)
    }
}

fn check_obstacle(pose: &Frame, shape: &Shape) -> Result<(), FieldError> {
    if !pose.is_finite() {
        return Err(FieldError::BadObstacle(format!("pose is not finite: {pose:?}")));
    }
    let sizes: Vec<f64> = match shape {
        Shape::Box { half_extents } => half_extents.to_vec(),
        Shape::Sphere { radius } => vec![*radius],
        Shape::Cylinder { radius, length } | Shape::Capsule { radius, length } => vec![*radius, *length],
        Shape::Mesh(m) => {
            if m.vertices.iter().any(|v| !v.coords.iter().all(|c| c.is_finite())) {
                return Err(FieldError::BadObstacle(format!(
                    "mesh {} has a vertex that is not finite",
                    m.path.display()
                )));
            }
            return Ok(());
        }
    };
    if sizes.iter().any(|s| !(s.is_finite() && *s > 0.0)) {
        return Err(FieldError::BadObstacle(format!("{} sizes must be finite and positive: {sizes:?}", shape.kind())));
    }
    Ok(())
}

/// Squared voxel distance → stored distance: the walls (when the outside
/// counts as occupied: the nearest outside voxel is straight across a face)
/// and the cap, then the correctly rounded square root. Monotone, so
/// `finish(min(a, b)) = min(finish(a), finish(b))`: this is what makes
/// incremental updates equal a rebuild.
#[inline]
fn finish(sq: f32, v: [usize; 3], dims: [usize; 3], cap_sq: f32, walls: bool) -> f32 {
    let mut s = sq.min(cap_sq);
    if walls {
        for a in 0..3 {
            let w = (v[a] + 1).min(dims[a] - v[a]) as f32;
            s = s.min(w * w);
        }
    }
    s.sqrt()
}

/// The integer layer value of a distance in voxels: `0` for an occupied voxel
/// (`d = 0`), otherwise the `n` with `n − 1 ≤ d < n`.
pub fn layer_of(d: f32) -> u32 {
    if d <= 0.0 { 0 } else { d.floor() as u32 + 1 }
}

fn is_empty(r: &Region) -> bool {
    r.iter().any(|[lo, hi]| lo >= hi)
}

fn region_dims(r: &Region) -> [usize; 3] {
    r.map(|[lo, hi]| hi.saturating_sub(lo))
}

fn region_len(r: &Region) -> usize {
    region_dims(r).iter().product()
}

fn grow(r: &Region, k: usize, dims: [usize; 3]) -> Region {
    std::array::from_fn(|a| [r[a][0].saturating_sub(k), (r[a][1] + k).min(dims[a])])
}

fn shift(r: &Region, frame: &Region) -> Region {
    std::array::from_fn(|a| [r[a][0] - frame[a][0], r[a][1] - frame[a][0]])
}

fn intersect(a: &Region, b: &Region) -> Option<Region> {
    let r: Region = std::array::from_fn(|k| [a[k][0].max(b[k][0]), a[k][1].min(b[k][1])]);
    if is_empty(&r) { None } else { Some(r) }
}
