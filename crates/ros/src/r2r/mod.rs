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
//! them (this package's `workcell_guard_msgs`, MoveIt's `moveit_msgs`) go
//! through r2r's untyped API as JSON with the ROS field names, which the
//! serde twins in [`msg`](crate::msg) carry. The three services
//! (`std_srvs/Trigger`, `SetContact`) are the `dds` transport's: typed
//! servers could not be checked without a ROS install, and r2r has no
//! untyped server.

use crate::args::RosArgs;
use crate::dds::{NODE_NAME, RunError, build_node};
use crate::event_loop::{self, Incoming, LoopContext, Transport, Trigger};
use crate::msg;
use crate::node::check_param;
use crate::params::NodeParams;
use ::r2r as r2;
use futures::StreamExt;
use r2::{ParameterValue, QosProfile};
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use workcell_guard_description::workcell::Workcell;

fn time_in(t: r2::builtin_interfaces::msg::Time) -> msg::Time {
    msg::Time { sec: t.sec, nanosec: t.nanosec }
}

fn time_out(t: msg::Time) -> r2::builtin_interfaces::msg::Time {
    r2::builtin_interfaces::msg::Time { sec: t.sec, nanosec: t.nanosec }
}

fn header_in(h: r2::std_msgs::msg::Header) -> msg::Header {
    msg::Header { stamp: time_in(h.stamp), frame_id: h.frame_id }
}

fn header_out(h: &msg::Header) -> r2::std_msgs::msg::Header {
    r2::std_msgs::msg::Header { stamp: time_out(h.stamp), frame_id: h.frame_id.clone() }
}

/// An r2r joint state as this crate's (moved, not copied).
pub fn joint_state_in(m: r2::sensor_msgs::msg::JointState) -> msg::JointState {
    msg::JointState {
        header: header_in(m.header),
        name: m.name,
        position: m.position,
        velocity: m.velocity,
        effort: m.effort,
    }
}

/// An r2r trajectory as this crate's (moved, not copied).
pub fn trajectory_in(m: r2::trajectory_msgs::msg::JointTrajectory) -> msg::JointTrajectory {
    msg::JointTrajectory {
        header: header_in(m.header),
        joint_names: m.joint_names,
        points: m
            .points
            .into_iter()
            .map(|p| msg::JointTrajectoryPoint {
                positions: p.positions,
                velocities: p.velocities,
                accelerations: p.accelerations,
                effort: p.effort,
                time_from_start: msg::Duration { sec: p.time_from_start.sec, nanosec: p.time_from_start.nanosec },
            })
            .collect(),
    }
}

/// A trajectory (a back-away's retreat) as r2r's.
pub fn trajectory_out(m: &msg::JointTrajectory) -> r2::trajectory_msgs::msg::JointTrajectory {
    r2::trajectory_msgs::msg::JointTrajectory {
        header: header_out(&m.header),
        joint_names: m.joint_names.clone(),
        points: m
            .points
            .iter()
            .map(|p| r2::trajectory_msgs::msg::JointTrajectoryPoint {
                positions: p.positions.clone(),
                velocities: p.velocities.clone(),
                accelerations: p.accelerations.clone(),
                effort: p.effort.clone(),
                time_from_start: r2::builtin_interfaces::msg::Duration {
                    sec: p.time_from_start.sec,
                    nanosec: p.time_from_start.nanosec,
                },
            })
            .collect(),
    }
}

/// A stop flag as r2r's.
pub fn bool_out(b: msg::Bool) -> r2::std_msgs::msg::Bool {
    r2::std_msgs::msg::Bool { data: b.data }
}

/// Diagnostics as r2r's.
pub fn diagnostics_out(d: &msg::DiagnosticArray) -> r2::diagnostic_msgs::msg::DiagnosticArray {
    r2::diagnostic_msgs::msg::DiagnosticArray {
        header: header_out(&d.header),
        status: d
            .status
            .iter()
            .map(|s| r2::diagnostic_msgs::msg::DiagnosticStatus {
                level: s.level,
                name: s.name.clone(),
                message: s.message.clone(),
                hardware_id: s.hardware_id.clone(),
                values: s
                    .values
                    .iter()
                    .map(|kv| r2::diagnostic_msgs::msg::KeyValue { key: kv.key.clone(), value: kv.value.clone() })
                    .collect(),
            })
            .collect(),
    }
}

fn point_out(p: &msg::Point) -> r2::geometry_msgs::msg::Point {
    r2::geometry_msgs::msg::Point { x: p.x, y: p.y, z: p.z }
}

fn color_out(c: &msg::ColorRGBA) -> r2::std_msgs::msg::ColorRGBA {
    r2::std_msgs::msg::ColorRGBA { r: c.r, g: c.g, b: c.b, a: c.a }
}

/// One marker as r2r's.
pub fn marker_out(m: &msg::Marker) -> r2::visualization_msgs::msg::Marker {
    use r2::geometry_msgs::msg::{Pose, Quaternion, Vector3};
    r2::visualization_msgs::msg::Marker {
        header: header_out(&m.header),
        ns: m.ns.clone(),
        id: m.id,
        type_: m.kind,
        action: m.action,
        pose: Pose {
            position: point_out(&m.pose.position),
            orientation: Quaternion {
                x: m.pose.orientation.x,
                y: m.pose.orientation.y,
                z: m.pose.orientation.z,
                w: m.pose.orientation.w,
            },
        },
        scale: Vector3 { x: m.scale.x, y: m.scale.y, z: m.scale.z },
        color: color_out(&m.color),
        lifetime: r2::builtin_interfaces::msg::Duration { sec: m.lifetime.sec, nanosec: m.lifetime.nanosec },
        frame_locked: m.frame_locked,
        points: m.points.iter().map(point_out).collect(),
        colors: m.colors.iter().map(color_out).collect(),
        texture_resource: m.texture_resource.clone(),
        texture: r2::sensor_msgs::msg::CompressedImage {
            header: header_out(&m.texture.header),
            format: m.texture.format.clone(),
            data: m.texture.data.clone(),
        },
        uv_coordinates: m
            .uv_coordinates
            .iter()
            .map(|uv| r2::visualization_msgs::msg::UVCoordinate { u: uv.u, v: uv.v })
            .collect(),
        text: m.text.clone(),
        mesh_resource: m.mesh_resource.clone(),
        mesh_file: r2::visualization_msgs::msg::MeshFile {
            filename: m.mesh_file.filename.clone(),
            data: m.mesh_file.data.clone(),
        },
        mesh_use_embedded_materials: m.mesh_use_embedded_materials,
    }
}

/// Markers as r2r's.
pub fn markers_out(a: &msg::MarkerArray) -> r2::visualization_msgs::msg::MarkerArray {
    r2::visualization_msgs::msg::MarkerArray { markers: a.markers.iter().map(marker_out).collect() }
}

/// A point cloud of sensed obstacles (its data moved, not copied).
pub fn cloud_in(m: r2::sensor_msgs::msg::PointCloud2) -> msg::PointCloud2 {
    msg::PointCloud2 {
        header: header_in(m.header),
        height: m.height,
        width: m.width,
        fields: m
            .fields
            .into_iter()
            .map(|f| msg::PointField { name: f.name, offset: f.offset, datatype: f.datatype, count: f.count })
            .collect(),
        is_bigendian: m.is_bigendian,
        point_step: m.point_step,
        row_step: m.row_step,
        data: m.data,
        is_dense: m.is_dense,
    }
}

/// A platen unit's reported pose.
pub fn pose_in(m: r2::geometry_msgs::msg::PoseStamped) -> msg::PoseStamped {
    let (p, o) = (m.pose.position, m.pose.orientation);
    msg::PoseStamped {
        header: header_in(m.header),
        pose: msg::Pose {
            position: msg::Point { x: p.x, y: p.y, z: p.z },
            orientation: msg::Quaternion { x: o.x, y: o.y, z: o.z, w: o.w },
        },
    }
}

/// `action_msgs/CancelGoal` for every goal of an action: a zero goal id
/// and a zero stamp (the action design's "cancel all").
pub fn cancel_all() -> r2::action_msgs::srv::CancelGoal::Request {
    r2::action_msgs::srv::CancelGoal::Request {
        goal_info: r2::action_msgs::msg::GoalInfo {
            goal_id: r2::unique_identifier_msgs::msg::UUID { uuid: vec![0; 16] },
            stamp: r2::builtin_interfaces::msg::Time { sec: 0, nanosec: 0 },
        },
    }
}

/// The rosidl name of a message type, as r2r's untyped API takes it.
fn type_name<M: crate::msg::RosMessage>() -> String {
    format!("{}/msg/{}", M::PACKAGE, M::NAME)
}

/// This package's own messages and MoveIt's go through r2r's untyped API
/// (JSON with the ROS field names, which the serde twins carry): their
/// generated types exist only in a workspace that built them, so typed
/// code could not be checked without one. A move request from JSON.
pub fn move_request_in(v: Value) -> Result<msg::PlatenMoveRequest, serde_json::Error> {
    serde_json::from_value(v)
}

/// A path request from JSON.
pub fn path_request_in(v: Value) -> Result<msg::PlatenPathRequest, serde_json::Error> {
    serde_json::from_value(v)
}

/// A grant as JSON for r2r's untyped publisher.
pub fn grant_out(g: &msg::PlatenGrant) -> Value {
    serde_json::to_value(g).unwrap_or(Value::Null)
}

/// A manipulator grant as JSON for r2r's untyped publisher.
pub fn arm_grant_out(g: &msg::ManipulatorGrant) -> Value {
    serde_json::to_value(g).unwrap_or(Value::Null)
}

/// MoveIt's DisplayTrajectory from JSON: the model and each trajectory's
/// single-DOF part (the multi-DOF part and `trajectory_start` are not
/// used, and not read).
pub fn display_in(v: Value) -> Result<msg::DisplayTrajectory, String> {
    let model_id = v.get("model_id").and_then(Value::as_str).unwrap_or_default().to_string();
    let Some(Value::Array(ts)) = v.get("trajectory") else {
        return Err("no `trajectory` array".into());
    };
    let mut trajectory = Vec::with_capacity(ts.len());
    for (i, t) in ts.iter().enumerate() {
        let jt = t.get("joint_trajectory").ok_or_else(|| format!("trajectory[{i}] has no `joint_trajectory`"))?;
        let joint_trajectory: msg::JointTrajectory =
            serde_json::from_value(jt.clone()).map_err(|e| format!("trajectory[{i}].joint_trajectory: {e}"))?;
        trajectory.push(msg::RobotTrajectory { joint_trajectory, ..Default::default() });
    }
    Ok(msg::DisplayTrajectory { model_id, trajectory })
}

/// An r2r parameter value as JSON for [`check_param`].
pub fn json_of(v: &ParameterValue) -> Value {
    match v {
        ParameterValue::NotSet => Value::Null,
        ParameterValue::Bool(b) => Value::Bool(*b),
        ParameterValue::Integer(i) => Value::from(*i),
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
    tx: tokio::sync::mpsc::UnboundedSender<(String, Value)>,
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
            params.insert(key, r2::Parameter::new(value.clone()));
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
        self.tx.send((name.to_string(), v)).map_err(|_| refused(name, "node stopped"))
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

    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<(String, Value)>();
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

    let mut io = make_io(&mut node, &core, clock)?;
    let node = Arc::new(Mutex::new(node));
    let spin = node.clone();
    let running = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let spinning = running.clone();
    std::thread::Builder::new().name("rcl-spin".into()).spawn(move || {
        while spinning.load(std::sync::atomic::Ordering::Relaxed) {
            if let Ok(mut n) = spin.lock() {
                n.spin_once(Duration::from_millis(5));
            }
        }
    })?;

    core.inject_panic_on_frame_id(std::env::var(crate::dds::PANIC_ON_FRAME_ID).ok());
    let linger = Duration::from_secs_f64(core.params().shutdown_linger_s);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let (bag, recorded) = (crate::bag::record::open(&core)?, crate::bag::topics::Topics::new(ros, core.cell()));
    let cache = matrix_cache.map(|p| p.to_path_buf());
    let mut cx = LoopContext {
        params: rx,
        checked_cell: Arc::new(Mutex::new(Arc::new(core.cell().clone()))),
        rebuild: Arc::new(move |params| crate::dds::build_from(params, cache.as_deref()).map_err(|e| e.to_string())),
        panicked: Arc::new(std::sync::atomic::AtomicBool::new(false)),
    };
    // A panic in the loop is caught so that every stop goes out true.
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.block_on(async {
            tokio::spawn(param_handler);
            let mut shutdown = crate::dds::Shutdown::new();
            crate::bag::record::serve(&mut io, bag, recorded, &mut core, &mut cx, shutdown.requested()).await
        })
    }));
    // Every robot stopped, latched (rmw keeps the last sample only, so late
    // joiners get this `true`), while the node lingers on the wire.
    for p in &io.stops {
        let _ = p.publish(&r2::std_msgs::msg::Bool { data: true });
    }
    std::thread::sleep(linger);
    running.store(false, std::sync::atomic::Ordering::Relaxed);
    ran.map_err(|p| RunError::Panicked(crate::dds::panic_message(p.as_ref()).to_string()))
}

/// Every subscription and publisher of the node, as the loop's transport.
fn make_io(node: &mut r2::Node, core: &crate::node::GuardNode, clock: r2::Clock) -> Result<R2rIo, RunError> {
    let mut joint_states = Vec::new();
    let mut trajectories = Vec::new();
    let mut stops = Vec::new();
    let mut arm_grants = Vec::new();
    let mut outs = Outputs { commands: Vec::new(), speed: Vec::new(), cancels: Vec::new() };
    for m in &core.cell().manipulators {
        joint_states.push(
            node.subscribe::<r2::sensor_msgs::msg::JointState>(&m.joint_state_topic, QosProfile::sensor_data())
                .map_err(r2err)?,
        );
        trajectories.push(
            node.subscribe::<r2::trajectory_msgs::msg::JointTrajectory>(&m.trajectory_topic, QosProfile::default())
                .map_err(r2err)?,
        );
        stops.push(
            node.create_publisher::<r2::std_msgs::msg::Bool>(&format!("{}/stop", m.name), latched()).map_err(r2err)?,
        );
        arm_grants.push(
            node.create_publisher_untyped(
                &format!("{}/grant", m.name),
                &type_name::<msg::ManipulatorGrant>(),
                latched(),
            )
            .map_err(r2err)?,
        );
        outs.commands.push(match &m.controller_command_topic {
            Some(t) => Some(
                node.create_publisher::<r2::trajectory_msgs::msg::JointTrajectory>(t, QosProfile::default())
                    .map_err(r2err)?,
            ),
            None => None,
        });
        outs.cancels.push(match &m.controller_action {
            Some(a) => Some(
                node.create_client::<r2::action_msgs::srv::CancelGoal::Service>(
                    &format!("{a}/_action/cancel_goal"),
                    QosProfile::services_default(),
                )
                .map_err(r2err)?,
            ),
            None => None,
        });
        outs.speed.push(match &m.speed_scaling_topic {
            Some(t) => {
                Some(node.create_publisher::<r2::std_msgs::msg::Float64>(t, QosProfile::default()).map_err(r2err)?)
            }
            None => None,
        });
    }
    let diagnostics = node
        .create_publisher::<r2::diagnostic_msgs::msg::DiagnosticArray>("diagnostics", QosProfile::default())
        .map_err(r2err)?;
    let markers = node
        .create_publisher::<r2::visualization_msgs::msg::MarkerArray>("markers", QosProfile::default())
        .map_err(r2err)?;
    let points =
        node.subscribe::<r2::sensor_msgs::msg::PointCloud2>("points", QosProfile::sensor_data()).map_err(r2err)?;
    let (mut unit_poses, mut grants) = (Vec::new(), Vec::new());
    for u in core.cell().platen.iter().flat_map(|p| &p.units) {
        unit_poses.push(
            node.subscribe::<r2::geometry_msgs::msg::PoseStamped>(
                &format!("{}/pose", u.name),
                QosProfile::sensor_data(),
            )
            .map_err(r2err)?,
        );
        grants.push(
            node.create_publisher_untyped(
                &format!("{}/grant", u.name),
                &type_name::<msg::PlatenGrant>(),
                QosProfile::default(),
            )
            .map_err(r2err)?,
        );
    }
    // One subscription per MoveIt display topic, with the robots pointed at it.
    let display_robots = event_loop::display_topics(core.cell());
    let mut displays = Vec::new();
    for (d, _) in &display_robots {
        displays.push(
            node.subscribe_untyped(d, &type_name::<msg::DisplayTrajectory>(), QosProfile::default()).map_err(r2err)?,
        );
    }
    Ok(R2rIo {
        joint_states: futures::stream::select_all(
            joint_states.into_iter().enumerate().map(|(i, s)| s.map(move |m| (i, m)).boxed_local()),
        ),
        trajectories: futures::stream::select_all(
            trajectories.into_iter().enumerate().map(|(i, s)| s.map(move |m| (i, m)).boxed_local()),
        ),
        clouds: points.boxed_local(),
        unit_poses: futures::stream::select_all(
            unit_poses.into_iter().enumerate().map(|(i, s)| s.map(move |m| (i, m)).boxed_local()),
        ),
        move_requests: per_unit::<msg::PlatenMoveRequest>(node, core, "move_request")?,
        path_requests: per_unit::<msg::PlatenPathRequest>(node, core, "path_request")?,
        displays: futures::stream::select_all(
            displays.into_iter().enumerate().map(|(i, s)| s.map(move |m| (i, m)).boxed_local()),
        ),
        display_robots,
        stops,
        outs,
        grants,
        arm_grants,
        diagnostics,
        markers,
        clock: std::cell::RefCell::new(clock),
    })
}

struct Outputs {
    commands: Vec<Option<r2::Publisher<r2::trajectory_msgs::msg::JointTrajectory>>>,
    speed: Vec<Option<r2::Publisher<r2::std_msgs::msg::Float64>>>,
    cancels: Vec<Option<r2::Client<r2::action_msgs::srv::CancelGoal::Service>>>,
}

/// One untyped subscription per platen unit to `<unit>/<suffix>`, merged
/// and tagged with the unit's index.
fn per_unit<M: msg::RosMessage>(
    node: &mut r2::Node,
    core: &crate::node::GuardNode,
    suffix: &str,
) -> Result<Tagged<r2::Result<Value>>, RunError> {
    let mut subs = Vec::new();
    for u in core.cell().platen.iter().flat_map(|p| &p.units) {
        let topic = format!("{}/{suffix}", u.name);
        subs.push(node.subscribe_untyped(&topic, &type_name::<M>(), QosProfile::default()).map_err(r2err)?);
    }
    Ok(futures::stream::select_all(subs.into_iter().enumerate().map(|(i, s)| s.map(move |m| (i, m)).boxed_local())))
}

type Tagged<T> = futures::stream::SelectAll<futures::stream::LocalBoxStream<'static, (usize, T)>>;

/// The r2r transport's side of the shared loop. It serves no services
/// (see the module notes): `Request` is `()`.
struct R2rIo {
    joint_states: Tagged<r2::sensor_msgs::msg::JointState>,
    trajectories: Tagged<r2::trajectory_msgs::msg::JointTrajectory>,
    clouds: futures::stream::LocalBoxStream<'static, r2::sensor_msgs::msg::PointCloud2>,
    unit_poses: Tagged<r2::geometry_msgs::msg::PoseStamped>,
    move_requests: Tagged<r2::Result<Value>>,
    path_requests: Tagged<r2::Result<Value>>,
    displays: Tagged<r2::Result<Value>>,
    display_robots: Vec<(String, Vec<usize>)>,
    stops: Vec<r2::Publisher<r2::std_msgs::msg::Bool>>,
    outs: Outputs,
    grants: Vec<r2::PublisherUntyped>,
    arm_grants: Vec<r2::PublisherUntyped>,
    diagnostics: r2::Publisher<r2::diagnostic_msgs::msg::DiagnosticArray>,
    markers: r2::Publisher<r2::visualization_msgs::msg::MarkerArray>,
    clock: std::cell::RefCell<r2::Clock>,
}

impl Transport for R2rIo {
    type Request = ();

    async fn next(&mut self) -> Option<Incoming<()>> {
        use Incoming as I;
        tokio::select! {
            biased;
            Some((robot, m)) = self.joint_states.next() => Some(I::JointState(robot, joint_state_in(m))),
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

    fn publish_speed(&mut self, robot: usize, scaling: msg::Float64) {
        if let Some(p) = &self.outs.speed[robot] {
            let _ = p.publish(&r2::std_msgs::msg::Float64 { data: scaling.data });
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
        if let Some(c) = &self.outs.cancels[robot]
            && let Err(e) = c.request(&cancel_all())
        {
            tracing::warn!("goal cancel not sent: {e}");
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
        let _ = self.diagnostics.publish(&diagnostics_out(d));
    }

    fn publish_markers(&mut self, m: &msg::MarkerArray) {
        let _ = self.markers.publish(&markers_out(m));
    }

    fn answer_trigger(&mut self, _: Trigger, _: (), _: msg::TriggerResponse) {}

    fn answer_set_contact(&mut self, _: (), _: msg::SetContactResponse) {}
    fn answer_set_priority(&mut self, _: (), _: msg::SetPriorityResponse) {}
}

#[cfg(test)]
mod tests;
