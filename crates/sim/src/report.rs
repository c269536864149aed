//! The arms' simulation report: what the episodes counted, and the
//! summary as a person reads it.

use std::fmt::Write;
use workcell_guard_core::guard::{ArmGrant, Command};

/// What one or more episodes did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SimReport {
    /// Episodes run.
    pub episodes: usize,
    /// Episodes skipped because no clear start was found.
    pub skipped: usize,
    /// Guard cycles.
    pub cycles: usize,
    /// Cycles with a sphere-level contact, by kind.
    pub contacts_cell: usize,
    /// Between two arms.
    pub contacts_robot: usize,
    /// Within one arm.
    pub contacts_self: usize,
    /// Stops (transitions from moving to stopped, per arm).
    pub stops: usize,
    /// Stops after which continuing would not have come within the
    /// clearance margin (what the workcell defines as colliding).
    pub false_stops: usize,
    /// Stops after which continuing would not even have touched (sphere
    /// overlap): the stricter count.
    pub false_stops_touch: usize,
    /// Least clearance the oracle saw, m.
    pub min_clearance_m: f64,
    /// Time spent in `Guard::cycle`, s.
    pub guard_time_s: f64,
    /// Stops of arms whose plan the guard had, and of those the false ones.
    pub stops_planned: usize,
    /// False stops of arms whose plan the guard had.
    pub false_planned: usize,
    /// False stops by cause: the arm was forecast by extrapolation (no
    /// plan given, or off it).
    pub false_extrapolated: usize,
    /// On plan, the clearance the oracle measured was shrinking at the stop.
    pub false_approaching: usize,
    /// On plan, the clearance was growing (moving away) at the stop.
    pub false_separating: usize,
    /// Stops, and false ones, by what the guard stopped for: the cell, the
    /// arm's own links, another arm, anything else (data, holding).
    pub stops_for: [usize; 4],
    /// The false ones among them.
    pub false_for: [usize; 4],
    /// Arm-seconds stopped while moving time ran.
    pub stopped_s: f64,
    /// Arm-seconds slowed (speed scaling below 1, not stopped).
    pub slowed_s: f64,
    /// Arm-seconds released to escape (moving away from what stopped it).
    pub escaping_s: f64,
    /// Times a stopped arm was released to escape.
    pub escapes: usize,
    /// Episodes in which every arm reached every goal.
    pub finished: usize,
    /// Episodes cut off at their time limit (three times the unguarded
    /// makespan, plus a second) with goals left.
    pub stalled: usize,
    /// Of them, those where an arm's way on (straight to each goal left,
    /// from where it stands) comes within the clearance margin of an arm
    /// that finished and stands parked: no arm that obeys the guard
    /// finishes those without that one moving again.
    pub stalled_parked: usize,
    /// The seeds of the stalled episodes, lowest first (run one alone with
    /// `--seed`).
    pub stalled_seeds: Vec<u64>,
    /// The seeds of the episodes with a contact, lowest first.
    pub contact_seeds: Vec<u64>,
    /// The seeds of the episodes with a false stop, lowest first.
    pub false_stop_seeds: Vec<u64>,
    /// Of those, the episodes without a hazard (nothing true in the way).
    pub clear_false_stop_seeds: Vec<u64>,
    /// The seeds of the episodes with a flip (a stop within the settle
    /// time of the same arm's release), lowest first.
    pub flip_seeds: Vec<u64>,
    /// Sum over finished episodes of the time until the last arm reached
    /// its last goal, s.
    pub makespan_s: f64,
    /// The same episodes' makespan without the guard (every plan followed
    /// at full pace), s.
    pub makespan_unguarded_s: f64,
    /// Of those, the episodes without a hazard (their unguarded run stays
    /// outside the clearance margin, so it is a makespan the guard could
    /// match): guarded and unguarded makespans, s.
    pub makespan_clear_s: (f64, f64),
    /// Of those, the episodes whose plans the guard had (`--plans`): their
    /// guarded and unguarded makespans, s. The rest of
    /// [`SimReport::makespan_clear_s`] is the episodes it forecast without
    /// plans.
    pub makespan_planned_s: (f64, f64),
    /// The finished episodes slowest against their unguarded run: (guarded
    /// over unguarded makespan, seed), slowest first, [`SLOWEST_LISTED`] at
    /// most.
    pub slowest: Vec<(f64, u64)>,
    /// The same episodes' makespan with one arm at a time in the shared
    /// zone, asked for before each move that enters it (crossing episodes
    /// only), s.
    pub makespan_one_at_a_time_s: f64,
    /// The same, moves split at the zone's edge (optimistic), s.
    pub makespan_one_at_a_time_tight_s: f64,
    /// Arm-seconds held by a grant.
    pub held_s: f64,
    /// Arm-seconds at full speed (not stopped, speed scaling 1) while the
    /// arm had goals left.
    pub full_s: f64,
    /// Arm-seconds with goals left (the shares' whole).
    pub busy_s: f64,
    /// Episodes with a real hazard: run without the guard, the arms come
    /// within the clearance margin ([`crate::SimOptions::hazards`]); not
    /// counted as stalled.
    pub hazards: usize,
    /// Those the guard kept without a contact.
    pub hazards_caught: usize,
    /// Those not finished (the guard stopped the arms short of the contact).
    pub hazards_unfinished: usize,
    /// Over the episodes without a hazard (nothing true in the way): their
    /// stops, the false ones among them, and their arm-seconds with goals
    /// left.
    pub clear_stops: (usize, usize, f64),
    /// Stops that came within the guard's hold time (its settle time,
    /// `guard.release_hold_s`) of the same arm's release: flag flips.
    pub restops: usize,
    /// Holds: an arm stopped by its grant saying hold (the arbitration's
    /// pause on its path, not a stop of the checks; not among `stops`).
    pub holds: usize,
    /// Retreats ordered (back-aways).
    pub retreats: usize,
    /// Grant messages due while the arm had goals left (the guard's
    /// `publish_grant`: on a change of what the message shows, its end
    /// sliding on by a step included, and at the heartbeat), and those
    /// among them that named another robot waited for, or none, on the
    /// same state as the last cycle's (`held_by` changing).
    pub grant_messages: (usize, usize),
    /// Per arm, by its index in the cell: its shares of time and its stops.
    pub per_arm: Vec<ArmShares>,
}

/// One arm's time with goals left, how it was spent, and its stops (the
/// checks', not its grant's holds).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ArmShares {
    /// Its priority in the cell.
    pub priority: i64,
    /// Seconds with goals left (the shares' whole).
    pub busy_s: f64,
    /// At full speed (not stopped, speed scaling 1), s.
    pub full_s: f64,
    /// Slowed (speed scaling below 1, not stopped), s.
    pub slowed_s: f64,
    /// Held by its grant, s.
    pub held_s: f64,
    /// Stopped by the checks, s.
    pub stopped_s: f64,
    /// Stops by the checks.
    pub stops: usize,
}

impl ArmShares {
    fn add(&mut self, o: &ArmShares) {
        self.priority = o.priority;
        self.busy_s += o.busy_s;
        self.full_s += o.full_s;
        self.slowed_s += o.slowed_s;
        self.held_s += o.held_s;
        self.stopped_s += o.stopped_s;
        self.stops += o.stops;
    }
}

impl SimReport {
    /// Arm `r`'s shares, the list grown to hold it.
    pub(crate) fn arm(&mut self, r: usize) -> &mut ArmShares {
        if self.per_arm.len() <= r {
            self.per_arm.resize(r + 1, ArmShares::default());
        }
        &mut self.per_arm[r]
    }

    /// Adds another report's counts.
    pub fn merge(&mut self, o: &SimReport) {
        self.episodes += o.episodes;
        self.skipped += o.skipped;
        self.cycles += o.cycles;
        self.contacts_cell += o.contacts_cell;
        self.contacts_robot += o.contacts_robot;
        self.contacts_self += o.contacts_self;
        self.stops += o.stops;
        self.false_stops += o.false_stops;
        self.false_stops_touch += o.false_stops_touch;
        self.min_clearance_m = self.min_clearance_m.min(o.min_clearance_m);
        self.guard_time_s += o.guard_time_s;
        self.stops_planned += o.stops_planned;
        self.false_planned += o.false_planned;
        self.false_extrapolated += o.false_extrapolated;
        self.false_approaching += o.false_approaching;
        self.false_separating += o.false_separating;
        for k in 0..4 {
            self.stops_for[k] += o.stops_for[k];
            self.false_for[k] += o.false_for[k];
        }
        self.stopped_s += o.stopped_s;
        self.slowed_s += o.slowed_s;
        self.escaping_s += o.escaping_s;
        self.escapes += o.escapes;
        self.finished += o.finished;
        self.stalled += o.stalled;
        self.stalled_parked += o.stalled_parked;
        self.stalled_seeds.extend_from_slice(&o.stalled_seeds);
        self.stalled_seeds.sort_unstable();
        self.contact_seeds.extend_from_slice(&o.contact_seeds);
        self.contact_seeds.sort_unstable();
        self.false_stop_seeds.extend_from_slice(&o.false_stop_seeds);
        self.false_stop_seeds.sort_unstable();
        self.clear_false_stop_seeds.extend_from_slice(&o.clear_false_stop_seeds);
        self.clear_false_stop_seeds.sort_unstable();
        self.flip_seeds.extend_from_slice(&o.flip_seeds);
        self.flip_seeds.sort_unstable();
        self.makespan_s += o.makespan_s;
        self.makespan_unguarded_s += o.makespan_unguarded_s;
        self.makespan_clear_s.0 += o.makespan_clear_s.0;
        self.makespan_clear_s.1 += o.makespan_clear_s.1;
        self.makespan_planned_s.0 += o.makespan_planned_s.0;
        self.makespan_planned_s.1 += o.makespan_planned_s.1;
        self.slowest.extend_from_slice(&o.slowest);
        self.slowest.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        self.slowest.truncate(SLOWEST_LISTED);
        self.makespan_one_at_a_time_s += o.makespan_one_at_a_time_s;
        self.makespan_one_at_a_time_tight_s += o.makespan_one_at_a_time_tight_s;
        self.held_s += o.held_s;
        self.full_s += o.full_s;
        self.busy_s += o.busy_s;
        self.holds += o.holds;
        self.grant_messages.0 += o.grant_messages.0;
        self.grant_messages.1 += o.grant_messages.1;
        self.restops += o.restops;
        self.hazards += o.hazards;
        self.hazards_caught += o.hazards_caught;
        self.hazards_unfinished += o.hazards_unfinished;
        self.clear_stops.0 += o.clear_stops.0;
        self.clear_stops.1 += o.clear_stops.1;
        self.clear_stops.2 += o.clear_stops.2;
        self.retreats += o.retreats;
        for (r, a) in o.per_arm.iter().enumerate() {
            self.arm(r).add(a);
        }
    }
    /// False stops over stops, of arms whose plan the guard had.
    pub fn false_stop_rate_planned(&self) -> f64 {
        if self.stops_planned == 0 { 0.0 } else { self.false_planned as f64 / self.stops_planned as f64 }
    }
    /// False stops over stops, of arms forecast without a plan.
    pub fn false_stop_rate_unplanned(&self) -> f64 {
        let stops = self.stops - self.stops_planned;
        if stops == 0 { 0.0 } else { (self.false_stops - self.false_planned) as f64 / stops as f64 }
    }
    /// Guarded over unguarded makespan, over the finished episodes.
    pub fn makespan_ratio(&self) -> f64 {
        if self.makespan_unguarded_s > 0.0 { self.makespan_s / self.makespan_unguarded_s } else { f64::NAN }
    }
    /// The same over the finished episodes without a hazard: where the
    /// unguarded run would come within the margin, no guard can match its
    /// makespan.
    pub fn makespan_ratio_clear(&self) -> f64 {
        let (g, u) = self.makespan_clear_s;
        if u > 0.0 { g / u } else { f64::NAN }
    }
    /// The same over the finished episodes without a hazard, with plans
    /// and without (`--plans half` runs both): where the makespan is lost.
    pub fn makespan_ratio_by_plans(&self) -> [f64; 2] {
        let ((g, u), (pg, pu)) = (self.makespan_clear_s, self.makespan_planned_s);
        let ratio = |g: f64, u: f64| if u > 0.0 { g / u } else { f64::NAN };
        [ratio(pg, pu), ratio(g - pg, u - pu)]
    }
    /// Contacts of every kind.
    pub fn contacts(&self) -> usize {
        self.contacts_cell + self.contacts_robot + self.contacts_self
    }
    /// False stops over stops.
    pub fn false_stop_rate(&self) -> f64 {
        if self.stops == 0 { 0.0 } else { self.false_stops as f64 / self.stops as f64 }
    }
    /// Stops after which nothing would have touched, over stops.
    pub fn false_stop_touch_rate(&self) -> f64 {
        if self.stops == 0 { 0.0 } else { self.false_stops_touch as f64 / self.stops as f64 }
    }
}

/// How many of the slowest episodes the summary lists
/// ([`SimReport::slowest`]).
pub const SLOWEST_LISTED: usize = 5;

impl SimReport {
    /// The report, a few lines: contacts, stops and how many were false
    /// (with and without plans, by cause and by what they were for), time
    /// stopped or slowed, makespan against the unguarded run. `arms` and
    /// the cycle `dt_s` as simulated.
    // long: the summary's lines, one statement each
    pub fn summary(&self, arms: usize, dt_s: f64) -> String {
        let mut o = String::new();
        let (episodes, skipped, cycles, ms) = (self.episodes, self.skipped, self.cycles, dt_s * 1e3);
        let _ = writeln!(
            o,
            "{arms} arms, {episodes} episodes ({skipped} skipped: no clear start, or no crossing set of plans), \
             {cycles} guard cycles at {ms} ms"
        );
        let _ = writeln!(
            o,
            "contacts (cycles): cell {}, robot-robot {}, self {}; least clearance seen {:.4} m",
            self.contacts_cell, self.contacts_robot, self.contacts_self, self.min_clearance_m
        );
        let _ = writeln!(
            o,
            "stops {}, false stops {} ({:.1} %: continuing would have stayed outside the clearance margin; \
             {:.1} % would not have touched); guard step {:.1} µs per cycle on average",
            self.stops,
            self.false_stops,
            100.0 * self.false_stop_rate(),
            100.0 * self.false_stop_touch_rate(),
            1e6 * self.guard_time_s / self.cycles.max(1) as f64
        );
        let _ = writeln!(
            o,
            "  with plans: {} stops, {:.1} % false; without: {} stops, {:.1} % false",
            self.stops_planned,
            100.0 * self.false_stop_rate_planned(),
            self.stops - self.stops_planned,
            100.0 * self.false_stop_rate_unplanned()
        );
        let _ = writeln!(
            o,
            "  false stops by cause: extrapolation only {}, approaching {}, separating {}",
            self.false_extrapolated, self.false_approaching, self.false_separating
        );
        let (s, f) = (&self.stops_for, &self.false_for);
        let _ = writeln!(
            o,
            "  stops (false) for: the cell {} ({}), own links {} ({}), other arms {} ({}), data or holding {} ({})",
            s[0], f[0], s[1], f[1], s[2], f[2], s[3], f[3]
        );
        let _ = writeln!(
            o,
            "time stopped {:.1} s, slowed {:.1} s, escaping {:.1} s (arm-seconds; {} escapes); makespan {:.3} × \
             unguarded over {} finished episodes ({:.3} × over those without a hazard), {} stalled ({} with an \
             arm's way on blocked by one parked at its last goal)",
            self.stopped_s,
            self.slowed_s,
            self.escaping_s,
            self.escapes,
            self.makespan_ratio(),
            self.finished,
            self.makespan_ratio_clear(),
            self.stalled,
            self.stalled_parked
        );
        let busy = self.busy_s.max(1e-9);
        let hours = self.busy_s / 3600.0;
        let _ = writeln!(
            o,
            concat!(
                "usefulness: of {:.1} arm-s with goals left, full speed {:.1} %, slowed {:.1} %, ",
                "held by grants {:.1} % ({} holds), stopped {:.1} %; stops {:.1} per robot-hour, ",
                "false {:.1} per robot-hour ({:.1} % of stops), {} within the settle time of a release; ",
                "stalled = goals left at 3 × the unguarded makespan + 1 s"
            ),
            self.busy_s,
            100.0 * self.full_s / busy,
            100.0 * self.slowed_s / busy,
            100.0 * self.held_s / busy,
            self.holds,
            100.0 * self.stopped_s / busy,
            if hours > 0.0 { self.stops as f64 / hours } else { 0.0 },
            if hours > 0.0 { self.false_stops as f64 / hours } else { 0.0 },
            100.0 * self.false_stop_rate(),
            self.restops
        );
        self.grant_line(&mut o);
        self.per_arm_line(&mut o);
        if self.hazards > 0 {
            let _ = writeln!(
                o,
                "hazards (episodes whose unguarded run comes within the clearance margin): {}, caught without a \
                 contact {} ({:.1} %), {} of them stopped short of finishing",
                self.hazards,
                self.hazards_caught,
                100.0 * self.hazards_caught as f64 / self.hazards as f64,
                self.hazards_unfinished
            );
            let (stops, false_stops, busy_s) = self.clear_stops;
            let hours = busy_s / 3600.0;
            let _ = writeln!(
                o,
                "episodes without a hazard (nothing true in the way): stops {stops}, false {false_stops} \
                 ({:.1} per robot-hour over {busy_s:.1} arm-s, {:.1} % of stops)",
                if hours > 0.0 { false_stops as f64 / hours } else { 0.0 },
                if stops > 0 { 100.0 * false_stops as f64 / stops as f64 } else { 0.0 }
            );
        }
        self.seed_lists(&mut o);
        if self.makespan_one_at_a_time_s > 0.0 {
            let u = self.makespan_unguarded_s;
            let _ = writeln!(
                o,
                "crossing plans: makespan {:.3} × one arm at a time in the shared zone ({:.3} × with moves split at \
                 the zone's edge; {:.3} × unguarded); one at a time {:.3} × unguarded ({:.3} × split); \
                 {} deadlocks (not finished within twice one-at-a-time + 2 s); held by grants {:.1} arm-s, {} retreats",
                self.makespan_s / self.makespan_one_at_a_time_s,
                self.makespan_s / self.makespan_one_at_a_time_tight_s,
                self.makespan_ratio(),
                self.makespan_one_at_a_time_s / u,
                self.makespan_one_at_a_time_tight_s / u,
                self.stalled,
                self.held_s,
                self.retreats
            );
        }
        o
    }

    /// Where the makespan is lost: over the episodes without a hazard, with
    /// plans and without, and the slowest episodes' seeds (none listed
    /// where no episode finished).
    fn makespan_line(&self, o: &mut String) {
        if self.slowest.is_empty() {
            return;
        }
        let [with, without] = self.makespan_ratio_by_plans();
        let _ = write!(
            o,
            "makespan × unguarded without a hazard: with plans {with:.3}, without {without:.3}; slowest episodes:"
        );
        for (i, (ratio, seed)) in self.slowest.iter().enumerate() {
            let _ = write!(o, "{} {seed} ({ratio:.2} ×)", if i == 0 { "" } else { "," });
        }
        let _ = writeln!(o);
    }

    /// The grant messages' line of the summary.
    fn grant_line(&self, o: &mut String) {
        let _ = writeln!(
            o,
            "grant messages: {} ({:.1} per arm-second with goals left), {} of them naming another robot waited for (or none) on the same state",
            self.grant_messages.0,
            if self.busy_s > 0.0 { self.grant_messages.0 as f64 / self.busy_s } else { 0.0 },
            self.grant_messages.1
        );
    }

    /// Counts a cycle's grant message for an arm (`counted`: moving, with
    /// goals left), against `last`, its grant the cycle before (updated).
    pub(crate) fn note_grant(&mut self, c: &Command, last: &mut ArmGrant, counted: bool) {
        if counted && c.publish_grant {
            self.grant_messages.0 += 1;
            self.grant_messages.1 += usize::from(c.grant.held_by != last.held_by && c.grant.state == last.state);
        }
        *last = c.grant;
    }

    /// The shares of busy time and the stops per arm, on one line (none
    /// for one arm).
    fn per_arm_line(&self, o: &mut String) {
        if self.per_arm.len() > 1 {
            let _ = write!(o, "per arm (its priority): full speed, slowed, held by grants, stopped, stops:");
            for (r, a) in self.per_arm.iter().enumerate() {
                let busy = a.busy_s.max(1e-9);
                let _ = write!(
                    o,
                    "{} arm {r} ({}) {:.1} %, {:.1} %, {:.1} %, {:.1} %, {}",
                    if r == 0 { "" } else { ";" },
                    a.priority,
                    100.0 * a.full_s / busy,
                    100.0 * a.slowed_s / busy,
                    100.0 * a.held_s / busy,
                    100.0 * a.stopped_s / busy,
                    a.stops
                );
            }
            let _ = writeln!(o);
        }
    }

    /// Lists `seed`, this one episode's report's, among the seeds with a
    /// stall, a contact, a false stop or a flip where it had any.
    pub(crate) fn list_seed(&mut self, seed: u64) {
        if self.stalled > 0 {
            self.stalled_seeds.push(seed);
        }
        if self.contacts() > 0 {
            self.contact_seeds.push(seed);
        }
        if self.false_stops > 0 {
            self.false_stop_seeds.push(seed);
        }
        if self.clear_stops.1 > 0 {
            self.clear_false_stop_seeds.push(seed);
        }
        if self.restops > 0 {
            self.flip_seeds.push(seed);
        }
    }

    /// The makespan by plans with the slowest episodes' seeds
    /// ([`SimReport::makespan_line`]), then the seeds of the episodes with
    /// a stall, a contact, a false stop and a flip, a line each where
    /// there are any.
    fn seed_lists(&self, o: &mut String) {
        self.makespan_line(o);
        seed_list(o, "stalled episodes' seeds", &self.stalled_seeds);
        seed_list(o, "seeds with a contact", &self.contact_seeds);
        seed_list(o, "seeds with a false stop", &self.false_stop_seeds);
        seed_list(o, "... of them without a hazard", &self.clear_false_stop_seeds);
        seed_list(o, "seeds with a stop within the settle time of a release", &self.flip_seeds);
    }
}

/// `WG_SIM_TRACE=N`: a line per arm every N cycles (to see a stall).
pub(crate) fn trace_every() -> Option<usize> {
    std::env::var("WG_SIM_TRACE").ok().and_then(|v| v.parse().ok()).filter(|&n: &usize| n > 0)
}

/// One cycle of arms and their commands, to stderr (`WG_SIM_TRACE`).
pub(crate) fn trace_cycle(
    t: f64,
    arms: &[crate::motion::SimArm],
    commands: &[workcell_guard_core::guard::Command],
    decisions: &[workcell_guard_core::guard::Decision],
) {
    use workcell_guard_core::guard::Decision;
    for (r, (a, c)) in arms.iter().zip(commands).enumerate() {
        let g = &c.grant;
        let clearance = match decisions.get(r) {
            Some(Decision::Continue { clearance_m, .. }) => *clearance_m,
            Some(Decision::Stop(s)) => s.clearance_m,
            None => f32::NAN,
        };
        let speed = a.v.iter().map(|v| v * v).sum::<f64>().sqrt();
        eprintln!(
            "t {t:7.3} arm {r} clearance {clearance:.4} |qdot| {speed:.3} goals left {} plan s {:6.3} stop {} ({:?} {:?}) scaling {:.2} grant {:?} until {:.3} held by {:?} back to {:?}",
            a.goals.len(),
            a.s,
            c.stop,
            c.source,
            c.cause.map(|s| s.reason),
            c.speed_scaling,
            g.state,
            g.until_s,
            g.held_by,
            a.back_to
        );
    }
}

/// A line naming up to 20 seeds (none: no line), with how to run the first alone.
fn seed_list(o: &mut String, what: &str, seeds: &[u64]) {
    if let Some(seed) = seeds.first() {
        let list: Vec<String> = seeds.iter().take(20).map(u64::to_string).collect();
        let more = if seeds.len() > 20 { ", …" } else { "" };
        let _ = writeln!(o, "{what}: {}{more} (one alone: --seed {seed} --episodes 1)", list.join(", "));
    }
}

#[cfg(test)]
mod tests {
    use super::SimReport;
    use workcell_guard_core::arbiter::GrantState;
    use workcell_guard_core::guard::{ArmGrant, Command};

    #[test]
    fn grant_messages_are_counted_while_counted_and_a_changed_robot_waited_for_told_apart() {
        let grant = |state, held_by| ArmGrant { state, held_by, ..ArmGrant::NONE };
        let sent = |g: ArmGrant, publish_grant| Command { grant: g, publish_grant, ..Command::START };
        let (mut rep, mut last) = (SimReport::default(), ArmGrant::NONE);
        let proceed_short = grant(GrantState::Proceed, Some(0));
        // Not counted (standing before the episode moves): remembered all the same.
        rep.note_grant(&sent(proceed_short, true), &mut last, false);
        assert_eq!((rep.grant_messages, last), ((0, 0), proceed_short));
        // The same state, another robot waited for (none): a change of held_by.
        rep.note_grant(&sent(grant(GrantState::Proceed, None), true), &mut last, true);
        // Not due: not a message.
        rep.note_grant(&sent(proceed_short, false), &mut last, true);
        // Due, another state: a message, not a change of held_by.
        rep.note_grant(&sent(grant(GrantState::Hold, Some(1)), true), &mut last, true);
        assert_eq!(rep.grant_messages, (2, 1));
        assert!(rep.summary(2, 0.002).contains("grant messages: 2 "));
    }

    #[test]
    fn the_summary_splits_the_makespan_by_plans_and_lists_the_slowest_episodes_first() {
        let mut total = SimReport::default();
        // (seed, guarded, unguarded, with plans, without a hazard); seed 9
        // had a hazard and counts among the slowest only.
        for (seed, g, u, planned, clear) in [
            (3_u64, 6.0, 3.0, true, true),
            (4, 4.0, 4.0, false, true),
            (9, 9.0, 3.0, false, false),
            (5, 3.36, 3.0, true, true),
            (6, 4.4, 4.0, false, true),
            (7, 3.0, 3.0, true, true),
            (8, 3.6, 3.0, true, true),
        ] {
            let mut e =
                SimReport { episodes: 1, finished: 1, makespan_s: g, makespan_unguarded_s: u, ..SimReport::default() };
            e.slowest.push((g / u, seed));
            if clear {
                e.makespan_clear_s = (g, u);
            }
            if clear && planned {
                e.makespan_planned_s = (g, u);
            }
            total.merge(&e);
        }
        let [with, without] = total.makespan_ratio_by_plans();
        assert!((with - 15.96 / 12.0).abs() < 1e-12 && (without - 8.4 / 8.0).abs() < 1e-12, "{with} {without}");
        let seeds: Vec<u64> = total.slowest.iter().map(|x| x.1).collect();
        assert_eq!(seeds, [9, 3, 8, 5, 6], "{:?}", total.slowest);
        let text = total.summary(2, 0.002);
        assert!(
            text.contains(
                "without a hazard: with plans 1.330, without 1.050; slowest episodes: 9 (3.00 ×), 3 (2.00 ×), 8 (1.20 ×)"
            ),
            "{text}"
        );
        // Nothing finished: no line.
        assert!(!SimReport::default().summary(2, 0.002).contains("slowest"));
    }

    #[test]
    fn the_summary_lists_the_seeds_of_episodes_with_a_flip_lowest_first() {
        let mut total = SimReport::default();
        for seed in [31, 7] {
            let e = SimReport { episodes: 1, restops: 2, flip_seeds: vec![seed], ..SimReport::default() };
            total.merge(&e);
        }
        total.merge(&SimReport { episodes: 1, ..SimReport::default() });
        assert_eq!((total.restops, total.flip_seeds.as_slice()), (4, &[7, 31][..]));
        let text = total.summary(2, 0.002);
        assert!(
            text.contains(
                "seeds with a stop within the settle time of a release: 7, 31 (one alone: --seed 7 --episodes 1)"
            ),
            "{text}"
        );
    }

    #[test]
    fn the_summary_lists_apart_the_seeds_of_false_stops_where_nothing_true_was_in_the_way() {
        let mut total = SimReport::default();
        // Seed 12 has a hazard (its false stop counts among all only),
        // seeds 40 and 5 none.
        for (seed, clear) in [(12, (0, 0, 0.0)), (40, (2, 1, 9.0)), (5, (1, 1, 8.0))] {
            let mut e = SimReport { episodes: 1, stops: 2, false_stops: 1, clear_stops: clear, ..SimReport::default() };
            e.list_seed(seed);
            total.merge(&e);
        }
        assert_eq!(total.false_stop_seeds, [5, 12, 40]);
        assert_eq!(total.clear_false_stop_seeds, [5, 40]);
        let text = total.summary(2, 0.002);
        assert!(text.contains("seeds with a false stop: 5, 12, 40 (one alone"), "{text}");
        assert!(text.contains("... of them without a hazard: 5, 40 (one alone: --seed 5 --episodes 1)"), "{text}");
    }
}
