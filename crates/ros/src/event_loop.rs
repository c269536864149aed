//! The node's one event loop, written once for every transport.
//!
//! A transport ([`Transport`]) hands over what arrives, in
//! [`Incoming`] (joint states first when several are ready), and puts on
//! the wire what the loop gives it; it decides nothing. The loop owns the
//! timers (the cycle at `rate_hz`, diagnostics at `diagnostics_hz`, robot
//! markers at `markers_hz`, the cell's voxels at 1 Hz while markers are
//! on) and re-makes each one as soon as a parameter update changes its
//! rate. A joint state runs a split cycle when `cycle_on_joint_state` is
//! set: its robot's stop goes out before the others are decided.
//!
//! What goes out comes from the core's commands
//! ([`workcell_guard_core::guard::Command`]), converted by [`GuardNode`]:
//! a stop, a speed scaling and a grant only when it is due (it changed, or
//! the heartbeat came round), the controller's hold and goal cancel when
//! the core asks for them.

use crate::convert::to_time;
use crate::cycle_timer::CycleTimer;
use crate::msg::{
    Bool, DiagnosticArray, DisplayTrajectory, Float64, GuardState, JointState, JointTrajectory, ManipulatorGrant,
    MarkerArray, PlatenGrant, PlatenMoveRequest, PlatenPathRequest, PointCloud2, PoseStamped, SetContactRequest,
    SetContactResponse, SetPriorityRequest, SetPriorityResponse, Time, TriggerResponse,
};
use crate::node::GuardNode;
use serde_json::Value;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;
use tokio::sync::mpsc::UnboundedReceiver;
use workcell_guard_description::workcell::Workcell;

/// What a transport hands to the loop. `R` identifies a service request
/// for its answer.
#[derive(Debug)]
pub enum Incoming<R> {
    /// A joint state for robot `.0`.
    JointState(usize, JointState),
    /// A planned trajectory for robot `.0`.
    Trajectory(usize, JointTrajectory),
    /// A MoveIt display trajectory, for the robots `.0` lists.
    Display(Vec<usize>, DisplayTrajectory),
    /// Sensed obstacles.
    Cloud(PointCloud2),
    /// Platen unit `.0`'s pose.
    PlatenPose(usize, PoseStamped),
    /// Platen unit `.0` asks to move.
    MoveRequest(usize, PlatenMoveRequest),
    /// Platen unit `.0` asks for a path.
    PathRequest(usize, PlatenPathRequest),
    /// `~/reset_stop` was called.
    ResetStop(R),
    /// `~/reload` was called.
    Reload(R),
    /// `~/set_contact` was called.
    SetContact(R, SetContactRequest),
    /// `~/set_priority` was called.
    SetPriority(R, SetPriorityRequest),
    /// A message that could not be decoded: which kind, and why.
    Undecodable(&'static str, String),
}

/// The two `std_srvs/Trigger` services.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// `~/reset_stop`.
    ResetStop,
    /// `~/reload`.
    Reload,
}

/// A call on the node that is no message on a topic: a parameter set
/// through the parameter services, a service call. The node records them as
/// metadata records named [`crate::bag::CALL`], each with its instant (`time_ns`).
#[derive(Clone, Debug, PartialEq)]
pub enum Call {
    /// A parameter set to a value (JSON).
    Param {
        /// The parameter.
        name: String,
        /// Its value, as JSON text.
        value: String,
    },
    /// `~/set_priority`.
    SetPriority {
        /// The robot.
        robot: String,
        /// Its new priority.
        priority: i32,
    },
    /// `~/set_contact`.
    SetContact {
        /// One body.
        a: String,
        /// The other.
        b: String,
        /// Allowed or forbidden.
        allowed: bool,
    },
    /// `~/reset_stop`.
    ResetStop,
    /// `~/reload`: the workcell loaded again and a new node swapped in.
    Reload,
}

/// A middleware binding: receives into [`Incoming`] and publishes what
/// the loop hands it. Publishing failures are the transport's to log.
#[allow(async_fn_in_trait)]
pub trait Transport {
    /// Identifies a service request.
    type Request;

    /// The next thing that arrived; `None` once the transport is closed.
    /// Must be cancel-safe (the loop races it against its timers).
    async fn next(&mut self) -> Option<Incoming<Self::Request>>;
    /// The node's clock, s.
    fn now_s(&self) -> f64;
    /// The node's clock, ns since the epoch (`None` where it cannot be
    /// read). The loop takes each instant from it once and hands the node
    /// the same reading in seconds ([`seconds`]), so a recording of those
    /// instants replays to the same decisions.
    fn now_ns(&self) -> Option<u64> {
        let s = self.now_s();
        (s.is_finite() && s >= 0.0).then(|| (s * 1e9).round() as u64)
    }
    /// Called with each arrival just before the node takes it, with the
    /// instant it takes it at (a recorder writes it down).
    fn record_input(&mut self, _m: &Incoming<Self::Request>, _now_ns: u64) {}
    /// Called with each cycle the timer runs, at its instant.
    fn record_cycle(&mut self, _now_ns: u64) {}
    /// Called with each call on the node that is no input: a parameter
    /// update it took, a reloaded workcell swapped in.
    fn record_call(&mut self, _call: &Call, _now_ns: u64) {}
    /// Robot `robot`'s stop flag.
    fn publish_stop(&mut self, robot: usize, stop: Bool);
    /// Robot `robot`'s speed scaling (where the workcell names a topic).
    fn publish_speed(&mut self, robot: usize, scaling: Float64);
    /// Tells robot `robot`'s controller to hold (an empty trajectory
    /// stamped `stamp`, where the workcell names its command topic).
    fn hold(&mut self, robot: usize, stamp: Time);
    /// Cancels every goal of robot `robot`'s trajectory action (where the
    /// workcell names it).
    fn cancel_goals(&mut self, robot: usize);
    /// Sends a trajectory (a back-away's retreat) on robot `robot`'s
    /// controller command topic (where the workcell names it).
    fn send_trajectory(&mut self, robot: usize, trajectory: &JointTrajectory);
    /// Robot `robot`'s state, as data.
    fn publish_state(&mut self, robot: usize, state: &GuardState);
    /// Robot `robot`'s grant.
    fn publish_arm_grant(&mut self, robot: usize, grant: &ManipulatorGrant);
    /// Platen unit `unit`'s grant.
    fn publish_grant(&mut self, unit: usize, grant: &PlatenGrant);
    /// The diagnostics.
    fn publish_diagnostics(&mut self, d: &DiagnosticArray);
    /// Markers (the robots', or the cell's voxels).
    fn publish_markers(&mut self, m: &MarkerArray);
    /// Whether anyone subscribes to the markers (they are built and sent
    /// only then); true where the transport cannot tell.
    fn markers_wanted(&self) -> bool {
        true
    }
    /// Publishers matched on robot `robot`'s joint-state topic (`None`
    /// where the transport cannot tell).
    fn joint_state_publishers(&self, _robot: usize) -> Option<usize> {
        None
    }
    /// Samples the transport dropped since start rather than wait for a
    /// subscriber that does not acknowledge (0 where it never drops).
    fn samples_dropped(&self) -> u64 {
        0
    }
    /// Peers on the node's topics that do not connect for their QoS: the
    /// topic, and how the two sides differ.
    fn qos_mismatches(&self) -> Vec<(String, String)> {
        Vec::new()
    }
    /// Answers a `std_srvs/Trigger` call.
    fn answer_trigger(&mut self, which: Trigger, request: Self::Request, answer: TriggerResponse);
    /// Answers a `SetContact` call.
    fn answer_set_contact(&mut self, request: Self::Request, answer: SetContactResponse);
    /// Answers a `SetPriority` call.
    fn answer_set_priority(&mut self, request: Self::Request, answer: SetPriorityResponse);
    /// Called each cycle: sends the answers held until their caller could
    /// take them (where the transport holds any).
    fn flush_answers(&mut self) {}
}

/// A reload's result: the new node, or why the workcell was refused.
pub type Reloaded = Result<GuardNode, String>;

/// Builds a node for a reload from the current parameters (on a thread
/// of its own: it loads URDFs and meshes and may sample a collision
/// matrix).
pub type Rebuild = Arc<dyn Fn(crate::params::NodeParams) -> Reloaded + Send + Sync>;

/// What the loop needs besides the node and the transport.
pub struct LoopContext {
    /// Parameter updates, already checked by the parameter services.
    pub params: UnboundedReceiver<Vec<(String, Value)>>,
    /// The workcell the parameter services check against; replaced on a
    /// reload.
    pub checked_cell: Arc<Mutex<Arc<Workcell>>>,
    /// Builds the node for `~/reload`.
    pub rebuild: Rebuild,
    /// Raised by the panic hook when any thread of the node panicked.
    pub panicked: Arc<AtomicBool>,
}

fn interval(hz: f64) -> tokio::time::Interval {
    let period = if hz > 0.0 { Duration::from_secs_f64(1.0 / hz) } else { Duration::from_secs(3600) };
    let mut i = tokio::time::interval(period);
    i.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    i
}

/// The loop's timers, each with the rate it was made for.
struct Timers {
    rate_hz: f64,
    cycle: CycleTimer,
    diagnostics_hz: f64,
    diagnostics: tokio::time::Interval,
    markers_hz: f64,
    markers: tokio::time::Interval,
    voxels: tokio::time::Interval,
    /// A DELETEALL went out since the markers' subscribers last came (or
    /// the node started or reloaded): rviz drops what an earlier run left.
    cleared: bool,
}

impl Timers {
    fn new(core: &GuardNode) -> Timers {
        let p = core.params();
        Timers {
            rate_hz: p.rate_hz,
            cycle: CycleTimer::new(p.rate_hz),
            diagnostics_hz: p.diagnostics_hz,
            diagnostics: interval(p.diagnostics_hz),
            markers_hz: p.markers_hz,
            markers: interval(p.markers_hz),
            voxels: interval(1.0),
            cleared: false,
        }
    }

    /// Whether markers go out now: someone listens; the first time after
    /// nobody did, a DELETEALL goes first.
    fn markers_due<T: Transport>(&mut self, t: &mut T, core: &GuardNode, stamp: Time) -> bool {
        if !t.markers_wanted() {
            self.cleared = false;
            return false;
        }
        if !self.cleared {
            self.cleared = true;
            let header = crate::msg::Header { stamp, frame_id: core.cell().cell_frame.clone() };
            let all = crate::msg::Marker { header, action: crate::msg::Marker::DELETEALL, ..Default::default() };
            t.publish_markers(&MarkerArray { markers: vec![all] });
        }
        true
    }

    /// Re-makes every timer whose rate the parameters changed.
    fn follow(&mut self, core: &GuardNode) {
        let p = core.params();
        if p.rate_hz != self.rate_hz {
            self.rate_hz = p.rate_hz;
            self.cycle = CycleTimer::new(p.rate_hz);
        }
        if p.diagnostics_hz != self.diagnostics_hz {
            self.diagnostics_hz = p.diagnostics_hz;
            self.diagnostics = interval(p.diagnostics_hz);
        }
        if p.markers_hz != self.markers_hz {
            self.markers_hz = p.markers_hz;
            self.markers = interval(p.markers_hz);
            self.voxels = interval(1.0);
        }
    }
}

/// Publishes what the last cycle decided: every due stop but `done`'s
/// (out already), speed scalings, controller holds, cancels and retreats,
/// manipulator grants, platen grants.
pub(crate) fn publish_cycle<T: Transport>(t: &mut T, core: &mut GuardNode, now_s: f64, done: Option<usize>) {
    let stops = core.stops();
    for r in (0..stops.len()).filter(|&r| Some(r) != done && core.stop_due(r)) {
        t.publish_stop(r, stops[r]);
    }
    for (r, s) in core.speed_scaling().iter().enumerate() {
        if core.speed_due(r) {
            t.publish_speed(r, *s);
        }
    }
    let stamp = to_time(now_s).unwrap_or_default();
    for (r, a) in core.actuation().iter().enumerate() {
        if a.hold {
            t.hold(r, stamp);
        }
        if a.cancel {
            t.cancel_goals(r);
        }
        if a.retreat
            && let Some(tr) = core.retreat(r)
        {
            t.send_trajectory(r, &tr);
        }
    }
    for r in 0..core.arm_grants().len() {
        if core.grant_due(r) {
            // A grant the writer dropped (a subscriber not acknowledging)
            // goes out again next cycle.
            let before = t.samples_dropped();
            t.publish_arm_grant(r, &core.arm_grants()[r]);
            core.grant_sent(r, t.samples_dropped() == before);
        }
    }
    for r in 0..core.stops().len() {
        if core.state_changed(r)
            && let Some(s) = core.state(r, stamp)
        {
            t.publish_state(r, s);
        }
    }
    for (unit, g) in core.grants() {
        t.publish_grant(*unit, g);
    }
}

fn trigger(success: bool, message: String) -> TriggerResponse {
    TriggerResponse { success, message }
}

/// Runs the node over `t` until `shutdown` resolves, the transport
/// closes, or a thread of the node panics.
// long: the loop's one select over every source of work
pub async fn serve<T: Transport>(
    t: &mut T,
    core: &mut GuardNode,
    cx: &mut LoopContext,
    shutdown: impl Future<Output = ()>,
) {
    let mut shutdown = std::pin::pin!(shutdown);
    let mut timers = Timers::new(core);
    let (reloaded_tx, reloaded_rx) = mpsc::channel::<Reloaded>();
    let mut reload_pending: Option<T::Request> = None;
    loop {
        // Shutdown, the cycle timer (a due tick lets up to 64 arrivals in
        // first: cycle_timer), then what arrived (joint states first, so a
        // state's stop waits for no other stream's poll).
        tokio::select! {
            biased;
            _ = &mut shutdown => break,
            scheduled = timers.cycle.tick() => {
                core.timer_tick(timers.cycle.seconds(scheduled));
                if cx.panicked.load(Ordering::SeqCst) {
                    tracing::error!("a thread of the node panicked: stopping every robot");
                    break;
                }
                if let Ok(r) = reloaded_rx.try_recv()
                    && let Some(id) = reload_pending.take()
                {
                    if r.is_ok() {
                        t.record_call(&Call::Reload, clock(t).0);
                    }
                    let answer = swap_in(core, cx, r);
                    t.answer_trigger(Trigger::Reload, id, answer);
                    timers.follow(core);
                    timers.cleared = false;
                }
                if core.timer_due() {
                    let (ns, now) = clock(t);
                    t.record_cycle(ns);
                    core.cycle(now);
                    publish_cycle(t, core, now, None);
                    t.flush_answers();
                }
            }
            Some(batch) = cx.params.recv() => {
                let updates: Vec<(&str, &Value)> = batch.iter().map(|(n, v)| (n.as_str(), v)).collect();
                match core.set_params(&updates) {
                    Ok(()) => {
                        for (name, v) in &batch {
                            tracing::info!("parameter {name} = {v}");
                            let call = Call::Param { name: name.clone(), value: v.to_string() };
                            t.record_call(&call, clock(t).0);
                        }
                    }
                    Err(e) => tracing::error!("parameters accepted by the service but refused: {e}"),
                }
                timers.follow(core);
            }
            m = t.next() => match m {
                None => break,
                Some(Incoming::Reload(id)) => {
                    if reload_pending.is_some() {
                        t.answer_trigger(Trigger::Reload, id, trigger(false, "a reload is already under way".into()));
                    } else {
                        let (params, rebuild, tx) = (core.params().clone(), cx.rebuild.clone(), reloaded_tx.clone());
                        let spawned = std::thread::Builder::new().name("reload".into()).spawn(move || {
                            let _ = tx.send(rebuild(params));
                        });
                        match spawned {
                            Ok(_) => reload_pending = Some(id),
                            Err(_) => t.answer_trigger(Trigger::Reload, id, trigger(false, "could not start the reload".into())),
                        }
                    }
                }
                Some(m) => {
                    let (ns, now) = clock(t);
                    t.record_input(&m, ns);
                    take(t, core, m, now);
                }
            },
            _ = timers.diagnostics.tick(), if timers.diagnostics_hz > 0.0 => {
                let stamp = to_time(t.now_s()).unwrap_or_default();
                for r in 0..core.stops().len() {
                    core.set_joint_state_publishers(r, t.joint_state_publishers(r));
                }
                core.set_qos_mismatches(t.qos_mismatches());
                core.set_samples_dropped(t.samples_dropped());
                t.publish_diagnostics(core.diagnostics(stamp));
                for r in 0..core.stops().len() {
                    if let Some(s) = core.state(r, stamp) {
                        t.publish_state(r, s);
                    }
                }
            }
            _ = timers.markers.tick(), if timers.markers_hz > 0.0 => {
                let stamp = to_time(t.now_s()).unwrap_or_default();
                if timers.markers_due(t, core, stamp) {
                    t.publish_markers(core.markers(stamp));
                }
            }
            _ = timers.voxels.tick(), if timers.markers_hz > 0.0 => {
                let stamp = to_time(t.now_s()).unwrap_or_default();
                if timers.markers_due(t, core, stamp) {
                    t.publish_markers(core.cell_markers(stamp));
                }
            }
        }
    }
}

/// A finished reload: the new node in, or the refusal; the answer to give.
fn swap_in(core: &mut GuardNode, cx: &LoopContext, r: Reloaded) -> TriggerResponse {
    match r {
        Ok(new) => {
            *core = new;
            if let Ok(mut c) = cx.checked_cell.lock() {
                *c = Arc::new(core.cell().clone());
            }
            tracing::warn!("workcell reloaded; every robot stops until its joint states warm up again");
            trigger(true, format!("reloaded {}", core.cell().file.display()))
        }
        Err(e) => {
            tracing::error!("reload refused: {e}");
            trigger(false, format!("reload refused, still running the previous workcell: {e}"))
        }
    }
}

/// `ns` in seconds, as the loop hands instants to the node.
pub fn seconds(ns: u64) -> f64 {
    ns as f64 * 1e-9
}

/// The transport's clock now: ns (0 where unreadable) and the node's
/// seconds of the same reading (NaN where unreadable).
fn clock<T: Transport>(t: &T) -> (u64, f64) {
    match t.now_ns() {
        Some(ns) => (ns, seconds(ns)),
        None => (0, f64::NAN),
    }
}

/// Hands one arrival to the node at `now` (s) (and, for a joint state
/// with `cycle_on_joint_state`, runs the split cycle and publishes it).
// long: one arm per kind of arrival
pub(crate) fn take<T: Transport>(t: &mut T, core: &mut GuardNode, m: Incoming<T::Request>, now: f64) {
    let robot_name = |core: &GuardNode, r: usize| core.cell().manipulators.get(r).map_or("?", |m| &m.name).to_string();
    // Refusals repeat as fast as their stream comes: one line a second per
    // robot and cause ([`crate::throttle`]).
    let warn = |source: &str, e: &dyn Refusal| {
        THROTTLE.with(|t| t.borrow_mut().warn(source, &crate::throttle::cause_of(&e), e));
    };
    match m {
        Incoming::JointState(robot, msg) => {
            if let Err(e) = core.on_joint_state(robot, &msg, now) {
                warn(&robot_name(core, robot), &e);
            }
            if core.params().cycle_on_joint_state {
                // This robot's stop first, then the others'.
                if let Some(stop) = core.cycle_first(now, robot).filter(|_| core.stop_due(robot)) {
                    t.publish_stop(robot, stop);
                    // A DDS stack sends from its own thread, which the
                    // kernel tends to wake on this core: let it run before
                    // the rest of the cycle.
                    std::thread::yield_now();
                }
                core.cycle_rest(now);
                publish_cycle(t, core, now, Some(robot));
            }
        }
        Incoming::Trajectory(robot, msg) => {
            if let Err(e) = core.on_trajectory(robot, &msg) {
                warn(&robot_name(core, robot), &e);
            }
        }
        Incoming::Display(robots, msg) => {
            for robot in robots {
                if let Err(e) = core.on_display_trajectory(robot, &msg) {
                    warn(&robot_name(core, robot), &e);
                }
            }
        }
        Incoming::Cloud(msg) => {
            if let Err(e) = core.on_cloud(&msg, now) {
                warn("point cloud refused", &e);
            }
        }
        Incoming::PlatenPose(unit, msg) => core.on_platen_pose(unit, &msg),
        // Requests are answered as they arrive, not at the next cycle: the
        // grant leaves within the round trip.
        Incoming::MoveRequest(unit, msg) => {
            core.on_move_request(unit, &msg);
            for (unit, g) in core.answer_requests(now) {
                t.publish_grant(*unit, g);
            }
        }
        Incoming::PathRequest(unit, msg) => {
            core.on_path_request(unit, &msg);
            for (unit, g) in core.answer_requests(now) {
                t.publish_grant(*unit, g);
            }
        }
        Incoming::ResetStop(id) => {
            let answer = match core.reset_stops() {
                Ok(m) => trigger(true, m),
                Err(e) => trigger(false, e.to_string()),
            };
            t.answer_trigger(Trigger::ResetStop, id, answer);
        }
        Incoming::SetContact(id, req) => {
            let (success, message) = match core.set_contact(&req.body_a, &req.body_b, req.allowed) {
                Ok(m) => (true, m),
                Err(e) => (false, e.to_string()),
            };
            t.answer_set_contact(id, SetContactResponse { success, message });
        }
        Incoming::SetPriority(id, req) => {
            let (success, message) = match core.set_priority(&req.robot, req.priority) {
                Ok(m) => (true, m),
                Err(e) => (false, e.to_string()),
            };
            t.answer_set_priority(id, SetPriorityResponse { success, message });
        }
        // The loop takes reloads itself (built beside the running node).
        Incoming::Reload(_) => tracing::error!("a reload reached the node's inputs: ignored"),
        Incoming::Undecodable(what, why) => {
            THROTTLE.with(|t| t.borrow_mut().warn(what, "not decoded", format_args!("not decoded: {why}")))
        }
    }
}

/// What `take` logs of a refused input: its message and its cause.
trait Refusal: std::fmt::Display + std::fmt::Debug {}
impl<E: std::fmt::Display + std::fmt::Debug> Refusal for E {}

thread_local! {
    /// The loop's throttled warnings (one loop per thread).
    static THROTTLE: std::cell::RefCell<crate::throttle::Throttle> =
        std::cell::RefCell::new(crate::throttle::Throttle::new(Duration::from_secs(1)));
}

/// The workcell's MoveIt display topics, each with the robots pointed at it
/// (one subscription per topic, whatever the transport).
pub fn display_topics(cell: &Workcell) -> Vec<(String, Vec<usize>)> {
    let mut out: Vec<(String, Vec<usize>)> = Vec::new();
    for (r, m) in cell.manipulators.iter().enumerate() {
        if let Some(d) = &m.topics.display_trajectory {
            match out.iter_mut().find(|(t, _)| t == d) {
                Some((_, robots)) => robots.push(r),
                None => out.push((d.clone(), vec![r])),
            }
        }
    }
    out
}
