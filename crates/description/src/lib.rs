//! # workcell_guard_description
//!
//! Everything workcell_guard reads from files, turned into the core's
//! types: the workcell YAML (raw, then validated: [`workcell`]), robot
//! URDFs ([`urdf`]) and their meshes ([`mesh`]), hand-tuned sphere sets
//! ([`sphere_file`]), `.npy` grids ([`npy`]), `package://` and relative
//! paths ([`resolve`]), and the collision-matrix cache
//! ([`matrix_cache`]). [`build_guard`] puts a cell's guard together.
#![warn(missing_docs)]

pub mod contain;
pub mod matrix_cache;
pub mod mesh;
pub mod npy;
pub mod resolve;
pub mod sphere_file;
pub mod stopping_file;
pub mod urdf;
pub mod workcell;
pub mod yaml;

pub use matrix_cache::{CacheOutcome, build_guard};
