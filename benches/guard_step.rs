//! One whole `Guard::cycle` (through `Guard::step`): 4 arms (the sample cell's two and
//! copies of them on two more pedestals; 7–8 DOF, 85–188 spheres each), each
//! moving so that its stopping path is checked at 8 configurations, against
//! a 4 × 4 × 2 m field at 2 cm, on one core.
//!
//! Printed beside it, from the same run: the same step with every arm
//! following a planned trajectory the guard has (its stopping path braking
//! along the plan); the same step with the
//! robot-vs-robot check done by all sphere pairs instead of the hash, and
//! the hash's memory beside dense grids of the cell; and the same step with
//! every arm forecasting through a learned stopping model (`calibrate`'s,
//! fitted here to 600 simulated stops per arm). And the step on plans with
//! the speed scaling's look-ahead narrowed to 1 mm (`slow_down_m`): the
//! checks then look only as far as they did before the scaling came from
//! the stopping path. And two arms swinging where their spheres come
//! within the clearance margin while their exact shapes stay clear, with
//! the exact refinement of link pairs and with the spheres alone.
//!
//! `cargo bench --bench guard_step`

use criterion::Criterion;
use workcell_guard_core::guard::{CommandPolicy, PlanState};

#[path = "common/scene.rs"]
mod scene;
use scene::{Bench, median_us};

fn main() {
    let mut c = Criterion::default().configure_from_args().sample_size(20);
    let bench = Bench::new(false);
    let cell = &bench.cell;
    let make = |all_pairs, plans| bench.scene(all_pairs, plans);
    let mut hashed = make(false, false);
    let mut brute = make(true, false);
    let mut planned = make(false, true);
    let mut narrow = make(false, true);
    let policy = narrow.guard.command_policy();
    narrow.guard.set_command_policy(CommandPolicy { slow_down_m: 1e-3, ..policy });
    let mut learned_bench = Bench::new(false);
    for m in &mut learned_bench.cell.manipulators {
        m.stopping = Some(learned_model(m));
    }
    let mut learned = learned_bench.scene(false, false);
    // The first two arms swinging where their spheres come within the
    // clearance margin of each other while their exact shapes stay clear
    // (the right arm's first joint at −0.20 rad towards the left arm):
    // the exact refinement on, and off (the spheres alone) in the same run.
    let mut near_start = bench.start.clone();
    near_start[0] = vec![0.0, 0.7, 1.1, 0.0, 0.0, 0.0, 0.02];
    near_start[1] = vec![-0.20, 1.2, 0.0, -0.3, 0.0, 0.0, 0.0, 0.0];
    let mut near = bench.scene_from(&near_start, false, false);
    near.guard.set_exact_refinement(true);
    let mut near_spheres = bench.scene_from(&near_start, false, false);
    near_spheres.guard.set_exact_refinement(false);
    let on_plan = (0..4).filter(|&r| matches!(planned.guard.plan_state(r), Some(PlanState::On { .. }))).count();
    if on_plan < 4 {
        let states: Vec<_> = (0..4).map(|r| planned.guard.plan_state(r)).collect();
        println!("not every arm on its plan: {states:?}");
    }
    let spheres: Vec<usize> = cell.manipulators.iter().map(|m| m.spheres.fine_count()).collect();
    let samples: Vec<usize> = (0..4).map(|r| hashed.guard.samples_checked(r)).collect();
    let dofs: Vec<usize> = cell.manipulators.iter().map(|m| m.robot.dof()).collect();

    c.bench_function("guard_step/4 arms x 8 samples, hash", |b| b.iter(|| hashed.step()));
    c.bench_function("guard_step/4 arms x 8 samples, all pairs", |b| b.iter(|| brute.step()));
    c.bench_function("guard_step/4 arms x 8 samples, on plans", |b| b.iter(|| planned.step()));
    c.bench_function("guard_step/4 arms x 8 samples, learned stopping", |b| b.iter(|| learned.step()));

    let ours = median_us(&mut hashed, 4000);
    let base_us = median_us(&mut brute, 1000);
    let plan_us = median_us(&mut planned, 4000);
    let learned_us = median_us(&mut learned, 4000);
    let narrow_us = median_us(&mut narrow, 4000);
    let queries_before = near.guard.exact_queries();
    let near_us = median_us(&mut near, 4000);
    let per_cycle = (near.guard.exact_queries() - queries_before) as f64 / 4000.0;
    let near_spheres_us = median_us(&mut near_spheres, 4000);
    let configs: usize = samples.iter().sum();
    let hash_kb = hashed.guard.hash().memory_bytes() as f64 / 1024.0;
    let g = &cell.voxel_grid;
    let voxels = g.dims.iter().product::<usize>() as f64;
    let cell_m = hashed.guard.hash().cell_m() as f64;
    let coarse = (4.0 / cell_m).ceil() * (4.0 / cell_m).ceil() * (2.0 / cell_m).ceil();
    println!();
    println!("== guard_step ==");
    println!(
        "arms: dof {dofs:?}, spheres {spheres:?}, configurations checked {samples:?} (forecast, field, self, robot-robot)"
    );
    println!(
        "Guard::cycle median {ours:.1} µs per cycle = {:.0} ns per configuration (goal: 10 µs, 300 ns)",
        ours * 1e3 / configs as f64
    );
    println!(
        "with plans ({on_plan} of 4 arms on plan, braking along it, departure bound): {plan_us:.1} µs per cycle \
         = {:.2}x the extrapolation-only step beside it (goal: 25 µs)",
        plan_us / ours
    );
    println!(
        "speed scaling from the stopping path (looking {:.0} mm past the margin), on plans: {plan_us:.1} µs per \
         cycle = {:.2}x the same step looking 1 mm past it ({narrow_us:.1} µs, as the checks did before; goal: 1.2x)",
        policy.slow_down_m * 1e3,
        plan_us / narrow_us
    );
    println!(
        "with learned stopping models (every arm, every joint): {learned_us:.1} µs per cycle = {:.2}x the configured \
         figures' step (same run)",
        learned_us / ours
    );
    println!(
        "two arms within the margin by their spheres (exact shapes clear): {near_us:.1} µs per cycle with the exact \
         refinement ({per_cycle:.1} link-pair distances per cycle) = {:.2}x the spheres alone ({near_spheres_us:.1} µs, \
         same run)",
        near_us / near_spheres_us
    );
    println!(
        "baseline, robot-vs-robot by all sphere pairs, same run: {base_us:.1} µs per cycle -> the hash is {:.1}x faster",
        base_us / ours
    );
    println!(
        "hash memory {hash_kb:.0} KiB (cell edge {:.3} m, sized by the spheres) vs dense grids of the 4x4x2 m cell: \
         label heads at 2 cm {:.1} MiB ({:.0}x), occupancy bits at 2 cm {:.0} KiB, heads at the hash's cell edge {:.1} KiB",
        cell_m,
        voxels * 4.0 / 1048576.0,
        voxels * 4.0 / 1024.0 / hash_kb,
        voxels / 8.0 / 1024.0,
        coarse * 4.0 / 1024.0
    );
    println!(
        "reference (VAMP, AVX2, per-robot generated code): about 1 µs per configuration one at a time, 230-310 ns in batches of 8 (59-sphere Panda vs 100 obstacle spheres)"
    );
}

/// A stopping model for `m` fitted to 600 stops under its simulated
/// braking physics.
fn learned_model(m: &workcell_guard_core::cell::Manipulator) -> workcell_guard_core::forecast::stopping::StoppingModel {
    use workcell_guard_core::forecast::calibrate::{BEFORE_S, FitOptions, fit_joint, measure_stops};
    let physics = workcell_guard_sim::braking::BrakePhysics::for_manipulator(m);
    let log = workcell_guard_sim::stops::record_stops(m, &physics, 600, 1, 0.0);
    let mut samples = Vec::new();
    measure_stops(&log.stamps, &log.positions, m.robot.dof(), &log.commands, BEFORE_S, &mut samples);
    let opts = FitOptions { min_stops: 50, ..FitOptions::default() };
    let joints = (0..m.robot.dof())
        .map(|j| {
            let own: Vec<_> = samples.iter().copied().filter(|s| s.joint == j).collect();
            fit_joint(&own, m.robot.dof_joint(j).kind.is_rotational(), &opts).ok().map(|f| f.0)
        })
        .collect();
    workcell_guard_core::forecast::stopping::StoppingModel { joints }
}
