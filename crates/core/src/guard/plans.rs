//! Planned trajectories in the guard: each robot's plan, where it is on
//! it ([`crate::forecast::track`]), and what the node reads back.

use super::*;
use crate::forecast::track::{JointPlan, PlanError};

/// A robot's plan, where it is on it, and since when it is off it.
#[derive(Clone, Debug)]
pub(super) struct Follow {
    pub(super) tracker: PlanTracker,
    /// Per plan segment, how fast braking may slow its plan time
    /// ([`forecast::along::brake_rates`]).
    pub(super) rates: Vec<f64>,
    /// Per plan segment, how fast catching up may raise it (the same with
    /// the joints' accelerations).
    pub(super) rise: Vec<f64>,
    pub(super) state: PlanState,
    pub(super) off_since: Option<f64>,
    /// Its last plan once finished, kept while it stands on it (within
    /// tolerance): the way back it may be sent along to clear another
    /// robot's way ([`super::arbitrate`]'s `parked`). Dropped when it
    /// leaves it or gets a new plan.
    pub(super) parked: PlanTracker,
    /// Where it stands on `parked`, plan time, s (`None` while pending).
    pub(super) parked_s: Option<f64>,
    /// `parked` was finished short of its end (within tolerance of it,
    /// its last grant ending short of it): its controller may still be
    /// finishing it, so it is no way back until the robot is tracked at
    /// its very end.
    pub(super) parked_pending: bool,
}

/// A robot off its plan for longer than this has abandoned it: the plan is
/// dropped (a robot back on its path after a stop and a short detour is
/// not), s.
pub const PLAN_ABANDON_S: f64 = 1.0;

/// How far ahead of its last progress a robot is looked for on its plan,
/// in plan time, s.
pub const PLAN_WINDOW_S: f64 = 1.0;

impl Guard {
    /// Gives `robot` a planned trajectory (its joints in the robot's
    /// order), replacing the one it had; `None` drops it. From the next
    /// cycle, while the robot is on it, its stopping path brakes along the
    /// plan. An unknown robot is counted ([`Guard::unknown_inputs`]).
    pub fn set_plan(&mut self, robot: usize, plan: Option<JointPlan>) -> Result<(), PlanError> {
        let Some(arm) = self.arms.get_mut(robot) else {
            self.unknown_inputs += 1;
            return Ok(());
        };
        let f = &mut arm.state.follow;
        if let Some(p) = &plan {
            f.rates.clear();
            f.rates.resize(p.len().saturating_sub(1), f64::INFINITY);
            forecast::along::brake_rates(p, &arm.model.decel, &mut f.rates);
            f.rise.clear();
            f.rise.resize(p.len().saturating_sub(1), f64::INFINITY);
            forecast::along::brake_rates(p, &arm.model.accel, &mut f.rise);
        }
        let had = f.tracker.plan().is_some();
        f.tracker.set_plan(plan)?;
        let _ = f.parked.set_plan(None);
        f.parked_s = None;
        f.parked_pending = false;
        self.arbitration.forget_wait(robot);
        f.off_since = None;
        if f.tracker.plan().is_none() && had {
            f.state = PlanState::None;
        }
        Ok(())
    }

    /// The plan a retreat of `robot` runs back along: its plan, or, done
    /// with it and standing on it, its last one.
    pub fn retreat_plan(&self, robot: usize) -> Option<&JointPlan> {
        let f = &self.arms.get(robot)?.state.follow;
        f.tracker.plan().or_else(|| f.parked_s.and(f.parked.plan()))
    }

    /// The newest accepted joint positions of `robot`.
    pub fn last_positions(&self, robot: usize) -> Option<&[f64]> {
        self.arms.get(robot).and_then(|a| a.state.est.last_positions())
    }

    /// Where `robot` stands against its plan as of the last cycle.
    pub fn plan_state(&self, robot: usize) -> Option<PlanState> {
        self.arms.get(robot).map(|a| a.state.follow.state)
    }
}
