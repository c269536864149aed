//! Priority arbitration: robots take turns in increments of their plans.
//!
//! Method text: `priority-incremental-segments.txt`. Each cycle every robot
//! on plan offers its *increment*: the next stretch of its plan from where
//! it is, at least as long as its stopping path at the plan's own pace plus
//! one cycle, sampled at up to [`MAX_SAMPLES`] configurations (sample 0
//! where it is). Of those samples the first `committed + 1` are the ones it
//! cannot avoid any more: its stopping path braking now. A robot without a
//! plan (or off it) offers only its stopping path, all of it committed.
//!
//! Who interferes with whom is given as a [`Conflicts`] table (which sample
//! of one robot comes within the margin of which sample of another); this
//! module decides on it alone, so the rule can be tested exhaustively apart
//! from the geometry.
//!
//! The rule, robots taken in order of priority (highest first, ties to the
//! lower index):
//! - a robot's grant is the longest prefix of its increment that meets
//!   neither what any robot is committed to nor what a robot above it
//!   claims, and ends one sample shorter where that robot claims beyond
//!   what it is committed to (samples shift from cycle to cycle: a grant
//!   ending right at a claim would be cut back and forth);
//! - a robot claims its whole increment while no robot above it cuts its
//!   grant (it has the right of way, even where a robot below still is);
//!   one held by a robot above claims only its grant and its committed
//!   samples;
//! - the whole increment granted: **proceed**; less: **hold** (pause on the
//!   path at the grant's end), naming the robot whose region cut it;
//! - a robot that stands still, on plan, in the increment of one above it
//!   **backs away** along the path it came by, naming that robot, and goes
//!   on backing away (moving) until it is out of that increment and its
//!   retreat has run to its end ([`Offer::retreating`]), as long as that
//!   robot is on plan; one standing at its plan's start cannot, and does
//!   not hold the one above ([`Offer::at_start`]): the stop check guards
//!   that pass;
//! - optionally ([`Arbiter::set_give_way`]; the method has priority alone
//!   decide), a robot at its plan's start (not yet under way), or setting
//!   off from it ([`Offer::setting_off`]; once per plan) with nothing it
//!   is committed to meeting the other's increment, **gives way** to one below
//!   it that is already on its way (moving, on plan) and whose increment
//!   meets its own: the one that set off first passes first, as
//!   an interlock gives a zone to the robot inside it. The other goes just
//!   before it in the order until it stands still or its plan ends
//!   (otherwise it would be stopped in the way and sent back, only to come
//!   again). With [`Arbiter::set_give_way_when_caught`] alone it gives way
//!   only to one **caught** in its increment: one whose committed samples
//!   (where it cannot help going) meet it. Sent back, that one would brake
//!   in the way and back away through it while this one held all the same;
//!   let through, it clears the way sooner. Neither gives way to a robot
//!   whose plan ends where its own still has to pass
//!   ([`Arbiter::set_ends_in_way`]): let through, that one parks there.
//!
//! - a robot does not enter **the way ahead** of a robot above it that
//!   proceeds: the stretch of that one's plan past its increment
//!   ([`Arbiter::ahead_mut`], filled by the guard), unless it is already
//!   committed into it. Let in, it would stand in the way when the
//!   increment of the one above slides there, and be sent back, the one
//!   above held for its retreat; held at the edge, it passes once the one
//!   above has.
//!
//! A held robot stays within its grant as long as the grant reaches its
//! committed samples; where it does not, two committed regions meet and
//! only the stop (the guard's check) can act: the grant says hold and
//! the stop decides. Nothing here allocates after [`Arbiter::new`].

/// Most samples of one increment (a pair's conflicts fit one `u64`).
pub const MAX_SAMPLES: usize = 8;

/// What a robot offers the arbiter this cycle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Offer {
    /// Its priority (higher goes first).
    pub priority: i64,
    /// Samples of its increment, 1..=[`MAX_SAMPLES`] (0: it offers nothing
    /// and is left out: no joint state yet).
    pub samples: usize,
    /// Index of the last sample it cannot avoid (its stopping path's end),
    /// `< samples`.
    pub committed: usize,
    /// On a plan: it takes grants. Otherwise its samples are its stopping
    /// path, all committed, and it is only an obstacle to the others.
    pub planned: bool,
    /// It stands still (a robot that stands in another's way backs away).
    pub still: bool,
    /// It is on a retreat that has not reached its end: it goes on backing
    /// away from the robot it last backed away from, even once out of that
    /// robot's increment (the increment slides ahead as that robot goes;
    /// stopping at the first clear point would only put it back in the
    /// way, and each stop and start costs both robots their braking).
    pub retreating: bool,
    /// It stands at its plan's start: it cannot back away. A robot above
    /// it is not held for it by the increments' coarse samples; the stop
    /// check (finer, exact to its margin) guards the pass, and it waits
    /// for the robot above to pass.
    pub at_start: bool,
    /// It is setting off: early on its plan (at its start, or moving from
    /// it for a moment). With giving way on ([`Arbiter::set_give_way`]) it
    /// gives way to a lower robot already on its way while it can still
    /// stop short of that one's increment.
    pub setting_off: bool,
}

/// Whether robot `a` goes before robot `b` (`offers` in robot order): the
/// higher priority first, and of equal ones the lower index.
#[inline]
pub fn goes_before(offers: &[Offer], a: usize, b: usize) -> bool {
    let (pa, pb) = (offers[a].priority, offers[b].priority);
    pa > pb || (pa == pb && a < b)
}

impl Offer {
    /// A robot off plan: only an obstacle to the others, its `samples`
    /// (0 or 1: where it stands) all committed.
    pub fn off_plan(priority: i64, samples: usize, still: bool) -> Offer {
        Offer {
            priority,
            samples,
            committed: 0,
            planned: false,
            still,
            retreating: false,
            at_start: false,
            setting_off: false,
        }
    }
}

/// A robot's grant state, as `ManipulatorGrant.state` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrantState {
    /// Its whole increment is granted.
    Proceed,
    /// Granted less than its increment: pause on the path at the grant's end.
    Hold,
    /// Stands in the way of a higher robot: retreat along the path it came by.
    BackAway,
    /// Its plan is finished (it reached the end).
    Done,
    /// No plan: not arbitrated (an obstacle to the others only).
    NoPlan,
}

/// The arbiter's answer for one robot.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Grant {
    /// What it may do.
    pub state: GrantState,
    /// Index of the last sample of its increment inside the grant (`None`:
    /// none of it: backing away, or where it is meets another's region).
    pub last_sample: Option<usize>,
    /// The robot whose region cut its grant, or that it backs away from.
    pub held_by: Option<u16>,
}

impl Grant {
    /// No plan, nothing granted.
    pub const NONE: Grant = Grant { state: GrantState::NoPlan, last_sample: None, held_by: None };
}

/// Which samples of which robots interfere: for each ordered pair `(a, b)`,
/// bit `8·i + j` says sample `i` of `a` comes within the margin of sample
/// `j` of `b`. Kept symmetric by [`Conflicts::set`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflicts {
    n: usize,
    bits: Vec<u64>,
}

/// The mask of samples `0..=m` of the second robot, in every row.
#[inline]
fn prefix_columns(m: usize) -> u64 {
    let row = if m + 1 >= MAX_SAMPLES { 0xFF } else { (1u64 << (m + 1)) - 1 };
    row * 0x0101_0101_0101_0101
}

impl Conflicts {
    /// No conflicts among `n` robots.
    pub fn new(n: usize) -> Conflicts {
        Conflicts { n, bits: vec![0; n * n] }
    }

    /// Robots.
    pub fn robots(&self) -> usize {
        self.n
    }

    /// How many (ordered) sample pairs of `a` and `b` interfere.
    pub fn count(&self, a: usize, b: usize) -> u32 {
        self.bits[a * self.n + b].count_ones()
    }

    /// Forgets every conflict.
    pub fn clear(&mut self) {
        self.bits.fill(0);
    }

    /// Sample `i` of `a` and sample `j` of `b` interfere (`a != b`).
    pub fn set(&mut self, a: usize, i: usize, b: usize, j: usize) {
        debug_assert!(a != b && i < MAX_SAMPLES && j < MAX_SAMPLES);
        self.bits[a * self.n + b] |= 1 << (MAX_SAMPLES * i + j);
        self.bits[b * self.n + a] |= 1 << (MAX_SAMPLES * j + i);
    }

    /// Sample `i` of `a` and sample `j` of `b` no longer interfere.
    pub fn unset(&mut self, a: usize, i: usize, b: usize, j: usize) {
        debug_assert!(a != b && i < MAX_SAMPLES && j < MAX_SAMPLES);
        self.bits[a * self.n + b] &= !(1 << (MAX_SAMPLES * i + j));
        self.bits[b * self.n + a] &= !(1 << (MAX_SAMPLES * j + i));
    }

    /// Which samples of `b` sample `i` of `a` interferes with: bit `j`.
    #[inline]
    pub fn row(&self, a: usize, i: usize, b: usize) -> u8 {
        (self.bits[a * self.n + b] >> (MAX_SAMPLES * i)) as u8
    }

    /// Sample `i` of `a` interferes with the samples of `b` in `mask`
    /// (bit `j`: sample `j`).
    #[inline]
    pub fn set_row(&mut self, a: usize, i: usize, b: usize, mask: u8) {
        let mut m = mask;
        while m != 0 {
            self.set(a, i, b, m.trailing_zeros() as usize);
            m &= m - 1;
        }
    }

    /// Whether sample `i` of `a` and sample `j` of `b` interfere.
    pub fn get(&self, a: usize, i: usize, b: usize, j: usize) -> bool {
        self.bits[a * self.n + b] >> (MAX_SAMPLES * i + j) & 1 == 1
    }

    /// The first sample of `a` that meets any of samples `0..=m` of `b`.
    #[inline]
    pub fn first_meeting(&self, a: usize, b: usize, m: usize) -> Option<usize> {
        let x = self.bits[a * self.n + b] & prefix_columns(m);
        (x != 0).then(|| x.trailing_zeros() as usize / MAX_SAMPLES)
    }
}

/// The arbiter's buffers.
#[derive(Clone, Debug)]
pub struct Arbiter {
    order: Vec<u16>,
    /// Per robot: decided this cycle, and the last sample it may occupy
    /// (granted or committed, whichever is farther).
    decided: Vec<bool>,
    reach: Vec<usize>,
    back_from: Vec<Option<u16>>,
    /// Per robot: the robot it was told to back away from last time (it
    /// goes on until clear and its retreat has run).
    backing: Vec<Option<u16>>,
    /// `backing` as the last cycle left it ([`Arbiter::decide_again`]).
    backing_before: Vec<Option<u16>>,
    /// Per robot: the robot below it it gives way to.
    giving_way: Vec<Option<u16>>,
    /// Whether robots at their start give way ([`Arbiter::set_give_way`]).
    give_way: bool,
    /// Whether they give way to robots caught in their increment
    /// ([`Arbiter::set_give_way_when_caught`]).
    give_way_caught: bool,
    /// Per robot: it has given way once while setting off on this plan
    /// (it does so once: two robots setting off could otherwise take turns
    /// sending each other back for ever). Cleared while it is off plan.
    gave_way_setting_off: Vec<bool>,
    /// Per ordered pair `r * n + o`: `o` was under way on its plan (moving,
    /// past its start) the last time `r` stood at its plan's start, and
    /// has not been at a plan's start since (a robot caught in `r`'s
    /// increment is given way to only then: one that began its next plan
    /// after `r` set off came second).
    under_way: Vec<bool>,
    /// Which sample of a robot's increment meets which sample of the way
    /// ahead of a robot above it (set for the pair as (lower, sample,
    /// higher, sample) only): [`Arbiter::ahead_mut`].
    ahead: Conflicts,
    /// Per ordered pair `r * n + o`: `ahead` holds `r`'s increment against
    /// `o`'s way ahead ([`Arbiter::ahead_pair`]); read for no other pair
    /// (priorities changed since, the table would be read transposed).
    ahead_for: Vec<bool>,
    /// Per ordered pair `r * n + o`: `o`'s plan ends where `r`'s still has
    /// to pass (and not the other way round): `r` does not give way to
    /// `o` ([`Arbiter::set_ends_in_way`]).
    ends_in_way: Vec<bool>,
}

impl Arbiter {
    /// Buffers for `n` robots.
    pub fn new(n: usize) -> Arbiter {
        Arbiter {
            order: Vec::with_capacity(n),
            decided: vec![false; n],
            reach: vec![0; n],
            back_from: vec![None; n],
            backing: vec![None; n],
            backing_before: vec![None; n],
            giving_way: vec![None; n],
            give_way: false,
            give_way_caught: false,
            gave_way_setting_off: vec![false; n],
            under_way: vec![false; n * n],
            ahead: Conflicts::new(n),
            ahead_for: vec![false; n * n],
            ends_in_way: vec![false; n * n],
        }
    }

    /// Forgets the ways ahead (before the guard fills them again).
    pub fn clear_ahead(&mut self) {
        self.ahead.clear();
        self.ahead_for.fill(false);
    }

    /// Says that the table of the ways ahead holds `lower`'s increment
    /// against `higher`'s way ahead ([`Arbiter::ahead_mut`]).
    pub fn ahead_pair(&mut self, lower: usize, higher: usize) {
        let n = self.ahead.robots();
        if lower < n && higher < n && lower != higher {
            self.ahead_for[lower * n + higher] = true;
        }
    }

    /// The table of the ways ahead, for the guard to fill before
    /// [`Arbiter::decide`] (after [`Arbiter::clear_ahead`]): for a pair
    /// named by [`Arbiter::ahead_pair`]`(r, o)`, `set(r, i, o, j)` says
    /// sample `i` of robot `r`'s increment meets sample `j` of the way
    /// ahead of `o`, a robot above `r`. Left empty, priority and increments
    /// alone decide.
    pub fn ahead_mut(&mut self) -> &mut Conflicts {
        &mut self.ahead
    }

    /// Says whether robot `o`'s plan ends where `r`'s still has to pass
    /// while `r`'s does not end in `o`'s remaining way (the guard's
    /// finding, before [`Arbiter::decide`]): `r` then does not give way to
    /// `o`. Let through, `o` would park at its plan's end in `r`'s way and
    /// hold it there until it has backed off its finished plan.
    pub fn set_ends_in_way(&mut self, r: usize, o: usize, ends: bool) {
        let n = self.decided.len();
        if r < n && o < n {
            self.ends_in_way[r * n + o] = ends;
        }
    }

    /// Decides every robot's grant from its offer and the conflicts
    /// (`offers`, `out` and `conflicts` over the same robots).
    pub fn decide(&mut self, offers: &[Offer], conflicts: &Conflicts, out: &mut [Grant]) {
        let n = offers.len();
        assert!(out.len() == n && conflicts.robots() == n && self.decided.len() >= n, "one offer and grant per robot");
        self.backing_before.copy_from_slice(&self.backing);
        self.order.clear();
        self.order.extend((0..n as u16).filter(|&r| offers[r as usize].samples > 0));
        // Highest priority first; ties to the lower index.
        self.order
            .sort_unstable_by(|&a, &b| offers[b as usize].priority.cmp(&offers[a as usize].priority).then(a.cmp(&b)));
        if self.give_way || self.give_way_caught {
            self.give_way(offers, conflicts);
        }
        for r in 0..n {
            self.decided[r] = false;
            self.back_from[r] = None;
            self.reach[r] = offers[r].committed.min(offers[r].samples.saturating_sub(1));
            out[r] = Grant::NONE;
        }
        for k in 0..self.order.len() {
            let r = self.order[k] as usize;
            let me = offers[r];
            if !me.planned {
                // All of its samples are committed: nothing to grant.
                self.decided[r] = true;
                self.backing[r] = None;
                continue;
            }
            let (mut limit, mut cut_by, mut yields) = self.way_ahead(r, offers, out);
            for (o, other) in offers.iter().enumerate() {
                if o == r || other.samples == 0 {
                    continue;
                }
                if let Some(i) = conflicts.first_meeting(r, o, self.reach[o]) {
                    if !self.decided[o] && other.planned && other.still && other.at_start {
                        // Below it and unable to back away: left to the stop check.
                        continue;
                    }
                    // Short of a higher robot's claim by one sample more.
                    let slack = if self.decided[o] && self.reach[o] > offers[o].committed { 2 } else { 1 };
                    let cut = i as isize - slack;
                    if cut < limit {
                        limit = cut;
                        cut_by = Some(o as u16);
                    }
                    if self.decided[o] {
                        yields = true;
                    } else if (other.still || self.backing[o].is_some()) && other.planned && self.back_from[o].is_none()
                    {
                        // Below it, standing in its way: backs away.
                        self.back_from[o] = Some(r as u16);
                    }
                }
            }
            if self.back_from[r].is_none() && me.retreating {
                // Its retreat runs on while the robot it backs away from is on plan
                // (and still goes before it: not after a new priority).
                let above = |h: u16| offers[h as usize].planned && goes_before(offers, h as usize, r);
                self.back_from[r] = self.backing[r].filter(|&h| above(h));
            }
            self.decided[r] = true;
            let last = (limit >= 0).then_some(limit as usize);
            // What the robots after it must keep out of: its whole
            // increment while nothing above it holds it (it has the right
            // of way, even where a robot below is still in it); else as far
            // as it may go or must.
            let full = me.samples - 1;
            self.reach[r] = if yields { self.reach[r].max(last.unwrap_or(0)) } else { full };
            self.backing[r] = self.back_from[r];
            out[r] = match self.back_from[r] {
                Some(h) => Grant { state: GrantState::BackAway, last_sample: None, held_by: Some(h) },
                None if last == Some(full) => Grant { state: GrantState::Proceed, last_sample: last, held_by: None },
                None => Grant { state: GrantState::Hold, last_sample: last, held_by: cut_by },
            };
        }
    }
}

impl Arbiter {
    /// Where robot `r`'s grant ends by the ways ahead, as `(last sample,
    /// robot cutting it, whether one did)`: one sample short of the first
    /// sample past its committed ones that meets the way ahead of a robot
    /// above it that proceeds (decided this cycle before it, in `out`);
    /// its whole increment where none does or its committed samples
    /// already meet that way (it is in it: the increments decide).
    fn way_ahead(&self, r: usize, offers: &[Offer], out: &[Grant]) -> (isize, Option<u16>, bool) {
        let me = offers[r];
        let mut first: Option<(usize, usize)> = None;
        for (o, other) in offers.iter().enumerate() {
            let above = goes_before(offers, o, r);
            let held = out[o].state != GrantState::Proceed;
            if o == r
                || !above
                || !self.ahead_for[r * self.ahead.robots() + o]
                || !self.decided[o]
                || !other.planned
                || held
            {
                continue;
            }
            match self.ahead.first_meeting(r, o, MAX_SAMPLES - 1) {
                Some(i) if i > me.committed && first.is_none_or(|(f, _)| i < f) => first = Some((i, o)),
                _ => {}
            }
        }
        match first {
            Some((i, o)) => (i as isize - 1, Some(o as u16), true),
            None => (me.samples as isize - 1, None, false),
        }
    }

    /// Decides this cycle again, on changed offers (priorities), as if
    /// [`Arbiter::decide`] had not run this cycle: what robots were told
    /// to back away from last cycle is what counts.
    pub fn decide_again(&mut self, offers: &[Offer], conflicts: &Conflicts, out: &mut [Grant]) {
        self.backing.copy_from_slice(&self.backing_before);
        self.decide(offers, conflicts, out);
    }

    /// Whether a robot at its plan's start (or setting off from it) gives
    /// way to a lower one already on its way (off by default: priority
    /// alone decides).
    pub fn set_give_way(&mut self, on: bool) {
        self.give_way = on;
        if !self.give_way && !self.give_way_caught {
            self.giving_way.fill(None);
        }
    }

    /// Whether a robot at its plan's start (or setting off from it) gives
    /// way to a lower one already on its way that can no longer stop short
    /// of its increment, where giving way is off otherwise (off by default
    /// here; the guard turns it on: [`Offer::committed`] of that one meets
    /// its increment, and it would be held while that one brakes and backs
    /// away all the same).
    pub fn set_give_way_when_caught(&mut self, on: bool) {
        self.give_way_caught = on;
        if !self.give_way && !self.give_way_caught {
            self.giving_way.fill(None);
        }
    }

    /// Who gives way to whom this cycle (see the module's text), and the
    /// order changed to match: each robot given way to goes just before
    /// the one giving way (`order` sorted by priority on entry).
    fn give_way(&mut self, offers: &[Offer], conflicts: &Conflicts) {
        let n = offers.len();
        // Giving way off: only to a robot caught in its increment.
        let narrow = !self.give_way;
        let on_its_way = |o: usize| offers[o].planned && !offers[o].still && offers[o].samples > 0;
        for (r, &me) in offers.iter().enumerate() {
            if let Some(o) = self.giving_way[r] {
                let o = o as usize;
                if !(me.planned && on_its_way(o)) {
                    self.giving_way[r] = None;
                }
            }
            if !me.planned {
                self.gave_way_setting_off[r] = false;
            }
            if !me.planned || me.at_start {
                for (o, u) in self.under_way[r * n..(r + 1) * n].iter_mut().enumerate() {
                    *u = me.planned && o != r && on_its_way(o) && !offers[o].at_start;
                }
            } else {
                // One at its start now begins a plan it was not under way
                // on while this one stood at its own.
                for (o, u) in self.under_way[r * n..(r + 1) * n].iter_mut().enumerate() {
                    *u = *u && !offers[o].at_start;
                }
            }
            let setting_off = me.setting_off && !me.at_start && !self.gave_way_setting_off[r];
            if self.giving_way[r].is_some() || !(me.planned && (me.at_start || setting_off) && me.samples > 0) {
                continue;
            }
            let pos = |x: usize| self.order.iter().position(|&y| y as usize == x);
            let Some(at) = pos(r) else { continue };
            // Setting off, it can still stop short of the other's increment.
            let stops_short = |o: usize| me.at_start || (0..=me.committed).all(|i| conflicts.row(r, i, o) == 0);
            // It can no longer stop short of this one's increment (its
            // committed samples meet it), and it was under way while this
            // one stood at its start (two setting off together: priority
            // decides).
            let under_way = &self.under_way[r * n..(r + 1) * n];
            let caught = |o: usize| under_way[o] && conflicts.first_meeting(r, o, offers[o].committed).is_some();
            // The first robot below it on its way whose increment meets its own.
            self.giving_way[r] = self.order[at + 1..]
                .iter()
                .map(|&o| o as usize)
                .find(|&o| {
                    let parks = self.ends_in_way.get(r * n + o).copied().unwrap_or(false);
                    on_its_way(o) && conflicts.count(r, o) > 0 && stops_short(o) && (!narrow || caught(o)) && !parks
                })
                .map(|o| o as u16);
            if self.giving_way[r].is_some() && !me.at_start {
                self.gave_way_setting_off[r] = true;
            }
        }
        for r in 0..n {
            let Some(o) = self.giving_way[r] else { continue };
            let (Some(at_r), Some(at_o)) =
                (self.order.iter().position(|&y| y as usize == r), self.order.iter().position(|&y| y == o))
            else {
                continue;
            };
            if at_o > at_r {
                let moved = self.order.remove(at_o);
                self.order.insert(at_r, moved);
            }
        }
    }

    /// The robot below `robot` that it gives way to this cycle, if any.
    pub fn giving_way(&self, robot: usize) -> Option<usize> {
        self.giving_way.get(robot).copied().flatten().map(usize::from)
    }
}

#[cfg(test)]
mod tests;
