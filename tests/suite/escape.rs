//! Escape: an arm stopped for proximity goes again, at once, when its
//! forecast takes it away from what stopped it, and is never let closer;
//! standing still (noisy or not), or a plan further in, keeps it stopped;
//! turning back stops it again. Escaping from another robot, no pair of
//! their links closes in.

use crate::common;

use common::cell::{cache_dir, feed, guard, sample_cell};
use workcell_guard_core::forecast::track::JointPlan;
use workcell_guard_core::guard::{Decision, Guard, Inputs, JointStateIn, Reason};
use workcell_guard_core::model::coverage::Rng;
use workcell_guard_sim::arms::{PlanMode, Sim, SimOptions, cell_with_arms};

const DT: f64 = 0.002;

/// The cause's class of clearance (cell, own links, other robots) in the
/// guard's last check of arm 0.
fn class_clearance(g: &Guard, reason: Reason) -> f32 {
    let c = g.clearances(0).unwrap();
    match reason {
        Reason::Cell => c.cell_m,
        Reason::SelfCollision => c.own_links_m,
        _ => c.other_robots_m,
    }
}

/// Arm 0 at rest where the guard stopped it: from a clear start, its
/// shoulder and elbow swing up to 1 rad/s until the guard stops it, then
/// brake at 5 rad/s² (within its limits) to rest; it stands 0.3 s. Returns
/// the guard, the configurations, the time and the stop's reason.
fn stopped_arm() -> (Guard, Vec<Vec<f64>>, f64, Reason) {
    let mut g = guard();
    // Stopped by its spheres: by its links' shapes it swings on until its
    // spheres are centimetres deep in each other, where the escape's
    // evidence (on the spheres) moves with the noise (see docs/guard.md).
    g.set_exact_refinement(false);
    let mut s = Sim::new(sample_cell().clone(), SimOptions::default(), Some(cache_dir())).unwrap();
    let mut qs = s.clear_start(&mut Rng::new(11)).expect("a clear start exists");
    let mut t = 0.0;
    for _ in 0..300 {
        t += DT;
        feed(&mut g, &qs, t);
    }
    let (mut w, mut reason) = (0.0f64, None);
    for _ in 0..5000 {
        t += DT;
        w = match reason {
            None => (w + 4.0 * DT).min(1.0),
            Some(_) => (w - 5.0 * DT).max(0.0),
        };
        qs[0][1] += w * DT;
        qs[0][2] += w * DT;
        let d = feed(&mut g, &qs, t);
        if let (None, Decision::Stop(st)) = (reason, d[0]) {
            reason = Some(st.reason);
        }
        if reason.is_some() && w == 0.0 {
            break;
        }
    }
    let reason = reason.expect("the guard stops the swinging arm");
    assert!(matches!(reason, Reason::Cell | Reason::Robot { .. } | Reason::SelfCollision), "{reason:?}");
    for _ in 0..150 {
        t += DT;
        let d = feed(&mut g, &qs, t);
        assert!(d[0].is_stop(), "released while standing where it was stopped: {:?}", d[0]);
    }
    (g, qs, t, reason)
}

fn escaping(d: &Decision) -> bool {
    matches!(d, Decision::Continue { escaping: true, .. })
}

#[test]
fn an_arm_stopped_near_something_escapes_when_moved_away_and_is_stopped_again_when_it_turns_back() {
    let (mut g, mut qs, mut t, reason) = stopped_arm();
    let hold = sample_cell().guard.release_hold_s;
    let at_rest = class_clearance(&g, reason);
    println!("stopped for {reason:?}, {at_rest:.4} m from it at rest");
    // Standing with encoder noise (20 µrad) does not look like an escape.
    let mut rng = Rng::new(5);
    for _ in 0..250 {
        t += DT;
        let noisy: Vec<Vec<f64>> = qs.iter().map(|q| q.iter().map(|x| x + rng.range(-2e-5, 2e-5)).collect()).collect();
        let d = feed(&mut g, &noisy, t);
        assert!(d[0].is_stop(), "released standing still with noise: {:?}", d[0]);
    }
    // Jogged back the way it came: released to escape within the hold
    // time, and never closer to what stopped it than at rest.
    let (mut w, mut released) = (0.0f64, None);
    let t_go = t;
    for k in 0..500 {
        t += DT;
        w = (w + 4.0 * DT).min(0.5);
        qs[0][1] -= w * DT;
        qs[0][2] -= w * DT;
        let d = feed(&mut g, &qs, t);
        let now = class_clearance(&g, reason);
        assert!(now >= at_rest - 1e-3, "let closer while escaping: {now} m against {at_rest} m at rest");
        if released.is_none() && !d[0].is_stop() {
            assert!(escaping(&d[0]), "released, but not as an escape: {:?}", d[0]);
            released = Some(t - t_go);
        }
        if released.is_some() {
            assert!(!d[0].is_stop(), "stopped again while escaping, {k} cycles in: {:?}", d[0]);
        }
    }
    let after = released.expect("released to escape");
    println!("escaping {after:.3} s after it began to move away");
    assert!(after <= hold, "released after {after} s, not within the hold time {hold} s");
    // Turning back towards it: stopped again before it gets there.
    let mut stopped = false;
    for _ in 0..1500 {
        t += DT;
        w = if stopped { (w - 5.0 * DT).max(0.0) } else { (w + 4.0 * DT).min(1.0) };
        qs[0][1] += w * DT;
        qs[0][2] += w * DT;
        let d = feed(&mut g, &qs, t);
        stopped |= d[0].is_stop();
        if stopped && w == 0.0 {
            break;
        }
    }
    assert!(stopped, "not stopped again after turning back");
    let back = class_clearance(&g, reason);
    println!("turned back: stopped, at rest {back:.4} m from it");
    assert!(back > 0.0, "overlap after turning back: {back} m");
}

/// A plan of arm 0 from `from`, its shoulder and elbow moving by `delta`
/// (rad) over 1 s.
fn plan(from: &[f64], delta: f64) -> JointPlan {
    let n = 26;
    let mut times = Vec::new();
    let mut positions = Vec::new();
    for i in 0..n {
        let s = i as f64 / (n - 1) as f64;
        times.push(s);
        let mut q = from.to_vec();
        q[1] += delta * s * s * (3.0 - 2.0 * s);
        q[2] += delta * s * s * (3.0 - 2.0 * s);
        positions.extend(q);
    }
    JointPlan::new(from.len(), times, positions).unwrap()
}

#[test]
fn a_stopped_arm_given_a_plan_away_escapes_before_it_moves_and_one_further_in_does_not() {
    let (mut g, qs, mut t, reason) = stopped_arm();
    let hold = sample_cell().guard.release_hold_s;
    g.set_plan(0, Some(plan(&qs[0], 0.3))).unwrap();
    for _ in 0..250 {
        t += DT;
        let d = feed(&mut g, &qs, t);
        assert!(d[0].is_stop(), "released on a plan further in: {:?}", d[0]);
    }
    g.set_plan(0, Some(plan(&qs[0], -0.3))).unwrap();
    let t_plan = t;
    let mut released = None;
    for _ in 0..250 {
        t += DT;
        let d = feed(&mut g, &qs, t);
        if !d[0].is_stop() {
            assert!(escaping(&d[0]), "released, but not as an escape: {:?}", d[0]);
            released = Some(t - t_plan);
            break;
        }
    }
    let after = released.expect("a plan away releases the arm to escape");
    println!("stopped for {reason:?}; escaping {after:.3} s after the plan away, standing");
    assert!(after <= hold, "released after {after} s, not within the hold time {hold} s");
    let c = g.commands()[0];
    assert!(!c.stop && c.speed_scaling > 0.0, "the command of an escaping arm: {c:?}");
}

/// A stopped arm whose joint states fall silent past the watchdog (a
/// controller or network hiccup) is stopped for stale data meanwhile; when
/// they come again it is still the arm stopped near what stopped it: a
/// plan away releases it to escape at once, as without the hiccup, and a
/// plan further in keeps it stopped.
#[test]
fn a_stale_state_blip_while_stopped_keeps_the_escape() {
    let (mut g, qs, mut t, reason) = stopped_arm();
    let cell = sample_cell();
    let (hold, watchdog) = (cell.guard.release_hold_s, cell.guard.watchdog_s);
    let blip = |g: &mut Guard, t: &mut f64| {
        let others: Vec<JointStateIn> = (1..qs.len())
            .map(|r| JointStateIn { robot: r, stamp_s: *t, positions: &qs[r], velocities: None })
            .collect();
        let last = *t;
        while *t < last + 2.0 * watchdog {
            *t += DT;
            let d = g.step(*t, &Inputs::joints(&others)).manipulators.to_vec();
            assert!(d[0].is_stop(), "released without joint states: {:?}", d[0]);
        }
        let d = g.step(*t, &Inputs::joints(&others)).manipulators.to_vec();
        assert!(
            matches!(d[0], Decision::Stop(s) if matches!(s.reason, Reason::StaleJointState { .. })),
            "not a stale-state stop after {} s of silence: {:?}",
            2.0 * watchdog,
            d[0]
        );
    };
    blip(&mut g, &mut t);
    g.set_plan(0, Some(plan(&qs[0], 0.3))).unwrap();
    for k in 0..200 {
        t += DT;
        let d = feed(&mut g, &qs, t);
        assert!(
            d[0].is_stop(),
            "released on a plan further in after the blip, {k} cycles, stopped for {reason:?}: {:?}",
            d[0]
        );
    }
    blip(&mut g, &mut t);
    g.set_plan(0, Some(plan(&qs[0], -0.3))).unwrap();
    let t_back = t;
    let mut released = None;
    for _ in 0..400 {
        t += DT;
        let d = feed(&mut g, &qs, t);
        if !d[0].is_stop() {
            assert!(escaping(&d[0]), "released {:.3} s after the blip, but not as an escape: {:?}", t - t_back, d[0]);
            released = Some(t - t_back);
            break;
        }
    }
    let after = released.expect("a plan away releases the arm after the blip");
    println!(
        "stopped for {reason:?}, a {:.2} s blip; escaping {after:.3} s after the states came back",
        2.0 * watchdog
    );
    assert!(after < hold / 2.0, "released {after} s after the states came back: not at once (hold {hold} s)");
}

/// Four arms without plans, seed 88 (a hazard: unguarded, two arms run
/// into each other). Arm 0 is stopped beside arm 1, parked at its last
/// goal; their spheres sit centimetres deep in each other, their links
/// 2.4 cm apart. Let go as an escape by the spheres' least gap (that pair
/// moving apart), arm 0 swung another link into arm 1: contact. Now a path
/// on which a pair of their links closes in within the margin, by their
/// exact shapes, is no escape, and nothing touches.
#[test]
fn an_arm_escaping_from_another_by_their_spheres_does_not_close_in_by_their_links() {
    let opts = SimOptions {
        obey_scaling: true,
        obey_grants: true,
        plans: PlanMode::Never,
        hazards: true,
        ..Default::default()
    };
    let mut s = Sim::new(cell_with_arms(sample_cell(), 4), opts, Some(cache_dir())).unwrap();
    let r = s.episode(88);
    println!("{}", r.summary(4, opts.dt_s));
    assert_eq!(r.episodes, 1, "seed 88 no longer draws an episode");
    assert_eq!(r.hazards, 1, "seed 88 is no longer a hazard");
    assert_eq!(r.contacts(), 0, "least clearance {:.4} m", r.min_clearance_m);
}
