//! A cell's robots on the wire: a DDS participant of its own that
//! publishes what the robots' drivers publish (joint states, plans, unit
//! poses, move and path requests) on the topics a node with the same
//! `--ros-args` reads, and reads what the node answers (stops, speed
//! scalings, grants, diagnostics). `workcell_guard demo` drives it.
//!
//! Joint states and poses go out best effort, as sensor data; plans and
//! requests reliable. Stops and manipulator grants are read transient
//! local (a late reader gets the latest), the rest as the node writes them.

use super::recorder::Sub;
use super::*;
use crate::bag::Msg;
use crate::topics::{Role, Topics};

/// A participant and its node, loopback only where the environment says
/// so, its spinner on a thread of its own.
pub(super) fn participant(ros: &RosArgs, node_name: &str) -> Result<(Context, Node), RunError> {
    let env = DdsEnv::from_env()?;
    let mut dp = DomainParticipantBuilder::new(env.domain_id);
    if env.localhost_only {
        dp = dp.with_only_networks([Ipv4Addr::LOCALHOST]);
    }
    let context = Context::from_domain_participant(dp.build().map_err(dds)?).map_err(dds)?;
    let ns = ros.namespace.clone().unwrap_or_else(|| "/".to_string());
    let name = NodeName::new(&ns, node_name)
        .map_err(|e| RunError::Name { name: format!("{ns}/{node_name}"), problem: format!("{e:?}") })?;
    let node = context.new_node(name, NodeOptions::new().enable_rosout(false)).map_err(dds)?;
    Ok((context, node))
}

/// Starts `node`'s spinner on a thread of its own.
pub(super) fn spin(node: &mut Node) -> Result<(), RunError> {
    let spinner = node.spinner().map_err(dds)?;
    std::thread::Builder::new().name("ros-spinner".into()).spawn(move || {
        if let Err(e) = futures::executor::block_on(spinner.spin()) {
            tracing::error!("ROS spinner stopped: {e:?}");
        }
    })?;
    Ok(())
}

/// The robots' side of a cell's topics.
pub struct CellPeer {
    _context: Context,
    _node: Node,
    joint_states: Vec<Publisher<JointState>>,
    plans: Vec<Publisher<JointTrajectory>>,
    poses: Vec<Publisher<PoseStamped>>,
    moves: Vec<Publisher<PlatenMoveRequest>>,
    paths: Vec<Publisher<PlatenPathRequest>>,
    answers: Vec<(Role, Sub)>,
    diagnostics: Subscription<DiagnosticArray>,
}

/// A publisher of `M` on topic `n`.
fn publisher<M: RosMessage + serde::Serialize>(
    node: &mut Node,
    n: &Name,
    qos: &QosProfile,
) -> Result<Publisher<M>, RunError> {
    let tp = topic::<M>(node, n, qos)?;
    node.create_publisher(&tp, None).map_err(dds)
}

/// What a publication failed on.
fn sent<T, E: std::fmt::Debug>(what: &str, r: Result<T, E>) -> Result<(), RunError> {
    r.map(drop).map_err(|e| RunError::Dds(format!("{what}: {e:?}")))
}

impl CellPeer {
    /// The peer of `cell`'s robots, named `node_name`, for the node `ros` names.
    pub fn new(ros: &RosArgs, cell: &Workcell, node_name: &str) -> Result<CellPeer, RunError> {
        let (context, mut node) = participant(ros, node_name)?;
        let topics = Topics::new(ros, cell);
        let reliable = QosProfile::publisher_default();
        let mut p = CellPeer {
            _context: context,
            joint_states: Vec::new(),
            plans: Vec::new(),
            poses: Vec::new(),
            moves: Vec::new(),
            paths: Vec::new(),
            answers: Vec::new(),
            diagnostics: {
                let ns = ros.namespace.as_deref().unwrap_or("/");
                let n = super::name(ros, ros.node_name.as_deref().unwrap_or(NODE_NAME), ns, "diagnostics")?;
                node.create_subscription(&topic::<DiagnosticArray>(&node, &n, &reliable)?, None).map_err(dds)?
            },
            _node: node,
        };
        for (t, role) in &topics.all {
            let n = Name::parse(t).map_err(|e| RunError::Name { name: t.clone(), problem: format!("{e:?}") })?;
            let node = &mut p._node;
            match role {
                Role::JointState(_) => p.joint_states.push(publisher(node, &n, &SENSOR)?),
                Role::Plan(_) => p.plans.push(publisher(node, &n, &reliable)?),
                Role::PlatenPose(_) => p.poses.push(publisher(node, &n, &SENSOR)?),
                Role::MoveRequest(_) => p.moves.push(publisher(node, &n, &reliable)?),
                Role::PathRequest(_) => p.paths.push(publisher(node, &n, &reliable)?),
                Role::Stop(_) | Role::Speed(..) | Role::ArmGrant(_) | Role::PlatenGrant(_) => {
                    if let Some(s) = Sub::new(node, &n, *role)? {
                        p.answers.push((*role, s));
                    }
                }
                Role::Points | Role::Command(_) | Role::Cycle => {}
                // (Not in a recording's topics.)
                Role::State(_) | Role::Diagnostics | Role::Markers | Role::Display(_) | Role::Clock => {}
            }
        }
        spin(&mut p._node)?;
        Ok(p)
    }

    /// Publishes arm `r`'s joint state.
    pub fn joint_state(&self, r: usize, m: JointState) -> Result<(), RunError> {
        sent("joint state", self.joint_states[r].publish(m))
    }

    /// Publishes arm `r`'s plan.
    pub fn plan(&self, r: usize, m: JointTrajectory) -> Result<(), RunError> {
        sent("plan", self.plans[r].publish(m))
    }

    /// Publishes unit `u`'s pose.
    pub fn pose(&self, u: usize, m: PoseStamped) -> Result<(), RunError> {
        sent("pose", self.poses[u].publish(m))
    }

    /// Publishes unit `u`'s move request.
    pub fn move_request(&self, u: usize, m: PlatenMoveRequest) -> Result<(), RunError> {
        sent("move request", self.moves[u].publish(m))
    }

    /// Publishes unit `u`'s path request.
    pub fn path_request(&self, u: usize, m: PlatenPathRequest) -> Result<(), RunError> {
        sent("path request", self.paths[u].publish(m))
    }

    /// Every answer that arrived since the last call, in order per topic
    /// (undecodable samples are skipped, with a warning).
    pub fn answers(&self, out: &mut Vec<(Role, Msg)>) {
        for (role, s) in &self.answers {
            while let Some(m) = s.take() {
                match m {
                    Ok(m) => out.push((*role, m)),
                    Err(e) => tracing::warn!("{role:?}: sample not decoded: {e}"),
                }
            }
        }
    }

    /// The newest diagnostics that arrived since the last call.
    pub fn diagnostics(&self) -> Option<DiagnosticArray> {
        let mut last = None;
        while let Ok(Some((d, _))) = self.diagnostics.take() {
            last = Some(d);
        }
        last
    }
}
