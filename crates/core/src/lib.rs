//! # workcell_guard_core
//!
//! The decisions of workcell_guard, as plain Rust: no middleware, no serde,
//! no file I/O (the compiler holds that: this crate depends on none of
//! them). The description layer builds a [`cell::Workcell`] and the robot
//! models; the ROS layer feeds topics in and turns the returned data into
//! messages. Everything that goes out on the wire, stop, its cause, speed
//! scaling, controller hold and cancel, platen grants, is decided here, by
//! one call per cycle: [`guard::Guard::cycle`].
//!
//! Modules, in data-flow order:
//! - [`frame`]: the rigid transform used everywhere (nalgebra fixed-size
//!   types, no heap).
//! - [`cell`]: the validated workcell, plain data.
//! - [`model`]: forward kinematics over any tree, conservative sphere
//!   models of each link, posing them into flat arrays, exact shapes.
//! - [`field`]: the cell's voxel distance field: exact distance transform,
//!   conservative sphere queries, incremental updates.
//! - [`forecast`]: joint velocity/acceleration from the last joint states
//!   and the configurations on the way to a stop.
//! - [`hash`]: the spatial hash for robot-vs-robot checks.
//! - [`guard`]: the cycle, from joint states to per-robot commands, with
//!   the automatic collision matrix and allowed contacts.
//! - [`arbiter`]: priority arbitration over increments of the robots'
//!   plans (the rule; not yet fed by the cycle).
//! - [`platen`]: allocation of the shared platen surface to its planar
//!   units from bitmap world maps.
#![warn(missing_docs)]

pub mod arbiter;
pub mod cell;
pub mod field;
pub mod forecast;
pub mod frame;
pub mod guard;
pub mod hash;
pub mod model;
pub mod platen;

pub use frame::Frame;
