//! The node's cycle budget since start: every cycle's duration in
//! log-spaced buckets (20 a decade from 100 ns to 10 s, allocation-free),
//! its quantiles, and the timer cycles whose schedule was skipped
//! (missed).

/// Buckets per decade.
const PER_DECADE: usize = 20;
/// Decades from [`LOWEST_S`].
const DECADES: usize = 8;
/// The first bucket's lower edge, s.
const LOWEST_S: f64 = 1e-7;

/// Cycle durations and missed timer cycles since start.
#[derive(Clone, Debug)]
pub struct CycleTimes {
    counts: [u64; PER_DECADE * DECADES],
    total: u64,
    max_s: f64,
    missed: u64,
    last_timer_s: Option<f64>,
}

impl Default for CycleTimes {
    fn default() -> Self {
        CycleTimes { counts: [0; PER_DECADE * DECADES], total: 0, max_s: 0.0, missed: 0, last_timer_s: None }
    }
}

impl CycleTimes {
    /// One cycle that took `dur_s`.
    pub fn record(&mut self, dur_s: f64) {
        let k = ((dur_s.max(LOWEST_S) / LOWEST_S).log10() * PER_DECADE as f64) as usize;
        self.counts[k.min(self.counts.len() - 1)] += 1;
        self.total += 1;
        self.max_s = self.max_s.max(dur_s);
    }

    /// A timer tick scheduled for `now_s`, the timer running at `rate_hz`:
    /// the periods its schedule skipped since the last one count as missed
    /// cycles (a clock that jumps back starts the count afresh).
    pub fn timer_cycle(&mut self, now_s: f64, rate_hz: f64) {
        if let Some(last) = self.last_timer_s {
            let periods = (now_s - last) * rate_hz;
            if periods >= 1.5 {
                self.missed += (periods - 0.5).floor() as u64;
            }
        }
        self.last_timer_s = Some(now_s);
    }

    /// The duration at or below which a fraction `q` of the cycles took
    /// (the upper edge of its bucket, so never below the truth), s; 0
    /// before any cycle.
    pub fn quantile(&self, q: f64) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        let want = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (k, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= want {
                return (LOWEST_S * 10f64.powf((k + 1) as f64 / PER_DECADE as f64)).min(self.max_s);
            }
        }
        self.max_s
    }

    /// The longest cycle, s.
    pub fn max_s(&self) -> f64 {
        self.max_s
    }

    /// Cycles recorded.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// Timer cycles missed.
    pub fn missed(&self) -> u64 {
        self.missed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_bound_the_durations_from_above_within_a_bucket_and_missed_ticks_are_counted() {
        let mut c = CycleTimes::default();
        assert_eq!(c.quantile(0.5), 0.0);
        for k in 1..=10_000 {
            c.record(k as f64 * 1e-7); // 0.1 µs .. 1 ms, evenly
        }
        let step = 10f64.powf(1.0 / PER_DECADE as f64);
        for q in [0.5, 0.99, 0.9999] {
            let truth = q * 1e-3;
            let got = c.quantile(q);
            assert!(got >= truth && got <= truth * step * 1.0001, "q {q}: {got} vs {truth}");
        }
        assert_eq!(c.quantile(1.0), 1e-3);
        assert_eq!((c.count(), c.max_s()), (10_000, 1e-3));
        for t in [0.0, 0.002, 0.0045, 0.0101] {
            c.timer_cycle(t, 500.0);
        }
        // 2 ms apart: none; 2.5 ms: none (1.25 periods); 5.6 ms: two missed.
        assert_eq!(c.missed(), 2);
        c.timer_cycle(0.0, 500.0);
        assert_eq!(c.missed(), 2, "a clock going back misses nothing");
    }
}
