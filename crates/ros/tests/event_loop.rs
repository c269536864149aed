//! The shared event loop driven through a fake transport, on tokio's
//! paused clock: every timer follows its rate as soon as a parameter
//! update changes it (diagnostics and markers switched on from 0 Hz, the
//! cycle rate raised), the cell's voxel markers go out while markers are
//! on, and the loop ends when the transport closes. The two real
//! transports run this same loop; the DDS tests drive it over the wire.

use serde_json::{Value, json};
use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::time::Instant;
use workcell_guard_ros::event_loop::{Incoming, LoopContext, Transport, Trigger, serve};
use workcell_guard_ros::msg::{
    Bool, DiagnosticArray, Float64, JointTrajectory, ManipulatorGrant, MarkerArray, PlatenGrant, SetContactResponse,
    SetPriorityResponse, Time, TriggerResponse,
};
use workcell_guard_ros::params::NodeParams;
use workcell_guard_ros::startup::build_from;

#[derive(Clone, Debug, PartialEq)]
enum Out {
    Stop(usize),
    Diagnostics,
    RobotMarkers,
    CellMarkers,
    Hold(usize),
    Cancel(usize),
    Retreat(usize),
    Grant(usize),
    Answer,
}

struct Fake {
    rx: UnboundedReceiver<Incoming<u32>>,
    start: Instant,
    log: Rc<RefCell<Vec<(f64, Out)>>>,
}

impl Fake {
    fn record(&self, o: Out) {
        self.log.borrow_mut().push((self.now_s(), o));
    }
}

impl Transport for Fake {
    type Request = u32;

    async fn next(&mut self) -> Option<Incoming<u32>> {
        self.rx.recv().await
    }
    fn now_s(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }
    fn publish_stop(&mut self, robot: usize, _: Bool) {
        self.record(Out::Stop(robot));
    }
    fn publish_speed(&mut self, _: usize, _: Float64) {}
    fn publish_state(&mut self, _: usize, _: &workcell_guard_ros::msg::GuardState) {}
    fn hold(&mut self, robot: usize, _: Time) {
        self.record(Out::Hold(robot));
    }
    fn cancel_goals(&mut self, robot: usize) {
        self.record(Out::Cancel(robot));
    }
    fn send_trajectory(&mut self, robot: usize, _: &JointTrajectory) {
        self.record(Out::Retreat(robot));
    }
    fn publish_arm_grant(&mut self, robot: usize, g: &ManipulatorGrant) {
        // No joint states, no plans: nothing to arbitrate.
        assert_eq!(g.state, ManipulatorGrant::NO_PLAN, "{g:?}");
        self.record(Out::Grant(robot));
    }
    fn publish_grant(&mut self, _: usize, _: &PlatenGrant) {}
    fn publish_diagnostics(&mut self, _: &DiagnosticArray) {
        self.record(Out::Diagnostics);
    }
    fn publish_markers(&mut self, m: &MarkerArray) {
        let cell = !m.markers.is_empty() && m.markers.iter().all(|k| k.ns.starts_with("cell/"));
        self.record(if cell { Out::CellMarkers } else { Out::RobotMarkers });
    }
    fn answer_trigger(&mut self, _: Trigger, _: u32, _: TriggerResponse) {
        self.record(Out::Answer);
    }
    fn answer_set_contact(&mut self, _: u32, _: SetContactResponse) {
        self.record(Out::Answer);
    }
    fn answer_set_priority(&mut self, _: u32, _: SetPriorityResponse) {
        self.record(Out::Answer);
    }
}

fn count(log: &[(f64, Out)], from: f64, to: f64, what: impl Fn(&Out) -> bool) -> usize {
    log.iter().filter(|(t, o)| *t >= from && *t < to && what(o)).count()
}

fn sample_params() -> NodeParams {
    NodeParams {
        workcell_file: Some(PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../config/workcell.yaml"))),
        rate_hz: 10.0,
        cycle_on_joint_state: false,
        diagnostics_hz: 0.0,
        markers_hz: 0.0,
        stop_heartbeat_s: 0.0,
        ..NodeParams::default()
    }
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn every_timer_follows_its_rate_and_the_loop_ends_with_the_transport() {
    let cache = tempfile::tempdir().unwrap();
    let mut core = build_from(sample_params(), Some(cache.path())).expect("the sample cell builds");
    let robots = core.cell().manipulators.len();
    let (tx, rx) = unbounded_channel::<Incoming<u32>>();
    let (ptx, prx): (UnboundedSender<Vec<(String, Value)>>, _) = unbounded_channel();
    let log = Rc::new(RefCell::new(Vec::new()));
    let start = Instant::now();
    let mut fake = Fake { rx, start, log: log.clone() };
    let mut cx = LoopContext {
        params: prx,
        checked_cell: Arc::new(Mutex::new(Arc::new(core.cell().clone()))),
        rebuild: Arc::new(|_| Err("no reloads here".into())),
        panicked: Arc::new(AtomicBool::new(false)),
    };
    let at = |s: f64| start + Duration::from_secs_f64(s);
    let driver = async {
        tokio::time::sleep_until(at(2.0)).await;
        ptx.send(vec![("diagnostics_hz".into(), json!(5.0))]).unwrap();
        tokio::time::sleep_until(at(4.0)).await;
        ptx.send(vec![("markers_hz".into(), json!(4.0))]).unwrap();
        tokio::time::sleep_until(at(6.0)).await;
        ptx.send(vec![("rate_hz".into(), json!(50.0))]).unwrap();
        tokio::time::sleep_until(at(8.0)).await;
        ptx.send(vec![("diagnostics_hz".into(), json!(0.0))]).unwrap();
        ptx.send(vec![("markers_hz".into(), json!(0.0))]).unwrap();
        tokio::time::sleep_until(at(10.0)).await;
        tx.send(Incoming::ResetStop(7)).unwrap();
        tokio::time::sleep_until(at(10.5)).await;
        drop(tx);
    };
    let ((), ()) = tokio::join!(serve(&mut fake, &mut core, &mut cx, std::future::pending()), driver);
    let log = log.borrow();
    let stops = |a, b| count(&log, a, b, |o| matches!(o, Out::Stop(_))) as f64 / robots as f64;
    let diag = |a, b| count(&log, a, b, |o| *o == Out::Diagnostics);
    let robot_markers = |a, b| count(&log, a, b, |o| *o == Out::RobotMarkers);
    let cell_markers = |a, b| count(&log, a, b, |o| *o == Out::CellMarkers);

    // 0 Hz: nothing; switched on: at once, at the new rate.
    assert_eq!(diag(0.0, 2.0), 0, "diagnostics off at 0 Hz");
    let d = diag(2.0, 4.0);
    assert!((9..=11).contains(&d), "diagnostics at 5 Hz for 2 s: {d}");
    assert_eq!(robot_markers(0.0, 4.0) + cell_markers(0.0, 4.0), 0, "markers off at 0 Hz");
    let m = robot_markers(4.0, 6.0);
    assert!((7..=9).contains(&m), "robot markers at 4 Hz for 2 s: {m}");
    let c = cell_markers(4.0, 8.0);
    assert!((3..=5).contains(&c), "cell voxel markers at 1 Hz while markers are on: {c}");
    // The cycle's rate, raised.
    let before = stops(2.0, 6.0) / 4.0;
    let after = stops(6.5, 8.0) / 1.5;
    assert!((9.0..=11.0).contains(&before), "cycles at 10 Hz: {before}/s");
    assert!((48.0..=52.0).contains(&after), "cycles at 50 Hz: {after}/s");
    // Switched off again.
    assert_eq!(diag(8.1, 11.0) + robot_markers(8.1, 11.0) + cell_markers(8.1, 11.0), 0);
    // A service call is answered; the loop ends once the transport closes.
    assert_eq!(count(&log, 10.0, 10.5, |o| *o == Out::Answer), 1, "reset_stop answered once");
    // Robots without joint states stay stopped: the controller is told to
    // hold every 0.1 s and its goals are cancelled every second.
    let holds = count(&log, 2.0, 6.0, |o| *o == Out::Hold(0));
    let cancels = count(&log, 2.0, 6.0, |o| *o == Out::Cancel(0));
    // (Cycles 0.1 s apart meet the 0.1 s period or just miss it.)
    assert!((20..=41).contains(&holds), "holds every 0.1–0.2 s for 4 s: {holds}");
    assert!((3..=5).contains(&cancels), "cancels at 1 Hz for 4 s: {cancels}");
    // Every robot's grant goes out every cycle (as its stop does, with a
    // heartbeat of 0); no retreat without a back-away.
    for r in 0..robots {
        let grants = count(&log, 0.0, 11.0, |o| *o == Out::Grant(r));
        assert_eq!(grants, count(&log, 0.0, 11.0, |o| *o == Out::Stop(r)), "robot {r}'s grants and stops");
        assert!(grants > 100, "{grants} grants");
    }
    assert_eq!(count(&log, 0.0, 11.0, |o| matches!(o, Out::Retreat(_))), 0);
    let last = log.last().map_or(0.0, |(t, _)| *t);
    assert!(last < 10.6, "nothing after the transport closed (last at {last} s)");
}
