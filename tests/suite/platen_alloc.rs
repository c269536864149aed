//! The platen allocator's hot path allocates nothing once warmed up: move
//! requests (granted, partial, denied), pose updates and arrivals, counted
//! by the suite's allocation counter (this thread's allocations).

use crate::alloc::allocations;
use crate::common;
use workcell_guard_core::model::coverage::Rng;
use workcell_guard_core::platen::{Answer, BitAllocator, pose_at};
use workcell_guard_description::workcell;

/// `rounds` requests in turn, each to a random pose 0.15 m away turned up to
/// ±`turn` rad; on a grant a pose halfway, then the goal. Returns the mix.
fn drive(a: &mut BitAllocator, rng: &mut Rng, now: &mut f64, rounds: usize, turn: f64) -> [usize; 3] {
    let mut mix = [0; 3];
    for k in 0..rounds {
        let u = k % a.units();
        *now += 0.05;
        let p0 = a.pose(u);
        a.pose_update(*now, u, *now, p0);
        let ang = rng.range(0.0, std::f64::consts::TAU);
        let target = [p0[0] + 0.15 * ang.cos(), p0[1] + 0.15 * ang.sin(), p0[2] + rng.range(-turn, turn)];
        match a.request(*now, u, k as u64, target) {
            Answer::Granted { goal, .. } | Answer::Partial { goal, .. } => {
                mix[0] += 1;
                a.pose_update(*now + 0.01, u, *now + 0.01, pose_at(p0, goal, 0.5));
                a.pose_update(*now + 0.02, u, *now + 0.02, goal);
                *now += 0.02;
            }
            Answer::Denied { .. } => mix[1] += 1,
            Answer::Refused { .. } | Answer::Increment { .. } => mix[2] += 1,
        }
    }
    mix
}

#[test]
fn requests_and_pose_updates_allocate_nothing_once_warm() {
    // The counter sees this thread's allocations.
    let n0 = allocations();
    std::hint::black_box(vec![1u8; 3]);
    assert!(allocations() > n0);
    let p = workcell::load(&common::repo().join("config/workcell.yaml")).unwrap().platen.unwrap();
    let mut a = BitAllocator::new(&p).unwrap();
    let mut rng = Rng::new(3);
    let mut now = 0.0;
    for u in 0..a.units() {
        a.pose_update(now, u, now, a.pose(u));
    }
    // Warm up: the scratch buffers grow to the largest sweeps (full turns).
    drive(&mut a, &mut rng, &mut now, 200, std::f64::consts::PI);
    let before = allocations();
    let mix = drive(&mut a, &mut rng, &mut now, 400, 1.0);
    let after = allocations();
    assert!(mix[0] > 50 && mix[1] + mix[2] > 0, "a mix of answers: {mix:?}");
    assert_eq!(after - before, 0, "allocations in 400 requests ({mix:?})");
    a.assert_invariants();
}
