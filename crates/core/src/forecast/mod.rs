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
//!   longer multiply into the speed. A joint setting off from rest is
//!   estimated from that rest; after a release the guard tells the
//!   estimator to expect a change ([`Estimator::expect_change`]), and the
//!   fit over the newer half of the window stands where it is the more
//!   dangerous. Accelerations are bounded by the joints' limits
//!   ([`Estimator::set_accel_limits`]).
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

pub mod along;
pub mod calibrate;
mod estimate;
pub mod stopping;
pub mod track;

use crate::model::{JointKind, Robot, SphereModel};
pub use estimate::{Estimator, FIT_CAP, FIT_MIN, Motion, NEWER_FRACTION, WarmingUp, backward_weights};

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
    /// The stamp repeats the previous one (closer than 10 µs) with other
    /// positions (the same sample again is ignored, not refused).
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
