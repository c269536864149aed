//! Learned stopping behaviour (method text claims 13–15): per joint, the
//! stopping distance as a function of the speed and position at the stop
//! command, fitted to recorded stops ([`super::calibrate`]) as a
//! conservative upper bound.
//!
//! The model of joint `j` at speed `v = |ω|`, position `q` and direction
//! `s = sign ω`:
//!
//! ```text
//! point(v, q, s) = T·v + v²·(k(v) + G(v, q, s))
//! G(v, q, s)     = s·((g₁ + g₅v) sin q + (g₂ + g₆v) cos q) + g₃ sin 2q + g₄ cos 2q
//! bound(v, q, s) = point(v, q, s) + z*·σ(v),   σ(v) = c₀ + c₁ v + c₂ v²
//! ```
//!
//! `T` is the joint's reaction time, `k(v)` (piecewise linear over speed
//! knots) is its braking distance per v², `1/(2·decel)`, whose dependence on
//! speed the knots carry; the sine and cosine terms are a gravity load on
//! the joint, which helps or hinders braking with the direction of motion.
//! `σ(v)` is the spread of the residuals at that speed and `z*` the upper
//! quantile of the residuals in units of `σ` (normalised split-conformal
//! bound). The bound is checked non-decreasing in speed at every position
//! when fitted ([`super::calibrate`]).
//!
//! The guard turns the bound into what its forecasts use, a reaction
//! time for the robot and a deceleration per joint for this cycle
//! ([`StoppingModel::decel_for`]): the deceleration that makes the
//! forecast's path from speed `v` exactly as long as the bound. Outside
//! the speeds the recordings covered the model is not used: the joint's
//! configured deceleration is, and the guard says so.

/// One joint's learned stopping model.
#[derive(Clone, Debug, PartialEq)]
pub struct JointStopping {
    /// Reaction time of the point model, s.
    pub reaction_s: f64,
    /// Speed knots, ascending (rad/s or m/s); the first and the last are
    /// the range the recordings covered.
    pub speeds: Vec<f64>,
    /// Braking distance per v² at each knot, s²·(rad or m)⁻¹·(rad or m).
    pub braking: Vec<f64>,
    /// Gravity load on the braking distance per v²: `[sin q, cos q]`
    /// coefficients, times the direction of motion; `[sin 2q, cos 2q]`
    /// (its second-order effect, either way); `[sin q, cos q]` times the
    /// direction and the speed (a load weighs more where braking is
    /// weaker, and that varies with speed).
    pub gravity: [f64; 6],
    /// Residual spread `c₀ + c₁ v + c₂ v²`, every coefficient ≥ 0.
    pub spread: [f64; 3],
    /// Upper quantile of the normalised residuals.
    pub quantile: f64,
    /// A revolute joint: the gravity terms vary with its position. For a
    /// prismatic joint they read the position as 0 (a load constant along
    /// its axis, by direction of motion).
    pub rotational: bool,
}

/// How the forecast's figures for one joint came about this cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The learned model.
    Learned,
    /// The configured deceleration: the joint has no learned model, or
    /// stands still, or moves slower than the slowest recorded stop.
    Configured,
    /// The configured deceleration because the joint moves faster than
    /// any recorded stop: the model is not extrapolated.
    BeyondRange,
}

impl JointStopping {
    /// The speed range covered, (lowest, highest).
    pub fn range(&self) -> (f64, f64) {
        (self.speeds.first().copied().unwrap_or(0.0), self.speeds.last().copied().unwrap_or(0.0))
    }

    /// Whether `speed` lies in the covered range.
    pub fn covers(&self, speed: f64) -> bool {
        let (lo, hi) = self.range();
        speed >= lo && speed <= hi
    }

    /// `k(v)`: the braking distance per v² at speed `v`, held constant
    /// beyond the end knots.
    pub fn braking_at(&self, v: f64) -> f64 {
        let (s, b) = (&self.speeds, &self.braking);
        match s.iter().position(|&x| x > v) {
            None => b.last().copied().unwrap_or(0.0),
            Some(0) => b[0],
            Some(i) => {
                let u = (v - s[i - 1]) / (s[i] - s[i - 1]);
                b[i - 1] + u * (b[i] - b[i - 1])
            }
        }
    }

    /// The position the gravity terms read: `q`, or 0 for a prismatic joint.
    pub fn position(&self, q: f64) -> f64 {
        if self.rotational { q } else { 0.0 }
    }

    /// The gravity term at speed `v`, position `q`, moving in direction
    /// `dir` (±1).
    pub fn gravity_at(&self, v: f64, q: f64, dir: f64) -> f64 {
        let q = self.position(q);
        let g = &self.gravity;
        let (s, c) = q.sin_cos();
        dir * ((g[0] + v * g[4]) * s + (g[1] + v * g[5]) * c) + g[2] * (2.0 * q).sin() + g[3] * (2.0 * q).cos()
    }

    /// The residual spread at speed `v`.
    pub fn spread_at(&self, v: f64) -> f64 {
        let [c0, c1, c2] = self.spread;
        c0 + c1 * v + c2 * v * v
    }

    /// The point model's stopping distance from velocity `w` (signed) at
    /// position `q`, from the stop command.
    pub fn point(&self, w: f64, q: f64) -> f64 {
        let v = w.abs();
        self.reaction_s * v + v * v * (self.braking_at(v) + self.gravity_at(v, q, w.signum()))
    }

    /// The conservative stopping distance (the bound) from velocity `w` at
    /// position `q`, from the stop command.
    pub fn bound(&self, w: f64, q: f64) -> f64 {
        self.point(w, q) + self.quantile * self.spread_at(w.abs())
    }
}

/// A manipulator's learned stopping models.
#[derive(Clone, Debug, PartialEq)]
pub struct StoppingModel {
    /// Per actuated joint (`dof` order), its model, if it was calibrated.
    pub joints: Vec<Option<JointStopping>>,
}

impl StoppingModel {
    /// The robot's reaction time under the model: the shortest of its
    /// joints' (each joint's deceleration takes up the rest of its own
    /// bound), s; `None` without a calibrated joint.
    pub fn reaction_s(&self) -> Option<f64> {
        self.joints.iter().flatten().map(|j| j.reaction_s.max(0.0)).reduce(f64::min)
    }

    /// The deceleration joint `j` brakes at in a forecast from velocity `w`
    /// at position `q` whose reaction phase lasts `react_s` (the robot's
    /// model reaction time, [`Self::reaction_s`]), such that the forecast's
    /// stopping distance equals the model's bound; `configured` (with its
    /// reaction time `configured_react_s`) where the model does not apply.
    /// A joint without a model keeps the distance its configured figures
    /// give.
    pub fn decel_for(
        &self,
        j: usize,
        w: f64,
        q: f64,
        react_s: f64,
        configured: f64,
        configured_react_s: f64,
    ) -> (f64, Source) {
        let v = w.abs();
        // The configured distance, kept when the robot reacts sooner under
        // the model than configured.
        let configured_dist = v * configured_react_s + v * v / (2.0 * configured);
        let (dist, source) = match self.joints.get(j).and_then(Option::as_ref) {
            Some(m) if v > 0.0 && m.covers(v) => (m.bound(w, q), Source::Learned),
            Some(m) if v > m.range().1 => (configured_dist, Source::BeyondRange),
            _ => (configured_dist, Source::Configured),
        };
        if v <= 0.0 || !dist.is_finite() {
            return (configured, source);
        }
        (decel_for_distance(v, react_s, dist).min(DECEL_CAP_FACTOR * configured), source)
    }
}

/// A learned deceleration is capped at this many times the configured
/// one: a bound hardly longer than its reaction distance would otherwise
/// ask for an unbounded deceleration.
pub const DECEL_CAP_FACTOR: f64 = 100.0;

/// The constant deceleration that, after `react_s` at speed `v`, stops in
/// `dist` (∞ capped by the caller where the reaction alone covers it).
#[inline]
pub fn decel_for_distance(v: f64, react_s: f64, dist: f64) -> f64 {
    let braking = dist - v * react_s;
    if braking <= 0.0 { f64::INFINITY } else { v * v / (2.0 * braking) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn joint() -> JointStopping {
        JointStopping {
            reaction_s: 0.02,
            speeds: vec![0.2, 1.0, 2.0],
            braking: vec![0.05, 0.06, 0.08],
            gravity: [0.01, 0.0, 0.0, 0.0, 0.0, 0.0],
            spread: [0.001, 0.0, 0.002],
            quantile: 3.0,
            rotational: true,
        }
    }

    #[test]
    fn the_forecast_deceleration_reproduces_the_bound() {
        let m = StoppingModel { joints: vec![Some(joint())] };
        let (w, q) = (-1.5, 0.7);
        let react = m.reaction_s().unwrap();
        let (a, src) = m.decel_for(0, w, q, react, 6.0, 0.03);
        assert_eq!(src, Source::Learned);
        let dist = 1.5 * react + 1.5 * 1.5 / (2.0 * a);
        assert!((dist - joint().bound(w, q)).abs() < 1e-12, "{dist}");
        // Gravity along the motion lengthens the stop.
        assert!(joint().bound(1.5, 1.0) > joint().bound(-1.5, 1.0));
    }

    #[test]
    fn beyond_the_covered_speeds_the_configured_distance_stands() {
        let m = StoppingModel { joints: vec![Some(joint()), None] };
        let (a, src) = m.decel_for(0, 2.5, 0.0, 0.02, 6.0, 0.03);
        assert_eq!(src, Source::BeyondRange);
        let dist = 2.5 * 0.02 + 2.5 * 2.5 / (2.0 * a);
        assert!((dist - (2.5 * 0.03 + 2.5 * 2.5 / 12.0)).abs() < 1e-12);
        assert_eq!(m.decel_for(1, 1.0, 0.0, 0.02, 6.0, 0.03).1, Source::Configured);
        assert_eq!(m.decel_for(0, 0.1, 0.0, 0.02, 6.0, 0.03).1, Source::Configured);
        assert_eq!(m.decel_for(0, 0.0, 0.0, 0.02, 6.0, 0.03), (6.0, Source::Configured));
    }
}
