//! Supervision: from each robot's decision to the command that goes out.
//!
//! The guard's [`Decision`] says whether the robot may go on. What is
//! published for it says more, and is decided here, not by the adapter:
//! - the stop flag: the decision, or input the adapter refused
//!   ([`super::Guard::set_input_refused`]), or a latched proximity stop
//!   (with [`CommandPolicy::latch_stops`], held until
//!   [`super::Guard::reset_latches`] while nothing is in conflict);
//! - its cause: the stop that started it, kept while the robot holds;
//! - whether the stop is due on the wire: on change, and every
//!   [`CommandPolicy::stop_heartbeat_s`] while unchanged;
//! - the speed scaling, from the stopping forecast: 0 when stopped; else
//!   1 unless the robot's stopping path takes it nearer something than it
//!   is now (the cell or its own links, both only off its plan, or
//!   another robot) and nearer than the clearance margin
//!   plus [`CommandPolicy::slow_down_m`]. Then it is the larger of two
//!   bounds that each keep that path out of the margin:
//!   - *by room*: the speed whose stopping path keeps `slow_down_m` beyond
//!     the margin (or half the present gap beyond it, where that is less).
//!     The checks measure how much of the path's approach there is room
//!     for ([`super::track::room`]); the stopping distance's shape
//!     (reaction at the speed it goes, then braking:
//!     `d(λv) = λ·v·t_r + λ²·v²/2a`) turns that into a factor on the speed
//!     it goes at ([`speed_for_room`]), taken on the scaling it was given;
//!     what it travels while the scaling falls to that counts against the
//!     room too ([`ramp_share`]): the faster it goes, the sooner it slows;
//!   - *by the path's end*: a ramp from [`CommandPolicy::escape_scaling`]
//!     to 1 as the least clearance of what the path approaches
//!     ([`super::track::Track::approach`]) goes from the margin to the
//!     margin plus `slow_down_m` (the faster it goes, the farther its path
//!     reaches and the lower this bound).
//!
//!   What it moves away from or past (a table beside its base, an arm it
//!   leaves) does not slow it, nor does anything while it stands (its path
//!   approaches nothing). Never below the escape scaling (a robot let go
//!   on must get somewhere: at 0 it would stand unstopped and unexplained
//!   for ever). Never above what the
//!   robot's grant allows ([`ArmGrant::scaling`]), and at least the escape
//!   scaling while it backs away (its retreat must run). The value changes
//!   by at most [`CommandPolicy::scaling_rate_per_s`] a second either way
//!   (a controller's ramp), but drops to 0 at once on a stop and never
//!   exceeds the grant's; on its plan it rises faster where the plan goes
//!   slower than its top speed (setting off from rest: the acceleration
//!   the rise adds, the rate times the plan's speed, stays what it is at
//!   the top speed);
//! - the grant itself, and the stop flag under it: a robot whose grant says
//!   hold is stopped ([`StopSource::Grant`]), so the flag never tells a
//!   held robot to go on;
//! - the controller's hold (an empty trajectory) and the cancel of its
//!   action goals: on each new stop and every [`CommandPolicy::hold_period_s`]
//!   / [`CommandPolicy::cancel_period_s`] while stopped, but not for a
//!   grant's hold (the robot pauses on its path, its goal kept, and resumes
//!   when granted); the cancel also on each retreat of a back-away.
//!
//! Allocates nothing.

use super::arbitrate::ArmGrant;
use super::{Decision, Reason, Stop};
use crate::arbiter::GrantState;

/// How decisions become commands; set with [`super::Guard::set_command_policy`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CommandPolicy {
    /// Proximity stops (cell, robot, self) hold until reset.
    pub latch_stops: bool,
    /// Where a robot's stopping path approaches something to within this
    /// of the clearance margin, its speed scaling is the larger of the
    /// speed whose path keeps this far beyond the margin (or half its
    /// present gap beyond it) and a ramp from the escape scaling to 1 over
    /// this, by where the path ends, m (positive).
    pub slow_down_m: f64,
    /// The speed scaling changes by at most this much a second, up or
    /// down, except to 0 on a stop and down to its grant's (positive). On
    /// its plan, a robot's scaling rises faster where the plan goes slower
    /// than its fastest ([`RISE_SPEED_SHARE_MIN`]): the acceleration the
    /// rise adds is what this rate adds at the plan's top speed.
    pub scaling_rate_per_s: f64,
    /// Speed scaling of a robot let go on at least this, whatever its
    /// stopping path approaches: only a stop or its grant bring it lower,
    /// 0..=1.
    pub escape_scaling: f64,
    /// An unchanged stop flag is due again after this long, s (0: every
    /// cycle).
    pub stop_heartbeat_s: f64,
    /// While stopped, the controller is told to hold this often, s.
    pub hold_period_s: f64,
    /// While stopped, the controller's goals are cancelled this often, s.
    pub cancel_period_s: f64,
    /// Sensed obstacles (point clouds) are expected at least this often, s;
    /// 0: sensing is optional and never stale.
    pub cloud_timeout_s: f64,
    /// With `cloud_timeout_s`: no cloud yet, or the newest older than it,
    /// stops every robot ([`StopSource::StaleSensing`]); false: it is only
    /// reported.
    pub stale_cloud_stops: bool,
}

impl Default for CommandPolicy {
    fn default() -> Self {
        CommandPolicy {
            latch_stops: false,
            slow_down_m: 0.05,
            scaling_rate_per_s: 4.0,
            escape_scaling: 0.25,
            stop_heartbeat_s: 1.0,
            hold_period_s: 0.1,
            cancel_period_s: 1.0,
            cloud_timeout_s: 0.0,
            stale_cloud_stops: true,
        }
    }
}

/// What stops a robot, beyond its decision.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StopSource {
    /// Not stopped.
    None,
    /// The guard's decision.
    Decision,
    /// Input the adapter refused (joint names, a trajectory), until good
    /// input arrives.
    RefusedInput,
    /// Sensed obstacles are stale ([`CommandPolicy::cloud_timeout_s`]):
    /// what the cell holds now is unknown.
    StaleSensing,
    /// A latched proximity stop: the decision lets go, the latch holds.
    Latched,
    /// Its grant says hold: it pauses on its path until granted more.
    Grant,
}

/// What goes out for one robot after a cycle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Command {
    /// The published stop flag.
    pub stop: bool,
    /// What holds it (refused input first, then the decision, then a
    /// latch, then the grant).
    pub source: StopSource,
    /// The stop that started the current (or last) stop, kept while the
    /// robot holds; `None` before any.
    pub cause: Option<Stop>,
    /// The flag is to be published after this cycle: it changed, or the
    /// heartbeat came round.
    pub publish_stop: bool,
    /// Speed scaling, 0..=1.
    pub speed_scaling: f64,
    /// The scaling is to be published after this cycle: the first, one
    /// that reaches 0 or 1 or leaves 0, one [`SCALING_STEP`] or more from
    /// the last published, and every [`CommandPolicy::stop_heartbeat_s`]
    /// (a transient-local topic then replays a few samples to late
    /// joiners, not one per cycle).
    pub publish_speed: bool,
    /// Tell the controller to hold (an empty trajectory).
    pub hold: bool,
    /// Cancel every goal of the robot's trajectory action.
    pub cancel: bool,
    /// Its grant.
    pub grant: ArmGrant,
    /// The grant is to be published after this cycle: the first, one that
    /// says something new ([`GrantShown`]: its state, the robot it waits
    /// for, what else its message names, or its end moved by
    /// [`GRANT_STEP_S`] or more), and every
    /// [`CommandPolicy::stop_heartbeat_s`]. Not every cycle: its topic is
    /// transient local, and a subscriber that joins is sent what the
    /// writer holds before the writer may send more.
    pub publish_grant: bool,
    /// Send a retreat along its plan back to `grant.until_s` (after the
    /// cancel): the first cycle of a back-away it is not stopped in (after
    /// a stop, again), and each time it gets to the last retreat's end
    /// still in the way.
    pub retreat: bool,
}

impl Command {
    /// A robot before its first cycle: stopped, nothing due yet.
    pub const START: Command = Command {
        stop: true,
        source: StopSource::Decision,
        cause: None,
        publish_stop: false,
        speed_scaling: 0.0,
        publish_speed: false,
        hold: false,
        cancel: false,
        grant: ArmGrant::NONE,
        publish_grant: false,
        retreat: false,
    };
}

/// A grant whose end (`until_s`) moved this much plan time since it was
/// last published is published again; a robot on its plan reads an end
/// at most this far behind the one decided (which lies an increment ahead
/// of where it can stop).
pub const GRANT_STEP_S: f64 = 0.05;

/// What a robot's grant message shows, for deciding when to publish it:
/// its state, the robot it waits for, its end in steps of
/// [`GRANT_STEP_S`] (where it is on its plan and its scaling, which move
/// every cycle, left out), and `flags`, what else the message names
/// (giving way, lifted, boosted, where it is against its plan), each a bit
/// or a small code.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GrantShown {
    /// The grant, `at_s`, `scaling` and `point` zeroed, `until_s` in steps.
    pub grant: ArmGrant,
    /// Bits and codes of the rest.
    pub flags: u16,
}

impl GrantShown {
    /// What `g` shows, with `flags`.
    pub fn of(g: ArmGrant, flags: u16) -> GrantShown {
        let until_s = (g.until_s / GRANT_STEP_S).floor();
        GrantShown { grant: ArmGrant { at_s: 0.0, scaling: 0.0, point: 0, until_s, ..g }, flags }
    }
}

/// A robot's supervision state between cycles.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Supervision {
    pub(crate) refused: bool,
    /// Sensed obstacles are stale and the policy stops for it.
    pub(crate) sensing_stale: bool,
    pub(crate) latched: bool,
    last_hold_s: f64,
    last_cancel_s: f64,
    /// Backing away: where its last retreat goes, plan time, s.
    retreat_to: Option<f64>,
    /// The flag last handed out for publishing, and when.
    sent: Option<(bool, f64)>,
    /// The scaling last handed out for publishing, and when.
    speed_sent: Option<(f64, f64)>,
    /// The grant last handed out for publishing, and when.
    grant_sent: Option<(GrantShown, f64)>,
    /// When the last command was made (the scaling's rate limit).
    made_s: f64,
}

/// The least share of its top speed a plan's speed is taken as where a
/// robot's scaling rises ([`CommandPolicy::scaling_rate_per_s`]): from rest
/// at its plan's start, it rises to 1 within a few cycles, not at once.
pub const RISE_SPEED_SHARE_MIN: f64 = 0.05;

/// A speed scaling this far from the last published one is published
/// (smaller changes go out with the heartbeat, but reaching 0 or 1 at once).
pub const SCALING_STEP: f64 = 0.01;

impl Supervision {
    pub(crate) const START: Supervision = Supervision {
        refused: false,
        sensing_stale: false,
        latched: false,
        last_hold_s: f64::NEG_INFINITY,
        last_cancel_s: f64::NEG_INFINITY,
        retreat_to: None,
        sent: None,
        speed_sent: None,
        grant_sent: None,
        made_s: f64::NEG_INFINITY,
    };

    /// What stops the robot, the first that does of: a refused input, the
    /// decision, stale sensing, a latch, its grant's hold.
    fn source(&self, d: &Decision, grant: &ArmGrant) -> StopSource {
        if self.refused {
            StopSource::RefusedInput
        } else if d.is_stop() {
            StopSource::Decision
        } else if self.sensing_stale {
            StopSource::StaleSensing
        } else if self.latched {
            StopSource::Latched
        } else if grant.state == GrantState::Hold {
            StopSource::Grant
        } else {
            StopSource::None
        }
    }

    /// The command after decision `d` and grant `grant` at `now_s`, with
    /// `bounds` what bounds its speed scaling ([`Supervision::scaling`]);
    /// `prev` is the last command and `shown` what the grant's message
    /// shows.
    pub(crate) fn command(
        &mut self,
        p: &CommandPolicy,
        prev: &Command,
        (d, grant, bounds): (&Decision, &ArmGrant, [f64; 4]),
        now_s: f64,
        shown: GrantShown,
    ) -> Command {
        let mut c = Command { cause: prev.cause, grant: *grant, ..Command::START };
        let beat = p.stop_heartbeat_s;
        c.publish_grant = match self.grant_sent {
            Some((sent, at)) => sent != shown || beat <= 0.0 || now_s - at >= beat || now_s < at,
            None => true,
        };
        if c.publish_grant {
            self.grant_sent = Some((shown, now_s));
        }
        if let Decision::Stop(st) = d
            && !matches!(st.reason, Reason::Holding { .. })
        {
            c.cause = Some(*st);
            if p.latch_stops && matches!(st.reason, Reason::Cell | Reason::Robot { .. } | Reason::SelfCollision) {
                self.latched = true;
            }
        }
        c.source = self.source(d, grant);
        c.stop = c.source != StopSource::None;
        c.publish_stop = match self.sent {
            Some((sent, at)) => sent != c.stop || beat <= 0.0 || now_s - at >= beat || now_s < at,
            None => true,
        };
        if c.publish_stop {
            self.sent = Some((c.stop, now_s));
        }
        c.speed_scaling = self.scaling(p, prev, (d, grant, bounds), now_s, c.stop);
        let s = c.speed_scaling;
        c.publish_speed = match self.speed_sent {
            Some((sent, at)) => {
                let edge = (s != sent) && (s <= 0.0 || s >= 1.0 || sent <= 0.0);
                edge || (s - sent).abs() >= SCALING_STEP || beat <= 0.0 || now_s - at >= beat || now_s < at
            }
            None => true,
        };
        if c.publish_speed {
            self.speed_sent = Some((s, now_s));
        }
        if c.stop && c.source != StopSource::Grant {
            let new = !prev.stop;
            let due = |last: f64, period: f64| new || now_s - last >= period || now_s < last;
            if due(self.last_hold_s, p.hold_period_s) {
                c.hold = true;
                self.last_hold_s = now_s;
            }
            if due(self.last_cancel_s, p.cancel_period_s) {
                c.cancel = true;
                self.last_cancel_s = now_s;
            }
        }
        self.retreat(grant, now_s, &mut c);
        c
    }

    /// A robot told to back away is sent its retreat along the plan (and
    /// its goals cancelled), again when its grant sends it further back.
    fn retreat(&mut self, grant: &ArmGrant, now_s: f64, c: &mut Command) {
        if grant.state != GrantState::BackAway || c.stop {
            // A stop ends the retreat under way (the controller holds): the
            // next cycle it may move, a new one is sent.
            self.retreat_to = None;
            return;
        }
        // Again when the grant's end moves further back (it does once the
        // robot is within LOOKAHEAD_S of the last one, before the grant's
        // scaling slows it for that end), not while it stays (its plan's
        // start: it can go no further back, and a retreat every cycle
        // would only cancel and resend).
        let again = match self.retreat_to {
            None => true,
            Some(t) => grant.until_s < t - 1e-9,
        };
        if again {
            self.retreat_to = Some(grant.until_s);
            c.retreat = true;
            c.cancel = true;
            self.last_cancel_s = now_s;
        }
    }
}

impl Supervision {
    /// The speed scaling (the module's rule), from `[speed, approach_m,
    /// margin_m, rise]`: the factor its stopping path has room for on the
    /// scaling it goes at (the last command's), the least clearance of what
    /// the path approaches, the clearance margin, and how much faster than
    /// the rate limit it may rise ([`super::Guard::rise`]); the escape
    /// floor, the grant, and the rate limit from the last command's.
    fn scaling(
        &mut self,
        p: &CommandPolicy,
        prev: &Command,
        (d, grant, bounds): (&Decision, &ArmGrant, [f64; 4]),
        now_s: f64,
        stop: bool,
    ) -> f64 {
        let dt = (now_s - std::mem::replace(&mut self.made_s, now_s)).clamp(0.0, 1.0);
        if stop || !matches!(d, Decision::Continue { .. }) {
            return 0.0;
        }
        // A robot let go on never crawls to a standstill by what its path
        // approaches: where nothing stops or holds it, it must be able to
        // get somewhere.
        let escape = p.escape_scaling.clamp(0.0, 1.0);
        let [speed, approach_m, margin_m, rise] = bounds;
        // The larger of two bounds that each keep its stopping path out of
        // the margin (the module's rule).
        let by_room = (prev.speed_scaling * speed).clamp(0.0, 1.0);
        let by_end = ((approach_m - margin_m) / p.slow_down_m).clamp(0.0, 1.0);
        // (A NaN gives the escape scaling: `max` takes the number.)
        let by_path = by_room.max(by_end).max(escape);
        let cap = grant.scaling.clamp(0.0, 1.0);
        let step = p.scaling_rate_per_s * dt;
        let up = step * if rise.is_nan() { 1.0 } else { rise.clamp(1.0, 1.0 / RISE_SPEED_SHARE_MIN) };
        let s = by_path.min(cap).max(prev.speed_scaling - step).min(prev.speed_scaling + up);
        s.min(cap).clamp(0.0, 1.0)
    }
}

/// The factor on a robot's present speed at which its stopping path
/// reaches `room` times as far (`room` from [`super::track::room`]; +∞:
/// nothing approached, no bound): the stopping distance at `λ` times the
/// speed is `λ·v·t_r + λ²·v²/2a`, a share `α = t_r / (t_r + t_b/2)` of it
/// the reaction's (`react_s`, with the braking time `t_b` = `horizon_s` −
/// `react_s`), so `α·λ + (1 − α)·λ² = room`. 0 for no room; at least the
/// room where the braking dominates, the room itself where the reaction
/// does.
pub fn speed_for_room(room: f64, react_s: f64, horizon_s: f64) -> f64 {
    speed_for_room_ramped(room, react_s, horizon_s, 0.0)
}

/// [`speed_for_room`] for a scaling that falls at a limited rate: falling
/// to `λ` times its speed, the robot travels a share `ramp·(1 − λ²)` of
/// its present stopping distance ([`ramp_share`]), and that and the new
/// stopping path must fit the room: `α·λ + (1 − α − ramp)·λ² + ramp ≤
/// room`. 0 where the fall alone takes more (it falls as fast as it may);
/// below 1 for a room below 1, at least 1 for more.
pub fn speed_for_room_ramped(room: f64, react_s: f64, horizon_s: f64, ramp: f64) -> f64 {
    if room.is_nan() {
        return 0.0;
    }
    if room.is_infinite() {
        return f64::INFINITY;
    }
    let room = room.max(0.0);
    let brake = (horizon_s - react_s).max(0.0);
    let whole = react_s.max(0.0) + brake / 2.0;
    if whole <= 0.0 {
        return f64::INFINITY; // a path of no length: nothing to bound
    }
    let alpha = (react_s.max(0.0) / whole).clamp(0.0, 1.0);
    // Room for the whole path: it need not slow, and the ramp is a fall's.
    // (A NaN ramp counts as the longest: `clamp` keeps NaN.)
    let ramp = if room >= 1.0 {
        0.0
    } else if ramp.is_nan() {
        1.0
    } else {
        ramp.clamp(0.0, 1.0)
    };
    let c = room - ramp;
    if c <= 0.0 {
        return 0.0;
    }
    // The root of q·λ² + α·λ − c where it crosses zero from below (the
    // form that holds for q of either sign and for q = 0).
    let q = 1.0 - alpha - ramp;
    let disc = alpha * alpha + 4.0 * q * c;
    let den = alpha + disc.max(0.0).sqrt();
    if disc < 0.0 || den <= 0.0 {
        return f64::INFINITY; // every speed fits
    }
    2.0 * c / den
}

/// The share of its present stopping distance a robot travels while its
/// scaling falls from `scaling` (`s`) to 0 at `rate_per_s`: at speed `v`
/// the stopping distance is `v·w`, `w = t_r + t_b/2` (`react_s`, braking
/// time `t_b` = `horizon_s` − `react_s`); falling to `λ·s` it travels
/// `v·s·(1 − λ²)/(2·rate)`, a share `s/(2·rate·w)` times `1 − λ²`. 0 for
/// no path or no scaling; 1 (the most counted) for no rate or a NaN.
pub fn ramp_share(scaling: f64, rate_per_s: f64, react_s: f64, horizon_s: f64) -> f64 {
    let whole = react_s.max(0.0) + (horizon_s - react_s).max(0.0) / 2.0;
    if scaling.is_nan() || scaling <= 0.0 || whole.is_nan() || whole <= 0.0 {
        return 0.0;
    }
    if rate_per_s.is_nan() || rate_per_s <= 0.0 {
        return 1.0;
    }
    let share = scaling.min(1.0) / (2.0 * rate_per_s * whole);
    if share.is_nan() { 1.0 } else { share.min(1.0) }
}

impl super::Guard {
    /// Robot `ri`'s command from its decision.
    pub(super) fn command(&mut self, ri: usize, now_s: f64) {
        self.supervision[ri].sensing_stale = self.policy.stale_cloud_stops && self.sensing_stale(now_s).is_some();
        let [by_cell, by_robots] = self.slowed_by(ri);
        let sc = &self.arms[ri].scratch;
        let pick = |[cell, robots]: [f32; 2]| {
            let on = |slows: bool, v: f32| if slows { v } else { f32::INFINITY };
            f64::from(on(by_cell, cell).min(on(by_robots, robots)))
        };
        let (react, horizon) = (sc.forecast.plan.react_s, sc.forecast.plan.horizon_s);
        let ramp = ramp_share(self.commands[ri].speed_scaling, self.policy.scaling_rate_per_s, react, horizon);
        let speed = speed_for_room_ramped(pick(sc.track.room), react, horizon, ramp);
        let bounds = [speed, pick(sc.track.approach), self.margins.clearance_m, self.rise(ri)];
        let input = (&self.decisions[ri], &self.arbitration.out[ri], bounds);
        let shown = self.grant_shown(ri);
        self.commands[ri] = self.supervision[ri].command(&self.policy, &self.commands[ri], input, now_s, shown);
    }

    /// What may slow robot `ri` this cycle, [the cell and its own links,
    /// the other robots] (after its plan state and grant are known; the
    /// checks look past the margin only for these). Neither while it is
    /// stopped. On its plan, its stopping path at any speed follows the
    /// plan: the cell and its own links slow it no more (where the plan
    /// meets them, the check stops it). Proceeding on an increment the
    /// arbiter granted, the other robots do not slow it either: they obey
    /// their own grants, and the arbiter cleared its way of what they hold
    /// (the checks still stop it should one not).
    pub(super) fn slowed_by(&self, ri: usize) -> [bool; 2] {
        let a = &self.arms[ri];
        if a.state.phase.stopped() {
            return [false; 2];
        }
        let on_plan = matches!(a.state.follow.state, super::PlanState::On { .. }) && !a.scratch.forecast.reversing;
        let granted = on_plan && self.arbitration.out[ri].state == GrantState::Proceed;
        [!on_plan, !granted]
    }

    /// How much faster than the policy's rate robot `ri`'s scaling may
    /// rise ([`CommandPolicy::scaling_rate_per_s`]): on its plan, the
    /// plan's top speed over its speed where the robot is (at least
    /// [`RISE_SPEED_SHARE_MIN`] of it); 1 off a plan, where what its
    /// controller runs is not known.
    fn rise(&self, ri: usize) -> f64 {
        let a = &self.arms[ri];
        let (super::PlanState::On { time_s, .. }, Some(plan)) = (a.state.follow.state, a.state.follow.tracker.plan())
        else {
            return 1.0;
        };
        1.0 / plan.speed_share(f64::from(time_s)).max(RISE_SPEED_SHARE_MIN)
    }

    /// What robot `ri`'s grant message shows ([`GrantShown`]).
    pub(super) fn grant_shown(&self, ri: usize) -> GrantShown {
        let plan = match self.plan_state(ri) {
            None | Some(super::PlanState::None) => 0,
            Some(super::PlanState::On { .. }) => 1,
            Some(super::PlanState::Off { .. }) => 2,
            Some(super::PlanState::Finished) => 3,
            Some(super::PlanState::Abandoned) => 4,
        };
        let bits = u16::from(self.giving_way(ri).is_some())
            | u16::from(self.lifted(ri).is_some()) << 1
            | u16::from(self.boosted_since(ri).is_some()) << 2;
        GrantShown::of(self.arbitration.out[ri], bits | plan << 3)
    }
}

#[cfg(test)]
mod tests {
    use super::{Command, CommandPolicy, Supervision, ramp_share, speed_for_room, speed_for_room_ramped};
    use crate::guard::Decision;
    use crate::guard::arbitrate::ArmGrant;
    use crate::guard::track::room;

    /// The scaling a robot let go on at 0.5 gets, a second after its last
    /// command, from `[speed, approach_m, margin_m]`, rising at the
    /// policy's rate.
    fn scaling([speed, approach_m, margin_m]: [f64; 3]) -> f64 {
        let bounds = [speed, approach_m, margin_m, 1.0];
        let p = CommandPolicy::default();
        let mut sup = Supervision { made_s: 0.0, ..Supervision::START };
        let prev = Command { stop: false, speed_scaling: 0.5, ..Command::START };
        let go = Decision::Continue { clearance_m: 0.1, pair: None, escaping: false };
        sup.scaling(&p, &prev, (&go, &ArmGrant::NONE, bounds), 1.0, false)
    }

    #[test]
    fn the_scaling_is_the_larger_bound_floored() {
        let margin = 0.01;
        // Room for 1.2 times its speed, the path's end 5 mm past the margin
        // (the ramp: 0.1): 0.6.
        assert!((scaling([1.2, margin + 0.005, margin]) - 0.6).abs() < 1e-12);
        // Little room, the path's end 40 mm past it: the ramp's 0.8.
        assert!((scaling([0.2, margin + 0.04, margin]) - 0.8).abs() < 1e-12);
        // Neither: the escape scaling.
        assert_eq!(scaling([0.1, margin, margin]), CommandPolicy::default().escape_scaling);
        // Nothing approached: full speed.
        assert_eq!(scaling([f64::INFINITY, f64::INFINITY, margin]), 1.0);
        // No number: the escape scaling, not a NaN.
        assert_eq!(scaling([f64::NAN, f64::NAN, margin]), CommandPolicy::default().escape_scaling);
    }

    #[test]
    fn the_scaling_rises_at_the_policys_rate_times_the_rise_and_falls_at_the_rate() {
        let p = CommandPolicy::default();
        let go = Decision::Continue { clearance_m: 0.1, pair: None, escaping: false };
        let after = |from: f64, rise: f64, bound: f64| {
            let mut sup = Supervision { made_s: 0.0, ..Supervision::START };
            let prev = Command { stop: false, speed_scaling: from, ..Command::START };
            let nothing = [f64::INFINITY, f64::INFINITY, 0.01, rise];
            let bounds = if bound < 1.0 { [0.0, 0.01 + bound * p.slow_down_m, 0.01, rise] } else { nothing };
            sup.scaling(&p, &prev, (&go, &ArmGrant::NONE, bounds), 0.002, false)
        };
        let step = p.scaling_rate_per_s * 0.002;
        assert!((after(0.25, 1.0, 1.0) - (0.25 + step)).abs() < 1e-12, "the policy's rate");
        assert!((after(0.25, 10.0, 1.0) - (0.25 + 10.0 * step)).abs() < 1e-12, "ten times as fast");
        let most = 1.0 / super::RISE_SPEED_SHARE_MIN;
        assert!((after(0.25, 1e9, 1.0) - (0.25 + most * step)).abs() < 1e-12, "at most this many times");
        assert!((after(0.25, 0.1, 1.0) - (0.25 + step)).abs() < 1e-12, "never slower than the rate");
        assert!((after(0.25, f64::NAN, 1.0) - (0.25 + step)).abs() < 1e-12, "no number: the rate");
        // Down, the rate alone, whatever the rise.
        assert!((after(0.9, 20.0, 0.5) - (0.9 - step)).abs() < 1e-12);
    }

    #[test]
    fn the_speed_for_a_room_inverts_the_stopping_distance() {
        // Reaction only: distance in proportion to speed.
        assert!((speed_for_room(0.5, 0.1, 0.1) - 0.5).abs() < 1e-12);
        // Braking only: distance with the square of speed.
        assert!((speed_for_room(0.25, 0.0, 0.2) - 0.5).abs() < 1e-12);
        for (react, horizon) in [(0.05, 0.3), (0.02, 0.02), (0.0, 1.0), (0.2, 0.25)] {
            assert!((speed_for_room(1.0, react, horizon) - 1.0).abs() < 1e-12, "room 1 is the speed it goes");
            let mut last = 0.0;
            for k in 1..=40 {
                let r = f64::from(k) * 0.05;
                let l = speed_for_room(r, react, horizon);
                // The stopping distance at λ·v is the room's share of today's.
                let brake = horizon - react;
                let d = |x: f64| x * react + x * x * brake / 2.0;
                assert!((d(l) / d(1.0) - r).abs() < 1e-9, "room {r}: λ {l}");
                assert!(l > last, "not increasing at room {r}");
                last = l;
            }
        }
        assert_eq!(speed_for_room(0.0, 0.05, 0.3), 0.0);
        assert_eq!(speed_for_room(f64::NAN, 0.05, 0.3), 0.0, "no number, no room");
        assert!(speed_for_room(f64::INFINITY, 0.05, 0.3).is_infinite(), "nothing approached: no bound");
        assert!(speed_for_room(0.3, 0.0, 0.0).is_infinite(), "a path of no length bounds nothing");
    }

    /// What a robot at `u0` travels, falling at `rate` (of its top speed
    /// `v`) a second to `u1` and then stopping (reaction `react`, braking
    /// at `decel`), stepped in time: the oracle of the ramped speed.
    fn ramp_then_stop(u0: f64, u1: f64, v: f64, rate: f64, react: f64, decel: f64) -> f64 {
        let (dt, mut u, mut d) = (1e-6, u0, 0.0);
        while u > u1 {
            let next = (u - rate * v * dt).max(u1);
            d += 0.5 * (u + next) * dt;
            u = next;
        }
        d + u1 * react + u1 * u1 / (2.0 * decel)
    }

    #[test]
    fn the_ramped_speed_leaves_room_for_what_the_robot_travels_while_the_scaling_falls() {
        for (react, brake, scaling, rate) in [(0.05, 0.26, 1.0, 4.0), (0.02, 0.1, 0.3, 8.0), (0.0, 0.3, 0.9, 8.0)] {
            // At top speed 1 m/s and `scaling` of it, braking in `brake` s.
            let (v, horizon) = (1.0, react + brake);
            let u0 = scaling * v;
            let decel = u0 / brake;
            let ramp = ramp_share(scaling, rate, react, horizon);
            assert!(ramp > 0.0 && ramp < 1.0, "{ramp}");
            let now = ramp_then_stop(u0, u0, v, rate, react, decel);
            for k in 1..20 {
                let room = f64::from(k) * 0.05;
                let l = speed_for_room_ramped(room, react, horizon, ramp);
                if room <= ramp {
                    assert_eq!(l, 0.0, "room {room} within what falling to 0 takes ({ramp}): falls at once");
                    continue;
                }
                assert!(l > 0.0 && l < 1.0 && l < speed_for_room(room, react, horizon), "room {room}: λ {l}");
                // Falling to λ and stopping from there takes the room.
                let got = ramp_then_stop(u0, l * u0, v, rate, react, decel) / now;
                assert!((got - room).abs() < 1e-4, "room {room}: λ {l} takes {got}");
            }
            for room in [1.0, 1.5] {
                assert_eq!(speed_for_room_ramped(room, react, horizon, ramp), speed_for_room(room, react, horizon));
            }
        }
        assert_eq!(speed_for_room_ramped(0.5, 0.05, 0.3, 0.0), speed_for_room(0.5, 0.05, 0.3));
        assert_eq!(speed_for_room_ramped(0.5, 0.05, 0.3, f64::NAN), 0.0, "a NaN ramp counts as the longest");
        assert_eq!(ramp_share(0.0, 4.0, 0.05, 0.3), 0.0, "standing: nothing to fall from");
        assert_eq!(ramp_share(1.0, 0.0, 0.05, 0.3), 1.0, "no rate: the most");
        assert_eq!(ramp_share(f64::NAN, 4.0, 0.05, 0.3), 0.0);
        assert_eq!(ramp_share(1.0, f64::NAN, 0.05, 0.3), 1.0);
        assert_eq!(ramp_share(1.0, 4.0, 0.0, 0.0), 0.0, "a path of no length");
    }

    #[test]
    fn the_room_keeps_the_slow_down_distance_or_half_the_gap() {
        // 150 mm beyond a 10 mm margin: 50 mm kept, 100 mm of room for an
        // approach of 125 mm.
        assert!((room(0.16, 0.035, 0.01, 0.05) - 0.8).abs() < 1e-6);
        // 90 mm beyond it: 45 mm kept (half), 45 mm of room for 50 mm.
        assert!((room(0.1, 0.05, 0.01, 0.05) - 0.9).abs() < 1e-6);
        // 20 mm beyond it: half kept.
        assert!((room(0.03, 0.02, 0.01, 0.05) - 1.0).abs() < 1e-6);
        assert!((room(0.03, 0.01, 0.01, 0.05) - 0.5).abs() < 1e-6);
        // Within the margin already: none.
        assert_eq!(room(0.008, 0.005, 0.01, 0.05), 0.0);
    }
}
