//! What the guard takes and gives: inputs, decisions and their reasons,
//! the run-time tuning, and the errors of building and tuning it.

use super::command::Command;
use crate::cell::BodyRef;
use crate::forecast::SampleError;
use crate::model::exact;
use crate::platen::{Answer, PlatenError, Pose2, UnitStatus};

/// A body named in a decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Body {
    /// Link `link` of manipulator `robot`.
    Link {
        /// Manipulator index.
        robot: u16,
        /// Link index.
        link: u16,
    },
    /// The static cell as the distance field holds it (obstacles, walls,
    /// sensed points).
    Cell,
}

/// Why a robot is stopped. Exhaustive on purpose: a new reason must be
/// named by every adapter that explains stops.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reason {
    /// Its stopping path comes too close to the cell.
    Cell,
    /// Its stopping path comes too close to another robot's.
    Robot {
        /// The other manipulator.
        other: u16,
    },
    /// Two of its own links come too close.
    SelfCollision,
    /// No joint state has arrived yet.
    NoJointState,
    /// The newest joint state is older than the watchdog.
    StaleJointState {
        /// Its age, s.
        age_s: f32,
    },
    /// A joint state was refused this cycle.
    BadJointState(SampleError),
    /// Too few joint states yet to estimate velocity and acceleration.
    WarmingUp {
        /// Samples so far.
        have: u16,
        /// Samples needed.
        need: u16,
    },
    /// The joint states say a joint moves faster than its limit allows (a
    /// jump in the positions, a wrong stamp): nothing it says can be
    /// forecast from.
    ImplausibleMotion {
        /// Joint index (the robot's joint order).
        joint: u16,
        /// Its estimated speed, rad/s or m/s.
        speed: f32,
        /// Its URDF velocity limit, rad/s or m/s.
        limit: f32,
    },
    /// Another robot's whereabouts are unknown (it never reported).
    OtherRobotUnknown {
        /// That manipulator.
        other: u16,
    },
    /// Stopped earlier and not yet clear by the release margin for the hold time.
    Holding {
        /// How long it has been clear, s.
        clear_for_s: f32,
    },
}

/// Stop along the path (controlled deceleration) or at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopKind {
    /// A forecast conflict: decelerate along the path.
    OnPath,
    /// Already within the margin, or the data cannot be trusted.
    Immediate,
}

/// Where a robot stands against its planned trajectory.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PlanState {
    /// No plan (none given, or dropped).
    None,
    /// On its plan: its stopping path brakes along it.
    On {
        /// Plan time where it is, s.
        time_s: f32,
        /// Largest joint offset from the plan, in tolerance units (≤ 1).
        deviation: f32,
    },
    /// Off its plan: forecast by extrapolation; dropped as abandoned after
    /// [`PLAN_ABANDON_S`](super::PLAN_ABANDON_S).
    Off {
        /// Largest joint offset at the nearest point, tolerance units (> 1).
        deviation: f32,
        /// How long it has been off, s.
        for_s: f32,
    },
    /// It reached its plan's end; the plan was dropped.
    Finished,
    /// It stayed off its plan too long; the plan was dropped.
    Abandoned,
}

/// A stop decision.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stop {
    /// How.
    pub kind: StopKind,
    /// Why.
    pub reason: Reason,
    /// The closest pair found this cycle (this robot's link first).
    pub pair: Option<(Body, Body)>,
    /// Least clearance over the checked stopping path, m (negative =
    /// overlap; `+∞` when nothing was checked).
    pub clearance_m: f32,
    /// Time from the newest joint state to the first sample within the
    /// margin, s.
    pub time_to_contact_s: Option<f32>,
}

/// The least clearance a robot's last check found to each kind of body, m
/// (+∞ where nothing came within the checks' reach: the release margin
/// plus the stopping path's inflation). Never below the truth, and exact
/// for the least of the three (the checks skip what cannot beat the least
/// found so far, so a larger one may read larger than it is).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Clearances {
    /// To the cell (the distance field).
    pub cell_m: f32,
    /// Between its own links.
    pub own_links_m: f32,
    /// To other robots.
    pub other_robots_m: f32,
}

/// A joint moving faster than any stop its learned stopping model was
/// fitted to: its forecast took the configured figures instead.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BeyondModel {
    /// The joint (`dof` order).
    pub joint: u16,
    /// Its speed at the start of braking, rad/s or m/s.
    pub speed: f32,
    /// The fastest recorded stop, rad/s or m/s.
    pub covered: f32,
}

/// The decision for one manipulator.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Decision {
    /// Keep going.
    Continue {
        /// Least clearance over the checked stopping path, m.
        clearance_m: f32,
        /// The pair that has it.
        pair: Option<(Body, Body)>,
        /// Stopped for proximity, and released because its forecast takes
        /// it away from what stopped it (the escape rule, in the guard's
        /// `track` module): it may be within the margin of that, moving away.
        escaping: bool,
    },
    /// Stop.
    Stop(Stop),
}

impl Decision {
    /// True for a stop.
    pub fn is_stop(&self) -> bool {
        matches!(self, Decision::Stop(_))
    }
}

/// A joint state for the core: positions (and velocities) in the robot's
/// actuated-joint order ([`crate::model::Robot::dof_names`]).
#[derive(Clone, Copy, Debug)]
pub struct JointStateIn<'a> {
    /// Manipulator index.
    pub robot: usize,
    /// Stamp, s (the guard's clock).
    pub stamp_s: f64,
    /// Positions.
    pub positions: &'a [f64],
    /// Velocities, if the source reports them.
    pub velocities: Option<&'a [f64]>,
}

/// A platen unit's pose, as reported.
#[derive(Clone, Copy, Debug)]
pub struct PlatenPoseIn {
    /// Unit index.
    pub unit: usize,
    /// Stamp, s (the guard's clock).
    pub stamp_s: f64,
    /// x, y (m, surface frame), θ (rad).
    pub pose: Pose2,
}

/// A platen unit asks to move.
#[derive(Clone, Copy, Debug)]
pub struct MoveRequest {
    /// Unit index.
    pub unit: usize,
    /// The requester's id, echoed in the answer.
    pub request_id: u64,
    /// Where to, x, y (m, surface frame), θ (rad).
    pub target: Pose2,
}

/// A platen unit asks for a path.
#[derive(Clone, Debug)]
pub struct PathRequest {
    /// Unit index.
    pub unit: usize,
    /// The unit's name as the request gives it (empty: not given); a name
    /// that is not the unit's refuses the request.
    pub unit_name: String,
    /// The requester's id, echoed in the answers.
    pub request_id: u64,
    /// Poses to visit in order, x, y (m, surface frame), θ (rad).
    pub waypoints: Vec<Pose2>,
    /// Speed along the path, m/s.
    pub speed_mps: f64,
}

/// Everything one cycle takes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Inputs<'a> {
    /// Joint states that arrived since the last cycle.
    pub joint_states: &'a [JointStateIn<'a>],
    /// Platen pose updates, in arrival order (applied before the requests).
    pub platen_poses: &'a [PlatenPoseIn],
    /// Platen move requests, answered in order.
    pub platen_requests: &'a [MoveRequest],
    /// Platen path requests, answered in order (after the move requests).
    pub platen_paths: &'a [PathRequest],
}

impl<'a> Inputs<'a> {
    /// Joint states only.
    pub fn joints(joint_states: &'a [JointStateIn<'a>]) -> Inputs<'a> {
        Inputs { joint_states, ..Inputs::default() }
    }
}

/// Which robots a [`Guard::cycle`](super::Guard::cycle) decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Every robot, and the platen.
    All,
    /// The first half of a cycle split for latency, run on `robot`'s joint
    /// state: every arm's stopping path is posed, but only `robot`'s cell
    /// and self checks and the pairs that include it are run, and only its
    /// decision and command are made (to publish at once). `Rest` then
    /// decides the others and the platen; the two decide exactly what `All`
    /// would.
    First(usize),
    /// The second half of a split cycle; without a first half pending,
    /// the same as `All`.
    Rest,
}

/// Everything one cycle decides.
#[derive(Clone, Copy, Debug)]
pub struct Decisions<'a> {
    /// Per manipulator.
    pub manipulators: &'a [Decision],
    /// Per manipulator, what goes out for it (stop, cause, speed scaling,
    /// controller hold and cancel).
    pub commands: &'a [Command],
    /// Per platen unit, its status (stopped ones must stop).
    pub platen: &'a [UnitStatus],
    /// The answers to this cycle's move requests: (unit, answer).
    pub answers: &'a [(usize, Answer)],
}

/// Something that cannot be allowed or forbidden to touch.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ContactError {
    /// The body does not exist in this cell.
    #[error("no such body: {0:?}")]
    UnknownBody(BodyRef),
    /// A body and itself.
    #[error("a body cannot be allowed to touch itself")]
    SameBody,
    /// Neither body is a manipulator link (nothing the guard checks).
    #[error("at least one of the two bodies must be a manipulator link")]
    NoLink,
    /// Platen units are not part of the manipulator guard.
    #[error("platen units are not checked by the manipulator guard")]
    PlatenUnit,
}

/// The values [`Guard::set_tuning`](super::Guard::set_tuning) changes while running.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tuning {
    /// `margins.clearance_m`.
    pub clearance_m: f64,
    /// `margins.release_m`.
    pub release_m: f64,
    /// `guard.watchdog_s`.
    pub watchdog_s: f64,
    /// `guard.release_hold_s`.
    pub release_hold_s: f64,
}

impl Tuning {
    /// Checks the values for a guard whose collision matrix was built with
    /// `matrix_never_slack_m`.
    pub fn validate(&self, matrix_never_slack_m: f64) -> Result<(), TuningError> {
        let t = self;
        let finite_non_negative = |name: &'static str, v: f64| {
            if v.is_finite() && v >= 0.0 { Ok(()) } else { Err(TuningError::Invalid { name, value: v }) }
        };
        finite_non_negative("clearance_m", t.clearance_m)?;
        finite_non_negative("release_m", t.release_m)?;
        finite_non_negative("release_hold_s", t.release_hold_s)?;
        if !(t.watchdog_s.is_finite() && t.watchdog_s > 0.0) {
            return Err(TuningError::Invalid { name: "watchdog_s", value: t.watchdog_s });
        }
        if t.release_m < t.clearance_m {
            return Err(TuningError::ReleaseBelowClearance { release_m: t.release_m, clearance_m: t.clearance_m });
        }
        if t.clearance_m > matrix_never_slack_m {
            return Err(TuningError::BeyondMatrix { clearance_m: t.clearance_m, slack_m: matrix_never_slack_m });
        }
        Ok(())
    }
}

/// A run-time tuning the guard refuses.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum TuningError {
    /// Not finite, or out of range.
    #[error("{name} = {value} must be finite and non-negative (watchdog_s: positive)")]
    Invalid {
        /// The value's name.
        name: &'static str,
        /// The value.
        value: f64,
    },
    /// The release margin would be below the clearance.
    #[error("release_m ({release_m}) must be at least clearance_m ({clearance_m})")]
    ReleaseBelowClearance {
        /// Release margin.
        release_m: f64,
        /// Clearance.
        clearance_m: f64,
    },
    /// The collision matrix was built for smaller clearances.
    #[error(
        "clearance_m ({clearance_m}) exceeds guard.matrix_never_slack_m ({slack_m}) the collision matrix was built with; raise that in the workcell file and reload"
    )]
    BeyondMatrix {
        /// Clearance asked for.
        clearance_m: f64,
        /// The matrix's slack.
        slack_m: f64,
    },
}

/// The guard could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GuardError {
    /// The platen's initial layout is not free.
    #[error(transparent)]
    Platen(#[from] PlatenError),
    /// An obstacle's exact shape could not be built.
    #[error("obstacle `{name}`: {source}")]
    Obstacle {
        /// The obstacle.
        name: String,
        /// Why.
        source: exact::ExactError,
    },
}
