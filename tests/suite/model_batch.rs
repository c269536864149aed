//! Posing and kinematics on real URDFs (they need the description layer, so they live outside the core).

use std::path::Path;
use workcell_guard_core::Frame;
use workcell_guard_core::model::coverage::Rng;
use workcell_guard_core::model::kinematics::KinematicsError;
use workcell_guard_core::model::{BATCH, SphereModel, SphereParams, SpherePoser};
use workcell_guard_description::urdf;

#[test]
fn a_batch_poses_each_configuration_as_the_single_pose_does() {
    for name in ["wg_arm6.urdf", "wg_arm7.urdf", "wg_platen.urdf"] {
        let robot = urdf::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("urdf").join(name)).unwrap();
        let model = SphereModel::fit(&robot, |_| SphereParams::default());
        let poser = SpherePoser::new(&robot, &model, Frame::from_xyz_rpy([0.3, -0.2, 0.6], [0.1, 0.2, 2.0]));
        let mut single = poser.posed();
        let mut batch = poser.posed_batch();
        let mut narrow = poser.posed_batch();
        let mut rng = Rng::new(9);
        for round in 0..20 {
            // Angles up to ±400 rad on the last round exercise every quadrant and the fallback.
            let span = if round == 19 { 2.0e5 } else { 6.0 };
            let qs: Vec<Vec<f64>> =
                (0..BATCH).map(|_| (0..robot.dof()).map(|_| rng.range(-span, span)).collect()).collect();
            let refs: [&[f64]; BATCH] = std::array::from_fn(|b| qs[b].as_slice());
            poser.pose_batch(&refs, &mut batch).unwrap();
            // The narrower path (no AVX-512 pairs) gives the same spheres and boxes.
            poser.pose_batch_narrow(&refs, &mut narrow).unwrap();
            for (u, v) in [(&batch.x, &narrow.x), (&batch.y, &narrow.y), (&batch.z, &narrow.z)] {
                assert!(u.iter().zip(v).all(|(a, b)| (a - b).abs() <= 1e-6 * a.abs().max(1.0)), "{name}");
            }
            for (u, v) in batch.boxes.iter().zip(&narrow.boxes) {
                let close = |a: &f32, b: &f32| a == b || (a - b).abs() <= 1e-6 * a.abs().max(1.0);
                assert!(u.iter().flatten().zip(v.iter().flatten()).all(|(a, b)| close(a, b)), "{name}");
            }
            for (b, q) in qs.iter().enumerate() {
                poser.pose(q, &mut single).unwrap();
                for s in 0..single.len() {
                    let d = [
                        batch.x[s * BATCH + b] - single.x[s],
                        batch.y[s * BATCH + b] - single.y[s],
                        batch.z[s * BATCH + b] - single.z[s],
                    ];
                    // To f32 rounding: the batch fuses its products, the single
                    // pose does not (the last round reaches 10^5 m on sliders).
                    let scale = single.x[s].abs().max(single.y[s].abs()).max(single.z[s].abs());
                    assert!(d.iter().all(|v| v.abs() < 2e-6 + 4e-7 * scale), "{name}: slot {s} lane {b}: {d:?}");
                }
            }
            // Each link's box is the least one around its spheres in every lane.
            let (r, link) = (&batch.r, &batch.link);
            for (l, bx) in batch.boxes.iter().enumerate() {
                // Lanes index six arrays at once.
                #[allow(clippy::needless_range_loop)]
                for b in 0..BATCH {
                    let mut want = [
                        f32::INFINITY,
                        f32::INFINITY,
                        f32::INFINITY,
                        f32::NEG_INFINITY,
                        f32::NEG_INFINITY,
                        f32::NEG_INFINITY,
                    ];
                    for s in (0..r.len()).filter(|&s| link[s] as usize == l) {
                        let c = [batch.x[s * BATCH + b], batch.y[s * BATCH + b], batch.z[s * BATCH + b]];
                        for k in 0..3 {
                            want[k] = want[k].min(c[k] - r[s]);
                            want[3 + k] = want[3 + k].max(c[k] + r[s]);
                        }
                    }
                    let got: [f32; 6] = std::array::from_fn(|k| bx[k][b]);
                    assert_eq!(got, want, "{name}: link {l} lane {b}");
                }
            }
        }
    }
}

#[test]
fn a_batch_with_a_wrong_length_is_refused() {
    let robot = urdf::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("urdf/wg_arm7.urdf")).unwrap();
    let model = SphereModel::fit(&robot, |_| SphereParams::default());
    let poser = SpherePoser::new(&robot, &model, Frame::IDENTITY);
    let mut out = poser.posed_batch();
    let good = vec![0.0; robot.dof()];
    let bad = vec![0.0; 2];
    let mut refs: [&[f64]; BATCH] = [good.as_slice(); BATCH];
    refs[5] = &bad;
    assert!(matches!(poser.pose_batch(&refs, &mut out), Err(KinematicsError::JointCount { got: 2, .. })));
}
