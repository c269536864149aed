//! # workcell_guard_sim
//!
//! Closed-loop simulators and their oracles, outside the core so that
//! what is checked cannot lean on what checks it:
//! - [`arms`]: a cell's arms follow planned trajectories to random goals
//!   under the guard's commands ([`motion`]: the plans and how an arm
//!   follows and brakes along them; `report`: the summary), through the same cycle entry point the node calls; an
//!   exact oracle (parry3d on the URDF geometry) finds every contact and
//!   judges every stop.
//! - [`crossing`]: arms whose plans cross through a shared zone take turns
//!   by their grants, beside the same plans one arm at a time in the zone
//!   and unguarded.
//! - [`platen`]: platen units ask for random moves and follow their
//!   grants; an oracle checks their real shapes every cycle.
//! - [`platen_paths`]: platen units on crossing paths follow their
//!   increments (swap, ring, random crossings), beside one unit at a time
//!   in the shared zone and unguarded.
//! - [`braking`], [`stops`]: a braking physics the guard does not know,
//!   and recorded stops under it, for `calibrate`.
//! - [`demo`]: the robots `workcell_guard demo` plays over DDS: arms on
//!   plans and units asking for moves, doing what the node's answers allow.
#![warn(missing_docs)]

pub mod arms;
pub mod braking;
mod cells;
pub mod crossing;
pub mod demo;
pub mod motion;
pub mod platen;
pub mod platen_paths;
mod report;
pub mod stops;
