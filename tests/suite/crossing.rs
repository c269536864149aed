//! Closed-loop crossing episodes: arms whose plans cross through a shared
//! zone take turns by their grants (`workcell_guard_sim::crossing`).

use crate::common::cell::{cache_dir, sample_cell};
use workcell_guard_sim::arms::{self as sim, Sim, SimOptions, SimReport};
use workcell_guard_sim::crossing::{ZoneLeg, one_at_a_time};

/// Crossing episodes per arm count: `WG_CROSSING_EPISODES` (CI runs the
/// default; the 1,000-episode runs are `workcell_guard simulate --crossing`).
fn episodes() -> u64 {
    std::env::var("WG_CROSSING_EPISODES").ok().and_then(|v| v.parse().ok()).unwrap_or(6)
}

#[test]
fn arms_on_crossing_plans_take_turns_without_contact_or_deadlock() {
    let n = episodes();
    let opts = SimOptions { goals: 2, obey_scaling: true, obey_grants: true, ..SimOptions::default() };
    let handles: Vec<_> = [2usize, 3]
        .into_iter()
        .map(|arms| {
            let dir = cache_dir().to_path_buf();
            std::thread::spawn(move || {
                let cell = sim::cell_with_arms(sample_cell(), arms);
                let mut s = Sim::new(cell, opts, Some(&dir)).unwrap();
                let mut r = SimReport { min_clearance_m: f64::INFINITY, ..SimReport::default() };
                let mut seed = 1;
                while r.episodes < n as usize && seed < 40 * n {
                    r.merge(&s.crossing_episode(arms as u64 * 1_000 + seed));
                    seed += 1;
                }
                (arms, r)
            })
        })
        .collect();
    for h in handles {
        let (arms, r) = h.join().unwrap();
        print!("{}", r.summary(arms, opts.dt_s));
        assert_eq!(r.episodes, n as usize, "{arms} arms: too few crossing episodes drawn: {r:?}");
        assert_eq!(r.contacts(), 0, "{arms} arms: {r:?}");
        assert_eq!(r.stalled, 0, "{arms} arms: an episode did not finish within its bound: {r:?}");
        assert!(r.held_s > 0.0, "{arms} arms: crossing plans must make arms wait for each other: {r:?}");
        assert!(r.makespan_one_at_a_time_s >= r.makespan_unguarded_s, "{r:?}");
    }
}

#[test]
fn one_at_a_time_reference_waits_at_the_zone_and_holds_it_to_the_end_of_the_window() {
    let leg = |d: f64, w: Option<(f64, f64)>| ZoneLeg { duration_s: d, window: w };
    // Three arms, all through the zone from 0.5 s to 1.0 s of a 1.5 s leg:
    // one after another (0.5 s each), the highest first, each waiting at
    // its window's start: the last leaves the zone at 2.0 s, done at 2.5 s.
    let legs = vec![vec![leg(1.5, Some((0.5, 1.0)))]; 3];
    let t = one_at_a_time(&legs, &[1, 3, 2], 0.001);
    assert!((t - 2.5).abs() < 0.01, "{t}");
    // Two legs each, the second back through the zone: served in turn.
    let legs = vec![vec![leg(1.0, Some((0.2, 0.8))), leg(1.0, Some((0.2, 0.8)))]; 2];
    let t = one_at_a_time(&legs, &[1, 2], 0.001);
    // Arm 1 (higher) holds 0.2–0.8; arm 0 enters at 0.8 and leaves at 1.4;
    // arm 1, on its second leg from 1.0, reaches the zone at 1.2, waits to
    // 1.4, leaves at 2.0; arm 0 starts its second at 1.6, reaches the
    // zone at 1.8, waits to 2.0, leaves at 2.6, done at 2.8.
    assert!((t - 2.8).abs() < 0.01, "{t}");
}

/// One crossing episode of `simulate --crossing --arms <arms> --seed <seed>`
/// (`--go-on` with `go_on`), its summary printed.
fn one_episode(arms: usize, seed: u64, go_on: bool) -> SimReport {
    episode_with(arms, seed, SimOptions { go_on, ..SimOptions::default() })
}

/// One crossing episode with `opts` (goals, obeying scaling and grants
/// set here), its summary printed.
fn episode_with(arms: usize, seed: u64, opts: SimOptions) -> SimReport {
    let opts = SimOptions { goals: 2, obey_scaling: true, obey_grants: true, ..opts };
    let cell = sim::cell_with_arms(sample_cell(), arms);
    let mut s = Sim::new(cell, opts, Some(cache_dir())).unwrap();
    let r = s.crossing_episode(seed);
    print!("{}", r.summary(arms, opts.dt_s));
    assert_eq!(r.episodes, 1, "seed {seed} no longer draws a crossing episode: {r:?}");
    r
}

/// Four arms, seed 1,059 of `simulate --crossing --arms 4`: an arm sent
/// back along its plan by a higher one stands where its way back turns
/// into another arm. Judged on its plan ahead alone (away from the robot it
/// backs away from), it was let go, stopped once moving back, let go again:
/// a ratchet into that arm (2.6 cm deep). Its stopping path now covers both
/// ways it may go when let go (on, for a controller that ignores grants;
/// back, for one that obeys), so it is never let go into it.
#[test]
fn an_arm_sent_back_into_another_is_judged_on_its_way_back_and_never_touches_it() {
    let r = one_episode(4, 1059, false);
    assert_eq!(r.contacts(), 0, "{r:?}");
}

/// The same episode with `go_on_when_clear`: arms in the way go on where
/// their increment meets only what the higher arm claims (`way_back` in
/// the guard), and it finishes (without, it stalls, unless boosted).
#[test]
fn with_go_on_when_clear_seed_1059_finishes_without_contact() {
    let r = one_episode(4, 1059, true);
    assert_eq!((r.contacts(), r.stalled), (0, 0), "{r:?}");
}

/// Three arms, seed 2,240 of `simulate --crossing --arms 3`: an arm sent
/// back into a higher one that stands in its way back. Both waited for
/// ever (the stop check keeps it from backing into it); now it is lifted
/// over that arm, and the episode finishes without contact.
#[test]
fn an_arm_whose_way_back_another_blocks_is_lifted_and_the_episode_finishes() {
    let r = one_episode(3, 2240, false);
    assert_eq!((r.contacts(), r.stalled), (0, 0), "{r:?}");
}

/// Four arms, seed 1,005 of `simulate --crossing --arms 4`: two arms
/// stand within the clearance margin of each other, each one's way on and
/// way back coming nearer the other (a knot: no grant moved either, and
/// both waited for ever). The table now keeps, for two robots that stand
/// that close, only the conflicts that bring them nearer, so the one that
/// can draw away goes, and the episode finishes without contact.
#[test]
fn two_arms_standing_within_the_margin_of_each_other_untie_and_finish() {
    let r = one_episode(4, 1005, false);
    assert_eq!((r.contacts(), r.stalled), (0, 0), "{r:?}");
}

/// Three arms, seed 1,911, with `go_on_when_clear`: two arms sent back
/// from a third at once come within the margin of each other; the higher
/// one's way on draws away from the lower, and it goes (it held for ever).
#[test]
fn with_go_on_when_clear_two_arms_sent_back_into_each_other_untie() {
    let r = one_episode(3, 1911, true);
    assert_eq!((r.contacts(), r.stalled), (0, 0), "{r:?}");
}

/// Four arms, seed 387 of `simulate --crossing --arms 4`: two arms in a
/// knot were untied while they stood still, got one cycle's grant, moved a
/// hair, and so were no longer "standing still": the knot was tied again
/// for eight cycles, and they crept a millimetre a second for ever. A knot
/// now lasts until the two are apart, and the episode finishes.
#[test]
fn two_arms_creeping_out_of_a_knot_are_not_tied_again_for_moving() {
    let r = one_episode(4, 387, false);
    assert_eq!((r.contacts(), r.stalled), (0, 0), "{r:?}");
}

/// Two arms, seed 8 of `simulate --crossing`: the higher arm's next leg
/// starts while the lower one passes through its increment at full speed,
/// too near to stop short of it (seed 1 did, while increments reached
/// 0.25 s past the stopping path; with 0.1 s the lower one no longer is). With priority alone
/// (`--strict-priority`) the lower one brakes in the way and backs away to
/// its plan's start, and its retreat holds the higher one all the same.
/// The higher one now gives way to it (`give_way_when_caught`): it passes,
/// no arm backs away, and both finish sooner.
#[test]
fn a_higher_arm_at_its_start_gives_way_to_a_lower_one_caught_in_its_increment() {
    let strict = episode_with(2, 8, SimOptions { strict_priority: true, ..SimOptions::default() });
    let r = episode_with(2, 8, SimOptions::default());
    assert!(strict.retreats > 0, "priority alone must send the lower arm back: {strict:?}");
    assert_eq!((r.contacts(), r.stalled, r.retreats), (0, 0, 0), "{r:?}");
    assert!(r.makespan_s < strict.makespan_s, "{} against {}", r.makespan_s, strict.makespan_s);
}

/// Two arms, seed 12 of `simulate --crossing --give-way`: the lower arm,
/// on its way past the rest where the higher one has just been given its
/// next plan, was held there by its increment's coarse samples (each
/// inflated by half its step) and sent back 1.5 s of plan; the higher one
/// waited for that retreat. Its samples are now looked at finer against
/// where a standing or setting-off robot is committed: it passes, and no
/// arm backs away.
#[test]
fn a_lower_arm_passing_a_higher_one_at_its_start_is_not_sent_back_by_coarse_samples() {
    let r = episode_with(2, 12, SimOptions { give_way: true, ..SimOptions::default() });
    assert_eq!((r.contacts(), r.stalled, r.retreats), (0, 0, 0), "{r:?}");
}

/// Two arms, seed 11 of `simulate --crossing --give-way`: the higher arm
/// had moved 0.1 s into its next plan when it met the lower one on its
/// way; no longer at its start, it did not give way, and sent the lower one
/// back 1.6 s of plan. Setting off, it can still stop short of the lower
/// one's increment, and gives way: no arm backs away.
#[test]
fn a_higher_arm_setting_off_gives_way_to_a_lower_one_on_its_way() {
    let r = episode_with(2, 11, SimOptions { give_way: true, ..SimOptions::default() });
    assert_eq!((r.contacts(), r.stalled, r.retreats), (0, 0, 0), "{r:?}");
}

/// Two arms, seed 1,610 of `simulate --crossing --give-way`: both arms
/// setting off, each gave way to the other in turn and was sent back by
/// it, for ever (a deadlock in 1,000 episodes). A robot gives way while
/// setting off once per plan: the episode finishes.
#[test]
fn two_arms_setting_off_do_not_take_turns_giving_way_for_ever() {
    let r = episode_with(2, 1610, SimOptions { give_way: true, ..SimOptions::default() });
    assert_eq!((r.contacts(), r.stalled), (0, 0), "{r:?}");
}

/// `simulate --crossing` on a cell of another make: two UR10s (Universal
/// Robots' published URDF and meshes, installed at test time) facing each
/// other 1.6 m apart, each on plans through the zone their reach shares,
/// obeying their grants and speed scaling. They take turns by holds alone:
/// no stop of the checks (so none within the settle time of a release), no
/// contact, no deadlock, and the cell finishes sooner than with one arm at
/// a time in the shared zone.
#[test]
fn two_ur10s_on_crossing_plans_take_turns_by_holds_alone() {
    let (cell, _dir) =
        crate::guard_ur10::ur10s(&[([0.0; 3], 0.0), ([1.6, 0.0, 0.0], std::f64::consts::PI)], 0.02, 0.04, "");
    let opts = SimOptions { goals: 2, obey_scaling: true, obey_grants: true, ..SimOptions::default() };
    let mut s = Sim::new(cell, opts, Some(cache_dir())).unwrap();
    let mut r = SimReport { min_clearance_m: f64::INFINITY, ..SimReport::default() };
    let mut seed = 1;
    while r.episodes < 3 && seed < 40 {
        r.merge(&s.crossing_episode(seed));
        seed += 1;
    }
    print!("{}", r.summary(2, opts.dt_s));
    assert_eq!(r.episodes, 3, "too few crossing episodes drawn: {r:?}");
    assert_eq!(r.contacts(), 0, "{r:?}");
    assert_eq!(r.stalled, 0, "a deadlock: {r:?}");
    assert!(r.held_s > 0.0, "the plans must make the arms wait for each other: {r:?}");
    assert_eq!((r.stops, r.restops), (0, 0), "stopped where a hold was due: {r:?}");
    assert!(r.makespan_s < r.makespan_one_at_a_time_s, "{r:?}");
    // Per arm, by priority: each one's shares add up to its busy time, and
    // the summary gives them.
    assert_eq!(r.per_arm.iter().map(|a| a.priority).collect::<Vec<_>>(), [0, 1], "{r:?}");
    for a in &r.per_arm {
        assert_eq!((a.stops, a.stopped_s), (0, 0.0), "{a:?}");
        assert!((a.full_s + a.slowed_s + a.held_s - a.busy_s).abs() < 1e-6, "{a:?}");
    }
    let busy: f64 = r.per_arm.iter().map(|a| a.busy_s).sum();
    assert!((busy - r.busy_s).abs() < 1e-6, "{r:?}");
    assert!(r.summary(2, opts.dt_s).contains("per arm (its priority)"), "{}", r.summary(2, opts.dt_s));
}
