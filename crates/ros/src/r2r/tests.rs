//! Conversions, with r2r messages built from struct literals (their
//! `Default` needs rcl, which `doc-only` builds do not link).
use super::*;

fn stamp() -> r2::builtin_interfaces::msg::Time {
    r2::builtin_interfaces::msg::Time { sec: 12, nanosec: 500_000_000 }
}

#[test]
fn joint_states_and_trajectories_come_in_whole() {
    let m = r2::sensor_msgs::msg::JointState {
        header: r2::std_msgs::msg::Header { stamp: stamp(), frame_id: "base".into() },
        name: vec!["a".into(), "b".into()],
        position: vec![0.5, -1.0],
        velocity: vec![],
        effort: vec![1.0, 2.0],
    };
    let j = joint_state_in(m);
    assert_eq!(j.header.stamp, msg::Time { sec: 12, nanosec: 500_000_000 });
    assert_eq!(j.header.frame_id, "base");
    assert_eq!(j.name, ["a", "b"]);
    assert_eq!(j.position, [0.5, -1.0]);
    assert!(j.velocity.is_empty());
    assert_eq!(j.effort, [1.0, 2.0]);

    let t = r2::trajectory_msgs::msg::JointTrajectory {
        header: r2::std_msgs::msg::Header { stamp: stamp(), frame_id: String::new() },
        joint_names: vec!["a".into()],
        points: vec![r2::trajectory_msgs::msg::JointTrajectoryPoint {
            positions: vec![0.25],
            velocities: vec![0.0],
            accelerations: vec![],
            effort: vec![],
            time_from_start: r2::builtin_interfaces::msg::Duration { sec: 2, nanosec: 5 },
        }],
    };
    let t = trajectory_in(t);
    assert_eq!(t.joint_names, ["a"]);
    assert_eq!(t.points[0].positions, [0.25]);
    assert_eq!(t.points[0].time_from_start, msg::Duration { sec: 2, nanosec: 5 });
}

#[test]
fn stops_diagnostics_and_markers_go_out_whole() {
    assert!(bool_out(msg::Bool { data: true }).data);
    let d = msg::DiagnosticArray {
        header: msg::Header { stamp: msg::Time { sec: 3, nanosec: 4 }, frame_id: String::new() },
        status: vec![msg::DiagnosticStatus {
            level: msg::DiagnosticStatus::WARN,
            name: "workcell_guard: arm".into(),
            message: "stop".into(),
            hardware_id: "arm".into(),
            values: vec![msg::KeyValue { key: "clearance_m".into(), value: "0.01".into() }],
        }],
    };
    let r = diagnostics_out(&d);
    assert_eq!(r.header.stamp.sec, 3);
    assert_eq!(r.status[0].level, 1);
    assert_eq!(r.status[0].name, "workcell_guard: arm");
    assert_eq!(r.status[0].values[0].key, "clearance_m");
    assert_eq!(r.status[0].values[0].value, "0.01");

    let m = msg::Marker {
        ns: "arm/spheres".into(),
        id: 7,
        kind: 2,
        action: msg::Marker::ADD,
        scale: msg::Vector3 { x: 0.1, y: 0.1, z: 0.1 },
        color: msg::ColorRGBA { r: 1.0, g: 0.0, b: 0.0, a: 0.5 },
        points: vec![msg::Point { x: 1.0, y: 2.0, z: 3.0 }],
        ..msg::Marker::default()
    };
    let a = markers_out(&msg::MarkerArray { markers: vec![m] });
    let r = &a.markers[0];
    assert_eq!((r.ns.as_str(), r.id, r.type_, r.action), ("arm/spheres", 7, 2, 0));
    assert_eq!(r.pose.orientation.w, 1.0);
    assert_eq!(r.scale.x, 0.1);
    assert_eq!((r.color.r, r.color.a), (1.0, 0.5));
    assert_eq!((r.points[0].x, r.points[0].z), (1.0, 3.0));
}

#[test]
fn clouds_and_platen_poses_come_in_whole() {
    let c = r2::sensor_msgs::msg::PointCloud2 {
        header: r2::std_msgs::msg::Header { stamp: stamp(), frame_id: "cell".into() },
        height: 1,
        width: 2,
        fields: vec![r2::sensor_msgs::msg::PointField { name: "x".into(), offset: 0, datatype: 7, count: 1 }],
        is_bigendian: false,
        point_step: 4,
        row_step: 8,
        data: vec![1, 2, 3, 4, 5, 6, 7, 8],
        is_dense: true,
    };
    let m = cloud_in(c);
    assert_eq!(m.header.frame_id, "cell");
    assert_eq!((m.height, m.width, m.point_step, m.row_step), (1, 2, 4, 8));
    assert_eq!(
        m.fields,
        [msg::PointField { name: "x".into(), offset: 0, datatype: msg::PointField::FLOAT32, count: 1 }]
    );
    assert_eq!(m.data, [1, 2, 3, 4, 5, 6, 7, 8]);
    assert!(m.is_dense && !m.is_bigendian);

    let p = pose_in(r2::geometry_msgs::msg::PoseStamped {
        header: r2::std_msgs::msg::Header { stamp: stamp(), frame_id: "surface".into() },
        pose: r2::geometry_msgs::msg::Pose {
            position: r2::geometry_msgs::msg::Point { x: 0.5, y: 0.25, z: 0.0 },
            orientation: r2::geometry_msgs::msg::Quaternion { x: 0.0, y: 0.0, z: 0.6, w: 0.8 },
        },
    });
    assert_eq!(p.header.stamp, msg::Time { sec: 12, nanosec: 500_000_000 });
    assert_eq!((p.pose.position.x, p.pose.position.y), (0.5, 0.25));
    assert_eq!((p.pose.orientation.z, p.pose.orientation.w), (0.6, 0.8));
}

#[test]
fn a_cancel_is_for_every_goal() {
    let c = cancel_all();
    assert_eq!(c.goal_info.goal_id.uuid, [0u8; 16]);
    assert_eq!((c.goal_info.stamp.sec, c.goal_info.stamp.nanosec), (0, 0));
}

/// The field names of a `.msg` file of the interface package (constants
/// and comments left out).
fn msg_fields(name: &str) -> Vec<String> {
    let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("interfaces/workcell_guard_msgs/msg")
        .join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty() && !l.contains('='))
        .map(|l| l.split_whitespace().nth(1).expect("type and name").to_string())
        .collect()
}

#[test]
fn path_requests_carry_the_interface_packages_field_names() {
    let v = serde_json::json!({
        "header": { "stamp": { "sec": 1, "nanosec": 0 }, "frame_id": "surface" },
        "unit": "mover_a",
        "request_id": 9,
        "waypoints": [{ "x": 0.4, "y": 0.2, "theta": 0.0 }, { "x": 0.6, "y": 0.2, "theta": 0.5 }],
        "speed_mps": 0.3,
    });
    let mut keys: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    let mut want = msg_fields("PlatenPathRequest.msg");
    want.sort();
    assert_eq!(keys, want, "the test's request is the interface's");
    let r = path_request_in(v).unwrap();
    assert_eq!((r.unit.as_str(), r.request_id, r.waypoints.len(), r.waypoints[1].theta), ("mover_a", 9, 2, 0.5));
    assert!(path_request_in(serde_json::json!({ "waypoints": 3 })).is_err());
}

#[test]
fn move_requests_and_grants_carry_the_interface_packages_field_names() {
    // As r2r's untyped API hands a message over: JSON, ROS field names.
    let v = serde_json::json!({
        "header": { "stamp": { "sec": 12, "nanosec": 500000000 }, "frame_id": "surface" },
        "request_id": 7,
        "target": { "x": 0.4, "y": 0.2, "theta": 1.5 },
    });
    let mut keys: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    let mut want = msg_fields("PlatenMoveRequest.msg");
    want.sort();
    assert_eq!(keys, want, "the test's request is the interface's");
    let r = move_request_in(v).unwrap();
    assert_eq!((r.request_id, r.target.x, r.target.theta), (7, 0.4, 1.5));
    assert_eq!(r.header.frame_id, "surface");
    assert!(move_request_in(serde_json::json!({ "request_id": "seven" })).is_err());

    let g = msg::PlatenGrant {
        request_id: 7,
        result: msg::PlatenGrant::PARTIAL,
        goal: msg::Pose2D { x: 0.3, y: 0.2, theta: 0.0 },
        fraction: 0.5,
        blocker: "mover_b".into(),
        ..msg::PlatenGrant::default()
    };
    let j = grant_out(&g);
    let mut keys: Vec<String> = j.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    let mut want = msg_fields("PlatenGrant.msg");
    want.sort();
    assert_eq!(keys, want);
    assert_eq!(j["result"], 1);
    assert_eq!(j["goal"]["x"], 0.3);
    assert_eq!(j["blocker"], "mover_b");

    let g = msg::ManipulatorGrant {
        robot: "arm_right".into(),
        state: msg::ManipulatorGrant::HOLD,
        granted_until: msg::Duration { sec: 1, nanosec: 500_000_000 },
        granted_point: 12,
        held_by: "arm_left".into(),
        ..msg::ManipulatorGrant::default()
    };
    let j = arm_grant_out(&g);
    let mut keys: Vec<String> = j.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    let mut want = msg_fields("ManipulatorGrant.msg");
    want.sort();
    assert_eq!(keys, want);
    assert_eq!(j["state"], 1);
    assert_eq!(j["granted_until"]["nanosec"], 500_000_000);
    assert_eq!(j["held_by"], "arm_left");
}

#[test]
fn moveits_display_trajectory_gives_each_trajectorys_joints() {
    let point = |q: f64, s: i32| {
        serde_json::json!({
            "positions": [q, -q], "velocities": [], "accelerations": [], "effort": [],
            "time_from_start": { "sec": s, "nanosec": 0 },
        })
    };
    let v = serde_json::json!({
        "model_id": "cell",
        "trajectory": [
            { "joint_trajectory": { "header": { "stamp": { "sec": 0, "nanosec": 0 }, "frame_id": "" },
                "joint_names": ["j1", "j2"], "points": [point(0.1, 1), point(0.2, 2)] },
              "multi_dof_joint_trajectory": { "header": { "stamp": { "sec": 0, "nanosec": 0 }, "frame_id": "" },
                "joint_names": [], "points": [] } },
            { "joint_trajectory": { "header": { "stamp": { "sec": 0, "nanosec": 0 }, "frame_id": "" },
                "joint_names": ["j1", "j2"], "points": [point(0.3, 3)] } },
        ],
        "trajectory_start": { "joint_state": {}, "attached_collision_objects": [], "is_diff": false },
    });
    let d = display_in(v).unwrap();
    assert_eq!(d.model_id, "cell");
    assert_eq!(d.trajectory.len(), 2);
    assert_eq!(d.trajectory[0].joint_trajectory.joint_names, ["j1", "j2"]);
    assert_eq!(d.trajectory[0].joint_trajectory.points[1].positions, [0.2, -0.2]);
    assert_eq!(d.trajectory[1].joint_trajectory.points[0].time_from_start, msg::Duration { sec: 3, nanosec: 0 });
    let e = display_in(serde_json::json!({ "model_id": "cell", "trajectory": [{ "multi": 1 }] })).unwrap_err();
    assert!(e.contains("trajectory[0]"), "{e}");
    assert!(display_in(serde_json::json!({ "model_id": "cell" })).is_err());
}

#[test]
fn parameter_values_are_read_as_the_dds_transport_reads_them() {
    assert_eq!(json_of(&ParameterValue::Double(0.5)), serde_json::json!(0.5));
    assert_eq!(json_of(&ParameterValue::Integer(3)), serde_json::json!(3));
    assert_eq!(json_of(&ParameterValue::Bool(true)), serde_json::json!(true));
    assert_eq!(json_of(&ParameterValue::String("x".into())), serde_json::json!("x"));
    assert_eq!(json_of(&ParameterValue::NotSet), Value::Null);
}
