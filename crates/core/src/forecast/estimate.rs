//! The estimator: joint velocity and acceleration from the last joint
//! states (five-point backward differences, or a least-squares quadratic
//! over a time window), each sample checked as it arrives.

use super::*;

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
    /// The newest step moved along `v` at least half as far as `v` says
    /// it would over that step: a velocity the positions bear out, not one
    /// an estimate carries on after the motion ended (a fit's overshoot
    /// once a robot has come to rest).
    pub step_follows: bool,
}

/// Not enough samples yet to estimate motion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WarmingUp {
    /// Samples so far.
    pub have: usize,
    /// Samples needed.
    pub need: usize,
}

/// A joint's step between two joint states of at most this much (rad or m)
/// counts as standing still: a fitted estimate starts over from the
/// newest such step ([`Estimator::motion`]).
pub const REST_STEP: f64 = 1e-6;

/// Most samples a fitted estimate uses (the newest ones within its window).
pub const FIT_CAP: usize = 128;

/// Fewest samples a fitted estimate uses, whatever its window (at low
/// rates the window stretches to hold them).
pub const FIT_MIN: usize = 12;

/// While a change of motion is expected ([`Estimator::expect_change`]), a
/// fit is also made over this fraction of its window (the newest samples,
/// at least [`FIT_MIN`]): it follows a change of acceleration in about
/// this fraction of the time the whole window takes.
pub const NEWER_FRACTION: f64 = 0.5;

/// How many of the newest joint-state intervals [`Estimator::period`]
/// looks at.
pub const PERIOD_WINDOW: usize = 5;

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
    /// Up to this stamp the motion may change at any moment
    /// ([`Estimator::expect_change`]); −∞: not expected.
    change_until_s: f64,
    /// The fit over the newer part of the window ([`NEWER_FRACTION`]).
    newer_v: Vec<f64>,
    newer_a: Vec<f64>,
    /// `out_v` and `out_a` hold the estimate at this many samples (0: none),
    /// so a cycle with no new sample does not estimate again.
    estimated: usize,
    /// Per joint, the stamp and position of the newest sample it reached by
    /// a still step (at most [`REST_STEP`]); `-∞`: none since the reset.
    rest_stamp: Vec<f64>,
    rest_pos: Vec<f64>,
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
            change_until_s: f64::NEG_INFINITY,
            newer_v: vec![0.0; dof],
            newer_a: vec![0.0; dof],
            estimated: 0,
            rest_stamp: vec![f64::NEG_INFINITY; dof],
            rest_pos: vec![0.0; dof],
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
        self.rest_stamp.fill(f64::NEG_INFINITY);
        self.change_until_s = f64::NEG_INFINITY;
    }

    /// Tells the estimator that the motion may change at any moment up to
    /// the stamp `until_s` (the guard has just released the robot: its
    /// controller goes on from braking or rest, after its own latency).
    /// Until then a fitted estimate also fits the newer part of its window
    /// and takes, per joint, whichever is the more dangerous
    /// ([`NEWER_FRACTION`]); from then on, the whole window again.
    pub fn expect_change(&mut self, until_s: f64) {
        if until_s > self.change_until_s {
            self.change_until_s = until_s;
            self.estimated = 0;
        }
    }

    /// Samples accepted since the last reset.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Stamp of the newest sample.
    pub fn last_stamp(&self) -> Option<f64> {
        (self.count > 0).then(|| self.stamps[(self.count - 1) % self.cap])
    }

    /// The joint-state period to expect next, s: the second longest of
    /// the last [`PERIOD_WINDOW`] intervals (the longest when there are
    /// fewer than three). One late state (a hiccup of the controller or the
    /// network) does not make every forecast after it as if all states came
    /// that late; states that keep coming late, or in bursts, count. A next
    /// state later than this is what the watchdog is for.
    pub fn period(&self) -> Option<f64> {
        if self.count < 2 {
            return None;
        }
        let n = (self.count - 1).min(PERIOD_WINDOW).min(self.cap - 1).max(1);
        let (mut first, mut second) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
        for i in 0..n {
            let newer = self.count - 1 - i;
            let dt = self.stamps[newer % self.cap] - self.stamps[(newer - 1) % self.cap];
            if dt > first {
                (first, second) = (dt, first);
            } else if dt > second {
                second = dt;
            }
        }
        Some(if n < 3 { first } else { second })
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
    /// unchanged. The newest sample again (its stamp and every position the
    /// same: delivered twice) is taken and ignored; the same stamp with
    /// other positions is refused.
    // long: each refusal (length, NaN, order, duplicate, jump) checked in turn before the buffer changes
    pub fn push(&mut self, stamp_s: f64, q: &[f64], v: Option<&[f64]>) -> Result<(), SampleError> {
        if !stamp_s.is_finite() {
            return Err(SampleError::BadStamp { stamp_s });
        }
        if let Some(prev) = self.last_stamp() {
            if stamp_s < prev {
                return Err(SampleError::OutOfOrder { stamp_s, previous_s: prev });
            }
            if stamp_s - prev < MIN_STAMP_STEP_S {
                let p = self.slot(self.count - 1) * self.dof;
                let newest = &self.pos[p..p + self.dof];
                if stamp_s == prev
                    && newest.len() == q.len()
                    && newest.iter().zip(q).all(|(a, b)| a.to_bits() == b.to_bits())
                {
                    return Ok(());
                }
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
        if i > 0 {
            let p = self.slot(i - 1);
            for (j, &x) in q.iter().enumerate() {
                if (x - self.pos[p * d + j]).abs() <= REST_STEP {
                    self.rest_stamp[j] = stamp_s;
                    self.rest_pos[j] = x;
                }
            }
        }
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
                let watch = self.stamps[self.slot(self.count - 1)] <= self.change_until_s;
                if watch {
                    self.fit(NEWER_FRACTION * self.fit_window_s);
                    self.newer_v.copy_from_slice(&self.out_v);
                    self.newer_a.copy_from_slice(&self.out_a);
                }
                self.fit(self.fit_window_s);
                if watch {
                    self.newer();
                }
                self.onset();
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
        let p = self.slot(self.count - 2);
        let (mut along, mut want) = (0.0, 0.0);
        for (j, &v) in self.out_v.iter().enumerate() {
            along += (self.pos[s * d + j] - self.pos[p * d + j]) * v;
            want += v * v;
        }
        let step_follows = along >= 0.5 * want * (self.stamps[s] - self.stamps[p]);
        Ok(Motion {
            stamp_s: self.stamps[s],
            q: &self.pos[s * d..(s + 1) * d],
            v: &self.out_v,
            a: &self.out_a,
            step_follows,
        })
    }

    /// A fit over the whole window lags a change of acceleration by about
    /// half the window: a joint braking and then set going again reads as
    /// coasting for tens of milliseconds while it speeds up. While a change
    /// is expected, the fit over the newer part of the window stands
    /// instead, per joint, wherever it is the more dangerous: faster (or
    /// the other way), and then whichever acceleration speeds that velocity
    /// up the more. Where the motion kept one acceleration all through the
    /// window both fits agree (exactly, for exact stamps); the newer one's
    /// extra noise only ever lengthens the stopping path, and only for as
    /// long as the change is expected.
    fn newer(&mut self) {
        for j in 0..self.dof {
            let (vn, an) = (self.newer_v[j], self.newer_a[j]);
            more_dangerous(&mut self.out_v[j], &mut self.out_a[j], vn, an);
        }
    }

    /// A fit lags a joint that sets off from rest: over its window it still
    /// sees the samples at rest. Where the joint stood still (a step of at
    /// most [`REST_STEP`]) within the window and has moved since, its
    /// motion since that rest, taken as constant acceleration from it
    /// (`v = 2Δq/Δt`, `a = 2Δq/Δt²`, exact for such a start), stands
    /// instead of the fit wherever it is more dangerous
    /// ([`more_dangerous`]; `v` and `a` share a sign here). A joint in
    /// motion all through the window keeps the fit (noise in moving
    /// positions does not enter).
    fn onset(&mut self) {
        let d = self.dof;
        let s0 = self.slot(self.count - 1);
        let t0 = self.stamps[s0];
        for j in 0..d {
            // At rest right now, or no rest within the window: the fit.
            let (tr, qr) = (self.rest_stamp[j], self.rest_pos[j]);
            if tr >= t0 || t0 - tr > self.fit_window_s {
                continue;
            }
            let (dq, dt) = (self.pos[s0 * d + j] - qr, t0 - tr);
            if dq == 0.0 {
                continue;
            }
            let (v, a) = (2.0 * dq / dt, 2.0 * dq / (dt * dt));
            more_dangerous(&mut self.out_v[j], &mut self.out_a[j], v, a);
        }
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
    fn fit(&mut self, window_s: f64) {
        let d = self.dof;
        let newest = self.count - 1;
        let s0 = self.slot(newest);
        let t0 = self.stamps[s0];
        let avail = self.count.min(self.cap);
        let mut n = 0;
        while n < avail && (n < FIT_MIN || t0 - self.stamps[self.slot(newest - n)] <= window_s) {
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

/// Replaces an estimate `(v, a)` of one joint by another, `(vn, an)`,
/// wherever that is the more dangerous: its velocity where faster or the
/// other way, then whichever acceleration speeds the chosen velocity up
/// the more (the larger magnitude when it is 0). The velocity kept is
/// never slower, and the acceleration kept never brakes it harder, than
/// the first estimate's.
fn more_dangerous(v: &mut f64, a: &mut f64, vn: f64, an: f64) {
    if vn.abs() > v.abs() || vn * *v < 0.0 {
        *v = vn;
    }
    let harder = if *v == 0.0 { an.abs() > a.abs() } else { an * v.signum() > *a * v.signum() };
    if harder {
        *a = an;
    }
}

#[cfg(test)]
mod tests {
    use super::{Estimator, more_dangerous};
    use proptest::prelude::*;

    #[test]
    fn the_period_to_expect_ignores_one_late_state_and_not_two() {
        let mut e = Estimator::new(1, 3, false);
        assert_eq!(e.period(), None);
        let mut t = 0.0;
        let mut push = |e: &mut Estimator, dt: f64| {
            t += dt;
            e.push(t, &[0.0], None).unwrap();
        };
        push(&mut e, 0.0);
        push(&mut e, 0.01);
        push(&mut e, 0.1); // two intervals: the longer
        assert!((e.period().unwrap() - 0.1).abs() < 1e-9);
        for _ in 0..3 {
            push(&mut e, 0.01);
        }
        assert!((e.period().unwrap() - 0.01).abs() < 1e-9, "one late state in five: {:?}", e.period());
        push(&mut e, 0.08);
        assert!((e.period().unwrap() - 0.08).abs() < 1e-9, "two late states in five: {:?}", e.period());
        for _ in 0..5 {
            push(&mut e, 0.002);
        }
        assert!((e.period().unwrap() - 0.002).abs() < 1e-9);
    }

    fn pick(v: f64, a: f64, vn: f64, an: f64) -> (f64, f64) {
        let (mut v, mut a) = (v, a);
        more_dangerous(&mut v, &mut a, vn, an);
        (v, a)
    }

    #[test]
    fn the_faster_or_opposing_velocity_and_the_harder_acceleration_stand() {
        // Faster wins; braking loses to speeding up along the chosen velocity.
        assert_eq!(pick(0.2, -1.0, 0.3, 2.0), (0.3, 2.0));
        // Slower loses, but its acceleration speeds the kept velocity up more.
        assert_eq!(pick(0.3, -1.0, 0.2, 0.5), (0.3, 0.5));
        // The other way round wins even when slower; of two accelerations
        // that both brake it, the one braking it less stands.
        assert_eq!(pick(0.3, 1.0, -0.1, 2.0), (-0.1, 1.0));
        // At rest: the larger acceleration either way.
        assert_eq!(pick(0.0, 0.5, 0.0, -2.0), (0.0, -2.0));
        assert_eq!(pick(0.0, -3.0, 0.0, 2.0), (0.0, -3.0));
    }

    proptest! {
        /// For an onset estimate (velocity and acceleration of one sign)
        /// the rule is the one the onset estimate used before the two
        /// shared it: each replaced where larger or the other way.
        #[test]
        fn for_a_start_from_rest_the_rule_is_per_quantity(
            v in -3.0f64..3.0, a in -10.0f64..10.0, s in prop::sample::select(vec![-1.0f64, 1.0]),
            m in 0.001f64..3.0, k in 0.1f64..100.0,
        ) {
            let (vn, an) = (s * m, s * m * k);
            let ev = if vn.abs() > v.abs() || vn * v < 0.0 { vn } else { v };
            let ea = if an.abs() > a.abs() || an * a < 0.0 { an } else { a };
            prop_assert_eq!(pick(v, a, vn, an), (ev, ea));
        }
    }
}
