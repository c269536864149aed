//! Stopping models from recorded stops: [`measure_stops`] finds, per stop
//! command and joint, the speed and position at the command and the
//! distance and time to rest, and accounts for every stop and joint it
//! could not measure ([`StopTally`]); [`fit_joint`] fits a joint's
//! [`JointStopping`] to them; [`fit_constant`] the best single constant
//! deceleration, for comparison; [`evaluate`] scores either on other stops.
//!
//! The fit (method text claims 13–15 use a small neural network per
//! joint; this is a linear model in a few physical features, because it is
//! monotone and conservative by construction where a network is neither,
//! and fits the physics of a stop exactly where it holds):
//!
//! 1. Point model, weighted least squares on relative error: distance
//!    `T·v + v²·(Σ βₖ hₖ(v) + s·(g₁ sin q + g₂ cos q) + g₃ sin 2q +
//!    g₄ cos 2q)`, `hₖ` the hat functions of speed knots at quantiles of
//!    the recorded speeds (the second harmonic is the gravity load's
//!    second-order effect on `1/decel`, the same either way).
//! 2. Spread: `|residual| ≈ c₀ + c₁ v + c₂ v²`, coefficients kept ≥ 0.
//! 3. Bound: the residuals over the spread, their order statistic of rank
//!    `⌈(n+1)(1−α)⌉` (the normalised split-conformal quantile; the largest
//!    where `n` is too small for `α`), plus its distance to the order
//!    statistic one percent of `n` below it (the tail's spacing, once
//!    more: the quantile estimate's own uncertainty), or, where larger,
//!    the quantile `1 − α` of an exponential tail fitted to the top tenth
//!    of the residuals (their mean excess over the tenth's lower edge: a
//!    few hundred stops cannot hold a 1-in-2000 quantile among them),
//!    scales the spread on top of the point model.
//! 4. Monotone: the bound is checked positive and non-decreasing in speed
//!    on a grid of speeds, positions and both directions. Where the check
//!    fails, the speed-dependent gravity terms are replaced by their
//!    largest value over the covered speeds and the braking coefficients
//!    raised to their running maximum and above the gravity term: the
//!    bound is then monotone by construction at every position, and only
//!    longer.

mod measure;

pub use measure::{
    BEFORE_S, JointTally, MAX_BEFORE_S, MAX_STOP_S, MIN_BEFORE, MIN_SPEED, REST_S, StopTally, before_window_s,
    measure_stops,
};

use super::stopping::JointStopping;
use nalgebra::{DMatrix, DVector};

/// One joint in one recorded stop.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StopSample {
    /// Which stop (index into the commands given).
    pub stop: usize,
    /// The joint (`dof` order).
    pub joint: usize,
    /// Velocity at the command (signed), rad/s or m/s.
    pub w: f64,
    /// Position at the command.
    pub q: f64,
    /// Distance from the command to rest, along the motion.
    pub dist: f64,
    /// Time from the command to rest, s.
    pub time_s: f64,
}

/// What the fit needs and aims at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FitOptions {
    /// Speed knots (at least 2).
    pub knots: usize,
    /// The share of stops the bound may fall short of.
    pub miss_rate: f64,
    /// Stops needed per joint.
    pub min_stops: usize,
    /// The fastest recorded stop must be at least this many times the
    /// slowest.
    pub min_span_ratio: f64,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions { knots: 4, miss_rate: 0.0005, min_stops: 100, min_span_ratio: 3.0 }
    }
}

/// Why a joint's model could not be fitted.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum FitError {
    /// Too few stops of this joint.
    #[error("{got} recorded stops with this joint moving; at least {need} are needed")]
    TooFewStops {
        /// Stops found.
        got: usize,
        /// Stops needed.
        need: usize,
    },
    /// The recorded speeds span too little to fit speed dependence.
    #[error("the recorded stops cover speeds {lo:.3}..{hi:.3} only; the fastest must be at least {ratio}× the slowest")]
    NarrowSpeedRange {
        /// Slowest recorded speed.
        lo: f64,
        /// Fastest.
        hi: f64,
        /// The ratio needed.
        ratio: f64,
    },
    /// The least-squares problem has no finite solution.
    #[error("the fit did not converge to finite values")]
    Degenerate,
}

/// How a joint's fit came out.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FitSummary {
    /// Stops used.
    pub stops: usize,
    /// Speeds covered.
    pub speed_range: (f64, f64),
    /// Positions covered.
    pub position_range: (f64, f64),
    /// Rank of the quantile among `stops` (the largest when it equals it).
    pub rank: usize,
    /// Whether the monotone check failed and the coefficients were raised.
    pub raised: bool,
}

/// Fits joint `samples` (one joint's) as the module text says.
///
/// `rotational`: a revolute joint, whose gravity load varies with its
/// position; a prismatic joint's is taken as constant along its axis (the
/// model reads its position as 0).
// long: one fit's steps (bins, envelope, reaction, margins) in the order they depend on each other
pub fn fit_joint(
    samples: &[StopSample],
    rotational: bool,
    o: &FitOptions,
) -> Result<(JointStopping, FitSummary), FitError> {
    let n = samples.len();
    if n < o.min_stops.max(8) {
        return Err(FitError::TooFewStops { got: n, need: o.min_stops.max(8) });
    }
    let mut speeds: Vec<f64> = samples.iter().map(|s| s.w.abs()).collect();
    speeds.sort_by(f64::total_cmp);
    let (lo, hi) = (speeds[0], speeds[n - 1]);
    if hi < o.min_span_ratio * lo {
        return Err(FitError::NarrowSpeedRange { lo, hi, ratio: o.min_span_ratio });
    }
    let k = o.knots.max(2);
    let knots: Vec<f64> = (0..k).map(|i| speeds[(i * (n - 1)) / (k - 1)]).collect();
    let mut knots_dedup = knots.clone();
    knots_dedup.dedup_by(|a, b| *a - *b < 1e-9 * hi);
    let knots = knots_dedup;
    let kk = knots.len();
    let p = kk + 7;
    let mut m = JointStopping {
        reaction_s: 0.0,
        speeds: knots.clone(),
        braking: vec![0.0; kk],
        gravity: [0.0; 6],
        spread: [0.0; 3],
        quantile: 0.0,
        rotational,
    };
    // 1. The point model.
    let mut a = DMatrix::<f64>::zeros(n, p);
    let b = DVector::<f64>::from_element(n, 1.0);
    for (i, s) in samples.iter().enumerate() {
        let v = s.w.abs();
        let row = features(&knots, v, m.position(s.q), s.w.signum());
        for (c, x) in row.iter().take(p).enumerate() {
            a[(i, c)] = x / s.dist;
        }
    }
    let theta = solve(a, b).ok_or(FitError::Degenerate)?;
    m.reaction_s = theta[0];
    m.braking.copy_from_slice(&theta.as_slice()[1..=kk]);
    m.gravity = std::array::from_fn(|i| theta[kk + 1 + i]);
    // 2. The spread.
    let resid: Vec<f64> = samples.iter().map(|s| s.dist - m.point(s.w, s.q)).collect();
    m.spread = spread_fit(samples, &resid);
    // 3. The bound.
    let mut z: Vec<f64> = samples.iter().zip(&resid).map(|(s, r)| r / m.spread_at(s.w.abs())).collect();
    z.sort_by(f64::total_cmp);
    let rank = (((n + 1) as f64) * (1.0 - o.miss_rate)).ceil() as usize;
    let rank = rank.clamp(1, n);
    // One tail spacing beyond: the gap from the top percent of the
    // residuals to the quantile, added once more (the largest of n is
    // exceeded by one new stop in n + 1, and a bounded distribution's edge
    // lies beyond its largest sample).
    let spacing = z[rank - 1] - z[rank - 1 - (n / 100).max(1).min(rank - 1)];
    // Too few stops to hold the quantile among them (n + 1 < 1/α): the
    // tail above the top tenth taken as exponential, its mean excess from
    // their spacings, and read at 1 − α.
    let k = (n / 10).max(5).min(n - 1);
    let base = z[n - 1 - k];
    let excess = z[n - k..].iter().map(|x| x - base).sum::<f64>() / k as f64;
    let tail = base + excess * (k as f64 / ((n + 1) as f64 * o.miss_rate)).ln().max(0.0);
    m.quantile = (z[rank - 1] + spacing).max(tail);
    if !m.quantile.is_finite() || !m.reaction_s.is_finite() {
        return Err(FitError::Degenerate);
    }
    // 4. Monotone.
    let (qlo, qhi) = samples.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), s| (a.min(s.q), b.max(s.q)));
    let raised = !monotone(&m, lo, hi);
    if raised {
        // The speed-dependent gravity terms become their largest value over
        // the covered speeds, every gravity term then lies within ±g.
        let g = &mut m.gravity;
        let slope = g[4].hypot(g[5]) * hi;
        (g[4], g[5]) = (0.0, 0.0);
        let g = g[0].hypot(g[1]) + g[2].hypot(g[3]) + slope;
        let mut run = f64::NEG_INFINITY;
        for x in &mut m.braking {
            run = run.max(*x + slope);
            *x = run;
        }
        let low = m.braking[0] - g;
        if low < 0.0 {
            m.braking.iter_mut().for_each(|x| *x -= low);
        }
        m.reaction_s = m.reaction_s.max(0.0);
        m.quantile = m.quantile.max(0.0);
    }
    let summary = FitSummary { stops: n, speed_range: (lo, hi), position_range: (qlo, qhi), rank, raised };
    Ok((m, summary))
}

/// The point model's features at speed `v`, position `q`, direction `dir`:
/// `[v, v²·h₀(v) … v²·h_{K−1}(v), v²·dir·sin q, v²·dir·cos q, v²·sin 2q,
/// v²·cos 2q, v³·dir·sin q, v³·dir·cos q]`.
fn features(knots: &[f64], v: f64, q: f64, dir: f64) -> Vec<f64> {
    let k = knots.len();
    let mut row = vec![0.0; k + 7];
    row[0] = v;
    let i = knots.partition_point(|&x| x <= v);
    if i == 0 {
        row[1] = v * v;
    } else if i >= k {
        row[k] = v * v;
    } else {
        let u = (v - knots[i - 1]) / (knots[i] - knots[i - 1]);
        row[i] = v * v * (1.0 - u);
        row[i + 1] = v * v * u;
    }
    row[k + 1] = v * v * dir * q.sin();
    row[k + 2] = v * v * dir * q.cos();
    row[k + 3] = v * v * (2.0 * q).sin();
    row[k + 4] = v * v * (2.0 * q).cos();
    row[k + 5] = v * v * v * dir * q.sin();
    row[k + 6] = v * v * v * dir * q.cos();
    row
}

/// Least squares by SVD over unit-norm columns, singular values below
/// 1e-7 of the largest dropped: terms the data cannot tell apart (a
/// position that hardly varies) share the weight instead of cancelling
/// each other with large coefficients.
fn solve(mut a: DMatrix<f64>, b: DVector<f64>) -> Option<DVector<f64>> {
    let scale: Vec<f64> = a.column_iter().map(|c| c.norm()).map(|n| if n > 0.0 { n } else { 1.0 }).collect();
    for (mut c, s) in a.column_iter_mut().zip(&scale) {
        c /= *s;
    }
    let svd = a.svd(true, true);
    let top = svd.singular_values.iter().copied().fold(0.0, f64::max);
    let mut x = svd.solve(&b, top * 1e-7).ok()?;
    for (v, s) in x.iter_mut().zip(&scale) {
        *v /= *s;
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

/// `|resid| ≈ c₀ + c₁ v + c₂ v²` by least squares on relative error
/// (reweighted by the last fit, three rounds), a coefficient that comes
/// out negative dropped and the rest fitted again; never zero anywhere.
fn spread_fit(samples: &[StopSample], resid: &[f64]) -> [f64; 3] {
    let mut abs: Vec<f64> = resid.iter().map(|r| r.abs()).collect();
    abs.sort_by(f64::total_cmp);
    let floor = (abs[abs.len() / 2] * 1e-3).max(1e-12);
    let mut c = [abs[abs.len() / 2].max(floor), 0.0, 0.0];
    for _ in 0..4 {
        let weight: Vec<f64> =
            samples.iter().map(|s| 1.0 / (c[0] + c[1] * s.w.abs() + c[2] * s.w * s.w).max(floor)).collect();
        c = spread_round(samples, resid, &weight);
        c[0] = c[0].max(floor);
    }
    c
}

/// One weighted round of [`spread_fit`].
fn spread_round(samples: &[StopSample], resid: &[f64], weight: &[f64]) -> [f64; 3] {
    let mut active = [true; 3];
    let mut c = [0.0; 3];
    for _ in 0..3 {
        let cols: Vec<usize> = (0..3).filter(|&i| active[i]).collect();
        let mut a = DMatrix::<f64>::zeros(samples.len(), cols.len());
        let mut b = DVector::<f64>::zeros(samples.len());
        for (i, s) in samples.iter().enumerate() {
            let v = s.w.abs();
            for (c, &k) in cols.iter().enumerate() {
                a[(i, c)] = v.powi(k as i32) * weight[i];
            }
            b[i] = resid[i].abs() * weight[i];
        }
        c = [0.0; 3];
        let Some(x) = solve(a, b) else { break };
        for (c_i, &k) in cols.iter().enumerate() {
            c[k] = x[c_i];
        }
        let neg: Vec<usize> = (0..3).filter(|&i| c[i] < 0.0).collect();
        if neg.is_empty() || neg.len() == cols.len() {
            break;
        }
        neg.iter().for_each(|&i| active[i] = false);
    }
    c.map(|x| x.max(0.0))
}

/// Whether `m`'s bound is positive and non-decreasing in speed over
/// `lo..=hi`, both ways at 72 positions around the circle (a prismatic
/// joint's model does not vary with position).
fn monotone(m: &JointStopping, lo: f64, hi: f64) -> bool {
    (0..144).all(|i| {
        let (q, dir) = (std::f64::consts::PI * (i / 2) as f64 / 36.0, if i % 2 == 0 { 1.0 } else { -1.0 });
        let mut last = 0.0;
        (0..=128).all(|k| {
            let v = lo + (hi - lo) * k as f64 / 128.0;
            let d = m.bound(dir * v, q);
            let ok = d > 0.0 && d >= last;
            last = d;
            ok
        })
    })
}

/// The largest constant deceleration that, after `react_s`, bounds all
/// but a `miss_rate` share of `samples` (by the same rank as the model's
/// quantile).
pub fn fit_constant(samples: &[StopSample], react_s: f64, miss_rate: f64) -> f64 {
    let mut need: Vec<f64> =
        samples.iter().map(|s| super::stopping::decel_for_distance(s.w.abs(), react_s, s.dist)).collect();
    need.sort_by(f64::total_cmp);
    let n = need.len();
    if n == 0 {
        return f64::NAN;
    }
    let drop = (((n + 1) as f64) * miss_rate).floor() as usize;
    need[drop.saturating_sub(1).min(n - 1)]
}

/// The best pair of a constant reaction time and deceleration: for each
/// reaction time from 0 to 150 ms in 0.5 ms steps, [`fit_constant`]; the
/// pair whose median overestimate on `samples` is least. (reaction s,
/// deceleration).
pub fn best_constant(samples: &[StopSample], miss_rate: f64) -> (f64, f64) {
    let mut best = (f64::INFINITY, 0.0, f64::NAN);
    for k in 0..=300 {
        let r = k as f64 * 0.0005;
        let a = fit_constant(samples, r, miss_rate);
        if !(a.is_finite() && a > 0.0) {
            continue;
        }
        let over = evaluate(samples, |s| s.w.abs() * r + s.w * s.w / (2.0 * a)).median_over;
        if over < best.0 {
            best = (over, r, a);
        }
    }
    (best.1, best.2)
}

/// How a prediction scores on stops.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Score {
    /// Stops scored.
    pub stops: usize,
    /// Stops whose predicted distance is at least the actual.
    pub covered: usize,
    /// Median of (predicted − actual) / actual.
    pub median_over: f64,
    /// 90th percentile of the same.
    pub p90_over: f64,
}

impl Score {
    /// The covered share.
    pub fn coverage(&self) -> f64 {
        if self.stops == 0 { f64::NAN } else { self.covered as f64 / self.stops as f64 }
    }
}

/// Scores `predict(w, q)` (a stopping distance) on `samples`.
pub fn evaluate(samples: &[StopSample], predict: impl Fn(&StopSample) -> f64) -> Score {
    let mut over: Vec<f64> = Vec::with_capacity(samples.len());
    let mut covered = 0;
    for s in samples {
        let p = predict(s);
        covered += usize::from(p >= s.dist);
        over.push((p - s.dist) / s.dist);
    }
    over.sort_by(f64::total_cmp);
    let at = |f: f64| if over.is_empty() { f64::NAN } else { over[((over.len() - 1) as f64 * f).round() as usize] };
    Score { stops: samples.len(), covered, median_over: at(0.5), p90_over: at(0.9) }
}

#[cfg(test)]
mod tests;
