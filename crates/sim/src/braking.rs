//! A braking physics the guard's models do not know, for `calibrate`'s
//! recordings and the closed loop that checks its result.
//!
//! Told to stop, a robot goes on for a reaction time drawn per stop (the
//! sum of two uniform draws between `reaction_s.0` and `reaction_s.1`:
//! most stops near the middle, a few near either end), then every joint
//! brakes on its own at
//!
//! ```text
//! decel(v, q, s) = a₀·(1 − fade·|v|/v_max) + s·G·sin(q + φ)
//! ```
//!
//! weaker at speed (a drive's torque falls with speed) and helped or
//! hindered by gravity with the direction of motion `s`. Recorded joint
//! states carry position noise and stamp jitter.
//!
//! [`BrakePhysics::for_manipulator`] derives one from a manipulator's
//! hand-set figures so that those stay conservative: the weakest braking
//! is 1.1 × the configured deceleration and the longest reaction the
//! configured one; the typical stop is shorter, which is what a learned
//! model can win back.

use workcell_guard_core::cell::Manipulator;
use workcell_guard_core::model::coverage::Rng;

/// One joint's brake.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointBrake {
    /// Deceleration at rest, rad/s² or m/s².
    pub decel: f64,
    /// Share of it lost at `v_max`.
    pub fade: f64,
    /// The joint's speed limit, rad/s or m/s.
    pub v_max: f64,
    /// Gravity's acceleration amplitude on the joint (0 for a prismatic one).
    pub gravity: f64,
    /// Phase of the gravity load, rad.
    pub phase: f64,
}

impl JointBrake {
    /// The deceleration at velocity `w` (signed) and position `q`.
    pub fn decel_at(&self, w: f64, q: f64) -> f64 {
        let fade = 1.0 - self.fade * (w.abs() / self.v_max).min(1.0);
        (self.decel * fade + w.signum() * self.gravity * (q + self.phase).sin()).max(1e-3 * self.decel)
    }

    /// Brakes from velocity `w` at position `q` to rest: (distance along
    /// the motion, time), integrated in 0.1 ms steps.
    pub fn stop_from(&self, w: f64, q: f64) -> (f64, f64) {
        let dt = 1e-4;
        let (dir, mut v, mut x, mut t) = (w.signum(), w.abs(), 0.0, 0.0);
        while v > 0.0 {
            let a = self.decel_at(dir * v, q + dir * x);
            let v1 = (v - a * dt).max(0.0);
            let h = if v1 > 0.0 { dt } else { v / a };
            x += 0.5 * (v + v1) * h;
            t += h;
            v = v1;
        }
        (x, t)
    }

    /// The constant deceleration that stops from `w` at `q` in the same
    /// distance.
    pub fn effective_decel(&self, w: f64, q: f64) -> f64 {
        let (d, _) = self.stop_from(w, q);
        if d > 0.0 { w * w / (2.0 * d) } else { self.decel }
    }
}

/// A robot's braking physics.
#[derive(Clone, Debug, PartialEq)]
pub struct BrakePhysics {
    /// The reaction time's range, s.
    pub reaction_s: (f64, f64),
    /// Per actuated joint (`dof` order).
    pub joints: Vec<JointBrake>,
    /// Recorded position noise, ± rad or m (uniform).
    pub noise: f64,
    /// Recorded stamp jitter, ± s (uniform).
    pub stamp_jitter_s: f64,
}

impl BrakePhysics {
    /// The physics of `m` as the module text says.
    pub fn for_manipulator(m: &Manipulator) -> BrakePhysics {
        let joints = (0..m.robot.dof())
            .map(|d| {
                let j = m.robot.dof_joint(d);
                let cfg = m.max_decel[d];
                let v_max = j.limits.map_or(1.0, |l| l.velocity).clamp(1e-3, 10.0);
                let rotational = j.kind.is_rotational();
                // Shoulder and elbow carry the arm; the rest less.
                let load = if !rotational {
                    0.0
                } else if (1..=2).contains(&d) {
                    0.3
                } else {
                    0.1
                };
                JointBrake { decel: 2.0 * cfg, fade: 0.3, v_max, gravity: load * cfg, phase: 0.4 * d as f64 }
            })
            .collect();
        let r = m.reaction_time_s;
        BrakePhysics { reaction_s: (0.7 * r, r), joints, noise: 2e-5, stamp_jitter_s: 2e-4 }
    }

    /// Sets `arm`'s braking rates along its plan from the effective
    /// deceleration of each joint from its speed and position now.
    pub fn brake_on_plan(&self, arm: &mut crate::motion::SimArm) {
        let Some(plan) = &arm.plan else { return };
        let decel: Vec<f64> = self
            .joints
            .iter()
            .enumerate()
            .map(|(j, b)| if arm.v[j] == 0.0 { b.decel } else { b.effective_decel(arm.v[j], arm.q[j]) })
            .collect();
        workcell_guard_core::forecast::along::brake_rates(plan, &decel, &mut arm.rates);
        arm.physics_rates = true;
    }

    /// Draws a reaction time.
    pub fn reaction(&self, rng: &mut Rng) -> f64 {
        let (lo, hi) = self.reaction_s;
        lo + (hi - lo) * 0.5 * (rng.unit() + rng.unit())
    }
}

/// `arm`'s rates from `decel` again, after a stop under a braking physics:
/// the rates also pace its speeding up, which its configured figures
/// bound.
pub fn restore_rates(arm: &mut crate::motion::SimArm, decel: &[f64]) {
    if let Some(plan) = &arm.plan {
        workcell_guard_core::forecast::along::brake_rates(plan, decel, &mut arm.rates);
    }
    arm.physics_rates = false;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn braking_is_weaker_at_speed_and_gravity_sides_with_the_motion() {
        let b = JointBrake { decel: 10.0, fade: 0.3, v_max: 2.0, gravity: 2.0, phase: 0.0 };
        assert!(b.decel_at(2.0, 0.0) < b.decel_at(0.5, 0.0));
        let q = std::f64::consts::FRAC_PI_2;
        assert!(b.decel_at(1.0, q) > b.decel_at(-1.0, q));
        // Integrated stop: between the bounds of its weakest and strongest deceleration.
        let (d, t) = b.stop_from(1.5, 0.3);
        let (lo, hi) = (b.decel_at(1.5, 0.3), b.decel_at(0.0, 0.3));
        assert!(d <= 1.5 * 1.5 / (2.0 * lo) && d >= 1.5 * 1.5 / (2.0 * hi), "{d}");
        assert!(t > 1.5 / hi && t < 1.5 / lo);
        assert!((1.5 * 1.5 / (2.0 * b.effective_decel(1.5, 0.3)) - d).abs() < 1e-12);
    }
}
