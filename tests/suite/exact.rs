//! The sphere level never claims two links are farther apart than their
//! exact geometry is (parry3d, level 3): for random configurations of the
//! sample cell's two arms, the smallest sphere-pair gap between two links is
//! at most the exact distance between them.

use crate::common;

use workcell_guard_core::Frame;
use workcell_guard_core::model::coverage::Rng;
use workcell_guard_core::model::exact;
use workcell_guard_core::model::{Kinematics, Robot};
use workcell_guard_description::workcell;

fn random_q(robot: &Robot, rng: &mut Rng) -> Vec<f64> {
    (0..robot.dof())
        .map(|d| {
            let l = robot.dof_joint(d).limits.unwrap();
            rng.range(l.lower.max(-3.1), l.upper.min(3.1))
        })
        .collect()
}

#[test]
fn sphere_gaps_never_exceed_exact_link_distances() {
    let wc = workcell::load(&common::repo().join("config/workcell.yaml")).unwrap();
    let (a, b) = (&wc.manipulators[0], &wc.manipulators[1]);
    let shapes = |m: &workcell::Manipulator| -> Vec<_> {
        m.robot.links.iter().map(|l| exact::link_shape(&l.collisions).unwrap()).collect()
    };
    let (sa, sb) = (shapes(a), shapes(b));
    // Bring the arms close enough to touch: bases 0.6 m apart.
    let base_b = Frame::from_xyz_rpy([-0.15, 0.0, 0.6], [0.0, 0.0, std::f64::consts::PI]);
    let (ka, kb) = (Kinematics::new(&a.robot, a.base), Kinematics::new(&b.robot, base_b));
    let mut fa = vec![Frame::IDENTITY; a.robot.links.len()];
    let mut fb = vec![Frame::IDENTITY; b.robot.links.len()];
    let mut rng = Rng::new(77);
    let (mut pairs, mut touching) = (0, 0);
    for _ in 0..150 {
        ka.forward(&random_q(&a.robot, &mut rng), &mut fa).unwrap();
        kb.forward(&random_q(&b.robot, &mut rng), &mut fb).unwrap();
        for (i, (la, sha)) in a.spheres.links.iter().zip(&sa).enumerate() {
            for (j, (lb, shb)) in b.spheres.links.iter().zip(&sb).enumerate() {
                let (Some(sha), Some(shb)) = (sha, shb) else { continue };
                let mut gap = f64::INFINITY;
                for s in &la.fine {
                    let c1 = fa[i].apply(&s.center);
                    for t in &lb.fine {
                        gap = gap.min((c1 - fb[j].apply(&t.center)).norm() - s.radius - t.radius);
                    }
                }
                let exact = exact::distance(sha, &fa[i], shb, &fb[j]).expect("parry3d supports these shapes");
                assert!(
                    gap <= exact + 1e-4,
                    "{}/{} vs {}/{}: sphere gap {gap} m exceeds exact distance {exact} m",
                    a.name,
                    a.robot.links[i].name,
                    b.name,
                    b.robot.links[j].name
                );
                pairs += 1;
                touching += usize::from(exact == 0.0);
            }
        }
    }
    assert!(touching > 0, "the scenario must include contacts ({pairs} pairs checked)");
    println!("{pairs} link pairs checked, {touching} in contact");
}
