//! The command line on the bundled sample cell: `check`, `model --json` and
//! writing, reading and hand-editing a sphere file.

use crate::common;

use std::process::Command;
use workcell_guard_core::Frame;
use workcell_guard_core::model::Kinematics;
use workcell_guard_description::urdf;
use workcell_guard_description::workcell::{self, SphereSource};

fn run(args: &[&str]) -> (bool, String, String) {
    let out =
        Command::new(env!("CARGO_BIN_EXE_workcell_guard")).args(args).current_dir(common::repo()).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

#[test]
fn check_validates_the_sample_cell_and_prints_the_added_volume() {
    let (ok, out, err) = run(&["check", "config/workcell.yaml"]);
    assert!(ok, "{err}");
    for needle in [
        "manipulator `arm_left`",
        "manipulator `arm_right`",
        "spheres add",
        "added volume, all manipulators",
        "platen: 1 × 1 m",
        "obstacles: 6",
        "allowed contacts: 4",
    ] {
        assert!(out.contains(needle), "missing `{needle}` in:\n{out}");
    }
    let wc = workcell::load(&common::repo().join("config/workcell.yaml")).unwrap();
    assert_eq!(wc.manipulators.len(), 2);
    assert_eq!(wc.platen.as_ref().unwrap().units.len(), 2);
    assert!(wc.manipulators.iter().all(|m| m.spheres.fine_count() >= 50));
}

#[test]
fn check_fails_with_the_key_on_a_bad_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bad.yaml");
    std::fs::write(
        &f,
        common::minimal_workcell(&common::repo().join("urdf/wg_arm7.urdf")).replace("priority: 1", "priority: one"),
    )
    .unwrap();
    let (ok, _, err) = run(&["check", f.to_str().unwrap()]);
    assert!(!ok);
    assert!(err.contains("manipulators[0].priority"), "{err}");
}

#[test]
fn model_json_gives_every_link_pose_and_the_posed_spheres() {
    let (ok, out, err) =
        run(&["model", "urdf/wg_arm6.urdf", "--joint", "elbow=0.7", "--joint", "finger_left=0.02", "--json"]);
    assert!(ok, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let robot = urdf::load(&common::repo().join("urdf/wg_arm6.urdf")).unwrap();
    let links = doc["links"].as_array().unwrap();
    assert_eq!(links.len(), robot.links.len());
    let mut q = vec![0.0; robot.dof()];
    q[robot.dof_index("elbow").unwrap()] = 0.7;
    q[robot.dof_index("finger_left").unwrap()] = 0.02;
    let mut frames = vec![Frame::IDENTITY; robot.links.len()];
    Kinematics::new(&robot, Frame::IDENTITY).forward(&q, &mut frames).unwrap();
    for (l, f) in links.iter().zip(&frames) {
        let pose: Vec<f64> = serde_json::from_value(l["pose"].clone()).unwrap();
        assert_eq!(pose.len(), 16);
        for (a, b) in pose.iter().zip(f.to_row_major()) {
            assert!((a - b).abs() < 1e-12);
        }
    }
    // Mirror fingers: the mimic finger moved the opposite way.
    let g = frames[robot.link_index("gripper_base").unwrap()].inverse();
    let x = |name: &str| g.compose(&frames[robot.link_index(name).unwrap()]).trans.x;
    assert!((x("finger_left_link") - 0.025).abs() < 1e-12, "{}", x("finger_left_link"));
    assert!((x("finger_right_link") + 0.025).abs() < 1e-12, "{}", x("finger_right_link"));
    let spheres = doc["spheres"].as_array().unwrap();
    assert!(spheres.len() > 20);
    assert!(spheres.iter().all(|s| s["radius"].as_f64().unwrap() > 0.0 && s["center"].as_array().unwrap().len() == 3));
}

#[test]
fn model_refuses_unknown_and_mimic_joints() {
    let (ok, _, err) = run(&["model", "urdf/wg_arm6.urdf", "--joint", "nope=1"]);
    assert!(!ok && err.contains("`nope` is not a joint of this robot"), "{err}");
    let (ok, _, err) = run(&["model", "urdf/wg_arm6.urdf", "--joint", "finger_right=0.01"]);
    assert!(!ok && err.contains("is fixed or a mimic joint"), "{err}");
    let (ok, _, err) = run(&["model", "urdf/wg_arm6.urdf", "--joint", "elbow=NaN"]);
    assert!(!ok && err.contains("finite"), "{err}");
}

#[test]
fn a_written_sphere_file_reads_back_and_a_hand_edit_that_uncovers_is_warned() {
    let dir = tempfile::tempdir().unwrap();
    let spheres = dir.path().join("arm.yaml");
    let (ok, out, err) =
        run(&["spheres", "config/workcell.yaml", "--robot", "arm_right", "--out", spheres.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(out.contains("wrote"));

    let base = common::minimal_workcell(&common::repo().join("urdf/wg_arm7.urdf"));
    let cell = dir.path().join("cell.yaml");
    std::fs::write(
        &cell,
        base.replace("    joints:\n", &format!("    spheres: {{file: {}}}\n    joints:\n", spheres.display())),
    )
    .unwrap();
    let wc = workcell::load(&cell).unwrap();
    let m = &wc.manipulators[0];
    let reference = workcell::load(&common::repo().join("config/workcell.yaml")).unwrap();
    assert_eq!(m.spheres.fine_count(), reference.manipulators[1].spheres.fine_count());
    match &m.sphere_source {
        SphereSource::File { coverage, .. } => assert!(coverage.iter().all(|c| c.uncovered == 0)),
        other => panic!("expected a file source, got {other:?}"),
    }

    // Shrink every sphere of one link by hand: the check must say so.
    let text = std::fs::read_to_string(&spheres).unwrap();
    let start = text.find("link: link_4").unwrap();
    let end = text[start..].find("- link:").map(|e| start + e).unwrap_or(text.len());
    let shrunk = text[start..end].replace("radius_m: 0.", "radius_m: 0.0");
    std::fs::write(&spheres, format!("{}{}{}", &text[..start], shrunk, &text[end..])).unwrap();
    let wc = workcell::load(&cell).unwrap();
    let link4 = wc.manipulators[0].robot.link_index("link_4").unwrap();
    match &wc.manipulators[0].sphere_source {
        SphereSource::File { coverage, .. } => {
            assert!(coverage[link4].uncovered > 0 && coverage[link4].worst_gap_m > 0.0);
            assert!(coverage.iter().enumerate().all(|(i, c)| i == link4 || c.uncovered == 0));
        }
        other => panic!("expected a file source, got {other:?}"),
    }
    let (ok, out, err) = run(&["check", cell.to_str().unwrap()]);
    assert!(ok);
    assert!(out.contains("WARNING") && err.contains("does not cover"), "{out}\n{err}");
}

/// `spheres --format curobo|srdf`: the same spheres as the package's own
/// file, read back by independent readers (PyYAML, Python's XML parser).
#[test]
fn sphere_models_export_to_curobo_and_srdf_and_read_back_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let path = |f: &str| dir.path().join(f).display().to_string();
    for (format, file) in [("yaml", "own.yaml"), ("curobo", "curobo.yml"), ("srdf", "arm.srdf")] {
        let (ok, _, err) =
            run(&["spheres", "config/workcell.yaml", "--robot", "arm_left", "--format", format, "--out", &path(file)]);
        assert!(ok, "{format}: {err}");
    }
    let script = r#"
import json, sys, yaml, xml.etree.ElementTree as ET
own = yaml.safe_load(open(sys.argv[1]))
cu = yaml.safe_load(open(sys.argv[2]))["collision_spheres"]
sr = ET.parse(sys.argv[3]).getroot()
def own_spheres():
    return {l["link"]: [(tuple(s["center_m"]), s["radius_m"]) for s in l["spheres"]] for l in own["links"]}
def curobo_spheres():
    return {k: [(tuple(s["center"]), s["radius"]) for s in v] for k, v in cu.items()}
def srdf_spheres():
    out = {}
    for a in sr.findall("link_sphere_approximation"):
        out[a.get("link")] = [(tuple(float(x) for x in s.get("center").split()), float(s.get("radius"))) for s in a.findall("sphere")]
    return out
o, c, s = own_spheres(), curobo_spheres(), srdf_spheres()
print(json.dumps({"links": len(o), "spheres": sum(len(v) for v in o.values()), "curobo_same": c == o, "srdf_same": s == o, "robot": sr.get("name")}))
"#;
    let out = Command::new("python3")
        .args(["-c", script, &path("own.yaml"), &path("curobo.yml"), &path("arm.srdf")])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let cell = workcell::load(&common::repo().join("config/workcell.yaml")).unwrap();
    assert_eq!(v["spheres"], cell.manipulators[0].spheres.fine_count(), "{v}");
    assert_eq!((v["curobo_same"].as_bool(), v["srdf_same"].as_bool()), (Some(true), Some(true)), "{v}");
    assert_eq!(v["robot"], cell.manipulators[0].robot.name.as_str());
}

/// The CI's panic-policy check (scripts/panic_policy.py) fails on an
/// unjustified `unwrap` in library code and passes a justified one, one in
/// a `#[cfg(test)]` module, and one in a module file only tests compile.
#[test]
fn the_panic_policy_check_finds_an_unjustified_unwrap_and_passes_justified_and_test_ones() {
    let run = |lib: &str, extra: Option<&str>| {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("crates/core/src");
        std::fs::create_dir_all(&src).unwrap();
        std::fs::write(src.join("lib.rs"), lib).unwrap();
        if let Some(t) = extra {
            std::fs::write(src.join("helpers.rs"), t).unwrap();
        }
        let out = std::process::Command::new("python3")
            .arg(common::repo().join("scripts/panic_policy.py"))
            .arg(dir.path())
            .output()
            .unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stdout).to_string())
    };
    let (ok, text) = run("pub fn f(v: &[u8]) -> u8 {\n    *v.first().unwrap()\n}\n", None);
    assert!(!ok && text.contains("lib.rs:2"), "{text}");
    let (ok, text) = run("pub fn f() {\n    // invariant: never empty\n    let _ = [1].first().unwrap();\n}\n", None);
    assert!(ok && text.contains("1 places"), "{text}");
    let test_mod = "#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {\n        Some(1).unwrap();\n    }\n}\n";
    assert!(run(test_mod, None).0);
    let (ok, _) = run("#[cfg(test)]\nmod helpers;\n", Some("pub fn g() { None::<u8>.expect(\"x\"); }\n"));
    assert!(ok, "a module only tests compile is test code");
    let (ok, text) = run("pub fn f() {\n    let s = \".unwrap()\"; // not a call: .unwrap()\n}\n", None);
    assert!(ok, "{text}");
}
