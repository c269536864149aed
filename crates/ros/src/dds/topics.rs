//! The node's DDS entities: every subscription, publisher, service server
//! and client it has, named as rcl would name them (namespace and remaps).

use super::*;
use crate::msg::{GuardState, SpeedScalingFactor};
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
    pub(super) diagnostics: Publisher<DiagnosticArray>,
    pub(super) markers: Publisher<MarkerArray>,
    pub(super) points: Subscription<PointCloud2>,
    /// MoveIt display topics, each with the robots pointed at it.
    pub(super) displays: Vec<(Subscription<DisplayTrajectory>, Vec<usize>)>,
    pub(super) unit_poses: Vec<Subscription<PoseStamped>>,
    pub(super) move_requests: Vec<Subscription<PlatenMoveRequest>>,
    pub(super) path_requests: Vec<Subscription<PlatenPathRequest>>,
    pub(super) grants: Vec<Publisher<PlatenGrant>>,
    /// Per robot, `<robot>/grant`.
    pub(super) arm_grants: Vec<Publisher<ManipulatorGrant>>,
    pub(super) states: Vec<Publisher<GuardState>>,
    pub(super) reset_stop: Server<TriggerRequest, TriggerResponse>,
    pub(super) reload: Server<TriggerRequest, TriggerResponse>,
    pub(super) set_contact: Server<SetContactRequest, SetContactResponse>,
    pub(super) set_priority: Server<SetPriorityRequest, SetPriorityResponse>,
    /// Per robot, where the workcell names them: its controller's command
    /// topic, the cancel services of its FollowJointTrajectory action and
    /// of its MoveIt actions, its speed scaling topic.
    pub(super) commands: Vec<Option<Publisher<JointTrajectory>>>,
    pub(super) cancels: Vec<Vec<Client<CancelGoalRequest, CancelGoalResponse>>>,
    pub(super) speed: Vec<Option<SpeedPublisher>>,
}

/// The fully qualified name of topic `n` for a node in namespace `ns`,
/// after the remaps (matched against the name as written, then against
/// the fully qualified name).
pub fn resolve_name(ros: &RosArgs, node: &str, ns: &str, n: &str) -> String {
    let qualify = |n: &str| {
        if n.starts_with('/') { n.to_string() } else { format!("{}/{}", ns.trim_end_matches('/'), n) }
    };
    let fq = qualify(ros.remapped(node, n));
    qualify(ros.remapped(node, &fq))
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

/// Best effort, keep last 10 (ROS's sensor-data profile, deeper).
pub const SENSOR: QosProfile = QosProfile::subscription_default().history(History::KeepLast { depth: 10 });

/// A service server of the node (rmw's request mapping, `qos` both ways).
fn server<Q: Message + Clone + 'static, A: Message + Clone + 'static>(
    node: &mut Node,
    n: &Name,
    typ: &ServiceTypeName,
    qos: &QosProfile,
) -> Result<Server<Q, A>, RunError> {
    node.create_server(ServiceMapping::Enhanced, n, typ, qos.clone(), qos.clone()).map_err(dds)
}

pub(super) fn create_topics(
    node: &mut Node,
    ros: &RosArgs,
    node_name: &str,
    ns: &str,
    cell: &Workcell,
) -> Result<Topics, RunError> {
    let reliable = QosProfile::publisher_default();
    let services = reliable.clone().history(History::KeepLast { depth: 10 });
    let private = |srv: &str| {
        let fq = format!("{}/{node_name}/{srv}", ns.trim_end_matches('/'));
        let fq = ros.remapped(node_name, &fq).to_string();
        Name::parse(&fq).map_err(|e| RunError::Name { name: fq.clone(), problem: format!("{e:?}") })
    };
    let trigger = ServiceTypeName::new("std_srvs", "Trigger");
    let ours = |srv: &str| ServiceTypeName::new("workcell_guard_msgs", srv);
    let mut t = Topics {
        points: {
            let tp = topic::<PointCloud2>(node, &name(ros, node_name, ns, "points")?, &SENSOR)?;
            node.create_subscription(&tp, None).map_err(dds)?
        },
        displays: Vec::new(),
        commands: Vec::new(),
        cancels: Vec::new(),
        speed: Vec::new(),
        unit_poses: Vec::new(),
        move_requests: Vec::new(),
        path_requests: Vec::new(),
        grants: Vec::new(),
        arm_grants: Vec::new(),
        states: Vec::new(),
        reset_stop: server(node, &private("reset_stop")?, &trigger, &services)?,
        reload: server(node, &private("reload")?, &trigger, &services)?,
        set_contact: server(node, &private("set_contact")?, &ours("SetContact"), &services)?,
        set_priority: server(node, &private("set_priority")?, &ours("SetPriority"), &services)?,
        joint_states: Vec::new(),
        trajectories: Vec::new(),
        stops: Vec::new(),
        stop_topics: Vec::new(),
        diagnostics: {
            let tp = topic::<DiagnosticArray>(node, &name(ros, node_name, ns, "diagnostics")?, &reliable)?;
            node.create_publisher(&tp, None).map_err(dds)?
        },
        markers: {
            let tp = topic::<MarkerArray>(node, &name(ros, node_name, ns, "markers")?, &reliable)?;
            node.create_publisher(&tp, None).map_err(dds)?
        },
    };
    for m in &cell.manipulators {
        let js = topic::<JointState>(node, &name(ros, node_name, ns, &m.joint_state_topic)?, &SENSOR)?;
        t.joint_states.push(node.create_subscription(&js, None).map_err(dds)?);
        let tr = topic::<JointTrajectory>(node, &name(ros, node_name, ns, &m.trajectory_topic)?, &reliable)?;
        t.trajectories.push(node.create_subscription(&tr, None).map_err(dds)?);
        let st = topic::<Bool>(node, &name(ros, node_name, ns, &format!("{}/stop", m.name))?, &LATCHED)?;
        t.stops.push(node.create_publisher(&st, None).map_err(dds)?);
        t.stop_topics.push(st);
        let gr = topic::<ManipulatorGrant>(node, &name(ros, node_name, ns, &format!("{}/grant", m.name))?, &LATCHED)?;
        t.arm_grants.push(node.create_publisher(&gr, None).map_err(dds)?);
        let gs = topic::<GuardState>(node, &name(ros, node_name, ns, &format!("{}/state", m.name))?, &LATCHED)?;
        t.states.push(node.create_publisher(&gs, None).map_err(dds)?);
        t.commands.push(match &m.controller_command_topic {
            Some(c) => {
                let tp = topic::<JointTrajectory>(node, &name(ros, node_name, ns, c)?, &reliable)?;
                Some(node.create_publisher(&tp, None).map_err(dds)?)
            }
            None => None,
        });
        let mut cancels = Vec::new();
        for a in m.controller_action.iter().chain(&m.moveit_actions) {
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
        t.speed.push(match &m.speed_scaling_topic {
            Some(c) => {
                let n = name(ros, node_name, ns, c)?;
                Some(match m.speed_scaling_type {
                    ScalingMessage::SpeedScalingFactor => {
                        let tp = topic::<SpeedScalingFactor>(node, &n, &LATCHED)?;
                        SpeedPublisher::Factor(node.create_publisher(&tp, None).map_err(dds)?)
                    }
                    ScalingMessage::Float64 => {
                        let tp = topic::<Float64>(node, &n, &reliable)?;
                        SpeedPublisher::Float64(node.create_publisher(&tp, None).map_err(dds)?)
                    }
                })
            }
            None => None,
        });
    }
    let display_topics = event_loop::display_topics(cell);
    for (d, robots) in display_topics {
        let tp = topic::<DisplayTrajectory>(node, &name(ros, node_name, ns, &d)?, &services)?;
        t.displays.push((node.create_subscription(&tp, None).map_err(dds)?, robots));
    }
    for u in cell.platen.iter().flat_map(|p| &p.units) {
        let pose = topic::<PoseStamped>(node, &name(ros, node_name, ns, &format!("{}/pose", u.name))?, &SENSOR)?;
        t.unit_poses.push(node.create_subscription(&pose, None).map_err(dds)?);
        let rq = topic::<PlatenMoveRequest>(
            node,
            &name(ros, node_name, ns, &format!("{}/move_request", u.name))?,
            &services,
        )?;
        t.move_requests.push(node.create_subscription(&rq, None).map_err(dds)?);
        let pq = topic::<PlatenPathRequest>(
            node,
            &name(ros, node_name, ns, &format!("{}/path_request", u.name))?,
            &services,
        )?;
        t.path_requests.push(node.create_subscription(&pq, None).map_err(dds)?);
        let gr = topic::<PlatenGrant>(node, &name(ros, node_name, ns, &format!("{}/grant", u.name))?, &services)?;
        t.grants.push(node.create_publisher(&gr, None).map_err(dds)?);
    }
    Ok(t)
}
