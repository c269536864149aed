//! One cycle, top to bottom. Joint states are taken as they arrive
//! ([`Guard::ingest`]); a cycle ([`Guard::cycle`]) then runs these stages,
//! each a function of its own file whose arguments are what it reads and
//! writes; per arm, each leaves its result in the arm's scratch
//! ([`ArmForecast`], [`ArmPoses`], [`Track`]) for the next:
//!
//! 1. `prepare` (`prepare.rs`): per arm, its data problem or its stopping
//!    path, sampled and posed in batches (the forecast);
//! 2. `arbitrate` (`arbitrate/`): the increments of the arms on plans,
//!    where they meet, and the grants;
//! 3. `check_cell` (`check_cell.rs`): every sampled sphere against the cell;
//! 4. `check_self` (`check_self.rs`): against the arm's own links;
//! 5. `check_robots` (`check_robots.rs`): against the other arms;
//! 6. `decide` (`hysteresis.rs`): the stop or release ([`hysteresis::Phase`]);
//! 7. `command` (`command.rs`): the decision as the arm's [`Command`];
//! 8. `platen.run` (`platen.rs`): the platen's pose updates, requests and
//!    paths, beside the arms.
//!
//! A cycle split in two ([`Scope::First`], then [`Scope::Rest`]) runs
//! stages 1–7 for the first arm, then 3–8 for the others, and decides
//! exactly what one whole cycle would.

use super::*;
use crate::arbiter::GrantState;

impl Guard {
    /// Takes one joint state as it arrives, ahead of the next
    /// [`Guard::cycle`]. A refused state stops its robot from the next
    /// cycle until a state is accepted again; an unknown robot is counted
    /// ([`Guard::unknown_inputs`]). Allocates nothing.
    pub fn ingest(&mut self, now_s: f64, s: &JointStateIn<'_>) -> Result<(), SampleError> {
        self.note_time(now_s);
        let watchdog_s = self.settings.watchdog_s;
        let Some(arm) = self.arms.get_mut(s.robot) else {
            self.unknown_inputs += 1;
            return Ok(());
        };
        let r = if s.stamp_s > now_s + watchdog_s {
            Err(SampleError::FutureStamp { stamp_s: s.stamp_s, now_s })
        } else {
            arm.state.est.push(s.stamp_s, s.positions, s.velocities)
        };
        arm.state.rejected = r.err();
        if arm.state.rejected.is_some() {
            arm.state.rejected_since = arm.state.rejected;
        }
        r
    }

    /// The cycle at time `now_s`: the one way decisions and commands are
    /// made, by the node, the simulator and the tests alike. Decides the
    /// robots `scope` names from the joint states taken so far
    /// ([`Guard::ingest`]), makes their commands, and (but for
    /// [`Scope::First`]) applies the platen pose updates and answers the
    /// move requests taken since the last cycle. Allocates nothing.
    pub fn cycle(&mut self, now_s: f64, scope: Scope) -> Decisions<'_> {
        self.note_time(now_s);
        match scope {
            Scope::All => {
                self.pending = None;
                self.decide_part(now_s, Part::All);
                self.unknown_inputs += self.platen.run(now_s);
            }
            Scope::First(robot) if robot < self.arms.len() => {
                self.pending = None;
                self.decide_part(now_s, Part::Only(robot));
            }
            Scope::First(_) => {}
            Scope::Rest => {
                match self.pending.take() {
                    Some(p) => {
                        self.check(p.lim, Part::Except(p.first));
                        for ri in (0..self.arms.len()).filter(|&ri| ri != p.first) {
                            self.decide(ri, (p.now_s, now_s), p.lim.release, p.unknown);
                        }
                    }
                    None => self.decide_part(now_s, Part::All),
                }
                self.unknown_inputs += self.platen.run(now_s);
            }
        }
        self.outcome()
    }

    /// Checks and decides the arms `part` covers (a first half when it is
    /// one arm), and makes their commands.
    fn decide_part(&mut self, now_s: f64, part: Part) {
        let lim = Limits {
            margin: self.margins.clearance_m as f32,
            release: self.margins.release_m as f32,
            slow_down: self.policy.slow_down_m as f32,
        };
        let unknown = self.prepare_all(now_s);
        self.arbitrate(now_s);
        self.check(lim, part);
        for ri in (0..self.arms.len()).filter(|&ri| part.arm(ri)) {
            self.decide(ri, (now_s, now_s), lim.release, unknown);
        }
        if let Part::Only(first) = part {
            self.pending = Some(Pending { now_s, first, unknown, lim });
        }
    }

    /// Prepares every arm; the first robot with no joint state, if any.
    fn prepare_all(&mut self, now_s: f64) -> Option<u16> {
        let mut unknown = None;
        for ri in 0..self.arms.len() {
            let backing = self.arbitration.grants.get(ri).is_some_and(|g| g.state == GrantState::BackAway);
            let short_of_end = self.arbitration.short_of_end(ri, self.arms[ri].state.follow.tracker.plan());
            let settings = (&self.settings, &self.margins);
            prepare::prepare(&mut self.arms[ri], now_s, settings, (backing, short_of_end));
            let a = &mut self.arms[ri];
            let judged = (a.state.phase.stopped() || a.state.phase.escaping()) && a.scratch.forecast.borne_out;
            let target = judged.then(|| Target::of(a.state.cause)).flatten();
            let on_plan = matches!(a.state.follow.state, PlanState::On { .. });
            a.scratch.track.escape =
                Escape::start(target, a.scratch.forecast.n_cfg, on_plan, self.margins.release_m as f32);
            if !self.arms[ri].scratch.forecast.present && unknown.is_none() {
                unknown = Some(ri as u16);
            }
        }
        unknown
    }

    /// The checks of the arms `part` covers: the cell, each arm's own
    /// links, the other arms; each arm's track holds what they found.
    fn check(&mut self, lim: Limits, part: Part) {
        for ri in 0..self.arms.len() {
            self.arms[ri].scratch.look.slowed = self.slowed_by(ri);
            self.arms[ri].scratch.track.gauge = (lim.margin, lim.slow_down);
        }
        let checked = Checked { matrix: &self.matrix, allowed: &self.allowed };
        check_cell::check_cell(&self.cell, &mut self.arms, &self.matrix, lim, part);
        check_self::check_self(&mut self.arms, checked, &mut self.exact, lim, part);
        check_robots::check_robots(&mut self.robots, &mut self.arms, checked, &mut self.exact, lim, part);
    }

    /// Reads the clock: a jump forgets every history and stop, as at
    /// start-up ([`clock`]).
    fn note_time(&mut self, now_s: f64) {
        if self.clock.read(now_s) {
            self.reset();
        }
    }

    /// Stages 4 and 5 for robot `ri`: its stop or release, decided as of
    /// `decided_s` (the first half's time in a split cycle), then its
    /// command at `now_s`.
    fn decide(&mut self, ri: usize, (decided_s, now_s): (f64, f64), release: f32, unknown: Option<u16>) {
        let evidence = self.release_evidence(ri, decided_s, release);
        let timing = (release, self.settings.release_hold_s, self.settings.velocity_fit_window_s);
        self.decisions[ri] = hysteresis::decide(&mut self.arms[ri], ri, decided_s, timing, unknown, evidence);
        self.command(ri, now_s);
    }

    /// Takes what `inputs` hold and runs a whole cycle
    /// ([`Guard::cycle`] with [`Scope::All`]).
    pub fn step(&mut self, now_s: f64, inputs: &Inputs<'_>) -> Decisions<'_> {
        for s in inputs.joint_states {
            let _ = self.ingest(now_s, s);
        }
        for &p in inputs.platen_poses {
            self.take_platen_pose(p);
        }
        for r in inputs.platen_paths {
            self.take_path_request(r.clone());
        }
        for &r in inputs.platen_requests {
            self.take_move_request(r);
        }
        self.cycle(now_s, Scope::All)
    }

    /// The decisions and commands as they stand, with the platen's status
    /// and this cycle's answers.
    pub fn outcome(&self) -> Decisions<'_> {
        Decisions {
            manipulators: &self.decisions,
            commands: &self.commands,
            platen: self.platen.status(),
            answers: self.platen.answers(),
        }
    }
}
