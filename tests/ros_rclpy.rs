//! The node driven from rclpy (ROS 2 Jazzy from its PyPI wheels, on
//! rmw_fastrtps_cpp) as an integrator drives it: tests/peer/rclpy_integrator.py,
//! run with the Python of the venv scripts/test.sh makes (`target/rclpy-venv`,
//! or `WORKCELL_GUARD_RCLPY_PYTHON`), inside a network namespace of its own
//! (`unshare -n`, only loopback up), both sides on loopback only.

mod common;

use std::path::PathBuf;
fn rclpy_python() -> PathBuf {
    let p = std::env::var_os("WORKCELL_GUARD_RCLPY_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| common::repo().join("target/rclpy-venv/bin/python"));
    assert!(p.exists(), "{} missing: scripts/test.sh makes the rclpy venv (ROS 2 Jazzy wheels)", p.display());
    p
}

#[test]
fn from_rclpy_parameters_services_and_the_graph_behave_as_ros_2_does() {
    let repo = common::repo();
    let out = tempfile::NamedTempFile::new().unwrap();
    let args = [
        rclpy_python().display().to_string(),
        repo.join("tests/peer/rclpy_integrator.py").display().to_string(),
        "--node".into(),
        env!("CARGO_BIN_EXE_workcell_guard").into(),
        "--params".into(),
        repo.join("config/workcell_guard.yaml").display().to_string(),
        "--out".into(),
        out.path().display().to_string(),
    ];
    let run = common::in_own_netns(&args);
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    println!("{stdout}");
    assert!(run.status.success(), "rclpy peer failed ({}):\n{stdout}\n{stderr}", run.status);
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.path()).unwrap()).unwrap();
    println!("{v:#}");
    let times: Vec<f64> = v["reset_stop_s"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    assert_eq!(times.len(), 20, "every call answered");
    let slow = times.iter().filter(|&&t| t >= 0.1).count();
    println!("first calls after wait_for_service: {slow} of 20 took 0.1 s or more: {times:?}");
    // A request Fast DDS sent before this side knew its writer comes again
    // at its next heartbeat (3 s); the reply waits for its reader, so no
    // call waits for a second resend.
    assert!(times.iter().all(|&t| t < 5.0), "a first call waited for more than one heartbeat: {times:?}");
    assert_eq!(v["node_log_ansi"], 0, "colour codes in a log that is not a terminal");
    assert!(v["node_log_bytes"].as_u64().unwrap() > 0, "the node logged nothing at info");
}
