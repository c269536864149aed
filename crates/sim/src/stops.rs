//! Recorded stops of one simulated manipulator ([`record_stops`]): the
//! data `workcell_guard calibrate` fits, from a [`BrakePhysics`] it does
//! not know.
//!
//! Each episode the arm sets off from rest towards the middle of its
//! joints' ranges (each joint at a random share of its speed limit, some
//! joints standing), every joint reaching its speed together after 0.1–0.3 s
//! (within its configured acceleration), cruises for
//! 40–80 ms, is told to stop, reacts, brakes (every joint on its own, as
//! [`crate::braking`] says), stands for 80 ms and is released. Joint
//! states come every 2 ms with stamp jitter and position noise; speeds are
//! cut so that no joint's episode leaves its limits.

use crate::braking::BrakePhysics;
use workcell_guard_core::cell::Manipulator;
use workcell_guard_core::model::coverage::Rng;

/// A recording of stops.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StopLog {
    /// Joint-state stamps, s.
    pub stamps: Vec<f64>,
    /// Recorded positions (noise included), `dof` per stamp.
    pub positions: Vec<f64>,
    /// Stop commands: (instant, release), s.
    pub commands: Vec<(f64, f64)>,
    /// Per command and joint: the true (velocity, position at the command,
    /// distance to rest), `dof` per command.
    pub truth: Vec<(f64, f64, f64)>,
}

/// Joint-state period, s.
pub const PERIOD_S: f64 = 0.002;

/// `stops` recorded stops of `m` under `physics`, starting at `t0_s`.
// long: one stop's phases (run-up, command, braking, release) in order
pub fn record_stops(m: &Manipulator, physics: &BrakePhysics, stops: usize, seed: u64, t0_s: f64) -> StopLog {
    let dof = m.robot.dof();
    let mut rng = Rng::new(seed);
    let limits: Vec<(f64, f64)> = (0..dof)
        .map(|d| m.robot.dof_joint(d).limits.map_or((-3.0, 3.0), |l| (l.lower.max(-3.0), l.upper.min(3.0))))
        .collect();
    let mut q: Vec<f64> = limits.iter().map(|&(lo, hi)| 0.5 * (lo + hi)).collect();
    let mut log = StopLog::default();
    let mut t = t0_s;
    let mut k_next = 0usize;
    for _ in 0..stops {
        // The episode: per joint its velocity, then the times.
        let cruise = rng.range(0.04, 0.08);
        let ramp = rng.range(0.1, 0.3);
        let react = physics.reaction(&mut rng);
        let w: Vec<f64> = (0..dof)
            .map(|j| {
                if rng.unit() < 0.15 {
                    return 0.0;
                }
                let (lo, hi) = limits[j];
                let b = &physics.joints[j];
                let mid = 0.5 * (lo + hi);
                let dir = if (q[j] > mid) == (rng.unit() < 0.85) { -1.0 } else { 1.0 };
                let room = 0.9 * if dir > 0.0 { hi - q[j] } else { q[j] - lo };
                let weakest = b.decel * (1.0 - b.fade) - b.gravity;
                // Travel at speed v: ramp, cruise, reaction, braking.
                let travel = |v: f64| v * (0.5 * ramp + cruise + react) + v * v / (2.0 * weakest.max(1e-6));
                let mut v = rng.range(0.05, 1.0) * b.v_max.min(m.max_accel[j] * ramp);
                while v > 1e-4 && travel(v) > room {
                    v *= 0.8;
                }
                if travel(v) > room { 0.0 } else { dir * v }
            })
            .collect();
        let (start, tc) = (t, t + ramp + cruise);
        let tb = tc + react;
        let stop: Vec<(f64, f64)> = (0..dof)
            .map(|j| {
                let qb = q[j] + pos_before(w[j], ramp, tb - start);
                if w[j] == 0.0 { (0.0, 0.0) } else { physics.joints[j].stop_from(w[j], qb) }
            })
            .collect();
        let rest = tb + stop.iter().map(|s| s.1).fold(0.0, f64::max);
        let release = rest + 0.08;
        for j in 0..dof {
            let qc = q[j] + pos_before(w[j], ramp, tc - start);
            let total = w[j].abs() * react + stop[j].0;
            log.truth.push((w[j], qc, total));
        }
        log.commands.push((tc, release));
        // Joint states over the episode.
        let mut brakes: Vec<Stepper> =
            (0..dof).map(|j| Stepper::new(w[j], q[j] + pos_before(w[j], ramp, tb - start))).collect();
        loop {
            let ts = k_next as f64 * PERIOD_S + t0_s + rng.range(-1.0, 1.0) * physics.stamp_jitter_s;
            if ts > release {
                break;
            }
            k_next += 1;
            if ts < start {
                continue;
            }
            log.stamps.push(ts);
            for j in 0..dof {
                let x = if ts <= tb {
                    q[j] + pos_before(w[j], ramp, ts - start)
                } else {
                    brakes[j].advance(&physics.joints[j], ts - tb)
                };
                log.positions.push(x + rng.range(-1.0, 1.0) * physics.noise);
            }
        }
        for j in 0..dof {
            let qb = q[j] + pos_before(w[j], ramp, tb - start);
            q[j] = qb + w[j].signum() * stop[j].0;
        }
        t = release + 0.02;
    }
    log
}

/// Travel `dt` after setting off from rest, reaching velocity `w` after
/// `ramp` (every joint of the episode together).
fn pos_before(w: f64, ramp: f64, dt: f64) -> f64 {
    if dt <= ramp { 0.5 * w / ramp * dt * dt } else { w * (dt - 0.5 * ramp) }
}

/// A joint braking from `w` at `qb`, integrated forward as asked, in the
/// steps [`crate::braking::JointBrake::stop_from`] takes.
struct Stepper {
    dir: f64,
    v: f64,
    x: f64,
    t: f64,
    qb: f64,
}

impl Stepper {
    fn new(w: f64, qb: f64) -> Stepper {
        Stepper { dir: w.signum(), v: w.abs(), x: 0.0, t: 0.0, qb }
    }

    /// The position `dt` after braking began (`dt` not decreasing).
    fn advance(&mut self, b: &crate::braking::JointBrake, dt: f64) -> f64 {
        let step = 1e-4;
        while self.v > 0.0 && self.t + step <= dt {
            let a = b.decel_at(self.dir * self.v, self.qb + self.dir * self.x);
            let v1 = (self.v - a * step).max(0.0);
            let h = if v1 > 0.0 { step } else { self.v / a };
            self.x += 0.5 * (self.v + v1) * h;
            self.t += h;
            self.v = v1;
        }
        // Between steps: on at the current speed and deceleration.
        let tau = (dt - self.t).max(0.0);
        let extra = if self.v > 0.0 {
            let a = b.decel_at(self.dir * self.v, self.qb + self.dir * self.x);
            let tau = tau.min(self.v / a);
            self.v * tau - 0.5 * a * tau * tau
        } else {
            0.0
        };
        self.qb + self.dir * (self.x + extra)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn braking_positions_end_where_the_integrated_stop_does() {
        let b = crate::braking::JointBrake { decel: 8.0, fade: 0.3, v_max: 2.0, gravity: 1.0, phase: 0.2 };
        let (d, t) = b.stop_from(-1.2, 0.5);
        let mut st = Stepper::new(-1.2, 0.5);
        let mid = st.advance(&b, 0.5 * t);
        assert!(mid < 0.5 && mid > 0.5 - d);
        let end = st.advance(&b, t + 1.0);
        assert!((end - (0.5 - d)).abs() < 1e-6, "{end} {d}");
    }
}
