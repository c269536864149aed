//! # workcell_guard_ros
//!
//! The ROS 2 adapter. It decides nothing: the core's commands are
//! converted to messages and published.
//! - [`msg`], [`convert`]: message types in wire order, and the conversions
//!   between messages and the core's inputs and commands;
//! - [`args`], [`params`]: the `--ros-args` command line and the parameter
//!   table;
//! - [`node`]: [`node::GuardNode`], input in and messages out, diagnostics
//!   and markers;
//! - [`event_loop`]: the one loop, over the [`event_loop::Transport`] trait;
//! - [`topics`]: the node's topics over a cell, each with its role, type and
//!   direction; [`startup`]: start-up, the run and its end, shared by both
//!   transports;
//! - [`bag`], [`replay`]: rosbag2 MCAP recordings (written by the node
//!   itself or by anyone), and their inputs through the node offline;
//! - the transports: [`dds`] through `ros2-client` (the default) and `r2r`
//!   (a feature, for colcon workspaces).
#![warn(missing_docs)]

pub mod args;
pub mod bag;
pub mod convert;
mod cycle_timer;
pub mod dds;
pub mod event_loop;
pub mod msg;
pub mod node;
pub mod params;
pub mod qos;
#[cfg(feature = "r2r")]
pub mod r2r;
pub mod replay;
pub mod startup;
mod throttle;
pub mod topics;
