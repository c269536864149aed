//! The ROS-facing files: launch files (Python and XML twin) declare the
//! documented arguments and start our executable; the rviz configuration
//! shows the markers in the sample cell's frame; and the command line a
//! launch produces (node name, namespace, the parameter file, the
//! use_sim_time override as launch_ros writes it) is read as intended.

use crate::common;

use std::process::Command;
use workcell_guard_description::workcell;
use workcell_guard_ros::args::RosArgs;
use workcell_guard_ros::params::NodeParams;

fn python(code: &str, arg: &std::path::Path) -> String {
    let out = Command::new("python3").arg("-c").arg(code).arg(arg).output().expect("python3 runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn launch_files_declare_the_arguments_and_start_the_node() {
    let repo = common::repo();
    // The Python launch file, read as Python (not run: no ROS here).
    let py = python(
        r#"
import ast, sys
tree = ast.parse(open(sys.argv[1]).read())
args, execs = [], []
for n in ast.walk(tree):
    if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "DeclareLaunchArgument":
        args.append(n.args[0].value)
    if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "Node":
        for k in n.keywords:
            if k.arg == "executable":
                execs.append(k.value.value)
print(" ".join(sorted(args)))
print(" ".join(execs))
"#,
        &repo.join("launch/workcell_guard.launch.py"),
    );
    let mut lines = py.lines();
    assert_eq!(lines.next().unwrap(), "namespace params_file rviz use_sim_time");
    assert_eq!(lines.next().unwrap(), "workcell_guard rviz2");
    let xml = python(
        r#"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
print(" ".join(sorted(a.get("name") for a in root.findall("arg"))))
print(" ".join(n.get("exec") for n in root.findall("node")))
"#,
        &repo.join("launch/workcell_guard.launch.xml"),
    );
    let mut lines = xml.lines();
    assert_eq!(lines.next().unwrap(), "namespace params_file rviz use_sim_time");
    assert_eq!(lines.next().unwrap(), "workcell_guard rviz2");
}

#[test]
fn rviz_shows_the_markers_in_the_cell_frame() {
    let repo = common::repo();
    let text = std::fs::read_to_string(repo.join("config/workcell_guard.rviz")).unwrap();
    let v: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    let vm = &v["Visualization Manager"];
    let cell = workcell::load(&repo.join("config/workcell.yaml")).unwrap();
    assert_eq!(vm["Global Options"]["Fixed Frame"], cell.cell_frame.as_str());
    let displays = vm["Displays"].as_array().unwrap();
    let m = displays.iter().find(|d| d["Class"] == "rviz_default_plugins/MarkerArray").expect("a MarkerArray display");
    assert_eq!(m["Topic"]["Value"], "markers");
    assert_eq!(m["Enabled"], true);
}

#[test]
fn a_launch_command_line_is_read_as_launch_means_it() {
    let repo = common::repo();
    let dir = tempfile::tempdir().unwrap();
    // launch_ros writes a parameter dictionary as a file under `/**`.
    let sim = dir.path().join("launch_params_x");
    std::fs::write(&sim, "/**:\n  ros__parameters:\n    use_sim_time: true\n").unwrap();
    let params = repo.join("config/workcell_guard.yaml");
    let argv = [
        "workcell_guard",
        "--ros-args",
        "-r",
        "__node:=workcell_guard",
        "-r",
        "__ns:=/cell_a",
        "--params-file",
        params.to_str().unwrap(),
        "--params-file",
        sim.to_str().unwrap(),
        "-p",
        "rate_hz:=250",
    ];
    let (ros, rest) = RosArgs::parse(argv).unwrap();
    assert_eq!(rest, ["workcell_guard"]);
    assert_eq!(ros.namespace.as_deref(), Some("/cell_a"));
    let p = NodeParams::load(&ros, "workcell_guard", "/cell_a").unwrap();
    assert!(p.use_sim_time);
    assert_eq!(p.rate_hz, 250.0);
    let wf = p.workcell_file.unwrap();
    assert_eq!(wf.canonicalize().unwrap(), repo.join("config/workcell.yaml").canonicalize().unwrap());
    assert_eq!(
        workcell_guard_ros::topics::resolve_name(&ros, "workcell_guard", "/cell_a", "arm_left/joint_states"),
        "/cell_a/arm_left/joint_states"
    );
}

/// The one topic table both transports make their endpoints from: every
/// robot's and unit's topics, each name once per direction, latched where a
/// late joiner needs the latest, and the recorded topics a subset of it.
#[test]
fn the_topic_table_names_every_topic_of_the_sample_cell_once_with_its_qos() {
    use workcell_guard_ros::topics::{QosClass, Role, Topics, table};
    let repo = common::repo();
    let cell = workcell::load(&repo.join("config/workcell.yaml")).unwrap();
    let rows = table(&cell, false);
    let mut seen = std::collections::HashSet::new();
    for row in &rows {
        assert!(seen.insert((row.name.clone(), row.role.is_input())), "{} twice the same way", row.name);
        let latched = matches!(
            row.role,
            Role::Stop(_)
                | Role::ArmGrant(_)
                | Role::State(_)
                | Role::Speed(_, workcell::ScalingMessage::SpeedScalingFactor)
        );
        assert_eq!(row.qos == QosClass::Latched, latched, "{row:?}");
        if matches!(row.role, Role::JointState(_) | Role::Points | Role::PlatenPose(_)) {
            assert_eq!(row.qos, QosClass::Sensor, "{row:?}");
        }
    }
    for (r, m) in cell.manipulators.iter().enumerate() {
        for role in [Role::JointState(r), Role::Plan(r), Role::Stop(r), Role::ArmGrant(r), Role::State(r)] {
            assert_eq!(rows.iter().filter(|row| row.role == role).count(), 1, "{} has no {role:?}", m.name);
        }
    }
    for role in [Role::Points, Role::Diagnostics, Role::Markers] {
        assert_eq!(rows.iter().filter(|row| row.role == role).count(), 1, "{role:?} once");
    }
    let units = cell.platen.iter().flat_map(|p| &p.units).count();
    assert_eq!(rows.iter().filter(|row| matches!(row.role, Role::PlatenGrant(_))).count(), units);
    assert!(rows.iter().any(|row| row.role == Role::Display(0)), "the sample cell names a MoveIt display topic");
    assert!(!rows.iter().any(|row| row.role == Role::Clock), "/clock only with use_sim_time");
    assert!(table(&cell, true).iter().any(|row| row.role == Role::Clock && row.name == "/clock"));
    let recorded = Topics::new(&RosArgs::default(), &cell);
    for (name, role) in &recorded.all {
        assert!(role.is_recorded(), "{name}");
        assert!(*role == Role::Cycle || rows.iter().any(|row| row.role == *role && name.ends_with(&row.name)));
    }
}
