//! Stopping-time forecasts: from the last joint states to the configurations
//! a robot passes through if it were told to stop now.
//!
//! Method text: `stopping-time-forecast.txt` (claims 6–12).
//!
//! - [`Estimator`] keeps a ring buffer of one robot's joint states and
//!   estimates joint velocity with the five-point backward difference
//!   (25, −48, 36, −16, 3)/12Δt, and acceleration the same way from the
//!   velocity estimates. Real stamps jitter, so the weights are **derived
//!   from the actual stamps**: they are the derivative at the newest stamp of
//!   the degree-4 polynomial through the last five samples (Lagrange form).
//!   At uniform stamps they are exactly the method text's coefficients; at
//!   any stamps they are exact for polynomials of degree ≤ 4. A running
//!   average (window configurable, 1 = off) may follow. Reported velocities
//!   replace the position differences only where configured. With a fit
//!   window ([`Estimator::with_fit_window`], what the guard uses by
//!   default), a least-squares quadratic over the window replaces the
//!   differences: stamps that are off by a fraction of the sample period no
//!   longer multiply into the speed. Accelerations are bounded by the
//!   joints' limits ([`Estimator::set_accel_limits`]).
//! - Each sample is validated before it enters the buffer: a non-finite,
//!   repeated or older stamp, a wrong count or a non-finite value is refused
//!   with a [`SampleError`] and the buffer is left as it was.
//! - [`StopPlan`] and [`config_at`] give the stopping path: during the
//!   reaction time (plus the age of the newest sample) each joint keeps its
//!   estimated velocity and any estimated acceleration that speeds it up
//!   ([`reaction_accel`]), then decelerates (at its maximum, or
//!   synchronised with the slowest joint: [`braking_decel`], [`StopMode`])
//!   until it stands still, so joint `i` stops after
//!   `t_s = t_r + |v_i + γ_i t_r| / a_i` (the method text's
//!   `t_r + |v_i|/a_i` when γ = 0). Samples are spaced in time so that no
//!   point of any link moves more than the chosen step between samples,
//!   bounded with per-link levers (see [`link_levers`]); each link's
//!   spheres are inflated by half its own largest step, which covers every
//!   position between samples, wherever the sample cap binds or not.
//!
//! Nothing here allocates after construction.

use crate::model::{JointKind, Robot, SphereModel};

/// Samples in the backward-difference stencil.
pub const STENCIL: usize = 5;

/// Two stamps closer than this count as the same stamp, s.
pub const MIN_STAMP_STEP_S: f64 = 1e-5;

/// A joint state that was refused.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SampleError {
    /// The stamp is NaN or infinite.
    #[error("stamp {stamp_s} is not a finite time")]
    BadStamp {
        /// The stamp, s.
        stamp_s: f64,
    },
    /// The stamp repeats the previous one (closer than 10 µs).
    #[error("stamp {stamp_s} s repeats the previous stamp")]
    DuplicateStamp {
        /// The stamp, s.
        stamp_s: f64,
    },
    /// The stamp is older than the previous one.
    #[error("stamp {stamp_s} s goes backwards (previous {previous_s} s)")]
    OutOfOrder {
        /// The stamp, s.
        stamp_s: f64,
        /// The previous stamp, s.
        previous_s: f64,
    },
    /// The stamp lies ahead of the guard's clock by more than the watchdog.
    #[error("stamp {stamp_s} s is in the future (now {now_s} s)")]
    FutureStamp {
        /// The stamp, s.
        stamp_s: f64,
        /// The guard's time, s.
        now_s: f64,
    },
    /// Wrong number of positions.
    #[error("{got} positions for {expected} joints")]
    PositionCount {
        /// Joints of the robot.
        expected: usize,
        /// Positions given.
        got: usize,
    },
    /// Wrong number of velocities.
    #[error("{got} velocities for {expected} joints")]
    VelocityCount {
        /// Joints of the robot.
        expected: usize,
        /// Velocities given.
        got: usize,
    },
    /// A position is NaN or infinite.
    #[error("position of joint {joint} is {value}")]
    NonFinitePosition {
        /// Joint (position-vector index).
        joint: usize,
        /// The value.
        value: f64,
    },
    /// A velocity is NaN or infinite.
    #[error("velocity of joint {joint} is {value}")]
    NonFiniteVelocity {
        /// Joint (position-vector index).
        joint: usize,
        /// The value.
        value: f64,
    },
    /// Velocities are trusted for this robot but the sample has none.
    #[error("velocities are configured as trusted but the joint state has none")]
    MissingVelocity,
}

/// The estimator's view of a robot's motion at its newest sample.
#[derive(Clone, Copy, Debug)]
pub struct Motion<'a> {
    /// Stamp of the newest sample, s.
    pub stamp_s: f64,
    /// Positions at that stamp.
    pub q: &'a [f64],
    /// Velocity estimate.
    pub v: &'a [f64],
    /// Acceleration estimate.
    pub a: &'a [f64],
}

/// Not enough samples yet to estimate motion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WarmingUp {
    /// Samples so far.
    pub have: usize,
    /// Samples needed.
    pub need: usize,
}

/// Most samples a fitted estimate uses (the newest ones within its window).
pub const FIT_CAP: usize = 128;

/// Fewest samples a fitted estimate uses, whatever its window (at low
/// rates the window stretches to hold them).
pub const FIT_MIN: usize = 12;

/// Ring buffer of one robot's joint states with the derivative estimates.
#[derive(Clone, Debug)]
pub struct Estimator {
    dof: usize,
    window: usize,
    trust_velocity: bool,
    /// With a positive window, velocity and acceleration come from a
    /// least-squares quadratic fit over the samples of the last
    /// `fit_window_s` seconds, evaluated at the newest stamp; with 0, from
    /// the method text's five-point differences.
    fit_window_s: f64,
    /// Per joint, the largest acceleration estimate reported (the joint's
    /// physical limit).
    accel_limit: Vec<f64>,
    cap: usize,
    count: usize,
    stamps: Vec<f64>,
    pos: Vec<f64>,
    vel: Vec<f64>,
    acc: Vec<f64>,
    out_v: Vec<f64>,
    out_a: Vec<f64>,
    /// Scratch of the fit: three sums per joint.
    fit_r: Vec<f64>,
    /// `out_v` and `out_a` hold the estimate at this many samples (0: none),
    /// so a cycle with no new sample does not estimate again.
    estimated: usize,
}

/// Derivative weights at `t[0]` of the polynomial through
/// `(t[k], y[k]), k < 5` (newest first): `y'(t[0]) = Σ w[k]·y[k]`.
/// Uniform stamps `t[k] = t0 − kΔ` give (25, −48, 36, −16, 3)/(12Δ).
pub fn backward_weights(t: &[f64; STENCIL]) -> [f64; STENCIL] {
    let tau: [f64; STENCIL] = std::array::from_fn(|k| t[k] - t[0]);
    let mut w = [0.0; STENCIL];
    w[0] = tau[1..].iter().map(|&m| -1.0 / m).sum();
    for k in 1..STENCIL {
        let mut num = 1.0;
        let mut den = 1.0;
        for m in 0..STENCIL {
            if m != k {
                den *= tau[k] - tau[m];
                if m != 0 {
                    num *= -tau[m];
                }
            }
        }
        w[k] = num / den;
    }
    w
}

impl Estimator {
    /// An estimator for `dof` joints, running-average `window` (≥ 1), using
    /// reported velocities when `trust_velocity`.
    pub fn new(dof: usize, window: usize, trust_velocity: bool) -> Estimator {
        let window = window.max(1);
        let cap = STENCIL + window;
        Estimator {
            dof,
            window,
            trust_velocity,
            fit_window_s: 0.0,
            accel_limit: vec![f64::INFINITY; dof],
            cap,
            count: 0,
            stamps: vec![0.0; cap],
            pos: vec![0.0; cap * dof],
            vel: vec![0.0; cap * dof],
            acc: vec![0.0; cap * dof],
            out_v: vec![0.0; dof],
            out_a: vec![0.0; dof],
            fit_r: vec![0.0; 3 * dof],
            estimated: 0,
        }
    }

    /// Estimates from a least-squares quadratic fit over the samples of the
    /// last `window_s` seconds (at least [`FIT_MIN`], at most [`FIT_CAP`]),
    /// evaluated at the newest stamp, instead of five-point differences.
    ///
    /// Five-point differences are exact for polynomials when the stamps are
    /// right, and amplify any error in them: a position taken up to 1 ms
    /// before its stamp, at 1 kHz, can read as ten times the true speed. A
    /// fit over tens of milliseconds averages that error out (its noise
    /// falls as the window and the number of samples grow), and, evaluated
    /// at the newest stamp rather than at the window's middle, it has no
    /// lag for motion of constant acceleration: the running average's delay
    /// is accounted for by construction. Forgets every sample. `window_s`
    /// of 0 goes back to five-point differences.
    pub fn with_fit_window(mut self, window_s: f64) -> Estimator {
        let window_s = if window_s.is_finite() { window_s.max(0.0) } else { 0.0 };
        self.fit_window_s = window_s;
        self.cap = if window_s > 0.0 { FIT_CAP } else { STENCIL + self.window };
        self.count = 0;
        self.estimated = 0;
        self.stamps = vec![0.0; self.cap];
        self.pos = vec![0.0; self.cap * self.dof];
        self.vel = vec![0.0; self.cap * self.dof];
        self.acc = vec![0.0; self.cap * self.dof];
        self
    }

    /// Bounds the acceleration estimates (rad/s² or m/s² per joint): a
    /// joint cannot speed up faster than its drive allows, so a larger
    /// estimate is noise (a jittered stamp, a sample dropped) and is
    /// reported at the limit. Extra entries are ignored; missing ones stay
    /// unbounded.
    pub fn set_accel_limits(&mut self, limits: &[f64]) {
        for (l, &x) in self.accel_limit.iter_mut().zip(limits) {
            *l = if x > 0.0 { x } else { f64::INFINITY };
        }
        self.estimated = 0;
    }

    /// Forgets every sample.
    pub fn reset(&mut self) {
        self.count = 0;
        self.estimated = 0;
    }

    /// Samples accepted since the last reset.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Stamp of the newest sample.
    pub fn last_stamp(&self) -> Option<f64> {
        (self.count > 0).then(|| self.stamps[(self.count - 1) % self.cap])
    }

    /// Positions of the newest sample.
    pub fn last_positions(&self) -> Option<&[f64]> {
        (self.count > 0).then(|| {
            let s = self.slot(self.count - 1);
            &self.pos[s * self.dof..(s + 1) * self.dof]
        })
    }

    /// Samples needed before [`motion`](Self::motion) answers.
    pub fn needed(&self) -> usize {
        if self.fit_window_s > 0.0 {
            // At least this many, and a whole window of them (`motion`).
            return FIT_MIN;
        }
        // Velocities at `window` samples, each from STENCIL positions (or
        // reported); accelerations from STENCIL velocities, `window` of them.
        let first_v = if self.trust_velocity { 0 } else { STENCIL - 1 };
        first_v + STENCIL - 1 + self.window
    }

    fn slot(&self, i: usize) -> usize {
        i % self.cap
    }

    /// Validates a sample and adds it. A refused sample leaves the buffer
    /// unchanged.
    pub fn push(&mut self, stamp_s: f64, q: &[f64], v: Option<&[f64]>) -> Result<(), SampleError> {
        if !stamp_s.is_finite() {
            return Err(SampleError::BadStamp { stamp_s });
        }
        if let Some(prev) = self.last_stamp() {
            if stamp_s < prev {
                return Err(SampleError::OutOfOrder { stamp_s, previous_s: prev });
            }
            if stamp_s - prev < MIN_STAMP_STEP_S {
                return Err(SampleError::DuplicateStamp { stamp_s });
            }
        }
        if q.len() != self.dof {
            return Err(SampleError::PositionCount { expected: self.dof, got: q.len() });
        }
        if let Some((joint, &value)) = q.iter().enumerate().find(|(_, x)| !x.is_finite()) {
            return Err(SampleError::NonFinitePosition { joint, value });
        }
        if let Some(v) = v {
            if v.len() != self.dof {
                return Err(SampleError::VelocityCount { expected: self.dof, got: v.len() });
            }
            if let Some((joint, &value)) = v.iter().enumerate().find(|(_, x)| !x.is_finite()) {
                return Err(SampleError::NonFiniteVelocity { joint, value });
            }
        }
        let reported = match (self.trust_velocity, v) {
            (true, None) => return Err(SampleError::MissingVelocity),
            (true, Some(v)) => Some(v),
            (false, _) => None,
        };

        let i = self.count;
        let s = self.slot(i);
        let d = self.dof;
        self.stamps[s] = stamp_s;
        self.pos[s * d..(s + 1) * d].copy_from_slice(q);
        self.count += 1;
        if self.fit_window_s > 0.0 {
            if let Some(rv) = reported {
                self.vel[s * d..(s + 1) * d].copy_from_slice(rv);
            }
            return Ok(());
        }

        let weights =
            |me: &Self| -> [f64; STENCIL] { backward_weights(&std::array::from_fn(|k| me.stamps[me.slot(i - k)])) };
        // Velocity at sample i.
        let have_v = if let Some(rv) = reported {
            self.vel[s * d..(s + 1) * d].copy_from_slice(rv);
            true
        } else if i + 1 >= STENCIL {
            let w = weights(self);
            // The weights sum to zero: differences from the newest sample
            // give the same value with less cancellation, and exactly zero
            // for a joint holding still.
            for j in 0..d {
                let q0 = self.pos[s * d + j];
                self.vel[s * d + j] = (1..STENCIL).map(|k| w[k] * (self.pos[self.slot(i - k) * d + j] - q0)).sum();
            }
            true
        } else {
            false
        };
        // Acceleration at sample i, from the last STENCIL velocities.
        let first_v = if self.trust_velocity { 0 } else { STENCIL - 1 };
        if have_v && i >= first_v + STENCIL - 1 {
            let w = weights(self);
            for j in 0..d {
                let v0 = self.vel[s * d + j];
                self.acc[s * d + j] = (1..STENCIL).map(|k| w[k] * (self.vel[self.slot(i - k) * d + j] - v0)).sum();
            }
        }
        Ok(())
    }

    /// Positions, filtered velocity and acceleration at the newest sample.
    pub fn motion(&mut self) -> Result<Motion<'_>, WarmingUp> {
        let need = self.needed();
        if self.count < need {
            return Err(WarmingUp { have: self.count, need });
        }
        if self.fit_window_s > 0.0 && self.count < self.cap {
            // A fit needs its whole window: over a shorter span it is as
            // noisy as the differences it replaces.
            let first = self.stamps[self.slot(0)];
            let span = self.stamps[self.slot(self.count - 1)] - first;
            if span < self.fit_window_s {
                let per = span / (self.count - 1) as f64;
                let need = (self.fit_window_s / per).ceil() as usize + 1;
                return Err(WarmingUp { have: self.count, need: need.clamp(self.count + 1, self.cap) });
            }
        }
        if self.estimated != self.count {
            if self.fit_window_s > 0.0 {
                self.fit();
            } else {
                self.differences();
            }
            for (a, &l) in self.out_a.iter_mut().zip(&self.accel_limit) {
                *a = a.clamp(-l, l);
            }
            self.estimated = self.count;
        }
        let d = self.dof;
        let s = self.slot(self.count - 1);
        Ok(Motion { stamp_s: self.stamps[s], q: &self.pos[s * d..(s + 1) * d], v: &self.out_v, a: &self.out_a })
    }

    /// The running average of the five-point estimates into `out_v`, `out_a`.
    fn differences(&mut self) {
        let d = self.dof;
        let newest = self.count - 1;
        let inv = 1.0 / self.window as f64;
        for j in 0..d {
            let (mut sv, mut sa) = (0.0, 0.0);
            for k in 0..self.window {
                let s = self.slot(newest - k);
                sv += self.vel[s * d + j];
                sa += self.acc[s * d + j];
            }
            self.out_v[j] = sv * inv;
            self.out_a[j] = sa * inv;
        }
    }

    /// `Σ y_k·u_k^p` for p = 0, 1, 2 and every joint into `fit_r` (at
    /// `3·j + p`), over the newest `n` samples of `values` (positions, or
    /// velocities when `velocities`), with `y_k` the difference from the
    /// newest sample and `u_k` the time from the newest stamp over `scale`.
    /// One pass over the samples, the joints inner: each sample's row is
    /// contiguous.
    fn moments(&mut self, velocities: bool, n: usize, scale: f64) {
        let d = self.dof;
        let values = if velocities { &self.vel } else { &self.pos };
        let newest = self.count - 1;
        let s0 = newest % self.cap;
        let t0 = self.stamps[s0];
        let r = &mut self.fit_r;
        r.fill(0.0);
        let row0 = &values[s0 * d..(s0 + 1) * d];
        for k in 1..n {
            let sk = (newest - k) % self.cap;
            let u = (self.stamps[sk] - t0) / scale;
            let uu = u * u;
            for (j, (&x, &x0)) in values[sk * d..(sk + 1) * d].iter().zip(row0).enumerate() {
                let y = x - x0;
                r[3 * j] += y;
                r[3 * j + 1] += y * u;
                r[3 * j + 2] += y * uu;
            }
        }
    }

    /// The least-squares fit over the window into `out_v`, `out_a`:
    /// `q(τ) ≈ c0 + c1·τ + c2·τ²` with τ the time from the newest stamp,
    /// so `v = c1`, `a = 2·c2`; with reported velocities, `v` is the newest
    /// reported and `a` the slope of a line through the reported ones.
    /// Differences from the newest sample keep a joint holding still at
    /// exactly zero. No allocation.
    fn fit(&mut self) {
        let d = self.dof;
        let newest = self.count - 1;
        let s0 = self.slot(newest);
        let t0 = self.stamps[s0];
        let avail = self.count.min(self.cap);
        let mut n = 0;
        while n < avail && (n < FIT_MIN || t0 - self.stamps[self.slot(newest - n)] <= self.fit_window_s) {
            n += 1;
        }
        // τ scaled to about −1..0 for conditioning.
        let scale = (t0 - self.stamps[self.slot(newest + 1 - n)]).max(MIN_STAMP_STEP_S);
        let mut m = [0.0f64; 5]; // Σ u^p
        for k in 0..n {
            let u = (self.stamps[self.slot(newest - k)] - t0) / scale;
            let mut p = 1.0;
            for x in &mut m {
                *x += p;
                p *= u;
            }
        }
        self.moments(self.trust_velocity, n, scale);
        let r = &self.fit_r;
        if self.trust_velocity {
            // v(u) ≈ b0 + b1·u through the reported velocities.
            let det = m[0] * m[2] - m[1] * m[1];
            for j in 0..d {
                self.out_v[j] = self.vel[s0 * d + j];
                let (r0, r1) = (r[3 * j], r[3 * j + 1]);
                self.out_a[j] = if det > 0.0 { (m[0] * r1 - m[1] * r0) / det / scale } else { 0.0 };
            }
            return;
        }
        // Normal equations [[m0 m1 m2] [m1 m2 m3] [m2 m3 m4]] c = r, by the
        // adjugate: only c1 and c2 are wanted.
        let (a, b, c, e, f, i) = (m[0], m[1], m[2], m[3], m[4], m[2]);
        // Symmetric: [[a b c] [b i e] [c e f]].
        let c00 = i * f - e * e;
        let c01 = c * e - b * f;
        let c02 = b * e - c * i;
        let c11 = a * f - c * c;
        let c12 = b * c - a * e;
        let c22 = a * i - b * b;
        let det = a * c00 + b * c01 + c * c02;
        for j in 0..d {
            let (r0, r1, r2) = (r[3 * j], r[3 * j + 1], r[3 * j + 2]);
            if det > 0.0 {
                let c1 = (c01 * r0 + c11 * r1 + c12 * r2) / det;
                let c2 = (c02 * r0 + c12 * r1 + c22 * r2) / det;
                self.out_v[j] = c1 / scale;
                self.out_a[j] = 2.0 * c2 / (scale * scale);
            } else {
                self.out_v[j] = 0.0;
                self.out_a[j] = 0.0;
            }
        }
    }
}

/// Per link and actuated joint, an upper bound of how fast any point of
/// that link's spheres moves per unit of joint speed (m per rad, or m per
/// m), flat at `link * dof + joint`.
///
/// For a rotational joint above the link, a point moves at |ω|·(its
/// distance to the axis), and that distance is at most the chain of origin
/// translations from the joint to the link plus the sphere's centre offset
/// and radius (rotations keep lengths), plus the travel of any prismatic
/// joint on the way. A prismatic joint moves every point below it at its
/// own speed. Mimic joints add `|multiplier|` times their own lever to
/// their source. Joints not above the link do not move it.
pub fn link_levers(robot: &Robot, spheres: &SphereModel) -> Vec<f64> {
    let n = robot.links.len();
    let dof = robot.dof();
    let own: Vec<f64> = spheres
        .links
        .iter()
        .map(|l| l.fine.iter().map(|s| s.center.coords.norm() + s.radius).fold(0.0, f64::max))
        .collect();
    let mut lever = vec![0.0; n * dof];
    for l in 0..n {
        // Walk up from l, accumulating the chain length below each joint.
        let mut below = own[l];
        let mut cur = l;
        while let Some(ji) = robot.links[cur].parent_joint {
            let j = &robot.joints[ji];
            let own_lever = match j.kind {
                JointKind::Fixed => None,
                JointKind::Prismatic => Some(1.0),
                JointKind::Revolute | JointKind::Continuous => Some(below),
            };
            if let Some(lv) = own_lever {
                if let Some(d) = j.dof {
                    lever[l * dof + d] += lv;
                } else if let Some(m) = j.mimic {
                    lever[l * dof + m.dof] += m.multiplier.abs() * lv;
                }
            }
            below += j.origin.trans.norm();
            if j.kind == JointKind::Prismatic {
                below += j.limits.map_or(f64::INFINITY, |lim| lim.lower.abs().max(lim.upper.abs()));
            }
            cur = j.parent;
        }
    }
    lever
}

/// How one robot's stopping path is sampled this cycle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StopPlan {
    /// Reaction phase: reaction time plus the age of the newest sample, s.
    pub react_s: f64,
    /// Time until every joint stands still, from the newest stamp, s.
    pub horizon_s: f64,
    /// Intervals along the path (configurations checked: `intervals + 1`).
    pub intervals: usize,
    /// Upper bound of any sphere point's travel over the whole path, m.
    pub travel_m: f64,
    /// The largest inflation of any link (half of its largest travel
    /// between two samples), m.
    pub inflation_m: f64,
}

impl StopPlan {
    /// A robot standing still at its newest sample.
    pub const STILL: StopPlan =
        StopPlan { react_s: 0.0, horizon_s: 0.0, intervals: 0, travel_m: 0.0, inflation_m: 0.0 };

    /// Time of sample `k` after the newest stamp, s.
    pub fn time(&self, k: usize) -> f64 {
        if self.intervals == 0 { 0.0 } else { self.horizon_s * k as f64 / self.intervals as f64 }
    }
}

/// Plans the stopping path: `v`, `a` the estimates, `decel` the maximum
/// decelerations, `lever` from [`link_levers`], `react_s` the reaction
/// phase, `step_m` the largest travel wanted between samples, at most
/// `max_intervals`. Writes each link's inflation (half its largest travel
/// between two samples) into `link_inflation`.
#[allow(clippy::too_many_arguments)]
pub fn plan(
    v: &[f64],
    a: &[f64],
    decel: &[f64],
    lever: &[f64],
    react_s: f64,
    step_m: f64,
    max_intervals: usize,
    link_inflation: &mut [f64],
) -> StopPlan {
    let dof = v.len();
    let mut horizon = react_s;
    for j in 0..dof {
        let vr = v[j] + reaction_accel(v[j], a[j]) * react_s;
        horizon = horizon.max(react_s + vr.abs() / decel[j]);
    }
    // Per link, a bound of its points' speed (|v(t)| is largest at an end
    // of each phase).
    let mut fastest = 0.0f64;
    for (l, e) in link_inflation.iter_mut().enumerate() {
        let mut s = 0.0;
        for j in 0..dof {
            let vr = v[j] + reaction_accel(v[j], a[j]) * react_s;
            s += lever[l * dof + j] * v[j].abs().max(vr.abs());
        }
        *e = s;
        fastest = fastest.max(s);
    }
    let travel = fastest * horizon;
    let intervals = if travel <= 0.0 {
        0
    } else if step_m > 0.0 {
        ((travel / step_m).ceil() as usize).clamp(1, max_intervals.max(1))
    } else {
        max_intervals.max(1)
    };
    let dt = if intervals == 0 { 0.0 } else { horizon / intervals as f64 };
    for e in link_inflation.iter_mut() {
        *e *= dt / 2.0;
    }
    let inflation = if intervals == 0 { 0.0 } else { travel / intervals as f64 / 2.0 };
    StopPlan { react_s, horizon_s: horizon, intervals, travel_m: travel, inflation_m: inflation }
}

/// How a robot's controller brakes when told to stop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StopMode {
    /// On the path: every joint decelerates so that all stand still
    /// together, when the slowest can (joint_trajectory_controller's hold,
    /// category 1 and 2 stops). A joint that could stop sooner travels
    /// `v·T/2`, farther than at its own maximum. The default.
    #[default]
    Synchronized,
    /// Each joint brakes at its own maximum deceleration (off the path).
    Independent,
}

/// The deceleration each joint brakes at after the reaction phase `react_s`
/// under `mode`, into `out`: its maximum `decel` when braking on its own;
/// synchronised, `|v_r| / T` with `T` the longest of the joints' braking
/// times `|v_r| / decel`, so that all stop together (a joint at rest keeps
/// its maximum). With these, [`joint_at`] follows either way of stopping.
pub fn braking_decel(mode: StopMode, v: &[f64], a: &[f64], decel: &[f64], react_s: f64, out: &mut [f64]) {
    out.copy_from_slice(decel);
    if mode == StopMode::Independent {
        return;
    }
    let vr = |j: usize| (v[j] + reaction_accel(v[j], a[j]) * react_s).abs();
    let t = (0..out.len()).map(|j| vr(j) / decel[j]).fold(0.0, f64::max);
    if t > 0.0 {
        for (j, o) in out.iter_mut().enumerate() {
            let d = vr(j) / t;
            if d > 0.0 {
                *o = d.min(decel[j]);
            }
        }
    }
}

/// The acceleration assumed during the reaction phase: the estimate where
/// it speeds the joint up, zero where it would slow it down. A controller
/// may end a deceleration at any moment (a new goal, a blend), so a
/// forecast never counts on one it has not been told to make.
#[inline]
pub fn reaction_accel(v: f64, a: f64) -> f64 {
    if v * a < 0.0 { 0.0 } else { a }
}

/// Position of one joint `t` seconds after the newest stamp on its stopping
/// path: constant acceleration `a` for `react_s`, then `decel` until still.
#[inline]
pub fn joint_at(q0: f64, v: f64, a: f64, decel: f64, react_s: f64, t: f64) -> f64 {
    let a = reaction_accel(v, a);
    if t <= react_s {
        return q0 + v * t + 0.5 * a * t * t;
    }
    let qr = q0 + v * react_s + 0.5 * a * react_s * react_s;
    let vr = v + a * react_s;
    let tau = (t - react_s).min(vr.abs() / decel);
    qr + vr * tau - 0.5 * vr.signum() * decel * tau * tau
}

/// Writes the configuration `t` seconds along the stopping path into `out`
/// (`decel` per joint as [`braking_decel`] gives it).
pub fn config_at(m: &Motion<'_>, decel: &[f64], react_s: f64, t: f64, out: &mut [f64]) {
    for j in 0..out.len() {
        out[j] = joint_at(m.q[j], m.v[j], m.a[j], decel[j], react_s, t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_stamps_give_the_method_texts_coefficients() {
        let dt = 0.002;
        let w = backward_weights(&std::array::from_fn(|k| 10.0 - k as f64 * dt));
        let want = [25.0, -48.0, 36.0, -16.0, 3.0];
        for k in 0..STENCIL {
            assert!((w[k] * 12.0 * dt - want[k]).abs() < 1e-9, "{k}: {}", w[k] * 12.0 * dt);
        }
    }

    #[test]
    fn a_joint_decelerates_to_rest_and_stays() {
        let (q0, v, a, dec, tr) = (0.0, 2.0, 0.0, 4.0, 0.1);
        let ts = tr + v / dec;
        let end = joint_at(q0, v, a, dec, tr, ts);
        assert!((end - (v * tr + v * v / (2.0 * dec))).abs() < 1e-12);
        assert_eq!(joint_at(q0, v, a, dec, tr, ts + 5.0), end);
        let mut e = [0.0];
        let p = plan(&[v], &[a], &[dec], &[1.0], tr, 0.01, 1000, &mut e);
        assert_eq!(e[0], p.inflation_m);
        assert!((p.horizon_s - ts).abs() < 1e-12);
        assert!((p.travel_m - v * ts).abs() < 1e-12);
        assert!(p.inflation_m <= 0.005 + 1e-12);
    }
}
