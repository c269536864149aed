//! The node behind both transports, without middleware: messages in,
//! stops, diagnostics and markers out; refusals of bad input with the
//! problem named; parameter updates checked; and a cycle that allocates
//! nothing once warmed up (counted by the suite's allocation counter, per
//! thread).

use crate::alloc::allocations;
use crate::common;
use workcell_guard_core::field::DistanceField;
use workcell_guard_core::guard::ContactError;
use workcell_guard_description::workcell;
use workcell_guard_ros::msg::{
    DiagnosticStatus, Duration, Header, JointState, JointTrajectory, JointTrajectoryPoint, Marker, Time,
};
use workcell_guard_ros::node::{GuardNode, InputFault, ServiceError};
use workcell_guard_ros::params::{NodeParams, ParamError};

pub(crate) fn node() -> GuardNode {
    node_with(|_| {})
}

/// The node of the sample workcell, changed by `f` first.
pub(crate) fn node_with(f: impl FnOnce(&mut workcell::Workcell)) -> GuardNode {
    let mut cell = workcell::load(&common::repo().join("config/workcell.yaml")).unwrap();
    f(&mut cell);
    let field = DistanceField::from_workcell(&cell);
    let cache = tempfile::tempdir().unwrap();
    let (guard, _) = workcell_guard_description::build_guard(&cell, field, Some(cache.path())).unwrap();
    GuardNode::new(cell, guard, NodeParams::default()).unwrap()
}

const LEFT: [&str; 7] = ["shoulder_pan", "shoulder_lift", "elbow", "wrist_1", "wrist_2", "wrist_3", "finger_left"];
const RIGHT: [&str; 8] = ["j1", "j2", "j3", "j4", "j5", "j6", "j7", "finger_a_joint"];

pub(crate) fn state(names: &[&str], q: &[f64], t: f64) -> JointState {
    let sec = t.floor();
    JointState {
        header: Header { stamp: Time { sec: sec as i32, nanosec: ((t - sec) * 1e9) as u32 }, frame_id: String::new() },
        name: names.iter().map(|s| s.to_string()).collect(),
        position: q.to_vec(),
        velocity: Vec::new(),
        effort: Vec::new(),
    }
}

fn q_left() -> Vec<f64> {
    vec![1.5, 0.7, 1.1, 0.0, 0.0, 0.0, 0.02]
}
fn q_right() -> Vec<f64> {
    vec![-1.5, 1.2, 0.0, -0.3, 0.0, 0.0, 0.0, 0.0]
}

/// Feeds both arms at rest every 5 ms, cycling every 2 ms, until `t_end`.
pub(crate) fn run(n: &mut GuardNode, t: &mut f64, t_end: f64) {
    let (l, r) = (state(&LEFT, &q_left(), 0.0), state(&RIGHT, &q_right(), 0.0));
    let (mut l, mut r) = (l, r);
    let mut next_js = *t;
    while *t < t_end {
        *t += 0.002;
        if *t >= next_js {
            next_js += 0.005;
            let stamp = Time { sec: t.floor() as i32, nanosec: ((*t - t.floor()) * 1e9) as u32 };
            l.header.stamp = stamp;
            r.header.stamp = stamp;
            n.on_joint_state(0, &l, *t).unwrap();
            n.on_joint_state(1, &r, *t).unwrap();
        }
        n.cycle(*t);
    }
}

pub(crate) fn status<'a>(d: &'a workcell_guard_ros::msg::DiagnosticArray, name: &str) -> &'a DiagnosticStatus {
    d.status.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no status {name}"))
}

#[test]
fn bad_input_stops_that_robot_with_the_problem_named_and_a_good_message_clears_it() {
    let mut n = node();
    let mut t = 100.0;
    assert!(n.cycle(t).iter().all(|s| s.data), "stopped before any joint state");
    run(&mut n, &mut t, 102.0);
    assert!(n.stops().iter().all(|s| !s.data), "at rest and clear: {:?}", n.stops());

    let bad: Vec<(JointState, &str)> = vec![
        (state(&["j1", "j2", "j3", "j4", "j5", "j6", "j7", "bogus"], &q_right(), t), "no joint `bogus`"),
        (state(&RIGHT, &q_right()[..7], t), "8 joint names but 7 positions"),
        (state(&["j1", "j1", "j3", "j4", "j5", "j6", "j7", "finger_a_joint"], &q_right(), t), "`j1` appears twice"),
        (state(&RIGHT[..7], &q_right()[..7], t), "`finger_a_joint` of the robot is missing"),
    ];
    for (msg, needle) in bad {
        let e = n.on_joint_state(1, &msg, t).unwrap_err();
        assert!(matches!(e, InputFault::JointState(_)));
        let stops = n.cycle(t + 0.001).to_vec();
        assert!(stops[1].data && !stops[0].data, "{needle}: {stops:?}");
        let d = n.diagnostics(Time::default());
        let s = status(d, "workcell_guard: arm_right");
        assert_eq!(s.level, DiagnosticStatus::ERROR);
        assert!(s.message.contains(needle), "{:?} lacks {needle:?}", s.message);
        assert_eq!(status(d, "workcell_guard: arm_left").level, DiagnosticStatus::OK);
        // Still stopped a few cycles later, with nothing new.
        assert!(n.cycle(t + 0.003)[1].data);
        // A good message clears the refusal.
        t += 0.005;
        n.on_joint_state(1, &state(&RIGHT, &q_right(), t), t).unwrap();
        assert!(n.fault(1).is_none());
        let until = t + 1.0;
        run(&mut n, &mut t, until);
        assert!(!n.stops()[1].data, "{needle}: released after good messages");
    }
    // NaN and a stamp from the future are refused by the core, with reasons.
    let mut nan = q_right();
    nan[2] = f64::NAN;
    t += 0.001;
    n.on_joint_state(1, &state(&RIGHT, &nan, t), t).unwrap();
    assert!(n.cycle(t + 0.001)[1].data);
    let m = status(n.diagnostics(Time::default()), "workcell_guard: arm_right").message.clone();
    assert!(m.contains("position of joint 2 is NaN"), "{m}");
    assert!(n.stats().refused >= 4);
}

#[test]
fn trajectories_are_checked_against_the_robot() {
    let mut n = node();
    let point = |k: usize, dof: usize| JointTrajectoryPoint {
        positions: vec![0.1 * k as f64; dof],
        velocities: Vec::new(),
        accelerations: Vec::new(),
        effort: Vec::new(),
        time_from_start: Duration { sec: k as i32, nanosec: 0 },
    };
    let traj = |names: &[&str], points: Vec<JointTrajectoryPoint>| JointTrajectory {
        header: Header::default(),
        joint_names: names.iter().map(|s| s.to_string()).collect(),
        points,
    };
    n.on_trajectory(1, &traj(&RIGHT, vec![point(1, 8), point(2, 8)])).unwrap();
    assert_eq!(n.trajectory(1).unwrap().points, 2);
    let e = n.on_trajectory(1, &traj(&LEFT, vec![point(1, 7)])).unwrap_err();
    assert!(e.to_string().contains("`arm_left`'s"), "{e}");
    assert!(n.fault(1).is_some());
    let e = n.on_trajectory(1, &traj(&RIGHT, vec![point(2, 8), point(1, 8)])).unwrap_err();
    assert!(e.to_string().contains("point 1: time_from_start does not increase"), "{e}");
    let e = n.on_trajectory(1, &traj(&RIGHT, vec![point(1, 7)])).unwrap_err();
    assert!(e.to_string().contains("7 positions for 8 joints"), "{e}");
    let mut p = point(1, 8);
    p.positions[3] = f64::INFINITY;
    assert!(n.on_trajectory(1, &traj(&RIGHT, vec![p])).is_err());
    // An empty trajectory clears the plan and the refusal.
    n.on_trajectory(1, &traj(&[], Vec::new())).unwrap();
    assert!(n.fault(1).is_none() && n.trajectory(1).is_none());
}

#[test]
fn parameter_updates_are_checked_and_refused_with_a_reason() {
    let mut n = node();
    n.set_param("watchdog_s", &serde_json::json!(0.2)).unwrap();
    assert_eq!(n.guard().tuning().watchdog_s, 0.2);
    n.set_param("release_m", &serde_json::json!(0.03)).unwrap();
    assert_eq!(n.guard().tuning().release_m, 0.03);
    let e = n.set_param("release_m", &serde_json::json!(0.005)).unwrap_err();
    assert!(e.to_string().contains("at least clearance_m"), "{e}");
    let e = n.set_param("clearance_m", &serde_json::json!(0.04)).unwrap_err();
    assert!(e.to_string().contains("release_m (0.03) must be at least clearance_m (0.04)"), "{e}");
    let e = n.set_param("rate_hz", &serde_json::json!(0)).unwrap_err();
    assert!(matches!(e, ParamError::Invalid { .. }), "{e}");
    let e = n.set_param("watchdog_s", &serde_json::json!("fast")).unwrap_err();
    assert!(e.to_string().contains("must be a number"), "{e}");
    assert!(matches!(n.set_param("no_such", &serde_json::json!(1)), Err(ParamError::Unknown(_))));
    let e = n.set_param("workcell_file", &serde_json::json!("/elsewhere.yaml")).unwrap_err();
    assert!(e.to_string().contains("read at start"), "{e}");
    // The collision matrix bounds the clearance.
    n.set_param("release_m", &serde_json::json!(0.2)).unwrap();
    let e = n.set_param("clearance_m", &serde_json::json!(0.1)).unwrap_err();
    assert!(e.to_string().contains("matrix_never_slack_m"), "{e}");
    let t = n.guard().tuning();
    assert_eq!((t.clearance_m, t.release_m, t.watchdog_s), (0.01, 0.2, 0.2), "refusals changed nothing");
}

#[test]
fn markers_and_diagnostics_describe_the_cell() {
    let mut n = node();
    n.cycle(1.0);
    let m = n.markers(Time::default());
    assert!(m.markers.iter().all(|m| m.action == Marker::DELETE), "no joint state yet: nothing drawn");
    let count = m.markers.len();
    let mut t = 1.0;
    run(&mut n, &mut t, 3.0);
    let m = n.markers(Time::default());
    assert_eq!(m.markers.len(), count);
    assert!(m.markers.iter().all(|m| m.action == Marker::ADD && m.kind == 2 && m.scale.x > 0.0));
    assert!(
        m.markers.iter().any(|m| m.ns == "arm_left/spheres") && m.markers.iter().any(|m| m.ns == "arm_right/spheres")
    );
    assert!(m.markers.iter().all(|m| m.header.frame_id == "world"));
    // One marker per sphere of the model: the padding copies the posing
    // loop works on are not drawn.
    let m = m.clone();
    for man in &n.cell().manipulators {
        let spheres: usize = man.spheres.links.iter().map(|l| l.fine.len()).sum();
        let ns = format!("{}/spheres", man.name);
        let mine: Vec<&Marker> = m.markers.iter().filter(|m| m.ns == ns).collect();
        assert_eq!(mine.len(), spheres, "{ns}: markers vs spheres");
        let mut ids: Vec<i32> = mine.iter().map(|m| m.id).collect();
        ids.dedup();
        assert_eq!(ids.len(), spheres, "{ns}: ids are unique");
    }
    let c = n.cell_markers(Time::default());
    assert_eq!(c.markers[0].kind, Marker::CUBE_LIST);
    assert!(c.markers[0].points.len() > 1000);
    let d = n.diagnostics(Time { sec: 3, nanosec: 0 });
    assert_eq!(d.status.len(), 5, "two arms, two platen units, the node");
    let node_status = status(d, "workcell_guard: node");
    assert!(node_status.values.iter().any(|kv| kv.key == "tuning" && kv.value.contains("watchdog_s 0.05")));
    let s = status(d, "workcell_guard: arm_left");
    for key in ["clearance_m", "closest_pair", "time_to_contact_s", "cycle_time_s"] {
        assert!(s.values.iter().any(|kv| kv.key == key), "{key} missing");
    }
}

#[test]
fn a_cycle_with_its_messages_allocates_nothing_once_warmed_up() {
    let mut n = node();
    let mut t = 10.0;
    run(&mut n, &mut t, 12.0);
    for _ in 0..3 {
        n.diagnostics(Time::default());
        n.markers(Time::default());
    }
    let (mut l, mut r) = (state(&LEFT, &q_left(), t), state(&RIGHT, &q_right(), t));
    let before = allocations();
    for k in 0..500 {
        t += 0.002;
        let stamp = Time { sec: t.floor() as i32, nanosec: ((t - t.floor()) * 1e9) as u32 };
        l.header.stamp = stamp;
        r.header.stamp = stamp;
        if k % 2 == 0 {
            n.on_joint_state(0, &l, t).unwrap();
            n.on_joint_state(1, &r, t).unwrap();
            n.cycle(t);
        } else {
            // As with cycle_on_joint_state: split, the arriving robot first.
            n.on_joint_state(0, &l, t).unwrap();
            n.cycle_first(t, 0);
            n.cycle_rest(t);
            n.on_joint_state(1, &r, t).unwrap();
            n.cycle_first(t, 1);
            n.cycle_rest(t);
        }
        if k % 50 == 0 {
            n.diagnostics(stamp);
            n.markers(stamp);
        }
    }
    let allocations = allocations() - before;
    assert_eq!(allocations, 0, "500 cycles with joint states, diagnostics and markers allocated {allocations} times");
}

/// `cycle_on_joint_state`: the robot whose state arrived is decided first
/// (`cycle_first`, its stop published at once), then the others
/// (`cycle_rest`). The arms swing toward each other and apart: every stop,
/// speed scaling and controller action must be what a whole cycle gives.
#[test]
fn a_cycle_split_on_a_joint_state_gives_what_a_whole_cycle_gives() {
    // By their spheres both arms are stopped as they meet (by their links'
    // shapes the right one is not).
    let spheres = |c: &mut workcell::Workcell| c.guard.exact_links = false;
    let (mut whole, mut split) = (node_with(spheres), node_with(spheres));
    let mut t = 20.0;
    let (mut pan_l, mut pan_r) = (1.5f64, -1.5f64);
    let (mut stopped, mut went, mut stopped_right_first) = (0, 0, false);
    for k in 0..1600 {
        t += 0.0025;
        // Toward each other at 0.5 rad/s for 1.5 s, apart for 1.5 s, after a
        // still second; the states alternate between the two arms.
        let dir = if k < 400 {
            0.0
        } else if k < 1000 {
            1.0
        } else {
            -1.0
        };
        let robot = k % 2;
        let msg = if robot == 0 {
            pan_l = (pan_l - dir * 0.5 * 0.005).min(1.5);
            let mut q = q_left();
            q[0] = pan_l;
            state(&LEFT, &q, t)
        } else {
            pan_r = (pan_r + dir * 0.5 * 0.005).max(-1.5);
            let mut q = q_right();
            q[0] = pan_r;
            state(&RIGHT, &q, t)
        };
        whole.on_joint_state(robot, &msg, t).unwrap();
        split.on_joint_state(robot, &msg, t).unwrap();
        let a = whole.cycle(t).to_vec();
        let first = split.cycle_first(t, robot).expect("a manipulator");
        assert_eq!(first, a[robot], "cycle {k}: robot {robot}'s stop, published first");
        let b = split.cycle_rest(t).to_vec();
        assert_eq!(a, b, "cycle {k}");
        assert_eq!(format!("{:?}", whole.speed_scaling()), format!("{:?}", split.speed_scaling()), "cycle {k}");
        assert_eq!(whole.actuation(), split.actuation(), "cycle {k}");
        if a[1].data && !stopped_right_first && k > 400 {
            stopped_right_first = true;
        }
        stopped += a.iter().filter(|s| s.data).count();
        went += a.iter().filter(|s| !s.data).count();
    }
    assert!(
        stopped_right_first && stopped > 0 && went > 0,
        "the arms must meet and part ({stopped} stops, {went} continues)"
    );
    assert!(split.cycle_first(t, 7).is_none(), "no robot 7");
    let d = split.diagnostics(Time::default());
    let node = status(d, "workcell_guard: node");
    assert!(node.values.iter().any(|v| v.key == "first_stop_time_s" && v.value.parse::<f64>().unwrap() > 0.0));
}

/// With `cycle_on_joint_state`, a timer tick within one period of the last
/// cycle has nothing to add and is skipped; without it, every tick cycles.
#[test]
fn timer_ticks_cycle_only_when_joint_states_have_not_within_a_period() {
    let mut n = node();
    assert!(n.timer_due(), "before any cycle");
    n.set_param("rate_hz", &serde_json::json!(20.0)).unwrap();
    let t = 30.0;
    n.on_joint_state(1, &state(&RIGHT, &q_right(), t), t).unwrap();
    n.cycle(t);
    assert!(n.timer_due(), "without cycle_on_joint_state every tick cycles");
    n.set_param("cycle_on_joint_state", &serde_json::json!(true)).unwrap();
    n.cycle_first(t, 1).expect("a manipulator");
    n.cycle_rest(t);
    assert!(!n.timer_due(), "a joint state cycled just now");
    std::thread::sleep(std::time::Duration::from_millis(60));
    assert!(n.timer_due(), "one period (50 ms) has passed");
    n.cycle(t);
    assert!(!n.timer_due(), "a timer cycle counts as well");
}

#[test]
fn contacts_can_be_allowed_and_forbidden_by_name() {
    let mut n = node();
    let m = n.set_contact("arm_right/hand", "arm_left/finger_left_link", true).unwrap();
    assert!(m.contains("allowed"), "{m}");
    n.set_contact("arm_right/hand", "arm_left/finger_left_link", false).unwrap();
    let e = n.set_contact("arm_right/paw", "platen_table", true).unwrap_err();
    assert!(matches!(&e, ServiceError::NoLink { robot, link } if robot == "arm_right" && link == "paw"), "{e}");
    assert!(e.to_string().contains("has no link `paw`"), "{e}");
    let e = n.set_contact("nobody", "platen_table", true).unwrap_err();
    assert!(matches!(&e, ServiceError::NoBody(s) if s == "nobody"), "{e}");
    assert!(e.to_string().contains("`nobody` names no"), "{e}");
    let e = n.set_contact("mover_a", "platen_table", true).unwrap_err();
    assert!(matches!(&e, ServiceError::Contact { source: ContactError::PlatenUnit, .. }), "{e}");
    assert!(e.to_string().contains("platen units are not checked"), "{e}");
}

#[test]
fn latched_stops_hold_until_reset_and_reset_refuses_while_in_conflict() {
    let mut n = node();
    n.set_param("latch_stops", &serde_json::json!(true)).unwrap();
    assert_eq!(n.reset_stops().unwrap(), "no latched stops");
    let mut t = 1.0;
    run(&mut n, &mut t, 3.0);
    assert!(n.stops().iter().all(|s| !s.data));
    // Turn the arms into each other in one jump (touching): a proximity stop.
    let (l, r) = (vec![0.0, 0.7, 1.1, 0.0, 0.0, 0.0, 0.02], vec![0.0, 1.2, 0.0, -0.3, 0.0, 0.0, 0.0, 0.0]);
    for k in 0..20 {
        t += 0.005;
        n.on_joint_state(0, &state(&LEFT, &l, t), t).unwrap();
        n.on_joint_state(1, &state(&RIGHT, &r, t), t).unwrap();
        n.cycle(t);
        let _ = k;
    }
    assert!(n.stops().iter().all(|s| s.data));
    let e = n.reset_stops().unwrap_err();
    assert!(matches!(&e, ServiceError::StillStopped { held, .. } if held.iter().any(|(r, _)| r == "arm_left")), "{e}");
    let text = e.to_string();
    assert!(text.contains("still stopped") && text.contains("`arm_left`"), "{text}");
    // Back apart: the guard lets go after its hold, the latch does not.
    let until = t + 2.0;
    run(&mut n, &mut t, until);
    assert!(n.stops().iter().all(|s| s.data), "latched");
    let d = n.diagnostics(Time::default());
    let s = status(d, "workcell_guard: arm_right");
    assert!(s.message.contains("latched stop") && s.message.contains("reset_stop"), "{}", s.message);
    let m = n.reset_stops().unwrap();
    assert!(m.contains("released") && m.contains("arm_left") && m.contains("arm_right"), "{m}");
    n.cycle(t + 0.001);
    assert!(n.stops().iter().all(|s| !s.data));
}

#[test]
fn platen_requests_are_answered_and_units_reported() {
    use workcell_guard_ros::msg::{PlatenGrant, PlatenMoveRequest, Point, Pose, Pose2D, PoseStamped, Quaternion};
    let mut n = node();
    let pose = |x: f64, y: f64, t: f64| PoseStamped {
        header: Header {
            stamp: Time { sec: t.floor() as i32, nanosec: ((t - t.floor()) * 1e9) as u32 },
            frame_id: "surface".into(),
        },
        pose: Pose { position: Point { x, y, z: 0.0 }, orientation: Quaternion::default() },
    };
    let req = |id: u64, x: f64, y: f64| PlatenMoveRequest {
        header: Header::default(),
        request_id: id,
        target: Pose2D { x, y, theta: 0.0 },
    };
    let t = 5.0;
    // No pose yet: refused with the reason.
    n.on_move_request(0, &req(1, 0.3, 0.3));
    n.cycle(t);
    let g = n.grants().to_vec();
    assert_eq!(g.len(), 1);
    assert_eq!((g[0].0, g[0].1.request_id, g[0].1.result), (0, 1, PlatenGrant::REFUSED));
    assert!(g[0].1.reason.contains("no pose"), "{}", g[0].1.reason);
    // With a pose: a short free move is granted whole.
    n.on_platen_pose(0, &pose(0.2, 0.3, t));
    n.on_platen_pose(1, &pose(0.8, 0.7, t));
    n.on_move_request(0, &req(2, 0.3, 0.3));
    n.cycle(t + 0.001);
    let g = n.grants().to_vec();
    assert_eq!(g[0].1.result, PlatenGrant::GRANTED, "{:?}", g[0].1);
    assert_eq!((g[0].1.goal.x, g[0].1.fraction), (0.3, 1.0));
    // Into the other unit: partial or denied, naming it.
    n.on_move_request(1, &req(3, 0.2, 0.7));
    n.cycle(t + 0.002);
    let g = n.grants().to_vec();
    assert!(matches!(g[0].1.result, PlatenGrant::PARTIAL | PlatenGrant::DENIED | PlatenGrant::GRANTED), "{:?}", g[0].1);
    // Nothing asked: nothing answered.
    n.cycle(t + 0.003);
    assert!(n.grants().is_empty());
    let d = n.diagnostics(Time::default());
    assert_eq!(status(d, "workcell_guard: mover_a").level, DiagnosticStatus::OK);
    assert!(status(d, "workcell_guard: mover_a").message.starts_with("moving (request 2)"));
    // On arrival (what the event loop does): answered at once, after the
    // pose taken before it, and not again by the next cycle.
    n.on_platen_pose(0, &pose(0.3, 0.3, t + 0.004));
    n.on_move_request(0, &req(4, 0.25, 0.3));
    let g = n.answer_requests(t + 0.004).to_vec();
    assert_eq!((g.len(), g[0].1.request_id, g[0].1.result), (1, 4, PlatenGrant::GRANTED), "{g:?}");
    n.cycle(t + 0.005);
    assert!(n.grants().is_empty());
}

pub(crate) fn cloud(frame: &str, points: &[[f32; 3]]) -> workcell_guard_ros::msg::PointCloud2 {
    use workcell_guard_ros::msg::{PointCloud2, PointField};
    let field =
        |name: &str, offset: u32| PointField { name: name.into(), offset, datatype: PointField::FLOAT32, count: 1 };
    let mut data = Vec::new();
    for p in points {
        for c in p {
            data.extend_from_slice(&c.to_le_bytes());
        }
        data.extend_from_slice(&[0u8; 4]); // padding, as real drivers have
    }
    PointCloud2 {
        header: Header { stamp: Time::default(), frame_id: frame.into() },
        height: 1,
        width: points.len() as u32,
        fields: vec![field("x", 0), field("y", 4), field("z", 8)],
        is_bigendian: false,
        point_step: 16,
        row_step: 16 * points.len() as u32,
        data,
        is_dense: true,
    }
}

#[test]
fn sensed_points_enter_the_field_off_the_cycle_and_bad_clouds_are_refused() {
    let mut n = node();
    let mut t = 1.0;
    run(&mut n, &mut t, 3.0);
    assert!(n.stops().iter().all(|s| !s.data));
    // A block of points right in front of the left arm's gripper.
    let mut pts = Vec::new();
    let (cx, cy, cz) = (-0.45f32, 0.55f32, 1.35f32);
    for i in 0..10 {
        for j in 0..10 {
            for k in 0..10 {
                pts.push([cx + 0.01 * i as f32, cy + 0.01 * j as f32, cz + 0.01 * k as f32]);
            }
        }
    }
    let probe = [cx + 0.05, cy + 0.05, cz + 0.05];
    let before = n.guard().field().clearance(probe[0], probe[1], probe[2], 0.0);
    assert!(before > 0.05, "free before: {before}");
    n.on_cloud(&cloud("world", &pts), t).unwrap();
    // The cycle goes on while the worker rebuilds; the field changes later.
    let mut waited = 0;
    while n.sensed_report().is_none() && waited < 2000 {
        std::thread::sleep(std::time::Duration::from_millis(5));
        let until = t + 0.005;
        run(&mut n, &mut t, until);
        waited += 1;
    }
    let rep = n.sensed_report().expect("the worker answered");
    assert_eq!(rep.accepted + rep.filtered + rep.outside + rep.invalid, 1000);
    assert!(rep.accepted > 900, "{rep:?}");
    let after = n.guard().field().clearance(probe[0], probe[1], probe[2], 0.0);
    assert!(after <= 0.0, "occupied after: {after}");
    // Not in the cell frame, or too short: refused and reported.
    let e = n.on_cloud(&cloud("camera", &pts), t).unwrap_err();
    assert!(e.to_string().contains("frame `camera`"), "{e}");
    let d = n.diagnostics(Time::default());
    assert!(status(d, "workcell_guard: node").message.contains("point cloud refused"));
    let mut short = cloud("world", &pts);
    short.data.truncate(100);
    assert!(n.on_cloud(&short, t).unwrap_err().to_string().contains("data bytes"));
    let mut no_z = cloud("world", &pts);
    no_z.fields.pop();
    assert!(n.on_cloud(&no_z, t).unwrap_err().to_string().contains("`z`"));
}

#[test]
fn moveit_display_trajectories_give_each_robot_its_columns() {
    use workcell_guard_ros::msg::{DisplayTrajectory, RobotTrajectory};
    let mut n = node();
    let traj = |names: &[&str], times: &[i32]| RobotTrajectory {
        joint_trajectory: JointTrajectory {
            header: Header::default(),
            joint_names: names.iter().map(|s| s.to_string()).collect(),
            points: times
                .iter()
                .map(|&k| JointTrajectoryPoint {
                    positions: vec![0.1 * k as f64; names.len()],
                    velocities: Vec::new(),
                    accelerations: Vec::new(),
                    effort: Vec::new(),
                    time_from_start: Duration { sec: k, nanosec: 0 },
                })
                .collect(),
        },
        multi_dof_joint_trajectory: Default::default(),
    };
    // A dual-arm plan in two segments: each arm gets its columns, the
    // segments joined end to end (the second's start point is the first's end).
    let both: Vec<&str> = LEFT.iter().chain(RIGHT.iter()).copied().collect();
    let msg =
        DisplayTrajectory { model_id: "cell".into(), trajectory: vec![traj(&both, &[0, 1, 2]), traj(&both, &[0, 1])] };
    assert!(n.on_display_trajectory(0, &msg).unwrap());
    assert!(n.on_display_trajectory(1, &msg).unwrap());
    let t = n.trajectory(1).unwrap();
    assert_eq!((t.points, t.duration_s), (4, 3.0));
    // A plan for the left arm only is not the right arm's business.
    let left = DisplayTrajectory { model_id: "cell".into(), trajectory: vec![traj(&LEFT, &[0, 1])] };
    assert!(!n.on_display_trajectory(1, &left).unwrap());
    assert_eq!(n.trajectory(1).unwrap().points, 4, "unchanged");
    assert!(n.fault(1).is_none());
}

/// Feeds arm_left at rest and arm_right `msg` every 5 ms for `seconds`,
/// cycling every 2 ms; every arm_right diagnostic message of that time.
fn feed_right(n: &mut GuardNode, t: &mut f64, seconds: f64, msg: &dyn Fn(f64) -> JointState) -> Vec<(u8, String)> {
    let mut seen = Vec::new();
    let end = *t + seconds;
    let mut next_js = *t;
    while *t < end {
        *t += 0.002;
        if *t >= next_js {
            next_js += 0.005;
            n.on_joint_state(0, &state(&LEFT, &q_left(), *t), *t).unwrap();
            let _ = n.on_joint_state(1, &msg(*t), *t);
        }
        n.cycle(*t);
        let s = status(n.diagnostics(Time::default()), "workcell_guard: arm_right");
        seen.push((s.level, s.message.clone()));
    }
    seen
}

#[test]
fn empty_joint_states_are_refused_in_any_sequence_and_never_crash_the_node() {
    type Msg = fn(f64) -> JointState;
    let empty: Msg = |t| state(&[], &[], t);
    let good = |t: f64| state(&RIGHT, &q_right(), t);
    let dup: Msg = |t| state(&["j1", "j1", "j3", "j4", "j5", "j6", "j7", "finger_a_joint"], &q_right(), t);
    // An empty message first.
    let mut n = node();
    let mut t = 1.0;
    let e = n.on_joint_state(1, &empty(t), t).unwrap_err();
    assert!(e.to_string().contains("`j1` of the robot is missing"), "{e}");
    assert!(n.cycle(t)[1].data);
    // Good ones, then two empty ones; a duplicate then an empty one; a
    // refused one then an empty one: each refused, the other arm unaffected.
    for seq in [vec![empty, empty], vec![dup, empty], vec![empty, dup, empty]] {
        feed_right(&mut n, &mut t, 2.0, &good);
        assert!(n.stops().iter().all(|s| !s.data), "clear before: {:?}", n.stops());
        for m in &seq {
            t += 0.005;
            assert!(n.on_joint_state(1, &m(t), t).is_err());
            let stops = n.cycle(t).to_vec();
            assert!(stops[1].data && !stops[0].data, "{stops:?}");
        }
    }
    feed_right(&mut n, &mut t, 2.0, &good);
    assert!(n.stops().iter().all(|s| !s.data), "clear after: {:?}", n.stops());
}

#[test]
fn every_diagnostic_names_the_refusal_while_it_lasts_even_past_the_watchdog() {
    let mut n = node();
    let mut t = 1.0;
    let good = |t: f64| state(&RIGHT, &q_right(), t);
    type Bad = Box<dyn Fn(f64) -> JointState>;
    let cases: Vec<(&str, Bad)> = vec![
        (
            "is NaN",
            Box::new(|t| {
                let mut q = q_right();
                q[0] = f64::NAN;
                state(&RIGHT, &q, t)
            }),
        ),
        ("in the future", Box::new(|t| state(&RIGHT, &q_right(), t + 30.0))),
        ("goes backwards", Box::new(|t| state(&RIGHT, &q_right(), t - 5.0))),
        ("no joint `bogus`", Box::new(|t| state(&["j1", "j2", "j3", "j4", "j5", "j6", "j7", "bogus"], &q_right(), t))),
        ("7 positions", Box::new(|t| state(&RIGHT, &q_right()[..7], t))),
        (
            "appears twice",
            Box::new(|t| state(&["j1", "j1", "j3", "j4", "j5", "j6", "j7", "finger_a_joint"], &q_right(), t)),
        ),
    ];
    for (needle, bad) in &cases {
        feed_right(&mut n, &mut t, 2.0, &good);
        assert!(!n.stops()[1].data, "{needle}: clear before");
        // Refused states for a second (past the 50 ms watchdog, since none
        // is taken): every diagnostic of that second names the problem.
        let seen = feed_right(&mut n, &mut t, 1.0, bad);
        let named = seen.iter().filter(|(l, m)| *l == DiagnosticStatus::ERROR && m.contains(needle)).count();
        assert_eq!(named, seen.len(), "{needle}: {:?}", seen.iter().find(|(_, m)| !m.contains(needle)));
        assert!(n.stops()[1].data);
    }
}

#[test]
fn stops_go_out_when_they_change_and_as_a_heartbeat_otherwise() {
    let mut n = node();
    n.set_param("stop_heartbeat_s", &serde_json::json!(0.5)).unwrap();
    let mut t = 1.0;
    // Cycles every 2 ms for 3 s: the start-up stop, its release, heartbeats.
    let mut sent = Vec::new();
    let end = t + 3.0;
    let mut next_js = t;
    while t < end {
        t += 0.002;
        if t >= next_js {
            next_js += 0.005;
            n.on_joint_state(0, &state(&LEFT, &q_left(), t), t).unwrap();
            n.on_joint_state(1, &state(&RIGHT, &q_right(), t), t).unwrap();
        }
        n.cycle(t);
        if n.stop_due(1) {
            sent.push((t, n.stops()[1].data));
        }
    }
    assert!(sent[0].1, "the first cycle sends the start-up stop");
    let changes = sent.windows(2).filter(|w| w[0].1 != w[1].1).count();
    assert_eq!(changes, 1, "released once: {sent:?}");
    assert!(sent.len() <= 2 + (3.0 / 0.5) as usize + 1, "{} samples in 3 s: {sent:?}", sent.len());
    for w in sent.windows(2) {
        assert!(w[1].0 - w[0].0 <= 0.5 + 0.0021, "a gap of {} s without a stop", w[1].0 - w[0].0);
    }
    // A change goes out in the cycle it happens.
    n.on_joint_state(1, &state(&RIGHT, &q_right()[..3], t), t).unwrap_err();
    n.cycle(t + 0.001);
    assert!(n.stop_due(1) && n.stops()[1].data);
    // 0: every cycle.
    n.set_param("stop_heartbeat_s", &serde_json::json!(0.0)).unwrap();
    n.cycle(t + 0.002);
    assert!(n.stop_due(0) && n.stop_due(1));
}

#[test]
fn a_joint_state_with_the_injected_frame_id_panics_and_others_do_not() {
    let mut n = node();
    n.inject_panic_on_frame_id(Some("inject-panic".into()));
    n.on_joint_state(1, &state(&RIGHT, &q_right(), 1.0), 1.0).unwrap();
    let mut m = state(&RIGHT, &q_right(), 1.005);
    m.header.frame_id = "inject-panic".into();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| n.on_joint_state(1, &m, 1.005)));
    assert!(r.is_err());
}
