//! `calibrate` through the command line, on stops `simulate-stops`
//! records under a braking physics the fit does not know: the fitted
//! bound on other stops, the stopping file the workcell then names, what
//! the guard does with it, the closed loop under that physics, and the
//! errors for recordings it cannot use.

use crate::common;
use common::stopping::{calibrated_left, cli, record, workcell_with};
use std::path::Path;
use workcell_guard_core::guard::{Decision, Guard};
use workcell_guard_description::workcell;
use workcell_guard_ros::bag::BagWriter;
use workcell_guard_ros::msg::{Bool, Header, JointState};

/// (learned cover %, learned median %, constant cover %, constant median %)
/// from calibrate's "held out, fitted joints (N joint stops)" line.
fn held_out_line(stdout: &str) -> (f64, f64, f64, f64) {
    let line = stdout.lines().find(|l| l.starts_with("held out, fitted joints")).expect(stdout);
    let nums: Vec<f64> = line
        .split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
        .filter_map(|w| w.trim_start_matches('+').parse().ok())
        .collect();
    (nums[1], nums[2], nums[3], nums[4])
}

#[test]
fn the_fitted_bound_covers_other_stops_closely_and_the_workcell_takes_it() {
    let dir = tempfile::tempdir().unwrap();
    let (cell_path, model, _) = calibrated_left(dir.path(), 1500);
    // Scored on 1500 stops of another seed, fitted to every stop of the first.
    let train = dir.path().join("train.mcap");
    let test = record(dir.path(), "arm_left", 1500, 4, "test");
    let out = dir.path().join("all.yaml");
    let args = ["calibrate", train.to_str().unwrap(), "--holdout", "0", "--test", test.to_str().unwrap()];
    let (ok, stdout, stderr) = cli(&[&args[..], &["--robot", "arm_left", "--out", out.to_str().unwrap()]].concat());
    assert!(ok, "{stdout}\n{stderr}");
    println!("{stdout}");
    let (cover, median, k_cover, k_median) = held_out_line(&stdout);
    assert!(cover >= 99.9, "learned covers {cover} %:\n{stdout}");
    assert!(median <= 15.0 && median > 0.0, "learned median overestimate {median} %:\n{stdout}");
    assert!(k_median > median, "the best constant deceleration ({k_cover} %, {k_median} %) beats the model:\n{stdout}");
    // The report: a section per joint with its two plots.
    let html = std::fs::read_to_string(out.with_extension("html")).unwrap();
    for j in ["shoulder_pan", "elbow", "wrist_3", "finger_left"] {
        assert!(html.contains(&format!("<section id=\"{j}\">")), "{j}");
    }
    assert_eq!(html.matches("<svg").count(), 2 * 7);
    // The workcell naming the file loads, and `check` says what it holds.
    let cell = workcell::load(&cell_path).unwrap();
    let st = cell.manipulators[0].stopping.as_ref().expect("arm_left has a stopping model");
    assert_eq!(st.joints.iter().flatten().count(), 7);
    assert!(cell.manipulators[1].stopping.is_none());
    let (ok, stdout, stderr) = cli(&["check", cell_path.to_str().unwrap()]);
    assert!(ok && stdout.contains("stopping model: learned for 7 of 7 joints"), "{stdout}\n{stderr}");
    // A hand-broken file is refused by key.
    let text = std::fs::read_to_string(&model).unwrap();
    std::fs::write(&model, text.replacen("quantile:", "quantile: .nan\n    old_quantile:", 1)).unwrap();
    let (ok, _, stderr) = cli(&["check", cell_path.to_str().unwrap()]);
    assert!(!ok && stderr.contains("arm_left.yaml") && stderr.contains("old_quantile"), "{stderr}");
}

/// Feeds arm_left turning its shoulder at `speed` (the other arm still),
/// 2 ms apart, for 0.2 s (still held at start-up: the forecast is made all
/// the same); returns the last decision and the stopping path's horizon.
fn turn(g: &mut Guard, speed: f64) -> (Decision, f64) {
    g.reset();
    let mut last = None;
    for k in 0..100 {
        let t = 10.0 + k as f64 * 0.002;
        let left = vec![1.5 + speed * (t - 10.0), 0.7, 1.1, 0.0, 0.0, 0.0, 0.02];
        let right = vec![-1.5, 1.2, 0.0, -0.3, 0.0, 0.0, 0.0, 0.0];
        last = Some(common::cell::feed(g, &[left, right], t)[0]);
    }
    (last.unwrap(), g.plan(0).unwrap().horizon_s)
}

#[test]
fn the_guard_forecasts_with_the_learned_model_within_its_speeds_and_with_the_configured_figures_beyond() {
    let dir = tempfile::tempdir().unwrap();
    let (cell_path, _, _) = calibrated_left(dir.path(), 1500);
    let learned = workcell::load(&cell_path).unwrap();
    let mut hand = learned.clone();
    hand.manipulators[0].stopping = None;
    let covered = learned.manipulators[0].stopping.as_ref().unwrap().joints[0].as_ref().unwrap().range().1;
    assert!(covered < 1.9, "the recorded stops reach {covered} rad/s: no room below the 2 rad/s limit");
    let guard = |c: &workcell::Workcell| {
        let field = workcell_guard_core::field::DistanceField::from_workcell(c);
        workcell_guard_description::build_guard(c, field, Some(common::cell::cache_dir())).unwrap().0
    };
    let (mut gl, mut gh) = (guard(&learned), guard(&hand));
    // Within the recorded speeds: a shorter stopping path than the
    // configured figures give (the physics is stronger than they say).
    let (_, hl) = turn(&mut gl, 0.6 * covered);
    let (_, hh) = turn(&mut gh, 0.6 * covered);
    assert!(hl < 0.9 * hh, "learned horizon {hl} s, configured {hh} s");
    assert!(gl.beyond_stopping_model(0).is_none());
    // Beyond them: the configured figures, and the guard says which joint.
    let fast = 0.5 * (covered + 2.0);
    let (_, hl) = turn(&mut gl, fast);
    let (_, hh) = turn(&mut gh, fast);
    let b = gl.beyond_stopping_model(0).expect("beyond the recorded stops");
    assert_eq!(b.joint, 0);
    assert!((b.speed as f64 - fast).abs() < 0.05 && (b.covered as f64 - covered).abs() < 1e-5, "{b:?}");
    assert!(hl >= hh - 0.005, "beyond: learned horizon {hl} s against the configured {hh} s");
    assert!(gh.beyond_stopping_model(0).is_none());
}

#[test]
fn under_the_unknown_physics_the_closed_loop_with_the_learned_model_has_no_contact() {
    use workcell_guard_sim::arms::{self as sim, PlanMode, Sim, SimOptions};
    let dir = tempfile::tempdir().unwrap();
    let (cell_path, _, _) = calibrated_left(dir.path(), 1500);
    let right = record(dir.path(), "arm_right", 1500, 5, "right");
    let right_model = dir.path().join("stopping/arm_right.yaml");
    let (ok, stdout, stderr) =
        cli(&["calibrate", right.to_str().unwrap(), "--robot", "arm_right", "--out", right_model.to_str().unwrap()]);
    assert!(ok, "{stdout}\n{stderr}");
    let left_model = dir.path().join("stopping/arm_left.yaml");
    std::fs::write(&cell_path, workcell_with(&[("arm_left", &left_model), ("arm_right", &right_model)])).unwrap();
    let cell = sim::cell_with_arms(&workcell::load(&cell_path).unwrap(), 4);
    let opts = SimOptions { physics: true, plans: PlanMode::Never, ..SimOptions::default() };
    let sims = (0..2).map(|_| Sim::new(cell.clone(), opts, Some(common::cell::cache_dir())).unwrap()).collect();
    let rep = sim::run_episodes(sims, 1, 24, false);
    println!("{}", rep.summary(4, opts.dt_s));
    assert_eq!(rep.contacts(), 0, "{}", rep.summary(4, opts.dt_s));
    assert!(rep.stops > 0, "no stop at all: the episodes test nothing");
}

/// A recording of 60 simulated stops of arm_left: every `every`-th joint
/// state, named `names`, and its stop flag where `stops` says.
fn write_bag(path: &Path, names: &[&str], every: usize, stops: bool) {
    let cell = common::cell::sample_cell();
    let m = &cell.manipulators[0];
    let physics = workcell_guard_sim::braking::BrakePhysics::for_manipulator(m);
    let log = workcell_guard_sim::stops::record_stops(m, &physics, 60, 9, 1.7e9);
    let mut bag = BagWriter::create(path).unwrap();
    let ns = |t: f64| (t * 1e9) as u64;
    let dof = m.robot.dof();
    for (k, &t) in log.stamps.iter().enumerate().step_by(every) {
        let msg = JointState {
            header: Header { stamp: workcell_guard_ros::convert::to_time(t).unwrap(), frame_id: String::new() },
            name: names.iter().map(|s| s.to_string()).collect(),
            position: log.positions[k * dof..(k + 1) * dof].to_vec(),
            ..JointState::default()
        };
        bag.write("/arm_left/joint_states", ns(t), &msg).unwrap();
    }
    if stops {
        for &(tc, release) in &log.commands {
            bag.write("/arm_left/stop", ns(tc), &Bool { data: true }).unwrap();
            bag.write("/arm_left/stop", ns(release), &Bool { data: false }).unwrap();
        }
    }
    bag.finish().unwrap();
}

#[test]
fn recordings_calibrate_cannot_use_are_refused_with_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).display().to_string();
    let names = ["shoulder_pan", "shoulder_lift", "elbow", "wrist_1", "wrist_2", "wrist_3", "finger_left"];
    let calibrate = |file: &str, robot: &str| {
        let out = d("out.yaml");
        cli(&["calibrate", file, "--robot", robot, "--workcell", "config/workcell.yaml", "--out", &out])
    };
    let expect = |(ok, stdout, stderr): (bool, String, String), needles: &[&str]| {
        assert!(!ok, "accepted:\n{stdout}");
        for n in needles {
            assert!(stderr.contains(n), "`{n}` not in:\n{stderr}");
        }
    };
    // Joint states, no stop.
    write_bag(&dir.path().join("no_stops.mcap"), &names, 1, false);
    expect(calibrate(&d("no_stops.mcap"), "arm_left"), &["no stops of `arm_left`", "/arm_left/stop"]);
    // Joint states at 25 Hz: no stop can be measured.
    write_bag(&dir.path().join("sparse.mcap"), &names, 20, true);
    expect(
        calibrate(&d("sparse.mcap"), "arm_left"),
        &["60 stops of `arm_left`, none measurable", "60 with fewer than 5 joint states", "every 40.0 ms"],
    );
    // Too few stops for a fit: not an error; every joint keeps its
    // configured figures, named with what a fit would need.
    write_bag(&dir.path().join("few.mcap"), &names, 1, true);
    let (ok, stdout, stderr) = calibrate(&d("few.mcap"), "arm_left");
    assert!(ok, "{stdout}\n{stderr}");
    for needle in [
        "60 stops found in 1 recording(s): stop flag 60",
        "kept at its configured figures: shoulder_pan: ",
        " stops with it moving in the fit; 100 are needed: ",
        "no joint could be fitted",
    ] {
        assert!(stdout.contains(needle), "`{needle}` not in:\n{stdout}");
    }
    // Another robot's joint names.
    let wrong = ["j1", "j2", "j3", "j4", "j5", "j6", "j7"];
    write_bag(&dir.path().join("wrong.mcap"), &wrong, 1, true);
    expect(calibrate(&d("wrong.mcap"), "arm_left"), &["joint state 0 on /arm_left/joint_states", "j1"]);
    // No such robot; the robot's topic silent.
    expect(calibrate(&d("few.mcap"), "arm_x"), &["no manipulator `arm_x`", "arm_left, arm_right"]);
    expect(calibrate(&d("few.mcap"), "arm_right"), &["no joint states of `arm_right` on /arm_right/joint_states"]);
    // Not a recording; a cut one.
    expect(calibrate("config/workcell.yaml", "arm_left"), &["not a readable MCAP file"]);
    let bytes = std::fs::read(dir.path().join("few.mcap")).unwrap();
    std::fs::write(dir.path().join("cut.mcap"), &bytes[..bytes.len() / 2]).unwrap();
    expect(calibrate(&d("cut.mcap"), "arm_left"), &["cut.mcap", "not a readable MCAP file after"]);
    // Options out of range.
    let (ok, _, stderr) = cli(&["calibrate", &d("few.mcap"), "--robot", "arm_left", "--holdout", "1.5"]);
    assert!(!ok && stderr.contains("--holdout = 1.5"), "{stderr}");
}
