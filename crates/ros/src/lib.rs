//! The ROS 2 adapter: message types, the conversions between messages and
//! the core's inputs and decisions, the ROS command line and the node's
//! parameters, the node behind both transports ([`node::GuardNode`]), and
//! the transports: [`dds`] through `ros2-client` (the default) and `r2r`
//! (a feature, for colcon workspaces).

pub mod args;
pub mod convert;
pub mod dds;
pub mod event_loop;
pub mod msg;
pub mod node;
pub mod params;
#[cfg(feature = "r2r")]
pub mod r2r;
