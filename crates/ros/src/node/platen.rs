//! Platen units: poses and move requests in (to the core), grants out
//! (from its answers).

use super::*;

/// The frame a platen pose is in when its `frame_id` is this (or empty):
/// the surface's corner frame (x, y along its edges, z up), as the
/// workcell's `platen.surface.pose` places it in the cell frame.
pub const SURFACE_FRAME: &str = "surface";

impl GuardNode {
    /// Takes a platen unit's pose for the next cycle: in the surface frame
    /// (`frame_id` `surface` or empty), or in the cell frame (the
    /// workcell's `cell_frame`), placed on the surface through its pose; yaw
    /// from the orientation. Any other frame stops the unit, named in its
    /// diagnostics, until a pose in a known frame arrives.
    pub fn on_platen_pose(&mut self, unit: usize, msg: &PoseStamped) {
        let stamp_s = time_s(msg.header.stamp).unwrap_or(f64::NAN);
        let q = msg.pose.orientation;
        let p = msg.pose.position;
        let frame = msg.header.frame_id.as_str();
        let (xyz, rot) = if frame.is_empty() || frame == SURFACE_FRAME {
            ([p.x, p.y, p.z], None)
        } else if frame == self.cell.cell_frame
            && let Some(platen) = &self.cell.platen
        {
            let f = &platen.pose;
            let local = f.rot.transpose() * (nalgebra::Vector3::new(p.x, p.y, p.z) - f.trans);
            ([local.x, local.y, local.z], Some(f.rot.transpose()))
        } else {
            if self.platen_frames.len() <= unit {
                self.platen_frames.resize(unit + 1, String::new());
            }
            self.platen_frames[unit].clone_from(&msg.header.frame_id);
            self.guard.refuse_platen_pose(unit, PoseError::UnknownFrame);
            return;
        };
        // The orientation's x axis, in the surface frame: its heading.
        let ax = nalgebra::Vector3::new(
            1.0 - 2.0 * (q.y * q.y + q.z * q.z),
            2.0 * (q.x * q.y + q.w * q.z),
            2.0 * (q.x * q.z - q.w * q.y),
        );
        let ax = rot.map_or(ax, |r| r * ax);
        let yaw = ax.y.atan2(ax.x);
        self.guard.take_platen_pose(PlatenPoseIn { unit, stamp_s, pose: [xyz[0], xyz[1], yaw] });
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
