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

mod ours;
pub use ours::*;

/// `builtin_interfaces/Time`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Time {
    /// Seconds.
    pub sec: i32,
    /// Nanoseconds, 0..1e9.
    pub nanosec: u32,
}
ros_message!(Time, "builtin_interfaces", "Time");

/// `rosgraph_msgs/Clock`: the simulated time on `/clock` (with
/// `use_sim_time`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clock {
    /// The time.
    pub clock: Time,
}
ros_message!(Clock, "rosgraph_msgs", "Clock");

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

/// `control_msgs/SpeedScalingFactor` (joint_trajectory_controller's
/// speed-scaling input): the same CDR as [`Float64`], another name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SpeedScalingFactor {
    /// 0..1 of the planned speed.
    pub factor: f64,
}
ros_message!(SpeedScalingFactor, "control_msgs", "SpeedScalingFactor");

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

impl JointTrajectory {
    /// The empty trajectory stamped `stamp`: joint_trajectory_controller
    /// stops and holds on it (the node's controller hold).
    pub fn hold(stamp: Time) -> JointTrajectory {
        JointTrajectory { header: Header { stamp, frame_id: String::new() }, ..JointTrajectory::default() }
    }
}

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

/// `std_msgs/ColorRGBA`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ColorRGBA {
    /// Red, 0..1.
    pub r: f32,
    /// Green, 0..1.
    pub g: f32,
    /// Blue, 0..1.
    pub b: f32,
    /// Opacity, 0..1.
    pub a: f32,
}
ros_message!(ColorRGBA, "std_msgs", "ColorRGBA");

/// `geometry_msgs/Point`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// x.
    pub x: f64,
    /// y.
    pub y: f64,
    /// z.
    pub z: f64,
}
ros_message!(Point, "geometry_msgs", "Point");

/// `geometry_msgs/Vector3`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Vector3 {
    /// x.
    pub x: f64,
    /// y.
    pub y: f64,
    /// z.
    pub z: f64,
}
ros_message!(Vector3, "geometry_msgs", "Vector3");

/// `geometry_msgs/Quaternion` (the identity is `w = 1`, as rosidl's default).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Quaternion {
    /// x.
    pub x: f64,
    /// y.
    pub y: f64,
    /// z.
    pub z: f64,
    /// w.
    pub w: f64,
}
ros_message!(Quaternion, "geometry_msgs", "Quaternion");

impl Default for Quaternion {
    fn default() -> Self {
        Quaternion { x: 0.0, y: 0.0, z: 0.0, w: 1.0 }
    }
}

/// `geometry_msgs/Pose`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Pose {
    /// Position.
    pub position: Point,
    /// Orientation.
    pub orientation: Quaternion,
}
ros_message!(Pose, "geometry_msgs", "Pose");

/// `sensor_msgs/CompressedImage` (only as a field of [`Marker`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CompressedImage {
    /// Header.
    pub header: Header,
    /// Format.
    pub format: String,
    /// Bytes.
    pub data: Vec<u8>,
}
ros_message!(CompressedImage, "sensor_msgs", "CompressedImage");

/// `visualization_msgs/UVCoordinate`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UVCoordinate {
    /// u.
    pub u: f32,
    /// v.
    pub v: f32,
}
ros_message!(UVCoordinate, "visualization_msgs", "UVCoordinate");

/// `visualization_msgs/MeshFile`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MeshFile {
    /// File name.
    pub filename: String,
    /// Contents.
    pub data: Vec<u8>,
}
ros_message!(MeshFile, "visualization_msgs", "MeshFile");

/// `visualization_msgs/Marker` (the Humble/Jazzy layout: 19 fields).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Marker {
    /// Frame and stamp.
    pub header: Header,
    /// Namespace.
    pub ns: String,
    /// Id within the namespace.
    pub id: i32,
    /// [`Marker::SPHERE_LIST`] and friends.
    #[serde(rename = "type")]
    pub kind: i32,
    /// [`Marker::ADD`], [`Marker::DELETE`], [`Marker::DELETEALL`].
    pub action: i32,
    /// Pose.
    pub pose: Pose,
    /// Scale.
    pub scale: Vector3,
    /// Colour.
    pub color: ColorRGBA,
    /// Lifetime (0 = forever).
    pub lifetime: Duration,
    /// Re-transform every frame.
    pub frame_locked: bool,
    /// Points of list types.
    pub points: Vec<Point>,
    /// Per-point colours.
    pub colors: Vec<ColorRGBA>,
    /// Texture URI.
    pub texture_resource: String,
    /// Texture.
    pub texture: CompressedImage,
    /// Texture coordinates.
    pub uv_coordinates: Vec<UVCoordinate>,
    /// Text.
    pub text: String,
    /// Mesh URI.
    pub mesh_resource: String,
    /// Mesh.
    pub mesh_file: MeshFile,
    /// Use the mesh's materials.
    pub mesh_use_embedded_materials: bool,
}
ros_message!(Marker, "visualization_msgs", "Marker");

impl Marker {
    /// Type: line strip.
    pub const LINE_STRIP: i32 = 4;
    /// Type: line list.
    pub const LINE_LIST: i32 = 5;
    /// Type: cube list.
    pub const CUBE_LIST: i32 = 6;
    /// Type: sphere list.
    pub const SPHERE_LIST: i32 = 7;
    /// Type: text facing the viewer.
    pub const TEXT_VIEW_FACING: i32 = 9;
    /// Type: triangle list.
    pub const TRIANGLE_LIST: i32 = 11;
    /// Action: add or modify.
    pub const ADD: i32 = 0;
    /// Action: delete one.
    pub const DELETE: i32 = 2;
    /// Action: delete all of the namespace.
    pub const DELETEALL: i32 = 3;
}

/// `visualization_msgs/MarkerArray`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MarkerArray {
    /// Markers.
    pub markers: Vec<Marker>,
}
ros_message!(MarkerArray, "visualization_msgs", "MarkerArray");

/// `geometry_msgs/PoseStamped` (a platen unit's pose on `<unit>/pose`, in
/// the surface frame: x, y and the yaw of the orientation are used).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PoseStamped {
    /// Stamp and frame.
    pub header: Header,
    /// Pose.
    pub pose: Pose,
}
ros_message!(PoseStamped, "geometry_msgs", "PoseStamped");

/// `std_srvs/Trigger` request (rosidl gives an empty request one byte).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TriggerRequest {
    /// Placeholder member rosidl adds to empty structures.
    pub structure_needs_at_least_one_member: u8,
}

/// `std_srvs/Trigger` response.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TriggerResponse {
    /// Done.
    pub success: bool,
    /// What was done, or why not.
    pub message: String,
}

/// `unique_identifier_msgs/UUID`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Uuid {
    /// The 16 bytes (all zero: any goal).
    pub uuid: [u8; 16],
}

/// `action_msgs/GoalInfo`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GoalInfo {
    /// The goal (all zero: every goal).
    pub goal_id: Uuid,
    /// Accepted at (zero: at any time).
    pub stamp: Time,
}

/// `action_msgs/CancelGoal` request: zero id and stamp cancel every goal
/// of the action server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CancelGoalRequest {
    /// Which goals.
    pub goal_info: GoalInfo,
}

/// `action_msgs/CancelGoal` response.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CancelGoalResponse {
    /// 0 none, 1 rejected, 2 unknown goal, 3 terminated.
    pub return_code: i8,
    /// Goals being cancelled.
    pub goals_canceling: Vec<GoalInfo>,
}

/// `sensor_msgs/PointField`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PointField {
    /// Field name (`x`, `y`, `z`, …).
    pub name: String,
    /// Byte offset within a point.
    pub offset: u32,
    /// [`PointField::FLOAT32`] and friends.
    pub datatype: u8,
    /// Elements.
    pub count: u32,
}
ros_message!(PointField, "sensor_msgs", "PointField");

impl PointField {
    /// 32-bit float.
    pub const FLOAT32: u8 = 7;
    /// 64-bit float.
    pub const FLOAT64: u8 = 8;
}

/// `sensor_msgs/PointCloud2` (sensed obstacles on `points`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PointCloud2 {
    /// Stamp and frame (must be the cell frame).
    pub header: Header,
    /// Rows.
    pub height: u32,
    /// Points per row.
    pub width: u32,
    /// Layout of a point.
    pub fields: Vec<PointField>,
    /// Byte order of `data`.
    pub is_bigendian: bool,
    /// Bytes per point.
    pub point_step: u32,
    /// Bytes per row.
    pub row_step: u32,
    /// The points.
    pub data: Vec<u8>,
    /// No invalid points.
    pub is_dense: bool,
}
ros_message!(PointCloud2, "sensor_msgs", "PointCloud2");

/// `geometry_msgs/Transform`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Transform {
    /// Translation.
    pub translation: Vector3,
    /// Rotation.
    pub rotation: Quaternion,
}

/// `geometry_msgs/Twist`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Twist {
    /// Linear.
    pub linear: Vector3,
    /// Angular.
    pub angular: Vector3,
}

/// `trajectory_msgs/MultiDOFJointTrajectoryPoint`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MultiDofJointTrajectoryPoint {
    /// Transforms.
    pub transforms: Vec<Transform>,
    /// Velocities.
    pub velocities: Vec<Twist>,
    /// Accelerations.
    pub accelerations: Vec<Twist>,
    /// When.
    pub time_from_start: Duration,
}

/// `trajectory_msgs/MultiDOFJointTrajectory`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MultiDofJointTrajectory {
    /// Stamp.
    pub header: Header,
    /// Joints.
    pub joint_names: Vec<String>,
    /// Points.
    pub points: Vec<MultiDofJointTrajectoryPoint>,
}

/// `moveit_msgs/RobotTrajectory`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RobotTrajectory {
    /// Single-DOF joints.
    pub joint_trajectory: JointTrajectory,
    /// Multi-DOF joints (read past, not used).
    pub multi_dof_joint_trajectory: MultiDofJointTrajectory,
}

/// The leading fields of `moveit_msgs/DisplayTrajectory` (MoveIt's
/// `display_planned_path`): the model and the trajectories. The last field,
/// `trajectory_start` (a `RobotState`, whose attached-object layout has
/// changed between MoveIt releases), is not decoded: CDR is read front to
/// back and the rest of the sample is left unread.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DisplayTrajectory {
    /// Robot model.
    pub model_id: String,
    /// Trajectories, in order.
    pub trajectory: Vec<RobotTrajectory>,
}
ros_message!(DisplayTrajectory, "moveit_msgs", "DisplayTrajectory");
