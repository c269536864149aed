//! Priority arbitration's share of a guard cycle: 4 arms, each on a plan
//! (the guard_step scene's motion as planned trajectories), each offering
//! an increment of 8 samples: posed, their conflicts found (robot, sample
//! and link boxes, then spheres) and the grants decided.
//!
//! Printed beside it, from the same run: the whole guard cycle it is part
//! of, and the same cycle's other work (the cycle minus the arbitration).
//!
//! `cargo bench --bench arbitration`

use criterion::Criterion;
use std::time::Instant;

#[path = "common/scene.rs"]
mod scene;
use scene::{Bench, median_us};

fn main() {
    let mut c = Criterion::default().configure_from_args().sample_size(20);
    let bench = Bench::new();
    let mut planned = bench.scene(false, true);
    let offers = planned.guard.offers().to_vec();
    let sampled = offers.iter().filter(|o| o.planned && o.samples == 8).count();
    let now = planned.t;
    c.bench_function("arbitration/4 arms x 8 increment samples", |b| b.iter(|| planned.guard.rearbitrate(now)));
    c.bench_function("arbitration/whole guard cycle, same arms", |b| b.iter(|| planned.step()));

    let mut arb: Vec<f64> = Vec::with_capacity(4000);
    let mut whole: Vec<f64> = Vec::with_capacity(4000);
    for _ in 0..4000 {
        let s = Instant::now();
        planned.step();
        whole.push(s.elapsed().as_secs_f64() * 1e6);
        let s = Instant::now();
        planned.guard.rearbitrate(planned.t);
        arb.push(s.elapsed().as_secs_f64() * 1e6);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (arb_us, whole_us) = (median(&mut arb), median(&mut whole));
    let base_us = median_us(&mut bench.scene(false, false), 2000);
    let conflicts = planned.guard.grants().iter().filter(|g| g.held_by.is_some()).count();
    let still_on = planned.guard.offers().iter().filter(|o| o.planned).count();
    println!();
    println!("== arbitration ==");
    println!(
        "{sampled} of 4 arms offer 8-sample increments ({still_on} still on plan at the end); {conflicts} held by another in the last cycle"
    );
    println!(
        "arbitration median {arb_us:.1} µs per cycle (goal: 20 µs) = {:.2}x of the whole guard cycle it is part of ({whole_us:.1} µs)",
        arb_us / whole_us
    );
    println!(
        "baseline, same run: the guard cycle of the same arms without plans (nothing to arbitrate) {base_us:.1} µs; \
         with plans and arbitration {:.2}x of it",
        whole_us / base_us
    );
}
