//! The joint-state estimator and the stopping path (`forecast`).

use proptest::prelude::*;
use workcell_guard::forecast::{self, Estimator, SampleError};
use workcell_guard::model::coverage::Rng;

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
