//! The messages and services of `workcell_guard_msgs`
//! (`interfaces/workcell_guard_msgs`).

use super::{Duration, Header, Pose2D, RosMessage, Time};
use serde::{Deserialize, Serialize};

/// `workcell_guard_msgs/PlatenMoveRequest` (interfaces/workcell_guard_msgs).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PlatenMoveRequest {
    /// When and by whom.
    pub header: Header,
    /// Echoed in the grant.
    pub request_id: u64,
    /// Target pose in the surface frame.
    pub target: Pose2D,
}
ros_message!(PlatenMoveRequest, "workcell_guard_msgs", "PlatenMoveRequest");

/// `workcell_guard_msgs/PlatenPathRequest` (interfaces/workcell_guard_msgs).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PlatenPathRequest {
    /// When and by whom.
    pub header: Header,
    /// The unit (empty: the topic's).
    pub unit: String,
    /// Echoed in the grants.
    pub request_id: u32,
    /// Poses to visit, surface frame.
    pub waypoints: Vec<Pose2D>,
    /// Speed along the path, m/s.
    pub speed_mps: f64,
}
ros_message!(PlatenPathRequest, "workcell_guard_msgs", "PlatenPathRequest");

/// `workcell_guard_msgs/PlatenGrant` (interfaces/workcell_guard_msgs).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PlatenGrant {
    /// Stamp.
    pub header: Header,
    /// The request answered.
    pub request_id: u64,
    /// [`PlatenGrant::GRANTED`] and friends.
    pub result: u8,
    /// Where the unit may go.
    pub goal: Pose2D,
    /// Fraction of the move granted.
    pub fraction: f64,
    /// When denied: wait this long, s.
    pub retry_after_s: f64,
    /// What is in the way.
    pub blocker: String,
    /// Why it was refused.
    pub reason: String,
}
ros_message!(PlatenGrant, "workcell_guard_msgs", "PlatenGrant");

impl PlatenGrant {
    /// Move to the target.
    pub const GRANTED: u8 = 0;
    /// Move to `goal` only.
    pub const PARTIAL: u8 = 1;
    /// Ask again after `retry_after_s`.
    pub const DENIED: u8 = 2;
    /// The request cannot be taken.
    pub const REFUSED: u8 = 3;
}

/// `workcell_guard_msgs/ManipulatorGrant` (interfaces/workcell_guard_msgs).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ManipulatorGrant {
    /// Stamp (the cycle's).
    pub header: Header,
    /// The manipulator.
    pub robot: String,
    /// The plan's header stamp (zero if none).
    pub plan_stamp: Time,
    /// [`ManipulatorGrant::PROCEED`] and friends.
    pub state: u8,
    /// Time from the plan's start up to which it may move.
    pub granted_until: Duration,
    /// Index of the last plan point inside the grant.
    pub granted_point: u32,
    /// The robot it yields to, empty if none.
    pub held_by: String,
    /// Why.
    pub reason: String,
}
ros_message!(ManipulatorGrant, "workcell_guard_msgs", "ManipulatorGrant");

impl ManipulatorGrant {
    /// Move along the plan up to `granted_until`.
    pub const PROCEED: u8 = 0;
    /// Pause on the path.
    pub const HOLD: u8 = 1;
    /// Go back along the plan.
    pub const BACK_AWAY: u8 = 2;
    /// The plan is finished.
    pub const DONE: u8 = 3;
    /// Not arbitrated.
    pub const NO_PLAN: u8 = 4;
}

/// `workcell_guard_msgs/SetContact` request.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SetContactRequest {
    /// `robot/link`, obstacle or platen unit.
    pub body_a: String,
    /// The other.
    pub body_b: String,
    /// Allow (true) or forbid (false).
    pub allowed: bool,
}

/// `workcell_guard_msgs/SetContact` response.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SetContactResponse {
    /// Done.
    pub success: bool,
    /// What was done, or why not.
    pub message: String,
}

/// `workcell_guard_msgs/SetPriority` request.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SetPriorityRequest {
    /// The manipulator.
    pub robot: String,
    /// Its new priority (higher goes first).
    pub priority: i32,
}

/// `workcell_guard_msgs/SetPriority` response.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SetPriorityResponse {
    /// Done.
    pub success: bool,
    /// What was done, or why not.
    pub message: String,
}

/// `workcell_guard_msgs/GuardState` (interfaces/workcell_guard_msgs): one
/// manipulator's state, as data.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GuardState {
    /// The cycle's stamp, the cell frame.
    pub header: Header,
    /// The manipulator.
    pub robot: String,
    /// [`GuardState::RUN`] or [`GuardState::STOP`].
    pub decision: u8,
    /// What holds it: `SOURCE_*`.
    pub source: u8,
    /// Why: `REASON_*`.
    pub reason: u8,
    /// Why, in words.
    pub reason_text: String,
    /// Its link of the closest pair (empty: nothing in reach).
    pub closest_link: String,
    /// The other body of the closest pair.
    pub closest_other: String,
    /// Least clearance over its stopping path, m (∞: nothing in reach).
    pub clearance_m: f64,
    /// To the first conflict on its stopping path, s (∞: none).
    pub time_to_contact_s: f64,
    /// Its speed scaling, 0..1.
    pub speed_scale: f64,
    /// Its grant's state ([`ManipulatorGrant::PROCEED`] …).
    pub grant_state: u8,
    /// On its planned trajectory.
    pub on_plan: bool,
}
ros_message!(GuardState, "workcell_guard_msgs", "GuardState");

#[allow(missing_docs)]
impl GuardState {
    pub const RUN: u8 = 0;
    pub const STOP: u8 = 1;
    pub const SOURCE_NONE: u8 = 0;
    pub const SOURCE_GUARD: u8 = 1;
    pub const SOURCE_REFUSED_INPUT: u8 = 2;
    pub const SOURCE_LATCHED: u8 = 3;
    pub const SOURCE_GRANT: u8 = 4;
    pub const SOURCE_STALE_SENSING: u8 = 5;
    pub const REASON_NONE: u8 = 0;
    pub const REASON_CELL: u8 = 1;
    pub const REASON_ROBOT: u8 = 2;
    pub const REASON_SELF: u8 = 3;
    pub const REASON_NO_JOINT_STATE: u8 = 4;
    pub const REASON_STALE_JOINT_STATE: u8 = 5;
    pub const REASON_BAD_JOINT_STATE: u8 = 6;
    pub const REASON_WARMING_UP: u8 = 7;
    pub const REASON_IMPLAUSIBLE_MOTION: u8 = 8;
    pub const REASON_OTHER_ROBOT_UNKNOWN: u8 = 9;
    pub const REASON_HOLDING: u8 = 10;
    pub const REASON_REFUSED_INPUT: u8 = 11;
    pub const REASON_GRANT: u8 = 12;
    pub const REASON_STALE_SENSING: u8 = 13;
}
