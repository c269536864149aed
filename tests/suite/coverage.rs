//! Sphere models are conservative: no sampled point of any link's geometry
//! (dense surface and interior samples of primitives, every mesh vertex and
//! points over every triangle) lies outside the link's spheres.

use crate::common;

use nalgebra::Point3;
use proptest::prelude::*;
use std::path::PathBuf;
use workcell_guard_core::Frame;
use workcell_guard_core::model::coverage;
use workcell_guard_core::model::geometry::{Collision, Shape, TriMesh};
use workcell_guard_core::model::spheres::fit_link;
use workcell_guard_core::model::{SphereModel, SphereParams};
use workcell_guard_description::urdf;

fn assert_robot_covered(path: &std::path::Path, params: SphereParams) -> (usize, usize) {
    let robot = urdf::load(path).unwrap_or_else(|e| panic!("{e}"));
    let model = SphereModel::fit(&robot, |_| params);
    let mut samples = 0;
    for (l, s) in robot.links.iter().zip(&model.links) {
        let rep = coverage::check(&l.collisions, &s.fine, 40_000.0, 11);
        assert_eq!(
            rep.uncovered,
            0,
            "{}: link `{}`: {} of {} points uncovered (gap {} m)",
            path.display(),
            l.name,
            rep.uncovered,
            rep.samples,
            rep.worst_gap_m
        );
        // The bounding sphere contains every fine sphere.
        if let Some(b) = s.bounding {
            for f in &s.fine {
                assert!(
                    (f.center - b.center).norm() + f.radius <= b.radius + 1e-12,
                    "{}: bounding sphere of `{}`",
                    path.display(),
                    l.name
                );
            }
        }
        samples += rep.samples;
    }
    (samples, model.fine_count())
}

#[test]
fn every_link_of_the_bundled_urdfs_is_covered_at_several_settings() {
    for p in common::bundled_urdfs() {
        for params in [
            SphereParams::default(),
            SphereParams { max_overshoot_m: 0.005, max_spheres: 64 },
            SphereParams { max_overshoot_m: 0.5, max_spheres: 1 },
        ] {
            let (samples, spheres) = assert_robot_covered(&p, params);
            assert!(samples > 1000 && spheres > 0);
        }
    }
}

#[test]
fn every_link_of_the_published_urdfs_is_covered() {
    let mut total = 0;
    for p in common::public_urdfs() {
        total += assert_robot_covered(&p, SphereParams::default()).0;
    }
    println!("{total} sample points, all covered");
}

#[test]
fn the_budget_is_respected_and_overshoot_reported() {
    let robot = urdf::load(&common::repo().join("urdf/wg_arm7.urdf")).unwrap();
    for budget in [1, 4, 16, 40] {
        let model = SphereModel::fit(&robot, |_| SphereParams { max_overshoot_m: 0.001, max_spheres: budget });
        for (l, s) in robot.links.iter().zip(&model.links) {
            assert!(
                s.fine.len() <= budget.max(l.collisions.len()),
                "link {} has {} spheres, budget {budget}",
                l.name,
                s.fine.len()
            );
        }
    }
    // A loose overshoot target is met with few spheres.
    let loose = SphereModel::fit(&robot, |_| SphereParams { max_overshoot_m: 0.2, max_spheres: 64 });
    assert!(loose.links.iter().all(|s| s.fine.is_empty() || s.overshoot_bound_m <= 0.2));
}

fn primitive() -> impl Strategy<Value = Shape> {
    prop_oneof![
        (0.002..0.8f64, 0.002..0.8f64, 0.002..0.8f64).prop_map(|(a, b, c)| Shape::Box { half_extents: [a, b, c] }),
        (0.002..0.5f64, 0.002..1.5f64).prop_map(|(radius, length)| Shape::Cylinder { radius, length }),
        (0.002..0.5f64, 0.002..1.5f64).prop_map(|(radius, length)| Shape::Capsule { radius, length }),
        (0.002..0.5f64).prop_map(|radius| Shape::Sphere { radius }),
    ]
}

fn pose() -> impl Strategy<Value = Frame> {
    (prop::array::uniform3(-0.5..0.5f64), prop::array::uniform3(-3.2..3.2f64))
        .prop_map(|(x, r)| Frame::from_xyz_rpy(x, r))
}

fn soup() -> impl Strategy<Value = Shape> {
    (
        prop::collection::vec(prop::array::uniform3(-0.4..0.4f64), 3..60),
        prop::array::uniform3(prop_oneof![-2.0..-0.2f64, 0.2..2.0f64]),
    )
        .prop_map(|(pts, scale)| {
            let vertices: Vec<Point3<f64>> =
                pts.iter().map(|p| Point3::new(p[0] * scale[0], p[1] * scale[1], p[2] * scale[2])).collect();
            let n = vertices.len() as u32;
            let triangles = (0..n).map(|i| [i, (i * 7 + 1) % n, (i * 13 + 2) % n]).collect();
            Shape::Mesh(TriMesh { path: PathBuf::from("soup"), scale, vertices, triangles })
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn random_primitives_are_covered(
        shapes in prop::collection::vec((primitive(), pose()), 1..4),
        over in 0.002..0.3f64,
        budget in 1usize..48,
    ) {
        let cols: Vec<Collision> = shapes.into_iter().map(|(shape, origin)| Collision { origin, shape }).collect();
        let s = fit_link(&cols, SphereParams { max_overshoot_m: over, max_spheres: budget });
        let rep = coverage::check(&cols, &s.fine, 20_000.0, 3);
        prop_assert_eq!(rep.uncovered, 0, "gap {} m over {} samples", rep.worst_gap_m, rep.samples);
    }

    #[test]
    fn random_triangle_soups_are_covered(mesh in soup(), origin in pose(), over in 0.002..0.3f64, budget in 1usize..48) {
        let cols = vec![Collision { origin, shape: mesh }];
        let s = fit_link(&cols, SphereParams { max_overshoot_m: over, max_spheres: budget });
        let rep = coverage::check(&cols, &s.fine, 20_000.0, 5);
        prop_assert_eq!(rep.uncovered, 0, "gap {} m over {} samples", rep.worst_gap_m, rep.samples);
    }
}
