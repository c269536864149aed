//! Each manipulator's state as data (`workcell_guard_msgs/GuardState` on
//! `<robot>/state`): its decision and what holds it, the closest pair and
//! its clearance, time to contact, speed scaling, grant and plan, from the
//! core's last decision and command. Filled in place (the strings keep
//! their memory).

use super::GuardNode;
use super::grants::state_code;
use crate::msg::{GuardState, Header, Time};
use workcell_guard_core::guard::{Body, Decision, PlanState, Reason, StopSource};

/// What makes a state worth sending at once: the decision, what holds it,
/// why, and the grant.
pub(super) type StateKey = (u8, u8, u8, u8);

/// The state message's reason code for `r`.
pub fn reason_code(r: Reason) -> u8 {
    match r {
        Reason::Cell => GuardState::REASON_CELL,
        Reason::Robot { .. } => GuardState::REASON_ROBOT,
        Reason::SelfCollision => GuardState::REASON_SELF,
        Reason::NoJointState => GuardState::REASON_NO_JOINT_STATE,
        Reason::StaleJointState { .. } => GuardState::REASON_STALE_JOINT_STATE,
        Reason::BadJointState(_) => GuardState::REASON_BAD_JOINT_STATE,
        Reason::WarmingUp { .. } => GuardState::REASON_WARMING_UP,
        Reason::ImplausibleMotion { .. } => GuardState::REASON_IMPLAUSIBLE_MOTION,
        Reason::OtherRobotUnknown { .. } => GuardState::REASON_OTHER_ROBOT_UNKNOWN,
        Reason::Holding { .. } => GuardState::REASON_HOLDING,
    }
}

impl GuardNode {
    /// The key of robot `r`'s state after the last cycle.
    fn state_key(&self, r: usize) -> StateKey {
        let c = self.guard.commands()[r];
        let (source, reason) = match c.source {
            StopSource::None => (GuardState::SOURCE_NONE, GuardState::REASON_NONE),
            StopSource::Decision => match self.guard.decisions().get(r) {
                Some(Decision::Stop(st)) => (GuardState::SOURCE_GUARD, reason_code(st.reason)),
                _ => (GuardState::SOURCE_GUARD, GuardState::REASON_NONE),
            },
            StopSource::RefusedInput => (GuardState::SOURCE_REFUSED_INPUT, GuardState::REASON_REFUSED_INPUT),
            StopSource::Latched => {
                (GuardState::SOURCE_LATCHED, c.cause.map_or(GuardState::REASON_NONE, |s| reason_code(s.reason)))
            }
            StopSource::Grant => (GuardState::SOURCE_GRANT, GuardState::REASON_GRANT),
            StopSource::StaleSensing => (GuardState::SOURCE_STALE_SENSING, GuardState::REASON_STALE_SENSING),
        };
        let decision = if c.stop { GuardState::STOP } else { GuardState::RUN };
        (decision, source, reason, state_code(c.grant.state))
    }

    /// Whether robot `r`'s state changed (decision, what holds it, why, or
    /// its grant) since its state was last taken with [`GuardNode::state`].
    pub fn state_changed(&self, r: usize) -> bool {
        r < self.stops.len() && self.state_sent.get(r).copied().flatten() != Some(self.state_key(r))
    }

    /// Robot `r`'s state after the last cycle, stamped `stamp`.
    pub fn state(&mut self, r: usize, stamp: Time) -> Option<&GuardState> {
        if r >= self.stops.len() {
            return None;
        }
        let key = self.state_key(r);
        if self.state_sent.len() <= r {
            self.state_sent.resize(r + 1, None);
        }
        self.state_sent[r] = Some(key);
        let c = self.guard.commands()[r];
        let d = self.guard.decisions().get(r).copied();
        let on_plan = matches!(self.guard.plan_state(r), Some(PlanState::On { .. }));
        let reason_text = if c.stop { self.stop_cause(r) } else { String::new() };
        let frame = &self.cell.cell_frame;
        let robot = &self.cell.manipulators[r].name;
        if self.states.len() <= r {
            self.states.resize(r + 1, GuardState::default());
        }
        let s = &mut self.states[r];
        s.header = Header { stamp, frame_id: frame.clone() };
        s.robot.clone_from(robot);
        (s.decision, s.source, s.reason, s.grant_state) = key;
        s.reason_text = reason_text;
        let (clearance, pair, ttc) = match d {
            Some(Decision::Continue { clearance_m, pair, .. }) => (clearance_m, pair, None),
            Some(Decision::Stop(st)) => (st.clearance_m, st.pair, st.time_to_contact_s),
            None => (f32::INFINITY, None, None),
        };
        s.clearance_m = f64::from(clearance);
        s.time_to_contact_s = ttc.map_or(f64::INFINITY, f64::from);
        s.closest_link.clear();
        s.closest_other.clear();
        if let Some((a, b)) = pair {
            if let Body::Link { link, .. } = a {
                let links = &self.cell.manipulators[r].robot.links;
                s.closest_link.push_str(links.get(link as usize).map_or("?", |l| l.name.as_str()));
            }
            self.names.body(b, &mut s.closest_other);
        }
        s.speed_scale = c.speed_scaling;
        s.on_plan = on_plan;
        Some(&self.states[r])
    }
}
