//! The node's DDS entities: every subscription, publisher, service server
//! and client it has, named as rcl would name them (namespace and remaps).

use super::services::DualServer;
use super::*;
use crate::msg::{Clock, GuardState, SpeedScalingFactor};
use crate::qos::{DurabilityKind, Endpoint, HistoryKind, QosOverride, QosOverrides, ReliabilityKind};
use crate::topics::{QosClass, Role, resolve_name};
use ros2_client::dds::rustdds::policy::ResourceLimits;
use ros2_client::dds::rustdds::{DomainParticipant, QosPolicies, QosPolicyBuilder, TopicKind};
use workcell_guard_description::workcell::ScalingMessage;

/// A robot's speed-scaling publisher, of the type its workcell names.
pub(super) enum SpeedPublisher {
    /// `control_msgs/SpeedScalingFactor`, reliable, transient local, keep last 1.
    Factor(Publisher<SpeedScalingFactor>),
    /// `std_msgs/Float64`, reliable, volatile.
    Float64(Publisher<Float64>),
}

pub(super) struct Topics {
    pub(super) joint_states: Vec<Subscription<JointState>>,
    pub(super) trajectories: Vec<Subscription<JointTrajectory>>,
    pub(super) stops: Vec<Publisher<Bool>>,
    /// The stop topics, to make fresh writers on shutdown.
    pub(super) stop_topics: Vec<ros2_client::dds::rustdds::Topic>,
    pub(super) diagnostics: Option<Publisher<DiagnosticArray>>,
    pub(super) markers: Option<Publisher<MarkerArray>>,
    pub(super) points: Option<Subscription<PointCloud2>>,
    /// MoveIt display topics, each with the robots pointed at it.
    pub(super) displays: Vec<(Subscription<DisplayTrajectory>, Vec<usize>)>,
    pub(super) unit_poses: Vec<Subscription<PoseStamped>>,
    pub(super) move_requests: Vec<Subscription<PlatenMoveRequest>>,
    pub(super) path_requests: Vec<Subscription<PlatenPathRequest>>,
    pub(super) grants: Vec<Publisher<PlatenGrant>>,
    /// Per robot, `<robot>/grant`.
    pub(super) arm_grants: Vec<Publisher<ManipulatorGrant>>,
    pub(super) states: Vec<Publisher<GuardState>>,
    /// Every publisher and subscription of the node's topics: fully
    /// qualified name, which end, the QoS it uses (to compare with the
    /// peers discovery shows).
    pub(super) endpoints: Vec<(String, Endpoint, QosPolicies)>,
    /// Each robot's joint-state topic, fully qualified.
    pub(super) js_names: Vec<String>,
    pub(super) reset_stop: DualServer<TriggerRequest, TriggerResponse>,
    pub(super) reload: DualServer<TriggerRequest, TriggerResponse>,
    pub(super) set_contact: DualServer<SetContactRequest, SetContactResponse>,
    pub(super) set_priority: DualServer<SetPriorityRequest, SetPriorityResponse>,
    /// Per robot, where the workcell names them: its controller's command
    /// topic, the cancel services of its FollowJointTrajectory action and
    /// of its MoveIt actions, its speed scaling topic.
    pub(super) commands: Vec<Option<Publisher<JointTrajectory>>>,
    pub(super) cancels: Vec<Vec<Client<CancelGoalRequest, CancelGoalResponse>>>,
    pub(super) speed: Vec<Option<SpeedPublisher>>,
    /// `/clock`, with `use_sim_time` (rosgraph_msgs/Clock: ros2-client's
    /// own subscription is typed `builtin_interfaces/Time`, which no ROS 2
    /// clock publisher matches).
    pub(super) clock: Option<Subscription<Clock>>,
}

pub(super) fn name(ros: &RosArgs, node: &str, ns: &str, n: &str) -> Result<Name, RunError> {
    let fq = resolve_name(ros, node, ns, n);
    Name::parse(&fq).map_err(|e| RunError::Name { name: fq.clone(), problem: format!("{e:?}") })
}

pub(super) fn topic<M: RosMessage>(
    node: &Node,
    n: &Name,
    qos: &QosProfile,
) -> Result<ros2_client::dds::rustdds::Topic, RunError> {
    node.create_topic(n, MessageTypeName::new(M::PACKAGE, M::NAME), qos).map_err(dds)
}

/// Reliable, transient local, keep last 1: late joiners get the latest.
pub const LATCHED: QosProfile = QosProfile::subscription_default()
    .reliability(Reliability::Reliable { when_full: WhenFull::DEFAULT })
    .durability(Durability::TransientLocal)
    .history(History::KeepLast { depth: 1 });

/// How many samples a latched (transient-local) writer keeps, and what its
/// publish does when that many are unacknowledged.
///
/// RustDDS trims a transient-local writer's history to its depth only as
/// readers acknowledge: with no reader matched it keeps every sample, up to
/// 8192 a writer, and memory grows for minutes (a state at 10 Hz takes 14
/// of them to reach the bound). `ResourceLimits::max_samples` lowers that
/// bound, and RustDDS takes the same number as the reliable send window: a
/// reader that stops acknowledging (killed, suspended) fills the window
/// before its lease ends, and a publish then waits (`WhenFull::Wait`, up to
/// 100 ms: the loop stalls) or fails at once (`WhenFull::Fail`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Retention {
    /// Samples kept at most, and the unacknowledged ones allowed.
    pub samples: i32,
    /// On a full window, drop the sample at once (the next supersedes it)
    /// rather than wait for an acknowledgement.
    pub drop_when_full: bool,
}

/// `<robot>/stop` and the speed scaling: on change and at the heartbeat
/// (1 s), never dropped. 256 samples are minutes of heartbeats.
pub(super) const COMMAND_RETENTION: Retention = Retention { samples: 256, drop_when_full: false };
/// `<robot>/state`: on change and at `diagnostics_hz`; a dropped state is
/// superseded by the next.
pub(super) const STATE_RETENTION: Retention = Retention { samples: 256, drop_when_full: true };
/// `<robot>/grant`: on change (its end in steps of 50 ms of plan time)
/// and at the heartbeat, not every cycle; a dropped grant goes out again
/// the next cycle, and a reader that stops acknowledging never stalls the
/// loop. RustDDS counts every sample the writer ever sent as unacknowledged
/// by a reader that joins until that reader's first acknowledgement: a
/// window of 4096 is an hour and more of grants at rest, minutes of
/// grants on the move, before a joining reader can delay a grant (by its
/// first round trip; it is never lost).
pub(super) const GRANT_RETENTION: Retention = Retention { samples: 4096, drop_when_full: true };

/// Best effort, keep last 10 (ROS's sensor-data profile, deeper).
pub const SENSOR: QosProfile = QosProfile::subscription_default().history(History::KeepLast { depth: 10 });

/// A service server of the node, answering both request mappings, `qos`
/// both ways.
pub(super) fn server<Q: Message + 'static, A: Message + 'static>(
    dp: &DomainParticipant,
    node: &mut Node,
    fq: &str,
    typ: (&str, &str),
    qos: &QosProfile,
) -> Result<DualServer<Q, A>, RunError> {
    DualServer::new(dp, node, fq, typ, qos).map_err(RunError::Dds)
}

/// Names the node's endpoints, applies their QoS overrides and keeps the
/// list of them (to check the overrides against).
struct Ends<'a> {
    dp: &'a DomainParticipant,
    ros: &'a RosArgs,
    node_name: &'a str,
    ns: &'a str,
    overrides: &'a QosOverrides,
    all: Vec<(String, Endpoint)>,
    qos: Vec<(String, Endpoint, QosPolicies)>,
}

/// `base` with `o` over it.
pub fn overridden(base: &QosProfile, o: Option<&QosOverride>) -> QosProfile {
    let Some(o) = o else { return base.clone() };
    let mut q = base.clone();
    match o.reliability {
        Some(ReliabilityKind::Reliable) => q.reliability = Reliability::Reliable { when_full: WhenFull::DEFAULT },
        Some(ReliabilityKind::BestEffort) => q.reliability = Reliability::BestEffort,
        None => {}
    }
    match o.durability {
        Some(DurabilityKind::Volatile) => q.durability = Durability::Volatile,
        Some(DurabilityKind::TransientLocal) => q.durability = Durability::TransientLocal,
        None => {}
    }
    let base_depth = match base.history {
        History::KeepLast { depth } => depth,
        History::KeepAll => 1,
    };
    q.history = match (o.history, o.depth) {
        (Some(HistoryKind::KeepAll), _) => History::KeepAll,
        (_, Some(d)) => History::KeepLast { depth: d as usize },
        (Some(HistoryKind::KeepLast), None) => History::KeepLast { depth: base_depth },
        (None, None) => base.history,
    };
    q
}

impl Ends<'_> {
    /// Topic `n` (as the node names it) for an endpoint `end` of QoS `base`
    /// (overridden where the parameters say).
    fn topic<M: RosMessage>(
        &mut self,
        node: &Node,
        n: &str,
        end: Endpoint,
        base: &QosProfile,
    ) -> Result<ros2_client::dds::rustdds::Topic, RunError> {
        let qos = self.listed(n, end, base);
        topic::<M>(node, &name(self.ros, self.node_name, self.ns, n)?, &qos)
    }

    /// The QoS of an endpoint `end` on `n` (`base`, overridden where the
    /// parameters say), listed with the node's endpoints.
    fn listed(&mut self, n: &str, end: Endpoint, base: &QosProfile) -> QosProfile {
        let fq = resolve_name(self.ros, self.node_name, self.ns, n);
        let qos = overridden(base, self.overrides.get(&fq, end));
        self.qos.push((fq.clone(), end, (&qos).into()));
        self.all.push((fq, end));
        qos
    }

    /// A latched publisher on `n` (QoS `base`, overridden where the
    /// parameters say) whose writer keeps `keep` (see [`Retention`]).
    fn latched<M: RosMessage + serde::Serialize>(
        &mut self,
        node: &mut Node,
        n: &str,
        base: &QosProfile,
        keep: Retention,
    ) -> Result<(Publisher<M>, ros2_client::dds::rustdds::Topic), RunError> {
        let mut qos = self.listed(n, Endpoint::Publisher, base);
        if keep.drop_when_full && matches!(qos.reliability, Reliability::Reliable { .. }) {
            qos.reliability = Reliability::Reliable { when_full: WhenFull::Fail };
        }
        // Never below a depth the parameters asked for.
        let samples = match qos.history {
            History::KeepLast { depth } => keep.samples.max(i32::try_from(depth).unwrap_or(i32::MAX)),
            History::KeepAll => keep.samples,
        };
        let limits = QosPolicyBuilder::new()
            .resource_limits(ResourceLimits {
                max_samples: samples,
                max_instances: 1,
                max_samples_per_instance: samples,
            })
            .build();
        let policies = QosPolicies::from(&qos).modify_by(&limits);
        let node_name = NodeName::new(self.ns, self.node_name)
            .map_err(|e| RunError::Name { name: self.node_name.to_string(), problem: format!("{e:?}") })?;
        let dds_name = name(self.ros, self.node_name, self.ns, n)?.to_dds_name("rt", &node_name, "");
        let ty = MessageTypeName::new(M::PACKAGE, M::NAME).dds_msg_type();
        let tp = self.dp.create_topic(dds_name, ty, &policies, TopicKind::NoKey).map_err(dds)?;
        let p = node.create_publisher(&tp, None).map_err(dds)?;
        Ok((p, tp))
    }

    fn publisher<M: RosMessage + serde::Serialize>(
        &mut self,
        node: &mut Node,
        n: &str,
        base: &QosProfile,
    ) -> Result<Publisher<M>, RunError> {
        let tp = self.topic::<M>(node, n, Endpoint::Publisher, base)?;
        node.create_publisher(&tp, None).map_err(dds)
    }

    fn subscription<M: RosMessage + serde::de::DeserializeOwned + 'static>(
        &mut self,
        node: &mut Node,
        n: &str,
        base: &QosProfile,
    ) -> Result<Subscription<M>, RunError> {
        let tp = self.topic::<M>(node, n, Endpoint::Subscription, base)?;
        node.create_subscription(&tp, None).map_err(dds)
    }
}

/// This transport's profile of QoS class `class`.
fn profile(class: QosClass) -> QosProfile {
    let reliable = QosProfile::publisher_default();
    match class {
        QosClass::Sensor => SENSOR,
        QosClass::Reliable => reliable,
        QosClass::Requests => reliable.history(History::KeepLast { depth: 10 }),
        QosClass::Latched => LATCHED,
        // rclcpp's clock QoS: best effort, keep last 1.
        QosClass::Clock => QosProfile::subscription_default().history(History::KeepLast { depth: 1 }),
    }
}

/// The node's endpoints: a subscription or publisher for every row of the
/// topic table ([`crate::topics::table`]), the services, and the cancel
/// clients of each robot's actions.
// long: one arm per role of the topic table
pub(super) fn create_topics(
    dp: &DomainParticipant,
    node: &mut Node,
    ros: &RosArgs,
    (node_name, ns): (&str, &str),
    cell: &Workcell,
    overrides: &QosOverrides,
    sim_time: bool,
) -> Result<Topics, RunError> {
    let services = profile(QosClass::Requests);
    let private = |srv: &str| {
        let fq = format!("{}/{node_name}/{srv}", ns.trim_end_matches('/'));
        let fq = ros.remapped(node_name, &fq).to_string();
        Name::parse(&fq).map_err(|e| RunError::Name { name: fq.clone(), problem: format!("{e:?}") })?;
        Ok::<_, RunError>(fq)
    };
    let trigger = ("std_srvs", "Trigger");
    let ours = |srv| ("workcell_guard_msgs", srv);
    let mut e = Ends { dp, ros, node_name, ns, overrides, all: Vec::new(), qos: Vec::new() };
    let displays = event_loop::display_topics(cell);
    let robots = cell.manipulators.len();
    let mut t = Topics {
        joint_states: Vec::new(),
        trajectories: Vec::new(),
        stops: Vec::new(),
        stop_topics: Vec::new(),
        diagnostics: None,
        markers: None,
        points: None,
        displays: Vec::new(),
        unit_poses: Vec::new(),
        move_requests: Vec::new(),
        path_requests: Vec::new(),
        grants: Vec::new(),
        arm_grants: Vec::new(),
        states: Vec::new(),
        endpoints: Vec::new(),
        js_names: Vec::new(),
        reset_stop: server(dp, node, &private("reset_stop")?, trigger, &services)?,
        reload: server(dp, node, &private("reload")?, trigger, &services)?,
        set_contact: server(dp, node, &private("set_contact")?, ours("SetContact"), &services)?,
        set_priority: server(dp, node, &private("set_priority")?, ours("SetPriority"), &services)?,
        commands: crate::topics::nones(robots),
        cancels: Vec::new(),
        speed: crate::topics::nones(robots),
        clock: None,
    };
    for row in crate::topics::table(cell, sim_time) {
        let (n, q) = (row.name.as_str(), profile(row.qos));
        match row.role {
            Role::JointState(_) => {
                t.joint_states.push(e.subscription::<JointState>(node, n, &q)?);
                t.js_names.push(e.all.last().map(|(fq, _)| fq.clone()).unwrap_or_default());
            }
            Role::Plan(_) => t.trajectories.push(e.subscription::<JointTrajectory>(node, n, &q)?),
            Role::Points => t.points = Some(e.subscription::<PointCloud2>(node, n, &q)?),
            Role::PlatenPose(_) => t.unit_poses.push(e.subscription::<PoseStamped>(node, n, &q)?),
            Role::MoveRequest(_) => t.move_requests.push(e.subscription::<PlatenMoveRequest>(node, n, &q)?),
            Role::PathRequest(_) => t.path_requests.push(e.subscription::<PlatenPathRequest>(node, n, &q)?),
            Role::Display(d) => {
                let robots = displays.get(d).map(|(_, r)| r.clone()).unwrap_or_default();
                t.displays.push((e.subscription::<DisplayTrajectory>(node, n, &q)?, robots));
            }
            Role::Clock => t.clock = Some(e.subscription::<Clock>(node, n, &q)?),
            Role::Stop(_) => {
                let (stop, topic) = e.latched::<Bool>(node, n, &q, COMMAND_RETENTION)?;
                t.stops.push(stop);
                t.stop_topics.push(topic);
            }
            Role::ArmGrant(_) => t.arm_grants.push(e.latched::<ManipulatorGrant>(node, n, &q, GRANT_RETENTION)?.0),
            Role::State(_) => t.states.push(e.latched::<GuardState>(node, n, &q, STATE_RETENTION)?.0),
            Role::Speed(r, ScalingMessage::SpeedScalingFactor) => {
                let p = e.latched::<SpeedScalingFactor>(node, n, &q, COMMAND_RETENTION)?.0;
                t.speed[r] = Some(SpeedPublisher::Factor(p));
            }
            Role::Speed(r, ScalingMessage::Float64) => {
                t.speed[r] = Some(SpeedPublisher::Float64(e.publisher::<Float64>(node, n, &q)?));
            }
            Role::Command(r) => t.commands[r] = Some(e.publisher::<JointTrajectory>(node, n, &q)?),
            Role::PlatenGrant(_) => t.grants.push(e.publisher::<PlatenGrant>(node, n, &q)?),
            Role::Diagnostics => t.diagnostics = Some(e.publisher::<DiagnosticArray>(node, n, &q)?),
            Role::Markers => t.markers = Some(e.publisher::<MarkerArray>(node, n, &q)?),
            Role::Cycle => {}
        }
    }
    for m in &cell.manipulators {
        let mut cancels = Vec::new();
        for a in m.topics.controller_action.iter().chain(&m.topics.moveit_actions) {
            cancels.push(
                node.create_client(
                    ServiceMapping::Enhanced,
                    &name(ros, node_name, ns, &format!("{a}/_action/cancel_goal"))?,
                    &ServiceTypeName::new("action_msgs", "CancelGoal"),
                    services.clone(),
                    services.clone(),
                )
                .map_err(dds)?,
            );
        }
        t.cancels.push(cancels);
    }
    overrides.check_against(&e.all).map_err(|q| {
        RunError::Param(crate::params::ParamError::Invalid { name: q.name, value: String::new(), problem: q.problem })
    })?;
    t.endpoints = e.qos;
    for (fq, end) in &e.all {
        if let Some(o) = overrides.get(fq, *end) {
            tracing::info!("QoS of the {} on {fq} overridden: {o:?}", end.as_str());
        }
    }
    Ok(t)
}
