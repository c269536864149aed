//! Platen allocation: a 1 m × 1 m surface at 1 mm cells
//! (1000 × 1000), 8 units (80–120 mm), each asking in turn to move 200 mm in
//! a random direction; on a grant it reports a pose halfway, then arrives.
//!
//! Printed, from the same run and the same request sequence: the median
//! decision (one `request`) of the bitmap allocator with both install
//! strategies, and of the naive per-cell boolean grid; the same with each
//! unit trailing an umbilical cord to the surface's edge; and the pose
//! update costs (freeing the path mid-move, arrival).
//!
//! `cargo bench --bench platen`

use criterion::Criterion;
use std::hint::black_box;
use std::time::Instant;
use workcell_guard_core::Frame;
use workcell_guard_core::model::coverage::Rng;
use workcell_guard_core::platen::{Allocator, Answer, BitMap, BoolMap, CellMap, Install, pose_at};
use workcell_guard_description::workcell::{AllocationSettings, Platen, PlatenUnit, Umbilical};

fn scene(cords: bool) -> Platen {
    let mut rng = Rng::new(5);
    let units = (0..8)
        .map(|i| {
            let (w, h) = (rng.range(0.08, 0.12), rng.range(0.08, 0.12));
            let (x, y) = (0.125 + 0.25 * (i % 4) as f64, if i < 4 { 0.3 } else { 0.7 });
            PlatenUnit {
                name: format!("u{i}"),
                footprint_xy_m: vec![
                    [-w / 2.0, -h / 2.0],
                    [w / 2.0, -h / 2.0],
                    [w / 2.0, h / 2.0],
                    [-w / 2.0, h / 2.0],
                ],
                umbilical: cords.then(|| Umbilical {
                    anchor_xy_m: [x, if i < 4 { 0.0 } else { 1.0 }],
                    via_xy_m: vec![],
                    attach_xy_m: [0.0, 0.0],
                    width_m: 0.015,
                }),
                max_decel_mps2: 2.0,
                priority: 0,
                max_speed_mps: 0.5,
                initial_pose: [x, y, 0.0],
            }
        })
        .collect();
    Platen {
        pose: Frame::from_xyz_rpy([0.0; 3], [0.0; 3]),
        size_xy_m: [1.0, 1.0],
        cell_m: 0.001,
        units,
        obstacles: vec![],
        allocation: AllocationSettings::default(),
    }
}

/// Per-operation times (µs) of a run, and its answers.
#[derive(Default)]
struct Run {
    decide: Vec<f64>,
    mid: Vec<f64>,
    arrive: Vec<f64>,
    answers: Vec<Answer>,
}

struct Workload<M> {
    a: Allocator<M>,
    rng: Rng,
    now: f64,
    k: usize,
    /// Targets anywhere on the surface at any heading (what `simulate`
    /// asks), not 200 mm straight moves.
    anywhere: Option<[f64; 2]>,
}

impl<M: CellMap> Workload<M> {
    fn new(p: &Platen, how: Install) -> Workload<M> {
        let mut a: Allocator<M> = Allocator::new(p).unwrap();
        a.set_install(how);
        for u in 0..a.units() {
            a.pose_update(0.0, u, 0.0, a.pose(u));
        }
        Workload { a, rng: Rng::new(11), now: 0.0, k: 0, anywhere: None }
    }

    /// The next unit in turn asks to move 200 mm; on a grant it reports a
    /// pose halfway, then arrives. Times each of the three (µs).
    fn step(&mut self, out: &mut Run) {
        let a = &mut self.a;
        let u = self.k % a.units();
        self.now += 0.2;
        let now = self.now;
        let p0 = a.pose(u);
        a.pose_update(now, u, now, p0);
        let target = match self.anywhere {
            Some([w, h]) => {
                let pi = std::f64::consts::PI;
                [self.rng.range(0.0, w), self.rng.range(0.0, h), self.rng.range(-pi, pi)]
            }
            None => {
                let ang = self.rng.range(0.0, std::f64::consts::TAU);
                [p0[0] + 0.2 * ang.cos(), p0[1] + 0.2 * ang.sin(), p0[2]]
            }
        };
        let s = Instant::now();
        let ans = black_box(a.request(now, u, self.k as u64, black_box(target)));
        out.decide.push(s.elapsed().as_secs_f64() * 1e6);
        out.answers.push(ans);
        if let Answer::Granted { goal, .. } | Answer::Partial { goal, .. } = ans {
            let s = Instant::now();
            black_box(a.pose_update(now + 0.01, u, now + 0.01, pose_at(p0, goal, 0.5)));
            out.mid.push(s.elapsed().as_secs_f64() * 1e6);
            let s = Instant::now();
            black_box(a.pose_update(now + 0.02, u, now + 0.02, goal));
            out.arrive.push(s.elapsed().as_secs_f64() * 1e6);
        }
        self.k += 1;
    }
}

fn run<M: CellMap>(p: &Platen, how: Install, requests: usize) -> Run {
    let mut w = Workload::<M>::new(p, how);
    let mut out = Run::default();
    for _ in 0..requests {
        w.step(&mut out);
    }
    out
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    if v.is_empty() { f64::NAN } else { v[v.len() / 2] }
}

fn pct(v: &[f64], q: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q) as usize]
}

fn mix(a: &[Answer]) -> String {
    let g = a.iter().filter(|x| matches!(x, Answer::Granted { .. })).count();
    let p = a.iter().filter(|x| matches!(x, Answer::Partial { .. })).count();
    let d = a.iter().filter(|x| matches!(x, Answer::Denied { .. })).count();
    let r = a.len() - g - p - d;
    format!("{g} granted, {p} partial, {d} denied, {r} refused")
}

fn median_of(a: &Run, pick: fn(&Answer) -> bool) -> f64 {
    let v: Vec<f64> = a.decide.iter().zip(&a.answers).filter(|(_, x)| pick(x)).map(|(t, _)| *t).collect();
    median(&v)
}

fn main() {
    word_operations();
    const N: usize = 4000;
    const N_NAIVE: usize = 200;
    println!();
    println!("== platen allocation: 1000 x 1000 cells at 1 mm, 8 units, 200 mm moves ==");
    for cords in [false, true] {
        let p = scene(cords);
        // The two strategies in lockstep, so that the machine's noise falls
        // on both alike.
        let (mut wc, mut wg) =
            (Workload::<BitMap>::new(&p, Install::CheckFirst), Workload::<BitMap>::new(&p, Install::AsYouGo));
        let (mut check, mut go) = (Run::default(), Run::default());
        for _ in 0..N {
            wc.step(&mut check);
            wg.step(&mut go);
        }
        let n_naive = if std::env::var("WG_BITMAP_ONLY").is_ok() { 8 } else { N_NAIVE };
        let naive = run::<BoolMap>(&p, Install::CheckFirst, n_naive);
        assert_eq!(check.answers, go.answers, "both strategies answer alike");
        assert_eq!(check.answers[..n_naive], naive.answers[..], "the naive grid answers alike");
        println!("-- {} ({} requests: {})", if cords { "with cords" } else { "no cords" }, N, mix(&check.answers));
        let (mc, mg, mn) = (median(&check.decide), median(&go.decide), median(&naive.decide));
        println!(
            "  median decision: bitmap install-as-you-go (default) {mg:.2} us (p90 {:.2}, p99 {:.2}) | bitmap check-first {mc:.2} us (p90 {:.2}) -> as-you-go / check-first {:.2} | naive bool grid {mn:.1} us ({} requests) -> naive / default {:.0}x",
            pct(&go.decide, 0.9),
            pct(&go.decide, 0.99),
            pct(&check.decide, 0.9),
            mg / mc,
            n_naive,
            mn / mg
        );
        println!(
            "  by answer (check-first): granted {:.2} us, partial {:.2} us, denied {:.2} us | as-you-go: granted {:.2}, partial {:.2}, denied {:.2}",
            median_of(&check, |x| matches!(x, Answer::Granted { .. })),
            median_of(&check, |x| matches!(x, Answer::Partial { .. })),
            median_of(&check, |x| matches!(x, Answer::Denied { .. })),
            median_of(&go, |x| matches!(x, Answer::Granted { .. })),
            median_of(&go, |x| matches!(x, Answer::Partial { .. })),
            median_of(&go, |x| matches!(x, Answer::Denied { .. })),
        );
        println!(
            "  pose update: mid-move (frees the path passed) {:.2} us | arrival {:.2} us | naive {:.1} / {:.1} us",
            median(&check.mid),
            median(&check.arrive),
            median(&naive.mid),
            median(&naive.arrive)
        );
    }

    sample_cell();

    let mut c = Criterion::default().configure_from_args();
    for cords in [false, true] {
        let p = scene(cords);
        let name = if cords { "with cords" } else { "no cords" };
        for how in [Install::CheckFirst, Install::AsYouGo] {
            let mut w = Workload::<BitMap>::new(&p, how);
            let mut out = Run::default();
            c.bench_function(&format!("platen/{name}/{how:?}: request + 2 pose updates"), |b| {
                b.iter(|| {
                    out.decide.clear();
                    out.mid.clear();
                    out.arrive.clear();
                    out.answers.clear();
                    w.step(&mut out);
                })
            });
        }
    }
    c.final_summary();
}

/// The bundled sample cell's platen (2 units with cords, a fixture) asked
/// what `simulate` asks (targets anywhere, any heading), beside `simulate`'s
/// own closed loop on the same cell in the same run.
fn sample_cell() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config/workcell.yaml");
    let wc = workcell_guard_description::workcell::load(&path).expect("the sample cell loads");
    let p = wc.platen.expect("the sample cell has a platen");
    let mut w = Workload::<BitMap>::new(&p, Install::AsYouGo);
    w.anywhere = Some(p.size_xy_m);
    let mut run = Run::default();
    for _ in 0..4000 {
        w.step(&mut run);
    }
    let mut sim = workcell_guard_sim::platen::PlatenSimReport::default();
    for k in 0..20 {
        sim.merge(&workcell_guard_sim::platen::episode(&p, 1 + k, 10.0, 0.01).expect("an episode runs"));
    }
    // Requests refused (a denied unit asking before its retry time, which
    // `simulate`'s units wait out) are left out: they decide nothing.
    let decided: Vec<f64> = run
        .decide
        .iter()
        .zip(&run.answers)
        .filter(|(_, x)| !matches!(x, Answer::Refused { .. }))
        .map(|(t, _)| *t)
        .collect();
    let (b50, b99) = (pct(&decided, 0.5), pct(&decided, 0.99));
    let (s50, s99) = (sim.decision_us(0.5), sim.decision_us(0.99));
    println!();
    println!("== platen allocation: the sample cell (config/workcell.yaml), targets anywhere at any heading ==");
    println!("-- bench (4000 requests: {}; the refused left out)", mix(&run.answers));
    println!(
        "  decision p50 {b50:.2} us, p99 {b99:.2} us | by answer: granted {:.2}, partial {:.2}, denied {:.2} us",
        median_of(&run, |x| matches!(x, Answer::Granted { .. })),
        median_of(&run, |x| matches!(x, Answer::Partial { .. })),
        median_of(&run, |x| matches!(x, Answer::Denied { .. })),
    );
    println!(
        "-- simulate's closed loop (20 episodes of 10 s, {} decisions): p50 {s50:.2} us, p99 {s99:.2} us -> simulate / bench: p50 {:.2}x, p99 {:.2}x",
        sim.decisions_s.len(),
        s50 / b50,
        s99 / b99
    );
}

/// The rasterizer and the word operations alone, on a 100 mm square swept
/// 200 mm at 30°.
fn word_operations() {
    let g = workcell_guard_core::platen::Grid::new([1.0, 1.0], 0.001);
    let mut m = BitMap::new(&g);
    let (c, s) = (0.2 * 30f64.to_radians().cos(), 0.2 * 30f64.to_radians().sin());
    let poly =
        [[0.35, 0.35], [0.45, 0.35], [0.45 + c, 0.35 + s], [0.45 + c, 0.45 + s], [0.35 + c, 0.45 + s], [0.35, 0.45]];
    let t = Instant::now();
    let reps = 20_000;
    for _ in 0..reps {
        m.clear();
        m.raster(&g, black_box(&poly));
    }
    let us = t.elapsed().as_secs_f64() * 1e6 / reps as f64;
    println!("raster + clear of a 200-row hull: {us:.2} us ({:.1} ns/row), {} cells", us * 1e3 / 200.0, m.count());
    let t = Instant::now();
    for _ in 0..reps {
        m.raster(&g, black_box(&poly));
    }
    let us = t.elapsed().as_secs_f64() * 1e6 / reps as f64;
    println!("raster alone: {us:.2} us");
    let mut world = BitMap::new_world(&g);
    m.clear();
    m.raster(&g, &poly);
    let time = |name: &str, f: &mut dyn FnMut()| {
        let t = Instant::now();
        for _ in 0..reps {
            f();
        }
        println!("{name}: {:.3} us", t.elapsed().as_secs_f64() * 1e6 / reps as f64);
    };
    time("first_common (200 rows)", &mut || {
        black_box(world.first_common(black_box(&m)));
    });
    time("xor_from twice (200 rows)", &mut || {
        world.xor_from(black_box(&m));
        world.xor_from(black_box(&m));
    });
    time("install check-first + xor back", &mut || {
        let _ = world.install(black_box(&m), Install::CheckFirst);
        world.xor_from(black_box(&m));
    });
    let mut sw = BitMap::new(&g);
    time("raster_install + xor back + clear (200 rows)", &mut || {
        let _ = sw.raster_install(&g, black_box(&poly), &mut world);
        world.xor_from(&sw);
        sw.clear();
    });
}
