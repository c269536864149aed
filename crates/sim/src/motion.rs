//! How a simulated arm moves: planned trajectories (what a planner such as
//! MoveIt gives a controller), followed at a pace the controller sets, and
//! braking along them when told to stop.
//!
//! A plan is a straight line in joint space from where the arm is to its
//! goal, every joint on one synchronised trapezoidal profile (each within
//! its speed limit and its maximum deceleration as acceleration), written
//! as waypoints every [`WAYPOINT_DT_S`] — the form a `JointTrajectory`
//! has. The arm follows it exactly at a pace `σ` (plan seconds per second):
//! 1 normally, the commanded speed scaling when slowed; a stop lowers `σ`
//! to 0 after the reaction time, each joint within its deceleration (the
//! joints' speed, not the pace, carried over waypoints), so the arm stops
//! on the plan's path ([`workcell_guard_core::forecast::along`],
//! what the guard's forecast assumes of a robot on plan).

use workcell_guard_core::forecast::along::brake_rates;
use workcell_guard_core::forecast::track::JointPlan;

/// Time between a plan's waypoints, s.
pub const WAYPOINT_DT_S: f64 = 0.02;

/// The joint speeds the simulated arms plan with: each joint's URDF
/// velocity limit (1 where it has none, at most 10), times `fraction`.
pub fn plan_speeds(m: &workcell_guard_core::cell::Manipulator, fraction: f64) -> Vec<f64> {
    (0..m.robot.dof()).map(|d| m.robot.dof_joint(d).limits.map_or(1.0, |l| l.velocity).min(10.0) * fraction).collect()
}

/// A synchronised trapezoidal plan from `from` to `to` (`vmax`, `amax` per
/// joint); `None` when they are the same configuration.
pub fn straight_plan(from: &[f64], to: &[f64], vmax: &[f64], amax: &[f64]) -> Option<JointPlan> {
    let dof = from.len();
    // Path parameter u in [0, 1]: its speed and acceleration bounds.
    let (mut du, mut ddu) = (f64::INFINITY, f64::INFINITY);
    for j in 0..dof {
        let d = (to[j] - from[j]).abs();
        if d > 1e-9 {
            du = du.min(vmax[j] / d);
            ddu = ddu.min(amax[j] / d);
        }
    }
    if !du.is_finite() {
        return None;
    }
    // Trapezoid (or triangle) in u.
    let (ta, total) = if du * du / ddu >= 1.0 {
        let ta = (1.0 / ddu).sqrt();
        (ta, 2.0 * ta)
    } else {
        let ta = du / ddu;
        (ta, ta + 1.0 / du)
    };
    let peak = (ddu * ta).min(du);
    let u_at = |t: f64| -> f64 {
        if t <= ta {
            0.5 * ddu * t * t
        } else if t >= total - ta {
            let r = total - t;
            1.0 - 0.5 * ddu * r * r
        } else {
            0.5 * ddu * ta * ta + peak * (t - ta)
        }
    };
    let n = (total / WAYPOINT_DT_S).ceil().max(1.0) as usize;
    let mut times = Vec::with_capacity(n + 1);
    let mut positions = Vec::with_capacity((n + 1) * dof);
    for k in 0..=n {
        let t = (k as f64 * WAYPOINT_DT_S).min(total);
        let u = u_at(t).clamp(0.0, 1.0);
        times.push(t);
        if k == n {
            positions.extend_from_slice(to); // exactly the goal
        } else {
            positions.extend((0..dof).map(|j| from[j] + u * (to[j] - from[j])));
        }
    }
    JointPlan::new(dof, times, positions).ok()
}

/// A simulated arm: where it is, its goals, and the plan it follows.
#[derive(Clone, Debug)]
pub struct SimArm {
    /// Positions.
    pub q: Vec<f64>,
    /// Velocities.
    pub v: Vec<f64>,
    /// Goals still to reach, the next last.
    pub goals: Vec<Vec<f64>>,
    /// The plan it follows (to the next goal).
    pub plan: Option<JointPlan>,
    /// Per plan segment, the braking rate of plan time.
    pub rates: Vec<f64>,
    /// Plan time where it is, s.
    pub s: f64,
    /// Pace along the plan (plan seconds per second).
    pub rate: f64,
    /// The pace it is told to keep (the speed scaling), 0..=1.
    pub scaling: f64,
    /// When its brakes act (a stop commanded, plus the reaction time).
    pub brake_at: Option<f64>,
    /// A plan was made and not yet handed to the guard.
    pub new_plan: bool,
    /// Plan time it may not pass (its grant's end while it proceeds or
    /// holds; `+∞` when it does not obey grants or has none).
    pub grant_limit_s: f64,
    /// Plan time a retreat ordered by its grant goes back to.
    pub back_to: Option<f64>,
    /// Its braking rates are a braking physics' for the stop under way
    /// (restored to its configured deceleration's once released).
    pub physics_rates: bool,
    /// Its last goal is reached: `plan` is the one it finished, kept as
    /// the way back a retreat its grant orders runs along; it moves only
    /// on such a retreat (only with `keep_last`).
    pub parked: bool,
    /// Its last goal's plan is kept once finished (`parked`).
    pub keep_last: bool,
}

impl SimArm {
    /// An arm at rest at `q` with `goals` to reach (the first goal last).
    pub fn new(q: Vec<f64>, goals: Vec<Vec<f64>>) -> SimArm {
        let dof = q.len();
        SimArm {
            v: vec![0.0; dof],
            q,
            goals,
            plan: None,
            rates: Vec::new(),
            s: 0.0,
            rate: 0.0,
            scaling: 1.0,
            brake_at: None,
            new_plan: false,
            grant_limit_s: f64::INFINITY,
            back_to: None,
            physics_rates: false,
            parked: false,
            keep_last: false,
        }
    }

    /// True when every goal is reached.
    pub fn done(&self) -> bool {
        self.goals.is_empty() && (self.plan.is_none() || self.parked)
    }

    /// Plans straight to its next goal when it has no plan (or only the
    /// finished one it keeps, and a new goal).
    fn plan_next(&mut self, vmax: &[f64], amax: &[f64], decel: &[f64]) {
        if self.parked && !self.goals.is_empty() {
            // A new goal: the finished plan is no longer the way back.
            (self.plan, self.parked) = (None, false);
        }
        if self.plan.is_none() {
            while let Some(goal) = self.goals.last() {
                if let Some(p) = straight_plan(&self.q, goal, vmax, amax) {
                    self.rates = vec![f64::INFINITY; p.len().saturating_sub(1)];
                    brake_rates(&p, decel, &mut self.rates);
                    self.physics_rates = false;
                    self.plan = Some(p);
                    self.s = 0.0;
                    self.rate = 0.0;
                    self.new_plan = true;
                    // The last grant was for the last plan.
                    self.grant_limit_s = f64::INFINITY;
                    self.back_to = None;
                    break;
                }
                self.goals.pop();
            }
        }
    }

    /// Advances the arm by `dt` at time `t` (`vmax`, `amax`, `decel` per joint).
    pub fn advance(&mut self, t: f64, dt: f64, vmax: &[f64], amax: &[f64], decel: &[f64]) {
        let braking = self.brake_at.is_some_and(|b| t >= b);
        if !braking {
            self.plan_next(vmax, amax, decel);
        }
        let Some(plan) = &self.plan else {
            self.v.iter_mut().for_each(|v| *v = 0.0);
            return;
        };
        let k = plan.segment(self.s);
        let beta = self.rates.get(k).copied().unwrap_or(f64::INFINITY);
        let want = match self.back_to {
            // A retreat runs back along the plan at the plan's pace,
            // scaled as the guard says (its grant's scaling slows it to
            // stop at the retreat's end).
            Some(to) if self.s > to && !braking => -self.scaling.clamp(0.0, 1.0),
            Some(_) => 0.0,
            None if braking || self.parked => 0.0,
            None => self.scaling.clamp(0.0, 1.0),
        };
        let old = self.rate;
        self.rate = if !beta.is_finite() {
            want
        } else if want < self.rate {
            (self.rate - beta * dt).max(want)
        } else {
            (self.rate + beta * dt).min(want)
        };
        let was = self.s;
        self.s = (self.s + 0.5 * (old + self.rate) * dt).clamp(0.0, plan.duration_s());
        if self.s > self.grant_limit_s.max(was) {
            // Never past its grant: where the speed scaling has not brought
            // it to rest at the grant's end, it stops there.
            self.s = self.grant_limit_s.max(was);
            self.rate = 0.0;
        }
        if self.s == 0.0 && self.rate < 0.0 {
            self.rate = 0.0;
        }
        plan.at_time(self.s, &mut self.q);
        let k_new = plan.segment(self.s);
        if braking && k_new != k && self.s < plan.duration_s() {
            // Braking keeps the joints' speed over a waypoint, not the pace.
            let next = plan.segment_speed(k_new);
            self.rate = if next > 0.0 { self.rate * plan.segment_speed(k) / next } else { 0.0 };
        }
        let k = k_new;
        if plan.len() > 1 {
            let h = plan.time(k + 1) - plan.time(k);
            for ((v, a), b) in self.v.iter_mut().zip(plan.point(k)).zip(plan.point(k + 1)) {
                *v = (b - a) / h * self.rate;
            }
        }
        if self.s >= plan.duration_s() && !self.parked {
            // The last goal's plan is kept: a retreat may run back along it.
            self.parked = self.keep_last && self.goals.len() == 1;
            if !self.parked {
                self.plan = None;
            }
            self.goals.pop();
            self.rate = 0.0;
            self.v.iter_mut().for_each(|v| *v = 0.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_straight_plan_keeps_every_joint_within_its_limits_and_ends_at_the_goal() {
        let (from, to) = ([0.0, 1.0, -0.5], [1.5, 0.2, -0.5]);
        let (vmax, amax) = ([2.0, 1.0, 1.0], [6.0, 4.0, 4.0]);
        let p = straight_plan(&from, &to, &vmax, &amax).unwrap();
        assert_eq!(p.point(p.len() - 1), &to);
        assert_eq!(p.point(0), &from);
        for k in 0..p.len() - 1 {
            let h = p.time(k + 1) - p.time(k);
            for (j, lim) in vmax.iter().enumerate() {
                let v = (p.point(k + 1)[j] - p.point(k)[j]) / h;
                assert!(v.abs() <= lim * 1.0001, "joint {j} at {k}: {v}");
            }
        }
        assert!(straight_plan(&from, &from, &vmax, &amax).is_none());
    }

    #[test]
    fn an_arm_that_keeps_its_last_plan_is_done_and_moves_back_along_it_only_when_sent() {
        let (vmax, amax) = ([2.0, 2.0], [6.0, 6.0]);
        let mut arm = SimArm { keep_last: true, ..SimArm::new(vec![0.0, 0.0], vec![vec![1.0, 0.5]]) };
        let mut t = 0.0;
        while !arm.done() && t < 10.0 {
            arm.advance(t, 0.002, &vmax, &amax, &amax);
            t += 0.002;
        }
        assert!(arm.done() && arm.parked && arm.plan.is_some());
        assert!((arm.q[0] - 1.0).abs() < 1e-9);
        // Standing: it does not move on its own.
        for _ in 0..100 {
            arm.advance(t, 0.002, &vmax, &amax, &amax);
            t += 0.002;
        }
        assert!((arm.q[0] - 1.0).abs() < 1e-9, "{:?}", arm.q);
        // Sent back half way: it goes back along the plan, and stays done.
        let half = arm.plan.as_ref().unwrap().duration_s() / 2.0;
        arm.back_to = Some(half);
        for _ in 0..2000 {
            arm.advance(t, 0.002, &vmax, &amax, &amax);
            t += 0.002;
        }
        assert!(arm.done() && arm.q[0] < 0.9 && arm.q[0] > 0.1, "{:?}", arm.q);
        assert!((arm.q[1] - arm.q[0] / 2.0).abs() < 1e-9, "off its plan: {:?}", arm.q);
        // A new goal: it plans afresh from where it stands.
        arm.goals.push(vec![0.0, 0.0]);
        arm.advance(t, 0.002, &vmax, &amax, &amax);
        assert!(!arm.done() && !arm.parked);
    }

    #[test]
    fn an_arm_follows_its_plan_to_the_goal_and_brakes_on_its_path() {
        let (vmax, amax) = ([2.0, 2.0], [6.0, 6.0]);
        let mut arm = SimArm::new(vec![0.0, 0.0], vec![vec![1.0, 0.5]]);
        let mut t = 0.0;
        while !arm.done() && t < 10.0 {
            arm.advance(t, 0.002, &vmax, &amax, &amax);
            t += 0.002;
        }
        assert!(arm.done());
        assert!((arm.q[0] - 1.0).abs() < 1e-9 && (arm.q[1] - 0.5).abs() < 1e-9);
        // Told to stop half way: it stands on the line from start to goal.
        let mut arm = SimArm::new(vec![0.0, 0.0], vec![vec![1.0, 0.5]]);
        let mut t = 0.0;
        while arm.q[0] < 0.4 {
            arm.advance(t, 0.002, &vmax, &amax, &amax);
            t += 0.002;
        }
        arm.brake_at = Some(t);
        for _ in 0..1000 {
            arm.advance(t, 0.002, &vmax, &amax, &amax);
            t += 0.002;
        }
        assert_eq!(arm.rate, 0.0);
        assert!(arm.q[0] < 1.0 && (arm.q[1] - arm.q[0] / 2.0).abs() < 1e-9, "{:?}", arm.q);
    }
}
