//! The validated workcell: plain data the core is built from.
//!
//! These types hold what the description layer read and checked (every
//! value in range, every name resolved); they carry no parser and no file
//! handling. Units are in the field names (`_m`, `_s`, `_mps`, ...).

use crate::field::Outside;
use crate::forecast::StopMode;
use crate::frame::Frame;
use crate::model::coverage::CoverageReport;
use crate::model::geometry::Shape;
use crate::model::{Robot, SphereModel, SphereParams};
use std::path::PathBuf;

/// Margins, metres.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Margins {
    /// Spheres closer than this to anything count as colliding.
    pub clearance_m: f64,
    /// A stopped robot is released only when clear by this much.
    pub release_m: f64,
}

/// The voxel grid of the cell.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VoxelGrid {
    /// Cell-frame position of the grid's minimum corner.
    pub origin_m: [f64; 3],
    /// Edge length of a voxel.
    pub resolution_m: f64,
    /// Voxels along x, y, z.
    pub dims: [usize; 3],
    /// Distances are kept exactly up to this value and saturate beyond it
    /// (a saturated value means "at least this far"); it bounds the region an
    /// incremental update touches.
    pub max_distance_m: f64,
    /// What the space outside the grid counts as (default: collision).
    pub outside: Outside,
}

impl VoxelGrid {
    /// The grid of a cell without manipulators, which nothing checks
    /// against: one voxel of 1 m at the origin, free outside.
    pub const UNUSED: VoxelGrid = VoxelGrid {
        origin_m: [0.0; 3],
        resolution_m: 1.0,
        dims: [1, 1, 1],
        max_distance_m: 1.0,
        outside: Outside::Free,
    };
}

/// Where a manipulator's spheres came from.
#[derive(Clone, Debug)]
pub enum SphereSource {
    /// Fitted from the URDF geometry with these parameters per link.
    Fitted(Vec<SphereParams>),
    /// Read from a hand-tuned file, with a coverage check per link.
    File {
        /// The sphere file.
        path: PathBuf,
        /// Coverage of each link's geometry by the file's spheres.
        coverage: Vec<CoverageReport>,
    },
}

/// The message a manipulator's speed scaling is published as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum ScalingMessage {
    /// `control_msgs/msg/SpeedScalingFactor` (`float64 factor`), reliable
    /// and transient local: joint_trajectory_controller's speed-scaling input.
    #[default]
    SpeedScalingFactor,
    /// `std_msgs/msg/Float64`, for controllers that take a plain number.
    Float64,
}

/// The topics and actions of a manipulator (the workcell's `*_topic`
/// keys), resolved.
#[derive(Clone, Debug)]
pub struct ManipulatorTopics {
    /// Topic of its `sensor_msgs/JointState`.
    pub joint_states: String,
    /// Topic of its planned `trajectory_msgs/JointTrajectory`.
    pub trajectory: String,
    /// Optional: its joint_trajectory_controller's command topic; on each
    /// stop the node publishes an empty `trajectory_msgs/JointTrajectory`
    /// there (the controller then holds position).
    pub controller_command: Option<String>,
    /// Optional: its controller's `control_msgs/FollowJointTrajectory`
    /// action; on each stop the node cancels all its goals.
    pub controller_action: Option<String>,
    /// MoveIt's own actions for this robot (`execute_trajectory`,
    /// `move_action`, as the user names them): on each stop their goals
    /// are cancelled too, as the controller's are.
    pub moveit_actions: Vec<String>,
    /// Optional: where to publish the speed scaling, 0..1.
    pub speed_scaling: Option<String>,
    /// The message type of the speed scaling.
    pub speed_scaling_type: ScalingMessage,
    /// Optional: a `moveit_msgs/DisplayTrajectory` topic (MoveIt's
    /// `display_planned_path`) whose trajectories, for this robot's joints,
    /// count as its planned trajectory.
    pub display_trajectory: Option<String>,
}

/// A manipulator of the cell.
#[derive(Clone, Debug)]
pub struct Manipulator {
    /// Unique name, used in topics and messages.
    pub name: String,
    /// The URDF file, resolved.
    pub urdf_path: PathBuf,
    /// The robot model.
    pub robot: Robot,
    /// Pose of the robot's root link in the cell frame.
    pub base: Frame,
    /// The topics and actions it is guarded through.
    pub topics: ManipulatorTopics,
    /// Higher proceeds first; unique in the cell.
    pub priority: i64,
    /// Time from a stop decision to braking, s.
    pub reaction_time_s: f64,
    /// Maximum deceleration per actuated joint (rad/s² or m/s²), in
    /// `robot.dof_names` order.
    pub max_decel: Vec<f64>,
    /// Maximum acceleration per actuated joint (rad/s² or m/s²), in
    /// `robot.dof_names` order: `max_accel_radps2` / `max_accel_mps2`,
    /// the joint's maximum deceleration where not given (drives speed up
    /// with the torque they brake with). Motion estimates are bounded by it.
    pub max_accel: Vec<f64>,
    /// How the robot's controller stops: every joint synchronised to the
    /// slowest on the path (default), or each joint on its own.
    pub stop_mode: StopMode,
    /// Sphere model.
    pub spheres: SphereModel,
    /// How the sphere model was obtained.
    pub sphere_source: SphereSource,
    /// Use the velocities the controller reports in its joint states
    /// instead of differentiating positions (default: false).
    pub trust_reported_velocity: bool,
    /// Per actuated joint (`robot.dof_names` order), how far the robot may
    /// be from its planned trajectory and still count as on it (rad or m;
    /// `plan_tolerance_rad` / `plan_tolerance_m` in the workcell).
    pub plan_tolerance: Vec<f64>,
    /// A learned stopping model (the workcell's `stopping:` section, as
    /// `workcell_guard calibrate` fits it): where it covers a joint's speed,
    /// the forecasts take its stopping distance instead of
    /// `reaction_time_s` and `max_decel`.
    pub stopping: Option<crate::forecast::stopping::StoppingModel>,
}

/// How the guard runs (the `guard:` section; every key optional, the
/// defaults are printed by `workcell_guard check`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GuardSettings {
    /// A robot whose newest joint state is older than this is stopped, s.
    pub watchdog_s: f64,
    /// A stopped robot is released after staying clear by `margins.release_m`
    /// this long, s.
    pub release_hold_s: f64,
    /// Running-average window over velocity and acceleration estimates
    /// (1 = no filter; every extra sample adds half a sample of lag).
    pub velocity_filter_window: usize,
    /// Velocity and acceleration from a least-squares quadratic fit over the
    /// joint states of this many seconds, evaluated at the newest stamp
    /// (robust to stamps that jitter against their positions, without the
    /// lag of a running average); 0 = the method text's five-point
    /// differences (exact when stamps are exact, with
    /// `velocity_filter_window`), s.
    pub velocity_fit_window_s: f64,
    /// Most configurations checked along one robot's stopping path per
    /// cycle; a path that needs more is checked with inflated spheres.
    pub max_path_samples: usize,
    /// Most configurations for a robot that came near something last cycle
    /// (the cell or a robot within the release margin plus its inflation,
    /// its own links within the release margin, or its path box within
    /// reach of another robot's): where `max_path_samples` binds, its path
    /// is sampled again at up to this many (finer samples, less inflation,
    /// fewer stops for nothing). At least `max_path_samples`.
    pub near_path_samples: usize,
    /// Random configurations sampled per robot (and per robot pair) for the
    /// automatic collision matrix.
    pub matrix_samples: usize,
    /// A link pair is "never in collision" only if every sampled
    /// configuration kept it apart by more than this, m.
    pub matrix_never_slack_m: f64,
    /// Link pairs the spheres put within the clearance margin are looked at
    /// again with the links' exact shapes before a stop (default; off: the
    /// spheres alone decide).
    pub exact_links: bool,
}

impl Default for GuardSettings {
    fn default() -> Self {
        GuardSettings {
            watchdog_s: 0.05,
            release_hold_s: 0.5,
            velocity_filter_window: 1,
            velocity_fit_window_s: 0.05,
            max_path_samples: 64,
            near_path_samples: 512,
            matrix_samples: 5000,
            matrix_never_slack_m: 0.05,
            exact_links: true,
        }
    }
}

/// A static obstacle.
#[derive(Clone, Debug)]
pub struct Obstacle {
    /// Unique name.
    pub name: String,
    /// Pose in the cell frame.
    pub pose: Frame,
    /// Shape (meshes loaded).
    pub shape: Shape,
}

/// The platen surface and its planar units.
#[derive(Clone, Debug)]
pub struct Platen {
    /// Pose of the surface's corner frame (x, y along the edges, z up).
    pub pose: Frame,
    /// Surface size, metres.
    pub size_xy_m: [f64; 2],
    /// Allocation cell edge, metres.
    pub cell_m: f64,
    /// The units.
    pub units: Vec<PlatenUnit>,
    /// Fixed obstacles on the surface.
    pub obstacles: Vec<PlatenObstacle>,
    /// How requests and pose updates are handled.
    pub allocation: AllocationSettings,
}

/// A fixed obstacle on the platen surface.
#[derive(Clone, Debug)]
pub struct PlatenObstacle {
    /// Unique name.
    pub name: String,
    /// Simple polygon, surface frame, counter-clockwise.
    pub polygon_xy_m: Vec<[f64; 2]>,
}

/// A unit's umbilical cord: fixed from its anchor through guide points,
/// then a straight run to the attachment point on the unit.
#[derive(Clone, Debug)]
pub struct Umbilical {
    /// Anchor, surface frame.
    pub anchor_xy_m: [f64; 2],
    /// Guide points after the anchor, surface frame.
    pub via_xy_m: Vec<[f64; 2]>,
    /// Attachment point, unit frame.
    pub attach_xy_m: [f64; 2],
    /// Width of the cord (and its clearance), m.
    pub width_m: f64,
}

/// Platen allocation settings (`platen.allocation`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AllocationSettings {
    /// A denied unit may ask again after this long, s.
    pub retry_after_s: f64,
    /// A moving unit with no pose update for this long must stop; requests
    /// from a unit whose pose is older are refused, s.
    pub pose_timeout_s: f64,
    /// A unit is at its goal within this distance, m …
    pub arrive_tolerance_m: f64,
    /// … and this angle, rad.
    pub arrive_tolerance_rad: f64,
    /// The path freed behind a moving unit lags its pose by this much, m.
    pub release_lag_m: f64,
    /// Longest time between two checks of a unit on a path, s: its
    /// increment is its stopping distance plus this much travel.
    pub path_check_s: f64,
    /// A unit on a path that has gained no ground for this long goes before
    /// every unit not boosted (those boosted earlier first) until its path
    /// ends; `None`: never, s.
    pub priority_boost_after_s: Option<f64>,
}

impl Default for AllocationSettings {
    fn default() -> Self {
        AllocationSettings {
            retry_after_s: 1.0,
            pose_timeout_s: 0.1,
            arrive_tolerance_m: 0.002,
            arrive_tolerance_rad: 0.01,
            release_lag_m: 0.005,
            path_check_s: 0.02,
            priority_boost_after_s: None,
        }
    }
}

/// A planar unit on the platen.
#[derive(Clone, Debug)]
pub struct PlatenUnit {
    /// Unique name.
    pub name: String,
    /// Footprint polygon in the unit frame, counter-clockwise.
    pub footprint_xy_m: Vec<[f64; 2]>,
    /// Its umbilical cord, if it has one.
    pub umbilical: Option<Umbilical>,
    /// Maximum speed, m/s.
    pub max_speed_mps: f64,
    /// Deceleration it can always brake at, m/s² (its stopping distance
    /// sizes the increments of a path).
    pub max_decel_mps2: f64,
    /// Who goes first where paths meet: higher first, ties to the earlier
    /// unit.
    pub priority: i64,
    /// Initial pose (x, y, θ) on the surface.
    pub initial_pose: [f64; 3],
}

/// Something that can touch something else.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BodyRef {
    /// A link of a manipulator.
    Link {
        /// Manipulator index.
        robot: usize,
        /// Link index.
        link: usize,
    },
    /// A static obstacle.
    Obstacle(usize),
    /// A platen unit.
    PlatenUnit(usize),
}

/// A validated workcell.
#[derive(Clone, Debug)]
pub struct Workcell {
    /// The file it was read from.
    pub file: PathBuf,
    /// Name of the cell frame (tf).
    pub cell_frame: String,
    /// Margins.
    pub margins: Margins,
    /// Voxel grid.
    pub voxel_grid: VoxelGrid,
    /// Manipulators.
    pub manipulators: Vec<Manipulator>,
    /// Platen, if the cell has one.
    pub platen: Option<Platen>,
    /// Static obstacles.
    pub obstacles: Vec<Obstacle>,
    /// Pairs allowed to touch.
    pub allowed_contacts: Vec<(BodyRef, BodyRef)>,
    /// How the guard runs.
    pub guard: GuardSettings,
}

/// Largest voxel grid accepted (voxels), to fail early on a unit mistake.
pub const MAX_VOXELS: usize = 1 << 30;
