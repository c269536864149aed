use super::*;
use crate::model::coverage::Rng;

/// A brake the fit does not know: weaker with speed, a gravity load, a
/// reaction time spread over 12–20 ms, 0.1 mrad of noise on the distance.
fn stops(seed: u64, n: usize) -> Vec<StopSample> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|stop| {
            let v = rng.range(0.1, 2.0);
            let dir = if rng.unit() < 0.5 { -1.0 } else { 1.0 };
            let q = rng.range(-2.5, 2.5);
            let decel = 9.0 * (1.0 - 0.3 * v / 2.0) - dir * 1.5 * (q + 0.4).sin();
            let react = rng.range(0.012, 0.020);
            let dist = v * react + v * v / (2.0 * decel) + rng.range(-1e-4, 1e-4);
            StopSample { stop, joint: 0, w: dir * v, q, dist, time_s: react + v / decel }
        })
        .collect()
}

#[test]
fn the_bound_covers_held_out_stops_and_stays_close() {
    let (train, test) = (stops(1, 3000), stops(2, 3000));
    let (m, sum) = fit_joint(&train, true, &FitOptions::default()).unwrap();
    assert_eq!(sum.stops, 3000);
    let model = evaluate(&test, |s| m.bound(s.w, s.q));
    assert!(model.coverage() >= 0.999, "{model:?}");
    assert!(model.median_over <= 0.15, "{model:?}");
    // The best constant deceleration covers as often but overshoots more.
    let a = fit_constant(&train, m.reaction_s.max(0.0), 0.0005);
    let r = m.reaction_s.max(0.0);
    let constant = evaluate(&test, |s| s.w.abs() * r + s.w * s.w / (2.0 * a));
    assert!(constant.median_over > 1.5 * model.median_over, "{constant:?} vs {model:?}");
    // Monotone in speed at every position.
    for q in [-2.0, 0.0, 1.3] {
        let mut last = 0.0;
        for i in 0..100 {
            let v = sum.speed_range.0 + (sum.speed_range.1 - sum.speed_range.0) * i as f64 / 99.0;
            for dir in [-1.0, 1.0] {
                assert!(m.bound(dir * v, q) >= 0.0);
            }
            let d = m.bound(v, q);
            assert!(d >= last, "{q} {v}");
            last = d;
        }
    }
}

#[test]
fn too_few_or_too_narrow_stops_are_refused_by_name() {
    let s = stops(3, 50);
    assert_eq!(fit_joint(&s, true, &FitOptions::default()), Err(FitError::TooFewStops { got: 50, need: 100 }));
    let narrow: Vec<StopSample> = stops(4, 400)
        .into_iter()
        .map(|mut s| {
            s.w = s.w.signum() * (1.0 + 0.1 * s.w.abs());
            s
        })
        .collect();
    assert!(matches!(fit_joint(&narrow, true, &FitOptions::default()), Err(FitError::NarrowSpeedRange { .. })));
}

#[test]
fn a_recorded_stop_is_measured_from_its_joint_states() {
    // One joint cruising at 1.2 rad/s, the command at 1.0 s, braking at
    // 6 rad/s² after 20 ms, states every 2 ms with 20 µrad of noise.
    let mut rng = Rng::new(5);
    let (mut t, mut q) = (Vec::new(), Vec::new());
    let (v, tc, react, a) = (1.2, 1.0, 0.02, 6.0);
    let tb = tc + react;
    let mut k = 0;
    loop {
        let ti = 0.9 + k as f64 * 0.002;
        if ti > 1.6 {
            break;
        }
        let x = if ti <= tb {
            v * ti
        } else {
            let tau = (ti - tb).min(v / a);
            v * tb + v * tau - 0.5 * a * tau * tau
        };
        t.push(ti);
        q.push(x + rng.range(-2e-5, 2e-5));
        q.push(0.3); // a joint standing still gives no sample
        k += 1;
    }
    let mut out = Vec::new();
    let tally = measure_stops(&t, &q, 2, &[(tc, f64::INFINITY)], BEFORE_S, &mut out);
    assert_eq!((tally.found, tally.used, tally.joints[0].used, tally.joints[1].moving), (1, 1, 1, 0));
    assert_eq!(out.len(), 1);
    let s = out[0];
    let want = v * react + v * v / (2.0 * a);
    assert!((s.w - v).abs() < 0.01, "{s:?}");
    assert!((s.dist - want).abs() < 1e-3, "{s:?} {want}");
    assert!((s.time_s - (react + v / a)).abs() < 0.01, "{s:?}");
    // Released before rest, or the states ending: dropped and counted.
    let mut none = Vec::new();
    let released = measure_stops(&t, &q, 2, &[(tc, tc + 0.05)], BEFORE_S, &mut none);
    assert_eq!((released.unmeasured, released.joints[0].released), (1, 1));
    let ended = measure_stops(&t[..150], &q[..300], 2, &[(tc, f64::INFINITY)], BEFORE_S, &mut none);
    assert_eq!(ended.joints[0].ended, 1);
    assert_eq!(measure_stops(&t, &q, 2, &[(0.905, f64::INFINITY)], BEFORE_S, &mut none).too_few_before, 1);
    assert!(none.is_empty());
}

/// Two joints braking from `v` at 1.0 s (after 20 ms, at 6 and 3 rad/s²),
/// states every `dt` with ±`jitter` on their stamps and 20 µrad of noise;
/// joint 1 creeps at `drift` rad/s once at rest.
fn two_joints(dt: f64, jitter: f64, drift: f64, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut rng = Rng::new(seed);
    let (mut t, mut q) = (Vec::new(), Vec::new());
    let (v, tb) = (1.2, 1.02);
    for k in 0.. {
        let ti = 0.7 + k as f64 * dt + rng.range(-jitter, jitter);
        if ti > 2.0 {
            break;
        }
        for (a, creep) in [(6.0, 0.0), (3.0, drift)] {
            let x = if ti <= tb {
                v * ti
            } else {
                let tau = (ti - tb).min(v / a);
                v * tb + v * tau - 0.5 * a * tau * tau + creep * (ti - tb - v / a).max(0.0)
            };
            q.push(x + rng.range(-2e-5, 2e-5));
        }
        t.push(ti);
    }
    (t, q)
}

#[test]
fn each_joint_stands_on_its_own_in_a_stop_at_any_rate_and_a_creep_at_rest_is_rest() {
    for (hz, seed) in [(100.0, 1), (250.0, 2), (1000.0, 3)] {
        let dt = 1.0 / hz;
        let (t, q) = two_joints(dt, 0.2 * dt, 0.003, seed);
        let before = before_window_s(dt);
        // Released after the fast joint stood, before the slow one: the
        // fast one is kept, the slow one dropped from this stop alone.
        let mut out = Vec::new();
        let tally = measure_stops(&t, &q, 2, &[(1.0, 1.3)], before, &mut out);
        assert_eq!((tally.used, tally.joints[0].used, tally.joints[1].released), (1, 1, 1), "{hz} Hz: {tally:?}");
        let want = 1.2 * 0.02 + 1.2 * 1.2 / 12.0;
        assert!((out[0].dist - want).abs() < 1.5e-3, "{hz} Hz: {:?} against {want}", out[0]);
        // Released late: the creeping joint is at rest where its brake held.
        out.clear();
        let tally = measure_stops(&t, &q, 2, &[(1.0, f64::INFINITY)], before, &mut out);
        assert_eq!(tally.joints[1].used, 1, "{hz} Hz: {tally:?}");
        let want = 1.2 * 0.02 + 1.2 * 1.2 / 6.0;
        assert!((out[1].dist - want).abs() < 2e-3, "{hz} Hz: {:?} against {want}", out[1]);
        assert!((out[1].time_s - 0.42).abs() < 0.03, "{hz} Hz: {:?}", out[1]);
    }
    // A joint creeping faster than a brake would let it is never at rest.
    let (t, q) = two_joints(0.002, 0.0, 0.05, 4);
    let tally = measure_stops(&t, &q, 2, &[(1.0, f64::INFINITY)], BEFORE_S, &mut Vec::new());
    assert_eq!((tally.joints[0].used, tally.joints[1].ended), (1, 1), "{tally:?}");
}
