//! Jumps of the guard's clock. Every reading of the clock the guard is
//! given (a joint state's arrival, a cycle) is compared with the last. A
//! step **backwards** by more than [`CLOCK_BACK_TOLERANCE_S`] (a simulator
//! reset on `/clock`, a wall clock stepped back) or **forwards** by more
//! than [`CLOCK_FORWARD_JUMP_S`] (a simulator skipping ahead, a wall clock
//! stepped forward, a process suspended) is a jump: every joint state
//! history and stop is forgotten, as at start-up ([`Guard::reset`](super::Guard::reset)), so
//! every robot stops until joint states on the new time line have warmed
//! its estimate up again. A history from before the jump would make new
//! states look out of order, or give a velocity across two time lines, or
//! across a gap in which the robot moved unseen.
//!
//! The jump is kept ([`Guard::clock_jump`](super::Guard::clock_jump)) for diagnostics to name.

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

/// The guard's clock as it was last read.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Clock {
    /// The last reading, s.
    pub(super) last_s: Option<f64>,
    /// The last jump, if any.
    pub(super) jump: Option<ClockJump>,
}

impl Clock {
    /// Compares reading `now_s` with the last (module text); true when the
    /// clock jumped, and the guard must forget every history.
    pub(super) fn read(&mut self, now_s: f64) -> bool {
        if !now_s.is_finite() {
            return false;
        }
        let mut jumped = false;
        if let Some(last) = self.last_s {
            let by_s = now_s - last;
            // A first reading of 0 is a clock not yet running (`/clock` before
            // its first message): its start is no jump.
            if by_s < -CLOCK_BACK_TOLERANCE_S || (by_s > CLOCK_FORWARD_JUMP_S && last > 0.0) {
                let count = self.jump.map_or(0, |j| j.count) + 1;
                self.jump = Some(ClockJump { at_s: now_s, by_s, count });
                jumped = true;
            }
        }
        self.last_s = Some(now_s);
        jumped
    }
}
