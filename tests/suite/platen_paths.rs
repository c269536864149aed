//! Platen units on paths, granted increment by increment: closed-loop
//! scenarios under the shape oracle (crates/sim/src/platen_paths.rs).

use crate::platen::{platen, rect, report_all, unit};
use workcell_guard_core::platen::{Answer, BitAllocator, Blocker, CellMap, PathFault, Pose2, Refusal, UnitStatus};
use workcell_guard_description::workcell::AllocationSettings;
use workcell_guard_sim::platen_paths::{self, PathScenario, PathSimReport};

const DT_S: f64 = 0.005;

fn run(sc: &PathScenario) -> PathSimReport {
    let r = platen_paths::run(sc, DT_S).expect("the scenario's platen builds");
    eprintln!(
        "{}: makespan {:.2} s, one at a time {:.2} s, unguarded {:.2} s; {} increments, {} back-aways, {} overlaps, {} deadlocks",
        sc.name, r.makespan_s, r.one_at_a_time_s, r.unguarded_s, r.increments, r.back_aways, r.overlaps, r.deadlocks
    );
    r
}

#[test]
fn two_units_swap_places() {
    let r = run(&platen_paths::swap());
    assert_eq!((r.overlaps, r.deadlocks, r.refused), (0, 0, 0));
    assert!(r.increments > 2, "granted increment by increment: {r:?}");
}

#[test]
fn three_units_in_a_ring_take_each_others_places() {
    let r = run(&platen_paths::ring(3));
    assert_eq!((r.overlaps, r.deadlocks, r.refused), (0, 0, 0));
}

#[test]
fn crossing_paths_finish_without_overlap() {
    let episodes: u64 = std::env::var("WG_PATH_EPISODES").ok().and_then(|v| v.parse().ok()).unwrap_or(30);
    for n in 2..=4 {
        let mut t = PathSimReport::default();
        for k in 0..episodes {
            let r = platen_paths::run(&platen_paths::random(1000 * n as u64 + k, n), DT_S).unwrap();
            if r.deadlocks + r.overlaps > 0 {
                eprintln!("seed {}: {r:?}", 1000 * n as u64 + k);
            }
            t.merge(&r);
        }
        eprintln!(
            "{n} units, {} episodes: {:.2}x one at a time, {:.2}x unguarded; {} back-aways, {} overlaps, {} deadlocks",
            t.episodes,
            t.makespan_s / t.one_at_a_time_s,
            t.makespan_s / t.unguarded_s,
            t.back_aways,
            t.overlaps,
            t.deadlocks
        );
        assert_eq!((t.overlaps, t.deadlocks), (0, 0), "{n} units: {t:?}");
    }
}

/// Draws of four units whose paths meet at the middle where the highest
/// finds a lower unit in its way that can go neither back (the highest, or
/// a unit above both, is behind it) nor forward: the highest makes room
/// and lends it its priority. Before that rule, the two made room for each
/// other in turn for ever (4272, 4895) or the lower one waited for a unit
/// above it that waited for the highest (4019, with boosts). In 9013,
/// 9146, 9154 and 13675 all four had entered the middle at once, each in
/// the next one's way, before a unit standing in a higher one's claim was
/// let through it only to leave it.
#[test]
fn four_units_meeting_in_the_middle_finish_where_the_highest_must_make_room() {
    for seed in [4272, 4499, 4895, 4019, 9013, 9146, 9154, 13675] {
        let r = run(&platen_paths::random(seed, 4));
        assert_eq!((r.overlaps, r.deadlocks), (0, 0), "seed {seed}: {r:?}");
    }
}

/// With `priority_boost_after_s`, units that gain no ground for that long
/// go first until their paths end (30 crossings of 3 units, boosts after
/// 0.3 s); without it, nobody is boosted.
#[test]
fn a_unit_that_gains_no_ground_for_the_boost_limit_goes_first() {
    let (mut plain, mut boosted) = (PathSimReport::default(), PathSimReport::default());
    for k in 0..30 {
        let mut sc = platen_paths::random(3000 + k, 3);
        plain.merge(&platen_paths::run(&sc, DT_S).unwrap());
        sc.platen.allocation.priority_boost_after_s = Some(0.3);
        boosted.merge(&platen_paths::run(&sc, DT_S).unwrap());
    }
    eprintln!("without boosts: {plain:?}\nwith: {boosted:?}");
    assert_eq!(plain.boosted, 0, "boosted without a limit");
    assert!(boosted.boosted > 0, "nobody waited 0.3 s without gaining ground? {boosted:?}");
    assert_eq!((boosted.overlaps, boosted.deadlocks), (0, 0), "{boosted:?}");
}

/// A unit on a path at `at` reports it (stamp `now`).
fn report(a: &mut BitAllocator, now: f64, u: usize, at: Pose2) {
    assert!(!matches!(a.pose_update(now, u, now, at), UnitStatus::Stopped(_)), "{u} at {at:?}");
}

#[test]
fn bad_path_requests_are_refused_with_their_reason() {
    let units =
        vec![unit("a", rect(0.1, 0.1), [0.2, 0.5, 0.0], None), unit("b", rect(0.1, 0.1), [0.8, 0.5, 0.0], None)];
    let mut a = BitAllocator::new(&platen([1.0, 1.0], 0.002, units, vec![])).unwrap();
    let refused = |ans: Answer| match ans {
        Answer::Refused { reason, .. } => reason,
        other => panic!("{other:?}"),
    };
    // No pose yet.
    assert_eq!(refused(a.request_path(0.0, 0, 1, &[[0.5, 0.5, 0.0]], 0.3)), Refusal::NoPose);
    report_all(&mut a, 0.0);
    assert_eq!(refused(a.request_path(0.0, 0, 1, &[], 0.3)), Refusal::BadPath(PathFault::Empty));
    assert_eq!(
        refused(a.request_path(0.0, 0, 1, &[[f64::NAN, 0.5, 0.0]], 0.3)),
        Refusal::BadPath(PathFault::NotFinite)
    );
    assert_eq!(refused(a.request_path(0.0, 0, 1, &[[0.5, 0.5, 0.0]], 0.9)), Refusal::BadPath(PathFault::Speed));
    assert_eq!(refused(a.request_path(0.0, 0, 1, &[[0.5, 0.5, 0.0]], 0.0)), Refusal::BadPath(PathFault::Speed));
    assert_eq!(refused(a.request_path(0.0, 7, 1, &[[0.5, 0.5, 0.0]], 0.3)), Refusal::UnknownUnit);
    // Taken, then busy for another path or a move.
    assert!(matches!(a.request_path(0.0, 0, 1, &[[0.5, 0.5, 0.0]], 0.3), Answer::Increment { request_id: 1, .. }));
    assert_eq!(refused(a.request_path(0.0, 0, 2, &[[0.5, 0.5, 0.0]], 0.3)), Refusal::Busy { current: 1 });
    assert_eq!(refused(a.request(0.0, 0, 3, [0.3, 0.5, 0.0])), Refusal::Busy { current: 1 });
    // Stale pose.
    assert_eq!(refused(a.request_path(1.0, 1, 4, &[[0.5, 0.9, 0.0]], 0.3)), Refusal::StalePose { age_s: 1.0 });
    a.assert_invariants();
}

#[test]
fn a_path_is_granted_in_increments_that_stay_ahead_of_the_stopping_distance_and_free_behind() {
    let units = vec![unit("a", rect(0.1, 0.1), [0.1, 0.5, 0.0], None)];
    let mut a = BitAllocator::new(&platen([1.0, 1.0], 0.002, units, vec![])).unwrap();
    report_all(&mut a, 0.0);
    let (v, decel, check) = (0.5, 2.0, AllocationSettings::default().path_check_s);
    let incr = v * v / (2.0 * decel) + v * check;
    let first = a.request_path(0.0, 0, 1, &[[0.5, 0.5, 0.0], [0.5, 0.9, 0.0]], v);
    let Answer::Increment { goal, fraction, blocker: None, backing_from: None, .. } = first else {
        panic!("{first:?}")
    };
    assert!((goal[0] - (0.1 + 2.0 * incr)).abs() < 1e-9 && fraction > 0.0, "{first:?}");
    // Drive along at full speed: the grant stays at least one increment
    // ahead, and what the unit holds behind it is freed.
    let (mut s, mut now, mut granted, mut answers) = (0.0, 0.0, 2.0 * incr, Vec::new());
    let cells_at_start = a.unit_map(0).count();
    while s < 0.8 - 1e-9 {
        now += 0.01;
        s = (s + v * 0.01).min(granted).min(0.8);
        let at = if s <= 0.4 { [0.1 + s, 0.5, 0.0] } else { [0.5, 0.5 + (s - 0.4), 0.0] };
        report(&mut a, now, 0, at);
        answers.clear();
        a.advance_paths(now, &mut answers);
        for (_, ans) in &answers {
            match *ans {
                Answer::Increment { fraction, .. } => granted = fraction * 0.8,
                Answer::Granted { .. } => granted = 0.8,
                other => panic!("{other:?}"),
            }
        }
        assert!(granted >= (s + incr).min(0.8) - 1e-9, "grant {granted} m within an increment of {s} m");
        assert!(a.unit_map(0).count() < 3 * cells_at_start, "holds {} cells", a.unit_map(0).count());
        a.assert_invariants();
    }
    // Arrived: only its footprint is held.
    now += 0.01;
    report(&mut a, now, 0, [0.5, 0.9, 0.0]);
    a.advance_paths(now, &mut answers);
    assert_eq!(a.path_progress(0), None);
    assert_eq!(a.status(0, now), UnitStatus::Idle);
    assert!(a.unit_map(0).count() <= cells_at_start + 200, "{} vs {cells_at_start}", a.unit_map(0).count());
}

#[test]
fn a_lower_unit_standing_in_a_higher_ones_increment_backs_away_along_its_path() {
    // b (lower) comes up its path into a's lane and stops there, short of
    // c parked across its way. a (higher) then asks for its lane: b is told
    // to back away down the path it came by, until a is granted past it.
    let mut units = vec![
        unit("a", rect(0.1, 0.1), [0.3, 0.5, 0.0], None),
        unit("b", rect(0.1, 0.1), [0.5, 0.1, 0.0], None),
        unit("c", rect(0.1, 0.1), [0.5, 0.67, 0.0], None),
    ];
    units[0].priority = 5;
    let mut a = BitAllocator::new(&platen([1.0, 1.0], 0.002, units, vec![])).unwrap();
    report_all(&mut a, 0.0);
    let up = a.request_path(0.0, 1, 7, &[[0.5, 0.9, 0.0]], 0.5);
    let Answer::Increment { goal, .. } = up else { panic!("{up:?}") };
    let (mut now, mut y, mut gy, mut answers) = (0.0f64, 0.1f64, goal[1], Vec::new());
    let (x, gx) = (std::cell::Cell::new(0.3f64), std::cell::Cell::new(0.3f64));
    let toward = |v: &mut f64, g: f64| *v = if *v < g { (*v + 0.005).min(g) } else { (*v - 0.005).max(g) };
    let cycle = |a: &mut BitAllocator, now: &mut f64, y: &mut f64, gy: &mut f64, answers: &mut Vec<(usize, Answer)>| {
        *now += 0.01;
        toward(y, *gy);
        let mut xv = x.get();
        toward(&mut xv, gx.get());
        x.set(xv);
        report(a, *now, 0, [xv, 0.5, 0.0]);
        report(a, *now, 1, [0.5, *y, 0.0]);
        report(a, *now, 2, [0.5, 0.67, 0.0]);
        answers.clear();
        a.advance_paths(*now, answers);
        let mut back = None;
        for &(u, ans) in answers.iter() {
            match (u, ans) {
                (0, Answer::Increment { goal, .. } | Answer::Granted { goal, .. }) => gx.set(goal[0]),
                (0, other) => panic!("{other:?}"),
                _ => {}
            }
            if let (1, Answer::Increment { goal, backing_from, blocker, .. }) = (u, ans) {
                *gy = goal[1];
                back = back.or(backing_from);
                if backing_from.is_none() && blocker.is_some() {
                    assert!(matches!(blocker, Some(Blocker::Unit(0 | 2))), "b is held by a or c: {blocker:?}");
                }
            }
        }
        back
    };
    for _ in 0..200 {
        assert_eq!(cycle(&mut a, &mut now, &mut y, &mut gy, &mut answers), None);
    }
    assert!((0.46..0.57).contains(&y) && (y - gy).abs() < 1e-9, "b stands in a's lane, short of c: {y}");
    let stood = y;
    let across = a.request_path(now, 0, 1, &[[0.9, 0.5, 0.0]], 0.5);
    let Answer::Increment { goal, blocker: Some(Blocker::Unit(1)), .. } = across else { panic!("{across:?}") };
    gx.set(goal[0]);
    let (mut told, mut lowest) = (0, y);
    for _ in 0..200 {
        let r = cycle(&mut a, &mut now, &mut y, &mut gy, &mut answers);
        if let Some(h) = r {
            assert_eq!(h, 0);
            told += 1;
            assert!(gy < y + 1e-9 && gy >= 0.1 - 1e-9, "back along its path: to {gy} from {y}");
        }
        lowest = lowest.min(y);
        a.assert_invariants();
    }
    assert!(told > 0 && lowest < stood - 0.05, "b backed away from {stood} to {lowest} ({told} answers)");
    assert_eq!(a.backing_from(1), None, "b still backing away after a was granted its lane");
    assert!(gx.get() > 0.65, "a granted past b's lane: to {} m", gx.get());
}

#[test]
fn the_crossing_sample_cell_gives_priorities_and_braking_and_bad_values_are_refused() {
    let file = crate::common::repo().join("config/platen_crossing.yaml");
    let cell = workcell_guard_description::workcell::load(&file).unwrap();
    let p = cell.platen.as_ref().unwrap();
    assert_eq!(p.units.iter().map(|u| (u.priority, u.max_decel_mps2)).collect::<Vec<_>>(), [(2, 2.0), (1, 2.0)]);
    assert_eq!(p.allocation.path_check_s, 0.02);
    assert_eq!(p.allocation.priority_boost_after_s, None, "no boost unless asked for");
    let text = std::fs::read_to_string(&file).unwrap();
    for (from, to, key) in [
        ("max_decel_mps2: 2.0   #", "max_decel_mps2: 0.0   #", "platen.units[0].max_decel_mps2"),
        ("path_check_s: 0.02", "path_check_s: -1.0", "platen.allocation.path_check_s"),
        ("path_check_s: 0.02", "priority_boost_after_s: 0.0", "platen.allocation.priority_boost_after_s"),
        ("priority: 2 ", "priority: two ", "priority"),
    ] {
        assert!(text.contains(from), "{from}");
        let e = workcell_guard_description::workcell::load_str(&text.replacen(from, to, 1), &file).unwrap_err();
        assert!(e.to_string().contains(key), "{key}: {e}");
    }
}

#[test]
fn a_unit_that_arrives_within_the_tolerance_may_settle_onto_its_paths_end_and_move_again() {
    // Arrival counts within arrive_tolerance_m (2 mm) of the end: what the
    // unit keeps then must cover the rest of the way to the end, or the
    // unit settling there stands outside its allocation (stopped for good).
    let units = vec![unit("a", rect(0.1, 0.1), [0.1, 0.5, 0.0], None)];
    let mut a = BitAllocator::new(&platen([1.0, 1.0], 0.001, units, vec![])).unwrap();
    report_all(&mut a, 0.0);
    let v = 0.25;
    let Answer::Increment { fraction, .. } = a.request_path(0.0, 0, 1, &[[0.5, 0.5, 0.0]], v) else { panic!() };
    let (mut s, mut now, mut granted, mut answers) = (0.0, 0.0, fraction * 0.4, Vec::new());
    let short = 0.4 - 0.0015;
    while a.path_progress(0).is_some() {
        assert!(now < 10.0, "never arrived (at {s} m, granted {granted} m)");
        now += 0.01;
        s = (s + v * 0.01).min(granted).min(short);
        report(&mut a, now, 0, [0.1 + s, 0.5, 0.0]);
        answers.clear();
        a.advance_paths(now, &mut answers);
        for (_, ans) in &answers {
            match *ans {
                Answer::Increment { fraction, .. } => granted = fraction * 0.4,
                Answer::Granted { .. } => granted = 0.4,
                other => panic!("{other:?}"),
            }
        }
    }
    assert!((s - short).abs() < 1e-12, "arrived at {s} m, 1.5 mm short of the end");
    // It settles onto the end: still within what it holds.
    now += 0.01;
    report(&mut a, now, 0, [0.5, 0.5, 0.0]);
    a.assert_invariants();
    now += 0.01;
    report(&mut a, now, 0, [0.5, 0.5, 0.0]);
    assert!(matches!(a.request(now, 0, 2, [0.3, 0.3, 0.0]), Answer::Granted { .. } | Answer::Partial { .. }));
}
