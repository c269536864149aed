//! A recording's inputs through the node, offline and in recorded time:
//! each input handed over at its log time, in the file's order, through
//! the event loop's own hand-over ([`crate::event_loop`]), and the node
//! cycled where the recording says it cycled (`~/cycle`, in recordings the
//! node wrote itself), else at the stamps of the grants it published (a
//! recording from the wire), else every `1 / rate_hz` from the first
//! input. No
//! clock, thread or network: the same file and parameters give the same
//! decisions on any machine.
//!
//! The decisions (stops, speed scalings, controller holds and retreats,
//! grants) come out as [`Entry`]s, and are compared, topic by topic and in
//! order, with the decisions the recording holds, where it holds any: the
//! first one that differs is named.

use crate::bag::{Call, Entry, Msg, Recording};
use crate::event_loop::{self, Incoming, Rebuild, Transport, Trigger, seconds};
use crate::msg::{
    Bool, DiagnosticArray, Float64, JointTrajectory, ManipulatorGrant, MarkerArray, PlatenGrant, SetContactResponse,
    SetPriorityResponse, Time, TriggerResponse,
};
use crate::node::GuardNode;
use crate::topics::{Role, Topics};
use std::collections::BTreeMap;

/// The replay's transport: a clock set by the replay, and a list of what
/// the node published.
struct ReplayIo<'a> {
    /// Only what has a topic goes out (as on the wire).
    topics: &'a Topics,
    now_ns: u64,
    out: Vec<Entry>,
    cancels: usize,
}

impl ReplayIo<'_> {
    fn put(&mut self, role: Role, msg: Msg) {
        if self.topics.name(role).is_none() {
            return;
        }
        self.out.push(Entry { log_time_ns: self.now_ns, role, msg });
    }
}

impl Transport for ReplayIo<'_> {
    /// States are derived from what is compared, and not recorded.
    fn publish_state(&mut self, _: usize, _: &crate::msg::GuardState) {}

    type Request = ();

    async fn next(&mut self) -> Option<Incoming<()>> {
        None
    }

    fn now_s(&self) -> f64 {
        seconds(self.now_ns)
    }

    fn now_ns(&self) -> Option<u64> {
        Some(self.now_ns)
    }

    fn publish_stop(&mut self, robot: usize, stop: Bool) {
        self.put(Role::Stop(robot), Msg::Bool(stop));
    }

    fn publish_speed(&mut self, robot: usize, scaling: Float64) {
        if let Some(role) = self.topics.speed(robot) {
            self.put(role, Msg::speed(role, scaling.data));
        }
    }

    fn hold(&mut self, robot: usize, stamp: Time) {
        let hold = JointTrajectory::hold(stamp);
        self.put(Role::Command(robot), Msg::Trajectory(hold));
    }

    fn cancel_goals(&mut self, _robot: usize) {
        self.cancels += 1;
    }

    fn send_trajectory(&mut self, robot: usize, trajectory: &JointTrajectory) {
        self.put(Role::Command(robot), Msg::Trajectory(trajectory.clone()));
    }

    fn publish_arm_grant(&mut self, robot: usize, grant: &ManipulatorGrant) {
        self.put(Role::ArmGrant(robot), Msg::ArmGrant(grant.clone()));
    }

    fn publish_grant(&mut self, unit: usize, grant: &PlatenGrant) {
        self.put(Role::PlatenGrant(unit), Msg::PlatenGrant(grant.clone()));
    }

    fn publish_diagnostics(&mut self, _d: &DiagnosticArray) {}

    fn publish_markers(&mut self, _m: &MarkerArray) {}

    fn answer_trigger(&mut self, _which: Trigger, _request: (), _answer: TriggerResponse) {}

    fn answer_set_contact(&mut self, _request: (), _answer: SetContactResponse) {}

    fn answer_set_priority(&mut self, _request: (), _answer: SetPriorityResponse) {}
}

/// The first decision of a replay that is not the recorded one.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    /// The topic's role.
    pub role: Role,
    /// Which of the topic's messages (0 is the first).
    pub index: usize,
    /// The recorded message and when it was logged (`None`: the replay
    /// published more on this topic).
    pub recorded: Option<Entry>,
    /// The replayed one (`None`: the replay published less).
    pub replayed: Option<Entry>,
}

/// What a replay did and found.
#[derive(Clone, Debug, Default)]
pub struct Replayed {
    /// The node's decisions, in order.
    pub out: Vec<Entry>,
    /// Inputs handed over.
    pub inputs: usize,
    /// Cycles run on the timer (split cycles on joint states not counted).
    pub cycles: usize,
    /// Where the cycle instants came from.
    pub clock: CycleClock,
    /// Goal cancels the node asked for.
    pub cancels: usize,
    /// Calls made on the node (parameters, services).
    pub calls: usize,
    /// Those it refused, and why (it refused them live as well).
    pub refused_calls: Vec<String>,
    /// Decisions the recording holds.
    pub recorded_out: usize,
    /// The first decision that differs, by log time (`None`: all agree, or
    /// the recording holds none).
    pub difference: Option<Difference>,
    /// Time without input skipped (beyond [`IDLE_CYCLED_NS`] of each gap),
    /// s.
    pub idle_skipped_s: f64,
}

/// Of a gap without input, this much is cycled through at the rate before
/// the clock jumps to the next input (10 s).
pub const IDLE_CYCLED_NS: u64 = 10_000_000_000;

/// Replays `rec` through `core` (module text), publishing on `topics`.
/// `rate_hz` cycles a recording without cycle instants; `rebuild` makes
/// the node a reload swaps in.
pub fn replay(core: &mut GuardNode, rec: &Recording, topics: &Topics, rate_hz: f64, rebuild: &Rebuild) -> Replayed {
    replay_observed(core, rec, topics, rate_hz, rebuild, &mut |_: &mut GuardNode, _: &Observed<'_>| {})
}

/// One timer cycle of a replay, as an observer of it sees it.
pub struct Observed<'a> {
    /// The cycle's instant, ns (the recording's log time).
    pub ns: u64,
    /// How long the node's cycle took here, s (this machine's time).
    pub took_s: f64,
    /// The decisions published so far (this cycle's last).
    pub out: &'a [Entry],
}

/// [`replay`], calling `observe` after each timer cycle with the node as
/// the cycle left it.
// long: the replay's loop: arrivals, timer cycles and calls in recorded time
pub fn replay_observed(
    core: &mut GuardNode,
    rec: &Recording,
    topics: &Topics,
    rate_hz: f64,
    rebuild: &Rebuild,
    observe: &mut dyn FnMut(&mut GuardNode, &Observed<'_>),
) -> Replayed {
    let mut io = ReplayIo { topics, now_ns: 0, out: Vec::new(), cancels: 0 };
    let (clock, stamps) = cycle_instants(rec);
    let period_ns = if rate_hz > 0.0 { (1e9 / rate_hz).round().max(1.0) as u64 } else { u64::MAX };
    let mut next_tick = rec.entries.iter().find(|e| e.role.is_input()).map_or(u64::MAX, |e| e.log_time_ns);
    let mut stamps = stamps.into_iter().peekable();
    let mut last_input_ns = next_tick;
    let mut r = Replayed { clock, ..Replayed::default() };
    let mut cycle = |io: &mut ReplayIo<'_>, core: &mut GuardNode, ns: u64, r: &mut Replayed| {
        if core.timer_due() {
            io.now_ns = ns;
            let now = seconds(ns);
            let start = std::time::Instant::now();
            core.cycle(now);
            let took_s = start.elapsed().as_secs_f64();
            event_loop::publish_cycle(io, core, now, None);
            r.cycles += 1;
            observe(core, &Observed { ns, took_s, out: &io.out });
        }
    };
    let mut calls = rec.calls.iter().peekable();
    let mut calls_until = |core: &mut GuardNode, ns: u64, r: &mut Replayed| {
        while let Some((_, c)) = calls.next_if(|(at, _)| *at <= ns) {
            r.calls += 1;
            if let Err(e) = apply(core, c, rebuild) {
                r.refused_calls.push(format!("{c:?}: {e}"));
            }
        }
    };
    for e in &rec.entries {
        if clock == CycleClock::GrantStamps {
            while let Some(ns) = stamps.next_if(|&ns| ns <= e.log_time_ns) {
                calls_until(core, ns, &mut r);
                cycle(&mut io, core, ns, &mut r);
            }
        }
        if clock == CycleClock::Rate {
            // A long gap without input (a paused recording, or log times a
            // corrupt file makes up) is cycled through for IDLE_CYCLED_NS,
            // then skipped: the node's clock jumps to the next input.
            if e.log_time_ns.saturating_sub(next_tick) > IDLE_CYCLED_NS {
                let resume = e.log_time_ns.saturating_sub(period_ns);
                while next_tick < resume.min(last_input_ns.saturating_add(IDLE_CYCLED_NS)) {
                    calls_until(core, next_tick, &mut r);
                    cycle(&mut io, core, next_tick, &mut r);
                    next_tick = next_tick.saturating_add(period_ns);
                }
                if next_tick < resume {
                    r.idle_skipped_s += seconds(resume - next_tick);
                    next_tick = resume;
                }
            }
            while next_tick <= e.log_time_ns {
                calls_until(core, next_tick, &mut r);
                cycle(&mut io, core, next_tick, &mut r);
                next_tick = next_tick.saturating_add(period_ns);
            }
        }
        last_input_ns = e.log_time_ns;
        calls_until(core, e.log_time_ns, &mut r);
        let incoming = match (&e.role, &e.msg) {
            (Role::Cycle, _) => {
                cycle(&mut io, core, e.log_time_ns, &mut r);
                continue;
            }
            (Role::JointState(i), Msg::JointState(m)) => Incoming::JointState(*i, m.clone()),
            (Role::Plan(i), Msg::Trajectory(m)) => Incoming::Trajectory(*i, m.clone()),
            (Role::PlatenPose(i), Msg::Pose(m)) => Incoming::PlatenPose(*i, m.clone()),
            (Role::MoveRequest(i), Msg::Move(m)) => Incoming::MoveRequest(*i, m.clone()),
            (Role::PathRequest(i), Msg::Path(m)) => Incoming::PathRequest(*i, m.clone()),
            (Role::Points, Msg::Cloud(m)) => Incoming::Cloud(m.clone()),
            _ => continue,
        };
        io.now_ns = e.log_time_ns;
        event_loop::take(&mut io, core, incoming, seconds(e.log_time_ns));
        r.inputs += 1;
    }
    r.cancels = io.cancels;
    r.out = io.out;
    let recorded: Vec<&Entry> = rec.entries.iter().filter(|e| !e.role.is_input() && e.role != Role::Cycle).collect();
    r.recorded_out = recorded.len();
    if !recorded.is_empty() {
        // Cycle instants read back from stamps are the node's clock to
        // within the rounding of its seconds (a quarter of a microsecond
        // at today's dates): its stamps are compared to a microsecond.
        let tolerance = if clock == CycleClock::GrantStamps { 1_000 } else { 0 };
        r.difference = first_difference(&recorded, &r.out, tolerance);
    }
    r
}

/// Whether two decisions are the same, their header stamps to within
/// `tolerance_ns`.
fn same(a: &Msg, b: &Msg, tolerance_ns: i64) -> bool {
    let ns = |t: &Time| i64::from(t.sec) * 1_000_000_000 + i64::from(t.nanosec);
    let close = |x: &Time, y: &Time| (ns(x) - ns(y)).abs() <= tolerance_ns;
    match (a, b) {
        (Msg::ArmGrant(x), Msg::ArmGrant(y)) if close(&x.header.stamp, &y.header.stamp) => {
            *x == ManipulatorGrant { header: x.header.clone(), ..y.clone() }
        }
        (Msg::PlatenGrant(x), Msg::PlatenGrant(y)) if close(&x.header.stamp, &y.header.stamp) => {
            *x == PlatenGrant { header: x.header.clone(), ..y.clone() }
        }
        (Msg::Trajectory(x), Msg::Trajectory(y)) if close(&x.header.stamp, &y.header.stamp) => {
            *x == JointTrajectory { header: x.header.clone(), ..y.clone() }
        }
        _ => a == b,
    }
}

/// Where a replay's cycle instants come from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CycleClock {
    /// The node's own `~/cycle` instants (a recording it wrote itself).
    #[default]
    Recorded,
    /// The header stamps of the recorded manipulator grants (the node
    /// stamps them with its cycle's instant, every cycle): a recording made
    /// from the wire.
    GrantStamps,
    /// Every `1 / rate_hz` from the first input.
    Rate,
}

/// The cycle clock of `rec`, and the instants for [`CycleClock::GrantStamps`]
/// (those of the first manipulator's grants, sorted, once each).
fn cycle_instants(rec: &Recording) -> (CycleClock, Vec<u64>) {
    if rec.entries.iter().any(|e| e.role == Role::Cycle) {
        return (CycleClock::Recorded, Vec::new());
    }
    let Some(first) = rec.entries.iter().find_map(|e| match e.role {
        Role::ArmGrant(r) => Some(r),
        _ => None,
    }) else {
        return (CycleClock::Rate, Vec::new());
    };
    let mut ns: Vec<u64> = rec
        .entries
        .iter()
        .filter_map(|e| match (&e.role, &e.msg) {
            (Role::ArmGrant(r), Msg::ArmGrant(g)) if *r == first => {
                Some(u64::try_from(g.header.stamp.sec).ok()? * 1_000_000_000 + u64::from(g.header.stamp.nanosec))
            }
            _ => None,
        })
        .collect();
    ns.sort_unstable();
    ns.dedup();
    (CycleClock::GrantStamps, ns)
}

/// Makes `call` on the node, as the event loop does.
fn apply(core: &mut GuardNode, call: &Call, rebuild: &Rebuild) -> Result<(), String> {
    match call {
        Call::Reload => {
            *core = rebuild(core.params().clone())?;
            Ok(())
        }
        Call::Param { name, value } => {
            let v: serde_json::Value = serde_json::from_str(value).map_err(|e| e.to_string())?;
            core.set_param(name, &v).map_err(|e| e.to_string())
        }
        Call::SetPriority { robot, priority } => {
            core.set_priority(robot, *priority).map(drop).map_err(|e| e.to_string())
        }
        Call::SetContact { a, b, allowed } => core.set_contact(a, b, *allowed).map(drop).map_err(|e| e.to_string()),
        Call::ResetStop => core.reset_stops().map(drop).map_err(|e| e.to_string()),
    }
}

/// The earliest (by log time) decision that differs, topic by topic.
fn first_difference(recorded: &[&Entry], replayed: &[Entry], stamp_tolerance_ns: i64) -> Option<Difference> {
    let mut by_role: BTreeMap<Role, (Vec<&Entry>, Vec<&Entry>)> = BTreeMap::new();
    for e in recorded {
        by_role.entry(e.role).or_default().0.push(e);
    }
    for e in replayed {
        by_role.entry(e.role).or_default().1.push(e);
    }
    let mut first: Option<Difference> = None;
    for (role, (a, b)) in by_role {
        let n = a.len().max(b.len());
        let differ = |i: usize| match (a.get(i), b.get(i)) {
            (Some(x), Some(y)) => !same(&x.msg, &y.msg, stamp_tolerance_ns),
            (x, y) => x.is_some() != y.is_some(),
        };
        let Some(index) = (0..n).find(|&i| differ(i)) else {
            continue;
        };
        let d = Difference {
            role,
            index,
            recorded: a.get(index).map(|&e| e.clone()),
            replayed: b.get(index).map(|&e| e.clone()),
        };
        let at = |d: &Difference| d.recorded.as_ref().or(d.replayed.as_ref()).map_or(u64::MAX, |e| e.log_time_ns);
        if first.as_ref().is_none_or(|f| at(&d) < at(f)) {
            first = Some(d);
        }
    }
    first
}
