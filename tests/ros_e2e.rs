//! End to end over real DDS: the node (dds transport) and an independent
//! peer, the Eclipse Cyclone DDS Python binding with ROS 2 type names and
//! XCDR1 (tests/peer/e2e.py), inside a network namespace of their own
//! (`unshare -n`, only loopback up) and both configured for loopback only.
//!
//! The peer plays the joint states of the sample cell's two arms turning
//! towards each other, each arm decelerating at its configured maximum as
//! soon as its stop topic says so, then parting; it reads diagnostics and
//! markers, sets parameters through the parameter services, and sends bad
//! messages. It logs every configuration it published; this test then
//! checks, with exact geometry (parry3d) independent of the spheres, that
//! the arms never touched, and that they would have without the stops.
//!
//! A second run plays planned trajectories (`--scenario plans`): the right
//! arm follows plans it published towards the standing left arm, ones ending
//! 5 cm and 2 cm short (not stopped; the 2 cm one's motion without the plan
//! is: its reaction-time travel reaches into the margin), one that
//! would meet it (stopped, exact gaps positive); last, it is pushed to the
//! clearance margin and given a plan away: it escapes (released within the
//! hold time, before it moves, and never closer).
//!
//! Last, a stopping model `calibrate` fitted (tests/peer/stopping.py): the
//! node's diagnostics say the arm forecasts with it, and warn, naming the
//! joint, while it turns faster than any recorded stop.

mod common;

use std::process::Command;
use workcell_guard_core::model::SpherePoser;
use workcell_guard_core::model::exact::{self, LinkShape};
use workcell_guard_description::workcell::{self, Workcell};

struct Arms {
    posers: Vec<SpherePoser>,
    shapes: Vec<Vec<Option<LinkShape>>>,
}

impl Arms {
    fn new(cell: &Workcell) -> Arms {
        Arms {
            posers: cell.manipulators.iter().map(|m| SpherePoser::new(&m.robot, &m.spheres, m.base)).collect(),
            shapes: cell
                .manipulators
                .iter()
                .map(|m| m.robot.links.iter().map(|l| exact::link_shape(&l.collisions).unwrap()).collect())
                .collect(),
        }
    }

    /// Least exact distance between arm 0 at `qa` and arm 1 at `qb`, m.
    fn gap(&self, qa: &[f64], qb: &[f64]) -> f64 {
        let mut pa = self.posers[0].posed();
        let mut pb = self.posers[1].posed();
        self.posers[0].pose(qa, &mut pa).unwrap();
        self.posers[1].pose(qb, &mut pb).unwrap();
        let mut best = f64::INFINITY;
        for (la, sa) in self.shapes[0].iter().enumerate() {
            let Some(sa) = sa else { continue };
            for (lb, sb) in self.shapes[1].iter().enumerate() {
                let Some(sb) = sb else { continue };
                if let Some(d) = exact::distance(sa, &pa.frames[la], sb, &pb.frames[lb]) {
                    best = best.min(d);
                }
            }
        }
        best
    }
}

fn q_left(pan: f64) -> Vec<f64> {
    vec![pan, 0.7, 1.1, 0.0, 0.0, 0.0, 0.02]
}
fn q_right(j1: f64) -> Vec<f64> {
    vec![j1, 1.2, 0.0, -0.3, 0.0, 0.0, 0.0, 0.0]
}

/// Runs `script` with `python3` inside a new network namespace with only
/// loopback up. Refuses to run it any other way.
fn in_netns(script: &str, args: &[String]) -> std::process::Output {
    let argv: Vec<String> = ["python3", script].into_iter().map(String::from).chain(args.iter().cloned()).collect();
    common::in_own_netns(&argv)
}

/// Runs peer `script` (in tests/peer, with the node, the parameter file,
/// an output file and `extra` arguments) against the node in a network
/// namespace of their own; asserts it succeeded and returns its log.
fn run_script(script: &str, extra: &[String]) -> serde_json::Value {
    let repo = common::repo();
    let log = tempfile::NamedTempFile::new().unwrap();
    let mut args = vec![
        "--node".to_string(),
        env!("CARGO_BIN_EXE_workcell_guard").to_string(),
        "--params".to_string(),
        repo.join("config/workcell_guard.yaml").display().to_string(),
        "--out".to_string(),
        log.path().display().to_string(),
    ];
    args.extend_from_slice(extra);
    let out = in_netns(&repo.join("tests/peer").join(script).display().to_string(), &args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(out.status.success(), "peer failed ({}):\n{stdout}\n{stderr}", out.status);
    serde_json::from_str(&std::fs::read_to_string(log.path()).unwrap()).unwrap()
}

/// Runs tests/peer/e2e.py with `extra` arguments ([`run_script`]): its
/// log holds phases and every published configuration.
fn run_peer(extra: &[String]) -> serde_json::Value {
    run_script("e2e.py", extra)
}

#[test]
fn two_arms_over_dds_stop_before_contact_and_take_parameters() {
    let repo = common::repo();
    let v = run_peer(&[]);
    let cell = workcell::load(&repo.join("config/workcell.yaml")).unwrap();
    let arms = Arms::new(&cell);
    let samples = v["samples"].as_array().unwrap();
    assert!(samples.len() > 500, "only {} samples", samples.len());
    let q = |x: &serde_json::Value| -> Vec<f64> { x.as_array().unwrap().iter().map(|a| a.as_f64().unwrap()).collect() };
    let mut least = f64::INFINITY;
    for s in samples.iter().step_by(2) {
        least = least.min(arms.gap(&q(&s[1]), &q(&s[2])));
    }
    let rest = q(&v["phases"]["rest_pans"]);
    let at_rest = arms.gap(&q_left(rest[0]), &q_right(rest[1]));
    // Had they gone on, they would have met: the commanded motion ends with
    // both turned to face each other.
    let continued = arms.gap(&q_left(0.0), &q_right(0.0));
    println!("least gap over the run {least:.4} m; at rest {at_rest:.4} m; if continued {continued:.4} m");
    assert_eq!(continued, 0.0, "the scenario must lead to contact without the guard");
    assert!(least > 0.0, "the arms touched (least exact gap {least} m)");
    assert!(at_rest < 0.25, "stopped needlessly early: {at_rest} m apart at rest");
}

/// The right arm's `j1` where its exact gap to the left arm (at `left`)
/// first falls to `gap`, turning from −1.5 rad towards it.
fn reach(arms: &Arms, left: f64, gap: f64) -> f64 {
    let d = |j: f64| arms.gap(&q_left(left), &q_right(j)) - gap;
    let (mut lo, mut j) = (-1.5, -1.5);
    while d(j) > 0.0 {
        lo = j;
        j += 0.01;
        assert!(j < 1.5, "the arms never come within {gap} m");
    }
    let mut hi = j;
    for _ in 0..40 {
        let mid = 0.5 * (lo + hi);
        if d(mid) > 0.0 { lo = mid } else { hi = mid }
    }
    lo
}

#[test]
fn over_dds_a_plan_ending_short_is_not_stopped_leaving_it_or_meeting_the_other_arm_is_and_one_away_escapes() {
    let repo = common::repo();
    let cell = workcell::load(&repo.join("config/workcell.yaml")).unwrap();
    let arms = Arms::new(&cell);
    let left = 0.3;
    let contact = reach(&arms, left, 0.0);
    let short = reach(&arms, left, 0.05);
    let near = reach(&arms, left, 0.02);
    let meet = contact + 0.3;
    // Within the clearance margin (10 mm) by the links' shapes too, which
    // the guard refines by.
    let margin_at = reach(&arms, left, 0.008);
    println!(
        "left pan {left}; right j1: 5 cm short at {short:.4}, contact at {contact:.4}, plan to {meet:.4}, 8 mm at {margin_at:.4}"
    );
    let mut extra: Vec<String> = vec!["--scenario".into(), "plans".into()];
    for (k, v) in
        [("--left-pan", left), ("--short", short), ("--near", near), ("--meet", meet), ("--margin-at", margin_at)]
    {
        extra.push(k.into());
        extra.push(format!("{v}"));
    }
    let v = run_peer(&extra);
    let samples = v["samples"].as_array().unwrap();
    let q = |x: &serde_json::Value| -> Vec<f64> { x.as_array().unwrap().iter().map(|a| a.as_f64().unwrap()).collect() };
    let least_in = |phase: &str| {
        let r = v["phases"][phase]["samples"].as_array().unwrap();
        let (a, b) = (r[0].as_u64().unwrap() as usize, r[1].as_u64().unwrap() as usize);
        samples[a..b].iter().map(|s| arms.gap(&q(&s[1]), &q(&s[2]))).fold(f64::INFINITY, f64::min)
    };
    let (on_short, on_left, on_meet) = (least_in("short"), least_in("left_plan"), least_in("meet"));
    let (on_near, near_unplanned) = (least_in("near"), least_in("near_unplanned"));
    println!("least exact gap: plan ending nearer {on_near:.4} m; the same motion unplanned {near_unplanned:.4} m");
    assert!((on_near - 0.02).abs() < 0.002, "the nearer plan's arm came to {on_near} m, not 2 cm");
    // Stopped by extrapolation alone: at rest before the plan's end, apart.
    assert!(near_unplanned > on_near + 0.002, "the unplanned motion was not stopped short: {near_unplanned} m");
    println!(
        "least exact gap: plan ending short {on_short:.4} m, the same plan left where it brakes {on_left:.4} m, \
         plan meeting {on_meet:.4} m"
    );
    assert!((on_short - 0.05).abs() < 0.002, "the short plan's arm came to {on_short} m, not 5 cm");
    assert!(on_meet > 0.0, "the arms touched on the meeting plan (least exact gap {on_meet} m)");
    assert!(on_left > 0.0, "the arms touched when the plan was left (least exact gap {on_left} m)");
    // Stopped at the margin, given a plan away: released within the hold
    // time, and never let closer than where it stood.
    let (on_escape, at_margin) = (least_in("escape"), arms.gap(&q_left(left), &q_right(margin_at)));
    let released = v["phases"]["escape"]["released_after_s"].as_f64().unwrap();
    println!(
        "escape: released {released:.3} s after its plan away; least exact gap {on_escape:.4} m from {at_margin:.4} m"
    );
    assert!(released <= cell.guard.release_hold_s, "released after {released} s, beyond release_hold_s");
    assert!(on_escape >= at_margin - 1e-4, "let closer while escaping: {on_escape} m from {at_margin} m");
}

/// A cell of platen units and no manipulator (config/platen_cell.yaml)
/// runs as a node: over DDS, from a separate process, a unit slides past
/// another's diagonal cord with 3 mm to spare and is granted the whole
/// move; asked into the cord it is granted part of the way, the corded
/// unit named (tests/peer/platen_cell.py).
#[test]
fn a_cell_of_platen_units_alone_grants_a_slide_past_a_diagonal_cord_over_dds() {
    let workcell = common::repo().join("config/platen_cell.yaml").display().to_string();
    let v = run_script("platen_cell.py", &["--workcell".to_string(), workcell]);
    let answers = v["answers"].as_array().unwrap();
    assert_eq!(answers.len(), 2, "{answers:?}");
    assert_eq!(answers[0]["result"], 0, "{answers:?}");
    assert_eq!(answers[1]["result"], 1, "{answers:?}");
    assert_eq!(answers[1]["blocker"], "corded");
}

/// Two platen units whose paths cross at the surface's middle
/// (config/platen_crossing.yaml), over DDS from a separate process: each
/// asks for its path on `<unit>/path_request` and moves only as far as its
/// `<unit>/grant` allows; both reach their ends, never overlapping,
/// `east_west` (priority 2) first, `north_south` holding for it; bad
/// requests are refused with their reasons (tests/peer/platen_paths.py).
#[test]
fn platen_units_on_crossing_paths_take_turns_by_their_grants_over_dds() {
    let workcell = common::repo().join("config/platen_crossing.yaml").display().to_string();
    let v = run_script("platen_paths.py", &["--workcell".to_string(), workcell]);
    let answers = v["answers"].as_array().unwrap();
    let of = |u: &str| answers.iter().filter(|a| a["unit"] == u && a["request_id"] == 1).collect::<Vec<_>>();
    let (ew, ns) = (of("east_west"), of("north_south"));
    println!("east_west: {} answers, north_south: {} answers; least gap {} m", ew.len(), ns.len(), v["least_gap_m"]);
    assert!(ew.len() >= 3 && ns.len() >= 3, "granted increment by increment: {answers:?}");
    assert!(ns.iter().any(|a| a["blocker"] == "east_west"), "north_south never waited for east_west: {ns:?}");
    assert!(!ew.iter().any(|a| a["blocker"] == "north_south" && a["reason"].as_str().unwrap_or("").contains("back")));
    let (t_ew, t_ns) = (v["arrived_s"]["east_west"].as_f64().unwrap(), v["arrived_s"]["north_south"].as_f64().unwrap());
    assert!(t_ew < t_ns, "the higher priority arrives first: {t_ew} s vs {t_ns} s");
    assert!(v["least_gap_m"].as_f64().unwrap() > 0.0);
}

/// Two arms with crossing plans, over DDS from a separate process: each
/// moves only as far as its `<robot>/grant` allows and no faster than its
/// `<robot>/speed_scaling` says; both finish, arm_left (priority 20) first,
/// arm_right yielding to it, and they never touch (exact geometry over
/// every published configuration). arm_left, on the increments granted
/// to it, is never stopped or slowed by the other; arm_right is slowed
/// along its path to where its grant ends, its stop flag never flipping
/// (set at most once, for a hold, and released once). `~/set_priority`
/// answers, and refuses an unknown robot (tests/peer/arbitration.py).
#[test]
fn two_arms_with_crossing_plans_take_turns_by_their_grants_over_dds() {
    let v = run_script("arbitration.py", &["--obey-scaling".to_string()]);
    // Each change of a flag or a scaling: [seconds since the plans, value].
    let changes = |key: &str, arm: usize| -> Vec<(f64, f64)> {
        let rows = v[key][0][arm].as_array().unwrap();
        rows.iter()
            .map(|r| (r[0].as_f64().unwrap(), r[1].as_f64().unwrap_or_else(|| f64::from(u8::from(r[1] == true)))))
            .collect()
    };
    let (left_stops, right_stops) = (changes("stop_changes", 0), changes("stop_changes", 1));
    let (left_scaling, right_scaling) = (changes("scaling_changes", 0), changes("scaling_changes", 1));
    let least = |c: &[(f64, f64)]| c.iter().map(|r| r.1).fold(f64::INFINITY, f64::min);
    println!(
        "arm_left: stop flag {left_stops:?}, least scaling {:.3}; arm_right: stop flag {right_stops:?}, least scaling \
         {:.3} ({} changes)",
        least(&left_scaling),
        least(&right_scaling),
        right_scaling.len()
    );
    assert!(
        left_stops.iter().all(|r| r.1 == 0.0),
        "the higher arm was stopped: {left_stops:?}; the node: {}",
        v["node_stops"]
    );
    assert_eq!(least(&left_scaling), 1.0, "the higher arm was slowed: {left_scaling:?}");
    let raised = right_stops.iter().filter(|r| r.1 == 1.0).count();
    assert!(raised <= 1, "the lower arm's stop flag flipped ({raised} times set): {right_stops:?}");
    assert!(least(&right_scaling) < 1.0, "the lower arm was never slowed for the higher one: {right_scaling:?}");
    let (arms, least) = least_exact_gap(&v);
    // Unguarded, at the same plan time, they meet.
    let met = (0..=100).map(|k| k as f64 * 0.02).map(|s| {
        let u = (s / 2.0_f64).min(1.0);
        let e = u * u * (3.0 - 2.0 * u);
        arms.gap(&q_left(1.5 - 3.0 * e), &q_right(-1.5 + 3.0 * e))
    });
    let unguarded = met.fold(f64::INFINITY, f64::min);
    println!("finished at {} s; least exact gap {least:.4} m; unguarded {unguarded:.4} m", v["finished"]);
    assert_eq!(unguarded, 0.0, "the scenario must lead to contact without arbitration");
    assert!(least > 0.0, "the arms touched (least exact gap {least} m)");
}

/// The arms of the sample cell, and the least exact distance between
/// them over the configurations a peer published (its log's `samples`).
fn least_exact_gap(v: &serde_json::Value) -> (Arms, f64) {
    let arms = Arms::new(&workcell::load(&common::repo().join("config/workcell.yaml")).unwrap());
    let q = |x: &serde_json::Value| -> Vec<f64> { x.as_array().unwrap().iter().map(|a| a.as_f64().unwrap()).collect() };
    let samples = v["samples"].as_array().unwrap();
    let least = samples.iter().map(|s| arms.gap(&q(&s[1]), &q(&s[2]))).fold(f64::INFINITY, f64::min);
    (arms, least)
}

/// arm_right (priority 10) sets off across the front; 0.6 s later,
/// while it crosses, arm_left (20) is given its plan the other way
/// (tests/peer/arbitration.py --late). Too near to stop short of arm_left's
/// first increment, arm_right goes on, never stopped nor sent back;
/// arm_left, at its plan's start, gives way and says so in its grant's
/// reason (`give_way_when_caught`); both finish, arm_right first, apart.
#[test]
fn a_higher_arm_given_its_plan_while_a_lower_one_crosses_lets_it_pass_over_dds() {
    let v = run_script("arbitration.py", &["--obey-scaling".to_string(), "--late".to_string(), "0.6".to_string()]);
    let rows = |arm: usize| v["grant_changes"][0][arm].as_array().unwrap().clone();
    let reasons: Vec<String> = rows(0).iter().map(|r| r[6].as_str().unwrap().to_string()).collect();
    println!(
        "arm_left's grants: {reasons:?}; arm_right's stop flag: {}, its speed scaling: {}",
        v["stop_changes"][0][1], v["scaling_changes"][0][1]
    );
    assert!(reasons.iter().any(|r| r.contains("give_way_when_caught")), "arm_left never gave way: {reasons:?}");
    assert!(rows(1).iter().all(|r| r[1] != 2), "arm_right was sent back: {:?}", rows(1));
    let right_stops = v["stop_changes"][0][1].as_array().unwrap();
    assert!(right_stops.iter().all(|r| r[1] == false), "arm_right was stopped: {right_stops:?}; {}", v["node_stops"]);
    let (_, least) = least_exact_gap(&v);
    assert!(least > 0.0, "the arms touched (least exact gap {least} m)");
}

/// Every message of the bag at `path` decoded by the independent reader
/// (tests/peer/bag_tool.py): profile, counts per topic and type, values.
fn read_bag(path: &std::path::Path) -> serde_json::Value {
    let out_file = path.with_extension("json");
    let out = Command::new("python3")
        .arg(common::repo().join("tests/peer/bag_tool.py"))
        .args(["read", &path.display().to_string(), &out_file.display().to_string()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_str(&std::fs::read_to_string(&out_file).unwrap()).unwrap()
}

/// Runs the built binary with `args`: (success, stdout, stderr).
fn cli(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_workcell_guard")).args(args).output().expect("the binary runs");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

/// The node records itself (`record_file`) while two arms over DDS take
/// turns by their grants (tests/peer/arbitration.py): the recording is a
/// rosbag2 MCAP that an independent reader (`mcap-ros2-support`) decodes
/// whole, with the holds and the finished plans in it, and `replay` runs
/// its inputs through the guard offline to exactly the decisions the node
/// published live. `workcell_guard record`, run beside them, records the
/// same topics from the wire into a bag the same reader decodes and
/// replay cycles at the stamps of its grants. A
/// truncated copy and a file that is no MCAP are refused with what was
/// read.
#[test]
fn the_node_records_itself_and_its_recording_replays_to_the_same_decisions() {
    let repo = common::repo();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("arbitration.mcap");
    let arg = format!("record_file:={}", file.display());
    // Beside it, `workcell_guard record` (a participant of its own) records the same cell from the wire.
    let live = dir.path().join("live.mcap");
    let cell = repo.join("config/workcell.yaml").display().to_string();
    let mut args = vec!["--node-arg=-p".to_string(), format!("--node-arg={arg}")];
    for w in [env!("CARGO_BIN_EXE_workcell_guard"), "record", "--workcell", &cell, "--out", &live.display().to_string()]
    {
        args.push(format!("--alongside={w}"));
    }
    let v = run_script("arbitration.py", &args);
    // These executors go at their plans' pace wherever their grants let
    // them (no speed-scaling input): arm_right is held where its grant
    // ends, and let go only once the grant lets it go at full speed again,
    // a few times as arm_left passes (let go as soon as the grant reached
    // past its noise, it was held and let go eight or nine times).
    let holds = v["stop_changes"][0][1].as_array().unwrap().iter().filter(|r| r[1] == true).count();
    println!("arm_right held {holds} times");
    assert!((1..=4).contains(&holds), "arm_right held {holds} times: {}", v["stop_changes"][0][1]);

    // The node's own recording and the one from the wire: both decoded by
    // the independent reader, with both arms' states, plans and grants, the
    // hold and the finished plans in them.
    for bag in [&file, &live] {
        let v = read_bag(bag);
        assert_eq!(v["profile"], "ros2");
        let count = |key: &str| v["counts"][key].as_u64().unwrap_or(0);
        for arm in ["arm_left", "arm_right"] {
            assert!(count(&format!("/{arm}/joint_states sensor_msgs/msg/JointState ros2msg cdr")) > 100, "{v}");
            // Grants go out on change and at the heartbeat, not every cycle.
            assert!(count(&format!("/{arm}/grant workcell_guard_msgs/msg/ManipulatorGrant ros2msg cdr")) >= 10, "{v}");
            assert_eq!(count(&format!("/{arm}/planned_trajectory trajectory_msgs/msg/JointTrajectory ros2msg cdr")), 1);
            let states = v["grants"][format!("/{arm}/grant")].as_array().unwrap();
            assert_eq!(states.last().unwrap(), 3, "{arm}'s last grant is DONE");
        }
        let right = v["grants"]["/arm_right/grant"].as_array().unwrap();
        assert!(right.iter().any(|s| s == 1), "arm_right was held (HOLD) while arm_left passed");
    }
    // The recording from the wire replays, cycled at the stamps of its grants.
    let params = repo.join("config/workcell_guard.yaml").display().to_string();
    let (ok, stdout, stderr) = cli(&[
        "replay",
        &live.display().to_string(),
        "--quiet",
        "--workcell",
        &cell,
        "--ros-args",
        "--params-file",
        &params,
    ]);
    assert!(ok && stdout.contains("cycles at the recorded grants' stamps"), "{stdout}\n{stderr}");

    let f = file.display().to_string();
    let (ok, stdout, stderr) = cli(&["replay", &f, "--strict", "--ros-args", "--params-file", &params]);
    println!("{}", stdout.lines().rev().take(3).collect::<Vec<_>>().join("\n"));
    assert!(ok, "{stdout}\n{stderr}");
    assert!(stdout.contains("cycles at the recorded instants"), "{stdout}");
    assert!(stdout.contains("identical to the"), "{stdout}");
    assert!(stdout.contains("arm_right grant HOLD (by arm_left)"), "{stdout}");

    let bytes = std::fs::read(&file).unwrap();
    let cut = dir.path().join("cut.mcap");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let (ok, _, stderr) = cli(&["replay", &cut.display().to_string(), "--ros-args", "--params-file", &params]);
    assert!(!ok && stderr.contains("not a readable MCAP file after") && stderr.contains("cut.mcap"), "{stderr}");
    let (ok, _, stderr) = cli(&["replay", &params, "--ros-args", "--params-file", &params]);
    assert!(!ok && stderr.contains("not a readable MCAP file after 0 messages"), "{stderr}");
}

/// The README's first command as a newcomer runs it (`workcell_guard demo`),
/// inside a network namespace of its own: the node and the sample cell's
/// robots as separate DDS participants; its lines show a stop or hold, a
/// release, a manipulator grant, a platen grant and a partial grant; its
/// recording is decoded whole by the independent reader and replays to
/// the live decisions; its report holds every section with drawn plots,
/// and renders in headless Chromium with no external resource
/// (tests/peer/screenshot.py).
#[test]
fn the_demo_shows_every_kind_of_answer_and_leaves_a_recording_that_replays_and_a_report_that_renders() {
    let repo = common::repo();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("demo");
    let bin = env!("CARGO_BIN_EXE_workcell_guard");
    let inner = format!("ip link set lo up && exec '{bin}' demo --duration-s 20 --seed 3 --out '{}'", out.display());
    let run = Command::new("unshare").args(["-n", "sh", "-c", &inner]).current_dir(&repo).output().unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&run.stderr));
    println!("{}", stdout.lines().rev().take(6).collect::<Vec<_>>().join("\n"));
    assert!(stdout.contains("network: a private network namespace"), "{stdout}");
    let has = |kind: &str| stdout.lines().any(|l| l.contains(&format!(" s  {kind:<13} ")));
    assert!(has("stop") || has("hold"), "no stop or hold:\n{stdout}");
    for kind in ["release", "grant", "platen grant", "partial grant"] {
        assert!(has(kind), "no {kind}:\n{stdout}");
    }
    assert!(stdout.contains("replay of the recording:") && stdout.contains("identical to the"), "{stdout}");
    // Both arms finish plans: neither stays stopped where it stands (in a
    // legal pose with two of its own links between the margins, as the
    // sample arms start).
    assert!(!stdout.contains(" 0 done"), "{stdout}");
    // No stop flag chatters: a hold that comes back just after it was let
    // go is let go again only once its grant has stayed clear a while, so
    // few stops come and go within 10 ms (before that, nearly all did:
    // 150-250 in a run).
    let mut stopped_at = std::collections::HashMap::new();
    let mut brief = Vec::new();
    for l in stdout.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        let Some(t) = f.first().and_then(|t| t.parse::<f64>().ok()).filter(|_| f.len() >= 4 && f[1] == "s") else {
            continue;
        };
        match f[2] {
            "stop" => _ = stopped_at.insert(f[3].to_string(), t),
            "release" => brief.extend(stopped_at.remove(f[3]).filter(|t0| t - t0 < 0.01)),
            _ => {}
        }
    }
    assert!(brief.len() <= 40, "{} stops released within 10 ms, at {brief:?}:\n{stdout}", brief.len());
    // The robots obey the speed scaling they receive over DDS, and are at
    // full speed most of the time they move (the clearance ramp this
    // replaced held the left arm, whose base stands 37 mm from the cell,
    // below full speed all the time).
    for arm in ["arm_left", "arm_right"] {
        let line = stdout.lines().find(|l| l.trim_start().starts_with(&format!("{arm}: at full speed"))).unwrap_or("");
        // "  arm_left: at full speed (speed scaling 1) 97.0 % of the 19.3 s it moved"
        let share = line.split(") ").nth(1).and_then(|rest| rest.split_whitespace().next()?.parse::<f64>().ok());
        assert!(share.is_some_and(|p| p >= 75.0), "{arm} at full speed {share:?} % of its moving time:\n{stdout}");
        // "...; 97.2 % of the 12.1 s it moved with nothing in its way (...)":
        // where nothing approaches it and no robot holds it back, it runs at
        // full speed at least 85 % of the time.
        let free: Vec<f64> = line
            .split("; ")
            .nth(1)
            .map(|rest| rest.split_whitespace().filter_map(|w| w.parse::<f64>().ok()).take(2).collect())
            .unwrap_or_default();
        let [share, secs] = free[..] else { panic!("{arm}: no share with nothing in its way:\n{stdout}") };
        assert!(
            secs < 1.0 || share >= 85.0,
            "{arm} at full speed {share} % of {secs} s with nothing in its way:\n{stdout}"
        );
    }

    // The recording: every robot's inputs and every answer, decoded by the
    // independent reader.
    let v = read_bag(&out.join("demo.mcap"));
    assert_eq!(v["profile"], "ros2");
    let count = |key: &str| v["counts"][key].as_u64().unwrap_or(0);
    for arm in ["arm_left", "arm_right"] {
        assert!(count(&format!("/{arm}/joint_states sensor_msgs/msg/JointState ros2msg cdr")) > 1000, "{v}");
        assert!(count(&format!("/{arm}/planned_trajectory trajectory_msgs/msg/JointTrajectory ros2msg cdr")) >= 2);
    }
    for unit in ["mover_a", "mover_b"] {
        assert!(count(&format!("/{unit}/pose geometry_msgs/msg/PoseStamped ros2msg cdr")) > 500, "{v}");
        assert!(count(&format!("/{unit}/grant workcell_guard_msgs/msg/PlatenGrant ros2msg cdr")) >= 1, "{v}");
    }

    // The report: every section, its plots drawn, the run's names in it.
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    for id in ["summary", "clearance", "speed", "grants", "platen", "cycle", "views", "events", "settings"] {
        assert!(html.contains(&format!("<section id=\"{id}\">")), "no section {id}");
    }
    for plot in ["clearance", "grants", "platen", "cycle time", "cell view"] {
        assert!(html.contains(&format!("data-plot=\"{plot}\"")), "no {plot} plot");
    }
    // A platen snapshot at each answer a second or more after the last:
    // the demo answers the units through the whole run, so several.
    let snapshots =
        html.split(" platen snapshots").next().and_then(|h| h.rsplit(' ').next()).and_then(|n| n.parse::<usize>().ok());
    assert!(snapshots.is_some_and(|n| n >= 3), "platen snapshots: {snapshots:?}");
    for text in ["arm_left – arm_right", "arm_right – cell", "mover_a", "p50", "p99", "HOLD", "PARTIAL", "seed"] {
        assert!(html.contains(text), "the report lacks {text:?}");
    }
    report_speed_agrees(&html, &stdout);
    // `render`: the cell at an instant of the recording.
    let mcap = out.join("demo.mcap").display().to_string();
    let svg = dir.path().join("cell.svg");
    let (ok, said, err) = cli(&["render", &mcap, "--at", "3.5", "--out", &svg.display().to_string()]);
    assert!(ok, "{said}\n{err}");
    let drawn = std::fs::read_to_string(&svg).unwrap();
    assert!(drawn.contains("data-plot=\"cell view\"") && drawn.matches("<circle").count() > 100, "{}", drawn.len());
    let (ok, _, err) = cli(&["render", &mcap, "--at", "1000", "--out", &svg.display().to_string()]);
    assert!(!ok && err.contains("at or after 1000 s"), "{err}");
    let shots = Command::new("unshare")
        .args(["-n", "python3"])
        .arg(repo.join("tests/peer/screenshot.py"))
        .arg(out.join("report.html"))
        .arg(dir.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&shots.stdout);
    assert!(shots.status.success(), "{said}\n{}", String::from_utf8_lossy(&shots.stderr));
    println!("screenshots: {said}");
}

/// The report's speed table, from the recording alone, finds each arm
/// moving about as long as the demo's robots measured it (`stdout`), and
/// gives its share at full speed with nothing in its way.
fn report_speed_agrees(html: &str, stdout: &str) {
    let speed = html.split("<section id=\"speed\">").nth(1).and_then(|s| s.split("</section>").next()).unwrap_or("");
    assert!(speed.contains("moving with nothing in its way"), "{speed}");
    for arm in ["arm_left", "arm_right"] {
        let line = stdout.lines().find(|l| l.trim_start().starts_with(&format!("{arm}: at full speed"))).unwrap_or("");
        let moved = line.split(" of the ").nth(1).and_then(|r| r.split_whitespace().next()?.parse::<f64>().ok());
        let row = speed.split(&format!("<td>{arm}</td>")).nth(1).and_then(|r| r.split("</tr>").next()).unwrap_or("");
        let cells: Vec<&str> =
            row.split("<td>").filter_map(|c| c.split("</td>").next()).filter(|c| !c.is_empty()).collect();
        // full speed, slowed, held, stopped, moving, its share, free, its share
        let seen = cells.get(4).and_then(|c| c.trim_end_matches(" s").parse::<f64>().ok());
        let (Some(moved), Some(seen)) = (moved, seen) else { panic!("{arm}: {line}\n{row}") };
        assert!(
            (seen - moved).abs() <= (0.2 * moved).max(1.0),
            "{arm}: the report {seen} s moving, the robots {moved} s"
        );
        let free_share = cells.get(7).is_some_and(|c| c.ends_with('%'));
        assert!(cells.len() == 8 && (free_share || cells[6] == "0.0 s"), "{arm}: {row}");
    }
}

/// Runs the node for about `secs` seconds with `ros_args` (after
/// `--ros-args`) in a network namespace of its own, loopback only; ends it
/// with SIGINT and returns what it logged.
fn node_log(ros_args: &[String], secs: u32) -> String {
    let bin = env!("CARGO_BIN_EXE_workcell_guard");
    let quoted: Vec<String> = ros_args.iter().map(|a| format!("'{}'", a.replace('\'', "'\\''"))).collect();
    let inner = format!(
        "ip link set lo up && ROS_LOCALHOST_ONLY=1 timeout -s INT {secs} '{bin}' --ros-args {} 2>&1; true",
        quoted.join(" ")
    );
    let out = Command::new("unshare").args(["-n", "sh", "-c", &inner]).env_remove("RUST_LOG").output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// rcl's command line and parameter files, as the node takes them: each
/// wildcard form of a parameter file's section applies to the node it
/// names (its rate in the node's own log), `-p node:name:=value` to that
/// node, and `--log-level` changes what is logged; arguments rcl takes that
/// mean nothing here (`--log-file-name`) are taken.
#[test]
fn parameter_file_wildcards_node_params_and_log_levels_apply_to_the_running_node() {
    let repo = common::repo();
    let dir = tempfile::tempdir().unwrap();
    let cell = repo.join("config/workcell.yaml").display().to_string();
    let f = dir.path().join("params.yaml");
    for (key, ns, hz) in [
        ("/**", "/", 210),
        ("/*/workcell_guard", "/cell_a", 220),
        ("/cell_a/*", "/cell_a", 230),
        ("/**/workcell_guard", "/a/b", 240),
    ] {
        std::fs::write(&f, format!("{key}:\n  ros__parameters:\n    rate_hz: {hz}.0\n    workcell_file: {cell}\n"))
            .unwrap();
        let args: Vec<String> = [
            "--params-file",
            &f.display().to_string(),
            "-r",
            &format!("__ns:={ns}"),
            "--log-level",
            "info",
            "--log-file-name",
            "x",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let log = node_log(&args, 4);
        let fqn = if ns == "/" { "/workcell_guard".to_string() } else { format!("{ns}/workcell_guard") };
        assert!(
            log.contains(&format!("node {fqn} on DDS domain")) && log.contains(&format!("{hz} Hz")),
            "{key}:\n{log}"
        );
    }
    // `-p node:name:=value`, and --log-level: debug shows the parameters in use, the default does not.
    std::fs::write(&f, format!("/**:\n  ros__parameters:\n    workcell_file: {cell}\n")).unwrap();
    let base =
        vec!["--params-file".to_string(), f.display().to_string(), "-p".into(), "workcell_guard:rate_hz:=250.0".into()];
    let debug = node_log(&[base.clone(), vec!["--log-level".into(), "debug".into()]].concat(), 4);
    assert!(debug.contains("parameters in use") && debug.contains("rate_hz: 250.0"), "{debug}");
    let quiet = node_log(&base, 4);
    assert!(!quiet.contains("parameters in use") && !quiet.contains("DEBUG"), "{quiet}");
}

/// What a ROS 2 engineer meets on day one, seen from a separate DDS
/// process (tests/peer/conventions.py): discovery shows a `qos_overrides`
/// entry's QoS and both speed-scaling types (SpeedScalingFactor reliable
/// and transient local, Float64); a late transient-local SpeedScalingFactor
/// reader gets the latest value; `<robot>/state` carries the documented
/// fields; the services and parameter services answer with and without
/// rmw_cyclonedds's request header, with descriptors (ranges, read-only);
/// MoveIt's action goals are cancelled on a stop; markers start with
/// DELETEALL; silent publishers and incompatible QoS reach the diagnostics.
#[test]
fn ros_conventions_qos_overrides_both_request_mappings_guard_state_and_speed_scaling_types_over_dds() {
    let v = run_script("conventions.py", &[]);
    assert!(v["silent"].as_str().unwrap().contains("but silent"), "{v}");
    assert_eq!(v["reset_plain"], v["reset_cyclone"], "{v}");
    assert!(v["incompatible"].as_str().unwrap().contains("transient local"), "{v}");
    assert!(v["moveit_cancels"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(v["descriptors"]["workcell_file"]["read_only"], true, "{v}");
}

#[test]
fn a_calibrated_stopping_model_shows_in_the_diagnostics_and_warns_beyond_its_recorded_speeds_over_dds() {
    // The real chain: simulate-stops records, calibrate fits, the node runs
    // the workcell naming the file; a Cyclone DDS peer turns arm_left
    // within, then beyond the covered speeds and reads /diagnostics.
    let dir = tempfile::tempdir().unwrap();
    // (500 stops: the fit's CPU time shares the machine with the other
    // tests' DDS timing.)
    let (cell, _, _) = common::stopping::calibrated_left(dir.path(), 500);
    let covered =
        workcell::load(&cell).unwrap().manipulators[0].stopping.as_ref().unwrap().joints[0].as_ref().unwrap().range().1;
    assert!(covered < 1.9, "recorded stops reach {covered} rad/s: no room below the 2 rad/s limit");
    let fast = 0.5 * (covered + 2.0);
    let log = run_script(
        "stopping.py",
        &[
            "--workcell".into(),
            cell.display().to_string(),
            "--fast".into(),
            fast.to_string(),
            "--covered".into(),
            covered.to_string(),
        ],
    );
    let phases = &log["phases"];
    assert!(phases["at_rest"].as_str().unwrap().starts_with("learned (7 joints"), "{phases}");
    assert!(phases["beyond"]["model"].as_str().unwrap().contains("shoulder_pan at"), "{phases}");
    assert_eq!(phases["rest_again"]["level"], 0, "{phases}");
}
