//! The cycle's timer: ticks on a fixed schedule, skipping the ticks it
//! fell behind on, and on time to well under a millisecond.
//!
//! A tokio interval was not. Its wheel counts whole milliseconds and
//! parks in `epoll_wait` with a millisecond timeout, so a 2 ms tick came
//! up to 2 ms late: up to one tick in 25 on an idle node missed its period
//! (the "missed cycles" of the diagnostics, and a stop that much later). And a
//! busy loop (8,000 joint states a second) keeps a current-thread runtime
//! from parking, so the wheel is read only every 61 polls: ticks up to
//! 6 ms late.
//!
//! So the timer reads the clock itself each time the loop comes round,
//! and a thread of its own (`cycle-timer`) sleeps to each tick with the
//! operating system's fine timer and wakes the loop. Under tokio's paused
//! clock (the tests) the wheel alone drives it, as before.
//!
//! A due tick first lets what has arrived in, up to [`INPUTS_FIRST`]
//! inputs: the cycle then decides on the freshest joint states, and a
//! loop whose cycles take longer than the period (too many robots for the
//! machine) still takes its inputs between them instead of only cycling
//! on states that have gone stale.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::Notify;
use tokio::time::Instant;

/// Inputs a due tick lets in before it runs.
pub(crate) const INPUTS_FIRST: u32 = 64;

/// A periodic tick at a fixed rate (see the module text).
pub(crate) struct CycleTimer {
    period: Duration,
    epoch: Instant,
    next: Instant,
    wake: Option<WakeThread>,
    /// Times a due tick stood back since the last tick.
    deferred: u32,
}

/// The waking thread's handle; dropping it ends the thread.
struct WakeThread {
    notify: Arc<Notify>,
    done: Arc<AtomicBool>,
}

impl Drop for WakeThread {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
    }
}

impl CycleTimer {
    /// A timer at `hz` (none below 0: a tick an hour), its first tick now.
    pub(crate) fn new(hz: f64) -> CycleTimer {
        let period = if hz > 0.0 { Duration::from_secs_f64(1.0 / hz) } else { Duration::from_secs(3600) };
        let epoch = Instant::now();
        CycleTimer { period, epoch, next: epoch, wake: WakeThread::start(epoch.into_std(), period), deferred: 0 }
    }

    /// The next tick: when it is due (at once, or when the waking thread
    /// or the wheel says so), after one yield to the loop's other branches
    /// unless [`INPUTS_FIRST`] went first already. Returns the instant the
    /// tick was scheduled for. Cancel-safe: the schedule moves on only when
    /// a tick is returned.
    pub(crate) async fn tick(&mut self) -> Instant {
        while Instant::now() < self.next {
            match &self.wake {
                Some(w) => {
                    tokio::select! {
                        biased;
                        _ = w.notify.notified() => {}
                        _ = tokio::time::sleep_until(self.next) => {}
                    }
                }
                None => tokio::time::sleep_until(self.next).await,
            }
        }
        if self.deferred < INPUTS_FIRST {
            // Counted before the yield: a branch that is ready wins it and
            // drops this future.
            self.deferred += 1;
            tokio::task::yield_now().await;
        }
        self.deferred = 0;
        let scheduled = self.next;
        let late = Instant::now().saturating_duration_since(scheduled);
        let skipped = (late.as_nanos() / self.period.as_nanos().max(1)).min(u32::MAX as u128 - 1) as u32;
        self.next = scheduled + self.period * (skipped + 1);
        scheduled
    }

    /// The scheduled instant `at` in seconds since the timer was made.
    pub(crate) fn seconds(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.epoch).as_secs_f64()
    }
}

impl WakeThread {
    /// The thread that wakes the loop at `epoch + k·period`; `None` (the
    /// wheel alone) where it cannot be started.
    fn start(epoch: std::time::Instant, period: Duration) -> Option<WakeThread> {
        let notify = Arc::new(Notify::new());
        let done = Arc::new(AtomicBool::new(false));
        let (n, d) = (notify.clone(), done.clone());
        let spawned = std::thread::Builder::new().name("cycle-timer".into()).spawn(move || {
            let mut at = epoch;
            while !d.load(Ordering::Relaxed) {
                at += period;
                let now = std::time::Instant::now();
                if at > now {
                    std::thread::sleep(at - now);
                } else {
                    // Behind (the machine stalled): on with the schedule.
                    let behind = (now - at).as_nanos() / period.as_nanos().max(1);
                    at += period * (behind.min(u32::MAX as u128) as u32);
                }
                n.notify_one();
            }
        });
        match spawned {
            Ok(_) => Some(WakeThread { notify, done }),
            Err(e) => {
                tracing::warn!("no timer thread ({e}): the cycle's ticks may come up to 2 ms late");
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On the real clock, the ticks of a 500 Hz timer come within a
    /// fraction of a millisecond (a tokio interval's about 1 ms late, up
    /// to 2), and most come on their own schedule (what is skipped here the
    /// machine took: a tick in five on this VM at its worst).
    #[test]
    fn ticks_come_on_time_and_none_is_skipped() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
        let (mut late, skipped) = rt.block_on(async {
            let mut t = CycleTimer::new(500.0);
            let (mut late, mut skipped) = (Vec::new(), 0);
            let mut last = t.tick().await;
            for _ in 0..500 {
                let at = t.tick().await;
                late.push(Instant::now().saturating_duration_since(at).as_secs_f64());
                skipped += ((at - last).as_secs_f64() / 0.002).round() as u32 - 1;
                last = at;
            }
            (late, skipped)
        });
        late.sort_by(f64::total_cmp);
        let p50 = late[late.len() / 2];
        // Loose: CI's two cores are shared with the other tests' threads.
        assert!(p50 < 0.0005, "median lateness {p50} s");
        assert!(skipped < 250, "{skipped} ticks skipped of 500");
    }

    /// A loop flooded with input (a branch always ready, each input taking
    /// a whole period) still ticks, and lets [`INPUTS_FIRST`] inputs in
    /// before each due tick (one more where the tick was not due yet).
    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn a_due_tick_lets_inputs_in_first_but_not_forever() {
        let mut t = CycleTimer::new(500.0);
        let (mut inputs, mut between) = (0u32, Vec::new());
        while between.len() < 4 {
            tokio::select! {
                biased;
                _ = t.tick() => {
                    between.push(inputs);
                    inputs = 0;
                }
                _ = std::future::ready(()) => {
                    inputs += 1;
                    tokio::time::advance(Duration::from_millis(2)).await;
                }
            }
        }
        assert_eq!(between, vec![INPUTS_FIRST, INPUTS_FIRST + 1, INPUTS_FIRST + 1, INPUTS_FIRST + 1]);
    }

    /// Under tokio's paused clock the wheel drives it: ticks are exactly
    /// one period apart.
    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn under_a_paused_clock_ticks_are_one_period_apart() {
        let mut t = CycleTimer::new(100.0);
        let first = t.tick().await;
        for k in 1..=5u32 {
            let at = t.tick().await;
            assert_eq!(at - first, Duration::from_millis(10) * k);
        }
        // 35 ms on, 2.5 periods after the tick due: that tick comes at
        // once, the 2 after it are skipped.
        tokio::time::advance(Duration::from_millis(35)).await;
        let before = t.next;
        let at = t.tick().await;
        assert_eq!(at, before);
        assert_eq!(t.tick().await - at, Duration::from_millis(30));
    }
}
