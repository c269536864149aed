//! Priority arbitration's share of a guard cycle: 4 arms, each on a plan
//! (the guard_step scene's motion as planned trajectories), each offering
//! an increment of 8 samples: posed, their conflicts found (boxes, then
//! spheres against eight samples at once) and the grants decided. Measured where
//! the first two arms face each other so that their increments meet, and
//! in the guard_step scene, where every arm keeps apart.
//!
//! Printed beside it, from the same run: the same arbitration with its
//! conflicts found sample pair by sample pair (boxes, then spheres; the
//! baseline, the same table), the whole guard cycle it is
//! part of, and the guard cycle of the same arms without plans.
//!
//! `cargo bench --bench arbitration`

use criterion::Criterion;
use std::time::Instant;

#[path = "common/scene.rs"]
mod scene;
use scene::{Bench, Scene, median_us};

/// Median over `cycles` of one arbitration after each guard step, µs.
fn arbitration_us(scene: &mut Scene, cycles: usize) -> f64 {
    let mut v: Vec<f64> = (0..cycles)
        .map(|_| {
            scene.step();
            let s = Instant::now();
            scene.guard.rearbitrate(scene.t);
            s.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Robot pairs whose increments meet this cycle.
fn meeting_pairs(scene: &Scene) -> usize {
    let c = scene.guard.conflicts();
    let n = c.robots();
    (0..n).flat_map(|a| (a + 1..n).map(move |b| (a, b))).filter(|&(a, b)| c.count(a, b) > 0).count()
}

fn main() {
    let mut c = Criterion::default().configure_from_args().sample_size(20);
    let (apart, facing) = (Bench::new(false), Bench::new(true));
    let mut planned = facing.scene(false, true);
    let mut boxed = facing.scene(true, true);
    let offers = planned.guard.offers().to_vec();
    let sampled = offers.iter().filter(|o| o.planned && o.samples == 8).count();
    let meeting = meeting_pairs(&planned);
    let (now, then) = (planned.t, boxed.t);
    c.bench_function("arbitration/4 arms x 8 increment samples", |b| b.iter(|| planned.guard.rearbitrate(now)));
    c.bench_function("arbitration/same, conflicts by sample pairs (baseline)", |b| {
        b.iter(|| boxed.guard.rearbitrate(then))
    });
    c.bench_function("arbitration/whole guard cycle, same arms", |b| b.iter(|| planned.step()));

    let arb_us = arbitration_us(&mut planned, 4000);
    let boxes_us = arbitration_us(&mut boxed, 4000);
    let whole_us = median_us(&mut planned, 4000);
    let base_us = median_us(&mut facing.scene(false, false), 2000);
    let (apart_us, apart_boxes_us) =
        (arbitration_us(&mut apart.scene(false, true), 2000), arbitration_us(&mut apart.scene(true, true), 2000));
    let held = planned.guard.grants().iter().filter(|g| g.held_by.is_some()).count();
    let still_on = planned.guard.offers().iter().filter(|o| o.planned).count();
    println!();
    println!("== arbitration ==");
    println!(
        "{sampled} of 4 arms offer 8-sample increments ({still_on} still on plan at the end); \
         {meeting} of 6 robot pairs' increments meet; {held} held by another in the last cycle"
    );
    println!(
        "arbitration median {arb_us:.1} µs per cycle (goal: 20 µs) = {:.2}x of the whole guard cycle it is part of ({whole_us:.1} µs)",
        arb_us / whole_us
    );
    println!(
        "conflicts lane by lane: {arb_us:.1} µs vs {boxes_us:.1} µs sample pair by sample pair (baseline, same run, same tables): {:.2}x",
        arb_us / boxes_us
    );
    println!(
        "arms apart (the guard_step scene, no increments meet): {apart_us:.1} µs lane by lane, {apart_boxes_us:.1} µs by sample pairs: {:.2}x",
        apart_us / apart_boxes_us
    );
    println!(
        "baseline, same run: the guard cycle of the same arms without plans (nothing to arbitrate) {base_us:.1} µs; \
         with plans and arbitration {:.2}x of it",
        whole_us / base_us
    );
}
