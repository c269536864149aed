//! `calibrate` on recordings it did not make: arm_right's stops as an
//! independent rosbag2 writer leaves them (tests/peer/stop_recording.py,
//! `mcap-ros2-support`), under a braking physics of its own, at 100, 250,
//! 500 and 1000 Hz with jitter, positions only, stopped by the flag, the
//! speed scaling and controller holds, with a slow gripper, early
//! releases and drift at rest. Every joint that can be fitted is, the
//! gripper keeps its configured figures by name, every stop is accounted
//! for, and the held-out stops are covered.

use crate::common;
use common::stopping::{cli, workcell_with};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Writes `stops` stops at `rate` Hz with `seed` to `dir/<rate>.mcap`;
/// the writer's own count of stops per source.
fn write(dir: &Path, rate: u32, stops: usize, seed: u64) -> (PathBuf, serde_json::Value) {
    let out = dir.join(format!("{rate}.mcap"));
    let script = common::repo().join("tests/peer/stop_recording.py");
    let args = [out.display().to_string(), "--rate".into(), rate.to_string(), "--stops".into(), stops.to_string()];
    let run = Command::new("python3").arg(&script).args(args).args(["--seed", &seed.to_string()]).output().unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    (out, serde_json::from_slice(&run.stdout).unwrap())
}

/// The numbers in `line`, in order.
fn numbers(line: &str) -> Vec<f64> {
    line.split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
        .filter_map(|w| w.trim_start_matches('+').trim_end_matches('.').parse().ok())
        .collect()
}

/// The line of `stdout` that starts with `prefix` (after indentation).
fn line<'a>(stdout: &'a str, prefix: &str) -> &'a str {
    stdout.lines().find(|l| l.trim_start().starts_with(prefix)).unwrap_or_else(|| panic!("no `{prefix}` in:\n{stdout}"))
}

#[test]
fn recordings_of_another_writer_fit_every_joint_they_can_name_the_gripper_and_account_for_every_stop() {
    let dir = tempfile::tempdir().unwrap();
    let runs: Vec<(PathBuf, serde_json::Value)> = [(100, 11), (250, 12), (500, 13), (1000, 14)]
        .iter()
        .map(|&(hz, seed)| write(dir.path(), hz, 250, seed))
        .collect();
    let out = dir.path().join("stopping/arm_right.yaml");
    let mut args: Vec<String> = vec!["calibrate".into()];
    args.extend(runs.iter().map(|(p, _)| p.display().to_string()));
    args.extend(["--robot", "arm_right", "--workcell", "config/workcell.yaml", "--out"].map(String::from));
    args.push(out.display().to_string());
    let (ok, stdout, stderr) = cli(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(ok, "{stdout}\n{stderr}");
    println!("{stdout}");

    // Every stop found, by where it came from, as the writer wrote them.
    let sum = |k: &str| runs.iter().map(|(_, v)| v["sources"][k].as_u64().unwrap() as f64).sum::<f64>();
    let found = numbers(line(&stdout, "1000 stops found in 4 recording(s)"));
    assert_eq!(found[2..], [sum("flag"), sum("scaling"), sum("hold")], "{stdout}");
    // Every stop accounted for: used or dropped, and per joint every
    // moving one used or dropped by reason.
    let used = numbers(line(&stdout, "used "))[0];
    let dropped = numbers(line(&stdout, "dropped "));
    assert_eq!(used + dropped[0], 1000.0, "{stdout}");
    assert_eq!(dropped[0], dropped[1] + dropped[3] + dropped[4], "{stdout}");
    let mut released = 0.0;
    for name in ["j1", "j2", "j3", "j4", "j5", "j6", "j7", "finger_a_joint"] {
        let row = numbers(line(&stdout, &format!("{name} ")).trim_start().trim_start_matches(name));
        let (moving, used) = (row[1], row[2]);
        assert_eq!(moving, used + row[3..].iter().sum::<f64>(), "{name}: {stdout}");
        assert!(used >= 0.75 * 1000.0 && moving >= 0.95 * 1000.0, "{name}: {row:?}\n{stdout}");
        released += row[3];
    }
    // Early releases drop the slower joints from their stops alone.
    let early: f64 = runs.iter().map(|(_, v)| v["early"].as_f64().unwrap()).sum();
    assert!(
        released > early && used > 1000.0 - 0.5 * early,
        "{released} joint stops released early, {used} used\n{stdout}"
    );

    // The fit: held out, covered and close, beside the best constant
    // deceleration and the configured figures.
    let fitted = numbers(line(&stdout, "held out, fitted joints"));
    let (cover, median, k_median) = (fitted[1], fitted[2], fitted[4]);
    assert!(cover >= 99.9 && median > 0.0 && median <= 15.0, "learned {cover} % / {median} %\n{stdout}");
    assert!(k_median > median, "the best constant deceleration's median {k_median} % beats the model's\n{stdout}");
    let every = numbers(line(&stdout, "held out, every joint as the guard will forecast it"));
    assert!(every[1] >= 99.9, "{stdout}");
    // The gripper kept at its configured figures, with what it would need.
    let kept = line(&stdout, "kept at its configured figures: finger_a_joint: its stops cover 0.01");
    assert!(kept.contains("m/s or faster are needed"), "{kept}");
    assert_eq!(stdout.matches("kept at its configured figures").count(), 1, "{stdout}");

    // The file holds the seven fitted joints; the workcell takes it.
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("j7:") && !text.contains("finger_a_joint"), "{text}");
    let cell = dir.path().join("cell.yaml");
    std::fs::write(&cell, workcell_with(&[("arm_right", &out)])).unwrap();
    let (ok, stdout, stderr) = cli(&["check", cell.to_str().unwrap()]);
    assert!(ok && stdout.contains("stopping model: learned for 7 of 8 joints"), "{stdout}\n{stderr}");
    // The report says the same.
    let html = std::fs::read_to_string(out.with_extension("html")).unwrap();
    for needle in
        ["id=\"stops\"", "id=\"kept\"", "released before rest", "controller hold", "finger_a_joint: its stops"]
    {
        assert!(html.contains(needle), "{needle} not in the report");
    }
}
