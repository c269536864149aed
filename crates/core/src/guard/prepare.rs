//! Preparing a robot for the checks: its data problems, its stopping path
//! planned and sampled, the samples posed in batches.

use super::*;

impl Guard {
    /// Estimates, plans and poses one arm's stopping path.
    pub(super) fn prepare(&mut self, ri: usize, now_s: f64) {
        let settings = self.settings;
        let step_m = self.margins.clearance_m;
        let a = &mut self.arms[ri];
        a.track = Track::NONE;
        a.problem = None;
        a.n_cfg = 0;
        a.inflate = 0.0;
        a.present = a.est.count() > 0;
        let dof = a.decel.len();
        // A state refused since the last cycle names the stop; then the
        // refusal still standing (no state accepted since); then silence
        // (the watchdog).
        if let Some(e) = a.rejected_since.take() {
            a.problem = Some((Reason::BadJointState(e), StopKind::Immediate));
        }
        let Some(last) = a.est.last_stamp() else {
            let r = a.rejected.map_or(Reason::NoJointState, Reason::BadJointState);
            a.problem.get_or_insert((r, StopKind::Immediate));
            return;
        };
        // A refusal still standing (no state accepted since) outranks
        // staleness: the last thing the robot sent was refused, and that is
        // what its diagnostics must name for as long as it lasts.
        if let (None, Some(e)) = (a.problem, a.rejected) {
            a.problem = Some((Reason::BadJointState(e), StopKind::Immediate));
        }
        let age = now_s - last;
        if age > settings.watchdog_s && a.problem.is_none() {
            a.problem = Some((Reason::StaleJointState { age_s: age as f32 }, StopKind::Immediate));
        }
        let motion = a.est.motion();
        if let (None, Ok(mo)) = (a.problem, &motion)
            && let Some((j, (&v, &lim))) = mo.v.iter().zip(&a.speed_limit).enumerate().find(|(_, (v, l))| v.abs() > **l)
        {
            let limit = (lim / IMPLAUSIBLE_SPEED_FACTOR) as f32;
            a.problem = Some((
                Reason::ImplausibleMotion { joint: j as u16, speed: v.abs() as f32, limit },
                StopKind::Immediate,
            ));
        }
        match motion {
            Ok(mo) if a.problem.is_none() => {
                let react = a.reaction_s + age.max(0.0);
                a.plan = forecast::plan(
                    mo.v,
                    mo.a,
                    &a.decel,
                    &a.lever,
                    react,
                    step_m,
                    settings.max_path_samples,
                    &mut a.link_e,
                );
                let dt = a.plan.time(1);
                for j in 0..dof {
                    let vr = mo.v[j] + forecast::reaction_accel(mo.v[j], mo.a[j]) * react;
                    a.speed[j] = mo.v[j].abs().max(vr.abs()) * dt / 2.0;
                }
                for (p, e) in a.pair_e.iter_mut().enumerate() {
                    *e = a.pair_lever[p * dof..(p + 1) * dof].iter().zip(&a.speed).map(|(l, s)| l * s).sum::<f64>()
                        as f32;
                }
                a.n_cfg = a.plan.intervals + 1;
                forecast::braking_decel(a.stop_mode, mo.v, mo.a, &a.decel, react, &mut a.brake);
                for k in 0..a.n_cfg {
                    forecast::config_at(&mo, &a.brake, react, a.plan.time(k), &mut a.qbuf[k * dof..(k + 1) * dof]);
                }
                a.inflate = a.plan.inflation_m as f32;
            }
            other => {
                if let Err(w) = other
                    && a.problem.is_none()
                {
                    a.problem = Some((
                        Reason::WarmingUp { have: w.have.min(u16::MAX as usize) as u16, need: w.need as u16 },
                        StopKind::Immediate,
                    ));
                }
                // Still an obstacle to the others: its newest configuration.
                let q = a.est.last_positions().expect("a sample exists");
                a.qbuf[..dof].copy_from_slice(q);
                a.plan = StopPlan::STILL;
                a.link_e.fill(0.0);
                a.pair_e.fill(0.0);
                a.n_cfg = 1;
            }
        }
        {
            let r = &a.batches[0].r;
            let link = &a.batches[0].link;
            for sl in 0..a.slots {
                a.rin[sl] = r[sl] + a.link_e[link[sl] as usize] as f32;
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
        let nq = a.n_cfg * dof;
        if a.posed_n == a.n_cfg && a.qbuf[..nq].iter().zip(&a.posed_q[..nq]).all(|(x, y)| x.to_bits() == y.to_bits()) {
            return;
        }
        a.posed_n = 0;
        // Pad the last batch with the last configuration and pose.
        let nb = a.n_cfg.div_ceil(BATCH);
        let last_k = a.n_cfg - 1;
        a.bounds =
            [f32::INFINITY, f32::INFINITY, f32::INFINITY, f32::NEG_INFINITY, f32::NEG_INFINITY, f32::NEG_INFINITY];
        for bi in 0..nb {
            let qb = &a.qbuf;
            let qs: [&[f64]; BATCH] = std::array::from_fn(|l| {
                let k = (bi * BATCH + l).min(last_k);
                &qb[k * dof..(k + 1) * dof]
            });
            if a.poser.pose_batch(&qs, &mut a.batches[bi]).is_err() {
                a.problem = Some((Reason::NoJointState, StopKind::Immediate));
                a.n_cfg = 0;
                return;
            }
            // The box of all spheres, from each link's (made while posing).
            let pb = &a.batches[bi];
            for &(l, _, _) in &a.ranges {
                let bx = &pb.boxes[l as usize];
                for c in 0..3 {
                    a.bounds[c] = bx[c].iter().copied().fold(a.bounds[c], f32::min);
                    a.bounds[3 + c] = bx[3 + c].iter().copied().fold(a.bounds[3 + c], f32::max);
                }
            }
        }
        a.posed_q[..nq].copy_from_slice(&a.qbuf[..nq]);
        a.posed_n = a.n_cfg;
    }
}
