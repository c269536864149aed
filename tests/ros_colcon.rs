//! The node as a colcon workspace installs it, seen from rclpy (ROS 2 Jazzy
//! from its PyPI wheels, rmw_fastrtps_cpp) with the package's own message
//! types: tests/peer/rclpy_typed.py, with the same checks on both
//! transports, run with the Python of the prefix scripts/ros2_prefix.sh
//! makes (`target/ros2-jazzy`, or `WORKCELL_GUARD_ROS2_PREFIX`), that
//! prefix's environment and the install space of scripts/colcon_ws.sh
//! (`target/colcon/install`, or `WORKCELL_GUARD_COLCON_INSTALL`) sourced,
//! inside a network namespace of its own (`unshare -n`, only loopback up).
//!
//! - on rcl: the r2r build colcon installed, found through the ament index
//!   as `ros2 run` finds it;
//! - on the built-in DDS transport: this build's node, on the installed
//!   sample cell.
//!
//! Both read the installed cell, whose files are named by `package://`
//! URIs the node resolves through the ament index.
//!
//! They need the workspace built, so they are ignored by the README's test
//! command; CI runs them after building it:
//! `bash scripts/colcon_ws.sh && cargo test --test ros_colcon -- --ignored`.

mod common;

use std::path::PathBuf;

fn from_env_or(var: &str, default: &str) -> PathBuf {
    std::env::var_os(var).map(PathBuf::from).unwrap_or_else(|| common::repo().join(default))
}

/// Runs the typed rclpy peer against `transport`, the node at `node` (the
/// installed one when `None`), and returns what it saw.
fn typed_peer(transport: &str, node: Option<&str>) -> serde_json::Value {
    let repo = common::repo();
    let prefix = from_env_or("WORKCELL_GUARD_ROS2_PREFIX", "target/ros2-jazzy");
    let install = from_env_or("WORKCELL_GUARD_COLCON_INSTALL", "target/colcon/install");
    let (env_sh, setup) = (prefix.join("env.sh"), install.join("setup.bash"));
    assert!(env_sh.exists(), "{} missing: scripts/ros2_prefix.sh makes the prefix", env_sh.display());
    assert!(setup.exists(), "{} missing: scripts/colcon_ws.sh builds the workspace", setup.display());
    let out = tempfile::NamedTempFile::new().unwrap();
    let mut peer = format!(
        "source '{}' && source '{}' && exec python '{}' --transport {transport} --out '{}'",
        env_sh.display(),
        setup.display(),
        repo.join("tests/peer/rclpy_typed.py").display(),
        out.path().display()
    );
    if let Some(node) = node {
        peer.push_str(&format!(" --node '{node}'"));
    }
    let run = common::in_own_netns(&["bash".into(), "-c".into(), peer]);
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "rclpy peer failed on {transport} ({}):\n{stdout}\n{stderr}", run.status);
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.path()).unwrap()).unwrap();
    println!("{v:#}");
    assert_eq!(v["ok"], true);
    assert_eq!(v["nodes"], serde_json::json!(["/rclpy_peer", "/workcell_guard"]), "one participant of the node's");
    assert_eq!(v["late_joiner_stops"], serde_json::json!({"arm_left": true, "arm_right": true}));
    assert_eq!(v["exit_code"], 0, "a clean exit after SIGTERM");
    assert_eq!(v["stops_after_panic"], serde_json::json!({"arm_left": true, "arm_right": true}));
    assert!(v["exit_code_after_panic"].as_i64().is_some_and(|c| c != 0), "an error exit after a panic");
    v
}

#[test]
#[ignore = "needs the colcon workspace: bash scripts/colcon_ws.sh, then --ignored"]
fn on_rcl_the_installed_node_serves_typed_services_through_itself_and_stops_every_arm_on_sigterm_and_on_a_panic() {
    let v = typed_peer("r2r", None);
    assert!(
        v["node"].as_str().is_some_and(|n| n.ends_with("install/workcell_guard/lib/workcell_guard/workcell_guard")),
        "the node was not the installed one: {}",
        v["node"]
    );
}

#[test]
#[ignore = "needs the colcon workspace: bash scripts/colcon_ws.sh, then --ignored"]
fn on_the_built_in_transport_rclpy_sees_the_same_node_as_on_rcl() {
    let v = typed_peer("dds", Some(env!("CARGO_BIN_EXE_workcell_guard")));
    let graph = &v["services_in_graph"];
    assert_eq!(graph["/workcell_guard/set_contact"], "workcell_guard_msgs/srv/SetContact");
}
