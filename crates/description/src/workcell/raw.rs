//! Stage 1: the workcell file as written (serde, unknown keys refused).
//! Nothing here is checked beyond types; see [`super::validate`].

use serde::Deserialize;

use std::collections::BTreeMap;

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawWorkcell {
    pub cell_frame: String,
    pub margins: RawMargins,
    #[serde(default)]
    pub voxel_grid: Option<RawVoxelGrid>,
    #[serde(default)]
    pub manipulators: Vec<RawManipulator>,
    #[serde(default)]
    pub platen: Option<RawPlaten>,
    #[serde(default)]
    pub obstacles: Vec<RawObstacle>,
    #[serde(default)]
    pub allowed_contacts: Vec<[String; 2]>,
    #[serde(default)]
    pub guard: Option<RawGuard>,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawGuard {
    #[serde(default)]
    pub watchdog_s: Option<f64>,
    #[serde(default)]
    pub release_hold_s: Option<f64>,
    #[serde(default)]
    pub velocity_filter_window: Option<i64>,
    #[serde(default)]
    pub velocity_fit_window_s: Option<f64>,
    #[serde(default)]
    pub max_path_samples: Option<i64>,
    #[serde(default)]
    pub near_path_samples: Option<i64>,
    #[serde(default)]
    pub matrix_samples: Option<i64>,
    #[serde(default)]
    pub matrix_never_slack_m: Option<f64>,
    #[serde(default)]
    pub exact_links: Option<bool>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawMargins {
    pub clearance_m: f64,
    pub release_m: f64,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawVoxelGrid {
    pub origin_m: [f64; 3],
    pub size_m: [f64; 3],
    pub resolution_m: f64,
    pub max_distance_m: f64,
    #[serde(default)]
    pub outside: Option<RawOutside>,
}

#[derive(Deserialize, Debug, Clone, Copy)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPose {
    pub xyz_m: [f64; 3],
    pub rpy_rad: [f64; 3],
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawManipulator {
    pub name: String,
    pub urdf: String,
    pub base_pose: RawPose,
    pub joint_state_topic: String,
    pub trajectory_topic: String,
    pub priority: i64,
    pub reaction_time_s: f64,
    pub joints: BTreeMap<String, RawJoint>,
    #[serde(default)]
    pub spheres: Option<RawSpheres>,
    #[serde(default)]
    pub trust_reported_velocity: Option<bool>,
    #[serde(default)]
    pub controller_command_topic: Option<String>,
    #[serde(default)]
    pub controller_action: Option<String>,
    #[serde(default)]
    pub moveit_actions: Option<Vec<String>>,
    #[serde(default)]
    pub speed_scaling_topic: Option<String>,
    #[serde(default)]
    pub speed_scaling_type: Option<RawScalingType>,
    #[serde(default)]
    pub display_trajectory_topic: Option<String>,
    #[serde(default)]
    pub stop_mode: Option<RawStopMode>,
    #[serde(default)]
    pub plan_tolerance_rad: Option<f64>,
    #[serde(default)]
    pub plan_tolerance_m: Option<f64>,
    #[serde(default)]
    pub stopping: Option<crate::stopping_file::RawStopping>,
}

/// `voxel_grid.outside:` what the space outside the grid counts as.
#[derive(Deserialize, Debug, Clone, Copy)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RawOutside {
    Collision,
    Free,
}

/// `speed_scaling_type:` of a manipulator.
#[derive(Deserialize, Debug, Clone, Copy)]
pub(crate) enum RawScalingType {
    #[serde(rename = "control_msgs/msg/SpeedScalingFactor")]
    SpeedScalingFactor,
    #[serde(rename = "std_msgs/msg/Float64")]
    Float64,
}

/// `stop_mode:` of a manipulator.
#[derive(Deserialize, Debug, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RawStopMode {
    Synchronized,
    Independent,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawJoint {
    #[serde(default)]
    pub max_decel_radps2: Option<f64>,
    #[serde(default)]
    pub max_decel_mps2: Option<f64>,
    #[serde(default)]
    pub max_accel_radps2: Option<f64>,
    #[serde(default)]
    pub max_accel_mps2: Option<f64>,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSpheres {
    #[serde(default)]
    pub max_overshoot_m: Option<f64>,
    #[serde(default)]
    pub max_spheres_per_link: Option<i64>,
    #[serde(default)]
    pub links: BTreeMap<String, RawLinkSpheres>,
    #[serde(default)]
    pub file: Option<String>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawLinkSpheres {
    #[serde(default)]
    pub max_overshoot_m: Option<f64>,
    #[serde(default)]
    pub max_spheres: Option<i64>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPlaten {
    pub surface: RawSurface,
    pub units: Vec<RawUnit>,
    #[serde(default)]
    pub obstacles: Vec<RawPlatenObstacle>,
    #[serde(default)]
    pub allocation: Option<RawAllocation>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPlatenObstacle {
    pub name: String,
    pub polygon_xy_m: Vec<[f64; 2]>,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawAllocation {
    #[serde(default)]
    pub retry_after_s: Option<f64>,
    #[serde(default)]
    pub pose_timeout_s: Option<f64>,
    #[serde(default)]
    pub arrive_tolerance_m: Option<f64>,
    #[serde(default)]
    pub arrive_tolerance_rad: Option<f64>,
    #[serde(default)]
    pub release_lag_m: Option<f64>,
    #[serde(default)]
    pub path_check_s: Option<f64>,
    #[serde(default)]
    pub priority_boost_after_s: Option<f64>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawUmbilical {
    pub anchor_xy_m: [f64; 2],
    #[serde(default)]
    pub via_xy_m: Vec<[f64; 2]>,
    #[serde(default)]
    pub attach_xy_m: Option<[f64; 2]>,
    pub width_m: f64,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSurface {
    pub pose: RawPose,
    pub size_xy_m: [f64; 2],
    pub cell_m: f64,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawUnit {
    pub name: String,
    pub footprint_xy_m: Vec<[f64; 2]>,
    #[serde(default)]
    pub umbilical: Option<RawUmbilical>,
    pub max_speed_mps: f64,
    #[serde(default)]
    pub max_decel_mps2: Option<f64>,
    #[serde(default)]
    pub priority: Option<i64>,
    pub initial_pose: RawPose2,
}

#[derive(Deserialize, Debug, Clone, Copy)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPose2 {
    pub x_m: f64,
    pub y_m: f64,
    pub theta_rad: f64,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawObstacle {
    pub name: String,
    pub pose: RawPose,
    pub geometry: RawGeometry,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum RawGeometry {
    Box {
        size_m: [f64; 3],
    },
    Sphere {
        radius_m: f64,
    },
    Cylinder {
        radius_m: f64,
        length_m: f64,
    },
    Mesh {
        uri: String,
        #[serde(default)]
        scale: Option<[f64; 3]>,
    },
}
