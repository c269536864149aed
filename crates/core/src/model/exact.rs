//! Level 3: a link's exact collision geometry as a parry3d shape, for exact
//! distances where the spheres say two links are close.
//!
//! parry3d works in `f32` with glam types; poses cross over from [`Frame`]
//! here and nowhere else. URDF cylinders run along z, parry's along y: the
//! cylinder is turned a quarter about x. Meshes are surfaces (`TriMesh`), so a
//! distance is measured between surfaces; where one link could sit wholly
//! inside another, the sphere level (which covers surfaces) is what answers.

use super::geometry::{Collision, Shape};
use crate::frame::Frame;
use parry3d::math::{Pose, Vec3};
use parry3d::query::ClosestPoints;
use parry3d::shape::SharedShape;

/// A link whose geometry parry3d cannot take.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExactError {
    /// A mesh parry3d refused (degenerate triangles, no triangles, …).
    #[error("mesh {path}: {message}")]
    Mesh {
        /// The mesh file.
        path: std::path::PathBuf,
        /// parry3d's reason.
        message: String,
    },
}

/// The exact shape of a link: its collision elements as parry3d shapes with
/// their poses in the link frame. (A parry `Compound` cannot hold meshes,
/// so the parts stay separate and a distance is the least over part pairs.)
#[derive(Clone)]
pub struct LinkShape {
    parts: Vec<(Frame, SharedShape)>,
}

/// The exact shape of a link in its own frame (`None` without geometry).
pub fn link_shape(collisions: &[Collision]) -> Result<Option<LinkShape>, ExactError> {
    if collisions.is_empty() {
        return Ok(None);
    }
    let mut parts = Vec::with_capacity(collisions.len());
    for c in collisions {
        let quarter_x = Frame::from_xyz_rpy([0.0; 3], [std::f64::consts::FRAC_PI_2, 0.0, 0.0]);
        let (shape, local) = match &c.shape {
            Shape::Box { half_extents: h } => (SharedShape::cuboid(h[0] as f32, h[1] as f32, h[2] as f32), c.origin),
            Shape::Sphere { radius } => (SharedShape::ball(*radius as f32), c.origin),
            Shape::Cylinder { radius, length } => {
                (SharedShape::cylinder((*length / 2.0) as f32, *radius as f32), c.origin.compose(&quarter_x))
            }
            Shape::Capsule { radius, length } => {
                (SharedShape::capsule_z((*length / 2.0) as f32, *radius as f32), c.origin)
            }
            Shape::Mesh(m) => {
                let vertices = m.vertices.iter().map(|v| Vec3::new(v.x as f32, v.y as f32, v.z as f32)).collect();
                let shape = SharedShape::trimesh(vertices, m.triangles.clone())
                    .map_err(|e| ExactError::Mesh { path: m.path.clone(), message: format!("{e:?}") })?;
                (shape, c.origin)
            }
        };
        parts.push((local, shape));
    }
    Ok(Some(LinkShape { parts }))
}

impl LinkShape {
    /// A box (min x, y, z, then max) containing the shape posed at `at`
    /// (cell frame). No allocation.
    pub fn bounds_at(&self, at: &Frame) -> [f32; 6] {
        let mut b =
            [f32::INFINITY, f32::INFINITY, f32::INFINITY, f32::NEG_INFINITY, f32::NEG_INFINITY, f32::NEG_INFINITY];
        for (local, s) in &self.parts {
            let aabb = s.compute_aabb(&pose(&at.compose(local)));
            for k in 0..3 {
                b[k] = b[k].min(aabb.mins[k]);
                b[3 + k] = b[3 + k].max(aabb.maxs[k]);
            }
        }
        b
    }
}

impl std::fmt::Debug for LinkShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LinkShape({} parts)", self.parts.len())
    }
}

/// A link's solid exact shape, for distances between robots' links: its
/// primitives as they are, each mesh as its convex hull (a solid that
/// contains the mesh: a distance to it is never more than to the mesh, and
/// one link inside another reads 0, not the gap between their surfaces).
/// `None` without geometry, or where a mesh has no hull (flat, too few
/// points): that link's spheres answer alone.
pub fn solid_link_shape(collisions: &[Collision]) -> Option<LinkShape> {
    let mut parts = Vec::with_capacity(collisions.len());
    for c in collisions {
        if let Shape::Mesh(m) = &c.shape {
            let points: Vec<Vec3> = m.vertices.iter().map(|v| Vec3::new(v.x as f32, v.y as f32, v.z as f32)).collect();
            parts.push((c.origin, SharedShape::convex_hull(&points)?));
        } else {
            let mut one = link_shape(std::slice::from_ref(c)).ok()??;
            parts.append(&mut one.parts);
        }
    }
    (!parts.is_empty()).then_some(LinkShape { parts })
}

/// A [`Frame`] as a parry3d pose (through glamx's nalgebra bridge).
pub fn pose(f: &Frame) -> Pose {
    Pose::from(f.to_isometry().cast::<f32>())
}

/// Distance between two posed shapes, metres (0 when they touch or overlap);
/// `None` for a pair parry3d does not support.
pub fn distance(a: &LinkShape, pose_a: &Frame, b: &LinkShape, pose_b: &Frame) -> Option<f64> {
    let mut best = f64::INFINITY;
    for (la, sa) in &a.parts {
        let pa = pose(&pose_a.compose(la));
        for (lb, sb) in &b.parts {
            let d = parry3d::query::distance(&pa, sa.as_ref(), &pose(&pose_b.compose(lb)), sb.as_ref()).ok()?;
            best = best.min(f64::from(d.distance));
        }
    }
    Some(best)
}

/// The distance between two posed shapes where it is at most `max_dist`,
/// metres (0 when they touch or overlap); `Some(None)` where they are
/// farther apart, which GJK proves sooner than it finds the distance
/// ([`distance`]); `None` for a pair parry3d does not support.
pub fn distance_within(
    a: &LinkShape,
    pose_a: &Frame,
    b: &LinkShape,
    pose_b: &Frame,
    max_dist: f64,
) -> Option<Option<f64>> {
    let mut best: Option<f64> = None;
    for (la, sa) in &a.parts {
        let pa = pose(&pose_a.compose(la));
        for (lb, sb) in &b.parts {
            let pb = pose(&pose_b.compose(lb));
            match parry3d::query::closest_points(&pa, sa.as_ref(), &pb, sb.as_ref(), max_dist as f32).ok()? {
                ClosestPoints::Intersecting => return Some(Some(0.0)),
                ClosestPoints::WithinMargin(p, q) => {
                    let d = f64::from(p.distance(q));
                    best = Some(best.map_or(d, |b| b.min(d)));
                }
                ClosestPoints::Disjoint => {}
            }
        }
    }
    Some(best)
}

/// A shape placed once (a static obstacle): its parts' parry3d poses are
/// computed here, not per query.
#[derive(Clone)]
pub struct PlacedShape {
    parts: Vec<(Pose, SharedShape)>,
}

impl PlacedShape {
    /// Places `shape` at `pose`.
    pub fn new(shape: &LinkShape, pose_of: &Frame) -> PlacedShape {
        PlacedShape { parts: shape.parts.iter().map(|(l, s)| (pose(&pose_of.compose(l)), s.clone())).collect() }
    }

    /// Distance to a sphere (cell-frame centre, radius), metres (0 when
    /// they touch or overlap); `None` for a pair parry3d does not support.
    /// No allocation.
    pub fn ball_distance(&self, center: [f32; 3], radius: f32) -> Option<f32> {
        let ball = parry3d::shape::Ball::new(radius);
        let pb = Pose::translation(center[0], center[1], center[2]);
        let mut best = f32::INFINITY;
        for (p, s) in &self.parts {
            let d = parry3d::query::distance(p, s.as_ref(), &pb, &ball).ok()?;
            best = best.min(d.distance);
        }
        Some(best)
    }

    /// Distance to `shape` posed at `at` (cell frame), metres (0 when they
    /// touch or overlap); `None` for a pair parry3d does not support. No
    /// allocation.
    pub fn shape_distance(&self, shape: &LinkShape, at: &Frame) -> Option<f32> {
        let mut best = f32::INFINITY;
        for (local, ls) in &shape.parts {
            let pl = pose(&at.compose(local));
            for (p, s) in &self.parts {
                let d = parry3d::query::distance(p, s.as_ref(), &pl, ls.as_ref()).ok()?;
                best = best.min(d.distance);
            }
        }
        Some(best)
    }
}
