//! Platen units on crossing paths, granted increment by increment: each
//! unit asks for its path once, then follows it as far as its latest
//! answer lets it (braking at its maximum deceleration to stop at the
//! grant's end, backing along its path when told to), reporting its pose
//! every cycle. The oracle of [`crate::platen`] checks the real shapes of
//! every pair every cycle.
//!
//! Scenarios: [`swap`] (two units swap places, passing each other),
//! [`ring`] (units on a ring each take the next one's place at once) and
//! [`random`] (2–4 units on slots of a ring each go to another slot through
//! a random point near the middle, so that their paths cross).
//!
//! References for the same paths: **unguarded** (everyone at once, the
//! ideal makespan; they would collide) and **one at a time**: the shared
//! zone is the box around every sample (real shapes, every 10 ms of a
//! unit's run alone) that meets another unit's path; a unit waits at the
//! zone's edge until nobody is in it, then holds it until it leaves, as
//! in [`crate::crossing::one_at_a_time`] (it stops at the edge at once: an
//! optimistic reference). An episode not finished within
//! twice the one-at-a-time makespan plus 2 s is a deadlock.

use crate::crossing::{ZoneLeg, deadlock_bound_s, one_at_a_time};
use crate::platen::{convex_overlap, real_shapes};
use workcell_guard_core::cell::{AllocationSettings, Platen, PlatenUnit};
use workcell_guard_core::frame::Frame;
use workcell_guard_core::model::coverage::Rng;
use workcell_guard_core::platen::geom::UnitShape;
use workcell_guard_core::platen::{Answer, BitAllocator, PlatenError, Pose2, pose_at, wrap};

/// A platen and a path per unit (from its initial pose).
#[derive(Clone, Debug)]
pub struct PathScenario {
    /// The platen.
    pub platen: Platen,
    /// Waypoints per unit (its initial pose not included).
    pub paths: Vec<Vec<Pose2>>,
    /// What it is called in reports.
    pub name: String,
}

/// What path episodes saw.
#[derive(Clone, Debug, Default)]
pub struct PathSimReport {
    /// Episodes run.
    pub episodes: usize,
    /// Cycles run.
    pub cycles: usize,
    /// Cycles in which two real shapes overlapped.
    pub overlaps: usize,
    /// Episodes not finished within their bound.
    pub deadlocks: usize,
    /// Answers that gave a unit more of its path.
    pub increments: usize,
    /// Times a unit was told to back away.
    pub back_aways: usize,
    /// Path requests refused.
    pub refused: usize,
    /// Units whose priority was boosted (they gained no ground for
    /// `priority_boost_after_s`).
    pub boosted: usize,
    /// Sum of makespans (guarded), s.
    pub makespan_s: f64,
    /// Sum of one-at-a-time makespans, s.
    pub one_at_a_time_s: f64,
    /// Sum of unguarded makespans, s.
    pub unguarded_s: f64,
    /// Longest time to answer one cycle's paths, s.
    pub decide_max_s: f64,
    /// Time spent answering paths, s.
    pub decide_s: f64,
}

impl PathSimReport {
    /// Adds another report.
    pub fn merge(&mut self, o: &PathSimReport) {
        self.episodes += o.episodes;
        self.cycles += o.cycles;
        self.overlaps += o.overlaps;
        self.deadlocks += o.deadlocks;
        self.increments += o.increments;
        self.back_aways += o.back_aways;
        self.refused += o.refused;
        self.boosted += o.boosted;
        self.makespan_s += o.makespan_s;
        self.one_at_a_time_s += o.one_at_a_time_s;
        self.unguarded_s += o.unguarded_s;
        self.decide_max_s = self.decide_max_s.max(o.decide_max_s);
        self.decide_s += o.decide_s;
    }
}

fn square_unit(name: &str, half: f64, at: Pose2, priority: i64) -> PlatenUnit {
    PlatenUnit {
        name: name.into(),
        footprint_xy_m: vec![[-half, -half], [half, -half], [half, half], [-half, half]],
        umbilical: None,
        max_speed_mps: 0.5,
        max_decel_mps2: 2.0,
        priority,
        initial_pose: at,
    }
}

fn surface(units: Vec<PlatenUnit>) -> Platen {
    Platen {
        pose: Frame::from_xyz_rpy([0.0; 3], [0.0; 3]),
        size_xy_m: [1.0, 1.0],
        cell_m: 0.002,
        units,
        obstacles: Vec::new(),
        allocation: AllocationSettings::default(),
    }
}

/// Two units swap places, each passing the other on its own side.
pub fn swap() -> PathScenario {
    let (a, b) = ([0.25, 0.5, 0.0], [0.75, 0.5, 0.0]);
    PathScenario {
        platen: surface(vec![square_unit("left", 0.06, a, 2), square_unit("right", 0.06, b, 1)]),
        paths: vec![vec![[0.5, 0.6, 0.0], b], vec![[0.5, 0.4, 0.0], a]],
        name: "two units swap places".into(),
    }
}

/// `n` units on a ring of radius 0.3 m, each to the next one's place
/// along the ring (eight waypoints per turn).
pub fn ring(n: usize) -> PathScenario {
    let slot = |k: f64| {
        let a = std::f64::consts::TAU * k / n as f64;
        [0.5 + 0.3 * a.cos(), 0.5 + 0.3 * a.sin(), 0.0]
    };
    let units = (0..n).map(|i| square_unit(&format!("u{i}"), 0.06, slot(i as f64), i as i64)).collect();
    let paths = (0..n).map(|i| (1..=8).map(|k| slot(i as f64 + k as f64 / 8.0)).collect()).collect();
    PathScenario { platen: surface(units), paths, name: format!("{n} units in a ring") }
}

/// `n` units (2–4) start on every other one of `2n` slots of a ring and
/// go to the slots between, each through a random point near the middle,
/// so that their paths cross. As for the arms' crossing episodes, draws
/// are kept only when every unit's start and goal lie clear of every other
/// unit's whole path: the middle is passed through, never parked in, so
/// some order of turns always finishes.
pub fn random(seed: u64, n: usize) -> PathScenario {
    let mut rng = Rng::new(seed);
    loop {
        let sc = draw(&mut rng, n);
        if parks_clear(&sc) {
            return sc;
        }
    }
}

fn draw(rng: &mut Rng, n: usize) -> PathScenario {
    let phase = rng.range(0.0, std::f64::consts::TAU);
    let slot = |k: usize| {
        let a = phase + std::f64::consts::PI * k as f64 / n as f64;
        [0.5 + 0.38 * a.cos(), 0.5 + 0.38 * a.sin(), 0.0]
    };
    let shift = ((rng.unit() * n as f64) as usize).min(n - 1);
    let mut units = Vec::new();
    let mut paths = Vec::new();
    for i in 0..n {
        let half = rng.range(0.03, 0.05);
        units.push(square_unit(&format!("u{i}"), half, slot(2 * i), (rng.unit() * 100.0) as i64));
        let (r, a) = (rng.range(0.0, 0.12), rng.range(0.0, std::f64::consts::TAU));
        let mid = [0.5 + r * a.cos(), 0.5 + r * a.sin(), rng.range(-0.5, 0.5)];
        paths.push(vec![mid, slot((2 * (i + shift) + 1) % (2 * n))]);
    }
    PathScenario { platen: surface(units), paths, name: format!("{n} units crossing") }
}

/// Whether every unit's start and goal are clear of every other unit's
/// path (real shapes every 5 mm).
fn parks_clear(sc: &PathScenario) -> bool {
    let n = sc.paths.len();
    let shapes: Vec<UnitShape> = sc.platen.units.iter().map(UnitShape::new).collect();
    let mut sweeps: Vec<Vec<Vec<[f64; 2]>>> = Vec::new();
    let mut ends: Vec<[Vec<Vec<[f64; 2]>>; 2]> = Vec::new();
    let mut polys = Vec::new();
    for (u, shape) in shapes.iter().enumerate() {
        let start = sc.platen.units[u].initial_pose;
        let f = Follower::new(start, &sc.paths[u], shape.r_max, 1.0, 1.0);
        let mut all = Vec::new();
        let k = (f.total() / 0.005).ceil() as usize;
        let mut g = f;
        for i in 0..=k {
            g.s = g.total() * i as f64 / k.max(1) as f64;
            real_shapes(shape, g.pose(), &mut polys);
            all.extend(polys.iter().cloned());
        }
        let mut a = Vec::new();
        real_shapes(shape, start, &mut a);
        let mut b = Vec::new();
        real_shapes(shape, *sc.paths[u].last().unwrap_or(&start), &mut b);
        sweeps.push(all);
        ends.push([a, b]);
    }
    (0..n).all(|u| {
        (0..n)
            .filter(|&v| v != u)
            .all(|v| ends[u].iter().flatten().all(|p| sweeps[v].iter().all(|q| !convex_overlap(p, q))))
    })
}

/// A unit following its path as far as it is granted.
struct Follower {
    pts: Vec<Pose2>,
    cum: Vec<f64>,
    s: f64,
    v: f64,
    goal_s: f64,
    vmax: f64,
    decel: f64,
    done_at: Option<f64>,
}

impl Follower {
    fn new(start: Pose2, path: &[Pose2], r_max: f64, vmax: f64, decel: f64) -> Follower {
        let mut pts = vec![start];
        pts.extend_from_slice(path);
        let mut cum = vec![0.0];
        for w in pts.windows(2) {
            let d = (w[1][0] - w[0][0]).hypot(w[1][1] - w[0][1]) + r_max * wrap(w[1][2] - w[0][2]).abs();
            cum.push(cum.last().unwrap_or(&0.0) + d);
        }
        Follower { pts, cum, s: 0.0, v: 0.0, goal_s: 0.0, vmax, decel, done_at: None }
    }

    fn total(&self) -> f64 {
        *self.cum.last().unwrap_or(&0.0)
    }

    fn pose(&self) -> Pose2 {
        let i = self.cum.partition_point(|&c| c <= self.s).clamp(1, self.pts.len() - 1);
        let (a, b) = (self.cum[i - 1], self.cum[i]);
        let t = if b > a { ((self.s - a) / (b - a)).clamp(0.0, 1.0) } else { 1.0 };
        pose_at(self.pts[i - 1], self.pts[i], t)
    }

    /// One step of `dt_s` towards the grant's end, never past it.
    fn step(&mut self, dt_s: f64) {
        let d = self.goal_s - self.s;
        let want = d.signum() * self.vmax.min((2.0 * self.decel * d.abs()).sqrt());
        let dv = (want - self.v).clamp(-self.decel * dt_s, self.decel * dt_s);
        self.v += dv;
        let s = self.s + self.v * dt_s;
        if (self.v > 0.0 && s >= self.goal_s) || (self.v < 0.0 && s <= self.goal_s) {
            (self.s, self.v) = (self.goal_s, 0.0);
        } else {
            self.s = s;
        }
    }

    /// Time to run the whole path alone (accelerate, cruise, brake).
    fn alone_s(&self) -> f64 {
        let (l, v, a) = (self.total(), self.vmax, self.decel);
        if l >= v * v / a { l / v + v / a } else { 2.0 * (l / a).sqrt() }
    }
}

/// The one-at-a-time reference: each unit's stretch of path that meets
/// another unit's path (real shapes, samples every 10 ms of its run alone).
fn zone_legs(sc: &PathScenario, fs: &[Follower], shapes: &[UnitShape]) -> Vec<Vec<ZoneLeg>> {
    const DT: f64 = 0.01;
    let n = fs.len();
    let mut tracks: Vec<Vec<Vec<Vec<[f64; 2]>>>> = Vec::new();
    for (u, f) in fs.iter().enumerate() {
        let mut g = Follower::new(f.pts[0], &sc.paths[u], shapes[u].r_max, f.vmax, f.decel);
        g.goal_s = g.total();
        let mut track = Vec::new();
        let mut polys = Vec::new();
        for _ in 0..((g.alone_s() / DT).ceil() as usize + 1) {
            real_shapes(&shapes[u], g.pose(), &mut polys);
            track.push(polys.clone());
            g.step(DT);
        }
        tracks.push(track);
    }
    // The shared zone: the box around every sample that meets another
    // unit's path.
    let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
    for u in 0..n {
        for sample in &tracks[u] {
            let meets = (0..n).any(|v| {
                v != u && tracks[v].iter().any(|q| sample.iter().any(|p| q.iter().any(|b| convex_overlap(p, b))))
            });
            for p in sample.iter().filter(|_| meets).flatten() {
                for c in 0..2 {
                    (lo[c], hi[c]) = (lo[c].min(p[c]), hi[c].max(p[c]));
                }
            }
        }
    }
    let zone = [[lo[0], lo[1]], [hi[0], lo[1]], [hi[0], hi[1]], [lo[0], hi[1]]];
    (0..n)
        .map(|u| {
            let inside = |i: &usize| lo[0] <= hi[0] && tracks[u][*i].iter().any(|p| convex_overlap(p, &zone));
            let idx: Vec<usize> = (0..tracks[u].len()).filter(inside).collect();
            let end = fs[u].alone_s();
            let window =
                idx.first().map(|&i0| ((i0 as f64 * DT).min(end), ((idx[idx.len() - 1] + 1) as f64 * DT).min(end)));
            vec![ZoneLeg { duration_s: end, window }]
        })
        .collect()
}

/// Runs one scenario at `dt_s` cycles.
pub fn run(sc: &PathScenario, dt_s: f64) -> Result<PathSimReport, PlatenError> {
    let mut a = BitAllocator::new(&sc.platen)?;
    let n = a.units();
    let shapes: Vec<UnitShape> = (0..n).map(|u| a.shape(u).clone()).collect();
    let mut fs: Vec<Follower> = (0..n)
        .map(|u| {
            let pu = &sc.platen.units[u];
            Follower::new(pu.initial_pose, &sc.paths[u], shapes[u].r_max, pu.max_speed_mps, pu.max_decel_mps2)
        })
        .collect();
    let mut rep = PathSimReport { episodes: 1, ..Default::default() };
    rep.unguarded_s = fs.iter().map(Follower::alone_s).fold(0.0, f64::max);
    let priority: Vec<i64> = sc.platen.units.iter().enumerate().map(|(i, u)| u.priority * 64 - i as i64).collect();
    rep.one_at_a_time_s = one_at_a_time(&zone_legs(sc, &fs, &shapes), &priority, dt_s);
    let bound = deadlock_bound_s(rep.one_at_a_time_s);
    let mut requested = vec![false; n];
    let mut answers = Vec::new();
    let mut polys: Vec<Vec<Vec<[f64; 2]>>> = vec![Vec::new(); n];
    let mut boosted = vec![false; n];
    let mut t = 0.0;
    while fs.iter().any(|f| f.done_at.is_none()) {
        if t > bound {
            rep.deadlocks += 1;
            break;
        }
        for (u, f) in fs.iter_mut().enumerate() {
            f.step(dt_s);
            a.pose_update(t, u, t, f.pose());
        }
        let clock = std::time::Instant::now();
        answers.clear();
        for (u, f) in fs.iter().enumerate() {
            if !requested[u] {
                let ans = a.request_path(t, u, 1, &sc.paths[u], f.vmax);
                answers.push((u, ans));
            }
        }
        a.advance_paths(t, &mut answers);
        let took = clock.elapsed().as_secs_f64();
        (rep.decide_s, rep.decide_max_s) = (rep.decide_s + took, rep.decide_max_s.max(took));
        for &(u, ans) in &answers {
            let f = &mut fs[u];
            match ans {
                Answer::Granted { .. } => {
                    requested[u] = true;
                    f.goal_s = f.total();
                    rep.increments += 1;
                }
                Answer::Increment { fraction, backing_from, .. } => {
                    requested[u] = true;
                    let goal = fraction * f.total();
                    rep.increments += (goal > f.goal_s) as usize;
                    rep.back_aways += (goal < f.goal_s && backing_from.is_some()) as usize;
                    f.goal_s = goal;
                }
                Answer::Refused { .. } => rep.refused += 1,
                Answer::Partial { .. } | Answer::Denied { .. } => {}
            }
        }
        for (u, f) in fs.iter_mut().enumerate() {
            if f.done_at.is_none() && requested[u] && a.path_progress(u).is_none() && f.s >= f.total() - 1e-9 {
                f.done_at = Some(t);
            }
            real_shapes(&shapes[u], f.pose(), &mut polys[u]);
            boosted[u] |= a.boosted_since(u).is_some();
        }
        for u in 0..n {
            for v in u + 1..n {
                if polys[u].iter().any(|p| polys[v].iter().any(|q| convex_overlap(p, q))) {
                    rep.overlaps += 1;
                }
            }
        }
        rep.cycles += 1;
        t += dt_s;
    }
    rep.boosted = boosted.iter().filter(|&&b| b).count();
    rep.makespan_s = fs.iter().map(|f| f.done_at.unwrap_or(t)).fold(0.0, f64::max);
    Ok(rep)
}

/// The swap and ring scenarios, then `episodes` crossing episodes for 2, 3
/// and 4 units (seeds from `seed`): what `simulate --platen-paths` prints,
/// and how many episodes had an overlap or a deadlock.
pub fn suite(seed: u64, episodes: usize, dt_s: f64) -> Result<(String, usize), PlatenError> {
    use std::fmt::Write;
    let mut out = format!("\nplaten units on crossing paths ({} ms cycles):\n", dt_s * 1e3);
    let mut bad = 0;
    let line = |name: &str, t: &PathSimReport, out: &mut String| {
        let _ = writeln!(
            out,
            "  {name}: {} episodes, makespan {:.2}x one at a time, {:.2}x unguarded; {} increments, {} back-aways; \
             overlaps {}, deadlocks {}; {:.1} µs per cycle, longest {:.0} µs",
            t.episodes,
            t.makespan_s / t.one_at_a_time_s,
            t.makespan_s / t.unguarded_s,
            t.increments,
            t.back_aways,
            t.overlaps,
            t.deadlocks,
            t.decide_s * 1e6 / t.cycles.max(1) as f64,
            t.decide_max_s * 1e6
        );
    };
    for sc in [swap(), ring(3)] {
        let r = run(&sc, dt_s)?;
        bad += (r.overlaps > 0 || r.deadlocks > 0) as usize;
        line(&sc.name, &r, &mut out);
    }
    for n in 2..=4usize {
        let mut t = PathSimReport::default();
        for k in 0..episodes as u64 {
            let r = run(&random(seed + 1000 * n as u64 + k, n), dt_s)?;
            bad += (r.overlaps > 0 || r.deadlocks > 0) as usize;
            t.merge(&r);
        }
        line(&format!("{n} units crossing"), &t, &mut out);
    }
    Ok((out, bad))
}
