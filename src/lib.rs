//! # workcell_guard
//!
//! Keeps the robots of one workcell from hitting each other and the cell.
//!
//! This crate is the pure core: it reads no topic and imports no middleware.
//! It turns a workcell description (YAML) and robot descriptions (URDF) into
//! validated, flat, allocation-free data structures that the per-cycle code
//! works on. See `ARCHITECTURE.md` for the data flow from topic to decision.
//!
//! Modules:
//! - [`workcell`]: the workcell description, parsed in stages (raw YAML, then a
//!   validated [`workcell::Workcell`]); every error names the file, the key and
//!   the value.
//! - [`model`]: URDF loading, forward kinematics over any tree, conservative
//!   sphere models of each link and posing them into flat arrays.
//! - [`field`]: the cell's voxel distance field: exact distance transform,
//!   conservative sphere queries, incremental updates, `.npy` import/export.
//! - [`forecast`]: joint velocity/acceleration from the last joint states and
//!   the configurations on the way to a stop.
//! - [`hash`]: the spatial hash for robot-vs-robot checks.
//! - [`guard`]: [`guard::Guard::step`], from joint states to stop decisions,
//!   with the automatic collision matrix and allowed contacts.
//! - [`frame`]: the rigid transform used everywhere (rotation matrix plus
//!   translation, nalgebra fixed-size types, no heap).
//! - [`platen`]: allocation of the shared platen surface to its planar units
//!   from bitmap world maps (grants, partial grants, denials, deallocation).
//! - [`sim`]: closed-loop simulation of a cell's arms under the guard.
//! - [`resolve`]: `package://` and relative path resolution (ament index first).
//! - [`ros`]: the ROS 2 adapter: message types and conversions, the node
//!   behind both transports, the `dds` transport and the `r2r` one.
#![warn(missing_docs)]

pub mod field;
pub mod forecast;
pub mod frame;
pub mod guard;
pub mod hash;
pub mod model;
pub mod platen;
pub mod resolve;
pub mod ros;
pub mod sim;
pub mod workcell;

pub use frame::Frame;
