//! The manipulator guard: spatial hash, collision matrix, allowed contacts,
//! data-problem stops, determinism and the closed-loop simulation.

mod common;

use common::cell::{cache_dir, feed, guard, sample_cell, sample_field};

use proptest::prelude::*;
use std::sync::OnceLock;
use workcell_guard_core::field::DistanceField;
use workcell_guard_core::forecast::SampleError;
use workcell_guard_core::guard::{
    Body, ContactError, Decision, Guard, Inputs, JointStateIn, PairClass, Reason, Scope, StopKind,
};
use workcell_guard_core::hash::SpatialHash;
use workcell_guard_core::model::coverage::Rng;
use workcell_guard_description::CacheOutcome;
use workcell_guard_description::workcell::{self, BodyRef, Workcell};
use workcell_guard_sim::arms::{self as sim, Sim, SimOptions, SimReport};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Every pair within the threshold is reported, with the right gap, and
    /// nothing else: the hash equals all pairs.
    #[test]
    fn the_hash_finds_exactly_the_pairs_all_pairs_finds(
        a in prop::collection::vec((-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0, 0.005f32..0.08), 1..120),
        b in prop::collection::vec((-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0, 0.005f32..0.08), 1..120),
        threshold in 0.0f32..0.1,
        extra_cell in 0.0f32..0.3,
    ) {
        let r_max = a.iter().chain(&b).map(|s| s.3).fold(0.0, f32::max);
        let mut h = SpatialHash::new(a.len(), 2.0 * r_max + threshold + extra_cell);
        for (i, s) in a.iter().enumerate() {
            prop_assert!(h.insert(s.0, s.1, s.2, s.3, i as u32));
        }
        h.assert_invariants();
        for s in &b {
            let mut got = Vec::new();
            h.for_each_near(s.0, s.1, s.2, s.3, threshold, |l, g| got.push((l, g)));
            got.sort_by_key(|x| x.0);
            let mut want = Vec::new();
            for (i, t) in a.iter().enumerate() {
                let d = ((s.0 - t.0).powi(2) + (s.1 - t.1).powi(2) + (s.2 - t.2).powi(2)).sqrt();
                let reach = s.3 + t.3 + threshold;
                if d * d <= reach * reach {
                    want.push((i as u32, d - s.3 - t.3));
                }
            }
            prop_assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(&want) {
                prop_assert_eq!(g.0, w.0);
                prop_assert!((g.1 - w.1).abs() < 1e-5);
            }
        }
        h.clear();
        h.assert_invariants();
        prop_assert!(h.is_empty());
    }
}

#[test]
fn the_collision_matrix_is_cached_by_geometry_and_recomputed_when_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    let cell = sample_cell();
    let (g1, first) = workcell_guard_description::build_guard(cell, sample_field(), Some(dir.path())).unwrap();
    let CacheOutcome::Written(file) = first else { panic!("first run computes and writes: {first:?}") };
    let (g2, second) = workcell_guard_description::build_guard(cell, sample_field(), Some(dir.path())).unwrap();
    assert!(matches!(second, CacheOutcome::Loaded(ref f) if *f == file), "{second:?}");
    let n = g1.matrix().total_links();
    for a in 0..n {
        for b in 0..n {
            assert_eq!(g1.matrix().class(a, b), g2.matrix().class(a, b), "pair {a} {b}");
        }
    }
    // Geometry change: a base moved by 1 mm is a new key and a new file.
    let mut moved = cell.clone();
    moved.manipulators[1].base.trans.x += 0.001;
    let (_, third) = workcell_guard_description::build_guard(&moved, sample_field(), Some(dir.path())).unwrap();
    assert!(matches!(third, CacheOutcome::Written(ref f) if *f != file), "{third:?}");
    // A corrupt cache is ignored, not trusted.
    std::fs::write(&file, "{\"format\": 1}").unwrap();
    let (_, fourth) = workcell_guard_description::build_guard(cell, sample_field(), Some(dir.path())).unwrap();
    assert!(matches!(fourth, CacheOutcome::Written(_)), "{fourth:?}");

    // What it found on the sample cell: neighbours are adjacent, a robot's
    // base and its far links sometimes meet, the two bases never do.
    let m = g1.matrix();
    let (left, right) = (&cell.manipulators[0].robot, &cell.manipulators[1].robot);
    let gl = |r: usize, name: &str| {
        let robot = if r == 0 { left } else { right };
        m.global(r, robot.link_index(name).unwrap())
    };
    assert_eq!(m.class(gl(0, "base_link"), gl(0, "shoulder_link")), PairClass::Adjacent);
    assert_eq!(m.class(gl(0, "base_link"), gl(1, "base_link")), PairClass::Never);
    assert_eq!(m.class(gl(0, "wrist_3_link"), gl(1, "link_7")), PairClass::Sometimes);
    let (within, across) = m.counts();
    println!(
        "collision matrix of the sample cell [sometimes, adjacent, always, never, rigid, default]: within robots {within:?}, across {across:?}"
    );
}

#[test]
fn contacts_can_be_allowed_and_forbidden_at_run_time() {
    let mut g = guard();
    let (gripper, forearm) = (BodyRef::Link { robot: 0, link: 8 }, BodyRef::Link { robot: 1, link: 3 });
    assert_eq!(g.contact_allowed(gripper, forearm), Ok(false));
    g.allow_contact(gripper, forearm).unwrap();
    assert_eq!(g.contact_allowed(forearm, gripper), Ok(true));
    g.forbid_contact(forearm, gripper).unwrap();
    assert_eq!(g.contact_allowed(gripper, forearm), Ok(false));
    // From the workcell file: the left fingers may touch the fixture jig.
    let jig = sample_cell().obstacles.iter().position(|o| o.name == "fixture_jig").unwrap();
    assert_eq!(g.contact_allowed(BodyRef::Link { robot: 0, link: 9 }, BodyRef::Obstacle(jig)), Ok(true));
    assert_eq!(g.allow_contact(gripper, gripper), Err(ContactError::SameBody));
    assert_eq!(g.allow_contact(BodyRef::Obstacle(0), BodyRef::Obstacle(1)), Err(ContactError::NoLink));
    let ghost = BodyRef::Link { robot: 7, link: 0 };
    assert_eq!(g.allow_contact(ghost, gripper), Err(ContactError::UnknownBody(ghost)));
}

/// A configuration of the sample arms clear by the release margin (found by
/// the simulation's seeded sampler).
fn clear_configs() -> Vec<Vec<f64>> {
    static Q: OnceLock<Vec<Vec<f64>>> = OnceLock::new();
    Q.get_or_init(|| {
        let mut s = Sim::new(sample_cell().clone(), SimOptions::default(), Some(cache_dir())).unwrap();
        s.clear_start(&mut Rng::new(11)).expect("a clear start exists")
    })
    .clone()
}

#[test]
fn data_problems_stop_the_robot_at_once_with_the_reason() {
    let mut g = guard();
    let qs = clear_configs();
    // Nothing yet.
    let d = g.step(0.0, &Inputs::joints(&[])).manipulators.to_vec();
    assert!(matches!(d[0], Decision::Stop(s) if s.reason == Reason::NoJointState && s.kind == StopKind::Immediate));
    // A first joint state that is refused is named as such.
    let d = g
        .step(0.0, &Inputs::joints(&[JointStateIn { robot: 0, stamp_s: 0.0, positions: &[0.0; 2], velocities: None }]))
        .manipulators
        .to_vec();
    assert!(
        matches!(d[0], Decision::Stop(s) if matches!(s.reason, Reason::BadJointState(SampleError::PositionCount { .. }))),
        "{d:?}"
    );
    // History builds up: warming up first.
    let d = feed(&mut g, &qs, 0.0);
    assert!(
        matches!(d[1], Decision::Stop(s) if matches!(s.reason, Reason::WarmingUp { have: 1, need } if need as usize == workcell_guard_core::forecast::FIT_MIN)),
        "{d:?}"
    );
    let mut t = 0.0;
    for _ in 0..400 {
        t += 0.002;
        feed(&mut g, &qs, t);
    }
    let d = feed(&mut g, &qs, t + 0.002);
    assert!(d.iter().all(|d| !d.is_stop()), "clear, still arms are released after the hold: {d:?}");
    t += 0.002;
    // A NaN position: stop, with the joint named.
    let mut bad = qs[1].clone();
    bad[3] = f64::NAN;
    t += 0.002;
    let d = g
        .step(t, &Inputs::joints(&[JointStateIn { robot: 1, stamp_s: t, positions: &bad, velocities: None }]))
        .manipulators
        .to_vec();
    match d[1] {
        Decision::Stop(s) => match s.reason {
            Reason::BadJointState(SampleError::NonFinitePosition { joint: 3, .. }) => {}
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
    // A stamp going backwards.
    let d = g
        .step(t, &Inputs::joints(&[JointStateIn { robot: 0, stamp_s: t - 1.0, positions: &qs[0], velocities: None }]))
        .manipulators
        .to_vec();
    assert!(
        matches!(d[0], Decision::Stop(s) if matches!(s.reason, Reason::BadJointState(SampleError::OutOfOrder { .. })))
    );
    // A stamp from the future.
    let d = g
        .step(t, &Inputs::joints(&[JointStateIn { robot: 0, stamp_s: t + 5.0, positions: &qs[0], velocities: None }]))
        .manipulators
        .to_vec();
    assert!(
        matches!(d[0], Decision::Stop(s) if matches!(s.reason, Reason::BadJointState(SampleError::FutureStamp { .. })))
    );
    // Too few positions.
    let d = g
        .step(
            t,
            &Inputs::joints(&[JointStateIn { robot: 0, stamp_s: t + 0.001, positions: &qs[0][..3], velocities: None }]),
        )
        .manipulators
        .to_vec();
    assert!(
        matches!(d[0], Decision::Stop(s) if matches!(s.reason, Reason::BadJointState(SampleError::PositionCount { expected: 7, got: 3 })))
    );
    // Silence after a refusal: the refusal still names the stop (it
    // outranks staleness for as long as no state is taken).
    for now in [t + 0.2, t + 5.0] {
        let d = g.step(now, &Inputs::joints(&[])).manipulators.to_vec();
        assert!(
            matches!(d[0], Decision::Stop(s) if matches!(s.reason, Reason::BadJointState(SampleError::PositionCount { .. }))),
            "{d:?}"
        );
        assert!(
            matches!(d[1], Decision::Stop(s) if matches!(s.reason, Reason::BadJointState(SampleError::NonFinitePosition { .. }))),
            "{d:?}"
        );
    }
    // Silence after good states: the watchdog.
    let t = t + 5.0;
    feed(&mut g, &qs, t + 0.002);
    let d = g.step(t + 0.2, &Inputs::joints(&[])).manipulators.to_vec();
    assert!(
        d.iter().all(|d| matches!(d, Decision::Stop(s) if matches!(s.reason, Reason::StaleJointState { .. }))),
        "{d:?}"
    );
    // Unknown robot indices are counted, not trusted.
    g.step(
        t + 0.2,
        &Inputs::joints(&[JointStateIn { robot: 9, stamp_s: t + 0.2, positions: &qs[0], velocities: None }]),
    );
    assert_eq!(g.unknown_inputs(), 1);
}

#[test]
fn a_refused_state_stops_until_a_state_is_taken_again() {
    let mut g = guard();
    let qs = clear_configs();
    let mut t = 0.0;
    for _ in 0..400 {
        t += 0.002;
        feed(&mut g, &qs, t);
    }
    assert!(g.cycle(t, Scope::All).manipulators.iter().all(|d| !d.is_stop()));
    // Taken one by one as a transport receives them: a NaN, then nothing
    // new for a few cycles (within the watchdog): still stopped, still named.
    let mut bad = qs[0].clone();
    bad[1] = f64::NAN;
    t += 0.002;
    assert!(g.ingest(t, &JointStateIn { robot: 0, stamp_s: t, positions: &bad, velocities: None }).is_err());
    for k in 0..5 {
        let d = g.cycle(t + 0.001 * k as f64, Scope::All).manipulators[0];
        assert!(
            matches!(d, Decision::Stop(s) if matches!(s.reason, Reason::BadJointState(SampleError::NonFinitePosition { joint: 1, .. }))),
            "cycle {k}: {d:?}"
        );
    }
    // A refused state followed by a good one within one cycle still stops that cycle.
    t += 0.002;
    let _ = g.ingest(t, &JointStateIn { robot: 1, stamp_s: t, positions: &[0.0; 2], velocities: None });
    assert!(g.ingest(t, &JointStateIn { robot: 1, stamp_s: t, positions: &qs[1], velocities: None }).is_ok());
    assert!(g.ingest(t, &JointStateIn { robot: 0, stamp_s: t, positions: &qs[0], velocities: None }).is_ok());
    let d = g.cycle(t, Scope::All).manipulators.to_vec();
    assert!(
        matches!(d[1], Decision::Stop(s) if matches!(s.reason, Reason::BadJointState(SampleError::PositionCount { .. }))),
        "{d:?}"
    );
    assert!(
        !matches!(d[0], Decision::Stop(s) if matches!(s.reason, Reason::BadJointState(_))),
        "robot 0 took a state: {d:?}"
    );
    let d = g.cycle(t + 0.001, Scope::All).manipulators.to_vec();
    assert!(
        !matches!(d[1], Decision::Stop(s) if matches!(s.reason, Reason::BadJointState(_))),
        "the next cycle: {d:?}"
    );
}

#[test]
fn a_moving_arm_is_stopped_on_its_path_before_contact_and_released_once_clear() {
    let mut g = guard();
    let mut qs = clear_configs();
    let mut t = 0.0;
    for _ in 0..300 {
        t += 0.002;
        feed(&mut g, &qs, t);
    }
    assert!(feed(&mut g, &qs, t + 0.002).iter().all(|d| !d.is_stop()));
    t += 0.002;
    // Swing the left arm's shoulder and elbow at up to 1 rad/s (accelerating
    // at 4 rad/s²) until something is in the way.
    let mut stopped_at = None;
    let mut first = None;
    let mut w = 0.0f64;
    for k in 0..3000 {
        t += 0.002;
        if stopped_at.is_none() {
            w = (w + 4.0 * 0.002).min(1.0);
            qs[0][1] += w * 0.002;
            qs[0][2] += w * 0.002;
        }
        let d = feed(&mut g, &qs, t);
        if let (None, Decision::Stop(s)) = (stopped_at, d[0]) {
            stopped_at = Some(k);
            first = Some(s);
        }
        if stopped_at.is_some() && k > stopped_at.unwrap() + 10 {
            break;
        }
    }
    let s = first.expect("the guard stops the swinging arm");
    println!("stop: {s:?}");
    assert_eq!(s.kind, StopKind::OnPath);
    assert!(s.time_to_contact_s.unwrap() > 0.0);
    assert!(s.clearance_m <= sample_cell().margins.clearance_m as f32);
    assert!(matches!(s.reason, Reason::Robot { .. } | Reason::Cell | Reason::SelfCollision));
    if let Some((a, _)) = s.pair {
        assert!(matches!(a, Body::Link { robot: 0, .. }));
    }
    // Back where it started: released only after the hold time, clear by the release margin.
    let qs_back = clear_configs();
    let mut released = None;
    for k in 0..1000 {
        t += 0.002;
        let d = feed(&mut g, &qs_back, t);
        if !d[0].is_stop() {
            released = Some(k as f64 * 0.002);
            break;
        }
    }
    let after = released.expect("released once clear");
    assert!(after >= sample_cell().guard.release_hold_s - 0.02, "released after {after} s");
}

#[test]
fn the_same_inputs_give_the_same_decisions() {
    let run = || {
        let mut g = guard();
        let mut qs = clear_configs();
        let mut out = Vec::new();
        for k in 0..600 {
            let t = k as f64 * 0.002;
            if k > 300 {
                qs[0][0] -= 0.002 * (k as f64 * 0.01).sin();
                qs[1][1] += 0.002;
            }
            out.push(feed(&mut g, &qs, t));
        }
        out
    };
    assert_eq!(run(), run());
}

/// Episodes for the closed-loop test: `WG_SIM_EPISODES` (CI runs the
/// default; the 10,000-episode run is `workcell_guard simulate`).
fn episodes() -> usize {
    std::env::var("WG_SIM_EPISODES").ok().and_then(|v| v.parse().ok()).unwrap_or(600)
}

#[test]
fn closed_loop_arms_never_touch_anything() {
    let total_eps = episodes();
    let opts = SimOptions { duration_s: 0.5, ..SimOptions::default() };
    let mut total = SimReport { min_clearance_m: f64::INFINITY, ..SimReport::default() };
    let handles: Vec<_> = (2..=4usize)
        .map(|arms| {
            let dir = cache_dir().to_path_buf();
            std::thread::spawn(move || {
                let mut cell = sim::cell_with_arms(sample_cell(), arms);
                cell.guard.max_path_samples = 16;
                let mut s = Sim::new(cell, opts, Some(&dir)).unwrap();
                let mut r = SimReport { min_clearance_m: f64::INFINITY, ..SimReport::default() };
                for k in 0..(total_eps / 3) as u64 {
                    r.merge(&s.episode(arms as u64 * 1_000_000 + k));
                }
                (arms, r)
            })
        })
        .collect();
    for h in handles {
        let (arms, r) = h.join().unwrap();
        println!(
            "{arms} arms: {} episodes, {} cycles, contacts cell/robot/self {}/{}/{}, stops {}, false stops {:.1} % (touch: {:.1} %), least clearance {:.4} m",
            r.episodes,
            r.cycles,
            r.contacts_cell,
            r.contacts_robot,
            r.contacts_self,
            r.stops,
            100.0 * r.false_stop_rate(),
            100.0 * r.false_stop_touch_rate(),
            r.min_clearance_m
        );
        total.merge(&r);
    }
    println!("false-stop rate {:.1} % over {} stops (goal < 10 %)", 100.0 * total.false_stop_rate(), total.stops);
    assert!(total.episodes >= total_eps / 3 * 3 * 9 / 10, "too many episodes without a clear start: {total:?}");
    assert!(total.stops > 0, "the episodes must exercise stops");
    assert_eq!(total.contacts(), 0, "{total:?}");
}

#[test]
fn an_arm_that_moves_on_after_holding_still_is_posed_anew() {
    // A still arm's poses are kept from cycle to cycle; once it stands
    // somewhere else, the guard must judge it there, exactly as a guard
    // that never saw the first place.
    let a = clear_configs();
    let mut b = a.clone();
    for x in b[1].iter_mut().take(3) {
        *x += 0.3;
    }
    let (mut moved, mut fresh) = (guard(), guard());
    let mut t = 10.0;
    for _ in 0..100 {
        t += 0.002;
        feed(&mut moved, &a, t);
    }
    let at_a = format!("{:?}", moved.decisions()[1]);
    for _ in 0..200 {
        t += 0.002;
        feed(&mut moved, &b, t);
        feed(&mut fresh, &b, t);
    }
    assert_eq!(moved.plan(1).map(|p| p.intervals), Some(0), "the arm holds still at b");
    // Each guard's hold timers are its own (the jump itself stops the arm
    // as implausible motion): the clearances and pairs must agree.
    let seen = |d: &Decision| match *d {
        Decision::Stop(s) => (s.clearance_m, s.pair),
        Decision::Continue { clearance_m, pair } => (clearance_m, pair),
    };
    let judged = |g: &Guard| g.decisions().iter().map(seen).collect::<Vec<_>>();
    assert_eq!(judged(&moved), judged(&fresh), "a guard that saw the arm at a first judges b alike");
    assert_ne!(at_a, format!("{:?}", moved.decisions()[1]), "a and b must differ for this test to tell");

    // While warming up, an arm is one configuration, its newest: a jump
    // from a to b between two first states keeps that count at one.
    let (mut jumped, mut fresh) = (guard(), guard());
    let first = feed(&mut jumped, &a, 20.0);
    let (x, y) = (feed(&mut jumped, &b, 20.002), feed(&mut fresh, &b, 20.002));
    assert!(x[1].is_stop() && y[1].is_stop(), "warming up");
    assert_eq!(seen(&x[1]), seen(&y[1]), "judged where it is now");
    assert_ne!(seen(&first[1]), seen(&x[1]), "a and b must differ for this test to tell");
}

#[test]
fn one_step_answers_platen_requests_beside_the_manipulator_decisions() {
    use workcell_guard_core::guard::{Inputs, MoveRequest, PlatenPoseIn};
    use workcell_guard_core::platen::{Answer, Blocker, UnitStatus};
    let mut g = guard();
    let qs = clear_configs();
    let states: Vec<JointStateIn> = qs
        .iter()
        .enumerate()
        .map(|(r, q)| JointStateIn { robot: r, stamp_s: 0.0, positions: q, velocities: None })
        .collect();
    let poses = [
        PlatenPoseIn { unit: 0, stamp_s: 0.0, pose: [0.2, 0.3, 0.0] },
        PlatenPoseIn { unit: 1, stamp_s: 0.0, pose: [0.8, 0.7, 0.0] },
        PlatenPoseIn { unit: 7, stamp_s: 0.0, pose: [0.0; 3] },
    ];
    let requests = [
        // mover_a up 0.2 m: free.
        MoveRequest { unit: 0, request_id: 1, target: [0.2, 0.5, 0.0] },
        // mover_b straight onto mover_a's new path: in the way.
        MoveRequest { unit: 1, request_id: 2, target: [0.2, 0.4, 0.0] },
    ];
    let unknown = g.unknown_inputs();
    let d = g.step(0.0, &Inputs { joint_states: &states, platen_poses: &poses, platen_requests: &requests });
    assert_eq!(d.manipulators.len(), 2);
    assert_eq!(d.answers[0], (0, Answer::Granted { request_id: 1, goal: [0.2, 0.5, 0.0] }));
    assert!(
        matches!(d.answers[1], (1, Answer::Partial { request_id: 2, blocker: Blocker::Unit(0), .. })),
        "{:?}",
        d.answers[1]
    );
    assert_eq!(d.platen[0], UnitStatus::Moving { request_id: 1, goal: [0.2, 0.5, 0.0] });
    assert_eq!(g.unknown_inputs(), unknown + 1, "the pose of unit 7 is counted as unknown");
    g.platen().unwrap().assert_invariants();
    // No pose for longer than the timeout: mover_a must stop.
    let d = g.step(0.5, &Inputs::default());
    assert!(d.answers.is_empty());
    assert!(matches!(d.platen[0], UnitStatus::Stopped(_)), "{:?}", d.platen[0]);
}

/// A cell with one UR10 (example-robot-data) on the floor of an empty room,
/// with margins `clearance_m`, `release_m`.
fn ur10_cell(clearance_m: f64, release_m: f64) -> (Workcell, tempfile::TempDir) {
    ur10s(&[([0.0, 0.0, 0.0], 0.0)], clearance_m, release_m, "")
}

/// A cell of UR10s (example-robot-data) at `bases` (xyz, yaw) in an empty
/// room, with margins `clearance_m`, `release_m` and `extra` guard keys.
fn ur10s(bases: &[([f64; 3], f64)], clearance_m: f64, release_m: f64, extra: &str) -> (Workcell, tempfile::TempDir) {
    let urdf = common::robots_dir().join("ur_description/urdf/ur10_robot.urdf");
    let dir = tempfile::tempdir().unwrap();
    let joints =
        ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint", "wrist_3_joint"]
            .iter()
            .map(|j| format!("      {j}: {{max_decel_radps2: 4.0}}\n"))
            .collect::<String>();
    let mut yaml = format!(
        r#"cell_frame: world
margins: {{clearance_m: {clearance_m}, release_m: {release_m}}}
voxel_grid: {{origin_m: [-2.0, -2.0, -0.5], size_m: [6.0, 4.0, 3.0], resolution_m: 0.05, max_distance_m: 0.5, outside: free}}
guard: {{watchdog_s: 0.05, release_hold_s: 0.3{extra}}}
manipulators:
"#
    );
    for (k, (xyz, yaw)) in bases.iter().enumerate() {
        yaml += &format!(
            r#"  - name: ur10_{k}
    urdf: {}
    base_pose: {{xyz_m: [{}, {}, {}], rpy_rad: [0.0, 0.0, {yaw}]}}
    joint_state_topic: ur10_{k}/joint_states
    trajectory_topic: ur10_{k}/planned_trajectory
    priority: {k}
    reaction_time_s: 0.03
    joints:
{joints}"#,
            urdf.display(),
            xyz[0],
            xyz[1],
            xyz[2]
        );
    }
    let file = dir.path().join("ur10.yaml");
    std::fs::write(&file, yaml).unwrap();
    (workcell::load(&file).unwrap(), dir)
}

/// Feeds a still robot `q` for `seconds` at 500 Hz from `*t`; the decisions.
fn hold_still(g: &mut Guard, q: &[f64], t: &mut f64, seconds: f64) -> Vec<Decision> {
    let mut out = Vec::new();
    for _ in 0..(seconds / 0.002).round() as usize {
        *t += 0.002;
        out.push(
            g.step(*t, &Inputs::joints(&[JointStateIn { robot: 0, stamp_s: *t, positions: q, velocities: None }]))
                .manipulators[0],
        );
    }
    out
}

fn clearance(d: &Decision) -> f32 {
    match d {
        Decision::Continue { clearance_m, .. } => *clearance_m,
        Decision::Stop(s) => s.clearance_m,
    }
}

#[test]
fn a_still_robot_in_a_legal_pose_between_the_margins_starts_but_a_proximity_stop_still_holds() {
    // The UR10's wrist_1_link and ee_link stay 0.050 m apart in every pose
    // (no joint moves them relative to each other): between these margins.
    let (cell, _dir) = ur10_cell(0.03, 0.06);
    assert_eq!(cell.manipulators.len(), 1);
    let field = DistanceField::from_workcell(&cell);
    let mut g = workcell_guard_description::build_guard(&cell, field, Some(cache_dir())).unwrap().0;
    let link = |name: &str| cell.manipulators[0].robot.link_index(name).unwrap() as u16;
    let fixed_pair = (link("wrist_1_link"), link("ee_link"));
    let mut t = 0.0;
    // Folding the elbow brings the forearm's wrist towards the upper arm.
    let pose = |elbow: f64| vec![0.0, -std::f64::consts::FRAC_PI_2, elbow, -std::f64::consts::FRAC_PI_2, 0.0, 0.0];
    let own = |d: &Decision| {
        let pair = match d {
            Decision::Continue { pair, .. } => *pair,
            Decision::Stop(s) => s.pair,
        };
        match pair {
            Some((Body::Link { link: a, .. }, Body::Link { link: b, .. })) => Some((a.min(b), a.max(b))),
            _ => None,
        }
    };
    let (mut band, mut close) = (None, None);
    for k in 0..=140 {
        let e = 1.8 + k as f64 * 0.01;
        let d = *hold_still(&mut g, &pose(e), &mut t, 0.03).last().unwrap();
        let c = clearance(&d);
        let Some(pair) = own(&d) else { continue };
        if pair != fixed_pair && c > 0.035 && c < 0.045 && band.is_none() {
            band = Some(e);
        }
        if c < 0.02 && c > 0.0 && close.is_none() {
            close = Some(e);
        }
    }
    let (band, close) = (band.expect("a pose between the margins"), close.expect("a pose too close"));
    let legal = 1.0;
    println!("elbow: legal at {legal}, between the margins at {band}, too close at {close}");
    // Start-up (no joint state, then warming up) in a legal pose whose
    // closest own links lie between the margins: it starts.
    g.reset();
    let d = hold_still(&mut g, &pose(legal), &mut t, 1.5);
    let last = d.last().unwrap();
    assert_eq!(own(last), Some(fixed_pair), "{last:?}");
    assert!(clearance(last) > 0.03 && clearance(last) < 0.06, "{last:?}");
    assert!(!last.is_stop(), "a still robot in a legal pose is released: {last:?}");
    // Moving the elbow on at 0.5 rad/s: a self-collision stop before the
    // pair comes within the clearance margin. Jogged on into the margin
    // and back (ignoring the stop), then held still between the margins:
    // the stop holds while the pair that caused it is the closest there.
    let ramp = |g: &mut Guard, t: &mut f64, from: f64, to: f64| {
        let n = ((to - from).abs() / 0.5 / 0.002).ceil() as usize;
        (1..=n)
            .map(|k| {
                *t += 0.002;
                let q = pose(from + (to - from) * k as f64 / n as f64);
                g.step(*t, &Inputs::joints(&[JointStateIn { robot: 0, stamp_s: *t, positions: &q, velocities: None }]))
                    .manipulators[0]
            })
            .collect::<Vec<_>>()
    };
    let d = ramp(&mut g, &mut t, legal, close);
    let first = d.iter().find(|d| d.is_stop()).expect("stopped on the way");
    assert!(matches!(first, Decision::Stop(s) if s.reason == Reason::SelfCollision), "{first:?}");
    ramp(&mut g, &mut t, close, band);
    let d = hold_still(&mut g, &pose(band), &mut t, 1.5);
    if std::env::var_os("WG_DEBUG").is_some() {
        for x in d.iter().step_by(25) {
            println!("{x:?}");
        }
    }
    assert!(d.iter().all(|d| d.is_stop()), "held");
    assert!(
        matches!(d.last().unwrap(), Decision::Stop(s) if matches!(s.reason, Reason::Holding { .. })),
        "{:?}",
        d.last()
    );
    ramp(&mut g, &mut t, band, legal);
    let d = hold_still(&mut g, &pose(legal), &mut t, 1.5);
    assert!(!d.last().unwrap().is_stop(), "released once clear: {:?}", d.last());
}

/// Least distance between two robots' spheres (centre distance less both
/// radii), m.
fn sphere_gap(cell: &Workcell, q: &[Vec<f64>]) -> f64 {
    use workcell_guard_core::model::SpherePoser;
    let posed: Vec<_> = cell
        .manipulators
        .iter()
        .zip(q)
        .map(|(m, q)| {
            let p = SpherePoser::new(&m.robot, &m.spheres, m.base);
            let mut out = p.posed();
            p.pose(q, &mut out).unwrap();
            out
        })
        .collect();
    let (a, b) = (&posed[0], &posed[1]);
    let mut best = f64::INFINITY;
    for i in 0..a.len() {
        for j in 0..b.len() {
            let d = ((a.x[i] - b.x[j]).powi(2) + (a.y[i] - b.y[j]).powi(2) + (a.z[i] - b.z[j]).powi(2)).sqrt();
            best = best.min((d - a.r[i] - b.r[j]) as f64);
        }
    }
    best
}

/// Two UR10s facing each other turn their shoulders towards each other
/// (ramping up at 2 rad/s² to 0.5 rad/s), joint states at `hz`, each
/// position taken up to `lag_s` before its stamp; nobody obeys the stops.
/// The spheres' gap when the first stop comes, m.
fn facing_stop_gap(cell: &Workcell, hz: f64, lag_s: f64, seed: u64) -> f64 {
    let field = DistanceField::from_workcell(cell);
    let mut g = workcell_guard_description::build_guard(cell, field, Some(cache_dir())).unwrap().0;
    let mut rng = Rng::new(seed);
    let pan = |t: f64| {
        // Still for 1 s, then a 0.25 s ramp to 0.5 rad/s.
        let m = (t - 1.0).max(0.0);
        let ramp = 0.25;
        1.5 - if m < ramp { 0.5 * 2.0 * m * m } else { 0.5 * 2.0 * ramp * ramp + 0.5 * (m - ramp) }
    };
    let q = |p: f64| vec![vec![p, -0.5, 1.0, 0.0, 0.0, 0.0], vec![-p, -0.5, 1.0, 0.0, 0.0, 0.0]];
    let mut released = false;
    for k in 0..(7.0 * hz) as usize {
        let stamp = 1.0 + k as f64 / hz;
        let lags = [rng.range(0.0, lag_s), rng.range(0.0, lag_s)];
        let qa = q(pan(stamp - 1.0 - lags[0]))[0].clone();
        let qb = q(pan(stamp - 1.0 - lags[1]))[1].clone();
        let states = [
            JointStateIn { robot: 0, stamp_s: stamp, positions: &qa, velocities: None },
            JointStateIn { robot: 1, stamp_s: stamp, positions: &qb, velocities: None },
        ];
        let d = g.step(stamp, &Inputs::joints(&states)).manipulators.to_vec();
        let stop = d.iter().any(|d| d.is_stop());
        if !stop && stamp - 1.0 < 1.0 {
            released = true;
        }
        if released && stop && stamp - 1.0 >= 1.0 {
            return sphere_gap(cell, &q(pan(stamp - 1.0)));
        }
    }
    panic!("no stop (released at the start: {released})");
}

#[test]
fn positions_that_lag_their_stamps_by_up_to_a_millisecond_move_the_stop_by_less_than_three_centimetres() {
    let bases = [([0.0, 0.0, 0.0], 0.0), ([1.8, 0.0, 0.0], std::f64::consts::PI)];
    let (cell, _d) = ur10s(&bases, 0.03, 0.05, "");
    // Without the guard they meet.
    let q0 = vec![vec![0.0, -0.5, 1.0, 0.0, 0.0, 0.0], vec![0.0, -0.5, 1.0, 0.0, 0.0, 0.0]];
    assert!(sphere_gap(&cell, &q0) < 0.0);
    for hz in [100.0, 125.0, 500.0, 1000.0] {
        let exact = facing_stop_gap(&cell, hz, 0.0, 1);
        let mut worst = 0.0f64;
        for seed in 1..=3 {
            let lagged = facing_stop_gap(&cell, hz, 0.001, seed);
            worst = worst.max((lagged - exact).abs());
        }
        println!(
            "{hz} Hz: stop at a gap of {exact:.3} m with exact stamps; lagged positions move it by {worst:.3} m at most"
        );
        assert!(exact > 0.0, "{hz} Hz: stopped too late ({exact} m)");
        assert!(worst < 0.03, "{hz} Hz: lagged positions moved the stop by {worst} m");
    }
    // The method text's five-point differences on the same streams (what
    // the guard did before): the lag moves the stop far more.
    let (five, _d5) = ur10s(&bases, 0.03, 0.05, ", velocity_fit_window_s: 0.0");
    let exact = facing_stop_gap(&five, 1000.0, 0.0, 1);
    let lagged = facing_stop_gap(&five, 1000.0, 0.001, 1);
    println!("five-point differences at 1000 Hz: {exact:.3} m exact, {lagged:.3} m lagged");
    assert!((lagged - exact).abs() > 0.03, "the test must tell the estimators apart");
}
