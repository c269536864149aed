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
    let skipped = measure_stops(&t, &q, 2, &[(tc, f64::INFINITY)], &mut out);
    assert_eq!(skipped, Skipped::default());
    assert_eq!(out.len(), 1);
    let s = out[0];
    let want = v * react + v * v / (2.0 * a);
    assert!((s.w - v).abs() < 0.01, "{s:?}");
    assert!((s.dist - want).abs() < 1e-3, "{s:?} {want}");
    assert!((s.time_s - (react + v / a)).abs() < 0.01, "{s:?}");
    // Released before rest, or the states ending: skipped and counted.
    let mut none = Vec::new();
    assert_eq!(measure_stops(&t, &q, 2, &[(tc, tc + 0.05)], &mut none).released, 1);
    assert_eq!(measure_stops(&t[..150], &q[..300], 2, &[(tc, f64::INFINITY)], &mut none).ended, 1);
    assert_eq!(measure_stops(&t, &q, 2, &[(0.905, f64::INFINITY)], &mut none).too_few_before, 1);
    assert!(none.is_empty());
}
