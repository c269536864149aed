//! A sample cell whose `arm_left` has a stopping model fitted by the real
//! command line: `simulate-stops` records its stops under a braking
//! physics the guard does not know, `calibrate` fits them.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs the built binary with `args` in the repository: (success, stdout, stderr).
pub fn cli(args: &[&str]) -> (bool, String, String) {
    let out =
        Command::new(env!("CARGO_BIN_EXE_workcell_guard")).args(args).current_dir(super::repo()).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

/// Records `stops` stops of `robot` with `seed` into `dir/<name>.mcap`.
pub fn record(dir: &Path, robot: &str, stops: usize, seed: u64, name: &str) -> PathBuf {
    let out = dir.join(format!("{name}.mcap"));
    let (ok, stdout, stderr) = cli(&[
        "simulate-stops",
        "config/workcell.yaml",
        "--robot",
        robot,
        "--stops",
        &stops.to_string(),
        "--seed",
        &seed.to_string(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{stdout}\n{stderr}");
    out
}

/// The sample workcell's text with every path absolute (so that a copy
/// anywhere loads), and `stopping: {file: …}` added to the manipulators
/// named in `models`.
pub fn workcell_with(models: &[(&str, &Path)]) -> String {
    let repo = super::repo();
    let r = repo.display();
    let text = std::fs::read_to_string(repo.join("config/workcell.yaml")).unwrap();
    let text = text
        .replace("package://workcell_guard/", &format!("{r}/"))
        .replace("urdf: ../urdf/", &format!("urdf: {r}/urdf/"))
        .replace("file: spheres/", &format!("file: {r}/config/spheres/"));
    let mut out = String::new();
    let mut robot = String::new();
    for line in text.lines() {
        out.push_str(line);
        out.push('\n');
        if let Some(n) = line.trim().strip_prefix("- name: ") {
            robot = n.trim().to_string();
        }
        if line.trim_start().starts_with("reaction_time_s:")
            && let Some((_, f)) = models.iter().find(|(n, _)| *n == robot)
        {
            let indent = &line[..line.len() - line.trim_start().len()];
            out.push_str(&format!("{indent}stopping: {{file: {}}}\n", f.display()));
        }
    }
    out
}

/// `arm_left` calibrated on `stops` stops (seed 3) in `dir`: the workcell
/// that names its stopping file, the file, and what `calibrate` printed.
pub fn calibrated_left(dir: &Path, stops: usize) -> (PathBuf, PathBuf, String) {
    let rec = record(dir, "arm_left", stops, 3, "train");
    let model = dir.join("stopping/arm_left.yaml");
    let (ok, stdout, stderr) =
        cli(&["calibrate", rec.to_str().unwrap(), "--robot", "arm_left", "--out", model.to_str().unwrap()]);
    assert!(ok, "{stdout}\n{stderr}");
    let cell = dir.join("calibrated.yaml");
    std::fs::write(&cell, workcell_with(&[("arm_left", &model)])).unwrap();
    (cell, model, stdout)
}
