//! Robot models: a [`Robot`] (links in topological order, one parent joint
//! per non-root link, collision geometry; read from URDF by the description
//! layer), its kinematics and its spheres.
//!
//! - [`kinematics`] computes every link's pose from joint positions over any
//!   tree (not only chains), allocating nothing per call.
//! - [`spheres`] covers each link's collision geometry by spheres,
//!   conservatively: every point of the geometry lies in at least one sphere.
//!   Two levels: one bounding sphere per link, then the fine set.
//! - [`exact`] is level 3: each link's geometry as parry3d shapes, for exact
//!   distances.
//! - [`coverage`] samples geometry to check that claim, and measures the
//!   volume the spheres add.
//! - [`posed`] poses the fine spheres of a robot into flat `x, y, z, r`
//!   arrays allocated once per robot.

pub mod batch;
pub mod coverage;
pub mod exact;
pub mod geometry;
pub mod kinematics;
pub mod posed;
pub mod robot;
pub mod spheres;

pub use batch::{BATCH, PosedBatch};
pub use geometry::{Collision, Shape};
pub use kinematics::Kinematics;
pub use posed::{PosedSpheres, SpherePoser};
pub use robot::{Joint, JointKind, Link, Mimic, Robot};
pub use spheres::{LinkSpheres, Sphere, SphereModel, SphereParams};
