//! What the demo prints: one line per answer of the node that changes
//! something for a robot (a stop, a release, a hold, a back-away, a grant,
//! a partial grant, a denial), read from the wire as any subscriber reads
//! it, with the robot's diagnostic message where it says why.

use std::collections::BTreeMap;
use std::fmt::Write;
use workcell_guard_ros::bag::Msg;
use workcell_guard_ros::msg::{DiagnosticArray, ManipulatorGrant, PlatenGrant};
use workcell_guard_ros::topics::Role;

/// The kinds of event, in the order the summary counts them.
pub const KINDS: [&str; 10] =
    ["stop", "release", "hold", "back-away", "grant", "done", "platen grant", "partial grant", "denial", "refusal"];

/// A manipulator grant's plan stamp, state and holder.
type GrantKey = ((i32, u32), u8, String);

/// The events seen so far and what they follow.
#[derive(Default)]
pub struct Events {
    arms: Vec<String>,
    units: Vec<String>,
    stop: Vec<Option<bool>>,
    /// Per arm: (plan stamp, state, held by) of its last grant.
    grant: Vec<Option<GrantKey>>,
    /// Per unit: (request id, result) of its last answer.
    answer: Vec<Option<(u64, u8)>>,
    /// Per robot (hardware id), its latest diagnostic message.
    why: BTreeMap<String, String>,
    /// Events per kind.
    pub counts: BTreeMap<&'static str, usize>,
}

impl Events {
    /// Events of a cell with these arms and platen units.
    pub fn new(arms: Vec<String>, units: Vec<String>) -> Events {
        Events {
            stop: vec![None; arms.len()],
            grant: vec![None; arms.len()],
            answer: vec![None; units.len()],
            arms,
            units,
            ..Events::default()
        }
    }

    /// Takes the latest diagnostics at demo time `t`: the reasons printed
    /// with stops, and a platen unit's stop (which has no topic of its own).
    pub fn diagnostics(&mut self, t: f64, d: &DiagnosticArray, out: &mut Vec<String>) {
        for s in &d.status {
            if s.hardware_id.is_empty() {
                continue;
            }
            let was = self.why.insert(s.hardware_id.clone(), s.message.clone());
            let stopped = |m: &str| m.starts_with("stopped");
            if self.units.contains(&s.hardware_id) && stopped(&s.message) && !was.as_deref().is_some_and(stopped) {
                *self.counts.entry("stop").or_default() += 1;
                out.push(format!("{t:8.3} s  {:<13} {:<10} {}", "stop", s.hardware_id, s.message));
            }
        }
    }

    /// The event lines `msg` on `role` makes at demo time `t` (s).
    pub fn take(&mut self, t: f64, role: Role, msg: &Msg, out: &mut Vec<String>) {
        let mut ev: Vec<(&'static str, String, String)> = Vec::new();
        let mut line = |kind: &'static str, who: &str, what: String| ev.push((kind, who.to_string(), what));
        match (role, msg) {
            (Role::Stop(r), Msg::Bool(b)) => {
                let was = self.stop[r].replace(b.data);
                let who = &self.arms[r];
                match (was, b.data) {
                    (Some(false), true) => {
                        let why = match &self.grant[r] {
                            Some((_, ManipulatorGrant::HOLD, by)) => format!("holds for {by} (its grant)"),
                            _ => match self.why.get(who) {
                                Some(w) if w != workcell_guard_ros::convert::CLEAR => w.clone(),
                                _ => "(its reason follows in /diagnostics)".into(),
                            },
                        };
                        line("stop", who, why);
                    }
                    (Some(true), false) => line("release", who, String::new()),
                    _ => {}
                }
            }
            (Role::ArmGrant(r), Msg::ArmGrant(g)) => self.arm_grant(r, g, &mut line),
            (Role::PlatenGrant(u), Msg::PlatenGrant(g)) => {
                let key = (g.request_id, g.result);
                if self.answer[u].replace(key) == Some(key) && g.result == PlatenGrant::PARTIAL {
                    return; // a path's next increment
                }
                let who = &self.units[u];
                let to = format!("({:.3}, {:.3})", g.goal.x, g.goal.y);
                match g.result {
                    PlatenGrant::GRANTED => line("platen grant", who, format!("request {} to {to}", g.request_id)),
                    PlatenGrant::PARTIAL => line(
                        "partial grant",
                        who,
                        format!(
                            "request {}: {:.0} % of the way, to {to}; {}{}",
                            g.request_id,
                            100.0 * g.fraction,
                            g.blocker,
                            g.reason
                        ),
                    ),
                    PlatenGrant::DENIED => line(
                        "denial",
                        who,
                        format!(
                            "request {}: blocked by {} (retry after {:.1} s)",
                            g.request_id, g.blocker, g.retry_after_s
                        ),
                    ),
                    _ => {
                        let why = self.why.get(who).map_or(String::new(), |w| format!(" ({w})"));
                        line("refusal", who, format!("request {}: {}{why}", g.request_id, g.reason))
                    }
                }
            }
            _ => {}
        }
        for (kind, who, what) in ev {
            *self.counts.entry(kind).or_default() += 1;
            out.push(format!("{t:8.3} s  {kind:<13} {who:<10} {what}"));
        }
    }

    fn arm_grant(&mut self, r: usize, g: &ManipulatorGrant, line: &mut impl FnMut(&'static str, &str, String)) {
        // Once per plan and state (a grant that proceeds while yielding
        // beyond it, and one that does not, are the same event here).
        let key = ((g.plan_stamp.sec, g.plan_stamp.nanosec), g.state, g.held_by.clone());
        if self.grant[r].as_ref().is_some_and(|(p, s, _)| (*p, *s) == (key.0, key.1)) {
            return;
        }
        self.grant[r] = Some(key);
        let until = f64::from(g.granted_until.sec) + f64::from(g.granted_until.nanosec) * 1e-9;
        let who = &self.arms[r];
        match g.state {
            ManipulatorGrant::PROCEED if g.held_by.is_empty() => {
                line("grant", who, format!("proceeds along its plan (to {until:.2} s of it)"))
            }
            ManipulatorGrant::PROCEED => {
                line("grant", who, format!("proceeds to {until:.2} s of its plan, then yields to {}", g.held_by))
            }
            ManipulatorGrant::HOLD => line("hold", who, format!("held by {}: {}", g.held_by, g.reason)),
            ManipulatorGrant::BACK_AWAY => {
                line("back-away", who, format!("backs away for {} (to {until:.2} s of its plan)", g.held_by))
            }
            ManipulatorGrant::DONE => line("done", who, "plan finished".into()),
            _ => {}
        }
    }

    /// The main counts, short, for the progress bar.
    pub fn short(&self) -> String {
        let n = |k: &str| self.counts.get(k).copied().unwrap_or(0);
        format!(
            "{} stops, {} holds, {} grants, {} platen grants, {} partial",
            n("stop"),
            n("hold"),
            n("grant"),
            n("platen grant"),
            n("partial grant")
        )
    }

    /// The counts, as one line.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        for k in KINDS {
            let n = self.counts.get(k).copied().unwrap_or(0);
            let _ = write!(s, "{}{n} {k}", if s.is_empty() { "" } else { ", " });
        }
        s
    }
}
