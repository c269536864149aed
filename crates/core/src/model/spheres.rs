//! Conservative sphere models of links.
//!
//! Every point of a link's collision geometry lies inside at least one of its
//! spheres, by construction:
//! - **sphere**: itself;
//! - **box**: split into a grid of sub-boxes, each covered by its
//!   circumscribed sphere (interior included);
//! - **cylinder**: slices along the axis, each covered by the sphere through
//!   its rim; when the target radius is below the cylinder's, a square grid
//!   over the disc times axial slices, keeping cells that touch the disc;
//! - **capsule**: its cylinder part as above plus the two cap spheres;
//! - **mesh**: triangles are split until no edge exceeds the cell size, then
//!   grouped by the grid cell of their centroid; each group is covered by a
//!   sphere containing all its triangles' corners. A sphere is convex, so it
//!   contains each whole triangle: the surface is covered exactly, whatever
//!   the mesh (open, non-manifold, mirrored). Interiors of closed meshes are
//!   not filled.
//!
//! Radii are inflated by [`RADIUS_EPS_M`] against rounding.
//!
//! The fit is tuned per link by a target [`SphereParams::max_overshoot_m`]
//! (how far any sphere may reach beyond the geometry) and a budget
//! [`SphereParams::max_spheres`]: the largest spheres that meet the overshoot
//! are used, unless they exceed the budget, in which case the budget wins and
//! the overshoot actually reached is reported. The overshoot bound of a
//! sphere is `r + sd(c)` for primitives (`sd` the signed distance of its
//! centre to the surface) and `r + min |c − v|` over its mesh vertices `v`.

use super::geometry::{Collision, Shape, TriMesh};
use crate::frame::Frame;
use nalgebra::{Point3, Vector3};
use std::collections::HashMap;

/// Added to every radius so that rounding never uncovers a point, metres.
pub const RADIUS_EPS_M: f64 = 1e-9;

/// A sphere in a link frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sphere {
    /// Centre, metres, link frame.
    pub center: Point3<f64>,
    /// Radius, metres.
    pub radius: f64,
}

impl Sphere {
    /// True when `p` is inside or on the sphere.
    #[inline]
    pub fn contains(&self, p: &Point3<f64>) -> bool {
        (p - self.center).norm_squared() <= self.radius * self.radius
    }

    /// The smallest sphere about the AABB centre of `spheres` that contains
    /// them all (conservative, not minimal).
    pub fn enclosing(spheres: &[Sphere]) -> Option<Sphere> {
        let first = spheres.first()?;
        let (mut lo, mut hi) = (first.center.coords, first.center.coords);
        for s in spheres {
            let r = Vector3::repeat(s.radius);
            lo = lo.inf(&(s.center.coords - r));
            hi = hi.sup(&(s.center.coords + r));
        }
        let c = Point3::from((lo + hi) * 0.5);
        let r = spheres.iter().map(|s| (s.center - c).norm() + s.radius).fold(0.0, f64::max);
        Some(Sphere { center: c, radius: r + RADIUS_EPS_M })
    }
}

/// How finely to fit a link.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SphereParams {
    /// How far beyond the geometry a sphere may reach, metres.
    pub max_overshoot_m: f64,
    /// At most this many spheres per link (at least one per collision
    /// element is always used).
    pub max_spheres: usize,
}

impl Default for SphereParams {
    fn default() -> Self {
        SphereParams { max_overshoot_m: 0.03, max_spheres: 16 }
    }
}

/// The spheres of one link, in the link frame.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkSpheres {
    /// Level 1: one sphere containing all of `fine` (`None` for a link
    /// without collision geometry).
    pub bounding: Option<Sphere>,
    /// Level 2: the fine set.
    pub fine: Vec<Sphere>,
    /// An upper bound of how far any fine sphere reaches beyond the geometry.
    pub overshoot_bound_m: f64,
}

impl LinkSpheres {
    /// Builds a link's levels from a fine set.
    pub fn from_fine(fine: Vec<Sphere>, overshoot_bound_m: f64) -> LinkSpheres {
        LinkSpheres { bounding: Sphere::enclosing(&fine), fine, overshoot_bound_m }
    }
}

/// The sphere model of a robot: `links[i]` belongs to `robot.links[i]`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SphereModel {
    /// Per link, in the robot's link order.
    pub links: Vec<LinkSpheres>,
}

impl SphereModel {
    /// Fits every link of `robot`; `params_for(link_name)` gives the tuning.
    pub fn fit(robot: &super::Robot, params_for: impl Fn(&str) -> SphereParams) -> SphereModel {
        SphereModel { links: robot.links.iter().map(|l| fit_link(&l.collisions, params_for(&l.name))).collect() }
    }

    /// Total number of fine spheres.
    pub fn fine_count(&self) -> usize {
        self.links.iter().map(|l| l.fine.len()).sum()
    }
}

/// Fits one link (see the module text for the method).
pub fn fit_link(collisions: &[Collision], params: SphereParams) -> LinkSpheres {
    if collisions.is_empty() {
        return LinkSpheres::default();
    }
    let t_hi = collisions.iter().map(|c| bounding_radius(&c.shape)).fold(0.0, f64::max) * 1.01;
    let t_floor = (params.max_overshoot_m / 4.0).clamp(1e-3, t_hi);
    // The search runs on a proxy (large meshes thinned to a subset of their
    // triangles); only the final spheres are built from the whole geometry,
    // so coverage never depends on the proxy.
    let proxy = search_proxy(collisions);
    let eval = |t: f64| generate(&proxy, t);
    let over_ok = |t: f64| eval(t).1 <= params.max_overshoot_m;

    // Largest target radius that meets the overshoot (bisection in log space).
    let mut t = if over_ok(t_hi) {
        t_hi
    } else if !over_ok(t_floor) {
        t_floor
    } else {
        bisect(t_floor, t_hi, over_ok)
    };
    // The budget wins: smallest target radius within budget.
    let allowed = collisions.len().max(params.max_spheres);
    if eval(t).0.len() > allowed {
        let fits = |t: f64| eval(t).0.len() <= allowed;
        if fits(t_hi) {
            t = bisect_low(t, t_hi, fits);
        } else {
            t = t_hi;
        }
    }
    let (mut fine, mut over) = generate(collisions, t);
    // The whole geometry can need a few more spheres than the proxy did.
    while fine.len() > allowed && t < t_hi {
        t = (t * 1.15).min(t_hi);
        (fine, over) = generate(collisions, t);
    }
    LinkSpheres::from_fine(fine, over)
}

/// Meshes above this many triangles are thinned for the parameter search.
const PROXY_TRIANGLES: usize = 8_000;

fn search_proxy(collisions: &[Collision]) -> std::borrow::Cow<'_, [Collision]> {
    let big = |c: &Collision| matches!(&c.shape, Shape::Mesh(m) if m.triangles.len() > PROXY_TRIANGLES);
    if !collisions.iter().any(big) {
        return std::borrow::Cow::Borrowed(collisions);
    }
    std::borrow::Cow::Owned(
        collisions
            .iter()
            .map(|c| match &c.shape {
                Shape::Mesh(m) if m.triangles.len() > PROXY_TRIANGLES => {
                    let step = m.triangles.len().div_ceil(PROXY_TRIANGLES);
                    let mut thin = m.clone();
                    thin.triangles = m.triangles.iter().step_by(step).copied().collect();
                    Collision { origin: c.origin, shape: Shape::Mesh(thin) }
                }
                _ => c.clone(),
            })
            .collect(),
    )
}

/// Largest `t` in `[lo, hi]` with `ok(t)`, given `ok(lo)` and `!ok(hi)`.
fn bisect(mut lo: f64, mut hi: f64, ok: impl Fn(f64) -> bool) -> f64 {
    for _ in 0..14 {
        let mid = (lo * hi).sqrt();
        if ok(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Smallest `t` in `[lo, hi]` with `ok(t)`, given `!ok(lo)` and `ok(hi)`.
fn bisect_low(mut lo: f64, mut hi: f64, ok: impl Fn(f64) -> bool) -> f64 {
    for _ in 0..14 {
        let mid = (lo * hi).sqrt();
        if ok(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// Radius of a sphere about the shape's origin that contains it.
pub fn bounding_radius(shape: &Shape) -> f64 {
    match shape {
        Shape::Box { half_extents: h } => Vector3::from(*h).norm(),
        Shape::Cylinder { radius, length } => (radius * radius + length * length / 4.0).sqrt(),
        Shape::Capsule { radius, length } => radius + length / 2.0,
        Shape::Sphere { radius } => *radius,
        Shape::Mesh(m) => m.vertices.iter().map(|v| v.coords.norm()).fold(0.0, f64::max),
    }
}

/// Spheres for every collision element at target radius `t`, in the link
/// frame, with the overshoot bound over all of them.
pub fn generate(collisions: &[Collision], t: f64) -> (Vec<Sphere>, f64) {
    let mut out = Vec::new();
    let mut over: f64 = 0.0;
    for c in collisions {
        let start = out.len();
        over = over.max(shape_spheres(&c.shape, t, &mut out));
        for s in &mut out[start..] {
            s.center = c.origin.apply(&s.center);
        }
    }
    (out, over)
}

/// Appends spheres covering `shape` (shape frame) and returns their overshoot
/// bound.
fn shape_spheres(shape: &Shape, t: f64, out: &mut Vec<Sphere>) -> f64 {
    match shape {
        Shape::Sphere { radius } => {
            out.push(Sphere { center: Point3::origin(), radius: radius + RADIUS_EPS_M });
            0.0
        }
        Shape::Box { half_extents: h } => {
            let (n, d) = grid_for(h, t);
            grid_cells(h, n, d, out, |c| box_sd(h, c))
        }
        Shape::Cylinder { radius, length } => cylinder_spheres(*radius, *length, t, out),
        Shape::Capsule { radius, length } => {
            let over = cylinder_spheres(*radius, *length, t.max(*radius * 1.0001), out);
            for z in [-length / 2.0, length / 2.0] {
                out.push(Sphere { center: Point3::new(0.0, 0.0, z), radius: radius + RADIUS_EPS_M });
            }
            over
        }
        Shape::Mesh(m) => mesh_spheres(m, t, out),
    }
}

/// The coarsest grid over the box `[-h, h]` whose cells' circumscribed
/// spheres have radius at most `t`: split the longest cell edge until they
/// do (a box within `t` stays one cell).
fn grid_for(h: &[f64; 3], t: f64) -> ([usize; 3], [f64; 3]) {
    let mut n = [1usize; 3];
    let cell = |n: &[usize; 3]| [0, 1, 2].map(|i| 2.0 * h[i] / n[i] as f64);
    loop {
        let d = cell(&n);
        if 0.5 * Vector3::from(d).norm() <= t || n.iter().product::<usize>() >= 1 << 18 {
            return (n, d);
        }
        let k = if d[0] >= d[1] && d[0] >= d[2] {
            0
        } else if d[1] >= d[2] {
            1
        } else {
            2
        };
        n[k] += 1;
    }
}

/// Spheres on a grid of `n` cells of size `d` over the box `[-h, h]`,
/// keeping cells `keep` accepts; returns the overshoot bound.
fn grid_cells(
    h: &[f64; 3],
    n: [usize; 3],
    d: [f64; 3],
    out: &mut Vec<Sphere>,
    sd: impl Fn(&Point3<f64>) -> f64,
) -> f64 {
    let r = 0.5 * Vector3::from(d).norm() + RADIUS_EPS_M;
    let mut over: f64 = 0.0;
    for i in 0..n[0] {
        for j in 0..n[1] {
            for k in 0..n[2] {
                let c = Point3::new(
                    -h[0] + (i as f64 + 0.5) * d[0],
                    -h[1] + (j as f64 + 0.5) * d[1],
                    -h[2] + (k as f64 + 0.5) * d[2],
                );
                let dist = sd(&c);
                // A cell whose circumscribed sphere misses the shape adds nothing.
                if dist > r {
                    continue;
                }
                over = over.max(r + dist);
                out.push(Sphere { center: c, radius: r });
            }
        }
    }
    over.max(0.0)
}

fn box_sd(h: &[f64; 3], p: &Point3<f64>) -> f64 {
    let q = Vector3::new(p.x.abs() - h[0], p.y.abs() - h[1], p.z.abs() - h[2]);
    let outside = q.sup(&Vector3::zeros()).norm();
    outside + q.max().min(0.0)
}

fn cylinder_sd(radius: f64, length: f64, p: &Point3<f64>) -> f64 {
    let dr = (p.x * p.x + p.y * p.y).sqrt() - radius;
    let dz = p.z.abs() - length / 2.0;
    let outside = (dr.max(0.0).powi(2) + dz.max(0.0).powi(2)).sqrt();
    outside + dr.max(dz).min(0.0)
}

fn cylinder_spheres(radius: f64, length: f64, t: f64, out: &mut Vec<Sphere>) -> f64 {
    if t > radius * 1.0001 {
        // Axial slices: sphere through the slice's rim.
        let half_slice_max = (t * t - radius * radius).sqrt();
        let n = ((length / (2.0 * half_slice_max)).ceil() as usize).clamp(1, 4096);
        let d = length / n as f64;
        let r = (radius * radius + d * d / 4.0).sqrt() + RADIUS_EPS_M;
        let mut over: f64 = 0.0;
        for k in 0..n {
            let c = Point3::new(0.0, 0.0, -length / 2.0 + (k as f64 + 0.5) * d);
            over = over.max(r + cylinder_sd(radius, length, &c));
            out.push(Sphere { center: c, radius: r });
        }
        over.max(0.0)
    } else {
        let h = [radius, radius, length / 2.0];
        let (n, d) = grid_for(&h, t);
        grid_cells(&h, n, d, out, |c| cylinder_sd(radius, length, c))
    }
}

/// Mesh surface covering (see module text). Returns the overshoot bound.
///
/// The grid is aligned with the mesh's principal axes and, like the box
/// grid, leaves a dimension whole when it is thinner than a cell, so an
/// elongated link gets slices across its length rather than patches of skin.
fn mesh_spheres(m: &TriMesh, t: f64, out: &mut Vec<Sphere>) -> f64 {
    // Two grids, cell-frame axes and principal axes; keep the better cover
    // (fewer spheres, then less volume). Both are conservative.
    let (pa, plo, pext) = principal_box(&m.vertices);
    let (ia, ilo, iext) = principal_box_with(&m.vertices, nalgebra::Matrix3::identity());
    let mut a = Vec::new();
    let oa = mesh_grid_spheres(m, t, (pa, plo, pext), &mut a);
    let mut b = Vec::new();
    let ob = mesh_grid_spheres(m, t, (ia, ilo, iext), &mut b);
    let vol = |v: &[Sphere]| v.iter().map(|s| s.radius.powi(3)).sum::<f64>();
    if (a.len(), vol(&a)) <= (b.len(), vol(&b)) {
        out.extend(a);
        oa
    } else {
        out.extend(b);
        ob
    }
}

type GridFrame = (nalgebra::Matrix3<f64>, [f64; 3], [f64; 3]);

fn mesh_grid_spheres(m: &TriMesh, t: f64, (axes, lo, extent): GridFrame, out: &mut Vec<Sphere>) -> f64 {
    let s = (2.0 * t / 3f64.sqrt()).max(1e-4);
    let n = extent.map(|e| ((e / s).ceil() as i64).clamp(1, 4096));
    let cell = [0, 1, 2].map(|i| (extent[i] / n[i] as f64).max(1e-9));
    // Pieces small enough for the grid; bound the work by coarsening.
    let mut max_edge = s;
    while estimated_pieces(m, max_edge) > 4_000_000.0 {
        max_edge *= 2.0;
    }
    let rt = axes.transpose();
    let key = |tri: &[Point3<f64>; 3]| {
        let centroid = (tri[0].coords + tri[1].coords + tri[2].coords) / 3.0;
        let local = rt * centroid;
        let k = [0, 1, 2].map(|i| (((local[i] - lo[i]) / cell[i]).floor() as i64).clamp(0, n[i] - 1));
        (k[0] * n[1] + k[1]) * n[2] + k[2]
    };
    let total = n[0] * n[1] * n[2];
    let mut ids = ClusterIds::new(total);
    let mut boxes: Vec<(Vector3<f64>, Vector3<f64>)> = Vec::new();
    for_each_piece(m, max_edge, |tri| {
        let next = boxes.len();
        let id = ids.get_or_insert(key(tri), next);
        if id == next {
            boxes.push((tri[0].coords, tri[0].coords));
        }
        for v in tri {
            boxes[id].0 = boxes[id].0.inf(&v.coords);
            boxes[id].1 = boxes[id].1.sup(&v.coords);
        }
    });
    let centers: Vec<Point3<f64>> = boxes.iter().map(|(lo, hi)| Point3::from((lo + hi) * 0.5)).collect();
    let mut radius = vec![0.0f64; centers.len()];
    let mut nearest = vec![f64::INFINITY; centers.len()];
    for_each_piece(m, max_edge, |tri| {
        let id = ids.get_or_insert(key(tri), usize::MAX);
        for v in tri {
            let d = (v - centers[id]).norm();
            radius[id] = radius[id].max(d);
            nearest[id] = nearest[id].min(d);
        }
    });
    let mut over: f64 = 0.0;
    for i in 0..centers.len() {
        let r = radius[i] + RADIUS_EPS_M;
        over = over.max(r + nearest[i]);
        out.push(Sphere { center: centers[i], radius: r });
    }
    over
}

/// Cluster numbers by grid cell: a dense table for small grids, a map for
/// large ones.
enum ClusterIds {
    Dense(Vec<u32>),
    Sparse(HashMap<i64, usize>),
}

impl ClusterIds {
    fn new(cells: i64) -> ClusterIds {
        if cells <= 1 << 16 {
            ClusterIds::Dense(vec![u32::MAX; cells as usize])
        } else {
            ClusterIds::Sparse(HashMap::new())
        }
    }
    fn get_or_insert(&mut self, key: i64, next: usize) -> usize {
        match self {
            ClusterIds::Dense(v) => {
                let slot = &mut v[key as usize];
                if *slot == u32::MAX {
                    *slot = next as u32;
                }
                *slot as usize
            }
            ClusterIds::Sparse(m) => *m.entry(key).or_insert(next),
        }
    }
}

fn estimated_pieces(m: &TriMesh, max_edge: f64) -> f64 {
    (0..m.triangles.len())
        .map(|i| {
            let [a, b, c] = m.triangle(i);
            let e = (b - a).norm().max((c - b).norm()).max((a - c).norm()) / max_edge;
            1.0 + 2.0 * e * e
        })
        .sum()
}

/// Calls `f` on every triangle of `m`, split (longest edge at its midpoint)
/// until no edge exceeds `max_edge`. The pieces tile each triangle exactly.
fn for_each_piece(m: &TriMesh, max_edge: f64, mut f: impl FnMut(&[Point3<f64>; 3])) {
    let max2 = max_edge * max_edge;
    let mut stack: Vec<[Point3<f64>; 3]> = Vec::new();
    for i in 0..m.triangles.len() {
        stack.push(m.triangle(i));
        while let Some(t) = stack.pop() {
            let e = [(t[1] - t[0]).norm_squared(), (t[2] - t[1]).norm_squared(), (t[0] - t[2]).norm_squared()];
            let k = if e[0] >= e[1] && e[0] >= e[2] {
                0
            } else if e[1] >= e[2] {
                1
            } else {
                2
            };
            if e[k] <= max2 {
                f(&t);
            } else {
                let (a, b, c) = (t[k], t[(k + 1) % 3], t[(k + 2) % 3]);
                let mid = Point3::from((a.coords + b.coords) * 0.5);
                stack.push([a, mid, c]);
                stack.push([mid, b, c]);
            }
        }
    }
}

/// Principal axes (columns), and the minimum corner and extent of the
/// vertices expressed along them.
fn principal_box(vs: &[Point3<f64>]) -> GridFrame {
    let n = vs.len().max(1) as f64;
    let mean = vs.iter().fold(Vector3::zeros(), |a, v| a + v.coords) / n;
    let cov = vs.iter().fold(nalgebra::Matrix3::zeros(), |a, v| {
        let d = v.coords - mean;
        a + d * d.transpose()
    }) / n;
    let eig = nalgebra::SymmetricEigen::new(cov);
    let mut axes = eig.eigenvectors;
    if !axes.iter().all(|v| v.is_finite()) || (axes.determinant().abs() - 1.0).abs() > 1e-6 {
        axes = nalgebra::Matrix3::identity();
    }
    principal_box_with(vs, axes)
}

/// Minimum corner and extent of the vertices along the given axes.
fn principal_box_with(vs: &[Point3<f64>], axes: nalgebra::Matrix3<f64>) -> GridFrame {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for v in vs {
        let l = axes.transpose() * v.coords;
        for i in 0..3 {
            lo[i] = lo[i].min(l[i]);
            hi[i] = hi[i].max(l[i]);
        }
    }
    (axes, lo, [0, 1, 2].map(|i| hi[i] - lo[i]))
}

/// A link's spheres moved into another frame (e.g. the cell).
pub fn transform(spheres: &[Sphere], f: &Frame) -> Vec<Sphere> {
    spheres.iter().map(|s| Sphere { center: f.apply(&s.center), radius: s.radius }).collect()
}
