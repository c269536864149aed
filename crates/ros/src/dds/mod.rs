//! The `dds` transport: the node on the pure-Rust `ros2-client` (RustDDS),
//! so it runs where no ROS 2 is installed. It moves messages between DDS
//! and [`GuardNode`] and does nothing else.
//!
//! - Domain: `ROS_DOMAIN_ID` (0 when unset). Localhost only when
//!   `ROS_LOCALHOST_ONLY=1` or `ROS_AUTOMATIC_DISCOVERY_RANGE` is
//!   `LOCALHOST` (or `OFF`, which this transport also keeps on loopback):
//!   the participant then binds and announces on 127.0.0.1 only.
//! - Subscriptions: each manipulator's joint-state topic (best effort,
//!   keep last 10: the sensor-data profile, which any publisher matches)
//!   and trajectory topic (reliable, keep last 1).
//! - Publications: `<robot>/stop` (`std_msgs/Bool`, reliable, transient
//!   local, keep last 1; on change and every `stop_heartbeat_s`),
//!   `<robot>/grant`, `<robot>/state`, `diagnostics`, `markers`. RustDDS
//!   trims a transient-local writer's history to its depth only as readers
//!   acknowledge, every 6 s (its cache-cleaning period, fixed in
//!   `rtps/writer.rs`); with no reader it keeps every sample, up to 8192.
//!   Each latched writer is therefore given a `ResourceLimits` bound
//!   ([`topics::Retention`]): memory stays flat with nobody listening, and
//!   a late joiner's replay is that many samples at most, the newest last.
//! - `points` (`sensor_msgs/PointCloud2`, cell frame): sensed obstacles,
//!   folded into the distance field on a worker thread.
//! - The workcell's `display_trajectory_topic`s (MoveIt's
//!   `moveit_msgs/DisplayTrajectory`): each robot's joints' columns become
//!   its planned trajectory.
//! - Platen units: `<unit>/pose` (`geometry_msgs/PoseStamped`, surface
//!   frame) and `<unit>/move_request` in, `<unit>/grant` out
//!   (`workcell_guard_msgs`).
//! - Services: `~/reset_stop` and `~/reload` (`std_srvs/Trigger`),
//!   `~/set_contact` and `~/set_priority` (`workcell_guard_msgs`), each
//!   answering both request mappings and announced as the node's
//!   ([`services`]). A reload builds
//!   the new guard beside the running one and swaps it in; a workcell that
//!   fails validation is refused and the old one keeps running.
//! - Parameters through the six `rcl_interfaces` services; each update is
//!   checked as [`crate::node::check_params`] does (a set as a whole) and
//!   refused with its reason.
//! - On shutdown (SIGINT, SIGTERM) and on a panic every robot's stop is
//!   published true, then again by a fresh writer per robot whose history
//!   holds only that `true`; the old writers go, and the node stays on the
//!   wire for `shutdown_linger_s`, so a subscriber that joins late (even
//!   after the signal) is sent `true` and nothing older.

mod io;
pub mod param_services;
pub mod peer;
pub mod recorder;
pub mod services;
mod topics;

use crate::args::RosArgs;
use crate::event_loop::{self, Incoming, Transport, Trigger};
use crate::msg::{
    Bool, CancelGoalRequest, CancelGoalResponse, DiagnosticArray, DisplayTrajectory, Float64, JointState,
    JointTrajectory, ManipulatorGrant, MarkerArray, PlatenGrant, PlatenMoveRequest, PlatenPathRequest, PointCloud2,
    PoseStamped, RosMessage, SetContactRequest, SetContactResponse, SetPriorityRequest, SetPriorityResponse,
    TriggerRequest, TriggerResponse,
};
use crate::params::NodeParams;
use crate::startup::{self, EnvError, NODE_NAME, PANIC_ON_FRAME_ID, RunError, build_node, catch_panics};
use futures::StreamExt;
use io::DdsIo;
use ros2_client::dds::rustdds::DomainParticipantBuilder;
use ros2_client::dds::{Client, Context, Node, Publisher, ServiceMapping, Subscription};
use ros2_client::{
    Message, MessageTypeName, Name, NodeName, NodeOptions, ParameterValue, QosProfile, ServiceTypeName,
    qos::{Durability, History, Reliability, WhenFull},
};
use serde_json::Value;
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
pub use topics::{LATCHED, SENSOR};
use topics::{Topics, create_topics, name, topic};
use workcell_guard_description::workcell::Workcell;

impl Message for SetContactRequest {}
impl Message for SetContactResponse {}
impl Message for SetPriorityRequest {}
impl Message for SetPriorityResponse {}
impl Message for TriggerRequest {}
impl Message for TriggerResponse {}
impl Message for CancelGoalRequest {}
impl Message for CancelGoalResponse {}

/// What the environment says about DDS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DdsEnv {
    /// `ROS_DOMAIN_ID`.
    pub domain_id: u16,
    /// Keep discovery and traffic on 127.0.0.1.
    pub localhost_only: bool,
}

impl DdsEnv {
    /// Reads `ROS_DOMAIN_ID`, `ROS_LOCALHOST_ONLY` and
    /// `ROS_AUTOMATIC_DISCOVERY_RANGE` through `get`.
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<DdsEnv, EnvError> {
        let err = |var, value: &str, problem| EnvError { var, value: value.to_string(), problem };
        let domain_id = match get("ROS_DOMAIN_ID").filter(|s| !s.trim().is_empty()) {
            None => 0,
            Some(s) => match s.trim().parse::<u16>() {
                Ok(d) if d <= 232 => d,
                _ => return Err(err("ROS_DOMAIN_ID", &s, "must be an integer in 0..=232")),
            },
        };
        let only = match get("ROS_LOCALHOST_ONLY").as_deref().map(str::trim) {
            None | Some("") | Some("0") => false,
            Some("1") => true,
            Some(v) => return Err(err("ROS_LOCALHOST_ONLY", v, "must be 0 or 1")),
        };
        let range = match get("ROS_AUTOMATIC_DISCOVERY_RANGE").as_deref().map(str::trim) {
            None | Some("") | Some("SUBNET") | Some("SYSTEM_DEFAULT") => false,
            Some("LOCALHOST") | Some("OFF") => true,
            Some(v) => {
                return Err(err(
                    "ROS_AUTOMATIC_DISCOVERY_RANGE",
                    v,
                    "must be SUBNET, LOCALHOST, OFF or SYSTEM_DEFAULT",
                ));
            }
        };
        Ok(DdsEnv { domain_id, localhost_only: only || range })
    }

    /// From the process environment.
    pub fn from_env() -> Result<DdsEnv, EnvError> {
        DdsEnv::from_vars(|k| std::env::var(k).ok())
    }
}

fn dds<E: std::fmt::Debug>(e: E) -> RunError {
    RunError::Dds(format!("{e:?}"))
}

fn json_of(v: &ParameterValue) -> Value {
    match v {
        ParameterValue::NotSet => Value::Null,
        ParameterValue::Boolean(b) => Value::Bool(*b),
        ParameterValue::Integer(i) => Value::from(*i),
        // (JSON has no NaN or infinity: as text, which the checks name.)
        ParameterValue::Double(d) if !d.is_finite() => Value::String(d.to_string()),
        ParameterValue::Double(d) => Value::from(*d),
        ParameterValue::String(s) => Value::String(s.clone()),
        ParameterValue::ByteArray(a) => Value::from(a.clone()),
        ParameterValue::BooleanArray(a) => Value::from(a.clone()),
        ParameterValue::IntegerArray(a) => Value::from(a.clone()),
        ParameterValue::DoubleArray(a) => Value::from(a.clone()),
        ParameterValue::StringArray(a) => Value::from(a.clone()),
    }
}

fn declared(p: &NodeParams, cell: &Workcell) -> Vec<(&'static str, ParameterValue)> {
    crate::node::declared_parameters(p, cell)
        .into_iter()
        .map(|(k, v)| {
            let v = match v {
                Value::Bool(b) => ParameterValue::Boolean(b),
                Value::Number(n) => ParameterValue::Double(n.as_f64().unwrap_or(f64::NAN)),
                Value::String(s) => ParameterValue::String(s),
                other => ParameterValue::String(other.to_string()),
            };
            (k, v)
        })
        .collect()
}

/// Runs the node until SIGINT or SIGTERM.
// long: the transport's start-up in its order: participant, node, endpoints, services, loop, end
pub fn run(ros: &RosArgs, matrix_cache: Option<&std::path::Path>) -> Result<(), RunError> {
    let env = DdsEnv::from_env()?;
    let mut core = build_node(ros, matrix_cache)?;
    let node_name = ros.node_name.clone().unwrap_or_else(|| NODE_NAME.to_string());
    let ns = ros.namespace.clone().unwrap_or_else(|| "/".to_string());

    let mut dp = DomainParticipantBuilder::new(env.domain_id);
    if env.localhost_only {
        dp = dp.with_only_networks([Ipv4Addr::LOCALHOST]);
    }
    let context = Context::from_domain_participant(dp.build().map_err(dds)?).map_err(dds)?;

    // Parameter updates: checked as a whole and answered by the parameter
    // services (ours, both request mappings), applied by the loop between
    // cycles. ros2-client's store only keeps the values (for the parameter
    // events): it gets no validator, since it would check one parameter
    // of a set at a time.
    let shared = Arc::new(Mutex::new(core.params().clone()));
    let cell = Arc::new(Mutex::new(Arc::new(core.cell().clone())));
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Vec<(String, Value)>>();
    let mut options = NodeOptions::new().enable_rosout(true).start_parameter_services(false);
    for (k, v) in declared(core.params(), core.cell()) {
        options = options.declare_parameter(k, v);
    }
    for (k, v) in core.params().qos_overrides.parameters() {
        let v = match v {
            Value::Number(n) if n.is_i64() => ParameterValue::Integer(n.as_i64().unwrap_or(0)),
            Value::String(s) => ParameterValue::String(s.clone()),
            other => ParameterValue::String(other.to_string()),
        };
        options = options.declare_parameter(k, v);
    }
    let (ps, pc) = (shared.clone(), cell.clone());
    let node_name_ros = NodeName::new(&ns, &node_name)
        .map_err(|e| RunError::Name { name: format!("{ns}/{node_name}"), problem: format!("{e:?}") })?;
    let mut node = context.new_node(node_name_ros, options).map_err(dds)?;
    if core.params().use_sim_time {
        node.set_parameter("use_sim_time", ParameterValue::Boolean(true)).map_err(RunError::Dds)?;
    }
    let param_services = param_services::ParamServices::new(&context.domain_participant(), &mut node, (ps, pc, tx))?;
    let topics = create_topics(
        &context.domain_participant(),
        &mut node,
        ros,
        (&node_name, &ns),
        core.cell(),
        &core.params().qos_overrides,
        core.params().use_sim_time,
    )?;
    // No ros2-client spinner: the node serves its parameters itself and
    // reads `/clock` itself (as rosgraph_msgs/Clock, only with
    // `use_sim_time`); the spinner would subscribe to `/clock` as
    // builtin_interfaces/Time whatever `use_sim_time` says.
    tracing::info!(
        "node {} on DDS domain {}{}: {} manipulators, {} Hz",
        node.fully_qualified_name(),
        env.domain_id,
        if env.localhost_only { " (localhost only)" } else { "" },
        core.cell().manipulators.len(),
        core.params().rate_hz
    );

    tracing::debug!("parameters in use: {:?}", core.params());
    core.inject_panic_on_frame_id(std::env::var(PANIC_ON_FRAME_ID).ok());
    let linger = Duration::from_secs_f64(core.params().shutdown_linger_s);
    let mut topics = topics;
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let mut cx = startup::loop_context(rx, cell, matrix_cache);
    // A panic anywhere (this thread's is caught in `serve`, another
    // thread's raises the flag the loop watches) ends the loop; every stop
    // then goes out true before the process ends.
    let report = catch_panics(cx.panicked.clone());
    let ran = {
        let _entered = rt.enter();
        let mut io = DdsIo::new(&node, &topics, context.domain_participant());
        startup::serve(&rt, ros, &mut core, &mut io, &mut cx, param_services.serve(&node))?
    };
    let left = shutdown_watchdog(linger + Duration::from_secs(2));
    leave_stopped(&mut node, &mut topics, linger);
    left.store(true, Ordering::SeqCst);
    startup::finish(ran, &cx.panicked, &report)
}

/// A thread that ends the process if the returned flag is not raised
/// within `deadline`: RustDDS deadlocks creating a writer once its
/// participant's event loop has gone (it drops the new writer while
/// holding the publisher's lock, and the drop takes that lock), and
/// [`leave_stopped`] creates the fresh stop writers after every stop has
/// already gone out `true` on the old ones. A node told to stop must not
/// hang instead.
fn shutdown_watchdog(deadline: Duration) -> Arc<AtomicBool> {
    let left = Arc::new(AtomicBool::new(false));
    let flag = left.clone();
    let spawned = std::thread::Builder::new().name("shutdown-watchdog".into()).spawn(move || {
        std::thread::sleep(deadline);
        if !flag.load(Ordering::SeqCst) {
            eprintln!(
                "workcell_guard: shutdown stalled for {deadline:?} creating the fresh stop writers (RustDDS); every \
                 stop was already published true; exiting"
            );
            std::process::exit(3);
        }
    });
    if let Err(e) = spawned {
        tracing::error!("no shutdown watchdog: {e}");
    }
    left
}

/// Leaves every robot stopped on the wire: `true` on each stop writer (its
/// subscribers get it now), then a fresh writer per robot whose history is
/// that one `true`; once the old writers have had time to deliver, they go,
/// so a subscriber that joins from then on (transient local) is sent
/// `true` and nothing older. The node stays on the wire for `linger`.
fn leave_stopped(node: &mut Node, topics: &mut Topics, linger: Duration) {
    for p in &topics.stops {
        if let Err(e) = p.publish(Bool { data: true }) {
            tracing::error!("final stop not published: {e:?}");
        }
    }
    let mut fresh = Vec::with_capacity(topics.stop_topics.len());
    for t in &topics.stop_topics {
        match node.create_publisher::<Bool>(t, None) {
            Ok(p) => {
                if let Err(e) = p.publish(Bool { data: true }) {
                    tracing::error!("final stop not published: {e:?}");
                }
                fresh.push(p);
            }
            Err(e) => tracing::error!("no fresh stop writer: {e:?}"),
        }
    }
    // Long enough for RustDDS's event loop to put the old writers' `true`
    // on the wire (their subscribers acknowledge it, or get the fresh
    // writers' once they discover them); short enough that a subscriber
    // joining now cannot finish discovering the old writers first, so
    // nothing stale is replayed to it.
    let handover = Duration::from_millis(10).min(linger);
    std::thread::sleep(handover);
    if fresh.len() == topics.stops.len() {
        topics.stops.clear();
    }
    std::thread::sleep(linger.saturating_sub(handover));
    drop(fresh);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topics::resolve_name;

    fn env(vars: &[(&str, &str)]) -> Result<DdsEnv, EnvError> {
        let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        DdsEnv::from_vars(|k| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()))
    }

    #[test]
    fn ros_environment_is_read_as_ros_does() {
        assert_eq!(env(&[]).unwrap(), DdsEnv { domain_id: 0, localhost_only: false });
        assert_eq!(env(&[("ROS_DOMAIN_ID", "42")]).unwrap().domain_id, 42);
        assert!(env(&[("ROS_LOCALHOST_ONLY", "1")]).unwrap().localhost_only);
        assert!(!env(&[("ROS_LOCALHOST_ONLY", "0")]).unwrap().localhost_only);
        assert!(env(&[("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")]).unwrap().localhost_only);
        assert!(!env(&[("ROS_AUTOMATIC_DISCOVERY_RANGE", "SUBNET")]).unwrap().localhost_only);
        let e = env(&[("ROS_DOMAIN_ID", "233")]).unwrap_err();
        assert_eq!(e.var, "ROS_DOMAIN_ID");
        assert!(env(&[("ROS_DOMAIN_ID", "x")]).is_err());
        assert_eq!(env(&[("ROS_LOCALHOST_ONLY", "yes")]).unwrap_err().var, "ROS_LOCALHOST_ONLY");
        assert_eq!(env(&[("ROS_AUTOMATIC_DISCOVERY_RANGE", "lan")]).unwrap_err().var, "ROS_AUTOMATIC_DISCOVERY_RANGE");
    }

    #[test]
    fn names_resolve_in_the_namespace_after_remaps() {
        let (ros, _) =
            RosArgs::parse(["--ros-args", "-r", "markers:=viz/guard_markers", "-r", "/cell/diagnostics:=/diagnostics"])
                .unwrap();
        assert_eq!(resolve_name(&ros, NODE_NAME, "/", "arm_left/joint_states"), "/arm_left/joint_states");
        assert_eq!(resolve_name(&ros, NODE_NAME, "/cell", "arm_left/stop"), "/cell/arm_left/stop");
        assert_eq!(resolve_name(&ros, NODE_NAME, "/cell", "/clock"), "/clock");
        assert_eq!(resolve_name(&ros, NODE_NAME, "/", "markers"), "/viz/guard_markers");
        assert_eq!(resolve_name(&ros, NODE_NAME, "/cell", "diagnostics"), "/diagnostics");
        assert_eq!(resolve_name(&ros, NODE_NAME, "/", "diagnostics"), "/diagnostics");
    }
}
