//! What an integrator meets driving the node from outside, checked on the
//! node itself (the same checks over the wire are in `ros_rclpy`): the
//! state's words agree with the diagnostics for every stop cause;
//! parameter sets are checked as a whole; priorities stay unique; platen
//! poses are read in their frame; a platen move can be given up; the
//! diagnostics do not say an arm at rest moves.

use crate::ros_node::{cloud, node, run, state, status};
use serde_json::{Value, json};
use workcell_guard_core::platen::CellMap;
use workcell_guard_ros::msg::{
    GuardState, Header, PlatenGrant, PlatenMoveRequest, Point, Pose, Pose2D, PoseStamped, Quaternion, Time,
};
use workcell_guard_ros::node::{GuardNode, ServiceError};

fn stamp(t: f64) -> Time {
    Time { sec: t.floor() as i32, nanosec: ((t - t.floor()) * 1e9) as u32 }
}

const RIGHT: [&str; 8] = ["j1", "j2", "j3", "j4", "j5", "j6", "j7", "finger_a_joint"];

/// Robot 1's state and its diagnostic status agree: stopped, the source
/// and reason `want`, and the state's text is what the status says.
fn agrees(n: &mut GuardNode, t: f64, want: (u8, u8), says: &str) {
    let s = n.state(1, stamp(t)).unwrap().clone();
    let d = n.diagnostics(stamp(t)).clone();
    let st = status(&d, "workcell_guard: arm_right");
    println!("source {} reason {}: state `{}`; diagnostics `{}`", s.source, s.reason, s.reason_text, st.message);
    assert_eq!(s.decision, GuardState::STOP);
    assert_eq!((s.source, s.reason), want, "{s:?}");
    assert!(s.reason_text.contains(says), "state text `{}` does not say `{says}`", s.reason_text);
    assert!(st.message.contains(&s.reason_text), "diagnostics `{}` do not carry `{}`", st.message, s.reason_text);
}

const Q_RIGHT: [f64; 8] = [-1.5, 1.2, 0.0, -0.3, 0.0, 0.0, 0.0, 0.0];

#[test]
fn the_state_names_a_refused_joint_state_as_the_diagnostics_do() {
    let mut n = node();
    let mut t = 1.0;
    run(&mut n, &mut t, 2.0);
    // A state without j1, fresh states of the rest flowing on: refused,
    // and named for what it is (not "warming up", not its age).
    for _ in 0..200 {
        t += 0.005;
        let _ = n.on_joint_state(1, &state(&RIGHT[1..], &Q_RIGHT[1..], t), t);
        n.cycle(t);
    }
    agrees(&mut n, t, (GuardState::SOURCE_REFUSED_INPUT, GuardState::REASON_REFUSED_INPUT), "joint state refused");
    let s = n.state(1, stamp(t)).unwrap();
    assert!(!s.reason_text.contains("warming up") && !s.reason_text.contains(" s old"), "{}", s.reason_text);
}

#[test]
fn the_state_and_the_diagnostics_agree_for_every_cause_the_node_can_be_put_in() {
    // No joint state yet.
    let mut n = node();
    n.cycle(0.5);
    agrees(&mut n, 0.5, (GuardState::SOURCE_GUARD, GuardState::REASON_NO_JOINT_STATE), "no joint state");
    // Stale: the states stop.
    let mut t = 1.0;
    run(&mut n, &mut t, 2.0);
    for _ in 0..200 {
        t += 0.002;
        n.cycle(t);
    }
    agrees(&mut n, t, (GuardState::SOURCE_GUARD, GuardState::REASON_STALE_JOINT_STATE), " s old");
    // NaN: refused by the core with its own reason.
    let mut n = node();
    let mut t = 1.0;
    run(&mut n, &mut t, 2.0);
    let mut q = Q_RIGHT;
    q[2] = f64::NAN;
    t += 0.005;
    let _ = n.on_joint_state(1, &state(&RIGHT, &q, t), t);
    n.cycle(t);
    agrees(&mut n, t, (GuardState::SOURCE_GUARD, GuardState::REASON_BAD_JOINT_STATE), "joint state refused");
    // Stale sensing.
    let mut n = node();
    n.set_param("cloud_timeout_s", &json!(0.5)).unwrap();
    let mut t = 1.0;
    run(&mut n, &mut t, 3.0);
    agrees(&mut n, t, (GuardState::SOURCE_STALE_SENSING, GuardState::REASON_STALE_SENSING), "sensed obstacles stale");
    // A cloud: released.
    n.on_cloud(&cloud("world", &[[0.0, -1.4, 0.1]]), t).unwrap();
    let until = t + 0.3;
    run(&mut n, &mut t, until);
    assert_eq!(n.state(1, stamp(t)).unwrap().decision, GuardState::RUN);
}

#[test]
fn parameters_valid_together_are_taken_in_either_order_and_a_refused_set_changes_nothing() {
    let mut n = node();
    let (c, r) = (n.cell().margins.clearance_m, n.cell().margins.release_m);
    println!("workcell margins: clearance {c} release {r}");
    // Clearance raised past the old release, release with it: valid
    // together, in either order.
    let (c2, r2) = (r + 0.005, r + 0.02);
    let set = |n: &mut GuardNode, u: &[(&str, Value)]| {
        let refs: Vec<(&str, &Value)> = u.iter().map(|(k, v)| (*k, v)).collect();
        n.set_params(&refs)
    };
    assert!(n.set_param("clearance_m", &json!(c2)).is_err(), "alone, above the release margin: refused");
    set(&mut n, &[("clearance_m", json!(c2)), ("release_m", json!(r2))]).unwrap();
    assert_eq!((n.params().clearance_m, n.params().release_m), (Some(c2), Some(r2)));
    let mut n = node();
    set(&mut n, &[("release_m", json!(r2)), ("clearance_m", json!(c2))]).unwrap();
    // Invalid together: nothing applied.
    let before = n.params().clone();
    let e = set(&mut n, &[("release_m", json!(0.001)), ("rate_hz", json!(100.0))]).unwrap_err();
    assert!(e.to_string().contains("release"), "{e}");
    assert_eq!(n.params(), &before, "a refused set changes nothing");
    // Read at start: refused, whatever else is in the set.
    let e = set(&mut n, &[("rate_hz", json!(100.0)), ("use_sim_time", json!(true))]).unwrap_err();
    assert!(e.to_string().contains("use_sim_time") && e.to_string().contains("read-only"), "{e}");
    assert_eq!(n.params(), &before);
    // Deleting and NaN are told apart.
    let e = n.set_param("clearance_m", &Value::Null).unwrap_err().to_string();
    assert!(e.contains("cannot be deleted"), "{e}");
    let e = n.set_param("clearance_m", &json!("NaN")).unwrap_err().to_string();
    assert!(e.contains("finite"), "{e}");
}

#[test]
fn a_priority_another_robot_has_is_refused_naming_it() {
    let mut n = node();
    let e = n.set_priority("arm_right", 20).unwrap_err();
    assert!(matches!(&e, ServiceError::PriorityTaken { holder, .. } if holder == "arm_left"), "{e}");
    assert!(e.to_string().contains("arm_left"), "{e}");
    assert!(n.set_priority("arm_right", 10).is_ok(), "its own priority again");
    assert!(n.set_priority("arm_right", 30).is_ok());
    assert_eq!(n.guard().priority(1), Some(30));
}

#[test]
fn the_diagnostics_of_an_arm_at_rest_do_not_say_it_moves() {
    let mut n = node();
    let mut t = 1.0;
    run(&mut n, &mut t, 3.0);
    let d = n.diagnostics(stamp(t));
    for name in ["workcell_guard: arm_left", "workcell_guard: arm_right"] {
        let m = &status(d, name).message;
        assert!(!m.contains("moving"), "{name}: {m}");
        assert!(m.starts_with(workcell_guard_ros::convert::CLEAR), "{name}: {m}");
    }
}

fn unit_pose(frame: &str, x: f64, y: f64, yaw: f64, t: f64) -> PoseStamped {
    let (s, c) = (0.5 * yaw).sin_cos();
    PoseStamped {
        header: Header { stamp: stamp(t), frame_id: frame.into() },
        pose: Pose { position: Point { x, y, z: 0.8 }, orientation: Quaternion { x: 0.0, y: 0.0, z: s, w: c } },
    }
}

fn move_to(id: u64, x: f64, y: f64) -> PlatenMoveRequest {
    PlatenMoveRequest { header: Header::default(), request_id: id, target: Pose2D { x, y, theta: 0.0 } }
}

#[test]
fn platen_poses_are_read_in_their_frame_and_an_unknown_frame_stops_the_unit_by_name() {
    let mut n = node();
    let t = 5.0;
    // The sample's surface corner stands at (-0.5, -0.5) in `world`: a
    // unit at (0.2, 0.3) on the surface is at (-0.3, -0.2) in the cell.
    n.on_platen_pose(0, &unit_pose("world", -0.3, -0.2, 0.0, t));
    n.on_platen_pose(1, &unit_pose("surface", 0.8, 0.7, 0.0, t));
    n.cycle(t);
    let p = n.guard().platen().unwrap().pose(0);
    assert!((p[0] - 0.2).abs() < 1e-9 && (p[1] - 0.3).abs() < 1e-9, "{p:?}");
    n.on_move_request(0, &move_to(1, 0.3, 0.3));
    n.cycle(t + 0.001);
    assert_eq!(n.grants()[0].1.result, PlatenGrant::GRANTED, "{:?}", n.grants());
    // A frame it cannot place: the unit stops, the frame named.
    n.on_platen_pose(0, &unit_pose("base_link", 0.2, 0.3, 0.0, t + 0.002));
    n.cycle(t + 0.002);
    let d = n.diagnostics(stamp(t));
    let m = &status(d, "workcell_guard: mover_a").message;
    assert!(m.contains("`base_link`") && m.contains("`surface`") && m.contains("`world`"), "{m}");
    // A pose in a known frame again: it runs on.
    n.on_platen_pose(0, &unit_pose("surface", 0.21, 0.3, 0.0, t + 0.003));
    n.cycle(t + 0.003);
    let d = n.diagnostics(stamp(t));
    assert!(status(d, "workcell_guard: mover_a").message.starts_with("moving"), "{d:?}");
}

#[test]
fn a_platen_move_is_given_up_by_a_request_to_stay_freeing_what_it_held() {
    let mut n = node();
    let t = 5.0;
    n.on_platen_pose(0, &unit_pose("surface", 0.2, 0.3, 0.0, t));
    n.on_platen_pose(1, &unit_pose("surface", 0.8, 0.7, 0.0, t));
    n.on_move_request(0, &move_to(1, 0.7, 0.3));
    n.cycle(t + 0.001);
    assert_eq!(n.grants()[0].1.result, PlatenGrant::GRANTED);
    let held = n.guard().platen().unwrap().unit_map(0).count();
    // It never drives; another request is refused as busy.
    n.on_platen_pose(0, &unit_pose("surface", 0.2, 0.3, 0.0, t + 0.01));
    n.on_move_request(0, &move_to(2, 0.2, 0.6));
    n.cycle(t + 0.011);
    assert!(n.grants()[0].1.reason.starts_with("busy"), "{:?}", n.grants()[0].1);
    // A request to stay where it is gives the move up.
    n.on_move_request(0, &move_to(3, 0.2, 0.3));
    n.cycle(t + 0.012);
    let g = &n.grants()[0].1;
    assert_eq!((g.request_id, g.result, g.goal.x, g.goal.y), (3, PlatenGrant::GRANTED, 0.2, 0.3), "{g:?}");
    let kept = n.guard().platen().unwrap().unit_map(0).count();
    println!("cells held: {held} while granted, {kept} after giving up");
    assert!(kept * 2 < held, "the move's area is freed: {kept} of {held} cells kept");
    n.guard().platen().unwrap().assert_invariants();
    let d = n.diagnostics(stamp(t));
    assert_eq!(status(d, "workcell_guard: mover_a").message, "idle");
    // And it may ask anew.
    n.on_move_request(0, &move_to(4, 0.2, 0.6));
    n.cycle(t + 0.013);
    assert_eq!(n.grants()[0].1.result, PlatenGrant::GRANTED, "{:?}", n.grants()[0].1);
}
