//! The stopping path of a robot on its plan: it goes on along the plan for
//! the reaction time, then brakes **along the plan's path** (the method
//! text's stop on the path), and stands where it comes to rest or where the
//! plan ends, whichever comes first.
//!
//! The robot's progress is measured in plan time `s` (the plan's own clock);
//! it advances at a rate `σ` (1 = the plan's own pace, less when slowed).
//! On segment `i` of the plan (waypoints `i`, `i + 1`, joint space linear
//! between them) joint `j` moves at `w_ij σ`, with `w_ij` its velocity over
//! the segment at the plan's pace. Braking lowers `σ` at the segment's rate
//! `β_i = min_j decel_j / |w_ij|`, so every joint stays within its
//! deceleration and all of them stop together, on the path.
//!
//! The rate now is read from the robot's measured joint velocity `v`,
//! projected on the plan's: `σ0 = max(0, v·w / w·w)`. During the reaction
//! phase the robot is taken to keep that rate; what it may do differently
//! in that time is the departure bound the guard adds ([`departure`]).
//!
//! Nothing here allocates.

use super::track::JointPlan;

/// Writes into `out`, per segment of `plan`, the largest rate at which its
/// plan time may slow down (1/s², in plan seconds per second per second)
/// with every joint within its deceleration `decel`: `min_j decel_j /
/// |w_j|`, `∞` where no joint moves. `out` must hold `plan.len() - 1`
/// entries (one-waypoint plans have none).
pub fn brake_rates(plan: &JointPlan, decel: &[f64], out: &mut [f64]) {
    for (k, o) in out.iter_mut().enumerate().take(plan.len().saturating_sub(1)) {
        let dt = plan.time(k + 1) - plan.time(k);
        let mut rate = f64::INFINITY;
        for ((a, b), d) in plan.point(k).iter().zip(plan.point(k + 1)).zip(decel) {
            let w = (b - a).abs() / dt;
            if w > 0.0 {
                rate = rate.min(d / w);
            }
        }
        *o = rate;
    }
}

/// A robot's stopping path along its plan: where it is on the plan, how
/// fast it goes along it, and how long it takes to stand.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Along {
    /// Plan time where the robot is, s.
    pub s0: f64,
    /// Plan seconds per second now (`σ0`).
    pub rate: f64,
    /// Reaction phase (reaction time plus the age of the newest state), s.
    pub react_s: f64,
    /// Time until it stands, or reaches the plan's end, s.
    pub horizon_s: f64,
    /// Plan time where it stands, s.
    pub s_end: f64,
}

/// The fastest pace a forecast takes a robot to follow its plan at
/// (a measured rate above it is clamped: twice the plan's own speed is no
/// longer following it).
pub const MAX_RATE: f64 = 2.0;

impl Along {
    /// The stopping path of a robot at plan time `s0` moving at joint
    /// velocity `v`, reacting for `react_s`; `rates` from [`brake_rates`].
    ///
    /// With `rise` ([`brake_rates`] of the joints' accelerations), a robot
    /// below the plan's own pace is taken to catch up through the reaction
    /// at full acceleration, up to that pace: its pace through the reaction
    /// is `min(1, σ0 + rise·react)` (a robot it does not trust to stay
    /// slow; the reaction phase at that pace covers every slower one).
    pub fn new(plan: &JointPlan, rates: &[f64], s0: f64, v: &[f64], react_s: f64, rise: Option<&[f64]>) -> Along {
        let end = plan.duration_s();
        let s0 = s0.clamp(0.0, end);
        let mut rate = 0.0;
        if plan.len() > 1 && s0 < end {
            let k = plan.segment(s0);
            if let Some(pace) = plan.pace(s0, v) {
                rate = pace.clamp(0.0, MAX_RATE);
            }
            if let Some(&up) = rise.and_then(|r| r.get(k))
                && rate < 1.0
                && up.is_finite()
            {
                rate = (rate + up * react_s).min(1.0);
            }
        }
        let mut along = Along { s0, rate, react_s, horizon_s: 0.0, s_end: s0 };
        if rate > 0.0 {
            (along.horizon_s, along.s_end) = along.walker().to_rest(plan, rates);
        }
        along
    }

    /// A walker from now along the path, to ask the plan time at
    /// increasing times.
    pub fn walker(&self) -> Walker {
        Walker { t: 0.0, s: self.s0, rate: self.rate, react_s: self.react_s, k: usize::MAX }
    }
}

/// Walks a robot's stopping path along its plan forward in time.
#[derive(Clone, Copy, Debug)]
pub struct Walker {
    t: f64,
    s: f64,
    rate: f64,
    react_s: f64,
    /// The segment `s` is in (`usize::MAX` until looked up).
    k: usize,
}

impl Walker {
    /// The plan time reached `t` seconds from now (`t` not before the
    /// last asked).
    pub fn plan_time_at(&mut self, plan: &JointPlan, rates: &[f64], t: f64) -> f64 {
        self.react(plan, t);
        self.brake(plan, rates, t);
        if self.t < t {
            self.t = t; // at rest (or at the plan's end) since
        }
        self.s
    }

    /// Walks on until the robot stands (or the plan ends): the time from
    /// now and the plan time there.
    pub fn to_rest(&mut self, plan: &JointPlan, rates: &[f64]) -> (f64, f64) {
        self.react(plan, f64::INFINITY);
        self.brake(plan, rates, f64::INFINITY);
        (self.t, self.s)
    }

    /// The reaction phase up to `t`: the rate holds; reaching the plan's
    /// end stands the robot there, at the time it gets there.
    fn react(&mut self, plan: &JointPlan, t: f64) {
        if self.t >= self.react_s || self.rate <= 0.0 {
            return;
        }
        let end = plan.duration_s();
        let u = t.min(self.react_s);
        let s = self.s + self.rate * (u - self.t);
        if s >= end {
            self.t += (end - self.s) / self.rate;
            self.s = end;
            self.rate = 0.0;
        } else {
            self.s = s;
            self.t = u;
        }
    }

    /// Braking along the plan, segment by segment, up to `t` (or rest).
    fn brake(&mut self, plan: &JointPlan, rates: &[f64], t: f64) {
        let end = plan.duration_s();
        if self.t < self.react_s {
            return; // still reacting at `t`
        }
        while self.t < t && self.rate > 0.0 && self.s < end {
            if self.k == usize::MAX || plan.time(self.k + 1) <= self.s || plan.time(self.k) > self.s {
                self.k = plan.segment(self.s);
            }
            let beta = rates[self.k];
            if !beta.is_finite() {
                self.rate = 0.0; // nothing moves here: it stands at once
                break;
            }
            let room = plan.time(self.k + 1) - self.s;
            let rest = self.rate * self.rate / (2.0 * beta);
            let (tau, exits) = if rest > room {
                ((self.rate - (self.rate * self.rate - 2.0 * beta * room).max(0.0).sqrt()) / beta, true)
            } else {
                (self.rate / beta, false)
            };
            if t - self.t >= tau {
                self.t += tau;
                if exits {
                    // The joints' speed carries over the waypoint, not the
                    // pace: a faster segment is entered at a lower pace.
                    let (here, next) = (plan.segment_speed(self.k), plan.segment_speed(self.k + 1));
                    let rate = (self.rate * self.rate - 2.0 * beta * room).max(0.0).sqrt();
                    self.rate = if next > 0.0 { rate * here / next } else { 0.0 };
                    self.s = plan.time(self.k + 1);
                    self.k += 1;
                } else {
                    self.s += rest;
                    self.rate = 0.0;
                }
            } else {
                let dt = t - self.t;
                self.s += self.rate * dt - 0.5 * beta * dt * dt;
                self.rate -= beta * dt;
                self.t = t;
            }
            self.s = self.s.min(end);
        }
    }
}

/// The departure bound, per joint: how far a robot on its plan can be
/// from this cycle's forecast when it leaves the plan at any instant, each
/// joint within its acceleration limit `accel`, and is seen off plan
/// `seen_s` later (the joint-state period plus the newest state's age),
/// then stopped after the reaction time `react_s` (reaction time only: the
/// age is in `seen_s`): it has drifted `accel·seen²/2` and gained
/// `accel·seen` of speed, which it keeps through the reaction,
/// `accel·seen·react`, and which it brakes with the rest, `accel·seen²/2`
/// more. In all, `accel·seen·(seen + react)`. From the cycle it is seen
/// off plan on, it is forecast by extrapolation from what it does.
pub fn departure(accel: f64, seen_s: f64, react_s: f64) -> f64 {
    accel * seen_s * (seen_s + react_s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One joint: 0 → 1 rad in 1 s at 1 rad/s, then 1 → 3 rad in 1 s.
    fn ramp() -> JointPlan {
        JointPlan::new(1, vec![0.0, 1.0, 2.0], vec![0.0, 1.0, 3.0]).unwrap()
    }

    #[test]
    fn braking_along_the_plan_keeps_each_joint_within_its_deceleration() {
        let p = ramp();
        let mut rates = [0.0; 2];
        brake_rates(&p, &[4.0], &mut rates);
        assert_eq!(rates, [4.0, 2.0]);
        // At 0.2 rad moving 1 rad/s (the plan's pace): 0.05 s reaction, then
        // 1 rad/s braked at 4 rad/s²: 0.125 rad more.
        let a = Along::new(&p, &rates, 0.2, &[1.0], 0.05, None);
        assert!((a.rate - 1.0).abs() < 1e-12);
        assert!((a.horizon_s - 0.3).abs() < 1e-9, "{a:?}");
        assert!((a.s_end - (0.2 + 0.05 + 0.125)).abs() < 1e-9, "{a:?}");
        // The walker agrees at the end and goes forward only.
        let mut w = a.walker();
        let mut last = a.s0;
        for k in 0..=30 {
            let s = w.plan_time_at(&p, &rates, k as f64 * 0.01);
            assert!(s >= last - 1e-12);
            last = s;
        }
        assert!((last - a.s_end).abs() < 1e-9);
    }

    #[test]
    fn the_joints_speed_carries_over_a_waypoint_and_the_path_ends_with_the_plan() {
        let p = ramp();
        let mut rates = [0.0; 2];
        brake_rates(&p, &[1.0], &mut rates);
        // At 0.9 rad, 1 rad/s, no reaction: braking at 1 rad/s² would need
        // 0.5 rad; 0.1 rad into the first segment, the rest in the second,
        // where the plan is twice as fast: the pace halves, the speed holds.
        let a = Along::new(&p, &rates, 0.9, &[1.0], 0.0, None);
        let mut q = [0.0];
        p.at_time(a.s_end, &mut q);
        assert!((q[0] - 1.4).abs() < 1e-9, "stops at {q:?}");
        assert!((a.horizon_s - 1.0).abs() < 1e-9, "{a:?}");
        // A robot fast enough to reach the plan's end stands there.
        let a = Along::new(&p, &rates, 1.9, &[2.0], 0.2, None);
        assert_eq!(a.s_end, 2.0);
        assert!((a.horizon_s - 0.1).abs() < 1e-9, "{a:?}"); // 2 rad/s is the plan's own pace there
        // Standing on the plan: nothing ahead.
        let a = Along::new(&p, &rates, 0.5, &[0.0], 0.05, None);
        assert_eq!((a.rate, a.horizon_s, a.s_end), (0.0, 0.0, 0.5));
    }

    #[test]
    fn the_departure_bound_grows_with_the_time_until_seen() {
        assert_eq!(departure(6.0, 0.0, 0.03), 0.0);
        assert!((departure(6.0, 0.002, 0.03) - 6.0 * 0.002 * 0.032).abs() < 1e-15);
        assert!(departure(6.0, 0.004, 0.03) > 2.0 * departure(6.0, 0.002, 0.03));
    }
}
