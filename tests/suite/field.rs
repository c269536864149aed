//! The voxel distance field: exactness against brute force and
//! scipy, no missed collision against parry3d's exact distances, incremental
//! updates equal to rebuilds, outside policy, layers, `.npy` and
//! the `field` subcommand.

use crate::common;

use proptest::prelude::*;
use std::process::Command;
use workcell_guard_core::Frame;
use workcell_guard_core::field::{DistanceField, Outside};
use workcell_guard_core::model::coverage::{self, Rng};
use workcell_guard_core::model::exact;
use workcell_guard_core::model::{Collision, Shape};
use workcell_guard_description::npy;
use workcell_guard_description::workcell::{self, Obstacle, VoxelGrid, Workcell};

fn grid(origin: [f64; 3], res: f64, dims: [usize; 3], max_d: f64, outside: Outside) -> VoxelGrid {
    VoxelGrid { origin_m: origin, resolution_m: res, dims, max_distance_m: max_d, outside }
}

fn sample_cell() -> Workcell {
    workcell::load(&common::repo().join("config/workcell.yaml")).expect("sample cell")
}

fn voxels(dims: [usize; 3]) -> impl Iterator<Item = [usize; 3]> {
    (0..dims[2]).flat_map(move |z| (0..dims[1]).flat_map(move |y| (0..dims[0]).map(move |x| [x, y, z])))
}

/// The stored value by definition: nearest occupied centre, walls when the
/// outside is collision, the cap; all in squared voxels, then the square root.
fn brute(f: &DistanceField, occ: &[bool], walls: bool) -> Vec<f32> {
    let dims = f.dims();
    let sites: Vec<[usize; 3]> = voxels(dims).zip(occ).filter(|(_, o)| **o).map(|(v, _)| v).collect();
    let cap = f.cap_voxels() * f.cap_voxels();
    voxels(dims)
        .map(|v| {
            let mut s = f32::INFINITY;
            for w in &sites {
                let d2: i64 = (0..3).map(|a| (v[a] as i64 - w[a] as i64).pow(2)).sum();
                s = s.min(d2 as f32);
            }
            if walls {
                for a in 0..3 {
                    let w = (v[a] + 1).min(dims[a] - v[a]) as f32;
                    s = s.min(w * w);
                }
            }
            s.min(cap).sqrt()
        })
        .collect()
}

#[test]
fn the_field_equals_brute_force_on_small_random_grids() {
    let mut rng = Rng::new(3);
    for round in 0..60 {
        let dims =
            [1 + (rng.unit() * 14.0) as usize, 1 + (rng.unit() * 12.0) as usize, 1 + (rng.unit() * 10.0) as usize];
        let outside = if round % 2 == 0 { Outside::Collision } else { Outside::Free };
        let res = rng.range(0.01, 0.1);
        let max_d = res * rng.range(2.0, 20.0);
        let g = grid([rng.range(-1.0, 1.0), 0.0, rng.range(-1.0, 0.0)], res, dims, max_d, outside);
        let density = [0.0, 0.01, 0.05, 0.3, 0.9][round % 5];
        let occ: Vec<bool> = (0..dims.iter().product()).map(|_| rng.unit() < density).collect();
        let mut f = DistanceField::new(&g);
        f.set_sensed_occupancy(&occ).unwrap();
        assert_eq!(f.voxel_distances(), &brute(&f, &occ, outside == Outside::Collision)[..], "{g:?}");
        for v in voxels(dims) {
            assert_eq!(f.occupied(v), occ[(v[2] * dims[1] + v[1]) * dims[0] + v[0]]);
        }
    }
}

#[test]
fn the_distance_transform_equals_scipy_on_a_64_cubed_random_grid() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(64);
    let dims = [64, 64, 64];
    let occ: Vec<bool> = (0..64 * 64 * 64).map(|_| rng.unit() < 0.002).collect();
    let (occ_path, out) = (dir.path().join("occ.npy"), dir.path().join("d.npy"));
    npy::write_bool(&occ_path, dims, &occ).unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_workcell_guard"))
        .args(["field", "--units", "voxels", "--occupancy"])
        .arg(&occ_path)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let oracle = Command::new("python3")
        .arg(common::repo().join("tests/oracle/edt_scipy.py"))
        .arg(&occ_path)
        .arg(&out)
        .output()
        .expect("python3 must be installed to run the oracle tests");
    assert!(
        oracle.status.success(),
        "scipy oracle failed (pip install -r tests/oracle/requirements.txt):\n{}",
        String::from_utf8_lossy(&oracle.stderr)
    );
    let max_diff: f64 = String::from_utf8_lossy(&oracle.stdout).trim().parse().unwrap();
    println!("64³ grid, {} occupied: max |ours − scipy| = {max_diff:e} voxels", occ.iter().filter(|&&o| o).count());
    assert!(max_diff <= 1e-4, "max difference {max_diff} voxels");
}

/// A random primitive obstacle at a random pose inside `[lo, hi]`.
fn random_obstacle(rng: &mut Rng, lo: [f64; 3], hi: [f64; 3]) -> (Frame, Shape) {
    let pose = Frame::from_xyz_rpy(
        [rng.range(lo[0], hi[0]), rng.range(lo[1], hi[1]), rng.range(lo[2], hi[2])],
        [rng.range(-3.2, 3.2), rng.range(-1.6, 1.6), rng.range(-3.2, 3.2)],
    );
    let s = match (rng.unit() * 4.0) as usize {
        0 => Shape::Box { half_extents: [rng.range(0.005, 0.15), rng.range(0.005, 0.15), rng.range(0.005, 0.15)] },
        1 => Shape::Sphere { radius: rng.range(0.005, 0.15) },
        2 => Shape::Cylinder { radius: rng.range(0.005, 0.12), length: rng.range(0.01, 0.3) },
        _ => Shape::Capsule { radius: rng.range(0.005, 0.1), length: rng.range(0.01, 0.3) },
    };
    (pose, s)
}

struct Verdicts {
    cases: usize,
    colliding: usize,
    false_alarms: usize,
    missed: usize,
}

/// Random obstacles and spheres; the field's clearance must never exceed
/// parry3d's exact sphere–obstacle distance, so no colliding sphere is ever
/// called clear. The outside of the grid counts as occupied (the default
/// policy): obstacles may reach out of it, and the true distance includes
/// the distance to the grid's faces.
///
/// With `Outside::Free` the obstacles are kept wholly inside the grid (the
/// field cannot know about parts outside it) and the faces are no walls: this
/// measures the false alarms the voxels alone cause.
fn no_miss_round(seed: u64, margin: f32, outside: Outside, v: &mut Verdicts) {
    let mut rng = Rng::new(seed);
    let res = rng.range(0.015, 0.04);
    let mut dims =
        [24 + (rng.unit() * 16.0) as usize, 24 + (rng.unit() * 16.0) as usize, 20 + (rng.unit() * 16.0) as usize];
    if outside == Outside::Free {
        dims = dims.map(|n| n + 20);
    }
    let origin = [rng.range(-0.5, 0.5), rng.range(-0.5, 0.5), rng.range(-0.2, 0.2)];
    let g = grid(origin, res, dims, rng.range(0.1, 0.4), outside);
    let hi: [f64; 3] = std::array::from_fn(|a| origin[a] + dims[a] as f64 * res);
    // Every random obstacle reaches at most 0.26 m from its centre.
    let inset = if outside == Outside::Free { 0.27 } else { 0.0 };
    let mut f = DistanceField::new(&g);
    let mut shapes = Vec::new();
    for _ in 0..1 + (rng.unit() * 4.0) as usize {
        let (pose, s) = random_obstacle(&mut rng, origin.map(|o| o + inset), hi.map(|h| h - inset));
        f.add_obstacle(pose, s.clone()).unwrap();
        let c = Collision { origin: Frame::from_xyz_rpy([0.0; 3], [0.0; 3]), shape: s };
        shapes.push((pose, exact::link_shape(&[c]).unwrap().unwrap()));
    }
    for _ in 0..300 {
        let c = [rng.range(origin[0], hi[0]), rng.range(origin[1], hi[1]), rng.range(origin[2], hi[2])];
        let r = rng.range(0.005, 0.12);
        let ball = Collision { origin: Frame::from_xyz_rpy([0.0; 3], [0.0; 3]), shape: Shape::Sphere { radius: r } };
        let ball = exact::link_shape(&[ball]).unwrap().unwrap();
        let at = Frame::from_xyz_rpy(c, [0.0; 3]);
        let faces = match outside {
            Outside::Collision => {
                (0..3).map(|a| (c[a] - origin[a]).min(hi[a] - c[a])).fold(f64::INFINITY, f64::min) - r
            }
            Outside::Free => f64::INFINITY,
        };
        let truth = shapes.iter().map(|(p, s)| exact::distance(&ball, &at, s, p).unwrap()).fold(faces, f64::min);
        let field = f.clearance(c[0] as f32, c[1] as f32, c[2] as f32, r as f32);
        // The lower-bound property itself (parry works in f32: 1e-5 m of slack).
        assert!(
            (field as f64) <= truth + 1e-5,
            "field clearance {field} above the exact distance {truth} (seed {seed}, centre {c:?}, r {r})"
        );
        v.cases += 1;
        let collides = truth <= margin as f64;
        let says = field <= margin;
        if collides {
            v.colliding += 1;
            if !says {
                v.missed += 1;
            }
        } else if says {
            v.false_alarms += 1;
        }
    }
}

#[test]
fn no_collision_is_missed_and_the_false_alarm_rate_is_reported() {
    for outside in [Outside::Collision, Outside::Free] {
        let mut v = Verdicts { cases: 0, colliding: 0, false_alarms: 0, missed: 0 };
        for seed in 0..120 {
            no_miss_round(seed, 0.0, outside, &mut v);
        }
        let clear = v.cases - v.colliding;
        println!(
            "outside = {outside:?}: {} sphere queries, {} colliding, {} missed; false alarms: {} of {} clear spheres ({:.1} %)",
            v.cases,
            v.colliding,
            v.missed,
            v.false_alarms,
            clear,
            100.0 * v.false_alarms as f64 / clear as f64
        );
        assert_eq!(v.missed, 0);
        assert!(v.colliding > 500, "the scenes must produce collisions to test");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    // The margin is drawn on a micrometre grid (see `micros` in guard.rs).
    #[test]
    fn no_collision_is_missed_for_any_scene(seed in 1000u64..u64::MAX / 2, margin in (0u32..50_000).prop_map(|u| u as f32 * 1e-6), free in any::<bool>()) {
        let mut v = Verdicts { cases: 0, colliding: 0, false_alarms: 0, missed: 0 };
        no_miss_round(seed, margin, if free { Outside::Free } else { Outside::Collision }, &mut v);
        prop_assert_eq!(v.missed, 0);
    }
}

/// A random grid (size, resolution, origin, cap, outside policy by the
/// seed's parity) with 1–4 random obstacles: the field, the resolution and
/// the grid's corners.
fn random_field(seed: u64, rng: &mut Rng) -> (DistanceField, f64, [f64; 3], [f64; 3]) {
    let res = rng.range(0.01, 0.04);
    let dims =
        [20 + (rng.unit() * 20.0) as usize, 20 + (rng.unit() * 20.0) as usize, 16 + (rng.unit() * 20.0) as usize];
    let origin = [rng.range(-0.5, 0.5), rng.range(-0.5, 0.5), rng.range(-0.2, 0.2)];
    let outside = if seed.is_multiple_of(2) { Outside::Collision } else { Outside::Free };
    let g = grid(origin, res, dims, rng.range(0.1, 0.4), outside);
    let hi: [f64; 3] = std::array::from_fn(|a| origin[a] + dims[a] as f64 * res);
    let mut f = DistanceField::new(&g);
    for _ in 0..1 + (rng.unit() * 4.0) as usize {
        let (pose, s) = random_obstacle(rng, origin, hi);
        f.add_obstacle(pose, s).unwrap();
    }
    (f, res, origin, hi)
}

/// The one-lookup bound of a ball is never above the clearance of any
/// sphere inside it (what lets the guard skip a link's spheres), for random
/// scenes, balls anywhere (near the grid's faces too) and either outside
/// policy; and it is not vacuous: far from obstacles it stays within
/// 2·res·√3 + 2·r of the sphere's own clearance.
fn bound_round(seed: u64) {
    let mut rng = Rng::new(seed);
    let (f, res, origin, hi) = random_field(seed, &mut rng);
    let mut bounded = 0;
    for _ in 0..200 {
        let c =
            [rng.range(origin[0], hi[0]), rng.range(origin[1], hi[1]), rng.range(origin[2], hi[2])].map(|v| v as f32);
        let r = rng.range(0.0, 0.2) as f32;
        let b = f.clearance_bound(c[0], c[1], c[2], r);
        if b.is_finite() {
            bounded += 1;
        }
        for _ in 0..40 {
            // A sphere inside the ball: radius rho, centre within r - rho.
            let rho = (rng.unit() as f32) * r;
            let d = [rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0)];
            let n = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt().max(1e-9);
            let k = (rng.unit() as f32) * (r - rho);
            let p: [f32; 3] = std::array::from_fn(|a| c[a] + (d[a] / n) as f32 * k);
            let cl = f.clearance(p[0], p[1], p[2], rho);
            assert!(b <= cl, "seed {seed}: bound {b} of ball {c:?} r {r} above {cl} of sphere {p:?} r {rho}");
        }
        let own = f.clearance(c[0], c[1], c[2], 0.0);
        if b.is_finite() && own.is_finite() {
            assert!(
                own - b <= 2.0 * res as f32 * 3f32.sqrt() + r + 1e-4,
                "seed {seed}: bound {b} too loose (own {own})"
            );
        }
    }
    assert!(bounded > 0, "seed {seed}: some balls lie inside the grid");
}

/// `clearance_from`: from an anchor voxel's value, a bound for spheres
/// anywhere (inside the grid) that never exceeds their looked-up
/// clearance, is exact at the anchor's own voxel, and is `−∞` outside.
fn anchor_round(seed: u64) {
    let mut rng = Rng::new(seed);
    let (f, res, origin, hi) = random_field(seed, &mut rng);
    for _ in 0..100 {
        let a: [f32; 3] = std::array::from_fn(|k| rng.range(origin[k], hi[k]) as f32);
        let an = f.anchor(a[0], a[1], a[2]).expect("the anchor is inside");
        let anchors: [[f32; 8]; 4] = std::array::from_fn(|row| [an[row]; 8]);
        for _ in 0..10 {
            // Eight spheres: near the anchor, anywhere, and outside the grid.
            let reach = [0.05, 0.3, 2.0][(rng.unit() * 3.0) as usize % 3];
            let p: [[f32; 8]; 3] =
                std::array::from_fn(|k| std::array::from_fn(|_| (a[k] as f64 + rng.range(-reach, reach)) as f32));
            let r = rng.range(0.0, 0.1) as f32;
            let lb = f.clearance_from(&anchors, [&p[0], &p[1], &p[2]], r);
            for l in 0..8 {
                let c = f.clearance(p[0][l], p[1][l], p[2][l], r);
                assert!(
                    lb[l] <= c,
                    "seed {seed}: bound {} above clearance {c} at {:?}",
                    lb[l],
                    [p[0][l], p[1][l], p[2][l]]
                );
                match f.voxel_of([p[0][l], p[1][l], p[2][l]]) {
                    None => assert_eq!(lb[l], f32::NEG_INFINITY, "seed {seed}: a sphere outside the grid is bounded"),
                    // No looser than twice the distance between the voxels.
                    Some(v) => {
                        let d: f32 = (0..3).map(|k| (v[k] as f32 - an[k]).powi(2)).sum::<f32>().sqrt();
                        assert!(
                            c - lb[l] <= (2.0 * d + 2e-3) * res as f32 + 1e-5,
                            "seed {seed}: bound {} loose",
                            lb[l]
                        );
                    }
                }
            }
        }
        let own = f.clearance_from(&anchors, [&[a[0]; 8], &[a[1]; 8], &[a[2]; 8]], 0.0);
        let c = f.clearance(a[0], a[1], a[2], 0.0);
        assert!(own[0] <= c && c - own[0] <= 1e-3 * res as f32 + 1e-6, "seed {seed}: {} vs {c} at the anchor", own[0]);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn a_balls_bound_is_below_every_sphere_inside_it(seed in 1u64..u64::MAX / 2) {
        bound_round(seed);
    }

    #[test]
    fn an_anchors_bound_is_below_every_spheres_clearance(seed in 1u64..u64::MAX / 2) {
        anchor_round(seed);
    }
}

#[test]
fn every_point_of_every_sample_obstacle_is_in_collision() {
    // Surface and interior samples of every obstacle of the sample cell,
    // including the closed mesh fixture: each must be at clearance ≤ 0.
    let cell = sample_cell();
    let f = DistanceField::from_workcell(&cell);
    let mut rng = Rng::new(9);
    for o in &cell.obstacles {
        let mut pts = Vec::new();
        coverage::sample_points(&Collision { origin: o.pose, shape: o.shape.clone() }, 40_000.0, &mut rng, &mut pts);
        assert!(!pts.is_empty());
        let mut inside = 0;
        for p in &pts {
            let c = f.clearance(p.x as f32, p.y as f32, p.z as f32, 0.0);
            assert!(c <= 0.0, "{}: point {p:?} has clearance {c}", o.name);
            inside += f.voxel_of([p.x as f32, p.y as f32, p.z as f32]).is_some() as usize;
        }
        println!("{}: {} samples, {inside} inside the grid, all in collision", o.name, pts.len());
    }
}

#[test]
fn incremental_updates_equal_full_rebuilds() {
    let base = sample_cell();
    let mesh = base.obstacles.iter().find(|o| matches!(o.shape, Shape::Mesh(_))).expect("a mesh obstacle").clone();
    let mut rng = Rng::new(21);
    for round in 0..6 {
        let outside = if round % 2 == 0 { Outside::Collision } else { Outside::Free };
        let g = grid([-0.6, -0.6, 0.0], 0.02, [60, 55, 50], [0.1, 0.2, 0.37][round % 3], outside);
        let hi = [0.6, 0.5, 1.0];
        let mut f = DistanceField::new(&g);
        // In one round sensed points join the occupancy; updates must keep them.
        let pts: Vec<[f32; 3]> = if round == 3 {
            (0..300)
                .map(|_| [rng.range(-0.6, 0.6) as f32, rng.range(-0.6, 0.5) as f32, rng.range(0.0, 1.0) as f32])
                .collect()
        } else {
            Vec::new()
        };
        f.set_sensed_points(&pts, &[], 0.0);
        let mut held: Vec<(workcell_guard_core::field::ObstacleId, Obstacle)> = Vec::new();
        for step in 0..24 {
            if held.is_empty() || rng.unit() < 0.6 {
                let (pose, shape) = if step % 7 == 3 {
                    let p = Frame::from_xyz_rpy(
                        [rng.range(-0.3, 0.3), rng.range(-0.3, 0.3), rng.range(0.2, 0.8)],
                        [0.0, 0.0, rng.range(-3.0, 3.0)],
                    );
                    (p, mesh.shape.clone())
                } else {
                    random_obstacle(&mut rng, [-0.7, -0.7, -0.1], hi)
                };
                let id = f.add_obstacle(pose, shape.clone()).unwrap();
                held.push((id, Obstacle { name: format!("o{step}"), pose, shape }));
            } else {
                let (id, _) = held.remove((rng.unit() * held.len() as f64) as usize);
                assert!(f.remove_obstacle(id));
                assert!(!f.remove_obstacle(id), "a removed id is gone");
            }
            // A full rebuild of the same obstacles, from nothing.
            let mut fresh = DistanceField::from_workcell(&Workcell {
                voxel_grid: g,
                obstacles: held.iter().map(|(_, o)| o.clone()).collect(),
                ..base.clone()
            });
            fresh.set_sensed_points(&pts, &[], 0.0);
            assert_eq!(f.occupied_count(), fresh.occupied_count(), "round {round} step {step}");
            assert!(
                f.voxel_distances() == fresh.voxel_distances(),
                "round {round} step {step}: incremental differs from rebuild"
            );
        }
    }
}

#[test]
fn outside_policy_nan_and_grid_faces() {
    let mk = |outside| DistanceField::new(&grid([0.0; 3], 0.05, [20, 20, 20], 0.5, outside));
    let (col, free) = (mk(Outside::Collision), mk(Outside::Free));
    assert_eq!(col.clearance(-0.1, 0.5, 0.5, 0.01), f32::NEG_INFINITY);
    assert_eq!(free.clearance(-0.1, 0.5, 0.5, 0.01), f32::INFINITY);
    assert_eq!(free.clearance(0.5, f32::NAN, 0.5, 0.01), f32::NEG_INFINITY, "NaN is a collision under any policy");
    // Centre of an empty grid: clear either way; near a face: only the
    // collision policy sees the wall.
    assert!(col.clearance(0.5, 0.5, 0.5, 0.05) > 0.2);
    assert!(col.clearance(0.01, 0.5, 0.5, 0.02) <= 0.0);
    assert!(free.clearance(0.01, 0.5, 0.5, 0.02) > 0.2);
    // The field saturates at max_distance_m.
    assert!(free.voxel_distances().iter().all(|&d| d == free.cap_voxels()));
    assert_eq!(free.cap_voxels(), 10.0);
}

#[test]
fn a_256_cubed_field_fits_in_70_mb() {
    let g = grid([0.0; 3], 0.01, [256; 3], 0.2, Outside::Collision);
    let mut f = DistanceField::new(&g);
    f.add_obstacle(Frame::from_xyz_rpy([1.28; 3], [0.3, 0.2, 0.1]), Shape::Box { half_extents: [0.1; 3] }).unwrap();
    // Bad obstacles are refused with the reason and change nothing.
    let before = f.voxel_distances().to_vec();
    let e = f.add_obstacle(Frame::from_xyz_rpy([f64::NAN, 0.0, 0.0], [0.0; 3]), Shape::Sphere { radius: 0.1 });
    assert!(e.unwrap_err().to_string().contains("pose is not finite"));
    let e = f.add_obstacle(Frame::from_xyz_rpy([1.0; 3], [0.0; 3]), Shape::Sphere { radius: f64::NAN });
    assert!(e.unwrap_err().to_string().contains("finite and positive"));
    assert!(f.voxel_distances() == &before[..]);
    println!("256³ field: {:.1} MB", f.memory_bytes() as f64 / 1e6);
    assert!(f.memory_bytes() <= 70_000_000, "{} bytes", f.memory_bytes());
    assert!(f.occupied_count() > 0);
}

#[test]
fn layers() {
    let g = grid([0.0; 3], 0.1, [11, 11, 11], 0.6, Outside::Free);
    let mut f = DistanceField::new(&g);
    let mut occ = vec![false; 11 * 11 * 11];
    occ[(5 * 11 + 5) * 11 + 5] = true;
    f.set_sensed_occupancy(&occ).unwrap();
    assert_eq!(f.layer([5, 5, 5]), 0);
    assert_eq!(f.layer([6, 5, 5]), 2, "d = 1: 1 ≤ d < 2");
    assert_eq!(f.layer([6, 6, 5]), 2, "d = √2");
    assert_eq!(f.layer([7, 5, 5]), 3, "d = 2");
    assert_eq!(f.layer([7, 7, 7]), 4, "d = √12 ≈ 3.46");
    assert_eq!(f.layers().filter(|&l| l == 0).count(), 1);
}

#[test]
fn self_filtering_leaves_out_points_on_the_robot() {
    let cell = sample_cell();
    let m = &cell.manipulators[0];
    let poser = workcell_guard_core::model::SpherePoser::new(&m.robot, &m.spheres, m.base);
    let mut posed = poser.posed();
    poser.pose(&vec![0.0; m.robot.dof()], &mut posed).unwrap();
    // Points on the robot's own spheres, and one far from it.
    let mut pts: Vec<[f32; 3]> =
        (0..posed.len()).map(|i| [posed.x[i], posed.y[i], posed.z[i] + 0.5 * posed.r[i]]).collect();
    let mut f = DistanceField::new(&cell.voxel_grid);
    let on_robot = pts.iter().filter(|p| f.voxel_of(**p).is_some()).count();
    assert!(on_robot > 50);
    let beyond = pts.len() - on_robot;
    pts.push([1.5, 1.5, 1.5]);
    pts.push([f32::NAN, 0.0, 0.0]);
    pts.push([9.0, 0.0, 0.0]);
    let rep = f.set_sensed_points(&pts, &[&posed], 0.01);
    assert_eq!(rep.filtered, on_robot);
    assert_eq!((rep.accepted, rep.invalid, rep.outside), (1, 1, 1 + beyond));
    assert_eq!(f.occupied_count(), 1);
    let rep = f.set_sensed_points(&pts, &[], 0.0);
    assert_eq!(rep.accepted, on_robot + 1);
    assert!(f.occupied_count() > 1);
}

#[test]
fn the_field_subcommand_writes_the_sample_cell() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("dist.npy");
    let run = Command::new(env!("CARGO_BIN_EXE_workcell_guard"))
        .arg("field")
        .arg(common::repo().join("config/workcell.yaml"))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let g = npy::read(&out).unwrap();
    let cell = sample_cell();
    assert_eq!(g.dims, cell.voxel_grid.dims);
    let f = DistanceField::from_workcell(&cell);
    for (a, b) in g.values.iter().zip(f.voxel_distances()) {
        assert_eq!(*a as f32, b * 0.02);
    }
    // A mismatched occupancy grid is refused with the reason.
    let bad = dir.path().join("bad.npy");
    npy::write_bool(&bad, [3, 3, 3], &[false; 27]).unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_workcell_guard"))
        .arg("field")
        .arg(common::repo().join("config/workcell.yaml"))
        .arg("--occupancy")
        .arg(&bad)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("does not match the workcell's grid"));
}

#[test]
fn grid_settings_are_validated() {
    let arm = common::repo().join("urdf/wg_arm7.urdf");
    let text = common::minimal_workcell(&arm);
    let path = common::repo().join("config/test.yaml");
    let err = |t: String| workcell::load_str(&t, &path).unwrap_err().to_string();
    let e = err(text.replace(", max_distance_m: 0.3", ""));
    assert!(e.contains("max_distance_m"), "{e}");
    let e = err(text.replace("max_distance_m: 0.3", "max_distance_m: 0.05"));
    assert!(e.contains("voxel_grid.max_distance_m") && e.contains("two voxels"), "{e}");
    let e = err(text.replace("max_distance_m: 0.3", "max_distance_m: 0.3, outside: maybe"));
    assert!(e.contains("outside"), "{e}");
    let ok =
        workcell::load_str(&text.replace("max_distance_m: 0.3", "max_distance_m: 0.3, outside: free"), &path).unwrap();
    assert_eq!(ok.voxel_grid.outside, Outside::Free);
    let ok = workcell::load_str(&text, &path).unwrap();
    assert_eq!(ok.voxel_grid.outside, Outside::Collision, "collision unless the file says otherwise");
}
