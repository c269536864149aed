//! Manipulator grants out: each robot's [`ArmGrant`] (decided by the
//! core) as `ManipulatorGrant`, and the retreat of a back-away as a
//! trajectory for its controller.

use super::GuardNode;
use crate::convert::to_time;
use crate::msg::{Duration, JointTrajectory, JointTrajectoryPoint, ManipulatorGrant, Time};
use std::fmt::Write;
use workcell_guard_core::arbiter::GrantState;
use workcell_guard_core::guard::{ArmGrant, PlanState};

/// The message's state constant for `s`.
pub fn state_code(s: GrantState) -> u8 {
    match s {
        GrantState::Proceed => ManipulatorGrant::PROCEED,
        GrantState::Hold => ManipulatorGrant::HOLD,
        GrantState::BackAway => ManipulatorGrant::BACK_AWAY,
        GrantState::Done => ManipulatorGrant::DONE,
        GrantState::NoPlan => ManipulatorGrant::NO_PLAN,
    }
}

fn duration(s: f64) -> Duration {
    let t = to_time(s.max(0.0)).unwrap_or_default();
    Duration { sec: t.sec, nanosec: t.nanosec }
}

impl GuardNode {
    /// Robot `r`'s grant message from its last command, stamped `stamp`.
    pub(super) fn fill_arm_grant(&mut self, r: usize, stamp: Time) {
        let c = self.guard.commands()[r];
        let g: ArmGrant = c.grant;
        let plan_state = self.guard.plan_state(r);
        let held = g.held_by.map(|h| self.cell.manipulators.get(h as usize).map_or("?", |m| m.name.as_str()));
        let msg = &mut self.arm_grants[r];
        msg.header.stamp = stamp;
        msg.state = state_code(g.state);
        msg.plan_stamp = if g.state == GrantState::NoPlan { Time::default() } else { self.io[r].plan_stamp };
        msg.granted_until = duration(g.until_s);
        msg.granted_point = g.point;
        msg.held_by.clear();
        msg.held_by.push_str(held.unwrap_or(""));
        msg.reason.clear();
        let who = held.unwrap_or("a robot");
        let _ = match g.state {
            GrantState::Proceed if g.scaling >= 1.0 => write!(msg.reason, "granted its next increment"),
            GrantState::Proceed => write!(msg.reason, "yields to {who} beyond the grant: slowing to pause there"),
            GrantState::Hold => write!(msg.reason, "holds for {who}"),
            GrantState::BackAway if plan_state == Some(PlanState::Finished) => {
                write!(msg.reason, "done, but parked in {who}'s increment: backs away along its last plan")
            }
            GrantState::BackAway => write!(msg.reason, "stands in {who}'s increment: backs away along its plan"),
            GrantState::Done => write!(msg.reason, "its plan is finished"),
            GrantState::NoPlan => write!(
                msg.reason,
                "{}",
                match plan_state {
                    Some(PlanState::Off { .. }) => "off its plan",
                    Some(PlanState::Abandoned) => "its plan was abandoned (off it too long)",
                    Some(PlanState::On { .. }) => "no trustworthy joint state: not arbitrated",
                    _ => "no plan",
                }
            ),
        };
        if self.guard.giving_way(r).is_some_and(|o| g.held_by == Some(o as u16)) {
            msg.reason.push_str(if self.guard.arbitration_policy().give_way_at_start {
                " (gives way: it set off first, give_way_at_start)"
            } else {
                " (gives way: the other can no longer stop short of its increment, give_way_when_caught)"
            });
        }
        if matches!(g.state, GrantState::Proceed | GrantState::Hold) {
            if self.guard.lifted(r).is_some() {
                msg.reason.push_str(" (lifted: it goes before the robot it stood in the way of, its way on clear or its way back blocked)");
            } else if self.guard.boosted_since(r).is_some() {
                msg.reason.push_str(" (priority boosted: it waited longer than priority_boost_after_s)");
            }
        }
    }

    /// The grants of the last cycle, one per manipulator.
    pub fn arm_grants(&self) -> &[ManipulatorGrant] {
        &self.arm_grants
    }

    /// Robot `r`'s retreat, when its last command asks for one: its plan
    /// (or, done with it, its last one) run backwards, at the plan's own pace, from where it is to the
    /// grant's retreat point (starting on receipt: zero stamp).
    pub fn retreat(&self, r: usize) -> Option<JointTrajectory> {
        let c = self.guard.commands().get(r)?;
        if !c.retreat {
            return None;
        }
        let plan = self.guard.retreat_plan(r)?;
        let (from, to) = (c.grant.at_s, c.grant.until_s);
        let mut points = Vec::new();
        let mut push = |s: f64| {
            let mut q = vec![0.0; plan.dof()];
            plan.at_time(s, &mut q);
            let t = duration(from - s);
            points.push(JointTrajectoryPoint {
                positions: q,
                time_from_start: crate::msg::Duration { sec: t.sec, nanosec: t.nanosec },
                ..Default::default()
            });
        };
        push(from);
        for k in (0..plan.len()).rev() {
            let s = plan.time(k);
            if s < from - 1e-6 && s > to + 1e-6 {
                push(s);
            }
        }
        if to < from - 1e-6 {
            push(to);
        }
        Some(JointTrajectory {
            joint_names: self.cell.manipulators[r].robot.dof_names.clone(),
            points,
            ..Default::default()
        })
    }
}
