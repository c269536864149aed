//! Closed-loop simulation of a cell's arms under the guard.
//!
//! Each simulated arm moves from random configuration to random
//! configuration, every joint on its own time-optimal profile up to its URDF
//! speed limit (times a speed fraction), accelerating at most at its
//! maximum deceleration. Every cycle its joint state goes to the guard; when
//! the guard says stop, the arm keeps going for its reaction time, then
//! brakes as its `stop_mode` says its controller does (what the forecast
//! assumes of a real arm): every joint synchronised to stand still with the
//! slowest, on the path, or each at its own maximum deceleration. Released,
//! it picks a new target. With [`SimOptions::physics`] the arm brakes
//! under a physics the guard does not know instead ([`crate::braking`]:
//! reaction drawn per stop, deceleration varying with speed and position).
//!
//! After every cycle an oracle independent of the guard's forecasts poses
//! the real configurations and counts sphere-level contacts: sphere against
//! the cell (the field, refined exactly for links allowed to touch an
//! obstacle), against every other arm's spheres (all pairs, including the
//! pairs the collision matrix calls "never"), and between non-adjacent
//! links of one arm. At every new stop the world is copied and run on
//! without the guard for the stopping horizon (plus 50 ms): a stop after
//! which no clearance would have dropped to the workcell's clearance margin
//! (what the workcell defines as colliding) is a false stop; the stricter
//! count, stops after which nothing would have touched, is kept beside it.

use workcell_guard_core::arbiter::GrantState;
use workcell_guard_core::cell::Workcell;
use workcell_guard_core::field::DistanceField;
use workcell_guard_core::guard::{
    ArbitrationPolicy, ArmGrant, Command, CommandPolicy, Decision, Guard, GuardError, JointStateIn, PlanState, Reason,
    Scope, StopSource,
};
use workcell_guard_core::model::coverage::Rng;
use workcell_guard_core::model::{PosedSpheres, SpherePoser};

mod judge;

use crate::braking::BrakePhysics;
use crate::motion::{SimArm, plan_speeds, straight_plan};

/// Episode settings.
#[derive(Clone, Copy, Debug)]
pub struct SimOptions {
    /// Cycle (joint-state period and guard step), s.
    pub dt_s: f64,
    /// Fraction of each joint's URDF speed limit used.
    pub speed_fraction: f64,
    /// Added to the stopping horizon when judging a stop, s.
    pub false_stop_extra_s: f64,
    /// Which episodes hand their plans to the guard.
    pub plans: PlanMode,
    /// Goals per arm and episode (each a plan from the last).
    pub goals: usize,
    /// The arms follow the guard's speed scaling (else full pace until stopped).
    pub obey_scaling: bool,
    /// Robot against robot by whole swept volumes (the guard's baseline),
    /// not time-matched samples.
    pub swept: bool,
    /// The arms obey their grants: never past a grant's end, and back
    /// along their plans when told to back away.
    pub obey_grants: bool,
    /// Arms at their plan's start give way ([`ArbitrationPolicy::give_way_at_start`]).
    pub give_way: bool,
    /// Priority alone decides where a lower arm is caught in a higher
    /// one's increment ([`ArbitrationPolicy::give_way_when_caught`] off).
    pub strict_priority: bool,
    /// [`ArbitrationPolicy::go_on_when_clear`].
    pub go_on: bool,
    /// [`ArbitrationPolicy::boost_after_s`] (`None`: the cell's).
    pub boost_after_s: Option<f64>,
    /// The arms brake under [`BrakePhysics::for_manipulator`] of their
    /// configured figures (a reaction time drawn per stop; a deceleration
    /// that varies with speed and position, the effective one of its
    /// physics from where braking begins), not exactly at those figures.
    pub physics: bool,
    /// [`CommandPolicy::slow_down_m`] (`None`: its default, the node's).
    pub slow_down_m: Option<f64>,
    /// Each episode is also run without the guard, to tell the episodes
    /// with a real hazard (unguarded, the arms come within the clearance
    /// margin) from the others.
    pub hazards: bool,
    /// The oracle judges contacts and stops by the links' exact shapes
    /// where their spheres come within the clearance margin (else by the
    /// spheres alone). Always so where the guard refines by them
    /// (`guard.exact_links`): its arms come nearer than their spheres'
    /// slack, and only the shapes tell a contact there.
    pub exact_oracle: bool,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            dt_s: 0.002,
            speed_fraction: 1.0,
            false_stop_extra_s: 0.05,
            plans: PlanMode::Half,
            goals: 2,
            obey_scaling: false,
            swept: false,
            obey_grants: false,
            give_way: false,
            strict_priority: false,
            go_on: false,
            boost_after_s: None,
            physics: false,
            slow_down_m: None,
            hazards: false,
            exact_oracle: false,
        }
    }
}

pub use crate::cells::{PlanMode, cell_with_arms};
pub use crate::report::SimReport;

/// A cell, its guard and the oracle's buffers.
pub struct Sim {
    pub(crate) cell: Workcell,
    pub(crate) guard: Guard,
    pub(crate) posers: Vec<SpherePoser>,
    pub(crate) posed: Vec<PosedSpheres>,
    limits: Vec<Vec<(f64, f64)>>,
    pub(crate) vmax: Vec<Vec<f64>>,
    /// Per arm, per link: first slot, end slot, box of its posed spheres.
    boxes: Vec<Vec<(usize, usize, [f32; 6])>>,
    /// Per arm, its least clearance at the oracle's last look.
    arm_min: Vec<f64>,
    pub(crate) opts: SimOptions,
    /// Which voxels a crossing sweep's sample already holds.
    pub(crate) stamps: crate::crossing::Stamps,
    /// Per arm, its braking physics (used with `opts.physics`).
    physics: Vec<BrakePhysics>,
    /// Draws the reaction times under `opts.physics`.
    reactions: Rng,
}

#[derive(Clone, Copy, Default)]
pub(crate) struct Contacts {
    pub(crate) cell: bool,
    robot: bool,
    selfc: bool,
    pub(crate) min: f64,
}

impl Contacts {
    /// Counts one cycle's contacts and least clearance into `rep`.
    fn tally(&self, rep: &mut SimReport) {
        rep.min_clearance_m = rep.min_clearance_m.min(self.min);
        rep.contacts_cell += usize::from(self.cell);
        rep.contacts_robot += usize::from(self.robot);
        rep.contacts_self += usize::from(self.selfc);
    }
}

impl Sim {
    /// A simulation of `cell` (field built here, collision matrix from `matrix_cache`).
    pub fn new(cell: Workcell, opts: SimOptions, matrix_cache: Option<&std::path::Path>) -> Result<Sim, GuardError> {
        let opts = SimOptions { exact_oracle: opts.exact_oracle || cell.guard.exact_links, ..opts };
        let field = DistanceField::from_workcell(&cell);
        let (mut guard, _) = workcell_guard_description::build_guard(&cell, field, matrix_cache)?;
        guard.set_time_matched(!opts.swept);
        let policy = guard.arbitration_policy();
        let boost_after_s = opts.boost_after_s.or(policy.boost_after_s);
        let p = ArbitrationPolicy {
            give_way_at_start: opts.give_way,
            give_way_when_caught: policy.give_way_when_caught && !opts.strict_priority,
            go_on_when_clear: opts.go_on,
            ..policy
        };
        guard.set_arbitration_policy(ArbitrationPolicy { boost_after_s, ..p });
        if let Some(slow_down_m) = opts.slow_down_m {
            guard.set_command_policy(CommandPolicy { slow_down_m, ..guard.command_policy() });
        }
        let posers: Vec<SpherePoser> =
            cell.manipulators.iter().map(|m| SpherePoser::new(&m.robot, &m.spheres, m.base)).collect();
        let posed = posers.iter().map(|p| p.posed()).collect();
        let limits =
            cell.manipulators.iter().map(|m| workcell_guard_core::guard::matrix::sample_ranges(&m.robot)).collect();
        let vmax = cell.manipulators.iter().map(|m| plan_speeds(m, opts.speed_fraction)).collect();
        let boxes = cell.manipulators.iter().map(|m| vec![(0, 0, [0.0; 6]); m.robot.links.len()]).collect();
        let arm_min = vec![f64::INFINITY; cell.manipulators.len()];
        let physics = cell.manipulators.iter().map(BrakePhysics::for_manipulator).collect();
        let reactions = Rng::new(1);
        Ok(Sim {
            cell,
            guard,
            posers,
            posed,
            limits,
            vmax,
            boxes,
            arm_min,
            opts,
            stamps: Default::default(),
            physics,
            reactions,
        })
    }

    /// The guard.
    pub fn guard(&self) -> &Guard {
        &self.guard
    }

    /// The guard, to switch its checks to their reference twins.
    pub fn guard_mut(&mut self) -> &mut Guard {
        &mut self.guard
    }

    fn random_q(&self, r: usize, rng: &mut Rng) -> Vec<f64> {
        // Stay inside 90 % of each range, away from the hard limits.
        self.limits[r]
            .iter()
            .map(|&(lo, hi)| {
                let (c, h) = ((lo + hi) / 2.0, (hi - lo) / 2.0 * 0.9);
                rng.range(c - h, c + h)
            })
            .collect()
    }

    /// Per link of arm `r`'s posed spheres: slot range and box.
    fn link_boxes(&mut self, r: usize) {
        let p = &self.posed[r];
        let boxes = &mut self.boxes[r];
        for b in boxes.iter_mut() {
            *b = (
                usize::MAX,
                0,
                [f32::INFINITY, f32::INFINITY, f32::INFINITY, f32::NEG_INFINITY, f32::NEG_INFINITY, f32::NEG_INFINITY],
            );
        }
        for i in 0..p.len() {
            let b = &mut boxes[p.link[i] as usize];
            b.0 = b.0.min(i);
            b.1 = b.1.max(i + 1);
            for (c, v) in [p.x[i], p.y[i], p.z[i]].into_iter().enumerate() {
                b.2[c] = b.2[c].min(v - p.r[i]);
                b.2[3 + c] = b.2[3 + c].max(v + p.r[i]);
            }
        }
    }

    /// A sphere's clearance to the cell: the field's lower bound, and where
    /// that is within `within`, the exact distance to the obstacles (the
    /// field is piecewise constant, so between two cycles it can drop by a
    /// voxel where the geometry has not come closer at all).
    fn cell_gap(&self, r: usize, p: &PosedSpheres, i: usize, within: f32) -> f32 {
        let (l, c) = (p.link[i] as usize, [p.x[i], p.y[i], p.z[i]]);
        let f = self.guard.cell_clearance(r, l, c, p.r[i]);
        if f > within { f } else { self.guard.exact_cell_clearance_of(r, l, c, p.r[i]) }
    }

    /// Least sphere gap between link `la` of arm `ra` and `lb` of `rb`
    /// (`+∞` when their boxes are more than `within` apart).
    fn link_pair_gap(&self, ra: usize, la: usize, rb: usize, lb: usize, within: f32) -> f32 {
        let (a, b) = (&self.boxes[ra][la], &self.boxes[rb][lb]);
        if a.0 == usize::MAX
            || b.0 == usize::MAX
            || (0..3).any(|c| a.2[c] - within > b.2[3 + c] || b.2[c] - within > a.2[3 + c])
        {
            return f32::INFINITY;
        }
        let (p, q) = (&self.posed[ra], &self.posed[rb]);
        let mut best = f32::INFINITY;
        for i in a.0..a.1 {
            for j in b.0..b.1 {
                best = best.min(gap(p, i, q, j));
            }
        }
        best
    }

    /// Arm `r` alone at `q`: its least sphere-level clearance to the cell,
    /// and to itself, each exact up to `within`.
    fn arm_gaps(&mut self, r: usize, q: &[f64], within: f32) -> (f64, f64) {
        self.posers[r].pose(q, &mut self.posed[r]).expect("sized by the poser");
        self.link_boxes(r);
        let (mut cell, mut own) = (f64::INFINITY, f64::INFINITY);
        let p = &self.posed[r];
        for i in 0..p.len() {
            cell = cell.min(f64::from(self.cell_gap(r, p, i, within)));
        }
        let nl = self.boxes[r].len();
        for la in 0..nl {
            for lb in (la + 1)..nl {
                if self.guard.pair_matters(r, la, r, lb) {
                    own = own.min(f64::from(self.link_pair_gap(r, la, r, lb, within)));
                }
            }
        }
        (cell, own)
    }

    /// Whether arm `r` at `q` is clear of the cell by `cell_m` and of
    /// itself by the release margin.
    fn arm_clear(&mut self, r: usize, q: &[f64], cell_m: f64) -> bool {
        let release = self.cell.margins.release_m;
        let (cell, own) = self.arm_gaps(r, q, cell_m.max(release) as f32);
        cell > cell_m && own > release
    }

    /// A random configuration of arm `r` clear of the cell by `cell_m` and
    /// of itself by the release margin (what a planner would give as a goal).
    pub(crate) fn clear_q(&mut self, r: usize, cell_m: f64, rng: &mut Rng) -> Option<Vec<f64>> {
        for _ in 0..2000 {
            let q = self.random_q(r, rng);
            if self.arm_clear(r, &q, cell_m) {
                return Some(q);
            }
        }
        None
    }

    /// A goal for arm `r` from `from` as a planner for the static cell
    /// would give one: clear of the cell by `cell_m` and of itself by the
    /// release margin, and so is the straight path to it (checked every
    /// 0.01 rad of the joint that moves most). `None` after 200 tries.
    pub(crate) fn clear_goal(&mut self, r: usize, from: &[f64], cell_m: f64, rng: &mut Rng) -> Option<Vec<f64>> {
        let mut at = from.to_vec();
        for _ in 0..200 {
            let g = self.clear_q(r, cell_m, rng)?;
            let span = g.iter().zip(from).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
            let n = (span / 0.01).ceil() as usize;
            let clear = (1..n).all(|k| {
                let u = k as f64 / n as f64;
                for ((x, a), b) in at.iter_mut().zip(from).zip(&g) {
                    *x = a + u * (b - a);
                }
                self.arm_clear(r, &at, cell_m)
            });
            if clear {
                return Some(g);
            }
        }
        None
    }

    /// Advances every arm by one cycle. Under `opts.physics`, an arm whose
    /// brakes act this cycle brakes along its plan at its physics'
    /// effective deceleration from its speed and position there.
    fn advance(&self, states: &mut [SimArm], t: f64) {
        for (r, s) in states.iter_mut().enumerate() {
            let onset = s.brake_at.is_some_and(|b| b <= t && b > t - self.opts.dt_s);
            let decel = &self.cell.manipulators[r].max_decel;
            if self.opts.physics && onset {
                self.physics[r].brake_on_plan(s);
            } else if s.physics_rates && s.brake_at.is_none() {
                crate::braking::restore_rates(s, decel);
            }
            s.advance(t, self.opts.dt_s, &self.vmax[r], decel, decel);
        }
    }

    /// Configurations of every arm, each clear of the cell, itself and the
    /// others by the release margin (`None` after 50 tries).
    pub fn clear_start(&mut self, rng: &mut Rng) -> Option<Vec<Vec<f64>>> {
        let release = self.cell.margins.release_m;
        let n = self.cell.manipulators.len();
        for _ in 0..50 {
            let mut states = Vec::new();
            for r in 0..n {
                let Some(q) = self.clear_q(r, release, rng) else { break };
                states.push(SimArm::new(q, Vec::new()));
            }
            if states.len() == n && self.contacts(&states, release as f32).min > release {
                return Some(states.into_iter().map(|s| s.q).collect());
            }
        }
        None
    }

    /// Runs one episode with `seed`: every arm is given `opts.goals` goals
    /// (random configurations clear of the cell and itself) and follows a
    /// plan to each in turn, under the guard, until all are reached or the
    /// time limit (three times the unguarded makespan, plus a second).
    pub fn episode(&mut self, seed: u64) -> SimReport {
        let mut rep = SimReport { episodes: 1, min_clearance_m: f64::INFINITY, ..Default::default() };
        let mut rng = Rng::new(seed);
        self.reactions = Rng::new(seed ^ 0x9e37_79b9_7f4a_7c15);
        let Some(start) = self.clear_start(&mut rng) else {
            rep.skipped = 1;
            rep.episodes = 0;
            return rep;
        };
        let mut arms: Vec<SimArm> = Vec::with_capacity(start.len());
        for (r, q) in start.into_iter().enumerate() {
            let mut goals: Vec<Vec<f64>> = Vec::with_capacity(self.opts.goals);
            for _ in 0..self.opts.goals {
                let from = goals.last().unwrap_or(&q).clone();
                match self.clear_goal(r, &from, self.cell.margins.release_m, &mut rng) {
                    Some(g) => goals.push(g),
                    None => break,
                }
            }
            goals.reverse();
            // Parked at its last goal, it backs away along its last plan
            // where its grant says so.
            arms.push(SimArm { keep_last: true, ..SimArm::new(q, goals) });
        }
        let unguarded = self.unguarded_makespan(&arms);
        let hazard = self.opts.hazards && self.unguarded_hazard(&arms, 3.0 * unguarded + 1.0);
        let publish = self.opts.plans.publishes(seed);
        self.run(&mut rep, arms, publish, (unguarded, 3.0 * unguarded + 1.0));
        if rep.finished > 0 {
            rep.slowest.push((rep.makespan_s / rep.makespan_unguarded_s, seed));
        }
        if !hazard && rep.finished > 0 {
            rep.makespan_clear_s = (rep.makespan_s, rep.makespan_unguarded_s);
            if publish {
                rep.makespan_planned_s = rep.makespan_clear_s;
            }
        }
        rep.clear_stops = if hazard { (0, 0, 0.0) } else { (rep.stops, rep.false_stops, rep.busy_s) };
        if hazard {
            // Nobody can finish such an episode without a contact: it is
            // not a stall but a hazard, caught when nothing touched.
            rep.hazards += 1;
            rep.hazards_caught += usize::from(rep.contacts() == 0);
            rep.hazards_unfinished += rep.stalled;
            (rep.stalled, rep.stalled_parked) = (0, 0);
        }
        rep.list_seed(seed);
        rep
    }

    /// Runs `arms` (at rest, with their goals) under the guard until all
    /// goals are reached or `limit_s` of moving time has passed; the
    /// guard has their plans when `publish`; `unguarded` is their
    /// makespan without the guard ([`Sim::unguarded_makespan`]). Adds to
    /// `rep`.
    // long: the closed loop's cycle: guard, oracle and motion, in order
    pub(crate) fn run(
        &mut self,
        rep: &mut SimReport,
        mut arms: Vec<SimArm>,
        publish: bool,
        (unguarded, limit_s): (f64, f64),
    ) {
        let n = arms.len();
        self.guard.reset();
        for r in 0..n {
            let _ = self.guard.set_plan(r, None);
        }
        let dt = self.opts.dt_s;
        // Start-up: the arms stand still until the guard has history and
        // has held them clear for its hold time.
        let warm = ((self.guard.settings().release_hold_s + 0.05) / dt).ceil() as usize;
        let limit = (limit_s / dt).ceil() as usize;
        let mut was_stopped = vec![true; n];
        // When each arm was last released from a stop of the checks (not a
        // grant's hold), whether its last cycle was a hold; its priority.
        let (mut released_at, mut held_before) = (vec![f64::NEG_INFINITY; n], vec![false; n]);
        let mut last_grant = vec![ArmGrant::NONE; n];
        let prio: Vec<i64> = self.cell.manipulators.iter().map(|m| m.priority).collect();
        let settle_s = self.guard.settings().release_hold_s;
        let mut finished_at = None;
        let trace = crate::report::trace_every();
        for k in 0..(warm + limit) {
            let t = k as f64 * dt;
            let moving = k >= warm;
            if moving && arms.iter().all(SimArm::done) {
                finished_at = Some(t - warm as f64 * dt);
                break;
            }
            for (r, a) in arms.iter_mut().enumerate() {
                if std::mem::take(&mut a.new_plan) && publish {
                    let _ = self.guard.set_plan(r, a.plan.clone());
                }
            }
            let started = std::time::Instant::now();
            for (r, a) in arms.iter().enumerate() {
                let s = JointStateIn { robot: r, stamp_s: t, positions: &a.q, velocities: Some(&a.v) };
                let _ = self.guard.ingest(t, &s);
            }
            // The node's cycle: the arms obey the published stop flags.
            let out = self.guard.cycle(t, Scope::All);
            let commands: Vec<Command> = out.commands.to_vec();
            let decisions: Vec<Decision> = if trace.is_some() { out.manipulators.to_vec() } else { Vec::new() };
            let escaping: Vec<bool> =
                out.manipulators.iter().map(|d| matches!(d, Decision::Continue { escaping: true, .. })).collect();
            rep.guard_time_s += started.elapsed().as_secs_f64();
            rep.cycles += 1;
            for r in 0..n {
                let stop = commands[r].stop;
                arms[r].scaling = if self.opts.obey_scaling { commands[r].speed_scaling } else { 1.0 };
                if self.opts.obey_grants {
                    obey_grant(&mut arms[r], &commands[r]);
                }
                let held = commands[r].source == StopSource::Grant;
                rep.note_grant(&commands[r], &mut last_grant[r], moving && !arms[r].done());
                if moving {
                    account(rep, (&commands[r], (r, prio[r])), &arms[r], (escaping[r], was_stopped[r]), dt);
                }
                if stop && arms[r].brake_at.is_none() {
                    let react = if self.opts.physics {
                        self.physics[r].reaction(&mut self.reactions)
                    } else {
                        self.cell.manipulators[r].reaction_time_s
                    };
                    arms[r].brake_at = Some(t + react);
                    if moving && !was_stopped[r] && held {
                        // Its grant holds it on its path: the arbitration's
                        // pause, counted apart from the checks' stops.
                        rep.holds += 1;
                    } else if moving && !was_stopped[r] {
                        // Stopped again within the settle time of its release: a flip.
                        rep.restops += usize::from(t - released_at[r] < settle_s);
                        self.judge_stop(rep, &arms, r, t, cause_class(&commands[r]));
                    }
                } else if !stop && arms[r].brake_at.is_some() {
                    arms[r].brake_at = None;
                    if !held_before[r] {
                        released_at[r] = t;
                    }
                }
                held_before[r] = held;
                was_stopped[r] = stop;
            }
            if !moving {
                for a in &mut arms {
                    a.brake_at = None;
                }
                continue;
            }
            if trace.is_some_and(|every| k % every == 0) {
                crate::report::trace_cycle(t, &arms, &commands, &decisions);
            }
            self.advance(&mut arms, t);
            let c = self.contacts(&arms, 0.0);
            if trace.is_some() && (c.cell || c.robot || c.selfc) {
                println!(
                    "t {t:7.3} contact: least clearance {:.4} m (cell {}, robots {}, own {}); per arm {:.4?}",
                    c.min, c.cell, c.robot, c.selfc, self.arm_min
                );
            }
            c.tally(rep);
        }
        match finished_at {
            Some(t) => {
                rep.finished += 1;
                rep.makespan_s += t;
                rep.makespan_unguarded_s += unguarded;
            }
            None => {
                rep.stalled += 1;
                rep.stalled_parked += usize::from((0..arms.len()).any(|r| self.blocked_by_parked(&arms, r)));
            }
        }
    }
}

/// Adds one cycle of arm `arm` under command `c` to the shares of time
/// (`escaping`, `was_stopped`: last cycle's); `who`: the arm's index and
/// priority.
fn account(rep: &mut SimReport, (c, who): (&Command, (usize, i64)), arm: &SimArm, flags: (bool, bool), dt: f64) {
    let ((r, priority), (escaping, was_stopped)) = (who, flags);
    rep.arm(r).priority = priority;
    if escaping {
        rep.escaping_s += dt;
        rep.escapes += usize::from(was_stopped);
    }
    if !arm.done() {
        rep.busy_s += dt;
        rep.arm(r).busy_s += dt;
        let share = if c.source == StopSource::Grant {
            rep.held_s += dt;
            &mut rep.arm(r).held_s
        } else if c.stop {
            rep.stopped_s += dt;
            &mut rep.arm(r).stopped_s
        } else if c.speed_scaling < 1.0 {
            rep.slowed_s += dt;
            &mut rep.arm(r).slowed_s
        } else {
            rep.full_s += dt;
            &mut rep.arm(r).full_s
        };
        *share += dt;
    }
    rep.retreats += usize::from(c.retreat);
}

/// What a stop was for: 0 the cell, 1 its own links, 2 another arm, 3
/// anything else (data, holding).
fn cause_class(c: &Command) -> usize {
    match c.cause.map(|c| c.reason) {
        Some(Reason::Cell) => 0,
        Some(Reason::SelfCollision) => 1,
        Some(Reason::Robot { .. }) => 2,
        _ => 3,
    }
}

/// What an arm's controller does with its grant: it never passes the
/// grant's end while it proceeds or holds, and a retreat ordered by a
/// back-away runs it back along its plan to the grant's retreat point
/// (given up when stopped or no longer backing away).
fn obey_grant(arm: &mut SimArm, c: &Command) {
    if c.retreat {
        arm.back_to = Some(c.grant.until_s);
    }
    if c.grant.state != GrantState::BackAway || c.stop {
        arm.back_to = None;
    }
    arm.grant_limit_s = match c.grant.state {
        GrantState::Proceed | GrantState::Hold => c.grant.until_s,
        _ => f64::INFINITY,
    };
}

/// `x ≤ lim`, with NaN counting as at or below (a NaN clearance is a contact).
#[inline]
fn not_above<T: PartialOrd>(x: T, lim: T) -> bool {
    !matches!(x.partial_cmp(&lim), Some(std::cmp::Ordering::Greater))
}

#[inline]
fn gap(p: &PosedSpheres, i: usize, q: &PosedSpheres, j: usize) -> f32 {
    let (dx, dy, dz) = (p.x[i] - q.x[j], p.y[i] - q.y[j], p.z[i] - q.z[j]);
    (dx * dx + dy * dy + dz * dz).sqrt() - p.r[i] - q.r[j]
}

/// Runs `episodes` episodes (crossing ones with `crossing`) from seed
/// `seed` on, one thread per simulator in `sims`, and adds up what they
/// saw. Seeds are handed out in order (each seed gives the same episode
/// whichever thread runs it); crossing draws without a crossing set of
/// plans do not count, up to 40 seeds per episode asked for.
pub fn run_episodes(sims: Vec<Sim>, seed: u64, episodes: usize, crossing: bool) -> SimReport {
    use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
    let (next, done) = (AtomicU64::new(0), AtomicUsize::new(0));
    let limit = if crossing { 40 * episodes as u64 } else { episodes as u64 };
    let run = |mut s: Sim| {
        let mut r = SimReport { min_clearance_m: f64::INFINITY, ..SimReport::default() };
        loop {
            let k = next.fetch_add(1, SeqCst);
            if k >= limit || done.load(SeqCst) >= episodes {
                return r;
            }
            let e = if crossing { s.crossing_episode(seed + k) } else { s.episode(seed + k) };
            // One finished past the count by another thread is left out.
            if e.episodes == 0 || done.fetch_add(e.episodes, SeqCst) < episodes {
                r.merge(&e);
            }
        }
    };
    let mut total = SimReport { min_clearance_m: f64::INFINITY, ..SimReport::default() };
    std::thread::scope(|sc| {
        let handles: Vec<_> = sims.into_iter().map(|s| sc.spawn(|| run(s))).collect();
        for h in handles {
            if let Ok(r) = h.join() {
                total.merge(&r);
            }
        }
    });
    total
}
