//! The stopping path of a robot, as the prepare stage samples it: along
//! its plan when it is on one (a retreat from its motion, a way back where
//! its grant sends it back), extrapolated from its motion otherwise; each
//! sample's time window and each link's inflation.

use super::prepare::REVERSE_PACE;
use super::*;
use crate::forecast::track::JointPlan;

/// The stopping path, on plan from plan time `on` or by extrapolation,
/// at most `cap` intervals, with its inflation. A robot on plan going
/// back along it (a retreat) is forecast from its motion
/// ([`forecast_reversing`]); any other that its last grant sends
/// back (`backing`: standing, braking, creeping back slower than
/// [`REVERSE_PACE`]), both ways along its plan
/// ([`append_way_back`]): either is where it may go once let go.
/// An extrapolated path takes the learned stopping model's figures
/// where there are some (`learned`: decelerations and reaction phase);
/// a path along a plan, its increments and the arbitration keep the
/// configured ones.
#[allow(clippy::too_many_arguments)]
pub(super) fn forecast(
    model: &ArmModel,
    sc: &mut ArmScratch,
    (follow, backing): (&Follow, bool),
    mo: &forecast::Motion<'_>,
    on: Option<f64>,
    (react, learned): (f64, Option<(&[f64], f64)>),
    seen: f64,
    step_m: f64,
    cap: usize,
) {
    let (decel_x, react_x) = learned.unwrap_or((&model.decel, react));
    sc.posed.step_share.fill(1.0);
    sc.forecast.departure.fill(0.0);
    match on {
        Some(s0) if direction(follow, s0, mo.v) == Some(true) => {
            forecast_reversing(model, sc, follow, mo, s0, (decel_x, react_x, seen, step_m, cap));
        }
        Some(s0) => {
            forecast_on_plan(model, sc, follow, mo, s0, react, seen, step_m, cap);
            if backing {
                append_way_back(model, sc, follow, s0, (react, seen, step_m));
            }
        }
        None => forecast_extrapolated(model, sc, mo, (decel_x, react_x), seen, step_m, cap),
    }
    inflate_from_steps(model, sc, model.decel.len());
}

/// The stopping path of a robot on plan at plan time `s0` that goes
/// back along it: braking along the plan ahead (rate 0 going back)
/// would leave its retreat unseen. It is extrapolated from its motion as
/// measured, and every joint's half step grows by the departure bound
/// (a robot that turns to go on along its plan).
fn forecast_reversing(
    model: &ArmModel,
    sc: &mut ArmScratch,
    follow: &Follow,
    mo: &forecast::Motion<'_>,
    s0: f64,
    (decel, react, seen, step_m, cap): (&[f64], f64, f64, f64, usize),
) {
    forecast_extrapolated(model, sc, mo, (decel, react), seen, step_m, cap);
    for (h, &acc) in sc.forecast.speed.iter_mut().zip(&model.accel) {
        *h += forecast::along::departure(acc, seen, model.reaction_s);
    }
    sc.forecast.plan_s[..sc.forecast.n_cfg].fill(s0);
    sc.forecast.reversing = true;
    // Its offset from the plan (the extrapolation used the buffer as
    // scratch), for its increment.
    if let Some(plan) = follow.tracker.plan() {
        plan.at_time(s0, &mut sc.forecast.offset);
        for (o, q) in sc.forecast.offset.iter_mut().zip(mo.q) {
            *o = q - *o;
        }
    }
}

/// Most intervals of a standing robot's way back ([`append_way_back`]).
pub(super) const BACK_SAMPLES: usize = 32;

/// Appends to the stopping path of a robot on its plan at plan time
/// `s0` (not going back along it), that its grant sends back along it,
/// its way back from where it is: the
/// plan backwards, as far as it gets at the plan's own pace (a retreat
/// runs at most at it) through the reaction and then braking at its
/// joints' deceleration, its half steps taken into the inflation. Its
/// path then covers both ways it may go once let go: on along the plan
/// (a controller that ignores grants) and back (one that obeys).
/// Judged on the plan ahead alone, a retreat into a robot behind it
/// would pass for an escape from the robot it backs away from (or hold
/// nothing within the release margin), be let go, stopped once moving,
/// let go again: a ratchet into that robot.
fn append_way_back(
    model: &ArmModel,
    sc: &mut ArmScratch,
    follow: &Follow,
    s0: f64,
    (react, seen, step_m): (f64, f64, f64),
) {
    let dof = model.decel.len();
    let Some(plan) = follow.tracker.plan().filter(|p| p.len() > 1) else { return };
    let n_f = sc.forecast.n_cfg;
    let room = sc.forecast.plan_s.len().saturating_sub(n_f);
    if n_f == 0 || room == 0 || s0 <= plan.time(0) {
        return;
    }
    sc.posed.step_share[n_f - 1] = 1.0; // its neighbour is the way back's first
    // Braking from the plan's pace at its joints' deceleration, in
    // plan time, on the stretch of plan behind it.
    let k = plan.segment(s0 - 1e-9);
    let dt_seg = (plan.time(k + 1) - plan.time(k)).max(1e-9);
    let mut down = f64::INFINITY;
    for j in 0..dof {
        let w = ((plan.point(k + 1)[j] - plan.point(k)[j]) / dt_seg).abs();
        if w > 1e-12 {
            down = down.min(model.decel[j] / w);
        }
    }
    let horizon = (react + 1.0 / down.max(1e-9)).min(s0 - plan.time(0)).max(0.0);
    sc.forecast.tv.fill(0.0);
    plan.travel(s0 - horizon, s0, &mut sc.forecast.tv);
    let travel = (0..model.n_links)
        .map(|l| model.lever[l * dof..(l + 1) * dof].iter().zip(&sc.forecast.tv).map(|(a, b)| a * b).sum::<f64>())
        .fold(0.0, f64::max);
    if travel <= 0.0 || horizon <= 0.0 {
        return;
    }
    // At most BACK_SAMPLES (and the room left): a longer way back is
    // sampled coarser (more inflation), keeping a standing robot's
    // check cheap.
    let intervals = ((travel / step_m.max(1e-6)).ceil() as usize).clamp(1, BACK_SAMPLES.min(room));
    let dt = horizon / intervals as f64;
    // Its offset from the plan where it stands.
    plan.at_time(s0, &mut sc.forecast.offset);
    for (o, q) in sc.forecast.offset.iter_mut().zip(&sc.forecast.path_q[..dof]) {
        *o = q - *o;
    }
    let s_end = sc.forecast.plan_s[n_f - 1];
    let mut hint = plan.segment(s0);
    for i in 1..=intervals {
        let (s, k) = (s0 - dt * i as f64, n_f + i - 1);
        let out = &mut sc.forecast.path_q[k * dof..(k + 1) * dof];
        hint = plan.at_time_from(s, hint, out);
        for (o, d) in out.iter_mut().zip(&sc.forecast.offset) {
            *o += d;
        }
        sc.forecast.tv.fill(0.0);
        plan.travel_from(s, s + dt, hint, &mut sc.forecast.tv);
        for ((h, t), &a) in sc.forecast.speed.iter_mut().zip(&sc.forecast.tv).zip(&model.accel) {
            *h = h.max(t / 2.0 + forecast::along::departure(a, seen, model.reaction_s));
        }
        // Its stopping path on the plan still ends where it did.
        sc.forecast.plan_s[k] = s_end;
        // It may be anywhere on the way back from now on.
        sc.forecast.windows[k] = (sc.forecast.t0, f64::INFINITY);
    }
    sc.forecast.n_cfg = n_f + intervals;
}

/// Which way a robot on plan at plan time `s0` moves along it:
/// `Some(true)` back (at more than [`REVERSE_PACE`] of the plan's pace),
/// `Some(false)` still (every joint within [`arbitrate::REST_SPEED`]),
/// `None` forward, or not back by that much (or no plan to say).
fn direction(follow: &Follow, s0: f64, v: &[f64]) -> Option<bool> {
    let plan = follow.tracker.plan().filter(|p| p.len() > 1)?;
    if v.iter().all(|x| x.abs() <= arbitrate::REST_SPEED) {
        return Some(false);
    }
    plan.pace(s0, v).is_some_and(|p| p < -REVERSE_PACE).then_some(true)
}

/// Tracks the robot along its plan from its newest configuration `q`:
/// the plan time it is at when on plan (`None` off plan or without
/// one). A finished plan (progress at its end; or within tolerance of
/// it, standing or passing it) is kept as its way back while it stands on
/// it ([`Follow::parked`]; where `short_of_end`, its last grant ending
/// short of the plan's end, only once it is tracked at the very end: its
/// controller may still be finishing the plan, and sent back along it
/// before, it came again); one left for longer than [`PLAN_ABANDON_S`]
/// is dropped.
pub(super) fn follow_plan(
    st: &mut Follow,
    mo: &forecast::Motion<'_>,
    decel: &[f64],
    now_s: f64,
    (at_rest, short_of_end): (bool, bool),
) -> Option<f64> {
    let q = mo.q;
    // Within tolerance of the plan's end, it is done when it stands
    // there, or when braking now would not: it is passing the end, not
    // arriving (a robot keeping its speed where its plan brakes).
    let tracked = st.tracker.track(q);
    let progress = match tracked {
        Progress::On { .. } if st.tracker.at_end(q) && (at_rest || st.tracker.passes_end(q, mo.v, decel)) => {
            Progress::Done
        }
        p => p,
    };
    match progress {
        Progress::None => {
            if matches!(st.state, PlanState::On { .. } | PlanState::Off { .. }) {
                st.state = PlanState::None;
            }
            follow_parked(st, q);
            None
        }
        Progress::On { time_s, deviation } => {
            st.off_since = None;
            st.state = PlanState::On { time_s: time_s as f32, deviation: deviation as f32 };
            Some(time_s)
        }
        Progress::Off { deviation, .. } => {
            let since = *st.off_since.get_or_insert(now_s);
            if now_s - since > PLAN_ABANDON_S {
                let _ = st.tracker.set_plan(None);
                st.off_since = None;
                st.state = PlanState::Abandoned;
            } else {
                st.state = PlanState::Off { deviation: deviation as f32, for_s: (now_s - since) as f32 };
            }
            None
        }
        Progress::Done => {
            // Kept as the way back a retreat may take ([`Follow::parked`]),
            // but where its grant ended short of the plan's end only once
            // it stands at the very end: done within tolerance of the end,
            // held there, its controller may still finish the plan (sent
            // back along all of it before, it came again).
            std::mem::swap(&mut st.tracker, &mut st.parked);
            let _ = st.tracker.set_plan(None);
            st.parked.set_back_window(PLAN_WINDOW_S);
            st.parked_pending = short_of_end;
            st.parked_s = st.parked.plan().map(JointPlan::duration_s).filter(|_| !short_of_end);
            st.off_since = None;
            st.state = PlanState::Finished;
            None
        }
    }
}

/// Where a robot done with its plan stands on it ([`Follow::parked`]); a
/// robot that left it (or whose configuration cannot be placed) has it
/// dropped.
fn follow_parked(st: &mut Follow, q: &[f64]) {
    if st.parked.plan().is_none() {
        st.parked_s = None;
        return;
    }
    st.parked_s = match st.parked.track(q) {
        // Pending: no way back until it has finished the plan.
        Progress::On { .. } if st.parked_pending => None,
        Progress::On { time_s, .. } => Some(time_s),
        Progress::Done => {
            st.parked_pending = false;
            st.parked.plan().map(JointPlan::duration_s)
        }
        Progress::Off { .. } | Progress::None => {
            let _ = st.parked.set_plan(None);
            None
        }
    };
}

/// The stopping path by extrapolation: the last estimated motion goes
/// on for the reaction phase, then brakes as the robot's stop mode says.
fn forecast_extrapolated(
    model: &ArmModel,
    sc: &mut ArmScratch,
    mo: &forecast::Motion<'_>,
    (decel, react): (&[f64], f64),
    slack_s: f64,
    step_m: f64,
    max_samples: usize,
) {
    let dof = model.decel.len();
    sc.forecast.plan =
        forecast::plan(mo.v, mo.a, decel, &model.lever, react, step_m, max_samples, &mut sc.posed.link_inflation);
    sc.forecast.n_cfg = sc.forecast.plan.intervals + 1;
    forecast::braking_decel(model.stop_mode, mo.v, mo.a, decel, react, &mut sc.forecast.brake);
    for k in 0..sc.forecast.n_cfg {
        forecast::config_at(
            mo,
            &sc.forecast.brake,
            react,
            sc.forecast.plan.time(k),
            &mut sc.forecast.path_q[k * dof..(k + 1) * dof],
        );
    }
    // Each joint's path is monotone: its steps are its travel.
    sc.forecast.speed.fill(0.0);
    for k in 1..sc.forecast.n_cfg {
        for j in 0..dof {
            let step = (sc.forecast.path_q[k * dof + j] - sc.forecast.path_q[(k - 1) * dof + j]).abs();
            sc.forecast.speed[j] = sc.forecast.speed[j].max(step / 2.0);
        }
    }
    windows_extrapolated(model, sc, mo, decel, slack_s);
}

/// The time windows of an extrapolated path ([`ArmScratch::window`]):
/// sample `k` stands for the configurations from sample `k − 1` to
/// `k + 1`. The robot gets there no sooner than the path says (it
/// brakes no later than the path's reaction phase), and leaves them
/// no later than it would braking at once: the first time that stop
/// has some joint strictly past sample `k + 1` (`+∞` when it comes to
/// rest short of it), plus `slack_s`.
fn windows_extrapolated(model: &ArmModel, sc: &mut ArmScratch, mo: &forecast::Motion<'_>, decel: &[f64], slack_s: f64) {
    let (dof, n) = (model.decel.len(), sc.forecast.n_cfg);
    let dt = sc.forecast.plan.time(1);
    // The stop at once: its decelerations in `tv`, configurations in `offset`.
    forecast::braking_decel(model.stop_mode, mo.v, mo.a, decel, 0.0, &mut sc.forecast.tv);
    let rest =
        (0..dof).map(|j| if mo.v[j] == 0.0 { 0.0 } else { mo.v[j].abs() / sc.forecast.tv[j] }).fold(0.0, f64::max);
    let last = (n - 1) * dof;
    let (path, stop_now, tv) = (&sc.forecast.path_q, &mut sc.forecast.offset, &sc.forecast.tv);
    let mut at = usize::MAX;
    fill_windows(&mut sc.forecast.windows[..n], sc.forecast.t0, dt, rest, slack_s, |k, m| {
        if at != m {
            forecast::config_at(mo, tv, 0.0, dt * m as f64, stop_now);
            at = m;
        }
        let target = &path[(k + 1) * dof..(k + 2) * dof];
        (0..dof).any(|j| {
            let d = path[last + j] - path[j];
            let dir = if d > 0.0 {
                1.0
            } else if d < 0.0 {
                -1.0
            } else {
                0.0
            };
            dir * (stop_now[j] - target[j]) > 1e-12
        })
    });
}

/// The stopping path along the plan from plan time `s0`
/// ([`forecast::along`]), shifted by the robot's offset from the plan,
/// with the departure bound added to every joint's half step.
#[allow(clippy::too_many_arguments)]
// long: the plan's samples, windows and departure bound filled in one pass over the same intervals
fn forecast_on_plan(
    model: &ArmModel,
    sc: &mut ArmScratch,
    st: &Follow,
    mo: &forecast::Motion<'_>,
    s0: f64,
    react: f64,
    seen: f64,
    step_m: f64,
    max_samples: usize,
) {
    let dof = model.decel.len();
    // invariant: called only while the tracker is on a plan
    let plan = st.tracker.plan().expect("on plan");
    let along = Along::new(plan, &st.rates, s0, mo.v, react, Some(&st.rise));
    plan.at_time(along.s0, &mut sc.forecast.offset);
    for (o, q) in sc.forecast.offset.iter_mut().zip(mo.q) {
        *o = q - *o;
    }
    // Samples: enough that no link moves more than a step between two.
    sc.forecast.tv.fill(0.0);
    plan.travel(along.s0, along.s_end, &mut sc.forecast.tv);
    let travel = (0..model.n_links)
        .map(|l| model.lever[l * dof..(l + 1) * dof].iter().zip(&sc.forecast.tv).map(|(a, b)| a * b).sum::<f64>())
        .fold(0.0, f64::max);
    let intervals = if travel <= 0.0 || along.horizon_s <= 0.0 {
        0
    } else {
        ((travel / step_m.max(1e-6)).ceil() as usize).clamp(1, max_samples.max(1))
    };
    sc.forecast.n_cfg = intervals + 1;
    let dt = if intervals == 0 { 0.0 } else { along.horizon_s / intervals as f64 };
    let mut walk = along.walker();
    let mut prev_s = along.s0;
    let mut hint = plan.segment(along.s0);
    sc.forecast.speed.fill(0.0);
    for k in 0..sc.forecast.n_cfg {
        let s = walk.plan_time_at(plan, &st.rates, dt * k as f64);
        let out = &mut sc.forecast.path_q[k * dof..(k + 1) * dof];
        let at = plan.at_time_from(s, hint, out);
        for (o, d) in out.iter_mut().zip(&sc.forecast.offset) {
            *o += d;
        }
        if k > 0 {
            sc.forecast.tv.fill(0.0);
            plan.travel_from(prev_s, s, hint, &mut sc.forecast.tv);
            for (h, t) in sc.forecast.speed.iter_mut().zip(&sc.forecast.tv) {
                *h = h.max(t / 2.0);
            }
            sc.forecast.step_travel[k * dof..(k + 1) * dof].copy_from_slice(&sc.forecast.tv);
        }
        (prev_s, hint) = (s, at);
        sc.forecast.plan_s[k] = s;
    }
    step_shares(model, sc);
    for ((h, d), &a) in sc.forecast.speed.iter_mut().zip(sc.forecast.departure.iter_mut()).zip(&model.accel) {
        *d = forecast::along::departure(a, seen, model.reaction_s);
        *h += *d;
    }
    sc.forecast.plan = StopPlan {
        react_s: react,
        horizon_s: if intervals == 0 { 0.0 } else { along.horizon_s },
        intervals,
        travel_m: travel,
        inflation_m: 0.0,
    };
    // Time windows as for an extrapolated path, in plan time: the
    // robot leaves sample k's stretch of the plan no later than it
    // would braking at once (pace as measured, no catching up).
    let now = Along::new(plan, &st.rates, s0, mo.v, 0.0, None);
    let mut walk = now.walker();
    let (mut at, mut s_m) = (0usize, now.s0);
    let plan_s = &sc.forecast.plan_s;
    fill_windows(&mut sc.forecast.windows[..sc.forecast.n_cfg], sc.forecast.t0, dt, now.horizon_s, seen, |k, m| {
        if at != m {
            s_m = walk.plan_time_at(plan, &st.rates, dt * m as f64);
            at = m;
        }
        s_m > plan_s[k + 1] + 1e-12
    });
}

/// Per sample on plan, the share of the path's step inflation its own
/// neighbourhood needs: each joint's half step to its neighbours over
/// the path's largest (`scratch.forecast.speed`, before the departure bound is
/// added), the largest over the joints. The inflation is linear in the
/// joints' half steps with levers ≥ 0, so that share of it covers every
/// position between the sample and half-way to its neighbours.
fn step_shares(model: &ArmModel, sc: &mut ArmScratch) {
    let (dof, n) = (model.decel.len(), sc.forecast.n_cfg);
    for k in 0..n {
        let mut share = 0.0f64;
        for j in 0..dof {
            let before = if k > 0 { sc.forecast.step_travel[k * dof + j] } else { 0.0 };
            let after = if k + 1 < n { sc.forecast.step_travel[(k + 1) * dof + j] } else { 0.0 };
            let local = before.max(after) / 2.0;
            if sc.forecast.speed[j] > 0.0 {
                share = share.max(local / sc.forecast.speed[j]);
            }
        }
        // (rounded up to f32)
        sc.posed.step_share[k] = ((share.min(1.0) as f32) * (1.0 + 1e-6)).min(1.0);
    }
}

/// Each link's and self pair's inflation from the joints' half steps
/// (`scratch.forecast.speed`): with levers, it covers every position between
/// two samples.
fn inflate_from_steps(model: &ArmModel, sc: &mut ArmScratch, dof: usize) {
    let mut largest = 0.0f64;
    for (l, e) in sc.posed.link_inflation.iter_mut().enumerate() {
        *e = model.lever[l * dof..(l + 1) * dof].iter().zip(&sc.forecast.speed).map(|(a, b)| a * b).sum();
        largest = largest.max(*e);
    }
    for (l, d) in sc.posed.link_departure.iter_mut().enumerate() {
        *d = model.lever[l * dof..(l + 1) * dof].iter().zip(&sc.forecast.departure).map(|(a, b)| a * b).sum::<f64>()
            as f32;
    }
    for (p, e) in sc.posed.pair_inflation.iter_mut().enumerate() {
        *e = model.pair_lever[p * dof..(p + 1) * dof].iter().zip(&sc.forecast.speed).map(|(l, s)| l * s).sum::<f64>()
            as f32;
    }
    sc.forecast.plan.inflation_m = largest;
    sc.posed.inflate = largest as f32;
}

/// Fills the time windows of a path's samples ([`ArmScratch::window`]),
/// sampled every `dt` from `t0`: sample `k` from the time of sample `k − 1`
/// (the path gets there no sooner) to the first time `m·dt` at which the
/// stop at once is strictly past sample `k + 1` (`past(k, m)`, asked with
/// `m` never decreasing), plus `slack_s`; open-ended once that stop has
/// come to rest (`rest_s`) short of it.
fn fill_windows(
    windows: &mut [(f64, f64)],
    t0: f64,
    dt: f64,
    rest_s: f64,
    slack_s: f64,
    mut past: impl FnMut(usize, usize) -> bool,
) {
    let n = windows.len();
    let (mut m, mut stays) = (0usize, n <= 1);
    for (k, w) in windows.iter_mut().enumerate() {
        let lo = if k == 0 { f64::NEG_INFINITY } else { t0 + dt * (k - 1) as f64 };
        let hi = if k + 1 >= n || stays {
            f64::INFINITY
        } else {
            loop {
                if past(k, m) {
                    break t0 + dt * m as f64 + slack_s;
                }
                if dt * m as f64 >= rest_s {
                    stays = true;
                    break f64::INFINITY;
                }
                m += 1;
            }
        };
        *w = (lo, hi);
    }
}
