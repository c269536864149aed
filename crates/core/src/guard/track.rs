//! What a cycle's checks find for a robot: its least clearance, its
//! earliest conflict, the least of each class, and the evidence for an
//! escape.
//!
//! Escape: a robot stopped for proximity may move again while its forecast
//! takes it strictly away from what stopped it (the cell, its own links,
//! the other robot) and keeps everything else outside the
//! clearance margin. The checks then record, for that target, the least
//! clearance at the first sample (now), over the later ones, and at the
//! last; [`Escape::ok`] asks that no later sample is closer than now, that
//! the last is farther by at least [`ESCAPE_MIN_M`] (extrapolated: more
//! than noise) or [`ESCAPE_MIN_ON_PLAN_M`] (on plan), and that nothing else
//! came within the margin anywhere on the path.

use super::*;

/// The least clearance of a cycle and its earliest conflict.
#[derive(Clone, Copy, Debug)]
pub(super) struct Track {
    pub(super) best: f32,
    pub(super) best_pair: Option<(Body, Body)>,
    pub(super) conflict_k: usize,
    pub(super) conflict_clearance: f32,
    pub(super) conflict_pair: Option<(Body, Body)>,
    pub(super) conflict_reason: Reason,
    /// The least clearance of each class: the cell, its own links, other
    /// robots ([`class_of`]).
    pub(super) class_best: [f32; 3],
    /// The pair that has it.
    pub(super) class_pair: [Option<(Body, Body)>; 3],
    /// The escape evidence (no target: not looked for).
    pub(super) escape: Escape,
    /// Its path box came within reach of another robot's (a robot check
    /// went on to the spheres).
    pub(super) robot_near: bool,
    /// The least clearance, over the later samples of its stopping path
    /// (not now), of what the path takes it nearer to: a sphere of a moving
    /// link nearer the cell there than now, another robot nearer there than
    /// now, by more than [`APPROACH_SCALING_EPS_M`]; recorded within the
    /// clearance margin plus [`super::CommandPolicy::slow_down_m`] (+∞:
    /// nothing approached there), of the cell (0) and of other robots (1).
    pub(super) approach: [f32; 2],
    /// The speed scaling's measure: over what the stopping path approaches
    /// (as for `approach`) to within the slow-down distance of the margin,
    /// the least share of that approach the robot has room for ([`room`]),
    /// of the cell (0) and of other robots (1); +∞: nothing approached.
    pub(super) room: [f32; 2],
    /// The clearance margin and the slow-down distance `room` is taken
    /// with, m (set before the checks).
    pub(super) gauge: (f32, f32),
}

impl Track {
    pub(super) const NONE: Track = Track {
        best: f32::INFINITY,
        best_pair: None,
        conflict_k: usize::MAX,
        conflict_clearance: f32::INFINITY,
        conflict_pair: None,
        conflict_reason: Reason::Cell,
        class_best: [f32::INFINITY; 3],
        class_pair: [None; 3],
        escape: Escape::NONE,
        robot_near: false,
        approach: [f32::INFINITY; 2],
        room: [f32::INFINITY; 2],
        gauge: (0.0, 0.0),
    };

    /// Takes a clearance at a later sample that is nearer than `now`, to
    /// the cell (`of` 0) or another robot (1).
    #[inline]
    pub(super) fn approach(&mut self, of: usize, now: f32, later: f32) {
        if later < now - APPROACH_SCALING_EPS_M {
            self.approach[of] = self.approach[of].min(later);
            // The room of the approach within the slow-down distance of the
            // margin: what the checks look at exactly, whatever they skip
            // (a clearance beyond it may be a bound).
            let (margin, slow_down) = self.gauge;
            let edge = margin + slow_down;
            if later <= edge {
                // Now as found where it was (a lower bound at worst: less
                // room); beyond what the checks looked at, the edge.
                let r = room(if now.is_finite() { now } else { edge }, later, margin, slow_down);
                // (A NaN leaves no room.)
                self.room[of] = if r.is_nan() { 0.0 } else { self.room[of].min(r) };
            }
        }
    }
}

/// How much of a stopping path's approach, from clearance `now` to
/// `later`, the robot has room for: the gap beyond the clearance `margin`
/// less what the path is to keep of it (`slow_down`, or half the gap when
/// that is less), over the approach. At most 1 the path reaches no nearer
/// than that; 0: none (within the margin already). The speed scaling turns
/// it into the speed whose stopping path has that reach
/// ([`super::command::speed_for_room`]).
#[inline]
pub(super) fn room(now: f32, later: f32, margin: f32, slow_down: f32) -> f32 {
    let gap = now - margin;
    let keep = slow_down.min(0.5 * gap).max(0.0);
    ((gap - keep) / (now - later)).max(0.0)
}

/// A stopping path that ends nearer something than the robot is now by
/// more than this approaches it, m: more than joint-state noise moves the
/// forecast of a robot standing still (it then slows the robot, see
/// [`super::command`]).
pub const APPROACH_SCALING_EPS_M: f32 = 5e-4;

/// What a proximity reason is measured against: 0 the cell, 1 the robot's
/// own links, 2 other robots.
pub(super) fn class_of(r: Reason) -> usize {
    match r {
        Reason::Cell => 0,
        Reason::SelfCollision => 1,
        _ => 2,
    }
}

/// What started a robot's current stop, for the release decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum StopCause {
    /// Missing, stale, refused or too few joint states (its own or another
    /// robot's): nothing came close.
    Data,
    /// A forecast conflict of this pair, of this class ([`class_of`]).
    Proximity(usize, (Body, Body)),
}

/// A class's clearance counts as getting smaller when it falls by more
/// than this between cycles, m (joint-state noise of a robot holding still
/// moves its spheres by far less).
pub(super) const APPROACH_EPS_M: f32 = 1e-4;

/// An escape's extrapolated forecast must end at least this much farther
/// from what stopped the robot than it is now, m: more than joint-state
/// noise moves the forecast of a robot standing still.
pub const ESCAPE_MIN_M: f32 = 5e-4;

/// The same on plan, m: there the motion comes from the plan, not from
/// noise, and a robot standing at a plan's start is forecast to move only
/// as far as it can before a stop takes effect (a fraction of a
/// millimetre when the plan starts gently): strictly farther, by more than
/// the rounding of posed spheres.
pub const ESCAPE_MIN_ON_PLAN_M: f32 = 1e-5;

/// What a stopped robot escapes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Target {
    /// The cell (any of its links against it).
    Cell,
    /// Its own links (any pair the checks keep).
    Own,
    /// That robot (any link against any of its links).
    Robot(u16),
}

impl Target {
    /// The target of a stop's cause; none for a data stop.
    pub(super) fn of(cause: StopCause) -> Option<Target> {
        match cause {
            StopCause::Data => None,
            StopCause::Proximity(c, (a, b)) => match (c, a, b) {
                (0, _, _) => Some(Target::Cell),
                (1, _, _) => Some(Target::Own),
                (_, _, Body::Link { robot, .. }) => Some(Target::Robot(robot)),
                _ => None,
            },
        }
    }

    /// True when `pair` (this robot's link first) is against the target.
    #[inline]
    fn is(self, (a, b): (Body, Body)) -> bool {
        match (self, a, b) {
            (Target::Cell, _, Body::Cell) => true,
            (Target::Own, Body::Link { robot: ra, .. }, Body::Link { robot: rb, .. }) => ra == rb,
            (Target::Robot(r), Body::Link { robot: ra, .. }, Body::Link { robot: rb, .. }) => rb == r && ra != r,
            _ => false,
        }
    }
}

/// One cycle's evidence for an escape ([`Escape::ok`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct Escape {
    pub(super) target: Option<Target>,
    /// The last sample of the path.
    last_k: usize,
    /// Least clearance to the target at the first sample, m (+∞: not
    /// within the release margin).
    pub(super) now: f32,
    /// Least over the later samples, and at the last one: lower bounds,
    /// starting at the release margin (what the checks do not record is
    /// beyond it).
    later: f32,
    end: f32,
    /// Something other than the target within the margin, the target's
    /// links closing in within it ([`Escape::take_robot`]), or a NaN.
    other: bool,
    release: f32,
    /// The least gain from now to the last sample, m.
    min_gain: f32,
}

impl Escape {
    pub(super) const NONE: Escape = Escape {
        target: None,
        last_k: 0,
        now: f32::INFINITY,
        later: 0.0,
        end: 0.0,
        other: false,
        release: 0.0,
        min_gain: 0.0,
    };

    /// Starts looking for an escape from `target` over a path of `n_cfg`
    /// samples, along a plan or extrapolated; the checks record everything
    /// within `release`.
    pub(super) fn start(target: Option<Target>, n_cfg: usize, on_plan: bool, release: f32) -> Escape {
        let min_gain = if on_plan { ESCAPE_MIN_ON_PLAN_M } else { ESCAPE_MIN_M };
        Escape {
            target,
            last_k: n_cfg.saturating_sub(1),
            later: release,
            end: release,
            release,
            min_gain,
            ..Escape::NONE
        }
    }

    /// Takes one clearance found at sample `k` (robot pairs against a
    /// robot target come whole through [`Escape::take_samples`]).
    #[inline]
    fn note(&mut self, clearance: f32, k: usize, pair: (Body, Body), margin: f32) {
        let Some(t) = self.target else { return };
        if clearance.is_nan() {
            self.other = true;
        } else if t.is(pair) {
            if !matches!(t, Target::Robot(_)) {
                self.take_samples(clearance, k, k);
            }
        } else if clearance <= margin {
            self.other = true;
        }
    }

    /// Takes a clearance that holds from sample `k0` to `k1`.
    #[inline]
    pub(super) fn take_samples(&mut self, clearance: f32, k0: usize, k1: usize) {
        if k0 == 0 {
            self.now = self.now.min(clearance);
        }
        if k1 >= 1 {
            self.later = self.later.min(clearance);
        }
        if k0 <= self.last_k && self.last_k <= k1 {
            self.end = self.end.min(clearance);
        }
    }

    /// A pair of links against the target closes in within the margin on
    /// the way, by their exact shapes: no escape.
    #[inline]
    pub(super) fn closes_in(&mut self) {
        self.other = true;
    }

    /// Takes a robot pair's least gaps at sample 0, the later samples and
    /// the last (this robot's samples), when the pair is the target, and
    /// whether their links close in on the way (`closes`: by their exact
    /// shapes, a later gap within the clearance margin nearer than now).
    ///
    /// (The spheres' least gap alone let a robot go on while one pair of
    /// spheres, deep in each other, moved apart, and another pair's links
    /// closed to contact: four arms without plans, seed 88.)
    pub(super) fn take_robot(&mut self, other: u16, [now, later, end]: [f32; 3], closes: bool) {
        if self.target == Some(Target::Robot(other)) {
            self.now = self.now.min(now);
            self.later = self.later.min(later);
            self.end = self.end.min(end);
            if closes {
                self.closes_in();
            }
        }
    }

    /// True when the forecast escapes: the target within the release
    /// margin now, a path of more than one sample, nothing else within the
    /// clearance margin (nor a robot target's links closing in within it),
    /// no later sample nearer the target than now, and
    /// the last farther by at least [`ESCAPE_MIN_M`] ([`ESCAPE_MIN_ON_PLAN_M`]
    /// on plan).
    pub(super) fn ok(&self) -> bool {
        self.target.is_some()
            && !self.other
            && self.last_k >= 1
            && self.now <= self.release
            && self.later >= self.now
            && self.end >= self.now + self.min_gain
    }
}

impl Track {
    /// Records a clearance found at sample `k`: the least one, the
    /// earliest sample within the margin `m`, and the escape evidence.
    #[inline]
    pub(super) fn found(&mut self, clearance: f32, k: usize, pair: (Body, Body), reason: Reason, margin: f32) {
        self.found_refined([clearance, clearance], k, pair, reason, margin);
    }

    /// [`Track::found`] of a gap and the same refined by exact shapes
    /// (`[gap, refined]`): the refined one alone decides whether it is
    /// within the margin (a stop); the least clearance and the escape
    /// evidence take the gap, as every other sample of the path gives it
    /// (mixed, a robot standing still whose gap at one sample is refined
    /// and not at another looks as if it were moving away).
    #[inline]
    pub(super) fn found_refined(
        &mut self,
        [clearance, refined]: [f32; 2],
        k: usize,
        pair: (Body, Body),
        reason: Reason,
        margin: f32,
    ) {
        if clearance < self.best || clearance.is_nan() {
            self.best = clearance;
            self.best_pair = Some(pair);
        }
        if !matches!(refined.partial_cmp(&margin), Some(std::cmp::Ordering::Greater))
            && (k < self.conflict_k || (k == self.conflict_k && refined < self.conflict_clearance))
        {
            self.conflict_k = k;
            self.conflict_clearance = refined;
            self.conflict_pair = Some(pair);
            self.conflict_reason = reason;
        }
        self.escape.note(clearance, k, pair, margin);
    }

    /// Records the least clearance of a group of samples for its class
    /// ([`class_of`]): called once per link pair, not per sample, off the
    /// innermost loops.
    #[inline]
    pub(super) fn found_class(&mut self, c: usize, clearance: f32, pair: (Body, Body)) {
        if clearance < self.class_best[c] || clearance.is_nan() {
            self.class_best[c] = clearance;
            self.class_pair[c] = Some(pair);
        }
    }
}
