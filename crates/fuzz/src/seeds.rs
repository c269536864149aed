//! The seed corpus of each target: the repository's own files where it has
//! them (the sample workcells, URDFs, meshes, sphere file, parameter
//! file), and inputs built here from the node's own types where it has
//! none (grids, command lines, parameter values, messages, a recording).

use crate::node::{T0_NS, sample};
use byteorder::LittleEndian;
use serde::Serialize;
use std::path::Path;
use workcell_guard_description::npy::{self, Dtype};
use workcell_guard_ros::bag::BagWriter;
use workcell_guard_ros::msg::{
    Duration, Header, JointState, JointTrajectory, JointTrajectoryPoint, Point, PointCloud2, PointField, Pose, Pose2D,
    PoseStamped, Quaternion, Time,
};
use workcell_guard_ros::msg::{PlatenMoveRequest, PlatenPathRequest};

/// The seeds of target `name` (none for an unknown name).
pub fn seeds(name: &str) -> Vec<Vec<u8>> {
    let root = crate::repo();
    let files =
        |paths: &[&str]| -> Vec<Vec<u8>> { paths.iter().filter_map(|p| std::fs::read(root.join(p)).ok()).collect() };
    match name {
        "workcell_yaml" => files(&["config/workcell.yaml", "config/platen_cell.yaml", "config/platen_crossing.yaml"]),
        "urdf" => files(&["urdf/wg_arm6.urdf", "urdf/wg_arm7.urdf", "urdf/wg_platen.urdf"]),
        "mesh" => {
            let picks = [
                (0u8, "urdf/meshes/shoulder_housing.stl"),
                (0x80, "urdf/meshes/forearm_shell.STL"),
                (1, "urdf/meshes/wrist_cap.obj"),
                (2, "urdf/meshes/gripper_finger.dae"),
            ];
            picks.iter().filter_map(|(k, p)| std::fs::read(root.join(p)).ok().map(|b| [vec![*k], b].concat())).collect()
        }
        "sphere_file" => files(&["config/spheres/arm_right.yaml"]),
        "npy" => npy_seeds(),
        "ros_args" => ros_args_seeds(),
        "param_file" => files(&["config/workcell_guard.yaml"]),
        "param_update" => param_update_seeds(),
        "messages" => vec![message_seed(false), message_seed(true), clock_jump_seed()],
        "service_requests" => service_seeds(),
        "mcap" => mcap_seed().into_iter().collect(),
        _ => Vec::new(),
    }
}

fn npy_seeds() -> Vec<Vec<u8>> {
    let f: Vec<u8> = (0..24).flat_map(|i| (i as f32 * 0.1).to_le_bytes()).collect();
    let u: Vec<u8> = (0..24u32).flat_map(|i| (i % 3).to_le_bytes()).collect();
    let b: Vec<u8> = (0..24u8).map(|i| i % 2).collect();
    vec![
        npy::encode([2, 3, 4], Dtype::F32, &f),
        npy::encode([4, 3, 2], Dtype::U32, &u),
        npy::encode([2, 2, 6], Dtype::U8, &b),
    ]
}

fn ros_args_seeds() -> Vec<Vec<u8>> {
    let lines: [&[&str]; 4] = [
        &["--ros-args", "-r", "__node:=guard", "-r", "__ns:=/cell", "-p", "cycle_hz:=500"],
        &["run", "--ros-args", "--log-level", "workcell_guard:=debug", "-r", "joint_states:=js", "--"],
        &["--ros-args", "-p", "workcell_guard:use_sim_time:=true", "-e", "/enclave", "--disable-rosout-logs"],
        &["--ros-args", "-r", "workcell_guard:/arm_left/stop:=/left/stop", "-p", "stop_heartbeat_s:=0.5"],
    ];
    lines.iter().map(|l| l.join("\0").into_bytes()).collect()
}

fn param_update_seeds() -> Vec<Vec<u8>> {
    let names = workcell_guard_ros::params::PARAMS;
    let value = |name: &str| -> &str {
        match names.iter().find(|s| s.name == name).map(|s| s.default) {
            Some(d) if !d.is_empty() => d,
            _ => "1.0",
        }
    };
    names
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            u8::try_from(i).ok().map(|k| [&[k][..], value(s.name).trim_matches('`').as_bytes()].concat())
        })
        .collect()
}

fn cdr<M: Serialize>(m: &M) -> Vec<u8> {
    let mut out = vec![0, 1, 0, 0];
    // invariant: our message types serialize to a Vec (nothing can fail).
    cdr_encoding::to_writer::<M, LittleEndian, _>(&mut out, m).expect("serializable");
    out
}

fn stamp(ns: u64) -> Header {
    let t = Time { sec: (ns / 1_000_000_000) as i32, nanosec: (ns % 1_000_000_000) as u32 };
    Header { stamp: t, frame_id: String::new() }
}

fn record(out: &mut Vec<u8>, kind: usize, dt_tenth_ms: u8, body: &[u8]) {
    out.extend_from_slice(&[kind as u8, dt_tenth_ms]);
    out.extend_from_slice(&(body.len() as u16).to_le_bytes());
    out.extend_from_slice(body);
}

fn joint_states(ns: u64) -> Vec<JointState> {
    sample()
        .cell
        .manipulators
        .iter()
        .map(|m| JointState {
            header: stamp(ns),
            name: (0..m.robot.dof()).map(|d| m.robot.dof_joint(d).name.clone()).collect(),
            position: (0..m.robot.dof()).map(|d| 0.1 * d as f64 + 1e-9 * ns as f64 % 0.01).collect(),
            velocity: Vec::new(),
            effort: Vec::new(),
        })
        .collect()
}

/// Joint states of every arm every 2 ms for 60 ms; with `more`, a plan, a
/// point cloud, a platen pose, move and path requests and calls as well.
fn message_seed(more: bool) -> Vec<u8> {
    let s = sample();
    let arms = s.cell.manipulators.len();
    let units = s.cell.platen.as_ref().map_or(0, |p| p.units.len());
    let (points, calls) = (2 * arms + 3 * units, 2 * arms + 3 * units + 1);
    let mut out = Vec::new();
    for k in 0..30u64 {
        for (r, js) in joint_states(T0_NS + k * 2_000_000).iter().enumerate() {
            record(&mut out, 2 * r, if r == 0 { 20 } else { 0 }, &cdr(js));
        }
    }
    if !more {
        return out;
    }
    let js = &joint_states(T0_NS)[0];
    let plan = JointTrajectory {
        header: stamp(T0_NS),
        joint_names: js.name.clone(),
        points: (0..3)
            .map(|i| JointTrajectoryPoint {
                positions: js.position.iter().map(|p| p + 0.05 * f64::from(i)).collect(),
                time_from_start: Duration { sec: i, nanosec: 0 },
                ..Default::default()
            })
            .collect(),
    };
    record(&mut out, 1, 5, &cdr(&plan));
    let field = |name: &str, offset| PointField { name: name.into(), offset, datatype: PointField::FLOAT32, count: 1 };
    let cloud = PointCloud2 {
        header: Header { frame_id: s.cell.cell_frame.clone(), ..stamp(T0_NS) },
        height: 1,
        width: 2,
        fields: vec![field("x", 0), field("y", 4), field("z", 8)],
        is_bigendian: false,
        point_step: 12,
        row_step: 24,
        data: [0.5f32, 0.5, 0.5, -0.3, 0.2, 1.0].iter().flat_map(|v| v.to_le_bytes()).collect(),
        is_dense: true,
    };
    record(&mut out, points, 5, &cdr(&cloud));
    if units > 0 {
        let base = 2 * arms;
        let pose = Pose {
            position: Point { x: 0.1, y: 0.1, z: 0.0 },
            orientation: Quaternion { w: 1.0, ..Default::default() },
        };
        record(&mut out, base, 5, &cdr(&PoseStamped { header: stamp(T0_NS), pose }));
        let target = Pose2D { x: 0.3, y: 0.1, theta: 0.0 };
        record(&mut out, base + 1, 5, &cdr(&PlatenMoveRequest { header: stamp(T0_NS), request_id: 7, target }));
        let path = PlatenPathRequest {
            header: stamp(T0_NS),
            unit: String::new(),
            request_id: 8,
            waypoints: vec![target, Pose2D { x: 0.3, y: 0.3, theta: 1.0 }],
            speed_mps: 0.1,
        };
        record(&mut out, base + 2, 5, &cdr(&path));
    }
    record(&mut out, calls, 5, b"stop_heartbeat_s\x000.5");
    let robot = &s.cell.manipulators[0].name;
    record(&mut out, calls + 1, 5, format!("{robot}\x003").as_bytes());
    record(&mut out, calls + 3, 5, b"");
    out
}

/// Joint states, the clock going back 4 ms, then ahead 2.5 s, the states
/// following it each time.
fn clock_jump_seed() -> Vec<u8> {
    let mut out = message_seed(false);
    let mut ns = T0_NS + 60_000_000;
    for (jump, by) in [(0xFB_u8, -4_000_000_i64), (0xF4, 2_500_000_000)] {
        ns = ns.saturating_add_signed(by);
        for k in 0..10u64 {
            for (r, js) in joint_states(ns + k * 2_000_000).iter().enumerate() {
                let dt = match (k, r) {
                    (0, 0) => jump,
                    (_, 0) => 20,
                    _ => 0,
                };
                record(&mut out, 2 * r, dt, &cdr(js));
            }
        }
        ns += 20_000_000;
    }
    out
}

/// A recording of the sample cell's joint states, as the node writes one.
fn mcap_seed() -> Option<Vec<u8>> {
    let file = std::env::temp_dir().join(format!("wg_fuzz_seed_{}.mcap", std::process::id()));
    let topics = &sample().topics;
    let mut bag = BagWriter::create(&file).ok()?;
    for k in 0..20u64 {
        let ns = T0_NS + k * 2_000_000;
        for (r, js) in joint_states(ns).into_iter().enumerate() {
            let topic = topics.name(workcell_guard_ros::topics::Role::JointState(r))?;
            bag.write(topic, ns, &js).ok()?;
        }
    }
    bag.finish().ok()?;
    let bytes = std::fs::read(&file).ok();
    let _ = std::fs::remove_file(Path::new(&file));
    bytes
}

/// One request of each type, little-endian; the Cyclone form (a 16-byte
/// header first) and the enhanced one of a parameter set.
fn service_seeds() -> Vec<Vec<u8>> {
    use ros2_client::parameters::{ParameterValue, raw};
    use ros2_client::rcl_interfaces::*;
    use workcell_guard_ros::msg::{SetContactRequest, SetPriorityRequest, TriggerRequest};
    let body = |m: Vec<u8>| m[4..].to_vec();
    let names = || vec!["cycle_hz".to_string(), "qos_overrides./diagnostics.publisher.depth".to_string()];
    let param = |name: &str, v: ParameterValue| raw::Parameter { name: name.into(), value: v.into() };
    let set = SetParametersRequest {
        parameter: vec![
            param("stop_heartbeat_s", ParameterValue::Double(0.5)),
            param("cycle_on_joint_state", ParameterValue::Boolean(true)),
            param("cloud_policy", ParameterValue::String("warn".into())),
        ],
    };
    let requests: Vec<(u8, Vec<u8>)> = vec![
        (0, body(cdr(&TriggerRequest::default()))),
        (
            1,
            body(cdr(&SetContactRequest { body_a: "arm_left/link_6".into(), body_b: "fixture".into(), allowed: true })),
        ),
        (2, body(cdr(&SetPriorityRequest { robot: "arm_right".into(), priority: 5 }))),
        (3, body(cdr(&GetParametersRequest { names: names() }))),
        (4, body(cdr(&GetParameterTypesRequest { names: names() }))),
        (5, body(cdr(&set))),
        (16 | 5, body(cdr(&set))),
        (6, body(cdr(&ListParametersRequest { prefixes: vec!["qos_overrides".into()], depth: 2 }))),
        (7, body(cdr(&DescribeParametersRequest { names: names() }))),
    ];
    let mut out: Vec<Vec<u8>> = requests.iter().map(|(k, b)| [vec![*k], b.clone()].concat()).collect();
    let cyclone_header = [7u8, 7, 7, 7, 7, 7, 7, 7, 1, 0, 0, 0, 0, 0, 0, 0];
    out.push([vec![5], cyclone_header.to_vec(), body(cdr(&set))].concat());
    out
}
