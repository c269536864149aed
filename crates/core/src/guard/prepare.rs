//! Preparing a robot for the checks: its data problems, its stopping path
//! planned and sampled, the samples posed in batches.

use super::*;

impl Guard {
    /// Estimates, plans and poses one arm's stopping path.
    pub(super) fn prepare(&mut self, ri: usize, now_s: f64) {
        let settings = self.settings;
        let step_m = self.margins.clearance_m;
        let a = &mut self.arms[ri];
        a.scratch.track = Track::NONE;
        a.scratch.problem = None;
        a.scratch.n_cfg = 0;
        a.scratch.inflate = 0.0;
        a.scratch.present = a.state.est.count() > 0;
        let dof = a.model.decel.len();
        // A state refused since the last cycle names the stop; then the
        // refusal still standing (no state accepted since); then silence
        // (the watchdog).
        if let Some(e) = a.state.rejected_since.take() {
            a.scratch.problem = Some((Reason::BadJointState(e), StopKind::Immediate));
        }
        let Some(last) = a.state.est.last_stamp() else {
            let r = a.state.rejected.map_or(Reason::NoJointState, Reason::BadJointState);
            a.scratch.problem.get_or_insert((r, StopKind::Immediate));
            return;
        };
        // A refusal still standing (no state accepted since) outranks
        // staleness: the last thing the robot sent was refused, and that is
        // what its diagnostics must name for as long as it lasts.
        if let (None, Some(e)) = (a.scratch.problem, a.state.rejected) {
            a.scratch.problem = Some((Reason::BadJointState(e), StopKind::Immediate));
        }
        let age = now_s - last;
        if age > settings.watchdog_s && a.scratch.problem.is_none() {
            a.scratch.problem = Some((Reason::StaleJointState { age_s: age as f32 }, StopKind::Immediate));
        }
        let motion = a.state.est.motion();
        if let (None, Ok(mo)) = (a.scratch.problem, &motion)
            && let Some((j, (&v, &lim))) =
                mo.v.iter().zip(&a.model.speed_limit).enumerate().find(|(_, (v, l))| v.abs() > **l)
        {
            let limit = (lim / IMPLAUSIBLE_SPEED_FACTOR) as f32;
            a.scratch.problem = Some((
                Reason::ImplausibleMotion { joint: j as u16, speed: v.abs() as f32, limit },
                StopKind::Immediate,
            ));
        }
        match motion {
            Ok(mo) if a.scratch.problem.is_none() => {
                let react = a.model.reaction_s + age.max(0.0);
                a.scratch.plan = forecast::plan(
                    mo.v,
                    mo.a,
                    &a.model.decel,
                    &a.model.lever,
                    react,
                    step_m,
                    settings.max_path_samples,
                    &mut a.scratch.link_inflation,
                );
                let dt = a.scratch.plan.time(1);
                for j in 0..dof {
                    let vr = mo.v[j] + forecast::reaction_accel(mo.v[j], mo.a[j]) * react;
                    a.scratch.speed[j] = mo.v[j].abs().max(vr.abs()) * dt / 2.0;
                }
                for (p, e) in a.scratch.pair_inflation.iter_mut().enumerate() {
                    *e = a.model.pair_lever[p * dof..(p + 1) * dof]
                        .iter()
                        .zip(&a.scratch.speed)
                        .map(|(l, s)| l * s)
                        .sum::<f64>() as f32;
                }
                a.scratch.n_cfg = a.scratch.plan.intervals + 1;
                forecast::braking_decel(a.model.stop_mode, mo.v, mo.a, &a.model.decel, react, &mut a.scratch.brake);
                for k in 0..a.scratch.n_cfg {
                    forecast::config_at(
                        &mo,
                        &a.scratch.brake,
                        react,
                        a.scratch.plan.time(k),
                        &mut a.scratch.path_q[k * dof..(k + 1) * dof],
                    );
                }
                a.scratch.inflate = a.scratch.plan.inflation_m as f32;
            }
            other => {
                if let Err(w) = other
                    && a.scratch.problem.is_none()
                {
                    a.scratch.problem = Some((
                        Reason::WarmingUp { have: w.have.min(u16::MAX as usize) as u16, need: w.need as u16 },
                        StopKind::Immediate,
                    ));
                }
                // Still an obstacle to the others: its newest configuration.
                let q = a.state.est.last_positions().expect("a sample exists");
                a.scratch.path_q[..dof].copy_from_slice(q);
                a.scratch.plan = StopPlan::STILL;
                a.scratch.link_inflation.fill(0.0);
                a.scratch.pair_inflation.fill(0.0);
                a.scratch.n_cfg = 1;
            }
        }
        {
            let r = &a.scratch.batches[0].r;
            let link = &a.scratch.batches[0].link;
            for sl in 0..a.model.slots {
                a.scratch.inflated_r[sl] = r[sl] + a.scratch.link_inflation[link[sl] as usize] as f32;
            }
        }
        Self::pose_path(a, dof);
    }

    /// Poses the arm's sampled configurations in batches, with the box of
    /// each batch's spheres; skipped when they are the ones posed last
    /// cycle, bit for bit.
    fn pose_path(a: &mut Arm, dof: usize) {
        // An arm holding still (or an unchanged state) has the same
        // configurations as last time: its poses and boxes stand.
        let nq = a.scratch.n_cfg * dof;
        if a.scratch.posed_n == a.scratch.n_cfg
            && a.scratch.path_q[..nq].iter().zip(&a.scratch.posed_q[..nq]).all(|(x, y)| x.to_bits() == y.to_bits())
        {
            return;
        }
        a.scratch.posed_n = 0;
        // Pad the last batch with the last configuration and pose.
        let nb = a.scratch.n_cfg.div_ceil(BATCH);
        let last_k = a.scratch.n_cfg - 1;
        a.scratch.bounds =
            [f32::INFINITY, f32::INFINITY, f32::INFINITY, f32::NEG_INFINITY, f32::NEG_INFINITY, f32::NEG_INFINITY];
        for bi in 0..nb {
            let qb = &a.scratch.path_q;
            let qs: [&[f64]; BATCH] = std::array::from_fn(|l| {
                let k = (bi * BATCH + l).min(last_k);
                &qb[k * dof..(k + 1) * dof]
            });
            if a.model.poser.pose_batch(&qs, &mut a.scratch.batches[bi]).is_err() {
                a.scratch.problem = Some((Reason::NoJointState, StopKind::Immediate));
                a.scratch.n_cfg = 0;
                return;
            }
            // The box of all spheres, from each link's (made while posing).
            let batch = &a.scratch.batches[bi];
            for &(l, _, _) in &a.model.ranges {
                let bx = &batch.boxes[l as usize];
                for c in 0..3 {
                    a.scratch.bounds[c] = bx[c].iter().copied().fold(a.scratch.bounds[c], f32::min);
                    a.scratch.bounds[3 + c] = bx[3 + c].iter().copied().fold(a.scratch.bounds[3 + c], f32::max);
                }
            }
        }
        a.scratch.posed_q[..nq].copy_from_slice(&a.scratch.path_q[..nq]);
        a.scratch.posed_n = a.scratch.n_cfg;
    }
}
