//! Platen units on paths, granted increment by increment
//! (`priority-incremental-segments.txt`, claims 6–10).
//!
//! A unit asks for a path: waypoints it visits in order on straight
//! segments. It holds, besides where it stands, the area its footprint and
//! cord sweep from where it is up to its grant (a point along the path).
//! Every cycle, taking the units from the highest priority down, a unit
//! whose grant lies less than one increment ahead (its stopping distance
//! plus one check interval of travel) asks for two increments more: the
//! swept area is tried against the world map as a move request is, and the
//! farthest point that fits is granted. A unit that gets nothing more
//! stops at its grant's end (it still holds the area up to there, so it
//! never has to stop short of it), and claims the increment it asked for:
//! no unit of lower priority is granted into a claim, even where nobody
//! holds it yet. A unit of lower priority standing at
//! its grant's end inside the area a higher one asks for backs away along
//! the path it came by, one increment at a time, until the higher one has
//! been granted past it. Units of equal priority go in the order of the
//! workcell file.

use super::*;

/// A unit following a path.
#[derive(Clone, Debug)]
pub(super) struct PathRun {
    pub(super) request_id: u64,
    /// The unit's pose when it asked, then the waypoints.
    pts: Vec<Pose2>,
    /// Travel to each point, m (turning counts `r_max` × angle).
    cum: Vec<f64>,
    /// One increment, m.
    incr_m: f64,
    /// Where the unit is along the path, m.
    progress: f64,
    /// How far it may go, m (behind `progress` while it backs away).
    pub(super) granted: f64,
    /// Where what it holds starts, m.
    kept_from: f64,
    /// The unit it backs away from.
    backing_from: Option<usize>,
    /// What kept its last request from being granted whole.
    blocked_by: Option<Blocker>,
    /// The farthest it has been along the path, m …
    best_m: f64,
    /// … and when it got there, s.
    gained_at_s: f64,
    /// Since when it goes before the units not boosted, s.
    boosted_at_s: Option<f64>,
    /// The unit of higher priority making room for it (it could go
    /// neither back nor forward): it goes with that one's priority.
    lent_by: Option<usize>,
}

impl PathRun {
    /// Where it may go.
    pub(super) fn goal(&self) -> Pose2 {
        self.pose_on(self.granted)
    }

    fn total(&self) -> f64 {
        *self.cum.last().unwrap_or(&0.0)
    }

    /// The pose at travel `s` along the path.
    fn pose_on(&self, s: f64) -> Pose2 {
        let n = self.pts.len();
        if n < 2 || s <= 0.0 {
            return self.pts[0];
        }
        let i = self.cum.partition_point(|&c| c <= s).clamp(1, n - 1);
        let (a, b) = (self.cum[i - 1], self.cum[i]);
        let t = if b > a { ((s - a) / (b - a)).clamp(0.0, 1.0) } else { 1.0 };
        pose_at(self.pts[i - 1], self.pts[i], t)
    }

    /// Where a unit at its progress stops within `brake_m` of travel along
    /// the way it is going (forward, or back while it backs away), never
    /// past what it was granted.
    pub(super) fn braking_end(&self, brake_m: f64) -> Pose2 {
        let s = if self.granted >= self.progress {
            (self.progress + brake_m).min(self.granted)
        } else {
            (self.progress - brake_m).max(self.granted)
        };
        self.pose_on(s)
    }

    /// The travel in `[lo, hi]` whose pose is nearest `pose` (position,
    /// then heading scaled by `r`).
    fn project(&self, pose: Pose2, lo: f64, hi: f64, r: f64) -> f64 {
        let mut best = (f64::INFINITY, lo);
        for i in 1..self.pts.len() {
            let (a, b) = (self.cum[i - 1], self.cum[i]);
            if b < lo || a > hi {
                continue;
            }
            let (p, q) = (self.pts[i - 1], self.pts[i]);
            let d = [q[0] - p[0], q[1] - p[1]];
            let len2 = d[0] * d[0] + d[1] * d[1];
            let turn = wrap(q[2] - p[2]);
            let t = if len2 > 1e-18 {
                ((pose[0] - p[0]) * d[0] + (pose[1] - p[1]) * d[1]) / len2
            } else if turn != 0.0 {
                wrap(pose[2] - p[2]) / turn
            } else {
                0.0
            };
            let s = (a + t.clamp(0.0, 1.0) * (b - a)).clamp(lo, hi);
            let at = self.pose_on(s);
            let e = (at[0] - pose[0]).hypot(at[1] - pose[1]) + r * wrap(at[2] - pose[2]).abs();
            if e < best.0 {
                best = (e, s);
            }
        }
        best.1
    }
}

/// What a path request was refused for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathFault {
    /// No waypoints.
    Empty,
    /// A waypoint is not finite.
    NotFinite,
    /// The speed is not positive and finite, or above the unit's maximum.
    Speed,
    /// The request names another unit than the one it was sent for.
    WrongUnit,
}

impl<M: CellMap> Allocator<M> {
    /// Takes a path request of `unit` at `now_s`: visit `waypoints` in
    /// order at `speed_mps`. The first increment is answered at once; later
    /// ones come from [`Allocator::advance_paths`].
    pub fn request_path(
        &mut self,
        now_s: f64,
        unit: usize,
        request_id: u64,
        waypoints: &[Pose2],
        speed_mps: f64,
    ) -> Answer {
        let refuse = |s: &mut Self, reason| {
            s.counts.refused += 1;
            Answer::Refused { request_id, reason }
        };
        let Some(u) = self.units.get(unit) else { return refuse(self, Refusal::UnknownUnit) };
        let fault = if waypoints.is_empty() {
            Some(PathFault::Empty)
        } else if !waypoints.iter().all(|w| w.iter().all(|v| v.is_finite())) {
            Some(PathFault::NotFinite)
        } else if !(speed_mps.is_finite() && speed_mps > 0.0 && speed_mps <= u.max_speed_mps) {
            Some(PathFault::Speed)
        } else {
            None
        };
        if let Some(f) = fault {
            return refuse(self, Refusal::BadPath(f));
        }
        if let Err(reason) = self.ready(now_s, u) {
            return refuse(self, reason);
        }
        let mut pts = Vec::with_capacity(waypoints.len() + 1);
        pts.push(u.pose);
        pts.extend_from_slice(waypoints);
        let mut cum = vec![0.0; pts.len()];
        for i in 1..pts.len() {
            let (p, q) = (pts[i - 1], pts[i]);
            cum[i] = cum[i - 1] + (q[0] - p[0]).hypot(q[1] - p[1]) + u.shape.r_max * wrap(q[2] - p[2]).abs();
        }
        let stop_m = speed_mps * speed_mps / (2.0 * u.max_decel_mps2);
        let incr_m = (stop_m + speed_mps * self.settings.path_check_s).max(2.0 * self.grid.cell_m);
        self.units[unit].path = Some(PathRun {
            request_id,
            pts,
            cum,
            incr_m,
            progress: 0.0,
            granted: 0.0,
            kept_from: 0.0,
            backing_from: None,
            blocked_by: None,
            best_m: 0.0,
            gained_at_s: now_s,
            boosted_at_s: None,
            lent_by: None,
        });
        self.counts.paths += 1;
        match self.advance_one(unit) {
            Some(a) => a,
            None => self.path_answer(unit),
        }
    }

    /// Moves every unit on a path on by one cycle (after the cycle's pose
    /// updates), from the highest priority down; appends an answer for each
    /// unit whose grant changed.
    pub fn advance_paths(&mut self, now_s: f64, answers: &mut Vec<(usize, Answer)>) {
        self.boost(now_s);
        self.claims.clear();
        for u in self.units.iter_mut() {
            u.claim.clear();
        }
        for k in 0..self.order.len() {
            let unit = self.order[k];
            let u = &self.units[unit];
            let fresh = u.last_stamp_s.is_some_and(|t| now_s - t <= self.settings.pose_timeout_s);
            if u.path.is_none() || u.stopped.is_some() || !fresh {
                continue;
            }
            if let Some(a) = self.advance_one(unit) {
                answers.push((unit, a));
            }
            self.claim_rest(unit);
        }
    }

    /// Whether `unit` is on a path, and how far along and granted (m).
    pub fn path_progress(&self, unit: usize) -> Option<(f64, f64, f64)> {
        let p = self.units.get(unit)?.path.as_ref()?;
        Some((p.progress, p.granted, p.total()))
    }

    /// Since when `unit` goes before the units not boosted (it gained no
    /// ground on its path for `priority_boost_after_s`), if it does.
    pub fn boosted_since(&self, unit: usize) -> Option<f64> {
        self.units.get(unit)?.path.as_ref()?.boosted_at_s
    }

    /// Notes the ground units on paths gain, boosts those that gained none
    /// for `priority_boost_after_s`, and orders the units: the boosted
    /// first (earliest first), then by priority, then as in the workcell.
    fn boost(&mut self, now_s: f64) {
        let (after, tol) = (self.settings.priority_boost_after_s, 2.0 * self.grid.cell_m);
        let after = after.unwrap_or(f64::INFINITY);
        for u in self.units.iter_mut() {
            let Some(p) = u.path.as_mut() else { continue };
            if p.progress > p.best_m + tol {
                (p.best_m, p.gained_at_s) = (p.progress, now_s);
            }
            if p.boosted_at_s.is_none() && now_s - p.gained_at_s > after {
                p.boosted_at_s = Some(now_s);
            }
        }
        // A priority lent by a unit that no longer makes room is given back.
        for i in 0..self.units.len() {
            if let Some(h) = self.units[i].path.as_ref().and_then(|p| p.lent_by)
                && self.backing_from(h) != Some(i)
                && let Some(p) = self.units[i].path.as_mut()
            {
                p.lent_by = None;
            }
        }
        let units = &self.units;
        // (boosted since, priority, lent) of unit `i`, with what is lent.
        let key = |i: usize| {
            let p = units[i].path.as_ref();
            let own = p.and_then(|p| p.boosted_at_s).unwrap_or(f64::INFINITY);
            match p.and_then(|p| p.lent_by) {
                Some(h) => {
                    let lender = units[h].path.as_ref().and_then(|p| p.boosted_at_s).unwrap_or(f64::INFINITY);
                    (own.min(lender), units[h].priority.max(units[i].priority), true)
                }
                None => (own, units[i].priority, false),
            }
        };
        self.order.sort_unstable_by(|&a, &b| {
            let (ka, kb) = (key(a), key(b));
            ka.0.total_cmp(&kb.0).then(kb.1.cmp(&ka.1)).then(kb.2.cmp(&ka.2)).then(a.cmp(&b))
        });
        for (k, &i) in self.order.iter().enumerate() {
            self.rank[i] = k;
        }
    }

    /// The unit `unit` backs away from, if it does.
    pub fn backing_from(&self, unit: usize) -> Option<usize> {
        self.units.get(unit)?.path.as_ref()?.backing_from
    }

    /// Where `unit` may go along its path, as an answer.
    fn path_answer(&self, unit: usize) -> Answer {
        let Some(p) = self.units[unit].path.as_ref() else {
            return Answer::Granted { request_id: 0, goal: self.units[unit].pose };
        };
        let total = p.total();
        let request_id = p.request_id;
        if p.granted >= total && p.backing_from.is_none() {
            return Answer::Granted { request_id, goal: p.pose_on(total) };
        }
        Answer::Increment {
            request_id,
            goal: p.pose_on(p.granted),
            fraction: if total > 0.0 { p.granted / total } else { 1.0 },
            blocker: p.blocked_by,
            backing_from: p.backing_from,
        }
    }

    /// One unit's cycle on its path; the answer if its grant changed.
    fn advance_one(&mut self, unit: usize) -> Option<Answer> {
        let tol = self.settings.arrive_tolerance_m.max(0.5 * self.grid.cell_m);
        let r = self.units[unit].shape.r_max;
        let pose = self.units[unit].pose;
        let p = self.units[unit].path.as_mut()?;
        let total = p.total();
        let (lo, hi) = (p.granted.min(p.progress) - p.incr_m, p.granted.max(p.progress));
        p.progress = p.project(pose, lo.max(0.0), hi.min(total), r);
        let end = p.pose_on(total);
        let arrived = p.granted >= total
            && (pose[0] - end[0]).hypot(pose[1] - end[1]) <= self.settings.arrive_tolerance_m
            && wrap(pose[2] - end[2]).abs() <= self.settings.arrive_tolerance_rad;
        if arrived {
            self.units[unit].path = None;
            self.keep_footprint(unit, end);
            return None;
        }
        let (progress, granted, incr, lag) = (p.progress, p.granted, p.incr_m, self.settings.release_lag_m);
        if let Some(h) = p.backing_from {
            return self.back_away(unit, h, (progress, granted, total, incr), (tol, lag));
        }
        if granted < progress - tol {
            return None; // still on its way back
        }
        if granted >= total.min(progress + incr) {
            // Enough ahead (nothing in its way now): free what lies behind
            // now and then.
            let was = p.blocked_by.take();
            if was.is_some() && granted < total {
                return Some(self.path_answer(unit));
            }
            if progress - lag - p.kept_from > 0.5 * incr {
                let from = progress - lag;
                p.kept_from = from;
                self.shrink_path(unit, from, granted);
            }
            return None;
        }
        let from = (progress - lag).max(0.0).min(granted);
        let want = total.min(progress + 2.0 * incr);
        let blocker = match self.try_path(unit, from, want, true) {
            Ok(()) => None,
            Err(c) => Some(c.and_then(|c| self.claim_owner(c, unit)).unwrap_or(Blocker::Edge)),
        };
        let mut got = if blocker.is_none() { want } else { granted };
        if blocker.is_some() {
            // The farthest point that fits, to about one cell.
            let (mut a, mut b) = (granted, want);
            while b - a > self.grid.cell_m {
                let mid = 0.5 * (a + b);
                if self.path_fits(unit, from, mid) {
                    a = mid;
                } else {
                    b = mid;
                }
            }
            if a > granted + self.grid.cell_m && self.try_path(unit, from, a, true).is_ok() {
                got = a;
            }
        }
        let p = self.units[unit].path.as_mut()?;
        let changed = got > p.granted || p.blocked_by != blocker;
        p.blocked_by = blocker;
        if got > p.granted {
            (p.granted, p.kept_from) = (got, from);
        }
        if let Some(Blocker::Unit(j)) = blocker
            && self.rank[j] > self.rank[unit]
        {
            self.ask_back(j, unit, tol);
        }
        changed.then(|| self.path_answer(unit))
    }

    /// One cycle of `unit` backing away from `h` (at `progress`, granted
    /// to `granted`, of `total`, increments of `incr`; tolerance `tol`,
    /// release lag `lag`, m): the answer if its grant changed.
    fn back_away(&mut self, unit: usize, h: usize, at: (f64, f64, f64, f64), (tol, lag): (f64, f64)) -> Option<Answer> {
        let (progress, granted, total, incr) = at;
        let still = self.units[h].path.as_ref().is_some_and(|q| q.blocked_by == Some(Blocker::Unit(unit)));
        if !still {
            // Making room for a lower unit that could go neither back
            // nor forward: it keeps still, claiming nothing, until that
            // one (going with its priority) has passed.
            if self.lent_to(unit) == Some(h) {
                if self.holds_on_path(unit, h, progress, total) {
                    return None;
                }
                self.units[h].path.as_mut()?.lent_by = None;
            }
            self.units[unit].path.as_mut()?.backing_from = None;
            return None;
        }
        if progress - granted > tol {
            return None;
        }
        let back = (progress - incr).max(0.0);
        let mut stuck = false;
        if granted > 0.0 {
            let behind = match self.try_path(unit, back, progress, false) {
                Ok(()) => {
                    let p = self.units[unit].path.as_mut()?;
                    (p.granted, p.kept_from, p.blocked_by) = (back, back, None);
                    return Some(self.path_answer(unit));
                }
                Err(c) => c.and_then(|c| self.owner(c, unit)),
            };
            // Whoever below `h` (below itself, if it makes room for a
            // lower one) stands behind it backs away too.
            self.units[unit].path.as_mut()?.blocked_by = behind;
            if let Some(Blocker::Unit(j)) = behind {
                let above = if self.rank[h] < self.rank[unit] { h } else { unit };
                if self.rank[j] > self.rank[above] {
                    self.ask_back(j, unit, tol);
                } else {
                    // `h` itself, or one above both: it cannot be asked.
                    stuck = true;
                }
            }
        }
        // It cannot back away (who is behind it cannot be asked to
        // make room, or it is at its path's start): out of the way
        // forward, if nobody holds that.
        if granted <= 0.0 || stuck {
            let (from, want) = ((progress - lag).max(0.0), total.min(progress + 2.0 * incr));
            if want > progress + tol && self.try_path(unit, from, want, false).is_ok() {
                let p = self.units[unit].path.as_mut()?;
                (p.granted, p.kept_from, p.backing_from, p.blocked_by) = (want, from, None, None);
                return Some(self.path_answer(unit));
            }
            // Nor forward: `h` makes room (once, while this holds), and
            // lends it its priority while it does.
            self.units[unit].path.as_mut()?.blocked_by = Some(Blocker::Unit(h));
            self.ask_back(h, unit, tol);
            if self.backing_from(h) == Some(unit) && self.rank[h] < self.rank[unit] {
                self.units[unit].path.as_mut()?.lent_by = Some(h);
            }
        }
        None
    }

    /// Unit `j`, if it is on a path and at rest at its grant's end (and
    /// not backing away already), backs away from `unit`.
    fn ask_back(&mut self, j: usize, unit: usize, tol: f64) {
        let at_rest = |q: &&mut PathRun| q.backing_from.is_none() && (q.granted - q.progress).abs() <= tol;
        if let Some(q) = self.units[j].path.as_mut().filter(at_rest) {
            q.backing_from = Some(unit);
        }
    }

    /// Rasterizes into `swept` the unit standing where it is and sweeping
    /// its path over travel `[s0, s1]`; false if a body piece leaves the
    /// surface.
    fn path_area(&mut self, unit: usize, s0: f64, s1: f64, into_tmp2: bool) -> bool {
        let tol = 0.25 * self.grid.cell_m;
        let u = &self.units[unit];
        let Some(p) = u.path.as_ref() else { return false };
        self.pieces.clear();
        u.shape.static_pieces(u.pose, &mut self.pieces);
        for i in 1..p.pts.len() {
            let (a, b) = (p.cum[i - 1].max(s0), p.cum[i].min(s1));
            if b > a || (i == 1 && s1 <= s0) {
                u.shape.sweep_pieces(p.pose_on(a), p.pose_on(b.max(a)), tol, &mut self.pieces);
            }
        }
        let map = if into_tmp2 { &mut self.tmp2 } else { &mut self.swept };
        map.clear();
        let mut on = true;
        for (i, q) in self.pieces.iter().enumerate() {
            on &= !(self.pieces.is_body(i) && self.grid.off_surface(q));
            map.raster(&self.grid, q);
        }
        on
    }

    /// Whether the unit could hold its path over `[s0, s1]` (nothing is
    /// written).
    fn path_fits(&mut self, unit: usize, s0: f64, s1: f64) -> bool {
        let on = self.path_area(unit, s0, s1, true);
        self.world.xor_from(&self.units[unit].map);
        let free = on && self.world.common(&self.tmp2).is_none() && self.claimed(unit, true, s1).is_none();
        self.world.xor_from(&self.units[unit].map);
        self.tmp2.clear();
        free
    }

    /// Makes the unit hold its path over `[s0, s1]` (and where it stands)
    /// instead of what it held, if that is free; otherwise nothing changes
    /// and the first taken cell is returned, if any. A unit backing away
    /// ignores the claims (it stands in one).
    fn try_path(&mut self, unit: usize, s0: f64, s1: f64, claims: bool) -> Result<(), Option<Cell>> {
        let on = self.path_area(unit, s0, s1, false);
        self.world.xor_from(&self.units[unit].map);
        let mut taken = self.world.common(&self.swept).map(|(c, _)| c);
        if claims && taken.is_none() {
            taken = self.claimed(unit, false, s1);
        }
        if on && taken.is_none() {
            self.world.or_from(&self.swept);
            std::mem::swap(&mut self.units[unit].map, &mut self.swept);
            self.swept.clear();
            return Ok(());
        }
        self.world.xor_from(&self.units[unit].map);
        self.swept.clear();
        Err(taken)
    }

    /// The first cell of the area in `tmp2` (or `swept`) that `unit` does
    /// not hold yet and a unit above it claims; a claim it holds some of
    /// already does not count when the area ends (at travel `s1`) outside
    /// it: it may get out, not go on in.
    fn claimed(&mut self, unit: usize, in_tmp2: bool, s1: f64) -> Option<Cell> {
        self.tmp.clear();
        self.tmp.or_from(if in_tmp2 { &self.tmp2 } else { &self.swept });
        self.tmp.and_from(&self.units[unit].map);
        self.tmp.xor_from(if in_tmp2 { &self.tmp2 } else { &self.swept });
        let mut found = None;
        if self.claims.common(&self.tmp).is_some() {
            // Where it would stand at the end.
            let end = self.units[unit].path.as_ref().map(|p| p.pose_on(s1));
            self.pieces.clear();
            if let Some(end) = end {
                self.units[unit].shape.static_pieces(end, &mut self.pieces);
            }
            self.foot.clear();
            for q in self.pieces.iter() {
                self.foot.raster(&self.grid, q);
            }
            // Whose claim: one above it, unless it stands in that claim
            // already and leaves it (then it must get out, and may).
            for k in 0..self.rank[unit] {
                let h = self.order[k];
                let u = &self.units[h];
                let inside = u.claim.first_common(&self.units[unit].map).is_some();
                if u.path.is_none() || (inside && u.claim.first_common(&self.foot).is_none()) {
                    continue;
                }
                if let Some((c, _)) = u.claim.common(&self.tmp) {
                    found = Some(c);
                    break;
                }
            }
        }
        self.tmp.clear();
        found
    }

    /// Claims for `unit` what is left of its path (from a lag behind where
    /// it is): units below it are granted nothing new in it. A unit backing
    /// away claims nothing.
    fn claim_rest(&mut self, unit: usize) {
        let Some((progress, _, total)) = self.path_progress(unit) else { return };
        if self.backing_from(unit).is_some() {
            return;
        }
        let from = (progress - self.settings.release_lag_m).max(0.0);
        self.path_area(unit, from, total, true);
        self.claims.or_from(&self.tmp2);
        let u = &mut self.units[unit];
        u.claim.clear();
        u.claim.or_from(&self.tmp2);
        self.tmp2.clear();
    }

    /// The unit `unit` lends its priority to, if any.
    fn lent_to(&self, unit: usize) -> Option<usize> {
        let h = self.backing_from(unit)?;
        (self.units[h].path.as_ref()?.lent_by == Some(unit)).then_some(h)
    }

    /// Whether unit `other` holds any of `unit`'s path over `[s0, s1]`.
    fn holds_on_path(&mut self, unit: usize, other: usize, s0: f64, s1: f64) -> bool {
        self.path_area(unit, s0, s1, true);
        let meets = self.units[other].map.first_common(&self.tmp2).is_some();
        self.tmp2.clear();
        meets
    }

    /// Who holds or claims `cell`, the requester aside.
    fn claim_owner(&self, cell: Cell, except: usize) -> Option<Blocker> {
        let claimed = (0..self.units.len()).find(|&i| i != except && self.units[i].claim.get(cell));
        self.owner(cell, except).or(claimed.map(Blocker::Unit))
    }

    /// Frees what the unit holds outside its path over `[s0, s1]` and
    /// where it stands.
    fn shrink_path(&mut self, unit: usize, s0: f64, s1: f64) {
        self.path_area(unit, s0, s1, false);
        self.world.xor_from(&self.units[unit].map);
        self.units[unit].map.and_from(&self.swept);
        self.world.xor_from(&self.units[unit].map);
        self.swept.clear();
    }

    /// Frees all the unit holds but where it stands and the sliver from
    /// there to `end` (arrived within the tolerance, it may still settle
    /// onto its path's end).
    pub(super) fn keep_footprint(&mut self, unit: usize, end: Pose2) {
        self.pieces.clear();
        let tol = 0.25 * self.grid.cell_m;
        self.units[unit].shape.sweep_pieces(self.units[unit].pose, end, tol, &mut self.pieces);
        self.swept.clear();
        for q in self.pieces.iter() {
            self.swept.raster(&self.grid, q);
        }
        self.world.xor_from(&self.units[unit].map);
        self.units[unit].map.and_from(&self.swept);
        self.world.xor_from(&self.units[unit].map);
        self.swept.clear();
    }
}
