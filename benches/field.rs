//! The voxel distance field, each figure beside a baseline from
//! the same run:
//!
//! 1. Full exact EDT of a 256³ grid with 1 % occupied voxels on 2 threads,
//!    against the `edt` package (C++, 2 threads) and scipy.ndimage, both run
//!    by `benches/edt_baseline.py` on the same grid (skipped, with a note,
//!    when python3 or the packages are missing).
//! 2. Sphere query (`DistanceField::clearance`) on the sample cell: median
//!    ns per query over 4,096 random spheres.
//! 3. Incremental update: a 10 cm box added to / removed from the sample
//!    cell (4 × 4 × 2 m at 2 cm), beside the full rebuild of the same field.
//!
//! `cargo bench --bench field` (criterion's own report plus a summary).

use criterion::Criterion;
use std::hint::black_box;
use std::path::Path;
use std::process::Command;
use std::time::Instant;
use workcell_guard_core::Frame;
use workcell_guard_core::field::{DistanceField, edt};
use workcell_guard_core::model::coverage::Rng;
use workcell_guard_core::model::{PosedSpheres, Shape, SpherePoser};
use workcell_guard_description::npy;
use workcell_guard_description::workcell;

const N: usize = 256;

fn full_edt(occ: &[bool], threads: usize) -> Vec<f32> {
    edt::distances(occ, [N; 3], threads)
}

fn median<T>(runs: usize, mut f: impl FnMut() -> T) -> f64 {
    let mut t: Vec<f64> = (0..runs)
        .map(|_| {
            let s = Instant::now();
            black_box(f());
            s.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

fn python_baselines(occ: &[bool], ours_sq: &[f32]) -> Option<serde_json::Value> {
    let dir = tempfile::tempdir().ok()?;
    let (o, s) = (dir.path().join("occ.npy"), dir.path().join("ours.npy"));
    npy::write_bool(&o, [N; 3], occ).ok()?;
    npy::write_f32(&s, [N; 3], ours_sq).ok()?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/edt_baseline.py");
    let out = Command::new("python3").arg(script).arg(&o).arg(&s).output().ok()?;
    if !out.status.success() {
        eprintln!("baseline script failed: {}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    serde_json::from_slice(&out.stdout).ok()
}

fn main() {
    let mut c = Criterion::default().configure_from_args().sample_size(10);

    // 1. Full EDT, 256³, 1 % occupied.
    let mut rng = Rng::new(1);
    let occ: Vec<bool> = (0..N * N * N).map(|_| rng.unit() < 0.01).collect();
    c.bench_function("edt_256cubed_1pct_2threads", |b| b.iter(|| full_edt(black_box(&occ), 2)));
    let ours_2 = median(5, || full_edt(&occ, 2));
    let ours_1 = median(3, || full_edt(&occ, 1));
    let ours_sq = edt::squared_edt(&occ, [N; 3], 2);
    let base = python_baselines(&occ, &ours_sq);

    // 2. Sphere queries on the sample cell.
    let cell_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/workcell.yaml");
    let cell = workcell::load(&cell_path).expect("sample cell");
    let mut field = DistanceField::from_workcell(&cell);
    field.set_threads(2);
    let g = cell.voxel_grid;
    let span = |a: usize| g.dims[a] as f64 * g.resolution_m;
    let spheres: Vec<[f32; 4]> = (0..4096)
        .map(|_| {
            [
                (g.origin_m[0] + rng.unit() * span(0)) as f32,
                (g.origin_m[1] + rng.unit() * span(1)) as f32,
                (g.origin_m[2] + rng.unit() * span(2)) as f32,
                rng.range(0.02, 0.1) as f32,
            ]
        })
        .collect();
    let query_all = |f: &DistanceField| {
        let mut hits = 0u32;
        for s in &spheres {
            hits += (f.clearance(s[0], s[1], s[2], s[3]) <= 0.0) as u32;
        }
        hits
    };
    c.bench_function("sphere_query_random_x4096", |b| b.iter(|| query_all(black_box(&field))));
    // The same query on the sample arms' own spheres at random configurations
    // (what the guard does: spheres of one robot sit close together in memory).
    let arms = posed_arms(&cell, &mut rng);
    let arm_spheres: usize = arms.iter().map(|p| p.len()).sum();
    let query_arms = |f: &DistanceField| arms.iter().map(|p| f.min_clearance(p).0).fold(f32::INFINITY, f32::min);
    c.bench_function("sphere_query_arms", |b| b.iter(|| query_arms(black_box(&field))));
    let arm_ns = ns_per_sphere(|| query_arms(black_box(&field)), arm_spheres);
    let query_ns = ns_per_sphere(|| query_all(black_box(&field)), spheres.len());

    // 3. Incremental add / remove of a 10 cm box, beside a full rebuild.
    let boxes: Vec<Frame> = (0..64)
        .map(|_| {
            let p = [rng.range(-1.8, 1.8), rng.range(-1.8, 1.8), rng.range(0.1, 1.9)];
            Frame::from_xyz_rpy(p, [rng.range(-3.0, 3.0), rng.range(-1.5, 1.5), rng.range(-3.0, 3.0)])
        })
        .collect();
    let cube = Shape::Box { half_extents: [0.05; 3] };
    let mut k = 0;
    c.bench_function("incremental_add_remove_10cm_box", |b| {
        b.iter(|| {
            let id = field.add_obstacle(boxes[k % boxes.len()], cube.clone()).expect("valid box");
            field.remove_obstacle(id);
            k += 1;
        })
    });
    let incr = incremental_figures(&cell, &boxes, &cube);
    c.final_summary();

    println!();
    println!("== field summary (medians, same run) ==");
    println!("full EDT 256³, 1 % occupied: ours {:.1} ms on 2 threads ({:.1} ms on 1)", ours_2 * 1e3, ours_1 * 1e3);
    match base {
        Some(b) => {
            for (key, label) in [("edt", "edt package (2 threads)"), ("scipy", "scipy.ndimage.distance_transform_edt")]
            {
                match b[format!("{key}_s")].as_f64() {
                    Some(t) => println!(
                        "  {label}: {:.1} ms -> ours is {:.2}x faster (max diff {:.1e} voxels)",
                        t * 1e3,
                        t / ours_2,
                        b[format!("{key}_max_diff")].as_f64().unwrap_or(f64::NAN)
                    ),
                    None => println!("  {label}: not installed (pip install -r tests/oracle/requirements.txt)"),
                }
            }
        }
        None => println!("  python baselines unavailable (python3 with numpy, edt, scipy needed)"),
    }
    println!(
        "sphere query (goal <= 5 ns): {arm_ns:.2} ns median on the sample arms' spheres ({arm_spheres} over {} poses), {query_ns:.2} ns on {} spheres scattered over the whole cell (cache misses)",
        arms.len(),
        spheres.len(),
    );
    println!(
        "incremental 10 cm box in 4 x 4 x 2 m at 2 cm ([200, 200, 100] voxels, sample obstacles; goal: add <= 1 ms):"
    );
    for (cap, add, remove, rebuild) in incr {
        println!(
            "  max_distance {cap} m: add {:.3} ms, remove {:.3} ms; full rebuild {:.1} ms on 2 threads -> add is {:.0}x faster",
            add * 1e3,
            remove * 1e3,
            rebuild * 1e3,
            rebuild / add
        );
    }
}

/// Per distance cap: median add and remove of a 10 cm box in the reference
/// cell, and a full rebuild, s.
fn incremental_figures(cell: &workcell::Workcell, boxes: &[Frame], cube: &Shape) -> Vec<(f64, f64, f64, f64)> {
    let mut incr = Vec::new();
    for cap in [0.2, 0.3, 0.4] {
        // The reference cell: 4 × 4 × 2 m at 2 cm, with the sample's obstacles.
        let mut g = cell.voxel_grid;
        g.dims = [200, 200, 100];
        g.resolution_m = 0.02;
        g.max_distance_m = cap;
        let mut f = DistanceField::from_workcell(&workcell::Workcell { voxel_grid: g, ..cell.clone() });
        f.set_threads(2);
        let (mut adds, mut removes) = (Vec::new(), Vec::new());
        for pose in boxes.iter().cycle().take(192) {
            let s = Instant::now();
            let id = f.add_obstacle(*pose, cube.clone()).expect("valid box");
            adds.push(s.elapsed().as_secs_f64());
            let s = Instant::now();
            f.remove_obstacle(id);
            removes.push(s.elapsed().as_secs_f64());
        }
        adds.sort_by(f64::total_cmp);
        removes.sort_by(f64::total_cmp);
        let rebuild = median(5, || f.rebuild());
        incr.push((cap, adds[adds.len() / 2], removes[removes.len() / 2], rebuild));
    }
    incr
}

/// Each sample arm's spheres at 64 random configurations.
fn posed_arms(cell: &workcell::Workcell, rng: &mut Rng) -> Vec<PosedSpheres> {
    let mut arms: Vec<PosedSpheres> = Vec::new();
    for m in &cell.manipulators {
        let poser = SpherePoser::new(&m.robot, &m.spheres, m.base);
        for _ in 0..64 {
            let q: Vec<f64> = (0..m.robot.dof())
                .map(|d| {
                    let l = m.robot.dof_joint(d).limits.expect("limited joints");
                    rng.range(l.lower.max(-3.0), l.upper.min(3.0))
                })
                .collect();
            let mut p = poser.posed();
            poser.pose(&q, &mut p).expect("valid configuration");
            arms.push(p);
        }
    }
    arms
}

/// Median over 101 runs of 20 calls of `f` (which queries `spheres`), ns per sphere.
fn ns_per_sphere<T>(f: impl Fn() -> T, spheres: usize) -> f64 {
    let mut q: Vec<f64> = (0..101)
        .map(|_| {
            let s = Instant::now();
            for _ in 0..20 {
                black_box(f());
            }
            s.elapsed().as_nanos() as f64 / (20 * spheres) as f64
        })
        .collect();
    q.sort_by(f64::total_cmp);
    q[q.len() / 2]
}
