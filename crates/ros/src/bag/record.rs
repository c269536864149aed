//! The node writing its own recording: a transport around the real one
//! that writes down, as a rosbag2 MCAP, every input at the instant the
//! node took it, every timer cycle's instant (on `~/cycle`), and
//! everything the node published. A replay of it
//! ([`crate::replay`]) gives the same decisions.

use super::Msg;
use super::{BagError, BagWriter, Call};
use crate::event_loop::{self, Incoming, LoopContext, Transport, Trigger};
use crate::msg::{
    Bool, DiagnosticArray, Float64, JointTrajectory, ManipulatorGrant, MarkerArray, PlatenGrant, RosMessage,
    SetContactResponse, SetPriorityResponse, Time, TriggerResponse,
};
use crate::node::GuardNode;
use crate::topics::{Role, Topics};
use serde::Serialize;
use std::collections::BTreeMap;

/// The metadata record naming the workcell and parameters of the node
/// that wrote a recording.
pub const METADATA: &str = "workcell_guard";

/// How often the recording is flushed to its file, ns of the node's clock.
const FLUSH_NS: u64 = 1_000_000_000;

/// The metadata record counting inputs the node took but could not record.
pub const UNRECORDED: &str = "workcell_guard/unrecorded";

/// The node's own recording, where its `record_file` names one: the file
/// created, with a [`METADATA`] record holding `workcell_file` and each
/// parameter's value as `param.<name>` (JSON).
pub fn open(core: &GuardNode) -> Result<Option<BagWriter>, BagError> {
    let Some(path) = &core.params().record_file else {
        return Ok(None);
    };
    let mut bag = BagWriter::create(path)?;
    let mut m = BTreeMap::new();
    if let Some(w) = &core.params().workcell_file {
        let w = std::path::absolute(w).unwrap_or_else(|_| w.clone());
        m.insert("workcell_file".to_string(), w.display().to_string());
    }
    for (k, v) in crate::node::declared_parameters(core.params(), core.cell()) {
        m.insert(format!("param.{k}"), v.to_string());
    }
    bag.metadata(METADATA, m)?;
    Ok(Some(bag))
}

/// Serves `io` through the event loop until `shutdown`, recording into
/// `bag` where there is one (and completing the file at the end).
pub async fn serve<T: Transport>(
    io: &mut T,
    bag: Option<BagWriter>,
    topics: Topics,
    core: &mut GuardNode,
    cx: &mut LoopContext,
    shutdown: impl Future<Output = ()>,
) {
    let Some(bag) = bag else {
        return event_loop::serve(io, core, cx, shutdown).await;
    };
    let mut rec = Recorder::new(io, bag, topics);
    event_loop::serve(&mut rec, core, cx, shutdown).await;
    match rec.finish() {
        Ok(n) => tracing::info!("recorded {n} messages"),
        Err(e) => tracing::error!("the recording is incomplete: {e}"),
    }
}

/// A transport that records what passes through `inner` into `bag`.
pub struct Recorder<'a, T> {
    /// The transport that talks to the wire.
    pub inner: &'a mut T,
    bag: Option<BagWriter>,
    topics: Topics,
    /// Messages written.
    pub written: usize,
    /// Inputs taken but not written (MoveIt display trajectories: their
    /// `trajectory_start` is not decoded, so they cannot be written whole).
    pub unrecorded: usize,
    /// When the file was last flushed, ns.
    flushed_ns: u64,
    /// The first write that failed (recording stops there; the node runs on).
    pub failed: Option<BagError>,
}

impl<'a, T: Transport> Recorder<'a, T> {
    /// Records `inner`'s traffic on `topics` into `bag`.
    pub fn new(inner: &'a mut T, bag: BagWriter, topics: Topics) -> Recorder<'a, T> {
        Recorder { inner, bag: Some(bag), topics, written: 0, unrecorded: 0, flushed_ns: 0, failed: None }
    }

    fn put<M: Serialize + RosMessage>(&mut self, role: Role, ns: u64, msg: &M) {
        let (Some(bag), Some(topic)) = (self.bag.as_mut(), self.topics.name(role)) else {
            return;
        };
        match bag.write(topic, ns, msg) {
            Ok(()) => self.written += 1,
            Err(e) => self.stop(e),
        }
    }

    fn call(&mut self, ns: u64, call: &Call) {
        let Some(bag) = self.bag.as_mut() else {
            return;
        };
        if let Err(e) = bag.call(ns, call) {
            self.stop(e);
        }
    }

    /// A write failed: the recording stops there (the node runs on).
    fn stop(&mut self, e: BagError) {
        tracing::error!("recording stopped: {e}");
        self.failed = Some(e);
        self.bag = None;
    }

    fn stamp(&self) -> u64 {
        self.inner.now_ns().unwrap_or(0)
    }

    /// Completes the file (summary and index): the messages written.
    pub fn finish(mut self) -> Result<usize, BagError> {
        let unrecorded = BTreeMap::from([("display_trajectories".to_string(), self.unrecorded.to_string())]);
        match (self.failed.take(), self.bag.take()) {
            (Some(e), _) => Err(e),
            (None, Some(mut bag)) => {
                bag.metadata(UNRECORDED, unrecorded).and_then(|()| bag.finish()).map(|()| self.written)
            }
            (None, None) => Ok(self.written),
        }
    }
}

impl<T: Transport> Transport for Recorder<'_, T> {
    type Request = T::Request;

    async fn next(&mut self) -> Option<Incoming<T::Request>> {
        self.inner.next().await
    }

    fn now_s(&self) -> f64 {
        self.inner.now_s()
    }

    fn now_ns(&self) -> Option<u64> {
        self.inner.now_ns()
    }

    fn record_input(&mut self, m: &Incoming<T::Request>, ns: u64) {
        match m {
            Incoming::JointState(r, msg) => self.put(Role::JointState(*r), ns, msg),
            Incoming::Trajectory(r, msg) => self.put(Role::Plan(*r), ns, msg),
            Incoming::PlatenPose(u, msg) => self.put(Role::PlatenPose(*u), ns, msg),
            Incoming::MoveRequest(u, msg) => self.put(Role::MoveRequest(*u), ns, msg),
            Incoming::PathRequest(u, msg) => self.put(Role::PathRequest(*u), ns, msg),
            Incoming::SetPriority(_, q) => {
                self.call(ns, &Call::SetPriority { robot: q.robot.clone(), priority: q.priority });
            }
            Incoming::SetContact(_, q) => {
                self.call(ns, &Call::SetContact { a: q.body_a.clone(), b: q.body_b.clone(), allowed: q.allowed });
            }
            Incoming::ResetStop(_) => self.call(ns, &Call::ResetStop),
            Incoming::Cloud(msg) => self.put(Role::Points, ns, msg),
            Incoming::Display(..) => self.unrecorded += 1,
            _ => {}
        }
        self.inner.record_input(m, ns);
    }

    fn record_call(&mut self, call: &Call, ns: u64) {
        self.call(ns, call);
        self.inner.record_call(call, ns);
    }

    fn record_cycle(&mut self, ns: u64) {
        let t = Time { sec: (ns / 1_000_000_000) as i32, nanosec: (ns % 1_000_000_000) as u32 };
        self.put(Role::Cycle, ns, &t);
        if ns.saturating_sub(self.flushed_ns) >= FLUSH_NS
            && let Some(bag) = self.bag.as_mut()
        {
            self.flushed_ns = ns;
            if let Err(e) = bag.flush() {
                self.stop(e);
            }
        }
        self.inner.record_cycle(ns);
    }

    fn publish_stop(&mut self, robot: usize, stop: Bool) {
        let ns = self.stamp();
        self.put(Role::Stop(robot), ns, &stop);
        self.inner.publish_stop(robot, stop);
    }

    fn publish_speed(&mut self, robot: usize, scaling: Float64) {
        let ns = self.stamp();
        if let Some(role) = self.topics.speed(robot) {
            match Msg::speed(role, scaling.data) {
                Msg::Float64(m) => self.put(role, ns, &m),
                Msg::SpeedScaling(m) => self.put(role, ns, &m),
                _ => {}
            }
        }
        self.inner.publish_speed(robot, scaling);
    }

    fn hold(&mut self, robot: usize, stamp: Time) {
        let ns = self.stamp();
        let hold = JointTrajectory::hold(stamp);
        self.put(Role::Command(robot), ns, &hold);
        self.inner.hold(robot, stamp);
    }

    fn cancel_goals(&mut self, robot: usize) {
        self.inner.cancel_goals(robot);
    }

    fn send_trajectory(&mut self, robot: usize, trajectory: &JointTrajectory) {
        let ns = self.stamp();
        self.put(Role::Command(robot), ns, trajectory);
        self.inner.send_trajectory(robot, trajectory);
    }

    fn publish_state(&mut self, robot: usize, state: &crate::msg::GuardState) {
        // Derived from the decisions recorded beside it: not recorded.
        self.inner.publish_state(robot, state);
    }

    fn publish_arm_grant(&mut self, robot: usize, grant: &ManipulatorGrant) {
        let ns = self.stamp();
        self.put(Role::ArmGrant(robot), ns, grant);
        self.inner.publish_arm_grant(robot, grant);
    }

    fn publish_grant(&mut self, unit: usize, grant: &PlatenGrant) {
        let ns = self.stamp();
        self.put(Role::PlatenGrant(unit), ns, grant);
        self.inner.publish_grant(unit, grant);
    }

    fn publish_diagnostics(&mut self, d: &DiagnosticArray) {
        self.inner.publish_diagnostics(d);
    }

    fn publish_markers(&mut self, m: &MarkerArray) {
        self.inner.publish_markers(m);
    }

    fn markers_wanted(&self) -> bool {
        self.inner.markers_wanted()
    }

    fn joint_state_publishers(&self, robot: usize) -> Option<usize> {
        self.inner.joint_state_publishers(robot)
    }

    fn qos_mismatches(&self) -> Vec<(String, String)> {
        self.inner.qos_mismatches()
    }

    fn samples_dropped(&self) -> u64 {
        self.inner.samples_dropped()
    }

    fn answer_trigger(&mut self, which: Trigger, request: T::Request, answer: TriggerResponse) {
        self.inner.answer_trigger(which, request, answer);
    }

    fn answer_set_contact(&mut self, request: T::Request, answer: SetContactResponse) {
        self.inner.answer_set_contact(request, answer);
    }

    fn answer_set_priority(&mut self, request: T::Request, answer: SetPriorityResponse) {
        self.inner.answer_set_priority(request, answer);
    }
}
