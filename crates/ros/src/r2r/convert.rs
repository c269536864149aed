//! Messages between r2r's types (or its untyped API's JSON) and this
//! crate's.

use crate::msg;
use ::r2r as r2;
use serde_json::Value;
use workcell_guard_description::workcell::ScalingMessage;

pub(super) fn time_in(t: r2::builtin_interfaces::msg::Time) -> msg::Time {
    msg::Time { sec: t.sec, nanosec: t.nanosec }
}

pub(super) fn time_out(t: msg::Time) -> r2::builtin_interfaces::msg::Time {
    r2::builtin_interfaces::msg::Time { sec: t.sec, nanosec: t.nanosec }
}

pub(super) fn header_in(h: r2::std_msgs::msg::Header) -> msg::Header {
    msg::Header { stamp: time_in(h.stamp), frame_id: h.frame_id }
}

pub(super) fn header_out(h: &msg::Header) -> r2::std_msgs::msg::Header {
    r2::std_msgs::msg::Header { stamp: time_out(h.stamp), frame_id: h.frame_id.clone() }
}

/// An r2r joint state as this crate's (moved, not copied).
pub fn joint_state_in(m: r2::sensor_msgs::msg::JointState) -> msg::JointState {
    msg::JointState {
        header: header_in(m.header),
        name: m.name,
        position: m.position,
        velocity: m.velocity,
        effort: m.effort,
    }
}

/// An r2r trajectory as this crate's (moved, not copied).
pub fn trajectory_in(m: r2::trajectory_msgs::msg::JointTrajectory) -> msg::JointTrajectory {
    msg::JointTrajectory {
        header: header_in(m.header),
        joint_names: m.joint_names,
        points: m
            .points
            .into_iter()
            .map(|p| msg::JointTrajectoryPoint {
                positions: p.positions,
                velocities: p.velocities,
                accelerations: p.accelerations,
                effort: p.effort,
                time_from_start: msg::Duration { sec: p.time_from_start.sec, nanosec: p.time_from_start.nanosec },
            })
            .collect(),
    }
}

/// A trajectory (a back-away's retreat) as r2r's.
pub fn trajectory_out(m: &msg::JointTrajectory) -> r2::trajectory_msgs::msg::JointTrajectory {
    r2::trajectory_msgs::msg::JointTrajectory {
        header: header_out(&m.header),
        joint_names: m.joint_names.clone(),
        points: m
            .points
            .iter()
            .map(|p| r2::trajectory_msgs::msg::JointTrajectoryPoint {
                positions: p.positions.clone(),
                velocities: p.velocities.clone(),
                accelerations: p.accelerations.clone(),
                effort: p.effort.clone(),
                time_from_start: r2::builtin_interfaces::msg::Duration {
                    sec: p.time_from_start.sec,
                    nanosec: p.time_from_start.nanosec,
                },
            })
            .collect(),
    }
}

/// A stop flag as r2r's.
pub fn bool_out(b: msg::Bool) -> r2::std_msgs::msg::Bool {
    r2::std_msgs::msg::Bool { data: b.data }
}

/// Diagnostics as r2r's.
pub fn diagnostics_out(d: &msg::DiagnosticArray) -> r2::diagnostic_msgs::msg::DiagnosticArray {
    r2::diagnostic_msgs::msg::DiagnosticArray {
        header: header_out(&d.header),
        status: d
            .status
            .iter()
            .map(|s| r2::diagnostic_msgs::msg::DiagnosticStatus {
                level: s.level,
                name: s.name.clone(),
                message: s.message.clone(),
                hardware_id: s.hardware_id.clone(),
                values: s
                    .values
                    .iter()
                    .map(|kv| r2::diagnostic_msgs::msg::KeyValue { key: kv.key.clone(), value: kv.value.clone() })
                    .collect(),
            })
            .collect(),
    }
}

pub(super) fn point_out(p: &msg::Point) -> r2::geometry_msgs::msg::Point {
    r2::geometry_msgs::msg::Point { x: p.x, y: p.y, z: p.z }
}

pub(super) fn color_out(c: &msg::ColorRGBA) -> r2::std_msgs::msg::ColorRGBA {
    r2::std_msgs::msg::ColorRGBA { r: c.r, g: c.g, b: c.b, a: c.a }
}

/// One marker as r2r's.
pub fn marker_out(m: &msg::Marker) -> r2::visualization_msgs::msg::Marker {
    use r2::geometry_msgs::msg::{Pose, Quaternion, Vector3};
    r2::visualization_msgs::msg::Marker {
        header: header_out(&m.header),
        ns: m.ns.clone(),
        id: m.id,
        type_: m.kind,
        action: m.action,
        pose: Pose {
            position: point_out(&m.pose.position),
            orientation: Quaternion {
                x: m.pose.orientation.x,
                y: m.pose.orientation.y,
                z: m.pose.orientation.z,
                w: m.pose.orientation.w,
            },
        },
        scale: Vector3 { x: m.scale.x, y: m.scale.y, z: m.scale.z },
        color: color_out(&m.color),
        lifetime: r2::builtin_interfaces::msg::Duration { sec: m.lifetime.sec, nanosec: m.lifetime.nanosec },
        frame_locked: m.frame_locked,
        points: m.points.iter().map(point_out).collect(),
        colors: m.colors.iter().map(color_out).collect(),
        texture_resource: m.texture_resource.clone(),
        texture: r2::sensor_msgs::msg::CompressedImage {
            header: header_out(&m.texture.header),
            format: m.texture.format.clone(),
            data: m.texture.data.clone(),
        },
        uv_coordinates: m
            .uv_coordinates
            .iter()
            .map(|uv| r2::visualization_msgs::msg::UVCoordinate { u: uv.u, v: uv.v })
            .collect(),
        text: m.text.clone(),
        mesh_resource: m.mesh_resource.clone(),
        mesh_file: r2::visualization_msgs::msg::MeshFile {
            filename: m.mesh_file.filename.clone(),
            data: m.mesh_file.data.clone(),
        },
        mesh_use_embedded_materials: m.mesh_use_embedded_materials,
    }
}

/// Markers as r2r's.
pub fn markers_out(a: &msg::MarkerArray) -> r2::visualization_msgs::msg::MarkerArray {
    r2::visualization_msgs::msg::MarkerArray { markers: a.markers.iter().map(marker_out).collect() }
}

/// A point cloud of sensed obstacles (its data moved, not copied).
pub fn cloud_in(m: r2::sensor_msgs::msg::PointCloud2) -> msg::PointCloud2 {
    msg::PointCloud2 {
        header: header_in(m.header),
        height: m.height,
        width: m.width,
        fields: m
            .fields
            .into_iter()
            .map(|f| msg::PointField { name: f.name, offset: f.offset, datatype: f.datatype, count: f.count })
            .collect(),
        is_bigendian: m.is_bigendian,
        point_step: m.point_step,
        row_step: m.row_step,
        data: m.data,
        is_dense: m.is_dense,
    }
}

/// A platen unit's reported pose.
pub fn pose_in(m: r2::geometry_msgs::msg::PoseStamped) -> msg::PoseStamped {
    let (p, o) = (m.pose.position, m.pose.orientation);
    msg::PoseStamped {
        header: header_in(m.header),
        pose: msg::Pose {
            position: msg::Point { x: p.x, y: p.y, z: p.z },
            orientation: msg::Quaternion { x: o.x, y: o.y, z: o.z, w: o.w },
        },
    }
}

/// `action_msgs/CancelGoal` for every goal of an action: a zero goal id
/// and a zero stamp (the action design's "cancel all").
pub fn cancel_all() -> r2::action_msgs::srv::CancelGoal::Request {
    r2::action_msgs::srv::CancelGoal::Request {
        goal_info: r2::action_msgs::msg::GoalInfo {
            goal_id: r2::unique_identifier_msgs::msg::UUID { uuid: vec![0; 16] },
            stamp: r2::builtin_interfaces::msg::Time { sec: 0, nanosec: 0 },
        },
    }
}

/// The rosidl name of a message type, as r2r's untyped API takes it.
pub(super) fn type_name<M: crate::msg::RosMessage>() -> String {
    format!("{}/msg/{}", M::PACKAGE, M::NAME)
}

/// This package's own messages and MoveIt's go through r2r's untyped API
/// (JSON with the ROS field names, which the serde twins carry): their
/// generated types exist only in a workspace that built them, so typed
/// code could not be checked without one. A move request from JSON.
pub fn move_request_in(v: Value) -> Result<msg::PlatenMoveRequest, serde_json::Error> {
    serde_json::from_value(v)
}

/// A path request from JSON.
pub fn path_request_in(v: Value) -> Result<msg::PlatenPathRequest, serde_json::Error> {
    serde_json::from_value(v)
}

/// A grant as JSON for r2r's untyped publisher.
pub fn grant_out(g: &msg::PlatenGrant) -> Value {
    serde_json::to_value(g).unwrap_or(Value::Null)
}

/// A speed scaling as JSON for r2r's untyped publisher, of type `kind`.
pub fn speed_out(kind: ScalingMessage, scaling: f64) -> Value {
    match kind {
        ScalingMessage::SpeedScalingFactor => serde_json::json!({ "factor": scaling }),
        ScalingMessage::Float64 => serde_json::json!({ "data": scaling }),
    }
}

/// A manipulator's state as JSON for r2r's untyped publisher (infinities
/// as the largest double: JSON has none).
pub fn state_out(s: &msg::GuardState) -> Value {
    let finite = |v: f64| if v.is_finite() { v } else { f64::MAX.copysign(v) };
    let s = msg::GuardState {
        clearance_m: finite(s.clearance_m),
        time_to_contact_s: finite(s.time_to_contact_s),
        ..s.clone()
    };
    serde_json::to_value(s).unwrap_or(Value::Null)
}

/// A manipulator grant as JSON for r2r's untyped publisher.
pub fn arm_grant_out(g: &msg::ManipulatorGrant) -> Value {
    serde_json::to_value(g).unwrap_or(Value::Null)
}

/// MoveIt's DisplayTrajectory from JSON: the model and each trajectory's
/// single-DOF part (the multi-DOF part and `trajectory_start` are not
/// used, and not read).
pub fn display_in(v: Value) -> Result<msg::DisplayTrajectory, String> {
    let model_id = v.get("model_id").and_then(Value::as_str).unwrap_or_default().to_string();
    let Some(Value::Array(ts)) = v.get("trajectory") else {
        return Err("no `trajectory` array".into());
    };
    let mut trajectory = Vec::with_capacity(ts.len());
    for (i, t) in ts.iter().enumerate() {
        let jt = t.get("joint_trajectory").ok_or_else(|| format!("trajectory[{i}] has no `joint_trajectory`"))?;
        let joint_trajectory: msg::JointTrajectory =
            serde_json::from_value(jt.clone()).map_err(|e| format!("trajectory[{i}].joint_trajectory: {e}"))?;
        trajectory.push(msg::RobotTrajectory { joint_trajectory, ..Default::default() });
    }
    Ok(msg::DisplayTrajectory { model_id, trajectory })
}
