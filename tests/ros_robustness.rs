//! The node's defects as a user met them from outside, tried again over
//! real DDS: an independent Cyclone DDS peer (tests/peer/robustness.py)
//! and the node, inside a network namespace of their own (`unshare -n`,
//! only loopback up), both configured for loopback only. Empty and refused
//! joint states, refusal reasons in every diagnostic, marker counts, an
//! impossible jump, late transient-local subscribers, an injected panic and
//! SIGTERM (see the peer's docstring for each expectation).

mod common;

use std::process::Command;
use workcell_guard_description::workcell;

#[test]
fn the_node_fails_safe_over_dds_as_a_user_sees_it() {
    let repo = common::repo();
    let cell = workcell::load(&repo.join("config/workcell.yaml")).unwrap();
    let spheres: Vec<String> = cell
        .manipulators
        .iter()
        .map(|m| format!("{}={}", m.name, m.spheres.links.iter().map(|l| l.fine.len()).sum::<usize>()))
        .collect();
    let args = [
        repo.join("tests/peer/robustness.py").display().to_string(),
        "--node".into(),
        env!("CARGO_BIN_EXE_workcell_guard").into(),
        "--params".into(),
        repo.join("config/workcell_guard.yaml").display().to_string(),
        "--spheres".into(),
        spheres.join(","),
    ];
    let quoted: Vec<String> = args.iter().map(|a| format!("'{}'", a.replace('\'', "'\\''"))).collect();
    let inner = format!("ip link set lo up && exec python3 {}", quoted.join(" "));
    let out = Command::new("unshare").args(["-n", "sh", "-c", &inner]).output().expect("unshare runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(out.status.success(), "peer failed ({}):\n{stdout}\n{stderr}", out.status);
    let v: serde_json::Value = serde_json::from_str(stdout.trim().lines().last().unwrap()).unwrap();
    assert_eq!(v["panic"]["late_subscriber"][0][0], true);
    assert_eq!(v["sigterm"]["exit_code"], 0);
}
