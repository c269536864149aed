//! `fk_spheres`: pose every sphere of the bundled 7-axis arm (wg_arm7, ≥ 50
//! spheres) for one configuration, against a naive baseline measured in the
//! same run: per sphere, the link's `Isometry3` rebuilt from the root by
//! products, then applied to the centre. Goals: ≤ 250 ns per configuration
//! one at a time, ≤ 100 ns in batches of eight (also printed: the batch on
//! the narrower AVX2 path, as a CPU without AVX-512 runs it, and the batch
//! kernel as it was at commit d21c67e, `common/previous_batch.rs`).
//!
//! Run: `cargo bench --bench fk_spheres`. After criterion's own report, a
//! summary line prints the medians and their ratios.

use criterion::{BenchmarkId, Criterion};
use nalgebra::{Isometry3, Point3, Translation3, Unit, UnitQuaternion, Vector3};
use std::hint::black_box;
use std::path::Path;
use std::time::Instant;
use workcell_guard_core::Frame;
use workcell_guard_core::model::coverage::Rng;
use workcell_guard_core::model::posed::LANES;
use workcell_guard_core::model::{BATCH, JointKind, Robot, SphereModel, SphereParams, SpherePoser};
use workcell_guard_description::urdf;

#[path = "common/previous_batch.rs"]
mod previous_batch;
use previous_batch::Previous;

struct Setup {
    robot: Robot,
    spheres: SphereModel,
    poser: SpherePoser,
    configs: Vec<Vec<f64>>,
}

fn setup() -> Setup {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("urdf/wg_arm7.urdf");
    let robot = urdf::load(&path).expect("bundled arm");
    let spheres = SphereModel::fit(&robot, |_| SphereParams::default());
    let base = Frame::from_xyz_rpy([0.75, 0.0, 0.6], [0.0, 0.0, std::f64::consts::PI]);
    let poser = SpherePoser::new(&robot, &spheres, base);
    let mut rng = Rng::new(42);
    let configs = (0..1024)
        .map(|_| {
            (0..robot.dof())
                .map(|d| {
                    let l = robot.dof_joint(d).limits.unwrap();
                    rng.range(l.lower.max(-3.0), l.upper.min(3.0))
                })
                .collect()
        })
        .collect();
    Setup { robot, spheres, poser, configs }
}

/// One joint of a chain: origin, kind, axis, and `multiplier · q[dof] + offset`.
type ChainJoint = (Isometry3<f64>, JointKind, Vector3<f64>, usize, f64, f64);

/// The baseline: every sphere's link pose from scratch as Isometry3 products.
struct Naive {
    base: Isometry3<f64>,
    /// Per sphere: the chain of (origin, kind, axis, dof, mult, offset) from the root.
    chains: Vec<Vec<ChainJoint>>,
    centers: Vec<Point3<f64>>,
}

impl Naive {
    fn new(robot: &Robot, spheres: &SphereModel, base: &Frame) -> Naive {
        let mut chains = Vec::new();
        let mut centers = Vec::new();
        for (li, ls) in spheres.links.iter().enumerate() {
            let mut chain = Vec::new();
            let mut l = li;
            while let Some(j) = robot.links[l].parent_joint {
                let jt = &robot.joints[j];
                let (d, m, o) = match (jt.dof, jt.mimic) {
                    (Some(d), _) => (d, 1.0, 0.0),
                    (None, Some(mm)) => (mm.dof, mm.multiplier, mm.offset),
                    _ => (0, 0.0, 0.0),
                };
                chain.push((jt.origin.to_isometry(), jt.kind, jt.axis, d, m, o));
                l = jt.parent;
            }
            chain.reverse();
            // The same slots as the flat layout: runs padded with the last sphere.
            let slots = ls.fine.len().div_ceil(LANES) * LANES;
            for k in 0..slots {
                chains.push(chain.clone());
                centers.push(ls.fine[k.min(ls.fine.len() - 1)].center);
            }
        }
        Naive { base: base.to_isometry(), chains, centers }
    }

    fn pose(&self, q: &[f64], out: &mut [Point3<f64>]) {
        for ((chain, c), o) in self.chains.iter().zip(&self.centers).zip(out.iter_mut()) {
            let mut iso = self.base;
            for (origin, kind, axis, d, m, off) in chain {
                let x = m * q[*d] + off;
                let motion = match kind {
                    JointKind::Fixed => Isometry3::identity(),
                    JointKind::Prismatic => {
                        Isometry3::from_parts(Translation3::from(axis * x), UnitQuaternion::identity())
                    }
                    _ => Isometry3::from_parts(
                        Translation3::identity(),
                        UnitQuaternion::from_axis_angle(&Unit::new_unchecked(*axis), x),
                    ),
                };
                iso = iso * origin * motion;
            }
            *o = iso * c;
        }
    }
}

/// The median time per call of each of `fs`, in ns, their samples taken in
/// turn (round after round, each 4096 calls of every one): a slow spell of
/// this shared machine falls on all of them alike, not on one figure.
fn medians_ns(fs: &mut [&mut dyn FnMut(usize)]) -> Vec<f64> {
    let mut samples = vec![Vec::new(); fs.len()];
    for _ in 0..31 {
        for (f, out) in fs.iter_mut().zip(&mut samples) {
            let t = Instant::now();
            for i in 0..4096 {
                f(i);
            }
            out.push(t.elapsed().as_nanos() as f64 / 4096.0);
        }
    }
    samples
        .iter_mut()
        .map(|v| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        })
        .collect()
}

fn main() {
    let s = setup();
    let n = s.poser.sphere_count();
    let real = s.spheres.fine_count();
    assert!(real >= 50, "the bench needs at least 50 spheres, wg_arm7 has {real}");
    let naive = Naive::new(&s.robot, &s.spheres, s.poser.kinematics().base());
    let mut posed = s.poser.posed();
    let mut naive_out = vec![Point3::origin(); n];

    // The two must agree before they are compared.
    for q in s.configs.iter().take(64) {
        s.poser.pose(q, &mut posed).unwrap();
        naive.pose(q, &mut naive_out);
        for (i, expect) in naive_out.iter().enumerate() {
            let d = (Point3::new(posed.x[i] as f64, posed.y[i] as f64, posed.z[i] as f64) - expect).norm();
            assert!(d < 1e-5, "flat and naive posing disagree by {d} m");
        }
    }

    // So must today's batch kernel and the previous one, slot for slot.
    let mut batch = s.poser.posed_batch();
    let mut previous = Previous::new(&s.robot, &s.spheres, s.poser.kinematics().base());
    for k in 0..8 {
        let refs: [&[f64]; BATCH] = std::array::from_fn(|b| s.configs[k * BATCH + b].as_slice());
        s.poser.pose_batch(&refs, &mut batch).unwrap();
        previous.pose_batch(&refs);
        for (u, v) in [(&batch.x, &previous.x), (&batch.y, &previous.y), (&batch.z, &previous.z)] {
            let d = u.iter().zip(v).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
            assert!(d < 1e-5, "today's and the previous batch kernel disagree by {d} m");
        }
    }

    let mut c = Criterion::default().configure_from_args();
    let mut g = c.benchmark_group("fk_spheres");
    let mut i = 0usize;
    g.bench_function(BenchmarkId::new("flat_arrays", n), |b| {
        b.iter(|| {
            i = (i + 1) & 1023;
            s.poser.pose(black_box(&s.configs[i]), &mut posed).unwrap();
            black_box(&posed.x);
        })
    });
    g.bench_function(BenchmarkId::new("naive_isometry_per_sphere", n), |b| {
        b.iter(|| {
            i = (i + 1) & 1023;
            naive.pose(black_box(&s.configs[i]), &mut naive_out);
            black_box(&naive_out);
        })
    });
    g.bench_function(BenchmarkId::new("flat_arrays_batch_of_8_per_batch", n), |b| {
        b.iter(|| {
            i = (i + BATCH) & 1023;
            let refs: [&[f64]; BATCH] = std::array::from_fn(|k| s.configs[(i + k) & 1023].as_slice());
            s.poser.pose_batch(black_box(&refs), &mut batch).unwrap();
            black_box(&batch.x);
        })
    });
    g.bench_function(BenchmarkId::new("previous_kernel_batch_of_8_per_batch", n), |b| {
        b.iter(|| {
            i = (i + BATCH) & 1023;
            let refs: [&[f64]; BATCH] = std::array::from_fn(|k| s.configs[(i + k) & 1023].as_slice());
            previous.pose_batch(black_box(&refs));
            black_box(&previous.x);
        })
    });
    g.finish();

    let mut narrow_batch = s.poser.posed_batch();
    let m = medians_ns(&mut [
        &mut |i| {
            s.poser.pose(black_box(&s.configs[i & 1023]), &mut posed).unwrap();
            black_box(&posed.x);
        },
        &mut |i| {
            let refs: [&[f64]; BATCH] = std::array::from_fn(|k| s.configs[(i * BATCH + k) & 1023].as_slice());
            s.poser.pose_batch(black_box(&refs), &mut batch).unwrap();
            black_box(&batch.x);
        },
        &mut |i| {
            let refs: [&[f64]; BATCH] = std::array::from_fn(|k| s.configs[(i * BATCH + k) & 1023].as_slice());
            s.poser.pose_batch_narrow(black_box(&refs), &mut narrow_batch).unwrap();
            black_box(&narrow_batch.x);
        },
        &mut |i| {
            let refs: [&[f64]; BATCH] = std::array::from_fn(|k| s.configs[(i * BATCH + k) & 1023].as_slice());
            previous.pose_batch(black_box(&refs));
            black_box(&previous.x);
        },
        &mut |i| {
            naive.pose(black_box(&s.configs[i & 1023]), &mut naive_out);
            black_box(&naive_out);
        },
    ]);
    let per = BATCH as f64;
    let (flat, batched, narrow, before, base) = (m[0], m[1] / per, m[2] / per, m[3] / per, m[4]);
    println!(
        "fk_spheres summary: {} DOF, {} links, {} spheres ({} slots padded): one at a time {:.0} ns/config, in batches of {} {:.0} ns/config (goal <= 100; without the AVX-512 sphere pairs {:.0}); the batch kernel of d21c67e {:.0} ns/config (today's at {:.2}x of it); naive Isometry3 baseline {:.0} ns/config: {:.1}x and {:.1}x faster",
        s.robot.dof(),
        s.robot.links.len(),
        real,
        n,
        flat,
        BATCH,
        batched,
        narrow,
        before,
        batched / before,
        base,
        base / flat,
        base / batched
    );
    c.final_summary();
}
