//! Collision geometry of a link, in the link frame.

use crate::frame::Frame;
use nalgebra::Point3;
use std::path::PathBuf;

/// One `<collision>` element of a link.
#[derive(Clone, Debug)]
pub struct Collision {
    /// Pose of the shape in the link frame.
    pub origin: Frame,
    /// The shape, in its own frame.
    pub shape: Shape,
}

/// A collision shape in its own frame (URDF conventions: boxes and cylinders
/// centred at the origin, cylinders along z).
#[derive(Clone, Debug)]
pub enum Shape {
    /// Box with the given half extents, metres.
    Box {
        /// Half of the box's size along x, y, z.
        half_extents: [f64; 3],
    },
    /// Cylinder along z.
    Cylinder {
        /// Radius, metres.
        radius: f64,
        /// Length along z, metres.
        length: f64,
    },
    /// Capsule along z: a cylinder of `length` with hemispherical caps.
    Capsule {
        /// Radius, metres.
        radius: f64,
        /// Length of the cylindrical part, metres.
        length: f64,
    },
    /// Sphere at the origin.
    Sphere {
        /// Radius, metres.
        radius: f64,
    },
    /// Triangle mesh, already scaled (negative scales mirror it).
    Mesh(TriMesh),
}

/// A triangle mesh loaded from a file.
#[derive(Clone, Debug)]
pub struct TriMesh {
    /// The file it was read from.
    pub path: PathBuf,
    /// Scale applied to the file's vertices.
    pub scale: [f64; 3],
    /// Vertices after scaling, metres.
    pub vertices: Vec<Point3<f64>>,
    /// Triangles as vertex indices.
    pub triangles: Vec<[u32; 3]>,
}

impl Shape {
    /// Short name for summaries.
    pub fn kind(&self) -> &'static str {
        match self {
            Shape::Box { .. } => "box",
            Shape::Cylinder { .. } => "cylinder",
            Shape::Capsule { .. } => "capsule",
            Shape::Sphere { .. } => "sphere",
            Shape::Mesh(_) => "mesh",
        }
    }

    /// Volume enclosed, m³. For meshes, the absolute signed volume (exact for
    /// closed meshes, an estimate for open ones).
    pub fn volume(&self) -> f64 {
        use std::f64::consts::PI;
        match self {
            Shape::Box { half_extents: h } => 8.0 * h[0] * h[1] * h[2],
            Shape::Cylinder { radius, length } => PI * radius * radius * length,
            Shape::Capsule { radius, length } => PI * radius * radius * length + 4.0 / 3.0 * PI * radius.powi(3),
            Shape::Sphere { radius } => 4.0 / 3.0 * PI * radius.powi(3),
            Shape::Mesh(m) => m.signed_volume().abs(),
        }
    }
}

impl TriMesh {
    /// Signed volume by the divergence theorem (positive for outward normals).
    pub fn signed_volume(&self) -> f64 {
        self.triangles
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(|i| self.vertices[i as usize].coords);
                a.dot(&b.cross(&c)) / 6.0
            })
            .sum()
    }

    /// The three corners of triangle `i`.
    #[inline]
    pub fn triangle(&self, i: usize) -> [Point3<f64>; 3] {
        self.triangles[i].map(|v| self.vertices[v as usize])
    }
}
