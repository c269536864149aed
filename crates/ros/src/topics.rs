//! The node's topics over a cell, in one table ([`table`]): each with the
//! name the node gives it (before namespace and remaps), its role (robot or
//! unit, message type, direction) and its QoS class. Both transports make
//! their endpoints from it, and the recorder, recording and replay read a
//! bag through [`Topics`]: the recorded rows with their names resolved (as
//! rcl resolves them).

use crate::args::RosArgs;
use crate::startup::NODE_NAME;
use workcell_guard_description::workcell::{ScalingMessage, Workcell};

/// What a topic carries, for which manipulator or platen unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// `sensor_msgs/JointState` of a manipulator (in).
    JointState(usize),
    /// `trajectory_msgs/JointTrajectory`, its plan (in).
    Plan(usize),
    /// `geometry_msgs/PoseStamped` of a platen unit (in).
    PlatenPose(usize),
    /// `workcell_guard_msgs/PlatenMoveRequest` (in).
    MoveRequest(usize),
    /// `workcell_guard_msgs/PlatenPathRequest` (in).
    PathRequest(usize),
    /// `sensor_msgs/PointCloud2`, sensed obstacles on `points` (in).
    Points,
    /// `std_msgs/Bool`, a manipulator's stop (out).
    Stop(usize),
    /// Its speed scaling (out), as the workcell says:
    /// `control_msgs/SpeedScalingFactor` or `std_msgs/Float64`.
    Speed(usize, ScalingMessage),
    /// `workcell_guard_msgs/ManipulatorGrant` (out).
    ArmGrant(usize),
    /// `trajectory_msgs/JointTrajectory` on its controller's command
    /// topic: holds and retreats (out).
    Command(usize),
    /// `workcell_guard_msgs/PlatenGrant` (out).
    PlatenGrant(usize),
    /// `builtin_interfaces/Time`: the instants the node cycled on its
    /// timer (only in recordings the node writes itself).
    Cycle,
    /// `workcell_guard_msgs/GuardState`, a manipulator's state (out; not
    /// recorded).
    State(usize),
    /// `diagnostic_msgs/DiagnosticArray` on `diagnostics` (out; not recorded).
    Diagnostics,
    /// `visualization_msgs/MarkerArray` on `markers` (out; not recorded).
    Markers,
    /// `moveit_msgs/DisplayTrajectory`, the `d`th MoveIt display topic the
    /// workcell names (in; not recorded: its robots' plans are).
    Display(usize),
    /// `rosgraph_msgs/Clock` on `/clock`, with `use_sim_time` (in; not
    /// recorded).
    Clock,
}

impl Role {
    /// The message type, `pkg/Name`.
    pub fn type_name(self) -> &'static str {
        match self {
            Role::JointState(_) => "sensor_msgs/JointState",
            Role::Plan(_) | Role::Command(_) => "trajectory_msgs/JointTrajectory",
            Role::PlatenPose(_) => "geometry_msgs/PoseStamped",
            Role::MoveRequest(_) => "workcell_guard_msgs/PlatenMoveRequest",
            Role::PathRequest(_) => "workcell_guard_msgs/PlatenPathRequest",
            Role::Points => "sensor_msgs/PointCloud2",
            Role::Stop(_) => "std_msgs/Bool",
            Role::Speed(_, ScalingMessage::Float64) => "std_msgs/Float64",
            Role::Speed(_, ScalingMessage::SpeedScalingFactor) => "control_msgs/SpeedScalingFactor",
            Role::ArmGrant(_) => "workcell_guard_msgs/ManipulatorGrant",
            Role::PlatenGrant(_) => "workcell_guard_msgs/PlatenGrant",
            Role::Cycle => "builtin_interfaces/Time",
            Role::State(_) => "workcell_guard_msgs/GuardState",
            Role::Diagnostics => "diagnostic_msgs/DiagnosticArray",
            Role::Markers => "visualization_msgs/MarkerArray",
            Role::Display(_) => "moveit_msgs/DisplayTrajectory",
            Role::Clock => "rosgraph_msgs/Clock",
        }
    }

    /// Whether recordings carry it (the node's own, and what replay reads).
    pub fn is_recorded(self) -> bool {
        !matches!(self, Role::State(_) | Role::Diagnostics | Role::Markers | Role::Display(_) | Role::Clock)
    }

    /// Whether the node reads it (else the node writes it).
    pub fn is_input(self) -> bool {
        matches!(
            self,
            Role::JointState(_)
                | Role::Plan(_)
                | Role::PlatenPose(_)
                | Role::MoveRequest(_)
                | Role::PathRequest(_)
                | Role::Points
                | Role::Display(_)
                | Role::Clock
        )
    }
}

/// A topic's QoS, as a class; each transport makes it its own profile
/// (and applies the `qos_overrides` parameters over it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QosClass {
    /// Best effort, keep last 10 (ROS's sensor-data profile, deeper), which
    /// any publisher matches: joint states, unit poses, point clouds.
    Sensor,
    /// Reliable, volatile: plans, controller commands, diagnostics,
    /// markers, a `std_msgs/Float64` speed scaling.
    Reliable,
    /// Reliable, volatile, keep last 10: platen requests and grants,
    /// MoveIt's display trajectories.
    Requests,
    /// Reliable, transient local, keep last 1, so that a late joiner gets
    /// the latest: stops, manipulator grants and states, a
    /// `control_msgs/SpeedScalingFactor` speed scaling.
    Latched,
    /// Best effort, keep last 1: `/clock`, as rclcpp reads it.
    Clock,
}

/// One topic of the node: the name it gives the topic (relative names are
/// resolved in its namespace, after the remaps), its role and QoS class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The name as the node gives it.
    pub name: String,
    /// What it carries, for whom, which way.
    pub role: Role,
    /// Its QoS.
    pub qos: QosClass,
}

/// Every topic of the node over `cell` (`/clock` only with `sim_time`):
/// inputs, then per manipulator its outputs, then the platen units' grants
/// and the shared outputs. The transports make their endpoints in this
/// order, so each robot's and unit's come in index order.
pub fn table(cell: &Workcell, sim_time: bool) -> Vec<Row> {
    let row = |name: String, role, qos| Row { name, role, qos };
    let mut t = Vec::new();
    for (r, m) in cell.manipulators.iter().enumerate() {
        t.push(row(m.topics.joint_states.clone(), Role::JointState(r), QosClass::Sensor));
        t.push(row(m.topics.trajectory.clone(), Role::Plan(r), QosClass::Reliable));
    }
    t.push(row("points".into(), Role::Points, QosClass::Sensor));
    let units = cell.platen.iter().flat_map(|p| &p.units);
    for (u, unit) in units.clone().enumerate() {
        t.push(row(format!("{}/pose", unit.name), Role::PlatenPose(u), QosClass::Sensor));
        t.push(row(format!("{}/move_request", unit.name), Role::MoveRequest(u), QosClass::Requests));
        t.push(row(format!("{}/path_request", unit.name), Role::PathRequest(u), QosClass::Requests));
    }
    for (d, (name, _)) in crate::event_loop::display_topics(cell).into_iter().enumerate() {
        t.push(row(name, Role::Display(d), QosClass::Requests));
    }
    if sim_time {
        t.push(row("/clock".into(), Role::Clock, QosClass::Clock));
    }
    for (r, m) in cell.manipulators.iter().enumerate() {
        t.push(row(format!("{}/stop", m.name), Role::Stop(r), QosClass::Latched));
        t.push(row(format!("{}/grant", m.name), Role::ArmGrant(r), QosClass::Latched));
        t.push(row(format!("{}/state", m.name), Role::State(r), QosClass::Latched));
        if let Some(s) = &m.topics.speed_scaling {
            let qos = match m.topics.speed_scaling_type {
                ScalingMessage::SpeedScalingFactor => QosClass::Latched,
                ScalingMessage::Float64 => QosClass::Reliable,
            };
            t.push(row(s.clone(), Role::Speed(r, m.topics.speed_scaling_type), qos));
        }
        if let Some(c) = &m.topics.controller_command {
            t.push(row(c.clone(), Role::Command(r), QosClass::Reliable));
        }
    }
    for (u, unit) in units.enumerate() {
        t.push(row(format!("{}/grant", unit.name), Role::PlatenGrant(u), QosClass::Requests));
    }
    t.push(row("diagnostics".into(), Role::Diagnostics, QosClass::Reliable));
    t.push(row("markers".into(), Role::Markers, QosClass::Reliable));
    t
}

/// The recorded topics of one node over one cell, by their full names.
#[derive(Clone, Debug)]
pub struct Topics {
    /// Fully qualified name and role, inputs first.
    pub all: Vec<(String, Role)>,
}

impl Topics {
    /// The recorded topics of a node named by `ros` (default name and
    /// namespace where it names none) over `cell`: the [`table`]'s recorded
    /// rows, and the node's cycle instants.
    pub fn new(ros: &RosArgs, cell: &Workcell) -> Topics {
        let node = ros.node_name.as_deref().unwrap_or(NODE_NAME);
        let ns = ros.namespace.as_deref().unwrap_or("/");
        let mut all: Vec<(String, Role)> = table(cell, false)
            .into_iter()
            .filter(|row| row.role.is_recorded())
            .map(|row| (resolve_name(ros, node, ns, &row.name), row.role))
            .collect();
        all.push((format!("{}/{node}/cycle", ns.trim_end_matches('/')), Role::Cycle));
        Topics { all }
    }

    /// Robot `r`'s speed-scaling role, if it has a topic for it.
    pub fn speed(&self, r: usize) -> Option<Role> {
        self.all.iter().map(|&(_, role)| role).find(|role| matches!(role, Role::Speed(s, _) if *s == r))
    }

    /// The role of topic `name`, if the node has one by that name.
    pub fn role(&self, name: &str) -> Option<Role> {
        self.all.iter().find(|(n, _)| n == name).map(|&(_, r)| r)
    }

    /// The name of the topic with role `role`.
    pub fn name(&self, role: Role) -> Option<&str> {
        self.all.iter().find(|&&(_, r)| r == role).map(|(n, _)| n.as_str())
    }
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

/// `n` empty slots, one per robot, for the endpoints a robot may lack.
pub(crate) fn nones<T>(n: usize) -> Vec<Option<T>> {
    (0..n).map(|_| None).collect()
}
