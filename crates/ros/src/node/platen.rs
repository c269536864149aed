//! Platen units: poses and move requests in (to the core), grants out
//! (from its answers).

use super::*;

impl GuardNode {
    /// Takes a platen unit's pose (in the surface frame; yaw from the
    /// orientation) for the next cycle.
    pub fn on_platen_pose(&mut self, unit: usize, msg: &PoseStamped) {
        let q = msg.pose.orientation;
        let yaw = (2.0 * (q.w * q.z + q.x * q.y)).atan2(1.0 - 2.0 * (q.y * q.y + q.z * q.z));
        let stamp_s = time_s(msg.header.stamp).unwrap_or(f64::NAN);
        self.guard.take_platen_pose(PlatenPoseIn {
            unit,
            stamp_s,
            pose: [msg.pose.position.x, msg.pose.position.y, yaw],
        });
    }

    /// Takes a platen unit's move request for the next cycle; its answer is
    /// among that cycle's [`GuardNode::grants`].
    pub fn on_move_request(&mut self, unit: usize, msg: &PlatenMoveRequest) {
        self.guard.take_move_request(MoveRequest {
            unit,
            request_id: msg.request_id,
            target: [msg.target.x, msg.target.y, msg.target.theta],
        });
    }

    /// Takes a platen unit's path request for the next cycle; its answers
    /// (the first increment at once, the next ones as the unit moves on)
    /// are among the cycles' [`GuardNode::grants`].
    pub fn on_path_request(&mut self, unit: usize, msg: &PlatenPathRequest) {
        self.guard.take_path_request(PathRequest {
            unit,
            unit_name: msg.unit.clone(),
            request_id: u64::from(msg.request_id),
            waypoints: msg.waypoints.iter().map(|w| [w.x, w.y, w.theta]).collect(),
            speed_mps: msg.speed_mps,
        });
    }

    /// Answers the move and path requests taken since the last cycle at
    /// once ([`Guard::answer_requests`]), as their grants: what the event
    /// loop publishes as a request arrives.
    pub fn answer_requests(&mut self, now_s: f64) -> &[(usize, PlatenGrant)] {
        let answers = self.guard.answer_requests(now_s);
        for (k, &(unit, answer)) in answers.iter().enumerate() {
            if self.early_grants.len() <= k {
                self.early_grants.push((unit, PlatenGrant::default()));
            }
            self.early_grants[k].0 = unit;
            fill_grant(&mut self.early_grants[k].1, &answer, &self.cell, now_s);
        }
        &self.early_grants[..answers.len()]
    }

    /// The answers to this cycle's move requests: (unit, grant).
    pub fn grants(&self) -> &[(usize, PlatenGrant)] {
        &self.grants[..self.n_grants]
    }
}

pub(super) fn blocker_name(cell: &Workcell, b: Blocker) -> String {
    let p = cell.platen.as_ref();
    match b {
        Blocker::Unit(u) => p.and_then(|p| p.units.get(u)).map_or("?".into(), |u| u.name.clone()),
        Blocker::Obstacle(o) => p.and_then(|p| p.obstacles.get(o)).map_or("?".into(), |o| o.name.clone()),
        Blocker::Edge => "edge".into(),
    }
}

/// Fills a grant message from the allocator's answer.
pub(super) fn fill_grant(g: &mut PlatenGrant, a: &Answer, cell: &Workcell, now_s: f64) {
    g.header.stamp = crate::convert::to_time(now_s).unwrap_or_default();
    g.request_id = a.request_id();
    g.blocker.clear();
    g.reason.clear();
    g.fraction = 0.0;
    g.retry_after_s = 0.0;
    g.goal = Pose2D::default();
    let pose = |p: [f64; 3]| Pose2D { x: p[0], y: p[1], theta: p[2] };
    match *a {
        Answer::Granted { goal, .. } => {
            g.result = PlatenGrant::GRANTED;
            g.goal = pose(goal);
            g.fraction = 1.0;
        }
        Answer::Partial { goal, fraction, blocker, .. } => {
            g.result = PlatenGrant::PARTIAL;
            g.goal = pose(goal);
            g.fraction = fraction;
            g.blocker.push_str(&blocker_name(cell, blocker));
        }
        Answer::Increment { goal, fraction, blocker, backing_from, .. } => {
            g.result = PlatenGrant::PARTIAL;
            g.goal = pose(goal);
            g.fraction = fraction;
            if let Some(b) = blocker {
                g.blocker.push_str(&blocker_name(cell, b));
            }
            let _ = match backing_from {
                Some(h) => write!(g.reason, "back away: in the way of {}", blocker_name(cell, Blocker::Unit(h))),
                None if blocker.is_some() => write!(g.reason, "path: hold at the goal until the way clears"),
                None => write!(g.reason, "path: increment"),
            };
        }
        Answer::Denied { retry_after_s, blocker, .. } => {
            g.result = PlatenGrant::DENIED;
            g.retry_after_s = retry_after_s;
            g.blocker.push_str(&blocker_name(cell, blocker));
        }
        Answer::Refused { reason, .. } => {
            g.result = PlatenGrant::REFUSED;
            let _ = match reason {
                Refusal::Busy { current } => write!(g.reason, "busy: request {current} not yet arrived"),
                Refusal::RetryTooSoon { wait_s } => write!(g.reason, "retry too soon: wait {wait_s:.3} s"),
                Refusal::NoPose => write!(g.reason, "no pose received"),
                Refusal::StalePose { age_s } => write!(g.reason, "stale pose: {age_s:.3} s old"),
                Refusal::Stopped => write!(g.reason, "stopped (see diagnostics)"),
                Refusal::BadTarget => write!(g.reason, "target is not a finite pose"),
                Refusal::BadPath(PathFault::Empty) => write!(g.reason, "bad path: no waypoints"),
                Refusal::BadPath(PathFault::NotFinite) => write!(g.reason, "bad path: a waypoint is not a finite pose"),
                Refusal::BadPath(PathFault::WrongUnit) => write!(g.reason, "bad path: names another unit"),
                Refusal::BadPath(PathFault::Speed) => {
                    write!(g.reason, "bad path: speed_mps must be positive and at most the unit's max_speed_mps")
                }
                Refusal::UnknownUnit => write!(g.reason, "unknown unit"),
            };
        }
    }
}
