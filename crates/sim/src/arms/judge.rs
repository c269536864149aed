//! The oracle's judgements: contacts and each arm's least clearance, an
//! episode's real hazards and unguarded makespan, and whether a stop was
//! false.

use super::*;

impl Sim {
    /// Contacts of the arms at `states` (the oracle): by the spheres, and
    /// with `exact_oracle`, where the spheres of two links come within the
    /// clearance margin, by their exact shapes as well ([`Sim::exact_gap`]);
    /// the least clearance is exact up to `within`.
    pub(crate) fn contacts(&mut self, states: &[SimArm], within: f32) -> Contacts {
        let qs: Vec<&[f64]> = states.iter().map(|s| s.q.as_slice()).collect();
        self.contacts_at(&qs, within)
    }

    /// [`Sim::contacts`] of the arms at configurations `qs`; each arm's
    /// least clearance (to the cell, itself and the others) is left in
    /// [`Sim::arm_least`].
    pub(crate) fn contacts_at(&mut self, qs: &[&[f64]], within: f32) -> Contacts {
        let mut out = Contacts { min: f64::INFINITY, ..Default::default() };
        let n = qs.len();
        let margin = self.cell.margins.clearance_m as f32;
        for (r, q) in qs.iter().enumerate() {
            let (cell, own) = self.arm_gaps(r, q, within);
            let exact = self.opts.exact_oracle && own <= f64::from(margin);
            let own = if exact { self.exact_own(r, q, within) } else { own };
            let c = cell.min(own);
            self.arm_min[r] = c;
            out.min = out.min.min(c);
            out.cell |= not_above(cell, 0.0);
            out.selfc |= !not_above(cell, 0.0) && not_above(own, 0.0);
        }
        for ra in 0..n {
            for rb in (ra + 1)..n {
                for la in 0..self.boxes[ra].len() {
                    for lb in 0..self.boxes[rb].len() {
                        if self.guard.pair_matters(ra, la, rb, lb) {
                            let g = self.link_pair_gap(ra, la, rb, lb, within);
                            let g = if self.opts.exact_oracle && g <= margin {
                                self.exact_gap(g, (ra, la, qs[ra]), (rb, lb, qs[rb]))
                            } else {
                                g
                            };
                            out.min = out.min.min(f64::from(g));
                            self.arm_min[ra] = self.arm_min[ra].min(f64::from(g));
                            self.arm_min[rb] = self.arm_min[rb].min(f64::from(g));
                            out.robot |= not_above(g, 0.0);
                        }
                    }
                }
            }
        }
        out
    }

    /// Whether arm `r`'s way on (straight in joint space from where it
    /// stands to each goal it has left, in turn, sampled every 0.01 rad)
    /// comes within the clearance margin of an arm that has finished and
    /// stands parked, by their spheres: a stall no guard can end without
    /// that arm moving again.
    pub(crate) fn blocked_by_parked(&mut self, arms: &[SimArm], r: usize) -> bool {
        let parked: Vec<usize> = (0..arms.len()).filter(|&o| o != r && arms[o].done()).collect();
        if parked.is_empty() || arms[r].done() {
            return false;
        }
        let margin = self.cell.margins.clearance_m as f32;
        for &o in &parked {
            self.arm_gaps(o, &arms[o].q, margin);
        }
        let (mut from, mut q) = (arms[r].q.clone(), arms[r].q.clone());
        for goal in arms[r].goals.iter().rev() {
            let far = from.iter().zip(goal).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
            let n = ((far / 0.01).ceil() as usize).max(1);
            for k in 1..=n {
                for (j, x) in q.iter_mut().enumerate() {
                    *x = from[j] + (goal[j] - from[j]) * k as f64 / n as f64;
                }
                self.arm_gaps(r, &q, margin);
                for &o in &parked {
                    let (a, b) = (r.min(o), r.max(o));
                    for la in 0..self.boxes[a].len() {
                        for lb in 0..self.boxes[b].len() {
                            if self.guard.pair_matters(a, la, b, lb)
                                && self.link_pair_gap(a, la, b, lb, margin) <= margin
                            {
                                return true;
                            }
                        }
                    }
                }
            }
            from.clone_from(goal);
        }
        false
    }

    /// Arm `r`'s least clearance at the last [`Sim::contacts_at`], m
    /// (exact up to its `within`).
    pub(crate) fn arm_least(&self, r: usize) -> f64 {
        self.arm_min.get(r).copied().unwrap_or(f64::INFINITY)
    }

    /// The spheres' gap `g` between two links, raised to the distance
    /// between their solid exact shapes (meshes as their convex hulls, which
    /// contain them: [`Guard::exact_link_distance`]) where that is larger:
    /// both are no more than the true distance.
    fn exact_gap(&self, g: f32, (ra, la, qa): (usize, usize, &[f64]), (rb, lb, qb): (usize, usize, &[f64])) -> f32 {
        match self.guard.exact_link_distance((ra, la, qa), (rb, lb, qb)) {
            Some(d) => g.max(d as f32),
            None => g,
        }
    }

    /// Arm `r`'s least clearance to itself, posed at `q` ([`Sim::arm_gaps`]),
    /// each pair of links within the clearance margin by their spheres
    /// refined by their exact shapes ([`Sim::exact_gap`]).
    fn exact_own(&self, r: usize, q: &[f64], within: f32) -> f64 {
        let (nl, margin) = (self.boxes[r].len(), self.cell.margins.clearance_m as f32);
        let mut own = f32::INFINITY;
        for la in 0..nl {
            for lb in (la + 1)..nl {
                if self.guard.pair_matters(r, la, r, lb) {
                    let g = self.link_pair_gap(r, la, r, lb, within);
                    own = own.min(if g <= margin { self.exact_gap(g, (r, la, q), (r, lb, q)) } else { g });
                }
            }
        }
        f64::from(own)
    }

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
        rep.arm(r).stops += 1;
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
