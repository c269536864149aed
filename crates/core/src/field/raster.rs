//! Obstacles into voxels: a voxel is occupied when its centre lies within
//! half a voxel diagonal of the obstacle, solid (surface and interior).
//! Primitives by their exact distance functions; meshes by exact
//! point–triangle distance for the surface and ray parity for the interior
//! (closed meshes only: an open mesh has no inside, only its surface counts).

use super::edt::Region;
use crate::cell::VoxelGrid;
use crate::frame::Frame;
use crate::model::geometry::Shape;
use nalgebra::{Point3, Vector3};
use std::collections::HashMap;

/// An obstacle placed in the cell, with what rasterizing it needs.
#[derive(Clone, Debug)]
pub struct Placed {
    /// Cell frame ← obstacle frame.
    pub pose: Frame,
    /// The shape in its own frame.
    pub shape: Shape,
    /// Every voxel it can occupy lies in this index box.
    pub voxels: Region,
    inv: Frame,
    /// Mesh triangles in the cell frame (empty for primitives).
    tris: Vec<[Point3<f64>; 3]>,
    /// Whether the mesh is closed (every edge shared by exactly two triangles).
    closed: bool,
}

impl Placed {
    /// Places `shape` at `pose` and finds the voxels it can reach in `grid`.
    pub fn new(pose: Frame, shape: Shape, grid: &VoxelGrid) -> Placed {
        let (tris, closed) = match &shape {
            Shape::Mesh(m) => {
                let tris: Vec<_> = (0..m.triangles.len()).map(|i| m.triangle(i).map(|p| pose.apply(&p))).collect();
                (tris, is_closed(&m.triangles))
            }
            _ => (Vec::new(), false),
        };
        let (lo, hi) = world_aabb(&pose, &shape, &tris);
        let h = half_diagonal(grid);
        let voxels = std::array::from_fn(|a| {
            let (o, r, n) = (grid.origin_m[a], grid.resolution_m, grid.dims[a] as f64);
            // Centres (i + ½)·res + o within [lo − h, hi + h], one voxel wider for rounding.
            let i0 = ((lo[a] - h - o) / r - 0.5).ceil() - 1.0;
            let i1 = ((hi[a] + h - o) / r - 0.5).floor() + 2.0;
            if !(i0.is_finite() && i1.is_finite()) {
                return [0, 0];
            }
            [i0.clamp(0.0, n) as usize, i1.clamp(0.0, n) as usize]
        });
        Placed { pose, inv: pose.inverse(), shape, voxels, tris, closed }
    }

    /// Marks (`x` fastest over `region`) every voxel of `region` whose centre
    /// lies within half a voxel diagonal of the solid obstacle.
    pub fn raster(&self, grid: &VoxelGrid, region: &Region, marks: &mut [bool]) {
        let h = half_diagonal(grid);
        // A hair more than h: rounding must never leave a voxel out.
        let reach = h * (1.0 + 1e-9) + 1e-12;
        let dims = region.map(|[lo, hi]| hi - lo);
        debug_assert_eq!(marks.len(), dims.iter().product::<usize>());
        let centre = |a: usize, i: usize| grid.origin_m[a] + (i as f64 + 0.5) * grid.resolution_m;
        if let Shape::Mesh(_) = self.shape {
            self.raster_mesh(grid, region, reach, marks);
            return;
        }
        let mut m = 0;
        for z in region[2][0]..region[2][1] {
            for y in region[1][0]..region[1][1] {
                for x in region[0][0]..region[0][1] {
                    let p = self.inv.apply(&Point3::new(centre(0, x), centre(1, y), centre(2, z)));
                    if primitive_distance(&self.shape, &p) <= reach {
                        marks[m] = true;
                    }
                    m += 1;
                }
            }
        }
    }

    fn raster_mesh(&self, grid: &VoxelGrid, region: &Region, reach: f64, marks: &mut [bool]) {
        let (o, res) = (grid.origin_m, grid.resolution_m);
        let dims = region.map(|[lo, hi]| hi - lo);
        let centre = |a: usize, i: usize| o[a] + (i as f64 + 0.5) * res;
        let at = |x: usize, y: usize, z: usize| {
            ((z - region[2][0]) * dims[1] + (y - region[1][0])) * dims[0] + (x - region[0][0])
        };
        // Surface: the voxels near each triangle.
        for t in &self.tris {
            let mut r = [[0usize; 2]; 3];
            for a in 0..3 {
                let lo = t.iter().map(|p| p[a]).fold(f64::INFINITY, f64::min);
                let hi = t.iter().map(|p| p[a]).fold(f64::NEG_INFINITY, f64::max);
                let i0 = (((lo - reach - o[a]) / res - 0.5).ceil() - 1.0).max(region[a][0] as f64);
                let i1 = (((hi + reach - o[a]) / res - 0.5).floor() + 2.0).min(region[a][1] as f64);
                if i0 >= i1 {
                    r[a] = [0, 0];
                } else {
                    r[a] = [i0 as usize, i1 as usize];
                }
            }
            for z in r[2][0]..r[2][1] {
                for y in r[1][0]..r[1][1] {
                    for x in r[0][0]..r[0][1] {
                        let p = Point3::new(centre(0, x), centre(1, y), centre(2, z));
                        if point_triangle_distance(&p, t) <= reach {
                            marks[at(x, y, z)] = true;
                        }
                    }
                }
            }
        }
        if !self.closed {
            return;
        }
        // Interior: parity of crossings along +x from each (y, z) line. The
        // lines are nudged off the voxel centres by a tiny irrational amount
        // so that they do not pass exactly through mesh edges or vertices;
        // a centre this close to the surface is marked by the surface pass.
        let (ey, ez) = (res * 1.0e-7 * std::f64::consts::PI, res * 1.0e-7 * std::f64::consts::E);
        let mut xs: Vec<f64> = Vec::new();
        for z in region[2][0]..region[2][1] {
            for y in region[1][0]..region[1][1] {
                let (py, pz) = (centre(1, y) + ey, centre(2, z) + ez);
                xs.clear();
                for t in &self.tris {
                    if let Some(x) = ray_x_crossing(py, pz, t) {
                        xs.push(x);
                    }
                }
                if xs.len() < 2 {
                    continue;
                }
                xs.sort_by(f64::total_cmp);
                for pair in xs.chunks_exact(2) {
                    for x in region[0][0]..region[0][1] {
                        let cx = centre(0, x);
                        if cx >= pair[0] && cx <= pair[1] {
                            marks[at(x, y, z)] = true;
                        }
                    }
                }
            }
        }
    }
}

/// Half the diagonal of a voxel, metres.
pub fn half_diagonal(grid: &VoxelGrid) -> f64 {
    grid.resolution_m * 3f64.sqrt() / 2.0
}

/// Distance from a point (shape frame) to a solid primitive: 0 inside.
pub fn primitive_distance(shape: &Shape, p: &Point3<f64>) -> f64 {
    match shape {
        Shape::Box { half_extents: h } => {
            let q = Vector3::new((p.x.abs() - h[0]).max(0.0), (p.y.abs() - h[1]).max(0.0), (p.z.abs() - h[2]).max(0.0));
            q.norm()
        }
        Shape::Sphere { radius } => (p.coords.norm() - radius).max(0.0),
        Shape::Cylinder { radius, length } => {
            let radial = ((p.x * p.x + p.y * p.y).sqrt() - radius).max(0.0);
            let axial = (p.z.abs() - length / 2.0).max(0.0);
            (radial * radial + axial * axial).sqrt()
        }
        Shape::Capsule { radius, length } => {
            let z = p.z.clamp(-length / 2.0, length / 2.0);
            ((p.x * p.x + p.y * p.y + (p.z - z) * (p.z - z)).sqrt() - radius).max(0.0)
        }
        Shape::Mesh(_) => f64::INFINITY,
    }
}

fn world_aabb(pose: &Frame, shape: &Shape, tris: &[[Point3<f64>; 3]]) -> ([f64; 3], [f64; 3]) {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    let mut take = |p: &Point3<f64>| {
        for a in 0..3 {
            lo[a] = lo[a].min(p[a]);
            hi[a] = hi[a].max(p[a]);
        }
    };
    let half = match shape {
        Shape::Box { half_extents } => *half_extents,
        Shape::Sphere { radius } => [*radius; 3],
        Shape::Cylinder { radius, length } => [*radius, *radius, length / 2.0],
        Shape::Capsule { radius, length } => [*radius, *radius, length / 2.0 + radius],
        Shape::Mesh(_) => {
            tris.iter().flatten().for_each(&mut take);
            return (lo, hi);
        }
    };
    for c in 0..8 {
        let s = |b: usize| if c >> b & 1 == 1 { 1.0 } else { -1.0 };
        take(&pose.apply(&Point3::new(s(0) * half[0], s(1) * half[1], s(2) * half[2])));
    }
    (lo, hi)
}

/// Whether every edge is shared by exactly two triangles.
fn is_closed(tris: &[[u32; 3]]) -> bool {
    let mut edges: HashMap<(u32, u32), u32> = HashMap::new();
    for t in tris {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            *edges.entry((a.min(b), a.max(b))).or_default() += 1;
        }
    }
    !edges.is_empty() && edges.values().all(|&n| n == 2)
}

/// Where the line `{y = py, z = pz}` crosses a triangle, if it does.
fn ray_x_crossing(py: f64, pz: f64, t: &[Point3<f64>; 3]) -> Option<f64> {
    let (a, b, c) = (&t[0], &t[1], &t[2]);
    // Barycentric coordinates of (py, pz) in the triangle's y–z projection.
    let det = (b.y - a.y) * (c.z - a.z) - (c.y - a.y) * (b.z - a.z);
    if det == 0.0 {
        return None; // edge-on to the line
    }
    let u = ((py - a.y) * (c.z - a.z) - (c.y - a.y) * (pz - a.z)) / det;
    let v = ((b.y - a.y) * (pz - a.z) - (py - a.y) * (b.z - a.z)) / det;
    if u < 0.0 || v < 0.0 || u + v > 1.0 {
        return None;
    }
    Some(a.x + u * (b.x - a.x) + v * (c.x - a.x))
}

/// Exact distance from a point to a triangle (closest-point regions).
pub fn point_triangle_distance(p: &Point3<f64>, t: &[Point3<f64>; 3]) -> f64 {
    let (a, b, c) = (t[0], t[1], t[2]);
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(&ap), ac.dot(&ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return ap.norm();
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(&bp), ac.dot(&bp));
    if d3 >= 0.0 && d4 <= d3 {
        return bp.norm();
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return (ap - ab * v).norm();
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(&cp), ac.dot(&cp));
    if d6 >= 0.0 && d5 <= d6 {
        return cp.norm();
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return (ap - ac * w).norm();
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return (bp - (c - b) * w).norm();
    }
    let denom = 1.0 / (va + vb + vc);
    let (v, w) = (vb * denom, vc * denom);
    (ap - ab * v - ac * w).norm()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::coverage::Rng;

    #[test]
    fn point_triangle_distance_matches_dense_sampling() {
        let mut rng = Rng::new(11);
        for _ in 0..300 {
            let mut r = || Point3::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0));
            let t = [r(), r(), r()];
            let p = r();
            let d = point_triangle_distance(&p, &t);
            let mut best = f64::INFINITY;
            let n = 120;
            for i in 0..=n {
                for j in 0..=(n - i) {
                    let (u, v) = (i as f64 / n as f64, j as f64 / n as f64);
                    let q = t[0] + (t[1] - t[0]) * u + (t[2] - t[0]) * v;
                    best = best.min((p - q).norm());
                }
            }
            assert!(d <= best + 1e-12, "{d} > sampled {best}");
            assert!(best - d < 0.05, "{d} far below sampled {best}");
        }
    }
}
