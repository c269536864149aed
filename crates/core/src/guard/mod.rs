//! The guard: one deterministic cycle from joint states to commands.
//!
//! Per cycle ([`Guard::cycle`], the one entry point), for every robot:
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
//!    that margin gets closer; or at once, escaping, while its forecast
//!    takes it away from what stopped it (`track`).
//!
//! The robot-vs-robot check compares samples of two robots only where
//! their time windows overlap ([`Guard::set_time_matched`]; off, the swept
//! volumes whole).
//!
//! Allowed contacts (a gripper and its workpiece) are pairs the check skips;
//! they can be set and broken at run time ([`Guard::allow_contact`],
//! [`Guard::forbid_contact`]). A link allowed to touch an obstacle is checked
//! against the other obstacles exactly (parry3d) wherever the field, which
//! does not know which obstacle is near, says it is close.
//!
//! 6. the decision becomes the robot's [`Command`] ([`command`]): the stop
//!    flag with its source and cause, when it is due on the wire, the speed
//!    scaling, the controller's hold and goal cancel.
//!
//! `cycle.rs` runs the stages in order, each in a file of its own
//! (`prepare`, `arbitrate/`, `check_cell`, `check_self`, `check_robots`,
//! `hysteresis`, [`command`], `platen`); [`decision`](self) holds the
//! types in and out, `build` the construction, `contacts` the allowed
//! contacts.
//!
//! `cycle` allocates nothing; the same inputs give the same decisions.

/// A method that runs its `#[inline(always)]` body compiled for AVX2 and
/// FMA when the CPU has them (the lanes of a batch then fill one 256-bit
/// register), else as compiled for the baseline. Floating-point results do
/// not differ: Rust never contracts `a * b + c` into an FMA by itself.
macro_rules! with_avx2 {
    ($vis:vis fn $name:ident = $avx:ident / $body:ident($($arg:ident: $ty:ty),*)) => {
        $vis fn $name(&mut self, $($arg: $ty),*) {
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
                // SAFETY: the function only requires the CPU features checked just above.
                return unsafe { self.$avx($($arg),*) };
            }
            self.$body($($arg),*)
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        fn $avx(&mut self, $($arg: $ty),*) {
            self.$body($($arg),*)
        }
    };
    // The same for a function of a stage (no receiver).
    ($vis:vis stage fn $name:ident = $avx:ident / $body:ident($($arg:ident: $ty:ty),*)) => {
        $vis fn $name($($arg: $ty),*) {
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
                // SAFETY: the function only requires the CPU features checked just above.
                return unsafe { $avx($($arg),*) };
            }
            $body($($arg),*)
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        fn $avx($($arg: $ty),*) {
            $body($($arg),*)
        }
    };
}

mod arbitrate;
mod build;
mod check_cell;
mod check_robots;
mod check_self;
mod clock;
pub mod command;
mod contacts;
mod cycle;
mod decision;
mod exact_pairs;
mod hysteresis;
pub mod matrix;
mod part;
mod path;
mod plans;
mod platen;
mod prepare;
mod track;

use part::Part;

pub use arbitrate::{ArbitrationPolicy, ArmGrant, LOOKAHEAD_S, REST_SPEED, RETREAT_S, Waiting};
pub use clock::{CLOCK_BACK_TOLERANCE_S, CLOCK_FORWARD_JUMP_S, ClockJump};
use command::Supervision;
pub use command::{
    Command, CommandPolicy, GRANT_STEP_S, GrantShown, SCALING_STEP, StopSource, ramp_share, speed_for_room,
    speed_for_room_ramped,
};
pub use decision::*;

use crate::cell::{BodyRef, GuardSettings, Margins, Workcell};
use crate::field::{DistanceField, Outside};
use crate::forecast::along::Along;
use crate::forecast::track::{PlanTracker, Progress};
use crate::forecast::{self, Estimator, SampleError, StopPlan};
use crate::frame::Frame;
use crate::hash::SpatialHash;
use crate::model::exact::{self, PlacedShape};
use crate::model::{BATCH, Collision, PosedBatch, PosedSpheres, SpherePoser};
use crate::platen::{Answer, BitAllocator, UnitStatus};
use check_cell::link_pair_checked;
pub use matrix::{CollisionMatrix, PairClass};
use plans::Follow;
pub use plans::{PLAN_ABANDON_S, PLAN_WINDOW_S};
use track::{APPROACH_EPS_M, Escape, StopCause, Target, Track, class_of};
pub use track::{APPROACH_SCALING_EPS_M, ESCAPE_MIN_M, ESCAPE_MIN_ON_PLAN_M};

/// How close the checks look, this cycle: the clearance margin (a check
/// within it stops), the release margin, and the slow-down distance past
/// the margin (what may slow a robot is looked at that far), m.
#[derive(Clone, Copy, Debug)]
struct Limits {
    margin: f32,
    release: f32,
    slow_down: f32,
}

/// Which link pairs the checks look at: the collision matrix and the
/// allowed contacts (a bitset over global link pairs).
#[derive(Clone, Copy)]
struct Checked<'a> {
    matrix: &'a CollisionMatrix,
    allowed: &'a [u64],
}

/// The [`BATCH`] lanes of slot `i` in a batch array.
#[inline(always)]
fn lanes(v: &[f32], i: usize) -> &[f32; BATCH] {
    // invariant: batch arrays are allocated as whole slots of BATCH lanes
    v[i * BATCH..(i + 1) * BATCH].try_into().expect("batch arrays hold whole slots")
}

/// A joint estimated faster than this many times its URDF velocity limit
/// stops its robot as [`Reason::ImplausibleMotion`] (controllers keep
/// within the limit; estimates overshoot it a little on real timing).
pub const IMPLAUSIBLE_SPEED_FACTOR: f64 = 1.5;

/// One robot's part of the guard.
#[derive(Clone, Debug)]
struct Arm {
    /// Built once from the workcell.
    model: ArmModel,
    /// Buffers and results of the current cycle.
    scratch: ArmScratch,
    /// What carries over from cycle to cycle.
    state: ArmState,
}

/// What a robot's checks need that never changes: its poser, limits,
/// levers and the link pairs it checks.
#[derive(Clone, Debug)]
struct ArmModel {
    poser: SpherePoser,
    decel: Vec<f64>,
    /// Per joint, its maximum acceleration (the departure bound's).
    accel: Vec<f64>,
    stop_mode: forecast::StopMode,
    /// Per joint, the speed beyond which an estimate is implausible
    /// ([`IMPLAUSIBLE_SPEED_FACTOR`] times its URDF limit; ∞ without one).
    speed_limit: Vec<f64>,
    lever: Vec<f64>,
    reaction_s: f64,
    /// The learned stopping model, if the workcell has one: it shapes the
    /// extrapolated stopping paths (`prepare::apply_stopping`).
    stopping: Option<forecast::stopping::StoppingModel>,
    /// (link, first slot, end slot).
    ranges: Vec<(u32, u32, u32)>,
    self_pairs: Vec<(u32, u32)>,
    /// Per self pair, per dof: the lever of that joint on the pair's
    /// relative motion (joints above their common ancestor move both
    /// alike and count 0), flat at `pair * dof + joint`.
    pair_lever: Vec<f64>,
    /// Slot range of every link (empty for links without spheres).
    link_slots: Vec<(usize, usize)>,
    /// Links whose pose no joint moves (checked against the cell once).
    fixed_link: Vec<bool>,
    /// Per link, its solid exact shape ([`exact::solid_link_shape`]).
    hulls: Vec<Option<exact::LinkShape>>,
    slots: usize,
    n_links: usize,
}

/// A robot's per-cycle buffers (sized once, reused every cycle) and the
/// cycle's results, by the stage that writes them: its stopping path (the
/// forecast), its poses and inflation, the checks' scratch, and what the
/// checks found (its track).
#[derive(Clone, Debug)]
struct ArmScratch {
    forecast: ArmForecast,
    posed: ArmPoses,
    look: CheckScratch,
    track: Track,
}

/// The forecast stage's result for one robot: its stopping path (plan,
/// samples and their times), the speeds and decelerations it assumed, and
/// the problem that stops it without a check, if any.
#[derive(Clone, Debug)]
struct ArmForecast {
    /// This cycle's braking deceleration per joint ([`forecast::braking_decel`]).
    brake: Vec<f64>,
    /// A joint the learned stopping model did not cover this cycle.
    beyond: Option<BeyondModel>,
    /// Scratch, per interval between samples on plan and joint: its travel.
    step_travel: Vec<f64>,
    /// On plan, per joint and per link, the departure bound's part of the inflation.
    departure: Vec<f64>,
    /// This cycle's per-dof speed bound, and the time between samples.
    speed: Vec<f64>,
    path_q: Vec<f64>,
    /// Scratch, per joint: the robot's offset from its plan, and a travel.
    offset: Vec<f64>,
    tv: Vec<f64>,
    /// Scratch, per sample on plan: its plan time, s.
    plan_s: Vec<f64>,
    /// Per sample, the times (absolute, s) the robot can be anywhere it
    /// stands for ([`ArmScratch::window`]).
    windows: Vec<(f64, f64)>,
    /// Stamp of the newest joint state the path starts from, s (sample `k`
    /// is at `t0 + plan.time(k)`).
    t0: f64,
    /// This cycle.
    n_cfg: usize,
    plan: StopPlan,
    present: bool,
    /// An escape may be judged: on plan, or the newest step bears out the
    /// velocity estimate ([`forecast::Motion::step_follows`]).
    borne_out: bool,
    /// Every joint's estimated speed is within [`arbitrate::REST_SPEED`].
    at_rest: bool,
    /// On plan but going back along it (a retreat): its stopping path is
    /// extrapolated from its motion, not braked along the plan ahead.
    reversing: bool,
    problem: Option<(Reason, StopKind)>,
}

/// A robot's sampled configurations posed in batches, with each slot's
/// and link's inflation this cycle.
#[derive(Clone, Debug)]
struct ArmPoses {
    /// A robot stopped on plan posed at its increment's end, and the
    /// configuration there ([`hysteresis`]'s look ahead).
    ahead: PosedSpheres,
    ahead_q: Vec<f64>,
    /// Per link, this cycle's inflation, m.
    link_inflation: Vec<f64>,
    /// Per slot, radius plus its link's inflation, this cycle.
    inflated_r: Vec<f32>,
    /// Per sample, the share of the steps' inflation its own steps need (≤ 1).
    step_share: Vec<f32>,
    link_departure: Vec<f32>,
    /// Per self pair, this cycle's inflation (both links together), m.
    pair_inflation: Vec<f32>,
    /// Poses, a batch per [`BATCH`] configurations, each with its links'
    /// boxes per lane.
    batches: Vec<PosedBatch>,
    /// The configurations `batches` hold (`posed_n` of them); a cycle
    /// whose configurations are the same, bit for bit, poses nothing.
    posed_q: Vec<f64>,
    posed_n: usize,
    inflate: f32,
    bounds: [f32; 6],
}

/// The checks' per-robot scratch.
#[derive(Clone, Debug)]
struct CheckScratch {
    /// Scratch: candidate spheres of one link (capacity: all slots).
    candidates: Vec<u32>,
    /// Scratch, per slot: its clearance to the cell at the first sample
    /// (now) as the cell check found it (+∞: beyond what it looks at).
    now_c: Vec<f32>,
    /// Scratch, per slot: its exact clearance to the cell's shapes at the
    /// first sample, once an approach needed it (NaN: not yet this cycle).
    now_exact: Vec<f32>,
    /// Scratch, per pair of its own links the self check keeps: their gap
    /// at the first sample (now) as it found it, and their shapes' distance
    /// where the spheres come within the margin (+∞: beyond its reach).
    now_self: Vec<[f32; 2]>,
    /// Scratch: (lower bound on the cell clearance, range index) of the
    /// moving links in one batch, least first.
    order: Vec<(f32, u32)>,
    /// Scratch, per range index and lane: the field's anchor at the centre
    /// of the link's box (`[x, y, z, d]`, d = −∞ when outside the grid).
    anchors: Vec<[[f32; BATCH]; 4]>,
    /// What may slow it this cycle, [the cell and its own links, the other
    /// robots], as the checks begin ([`Guard::slowed_by`]): they look that
    /// far past the margin.
    slowed: [bool; 2],
    /// Scratch: link frames of one sample, for the cell check's exact
    /// refinement (capacity: every link).
    frames: Vec<Frame>,
}

/// What carries over between a robot's cycles: its joint-state estimator,
/// refusals, the hysteresis, and the cached clearance of its fixed links.
#[derive(Clone, Debug)]
struct ArmState {
    est: Estimator,
    /// This cycle's decelerations under the learned stopping model (its
    /// extrapolated path's), per joint.
    learned_decel: Vec<f64>,
    rejected: Option<SampleError>,
    /// A state refused since the last evaluation (stops for that cycle
    /// even when a good state followed it).
    rejected_since: Option<SampleError>,
    /// Stopped or moving: the hysteresis ([`hysteresis::Phase`]).
    phase: hysteresis::Phase,
    /// What started the current (or the last) stop.
    cause: StopCause,
    /// The class and clearance it last escaped from, until clear of that class.
    escape_floor: Option<(usize, f32)>,
    /// Each class's least clearance in the previous cycle.
    prev_class_best: [f32; 3],
    /// Their least clearance to the cell and which link has it.
    fixed_best: (f32, u32),
    /// `fixed_best` must be recomputed (field, contacts or margins changed).
    fixed_dirty: bool,
    /// The joint-state period to expect next ([`forecast::Estimator::period`]), s.
    est_period: f64,
    /// Its plan and where it is on it.
    follow: Follow,
    /// When it was last released at once because the arbiter granted its
    /// increment ahead ([`hysteresis`]): stopped again within the hold
    /// time, it waits the hold time like any other stop (no flag flipping
    /// back and forth while the two judgements differ).
    ahead_released_s: f64,
    /// Its releases from stops another robot caused, and when the last
    /// was, s: two robots stopped for each other take turns
    /// ([`hysteresis::Turn`]), the one with fewer first.
    robot_releases: (u32, f64),
    /// How often in a row it was stopped again for a robot within the hold
    /// time of its release from a stop a robot caused (at most
    /// [`hysteresis::MAX_BACKOFF`]): each doubles the hold before its next
    /// such release ([`hysteresis::decide`]).
    quick_restops: u32,
}

/// The manipulator guard of one cell, with the platen's part beside it.
pub struct Guard {
    settings: GuardSettings,
    margins: Margins,
    arms: Vec<Arm>,
    matrix: CollisionMatrix,
    /// Link–link allowed contacts, bitset over global link pairs.
    allowed: Vec<u64>,
    /// The cell check's field, obstacles and their allowed contacts.
    cell: check_cell::CellCheck,
    /// The robot-vs-robot check's hash and which links can meet.
    robots: check_robots::RobotCheck,
    /// Link frames for the exact refinement ([`exact_pairs`]).
    exact: exact_pairs::ExactFrames,
    /// Increments, conflicts and grants.
    arbitration: arbitrate::Arbitration,
    /// How decisions become commands.
    policy: CommandPolicy,
    /// Per robot, what the commands carry over (latches, what was sent).
    supervision: Vec<Supervision>,
    decisions: Vec<Decision>,
    commands: Vec<Command>,
    /// When the newest cloud of sensed obstacles arrived.
    last_cloud_s: Option<f64>,
    unknown_inputs: usize,
    /// The first phase of a split evaluation, awaiting the rest.
    pending: Option<Pending>,
    /// The last reading of the clock, and its last jump ([`clock`]).
    clock: clock::Clock,
    /// The platen allocator and its inputs ([`platen`]).
    platen: platen::PlatenPart,
}

/// What the second half of a split evaluation needs from the first.
#[derive(Clone, Copy, Debug)]
struct Pending {
    now_s: f64,
    first: usize,
    unknown: Option<u16>,
    lim: Limits,
}

impl Guard {
    /// Forgets every joint state and stop (as at start-up).
    pub fn reset(&mut self) {
        for a in &mut self.arms {
            a.state.est.reset();
            (a.state.rejected, a.state.rejected_since) = (None, None);
            a.state.phase = hysteresis::Phase::STOPPED;
            a.state.cause = StopCause::Data;
            a.state.escape_floor = None;
            a.state.ahead_released_s = f64::NEG_INFINITY;
            a.state.robot_releases = (0, f64::NEG_INFINITY);
            a.state.quick_restops = 0;
        }
        self.arbitration.reset();
    }

    /// The collision matrix in use.
    pub fn matrix(&self) -> &CollisionMatrix {
        &self.matrix
    }

    /// The distance field in use.
    pub fn field(&self) -> &DistanceField {
        &self.cell.field
    }

    /// The distance field, to add or remove obstacles at run time.
    pub fn field_mut(&mut self) -> &mut DistanceField {
        self.dirty_fixed();
        &mut self.cell.field
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
    /// swept volumes instead of through the hash, and finds the
    /// arbitration's conflicts by boxes and spheres instead of through the
    /// hash (the benchmarks' baselines; same answers, slower).
    pub fn set_all_pairs(&mut self, on: bool) {
        self.robots.all_pairs = on;
    }

    /// Checks the cell by looking every sampled sphere up in the field,
    /// instead of skipping links and spheres whose bound cannot change the
    /// result (the reference for that skipping; same decisions, slower,
    /// and every kind's least clearance exact).
    pub fn set_every_sphere(&mut self, on: bool) {
        self.cell.every_sphere = on;
    }

    /// The spatial hash (for its memory figure).
    pub fn hash(&self) -> &SpatialHash {
        &self.robots.hash
    }

    /// This cycle's stopping-path plan of a manipulator.
    pub fn plan(&self, robot: usize) -> Option<&StopPlan> {
        self.arms.get(robot).map(|a| &a.scratch.forecast.plan)
    }

    /// Robot-vs-robot compares only samples whose time windows overlap
    /// ([`ArmScratch::window`]: all robots told to stop this cycle or the
    /// next) instead of whole swept volumes. On by default; off is the
    /// swept-volume check, kept as a baseline.
    pub fn set_time_matched(&mut self, on: bool) {
        self.robots.time_matched = on;
    }

    /// A joint of robot `robot` that moved faster this cycle than its
    /// learned stopping model covers (its configured figures were used).
    pub fn beyond_stopping_model(&self, robot: usize) -> Option<BeyondModel> {
        self.arms.get(robot).and_then(|a| a.scratch.forecast.beyond)
    }

    /// Configurations checked for a manipulator this cycle.
    pub fn samples_checked(&self, robot: usize) -> usize {
        self.arms.get(robot).map_or(0, |a| a.scratch.forecast.n_cfg)
    }

    /// Inputs naming a manipulator that does not exist, since start.
    pub fn unknown_inputs(&self) -> usize {
        self.unknown_inputs
    }

    /// The least clearances robot `robot`'s last check found, by kind.
    pub fn clearances(&self, robot: usize) -> Option<Clearances> {
        self.arms.get(robot).map(|a| {
            let c = a.scratch.track.class_best;
            Clearances { cell_m: c[0], own_links_m: c[1], other_robots_m: c[2] }
        })
    }

    /// The latest decisions, one per manipulator.
    pub fn decisions(&self) -> &[Decision] {
        &self.decisions
    }

    /// Input for `robot` that the adapter refused (joint names it cannot
    /// map, a bad trajectory) stops it from the next cycle while `refused`
    /// holds; the adapter clears it when good input arrives.
    pub fn set_input_refused(&mut self, robot: usize, refused: bool) {
        if let Some(s) = self.supervision.get_mut(robot) {
            s.refused = refused;
        }
    }

    /// A cloud of sensed obstacles arrived at `at_s` (the guard's clock).
    pub fn note_cloud(&mut self, at_s: f64) {
        self.last_cloud_s = Some(at_s);
    }

    /// With a [`CommandPolicy::cloud_timeout_s`]: how old the newest cloud
    /// is at `now_s` when that is too old (`+∞` before the first, and for a
    /// stamp ahead of `now_s`); `None` while sensing is fresh or optional.
    pub fn sensing_stale(&self, now_s: f64) -> Option<f64> {
        let timeout = self.policy.cloud_timeout_s;
        if timeout <= 0.0 {
            return None;
        }
        let age = match self.last_cloud_s {
            Some(t) if t <= now_s => now_s - t,
            _ => f64::INFINITY,
        };
        (age > timeout).then_some(age)
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

    /// The last jump of the clock, if any ([`clock`]).
    pub fn clock_jump(&self) -> Option<ClockJump> {
        self.clock.jump
    }

    /// Refines link pairs, and links and the cell's solid obstacles, within
    /// the margin by their exact shapes (from
    /// the workcell's `guard.exact_links`, on by default); off, the
    /// spheres alone decide.
    pub fn set_exact_refinement(&mut self, on: bool) {
        self.exact.on = on;
        self.cell.refine_links = on;
    }

    /// How many exact link–link distances the checks have computed since
    /// the guard was built (pairs the spheres put within the margin).
    pub fn exact_queries(&self) -> u64 {
        self.exact.queries
    }

    /// The distance between robot `ra`'s link `la` at configuration `qa`
    /// and robot `rb`'s link `lb` at `qb`, by their solid exact shapes
    /// (meshes as convex hulls), m; `None` where a link has no exact shape
    /// or a configuration does not fit. For oracles; not on the per-cycle
    /// path (it allocates).
    pub fn exact_link_distance(
        &self,
        (ra, la, qa): (usize, usize, &[f64]),
        (rb, lb, qb): (usize, usize, &[f64]),
    ) -> Option<f64> {
        let shape = |r: usize, l: usize| self.arms.get(r)?.model.hulls.get(l)?.as_ref();
        let frames = |r: usize, q: &[f64]| {
            let kin = self.arms.get(r)?.model.poser.kinematics();
            let mut out = vec![Frame::IDENTITY; kin.link_count()];
            kin.forward(q, &mut out).ok()?;
            Some(out)
        };
        let (fa, fb) = (frames(ra, qa)?, frames(rb, qb)?);
        exact::distance(shape(ra, la)?, fa.get(la)?, shape(rb, lb)?, fb.get(lb)?)
    }

    fn dirty_fixed(&mut self) {
        for a in &mut self.arms {
            a.state.fixed_dirty = true;
        }
    }
}
