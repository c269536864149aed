//! The `r2r` transport (cargo feature `r2r`): the node on rcl, for colcon
//! workspaces with ROS 2 Humble or Jazzy sourced. Like the `dds`
//! transport it only moves messages between the middleware and
//! [`GuardNode`](crate::node::GuardNode): r2r's generated messages are converted to and from this
//! crate's message types (moving vectors and strings, not copying them, on
//! the way in).
//!
//! rcl reads the command line itself (`--ros-args`, remaps, `__node`,
//! `__ns`), the RMW reads `ROS_DOMAIN_ID` and the localhost settings; the
//! parameters are read as the `dds` transport reads them and served
//! through r2r's parameter services, each update checked by
//! [`check_param`] and refused with its reason.
//!
//! Messages whose generated types exist only in a workspace that built
//! them (this package's `workcell_guard_msgs`, MoveIt's `moveit_msgs`,
//! control_msgs' `SpeedScalingFactor`) go through r2r's untyped API as JSON
//! with the ROS field names, which the serde twins in [`msg`](crate::msg)
//! carry. The services are typed and served through the node itself
//! ([`services`]): one participant, the node's, as rclcpp's.

use crate::args::RosArgs;
use crate::event_loop::{self, Incoming, Transport, Trigger};
use crate::msg;
use crate::node::check_param;
use crate::params::NodeParams;
use crate::qos::{DurabilityKind, Endpoint, HistoryKind, QosOverrides, ReliabilityKind};
use crate::startup::{self, NODE_NAME, PANIC_ON_FRAME_ID, RunError, build_node, catch_panics};
use crate::topics::{QosClass, Role};
use ::r2r as r2;
use futures::StreamExt;
use r2::{ParameterValue, QosProfile};
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use workcell_guard_description::workcell::{ScalingMessage, Workcell};

pub use convert::*;
use convert::{time_out, type_name};

/// An r2r parameter value as JSON for [`check_param`].
pub fn json_of(v: &ParameterValue) -> Value {
    match v {
        ParameterValue::NotSet => Value::Null,
        ParameterValue::Bool(b) => Value::Bool(*b),
        ParameterValue::Integer(i) => Value::from(*i),
        // (JSON has no NaN or infinity: as text, which the checks name.)
        ParameterValue::Double(d) if !d.is_finite() => Value::String(d.to_string()),
        ParameterValue::Double(d) => Value::from(*d),
        ParameterValue::String(s) => Value::String(s.clone()),
        ParameterValue::BoolArray(a) => Value::from(a.clone()),
        ParameterValue::ByteArray(a) => Value::from(a.clone()),
        ParameterValue::IntegerArray(a) => Value::from(a.clone()),
        ParameterValue::DoubleArray(a) => Value::from(a.clone()),
        ParameterValue::StringArray(a) => Value::from(a.clone()),
    }
}

/// The node's parameters as r2r serves them: each set is checked against
/// the current values and refused with its reason, or handed to the node.
struct Params {
    cell: Arc<Workcell>,
    current: NodeParams,
    declared: Vec<(&'static str, ParameterValue)>,
    tx: tokio::sync::mpsc::UnboundedSender<Vec<(String, Value)>>,
}

fn refused(name: &str, e: impl std::fmt::Display) -> r2::Error {
    r2::Error::ParameterValueConv { name: name.to_string(), msg: e.to_string() }
}

impl r2::RosParams for Params {
    fn register_parameters(
        &mut self,
        prefix: &str,
        _param: Option<r2::Parameter>,
        params: &mut r2::indexmap::IndexMap<String, r2::Parameter>,
    ) -> r2::Result<()> {
        for (name, value) in &self.declared {
            let key = format!("{prefix}{name}");
            // r2r's descriptor carries a description only (no range, no
            // read-only flag): the description says both.
            let description = crate::params::spec(name).map_or("", |s| s.doc);
            params.insert(key, r2::Parameter { value: value.clone(), description });
        }
        Ok(())
    }

    fn get_parameter(&mut self, name: &str) -> r2::Result<ParameterValue> {
        self.declared
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| r2::Error::InvalidParameterName { name: name.to_string() })
    }

    fn set_parameter(&mut self, name: &str, value: &ParameterValue) -> r2::Result<()> {
        let v = json_of(value);
        self.current = check_param(&self.cell, &self.current, name, &v).map_err(|e| refused(name, e))?;
        if let Some(d) = self.declared.iter_mut().find(|(n, _)| *n == name) {
            d.1 = value.clone();
        }
        self.tx.send(vec![(name.to_string(), v)]).map_err(|_| refused(name, "node stopped"))
    }

    fn check_parameter(&self, name: &str, value: &ParameterValue) -> r2::Result<()> {
        check_param(&self.cell, &self.current, name, &json_of(value)).map(|_| ()).map_err(|e| refused(name, e))
    }
}

fn declared(p: &NodeParams, cell: &Workcell) -> Vec<(&'static str, ParameterValue)> {
    crate::node::declared_parameters(p, cell)
        .into_iter()
        .map(|(k, v)| {
            let v = match v {
                Value::Bool(b) => ParameterValue::Bool(b),
                Value::Number(n) => ParameterValue::Double(n.as_f64().unwrap_or(f64::NAN)),
                Value::String(s) => ParameterValue::String(s),
                other => ParameterValue::String(other.to_string()),
            };
            (k, v)
        })
        .collect()
}

fn r2err(e: r2::Error) -> RunError {
    RunError::Dds(format!("rcl: {e}"))
}

fn latched() -> QosProfile {
    QosProfile::default().transient_local().keep_last(1).reliable()
}

/// Runs the node on rcl until SIGINT or SIGTERM.
pub fn run(ros: &RosArgs, matrix_cache: Option<&std::path::Path>) -> Result<(), RunError> {
    let mut core = build_node(ros, matrix_cache)?;
    let ctx = r2::Context::create().map_err(r2err)?;
    let name = ros.node_name.clone().unwrap_or_else(|| NODE_NAME.to_string());
    let ns = ros.namespace.clone().unwrap_or_default();
    let mut node = r2::Node::create(ctx, &name, &ns).map_err(r2err)?;

    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Vec<(String, Value)>>();
    let params = Arc::new(Mutex::new(Params {
        cell: Arc::new(core.cell().clone()),
        current: core.params().clone(),
        declared: declared(core.params(), core.cell()),
        tx,
    }));
    let (param_handler, _param_events) = node.make_derived_parameter_handler(params).map_err(r2err)?;

    let clock =
        r2::Clock::create(if core.params().use_sim_time { r2::ClockType::RosTime } else { r2::ClockType::SystemTime })
            .map_err(r2err)?;

    let mut io = make_io(&mut node, ros, &core, clock)?;
    let node = Arc::new(Mutex::new(node));
    let spin = node.clone();
    let running = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let spinning = running.clone();
    let spinner = std::thread::Builder::new().name("rcl-spin".into()).spawn(move || {
        while spinning.load(std::sync::atomic::Ordering::Relaxed) {
            if let Ok(mut n) = spin.lock() {
                n.spin_once(Duration::from_millis(5));
            }
        }
    })?;

    core.inject_panic_on_frame_id(std::env::var(PANIC_ON_FRAME_ID).ok());
    let linger = Duration::from_secs_f64(core.params().shutdown_linger_s);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let checked = Arc::new(Mutex::new(Arc::new(core.cell().clone())));
    let mut cx = startup::loop_context(rx, checked, matrix_cache);
    // A panic on any thread (rcl's spinning one too) ends the loop with
    // every stop published true, as on the dds transport.
    let report = catch_panics(cx.panicked.clone());
    let parameters = async move {
        // (r2r's handler runs as a task of its own; should it ever end,
        // the loop runs on.)
        let _ = tokio::spawn(param_handler).await;
        std::future::pending::<()>().await
    };
    let ran = startup::serve(&rt, ros, &mut core, &mut io, &mut cx, parameters)?;
    // Every robot stopped, latched (rmw keeps the last sample only, so late
    // joiners get this `true`), while the node lingers on the wire.
    for p in &io.stops {
        let _ = p.publish(&r2::std_msgs::msg::Bool { data: true });
    }
    std::thread::sleep(linger);
    // rcl's objects go in order: the spinning stops, then the loop's tasks
    // and every publisher, subscription and service, then the node (the
    // last handle to it dropped on the spinning thread while publishers
    // were dropped here crashed the process on the way out).
    running.store(false, std::sync::atomic::Ordering::Relaxed);
    let _ = spinner.join();
    drop(rt);
    drop(io);
    drop(node);
    startup::finish(ran, &cx.panicked, &report)
}

/// Every subscription and publisher of the node, as the loop's transport.
/// This transport's profile of QoS class `class`.
fn profile(class: QosClass) -> QosProfile {
    match class {
        QosClass::Sensor => QosProfile::sensor_data(),
        QosClass::Reliable | QosClass::Requests => QosProfile::default(),
        QosClass::Latched => latched(),
        QosClass::Clock => QosProfile::default().best_effort().keep_last(1),
    }
}

/// Subscriptions merged into one stream, each message tagged with the
/// index of the subscription it came on (a robot's, a unit's).
fn tagged<T: 'static>(subs: Vec<impl futures::Stream<Item = T> + 'static>) -> Tagged<T> {
    futures::stream::select_all(subs.into_iter().enumerate().map(|(i, s)| s.map(move |m| (i, m)).boxed_local()))
}

/// The node's endpoints: a subscription or publisher for every row of the
/// topic table ([`crate::topics::table`]), the cancel clients of each
/// robot's actions, and the services.
// long: one arm per role of the topic table
fn make_io(
    node: &mut r2::Node,
    ros: &RosArgs,
    core: &crate::node::GuardNode,
    clock: r2::Clock,
) -> Result<R2rIo, RunError> {
    use r2::{diagnostic_msgs, geometry_msgs, sensor_msgs, std_msgs, trajectory_msgs, visualization_msgs};
    let q = Overridden::new(node, ros, &core.params().qos_overrides);
    let cell = core.cell();
    let robots = cell.manipulators.len();
    let (commands, speed) = (crate::topics::nones(robots), crate::topics::nones(robots));
    let mut outs = Outputs { commands, speed, cancels: Vec::new(), states: Vec::new() };
    let (mut joint_states, mut trajectories, mut unit_poses) = (Vec::new(), Vec::new(), Vec::new());
    let (mut move_requests, mut path_requests, mut displays) = (Vec::new(), Vec::new(), Vec::new());
    let (mut stops, mut arm_grants, mut grants) = (Vec::new(), Vec::new(), Vec::new());
    let (mut points, mut diagnostics, mut markers) = (None, None, None);
    for row in crate::topics::table(cell, core.params().use_sim_time) {
        let n = row.name.as_str();
        let sub = || q.sub(n, profile(row.qos));
        let publ = || q.publ(n, profile(row.qos));
        // This package's messages, MoveIt's and control_msgs' need not be
        // among r2r's generated types: untyped, as JSON.
        match row.role {
            Role::JointState(_) => {
                joint_states.push(node.subscribe::<sensor_msgs::msg::JointState>(n, sub()).map_err(r2err)?)
            }
            Role::Plan(_) => {
                trajectories.push(node.subscribe::<trajectory_msgs::msg::JointTrajectory>(n, sub()).map_err(r2err)?)
            }
            Role::Points => points = Some(node.subscribe::<sensor_msgs::msg::PointCloud2>(n, sub()).map_err(r2err)?),
            Role::PlatenPose(_) => {
                unit_poses.push(node.subscribe::<geometry_msgs::msg::PoseStamped>(n, sub()).map_err(r2err)?)
            }
            Role::MoveRequest(_) => {
                move_requests.push(untyped_sub(node, n, type_name::<msg::PlatenMoveRequest>(), sub())?)
            }
            Role::PathRequest(_) => {
                path_requests.push(untyped_sub(node, n, type_name::<msg::PlatenPathRequest>(), sub())?)
            }
            Role::Display(_) => displays.push(untyped_sub(node, n, type_name::<msg::DisplayTrajectory>(), sub())?),
            // rcl's ROS-time clock reads `/clock` itself; the cycle
            // instants are the recording's own.
            Role::Clock | Role::Cycle => {}
            Role::Stop(_) => stops.push(node.create_publisher::<std_msgs::msg::Bool>(n, publ()).map_err(r2err)?),
            Role::ArmGrant(_) => arm_grants.push(untyped_pub(node, n, type_name::<msg::ManipulatorGrant>(), publ())?),
            Role::State(_) => outs.states.push(untyped_pub(node, n, type_name::<msg::GuardState>(), publ())?),
            Role::Speed(r, kind) => {
                let ty = match kind {
                    ScalingMessage::SpeedScalingFactor => type_name::<msg::SpeedScalingFactor>(),
                    ScalingMessage::Float64 => type_name::<msg::Float64>(),
                };
                outs.speed[r] = Some((kind, untyped_pub(node, n, ty, publ())?));
            }
            Role::Command(r) => {
                let p = node.create_publisher::<trajectory_msgs::msg::JointTrajectory>(n, publ()).map_err(r2err)?;
                outs.commands[r] = Some(p);
            }
            Role::PlatenGrant(_) => grants.push(untyped_pub(node, n, type_name::<msg::PlatenGrant>(), publ())?),
            Role::Diagnostics => {
                let p = node.create_publisher::<diagnostic_msgs::msg::DiagnosticArray>(n, publ()).map_err(r2err)?;
                diagnostics = Some(p);
            }
            Role::Markers => {
                let p = node.create_publisher::<visualization_msgs::msg::MarkerArray>(n, publ()).map_err(r2err)?;
                markers = Some(p);
            }
        }
    }
    for m in &cell.manipulators {
        let mut cancels = Vec::new();
        for a in m.topics.controller_action.iter().chain(&m.topics.moveit_actions) {
            cancels.push(
                node.create_client::<r2::action_msgs::srv::CancelGoal::Service>(
                    &format!("{a}/_action/cancel_goal"),
                    QosProfile::services_default(),
                )
                .map_err(r2err)?,
            );
        }
        outs.cancels.push(cancels);
    }
    q.check()?;
    Ok(R2rIo {
        joint_states: tagged(joint_states),
        trajectories: tagged(trajectories),
        clouds: match points {
            Some(p) => p.boxed_local(),
            None => futures::stream::pending().boxed_local(),
        },
        unit_poses: tagged(unit_poses),
        move_requests: tagged(move_requests),
        path_requests: tagged(path_requests),
        displays: tagged(displays),
        display_robots: event_loop::display_topics(cell),
        services: services::create(node).map_err(r2err)?,
        stops,
        outs,
        grants,
        arm_grants,
        diagnostics,
        markers,
        clock: std::cell::RefCell::new(clock),
    })
}

/// An untyped subscription to `n` of type `ty` (`pkg/msg/Name`).
fn untyped_sub(
    node: &mut r2::Node,
    n: &str,
    ty: String,
    qos: QosProfile,
) -> Result<impl futures::Stream<Item = r2::Result<Value>> + 'static, RunError> {
    node.subscribe_untyped(n, &ty, qos).map_err(r2err)
}

/// An untyped publisher on `n` of type `ty` (`pkg/msg/Name`).
fn untyped_pub(node: &mut r2::Node, n: &str, ty: String, qos: QosProfile) -> Result<r2::PublisherUntyped, RunError> {
    node.create_publisher_untyped(n, &ty, qos).map_err(r2err)
}

struct Outputs {
    commands: Vec<Option<r2::Publisher<r2::trajectory_msgs::msg::JointTrajectory>>>,
    speed: Vec<Option<(ScalingMessage, r2::PublisherUntyped)>>,
    cancels: Vec<Vec<r2::Client<r2::action_msgs::srv::CancelGoal::Service>>>,
    states: Vec<r2::PublisherUntyped>,
}

/// The QoS of each endpoint, with the `qos_overrides` parameters applied
/// (names resolved as the `dds` transport resolves them), and the
/// endpoints seen, to refuse an override that names none.
struct Overridden<'a> {
    ros: &'a RosArgs,
    node: String,
    ns: String,
    overrides: &'a QosOverrides,
    seen: std::cell::RefCell<Vec<(String, Endpoint)>>,
}

impl<'a> Overridden<'a> {
    fn new(node: &r2::Node, ros: &'a RosArgs, overrides: &'a QosOverrides) -> Overridden<'a> {
        Overridden {
            ros,
            node: node.name().unwrap_or_else(|_| NODE_NAME.to_string()),
            ns: node.namespace().unwrap_or_else(|_| "/".to_string()),
            overrides,
            seen: std::cell::RefCell::new(Vec::new()),
        }
    }

    fn apply(&self, n: &str, end: Endpoint, base: QosProfile) -> QosProfile {
        let fq = crate::topics::resolve_name(self.ros, &self.node, &self.ns, n);
        let o = self.overrides.get(&fq, end).copied();
        self.seen.borrow_mut().push((fq, end));
        let Some(o) = o else { return base };
        let mut q = base;
        q = match o.reliability {
            Some(ReliabilityKind::Reliable) => q.reliable(),
            Some(ReliabilityKind::BestEffort) => q.best_effort(),
            None => q,
        };
        q = match o.durability {
            Some(DurabilityKind::Volatile) => q.volatile(),
            Some(DurabilityKind::TransientLocal) => q.transient_local(),
            None => q,
        };
        match (o.history, o.depth) {
            (Some(HistoryKind::KeepAll), _) => q.keep_all(),
            (_, Some(d)) => q.keep_last(d as usize),
            _ => q,
        }
    }

    fn sub(&self, n: &str, base: QosProfile) -> QosProfile {
        self.apply(n, Endpoint::Subscription, base)
    }

    fn publ(&self, n: &str, base: QosProfile) -> QosProfile {
        self.apply(n, Endpoint::Publisher, base)
    }

    /// Every override names an endpoint of the node, or the node does not
    /// start.
    fn check(&self) -> Result<(), RunError> {
        self.overrides.check_against(&self.seen.borrow()).map_err(|e| {
            RunError::Param(crate::params::ParamError::Invalid {
                name: e.name,
                value: String::new(),
                problem: e.problem,
            })
        })
    }
}

type Tagged<T> = futures::stream::SelectAll<futures::stream::LocalBoxStream<'static, (usize, T)>>;

/// The r2r transport's side of the shared loop.
struct R2rIo {
    joint_states: Tagged<r2::sensor_msgs::msg::JointState>,
    trajectories: Tagged<r2::trajectory_msgs::msg::JointTrajectory>,
    clouds: futures::stream::LocalBoxStream<'static, r2::sensor_msgs::msg::PointCloud2>,
    unit_poses: Tagged<r2::geometry_msgs::msg::PoseStamped>,
    move_requests: Tagged<r2::Result<Value>>,
    path_requests: Tagged<r2::Result<Value>>,
    displays: Tagged<r2::Result<Value>>,
    display_robots: Vec<(String, Vec<usize>)>,
    /// The node's services ([`services::create`]).
    services: services::Services,
    stops: Vec<r2::Publisher<r2::std_msgs::msg::Bool>>,
    outs: Outputs,
    grants: Vec<r2::PublisherUntyped>,
    arm_grants: Vec<r2::PublisherUntyped>,
    diagnostics: Option<r2::Publisher<r2::diagnostic_msgs::msg::DiagnosticArray>>,
    markers: Option<r2::Publisher<r2::visualization_msgs::msg::MarkerArray>>,
    clock: std::cell::RefCell<r2::Clock>,
}

impl Transport for R2rIo {
    type Request = services::Request;

    async fn next(&mut self) -> Option<Incoming<services::Request>> {
        use Incoming as I;
        let srv = &mut self.services;
        tokio::select! {
            biased;
            Some((robot, m)) = self.joint_states.next() => Some(I::JointState(robot, joint_state_in(m))),
            Some(rq) = srv.reset_stop.next() => Some(I::ResetStop(rq)),
            Some(rq) = srv.reload.next() => Some(I::Reload(rq)),
            Some((rq, m)) = srv.set_contact.next() => Some(I::SetContact(rq, m)),
            Some((rq, m)) = srv.set_priority.next() => Some(I::SetPriority(rq, m)),
            Some(m) = self.clouds.next() => Some(I::Cloud(cloud_in(m))),
            Some((unit, m)) = self.unit_poses.next() => Some(I::PlatenPose(unit, pose_in(m))),
            Some((unit, m)) = self.move_requests.next() => {
                match m.map_err(|e| e.to_string()).and_then(|v| move_request_in(v).map_err(|e| e.to_string())) {
                    Ok(rq) => Some(I::MoveRequest(unit, rq)),
                    Err(e) => Some(I::Undecodable("move request", e)),
                }
            }
            Some((unit, m)) = self.path_requests.next() => {
                match m.map_err(|e| e.to_string()).and_then(|v| path_request_in(v).map_err(|e| e.to_string())) {
                    Ok(rq) => Some(I::PathRequest(unit, rq)),
                    Err(e) => Some(I::Undecodable("path request", e)),
                }
            }
            Some((d, m)) = self.displays.next() => match m.map_err(|e| e.to_string()).and_then(display_in) {
                Ok(msg) => Some(I::Display(self.display_robots[d].1.clone(), msg)),
                Err(e) => Some(I::Undecodable("display trajectory", e)),
            },
            Some((robot, m)) = self.trajectories.next() => Some(I::Trajectory(robot, trajectory_in(m))),
            else => None,
        }
    }

    fn now_s(&self) -> f64 {
        self.clock.borrow_mut().get_now().map(|d| d.as_secs_f64()).unwrap_or(f64::NAN)
    }

    fn publish_stop(&mut self, robot: usize, stop: msg::Bool) {
        if let Err(e) = self.stops[robot].publish(&bool_out(stop)) {
            tracing::warn!("stop not published: {e}");
        }
    }

    fn publish_state(&mut self, robot: usize, state: &msg::GuardState) {
        if let Err(e) = self.outs.states[robot].publish(state_out(state)) {
            tracing::warn!("state not published: {e}");
        }
    }

    fn publish_speed(&mut self, robot: usize, scaling: msg::Float64) {
        if let Some((kind, p)) = &self.outs.speed[robot] {
            let v = speed_out(*kind, scaling.data);
            if let Err(e) = p.publish(v) {
                tracing::warn!("speed scaling not published: {e}");
            }
        }
    }

    fn hold(&mut self, robot: usize, stamp: msg::Time) {
        if let Some(p) = &self.outs.commands[robot] {
            // An empty trajectory: joint_trajectory_controller stops and holds.
            let hold = r2::trajectory_msgs::msg::JointTrajectory {
                header: r2::std_msgs::msg::Header { stamp: time_out(stamp), frame_id: String::new() },
                joint_names: Vec::new(),
                points: Vec::new(),
            };
            if let Err(e) = p.publish(&hold) {
                tracing::warn!("hold not sent to the controller: {e}");
            }
        }
    }

    fn cancel_goals(&mut self, robot: usize) {
        // The answer is not waited for.
        for c in &self.outs.cancels[robot] {
            if let Err(e) = c.request(&cancel_all()) {
                tracing::warn!("goal cancel not sent: {e}");
            }
        }
    }

    fn send_trajectory(&mut self, robot: usize, trajectory: &msg::JointTrajectory) {
        if let Some(p) = &self.outs.commands[robot]
            && let Err(e) = p.publish(&trajectory_out(trajectory))
        {
            tracing::warn!("retreat not sent to the controller: {e}");
        }
    }

    fn publish_arm_grant(&mut self, robot: usize, grant: &msg::ManipulatorGrant) {
        if let Err(e) = self.arm_grants[robot].publish(arm_grant_out(grant)) {
            tracing::warn!("manipulator grant not published: {e}");
        }
    }

    fn publish_grant(&mut self, unit: usize, grant: &msg::PlatenGrant) {
        if let Err(e) = self.grants[unit].publish(grant_out(grant)) {
            tracing::warn!("grant not published: {e}");
        }
    }

    fn publish_diagnostics(&mut self, d: &msg::DiagnosticArray) {
        if let Some(p) = &self.diagnostics {
            let _ = p.publish(&diagnostics_out(d));
        }
    }

    fn publish_markers(&mut self, m: &msg::MarkerArray) {
        if let Some(p) = &self.markers {
            let _ = p.publish(&markers_out(m));
        }
    }

    fn markers_wanted(&self) -> bool {
        self.markers.as_ref().is_some_and(|p| p.get_inter_process_subscription_count().map_or(true, |n| n > 0))
    }

    fn answer_trigger(&mut self, _: Trigger, request: services::Request, answer: msg::TriggerResponse) {
        services::answer_trigger(request, answer);
    }

    fn answer_set_contact(&mut self, request: services::Request, answer: msg::SetContactResponse) {
        services::answer_set_contact(request, answer);
    }

    fn answer_set_priority(&mut self, request: services::Request, answer: msg::SetPriorityResponse) {
        services::answer_set_priority(request, answer);
    }
}

mod convert;
mod services;
#[cfg(test)]
mod tests;
