//! `workcell_guard record`: a DDS participant of its own that subscribes
//! to every topic of a cell, the node's inputs and its outputs alike (the
//! names a node with the same `--ros-args` would use), and writes each
//! message as it arrives, logged at its clock on arrival, into a rosbag2
//! MCAP, until SIGINT or SIGTERM or the given duration.
//!
//! Stops, grants and `SpeedScalingFactor` scalings are read transient local, so the recording starts with
//! the node's current ones; joint states, poses and clouds best effort, as
//! the node reads them; the rest reliable.

use super::*;
use crate::bag::{BagWriter, Msg};
use crate::msg::SpeedScalingFactor;
use crate::topics::{Role, Topics};
use std::collections::BTreeMap;
use workcell_guard_description::workcell::ScalingMessage;

/// One subscription, typed by its topic's role.
pub(super) enum Sub {
    JointState(Subscription<JointState>),
    Trajectory(Subscription<JointTrajectory>),
    Pose(Subscription<PoseStamped>),
    Move(Subscription<PlatenMoveRequest>),
    Path(Subscription<PlatenPathRequest>),
    Cloud(Subscription<PointCloud2>),
    Bool(Subscription<Bool>),
    Float64(Subscription<Float64>),
    SpeedScaling(Subscription<SpeedScalingFactor>),
    ArmGrant(Subscription<ManipulatorGrant>),
    PlatenGrant(Subscription<PlatenGrant>),
}

fn take<M: 'static + serde::de::DeserializeOwned>(
    s: &Subscription<M>,
    wrap: fn(M) -> Msg,
) -> Option<Result<Msg, String>> {
    match s.take() {
        Ok(Some((m, _))) => Some(Ok(wrap(m))),
        Ok(None) => None,
        Err(e) => Some(Err(format!("{e:?}"))),
    }
}

impl Sub {
    pub(super) fn new(node: &mut Node, name: &Name, role: Role) -> Result<Option<Sub>, RunError> {
        let reliable = QosProfile::publisher_default();
        fn sub<M: RosMessage + 'static>(
            node: &mut Node,
            n: &Name,
            qos: &QosProfile,
        ) -> Result<Subscription<M>, RunError> {
            let tp = topic::<M>(node, n, qos)?;
            node.create_subscription(&tp, None).map_err(dds)
        }
        Ok(Some(match role {
            Role::JointState(_) => Sub::JointState(sub(node, name, &SENSOR)?),
            Role::Plan(_) | Role::Command(_) => Sub::Trajectory(sub(node, name, &reliable)?),
            Role::PlatenPose(_) => Sub::Pose(sub(node, name, &SENSOR)?),
            Role::MoveRequest(_) => Sub::Move(sub(node, name, &reliable)?),
            Role::PathRequest(_) => Sub::Path(sub(node, name, &reliable)?),
            Role::Points => Sub::Cloud(sub(node, name, &SENSOR)?),
            Role::Stop(_) => Sub::Bool(sub(node, name, &LATCHED)?),
            Role::Speed(_, ScalingMessage::Float64) => Sub::Float64(sub(node, name, &reliable)?),
            Role::Speed(_, ScalingMessage::SpeedScalingFactor) => Sub::SpeedScaling(sub(node, name, &LATCHED)?),
            Role::ArmGrant(_) => Sub::ArmGrant(sub(node, name, &LATCHED)?),
            Role::PlatenGrant(_) => Sub::PlatenGrant(sub(node, name, &reliable)?),
            Role::Cycle | Role::State(_) | Role::Diagnostics | Role::Markers | Role::Display(_) | Role::Clock => {
                return Ok(None);
            }
        }))
    }

    pub(super) fn take(&self) -> Option<Result<Msg, String>> {
        match self {
            Sub::JointState(s) => take(s, Msg::JointState),
            Sub::Trajectory(s) => take(s, Msg::Trajectory),
            Sub::Pose(s) => take(s, Msg::Pose),
            Sub::Move(s) => take(s, Msg::Move),
            Sub::Path(s) => take(s, Msg::Path),
            Sub::Cloud(s) => take(s, Msg::Cloud),
            Sub::Bool(s) => take(s, Msg::Bool),
            Sub::Float64(s) => take(s, Msg::Float64),
            Sub::SpeedScaling(s) => take(s, Msg::SpeedScaling),
            Sub::ArmGrant(s) => take(s, Msg::ArmGrant),
            Sub::PlatenGrant(s) => take(s, Msg::PlatenGrant),
        }
    }
}

/// What a recording took: messages per topic, and those not decoded.
#[derive(Clone, Debug, Default)]
pub struct Recorded {
    /// Messages written, per topic.
    pub per_topic: BTreeMap<String, usize>,
    /// Samples that did not decode, per topic (not written).
    pub undecodable: BTreeMap<String, usize>,
}

/// Records the topics of `cell` (named as `ros` would name them for the
/// node) into `out` until SIGINT or SIGTERM, or for `duration_s`.
pub fn record(
    ros: &RosArgs,
    cell: &Workcell,
    out: &std::path::Path,
    duration_s: Option<f64>,
) -> Result<Recorded, RunError> {
    let (_context, mut node) = super::peer::participant(ros, "workcell_guard_recorder")?;
    let topics = Topics::new(ros, cell);
    let mut subs = Vec::new();
    for (topic, role) in &topics.all {
        let n = Name::parse(topic).map_err(|e| RunError::Name { name: topic.clone(), problem: format!("{e:?}") })?;
        if let Some(s) = Sub::new(&mut node, &n, *role)? {
            subs.push((topic.clone(), s));
        }
    }
    super::peer::spin(&mut node)?;
    let mut bag = BagWriter::create(out)?;
    let mut got = Recorded::default();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let written: Result<(), crate::bag::BagError> = rt.block_on(async {
        let mut shutdown = crate::startup::Shutdown::new();
        let stop = shutdown.requested();
        tokio::pin!(stop);
        let until = duration_s.map(|d| tokio::time::Instant::now() + Duration::from_secs_f64(d.max(0.0)));
        let mut last_flush = tokio::time::Instant::now();
        loop {
            tokio::select! {
                _ = &mut stop => break,
                _ = tokio::time::sleep(Duration::from_millis(1)) => {}
            }
            for (topic, s) in &subs {
                while let Some(m) = s.take() {
                    let ns = u64::try_from(node.time_now().to_nanos()).unwrap_or(0);
                    match m {
                        Ok(m) => {
                            bag.write_msg(topic, ns, &m)?;
                            *got.per_topic.entry(topic.clone()).or_default() += 1;
                        }
                        Err(e) => {
                            tracing::warn!("{topic}: sample not decoded: {e}");
                            *got.undecodable.entry(topic.clone()).or_default() += 1;
                        }
                    }
                }
            }
            let now = tokio::time::Instant::now();
            if now - last_flush >= Duration::from_secs(1) {
                last_flush = now;
                bag.flush()?;
            }
            if until.is_some_and(|u| now >= u) {
                break;
            }
        }
        Ok(())
    });
    written?;
    bag.finish()?;
    Ok(got)
}
