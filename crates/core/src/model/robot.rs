//! The robot model: links in topological order and the joints between them.

use super::geometry::Collision;
use crate::frame::Frame;
use nalgebra::Vector3;

/// Kind of joint. Floating, planar and spherical joints are refused at load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JointKind {
    /// No motion.
    Fixed,
    /// Rotation about the axis, within limits.
    Revolute,
    /// Rotation about the axis, unbounded.
    Continuous,
    /// Translation along the axis.
    Prismatic,
}

impl JointKind {
    /// True for joints that move (everything but fixed).
    pub fn moves(self) -> bool {
        self != JointKind::Fixed
    }
    /// True for rotational joints.
    pub fn is_rotational(self) -> bool {
        matches!(self, JointKind::Revolute | JointKind::Continuous)
    }
}

/// A mimic relation: `q = multiplier · q_source + offset`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mimic {
    /// Index (in [`Robot::dof_names`]) of the actuated joint this one follows,
    /// after chains of mimics are resolved.
    pub dof: usize,
    /// Multiplier.
    pub multiplier: f64,
    /// Offset, rad or m.
    pub offset: f64,
}

/// Position and velocity limits of a joint (URDF `<limit>`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// Lower position limit (rad or m); `-inf` for continuous joints.
    pub lower: f64,
    /// Upper position limit (rad or m); `+inf` for continuous joints.
    pub upper: f64,
    /// Maximum speed (rad/s or m/s).
    pub velocity: f64,
}

/// The joint that connects a link to its parent.
#[derive(Clone, Debug)]
pub struct Joint {
    /// Joint name as in the URDF.
    pub name: String,
    /// Kind.
    pub kind: JointKind,
    /// Index of the parent link.
    pub parent: usize,
    /// Index of the child link.
    pub child: usize,
    /// Pose of the joint frame in the parent link frame.
    pub origin: Frame,
    /// Unit axis in the joint frame.
    pub axis: Vector3<f64>,
    /// Limits, where the URDF gives them.
    pub limits: Option<Limits>,
    /// Index into the joint-position vector for actuated joints.
    pub dof: Option<usize>,
    /// Mimic relation for joints that follow another.
    pub mimic: Option<Mimic>,
}

/// A link.
#[derive(Clone, Debug)]
pub struct Link {
    /// Link name as in the URDF.
    pub name: String,
    /// Index of the joint whose child this link is (`None` for the root).
    pub parent_joint: Option<usize>,
    /// Collision geometry in the link frame.
    pub collisions: Vec<Collision>,
}

/// A robot: links in topological order (root first, every parent before its
/// children), `joints[i]` is the parent joint of `links[i + 1]`.
#[derive(Clone, Debug)]
pub struct Robot {
    /// Robot name.
    pub name: String,
    /// Links, root first.
    pub links: Vec<Link>,
    /// Joints, `joints[i].child == i + 1`.
    pub joints: Vec<Joint>,
    /// Names of the actuated joints, in joint-position vector order.
    pub dof_names: Vec<String>,
}

impl Robot {
    /// Index of the link called `name`.
    pub fn link_index(&self, name: &str) -> Option<usize> {
        self.links.iter().position(|l| l.name == name)
    }
    /// Index of the joint called `name`.
    pub fn joint_index(&self, name: &str) -> Option<usize> {
        self.joints.iter().position(|j| j.name == name)
    }
    /// Index of the actuated joint called `name` in the position vector.
    pub fn dof_index(&self, name: &str) -> Option<usize> {
        self.dof_names.iter().position(|n| n == name)
    }
    /// The joint driving position-vector entry `dof`.
    pub fn dof_joint(&self, dof: usize) -> &Joint {
        // invariant: a model is built with one joint per dof, 0..dof() (callers index within it)
        self.joints.iter().find(|j| j.dof == Some(dof)).expect("every dof has a joint")
    }
    /// Number of actuated joints.
    pub fn dof(&self) -> usize {
        self.dof_names.len()
    }
    /// Index of a link's parent link.
    pub fn parent_link(&self, link: usize) -> Option<usize> {
        self.links[link].parent_joint.map(|j| self.joints[j].parent)
    }
}
