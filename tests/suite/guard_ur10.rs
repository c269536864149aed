//! The guard on a real industrial arm's URDF (Universal Robots' UR10,
//! installed at test time): release from a legal still pose between the
//! margins, and how little a lag between positions and stamps moves a
//! stop.

use crate::common;

use common::cell::cache_dir;
use workcell_guard_core::field::DistanceField;
use workcell_guard_core::guard::{Body, Decision, Guard, Inputs, JointStateIn, Reason, Scope};
use workcell_guard_core::model::coverage::Rng;
use workcell_guard_description::workcell::{self, Workcell};

/// A cell with one UR10 (example-robot-data) on the floor of an empty room,
/// with margins `clearance_m`, `release_m`.
fn ur10_cell(clearance_m: f64, release_m: f64) -> (Workcell, tempfile::TempDir) {
    ur10s(&[([0.0, 0.0, 0.0], 0.0)], clearance_m, release_m, "")
}

/// A cell of UR10s (example-robot-data) at `bases` (xyz, yaw) in an empty
/// room, with margins `clearance_m`, `release_m` and `extra` guard keys.
pub(crate) fn ur10s(
    bases: &[([f64; 3], f64)],
    clearance_m: f64,
    release_m: f64,
    extra: &str,
) -> (Workcell, tempfile::TempDir) {
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

/// A pose between the margins where the elbow moves the closest own links
/// relative to each other, held still as a real arm holds it: encoder
/// noise of ±0.1 mrad on every joint, a state every 4 ms, each decided on
/// at once and again 0–3 ms later (as when another robot's state comes in
/// between). The noise and the state's varying age make its stopping path
/// breathe, so its own links' least clearance along it dips and recovers
/// by tenths of a millimetre: that is not its links coming closer (only its
/// own motion brings them closer, and the stop check forecasts that), and
/// it starts within the hold time of its start-up stop, and stays released.
#[test]
fn a_still_robot_between_the_margins_starts_despite_encoder_noise_and_cycles_at_any_age() {
    let (cell, _dir) = ur10_cell(0.03, 0.06);
    let field = DistanceField::from_workcell(&cell);
    let mut g = workcell_guard_description::build_guard(&cell, field, Some(cache_dir())).unwrap().0;
    let pose = |elbow: f64| [0.0, -std::f64::consts::FRAC_PI_2, elbow, -std::f64::consts::FRAC_PI_2, 0.0, 0.0];
    // Folded until two links the elbow moves relative to each other are
    // the closest, between the margins.
    let mut t = 0.0;
    let elbow = (0..=140)
        .map(|k| 1.8 + k as f64 * 0.01)
        .find(|&e| {
            let d = *hold_still(&mut g, &pose(e), &mut t, 0.03).last().unwrap();
            (0.035..0.045).contains(&clearance(&d))
        })
        .expect("a pose between the margins");
    g.reset();
    let q = pose(elbow);
    let mut rng = Rng::new(7);
    let (mut released_at, mut least) = (None, f32::INFINITY);
    for k in 0..750 {
        let t = 10.0 + k as f64 * 0.004;
        let noisy: Vec<f64> = q.iter().map(|v| v + 1e-4 * (2.0 * rng.unit() - 1.0)).collect();
        g.ingest(t, &JointStateIn { robot: 0, stamp_s: t, positions: &noisy, velocities: None }).unwrap();
        let now = g.cycle(t, Scope::All).manipulators[0];
        let later = g.cycle(t + 0.003 * rng.unit(), Scope::All).manipulators[0];
        least = least.min(clearance(&later));
        match released_at {
            None if !now.is_stop() && !later.is_stop() => released_at = Some(t - 10.0),
            Some(at) => assert!(!now.is_stop() && !later.is_stop(), "released at {at} s, stopped at {t} s: {now:?}"),
            None => {}
        }
    }
    println!("elbow {elbow}: released at {released_at:?} s; least clearance {least} m");
    assert!(least > 0.03 && least < 0.06, "the pose is not between the margins: {least}");
    assert!(released_at.is_some_and(|t| t < 1.5), "still stopped: {released_at:?}");
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
    // The spheres' gaps decide: by the links' shapes the folding elbow
    // below is not stopped at all.
    g.set_exact_refinement(false);
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
    // (ignoring the stop) and held there: the stop holds. Jogged back out
    // between the margins: released on the way, as an escape (moving away
    // from the pair that stopped it), and still released standing there.
    // Then a new approach, obeyed (the elbow halts at the stop): standing
    // between the margins, the stop holds while the pair that caused it is
    // the closest there.
    // The elbow from `from` to `to`, speeding up at 3 rad/s² to 0.5 rad/s
    // and slowing down to land there; obeying, it brakes at 5 rad/s² from
    // the first stop on.
    let ramp = |g: &mut Guard, t: &mut f64, from: f64, to: f64, obey: bool| {
        let dir = (to - from).signum();
        let (mut x, mut v, mut braking) = (from, 0.0f64, false);
        let mut out = Vec::new();
        loop {
            *t += 0.002;
            let left = (to - x) * dir;
            v = if braking { (v - 5.0 * 0.002).max(0.0) } else { (v + 3.0 * 0.002).min((6.0 * left).sqrt()).min(0.5) };
            let arrived = !braking && left <= v * 0.002;
            x = if arrived { to } else { x + dir * v * 0.002 };
            let q = pose(x);
            let d = g
                .step(*t, &Inputs::joints(&[JointStateIn { robot: 0, stamp_s: *t, positions: &q, velocities: None }]))
                .manipulators[0];
            out.push((x, d));
            braking |= obey && d.is_stop();
            if arrived || (braking && v == 0.0) {
                return out;
            }
        }
    };
    let d = ramp(&mut g, &mut t, legal, close, false);
    let first = d.iter().map(|x| x.1).find(|d| d.is_stop()).expect("stopped on the way");
    assert!(matches!(first, Decision::Stop(s) if s.reason == Reason::SelfCollision), "{first:?}");
    let d = hold_still(&mut g, &pose(close), &mut t, 0.5);
    assert!(d.iter().all(|d| d.is_stop()), "released standing within the margin");
    let d = ramp(&mut g, &mut t, close, band, false);
    let go = d.iter().position(|x| !x.1.is_stop()).expect("released moving out");
    assert!(matches!(d[go].1, Decision::Continue { escaping: true, .. }), "released, not as an escape: {:?}", d[go]);
    assert!(d[go..].iter().all(|x| !x.1.is_stop()), "stopped again moving out");
    let d = hold_still(&mut g, &pose(band), &mut t, 0.5);
    assert!(d.iter().all(|d| !d.is_stop()), "stopped standing where it escaped to: {:?}", d.last());
    let d = ramp(&mut g, &mut t, band, close, true);
    let first = d.iter().map(|x| x.1).find(|d| d.is_stop()).expect("stopped approaching again");
    assert!(matches!(first, Decision::Stop(s) if s.reason == Reason::SelfCollision), "{first:?}");
    let at = d.last().unwrap().0;
    let d = hold_still(&mut g, &pose(at), &mut t, 1.5);
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
    ramp(&mut g, &mut t, at, legal, false);
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
