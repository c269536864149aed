//! What the node tells about each robot beside its stop: `<robot>/state`
//! (GuardState) with its reason codes, the speed scaling published on
//! change rather than every cycle, and the stale-sensing policy
//! (`cloud_timeout_s`, `cloud_policy`).

use crate::ros_node::{cloud, node, run, status};
use serde_json::json;
use workcell_guard_ros::msg::{GuardState, Time};

fn stamp(t: f64) -> Time {
    Time { sec: t.floor() as i32, nanosec: ((t - t.floor()) * 1e9) as u32 }
}

#[test]
fn the_state_says_why_a_robot_stops_and_is_taken_again_only_when_it_changes() {
    let mut n = node();
    n.cycle(0.5);
    assert!(n.state_changed(0));
    let s = n.state(0, stamp(0.5)).unwrap().clone();
    assert_eq!((s.robot.as_str(), s.decision, s.source), ("arm_left", GuardState::STOP, GuardState::SOURCE_GUARD));
    assert_eq!(s.reason, GuardState::REASON_NO_JOINT_STATE, "{s:?}");
    assert!(s.reason_text.contains("no joint state"), "{s:?}");
    assert_eq!(s.header.frame_id, "world");
    n.cycle(0.502);
    assert!(!n.state_changed(0), "nothing changed, nothing due");
    let mut t = 1.0;
    run(&mut n, &mut t, 3.0);
    assert!(n.state_changed(0));
    let s = n.state(0, stamp(t)).unwrap().clone();
    assert_eq!((s.decision, s.source, s.reason), (GuardState::RUN, GuardState::SOURCE_NONE, GuardState::REASON_NONE));
    assert!(s.reason_text.is_empty() && s.clearance_m > 0.0 && s.speed_scale > 0.0, "{s:?}");
    assert!(s.time_to_contact_s.is_infinite(), "{s:?}");
    assert_eq!(s.grant_state, 4, "no plan: NO_PLAN");
    assert!(n.state(9, stamp(t)).is_none(), "no such robot");
}

#[test]
fn speed_scaling_goes_out_when_it_changes_by_a_step_or_on_the_heartbeat_not_every_cycle() {
    let mut n = node();
    let mut t = 1.0;
    let mut due = 0;
    let mut cycles = 0;
    run(&mut n, &mut t, 2.0);
    let end = t + 3.0;
    while t < end {
        let until = t + 0.002;
        run(&mut n, &mut t, until);
        cycles += 1;
        due += usize::from(n.speed_due(0));
    }
    // At rest the scaling is constant: the heartbeat (1 s) only.
    assert!((2..=5).contains(&due), "{due} of {cycles} cycles");
}

#[test]
fn with_a_cloud_timeout_stale_sensing_stops_every_robot_or_only_warns() {
    let mut n = node();
    n.set_param("cloud_timeout_s", &json!(0.5)).unwrap();
    let mut t = 1.0;
    run(&mut n, &mut t, 3.0);
    assert!(n.stops().iter().all(|s| s.data), "no cloud yet: every robot stopped");
    let s = n.state(1, stamp(t)).unwrap();
    assert_eq!((s.source, s.reason), (GuardState::SOURCE_STALE_SENSING, GuardState::REASON_STALE_SENSING));
    let d = n.diagnostics(stamp(t));
    assert!(status(d, "workcell_guard: node").message.contains("no cloud on `points` yet"));
    // A cloud far from everything: released; stale again after the timeout.
    n.on_cloud(&cloud("world", &[[0.0, -1.4, 0.1]]), t).unwrap();
    let until = t + 0.3;
    run(&mut n, &mut t, until);
    assert!(n.stops().iter().all(|s| !s.data), "fresh cloud: released");
    let until = t + 0.4;
    run(&mut n, &mut t, until);
    assert!(n.stops().iter().all(|s| s.data), "cloud 0.7 s old: stopped again");
    assert!(n.stop_cause(0).contains("sensed obstacles stale"), "{}", n.stop_cause(0));
    let d = n.diagnostics(stamp(t));
    assert!(status(d, "workcell_guard: node").message.contains("s old (every robot stopped)"));
    // `warn`: reported, nobody stopped for it.
    n.set_param("cloud_policy", &json!("warn")).unwrap();
    let until = t + 0.1;
    run(&mut n, &mut t, until);
    assert!(n.stops().iter().all(|s| !s.data));
    let d = n.diagnostics(stamp(t));
    assert!(status(d, "workcell_guard: node").message.contains("cloud_policy warn"));
    assert!(n.set_param("cloud_policy", &json!("sometimes")).unwrap_err().to_string().contains("stop, warn"));
}
