//! Posing and kinematics on real URDFs (they need the description layer, so they live outside the core).

use nalgebra::{Matrix3, Rotation3, Unit, Vector3};
use std::path::Path;
use workcell_guard_core::Frame;
use workcell_guard_core::model::kinematics::KinematicsError;
use workcell_guard_core::model::{JointKind, Kinematics, Robot};
use workcell_guard_description::urdf;

const TREE: &str = r#"<robot name="t">
  <link name="base"/><link name="a"/><link name="b"/><link name="c"/><link name="d"/>
  <joint name="ja" type="revolute"><parent link="base"/><child link="a"/>
    <origin xyz="0.1 0.2 0.3" rpy="0.1 0.2 0.3"/><axis xyz="0 0 -1"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="jb" type="prismatic"><parent link="a"/><child link="b"/>
    <origin xyz="0 0 0.5"/><axis xyz="1 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="jc" type="continuous"><parent link="base"/><child link="c"/>
    <origin xyz="0 -0.4 0" rpy="0 1.2 0"/><axis xyz="0.3 0.4 1.2"/></joint>
  <joint name="jd" type="revolute"><parent link="c"/><child link="d"/>
    <axis xyz="0 1 0"/><mimic joint="ja" multiplier="-2" offset="0.25"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
</robot>"#;

/// Isometry products from the root, written independently of `forward`.
fn reference(robot: &Robot, q: &[f64], link: usize) -> Frame {
    let mut chain = vec![];
    let mut l = link;
    while let Some(j) = robot.links[l].parent_joint {
        chain.push(j);
        l = robot.joints[j].parent;
    }
    let mut f = Frame::IDENTITY;
    for &j in chain.iter().rev() {
        let jt = &robot.joints[j];
        let x = match (jt.dof, jt.mimic) {
            (Some(d), _) => q[d],
            (None, Some(m)) => m.multiplier * q[m.dof] + m.offset,
            _ => 0.0,
        };
        let motion = match jt.kind {
            JointKind::Fixed => Frame::IDENTITY,
            JointKind::Prismatic => Frame { rot: Matrix3::identity(), trans: jt.axis * x },
            _ => Frame {
                rot: *Rotation3::from_axis_angle(&Unit::new_normalize(jt.axis), x).matrix(),
                trans: Vector3::zeros(),
            },
        };
        f = f.compose(&jt.origin).compose(&motion);
    }
    f
}

#[test]
fn forward_matches_chain_products_on_a_tree_with_mimic_and_odd_axes() {
    let robot = urdf::load_str(TREE, Path::new("tree.urdf")).unwrap();
    assert_eq!(robot.dof_names, vec!["ja", "jb", "jc"]);
    let k = Kinematics::new(&robot, Frame::IDENTITY);
    let mut out = vec![Frame::IDENTITY; k.link_count()];
    for q in [[0.0, 0.0, 0.0], [0.7, -0.3, 2.5], [-2.9, 0.9, -7.0]] {
        k.forward(&q, &mut out).unwrap();
        for (i, f) in out.iter().enumerate() {
            let r = reference(&robot, &q, i);
            assert!((f.rot - r.rot).norm() < 1e-12 && (f.trans - r.trans).norm() < 1e-12, "link {i}");
        }
    }
}

#[test]
fn forward_rejects_wrong_lengths_instead_of_panicking() {
    let robot = urdf::load_str(TREE, Path::new("tree.urdf")).unwrap();
    let k = Kinematics::new(&robot, Frame::IDENTITY);
    let mut out = vec![Frame::IDENTITY; k.link_count()];
    assert_eq!(k.forward(&[0.0; 2], &mut out), Err(KinematicsError::JointCount { expected: 3, got: 2 }));
    assert_eq!(k.forward(&[0.0; 3], &mut out[..2]), Err(KinematicsError::LinkCount { expected: 5, got: 2 }));
}
