//! The guard: one deterministic step from joint states to stop decisions.
//!
//! Per cycle, for every manipulator ([`Guard::step`]):
//! 1. the joint states that arrived are validated and buffered
//!    ([`crate::forecast::Estimator`]);
//! 2. data problems (no state yet, a refused sample, a state older than the
//!    watchdog, not enough samples to estimate motion, a speed beyond what
//!    the joint can do) stop the robot at once, with the reason;
//! 3. otherwise its stopping path is planned and sampled
//!    ([`crate::forecast::plan`]), and every sample is posed in batches of
//!    eight ([`crate::model::PosedBatch`]);
//! 4. every sampled sphere, inflated by half the step between samples, is
//!    checked against the cell's distance field, against the robot's own
//!    non-adjacent links (pairs the [`CollisionMatrix`] keeps), and against
//!    every other robot's samples through the [`SpatialHash`];
//! 5. a robot whose check comes within `margins.clearance_m` stops
//!    (`immediate` if its current configuration is already that close,
//!    `on_path` otherwise, with the time to contact); a stopped robot is
//!    released after `guard.release_hold_s` in which nothing is within the
//!    margin, the pair that caused a proximity stop is no longer the
//!    closest of its kind within `margins.release_m`, and nothing within
//!    that margin gets closer.
//!
//! The robot-vs-robot check is over swept volumes, not time-matched: any
//! sample of one robot against any sample of the other. That holds whatever
//! the two robots' stamps and latencies are, at the price of stopping some
//! crossings that timing would have separated.
//!
//! Allowed contacts (a gripper and its workpiece) are pairs the check skips;
//! they can be set and broken at run time ([`Guard::allow_contact`],
//! [`Guard::forbid_contact`]). A link allowed to touch an obstacle is checked
//! against the other obstacles exactly (parry3d) wherever the field, which
//! does not know which obstacle is near, says it is close.
//!
//! `step` allocates nothing; the same inputs give the same decisions.

pub mod command;
pub mod matrix;

use command::Supervision;
pub use command::{Command, CommandPolicy, StopSource};

use crate::cell::{BodyRef, GuardSettings, Margins, Workcell};
use crate::field::{DistanceField, Outside};
use crate::forecast::{self, Estimator, SampleError, StopPlan};
use crate::frame::Frame;
use crate::hash::SpatialHash;
use crate::model::exact::{self, PlacedShape};
use crate::model::{BATCH, Collision, PosedBatch, SpherePoser};
use crate::platen::{Answer, BitAllocator, PlatenError, Pose2, UnitStatus};
pub use matrix::{CollisionMatrix, PairClass};

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

/// The decision for one manipulator.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Decision {
    /// Keep going.
    Continue {
        /// Least clearance over the checked stopping path, m.
        clearance_m: f32,
        /// The pair that has it.
        pair: Option<(Body, Body)>,
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

/// Everything one cycle takes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Inputs<'a> {
    /// Joint states that arrived since the last cycle.
    pub joint_states: &'a [JointStateIn<'a>],
    /// Platen pose updates, in arrival order (applied before the requests).
    pub platen_poses: &'a [PlatenPoseIn],
    /// Platen move requests, answered in order.
    pub platen_requests: &'a [MoveRequest],
}

impl<'a> Inputs<'a> {
    /// Joint states only.
    pub fn joints(joint_states: &'a [JointStateIn<'a>]) -> Inputs<'a> {
        Inputs { joint_states, ..Inputs::default() }
    }
}

/// Which robots a [`Guard::cycle`] decides.
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

/// The values [`Guard::set_tuning`] changes while running.
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

/// The [`BATCH`] lanes of slot `i` in a batch array.
#[inline(always)]
fn lanes(v: &[f32], i: usize) -> &[f32; BATCH] {
    v[i * BATCH..(i + 1) * BATCH].try_into().expect("batch arrays hold whole slots")
}

/// The least clearance of a cycle and its earliest conflict.
#[derive(Clone, Copy, Debug)]
struct Track {
    best: f32,
    best_pair: Option<(Body, Body)>,
    conflict_k: usize,
    conflict_clearance: f32,
    conflict_pair: Option<(Body, Body)>,
    conflict_reason: Reason,
    /// The least clearance of each class: the cell, its own links, other
    /// robots ([`class_of`]).
    class_best: [f32; 3],
    /// The pair that has it.
    class_pair: [Option<(Body, Body)>; 3],
}

/// What a proximity reason is measured against: 0 the cell, 1 the robot's
/// own links, 2 other robots.
fn class_of(r: Reason) -> usize {
    match r {
        Reason::Cell => 0,
        Reason::SelfCollision => 1,
        _ => 2,
    }
}

/// What started a robot's current stop, for the release decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StopCause {
    /// Missing, stale, refused or too few joint states (its own or another
    /// robot's): nothing came close.
    Data,
    /// A forecast conflict of this pair, of this class ([`class_of`]).
    Proximity(usize, (Body, Body)),
}

/// A class's clearance counts as getting smaller when it falls by more
/// than this between cycles, m (joint-state noise of a robot holding still
/// moves its spheres by far less).
const APPROACH_EPS_M: f32 = 1e-4;

/// A joint estimated faster than this many times its URDF velocity limit
/// stops its robot as [`Reason::ImplausibleMotion`] (controllers keep
/// within the limit; estimates overshoot it a little on real timing).
pub const IMPLAUSIBLE_SPEED_FACTOR: f64 = 1.5;

impl Track {
    const NONE: Track = Track {
        best: f32::INFINITY,
        best_pair: None,
        conflict_k: usize::MAX,
        conflict_clearance: f32::INFINITY,
        conflict_pair: None,
        conflict_reason: Reason::Cell,
        class_best: [f32::INFINITY; 3],
        class_pair: [None; 3],
    };
}

/// What a robot-vs-robot check found: the least gap, and for each robot
/// the earliest of its samples within the margin (with the least gap there).
#[derive(Clone, Copy, Debug)]
struct PairFinds {
    /// (gap, link of a, link of b, sample of a, sample of b).
    best: (f32, u32, u32, usize, usize),
    /// (sample, gap, link of a, link of b), earliest for a and for b.
    first_a: (usize, f32, u32, u32),
    first_b: (usize, f32, u32, u32),
}

impl PairFinds {
    const NONE: PairFinds = PairFinds {
        best: (f32::INFINITY, 0, 0, 0, 0),
        first_a: (usize::MAX, 0.0, 0, 0),
        first_b: (usize::MAX, 0.0, 0, 0),
    };

    #[inline]
    fn add(&mut self, g: f32, la: u32, lb: u32, ka: usize, kb: usize, m: f32) {
        if g < self.best.0 {
            self.best = (g, la, lb, ka, kb);
        }
        if g <= m {
            if ka < self.first_a.0 || (ka == self.first_a.0 && g < self.first_a.1) {
                self.first_a = (ka, g, la, lb);
            }
            if kb < self.first_b.0 || (kb == self.first_b.0 && g < self.first_b.1) {
                self.first_b = (kb, g, la, lb);
            }
        }
    }

    /// Records the finds in both robots' tracks.
    fn apply(&self, arms: &mut [Arm], ia: usize, ib: usize, m: f32) {
        if !(self.best.0.is_finite() || self.best.0.is_nan()) {
            return;
        }
        let link = |r: usize, l: u32| Body::Link { robot: r as u16, link: l as u16 };
        let (ra, rb) = (Reason::Robot { other: ib as u16 }, Reason::Robot { other: ia as u16 });
        let (g, la, lb, ka, kb) = self.best;
        Guard::note(&mut arms[ia].track, g, ka, (link(ia, la), link(ib, lb)), ra, m);
        Guard::note(&mut arms[ib].track, g, kb, (link(ib, lb), link(ia, la)), rb, m);
        Guard::note_class(&mut arms[ia].track, 2, g, (link(ia, la), link(ib, lb)));
        Guard::note_class(&mut arms[ib].track, 2, g, (link(ib, lb), link(ia, la)));
        if self.first_a.0 != usize::MAX {
            let (k, g, la, lb) = self.first_a;
            Guard::note(&mut arms[ia].track, g, k, (link(ia, la), link(ib, lb)), ra, m);
            let (k, g, la, lb) = self.first_b;
            Guard::note(&mut arms[ib].track, g, k, (link(ib, lb), link(ia, la)), rb, m);
        }
    }
}

/// Per-robot state and buffers.
#[derive(Clone, Debug)]
struct Arm {
    poser: SpherePoser,
    est: Estimator,
    decel: Vec<f64>,
    /// This cycle's braking deceleration per joint ([`forecast::braking_decel`]).
    brake: Vec<f64>,
    stop_mode: forecast::StopMode,
    /// Per joint, the speed beyond which an estimate is implausible
    /// ([`IMPLAUSIBLE_SPEED_FACTOR`] times its URDF limit; ∞ without one).
    speed_limit: Vec<f64>,
    lever: Vec<f64>,
    /// Per link, this cycle's inflation, m.
    link_e: Vec<f64>,
    /// Per slot, radius plus its link's inflation, this cycle.
    rin: Vec<f32>,
    reaction_s: f64,
    /// (link, first slot, end slot).
    ranges: Vec<(u32, u32, u32)>,
    self_pairs: Vec<(u32, u32)>,
    /// Per self pair, per dof: the lever of that joint on the pair's
    /// relative motion (joints above their common ancestor move both
    /// alike and count 0), flat at `pair * dof + joint`.
    pair_lever: Vec<f64>,
    /// Per self pair, this cycle's inflation (both links together), m.
    pair_e: Vec<f32>,
    /// This cycle's per-dof speed bound, and the time between samples.
    speed: Vec<f64>,
    /// Scratch: candidate spheres of one link (capacity: all slots).
    cand: Vec<u32>,
    /// Slot range of every link (empty for links without spheres).
    link_slots: Vec<(usize, usize)>,
    /// Links whose pose no joint moves (checked against the cell once).
    fixed_link: Vec<bool>,
    /// Their least clearance to the cell and which link has it.
    fixed_best: (f32, u32),
    /// `fixed_best` must be recomputed (field, contacts or margins changed).
    fixed_dirty: bool,
    slots: usize,
    qbuf: Vec<f64>,
    /// The configurations `batches` hold (`posed_n` of them); a cycle
    /// whose configurations are the same, bit for bit, poses nothing.
    posed_q: Vec<f64>,
    posed_n: usize,
    /// Poses, a batch per [`BATCH`] configurations, each with its links'
    /// boxes per lane.
    batches: Vec<PosedBatch>,
    n_links: usize,
    /// Scratch: (lower bound on the cell clearance, range index) of the
    /// moving links in one batch, least first.
    order: Vec<(f32, u32)>,
    /// Scratch, per range index and lane: the field's anchor at the centre
    /// of the link's box (`[x, y, z, d]`, d = −∞ when outside the grid).
    anchors: Vec<[[f32; BATCH]; 4]>,
    // This cycle.
    n_cfg: usize,
    plan: StopPlan,
    inflate: f32,
    bounds: [f32; 6],
    present: bool,
    problem: Option<(Reason, StopKind)>,
    rejected: Option<SampleError>,
    /// A state refused since the last evaluation (stops for that cycle
    /// even when a good state followed it).
    rejected_since: Option<SampleError>,
    track: Track,
    // Hysteresis.
    stopped: bool,
    clear_since: Option<f64>,
    /// What started the current stop.
    cause: StopCause,
    /// Each class's least clearance in the previous cycle.
    prev_class_best: [f32; 3],
}

/// The manipulator guard of one cell.
pub struct Guard {
    settings: GuardSettings,
    margins: Margins,
    field: DistanceField,
    arms: Vec<Arm>,
    matrix: CollisionMatrix,
    /// Link–link allowed contacts, bitset over global link pairs.
    allowed: Vec<u64>,
    /// Per global link: bitset of obstacles it may touch.
    allowed_obstacles: Vec<u64>,
    obstacle_words: usize,
    obstacles: Vec<PlacedShape>,
    /// Bounding sphere (centre, radius) of each obstacle.
    obstacle_bounds: Vec<([f32; 3], f32)>,
    hash: SpatialHash,
    /// For robots `a`, `b` at `a * n + b`: per link of `a`, whether some
    /// link of `b` is checked against it (only those enter the hash).
    meets: Vec<Vec<bool>>,
    /// Largest sphere of `a` among those links, at `a * n + b` (0: none).
    meet_r: Vec<f32>,
    decisions: Vec<Decision>,
    unknown_inputs: usize,
    grid_lo: [f64; 3],
    grid_hi: [f64; 3],
    /// The first phase of a split evaluation, awaiting the rest.
    pending: Option<Pending>,
    /// Robot-vs-robot by all pairs instead of the hash (benchmark baseline).
    all_pairs: bool,
    platen: Option<BitAllocator>,
    platen_status: Vec<UnitStatus>,
    answers: Vec<(usize, Answer)>,
    /// Platen pose updates and move requests taken since the last cycle.
    platen_poses: Vec<PlatenPoseIn>,
    move_requests: Vec<MoveRequest>,
    policy: CommandPolicy,
    supervision: Vec<Supervision>,
    commands: Vec<Command>,
}

/// Which arms, and which pairs of arms, a check covers.
#[derive(Clone, Copy, Debug)]
enum Part {
    All,
    /// This arm, and the pairs that include it.
    Only(usize),
    /// The other arms, and the pairs without this one.
    Except(usize),
}

impl Part {
    fn arm(self, r: usize) -> bool {
        match self {
            Part::All => true,
            Part::Only(x) => r == x,
            Part::Except(x) => r != x,
        }
    }

    fn pair(self, a: usize, b: usize) -> bool {
        match self {
            Part::All => true,
            Part::Only(x) => a == x || b == x,
            Part::Except(x) => a != x && b != x,
        }
    }
}

/// What the second half of a split evaluation needs from the first.
#[derive(Clone, Copy, Debug)]
struct Pending {
    now_s: f64,
    first: usize,
    unknown: Option<u16>,
    m: f32,
    release: f32,
}

impl Guard {
    /// Builds the guard of `cell` over its distance field and its
    /// collision matrix ([`CollisionMatrix::compute`], or a cached copy).
    pub fn new(cell: &Workcell, field: DistanceField, matrix: CollisionMatrix) -> Result<Guard, GuardError> {
        let posers: Vec<SpherePoser> =
            cell.manipulators.iter().map(|m| SpherePoser::new(&m.robot, &m.spheres, m.base)).collect();
        let settings = cell.guard;
        let max_cfg = (settings.max_path_samples + 1).div_ceil(BATCH) * BATCH;
        let mut arms = Vec::new();
        let mut r_max = 0.0f32;
        let mut max_items = 0;
        for (ri, (m, poser)) in cell.manipulators.iter().zip(posers).enumerate() {
            let ranges = poser.ranges().to_vec();
            let slots = poser.sphere_count();
            let mut self_pairs = Vec::new();
            for (ia, &(la, _, _)) in ranges.iter().enumerate() {
                for &(lb, _, _) in &ranges[ia + 1..] {
                    let c = matrix.class(matrix.global(ri, la as usize), matrix.global(ri, lb as usize));
                    if c == PairClass::Sometimes {
                        self_pairs.push((la, lb));
                    }
                }
            }
            let levers = forecast::link_levers(&m.robot, &m.spheres);
            let dof = m.robot.dof();
            let ancestors = |l: usize| {
                let mut v = vec![l];
                let mut c = l;
                while let Some(p) = m.robot.parent_link(c) {
                    v.push(p);
                    c = p;
                }
                v
            };
            // Dofs moving each link relative to `c` (joints between c and the link).
            let dofs_below = |l: usize, c: usize| {
                let mut out = vec![0.0; dof];
                let mut cur = l;
                while cur != c {
                    let j = &m.robot.joints[m.robot.links[cur].parent_joint.expect("below an ancestor")];
                    let w = |d: usize, out: &mut Vec<f64>| out[d] = levers[l * dof + d];
                    if let Some(d) = j.dof {
                        w(d, &mut out);
                    } else if let Some(mm) = j.mimic {
                        w(mm.dof, &mut out);
                    }
                    cur = j.parent;
                }
                out
            };
            let mut pair_lever = Vec::new();
            for &(la, lb) in &self_pairs {
                let (aa, ab) = (ancestors(la as usize), ancestors(lb as usize));
                let common = *aa.iter().find(|x| ab.contains(x)).expect("one tree has one root");
                let (da, db) = (dofs_below(la as usize, common), dofs_below(lb as usize, common));
                pair_lever.extend(da.iter().zip(&db).map(|(x, y)| x + y));
            }
            let mut link_slots = vec![(0, 0); m.robot.links.len()];
            for &(l, s, e) in &ranges {
                link_slots[l as usize] = (s as usize, e as usize);
            }
            let mut fixed_link = vec![false; m.robot.links.len()];
            fixed_link[0] = true;
            for l in 1..m.robot.links.len() {
                let j = &m.robot.joints[m.robot.links[l].parent_joint.expect("non-root links have a parent joint")];
                fixed_link[l] = fixed_link[j.parent] && j.kind == crate::model::JointKind::Fixed;
            }
            let posed = poser.posed_batch();
            r_max = r_max.max(posed.r.iter().copied().fold(0.0, f32::max));
            max_items = max_items.max(slots * max_cfg);
            arms.push(Arm {
                est: {
                    let mut e =
                        Estimator::new(m.robot.dof(), settings.velocity_filter_window, m.trust_reported_velocity)
                            .with_fit_window(settings.velocity_fit_window_s);
                    e.set_accel_limits(&m.max_accel);
                    e
                },
                decel: m.max_decel.clone(),
                brake: m.max_decel.clone(),
                stop_mode: m.stop_mode,
                speed_limit: (0..m.robot.dof())
                    .map(|d| {
                        m.robot
                            .dof_joint(d)
                            .limits
                            .map(|l| l.velocity)
                            .filter(|&v| v.is_finite() && v > 0.0)
                            .map_or(f64::INFINITY, |v| v * IMPLAUSIBLE_SPEED_FACTOR)
                    })
                    .collect(),
                lever: forecast::link_levers(&m.robot, &m.spheres),
                link_e: vec![0.0; m.robot.links.len()],
                rin: vec![0.0; slots],
                reaction_s: m.reaction_time_s,
                pair_e: vec![0.0; self_pairs.len()],
                cand: Vec::with_capacity(slots),
                speed: vec![0.0; dof],
                pair_lever,
                self_pairs,
                link_slots,
                fixed_link,
                fixed_best: (f32::INFINITY, 0),
                fixed_dirty: true,
                slots,
                qbuf: vec![0.0; max_cfg * m.robot.dof()],
                posed_q: vec![0.0; max_cfg * m.robot.dof()],
                posed_n: 0,
                batches: vec![posed; max_cfg / BATCH],
                n_links: m.robot.links.len(),
                order: Vec::with_capacity(ranges.len()),
                anchors: vec![[[0.0; BATCH]; 4]; ranges.len()],
                ranges,
                poser,
                n_cfg: 0,
                plan: StopPlan::STILL,
                inflate: 0.0,
                bounds: [0.0; 6],
                present: false,
                problem: None,
                rejected: None,
                rejected_since: None,
                track: Track::NONE,
                stopped: true,
                clear_since: None,
                cause: StopCause::Data,
                prev_class_best: [f32::INFINITY; 3],
            });
        }
        let n = matrix.total_links();
        let obstacle_words = cell.obstacles.len().div_ceil(64).max(1);
        let mut obstacles = Vec::new();
        let mut obstacle_bounds = Vec::new();
        for o in &cell.obstacles {
            let t = o.pose.trans;
            obstacle_bounds.push((
                [t.x as f32, t.y as f32, t.z as f32],
                crate::model::spheres::bounding_radius(&o.shape) as f32 + 1e-4,
            ));
            let shape = exact::link_shape(&[Collision { origin: Frame::IDENTITY, shape: o.shape.clone() }])
                .map_err(|source| GuardError::Obstacle { name: o.name.clone(), source })?
                .expect("one collision element gives a shape");
            obstacles.push(PlacedShape::new(&shape, &o.pose));
        }
        let g = *field.grid();
        let grid_hi = std::array::from_fn(|k| g.origin_m[k] + g.dims[k] as f64 * g.resolution_m);
        let hash_base_cell = 2.0 * r_max + cell.margins.release_m as f32;
        let platen = cell.platen.as_ref().map(BitAllocator::new).transpose()?;
        let mut guard = Guard {
            settings,
            margins: cell.margins,
            field,
            decisions: vec![
                Decision::Stop(Stop {
                    kind: StopKind::Immediate,
                    reason: Reason::NoJointState,
                    pair: None,
                    clearance_m: f32::INFINITY,
                    time_to_contact_s: None,
                });
                arms.len()
            ],
            arms,
            allowed: vec![0; (n * n).div_ceil(64)],
            allowed_obstacles: vec![0; n * obstacle_words],
            obstacle_words,
            obstacles,
            obstacle_bounds,
            hash: SpatialHash::new(max_items.max(1), hash_base_cell.max(1e-3)),
            meets: Vec::new(),
            meet_r: Vec::new(),
            matrix,
            unknown_inputs: 0,
            grid_lo: g.origin_m,
            grid_hi,
            pending: None,
            all_pairs: false,
            platen_status: Vec::with_capacity(platen.as_ref().map_or(0, |p| p.units())),
            answers: Vec::with_capacity(64),
            platen,
            platen_poses: Vec::with_capacity(64),
            move_requests: Vec::with_capacity(64),
            policy: CommandPolicy::default(),
            supervision: vec![Supervision::START; cell.manipulators.len()],
            commands: vec![Command::START; cell.manipulators.len()],
        };
        let n_arms = guard.arms.len();
        for ia in 0..n_arms {
            for ib in 0..n_arms {
                let links = guard.arms[ia].n_links;
                let other = guard.arms[ib].n_links;
                let meets: Vec<bool> = (0..links)
                    .map(|la| {
                        ia != ib
                            && (0..other).any(|lb| {
                                guard.matrix.class(guard.matrix.global(ia, la), guard.matrix.global(ib, lb))
                                    == PairClass::Sometimes
                            })
                    })
                    .collect();
                let pb = &guard.arms[ia].batches[0];
                let r = (0..guard.arms[ia].slots)
                    .filter(|&s| meets[pb.link[s] as usize])
                    .map(|s| pb.r[s])
                    .fold(0.0, f32::max);
                guard.meets.push(meets);
                guard.meet_r.push(r);
            }
        }
        for &(a, b) in &cell.allowed_contacts {
            match guard.allow_contact(a, b) {
                Ok(()) | Err(ContactError::PlatenUnit) => {}
                Err(e) => unreachable!("validated allowed contact {a:?}–{b:?} refused: {e}"),
            }
        }
        Ok(guard)
    }

    /// Forgets every joint state and stop (as at start-up).
    pub fn reset(&mut self) {
        for a in &mut self.arms {
            a.est.reset();
            a.stopped = true;
            a.clear_since = None;
            a.cause = StopCause::Data;
        }
    }

    /// The collision matrix in use.
    pub fn matrix(&self) -> &CollisionMatrix {
        &self.matrix
    }

    /// The distance field in use.
    pub fn field(&self) -> &DistanceField {
        &self.field
    }

    /// The distance field, to add or remove obstacles at run time.
    pub fn field_mut(&mut self) -> &mut DistanceField {
        self.dirty_fixed();
        &mut self.field
    }

    /// Settings in use.
    pub fn settings(&self) -> &GuardSettings {
        &self.settings
    }

    /// Margins in use.
    pub fn margins(&self) -> &Margins {
        &self.margins
    }

    /// Changes margins, watchdog and release hold while running, or refuses
    /// the change with a reason and keeps the values in use. The clearance
    /// cannot exceed the collision matrix's `matrix_never_slack_m`, since
    /// pairs the matrix ruled out were only shown to stay that far apart.
    pub fn set_tuning(&mut self, t: Tuning) -> Result<(), TuningError> {
        t.validate(self.settings.matrix_never_slack_m)?;
        self.margins = Margins { clearance_m: t.clearance_m, release_m: t.release_m };
        self.settings.watchdog_s = t.watchdog_s;
        self.settings.release_hold_s = t.release_hold_s;
        self.dirty_fixed();
        Ok(())
    }

    /// The run-time tunable values in use.
    pub fn tuning(&self) -> Tuning {
        Tuning {
            clearance_m: self.margins.clearance_m,
            release_m: self.margins.release_m,
            watchdog_s: self.settings.watchdog_s,
            release_hold_s: self.settings.release_hold_s,
        }
    }

    /// Checks robot against robot by testing every sphere pair of the two
    /// swept volumes instead of through the hash (the benchmark's baseline;
    /// same answers, slower).
    pub fn set_all_pairs(&mut self, on: bool) {
        self.all_pairs = on;
    }

    /// The spatial hash (for its memory figure).
    pub fn hash(&self) -> &SpatialHash {
        &self.hash
    }

    /// This cycle's stopping-path plan of a manipulator.
    pub fn plan(&self, robot: usize) -> Option<&StopPlan> {
        self.arms.get(robot).map(|a| &a.plan)
    }

    /// Configurations checked for a manipulator this cycle.
    pub fn samples_checked(&self, robot: usize) -> usize {
        self.arms.get(robot).map_or(0, |a| a.n_cfg)
    }

    /// Inputs naming a manipulator that does not exist, since start.
    pub fn unknown_inputs(&self) -> usize {
        self.unknown_inputs
    }

    /// The least clearances robot `robot`'s last check found, by kind.
    pub fn clearances(&self, robot: usize) -> Option<Clearances> {
        self.arms.get(robot).map(|a| {
            let c = a.track.class_best;
            Clearances { cell_m: c[0], own_links_m: c[1], other_robots_m: c[2] }
        })
    }

    /// The latest decisions, one per manipulator.
    pub fn decisions(&self) -> &[Decision] {
        &self.decisions
    }

    fn link_global(&self, b: BodyRef) -> Result<Option<usize>, ContactError> {
        match b {
            BodyRef::Link { robot, link } => {
                let arm = self.arms.get(robot).ok_or(ContactError::UnknownBody(b))?;
                if link >= arm.n_links {
                    return Err(ContactError::UnknownBody(b));
                }
                Ok(Some(self.matrix.global(robot, link)))
            }
            BodyRef::Obstacle(i) if i < self.obstacles.len() => Ok(None),
            BodyRef::Obstacle(_) => Err(ContactError::UnknownBody(b)),
            BodyRef::PlatenUnit(_) => Err(ContactError::PlatenUnit),
        }
    }

    fn set_contact(&mut self, a: BodyRef, b: BodyRef, on: bool) -> Result<(), ContactError> {
        if a == b {
            return Err(ContactError::SameBody);
        }
        let (ga, gb) = (self.link_global(a)?, self.link_global(b)?);
        let n = self.matrix.total_links();
        let set = |words: &mut [u64], bit: usize| {
            if on {
                words[bit / 64] |= 1 << (bit % 64);
            } else {
                words[bit / 64] &= !(1 << (bit % 64));
            }
        };
        match (ga, gb, a, b) {
            (Some(x), Some(y), _, _) => {
                set(&mut self.allowed, x * n + y);
                set(&mut self.allowed, y * n + x);
            }
            (Some(x), None, _, BodyRef::Obstacle(o)) | (None, Some(x), BodyRef::Obstacle(o), _) => {
                let w = self.obstacle_words;
                set(&mut self.allowed_obstacles[x * w..(x + 1) * w], o);
            }
            _ => return Err(ContactError::NoLink),
        }
        Ok(())
    }

    /// Lets two bodies touch (e.g. a gripper and its workpiece) until
    /// [`forbid_contact`](Self::forbid_contact).
    pub fn allow_contact(&mut self, a: BodyRef, b: BodyRef) -> Result<(), ContactError> {
        self.dirty_fixed();
        self.set_contact(a, b, true)
    }

    /// Breaks an allowed contact.
    pub fn forbid_contact(&mut self, a: BodyRef, b: BodyRef) -> Result<(), ContactError> {
        self.dirty_fixed();
        self.set_contact(a, b, false)
    }

    /// True when the two bodies may touch.
    pub fn contact_allowed(&self, a: BodyRef, b: BodyRef) -> Result<bool, ContactError> {
        let (ga, gb) = (self.link_global(a)?, self.link_global(b)?);
        let n = self.matrix.total_links();
        let bit = |words: &[u64], i: usize| words[i / 64] >> (i % 64) & 1 == 1;
        Ok(match (ga, gb, a, b) {
            (Some(x), Some(y), _, _) => bit(&self.allowed, x * n + y),
            (Some(x), None, _, BodyRef::Obstacle(o)) | (None, Some(x), BodyRef::Obstacle(o), _) => {
                bit(&self.allowed_obstacles[x * self.obstacle_words..], o)
            }
            _ => return Err(ContactError::NoLink),
        })
    }

    /// The cycle at time `now_s`: the one way decisions and commands are
    /// made, by the node, the simulator and the tests alike. Decides the
    /// robots `scope` names from the joint states taken so far
    /// ([`Guard::ingest`]), makes their commands, and (but for
    /// [`Scope::First`]) applies the platen pose updates and answers the
    /// move requests taken since the last cycle. Allocates nothing.
    pub fn cycle(&mut self, now_s: f64, scope: Scope) -> Decisions<'_> {
        match scope {
            Scope::All => {
                self.pending = None;
                self.decide_part(now_s, Part::All);
                self.run_platen(now_s);
            }
            Scope::First(robot) if robot < self.arms.len() => {
                self.pending = None;
                self.decide_part(now_s, Part::Only(robot));
            }
            Scope::First(_) => {}
            Scope::Rest => {
                match self.pending.take() {
                    Some(p) => {
                        self.check(p.m, p.release, Part::Except(p.first));
                        for ri in (0..self.arms.len()).filter(|&ri| ri != p.first) {
                            self.decisions[ri] = self.decide(ri, p.now_s, p.release, p.unknown);
                            self.command(ri, now_s);
                        }
                    }
                    None => self.decide_part(now_s, Part::All),
                }
                self.run_platen(now_s);
            }
        }
        self.outcome()
    }

    /// Takes what `inputs` hold and runs a whole cycle
    /// ([`Guard::cycle`] with [`Scope::All`]).
    pub fn step(&mut self, now_s: f64, inputs: &Inputs<'_>) -> Decisions<'_> {
        for s in inputs.joint_states {
            let _ = self.ingest(now_s, s);
        }
        for &p in inputs.platen_poses {
            self.take_platen_pose(p);
        }
        for &r in inputs.platen_requests {
            self.take_move_request(r);
        }
        self.cycle(now_s, Scope::All)
    }

    /// The decisions and commands as they stand, with the platen's status
    /// and this cycle's answers.
    pub fn outcome(&self) -> Decisions<'_> {
        Decisions {
            manipulators: &self.decisions,
            commands: &self.commands,
            platen: &self.platen_status,
            answers: &self.answers,
        }
    }

    /// Checks and decides the arms `part` covers (a first half when it is
    /// one arm), and makes their commands.
    fn decide_part(&mut self, now_s: f64, part: Part) {
        let (m, release) = (self.margins.clearance_m as f32, self.margins.release_m as f32);
        let unknown = self.prepare_all(now_s);
        self.check(m, release, part);
        for ri in (0..self.arms.len()).filter(|&ri| part.arm(ri)) {
            self.decisions[ri] = self.decide(ri, now_s, release, unknown);
            self.command(ri, now_s);
        }
        if let Part::Only(first) = part {
            self.pending = Some(Pending { now_s, first, unknown, m, release });
        }
    }

    /// Robot `ri`'s command from its decision.
    fn command(&mut self, ri: usize, now_s: f64) {
        let release = self.margins.release_m;
        self.commands[ri] =
            self.supervision[ri].command(&self.policy, &self.commands[ri], &self.decisions[ri], now_s, release);
    }

    /// Applies the platen pose updates and answers the move requests taken
    /// since the last cycle.
    fn run_platen(&mut self, now_s: f64) {
        self.answers.clear();
        if let Some(p) = &mut self.platen {
            for u in &self.platen_poses {
                if u.unit >= p.units() {
                    self.unknown_inputs += 1;
                    continue;
                }
                p.pose_update(now_s, u.unit, u.stamp_s, u.pose);
            }
            for r in &self.move_requests {
                let answer = p.request(now_s, r.unit, r.request_id, r.target);
                self.answers.push((r.unit, answer));
            }
            self.platen_status.clear();
            self.platen_status.extend((0..p.units()).map(|i| p.status(i, now_s)));
        } else {
            self.unknown_inputs += self.platen_poses.len() + self.move_requests.len();
        }
        self.platen_poses.clear();
        self.move_requests.clear();
    }

    /// Takes a platen unit's pose, applied at the next cycle (in arrival
    /// order, before the move requests).
    pub fn take_platen_pose(&mut self, p: PlatenPoseIn) {
        self.platen_poses.push(p);
    }

    /// Takes a platen move request, answered at the next cycle.
    pub fn take_move_request(&mut self, r: MoveRequest) {
        self.move_requests.push(r);
    }

    /// The platen allocator, if the cell has a platen.
    pub fn platen(&self) -> Option<&BitAllocator> {
        self.platen.as_ref()
    }

    /// Takes one joint state as it arrives, ahead of the next
    /// [`Guard::cycle`]. A refused state stops its robot from the next
    /// cycle until a state is accepted again; an unknown robot is counted
    /// ([`Guard::unknown_inputs`]). Allocates nothing.
    pub fn ingest(&mut self, now_s: f64, s: &JointStateIn<'_>) -> Result<(), SampleError> {
        let watchdog_s = self.settings.watchdog_s;
        let Some(arm) = self.arms.get_mut(s.robot) else {
            self.unknown_inputs += 1;
            return Ok(());
        };
        let r = if s.stamp_s > now_s + watchdog_s {
            Err(SampleError::FutureStamp { stamp_s: s.stamp_s, now_s })
        } else {
            arm.est.push(s.stamp_s, s.positions, s.velocities)
        };
        arm.rejected = r.err();
        if arm.rejected.is_some() {
            arm.rejected_since = arm.rejected;
        }
        r
    }

    /// Input for `robot` that the adapter refused (joint names it cannot
    /// map, a bad trajectory) stops it from the next cycle while `refused`
    /// holds; the adapter clears it when good input arrives.
    pub fn set_input_refused(&mut self, robot: usize, refused: bool) {
        if let Some(s) = self.supervision.get_mut(robot) {
            s.refused = refused;
        }
    }

    /// Sets how decisions become commands.
    pub fn set_command_policy(&mut self, p: CommandPolicy) {
        self.policy = p;
    }

    /// How decisions become commands.
    pub fn command_policy(&self) -> CommandPolicy {
        self.policy
    }

    /// The commands of the last cycle.
    pub fn commands(&self) -> &[Command] {
        &self.commands
    }

    /// Whether `robot` has a latched stop.
    pub fn latched(&self, robot: usize) -> bool {
        self.supervision.get(robot).is_some_and(|s| s.latched)
    }

    /// Releases the latched stops of robots whose decision now lets them
    /// go; returns, per robot with a latch, whether it was released
    /// (`false`: still in conflict, the latch holds).
    pub fn reset_latches(&mut self, mut each: impl FnMut(usize, bool)) {
        for (r, s) in self.supervision.iter_mut().enumerate() {
            if s.latched {
                let release = !self.decisions[r].is_stop();
                if release {
                    s.latched = false;
                }
                each(r, release);
            }
        }
    }

    /// Prepares every arm; the first robot with no joint state, if any.
    fn prepare_all(&mut self, now_s: f64) -> Option<u16> {
        let mut unknown = None;
        for ri in 0..self.arms.len() {
            self.prepare(ri, now_s);
            if !self.arms[ri].present && unknown.is_none() {
                unknown = Some(ri as u16);
            }
        }
        unknown
    }

    fn check(&mut self, m: f32, release: f32, part: Part) {
        self.check_field(m, release, part);
        self.check_self(m, release, part);
        self.check_robots(m, release, part);
    }

    fn dirty_fixed(&mut self) {
        for a in &mut self.arms {
            a.fixed_dirty = true;
        }
    }

    /// Estimates, plans and poses one arm's stopping path.
    fn prepare(&mut self, ri: usize, now_s: f64) {
        let settings = self.settings;
        let step_m = self.margins.clearance_m;
        let a = &mut self.arms[ri];
        a.track = Track::NONE;
        a.problem = None;
        a.n_cfg = 0;
        a.inflate = 0.0;
        a.present = a.est.count() > 0;
        let dof = a.decel.len();
        // A state refused since the last cycle names the stop; then the
        // refusal still standing (no state accepted since); then silence
        // (the watchdog).
        if let Some(e) = a.rejected_since.take() {
            a.problem = Some((Reason::BadJointState(e), StopKind::Immediate));
        }
        let Some(last) = a.est.last_stamp() else {
            let r = a.rejected.map_or(Reason::NoJointState, Reason::BadJointState);
            a.problem.get_or_insert((r, StopKind::Immediate));
            return;
        };
        // A refusal still standing (no state accepted since) outranks
        // staleness: the last thing the robot sent was refused, and that is
        // what its diagnostics must name for as long as it lasts.
        if let (None, Some(e)) = (a.problem, a.rejected) {
            a.problem = Some((Reason::BadJointState(e), StopKind::Immediate));
        }
        let age = now_s - last;
        if age > settings.watchdog_s && a.problem.is_none() {
            a.problem = Some((Reason::StaleJointState { age_s: age as f32 }, StopKind::Immediate));
        }
        let motion = a.est.motion();
        if let (None, Ok(mo)) = (a.problem, &motion)
            && let Some((j, (&v, &lim))) = mo.v.iter().zip(&a.speed_limit).enumerate().find(|(_, (v, l))| v.abs() > **l)
        {
            let limit = (lim / IMPLAUSIBLE_SPEED_FACTOR) as f32;
            a.problem = Some((
                Reason::ImplausibleMotion { joint: j as u16, speed: v.abs() as f32, limit },
                StopKind::Immediate,
            ));
        }
        match motion {
            Ok(mo) if a.problem.is_none() => {
                let react = a.reaction_s + age.max(0.0);
                a.plan = forecast::plan(
                    mo.v,
                    mo.a,
                    &a.decel,
                    &a.lever,
                    react,
                    step_m,
                    settings.max_path_samples,
                    &mut a.link_e,
                );
                let dt = a.plan.time(1);
                for j in 0..dof {
                    let vr = mo.v[j] + forecast::reaction_accel(mo.v[j], mo.a[j]) * react;
                    a.speed[j] = mo.v[j].abs().max(vr.abs()) * dt / 2.0;
                }
                for (p, e) in a.pair_e.iter_mut().enumerate() {
                    *e = a.pair_lever[p * dof..(p + 1) * dof].iter().zip(&a.speed).map(|(l, s)| l * s).sum::<f64>()
                        as f32;
                }
                a.n_cfg = a.plan.intervals + 1;
                forecast::braking_decel(a.stop_mode, mo.v, mo.a, &a.decel, react, &mut a.brake);
                for k in 0..a.n_cfg {
                    forecast::config_at(&mo, &a.brake, react, a.plan.time(k), &mut a.qbuf[k * dof..(k + 1) * dof]);
                }
                a.inflate = a.plan.inflation_m as f32;
            }
            other => {
                if let Err(w) = other
                    && a.problem.is_none()
                {
                    a.problem = Some((
                        Reason::WarmingUp { have: w.have.min(u16::MAX as usize) as u16, need: w.need as u16 },
                        StopKind::Immediate,
                    ));
                }
                // Still an obstacle to the others: its newest configuration.
                let q = a.est.last_positions().expect("a sample exists");
                a.qbuf[..dof].copy_from_slice(q);
                a.plan = StopPlan::STILL;
                a.link_e.fill(0.0);
                a.pair_e.fill(0.0);
                a.n_cfg = 1;
            }
        }
        {
            let r = &a.batches[0].r;
            let link = &a.batches[0].link;
            for sl in 0..a.slots {
                a.rin[sl] = r[sl] + a.link_e[link[sl] as usize] as f32;
            }
        }
        // An arm holding still (or an unchanged state) has the same
        // configurations as last time: its poses and boxes stand.
        let nq = a.n_cfg * dof;
        if a.posed_n == a.n_cfg && a.qbuf[..nq].iter().zip(&a.posed_q[..nq]).all(|(x, y)| x.to_bits() == y.to_bits()) {
            return;
        }
        a.posed_n = 0;
        // Pad the last batch with the last configuration and pose.
        let nb = a.n_cfg.div_ceil(BATCH);
        let last_k = a.n_cfg - 1;
        a.bounds =
            [f32::INFINITY, f32::INFINITY, f32::INFINITY, f32::NEG_INFINITY, f32::NEG_INFINITY, f32::NEG_INFINITY];
        for bi in 0..nb {
            let qb = &a.qbuf;
            let qs: [&[f64]; BATCH] = std::array::from_fn(|l| {
                let k = (bi * BATCH + l).min(last_k);
                &qb[k * dof..(k + 1) * dof]
            });
            if a.poser.pose_batch(&qs, &mut a.batches[bi]).is_err() {
                a.problem = Some((Reason::NoJointState, StopKind::Immediate));
                a.n_cfg = 0;
                return;
            }
            // The box of all spheres, from each link's (made while posing).
            let pb = &a.batches[bi];
            for &(l, _, _) in &a.ranges {
                let bx = &pb.boxes[l as usize];
                for c in 0..3 {
                    a.bounds[c] = bx[c].iter().copied().fold(a.bounds[c], f32::min);
                    a.bounds[3 + c] = bx[3 + c].iter().copied().fold(a.bounds[3 + c], f32::max);
                }
            }
        }
        a.posed_q[..nq].copy_from_slice(&a.qbuf[..nq]);
        a.posed_n = a.n_cfg;
    }

    /// Records a clearance found at sample `k`: the least one, and the
    /// earliest sample within the margin `m`.
    #[inline]
    fn note(a: &mut Track, clearance: f32, k: usize, pair: (Body, Body), reason: Reason, m: f32) {
        if clearance < a.best || clearance.is_nan() {
            a.best = clearance;
            a.best_pair = Some(pair);
        }
        if !matches!(clearance.partial_cmp(&m), Some(std::cmp::Ordering::Greater))
            && (k < a.conflict_k || (k == a.conflict_k && clearance < a.conflict_clearance))
        {
            a.conflict_k = k;
            a.conflict_clearance = clearance;
            a.conflict_pair = Some(pair);
            a.conflict_reason = reason;
        }
    }

    /// Records the least clearance of a group of samples for its class
    /// ([`class_of`]): called once per link pair, not per sample, off the
    /// innermost loops.
    #[inline]
    fn note_class(a: &mut Track, c: usize, clearance: f32, pair: (Body, Body)) {
        if clearance < a.class_best[c] || clearance.is_nan() {
            a.class_best[c] = clearance;
            a.class_pair[c] = Some(pair);
        }
    }

    /// Clearance of a sphere of robot `robot`'s link `link` to the cell, as
    /// the guard judges it: the field, refined exactly against the
    /// obstacles the link may not touch where it has allowed contacts.
    pub fn cell_clearance(&self, robot: usize, link: usize, c: [f32; 3], r: f32) -> f32 {
        let gl = self.matrix.global(robot, link);
        let w = self.obstacle_words;
        let field = self.field.clearance(c[0], c[1], c[2], r);
        let refine = !self.field.has_sensed() && self.allowed_obstacles[gl * w..(gl + 1) * w].iter().any(|&x| x != 0);
        let release = self.margins.release_m as f32;
        if refine && field <= release && self.near_allowed_obstacle(gl, c, r, release) {
            self.exact_cell_clearance(gl, c, r)
        } else {
            field
        }
    }

    /// Exact clearance of a sphere of robot `robot`'s link `link` to the
    /// obstacles it may not touch and (under `outside: collision`) the
    /// grid's faces: parry3d distances, no field. Sensed points are not
    /// included. For oracles and diagnostics; not on the per-cycle path.
    pub fn exact_cell_clearance_of(&self, robot: usize, link: usize, c: [f32; 3], r: f32) -> f32 {
        self.exact_cell_clearance(self.matrix.global(robot, link), c, r)
    }

    /// True when the link pair (robot `ra` link `la`, robot `rb` link `lb`)
    /// is checked: not adjacent, not always touching, not allowed to touch.
    /// `never` pairs count as checked here (an oracle should look at them).
    pub fn pair_matters(&self, ra: usize, la: usize, rb: usize, lb: usize) -> bool {
        let (ga, gb) = (self.matrix.global(ra, la), self.matrix.global(rb, lb));
        let n = self.matrix.total_links();
        let bit = ga * n + gb;
        let allowed = self.allowed[bit / 64] >> (bit % 64) & 1 == 1;
        !allowed && ga != gb && matches!(self.matrix.class(ga, gb), PairClass::Sometimes | PairClass::Never)
    }

    /// Exact clearance of a sphere to every obstacle the link may not touch
    /// (and to the grid's faces under `outside: collision`).
    fn exact_cell_clearance(&self, gl: usize, c: [f32; 3], r: f32) -> f32 {
        let w = self.obstacle_words;
        let mask = &self.allowed_obstacles[gl * w..(gl + 1) * w];
        let mut best = f32::INFINITY;
        if self.field.grid().outside == Outside::Collision {
            for ((&ck, lo), hi) in c.iter().zip(self.grid_lo).zip(self.grid_hi) {
                best = best.min((f64::from(ck) - lo).min(hi - f64::from(ck)) as f32 - r);
            }
        }
        for (o, shape) in self.obstacles.iter().enumerate() {
            if mask[o / 64] >> (o % 64) & 1 == 1 {
                continue;
            }
            // ball_distance is 0 on overlap: count it as full contact.
            let d = shape.ball_distance(c, r).unwrap_or(f32::NEG_INFINITY);
            best = best.min(if d <= 0.0 { -r } else { d });
        }
        best
    }

    /// True when a sphere lies within `reach` of an obstacle link `gl` may
    /// touch (only then can refining the field change its verdict).
    #[inline]
    fn near_allowed_obstacle(&self, gl: usize, c: [f32; 3], r: f32, reach: f32) -> bool {
        let w = self.obstacle_words;
        let mask = &self.allowed_obstacles[gl * w..(gl + 1) * w];
        self.obstacle_bounds.iter().enumerate().any(|(o, (p, rad))| {
            let d2 = (c[0] - p[0]).powi(2) + (c[1] - p[1]).powi(2) + (c[2] - p[2]).powi(2);
            let lim = rad + r + reach;
            mask[o / 64] >> (o % 64) & 1 == 1 && d2 <= lim * lim
        })
    }

    fn check_field(&mut self, m: f32, release: f32, part: Part) {
        let w = self.obstacle_words;
        let refine_ok = !self.field.has_sensed();
        for ri in 0..self.arms.len() {
            let n_cfg = self.arms[ri].n_cfg;
            if n_cfg == 0 || !part.arm(ri) {
                continue;
            }
            // Links no joint moves: once per change of the field or contacts.
            if self.arms[ri].fixed_dirty || self.arms[ri].fixed_best.0.is_infinite() {
                let mut best = (f32::INFINITY, 0u32);
                for &(l, s, en) in &self.arms[ri].ranges {
                    if !self.arms[ri].fixed_link[l as usize] {
                        continue;
                    }
                    let gl = self.matrix.global(ri, l as usize);
                    let refine = refine_ok && self.allowed_obstacles[gl * w..(gl + 1) * w].iter().any(|&x| x != 0);
                    let pb = &self.arms[ri].batches[0];
                    for sl in s as usize..en as usize {
                        let i = sl * BATCH;
                        let mut c = self.field.clearance(pb.x[i], pb.y[i], pb.z[i], pb.r[sl]);
                        let at = [pb.x[i], pb.y[i], pb.z[i]];
                        if refine && c <= release && self.near_allowed_obstacle(gl, at, pb.r[sl], release) {
                            c = self.exact_cell_clearance(gl, at, pb.r[sl]);
                        }
                        if c < best.0 || c.is_nan() {
                            best = (c, l);
                        }
                    }
                }
                self.arms[ri].fixed_best = best;
                self.arms[ri].fixed_dirty = false;
            }
            let (fc, fl) = self.arms[ri].fixed_best;
            if fc.is_finite() || fc.is_nan() || fc == f32::NEG_INFINITY {
                let pair = (Body::Link { robot: ri as u16, link: fl as u16 }, Body::Cell);
                Self::note(&mut self.arms[ri].track, fc, 0, pair, Reason::Cell, m);
                Self::note_class(&mut self.arms[ri].track, 0, fc, pair);
            }
            for bi in 0..n_cfg.div_ceil(BATCH) {
                // One lookup per moving link and lane bounds all of the
                // link's spheres there (DistanceField::clearance_bound).
                // Links are then looked at nearest first; once a link's
                // bound exceeds both the margin and the least clearance
                // found so far, neither it nor any after it can change
                // the result.
                //
                // The lookup at a link's centre is also an anchor: a sphere
                // of the link whose bound from it
                // (DistanceField::clearance_from, arithmetic only) exceeds
                // the margin and the least clearance so far is not looked
                // up, for it cannot change the result either.
                let lanes_here = (n_cfg - bi * BATCH).min(BATCH);
                let mut order = std::mem::take(&mut self.arms[ri].order);
                let mut anchors = std::mem::take(&mut self.arms[ri].anchors);
                order.clear();
                let a = &self.arms[ri];
                for (ki, &(l, _, _)) in a.ranges.iter().enumerate() {
                    if a.fixed_link[l as usize] {
                        continue;
                    }
                    let bx = &a.batches[bi].boxes[l as usize];
                    let e = a.link_e[l as usize] as f32;
                    let mut lo = f32::INFINITY;
                    // Lanes index six arrays at once.
                    #[allow(clippy::needless_range_loop)]
                    for lane in 0..lanes_here {
                        let lo_c: [f32; 3] = std::array::from_fn(|c| bx[c][lane]);
                        let h: [f32; 3] = std::array::from_fn(|c| 0.5 * (bx[3 + c][lane] - lo_c[c]));
                        let rad = (h[0] * h[0] + h[1] * h[1] + h[2] * h[2]).sqrt() + e;
                        let (cx, cy, cz) = (lo_c[0] + h[0], lo_c[1] + h[1], lo_c[2] + h[2]);
                        let (b, an) = self.field.bound_and_anchor(cx, cy, cz, rad);
                        lo = if b.is_nan() { f32::NEG_INFINITY } else { lo.min(b) };
                        for (row, v) in anchors[ki].iter_mut().zip(an) {
                            row[lane] = v;
                        }
                    }
                    order.push((lo, ki as u32));
                }
                order.sort_unstable_by(|x, y| x.0.total_cmp(&y.0));
                for &(bound, ki) in &order {
                    if bound > m && bound >= self.arms[ri].track.best {
                        break;
                    }
                    let (l, s, en) = self.arms[ri].ranges[ki as usize];
                    let gl = self.matrix.global(ri, l as usize);
                    let refine = refine_ok && self.allowed_obstacles[gl * w..(gl + 1) * w].iter().any(|&x| x != 0);
                    for sl in s as usize..en as usize {
                        let pb = &self.arms[ri].batches[bi];
                        let r = self.arms[ri].rin[sl];
                        // Lanes past the last configuration repeat it.
                        let thr = m.max(self.arms[ri].track.best);
                        let (x, y, z) = (lanes(&pb.x, sl), lanes(&pb.y, sl), lanes(&pb.z, sl));
                        let lb = self.field.clearance_from(&anchors[ki as usize], [x, y, z], r);
                        // (A NaN bound would fail `>` and be looked up.)
                        if lb.iter().take(lanes_here).all(|&b| b > thr) {
                            continue;
                        }
                        let mut lane_c = [f32::INFINITY; BATCH];
                        for (lane, c) in lane_c.iter_mut().enumerate().take(lanes_here) {
                            *c = if lb[lane] > thr {
                                lb[lane]
                            } else {
                                self.field.clearance(x[lane], y[lane], z[lane], r)
                            };
                        }
                        let lo = lane_c.iter().copied().fold(f32::INFINITY, f32::min);
                        if lo > m && lo >= self.arms[ri].track.best {
                            continue;
                        }
                        let pair = (Body::Link { robot: ri as u16, link: l as u16 }, Body::Cell);
                        let mut least = f32::INFINITY;
                        for (lane, &c0) in lane_c.iter().enumerate().take(lanes_here) {
                            let k = bi * BATCH + lane;
                            let mut c = c0;
                            if refine && c <= release {
                                let i = sl * BATCH + lane;
                                let pb = &self.arms[ri].batches[bi];
                                let at = [pb.x[i], pb.y[i], pb.z[i]];
                                if self.near_allowed_obstacle(gl, at, r, release) {
                                    c = self.exact_cell_clearance(gl, at, r);
                                }
                            }
                            least = if c.is_nan() { c } else { least.min(c) };
                            Self::note(&mut self.arms[ri].track, c, k, pair, Reason::Cell, m);
                        }
                        Self::note_class(&mut self.arms[ri].track, 0, least, pair);
                    }
                }
                self.arms[ri].order = order;
                self.arms[ri].anchors = anchors;
            }
        }
    }

    fn check_self(&mut self, m: f32, release: f32, part: Part) {
        let nl = self.matrix.total_links();
        for ri in 0..self.arms.len() {
            let a = &mut self.arms[ri];
            if a.n_cfg == 0 || a.self_pairs.is_empty() || !part.arm(ri) {
                continue;
            }
            let e2 = 2.0 * a.inflate;
            let reach = release.max(m) + e2;
            let Arm { batches, track, self_pairs, link_slots, n_cfg, pair_e, cand, .. } = a;
            let n_cfg = *n_cfg;
            for (bi, pb) in batches.iter().enumerate().take(n_cfg.div_ceil(BATCH)) {
                let lbox = &pb.boxes;
                for pi in 0..self_pairs.len() {
                    let (la, lb) = self_pairs[pi];
                    let (la, lb) = (la as usize, lb as usize);
                    let bit = self.matrix.global(ri, la) * nl + self.matrix.global(ri, lb);
                    if self.allowed[bit / 64] >> (bit % 64) & 1 == 1 {
                        continue;
                    }
                    let (ba, bb) = (&lbox[la], &lbox[lb]);
                    let near = (0..BATCH).any(|lane| {
                        (0..3).all(|c| ba[c][lane] - bb[3 + c][lane] <= reach && bb[c][lane] - ba[3 + c][lane] <= reach)
                    });
                    if !near {
                        continue;
                    }
                    let (ra, rb) = (link_slots[la], link_slots[lb]);
                    let mut lane_min = [f32::INFINITY; BATCH];
                    // Spheres of each link near the other link's box in some lane.
                    let near_box = |i: usize, bx: &[[f32; BATCH]; 6]| {
                        let ri = pb.r[i] + reach;
                        let (x, y, z) = (lanes(&pb.x, i), lanes(&pb.y, i), lanes(&pb.z, i));
                        (0..BATCH).any(|l| {
                            x[l] + ri >= bx[0][l]
                                && x[l] - ri <= bx[3][l]
                                && y[l] + ri >= bx[1][l]
                                && y[l] - ri <= bx[4][l]
                                && z[l] + ri >= bx[2][l]
                                && z[l] - ri <= bx[5][l]
                        })
                    };
                    cand.clear();
                    cand.extend((rb.0..rb.1).filter(|&j| near_box(j, ba)).map(|j| j as u32));
                    if cand.is_empty() {
                        continue;
                    }
                    for i in ra.0..ra.1 {
                        if !near_box(i, bb) {
                            continue;
                        }
                        let (xi, yi, zi) = (lanes(&pb.x, i), lanes(&pb.y, i), lanes(&pb.z, i));
                        for &j in cand.iter() {
                            let j = j as usize;
                            let rr = pb.r[i] + pb.r[j] + pair_e[pi];
                            let (xj, yj, zj) = (lanes(&pb.x, j), lanes(&pb.y, j), lanes(&pb.z, j));
                            for l in 0..BATCH {
                                let (dx, dy, dz) = (xi[l] - xj[l], yi[l] - yj[l], zi[l] - zj[l]);
                                lane_min[l] = lane_min[l].min((dx * dx + dy * dy + dz * dz).sqrt() - rr);
                            }
                        }
                    }
                    let pair = (
                        Body::Link { robot: ri as u16, link: la as u16 },
                        Body::Link { robot: ri as u16, link: lb as u16 },
                    );
                    let mut least = f32::INFINITY;
                    for (lane, &g) in lane_min.iter().enumerate() {
                        let k = bi * BATCH + lane;
                        if k < n_cfg {
                            Self::note(track, g, k, pair, Reason::SelfCollision, m);
                            least = if g.is_nan() { g } else { least.min(g) };
                        }
                    }
                    Self::note_class(track, 1, least, pair);
                }
            }
        }
    }

    fn check_robots(&mut self, m: f32, release: f32, part: Part) {
        let n = self.arms.len();
        for ia in 0..n {
            for ib in (ia + 1)..n {
                let (a, b) = (&self.arms[ia], &self.arms[ib]);
                if a.n_cfg == 0 || b.n_cfg == 0 || !part.pair(ia, ib) {
                    continue;
                }
                let thr = release.max(m);
                let grow = thr + a.inflate + b.inflate;
                let overlap =
                    (0..3).all(|c| a.bounds[c] - b.bounds[3 + c] <= grow && b.bounds[c] - a.bounds[3 + c] <= grow);
                if !overlap {
                    continue;
                }
                if self.all_pairs {
                    self.robots_all_pairs(ia, ib, thr, m);
                    continue;
                }
                // Deposit a's spheres near b's box, then look up b's spheres near a's box.
                // Only links that can meet the other robot enter; the cell
                // edge covers the largest of them, inflated, plus the threshold.
                let (ra, rb) = (self.meet_r[ia * n + ib], self.meet_r[ib * n + ia]);
                if ra <= 0.0 || rb <= 0.0 {
                    continue;
                }
                self.hash.set_cell_m(ra + rb + a.inflate + b.inflate + thr);
                let (meets_a, meets_b) = (&self.meets[ia * n + ib], &self.meets[ib * n + ia]);
                self.hash.clear();
                let near = |bx: &[f32; 6], x: f32, y: f32, z: f32, r: f32| {
                    x + r >= bx[0] - grow
                        && x - r <= bx[3] + grow
                        && y + r >= bx[1] - grow
                        && y - r <= bx[4] + grow
                        && z + r >= bx[2] - grow
                        && z - r <= bx[5] + grow
                };
                let slots_a = a.slots;
                for bi in 0..a.n_cfg.div_ceil(BATCH) {
                    let pb = &a.batches[bi];
                    for sl in 0..slots_a {
                        if !meets_a[pb.link[sl] as usize] {
                            continue;
                        }
                        for lane in 0..BATCH {
                            let i = sl * BATCH + lane;
                            if bi * BATCH + lane < a.n_cfg && near(&b.bounds, pb.x[i], pb.y[i], pb.z[i], a.rin[sl]) {
                                self.hash.insert(
                                    pb.x[i],
                                    pb.y[i],
                                    pb.z[i],
                                    a.rin[sl],
                                    ((bi * slots_a + sl) * BATCH + lane) as u32,
                                );
                            }
                        }
                    }
                }
                if self.hash.is_empty() {
                    continue;
                }
                let mut finds = PairFinds::NONE;
                for bi in 0..b.n_cfg.div_ceil(BATCH) {
                    let pb = &b.batches[bi];
                    for sl in 0..b.slots {
                        let lb = pb.link[sl];
                        if !meets_b[lb as usize] {
                            continue;
                        }
                        let gb = self.matrix.global(ib, lb as usize);
                        for lane in 0..BATCH {
                            let kb = bi * BATCH + lane;
                            let i = sl * BATCH + lane;
                            if kb >= b.n_cfg || !near(&a.bounds, pb.x[i], pb.y[i], pb.z[i], b.rin[sl]) {
                                continue;
                            }
                            let (arms, matrix, allowed) = (&self.arms, &self.matrix, &self.allowed);
                            self.hash.for_each_near(pb.x[i], pb.y[i], pb.z[i], b.rin[sl], thr, |label, gap| {
                                let lane_a = label as usize % BATCH;
                                let rest = label as usize / BATCH;
                                let (bia, sla) = (rest / slots_a, rest % slots_a);
                                let la = arms[ia].batches[bia].link[sla];
                                let ga = matrix.global(ia, la as usize);
                                let nl = matrix.total_links();
                                let bit = ga * nl + gb;
                                if allowed[bit / 64] >> (bit % 64) & 1 == 1
                                    || matrix.class(ga, gb) != PairClass::Sometimes
                                {
                                    return;
                                }
                                finds.add(gap, la, lb, bia * BATCH + lane_a, kb, m);
                            });
                        }
                    }
                }
                finds.apply(&mut self.arms, ia, ib, m);
            }
        }
    }

    /// The baseline: every sphere of `ia`'s samples against every sphere of `ib`'s.
    fn robots_all_pairs(&mut self, ia: usize, ib: usize, thr: f32, m: f32) {
        let (a, b) = (&self.arms[ia], &self.arms[ib]);
        let nl = self.matrix.total_links();
        let mut finds = PairFinds::NONE;
        for bia in 0..a.n_cfg.div_ceil(BATCH) {
            let pa = &a.batches[bia];
            for sa in 0..a.slots {
                let ga = self.matrix.global(ia, pa.link[sa] as usize);
                for bib in 0..b.n_cfg.div_ceil(BATCH) {
                    let pb = &b.batches[bib];
                    for sb in 0..b.slots {
                        let gb = self.matrix.global(ib, pb.link[sb] as usize);
                        let bit = ga * nl + gb;
                        if self.allowed[bit / 64] >> (bit % 64) & 1 == 1
                            || self.matrix.class(ga, gb) != PairClass::Sometimes
                        {
                            continue;
                        }
                        for la in 0..BATCH {
                            let ka = bia * BATCH + la;
                            if ka >= a.n_cfg {
                                break;
                            }
                            let i = sa * BATCH + la;
                            for lb in 0..BATCH {
                                let kb = bib * BATCH + lb;
                                if kb >= b.n_cfg {
                                    break;
                                }
                                let j = sb * BATCH + lb;
                                let (dx, dy, dz) = (pa.x[i] - pb.x[j], pa.y[i] - pb.y[j], pa.z[i] - pb.z[j]);
                                let g = (dx * dx + dy * dy + dz * dz).sqrt() - a.rin[sa] - b.rin[sb];
                                if g > thr {
                                    continue;
                                }
                                finds.add(g, pa.link[sa], pb.link[sb], ka, kb, m);
                            }
                        }
                    }
                }
            }
        }
        finds.apply(&mut self.arms, ia, ib, m);
    }

    fn decide(&mut self, ri: usize, now_s: f64, release: f32, unknown: Option<u16>) -> Decision {
        let hold = self.settings.release_hold_s;
        let a = &mut self.arms[ri];
        let stop = |kind, reason, a: &Arm| {
            let conflict = a.track.conflict_k != usize::MAX;
            Decision::Stop(Stop {
                kind,
                reason,
                pair: if conflict { a.track.conflict_pair } else { a.track.best_pair },
                clearance_m: a.track.best,
                time_to_contact_s: conflict.then(|| a.plan.time(a.track.conflict_k) as f32),
            })
        };
        let prev = std::mem::replace(&mut a.prev_class_best, a.track.class_best);
        if let Some((reason, kind)) = a.problem {
            a.stopped = true;
            a.clear_since = None;
            a.cause = StopCause::Data;
            return stop(kind, reason, a);
        }
        if let Some(other) = unknown.filter(|&o| o as usize != ri) {
            a.stopped = true;
            a.clear_since = None;
            a.cause = StopCause::Data;
            return stop(StopKind::Immediate, Reason::OtherRobotUnknown { other }, a);
        }
        if a.track.conflict_k != usize::MAX {
            a.stopped = true;
            a.clear_since = None;
            a.cause = match a.track.conflict_pair {
                Some(pair) => StopCause::Proximity(class_of(a.track.conflict_reason), pair),
                None => StopCause::Data,
            };
            let kind = if a.track.conflict_k == 0 { StopKind::Immediate } else { StopKind::OnPath };
            return stop(kind, a.track.conflict_reason, a);
        }
        if a.stopped {
            // Nothing is within the margin now. Released once, for the hold
            // time, the pair that caused the stop is no longer the closest
            // of its kind within the release margin, and nothing within that
            // margin is getting closer: a robot holding still in a legal
            // pose (two of its own links between the two margins, say)
            // starts, while the hysteresis still keeps a proximity stop from
            // chattering.
            let held = (0..3).any(|c| {
                let now = a.track.class_best[c];
                let cause =
                    matches!(a.cause, StopCause::Proximity(k, pair) if k == c && a.track.class_pair[c] == Some(pair));
                now < release && (cause || now < prev[c] - APPROACH_EPS_M)
            });
            if !held {
                let since = *a.clear_since.get_or_insert(now_s);
                if now_s - since >= hold {
                    a.stopped = false;
                    a.clear_since = None;
                } else {
                    return stop(StopKind::OnPath, Reason::Holding { clear_for_s: (now_s - since) as f32 }, a);
                }
            } else {
                a.clear_since = None;
                return stop(StopKind::OnPath, Reason::Holding { clear_for_s: 0.0 }, a);
            }
        }
        Decision::Continue { clearance_m: a.track.best, pair: a.track.best_pair }
    }
}
