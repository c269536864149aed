//! Jumps of the guard's clock. Every reading of the clock the guard is
//! given (a joint state's arrival, a cycle) is compared with the last. A
//! step **backwards** by more than [`CLOCK_BACK_TOLERANCE_S`] (a simulator
//! reset on `/clock`, a wall clock stepped back) or **forwards** by more
//! than [`CLOCK_FORWARD_JUMP_S`] (a simulator skipping ahead, a wall clock
//! stepped forward, a process suspended) is a jump: every joint state
//! history and stop is forgotten, as at start-up ([`Guard::reset`]), so
//! every robot stops until joint states on the new time line have warmed
//! its estimate up again. A history from before the jump would make new
//! states look out of order, or give a velocity across two time lines, or
//! across a gap in which the robot moved unseen.
//!
//! The jump is kept ([`Guard::clock_jump`]) for diagnostics to name.

use super::Guard;

/// A backwards step smaller than this is no jump (readings of one clock
/// taken on different threads).
pub const CLOCK_BACK_TOLERANCE_S: f64 = 1e-3;

/// A forward step larger than this is a jump (the node cycles at hundreds
/// of hertz: a second between readings is a clock that jumped, or a
/// process that was suspended).
pub const CLOCK_FORWARD_JUMP_S: f64 = 1.0;

/// A jump of the guard's clock.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClockJump {
    /// The first reading after it, s.
    pub at_s: f64,
    /// How far it went: negative backwards, s.
    pub by_s: f64,
    /// Jumps since start, this one included.
    pub count: u32,
}

impl Guard {
    /// Compares `now_s` with the last reading (module text).
    pub(super) fn note_time(&mut self, now_s: f64) {
        if !now_s.is_finite() {
            return;
        }
        if let Some(last) = self.clock_s {
            let by_s = now_s - last;
            // A first reading of 0 is a clock not yet running (`/clock` before
            // its first message): its start is no jump.
            if by_s < -CLOCK_BACK_TOLERANCE_S || (by_s > CLOCK_FORWARD_JUMP_S && last > 0.0) {
                let count = self.clock_jump.map_or(0, |j| j.count) + 1;
                self.clock_jump = Some(ClockJump { at_s: now_s, by_s, count });
                self.reset();
            }
        }
        self.clock_s = Some(now_s);
    }

    /// The last jump of the clock, if any.
    pub fn clock_jump(&self) -> Option<ClockJump> {
        self.clock_jump
    }
}
