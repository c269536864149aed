//! Which topic of a cell carries what: the names the node subscribes and
//! publishes to (after namespace and remaps, as the dds transport resolves
//! them), each with its role and robot or unit. Recording and replay read
//! a bag through it.

use crate::args::RosArgs;
use crate::dds::{NODE_NAME, resolve_name};
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
        }
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
        )
    }
}

/// The topics of one node over one cell.
#[derive(Clone, Debug)]
pub struct Topics {
    /// Fully qualified name and role, inputs first.
    pub all: Vec<(String, Role)>,
}

impl Topics {
    /// The topics of a node named by `ros` (default name and namespace
    /// where it names none) over `cell`.
    pub fn new(ros: &RosArgs, cell: &Workcell) -> Topics {
        let node = ros.node_name.as_deref().unwrap_or(NODE_NAME);
        let ns = ros.namespace.as_deref().unwrap_or("/");
        let name = |n: &str| resolve_name(ros, node, ns, n);
        let mut all = Vec::new();
        for (r, m) in cell.manipulators.iter().enumerate() {
            all.push((name(&m.joint_state_topic), Role::JointState(r)));
            all.push((name(&m.trajectory_topic), Role::Plan(r)));
        }
        all.push((name("points"), Role::Points));
        let units = cell.platen.iter().flat_map(|p| &p.units);
        for (u, unit) in units.clone().enumerate() {
            all.push((name(&format!("{}/pose", unit.name)), Role::PlatenPose(u)));
            all.push((name(&format!("{}/move_request", unit.name)), Role::MoveRequest(u)));
            all.push((name(&format!("{}/path_request", unit.name)), Role::PathRequest(u)));
        }
        for (r, m) in cell.manipulators.iter().enumerate() {
            all.push((name(&format!("{}/stop", m.name)), Role::Stop(r)));
            all.push((name(&format!("{}/grant", m.name)), Role::ArmGrant(r)));
            if let Some(s) = &m.speed_scaling_topic {
                all.push((name(s), Role::Speed(r, m.speed_scaling_type)));
            }
            if let Some(c) = &m.controller_command_topic {
                all.push((name(c), Role::Command(r)));
            }
        }
        for (u, unit) in units.enumerate() {
            all.push((name(&format!("{}/grant", unit.name)), Role::PlatenGrant(u)));
        }
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
