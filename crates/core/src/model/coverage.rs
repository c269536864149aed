//! Checking sphere coverage by sampling, and measuring added volume.
//!
//! Samples are deterministic (a small xorshift generator with a fixed seed),
//! so a report is reproducible. For primitives the samples cover the surface
//! and the interior; for meshes, every vertex and points spread over every
//! triangle (density per unit area, at least a few per triangle).

use super::geometry::{Collision, Shape};
use super::spheres::Sphere;
use nalgebra::{Point3, Vector3};

/// Deterministic xorshift64* generator for sampling.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed (zero is remapped).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let v = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (v >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in `[lo, hi)`.
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
}

/// Sample points of one collision element, in the link frame.
pub fn sample_points(c: &Collision, per_m2: f64, rng: &mut Rng, out: &mut Vec<Point3<f64>>) {
    let start = out.len();
    match &c.shape {
        Shape::Box { half_extents: h } => {
            let n = ((8.0 * (h[0] * h[1] + h[1] * h[2] + h[0] * h[2]) * per_m2) as usize).clamp(200, 20_000);
            for _ in 0..n {
                let mut p = Vector3::new(rng.range(-h[0], h[0]), rng.range(-h[1], h[1]), rng.range(-h[2], h[2]));
                // Half the samples pushed onto a face (surface), half interior.
                if rng.unit() < 0.5 {
                    let axis = (rng.unit() * 3.0) as usize % 3;
                    p[axis] = if rng.unit() < 0.5 { -h[axis] } else { h[axis] };
                }
                out.push(Point3::from(p));
            }
            for corner in 0..8 {
                let s = |bit: usize, v: f64| if corner & (1 << bit) != 0 { v } else { -v };
                out.push(Point3::new(s(0, h[0]), s(1, h[1]), s(2, h[2])));
            }
        }
        Shape::Cylinder { radius, length } | Shape::Capsule { radius, length } => {
            let cap = matches!(c.shape, Shape::Capsule { .. });
            let area = 2.0 * std::f64::consts::PI * radius * (radius + length);
            let n = ((area * per_m2) as usize).clamp(200, 20_000);
            for _ in 0..n {
                let th = rng.range(0.0, std::f64::consts::TAU);
                let surface = rng.unit() < 0.5;
                let rho = if surface { *radius } else { radius * rng.unit().sqrt() };
                let mut z = rng.range(-length / 2.0, length / 2.0);
                if !cap && rng.unit() < 0.3 {
                    z = if rng.unit() < 0.5 { -length / 2.0 } else { length / 2.0 };
                }
                out.push(Point3::new(rho * th.cos(), rho * th.sin(), z));
                if cap {
                    let d = unit_vector(rng) * *radius;
                    let end = if d.z >= 0.0 { length / 2.0 } else { -length / 2.0 };
                    out.push(Point3::new(d.x, d.y, d.z + end));
                }
            }
        }
        Shape::Sphere { radius } => {
            for _ in 0..2000 {
                let scale = if rng.unit() < 0.5 { 1.0 } else { rng.unit().cbrt() };
                out.push(Point3::from(unit_vector(rng) * (*radius * scale)));
            }
        }
        Shape::Mesh(m) => {
            out.extend(m.vertices.iter().copied());
            for i in 0..m.triangles.len() {
                let [a, b, cc] = m.triangle(i);
                let area = 0.5 * (b - a).cross(&(cc - a)).norm();
                let n = ((area * per_m2) as usize).clamp(3, 200);
                for _ in 0..n {
                    let (mut u, mut v) = (rng.unit(), rng.unit());
                    if u + v > 1.0 {
                        u = 1.0 - u;
                        v = 1.0 - v;
                    }
                    out.push(a + (b - a) * u + (cc - a) * v);
                }
                // Edge midpoints too.
                out.push(Point3::from((a.coords + b.coords) * 0.5));
                out.push(Point3::from((b.coords + cc.coords) * 0.5));
                out.push(Point3::from((cc.coords + a.coords) * 0.5));
            }
        }
    }
    for p in &mut out[start..] {
        *p = c.origin.apply(p);
    }
}

fn unit_vector(rng: &mut Rng) -> Vector3<f64> {
    loop {
        let v = Vector3::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0));
        let n = v.norm();
        if n > 1e-3 && n <= 1.0 {
            return v / n;
        }
    }
}

/// Result of a coverage check of one link.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CoverageReport {
    /// Points sampled.
    pub samples: usize,
    /// Points in no sphere.
    pub uncovered: usize,
    /// The largest distance from an uncovered point to the nearest sphere
    /// surface, metres (0 when all are covered).
    pub worst_gap_m: f64,
}

/// Samples every collision element of a link and counts points outside all
/// `spheres` (link frame).
pub fn check(collisions: &[Collision], spheres: &[Sphere], per_m2: f64, seed: u64) -> CoverageReport {
    let mut rng = Rng::new(seed);
    let mut pts = Vec::new();
    for c in collisions {
        sample_points(c, per_m2, &mut rng, &mut pts);
    }
    let mut rep = CoverageReport { samples: pts.len(), ..Default::default() };
    for p in &pts {
        if !spheres.iter().any(|s| s.contains(p)) {
            rep.uncovered += 1;
            let gap = spheres.iter().map(|s| (p - s.center).norm() - s.radius).fold(f64::INFINITY, f64::min);
            rep.worst_gap_m = rep.worst_gap_m.max(gap);
        }
    }
    rep
}

/// Volume of the union of `spheres`, m³, by counting the centres of a
/// `cells³` grid over their bounding box (error shrinks with `cells`).
pub fn union_volume(spheres: &[Sphere], cells: usize) -> f64 {
    let Some(first) = spheres.first() else { return 0.0 };
    let (mut lo, mut hi) = (first.center.coords, first.center.coords);
    for s in spheres {
        lo = lo.inf(&(s.center.coords - Vector3::repeat(s.radius)));
        hi = hi.sup(&(s.center.coords + Vector3::repeat(s.radius)));
    }
    let step = (hi - lo) / cells as f64;
    let mut inside = 0usize;
    for i in 0..cells {
        for j in 0..cells {
            for k in 0..cells {
                let p = Point3::from(
                    lo + step.component_mul(&Vector3::new(i as f64 + 0.5, j as f64 + 0.5, k as f64 + 0.5)),
                );
                if spheres.iter().any(|s| s.contains(&p)) {
                    inside += 1;
                }
            }
        }
    }
    inside as f64 * step.x * step.y * step.z
}

/// Volume of a link's geometry, m³ (sum over collision elements; overlaps
/// between elements are counted twice).
pub fn geometry_volume(collisions: &[Collision]) -> f64 {
    collisions.iter().map(|c| c.shape.volume()).sum()
}
