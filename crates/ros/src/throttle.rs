//! Warnings that repeat, throttled per source and cause, as
//! `RCLCPP_WARN_THROTTLE` users expect: the first goes out at once, then at
//! most one a period, saying how many like it were held back. A stream of
//! bad joint states (100 a second) logs one line a second, not a hundred;
//! a new cause, or another robot's, is not held back by the first.

use std::time::{Duration, Instant};

/// How many (source, cause) pairs are remembered; the oldest is forgotten
/// beyond it (a forgotten pair logs at once when it comes back).
const KEEP: usize = 256;

/// Throttled warnings; see the module notes.
#[derive(Debug)]
pub struct Throttle {
    period: Duration,
    seen: Vec<Seen>,
}

#[derive(Debug)]
struct Seen {
    source: String,
    cause: String,
    last: Instant,
    held: u64,
}

impl Throttle {
    /// At most one line per (source, cause) each `period`.
    pub fn new(period: Duration) -> Throttle {
        Throttle { period, seen: Vec::new() }
    }

    /// Whether a warning of `cause` from `source` at `now` goes out, and
    /// how many like it were held back since the last that did (`None`:
    /// hold this one back too).
    pub fn admit(&mut self, source: &str, cause: &str, now: Instant) -> Option<u64> {
        if let Some(s) = self.seen.iter_mut().find(|s| s.source == source && s.cause == cause) {
            if now.saturating_duration_since(s.last) < self.period {
                s.held += 1;
                return None;
            }
            s.last = now;
            return Some(std::mem::take(&mut s.held));
        }
        if self.seen.len() >= KEEP {
            let oldest = self.seen.iter().enumerate().min_by_key(|(_, s)| s.last).map_or(0, |(i, _)| i);
            self.seen.swap_remove(oldest);
        }
        self.seen.push(Seen { source: source.to_string(), cause: cause.to_string(), last: now, held: 0 });
        Some(0)
    }

    /// Logs `line` (a warning of `cause` from `source`) unless held back;
    /// with the count of those held back since the last one that went out.
    pub fn warn(&mut self, source: &str, cause: &str, line: impl std::fmt::Display) {
        match self.admit(source, cause, Instant::now()) {
            Some(0) => tracing::warn!("{source}: {line}"),
            Some(n) => tracing::warn!("{source}: {line} (and {n} more like it held back)"),
            None => {}
        }
    }
}

/// An error's cause for throttling: the names of its variants, outer to
/// inner (the leading capitalised words of its `Debug` form, up to three),
/// so that values in the message (a stamp, a count) do not make every line
/// new.
pub fn cause_of(e: &impl std::fmt::Debug) -> String {
    let d = format!("{e:?}");
    let words = d.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| !w.is_empty());
    words.take_while(|w| w.starts_with(|c: char| c.is_ascii_uppercase())).take(3).collect::<Vec<_>>().join("::")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_a_period_per_source_and_cause_with_the_count_held_back() {
        let mut t = Throttle::new(Duration::from_secs(1));
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        assert_eq!(t.admit("arm_left", "Stale", at(0)), Some(0), "the first goes out");
        for k in 1..100 {
            assert_eq!(t.admit("arm_left", "Stale", at(k * 10)), None, "held back within the period");
        }
        assert_eq!(t.admit("arm_right", "Stale", at(500)), Some(0), "another robot is not held back");
        assert_eq!(t.admit("arm_left", "NaN", at(500)), Some(0), "another cause is not held back");
        assert_eq!(t.admit("arm_left", "Stale", at(1000)), Some(99), "then one, with the 99 held back");
        assert_eq!(t.admit("arm_left", "Stale", at(1500)), None);
        assert_eq!(t.admit("arm_left", "Stale", at(2600)), Some(1));
    }

    #[test]
    fn it_remembers_a_bounded_number_of_causes() {
        let mut t = Throttle::new(Duration::from_secs(1));
        let t0 = Instant::now();
        for k in 0..(KEEP as u64 + 10) {
            assert_eq!(t.admit(&format!("robot{k}"), "Stale", t0 + Duration::from_millis(k)), Some(0));
        }
        assert_eq!(t.seen.len(), KEEP);
    }

    #[test]
    fn the_cause_is_the_variant_not_its_values() {
        #[derive(Debug)]
        #[allow(dead_code)]
        enum Inner {
            Stale { age_s: f64 },
            Nan(usize),
        }
        #[derive(Debug)]
        #[allow(dead_code)]
        enum Outer {
            JointState(Inner),
        }
        let stale = |a| cause_of(&Outer::JointState(Inner::Stale { age_s: a }));
        assert_eq!(stale(0.3), "JointState::Stale");
        assert_eq!(stale(0.3), stale(0.7));
        assert_ne!(stale(0.3), cause_of(&Outer::JointState(Inner::Nan(1))));
    }
}
