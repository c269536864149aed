//! The node's defects as a user met them from outside, tried again over
//! real DDS: an independent Cyclone DDS peer (tests/peer/robustness.py)
//! and the node, inside a network namespace of their own (`unshare -n`,
//! only loopback up), both configured for loopback only. Empty and refused
//! joint states, refusal reasons in every diagnostic, marker counts, an
//! impossible jump, late transient-local subscribers, an injected panic and
//! SIGTERM (see the peer's docstring for each expectation).

mod common;

use std::process::Command;
use std::sync::Mutex;

/// The tests here time the node: one at a time, so that they do not take
/// each other's cores (the machine has two).
static SERIAL: Mutex<()> = Mutex::new(());

/// Runs `python3 args…` in a network namespace of its own (loopback up
/// only); asserts it succeeded and returns its standard output.
fn python_in_netns(args: &[String]) -> String {
    let quoted: Vec<String> = args.iter().map(|a| format!("'{}'", a.replace('\'', "'\\''"))).collect();
    let inner = format!("ip link set lo up && exec python3 {}", quoted.join(" "));
    let out = Command::new("unshare").args(["-n", "sh", "-c", &inner]).output().expect("unshare runs");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    println!("{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{} failed ({}):\n{stdout}\n{stderr}", args[0], out.status);
    stdout
}
use workcell_guard_description::workcell;

/// Runs peer `script` (under tests/peer/, or an absolute path) against the node with the sample's
/// parameter file (and `extra` arguments) in a network namespace of its
/// own; the figures (JSON) it wrote to `--out`.
fn peer_figures(script: &str, extra: &[&str]) -> serde_json::Value {
    let repo = common::repo();
    let out = tempfile::NamedTempFile::new().unwrap();
    let mut args = vec![
        repo.join("tests/peer").join(script).display().to_string(),
        "--node".into(),
        env!("CARGO_BIN_EXE_workcell_guard").into(),
        "--out".into(),
        out.path().display().to_string(),
    ];
    args.extend(extra.iter().map(|a| a.to_string()));
    python_in_netns(&args);
    serde_json::from_str(&std::fs::read_to_string(out.path()).unwrap()).unwrap()
}

#[test]
fn the_node_fails_safe_over_dds_as_a_user_sees_it() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
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
    let stdout = python_in_netns(&args);
    let v: serde_json::Value = serde_json::from_str(stdout.trim().lines().last().unwrap()).unwrap();
    assert_eq!(v["panic"]["late_subscriber"][0][0], true);
    assert_eq!(v["sigterm"]["exit_code"], 0);
}

/// Faults injected from outside over DDS (tests/peer/faults.py): dropped,
/// late (50 ms), bursty and doubled joint states leave the arm running; a frozen
/// stream, a deleted publisher, states too late, swapped, ahead or jumping
/// back stop it within the watchdog (0.15 s here, plus the cycle and the
/// DDS hop), with the fault named, the other arm running on, and it runs
/// again once good states return; a corrupt workcell on reload is refused
/// and the old cell runs on; a subscriber suspended (SIGSTOP) for 9 s
/// costs no more cycles than the machine takes from a process keeping
/// the same schedule (plus 2 %), and a frozen stream meanwhile still stops its arm; a
/// node killed and restarted sends a late reader `true` first and runs
/// again after warm-up.
#[test]
fn injected_faults_stop_the_affected_arm_within_the_watchdog_and_it_recovers() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let params = common::repo().join("config/workcell_guard.yaml").display().to_string();
    let v = peer_figures("faults.py", &["--params", &params]);
    let faults =
        ["stream frozen", "publisher deleted", "delivered 0.4 s late", "two states swapped", "stamp 5 s ahead"];
    for fault in faults.into_iter().chain(["subscriber suspended"]) {
        let s = v[fault]["stop_after_s"].as_f64().unwrap();
        // The watchdog, three 2 ms cycles and the hop back: a stop later than
        // this is not "within the watchdog".
        assert!(s <= 0.15 + 0.1, "{fault}: stopped after {s} s");
    }
    // A writer blocked on the suspended reader would miss nearly every
    // cycle; 0.1 % measured. Beside the machine's share over the same time
    // (a process keeping the same schedule, scripts/tick_probe.py).
    let s = &v["subscriber suspended"];
    let (missed, machine) = (s["missed_share"].as_f64().unwrap(), s["probe_skipped_share"].as_f64().unwrap());
    assert!(missed < machine + 0.02, "{s}");
    assert_eq!(v["kill and restart"]["first_sample"], true);
}

/// Jumps of the clock (tests/peer/clock_jumps.py). With `use_sim_time`,
/// `/clock` as rosgraph_msgs/Clock (what Gazebo and `ros2 bag play`
/// publish) skipping 5 s ahead, then going 20 s back, the joint states
/// following it: both arms stop within the watchdog, their diagnostics
/// name the jump, and both run again after warm-up. On wall time, the
/// node's clock stepped 5 s ahead (libfaketime) and back: stopped within
/// the watchdog and while the clocks disagree, both steps named, running
/// again after.
#[test]
fn jumps_of_the_simulated_and_the_wall_clock_stop_every_arm_and_name_the_jump() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let params = common::repo().join("config/workcell_guard.yaml").display().to_string();
    let v = peer_figures("clock_jumps.py", &["--params", &params]);
    for (jump, says) in [("simulated time 5 s ahead", "jumped forward"), ("simulated time 20 s back", "jumped back")] {
        let s = v[jump]["stop_after_s"].as_f64().unwrap();
        assert!(s <= 0.15 + 0.1, "{jump}: stopped after {s} s");
        assert!(v[jump]["diagnostic"].as_str().unwrap().contains(says), "{jump}: {}", v[jump]);
        assert!(v[jump]["running_after_s"].as_f64().unwrap() < 10.0);
    }
    let ahead = &v["wall clock 5 s ahead"];
    assert!(ahead["stop_after_s"].as_f64().unwrap() <= 0.15 + 0.1, "{ahead}");
    assert!(ahead["diagnostic"].as_str().unwrap().contains("jumped forward"), "{ahead}");
    let back = &v["wall clock back to true time"];
    assert!(back["diagnostic"].as_str().unwrap().contains("jumped back"), "{back}");
    assert!(back["running_after_s"].as_f64().unwrap() < 15.0, "{back}");
}

/// The soak, short (scripts/soak.py; docs/reliability.md has
/// a 10-minute run): eight arms at 1 kHz each over DDS for 60 s after a
/// 30 s warm-up. The node lives, takes every joint state but a few, misses
/// no more cycles than the machine takes from a process keeping the same
/// schedule (plus 1 %), keeps its cycles well inside the 2 ms period, and
/// its memory stays flat.
#[test]
fn eight_arms_at_one_kilohertz_for_a_minute_lose_nothing_and_keep_the_cycle() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // An absolute path: joined to tests/peer, it stays itself.
    let soak = common::repo().join("scripts/soak.py").display().to_string();
    let v = peer_figures(&soak, &["--duration", "60", "--warmup", "30"]);
    let f = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    assert!(f("joint_states_sent") > 8.0 * 1000.0 * 60.0 * 0.9, "the publisher kept its rate: {v}");
    assert!(f("lost_fraction") < 0.01, "joint states lost: {v}");
    // Counted from the end of the warm-up, as ticks the timer's schedule
    // skipped, beside a baseline from the same run: a process keeping the
    // same schedule and doing nothing else (scripts/tick_probe.py). What it
    // skips the machine took (this VM's steal, other processes): 0.6 to
    // 19 % here from run to run, the node's count within a few ticks of it.
    // The node may skip 1 % more of its ticks than the probe did. The
    // harness yields the CPU to the node (nice 10), as controllers on
    // other machines would.
    assert!(f("probe_ticks_after_warmup") > 0.5 * 500.0 * 60.0, "the probe kept its schedule: {v}");
    assert!(f("cycles_after_warmup") > 0.99 * f("probe_ticks_after_warmup"), "the node cycled as the probe: {v}");
    let allowed = f("probe_skipped_after_warmup") + 0.01 * f("cycles_after_warmup");
    assert!(f("missed_cycles_after_warmup") < allowed, "missed cycles (the probe's + 1 %: {allowed}): {v}");
    assert!(f("cycle_p99_us") < 2000.0, "cycle p99 beyond the 2 ms period: {v}");
    // Flat after warm-up (docs/reliability.md: +0.4 MiB in
    // 10 minutes); before every latched writer had a bound, 3.6 MiB a minute.
    assert!(f("rss_growth_kib") < 2.0 * 1024.0, "memory grew by {} KiB in a minute", f("rss_growth_kib"));
}

/// Three default-QoS subscribers join `/arm_left/grant` (tests/peer/grant_join.py):
/// the node drops no sample for them, the reader already there sees no gap
/// beyond the heartbeat, and grants at rest go out at the heartbeat, not
/// every cycle.
#[test]
fn subscribers_joining_a_grant_topic_cost_nobody_a_grant() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let params = common::repo().join("config/workcell_guard.yaml").display().to_string();
    let v = peer_figures("grant_join.py", &["--params", &params]);
    println!("{v}");
    let (before, after) = (v["dropped_before"].as_u64().unwrap(), v["dropped_after"].as_u64().unwrap());
    assert_eq!(after, before, "samples dropped when subscribers joined: {before} -> {after}");
    let gap = v["longest_gap_s"].as_f64().unwrap();
    assert!(gap < 1.5, "the first reader waited {gap} s for a grant");
    let rate = v["grants_per_s_before"].as_f64().unwrap();
    assert!((0.5..=5.0).contains(&rate), "{rate} grants a second at rest: the heartbeat, not every cycle");
    assert!(v["grants_per_s_after"].as_f64().unwrap() >= 0.5, "grants stopped after the join");
}
