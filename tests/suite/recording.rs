//! Recordings written by someone else: a rosbag2 MCAP written by the
//! `mcap-ros2-support` Python package (its own CDR encoder and message
//! definitions; tests/peer/bag_tool.py) is read back to the messages it was
//! given, and replays through the node to exactly the decisions the same
//! inputs give when fed to a node directly, cycle by cycle.

use crate::common;
use std::process::Command;
use workcell_guard_description::workcell;
use workcell_guard_ros::args::RosArgs;
use workcell_guard_ros::bag::{self, Msg};
use workcell_guard_ros::event_loop::{Rebuild, seconds};
use workcell_guard_ros::msg::{Header, JointState, ManipulatorGrant, Time};
use workcell_guard_ros::node::GuardNode;
use workcell_guard_ros::params::NodeParams;
use workcell_guard_ros::topics::{Role, Topics};
use workcell_guard_ros::{replay, startup};

const LEFT: [&str; 7] = ["shoulder_pan", "shoulder_lift", "elbow", "wrist_1", "wrist_2", "wrist_3", "finger_left"];
const RIGHT: [&str; 8] = ["j1", "j2", "j3", "j4", "j5", "j6", "j7", "finger_a_joint"];
const T0_NS: u64 = 1_790_000_000_000_000_000;

fn node() -> GuardNode {
    let params =
        NodeParams { workcell_file: Some(common::repo().join("config/workcell.yaml")), ..NodeParams::default() };
    startup::build_from(params, Some(common::cell::cache_dir())).unwrap()
}

/// Both arms turning to face each other over 3 s (they would meet), a
/// joint state each every 5 ms, stamped 1 ms before it is logged.
fn states() -> Vec<(u64, usize, JointState)> {
    let mut out = Vec::new();
    for k in 0..700u64 {
        let ns = T0_NS + k * 5_000_000;
        let u = (k as f64 * 0.005 / 3.0).min(1.0);
        let stamp = ns - 1_000_000;
        let header = Header {
            stamp: Time { sec: (stamp / 1_000_000_000) as i32, nanosec: (stamp % 1_000_000_000) as u32 },
            frame_id: String::new(),
        };
        let js = |names: &[&str], q: Vec<f64>| JointState {
            header: header.clone(),
            name: names.iter().map(|s| s.to_string()).collect(),
            position: q,
            velocity: Vec::new(),
            effort: Vec::new(),
        };
        out.push((ns, 0, js(&LEFT, vec![1.5 * (1.0 - u), 0.7, 1.1, 0.0, 0.0, 0.0, 0.02])));
        out.push((ns + 1_000, 1, js(&RIGHT, vec![-1.5 * (1.0 - u), 1.2, 0.0, -0.3, 0.0, 0.0, 0.0, 0.0])));
    }
    out
}

/// The decisions of a node fed `states` directly, cycled every 2 ms from
/// the first one's instant (before an input at the same instant), as the
/// replay of a recording without cycle instants does: (ns, robot, stop)
/// at each change, and every cycle's grants.
fn fed_directly(states: &[(u64, usize, JointState)]) -> (Vec<(u64, usize, bool)>, Vec<ManipulatorGrant>) {
    let mut n = node();
    let mut tick = states[0].0;
    let (mut changes, mut grants) = (Vec::new(), Vec::new());
    let mut last = [None, None];
    let mut cycle = |n: &mut GuardNode, ns: u64| {
        if n.timer_due() {
            n.cycle(seconds(ns));
            for (r, s) in n.stops().iter().enumerate() {
                if last[r] != Some(s.data) {
                    last[r] = Some(s.data);
                    changes.push((ns, r, s.data));
                }
            }
            // The grants due, as the event loop publishes them.
            for r in 0..n.arm_grants().len() {
                if n.grant_due(r) {
                    grants.push(n.arm_grants()[r].clone());
                    n.grant_sent(r, true);
                }
            }
        }
    };
    for (ns, r, js) in states {
        while tick <= *ns {
            cycle(&mut n, tick);
            tick += 2_000_000;
        }
        let _ = n.on_joint_state(*r, js, seconds(*ns));
    }
    (changes, grants)
}

#[test]
fn a_bag_from_an_independent_writer_reads_back_and_replays_to_the_decisions_of_its_inputs_fed_directly() {
    let cell = workcell::load(&common::repo().join("config/workcell.yaml")).unwrap();
    let topics = Topics::new(&RosArgs::default(), &cell);
    let states = states();
    let mut messages: Vec<serde_json::Value> = states
        .iter()
        .map(|(ns, r, js)| {
            serde_json::json!({
                "topic": topics.name(Role::JointState(*r)).unwrap(),
                "type": "sensor_msgs/msg/JointState",
                "log_time_ns": ns,
                "msg": {
                    "header": {"stamp": {"sec": js.header.stamp.sec, "nanosec": js.header.stamp.nanosec}, "frame_id": ""},
                    "name": js.name, "position": js.position, "velocity": [], "effort": [],
                },
            })
        })
        .collect();
    messages.push(serde_json::json!({
        "topic": "/camera/status", "type": "std_msgs/msg/String", "log_time_ns": T0_NS + 7, "msg": {"data": "ok"},
    }));
    let dir = tempfile::tempdir().unwrap();
    let (spec, file) = (dir.path().join("in.json"), dir.path().join("independent.mcap"));
    std::fs::write(&spec, serde_json::to_string(&serde_json::json!({ "messages": messages })).unwrap()).unwrap();
    let script = common::repo().join("tests/peer/bag_tool.py");
    let out = Command::new("python3").arg(&script).arg("write").arg(&spec).arg(&file).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    // Read back: every joint state as it was given, the foreign topic counted.
    let rec = bag::read(&file, &topics).unwrap();
    assert_eq!(rec.profile, "ros2");
    assert_eq!(rec.skipped.get("/camera/status"), Some(&1));
    assert_eq!(rec.entries.len(), states.len());
    for (e, (ns, r, js)) in rec.entries.iter().zip(&states) {
        assert_eq!((e.log_time_ns, e.role), (*ns, Role::JointState(*r)));
        assert_eq!(e.msg, Msg::JointState(js.clone()));
    }

    // Replayed: the decisions of the same inputs fed directly.
    let mut n = node();
    let cache = common::cell::cache_dir().to_path_buf();
    let rebuild: Rebuild =
        std::sync::Arc::new(move |p| startup::build_from(p, Some(&cache)).map_err(|e| e.to_string()));
    let r = replay::replay(&mut n, &rec, &topics, 500.0, &rebuild);
    assert_eq!(r.clock, replay::CycleClock::Rate, "no cycle instants, no grants: cycled at the rate");
    assert_eq!((r.inputs, r.recorded_out, r.difference), (states.len(), 0, None));
    let mut replayed_changes = Vec::new();
    let mut last = [None, None];
    for e in &r.out {
        if let (Role::Stop(i), Msg::Bool(b)) = (e.role, &e.msg)
            && last[i] != Some(b.data)
        {
            last[i] = Some(b.data);
            replayed_changes.push((e.log_time_ns, i, b.data));
        }
    }
    let replayed_grants: Vec<ManipulatorGrant> = r
        .out
        .iter()
        .filter_map(|e| match &e.msg {
            Msg::ArmGrant(g) => Some(g.clone()),
            _ => None,
        })
        .collect();
    let (changes, grants) = fed_directly(&states);
    println!(
        "stop changes (ns from the start, robot, stop): {:?}",
        changes.iter().map(|c| (c.0 - T0_NS, c.1, c.2)).collect::<Vec<_>>()
    );
    for robot in 0..2 {
        assert!(
            changes.iter().any(|c| c.1 == robot && c.2),
            "arm {robot} never stopped: the scenario must bring them together"
        );
        assert!(changes.iter().any(|c| c.1 == robot && !c.2), "arm {robot} never released (warm-up, then clear)");
    }
    assert_eq!(replayed_changes, changes);
    assert_eq!(replayed_grants.len(), grants.len());
    assert!(replayed_grants == grants, "the replay's grants differ from the direct run's");
}
