//! Joint state in → stop out, over loopback DDS, beside the bare DDS round
//! trip measured in the same run (`cargo bench --bench ros_latency`).
//!
//! An independent peer (Cyclone DDS from Python, tests/peer/latency.py)
//! publishes a joint state and times the next stop it receives, 4,000
//! trials per target by default (`WG_LATENCY_TRIALS`), twice: with
//! arm_right holding still, then swinging. The two targets run side by
//! side and the trials alternate between them one by one, so that a noisy
//! machine's drifts hit both alike: an echo on the node's own DDS stack and
//! QoS (this binary, run with `--echo`: a ros2-client participant that
//! answers every joint state with a Bool at once), and the node itself with
//! `cycle_on_joint_state` (mapping; the arriving robot decided first, its
//! stop published, then the rest). The difference is what the node adds;
//! the goal is a p99 of at most 200 µs.
//!
//! The node's timer runs at 1 Hz here: every cycle publishes every stop, so
//! a 500 Hz timer's samples could not be told from the answer to a joint
//! state. Between two of its trials (about 5 ms) the node is idle and its
//! caches go cold: a pessimistic setting next to a node cycling at 500 Hz.
//!
//! A third run times a platen move request → its grant the same way
//! (`--platen`: `mover_a` reports its pose, asks to move 5 cm, and waits for
//! the grant with that request id), beside the echo answering each request
//! with a grant at once; the node runs at its configured 500 Hz and answers
//! a request as it arrives.
//!
//! Everything runs inside a network namespace of its own (`unshare -n`,
//! loopback only), with both DDS stacks configured for loopback.

use futures::StreamExt;
use ros2_client::dds::Context;
use ros2_client::dds::rustdds::DomainParticipantBuilder;
use ros2_client::qos::History;
use ros2_client::{MessageTypeName, Name, NodeName, NodeOptions, QosProfile};
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::process::Command;
use workcell_guard_ros::dds::{DdsEnv, LATCHED, SENSOR};
use workcell_guard_ros::msg::{Bool, JointState, PlatenGrant, PlatenMoveRequest};

fn echo() {
    let env = DdsEnv::from_env().expect("ROS environment");
    let mut dp = DomainParticipantBuilder::new(env.domain_id);
    if env.localhost_only {
        dp = dp.with_only_networks([Ipv4Addr::LOCALHOST]);
    }
    let context = Context::from_domain_participant(dp.build().expect("participant")).expect("context");
    let mut node =
        context.new_node(NodeName::new("/", "dds_echo").unwrap(), NodeOptions::new().enable_rosout(false)).unwrap();
    let js = node
        .create_topic(
            &Name::parse("/arm_right/joint_states").unwrap(),
            MessageTypeName::new("sensor_msgs", "JointState"),
            &SENSOR,
        )
        .unwrap();
    let st = node
        .create_topic(&Name::parse("/arm_right/stop").unwrap(), MessageTypeName::new("std_msgs", "Bool"), &LATCHED)
        .unwrap();
    let sub = node.create_subscription::<JointState>(&js, None).unwrap();
    let publ = node.create_publisher::<Bool>(&st, None).unwrap();
    // The node's request and grant QoS: reliable, volatile, keep last 10.
    let services = QosProfile::publisher_default().history(History::KeepLast { depth: 10 });
    let rq = node
        .create_topic(
            &Name::parse("/mover_a/move_request").unwrap(),
            MessageTypeName::new("workcell_guard_msgs", "PlatenMoveRequest"),
            &services,
        )
        .unwrap();
    let gr = node
        .create_topic(
            &Name::parse("/mover_a/grant").unwrap(),
            MessageTypeName::new("workcell_guard_msgs", "PlatenGrant"),
            &services,
        )
        .unwrap();
    let requests = node.create_subscription::<PlatenMoveRequest>(&rq, None).unwrap();
    let grants = node.create_publisher::<PlatenGrant>(&gr, None).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let mut s = Box::pin(sub.async_stream());
        let mut r = Box::pin(requests.async_stream());
        let mut shutdown = workcell_guard_ros::startup::Shutdown::new();
        loop {
            tokio::select! {
                _ = shutdown.requested() => break,
                m = s.next() => match m {
                    Some(Ok((msg, _))) => { let _ = publ.publish(Bool { data: msg.position.is_empty() }); }
                    Some(Err(_)) => {}
                    None => break,
                },
                m = r.next() => match m {
                    Some(Ok((msg, _))) => {
                        let _ = grants.publish(PlatenGrant { request_id: msg.request_id, ..Default::default() });
                    }
                    Some(Err(_)) => {}
                    None => break,
                },
            }
        }
    });
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--echo") {
        echo();
        return;
    }
    if args.iter().any(|a| a == "--list") {
        println!("ros_latency: benchmark");
        return;
    }
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let me = std::env::current_exe().unwrap();
    let trials = std::env::var("WG_LATENCY_TRIALS").unwrap_or_else(|_| "4000".into());
    let q = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    for moving in ["", "--moving", "--platen"] {
        let inner = format!(
            "ip link set lo up && exec python3 {} --echo {} --node {} --params {} --trials {} {moving}",
            q(&repo.join("tests/peer/latency.py").display().to_string()),
            q(&format!("{} --echo", me.display())),
            q(env!("CARGO_BIN_EXE_workcell_guard")),
            q(&repo.join("config/workcell_guard.yaml").display().to_string()),
            q(&trials),
        );
        let status = Command::new("unshare").args(["-n", "sh", "-c", &inner]).status().expect("unshare runs");
        assert!(status.success(), "latency peer failed: {status}");
    }
}
