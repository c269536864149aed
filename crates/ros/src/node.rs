//! The node behind either transport: takes messages as they arrive,
//! runs the guard's cycle, and fills the messages to publish. A transport
//! (`dds`, `r2r`) moves messages between the middleware and this type and
//! does nothing else, so both behave the same and this part is tested
//! without any middleware.
//!
//! Safety semantics: a joint state or trajectory that cannot be taken
//! (length mismatch, a joint the robot does not have, a bad stamp, NaN, a
//! stamp in the future or going backwards) stops that robot at the next
//! cycle, and its diagnostic names the problem until a good message
//! arrives. The node keeps running.

use crate::convert::{CloudError, cloud_points};
use crate::convert::{JointMap, JointStateError, Names, time_s};
use crate::msg::{
    Bool, ColorRGBA, DiagnosticArray, DiagnosticStatus, Float64, Header, JointState, JointTrajectory, KeyValue, Marker,
    MarkerArray, PlatenGrant, PlatenMoveRequest, Point, PointCloud2, Pose2D, PoseStamped, Time,
};
use crate::params::{NodeParams, ParamError};
use serde_json::Value;
use std::fmt::Write;
use std::sync::mpsc;
use workcell_guard_core::field::{DistanceField, PointReport};
use workcell_guard_core::guard::{
    Body, CommandPolicy, Decision, Guard, JointStateIn, MoveRequest, PlatenPoseIn, Reason, Scope, Stop, Tuning,
    TuningError,
};
use workcell_guard_core::model::{PosedSpheres, SpherePoser};
use workcell_guard_core::platen::{Answer, Blocker, Refusal, StopReason, UnitStatus};
use workcell_guard_description::workcell::BodyRef;
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
    unit_status: Vec<UnitStatus>,
    speed: Vec<Float64>,
    actuate: Vec<Actuate>,
    /// A joint state whose frame_id is this makes the node panic (fault
    /// injection, for testing what a panic leaves on the wire).
    panic_frame_id: Option<String>,
    sensing: Option<Sensing>,
    cloud_error: Option<CloudError>,
}

/// Sensed obstacles are folded into a copy of the distance field on a
/// worker thread (a rebuild takes longer than a cycle); the finished field
/// is swapped in at the start of a cycle and the old one goes back to the
/// worker for the next cloud.
struct Sensing {
    jobs: mpsc::Sender<SenseJob>,
    done: mpsc::Receiver<(DistanceField, PointReport)>,
    busy: bool,
    /// A cloud arrived while the worker was busy: send it when it is free.
    waiting: bool,
    points: Vec<[f32; 3]>,
    spare: Option<DistanceField>,
    report: Option<PointReport>,
    last_cloud_s: f64,
}

struct SenseJob {
    points: Vec<[f32; 3]>,
    robots: Vec<PosedSpheres>,
    margin_m: f32,
    field: Option<DistanceField>,
}

fn sense_worker(
    mut spare: Option<DistanceField>,
    jobs: mpsc::Receiver<SenseJob>,
    done: mpsc::Sender<(DistanceField, PointReport)>,
) {
    while let Ok(job) = jobs.recv() {
        if let Some(f) = job.field {
            spare = Some(f);
        }
        let Some(mut f) = spare.take() else { continue };
        let robots: Vec<&PosedSpheres> = job.robots.iter().collect();
        let report = f.set_sensed_points(&job.points, &robots, job.margin_m);
        if done.send((f, report)).is_err() {
            return;
        }
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
    /// stop and every `cancel_period_s` while stopped.
    pub cancel: bool,
}

/// How the core turns decisions into commands, from `params`.
pub fn policy_of(p: &NodeParams) -> CommandPolicy {
    CommandPolicy {
        latch_stops: p.latch_stops,
        slow_down_m: p.slow_down_m,
        stop_heartbeat_s: p.stop_heartbeat_s,
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
    let t = tuning_of(cell, p);
    vec![
        ("workcell_file", Value::from(p.workcell_file.as_ref().map(|f| f.display().to_string()).unwrap_or_default())),
        ("rate_hz", Value::from(p.rate_hz)),
        ("cycle_on_joint_state", Value::from(p.cycle_on_joint_state)),
        ("diagnostics_hz", Value::from(p.diagnostics_hz)),
        ("markers_hz", Value::from(p.markers_hz)),
        ("slow_down_m", Value::from(p.slow_down_m)),
        ("latch_stops", Value::from(p.latch_stops)),
        ("stop_heartbeat_s", Value::from(p.stop_heartbeat_s)),
        ("shutdown_linger_s", Value::from(p.shutdown_linger_s)),
        ("clearance_m", Value::from(t.clearance_m)),
        ("release_m", Value::from(t.release_m)),
        ("watchdog_s", Value::from(t.watchdog_s)),
        ("release_hold_s", Value::from(t.release_hold_s)),
    ]
}

/// Checks one parameter update against the current parameters without
/// applying it: the parameter's own range, then the tuning it leads to.
/// Returns the parameters after the update.
pub fn check_param(cell: &Workcell, current: &NodeParams, name: &str, v: &Value) -> Result<NodeParams, ParamError> {
    if name == "workcell_file" {
        let same = current.workcell_file.as_ref().is_some_and(|f| v.as_str() == Some(&*f.display().to_string()));
        if same {
            return Ok(current.clone());
        }
        return Err(ParamError::Invalid {
            name: name.into(),
            value: v.to_string(),
            problem: "read at start; restart the node (or call its reload service) to change it".into(),
        });
    }
    let mut next = current.clone();
    next.set(name, v, None)?;
    tuning_of(cell, &next).validate(cell.guard.matrix_never_slack_m).map_err(|e| tuning_refused(name, v, e))?;
    Ok(next)
}

const GREEN: ColorRGBA = ColorRGBA { r: 0.1, g: 0.8, b: 0.2, a: 0.6 };
const AMBER: ColorRGBA = ColorRGBA { r: 1.0, g: 0.65, b: 0.0, a: 0.7 };
const RED: ColorRGBA = ColorRGBA { r: 0.95, g: 0.1, b: 0.1, a: 0.8 };
const GREY: ColorRGBA = ColorRGBA { r: 0.5, g: 0.5, b: 0.5, a: 0.4 };
const VOXEL: ColorRGBA = ColorRGBA { r: 0.3, g: 0.35, b: 0.45, a: 0.5 };

/// Most surface voxels of the cell drawn (the rest are thinned out evenly).
pub const MAX_VOXEL_MARKERS: usize = 30_000;

impl GuardNode {
    /// The node of `cell`, whose guard was built from it; `params` are
    /// applied (a tuning the guard refuses is an error).
    pub fn new(cell: Workcell, mut guard: Guard, params: NodeParams) -> Result<GuardNode, ParamError> {
        guard.set_tuning(tuning_of(&cell, &params)).map_err(|e| tuning_refused("tuning", &Value::Null, e))?;
        guard.set_command_policy(policy_of(&params));
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
            first: None,
            first_s: 0.0,
            last_cycle: None,
            stats: NodeStats::default(),
            grants: Vec::new(),
            n_grants: 0,
            unit_status: Vec::new(),
            speed: vec![Float64 { data: 0.0 }; n],
            actuate: vec![Actuate::default(); n],
            panic_frame_id: None,
            sensing: None,
            cloud_error: None,
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

    /// Takes a planned trajectory for `robot`: checked against the robot's
    /// joints; a bad one stops the robot until a good one (or an empty one,
    /// which clears the plan) arrives.
    pub fn on_trajectory(&mut self, robot: usize, msg: &JointTrajectory) -> Result<(), InputFault> {
        let r = self.trajectory_in(robot, msg);
        self.sync_refused(robot);
        r
    }

    fn trajectory_in(&mut self, robot: usize, msg: &JointTrajectory) -> Result<(), InputFault> {
        let Some(m) = self.cell.manipulators.get(robot) else {
            self.stats.refused += 1;
            return Ok(());
        };
        let check = || -> Result<TrajectoryInfo, TrajectoryError> {
            let dof = &m.robot.dof_names;
            for (i, j) in msg.joint_names.iter().enumerate() {
                if msg.joint_names[..i].contains(j) {
                    return Err(TrajectoryError::DuplicateJoint(j.clone()));
                }
                if !dof.contains(j) {
                    let owner =
                        self.cell.manipulators.iter().find(|o| o.robot.dof_names.contains(j)).map(|o| o.name.clone());
                    return Err(TrajectoryError::UnknownJoint { joint: j.clone(), owner });
                }
            }
            let mut last = f64::NEG_INFINITY;
            for (k, p) in msg.points.iter().enumerate() {
                if p.positions.len() != msg.joint_names.len() {
                    return Err(TrajectoryError::PointLength {
                        point: k,
                        positions: p.positions.len(),
                        names: msg.joint_names.len(),
                    });
                }
                if p.positions.iter().chain(&p.velocities).chain(&p.accelerations).any(|x| !x.is_finite()) {
                    return Err(TrajectoryError::NotFinite { point: k });
                }
                let t = p.time_from_start.sec as f64 + p.time_from_start.nanosec as f64 * 1e-9;
                if p.time_from_start.nanosec >= 1_000_000_000 || t <= last {
                    return Err(TrajectoryError::TimeOrder { point: k });
                }
                last = t;
            }
            Ok(TrajectoryInfo { points: msg.points.len(), duration_s: last.max(0.0) })
        };
        let r = check();
        let io = &mut self.io[robot];
        match r {
            Ok(info) => {
                if matches!(io.fault, Some(InputFault::Trajectory(_))) {
                    io.fault = None;
                }
                io.trajectory = (info.points > 0).then_some(info);
                Ok(())
            }
            Err(e) => {
                io.refused += 1;
                self.stats.refused += 1;
                let f = InputFault::Trajectory(e);
                io.fault = Some(f.clone());
                Err(f)
            }
        }
    }

    /// Takes MoveIt's DisplayTrajectory for `robot`: the columns of its
    /// joints, from every trajectory that names any, become its planned
    /// trajectory (checked as [`GuardNode::on_trajectory`] does). A message
    /// naming none of its joints is for another robot and is ignored
    /// (`Ok(false)`).
    pub fn on_display_trajectory(
        &mut self,
        robot: usize,
        msg: &crate::msg::DisplayTrajectory,
    ) -> Result<bool, InputFault> {
        let Some(m) = self.cell.manipulators.get(robot) else { return Ok(false) };
        let dof = &m.robot.dof_names;
        let mut out = JointTrajectory::default();
        let mut offset = 0.0;
        for rt in &msg.trajectory {
            let jt = &rt.joint_trajectory;
            let cols: Vec<usize> = (0..jt.joint_names.len()).filter(|&i| dof.contains(&jt.joint_names[i])).collect();
            if cols.is_empty() {
                continue;
            }
            let names: Vec<String> = cols.iter().map(|&i| jt.joint_names[i].clone()).collect();
            if out.joint_names.is_empty() {
                out.header = jt.header.clone();
                out.joint_names = names;
            } else if out.joint_names != names {
                return Err(self.refuse_trajectory(
                    robot,
                    TrajectoryError::DuplicateJoint("(the display's trajectories name different joints)".into()),
                ));
            }
            let mut last = 0.0;
            for p in &jt.points {
                let pick = |v: &Vec<f64>| -> Vec<f64> {
                    if v.len() == jt.joint_names.len() { cols.iter().map(|&i| v[i]).collect() } else { Vec::new() }
                };
                let t = p.time_from_start.sec as f64 + p.time_from_start.nanosec as f64 * 1e-9;
                last = t;
                if offset > 0.0 && t <= 0.0 {
                    continue; // a later trajectory starts where the one before ended
                }
                let at = crate::convert::to_time(offset + t).unwrap_or_default();
                out.points.push(crate::msg::JointTrajectoryPoint {
                    positions: if p.positions.len() == jt.joint_names.len() {
                        pick(&p.positions)
                    } else {
                        p.positions.clone()
                    },
                    velocities: pick(&p.velocities),
                    accelerations: pick(&p.accelerations),
                    effort: Vec::new(),
                    time_from_start: crate::msg::Duration { sec: at.sec, nanosec: at.nanosec },
                });
            }
            offset += last;
        }
        if out.joint_names.is_empty() {
            return Ok(false);
        }
        self.on_trajectory(robot, &out).map(|()| true)
    }

    fn refuse_trajectory(&mut self, robot: usize, e: TrajectoryError) -> InputFault {
        let f = InputFault::Trajectory(e);
        self.io[robot].refused += 1;
        self.stats.refused += 1;
        self.io[robot].fault = Some(f.clone());
        self.sync_refused(robot);
        f
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
        self.settle(robot);
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
                self.settle(r);
            }
        }
        if done.is_none() {
            self.first_s = 0.0;
        }
        self.stats.cycles += 1;
        self.cycle_s = start.elapsed().as_secs_f64();
        self.cycle_max_s = self.cycle_max_s.max(self.cycle_s);
        &self.stops
    }

    /// Robot `r`'s messages from the core's command: stop flag, speed
    /// scaling, actuation, and the cause's text.
    fn settle(&mut self, r: usize) {
        let c = self.guard.commands()[r];
        let io = &mut self.io[r];
        if let Some(st) = c.cause
            && io.cause_of != Some(st)
        {
            io.cause_of = Some(st);
            io.cause.clear();
            self.names.reason(r, st.reason, &mut io.cause);
            if let Some((a, b)) = st.pair {
                io.cause.push_str(" (");
                self.names.body(a, &mut io.cause);
                io.cause.push_str(" <-> ");
                self.names.body(b, &mut io.cause);
                io.cause.push(')');
            }
        }
        self.stops[r].data = c.stop;
        self.speed[r].data = c.speed_scaling;
        self.actuate[r] = Actuate { hold: c.hold, cancel: c.cancel };
    }

    /// Takes a point cloud of sensed obstacles (in the cell frame): the
    /// field is rebuilt with them on a worker thread and swapped in at the
    /// start of a later cycle. Points within the release margin of a robot's
    /// own spheres (at its latest joint state) are left out.
    pub fn on_cloud(&mut self, msg: &PointCloud2, now_s: f64) -> Result<(), CloudError> {
        let r = self.take_cloud(msg, now_s);
        self.cloud_error = r.as_ref().err().cloned();
        r
    }

    fn take_cloud(&mut self, msg: &PointCloud2, now_s: f64) -> Result<(), CloudError> {
        if msg.header.frame_id != self.cell.cell_frame {
            return Err(CloudError::Frame { got: msg.header.frame_id.clone(), want: self.cell.cell_frame.clone() });
        }
        if self.sensing.is_none() {
            let (jobs, jobs_rx) = mpsc::channel();
            let (done_tx, done) = mpsc::channel();
            let first = self.guard.field().clone();
            std::thread::Builder::new()
                .name("sensed-field".into())
                .spawn(move || sense_worker(Some(first), jobs_rx, done_tx))
                .map_err(|_| CloudError::MissingField("worker"))?;
            self.sensing = Some(Sensing {
                jobs,
                done,
                busy: false,
                waiting: false,
                points: Vec::new(),
                spare: None,
                report: None,
                last_cloud_s: now_s,
            });
        }
        let s = self.sensing.as_mut().expect("set above");
        cloud_points(msg, &mut s.points)?;
        s.last_cloud_s = now_s;
        s.waiting = true;
        self.send_cloud();
        Ok(())
    }

    fn send_cloud(&mut self) {
        let margin_m = self.guard.tuning().release_m as f32;
        let Some(s) = self.sensing.as_mut() else { return };
        if s.busy || !s.waiting {
            return;
        }
        let mut robots = Vec::with_capacity(self.io.len());
        for io in &mut self.io {
            if io.has_q && io.poser.pose(&io.q, &mut io.posed).is_ok() {
                robots.push(io.posed.clone());
            }
        }
        let job = SenseJob { points: std::mem::take(&mut s.points), robots, margin_m, field: s.spare.take() };
        if s.jobs.send(job).is_ok() {
            s.busy = true;
            s.waiting = false;
        }
    }

    fn take_sensed_field(&mut self) {
        let Some(s) = self.sensing.as_mut() else { return };
        if let Ok((mut f, report)) = s.done.try_recv() {
            std::mem::swap(self.guard.field_mut(), &mut f);
            s.spare = Some(f);
            s.report = Some(report);
            s.busy = false;
            self.send_cloud();
        }
    }

    /// The last cloud folded into the field: what became of its points.
    pub fn sensed_report(&self) -> Option<PointReport> {
        self.sensing.as_ref().and_then(|s| s.report)
    }

    /// Speed scalings of the last cycle, 0..1 per robot.
    pub fn speed_scaling(&self) -> &[Float64] {
        &self.speed
    }

    /// What to tell each robot's controller after the last cycle.
    pub fn actuation(&self) -> &[Actuate] {
        &self.actuate
    }

    /// Takes a platen unit's pose (in the surface frame; yaw from the
    /// orientation) for the next cycle.
    pub fn on_platen_pose(&mut self, unit: usize, msg: &PoseStamped) {
        let q = msg.pose.orientation;
        let yaw = (2.0 * (q.w * q.z + q.x * q.y)).atan2(1.0 - 2.0 * (q.y * q.y + q.z * q.z));
        let stamp_s = time_s(msg.header.stamp).unwrap_or(f64::NAN);
        self.guard.take_platen_pose(PlatenPoseIn {
            unit,
            stamp_s,
            pose: [msg.pose.position.x, msg.pose.position.y, yaw],
        });
    }

    /// Takes a platen unit's move request for the next cycle; its answer is
    /// among that cycle's [`GuardNode::grants`].
    pub fn on_move_request(&mut self, unit: usize, msg: &PlatenMoveRequest) {
        self.guard.take_move_request(MoveRequest {
            unit,
            request_id: msg.request_id,
            target: [msg.target.x, msg.target.y, msg.target.theta],
        });
    }

    /// The answers to this cycle's move requests: (unit, grant).
    pub fn grants(&self) -> &[(usize, PlatenGrant)] {
        &self.grants[..self.n_grants]
    }

    /// Releases latched stops (`latch_stops`) of robots the guard now lets
    /// go; refuses, naming them, while any is still in conflict.
    pub fn reset_stops(&mut self) -> Result<String, String> {
        let mut released = Vec::new();
        let mut held = Vec::new();
        let (cell, io) = (&self.cell, &self.io);
        self.guard.reset_latches(|r, freed| {
            let name = &cell.manipulators[r].name;
            if freed {
                released.push(format!("`{name}`"));
            } else {
                held.push(format!("`{name}` ({})", io[r].cause));
            }
        });
        match (released.is_empty(), held.is_empty()) {
            (true, true) => Ok("no latched stops".into()),
            (_, true) => Ok(format!("released {}", released.join(", "))),
            _ => Err(format!(
                "still stopped: {}{}",
                held.join(", "),
                if released.is_empty() { String::new() } else { format!("; released {}", released.join(", ")) }
            )),
        }
    }

    /// Allows or forbids contact between two bodies named as in the
    /// workcell file (`robot/link`, an obstacle, a platen unit).
    pub fn set_contact(&mut self, a: &str, b: &str, allowed: bool) -> Result<String, String> {
        let (ra, rb) = (self.body(a)?, self.body(b)?);
        let r = if allowed { self.guard.allow_contact(ra, rb) } else { self.guard.forbid_contact(ra, rb) };
        r.map_err(|e| format!("`{a}` – `{b}`: {e}"))?;
        Ok(format!("contact between `{a}` and `{b}` {}", if allowed { "allowed" } else { "forbidden" }))
    }

    fn body(&self, s: &str) -> Result<BodyRef, String> {
        let c = &self.cell;
        if let Some((robot, link)) = s.split_once('/') {
            let ri = c.manipulators.iter().position(|m| m.name == robot).ok_or(format!("no manipulator `{robot}`"))?;
            let li = c.manipulators[ri]
                .robot
                .link_index(link)
                .ok_or(format!("manipulator `{robot}` has no link `{link}`"))?;
            return Ok(BodyRef::Link { robot: ri, link: li });
        }
        if let Some(i) = c.obstacles.iter().position(|o| o.name == s) {
            return Ok(BodyRef::Obstacle(i));
        }
        if let Some(i) = c.platen.as_ref().and_then(|p| p.units.iter().position(|u| u.name == s)) {
            return Ok(BodyRef::PlatenUnit(i));
        }
        Err(format!("`{s}` names no `robot/link`, obstacle or platen unit"))
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
        let next = check_param(&self.cell, &self.params, name, v)?;
        self.guard.set_tuning(tuning_of(&self.cell, &next)).map_err(|e| tuning_refused(name, v, e))?;
        self.guard.set_command_policy(policy_of(&next));
        self.params = next;
        Ok(())
    }

    /// The diagnostics of the last cycle, stamped `stamp`: one status per
    /// manipulator (decision, reason, closest pair, clearance, time to
    /// contact, cycle time) and one for the node.
    pub fn diagnostics(&mut self, stamp: Time) -> &DiagnosticArray {
        let n = self.io.len();
        let units = self.unit_status.len();
        self.diag.header.stamp = stamp;
        self.diag.status.resize_with(n + units + 1, DiagnosticStatus::default);
        for (u, st) in self.unit_status.iter().enumerate() {
            let s = &mut self.diag.status[n + u];
            let name = self.cell.platen.as_ref().map_or("?", |p| p.units[u].name.as_str());
            s.name.clear();
            let _ = write!(s.name, "workcell_guard: {name}");
            s.hardware_id.clear();
            s.hardware_id.push_str(name);
            s.message.clear();
            s.values.clear();
            match st {
                UnitStatus::Idle => {
                    s.level = DiagnosticStatus::OK;
                    s.message.push_str("idle");
                }
                UnitStatus::Moving { request_id, goal } => {
                    s.level = DiagnosticStatus::OK;
                    let _ = write!(
                        s.message,
                        "moving (request {request_id}) to ({:.4}, {:.4}, {:.4})",
                        goal[0], goal[1], goal[2]
                    );
                }
                UnitStatus::Stopped(why) => {
                    s.level = DiagnosticStatus::ERROR;
                    let _ = match why {
                        StopReason::Breach { cell, blocker } => write!(
                            s.message,
                            "stopped: outside its allocation at cell ({}, {}){}",
                            cell.0,
                            cell.1,
                            blocker.map(|b| format!(", on {}", blocker_name(&self.cell, b))).unwrap_or_default()
                        ),
                        StopReason::StalePose { age_s } => write!(s.message, "stopped: pose {age_s:.3} s old"),
                        StopReason::BadPose(e) => write!(s.message, "stopped: pose refused: {e}"),
                    };
                }
            }
        }
        let decisions = self.guard.decisions();
        for (r, s) in self.diag.status.iter_mut().take(n).enumerate() {
            self.names.fill_status(s, r, &decisions[r]);
            let io = &self.io[r];
            if let Some(f) = &io.fault {
                s.level = DiagnosticStatus::ERROR;
                s.message.clear();
                let _ = write!(s.message, "stop now: {f}");
            } else if let Decision::Stop(st) = decisions[r]
                && matches!(st.reason, Reason::Holding { .. })
                && !io.cause.is_empty()
            {
                let _ = write!(s.message, "; stopped for: {}", io.cause);
            } else if self.guard.latched(r) && !decisions[r].is_stop() {
                s.level = DiagnosticStatus::WARN;
                s.message.clear();
                let _ = write!(s.message, "latched stop: clear now, call ~/reset_stop (stopped for: {})", io.cause);
            }
            s.values.resize_with(6, KeyValue::default);
            set_kv(&mut s.values[3], "cycle_time_s", format_args!("{:.6}", self.cycle_s));
            set_kv(&mut s.values[4], "refused_messages", format_args!("{}", io.refused));
            match io.trajectory {
                Some(t) => set_kv(
                    &mut s.values[5],
                    "planned_trajectory",
                    format_args!("{} points, {:.3} s", t.points, t.duration_s),
                ),
                None => set_kv(&mut s.values[5], "planned_trajectory", format_args!("none")),
            }
        }
        let s = &mut self.diag.status[n + units];
        s.level = DiagnosticStatus::OK;
        s.name.clear();
        s.name.push_str("workcell_guard: node");
        s.hardware_id.clear();
        s.message.clear();
        s.message.push_str("running");
        s.values.resize_with(8, KeyValue::default);
        set_kv(&mut s.values[6], "first_stop_time_s", format_args!("{:.6}", self.first_s));
        // The cycle budget: the longest cycle since the last diagnostics.
        set_kv(&mut s.values[7], "cycle_time_max_s", format_args!("{:.6}", self.cycle_max_s));
        self.cycle_max_s = 0.0;
        match self.sensing.as_ref() {
            Some(sn) => match sn.report {
                Some(r) => set_kv(
                    &mut s.values[5],
                    "sensed_points",
                    format_args!(
                        "{} accepted, {} filtered (robots), {} outside, {} invalid; last cloud at {:.3} s",
                        r.accepted, r.filtered, r.outside, r.invalid, sn.last_cloud_s
                    ),
                ),
                None => set_kv(&mut s.values[5], "sensed_points", format_args!("first cloud being folded in")),
            },
            None => set_kv(&mut s.values[5], "sensed_points", format_args!("no cloud received")),
        }
        if let Some(e) = &self.cloud_error {
            s.level = DiagnosticStatus::WARN;
            s.message.clear();
            let _ = write!(s.message, "point cloud refused: {e}");
        }
        let t = self.guard.tuning();
        set_kv(&mut s.values[0], "rate_hz", format_args!("{}", self.params.rate_hz));
        set_kv(&mut s.values[1], "cycles", format_args!("{}", self.stats.cycles));
        set_kv(&mut s.values[2], "joint_states", format_args!("{}", self.stats.joint_states));
        set_kv(&mut s.values[3], "refused_messages", format_args!("{}", self.stats.refused));
        set_kv(
            &mut s.values[4],
            "tuning",
            format_args!(
                "clearance_m {} release_m {} watchdog_s {} release_hold_s {}",
                t.clearance_m, t.release_m, t.watchdog_s, t.release_hold_s
            ),
        );
        &self.diag
    }

    fn build_markers(&mut self) {
        let frame = self.cell.cell_frame.clone();
        self.markers.markers.clear();
        for (r, m) in self.cell.manipulators.iter().enumerate() {
            for i in 0..self.io[r].poser.model_slots().len() {
                self.markers.markers.push(Marker {
                    header: Header { stamp: Time::default(), frame_id: frame.clone() },
                    ns: format!("{}/spheres", m.name),
                    id: i as i32,
                    kind: 2, // SPHERE
                    action: Marker::ADD,
                    color: GREY,
                    ..Marker::default()
                });
            }
        }
        // The static cell: its surface (occupied voxels with a free
        // neighbour) as one cube list, thinned evenly past the cap.
        let f = self.guard.field();
        let g = *f.grid();
        let d = f.dims();
        let free = |x: usize, y: usize, z: usize, dx: isize, dy: isize, dz: isize| {
            let (a, b, c) = (x as isize + dx, y as isize + dy, z as isize + dz);
            a < 0
                || b < 0
                || c < 0
                || a >= d[0] as isize
                || b >= d[1] as isize
                || c >= d[2] as isize
                || !f.occupied([a as usize, b as usize, c as usize])
        };
        let mut surface = Vec::new();
        for x in 0..d[0] {
            for y in 0..d[1] {
                for z in 0..d[2] {
                    if f.occupied([x, y, z])
                        && (free(x, y, z, -1, 0, 0)
                            || free(x, y, z, 1, 0, 0)
                            || free(x, y, z, 0, -1, 0)
                            || free(x, y, z, 0, 1, 0)
                            || free(x, y, z, 0, 0, -1)
                            || free(x, y, z, 0, 0, 1))
                    {
                        surface.push([x, y, z]);
                    }
                }
            }
        }
        let stride = surface.len().div_ceil(MAX_VOXEL_MARKERS).max(1);
        let c = |i: usize, a: usize| g.origin_m[a] + (i as f64 + 0.5) * g.resolution_m;
        let points: Vec<Point> =
            surface.iter().step_by(stride).map(|v| Point { x: c(v[0], 0), y: c(v[1], 1), z: c(v[2], 2) }).collect();
        let s = g.resolution_m;
        self.cell_markers.markers = vec![Marker {
            header: Header { stamp: Time::default(), frame_id: frame },
            ns: "cell/occupied_voxels".into(),
            id: 0,
            kind: Marker::CUBE_LIST,
            action: Marker::ADD,
            scale: crate::msg::Vector3 { x: s, y: s, z: s },
            color: VOXEL,
            points,
            ..Marker::default()
        }];
    }

    /// Markers of the robots' spheres at their latest joint states,
    /// coloured by the robot's clearance (green: beyond the release margin;
    /// amber: within it; red: stopped for proximity, the closest pair's
    /// links brightest; grey: no joint state yet).
    pub fn markers(&mut self, stamp: Time) -> &MarkerArray {
        let t = self.guard.tuning();
        let decisions = self.guard.decisions();
        let mut k = 0;
        for (r, io) in self.io.iter_mut().enumerate() {
            let slots = io.poser.model_slots();
            let n = slots.len();
            let ok = io.has_q && io.poser.pose(&io.q, &mut io.posed).is_ok();
            let (colour, pair) = match decisions[r] {
                Decision::Continue { clearance_m, pair } => {
                    (if (clearance_m as f64) > t.release_m { GREEN } else { AMBER }, pair)
                }
                Decision::Stop(s) => (if s.pair.is_some() { RED } else { AMBER }, s.pair),
            };
            let hot = match pair {
                Some((Body::Link { robot, link }, _)) if robot as usize == r => Some(link),
                _ => None,
            };
            for (m, &slot) in self.markers.markers[k..k + n].iter_mut().zip(slots) {
                let i = slot as usize;
                m.header.stamp = stamp;
                if !ok {
                    m.action = Marker::DELETE;
                    continue;
                }
                m.action = Marker::ADD;
                m.pose.position = Point { x: io.posed.x[i] as f64, y: io.posed.y[i] as f64, z: io.posed.z[i] as f64 };
                let dia = 2.0 * io.posed.r[i] as f64;
                m.scale = crate::msg::Vector3 { x: dia, y: dia, z: dia };
                m.color = colour;
                if hot == Some(io.posed.link[i] as u16) {
                    m.color.a = 1.0;
                }
            }
            k += n;
        }
        &self.markers
    }

    /// The static cell's surface voxels as a cube-list marker (publish it
    /// now and then: it is large and changes only with the field).
    pub fn cell_markers(&mut self, stamp: Time) -> &MarkerArray {
        for m in &mut self.cell_markers.markers {
            m.header.stamp = stamp;
        }
        &self.cell_markers
    }

    /// A joint state's stamp in seconds (for transports that cycle on
    /// arrival and want the sample's age).
    pub fn stamp_s(msg: &JointState) -> Option<f64> {
        time_s(msg.header.stamp)
    }
}

fn blocker_name(cell: &Workcell, b: Blocker) -> String {
    let p = cell.platen.as_ref();
    match b {
        Blocker::Unit(u) => p.and_then(|p| p.units.get(u)).map_or("?".into(), |u| u.name.clone()),
        Blocker::Obstacle(o) => p.and_then(|p| p.obstacles.get(o)).map_or("?".into(), |o| o.name.clone()),
        Blocker::Edge => "edge".into(),
    }
}

/// Fills a grant message from the allocator's answer.
fn fill_grant(g: &mut PlatenGrant, a: &Answer, cell: &Workcell, now_s: f64) {
    g.header.stamp = crate::convert::to_time(now_s).unwrap_or_default();
    g.request_id = a.request_id();
    g.blocker.clear();
    g.reason.clear();
    g.fraction = 0.0;
    g.retry_after_s = 0.0;
    g.goal = Pose2D::default();
    let pose = |p: [f64; 3]| Pose2D { x: p[0], y: p[1], theta: p[2] };
    match *a {
        Answer::Granted { goal, .. } => {
            g.result = PlatenGrant::GRANTED;
            g.goal = pose(goal);
            g.fraction = 1.0;
        }
        Answer::Partial { goal, fraction, blocker, .. } => {
            g.result = PlatenGrant::PARTIAL;
            g.goal = pose(goal);
            g.fraction = fraction;
            g.blocker.push_str(&blocker_name(cell, blocker));
        }
        Answer::Denied { retry_after_s, blocker, .. } => {
            g.result = PlatenGrant::DENIED;
            g.retry_after_s = retry_after_s;
            g.blocker.push_str(&blocker_name(cell, blocker));
        }
        Answer::Refused { reason, .. } => {
            g.result = PlatenGrant::REFUSED;
            let _ = match reason {
                Refusal::Busy { current } => write!(g.reason, "busy: request {current} not yet arrived"),
                Refusal::RetryTooSoon { wait_s } => write!(g.reason, "retry too soon: wait {wait_s:.3} s"),
                Refusal::NoPose => write!(g.reason, "no pose received"),
                Refusal::StalePose { age_s } => write!(g.reason, "stale pose: {age_s:.3} s old"),
                Refusal::Stopped => write!(g.reason, "stopped (see diagnostics)"),
                Refusal::BadTarget => write!(g.reason, "target is not a finite pose"),
                Refusal::UnknownUnit => write!(g.reason, "unknown unit"),
            };
        }
    }
}

fn set_kv(kv: &mut KeyValue, key: &str, v: std::fmt::Arguments<'_>) {
    if kv.key != key {
        kv.key.clear();
        kv.key.push_str(key);
    }
    kv.value.clear();
    let _ = kv.value.write_fmt(v);
}
