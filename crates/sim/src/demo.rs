//! The robots of `workcell_guard demo`: a cell's arms following planned
//! trajectories and its platen units asking for moves and paths, each as
//! its driver and executor would, doing only what the guard's answers
//! allow (grants, stops, speed scaling). No middleware here: the demo's
//! DDS peer hands them the node's answers and publishes what they do.
//!
//! On the sample cell the opening is scripted so that every kind of answer
//! shows: the two arms' first plans cross at the front of the cell (the
//! lower priority holds, and is released once the other has passed); one
//! unit parks in the other's way, which is granted part of its move, and
//! the rest once the first has left. After that (and on any other cell
//! from the start) goals are random, from the seed: arm goals such as a
//! planner for the static cell gives (clear of the cell, and so is the
//! straight path there), unit targets anywhere on the surface (asked for
//! as moves; the sample cell's script asks for one path).

use crate::arms::{Sim, SimOptions};
use crate::motion::SimArm;
use workcell_guard_core::cell::Workcell;
use workcell_guard_core::forecast::track::JointPlan;
use workcell_guard_core::guard::GuardError;
use workcell_guard_core::model::coverage::Rng;

/// Grant states, as `workcell_guard_msgs/ManipulatorGrant` numbers them.
pub mod grant {
    /// Move along the plan up to the grant's end.
    pub const PROCEED: u8 = 0;
    /// Pause on the path.
    pub const HOLD: u8 = 1;
    /// Go back along the plan to the grant's end.
    pub const BACK_AWAY: u8 = 2;
}

/// Platen answers, as `workcell_guard_msgs/PlatenGrant` numbers them.
pub mod answer {
    /// Move to the target.
    pub const GRANTED: u8 = 0;
    /// Move to the answer's goal only.
    pub const PARTIAL: u8 = 1;
    /// Not now.
    pub const DENIED: u8 = 2;
    /// The request cannot be taken.
    pub const REFUSED: u8 = 3;
}

/// The node's answer to a unit's request.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UnitAnswer {
    /// The request's id.
    pub id: u64,
    /// As the message numbers it ([`answer`]).
    pub result: u8,
    /// Where a partial grant (or a path's increment) ends.
    pub goal: [f64; 3],
    /// When to ask again after a denial, s.
    pub retry_after_s: f64,
}

/// An arm, its executor, and the plan it waits to publish.
#[derive(Debug)]
pub struct DemoArm {
    /// Where it is and what it follows.
    pub arm: SimArm,
    /// The stamp its current plan went out with (ns), once published.
    plan_stamp: Option<u64>,
    /// When its current plan went out (demo time, s).
    sent_at: f64,
    /// A plan made and not yet published.
    unpublished: Option<JointPlan>,
    /// Rests at its goal until then.
    rest_until: f64,
    /// Scripted goals still to come, the next last.
    script: Vec<Vec<f64>>,
    reaction_s: f64,
    /// Seconds it moved (some joint faster than [`MOVING_RADPS`]).
    pub moving_s: f64,
    /// Of those, the seconds at full speed (its speed scaling 1).
    pub full_speed_s: f64,
    /// Of those, the seconds nothing was near it and no robot held it back
    /// ([`DemoRobots::nothing_in_the_way`]).
    pub free_s: f64,
    /// Of those, the seconds at full speed.
    pub free_full_speed_s: f64,
    /// Its last grant holds it back for another robot (`HOLD`,
    /// `BACK_AWAY`, or a `PROCEED` naming the robot it yields to).
    held_back: bool,
    /// Its least clearance at the last look, m.
    least_m: f64,
}

/// A joint faster than this moves its arm (the demo's usefulness count), rad/s or m/s.
pub const MOVING_RADPS: f64 = 1e-3;

/// How a unit asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AskKind {
    /// `PlatenMoveRequest`: one straight move, answered once.
    Move,
    /// `PlatenPathRequest`: a path, granted in increments.
    Path,
}

/// A request a unit sends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ask {
    /// The unit.
    pub unit: usize,
    /// Its request id.
    pub id: u64,
    /// Move or path.
    pub kind: AskKind,
    /// Target pose on the surface (x, y, θ).
    pub target: [f64; 3],
    /// Speed along a path, m/s.
    pub speed_mps: f64,
}

/// A platen unit and its driver.
#[derive(Debug)]
pub struct DemoUnit {
    /// Where it is on the surface (x, y, θ).
    pub pose: [f64; 3],
    /// Where it is allowed to drive to.
    goal: [f64; 3],
    /// What it asked for, and how many times more it asks for it (a unit
    /// kept waiting gives up and asks for something else: two units each
    /// waiting for the other to move would otherwise wait for ever).
    want: Option<(Ask, u32)>,
    /// Asks (again) at this time.
    ask_at: f64,
    /// Waiting for an answer since.
    waiting_since: Option<f64>,
    /// Scripted (time, target, how) still to come, the next last.
    script: Vec<(f64, [f64; 3], AskKind)>,
    speed_mps: f64,
    next_id: u64,
}

/// Every robot of the demo's cell.
pub struct DemoRobots {
    sim: Sim,
    rng: Rng,
    /// The arms, in the cell's order.
    pub arms: Vec<DemoArm>,
    /// The platen units, in the cell's order.
    pub units: Vec<DemoUnit>,
    size_xy_m: [f64; 2],
    asks: Vec<Ask>,
    /// Per arm, whether nothing approaches it, as last looked
    /// ([`DemoRobots::nothing_in_the_way`]), and steps until the next look.
    free: Vec<bool>,
    look_in: usize,
}

/// Steps between two looks at what approaches the arms (the oracle poses
/// every arm: once per 40 ms tells an approach, and keeps the demo's
/// robots light beside the node they share the machine with).
const LOOK_EVERY: usize = 10;

/// An arm's scripted opening: its first joint, that joint's start and
/// goal, the other joints' values (an empty name pads).
type ArmScript = (&'static str, f64, f64, [(&'static str, f64); 7]);

/// The sample cell's scripted opening: per arm, (start, first goal), by
/// joint name, the first joint given separately.
const ARM_SCRIPT: [ArmScript; 2] = [
    (
        "shoulder_pan",
        1.5,
        -1.5,
        [
            ("shoulder_lift", 0.7),
            ("elbow", 1.1),
            ("wrist_1", 0.0),
            ("wrist_2", 0.0),
            ("wrist_3", 0.0),
            ("finger_left", 0.02),
            ("", 0.0),
        ],
    ),
    (
        "j1",
        -1.5,
        1.5,
        [("j2", 1.2), ("j3", 0.0), ("j4", -0.3), ("j5", 0.0), ("j6", 0.0), ("j7", 0.0), ("finger_a_joint", 0.0)],
    ),
];

impl DemoRobots {
    /// The robots of `cell` (its collision matrix cached in `cache`), at
    /// their start: the scripted one where the cell is the sample's, else
    /// random configurations clear of the cell and of each other.
    pub fn new(cell: Workcell, seed: u64, cache: Option<&std::path::Path>) -> Result<DemoRobots, GuardError> {
        let mut sim = Sim::new(cell.clone(), SimOptions::default(), cache)?;
        let mut rng = Rng::new(seed);
        let scripted = scripted_arms(&cell);
        let starts = match &scripted {
            Some(s) => s.iter().map(|(a, _)| a.clone()).collect(),
            None => sim
                .clear_start(&mut rng)
                .unwrap_or_else(|| cell.manipulators.iter().map(|m| vec![0.0; m.robot.dof()]).collect::<Vec<_>>()),
        };
        let arms = starts
            .into_iter()
            .enumerate()
            .map(|(r, q)| DemoArm {
                arm: SimArm::new(q, Vec::new()),
                plan_stamp: None,
                sent_at: 0.0,
                unpublished: None,
                rest_until: 0.0,
                script: scripted.as_ref().map(|s| vec![s[r].1.clone()]).unwrap_or_default(),
                reaction_s: cell.manipulators[r].reaction_time_s,
                moving_s: 0.0,
                full_speed_s: 0.0,
                free_s: 0.0,
                free_full_speed_s: 0.0,
                held_back: false,
                least_m: f64::INFINITY,
            })
            .collect();
        let (units, size_xy_m) = match &cell.platen {
            None => (Vec::new(), [0.0; 2]),
            Some(p) => {
                let names: Vec<&str> = p.units.iter().map(|u| u.name.as_str()).collect();
                let sample = names == ["mover_a", "mover_b"];
                let units = p
                    .units
                    .iter()
                    .enumerate()
                    .map(|(i, u)| DemoUnit {
                        pose: u.initial_pose,
                        goal: u.initial_pose,
                        want: None,
                        ask_at: 1.0 + 0.5 * i as f64,
                        waiting_since: None,
                        script: match (sample, i) {
                            // mover_b parks in mover_a's way, then leaves.
                            (true, 1) => {
                                vec![(6.0, [0.8, 0.72, 0.0], AskKind::Path), (1.0, [0.6, 0.35, 0.0], AskKind::Move)]
                            }
                            (true, 0) => vec![(3.0, [0.85, 0.3, 0.0], AskKind::Move)],
                            _ => Vec::new(),
                        },
                        speed_mps: u.max_speed_mps.min(0.25),
                        next_id: 1,
                    })
                    .collect();
                (units, p.size_xy_m)
            }
        };
        Ok(DemoRobots { sim, rng, arms, units, size_xy_m, asks: Vec::new(), free: Vec::new(), look_in: 0 })
    }

    /// Advances every robot by `dt` to demo time `t` (s); returns the
    /// requests the units send now.
    pub fn step(&mut self, t: f64, dt: f64) -> &[Ask] {
        let release = self.sim.cell.margins.release_m;
        if self.look_in == 0 {
            self.free = self.nothing_in_the_way();
            self.look_in = LOOK_EVERY;
        }
        self.look_in -= 1;
        for r in 0..self.arms.len() {
            let a = &mut self.arms[r];
            if a.arm.done() && t >= a.rest_until {
                let goal = match a.script.pop() {
                    Some(g) => Some(g),
                    None => {
                        let from = a.arm.q.clone();
                        self.sim.clear_goal(r, &from, release, &mut self.rng)
                    }
                };
                let a = &mut self.arms[r];
                match goal {
                    Some(g) => a.arm.goals.push(g),
                    None => a.rest_until = t + 1.0,
                }
            }
            let a = &mut self.arms[r];
            let had_plan = a.arm.plan.is_some();
            let decel = &self.sim.cell.manipulators[r].max_decel;
            a.arm.advance(t, dt, &self.sim.vmax[r], decel, decel);
            if a.arm.v.iter().any(|v| v.abs() > MOVING_RADPS) {
                let full = if a.arm.scaling >= 1.0 { dt } else { 0.0 };
                a.moving_s += dt;
                a.full_speed_s += full;
                if self.free.get(r).copied().unwrap_or(false) && !a.held_back {
                    a.free_s += dt;
                    a.free_full_speed_s += full;
                }
            }
            if a.arm.new_plan {
                // It waits for its plan's first grant before moving on it.
                a.arm.new_plan = false;
                a.arm.grant_limit_s = 0.0;
                a.unpublished = a.arm.plan.clone();
                a.plan_stamp = None;
            } else if had_plan && a.arm.plan.is_none() {
                a.rest_until = t + 0.3 + self.rng.unit();
            }
        }
        self.asks.clear();
        for u in 0..self.units.len() {
            self.unit_step(u, t, dt);
        }
        &self.asks
    }

    fn unit_step(&mut self, u: usize, t: f64, dt: f64) {
        let [sx, sy] = self.size_xy_m;
        let unit = &mut self.units[u];
        // Drive towards what is granted.
        let (dx, dy) = (unit.goal[0] - unit.pose[0], unit.goal[1] - unit.pose[1]);
        let d = dx.hypot(dy);
        let step = unit.speed_mps * dt;
        if d <= step {
            unit.pose = unit.goal;
        } else {
            unit.pose[0] += dx / d * step;
            unit.pose[1] += dy / d * step;
        }
        let arrived = |p: [f64; 3], q: [f64; 3]| (p[0] - q[0]).hypot(p[1] - q[1]) < 1e-4;
        if let Some((want, _)) = unit.want
            && arrived(unit.pose, want.target)
        {
            unit.want = None;
            unit.ask_at = t + 0.5;
        }
        if unit.want.is_none() && t >= unit.ask_at {
            // Random targets are asked for as moves: a unit on a path has
            // no way to give it up, and two units each standing at the
            // start of the other's path would wait for ever.
            let target = match unit.script.last() {
                Some(&(at, target, kind)) if t >= at => {
                    unit.script.pop();
                    Some((target, kind, 10))
                }
                Some(_) => None,
                None => {
                    let m = 0.12;
                    Some(([self.rng.range(m, sx - m), self.rng.range(m, sy - m), unit.pose[2]], AskKind::Move, 3))
                }
            };
            if let Some((target, kind, patience)) = target {
                let ask = Ask { unit: u, id: unit.next_id, kind, target, speed_mps: unit.speed_mps };
                unit.next_id += 1;
                unit.want = Some((ask, patience));
                unit.ask_at = f64::INFINITY;
                unit.waiting_since = Some(t);
                self.asks.push(ask);
            }
        }
        // A move request asked again when its retry time comes (after a
        // denial, or once at the end of a partial grant).
        if let Some((ask, patience)) = unit.want
            && ask.kind == AskKind::Move
            && unit.waiting_since.is_none()
            && t >= unit.ask_at
            && arrived(unit.pose, unit.goal)
        {
            if patience == 0 {
                unit.want = None;
                unit.ask_at = t + 0.5;
                return;
            }
            let again = Ask { id: unit.next_id, ..ask };
            unit.next_id += 1;
            unit.want = Some((again, patience - 1));
            unit.waiting_since = Some(t);
            unit.ask_at = f64::INFINITY;
            self.asks.push(again);
        }
        // No answer within 3 s: the request is given up.
        if unit.waiting_since.is_some_and(|w| t - w > 3.0) {
            unit.want = None;
            unit.waiting_since = None;
            unit.ask_at = t + 0.5;
        }
    }

    /// The plan arm `r` made and has not published yet.
    pub fn take_plan(&mut self, r: usize) -> Option<JointPlan> {
        self.arms[r].unpublished.take()
    }

    /// Arm `r`'s plan went out at demo time `t` stamped `stamp_ns`.
    pub fn plan_sent(&mut self, r: usize, stamp_ns: u64, t: f64) {
        self.arms[r].plan_stamp = Some(stamp_ns);
        self.arms[r].sent_at = t;
    }

    /// Per arm, whether nothing approaches it: its least clearance (to the
    /// cell, its own links and the other arms, by the spheres: the
    /// oracle's look) is beyond `slow_down_m` (the guard's) past the
    /// clearance margin, or not smaller than at the last look. Where something
    /// approaches it that near, slowing for it is the speed scaling's
    /// rule, not a loss. (One pair standing near, such as a base beside
    /// the cell, hides others that approach less near: their slowing then
    /// counts against the share.)
    pub fn nothing_in_the_way(&mut self) -> Vec<bool> {
        let near = self.sim.cell.margins.clearance_m + self.sim.guard.command_policy().slow_down_m;
        let qs: Vec<&[f64]> = self.arms.iter().map(|a| a.arm.q.as_slice()).collect();
        self.sim.contacts_at(&qs, near as f32);
        let mut free = Vec::with_capacity(self.arms.len());
        for (r, a) in self.arms.iter_mut().enumerate() {
            let least = self.sim.arm_least(r);
            // (not nearer than at the last look)
            free.push(least > near || least >= a.least_m - 1e-6);
            a.least_m = least;
        }
        free
    }

    /// A grant for arm `r` (`state` as the message numbers it, its plan's
    /// stamp, and the plan time it grants up to), at demo time `t`.
    /// `held_by`: whether it names a robot this arm yields to.
    pub fn on_grant(&mut self, r: usize, plan_stamp_ns: u64, (state, held_by): (u8, bool), until_s: f64, t: f64) {
        let a = &mut self.arms[r];
        a.held_back = matches!(state, grant::HOLD | grant::BACK_AWAY) || held_by;
        if a.plan_stamp != Some(plan_stamp_ns) {
            // Not for its plan: a plan the node has not taken within a
            // second (dropped as it went out) is made again from here.
            if a.plan_stamp.is_some() && a.arm.plan.is_some() && a.arm.grant_limit_s == 0.0 && t - a.sent_at > 1.0 {
                a.arm.plan = None;
                a.plan_stamp = None;
            }
            return;
        }
        match state {
            grant::PROCEED | grant::HOLD => {
                a.arm.grant_limit_s = until_s;
                a.arm.back_to = None;
            }
            grant::BACK_AWAY => {
                a.arm.grant_limit_s = f64::INFINITY;
                a.arm.back_to = Some(until_s);
            }
            _ => {
                a.arm.grant_limit_s = f64::INFINITY;
                a.arm.back_to = None;
            }
        }
    }

    /// Arm `r`'s stop flag, at demo time `t`: it brakes after its reaction time.
    pub fn on_stop(&mut self, r: usize, stop: bool, t: f64) {
        let a = &mut self.arms[r];
        a.arm.brake_at = if stop { Some(a.arm.brake_at.unwrap_or(t + a.reaction_s)) } else { None };
    }

    /// Arm `r`'s speed scaling.
    pub fn on_speed(&mut self, r: usize, scaling: f64) {
        self.arms[r].arm.scaling = if scaling.is_finite() { scaling.clamp(0.0, 1.0) } else { 0.0 };
    }

    /// An answer to unit `u`'s request at demo time `t`.
    pub fn on_answer(&mut self, u: usize, a: &UnitAnswer, t: f64) {
        let UnitAnswer { id, result, goal, retry_after_s } = *a;
        let unit = &mut self.units[u];
        let Some((ask, _)) = unit.want.filter(|(a, _)| a.id == id) else {
            return;
        };
        unit.waiting_since = None;
        let retry = if retry_after_s.is_finite() { retry_after_s.clamp(0.1, 5.0) } else { 1.0 };
        match (result, ask.kind) {
            (answer::GRANTED, _) => unit.goal = ask.target,
            (answer::PARTIAL, AskKind::Move) => {
                unit.goal = goal;
                unit.ask_at = t + retry;
            }
            // A path's next increment: on to its end.
            (answer::PARTIAL, AskKind::Path) => unit.goal = goal,
            (answer::DENIED, AskKind::Move) => unit.ask_at = t + retry,
            _ => {
                // Refused (or a path denied): it asks for something else.
                unit.want = None;
                unit.ask_at = t + retry.max(1.0);
            }
        }
    }
}

/// The scripted (start, first goal) of each arm of the sample cell, by its
/// joints' names; `None` for any other cell.
fn scripted_arms(cell: &Workcell) -> Option<Vec<(Vec<f64>, Vec<f64>)>> {
    if cell.manipulators.len() != ARM_SCRIPT.len() {
        return None;
    }
    let mut out = Vec::new();
    for (m, (first, from, to, rest)) in cell.manipulators.iter().zip(ARM_SCRIPT) {
        let mut q = vec![f64::NAN; m.robot.dof()];
        q[m.robot.dof_index(first)?] = 0.0;
        for (name, v) in rest.iter().filter(|(n, _)| !n.is_empty()) {
            q[m.robot.dof_index(name)?] = *v;
        }
        if q.iter().any(|v| v.is_nan()) {
            return None;
        }
        let k = m.robot.dof_index(first)?;
        let (mut a, mut b) = (q.clone(), q);
        a[k] = from;
        b[k] = to;
        out.push((a, b));
    }
    Some(out)
}
