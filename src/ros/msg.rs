//! The standard ROS 2 messages the node exchanges, as serde types whose
//! fields follow the wire order of the `.msg` definitions (Humble and Jazzy
//! are identical on the wire for these): the dds transport serializes them
//! as CDR under the type names rosidl generates ([`RosMessage`]).

use serde::{Deserialize, Serialize};

/// A message type: its package and name, as rosidl names it.
pub trait RosMessage {
    /// Package, e.g. `sensor_msgs`.
    const PACKAGE: &'static str;
    /// Name, e.g. `JointState`.
    const NAME: &'static str;

    /// The DDS type name, e.g. `sensor_msgs::msg::dds_::JointState_`.
    fn dds_type_name() -> String {
        format!("{}::msg::dds_::{}_", Self::PACKAGE, Self::NAME)
    }
}

macro_rules! ros_message {
    ($t:ty, $pkg:literal, $name:literal) => {
        impl RosMessage for $t {
            const PACKAGE: &'static str = $pkg;
            const NAME: &'static str = $name;
        }
    };
}

/// `builtin_interfaces/Time`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Time {
    /// Seconds.
    pub sec: i32,
    /// Nanoseconds, 0..1e9.
    pub nanosec: u32,
}
ros_message!(Time, "builtin_interfaces", "Time");

/// `builtin_interfaces/Duration`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Duration {
    /// Seconds.
    pub sec: i32,
    /// Nanoseconds, 0..1e9.
    pub nanosec: u32,
}
ros_message!(Duration, "builtin_interfaces", "Duration");

/// `std_msgs/Header`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// Stamp.
    pub stamp: Time,
    /// Frame.
    pub frame_id: String,
}
ros_message!(Header, "std_msgs", "Header");

/// `std_msgs/Bool`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bool {
    /// Value.
    pub data: bool,
}
ros_message!(Bool, "std_msgs", "Bool");

/// `std_msgs/Float64`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Float64 {
    /// Value.
    pub data: f64,
}
ros_message!(Float64, "std_msgs", "Float64");

/// `geometry_msgs/Pose2D` (a platen unit's pose on its surface).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Pose2D {
    /// x, m.
    pub x: f64,
    /// y, m.
    pub y: f64,
    /// Heading, rad.
    pub theta: f64,
}
ros_message!(Pose2D, "geometry_msgs", "Pose2D");

/// `sensor_msgs/JointState`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JointState {
    /// Stamp and frame.
    pub header: Header,
    /// Joint names.
    pub name: Vec<String>,
    /// Positions (rad or m), one per name.
    pub position: Vec<f64>,
    /// Velocities, one per name, or none.
    pub velocity: Vec<f64>,
    /// Efforts, one per name, or none.
    pub effort: Vec<f64>,
}
ros_message!(JointState, "sensor_msgs", "JointState");

/// `trajectory_msgs/JointTrajectoryPoint`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JointTrajectoryPoint {
    /// Positions.
    pub positions: Vec<f64>,
    /// Velocities.
    pub velocities: Vec<f64>,
    /// Accelerations.
    pub accelerations: Vec<f64>,
    /// Efforts.
    pub effort: Vec<f64>,
    /// When, from the trajectory's start.
    pub time_from_start: Duration,
}
ros_message!(JointTrajectoryPoint, "trajectory_msgs", "JointTrajectoryPoint");

/// `trajectory_msgs/JointTrajectory`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JointTrajectory {
    /// Stamp (the trajectory's start) and frame.
    pub header: Header,
    /// Joint names.
    pub joint_names: Vec<String>,
    /// Points.
    pub points: Vec<JointTrajectoryPoint>,
}
ros_message!(JointTrajectory, "trajectory_msgs", "JointTrajectory");

/// `diagnostic_msgs/KeyValue`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyValue {
    /// Key.
    pub key: String,
    /// Value.
    pub value: String,
}
ros_message!(KeyValue, "diagnostic_msgs", "KeyValue");

/// `diagnostic_msgs/DiagnosticStatus`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiagnosticStatus {
    /// [`DiagnosticStatus::OK`] … [`DiagnosticStatus::STALE`].
    pub level: u8,
    /// What it is about.
    pub name: String,
    /// One line.
    pub message: String,
    /// Hardware.
    pub hardware_id: String,
    /// Details.
    pub values: Vec<KeyValue>,
}
ros_message!(DiagnosticStatus, "diagnostic_msgs", "DiagnosticStatus");

impl DiagnosticStatus {
    /// Level OK.
    pub const OK: u8 = 0;
    /// Level WARN.
    pub const WARN: u8 = 1;
    /// Level ERROR.
    pub const ERROR: u8 = 2;
    /// Level STALE.
    pub const STALE: u8 = 3;
}

/// `diagnostic_msgs/DiagnosticArray`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiagnosticArray {
    /// Stamp.
    pub header: Header,
    /// One status per thing.
    pub status: Vec<DiagnosticStatus>,
}
ros_message!(DiagnosticArray, "diagnostic_msgs", "DiagnosticArray");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dds_type_names_follow_rosidl() {
        assert_eq!(JointState::dds_type_name(), "sensor_msgs::msg::dds_::JointState_");
        assert_eq!(DiagnosticArray::dds_type_name(), "diagnostic_msgs::msg::dds_::DiagnosticArray_");
        assert_eq!(Time::dds_type_name(), "builtin_interfaces::msg::dds_::Time_");
    }
}
