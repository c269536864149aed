//! The dds transport's side of the shared event loop: every subscription
//! merged into one stream per kind, joint states polled first, and the
//! publishers and service answers the loop calls for.

use super::services::{DualServer, RequestId};
use super::topics::SpeedPublisher;
use super::*;
use crate::qos::Endpoint;
use ros2_client::dds::rustdds::{DomainParticipant, QosPolicies, RTPSEntity};

/// The dds transport's side of the shared loop: the node's topics, with
/// every subscription merged into one stream per kind.
pub(super) struct DdsIo<'a> {
    node: &'a Node,
    topics: &'a Topics,
    joint_states: futures::stream::SelectAll<LocalStream<'a, (usize, Received<JointState>)>>,
    trajectories: futures::stream::SelectAll<LocalStream<'a, (usize, Received<JointTrajectory>)>>,
    displays: futures::stream::SelectAll<LocalStream<'a, (usize, Received<DisplayTrajectory>)>>,
    clouds: LocalStream<'a, Received<PointCloud2>>,
    unit_poses: futures::stream::SelectAll<LocalStream<'a, (usize, Received<PoseStamped>)>>,
    move_requests: futures::stream::SelectAll<LocalStream<'a, (usize, Received<PlatenMoveRequest>)>>,
    path_requests: futures::stream::SelectAll<LocalStream<'a, (usize, Received<PlatenPathRequest>)>>,
    resets: LocalStream<'a, Result<(RequestId, TriggerRequest), String>>,
    reloads: LocalStream<'a, Result<(RequestId, TriggerRequest), String>>,
    contacts: LocalStream<'a, Result<(RequestId, SetContactRequest), String>>,
    priorities: LocalStream<'a, Result<(RequestId, SetPriorityRequest), String>>,
    /// The participant, for what discovery knows of the peers.
    dp: DomainParticipant,
    /// With `use_sim_time`: the newest `/clock`, ns (0 before the first).
    sim_ns: std::cell::Cell<u64>,
    /// Samples the latched writers dropped on a full window.
    dropped: Dropped,
}

/// Samples dropped by writers that drop rather than wait on a full window
/// (`topics::Retention::drop_when_full`): counted, named at most once a
/// second, so a reader that stops acknowledging does not flood the log.
#[derive(Default)]
struct Dropped {
    count: u64,
    logged: Option<std::time::Instant>,
}

impl Dropped {
    fn note<M>(&mut self, what: &str, r: ros2_client::WriteResult<(), M>) {
        match r {
            Ok(()) => {}
            Err(ros2_client::WriteError::WouldBlock { .. }) => {
                self.count += 1;
                if self.logged.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
                    self.logged = Some(std::time::Instant::now());
                    tracing::warn!(
                        "{what} dropped ({} samples so far): a subscriber has not acknowledged the last ones \
                         (killed or suspended?); the next supersedes it",
                        self.count
                    );
                }
            }
            Err(e) => tracing::warn!("{what} not published: {e}"),
        }
    }
}

/// A QoS in words: reliability and durability.
fn qos_words(q: &QosPolicies) -> String {
    format!(
        "{} {}",
        if q.is_reliable() { "reliable" } else { "best effort" },
        if q.is_volatile() { "volatile" } else { "transient local" }
    )
}

type LocalStream<'a, T> = futures::stream::LocalBoxStream<'a, T>;
type Received<M> = Result<M, String>;

/// Each subscription's messages (decoding errors as text), tagged with its index.
fn merged<'a, M: 'static + serde::de::DeserializeOwned>(
    subs: impl Iterator<Item = &'a Subscription<M>>,
) -> futures::stream::SelectAll<LocalStream<'a, (usize, Received<M>)>> {
    futures::stream::select_all(subs.enumerate().map(|(i, s)| {
        s.async_stream().map(move |m| (i, m.map(|(msg, _)| msg).map_err(|e| format!("{e:?}")))).boxed_local()
    }))
}

/// What discovery shows now of the other participants: each reader's and
/// writer's DDS topic and QoS.
struct Discovered {
    readers: Vec<(String, QosPolicies)>,
    writers: Vec<(String, QosPolicies)>,
}

impl DdsIo<'_> {
    fn discovered(&self) -> Discovered {
        let me = self.dp.guid().prefix;
        Discovered {
            readers: (self.dp.discovered_readers().into_iter())
                .filter(|r| r.reader_proxy.remote_reader_guid.prefix != me)
                .map(|r| (r.subscription_topic_data.topic_name().clone(), r.subscription_topic_data.qos()))
                .collect(),
            writers: (self.dp.discovered_writers().into_iter())
                .filter(|w| w.writer_proxy.remote_writer_guid.prefix != me)
                .map(|w| (w.publication_topic_data.topic_name.clone(), w.publication_topic_data.qos()))
                .collect(),
        }
    }

    /// The peers in `d` on our `end` of topic `fq` (with our QoS `ours`):
    /// their QoS, and whether it connects with ours.
    fn peers<'d>(
        d: &'d Discovered,
        (fq, end, ours): (&str, Endpoint, &'d QosPolicies),
    ) -> impl Iterator<Item = (&'d QosPolicies, bool)> + 'd {
        let dds_name = format!("rt{fq}");
        let list = match end {
            Endpoint::Publisher => &d.readers,
            Endpoint::Subscription => &d.writers,
        };
        list.iter().filter(move |(t, _)| *t == dds_name).map(move |(_, theirs)| {
            let ok = match end {
                Endpoint::Publisher => ours.compliance_failure_wrt(theirs).is_none(),
                Endpoint::Subscription => theirs.compliance_failure_wrt(ours).is_none(),
            };
            (theirs, ok)
        })
    }

    /// How many peers connect with our `end` of `fq`.
    fn connected(&self, fq: &str, end: Endpoint) -> usize {
        let Some((_, _, ours)) = self.topics.endpoints.iter().find(|(f, e, _)| f == fq && *e == end) else {
            return 0;
        };
        let d = self.discovered();
        Self::peers(&d, (fq, end, ours)).filter(|(_, ok)| *ok).count()
    }
}

impl<'a> DdsIo<'a> {
    pub(super) fn new(node: &'a Node, topics: &'a Topics, dp: DomainParticipant) -> DdsIo<'a> {
        let service = |s: &'a DualServer<TriggerRequest, TriggerResponse>| s.receive_request_stream().boxed_local();
        DdsIo {
            node,
            topics,
            joint_states: merged(topics.joint_states.iter()),
            trajectories: merged(topics.trajectories.iter()),
            displays: merged(topics.displays.iter().map(|(s, _)| s)),
            clouds: match &topics.points {
                Some(points) => {
                    points.async_stream().map(|m| m.map(|(msg, _)| msg).map_err(|e| format!("{e:?}"))).boxed_local()
                }
                None => futures::stream::pending().boxed_local(),
            },
            unit_poses: merged(topics.unit_poses.iter()),
            move_requests: merged(topics.move_requests.iter()),
            path_requests: merged(topics.path_requests.iter()),
            resets: service(&topics.reset_stop),
            reloads: service(&topics.reload),
            contacts: topics.set_contact.receive_request_stream().boxed_local(),
            priorities: topics.set_priority.receive_request_stream().boxed_local(),
            dp,
            sim_ns: std::cell::Cell::new(0),
            dropped: Dropped::default(),
        }
    }
}

fn warn<E: std::fmt::Debug>(what: &str, r: Result<(), E>) {
    if let Err(e) = r {
        tracing::warn!("{what} not published: {e:?}");
    }
}

impl Transport for DdsIo<'_> {
    type Request = RequestId;

    async fn next(&mut self) -> Option<Incoming<RequestId>> {
        use Incoming as I;
        let bad = |what: &'static str, e: String| Some(I::Undecodable(what, e));
        tokio::select! {
            biased;
            Some((r, m)) = self.joint_states.next() => match m {
                Ok(msg) => Some(I::JointState(r, msg)),
                Err(e) => bad("joint state", e),
            },
            Some((d, m)) = self.displays.next() => match m {
                Ok(msg) => Some(I::Display(self.topics.displays[d].1.clone(), msg)),
                Err(e) => bad("display trajectory", e),
            },
            Some(m) = self.clouds.next() => match m {
                Ok(msg) => Some(I::Cloud(msg)),
                Err(e) => bad("point cloud", e),
            },
            Some((u, m)) = self.unit_poses.next() => match m {
                Ok(msg) => Some(I::PlatenPose(u, msg)),
                Err(e) => bad("platen pose", e),
            },
            Some((u, m)) = self.move_requests.next() => match m {
                Ok(msg) => Some(I::MoveRequest(u, msg)),
                Err(e) => bad("move request", e),
            },
            Some((u, m)) = self.path_requests.next() => match m {
                Ok(msg) => Some(I::PathRequest(u, msg)),
                Err(e) => bad("path request", e),
            },
            Some(r) = self.resets.next() => match r {
                Ok((id, _)) => Some(I::ResetStop(id)),
                Err(e) => bad("reset_stop request", e),
            },
            Some(r) = self.contacts.next() => match r {
                Ok((id, req)) => Some(I::SetContact(id, req)),
                Err(e) => bad("set_contact request", e),
            },
            Some(r) = self.priorities.next() => match r {
                Ok((id, req)) => Some(I::SetPriority(id, req)),
                Err(e) => bad("set_priority request", e),
            },
            Some(r) = self.reloads.next() => match r {
                Ok((id, _)) => Some(I::Reload(id)),
                Err(e) => bad("reload request", e),
            },
            Some((r, m)) = self.trajectories.next() => match m {
                Ok(msg) => Some(I::Trajectory(r, msg)),
                Err(e) => bad("trajectory", e),
            },
            else => None,
        }
    }

    fn now_s(&self) -> f64 {
        // (With `use_sim_time`, the `/clock` this node reads itself.)
        self.now_ns().map_or(f64::NAN, crate::event_loop::seconds)
    }

    fn now_ns(&self) -> Option<u64> {
        let Some(clock) = &self.topics.clock else {
            return u64::try_from(self.node.time_now_not_simulated().to_nanos()).ok();
        };
        // Simulated: the newest `/clock` taken so far (0, as in rclcpp,
        // before the first).
        while let Ok(Some((m, _))) = clock.take() {
            let ns = u64::try_from(m.clock.sec).ok().map(|s| s * 1_000_000_000 + u64::from(m.clock.nanosec));
            self.sim_ns.set(ns.unwrap_or(0));
        }
        Some(self.sim_ns.get())
    }

    fn publish_stop(&mut self, robot: usize, stop: Bool) {
        warn("stop", self.topics.stops[robot].publish(stop));
    }

    fn publish_speed(&mut self, robot: usize, scaling: Float64) {
        match &self.topics.speed[robot] {
            Some(SpeedPublisher::Factor(p)) => {
                warn("speed scaling", p.publish(crate::msg::SpeedScalingFactor { factor: scaling.data }))
            }
            Some(SpeedPublisher::Float64(p)) => warn("speed scaling", p.publish(scaling)),
            None => {}
        }
    }

    fn hold(&mut self, robot: usize, stamp: crate::msg::Time) {
        if let Some(p) = &self.topics.commands[robot] {
            warn("controller hold", p.publish(JointTrajectory::hold(stamp)));
        }
    }

    fn cancel_goals(&mut self, robot: usize) {
        for c in &self.topics.cancels[robot] {
            while let Ok(Some(_)) = c.receive_response() {}
            if let Err(e) = c.send_request(CancelGoalRequest::default()) {
                tracing::warn!("goal cancel not sent: {e:?}");
            }
        }
    }

    fn send_trajectory(&mut self, robot: usize, trajectory: &JointTrajectory) {
        if let Some(p) = &self.topics.commands[robot] {
            warn("retreat", p.publish(trajectory.clone()));
        }
    }

    fn publish_state(&mut self, robot: usize, state: &crate::msg::GuardState) {
        self.dropped.note("state", self.topics.states[robot].publish(state.clone()));
    }

    fn publish_arm_grant(&mut self, robot: usize, grant: &ManipulatorGrant) {
        self.dropped.note("manipulator grant", self.topics.arm_grants[robot].publish(grant.clone()));
    }

    fn publish_grant(&mut self, unit: usize, grant: &PlatenGrant) {
        warn("grant", self.topics.grants[unit].publish(grant.clone()));
    }

    fn publish_diagnostics(&mut self, d: &DiagnosticArray) {
        if let Some(p) = &self.topics.diagnostics {
            warn("diagnostics", p.publish(d.clone()));
        }
    }

    fn publish_markers(&mut self, m: &MarkerArray) {
        if let Some(p) = &self.topics.markers {
            warn("markers", p.publish(m.clone()));
        }
    }

    fn joint_state_publishers(&self, robot: usize) -> Option<usize> {
        let fq = self.topics.js_names.get(robot)?;
        Some(self.connected(fq, Endpoint::Subscription))
    }

    fn markers_wanted(&self) -> bool {
        let fq = self.topics.endpoints.iter().find(|e| e.1 == Endpoint::Publisher && e.0.ends_with("/markers"));
        fq.is_some_and(|(fq, ..)| self.connected(fq, Endpoint::Publisher) > 0)
    }

    fn samples_dropped(&self) -> u64 {
        self.dropped.count
    }

    fn qos_mismatches(&self) -> Vec<(String, String)> {
        let d = self.discovered();
        let mut out = Vec::new();
        for (fq, end, ours) in &self.topics.endpoints {
            for (theirs, _) in Self::peers(&d, (fq, *end, ours)).filter(|(_, ok)| !ok) {
                let (o, t) = (qos_words(ours), qos_words(theirs));
                out.push((
                    fq.clone(),
                    match end {
                        Endpoint::Publisher => format!("the node offers {o}, a subscriber requests {t}"),
                        Endpoint::Subscription => format!("the node requests {o}, a publisher offers {t}"),
                    },
                ));
            }
        }
        out
    }

    fn answer_trigger(&mut self, which: Trigger, request: RequestId, answer: TriggerResponse) {
        let server = match which {
            Trigger::ResetStop => &self.topics.reset_stop,
            Trigger::Reload => &self.topics.reload,
        };
        if let Err(e) = server.send_response(request, answer) {
            tracing::warn!("{which:?} answer not sent: {e:?}");
        }
    }

    fn answer_set_priority(&mut self, request: RequestId, answer: SetPriorityResponse) {
        if let Err(e) = self.topics.set_priority.send_response(request, answer) {
            tracing::warn!("set_priority answer not sent: {e:?}");
        }
    }

    fn answer_set_contact(&mut self, request: RequestId, answer: SetContactResponse) {
        if let Err(e) = self.topics.set_contact.send_response(request, answer) {
            tracing::warn!("set_contact answer not sent: {e:?}");
        }
    }

    fn flush_answers(&mut self) {
        let t = self.topics;
        let sent = [t.reset_stop.flush(), t.reload.flush(), t.set_contact.flush(), t.set_priority.flush()];
        for e in sent.into_iter().filter_map(Result::err) {
            tracing::warn!("service answer not sent: {e:?}");
        }
    }
}
