//! Each bad input gets its own specific error, naming the file, the key and
//! the value: never a panic, never a silent default.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use workcell_guard_description::resolve::ResolveError;
use workcell_guard_description::sphere_file::{self, SphereFileError};
use workcell_guard_description::urdf::{self, ModelError};
use workcell_guard_description::workcell::{self, ConfigError};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    fs::write(&p, text).unwrap();
    p
}

fn arm7() -> PathBuf {
    common::repo().join("urdf/wg_arm7.urdf")
}

/// Loads `yaml` (written to a temp file) and returns the error.
fn workcell_error(yaml: &str) -> (ConfigError, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "cell.yaml", yaml);
    let e = workcell::load(&file).expect_err("must be refused");
    (e, file)
}

fn invalid_key(e: &ConfigError) -> (&str, &str) {
    match e {
        ConfigError::Invalid { key, value, .. } => (key, value),
        other => panic!("expected Invalid, got {other:?}"),
    }
}

#[test]
fn the_minimal_workcell_is_valid() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "cell.yaml", &common::minimal_workcell(&arm7()));
    let wc = workcell::load(&f).unwrap();
    assert_eq!(wc.manipulators[0].max_decel.len(), 8);
    assert_eq!(wc.voxel_grid.dims, [40, 40, 40]);
}

#[test]
fn a_missing_mesh_file_names_the_link_and_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "r.urdf",
        r#"<robot name="r"><link name="base"><collision><geometry><mesh filename="meshes/gone.STL"/></geometry></collision></link></robot>"#,
    );
    match urdf::load(&f) {
        Err(ModelError::Resolve { link, source: ResolveError::Missing { path, .. }, .. }) => {
            assert_eq!(link, "base");
            assert!(path.ends_with("meshes/gone.STL"));
        }
        other => panic!("expected a missing-mesh error, got {other:?}"),
    }
}

#[test]
fn a_joint_named_by_the_workcell_but_absent_from_the_urdf_is_refused() {
    let yaml = common::minimal_workcell(&arm7()).replace(
        "      j7: {max_decel_radps2: 5.0}\n",
        "      j7: {max_decel_radps2: 5.0}\n      elbow_9: {max_decel_radps2: 5.0}\n",
    );
    let (e, file) = workcell_error(&yaml);
    let (key, value) = invalid_key(&e);
    assert_eq!(key, "manipulators[0].joints.elbow_9");
    assert!(value.contains("elbow_9"));
    let msg = e.to_string();
    assert!(msg.contains(&file.display().to_string()) && msg.contains("has no joint of this name"), "{msg}");
}

#[test]
fn an_actuated_joint_without_a_deceleration_is_refused() {
    let yaml = common::minimal_workcell(&arm7()).replace("      j4: {max_decel_radps2: 5.0}\n", "");
    let (e, _) = workcell_error(&yaml);
    assert!(e.to_string().contains("actuated joint `j4` has no entry"), "{e}");
    // The wrong unit for the joint's kind is refused too.
    let yaml = common::minimal_workcell(&arm7())
        .replace("finger_a_joint: {max_decel_mps2: 1.0}", "finger_a_joint: {max_decel_radps2: 1.0}");
    let (e, _) = workcell_error(&yaml);
    assert!(e.to_string().contains("give `max_decel_mps2`"), "{e}");
}

#[test]
fn a_kinematic_loop_is_refused() {
    let xml = r#"<robot name="loop">
      <link name="a"/><link name="b"/><link name="c"/>
      <joint name="ab" type="fixed"><parent link="a"/><child link="b"/></joint>
      <joint name="bc" type="fixed"><parent link="b"/><child link="c"/></joint>
      <joint name="ac" type="fixed"><parent link="a"/><child link="c"/></joint>
    </robot>"#;
    match urdf::load_str(xml, Path::new("loop.urdf")) {
        Err(ModelError::KinematicLoop { link, joints, .. }) => {
            assert_eq!(link, "c");
            assert_eq!(joints, vec!["bc", "ac"]);
        }
        other => panic!("expected KinematicLoop, got {other:?}"),
    }
    // A cycle with no root at all.
    let ring = r#"<robot name="ring"><link name="a"/><link name="b"/>
      <joint name="ab" type="fixed"><parent link="a"/><child link="b"/></joint>
      <joint name="ba" type="fixed"><parent link="b"/><child link="a"/></joint></robot>"#;
    assert!(matches!(urdf::load_str(ring, Path::new("ring.urdf")), Err(ModelError::KinematicLoop { .. })));
}

#[test]
fn two_roots_are_refused() {
    let xml = r#"<robot name="two"><link name="a"/><link name="b"/><link name="c"/>
      <joint name="ab" type="fixed"><parent link="a"/><child link="b"/></joint></robot>"#;
    match urdf::load_str(xml, Path::new("two.urdf")) {
        Err(ModelError::MultipleRoots { roots, .. }) => assert_eq!(roots, vec!["a", "c"]),
        other => panic!("expected MultipleRoots, got {other:?}"),
    }
}

#[test]
fn nan_in_a_pose_is_refused_in_the_workcell_and_in_the_urdf() {
    let yaml = common::minimal_workcell(&arm7())
        .replace("base_pose: {xyz_m: [0.0, 0.0, 0.0]", "base_pose: {xyz_m: [.nan, 0.0, 0.0]");
    let (e, _) = workcell_error(&yaml);
    assert_eq!(invalid_key(&e).0, "manipulators[0].base_pose.xyz_m");

    let yaml = common::minimal_workcell(&arm7())
        .replace("rpy_rad: [0.0, 0.0, 0.0]}}\n    geometry", "rpy_rad: [0.0, .inf, 0.0]}}\n    geometry");
    let yaml = yaml.replace(
        "pose: {xyz_m: [0.5, 0.5, 0.5], rpy_rad: [0.0, 0.0, 0.0]}",
        "pose: {xyz_m: [0.5, 0.5, 0.5], rpy_rad: [0.0, .inf, 0.0]}",
    );
    let (e, _) = workcell_error(&yaml);
    assert_eq!(invalid_key(&e).0, "obstacles[0].pose.rpy_rad");

    let xml = r#"<robot name="n"><link name="a"/><link name="b"/>
      <joint name="ab" type="fixed"><origin xyz="0 NaN 0"/><parent link="a"/><child link="b"/></joint></robot>"#;
    match urdf::load_str(xml, Path::new("n.urdf")) {
        Err(ModelError::BadValue { what, .. }) => assert_eq!(what, "joint `ab` origin xyz"),
        other => panic!("expected BadValue, got {other:?}"),
    }
}

#[test]
fn a_negative_radius_is_refused_everywhere_it_can_be_written() {
    let yaml = common::minimal_workcell(&arm7()).replace("sphere: {radius_m: 0.1}", "sphere: {radius_m: -0.1}");
    let (e, _) = workcell_error(&yaml);
    assert_eq!(invalid_key(&e), ("obstacles[0].geometry.sphere.radius_m", "-0.1"));

    let xml = r#"<robot name="r"><link name="a"><collision><geometry><cylinder radius="-0.05" length="0.2"/></geometry></collision></link></robot>"#;
    match urdf::load_str(xml, Path::new("r.urdf")) {
        Err(ModelError::BadValue { what, value, .. }) => {
            assert_eq!(what, "link `a` collision cylinder radius");
            assert_eq!(value, "-0.05");
        }
        other => panic!("expected BadValue, got {other:?}"),
    }

    let robot = urdf::load(&arm7()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "s.yaml",
        "robot: wg_arm7\nlinks:\n  - link: link_2\n    spheres:\n      - {center_m: [0.0, 0.0, 0.1], radius_m: -0.02}\n",
    );
    match sphere_file::read(&f, &robot) {
        Err(SphereFileError::Invalid { key, value, .. }) => {
            assert_eq!(key, "links[0].spheres[0].radius_m");
            assert_eq!(value, "-0.02");
        }
        other => panic!("expected Invalid, got {other:?}"),
    }
}

#[test]
fn an_unknown_key_is_refused_with_its_path_and_line() {
    let yaml = common::minimal_workcell(&arm7()).replace("    priority: 1\n", "    priority: 1\n    colour: red\n");
    let (e, _) = workcell_error(&yaml);
    match &e {
        ConfigError::Parse { key, error, .. } => {
            assert_eq!(key, "manipulators[0].colour");
            assert_eq!(error.key, *key);
            assert_eq!(error.line, Some(11), "{error}");
            assert!(error.column.is_some(), "{error}");
            assert!(error.message.contains("unknown field `colour`"), "{error}");
        }
        other => panic!("expected Parse, got {other:?}"),
    }
    // And at the top level.
    let (e, _) = workcell_error(&format!("{}speed_limit: 3\n", common::minimal_workcell(&arm7())));
    assert!(matches!(&e, ConfigError::Parse { key, .. } if key == "speed_limit"), "{e:?}");
}

#[test]
fn missing_safety_values_have_no_default() {
    let yaml = common::minimal_workcell(&arm7()).replace("    reaction_time_s: 0.03\n", "");
    let (e, _) = workcell_error(&yaml);
    assert!(e.to_string().contains("missing field `reaction_time_s`"), "{e}");
    let yaml = common::minimal_workcell(&arm7())
        .replace("margins: {clearance_m: 0.02, release_m: 0.05}", "margins: {clearance_m: 0.02}");
    let (e, _) = workcell_error(&yaml);
    assert!(e.to_string().contains("missing field `release_m`"), "{e}");
}

#[test]
fn cross_checks_are_enforced() {
    // Release margin below the clearance.
    let (e, _) = workcell_error(&common::minimal_workcell(&arm7()).replace("release_m: 0.05", "release_m: 0.01"));
    assert_eq!(invalid_key(&e).0, "margins.release_m");
    // A grid of a billion voxels is a unit mistake.
    let (e, _) =
        workcell_error(&common::minimal_workcell(&arm7()).replace("resolution_m: 0.05", "resolution_m: 0.0001"));
    assert!(e.to_string().contains("voxels"), "{e}");
    // An allowed contact naming a link that does not exist.
    let (e, _) =
        workcell_error(&format!("{}allowed_contacts:\n  - [arm/no_link, post]\n", common::minimal_workcell(&arm7())));
    assert_eq!(invalid_key(&e).0, "allowed_contacts[0][0]");
    // Names are unique across the cell.
    let (e, _) = workcell_error(&common::minimal_workcell(&arm7()).replace("  - name: post", "  - name: arm"));
    assert_eq!(invalid_key(&e), ("obstacles[0].name", "\"arm\""));
    // A missing URDF names the key.
    let (e, _) = workcell_error(&common::minimal_workcell(Path::new("/nonexistent/robot.urdf")));
    assert_eq!(invalid_key(&e).0, "manipulators[0].urdf");
}

#[test]
fn a_urdf_error_inside_a_workcell_names_the_workcell_key() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write(dir.path(), "bad.urdf", r#"<robot name="b"><link name="a"/><link name="c"/></robot>"#);
    let f = write(dir.path(), "cell.yaml", &common::minimal_workcell(&bad));
    match workcell::load(&f) {
        Err(ConfigError::Model { key, source, .. }) => {
            assert_eq!(key, "manipulators[0].urdf");
            assert!(matches!(*source, ModelError::MultipleRoots { .. }), "{source:?}");
        }
        other => panic!("expected Model error, got {other:?}"),
    }
}

#[test]
fn unsupported_and_broken_mimic_joints_are_refused() {
    let floating = r#"<robot name="f"><link name="a"/><link name="b"/>
      <joint name="fl" type="floating"><parent link="a"/><child link="b"/></joint></robot>"#;
    assert!(
        matches!(urdf::load_str(floating, Path::new("f.urdf")), Err(ModelError::UnsupportedJoint { ref joint, .. }) if joint == "fl")
    );
    let mimic = r#"<robot name="m"><link name="a"/><link name="b"/>
      <joint name="ab" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>
        <limit lower="-1" upper="1" effort="1" velocity="1"/><mimic joint="ghost"/></joint></robot>"#;
    assert!(
        matches!(urdf::load_str(mimic, Path::new("m.urdf")), Err(ModelError::Mimic { ref joint, .. }) if joint == "ab")
    );
}

const PLATEN: &str = r#"platen:
  surface:
    pose: {xyz_m: [0.0, 0.0, 0.8], rpy_rad: [0.0, 0.0, 0.0]}
    size_xy_m: [1.0, 1.0]
    cell_m: 0.001
  units:
    - name: mover
      footprint_xy_m: [[-0.05, -0.05], [0.05, -0.05], [0.05, 0.05], [-0.05, 0.05]]
      umbilical: {anchor_xy_m: [0.0, 0.5], width_m: 0.02}
      max_speed_mps: 0.5
      initial_pose: {x_m: 0.3, y_m: 0.5, theta_rad: 0.0}
  obstacles:
    - name: plate
      polygon_xy_m: [[0.6, 0.6], [0.7, 0.6], [0.7, 0.7], [0.6, 0.7]]
  allocation: {retry_after_s: 1.0}
"#;

fn with_platen(edit: impl Fn(&str) -> String) -> String {
    common::minimal_workcell(&arm7()) + &edit(PLATEN)
}

#[test]
fn a_valid_platen_section_loads_with_its_cords_obstacles_and_settings() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "cell.yaml", &with_platen(|p| p.to_string()));
    let wc = workcell::load(&f).unwrap();
    let p = wc.platen.unwrap();
    assert_eq!(p.units[0].umbilical.as_ref().unwrap().width_m, 0.02);
    assert_eq!(p.obstacles[0].name, "plate");
    assert_eq!(p.allocation.retry_after_s, 1.0);
    assert_eq!(p.allocation.pose_timeout_s, 0.1, "unset settings take the documented defaults");
}

#[test]
fn a_cell_of_platen_units_alone_loads_and_a_cell_with_nothing_to_guard_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let head = "cell_frame: world\nmargins: {clearance_m: 0.005, release_m: 0.01}\n";
    // Units alone: no manipulators, no voxel grid.
    let wc = workcell::load(&write(dir.path(), "units.yaml", &format!("{head}{PLATEN}"))).unwrap();
    assert!(wc.manipulators.is_empty());
    assert_eq!(wc.platen.as_ref().unwrap().units.len(), 1);
    assert_eq!(wc.voxel_grid.dims, [1, 1, 1]);
    // The bundled sample of such a cell loads too.
    let wc = workcell::load(&common::repo().join("config/platen_cell.yaml")).unwrap();
    assert_eq!((wc.manipulators.len(), wc.platen.unwrap().units.len()), (0, 3));
    // Nothing to guard.
    let (e, _) = workcell_error(head);
    assert_eq!(invalid_key(&e).0, "manipulators", "{e}");
    assert!(e.to_string().contains("nothing to guard"), "{e}");
    // Manipulators need the grid their field is built on.
    let arm = common::minimal_workcell(&arm7());
    let start = arm.find("voxel_grid:").unwrap();
    let end = start + arm[start..].find('\n').unwrap() + 1;
    let (e, _) = workcell_error(&format!("{}{}", &arm[..start], &arm[end..]));
    assert_eq!(invalid_key(&e).0, "voxel_grid", "{e}");
    assert!(e.to_string().contains("distance field"), "{e}");
}

#[test]
fn bad_platen_cords_obstacles_and_settings_are_refused_by_key() {
    let cases: [(&str, &str, &str, &str); 5] = [
        ("width_m: 0.02", "width_m: 0.0", "platen.units[0].umbilical.width_m", "positive"),
        (
            "anchor_xy_m: [0.0, 0.5]",
            "anchor_xy_m: [1.5, 0.5]",
            "platen.units[0].umbilical.anchor_xy_m",
            "outside the surface",
        ),
        (
            "[[0.6, 0.6], [0.7, 0.6], [0.7, 0.7], [0.6, 0.7]]",
            "[[0.6, 0.6], [0.9, 0.6], [0.9, 0.8], [0.75, 0.5], [0.6, 0.8]]",
            "platen.obstacles[0].polygon_xy_m",
            "cross",
        ),
        ("retry_after_s: 1.0", "retry_after_s: -1.0", "platen.allocation.retry_after_s", "zero or positive"),
        ("retry_after_s: 1.0", "pose_timeout_s: .nan", "platen.allocation.pose_timeout_s", "positive"),
    ];
    for (from, to, key, problem) in cases {
        let yaml = with_platen(|p| p.replace(from, to));
        let (e, _) = workcell_error(&yaml);
        let (k, _) = invalid_key(&e);
        assert_eq!(k, key, "{e}");
        assert!(e.to_string().contains(problem), "{e}");
    }
    // An unknown key in the allocation section is refused, not ignored.
    let yaml = with_platen(|p| p.replace("retry_after_s: 1.0", "retry_after: 1.0"));
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "cell.yaml", &yaml);
    let e = workcell::load(&f).expect_err("unknown key");
    assert!(e.to_string().contains("retry_after"), "{e}");
}

#[test]
fn acceleration_limits_stop_modes_and_the_fit_window_are_checked() {
    let base = common::minimal_workcell(&arm7());
    let dir = tempfile::tempdir().unwrap();
    // Defaults: accelerations bounded by the decelerations, braking on the path.
    let wc = workcell::load(&write(dir.path(), "ok.yaml", &base)).unwrap();
    assert_eq!(wc.manipulators[0].max_accel, wc.manipulators[0].max_decel);
    assert_eq!(wc.manipulators[0].stop_mode, workcell_guard_core::forecast::StopMode::Synchronized);
    assert_eq!(wc.guard.velocity_fit_window_s, 0.05);
    let set = base.replace("j1: {max_decel_radps2: 5.0}", "j1: {max_decel_radps2: 5.0, max_accel_radps2: 9.0}");
    let set = set.replace("priority: 1", "priority: 1\n    stop_mode: independent");
    let wc = workcell::load(&write(dir.path(), "set.yaml", &set)).unwrap();
    assert_eq!(wc.manipulators[0].max_accel[0], 9.0);
    assert_eq!(wc.manipulators[0].stop_mode, workcell_guard_core::forecast::StopMode::Independent);
    // Refusals name the key and the value.
    let (e, _) = workcell_error(
        &base.replace("j1: {max_decel_radps2: 5.0}", "j1: {max_decel_radps2: 5.0, max_accel_radps2: -1.0}"),
    );
    assert_eq!(invalid_key(&e), ("manipulators[0].joints.j1.max_accel_radps2", "-1.0"));
    let (e, _) = workcell_error(
        &base.replace("j1: {max_decel_radps2: 5.0}", "j1: {max_decel_radps2: 5.0, max_accel_mps2: 1.0}"),
    );
    assert!(e.to_string().contains("max_accel_radps2"), "{e}");
    let (e, _) = workcell_error(&base.replace("priority: 1", "priority: 1\n    stop_mode: whenever"));
    assert!(e.to_string().contains("stop_mode") && e.to_string().contains("synchronized"), "{e}");
    let (e, _) = workcell_error(&format!("{base}guard: {{velocity_fit_window_s: 2.0}}\n"));
    assert_eq!(invalid_key(&e).0, "guard.velocity_fit_window_s");
}

#[test]
fn the_finer_sampling_near_something_is_checked_against_the_cap() {
    let base = common::minimal_workcell(&arm7());
    let dir = tempfile::tempdir().unwrap();
    // Defaults: 64, and 512 near something.
    let wc = workcell::load(&write(dir.path(), "ok.yaml", &base)).unwrap();
    assert_eq!((wc.guard.max_path_samples, wc.guard.near_path_samples), (64, 512));
    // A cap above the default near count raises it with the cap.
    let wc =
        workcell::load(&write(dir.path(), "cap.yaml", &format!("{base}guard: {{max_path_samples: 700}}\n"))).unwrap();
    assert_eq!((wc.guard.max_path_samples, wc.guard.near_path_samples), (700, 700));
    let wc = workcell::load(&write(
        dir.path(),
        "both.yaml",
        &format!("{base}guard: {{max_path_samples: 16, near_path_samples: 128}}\n"),
    ))
    .unwrap();
    assert_eq!((wc.guard.max_path_samples, wc.guard.near_path_samples), (16, 128));
    // Fewer near something than the cap is refused, naming both.
    let (e, _) = workcell_error(&format!("{base}guard: {{max_path_samples: 64, near_path_samples: 32}}\n"));
    assert_eq!(invalid_key(&e), ("guard.near_path_samples", "32"));
    assert!(e.to_string().contains("guard.max_path_samples (64)"), "{e}");
    let (e, _) = workcell_error(&format!("{base}guard: {{near_path_samples: 5000}}\n"));
    assert_eq!(invalid_key(&e).0, "guard.near_path_samples");
}

#[test]
fn speed_scaling_types_and_moveit_actions_are_checked() {
    use workcell_guard_core::cell::ScalingMessage;
    let base = common::minimal_workcell(&arm7());
    let dir = tempfile::tempdir().unwrap();
    let wc = workcell::load(&write(dir.path(), "ok.yaml", &base)).unwrap();
    assert_eq!(wc.manipulators[0].topics.speed_scaling_type, ScalingMessage::SpeedScalingFactor, "the default");
    assert!(wc.manipulators[0].topics.moveit_actions.is_empty());
    let set = base.replace(
        "priority: 1",
        "priority: 1\n    speed_scaling_topic: s\n    speed_scaling_type: std_msgs/msg/Float64\n    moveit_actions: [execute_trajectory, /move_action]",
    );
    let wc = workcell::load(&write(dir.path(), "set.yaml", &set)).unwrap();
    assert_eq!(wc.manipulators[0].topics.speed_scaling_type, ScalingMessage::Float64);
    assert_eq!(wc.manipulators[0].topics.moveit_actions, ["execute_trajectory", "/move_action"]);
    let (e, _) = workcell_error(&base.replace("priority: 1", "priority: 1\n    speed_scaling_type: std_msgs/Float64"));
    assert!(
        e.to_string().contains("speed_scaling_type") && e.to_string().contains("control_msgs/msg/SpeedScalingFactor"),
        "{e}"
    );
    let (e, _) = workcell_error(&base.replace("priority: 1", "priority: 1\n    moveit_actions: [a, a]"));
    assert_eq!(invalid_key(&e), ("manipulators[0].moveit_actions[1]", "\"a\""));
    let (e, _) = workcell_error(&base.replace("priority: 1", "priority: 1\n    moveit_actions: [\"bad name\"]"));
    assert_eq!(invalid_key(&e).0, "manipulators[0].moveit_actions[0]");
}
