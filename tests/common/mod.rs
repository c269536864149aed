//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod cell;
pub mod stopping;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `argv` (a program and its arguments) inside a new network
/// namespace with only loopback up, as every process that opens a DDS
/// participant runs here.
pub fn in_own_netns(argv: &[String]) -> std::process::Output {
    let quoted: Vec<String> = argv.iter().map(|a| format!("'{}'", a.replace('\'', "'\\''"))).collect();
    let inner = format!("ip link set lo up && exec {}", quoted.join(" "));
    Command::new("unshare").args(["-n", "sh", "-c", &inner]).output().expect("unshare runs")
}

/// The sample robots written for this project.
pub fn bundled_urdfs() -> Vec<PathBuf> {
    ["wg_arm6.urdf", "wg_arm7.urdf", "wg_platen.urdf"].iter().map(|f| repo().join("urdf").join(f)).collect()
}

/// Published robot descriptions from the `example-robot-data` PyPI package:
/// STL and COLLADA meshes, upper-case extensions, `package://` and
/// `package:///` URIs, negative scales, mimic joints, trees with two arms.
pub const PUBLIC_URDFS: &[&str] = &[
    "panda_description/urdf/panda.urdf",
    "ur_description/urdf/ur5_robot.urdf",
    "xarm_description/urdf/xarm7.urdf",
    "so_arm_description/urdf/so101.urdf",
    "baxter_description/urdf/baxter.urdf",
    "talos_data/robots/talos_left_arm.urdf",
    "talos_data/robots/talos_full_v2.urdf",
    "kinova_description/robots/kinova.urdf",
];

/// The `robots` folder of example-robot-data, found by the Python oracle.
/// Panics with instructions when the oracles are not installed: these
/// tests must not pass by skipping.
pub fn robots_dir() -> PathBuf {
    let out = Command::new("python3")
        .arg(repo().join("tests/oracle/fk_yourdfpy.py"))
        .arg("robots-dir")
        .output()
        .expect("python3 must be installed to run the oracle tests");
    assert!(
        out.status.success(),
        "the Python oracles are missing: run `pip install -r tests/oracle/requirements.txt` (scripts/test.sh does it)\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// Every public URDF as a path.
pub fn public_urdfs() -> Vec<PathBuf> {
    let dir = robots_dir();
    PUBLIC_URDFS.iter().map(|p| dir.join(p)).collect()
}

/// A minimal valid workcell naming `urdf` (the bundled wg_arm7 by default),
/// for tests that then break one thing.
pub fn minimal_workcell(urdf: &Path) -> String {
    format!(
        r#"cell_frame: world
margins: {{clearance_m: 0.02, release_m: 0.05}}
voxel_grid: {{origin_m: [-1.0, -1.0, 0.0], size_m: [2.0, 2.0, 2.0], resolution_m: 0.05, max_distance_m: 0.3}}
manipulators:
  - name: arm
    urdf: {}
    base_pose: {{xyz_m: [0.0, 0.0, 0.0], rpy_rad: [0.0, 0.0, 0.0]}}
    joint_state_topic: arm/joint_states
    trajectory_topic: arm/planned_trajectory
    priority: 1
    reaction_time_s: 0.03
    joints:
      j1: {{max_decel_radps2: 5.0}}
      j2: {{max_decel_radps2: 5.0}}
      j3: {{max_decel_radps2: 5.0}}
      j4: {{max_decel_radps2: 5.0}}
      j5: {{max_decel_radps2: 5.0}}
      j6: {{max_decel_radps2: 5.0}}
      j7: {{max_decel_radps2: 5.0}}
      finger_a_joint: {{max_decel_mps2: 1.0}}
obstacles:
  - name: post
    pose: {{xyz_m: [0.5, 0.5, 0.5], rpy_rad: [0.0, 0.0, 0.0]}}
    geometry: {{sphere: {{radius_m: 0.1}}}}
"#,
        urdf.display()
    )
}
