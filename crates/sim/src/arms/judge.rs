//! The oracle's judgements: an episode's real hazards and unguarded
//! makespan, and whether a stop was false.

use super::*;

impl Sim {
    /// Whether `arms`, run without the guard (every plan at full pace,
    /// nobody stopping) for at most `limit_s`, come within the clearance
    /// margin of the cell, each other or themselves: the episode holds a
    /// real hazard.
    pub(crate) fn unguarded_hazard(&mut self, arms: &[SimArm], limit_s: f64) -> bool {
        let mut world = arms.to_vec();
        let margin = self.cell.margins.clearance_m;
        let steps = (limit_s / self.opts.dt_s).ceil() as usize;
        for k in 0..steps {
            if world.iter().all(SimArm::done) {
                return false;
            }
            self.advance(&mut world, k as f64 * self.opts.dt_s);
            if not_above(self.contacts(&world, margin as f32).min, margin) {
                return true;
            }
        }
        false
    }

    /// The makespan without a guard: per arm, its plans' durations in turn;
    /// the longest.
    pub(crate) fn unguarded_makespan(&self, arms: &[SimArm]) -> f64 {
        let mut worst = 0.0f64;
        for (r, a) in arms.iter().enumerate() {
            let decel = &self.cell.manipulators[r].max_decel;
            let (mut q, mut total) = (a.q.clone(), 0.0);
            for g in a.goals.iter().rev() {
                if let Some(p) = straight_plan(&q, g, &self.vmax[r], decel) {
                    total += p.duration_s();
                }
                q.clone_from(g);
            }
            worst = worst.max(total);
        }
        worst
    }

    /// Counts a new stop of arm `r` at `t`, and judges it: false when
    /// continuing would have kept every clearance above the margin; then
    /// its cause (forecast by extrapolation, or on plan with the clearance
    /// shrinking or growing).
    pub(crate) fn judge_stop(&mut self, rep: &mut SimReport, arms: &[SimArm], r: usize, t: f64, class: usize) {
        rep.stops += 1;
        rep.stops_for[class] += 1;
        let planned = matches!(self.guard.plan_state(r), Some(PlanState::On { .. }));
        rep.stops_planned += usize::from(planned);
        let horizon = self.guard.plan(r).map_or(0.0, |p| p.horizon_s);
        let least = self.least_if_continued(arms, r, t, horizon + self.opts.false_stop_extra_s);
        let clear = least > self.cell.margins.clearance_m;
        rep.false_stops += usize::from(clear);
        rep.false_for[class] += usize::from(clear);
        rep.false_stops_touch += usize::from(least > 0.0);
        if clear {
            rep.false_planned += usize::from(planned);
            if !planned {
                rep.false_extrapolated += 1;
            } else {
                // The trend: the arm's clearance one cycle on, had it continued.
                self.contacts(arms, f32::INFINITY);
                let before = self.arm_min[r];
                let mut world = arms.to_vec();
                world[r].brake_at = None;
                self.advance(&mut world, t);
                self.contacts(&world, f32::INFINITY);
                if self.arm_min[r] < before {
                    rep.false_approaching += 1;
                } else {
                    rep.false_separating += 1;
                }
            }
        }
    }

    /// The least clearance (exact up to the clearance margin) over the
    /// next `horizon_s` if arm `r` kept going (stop cancelled), the others
    /// as they are.
    fn least_if_continued(&mut self, states: &[SimArm], r: usize, t0: f64, horizon_s: f64) -> f64 {
        let mut world = states.to_vec();
        world[r].brake_at = None;
        let steps = (horizon_s / self.opts.dt_s).ceil() as usize;
        let within = self.cell.margins.clearance_m as f32;
        let mut least = f64::INFINITY;
        for k in 0..steps {
            self.advance(&mut world, t0 + k as f64 * self.opts.dt_s);
            least = least.min(self.contacts(&world, within).min);
            if least <= 0.0 {
                break;
            }
        }
        least
    }
}
