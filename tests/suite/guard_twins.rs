//! Twins: each shortcut of the guard's checks against the plain way it
//! stands for. The hashed robot check against every sphere pair, the
//! arbitration's conflicts lane by lane against sample pair by sample
//! pair, the split
//! cycle against a whole one, and the cell check's skipping (link bounds,
//! anchors) against looking every sphere up: same decisions, cycle by
//! cycle, over random motions of four arms through each other's space and
//! past the cell's obstacles.

use crate::common;

use common::cell::{cache_dir, feed, guard, random_speeds, sample_cell};
use workcell_guard_core::field::DistanceField;
use workcell_guard_core::forecast::track::JointPlan;
use workcell_guard_core::guard::{Body, Decision, JointStateIn, Scope};
use workcell_guard_core::model::coverage::Rng;
use workcell_guard_sim::arms::{self as sim, Sim, SimOptions};

#[test]
fn the_hashed_robot_check_decides_exactly_as_all_pairs() {
    let (cell, start, field) = facing_arms();
    let across = |p: Option<(Body, Body)>| matches!(p, Some((Body::Link { robot: x, .. }, Body::Link { robot: y, .. })) if x != y);
    let mut robot_stops = 0;
    for seed in 1..=12u64 {
        let mut lanes = workcell_guard_description::build_guard(&cell, field.clone(), Some(cache_dir())).unwrap().0;
        let mut brute = workcell_guard_description::build_guard(&cell, field.clone(), Some(cache_dir())).unwrap().0;
        brute.set_all_pairs(true);
        let mut rng = Rng::new(seed);
        let speeds = random_speeds(&cell, &mut rng);
        let mut qs = start.clone();
        for k in 0..320 {
            let t = k as f64 * 0.002;
            advance(&mut qs, &speeds, t);
            let a = feed(&mut lanes, &qs, t);
            let b = feed(&mut brute, &qs, t);
            assert_eq!(a, b, "seed {seed} cycle {k}");
            for r in 0..qs.len() {
                let (x, y) = (lanes.clearances(r).unwrap(), brute.clearances(r).unwrap());
                assert_eq!(x.other_robots_m, y.other_robots_m, "seed {seed} cycle {k} robot {r}");
                robot_stops += usize::from(x.other_robots_m.is_finite());
            }
            robot_stops += a
                .iter()
                .filter(|d| match d {
                    Decision::Stop(s) => across(s.pair),
                    Decision::Continue { pair, .. } => across(*pair),
                })
                .count();
        }
        if robot_stops > 20 {
            break;
        }
    }
    assert!(robot_stops > 0, "the scene must bring robots close");
    println!("{robot_stops} decisions with a robot pair in reach, identical with and without the hash");
}

/// The arbitration's conflicts between the arms' increments, lane by lane
/// and sample pair by sample pair: the same table, to the bit, every
/// cycle, with every arm following its motion as its plan.
#[test]
fn the_arbitration_finds_lane_by_lane_exactly_the_conflicts_of_sample_pairs() {
    let (cell, start, field) = facing_arms();
    let (mut compared, mut conflicting, mut partial) = (0usize, 0usize, 0usize);
    for seed in 1..=2u64 {
        let mut lanes = workcell_guard_description::build_guard(&cell, field.clone(), Some(cache_dir())).unwrap().0;
        let mut pairs = workcell_guard_description::build_guard(&cell, field.clone(), Some(cache_dir())).unwrap().0;
        pairs.set_all_pairs(true);
        // Sphere by sphere: with the links' shapes refining, the pair named
        // for a stop may differ (a pair later on both paths than a
        // conflict found first is not refined, and the orders differ).
        lanes.set_exact_refinement(false);
        pairs.set_exact_refinement(false);
        let speeds = random_speeds(&cell, &mut Rng::new(seed));
        // The motion, 2 ms apart, is each arm's plan.
        let mut qs = start.clone();
        let mut path: Vec<Vec<Vec<f64>>> = vec![Vec::new(); qs.len()];
        for k in 0..400 {
            advance(&mut qs, &speeds, k as f64 * 0.002);
            qs.iter().zip(&mut path).for_each(|(q, p)| p.push(q.clone()));
        }
        for (r, p) in path.iter().enumerate() {
            let times = (0..p.len()).map(|k| k as f64 * 0.002).collect();
            let plan = JointPlan::new(p[0].len(), times, p.concat()).unwrap();
            lanes.set_plan(r, Some(plan.clone())).unwrap();
            pairs.set_plan(r, Some(plan)).unwrap();
        }
        for (k, qs) in (0..300).map(|k| (k, (0..path.len()).map(|r| path[r][k].clone()).collect::<Vec<_>>())) {
            let t = k as f64 * 0.002;
            assert_eq!(feed(&mut lanes, &qs, t), feed(&mut pairs, &qs, t), "seed {seed} cycle {k}");
            assert_eq!(lanes.conflicts(), pairs.conflicts(), "seed {seed} cycle {k}");
            assert_eq!(lanes.grants(), pairs.grants(), "seed {seed} cycle {k}");
            let planned = lanes.offers().iter().filter(|o| o.planned).count();
            compared += usize::from(planned >= 2);
            let n = qs.len();
            let c = lanes.conflicts();
            conflicting += usize::from((0..n).any(|a| (a + 1..n).any(|b| c.count(a, b) > 0)));
            partial += (0..n)
                .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
                .filter(|&(a, b)| (1..64).contains(&c.count(a, b)))
                .count();
        }
    }
    assert!(compared > 400, "the arms must be on their plans: {compared} cycles compared");
    assert!(conflicting > 50, "the increments must meet: {conflicting} cycles with conflicts");
    println!(
        "{compared} cycles compared, {conflicting} with conflicts, {partial} pair tables partly set: identical tables and grants"
    );
}

/// A transport that cycles on each joint state decides the robot whose
/// state arrived first (`Scope::First`), publishes its stop, then the
/// others (`Scope::Rest`): together they must decide what one whole
/// cycle decides, for every robot, stops and pairs included.
#[test]
fn a_split_evaluation_decides_exactly_as_a_whole_one() {
    let (cell, start, field) = facing_arms();
    let (mut stops, mut goes, mut robot_pairs) = (0, 0, 0);
    for seed in 1..=4u64 {
        let mut whole = workcell_guard_description::build_guard(&cell, field.clone(), Some(cache_dir())).unwrap().0;
        let mut split = workcell_guard_description::build_guard(&cell, field.clone(), Some(cache_dir())).unwrap().0;
        let mut rng = Rng::new(seed);
        let speeds = random_speeds(&cell, &mut rng);
        let mut qs = start.clone();
        for k in 0..1200 {
            // One robot's state per cycle, in turn, as they arrive; still
            // for the first 0.4 s (past the release hold), then moving.
            let r = k % qs.len();
            let t = k as f64 * 0.001;
            let w = ((t - 0.4) * 4.0).clamp(0.0, 1.0);
            for (x, v) in qs[r].iter_mut().zip(&speeds[r]) {
                *x += w * v * 0.004;
            }
            // Now and then a refused state (NaN) in the middle of the run.
            let mut q = qs[r].clone();
            if k == 600 || k == 1001 {
                q[0] = f64::NAN;
            }
            let s_in = JointStateIn { robot: r, stamp_s: t, positions: &q, velocities: None };
            let _ = whole.ingest(t, &s_in);
            let _ = split.ingest(t, &s_in);
            let a = whole.cycle(t, Scope::All).manipulators.to_vec();
            let first = split.cycle(t, Scope::First(r)).manipulators.get(r).copied().expect("a manipulator");
            // Compared as text: a refused NaN is carried in the reason.
            assert_eq!(format!("{first:?}"), format!("{:?}", a[r]), "seed {seed} cycle {k}: the first robot");
            let b = split.cycle(t, Scope::Rest).manipulators.to_vec();
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "seed {seed} cycle {k}");
            stops += a.iter().filter(|d| d.is_stop()).count();
            goes += a.iter().filter(|d| !d.is_stop()).count();
            for r in 0..qs.len() {
                robot_pairs += usize::from(whole.clearances(r).unwrap().other_robots_m.is_finite());
            }
        }
    }
    assert!(split_guard_ignores_unknown_robots());
    assert!(
        stops > 0 && goes > 0 && robot_pairs > 0,
        "the scene must bring robots close ({stops} stops, {goes} continues, {robot_pairs} on robot pairs)"
    );
    println!("{stops} stops, {goes} continues, {robot_pairs} on a robot pair: identical split and whole");
}

fn split_guard_ignores_unknown_robots() -> bool {
    let mut g = guard();
    let before = g.cycle(1.0, Scope::All).manipulators.to_vec();
    g.cycle(1.0, Scope::First(99)).manipulators.get(99).copied().is_none()
        && g.cycle(1.0, Scope::Rest).manipulators == before.as_slice()
}

/// The cell check skips links whose bound (one lookup at the centre of the
/// link's box) and spheres whose bound from that anchor cannot beat the
/// margin or the least clearance so far. Looking every sphere up must
/// decide exactly the same, pair and time to contact included, while the
/// arms sweep past the cell's obstacles and the grid's faces, from clear
/// starts and from starts next to the obstacles.
#[test]
fn the_cell_checks_skipping_decides_exactly_as_looking_every_sphere_up() {
    let mut cell = sim::cell_with_arms(sample_cell(), 4);
    cell.guard.max_path_samples = 24;
    let mut s = Sim::new(cell.clone(), SimOptions::default(), Some(cache_dir())).unwrap();
    let field = DistanceField::from_workcell(&cell);
    let (mut cell_stops, mut cell_closest, mut compared) = (0, 0, 0);
    for seed in 1..=10u64 {
        let mut rng = Rng::new(100 + seed);
        let Some(start) = s.clear_start(&mut rng) else { continue };
        let mut skipping = workcell_guard_description::build_guard(&cell, field.clone(), Some(cache_dir())).unwrap().0;
        let mut every = workcell_guard_description::build_guard(&cell, field.clone(), Some(cache_dir())).unwrap().0;
        every.set_every_sphere(true);
        // Faster than a controller would go, so the paths reach the cell.
        let speeds: Vec<Vec<f64>> =
            random_speeds(&cell, &mut rng).into_iter().map(|v| v.into_iter().map(|x| 4.0 * x).collect()).collect();
        let mut qs = start.clone();
        for k in 0..300 {
            let t = k as f64 * 0.002;
            advance(&mut qs, &speeds, t);
            let a = feed(&mut skipping, &qs, t);
            let b = feed(&mut every, &qs, t);
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "seed {seed} cycle {k}");
            compared += a.len();
            for (r, d) in a.iter().enumerate() {
                let c = every.clearances(r).unwrap().cell_m;
                // Never above what the exhaustive check finds.
                assert!(skipping.clearances(r).unwrap().cell_m >= c || c.is_nan(), "seed {seed} cycle {k} robot {r}");
                let pair = match d {
                    Decision::Stop(st) => st.pair,
                    Decision::Continue { pair, .. } => *pair,
                };
                cell_closest += usize::from(pair.is_some_and(|(_, b)| b == Body::Cell));
                cell_stops +=
                    usize::from(matches!(d, Decision::Stop(st) if st.pair.is_some_and(|(_, b)| b == Body::Cell)));
            }
        }
    }
    assert!(cell_closest > 100, "the cell must often be the closest body: {cell_closest}");
    assert!(cell_stops > 0, "the motions must stop some arm at the cell");
    println!("{compared} decisions compared, {cell_closest} with the cell closest, {cell_stops} cell stops: identical");
}

/// The same in the closed loop: arms that obey the stops of a guard that
/// looks every sphere up move exactly as under the skipping one.
#[test]
fn the_closed_loop_runs_the_same_with_every_sphere_looked_up() {
    let cell = sim::cell_with_arms(sample_cell(), 2);
    let mut skipping = Sim::new(cell.clone(), SimOptions::default(), Some(cache_dir())).unwrap();
    let mut every = Sim::new(cell, SimOptions::default(), Some(cache_dir())).unwrap();
    every.guard_mut().set_every_sphere(true);
    let (mut stops, mut episodes) = (0, 0);
    for seed in 1..=12u64 {
        let (mut a, mut b) = (skipping.episode(seed), every.episode(seed));
        (a.guard_time_s, b.guard_time_s) = (0.0, 0.0);
        assert_eq!(a, b, "seed {seed}");
        assert_eq!(a.contacts(), 0, "seed {seed}: {a:?}");
        // Stop flags raised: the checks' stops and the grants' holds.
        stops += a.stops + a.holds;
        episodes += a.episodes;
    }
    assert!(episodes >= 10 && stops > 0, "{episodes} episodes, {stops} stops and holds");
}

/// One 2 ms step of every arm at time `t`: ramping up over the first
/// 0.25 s, then cruising at `speeds`, so the arms sweep through each
/// other's space and the cell's.
fn advance(qs: &mut [Vec<f64>], speeds: &[Vec<f64>], t: f64) {
    let w = (t * 4.0).min(1.0);
    for (q, v) in qs.iter_mut().zip(speeds) {
        for (x, s) in q.iter_mut().zip(v) {
            *x += w * s * 0.002;
        }
    }
}

/// Four arms from a clear start, the first two turned part way towards
/// each other (the end-to-end test's approach) so that they meet within a
/// run; with the cell's field.
fn facing_arms() -> (workcell_guard_core::cell::Workcell, Vec<Vec<f64>>, DistanceField) {
    let mut cell = sim::cell_with_arms(sample_cell(), 4);
    cell.guard.max_path_samples = 16;
    let mut s = Sim::new(cell.clone(), SimOptions::default(), Some(cache_dir())).unwrap();
    let mut start = s.clear_start(&mut Rng::new(5)).expect("a clear start");
    start[0] = vec![0.9, 0.7, 1.1, 0.0, 0.0, 0.0, 0.02];
    start[1] = vec![-0.9, 1.2, 0.0, -0.3, 0.0, 0.0, 0.0, 0.0];
    let field = DistanceField::from_workcell(&cell);
    (cell, start, field)
}
