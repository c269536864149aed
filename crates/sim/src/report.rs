//! The arms' simulation report as a person reads it.

use crate::arms::SimReport;
use std::fmt::Write;

impl SimReport {
    /// The report, a few lines: contacts, stops and how many were false
    /// (with and without plans, by cause and by what they were for), time
    /// stopped or slowed, makespan against the unguarded run. `arms` and
    /// the cycle `dt_s` as simulated.
    pub fn summary(&self, arms: usize, dt_s: f64) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "{arms} arms, {} episodes ({} skipped: no clear start), {} guard cycles at {} ms",
            self.episodes,
            self.skipped,
            self.cycles,
            dt_s * 1e3
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
             unguarded over {} finished episodes, {} stalled",
            self.stopped_s,
            self.slowed_s,
            self.escaping_s,
            self.escapes,
            self.makespan_ratio(),
            self.finished,
            self.stalled
        );
        o
    }
}
