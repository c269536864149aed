//! # workcell_guard_fuzz
//!
//! One function per input the node reads from outside, each taking
//! arbitrary bytes the way the node would take a file, a command line, a
//! parameter or a message: it must return (accept or refuse), never panic,
//! never hang, never exhaust memory. [`TARGETS`] lists them.
//!
//! The libFuzzer driver (`src/bin/wg_fuzz.rs`, built by `scripts/fuzz.py`
//! with coverage instrumentation) runs one of them, chosen by
//! `WG_FUZZ_TARGET`. The tests run every seed ([`seeds`]) and every input
//! a fuzzer once crashed on (`regressions/<target>/`) through them.
#![warn(missing_docs)]

mod node;
mod seeds;
mod services;

pub use node::{records, replay_on_sample};
pub use seeds::seeds;

use std::path::{Path, PathBuf};
use workcell_guard_description::{mesh, npy, sphere_file, urdf, workcell};
use workcell_guard_ros::args::RosArgs;
use workcell_guard_ros::params::NodeParams;

/// A fuzz target: bytes in, nothing out (a refusal is a result too).
pub type Target = fn(&[u8]);

/// Every target, by name.
pub const TARGETS: &[(&str, Target)] = &[
    ("workcell_yaml", workcell_yaml),
    ("urdf", urdf_xml),
    ("mesh", mesh_file),
    ("sphere_file", sphere_file_yaml),
    ("npy", npy_file),
    ("ros_args", ros_args),
    ("param_file", param_file),
    ("param_update", param_update),
    ("messages", node::messages),
    ("service_requests", services::service_requests),
    ("mcap", node::mcap),
];

/// The target named `name`.
pub fn target(name: &str) -> Option<Target> {
    TARGETS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// The repository's root (the sample cell, URDFs and meshes are read from
/// it).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A workcell YAML, as if it were `config/fuzzed.yaml` (so the sample's
/// relative and `package://` paths resolve and load real URDFs and meshes).
fn workcell_yaml(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = workcell::load_str(text, &repo().join("config/fuzzed.yaml"));
}

/// A URDF, as if it were `urdf/fuzzed.urdf` (meshes of `urdf/meshes/`
/// load), then its spheres fitted when it parses.
fn urdf_xml(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(robot) = urdf::load_str(text, &repo().join("urdf/fuzzed.urdf")) {
        let _ = workcell_guard_core::model::SphereModel::fit(&robot, |_| Default::default());
    }
}

/// A mesh file: the first byte picks the extension (STL, OBJ, COLLADA, or
/// none: by content), the first byte's high bit mirrors it.
fn mesh_file(data: &[u8]) {
    let Some((&pick, bytes)) = data.split_first() else { return };
    let name = ["fuzzed.stl", "fuzzed.obj", "fuzzed.dae", "fuzzed"][usize::from(pick & 3)];
    let scale = if pick & 0x80 != 0 { [-1.0, 1.0, 0.5] } else { [1.0; 3] };
    let _ = mesh::load_bytes(bytes, Path::new(name), scale);
}

/// A sphere file for the sample cell's six-axis arm.
fn sphere_file_yaml(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let robot = &node::sample().cell.manipulators[0].robot;
    let _ = sphere_file::read_str(text, Path::new("fuzzed.spheres.yaml"), robot);
}

/// A `.npy` grid, and the occupancy it gives where it decodes.
fn npy_file(data: &[u8]) {
    if let Ok(g) = npy::decode(data) {
        let _ = g.occupancy();
    }
}

/// A command line (arguments split at NUL bytes): `--ros-args` sections
/// parsed, names remapped, log levels read, `-p` parameters applied
/// (parameter files are the `param_file` target's).
fn ros_args(data: &[u8]) {
    let args = data.split(|b| *b == 0).map(|a| String::from_utf8_lossy(a).into_owned());
    let Ok((mut ros, _rest)) = RosArgs::parse(args) else { return };
    for name in ["joint_states", "~/reset_stop", "/arm_left/stop", "diagnostics"] {
        let _ = ros.remapped("workcell_guard", name);
    }
    let _ = ros.log_filter("workcell_guard");
    ros.params_files.clear();
    let _ = NodeParams::load(&ros, "workcell_guard", "/");
}

/// A parameter file, as if it were `config/fuzzed_params.yaml`, for the
/// node `/workcell_guard`.
fn param_file(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut p = NodeParams::default();
    let _ = p.apply_file(text, &repo().join("config/fuzzed_params.yaml"), "/workcell_guard");
}

/// A parameter update on the running node: the first byte picks the name
/// (one of the node's, a QoS override, or an unknown one), the rest is its
/// value as YAML (as `ros2 param set` sends it), checked against the
/// sample cell and, where accepted, applied and cycled.
fn param_update(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    let names = workcell_guard_ros::params::PARAMS;
    const EXTRA: [&str; 4] = [
        "qos_overrides./arm_left/joint_states.subscription.reliability",
        "qos_overrides./diagnostics.publisher.depth",
        "qos_overrides./arm_right/stop.publisher.durability",
        "no_such_parameter",
    ];
    let i = usize::from(pick) % (names.len() + EXTRA.len());
    let name = names.get(i).map_or_else(|| EXTRA[i - names.len()], |s| s.name);
    let value: serde_json::Value =
        serde_saphyr::from_str(text).unwrap_or_else(|_| serde_json::Value::String(text.to_string()));
    node::param_update(name, &value);
}
