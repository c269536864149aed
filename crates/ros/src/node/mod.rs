//! The node behind either transport: takes messages as they arrive (joint
//! names mapped into each robot's order, refusals handed to the core),
//! runs the core's cycle ([`Guard::cycle`]) and converts its commands into
//! the messages to publish. The event loop ([`crate::event_loop`]) calls
//! it; this part is tested without any middleware.
//!
//! Safety semantics: a joint state or trajectory that cannot be taken
//! (length mismatch, a joint the robot does not have, a bad stamp, NaN, a
//! stamp in the future or going backwards) stops that robot at the next
//! cycle, and its diagnostic names the problem until a good message
//! arrives. The node keeps running.

mod grants;
mod plans;
mod platen;
mod report;
mod sensing;
mod services;
mod state;
mod timing;
pub use services::ServiceError;
pub use timing::CycleTimes;

use crate::convert::{CloudError, cloud_points, to_time};
use crate::convert::{JointMap, JointStateError, Names, time_s};
use crate::msg::{
    Bool, ColorRGBA, DiagnosticArray, DiagnosticStatus, Float64, Header, JointState, JointTrajectory, KeyValue,
    ManipulatorGrant, Marker, MarkerArray, PlatenGrant, PlatenMoveRequest, PlatenPathRequest, Point, PointCloud2,
    Pose2D, PoseStamped, Time,
};
use crate::params::{NodeParams, ParamError};
use platen::{blocker_name, fill_grant};
use sensing::Sensing;
use serde_json::Value;
use std::fmt::Write;
use std::sync::mpsc;
use workcell_guard_core::field::{DistanceField, PointReport};
use workcell_guard_core::guard::{
    ArbitrationPolicy, Body, Command, CommandPolicy, Decision, Guard, JointStateIn, MoveRequest, PathRequest,
    PlatenPoseIn, Reason, Scope, Stop, StopSource, Tuning, TuningError,
};
use workcell_guard_core::model::{PosedSpheres, SpherePoser};
use workcell_guard_core::platen::{Answer, Blocker, PathFault, PoseError, Refusal, StopReason, UnitStatus};
use workcell_guard_description::workcell::Workcell;

/// Why a robot's input was refused by the adapter (the core refuses NaN
/// and bad stamps itself, with its own reasons).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum InputFault {
    /// A joint state that does not fit the robot.
    #[error("joint state refused: {0}")]
    JointState(#[from] JointStateError),
    /// A planned trajectory that does not fit the robot.
    #[error("planned trajectory refused: {0}")]
    Trajectory(#[from] TrajectoryError),
}

/// A planned trajectory that does not fit its robot.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TrajectoryError {
    /// A joint this robot does not have (and which robot has it, if any).
    #[error("joint `{joint}` is not one of this robot's{}", owner.as_ref().map(|o| format!(" (it is `{o}`'s: a trajectory for another robot)")).unwrap_or_default())]
    UnknownJoint {
        /// The joint.
        joint: String,
        /// The manipulator that has a joint of that name.
        owner: Option<String>,
    },
    /// A joint named twice.
    #[error("joint `{0}` appears twice")]
    DuplicateJoint(String),
    /// A point's positions are not one per joint.
    #[error("point {point}: {positions} positions for {names} joints")]
    PointLength {
        /// Point index.
        point: usize,
        /// Positions.
        positions: usize,
        /// Joint names.
        names: usize,
    },
    /// A value is NaN or infinite.
    #[error("point {point}: a position is not finite")]
    NotFinite {
        /// Point index.
        point: usize,
    },
    /// Times from start do not increase.
    #[error("point {point}: time_from_start does not increase")]
    TimeOrder {
        /// Point index.
        point: usize,
    },
}

/// A trajectory taken for a robot (the arbiter that follows them is not
/// built yet; the node checks and reports them).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TrajectoryInfo {
    /// Points.
    pub points: usize,
    /// Duration, s.
    pub duration_s: f64,
}

struct RobotIo {
    fault: Option<InputFault>,
    /// Latest positions taken, in the robot's joint order.
    q: Vec<f64>,
    has_q: bool,
    poser: SpherePoser,
    posed: PosedSpheres,
    trajectory: Option<TrajectoryInfo>,
    refused: u64,
    /// What started the current (or last) stop, kept while it holds, as
    /// text, and the stop it was written from.
    cause: String,
    cause_of: Option<Stop>,
    /// The header stamp of its last accepted plan.
    plan_stamp: Time,
    /// When its last joint state arrived, the node's clock (s).
    arrived_s: f64,
}

/// Counters since start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeStats {
    /// Cycles run.
    pub cycles: u64,
    /// Joint states taken.
    pub joint_states: u64,
    /// Messages refused.
    pub refused: u64,
}

/// The node's state and its outgoing messages.
pub struct GuardNode {
    cell: Workcell,
    guard: Guard,
    params: NodeParams,
    maps: Vec<JointMap>,
    names: Names,
    io: Vec<RobotIo>,
    stops: Vec<Bool>,
    diag: DiagnosticArray,
    markers: MarkerArray,
    cell_markers: MarkerArray,
    cycle_s: f64,
    /// The longest cycle since the diagnostics last went out, s.
    cycle_max_s: f64,
    /// Every cycle's duration since start, and the missed timer cycles.
    times: CycleTimes,
    /// The robot whose stop the current split cycle settled first, and when
    /// that cycle began.
    first: Option<(usize, std::time::Instant)>,
    /// The first half's duration, in the last split cycle (0 after a whole one).
    first_s: f64,
    /// When the last cycle (timer or joint state) began.
    last_cycle: Option<std::time::Instant>,
    stats: NodeStats,
    grants: Vec<(usize, PlatenGrant)>,
    n_grants: usize,
    /// Grants answered on a request's arrival.
    early_grants: Vec<(usize, PlatenGrant)>,
    unit_status: Vec<UnitStatus>,
    speed: Vec<Float64>,
    actuate: Vec<Actuate>,
    arm_grants: Vec<ManipulatorGrant>,
    /// Per robot, its last due grant was dropped by the writer.
    grant_unsent: Vec<bool>,
    /// Per platen unit, the frame_id of its last pose refused for its frame.
    platen_frames: Vec<String>,
    /// A joint state whose frame_id is this makes the node panic (fault
    /// injection, for testing what a panic leaves on the wire).
    panic_frame_id: Option<String>,
    sensing: Option<Sensing>,
    cloud_error: Option<CloudError>,
    /// Each robot's state message, and the key it was last taken with.
    states: Vec<crate::msg::GuardState>,
    state_sent: Vec<Option<state::StateKey>>,
    /// Endpoints that met incompatible QoS: topic, what (newest per topic).
    qos_notes: Vec<(String, String)>,
    /// Samples the transport dropped rather than wait for a subscriber.
    samples_dropped: u64,
    /// Per robot, the publishers matched on its joint-state topic, where
    /// the transport can tell.
    js_publishers: Vec<Option<usize>>,
}

/// One log line when a robot's stop flag changes: a guard's stop as a
/// warning with its cause, a hold on its grant and a release as
/// information (the diagnostics carry the rest).
fn log_transition(robot: &str, c: &Command, cause: &str) {
    match (c.stop, c.source) {
        (false, _) => tracing::info!("{robot}: released"),
        (true, StopSource::Grant) => tracing::info!("{robot}: holds on its path (its grant)"),
        (true, source) => tracing::warn!("{robot}: stopped ({source:?}): {cause}"),
    }
}

/// What to tell a robot's controller this cycle (where the workcell names
/// its command topic and action).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Actuate {
    /// Publish an empty trajectory on the command topic (hold position):
    /// on each new stop and every `hold_period_s` of the core's
    /// [`CommandPolicy`] while stopped, so a trajectory sent meanwhile is
    /// overridden.
    pub hold: bool,
    /// Cancel every goal of the FollowJointTrajectory action: on each new
    /// stop and every `cancel_period_s` while stopped, and before each
    /// retreat of a back-away.
    pub cancel: bool,
    /// Send [`GuardNode::retreat`] on the command topic (after the cancel).
    pub retreat: bool,
}

/// How long robots may wait for others, from `params`.
pub fn arbitration_of(p: &NodeParams) -> ArbitrationPolicy {
    let boost = p.priority_boost_after_s;
    ArbitrationPolicy {
        starvation_s: p.starvation_s,
        boost_after_s: (boost > 0.0).then_some(boost),
        give_way_at_start: p.give_way_at_start,
        give_way_when_caught: p.give_way_when_caught,
        go_on_when_clear: p.go_on_when_clear,
    }
}

/// How the core turns decisions into commands, from `params`.
pub fn policy_of(p: &NodeParams) -> CommandPolicy {
    CommandPolicy {
        latch_stops: p.latch_stops,
        slow_down_m: p.slow_down_m,
        escape_scaling: p.escape_speed_scaling,
        scaling_rate_per_s: p.speed_scaling_rate,
        stop_heartbeat_s: p.stop_heartbeat_s,
        cloud_timeout_s: p.cloud_timeout_s,
        stale_cloud_stops: p.cloud_policy_stops,
        ..CommandPolicy::default()
    }
}

/// The tuning `params` asks for, over the workcell's values.
pub fn tuning_of(cell: &Workcell, p: &NodeParams) -> Tuning {
    Tuning {
        clearance_m: p.clearance_m.unwrap_or(cell.margins.clearance_m),
        release_m: p.release_m.unwrap_or(cell.margins.release_m),
        watchdog_s: p.watchdog_s.unwrap_or(cell.guard.watchdog_s),
        release_hold_s: p.release_hold_s.unwrap_or(cell.guard.release_hold_s),
    }
}

fn tuning_refused(name: &str, v: &Value, e: TuningError) -> ParamError {
    ParamError::Invalid { name: name.to_string(), value: v.to_string(), problem: e.to_string() }
}

/// The node's parameters as it declares them to ROS, with their current
/// values (the workcell's where `params` does not override): what both
/// transports serve through the parameter services.
pub fn declared_parameters(p: &NodeParams, cell: &Workcell) -> Vec<(&'static str, Value)> {
    crate::params::PARAMS.iter().map(|s| (s.name, (s.get)(p, cell))).collect()
}

/// Checks one parameter update against the current parameters without
/// applying it ([`check_params`] with one).
pub fn check_param(cell: &Workcell, current: &NodeParams, name: &str, v: &Value) -> Result<NodeParams, ParamError> {
    check_params(cell, current, &[(name, v)])
}

/// Checks one parameter on its own: its type and range, and that it is not
/// read-only (a parameter read at start takes only the value it has).
/// Returns the parameters with it set.
pub fn check_alone(cell: &Workcell, current: &NodeParams, name: &str, v: &Value) -> Result<NodeParams, ParamError> {
    let read_only =
        |problem: &str| ParamError::Invalid { name: name.into(), value: v.to_string(), problem: problem.into() };
    if name.starts_with(crate::qos::PREFIX) {
        let now = current.qos_overrides.parameters().find(|(n, _)| *n == name).map(|(_, v)| v.clone());
        if now.as_ref() == Some(v) {
            return Ok(current.clone());
        }
        return Err(read_only("read-only: QoS overrides are read at start; restart the node to change them"));
    }
    if let Some(s) = crate::params::spec(name)
        && s.applies == crate::params::Applies::AtStart
    {
        let now = (s.get)(current, cell);
        let same = now == *v || (now.as_f64().is_some() && now.as_f64() == v.as_f64());
        if same {
            return Ok(current.clone());
        }
        return Err(read_only("read-only: read at start; restart the node to change it"));
    }
    let mut next = current.clone();
    next.set(name, v, None)?;
    Ok(next)
}

/// Checks a set of parameter updates as a whole, as an atomic set or a
/// parameter file is: each on its own ([`check_alone`]), in order, then
/// the tuning they lead to together (so `clearance_m` and `release_m` may
/// move together in either order). Returns the parameters after all of
/// them; nothing is applied.
pub fn check_params(
    cell: &Workcell,
    current: &NodeParams,
    updates: &[(&str, &Value)],
) -> Result<NodeParams, ParamError> {
    let mut next = current.clone();
    for (name, v) in updates {
        next = check_alone(cell, &next, name, v)?;
    }
    tuning_of(cell, &next).validate(cell.guard.matrix_never_slack_m).map_err(|e| {
        let names: Vec<&str> = updates.iter().map(|(n, _)| *n).collect();
        let values: Vec<String> = updates.iter().map(|(_, v)| v.to_string()).collect();
        tuning_refused(&names.join(", "), &Value::String(values.join(", ")), e)
    })?;
    Ok(next)
}

/// Most surface voxels of the cell drawn (the rest are thinned out evenly).
pub const MAX_VOXEL_MARKERS: usize = 30_000;

impl GuardNode {
    /// The node of `cell`, whose guard was built from it; `params` are
    /// applied (a tuning the guard refuses is an error).
    pub fn new(cell: Workcell, mut guard: Guard, params: NodeParams) -> Result<GuardNode, ParamError> {
        guard.set_tuning(tuning_of(&cell, &params)).map_err(|e| tuning_refused("tuning", &Value::Null, e))?;
        guard.set_command_policy(policy_of(&params));
        guard.set_arbitration_policy(arbitration_of(&params));
        let maps = cell.manipulators.iter().map(|m| JointMap::of_robot(&m.robot)).collect();
        let io: Vec<RobotIo> = cell
            .manipulators
            .iter()
            .map(|m| {
                let poser = SpherePoser::new(&m.robot, &m.spheres, m.base);
                RobotIo {
                    fault: None,
                    q: vec![0.0; m.robot.dof_names.len()],
                    has_q: false,
                    posed: poser.posed(),
                    poser,
                    trajectory: None,
                    refused: 0,
                    cause: String::with_capacity(128),
                    cause_of: None,
                    plan_stamp: Time::default(),
                    arrived_s: f64::NEG_INFINITY,
                }
            })
            .collect();
        let names = Names::new(&cell);
        let n = cell.manipulators.len();
        let mut node = GuardNode {
            guard,
            params,
            maps,
            names,
            io,
            stops: vec![Bool { data: true }; n],
            diag: DiagnosticArray::default(),
            markers: MarkerArray::default(),
            cell_markers: MarkerArray::default(),
            cycle_s: 0.0,
            cycle_max_s: 0.0,
            times: CycleTimes::default(),
            first: None,
            first_s: 0.0,
            last_cycle: None,
            stats: NodeStats::default(),
            grants: Vec::new(),
            n_grants: 0,
            early_grants: Vec::new(),
            unit_status: Vec::new(),
            speed: vec![Float64 { data: 0.0 }; n],
            actuate: vec![Actuate::default(); n],
            arm_grants: cell
                .manipulators
                .iter()
                .map(|m| ManipulatorGrant {
                    robot: m.name.clone(),
                    state: ManipulatorGrant::NO_PLAN,
                    ..Default::default()
                })
                .collect(),
            grant_unsent: vec![false; n],
            platen_frames: Vec::new(),
            panic_frame_id: None,
            sensing: None,
            cloud_error: None,
            states: Vec::new(),
            state_sent: Vec::new(),
            qos_notes: Vec::new(),
            samples_dropped: 0,
            js_publishers: vec![None; n],
            cell,
        };
        node.build_markers();
        Ok(node)
    }

    /// The workcell.
    pub fn cell(&self) -> &Workcell {
        &self.cell
    }

    /// The guard.
    pub fn guard(&self) -> &Guard {
        &self.guard
    }

    /// Parameters in use.
    pub fn params(&self) -> &NodeParams {
        &self.params
    }

    /// Counters since start.
    pub fn stats(&self) -> NodeStats {
        self.stats
    }

    /// The fault that currently stops a robot, if the adapter refused its input.
    pub fn fault(&self, robot: usize) -> Option<&InputFault> {
        self.io.get(robot).and_then(|r| r.fault.as_ref())
    }

    /// The last trajectory taken for a robot.
    pub fn trajectory(&self, robot: usize) -> Option<TrajectoryInfo> {
        self.io.get(robot).and_then(|r| r.trajectory)
    }

    /// Fault injection: a joint state whose `header.frame_id` is `frame_id`
    /// makes the node panic, so that tests can check what a panic leaves on
    /// the wire (the transports read it from the environment variable
    /// `WORKCELL_GUARD_PANIC_ON_FRAME_ID`; unset, nothing changes).
    pub fn inject_panic_on_frame_id(&mut self, frame_id: Option<String>) {
        self.panic_frame_id = frame_id.filter(|f| !f.is_empty());
    }

    /// Takes a joint state for `robot` at node time `now_s`. A refused
    /// message stops the robot at the next cycle. Allocates nothing while
    /// the publisher keeps its joint order.
    pub fn on_joint_state(&mut self, robot: usize, msg: &JointState, now_s: f64) -> Result<(), InputFault> {
        if let Some(io) = self.io.get_mut(robot) {
            io.arrived_s = now_s;
        }
        let r = self.joint_state_in(robot, msg, now_s);
        self.sync_refused(robot);
        r
    }

    /// The core stops a robot while the adapter refuses its input.
    fn sync_refused(&mut self, robot: usize) {
        if let Some(io) = self.io.get(robot) {
            self.guard.set_input_refused(robot, io.fault.is_some());
        }
    }

    fn joint_state_in(&mut self, robot: usize, msg: &JointState, now_s: f64) -> Result<(), InputFault> {
        if self.panic_frame_id.as_deref() == Some(msg.header.frame_id.as_str()) {
            // invariant: fault injection on a frame_id only a test sets (WORKCELL_GUARD_PANIC_ON_FRAME_ID)
            panic!("fault injection: joint state with frame_id `{}`", msg.header.frame_id);
        }
        let (Some(map), Some(io)) = (self.maps.get_mut(robot), self.io.get_mut(robot)) else {
            self.stats.refused += 1;
            return Ok(());
        };
        match map.map(msg) {
            Ok(m) => {
                if matches!(io.fault, Some(InputFault::JointState(_))) {
                    io.fault = None;
                }
                io.q.copy_from_slice(m.positions);
                io.has_q = true;
                self.stats.joint_states += 1;
                // The core's own refusals (NaN, stamps) stop the robot
                // through its decision, with their reason, until it takes a
                // state again.
                let _ = self.guard.ingest(
                    now_s,
                    &JointStateIn { robot, stamp_s: m.stamp_s, positions: m.positions, velocities: m.velocities },
                );
                Ok(())
            }
            Err(e) => {
                io.refused += 1;
                self.stats.refused += 1;
                let f = InputFault::JointState(e);
                io.fault = Some(f.clone());
                Err(f)
            }
        }
    }

    /// Whether a tick of the cycle timer should run a cycle: always, but
    /// with `cycle_on_joint_state` when a cycle began less than one period
    /// ago. Joint states then keep every decision current (each of their
    /// cycles decides every robot); the timer is there for when they stop
    /// (the watchdog). Skipped ticks cost no work and keep a timer cycle
    /// from delaying the next joint state's stop.
    pub fn timer_due(&self) -> bool {
        let p = &self.params;
        match (p.cycle_on_joint_state && p.rate_hz > 0.0, self.last_cycle) {
            (true, Some(at)) => at.elapsed().as_secs_f64() >= 1.0 / p.rate_hz,
            _ => true,
        }
    }

    /// Runs one cycle at node time `now_s` ([`Guard::cycle`], every robot
    /// and the platen) and returns every robot's stop flag, converted from
    /// the core's commands.
    pub fn cycle(&mut self, now_s: f64) -> &[Bool] {
        let start = std::time::Instant::now();
        self.take_sensed_field();
        self.guard.cycle(now_s, Scope::All);
        self.finish_cycle(now_s, None, start)
    }

    /// A tick of the cycle timer, scheduled for `scheduled_s` (monotonic,
    /// s): the ticks its schedule skipped since the last one count as
    /// missed cycles. The schedule, not the instant the tick ran: a tick
    /// that runs late within its period (the timer's 1 ms resolution, a
    /// busy core) is late, not missed. With `cycle_on_joint_state` nothing
    /// is counted (the timer skips ticks on purpose).
    pub fn timer_tick(&mut self, scheduled_s: f64) {
        if !self.params.cycle_on_joint_state {
            self.times.timer_cycle(scheduled_s, self.params.rate_hz);
        }
    }

    /// The first half of a cycle run on `robot`'s joint state
    /// ([`Scope::First`]): that robot's stop flag, to publish at once;
    /// [`GuardNode::cycle_rest`] then converts the others'. `None` (and
    /// nothing done) for an index that is not a manipulator.
    pub fn cycle_first(&mut self, now_s: f64, robot: usize) -> Option<Bool> {
        if robot >= self.stops.len() {
            return None;
        }
        let start = std::time::Instant::now();
        self.take_sensed_field();
        self.guard.cycle(now_s, Scope::First(robot));
        self.settle(robot, to_time(now_s).unwrap_or_default());
        self.first = Some((robot, start));
        self.first_s = start.elapsed().as_secs_f64();
        Some(self.stops[robot])
    }

    /// The second half of a cycle begun by [`GuardNode::cycle_first`]
    /// ([`Scope::Rest`]): the other robots and the platen. Without a first
    /// half, a whole cycle.
    pub fn cycle_rest(&mut self, now_s: f64) -> &[Bool] {
        let Some((robot, start)) = self.first.take() else { return self.cycle(now_s) };
        self.guard.cycle(now_s, Scope::Rest);
        self.finish_cycle(now_s, Some(robot), start)
    }

    /// Converts the cycle's grants and every robot's command (but `done`'s,
    /// converted in [`GuardNode::cycle_first`]) to messages.
    fn finish_cycle(&mut self, now_s: f64, done: Option<usize>, start: std::time::Instant) -> &[Bool] {
        self.last_cycle = Some(start);
        self.n_grants = 0;
        if self.guard.platen().is_some() {
            let d = self.guard.outcome();
            self.unit_status.clear();
            self.unit_status.extend_from_slice(d.platen);
            for (k, &(unit, answer)) in d.answers.iter().enumerate() {
                if self.grants.len() <= k {
                    self.grants.push((unit, PlatenGrant::default()));
                }
                self.grants[k].0 = unit;
                fill_grant(&mut self.grants[k].1, &answer, &self.cell, now_s);
            }
            self.n_grants = d.answers.len();
        }
        for r in 0..self.stops.len() {
            if Some(r) != done {
                self.settle(r, to_time(now_s).unwrap_or_default());
            }
        }
        if done.is_none() {
            self.first_s = 0.0;
        }
        self.stats.cycles += 1;
        self.cycle_s = start.elapsed().as_secs_f64();
        self.cycle_max_s = self.cycle_max_s.max(self.cycle_s);
        self.times.record(self.cycle_s);
        &self.stops
    }

    /// Robot `r`'s messages from the core's command: stop flag, speed
    /// scaling, actuation, and the cause's text.
    fn settle(&mut self, r: usize, stamp: Time) {
        let c = self.guard.commands()[r];
        let io = &mut self.io[r];
        if let Some(st) = c.cause
            && io.cause_of != Some(st)
        {
            io.cause_of = Some(st);
            io.cause.clear();
            self.names.reason(r, st.reason, &mut io.cause);
            // The pair names what it came near; a stop for its data has none.
            let near = matches!(st.reason, Reason::Cell | Reason::Robot { .. } | Reason::SelfCollision);
            if let Some((a, b)) = st.pair.filter(|_| near) {
                io.cause.push_str(" (");
                self.names.body(a, &mut io.cause);
                io.cause.push_str(" <-> ");
                self.names.body(b, &mut io.cause);
                io.cause.push(')');
            }
        }
        if c.stop != self.stops[r].data {
            log_transition(&self.cell.manipulators[r].name, &c, &io.cause);
        }
        self.stops[r].data = c.stop;
        self.speed[r].data = c.speed_scaling;
        self.actuate[r] = Actuate { hold: c.hold, cancel: c.cancel, retreat: c.retreat };
        self.fill_arm_grant(r, stamp);
    }

    /// Speed scalings of the last cycle, 0..1 per robot.
    pub fn speed_scaling(&self) -> &[Float64] {
        &self.speed
    }

    /// Whether robot `r`'s grant is to be published after the last cycle:
    /// the core's [`Command::publish_grant`], or the last one was dropped.
    pub fn grant_due(&self, r: usize) -> bool {
        self.guard.commands().get(r).is_some_and(|c| c.publish_grant)
            || self.grant_unsent.get(r).copied().unwrap_or(false)
    }

    /// Notes whether robot `r`'s grant went out (else it is due again).
    pub fn grant_sent(&mut self, r: usize, sent: bool) {
        if let Some(u) = self.grant_unsent.get_mut(r) {
            *u = !sent;
        }
    }

    /// Whether robot `r`'s speed scaling is to be published after the last
    /// cycle (the core's [`Command::publish_speed`]).
    pub fn speed_due(&self, r: usize) -> bool {
        self.guard.commands().get(r).is_some_and(|c| c.publish_speed)
    }

    /// What to tell each robot's controller after the last cycle.
    pub fn actuation(&self) -> &[Actuate] {
        &self.actuate
    }

    /// The stop flags of the last cycle.
    pub fn stops(&self) -> &[Bool] {
        &self.stops
    }

    /// Whether robot `robot`'s stop is to be published after the last cycle:
    /// it changed, or `stop_heartbeat_s` passed since it last was.
    pub fn stop_due(&self, robot: usize) -> bool {
        self.guard.commands().get(robot).is_some_and(|c| c.publish_stop)
    }

    /// Applies a parameter update (checked as [`check_param`] does), or
    /// refuses it and changes nothing.
    pub fn set_param(&mut self, name: &str, v: &Value) -> Result<(), ParamError> {
        self.set_params(&[(name, v)])
    }

    /// Applies a set of parameter updates as a whole (checked as
    /// [`check_params`] does), or refuses them all and changes nothing.
    pub fn set_params(&mut self, updates: &[(&str, &Value)]) -> Result<(), ParamError> {
        let next = check_params(&self.cell, &self.params, updates)?;
        let name = updates.first().map_or("", |(n, _)| *n);
        self.guard.set_tuning(tuning_of(&self.cell, &next)).map_err(|e| tuning_refused(name, &Value::Null, e))?;
        self.guard.set_command_policy(policy_of(&next));
        self.guard.set_arbitration_policy(arbitration_of(&next));
        self.params = next;
        Ok(())
    }

    /// A joint state's stamp in seconds (for transports that cycle on
    /// arrival and want the sample's age).
    pub fn stamp_s(msg: &JointState) -> Option<f64> {
        time_s(msg.header.stamp)
    }
}
