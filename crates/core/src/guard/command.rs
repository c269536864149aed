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
//! - the speed scaling: 0 when stopped, rising to 1 over
//!   [`CommandPolicy::slow_down_m`] of clearance beyond the release margin;
//!   at least [`CommandPolicy::escape_scaling`] while escaping;
//! - the controller's hold (an empty trajectory) and the cancel of its
//!   action goals: on each new stop and every [`CommandPolicy::hold_period_s`]
//!   / [`CommandPolicy::cancel_period_s`] while stopped.
//!
//! Allocates nothing.

use super::{Decision, Reason, Stop};

/// How decisions become commands; set with [`super::Guard::set_command_policy`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CommandPolicy {
    /// Proximity stops (cell, robot, self) hold until reset.
    pub latch_stops: bool,
    /// Clearance beyond the release margin over which the speed scaling
    /// rises from 0 to 1, m (positive).
    pub slow_down_m: f64,
    /// Speed scaling at least this while a robot escapes (released within
    /// the release margin, moving away from what stopped it), 0..=1.
    pub escape_scaling: f64,
    /// An unchanged stop flag is due again after this long, s (0: every
    /// cycle).
    pub stop_heartbeat_s: f64,
    /// While stopped, the controller is told to hold this often, s.
    pub hold_period_s: f64,
    /// While stopped, the controller's goals are cancelled this often, s.
    pub cancel_period_s: f64,
}

impl Default for CommandPolicy {
    fn default() -> Self {
        CommandPolicy {
            latch_stops: false,
            slow_down_m: 0.3,
            escape_scaling: 0.25,
            stop_heartbeat_s: 1.0,
            hold_period_s: 0.1,
            cancel_period_s: 1.0,
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
    /// A latched proximity stop: the decision lets go, the latch holds.
    Latched,
}

/// What goes out for one robot after a cycle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Command {
    /// The published stop flag.
    pub stop: bool,
    /// What holds it (refused input first, then the decision, then a
    /// latch).
    pub source: StopSource,
    /// The stop that started the current (or last) stop, kept while the
    /// robot holds; `None` before any.
    pub cause: Option<Stop>,
    /// The flag is to be published after this cycle: it changed, or the
    /// heartbeat came round.
    pub publish_stop: bool,
    /// Speed scaling, 0..=1.
    pub speed_scaling: f64,
    /// Tell the controller to hold (an empty trajectory).
    pub hold: bool,
    /// Cancel every goal of the robot's trajectory action.
    pub cancel: bool,
}

impl Command {
    /// A robot before its first cycle: stopped, nothing due yet.
    pub const START: Command = Command {
        stop: true,
        source: StopSource::Decision,
        cause: None,
        publish_stop: false,
        speed_scaling: 0.0,
        hold: false,
        cancel: false,
    };
}

/// A robot's supervision state between cycles.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Supervision {
    pub(crate) refused: bool,
    pub(crate) latched: bool,
    last_hold_s: f64,
    last_cancel_s: f64,
    /// The flag last handed out for publishing, and when.
    sent: Option<(bool, f64)>,
}

impl Supervision {
    pub(crate) const START: Supervision = Supervision {
        refused: false,
        latched: false,
        last_hold_s: f64::NEG_INFINITY,
        last_cancel_s: f64::NEG_INFINITY,
        sent: None,
    };

    /// The command after decision `d` at `now_s`; `prev` is the last one
    /// and `release_m` the release margin.
    pub(crate) fn command(
        &mut self,
        p: &CommandPolicy,
        prev: &Command,
        d: &Decision,
        now_s: f64,
        release_m: f64,
    ) -> Command {
        let mut c = Command { cause: prev.cause, ..Command::START };
        if let Decision::Stop(st) = d
            && !matches!(st.reason, Reason::Holding { .. })
        {
            c.cause = Some(*st);
            if p.latch_stops && matches!(st.reason, Reason::Cell | Reason::Robot { .. } | Reason::SelfCollision) {
                self.latched = true;
            }
        }
        c.source = if self.refused {
            StopSource::RefusedInput
        } else if d.is_stop() {
            StopSource::Decision
        } else if self.latched {
            StopSource::Latched
        } else {
            StopSource::None
        };
        c.stop = c.source != StopSource::None;
        let beat = p.stop_heartbeat_s;
        c.publish_stop = match self.sent {
            Some((sent, at)) => sent != c.stop || beat <= 0.0 || now_s - at >= beat || now_s < at,
            None => true,
        };
        if c.publish_stop {
            self.sent = Some((c.stop, now_s));
        }
        c.speed_scaling = match d {
            Decision::Continue { clearance_m, escaping, .. } if !c.stop => {
                let s = ((f64::from(*clearance_m) - release_m) / p.slow_down_m).clamp(0.0, 1.0);
                if *escaping { s.max(p.escape_scaling.clamp(0.0, 1.0)) } else { s }
            }
            _ => 0.0,
        };
        if c.stop {
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
        c
    }
}
