//! Forward kinematics agree with an independent implementation (yourdfpy,
//! from PyPI) to 1e-9 m on published robot descriptions with meshes and
//! mimic joints, and on the bundled sample robots.

use crate::common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use workcell_guard_core::Frame;
use workcell_guard_core::model::Kinematics;
use workcell_guard_core::model::coverage::Rng;
use workcell_guard_description::urdf;

fn oracle(
    urdf: &Path,
    links: &[String],
    configs: &[serde_json::Map<String, serde_json::Value>],
) -> (String, Vec<Vec<Vec<f64>>>) {
    let req = serde_json::json!({ "urdf": urdf, "links": links, "configs": configs });
    let mut child = Command::new("python3")
        .arg(common::repo().join("tests/oracle/fk_yourdfpy.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3");
    child.stdin.take().unwrap().write_all(req.to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "oracle failed on {}: {}", urdf.display(), String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let poses = serde_json::from_value(v["poses"].clone()).unwrap();
    (v["root"].as_str().unwrap().to_string(), poses)
}

fn compare(path: &Path) -> usize {
    let robot = urdf::load(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let kin = Kinematics::new(&robot, Frame::IDENTITY);
    let mut rng = Rng::new(0xF00D ^ robot.links.len() as u64);
    let mut configs = Vec::new();
    let mut qs = Vec::new();
    for _ in 0..12 {
        let mut q = vec![0.0; robot.dof()];
        let mut cfg = serde_json::Map::new();
        for (d, name) in robot.dof_names.iter().enumerate() {
            let lim = robot.dof_joint(d).limits.unwrap();
            let (lo, hi) = (lim.lower.max(-std::f64::consts::PI), lim.upper.min(std::f64::consts::PI));
            q[d] = rng.range(lo, hi);
            cfg.insert(name.clone(), serde_json::json!(q[d]));
        }
        configs.push(cfg);
        qs.push(q);
    }
    let links: Vec<String> = robot.links.iter().map(|l| l.name.clone()).collect();
    let (root, poses) = oracle(path, &links, &configs);
    assert_eq!(root, robot.links[0].name, "root link of {}", path.display());
    let mut frames = vec![Frame::IDENTITY; robot.links.len()];
    let mut worst: f64 = 0.0;
    for (q, expect) in qs.iter().zip(&poses) {
        kin.forward(q, &mut frames).unwrap();
        for (li, f) in frames.iter().enumerate() {
            let ours = f.to_row_major();
            for k in 0..16 {
                worst = worst.max((ours[k] - expect[li][k]).abs());
            }
        }
    }
    assert!(worst <= 1e-9, "{}: largest difference from yourdfpy {worst:e}", path.display());
    robot.links.len()
}

#[test]
fn kinematics_agree_with_yourdfpy_on_published_urdfs() {
    let mut links = 0;
    let mut mimic = 0;
    for p in common::public_urdfs() {
        links += compare(&p);
        mimic += urdf::load(&p).unwrap().joints.iter().filter(|j| j.mimic.is_some()).count();
    }
    assert!(mimic >= 3, "the public set must exercise mimic joints (found {mimic})");
    println!("compared {links} links over {} URDFs, {mimic} mimic joints", common::PUBLIC_URDFS.len());
}

#[test]
fn kinematics_agree_with_yourdfpy_on_bundled_urdfs() {
    for p in common::bundled_urdfs() {
        compare(&p);
    }
}
