//! Preparing a robot for the checks: its data problems, its stopping path
//! planned and sampled, the samples posed in batches.

use super::*;

/// A robot on plan goes back along it when its pace along the plan is
/// below minus this (plan seconds per second): a retreat, not the jitter of
/// a robot braking to a stand on its plan.
pub const REVERSE_PACE: f64 = 0.05;

/// A robot on plan that came near something last cycle, on a path shorter
/// than `max_path_samples` steps of the clearance margin, is sampled again with
/// steps this many times shorter (up to that cap): its spheres are
/// inflated that much less where a stop is decided, for at most the
/// samples any path may have.
pub const NEAR_STEP_DIVISOR: f64 = 4.0;

/// Clears what robot `a`'s last cycle found and returns what decides
/// whether this one samples finer: its least clearances by class, and
/// whether it came within reach of another robot.
fn start_cycle(a: &mut Arm) -> ([f32; 3], bool) {
    let last = (a.scratch.track.class_best, a.scratch.track.robot_near);
    a.scratch.track = Track::NONE;
    (a.scratch.forecast.problem, a.scratch.forecast.n_cfg, a.scratch.posed.inflate) = (None, 0, 0.0);
    a.scratch.forecast.present = a.state.est.count() > 0;
    (a.scratch.forecast.borne_out, a.scratch.forecast.at_rest, a.scratch.forecast.reversing) = (false, false, false);
    last
}

/// A joint estimated faster than its plausible speed ([`IMPLAUSIBLE_SPEED_FACTOR`]).
fn implausible(mo: &forecast::Motion<'_>, speed_limit: &[f64]) -> Option<Reason> {
    let (j, (&v, &lim)) = mo.v.iter().zip(speed_limit).enumerate().find(|(_, (v, l))| v.abs() > **l)?;
    let limit = (lim / IMPLAUSIBLE_SPEED_FACTOR) as f32;
    Some(Reason::ImplausibleMotion { joint: j as u16, speed: v.abs() as f32, limit })
}

/// Whether last cycle's least clearances (`[cell, own links, robots]`)
/// came near: the cell or a robot within the release margin plus this
/// path's inflation, its own links within the release margin.
fn came_close([cell, own, robots]: [f32; 3], release: f32, inflate: f32) -> bool {
    let within = |c: f32, reach: f32| c <= reach || c.is_nan();
    within(cell, release + inflate) || within(robots, release + inflate) || within(own, release)
}

/// A robot without a stopping path this cycle (warming up, or stopped
/// for its data) is still an obstacle to the others: its newest
/// configuration, uninflated, stamped `last`.
fn stand_still(a: &mut Arm, last: f64, dof: usize) {
    // invariant: only a robot with an accepted sample stands still
    let q = a.state.est.last_positions().expect("a sample exists");
    a.scratch.forecast.path_q[..dof].copy_from_slice(q);
    a.scratch.forecast.plan = StopPlan::STILL;
    a.scratch.posed.link_inflation.fill(0.0);
    a.scratch.posed.pair_inflation.fill(0.0);
    a.scratch.forecast.n_cfg = 1;
    a.scratch.forecast.t0 = last;
}

/// Each slot's radius plus its link's inflation this cycle.
fn inflate_slots(a: &mut Arm) {
    let r = &a.scratch.posed.batches[0].r;
    let link = &a.scratch.posed.batches[0].link;
    for sl in 0..a.model.slots {
        a.scratch.posed.inflated_r[sl] = r[sl] + a.scratch.posed.link_inflation[link[sl] as usize] as f32;
    }
}

/// The prepare stage for one arm: its data problem, or its stopping path
/// estimated, planned and posed (`backing`: its last grant sends it back
/// along its plan).
// long: the data problems in their order of precedence, then the path: the order is the rule
pub(super) fn prepare(
    a: &mut Arm,
    now_s: f64,
    (settings, margins): (&GuardSettings, &Margins),
    (backing, short_of_end): (bool, bool),
) {
    let step_m = margins.clearance_m;
    let release = margins.release_m as f32;
    let (last_class, last_robot_near) = start_cycle(a);
    let dof = a.model.decel.len();
    // A state refused since the last cycle names the stop; then the
    // refusal still standing (no state accepted since); then silence.
    if let Some(e) = a.state.rejected_since.take() {
        a.scratch.forecast.problem = Some((Reason::BadJointState(e), StopKind::Immediate));
    }
    let Some(last) = a.state.est.last_stamp() else {
        let r = a.state.rejected.map_or(Reason::NoJointState, Reason::BadJointState);
        a.scratch.forecast.problem.get_or_insert((r, StopKind::Immediate));
        return;
    };
    // A refusal still standing (no state accepted since) outranks
    // staleness: the last thing the robot sent was refused, and that is
    // what its diagnostics must name for as long as it lasts.
    if let (None, Some(e)) = (a.scratch.forecast.problem, a.state.rejected) {
        a.scratch.forecast.problem = Some((Reason::BadJointState(e), StopKind::Immediate));
    }
    let age = now_s - last;
    if age > settings.watchdog_s && a.scratch.forecast.problem.is_none() {
        a.scratch.forecast.problem = Some((Reason::StaleJointState { age_s: age as f32 }, StopKind::Immediate));
    }
    a.state.est_period = a.state.est.period().unwrap_or(0.0).max(0.0);
    let motion = a.state.est.motion();
    if let (None, Ok(mo)) = (a.scratch.forecast.problem, &motion) {
        a.scratch.forecast.problem = implausible(mo, &a.model.speed_limit).map(|r| (r, StopKind::Immediate));
    }
    match motion {
        Ok(mo) if a.scratch.forecast.problem.is_none() => {
            // A stop this cycle decides takes effect after the reaction
            // time; one decided next cycle, a period later. The path
            // covers both, so a conflict first seen next cycle is one
            // this cycle's check already cleared (and the time windows
            // hold for either).
            let period = a.state.est_period;
            let extra = age.max(0.0) + period;
            let learned_r;
            (a.scratch.forecast.beyond, learned_r) = apply_stopping(&a.model, &mut a.state.learned_decel, &mo, extra);
            let learned = learned_r.map(|r| (&a.state.learned_decel[..], r + extra));
            let react = a.model.reaction_s + age.max(0.0) + period;
            let seen = period + age.max(0.0);
            a.scratch.forecast.t0 = mo.stamp_s;
            a.scratch.forecast.at_rest = mo.v.iter().all(|v| v.abs() <= arbitrate::REST_SPEED);
            let rest = (a.scratch.forecast.at_rest, short_of_end);
            let on = path::follow_plan(&mut a.state.follow, &mo, &a.model.decel, now_s, rest);
            a.scratch.forecast.borne_out = on.is_some() || mo.step_follows;
            let cap = settings.max_path_samples;
            let follow = (&a.state.follow, backing);
            path::forecast(&a.model, &mut a.scratch, follow, &mo, on, (react, learned), seen, step_m, cap);
            // Where the cap binds, a robot that came near something last
            // cycle is sampled again, finer (less inflation): near the
            // cell or a robot within the release margin plus this
            // path's inflation, near its own links within the release
            // margin, or within reach of another robot's path box.
            // Judged from last cycle's outcome, so every way of
            // splitting a cycle samples alike.
            let near = settings.near_path_samples;
            let close = last_robot_near || came_close(last_class, release, a.scratch.posed.inflate);
            // (The cap binds on the path's own intervals: a way back
            // appended to it has its own.)
            // On plan under the cap: [`NEAR_STEP_DIVISOR`] times finer.
            let binds = a.scratch.forecast.plan.intervals >= cap;
            if near > cap && close && (binds || on.is_some()) {
                let follow = (&a.state.follow, backing);
                let (step, n) = if binds { (step_m, near) } else { (step_m / NEAR_STEP_DIVISOR, cap) };
                path::forecast(&a.model, &mut a.scratch, follow, &mo, on, (react, learned), seen, step, n);
            }
        }
        other => {
            if let Err(w) = other
                && a.scratch.forecast.problem.is_none()
            {
                a.scratch.forecast.problem = Some((
                    Reason::WarmingUp { have: w.have.min(u16::MAX as usize) as u16, need: w.need as u16 },
                    StopKind::Immediate,
                ));
            }
            stand_still(a, last, dof);
        }
    }
    inflate_slots(a);
    pose_path(a, dof);
}

/// With a learned stopping model, this cycle's reaction time (returned)
/// and per-joint decelerations (into `decel`) for an extrapolated
/// stopping path: the path from each joint's speed after the reaction
/// phase (`extra_s` longer than the model's reaction: the sample's age
/// and a period) is exactly as long as the model's bound, or as the
/// configured figures make it where the model does not cover the
/// speed. Also returns the first joint moving faster than any recorded
/// stop.
fn apply_stopping(
    model: &ArmModel,
    decel: &mut [f64],
    mo: &forecast::Motion<'_>,
    extra_s: f64,
) -> (Option<BeyondModel>, Option<f64>) {
    let Some(st) = model.stopping.as_ref() else { return (None, None) };
    let r = st.reaction_s().unwrap_or(model.reaction_s);
    let react = r + extra_s;
    let mut beyond = None;
    for j in 0..model.decel.len() {
        let w = mo.v[j] + forecast::reaction_accel(mo.v[j], mo.a[j]) * react;
        let (d, src) = st.decel_for(j, w, mo.q[j], r, model.decel[j], model.reaction_s);
        decel[j] = d;
        if src == forecast::stopping::Source::BeyondRange && beyond.is_none() {
            let covered = st.joints[j].as_ref().map_or(0.0, |m| m.range().1);
            beyond = Some(BeyondModel { joint: j as u16, speed: w.abs() as f32, covered: covered as f32 });
        }
    }
    (beyond, Some(r))
}

/// Poses the arm's sampled configurations in batches, with the box of
/// each batch's spheres; skipped when they are the ones posed last
/// cycle, bit for bit.
fn pose_path(a: &mut Arm, dof: usize) {
    // An arm holding still (or an unchanged state) has the same
    // configurations as last time: its poses and boxes stand.
    let nq = a.scratch.forecast.n_cfg * dof;
    if a.scratch.posed.posed_n == a.scratch.forecast.n_cfg
        && a.scratch.forecast.path_q[..nq]
            .iter()
            .zip(&a.scratch.posed.posed_q[..nq])
            .all(|(x, y)| x.to_bits() == y.to_bits())
    {
        return;
    }
    a.scratch.posed.posed_n = 0;
    // Pad the last batch with the last configuration and pose.
    let nb = a.scratch.forecast.n_cfg.div_ceil(BATCH);
    let last_k = a.scratch.forecast.n_cfg - 1;
    a.scratch.posed.bounds =
        [f32::INFINITY, f32::INFINITY, f32::INFINITY, f32::NEG_INFINITY, f32::NEG_INFINITY, f32::NEG_INFINITY];
    for bi in 0..nb {
        let qb = &a.scratch.forecast.path_q;
        let qs: [&[f64]; BATCH] = std::array::from_fn(|l| {
            let k = (bi * BATCH + l).min(last_k);
            &qb[k * dof..(k + 1) * dof]
        });
        if a.model.poser.pose_batch(&qs, &mut a.scratch.posed.batches[bi]).is_err() {
            a.scratch.forecast.problem = Some((Reason::NoJointState, StopKind::Immediate));
            a.scratch.forecast.n_cfg = 0;
            return;
        }
        // The box of all spheres, from each link's (made while posing).
        let batch = &a.scratch.posed.batches[bi];
        for &(l, _, _) in &a.model.ranges {
            let bx = &batch.boxes[l as usize];
            for c in 0..3 {
                a.scratch.posed.bounds[c] = bx[c].iter().copied().fold(a.scratch.posed.bounds[c], f32::min);
                a.scratch.posed.bounds[3 + c] = bx[3 + c].iter().copied().fold(a.scratch.posed.bounds[3 + c], f32::max);
            }
        }
    }
    a.scratch.posed.posed_q[..nq].copy_from_slice(&a.scratch.forecast.path_q[..nq]);
    a.scratch.posed.posed_n = a.scratch.forecast.n_cfg;
}
