//! Where a robot is on its planned trajectory.
//!
//! A [`JointPlan`] is a planned trajectory in the robot's own joint order
//! (waypoints at times from the plan's start, joint space linear between
//! them, as a controller interpolates at the least). A [`PlanTracker`]
//! follows one robot along it from the robot's measured configurations:
//! each cycle it finds the nearest point of the plan's path within a
//! window ahead of where the robot last was (progress never goes back), and
//! says whether the robot is *on plan* (every joint within its tolerance
//! of that point), *off plan*, or *done* (at the plan's end).
//!
//! Distances are taken in tolerance units: joint `j`'s offset divided by
//! its tolerance, so radians and metres mix. The nearest point minimises
//! the Euclidean norm in those units over each segment; on plan means its
//! largest component is at most 1.
//!
//! Nothing here allocates after [`JointPlan::new`].

/// A plan that cannot be tracked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    /// Waypoint count and positions disagree.
    #[error("{positions} positions for {points} waypoints of {dof} joints")]
    Shape {
        /// Waypoints.
        points: usize,
        /// Joints per waypoint.
        dof: usize,
        /// Positions given.
        positions: usize,
    },
    /// A plan needs at least one waypoint.
    #[error("a plan needs at least one waypoint")]
    Empty,
    /// Times must be finite, at least 0 and strictly increasing.
    #[error("waypoint {point}: time must be finite and later than the one before")]
    TimeOrder {
        /// The waypoint.
        point: usize,
    },
    /// Positions must be finite.
    #[error("waypoint {point}: a position is not finite")]
    NotFinite {
        /// The waypoint.
        point: usize,
    },
}

/// A planned trajectory in the robot's joint order.
#[derive(Debug, Clone, PartialEq)]
pub struct JointPlan {
    dof: usize,
    /// Per waypoint, its time from the plan's start, s.
    times: Vec<f64>,
    /// Waypoint positions, `dof` per waypoint (flat).
    positions: Vec<f64>,
    /// Per waypoint, per joint: how far the joint has travelled along the
    /// plan up to it (flat, as `positions`).
    travelled: Vec<f64>,
    /// The fastest of its segments' speeds ([`JointPlan::segment_speed`]).
    peak_speed: f64,
}

impl JointPlan {
    /// A plan of `times.len()` waypoints of `dof` joints each.
    pub fn new(dof: usize, times: Vec<f64>, positions: Vec<f64>) -> Result<JointPlan, PlanError> {
        if times.is_empty() {
            return Err(PlanError::Empty);
        }
        if positions.len() != times.len() * dof {
            return Err(PlanError::Shape { points: times.len(), dof, positions: positions.len() });
        }
        let mut last = f64::NEG_INFINITY;
        for (k, &t) in times.iter().enumerate() {
            if !t.is_finite() || t < 0.0 || t <= last {
                return Err(PlanError::TimeOrder { point: k });
            }
            last = t;
        }
        if let Some(k) = positions.chunks(dof.max(1)).position(|p| p.iter().any(|x| !x.is_finite())) {
            return Err(PlanError::NotFinite { point: k });
        }
        let mut travelled = vec![0.0; positions.len()];
        for k in 1..times.len() {
            for j in 0..dof {
                let (at, before) = (k * dof + j, (k - 1) * dof + j);
                travelled[at] = travelled[before] + (positions[at] - positions[before]).abs();
            }
        }
        let mut plan = JointPlan { dof, times, positions, travelled, peak_speed: 0.0 };
        plan.peak_speed = (0..plan.len()).map(|k| plan.segment_speed(k)).fold(0.0, f64::max);
        Ok(plan)
    }

    /// Joint count.
    pub fn dof(&self) -> usize {
        self.dof
    }

    /// Waypoint count.
    pub fn len(&self) -> usize {
        self.times.len()
    }

    /// Always false: a plan has a waypoint at least.
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// Time of the last waypoint, s.
    pub fn duration_s(&self) -> f64 {
        self.times[self.times.len() - 1]
    }

    /// Waypoint `k`'s positions.
    pub fn point(&self, k: usize) -> &[f64] {
        &self.positions[k * self.dof..(k + 1) * self.dof]
    }

    /// Waypoint `k`'s time from the plan's start, s.
    pub fn time(&self, k: usize) -> f64 {
        self.times[k]
    }

    /// The segment holding plan time `t`: `k` with `time(k) <= t <
    /// time(k + 1)`, clamped to `0..len() - 1` (0 for a one-waypoint plan).
    pub fn segment(&self, t: f64) -> usize {
        self.times.partition_point(|&x| x <= t).saturating_sub(1).min(self.times.len().saturating_sub(2))
    }

    /// [`JointPlan::segment`], looked for from segment `hint` outwards in
    /// steps that double (as quick as a binary search from anywhere, and
    /// quicker near `hint`).
    pub fn segment_from(&self, t: f64, hint: usize) -> usize {
        let n = self.times.len();
        if n < 2 {
            return 0;
        }
        let k = hint.min(n - 2);
        // A bracket with times[lo] <= t < times[hi] (hi == n: past the end).
        let (lo, hi) = if self.times[k] <= t {
            let (mut lo, mut step) = (k, 1);
            loop {
                let hi = lo + step;
                if hi >= n {
                    break (lo, n);
                }
                if self.times[hi] > t {
                    break (lo, hi);
                }
                (lo, step) = (hi, step * 2);
            }
        } else {
            let (mut hi, mut step) = (k, 1);
            loop {
                if hi == 0 {
                    return 0;
                }
                let lo = hi.saturating_sub(step);
                if self.times[lo] <= t {
                    break (lo, hi);
                }
                (hi, step) = (lo, step * 2);
            }
        };
        (lo + self.times[lo..hi].partition_point(|&x| x <= t) - 1).min(n - 2)
    }

    /// How fast joint velocity `v` goes along the plan at plan time `s`, in
    /// plan seconds per second (1: the plan's own pace; negative: back
    /// along it): its projection on the plan's velocity there. `None` where
    /// the plan stands still (or has one waypoint).
    pub fn pace(&self, s: f64, v: &[f64]) -> Option<f64> {
        if self.len() < 2 {
            return None;
        }
        let k = self.segment(s.clamp(0.0, self.duration_s()));
        let dt = self.time(k + 1) - self.time(k);
        let (mut vw, mut ww) = (0.0, 0.0);
        for ((a, b), v) in self.point(k).iter().zip(self.point(k + 1)).zip(v) {
            let w = (b - a) / dt;
            vw += v * w;
            ww += w * w;
        }
        (ww > 0.0).then(|| vw / ww)
    }

    /// Joint-space speed over segment `k` at the plan's own pace (the norm
    /// of its joints' velocities there; 0 past the last waypoint).
    pub fn segment_speed(&self, k: usize) -> f64 {
        if k + 1 >= self.times.len() {
            return 0.0;
        }
        let dt = self.times[k + 1] - self.times[k];
        self.point(k).iter().zip(self.point(k + 1)).map(|(a, b)| (b - a) * (b - a)).sum::<f64>().sqrt() / dt
    }

    /// The plan's speed at plan time `s` as a share of its fastest
    /// ([`JointPlan::segment_speed`]), 0..=1: small where it sets off from
    /// rest or comes to rest, 0 where it never moves (1 for a time that
    /// is not a number: as fast as it goes).
    pub fn speed_share(&self, s: f64) -> f64 {
        if !s.is_finite() {
            return 1.0;
        }
        if self.peak_speed <= 0.0 {
            return 0.0;
        }
        let k = self.segment(s.clamp(0.0, self.duration_s()));
        (self.segment_speed(k) / self.peak_speed).clamp(0.0, 1.0)
    }

    /// Adds to `out`, per joint, how far it travels along the plan between
    /// plan times `a <= b` (the sum of its moves over the pieces between
    /// waypoints: a joint that goes and comes back counts both ways).
    pub fn travel(&self, a: f64, b: f64, out: &mut [f64]) {
        self.travel_from(a, b, 0, out);
    }

    /// [`JointPlan::travel`], its segments looked for from segment `hint`
    /// on (quicker where the spans follow one another); returns the segment
    /// holding `b`, a hint for the next span.
    pub fn travel_from(&self, a: f64, b: f64, hint: usize, out: &mut [f64]) -> usize {
        let end = self.duration_s();
        let (a, b) = (a.clamp(0.0, end), b.clamp(0.0, end));
        if b <= a || self.times.len() < 2 {
            return hint;
        }
        let ka = self.segment_from(a, hint);
        let kb = self.segment_from(b, ka);
        let (fa, fb) = (self.fraction(ka, a), self.fraction(kb, b));
        for (j, o) in out.iter_mut().enumerate() {
            let at = |k: usize, f: f64| {
                let (x, y) = (self.travelled[k * self.dof + j], self.travelled[(k + 1) * self.dof + j]);
                x + (y - x) * f
            };
            *o += (at(kb, fb) - at(ka, fa)).max(0.0);
        }
        kb
    }

    /// How far plan time `t` lies into segment `k`, 0..=1.
    fn fraction(&self, k: usize, t: f64) -> f64 {
        let (t0, t1) = (self.times[k], self.times[k + 1]);
        ((t - t0) / (t1 - t0)).clamp(0.0, 1.0)
    }

    /// The plan's configuration at time `t` (clamped to the plan), linear
    /// between waypoints, into `out`.
    pub fn at_time(&self, t: f64, out: &mut [f64]) {
        self.at_segment(self.segment(t), t, out);
    }

    /// [`JointPlan::at_time`], its segment looked for from segment `hint`
    /// on (quicker where the times follow one another); returns the
    /// segment, a hint for the next.
    pub fn at_time_from(&self, t: f64, hint: usize, out: &mut [f64]) -> usize {
        let k = self.segment_from(t, hint);
        self.at_segment(k, t, out);
        k
    }

    /// The configuration at time `t` of segment `k` (`segment(t)`).
    fn at_segment(&self, k: usize, t: f64, out: &mut [f64]) {
        let n = self.times.len();
        if t < self.times[0] || n == 1 {
            out.copy_from_slice(self.point(0));
        } else if t >= self.times[n - 1] {
            out.copy_from_slice(self.point(n - 1));
        } else {
            let (t0, t1) = (self.times[k], self.times[k + 1]);
            let u = (t - t0) / (t1 - t0);
            for ((o, a), b) in out.iter_mut().zip(self.point(k)).zip(self.point(k + 1)) {
                *o = a + u * (b - a);
            }
        }
    }
}

/// Where the robot stands against its plan this cycle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Progress {
    /// No plan.
    None,
    /// Within tolerance of the plan at `time_s` along it; `deviation` is
    /// the largest joint offset there, in tolerance units (≤ 1).
    On {
        /// Time along the plan, s.
        time_s: f64,
        /// Largest joint offset, tolerance units.
        deviation: f64,
    },
    /// Farther than tolerance from the plan's path within the search
    /// window; `deviation` at the nearest point found (> 1).
    Off {
        /// Time along the plan of the nearest point, s.
        time_s: f64,
        /// Largest joint offset there, tolerance units.
        deviation: f64,
    },
    /// Within tolerance of the plan's last waypoint.
    Done,
}

/// Follows one robot along its current plan.
#[derive(Debug, Clone)]
pub struct PlanTracker {
    /// Per joint, the tolerance (rad or m, > 0).
    tolerance: Vec<f64>,
    plan: Option<JointPlan>,
    /// Time along the plan where the robot was last seen on it.
    time_s: f64,
    /// How far ahead of `time_s` the search looks, s of plan time.
    window_s: f64,
    /// How far behind it the search looks (0: progress never goes back).
    back_s: f64,
}

impl PlanTracker {
    /// A tracker with per-joint tolerances (each finite and > 0; others are
    /// clamped to the smallest positive `f64`, which no robot meets) and a
    /// search window ahead of the last progress.
    pub fn new(tolerance: &[f64], window_s: f64) -> PlanTracker {
        let tolerance =
            tolerance.iter().map(|&t| if t.is_finite() && t > 0.0 { t } else { f64::MIN_POSITIVE }).collect();
        PlanTracker { tolerance, plan: None, time_s: 0.0, window_s: window_s.max(0.0), back_s: 0.0 }
    }

    /// Lets progress go back by up to `back_s` of plan time (a robot told
    /// to back away along its plan); 0, the default, never goes back.
    pub fn set_back_window(&mut self, back_s: f64) {
        self.back_s = if back_s.is_finite() { back_s.max(0.0) } else { 0.0 };
    }

    /// Replaces the plan (a new plan replaces the old; `None` drops it).
    /// A plan of another joint count is refused and the old one kept.
    pub fn set_plan(&mut self, plan: Option<JointPlan>) -> Result<(), PlanError> {
        if let Some(p) = &plan
            && p.dof() != self.tolerance.len()
        {
            return Err(PlanError::Shape { points: p.len(), dof: self.tolerance.len(), positions: p.positions.len() });
        }
        self.plan = plan;
        self.time_s = 0.0;
        Ok(())
    }

    /// The current plan.
    pub fn plan(&self) -> Option<&JointPlan> {
        self.plan.as_ref()
    }

    /// Takes the robot's configuration `q` and says where it stands. On
    /// plan, progress moves to the nearest point (never back). No
    /// allocation.
    pub fn track(&mut self, q: &[f64]) -> Progress {
        let Some(plan) = &self.plan else { return Progress::None };
        if q.len() != plan.dof() || q.iter().any(|x| !x.is_finite()) {
            return Progress::Off { time_s: self.time_s, deviation: f64::INFINITY };
        }
        let last = plan.len() - 1;
        let (mut best_t, mut best_l2, mut best_inf) = (self.time_s, f64::INFINITY, f64::INFINITY);
        let horizon = self.time_s + self.window_s;
        let from = (self.time_s - self.back_s).max(0.0);
        // The segment holding the last progress (less the back window), then
        // on while in the window.
        let first = plan.times.partition_point(|&x| x <= from).saturating_sub(1);
        if last == 0 {
            let d = self.deviation(q, plan.point(0));
            return if d <= 1.0 { Progress::Done } else { Progress::Off { time_s: 0.0, deviation: d } };
        }
        for k in first..last {
            let (t0, t1) = (plan.times[k], plan.times[k + 1]);
            if t0 > horizon {
                break;
            }
            let (a, b) = (plan.point(k), plan.point(k + 1));
            // Nearest point of segment a→b to q in tolerance units.
            let (mut num, mut den) = (0.0, 0.0);
            for j in 0..plan.dof() {
                let w = 1.0 / self.tolerance[j];
                let (ab, aq) = ((b[j] - a[j]) * w, (q[j] - a[j]) * w);
                num += ab * aq;
                den += ab * ab;
            }
            let mut u = if den > 0.0 { (num / den).clamp(0.0, 1.0) } else { 0.0 };
            // Not behind the last progress (less the back window), nor past
            // the window.
            let lo = ((from - t0) / (t1 - t0)).clamp(0.0, 1.0);
            let hi = ((horizon - t0) / (t1 - t0)).clamp(0.0, 1.0);
            u = u.clamp(lo, hi.max(lo));
            let (mut l2, mut inf) = (0.0, 0.0f64);
            for j in 0..plan.dof() {
                let p = a[j] + u * (b[j] - a[j]);
                let e = (q[j] - p).abs() / self.tolerance[j];
                l2 += e * e;
                inf = inf.max(e);
            }
            // The first minimum on plan is where the robot is: a path that
            // comes back near the same configurations later in the window
            // (a loop, a periodic motion) must not pull progress ahead.
            if best_inf <= 1.0 && l2 > best_l2 {
                break;
            }
            if l2 < best_l2 {
                (best_t, best_l2, best_inf) = (t0 + u * (t1 - t0), l2, inf);
            }
        }
        if best_inf <= 1.0 {
            self.time_s = best_t;
            if best_t >= plan.duration_s() {
                return Progress::Done;
            }
            Progress::On { time_s: best_t, deviation: best_inf }
        } else if self.at_end(q) {
            Progress::Done // there, by a way the search did not follow
        } else {
            Progress::Off { time_s: best_t, deviation: best_inf }
        }
    }

    /// True when a robot at `q` moving at `v` would stand, braking now at
    /// `decel` per joint, farther from the plan's end point than its
    /// tolerance: it is passing the end, not arriving there.
    pub fn passes_end(&self, q: &[f64], v: &[f64], decel: &[f64]) -> bool {
        let Some(plan) = &self.plan else { return false };
        let end = plan.point(plan.len() - 1);
        let mut worst = 0.0f64;
        for j in 0..plan.dof().min(q.len()).min(v.len()).min(decel.len()) {
            let rest = q[j] + v[j] * v[j].abs() / (2.0 * decel[j].max(1e-9));
            worst = worst.max((rest - end[j]).abs() / self.tolerance[j]);
        }
        worst > 1.0
    }

    /// True when `q` is within tolerance of the plan's end point and the
    /// search window from the last progress reaches it. A robot braking to
    /// its plan's end is there before it stands: it is done when its
    /// progress reaches the end, or when it stands there
    /// ([`Progress::Done`] is for the caller, which knows).
    pub fn at_end(&self, q: &[f64]) -> bool {
        self.plan.as_ref().is_some_and(|plan| {
            q.len() == plan.dof()
                && self.deviation(q, plan.point(plan.len() - 1)) <= 1.0
                && self.time_s_reaches_end(plan)
        })
    }

    /// True when the search window from the last progress reaches the
    /// plan's end (a robot at the end point early, e.g. on a path that
    /// returns to its start, is not done before it got there along the plan).
    fn time_s_reaches_end(&self, plan: &JointPlan) -> bool {
        self.time_s + self.window_s >= plan.duration_s()
    }

    /// Largest joint offset between `q` and `p`, in tolerance units.
    fn deviation(&self, q: &[f64], p: &[f64]) -> f64 {
        q.iter().zip(p).zip(&self.tolerance).map(|((a, b), t)| (a - b).abs() / t).fold(0.0, f64::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line() -> JointPlan {
        // Two joints: 0 → 1 rad over 1 s, then back to 0 over the next second.
        JointPlan::new(2, vec![0.0, 1.0, 2.0], vec![0.0, 0.0, 1.0, 0.5, 0.0, 1.0]).unwrap()
    }

    #[test]
    fn a_plans_speed_share_is_its_speed_over_its_fastest() {
        // One joint: 0.1 rad in the first second, 1 rad in the next, then
        // standing for a second.
        let p = JointPlan::new(1, vec![0.0, 1.0, 2.0, 3.0], vec![0.0, 0.1, 1.1, 1.1]).unwrap();
        assert!((p.speed_share(0.5) - 0.1).abs() < 1e-12);
        assert!((p.speed_share(1.5) - 1.0).abs() < 1e-12);
        assert_eq!(p.speed_share(2.5), 0.0, "standing");
        assert!((p.speed_share(-1.0) - 0.1).abs() < 1e-12, "before the start: its first segment");
        assert_eq!(p.speed_share(f64::NAN), 1.0, "no number: as fast as it goes");
        let still = JointPlan::new(1, vec![0.0, 1.0], vec![0.2, 0.2]).unwrap();
        assert_eq!(still.speed_share(0.5), 0.0, "a plan that never moves");
        assert_eq!(JointPlan::new(1, vec![0.0], vec![0.2]).unwrap().speed_share(0.0), 0.0, "one waypoint");
    }

    #[test]
    fn bad_plans_are_refused_with_the_waypoint() {
        assert_eq!(JointPlan::new(2, vec![], vec![]), Err(PlanError::Empty));
        assert!(matches!(JointPlan::new(2, vec![0.0], vec![0.0]), Err(PlanError::Shape { .. })));
        assert_eq!(JointPlan::new(1, vec![0.0, 0.0], vec![0.0, 1.0]), Err(PlanError::TimeOrder { point: 1 }));
        assert_eq!(JointPlan::new(1, vec![0.0, 1.0], vec![0.0, f64::NAN]), Err(PlanError::NotFinite { point: 1 }));
        let mut t = PlanTracker::new(&[0.1], 1.0);
        assert!(t.set_plan(Some(line())).is_err(), "a plan of another joint count is refused");
        assert!(t.plan().is_none());
    }

    #[test]
    fn interpolates_between_waypoints_and_clamps_outside() {
        let p = line();
        let mut q = [0.0; 2];
        p.at_time(0.5, &mut q);
        assert_eq!(q, [0.5, 0.25]);
        p.at_time(-1.0, &mut q);
        assert_eq!(q, [0.0, 0.0]);
        p.at_time(9.0, &mut q);
        assert_eq!(q, [0.0, 1.0]);
    }

    #[test]
    fn a_segment_looked_for_from_a_hint_is_the_one_a_binary_search_finds() {
        let mut rng = crate::model::coverage::Rng::new(7);
        for n in 1..40usize {
            let mut t = 0.0;
            let times: Vec<f64> = (0..n)
                .map(|_| {
                    t += 0.001 + rng.unit();
                    t
                })
                .collect();
            let last = t;
            let p = JointPlan::new(1, times, vec![0.0; n]).unwrap();
            for _ in 0..200 {
                let t = rng.unit() * (last + 2.0) - 1.0;
                let hint = (rng.unit() * (n as f64 + 3.0)) as usize;
                assert_eq!(p.segment_from(t, hint), p.segment(t), "n {n} t {t} hint {hint}");
                let (mut x, mut y) = ([0.0], [0.0]);
                p.at_time(t, &mut x);
                p.at_time_from(t, hint, &mut y);
                assert_eq!(x, y);
            }
            // Exactly at each waypoint, from every hint.
            for k in 0..n {
                for hint in 0..n + 2 {
                    assert_eq!(p.segment_from(p.time(k), hint), p.segment(p.time(k)), "n {n} k {k} hint {hint}");
                }
            }
        }
    }

    #[test]
    fn travel_counts_every_move_between_two_plan_times_both_ways() {
        let p = line();
        let sum = |a: f64, b: f64| {
            let mut out = [0.0; 2];
            p.travel(a, b, &mut out);
            out
        };
        let close = |x: [f64; 2], y: [f64; 2]| (x[0] - y[0]).abs() < 1e-12 && (x[1] - y[1]).abs() < 1e-12;
        assert!(close(sum(0.0, 2.0), [2.0, 1.0]), "out and back: {:?}", sum(0.0, 2.0));
        assert!(close(sum(0.5, 1.5), [1.0, 0.5]), "{:?}", sum(0.5, 1.5));
        assert!(close(sum(0.25, 0.75), [0.5, 0.25]), "{:?}", sum(0.25, 0.75));
        assert!(close(sum(-3.0, 9.0), [2.0, 1.0]), "clamped to the plan: {:?}", sum(-3.0, 9.0));
        assert_eq!(sum(1.5, 0.5), [0.0, 0.0], "a backwards span adds nothing");
        // Against the sum of many small steps, over uneven waypoints.
        let times = vec![0.0, 0.1, 0.35, 0.4, 1.0];
        let positions = vec![0.0, 1.0, 0.3, 0.2, -0.1, 0.9, 0.5, 0.9, 0.2, -2.0];
        let p = JointPlan::new(2, times, positions).unwrap();
        let (a, b) = (0.05, 0.93);
        let mut fast = [0.0; 2];
        p.travel(a, b, &mut fast);
        let (mut slow, mut prev, mut q) = ([0.0; 2], [0.0; 2], [0.0; 2]);
        p.at_time(a, &mut prev);
        for k in 1..=88_000 {
            p.at_time(a + (b - a) * k as f64 / 88_000.0, &mut q);
            for j in 0..2 {
                slow[j] += (q[j] - prev[j]).abs();
            }
            prev = q;
        }
        assert!(
            close(fast.map(|x| x * 1e3).map(f64::round), slow.map(|x| x * 1e3).map(f64::round)),
            "{fast:?} vs {slow:?}"
        );
    }

    #[test]
    fn follows_a_robot_along_the_plan_and_never_back() {
        let mut t = PlanTracker::new(&[0.05, 0.05], 0.5);
        assert_eq!(t.track(&[0.0, 0.0]), Progress::None);
        t.set_plan(Some(line())).unwrap();
        let mut q = [0.0; 2];
        let mut last = -1.0;
        for k in 0..=20 {
            let s = k as f64 * 0.09;
            t.plan().unwrap().at_time(s, &mut q);
            q[0] += 0.02; // a steady offset within tolerance
            match t.track(&q) {
                Progress::On { time_s, deviation } => {
                    assert!(time_s >= last, "progress went back: {time_s} < {last}");
                    assert!((time_s - s).abs() < 0.05, "at {s} s tracked {time_s} s");
                    assert!(deviation <= 1.0);
                    last = time_s;
                }
                other => panic!("at {s} s: {other:?}"),
            }
        }
        // Joint 0 comes back over the same values on the way down: the
        // tracker must not jump back to the way up.
        assert!(last > 1.0);
    }

    #[test]
    fn a_path_that_comes_back_does_not_pull_progress_ahead() {
        // Out along joint 0 and back 1 mm higher on joint 1, within 0.4 s
        // of plan time: both passes lie within the tolerance of a robot on
        // the way out, the way back a little nearer. It is on the way out.
        let times: Vec<f64> = (0..=8).map(|k| k as f64 * 0.05).collect();
        let positions = times.iter().flat_map(|&t| if t <= 0.2 { [t, 0.0] } else { [0.4 - t, 0.001] }).collect();
        let mut tr = PlanTracker::new(&[0.05, 0.05], 1.0);
        tr.set_plan(Some(JointPlan::new(2, times, positions).unwrap())).unwrap();
        match tr.track(&[0.1, 0.0008]) {
            Progress::On { time_s, .. } => assert!((time_s - 0.1).abs() < 1e-9, "tracked at {time_s} s"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn off_plan_when_a_joint_leaves_its_tolerance_and_done_at_the_end() {
        let mut t = PlanTracker::new(&[0.05, 0.05], 0.5);
        t.set_plan(Some(line())).unwrap();
        assert!(matches!(t.track(&[0.3, 0.15]), Progress::On { .. }));
        match t.track(&[0.3, 0.3]) {
            Progress::Off { deviation, .. } => assert!(deviation > 1.0 && deviation < 4.0, "{deviation}"),
            other => panic!("{other:?}"),
        }
        // At the end point while still early on the plan: not done.
        assert!(!matches!(t.track(&[0.0, 1.0]), Progress::Done));
        let mut q = [0.0; 2];
        for k in 0..=40 {
            t.plan().unwrap().at_time(0.3 + k as f64 * 0.05, &mut q);
            t.track(&q);
        }
        assert_eq!(t.track(&[0.0, 1.0]), Progress::Done);
        // A new plan replaces the old one and starts from its beginning.
        t.set_plan(Some(line())).unwrap();
        assert!(matches!(t.track(&[0.0, 0.0]), Progress::On { time_s, .. } if time_s < 0.01));
        t.set_plan(None).unwrap();
        assert_eq!(t.track(&[0.0, 0.0]), Progress::None);
    }

    #[test]
    fn a_nan_configuration_is_off_plan() {
        let mut t = PlanTracker::new(&[0.05, 0.05], 0.5);
        t.set_plan(Some(line())).unwrap();
        assert!(matches!(t.track(&[f64::NAN, 0.0]), Progress::Off { deviation, .. } if deviation.is_infinite()));
    }
}
