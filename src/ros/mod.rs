//! The ROS 2 adapter (issue 6, in progress): message types, the
//! conversions between messages and the core's inputs and decisions, the
//! ROS command line and the node's parameters. The
//! transports (`dds` through `ros2-client`, `r2r` as a feature), topic
//! wiring, parameters and launch files come next; nothing here opens a DDS
//! participant.

pub mod args;
pub mod convert;
pub mod dds;
pub mod msg;
pub mod node;
pub mod params;
#[cfg(feature = "r2r")]
pub mod r2r;
