//! The joint-state estimator and the stopping path (`forecast`).

use proptest::prelude::*;
use workcell_guard_core::forecast::{self, Estimator, SampleError};
use workcell_guard_core::model::coverage::Rng;

/// A polynomial of degree ≤ 4 in t with its first two derivatives.
#[derive(Clone, Copy, Debug)]
struct Poly([f64; 5]);
impl Poly {
    fn at(&self, t: f64) -> f64 {
        self.0.iter().rev().fold(0.0, |acc, &c| acc * t + c)
    }
    fn d1(&self, t: f64) -> f64 {
        let c = self.0;
        c[1] + 2.0 * c[2] * t + 3.0 * c[3] * t * t + 4.0 * c[4] * t * t * t
    }
    fn d2(&self, t: f64) -> f64 {
        let c = self.0;
        2.0 * c[2] + 6.0 * c[3] * t + 12.0 * c[4] * t * t
    }
}

fn run(polys: &[Poly], stamps: &[f64], window: usize) -> (Vec<f64>, Vec<f64>, f64) {
    let mut e = Estimator::new(polys.len(), window, false);
    for &t in stamps {
        let q: Vec<f64> = polys.iter().map(|p| p.at(t)).collect();
        e.push(t, &q, None).expect("valid sample");
    }
    let m = e.motion().expect("enough samples");
    (m.v.to_vec(), m.a.to_vec(), m.stamp_s)
}

proptest! {
    /// Degree ≤ 4: velocity and acceleration are exact at uniform stamps
    /// (the method text's 25, −48, 36, −16, 3 over 12Δt) and at any stamps.
    #[test]
    fn estimates_are_exact_on_polynomials_up_to_degree_four(
        coef in prop::array::uniform5(-2.0f64..2.0),
        dt in 0.0005f64..0.02,
        jitter in 0.0f64..0.45,
        seed in any::<u64>(),
    ) {
        let p = Poly(coef);
        let mut rng = Rng::new(seed);
        for j in [0.0, jitter] {
            let mut stamps = Vec::new();
            let mut t = 1.0;
            for _ in 0..12 {
                t += dt * (1.0 + j * rng.range(-1.0, 1.0));
                stamps.push(t);
            }
            let (v, a, t0) = run(&[p], &stamps, 1);
            let scale = 1.0 + p.d1(t0).abs();
            // Exact but for rounding: the weights grow like 1/Δt and 1/Δt².
            prop_assert!((v[0] - p.d1(t0)).abs() <= 1e-10 * scale / dt, "v {} vs {}", v[0], p.d1(t0));
            let ascale = 1.0 + p.d2(t0).abs();
            prop_assert!((a[0] - p.d2(t0)).abs() <= 1e-9 * ascale / (dt * dt), "a {} vs {} (dt {dt}, jitter {j})", a[0], p.d2(t0));
        }
    }
}

#[test]
fn jittered_stamps_keep_the_error_bounded_on_smooth_motion() {
    // q = A sin(ωt), sampled at the jittered stamps it reports (500 Hz ± 30 %).
    let (amp, w) = (1.2, 3.0);
    let mut rng = Rng::new(7);
    let mut e = Estimator::new(1, 1, false);
    let (mut worst_v, mut worst_a) = (0.0f64, 0.0f64);
    let mut t = 0.0;
    for k in 0..2000 {
        t += 0.002 * (1.0 + 0.3 * rng.range(-1.0, 1.0));
        e.push(t, &[amp * (w * t).sin()], None).unwrap();
        if k >= 10 {
            let m = e.motion().unwrap();
            worst_v = worst_v.max((m.v[0] - amp * w * (w * t).cos()).abs());
            worst_a = worst_a.max((m.a[0] + amp * w * w * (w * t).sin()).abs());
        }
    }
    // Truncation error of a degree-4 fit: about |q⁽⁵⁾|·h⁴ for v, h³ for a.
    println!("jittered stamps: worst velocity error {worst_v:.2e} rad/s, acceleration {worst_a:.2e} rad/s²");
    assert!(worst_v < 1e-6, "{worst_v}");
    assert!(worst_a < 1e-3, "{worst_a}");
}

#[test]
fn a_joint_holding_still_has_exactly_zero_speed_and_no_stopping_path() {
    // Jittered stamps give weights that sum to zero only up to rounding;
    // the estimate must still be exactly zero for a joint that does not
    // move, so that a still arm has a single configuration to check.
    let mut rng = Rng::new(3);
    let q = [1.234_567_891_234, -2.5, 0.1, 3.0e-7, 1.0e3];
    let mut e = Estimator::new(q.len(), 3, false);
    let mut t = 1_700_000_000.0;
    for _ in 0..20 {
        t += 0.002 + rng.range(-0.0004, 0.0004);
        e.push(t, &q, None).expect("valid sample");
    }
    let m = e.motion().expect("enough samples");
    assert!(m.v.iter().chain(m.a).all(|&x| x == 0.0), "v {:?} a {:?}", m.v, m.a);
    let mut inflation = vec![0.0; 2];
    let plan = forecast::plan(m.v, m.a, &[2.0; 5], &[0.5; 10], 0.05, 0.01, 40, &mut inflation);
    assert_eq!(plan.intervals, 0, "{plan:?}");
}

#[test]
fn the_running_average_filter_averages_the_last_estimates() {
    // Constant acceleration: velocity is linear, so a window of w samples
    // reports the velocity (w−1)/2 samples back, exactly.
    let dt = 0.002;
    let p = Poly([0.1, 0.5, 1.5, 0.0, 0.0]);
    let stamps: Vec<f64> = (1..=20).map(|k| k as f64 * dt).collect();
    let (v, a, t0) = run(&[p], &stamps, 4);
    let lag = 1.5 * dt;
    assert!((v[0] - p.d1(t0 - lag)).abs() < 1e-9, "{} vs {}", v[0], p.d1(t0 - lag));
    assert!((a[0] - 3.0).abs() < 1e-6);
}

#[test]
fn too_few_samples_say_how_many_are_needed() {
    let mut e = Estimator::new(2, 1, false);
    for k in 0..8 {
        e.push(k as f64 * 0.002, &[0.0, 0.0], None).unwrap();
        let w = e.motion().unwrap_err();
        assert_eq!((w.have, w.need), (k + 1, 9));
    }
    e.push(0.016, &[0.0, 0.0], None).unwrap();
    assert!(e.motion().is_ok());
    // Trusted velocities need fewer.
    let mut t = Estimator::new(1, 1, true);
    assert_eq!(t.needed(), 5);
    assert_eq!(t.push(0.0, &[0.0], None), Err(SampleError::MissingVelocity));
}

#[test]
fn bad_samples_are_refused_with_the_reason_and_change_nothing() {
    let mut e = Estimator::new(2, 1, false);
    for k in 0..9 {
        e.push(k as f64 * 0.01, &[k as f64, 0.0], None).unwrap();
    }
    let before = e.motion().unwrap().v.to_vec();
    let last = 0.08;
    type Case = (f64, Vec<f64>, Option<Vec<f64>>, SampleError);
    let cases: Vec<Case> = vec![
        (last, vec![1.0, 1.0], None, SampleError::DuplicateStamp { stamp_s: last }),
        (0.05, vec![1.0, 1.0], None, SampleError::OutOfOrder { stamp_s: 0.05, previous_s: last }),
        (f64::NAN, vec![1.0, 1.0], None, SampleError::BadStamp { stamp_s: f64::NAN }),
        (0.09, vec![1.0], None, SampleError::PositionCount { expected: 2, got: 1 }),
        (0.09, vec![1.0, f64::INFINITY], None, SampleError::NonFinitePosition { joint: 1, value: f64::INFINITY }),
        (0.09, vec![1.0, 1.0], Some(vec![0.0]), SampleError::VelocityCount { expected: 2, got: 1 }),
    ];
    for (t, q, v, want) in cases {
        let got = e.push(t, &q, v.as_deref()).unwrap_err();
        // NaN != NaN: compare the message instead.
        assert_eq!(got.to_string(), want.to_string());
        assert_eq!(e.count(), 9);
    }
    // The newest sample delivered again: taken and ignored.
    e.push(last, &[8.0, 0.0], None).unwrap();
    assert_eq!(e.count(), 9);
    assert_eq!(e.motion().unwrap().v, &before[..]);
    let nan = e.push(0.09, &[f64::NAN, 0.0], None).unwrap_err();
    assert!(nan.to_string().contains("position of joint 0 is NaN"), "{nan}");
    assert_eq!(e.motion().unwrap().v, &before[..]);
}

#[test]
fn the_stopping_path_ends_where_each_joint_has_braked_and_samples_bound_the_step() {
    let v = [1.5, -0.8, 0.0];
    let a = [2.0, 3.0, 0.0]; // joint 1 decelerates: not counted on
    let decel = [6.0, 4.0, 5.0];
    let lever = [1.0, 0.5, 0.2, 0.0, 1.0, 0.3];
    let mut infl = [0.0; 2];
    let react = 0.03;
    let p = forecast::plan(&v, &a, &decel, &lever, react, 0.01, 1000, &mut infl);
    let vr0 = 1.5 + 2.0 * react;
    assert!((p.horizon_s - (react + vr0 / 6.0)).abs() < 1e-12);
    // Joint 0 travels v·t_r + ½a·t_r² then v_r²/(2a_max).
    let end = forecast::joint_at(0.0, v[0], a[0], decel[0], react, p.horizon_s);
    assert!((end - (1.5 * react + 0.5 * 2.0 * react * react + vr0 * vr0 / 12.0)).abs() < 1e-12);
    // Joint 1 keeps its speed through the reaction time.
    let end1 = forecast::joint_at(0.0, v[1], a[1], decel[1], react, 10.0);
    assert!((end1 - (-0.8 * react - 0.64 / 8.0)).abs() < 1e-12);
    // No link moves more than twice its inflation between two samples.
    let mut q0 = [0.0; 3];
    let mut q1 = [0.0; 3];
    let m = |q: &mut [f64; 3], t: f64| {
        for j in 0..3 {
            q[j] = forecast::joint_at(0.0, v[j], a[j], decel[j], react, t);
        }
    };
    for k in 0..p.intervals {
        m(&mut q0, p.time(k));
        m(&mut q1, p.time(k + 1));
        for l in 0..2 {
            let travel: f64 = (0..3).map(|j| lever[l * 3 + j] * (q1[j] - q0[j]).abs()).sum();
            assert!(travel <= 2.0 * infl[l] + 1e-12, "link {l} interval {k}: {travel} > 2·{}", infl[l]);
        }
    }
    assert!(p.inflation_m <= 0.005 + 1e-12);
}

/// A controller braking joint by joint, integrated finely: every joint
/// keeps `v + γ⁺t` through the reaction time, then decelerates, either at
/// its own maximum or, synchronised, so that all stand still together.
fn braked(v: &[f64], a: &[f64], decel: &[f64], react: f64, sync: bool, t_end: f64) -> Vec<f64> {
    let dt = 1e-5f64;
    let n = v.len();
    let mut q = vec![0.0; n];
    let mut w: Vec<f64> = v.to_vec();
    let mut t = 0.0;
    while t < t_end - 1e-12 {
        let h = dt.min(t_end - t);
        if t < react {
            for j in 0..n {
                let acc = forecast::reaction_accel(v[j], a[j]);
                q[j] += w[j] * h + 0.5 * acc * h * h;
                w[j] += acc * h;
            }
        } else {
            // Time the slowest joint still needs, from here.
            let left = (0..n).map(|j| w[j].abs() / decel[j]).fold(0.0, f64::max);
            for j in 0..n {
                let d = if sync && left > 0.0 { w[j].abs() / left } else { decel[j] };
                let dv = (d * h).min(w[j].abs());
                q[j] += w[j] * h - 0.5 * w[j].signum() * dv * h;
                w[j] -= w[j].signum() * dv;
            }
        }
        t += h;
    }
    q
}

#[test]
fn the_forecast_follows_a_controller_that_stops_on_its_path_and_one_that_brakes_joint_by_joint() {
    use forecast::StopMode;
    let mut rng = Rng::new(11);
    for _ in 0..20 {
        let n = 4;
        let v: Vec<f64> = (0..n).map(|_| rng.range(-2.0, 2.0)).collect();
        let a: Vec<f64> = (0..n).map(|_| rng.range(-3.0, 3.0)).collect();
        let decel: Vec<f64> = (0..n).map(|_| rng.range(2.0, 8.0)).collect();
        let react = rng.range(0.0, 0.1);
        let mut brake = vec![0.0; n];
        let mut inflation = vec![0.0; 1];
        let plan = forecast::plan(&v, &a, &decel, &[1.0; 4], react, 0.01, 1000, &mut inflation);
        for (mode, sync) in [(StopMode::Synchronized, true), (StopMode::Independent, false)] {
            forecast::braking_decel(mode, &v, &a, &decel, react, &mut brake);
            assert!(brake.iter().zip(&decel).all(|(b, d)| *b > 0.0 && b <= d), "{brake:?} within {decel:?}");
            for k in [0, plan.intervals / 3, plan.intervals / 2, plan.intervals] {
                let t = plan.time(k);
                let truth = braked(&v, &a, &decel, react, sync, t);
                for j in 0..n {
                    let f = forecast::joint_at(0.0, v[j], a[j], brake[j], react, t);
                    assert!(
                        (f - truth[j]).abs() < 1e-4,
                        "{mode:?} joint {j} at {t}: forecast {f}, controller {}",
                        truth[j]
                    );
                }
            }
        }
        // Where they differ, a joint that could stop sooner goes farther on
        // the path: a forecast that assumed braking joint by joint would
        // fall short of a synchronised controller.
        let end_sync = braked(&v, &a, &decel, react, true, plan.horizon_s + 0.01);
        let end_own = braked(&v, &a, &decel, react, false, plan.horizon_s + 0.01);
        assert!((0..n).all(|j| end_sync[j].abs() >= end_own[j].abs() - 1e-6));
        assert!((0..n).any(|j| end_sync[j].abs() > end_own[j].abs() + 1e-3));
    }
}

/// Joint states of a joint at constant speed `v`, `hz` per second, each
/// position taken up to `lag_s` before its stamp (uniformly).
fn lagged(e: &mut Estimator, v: f64, hz: f64, lag_s: f64, seed: u64, n: usize) -> (f64, f64) {
    let mut rng = Rng::new(seed);
    let (mut worst_v, mut worst_a) = (0.0f64, 0.0f64);
    for k in 0..n {
        let stamp = 1.0 + k as f64 / hz;
        let taken = stamp - rng.range(0.0, lag_s);
        e.push(stamp, &[v * taken], None).unwrap();
        if let Ok(m) = e.motion() {
            worst_v = worst_v.max((m.v[0] - v).abs());
            worst_a = worst_a.max(m.a[0].abs());
        }
    }
    (worst_v, worst_a)
}

#[test]
fn a_fit_over_tens_of_milliseconds_tolerates_positions_that_lag_their_stamps() {
    // 0.5 rad/s, positions up to 1 ms older than their stamps.
    for hz in [100.0, 125.0, 250.0, 500.0, 1000.0] {
        let mut fit = Estimator::new(1, 1, false).with_fit_window(0.05);
        fit.set_accel_limits(&[5.0]);
        let (dv, da) = lagged(&mut fit, 0.5, hz, 0.001, 3, 2000);
        let mut five = Estimator::new(1, 1, false);
        five.set_accel_limits(&[5.0]);
        let (dv5, da5) = lagged(&mut five, 0.5, hz, 0.001, 3, 2000);
        println!(
            "{hz} Hz: fit worst |Δv| {dv:.4} rad/s, |a| {da:.3} rad/s²; five-point {dv5:.4} rad/s, {da5:.3} rad/s²"
        );
        assert!(dv < 0.1 * 0.5, "{hz} Hz: velocity off by {dv}");
        assert!(dv < dv5 / 5.0, "{hz} Hz: the fit is not much better than five-point differences");
        assert!(da < 2.0, "{hz} Hz: acceleration {da} from lag alone");
    }
    // Exact stamps: exact for motion of constant acceleration (no lag).
    let mut e = Estimator::new(1, 1, false).with_fit_window(0.05);
    let p = Poly([0.3, -0.4, 1.25, 0.0, 0.0]);
    for k in 0..100 {
        let t = k as f64 * 0.002;
        e.push(t, &[p.at(t)], None).unwrap();
    }
    let m = e.motion().unwrap();
    assert!((m.v[0] - p.d1(m.stamp_s)).abs() < 1e-9, "{} vs {}", m.v[0], p.d1(m.stamp_s));
    assert!((m.a[0] - 2.5).abs() < 1e-7, "{}", m.a[0]);
    // Accelerations beyond the joint's limit are reported at the limit.
    let mut e = Estimator::new(1, 1, false).with_fit_window(0.05);
    e.set_accel_limits(&[2.0]);
    for k in 0..100 {
        let t = k as f64 * 0.002;
        e.push(t, &[5.0 * t * t], None).unwrap();
    }
    assert_eq!(e.motion().unwrap().a[0], 2.0);
}

#[test]
fn a_fit_sees_a_joint_set_off_from_rest_at_once() {
    // At rest for 0.2 s, then off at 7 rad/s² from the stamp of the last
    // sample at rest. The fit's window still holds the rest; the estimate
    // must not lag the start (it is what a released robot does).
    let (a, dt, t_rest) = (7.0, 0.002, 0.2);
    let mut e = Estimator::new(2, 1, false).with_fit_window(0.05);
    e.set_accel_limits(&[10.0, 10.0]);
    let mut k = 0;
    let mut worst = 0.0f64;
    loop {
        let t = k as f64 * dt;
        let u = (t - t_rest).max(0.0);
        e.push(t, &[0.3 + 0.5 * a * u * u, -1.0], None).unwrap();
        k += 1;
        if t > t_rest + 0.03 {
            break;
        }
        let Ok(m) = e.motion() else { continue };
        // Joint 1 never moves: exactly still.
        assert_eq!((m.v[1], m.a[1]), (0.0, 0.0));
        if u > 0.0 {
            let (v_true, v) = (a * u, m.v[0]);
            assert!(v >= v_true - 1e-9, "at {u:.3} s after the start: {v} < {v_true}");
            assert!(m.a[0] >= a - 1e-6, "at {u:.3} s: acceleration {} < {a}", m.a[0]);
            worst = worst.max((v - v_true).abs());
        } else {
            assert_eq!(m.v[0], 0.0);
        }
    }
    assert!(worst < 1e-9, "a start from rest at constant acceleration is exact: {worst}");
    // Once the rest has left the window the fit alone stands (exact for
    // constant acceleration too).
    for _ in 0..40 {
        let t = k as f64 * dt;
        let u = t - t_rest;
        e.push(t, &[0.3 + 0.5 * a * u * u, -1.0], None).unwrap();
        k += 1;
    }
    let m = e.motion().unwrap();
    let u = m.stamp_s - t_rest;
    assert!((m.v[0] - a * u).abs() < 1e-6, "{} vs {}", m.v[0], a * u);
}

#[test]
fn a_fit_told_to_expect_a_change_follows_a_braking_joint_set_going_again() {
    // Braking at 6 rad/s² from −2 rad/s, then (released) speeding up
    // again the same way at 6 rad/s² from `t_k`. Over its whole window the
    // fit reads the joint as coasting for tens of milliseconds; told to
    // expect the change, it follows from half a window on.
    let (a, dt, t_k) = (6.0, 0.002, 0.2);
    let v0 = -2.0;
    let v_k = v0 + a * t_k;
    let v_true = |t: f64| if t < t_k { v0 + a * t } else { v_k - a * (t - t_k) };
    let q_true = |t: f64| {
        if t < t_k {
            v0 * t + 0.5 * a * t * t
        } else {
            v0 * t_k + 0.5 * a * t_k * t_k + v_k * (t - t_k) - 0.5 * a * (t - t_k) * (t - t_k)
        }
    };
    let (window, until) = (0.05, t_k + 0.08);
    let mut told = Estimator::new(1, 1, false).with_fit_window(window);
    let mut plain = Estimator::new(1, 1, false).with_fit_window(window);
    for e in [&mut told, &mut plain] {
        e.set_accel_limits(&[10.0]);
    }
    let mut lag_seen = 0.0f64;
    for k in 0..200 {
        let t = k as f64 * dt;
        for e in [&mut told, &mut plain] {
            e.push(t, &[q_true(t)], None).unwrap();
        }
        if (t - t_k).abs() < 1e-9 {
            told.expect_change(until);
        }
        let (Ok(m), Ok(p)) = (told.motion().map(|m| (m.v[0], m.a[0])), plain.motion().map(|m| (m.v[0], m.a[0]))) else {
            continue;
        };
        let u = t - t_k;
        if u >= NEWER + 1e-9 && t <= until {
            // The newer half of the window lies after the change: exact.
            assert!((m.0 - v_true(t)).abs() < 1e-6, "at {u:.3} s: {} vs {}", m.0, v_true(t));
            assert!((m.1 + a).abs() < 1e-5, "at {u:.3} s: acceleration {}", m.1);
            lag_seen = lag_seen.max(p.0 - v_true(t));
        }
        if u > 0.0 && u < NEWER {
            // Between: never slower than the whole window's fit.
            assert!(m.0 <= p.0 + 1e-12, "at {u:.3} s: {} slower than {}", m.0, p.0);
        }
        if t > until {
            // No change expected any more: the whole window again.
            assert_eq!(m, p, "at {t:.3} s");
        }
    }
    assert!(lag_seen > 0.05, "the whole window's fit must lag here for the test to mean anything: {lag_seen}");
}

/// The newer part of a 50 ms window, s.
const NEWER: f64 = 0.05 * forecast::NEWER_FRACTION;
