//! Answering a move request: the swept area tried against the world map,
//! then a search for the farthest safe point along the way (a partial
//! grant), or a denial naming what is in the way.

use super::*;

/// The fewest steps a move is cut into when searching for its farthest
/// safe point: the steps are probed in order, then one step is bisected.
const SEARCH_STEPS: usize = 16;

impl<M: CellMap> Allocator<M> {
    /// Who holds `cell`, the requester aside.
    pub(super) fn owner(&self, cell: Cell, except: usize) -> Option<Blocker> {
        if let Some(i) = (0..self.units.len()).find(|&i| i != except && self.units[i].map.get(cell)) {
            return Some(Blocker::Unit(i));
        }
        self.obstacles.iter().position(|(_, m)| m.get(cell)).map(Blocker::Obstacle)
    }

    /// Rasterizes the move of `unit` from `from` to `to` into `tmp2`.
    pub(super) fn sweep_into_tmp2(&mut self, unit: usize, from: Pose2, to: Pose2) {
        self.pieces.clear();
        let tol = 0.25 * self.grid.cell_m;
        self.units[unit].shape.sweep_pieces(from, to, tol, &mut self.pieces);
        self.tmp2.clear();
        for p in self.pieces.iter() {
            self.tmp2.raster(&self.grid, p);
        }
    }

    /// Rasterizes the move into `swept` and installs it in the world if it
    /// stays on the surface and nothing is taken. Otherwise the world is as
    /// before and the first taken cell (row-major) is returned, if any,
    /// with a row no taken cell lies past.
    pub(super) fn try_install(&mut self, unit: usize, from: Pose2, to: Pose2) -> Result<(), Option<(Cell, usize)>> {
        self.pieces.clear();
        let tol = 0.25 * self.grid.cell_m;
        self.units[unit].shape.sweep_pieces(from, to, tol, &mut self.pieces);
        self.install_pieces()
    }

    /// [`try_install`](Self::try_install) for the pieces already in
    /// `self.pieces`.
    pub(super) fn install_pieces(&mut self) -> Result<(), Option<(Cell, usize)>> {
        self.swept.clear();
        let on = (0..self.pieces.len()).all(|i| !(self.pieces.is_body(i) && self.grid.off_surface(self.pieces.get(i))));
        if on && self.install == Install::AsYouGo {
            let mut failed = false;
            for p in self.pieces.iter() {
                if failed {
                    self.swept.raster(&self.grid, p);
                } else if let Err(found) = self.swept.raster_install(&self.grid, p, &mut self.world) {
                    self.world.xor_from(&self.swept);
                    // One piece: the cell found is the first taken one
                    // (row-major) and none lies past the piece's last row.
                    if self.pieces.len() == 1 {
                        return Err(Some(found));
                    }
                    self.swept.raster(&self.grid, p);
                    failed = true;
                }
            }
            if !failed {
                return Ok(());
            }
            return Err(self.world.common(&self.swept));
        }
        for p in self.pieces.iter() {
            self.swept.raster(&self.grid, p);
        }
        if !on {
            return Err(self.world.common(&self.swept));
        }
        self.world.install(&self.swept, Install::CheckFirst).map_err(|_| self.world.common(&self.swept))
    }

    /// Whether the pieces in `self.pieces` stay on the surface and clear of
    /// the world in `rows` (nothing is written).
    pub(super) fn probe_pieces(&mut self, rows: (usize, usize)) -> bool {
        self.counts.probes += 1;
        for (i, p) in self.pieces.iter().enumerate() {
            if self.pieces.is_body(i) && self.grid.off_surface(p) {
                return false;
            }
        }
        for p in self.pieces.iter() {
            if self.world.hits(&self.grid, p, rows) {
                return false;
            }
        }
        true
    }

    /// Whether unit `u` may be given a request at `now_s`: not busy with
    /// a move or a path, not stopped, with a fresh pose.
    pub(super) fn ready(&self, now_s: f64, u: &Unit<M>) -> Result<(), Refusal> {
        if let Some(current) = u.motion.map(|m| m.request_id).or(u.path.as_ref().map(|p| p.request_id)) {
            return Err(Refusal::Busy { current });
        }
        if u.stopped.is_some() {
            return Err(Refusal::Stopped);
        }
        let Some(stamp) = u.last_stamp_s else { return Err(Refusal::NoPose) };
        if now_s - stamp > self.settings.pose_timeout_s {
            return Err(Refusal::StalePose { age_s: now_s - stamp });
        }
        Ok(())
    }

    /// Answers a move request of `unit` to `target` at time `now_s`.
    pub fn request(&mut self, now_s: f64, unit: usize, request_id: u64, target: Pose2) -> Answer {
        let refuse = |s: &mut Self, reason| {
            s.counts.refused += 1;
            Answer::Refused { request_id, reason }
        };
        let Some(u) = self.units.get(unit) else { return refuse(self, Refusal::UnknownUnit) };
        if !target.iter().all(|v| v.is_finite()) {
            return refuse(self, Refusal::BadTarget);
        }
        let busy = u.motion.is_some() || u.path.is_some();
        let tol = &self.settings;
        let here = (target[0] - u.pose[0]).hypot(target[1] - u.pose[1]) <= tol.arrive_tolerance_m
            && wrap(target[2] - u.pose[2]).abs() <= tol.arrive_tolerance_rad;
        if busy && here {
            return self.cancel(unit, request_id);
        }
        if let Err(reason) = self.ready(now_s, u) {
            return refuse(self, reason);
        }
        if now_s < u.retry_at_s {
            let wait_s = u.retry_at_s - now_s;
            return refuse(self, Refusal::RetryTooSoon { wait_s });
        }
        let from = u.pose;
        // Own map out of the world (XOR), swept area in if nothing is taken.
        self.world.xor_from(&self.units[unit].map);
        let conflict = match self.try_install(unit, from, target) {
            Ok(()) => {
                // The unit's old map becomes the scratch (cleared on use).
                let u = &mut self.units[unit];
                std::mem::swap(&mut u.map, &mut self.swept);
                u.motion = Some(Motion { request_id, from, goal: target, released: 0.0 });
                self.counts.granted += 1;
                return Answer::Granted { request_id, goal: target };
            }
            Err(cell) => cell,
        };
        let blocker = conflict.and_then(|(c, _)| self.owner(c, unit)).unwrap_or(Blocker::Edge);
        // A shorter move takes no cell the whole move does not (exactly so
        // for a straight move without turning), so the probes first look
        // only at the rows where the whole move meets the world; the point
        // found is verified when it is installed, and the search is redone
        // over every row if it does not install.
        let rows = conflict.map_or((1, 0), |(c, last)| (c.0, last));
        if let Some(answer) = self.search(now_s, unit, request_id, from, target, blocker, rows) {
            return answer;
        }
        match self.search(now_s, unit, request_id, from, target, blocker, (0, usize::MAX)) {
            Some(answer) => answer,
            // The probes and the install see the same cells, so a
            // probed-clear move installs; were it ever not to, deny.
            None => self.deny(now_s, unit, request_id, blocker),
        }
    }

    /// Gives up `unit`'s move or path (a request to stay where it is): it
    /// keeps where it stands and the room to brake from its top speed
    /// along the way it was going (up to what it was granted), and frees
    /// the rest; it is idle again and may ask anew. Granted, with its
    /// goal where it stands.
    pub(super) fn cancel(&mut self, unit: usize, request_id: u64) -> Answer {
        let u = &self.units[unit];
        let pose = u.pose;
        let brake_m = if u.max_decel_mps2 > 0.0 { u.max_speed_mps.powi(2) / (2.0 * u.max_decel_mps2) } else { 0.0 };
        let end = match (u.motion, u.path.as_ref()) {
            (Some(m), _) => {
                let travel =
                    (m.goal[0] - pose[0]).hypot(m.goal[1] - pose[1]) + u.shape.r_max * wrap(m.goal[2] - pose[2]).abs();
                pose_at(pose, m.goal, if travel > brake_m { brake_m / travel } else { 1.0 })
            }
            (None, Some(p)) => p.braking_end(brake_m),
            (None, None) => pose,
        };
        self.keep_footprint(unit, end);
        let u = &mut self.units[unit];
        u.motion = None;
        u.path = None;
        u.claim.clear();
        self.counts.granted += 1;
        Answer::Granted { request_id, goal: pose }
    }

    /// Puts the unit's own map back and denies.
    pub(super) fn deny(&mut self, now_s: f64, unit: usize, request_id: u64, blocker: Blocker) -> Answer {
        self.world.xor_from(&self.units[unit].map);
        self.units[unit].retry_at_s = now_s + self.settings.retry_after_s;
        self.counts.denied += 1;
        Answer::Denied { request_id, retry_after_s: self.settings.retry_after_s, blocker }
    }

    /// The farthest safe point. The move is cut into `k` equal steps (at
    /// least [`SEARCH_STEPS`], and the turn's), whose pieces are probed in
    /// order until one meets something: every step before it is clear. The
    /// point is then bisected within that step over sub-steps of about one
    /// cell of travel (any point's), probing that step's part alone, after
    /// checking the first sub-step when it is the move's first step (which
    /// decides between DENIED and PARTIAL). What is installed is what was
    /// probed: the whole steps' pieces and the partial one. The probes look
    /// at `rows` only. None if the point found does not install.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn search(
        &mut self,
        now_s: f64,
        unit: usize,
        request_id: u64,
        from: Pose2,
        target: Pose2,
        blocker: Blocker,
        rows: (usize, usize),
    ) -> Option<Answer> {
        let tol = 0.25 * self.grid.cell_m;
        let shape = &self.units[unit].shape;
        let travel = (target[0] - from[0]).hypot(target[1] - from[1]) + shape.r_max * wrap(target[2] - from[2]).abs();
        let n = ((travel / self.grid.cell_m).ceil() as usize).max(1);
        let k = shape.sweep_steps(from, target, tol).max(SEARCH_STEPS.min(n));
        // The first step that meets something (the last if none does: the
        // whole move did not install, so its end is taken as unsafe).
        let mut s = k - 1;
        for i in 0..k {
            self.pieces.clear();
            let f1 = (i + 1) as f64 / k as f64;
            self.units[unit].shape.sweep_span(from, target, tol, k, i, f1, i == 0, &mut self.pieces);
            if !self.probe_pieces(rows) {
                s = i;
                break;
            }
        }
        // Sub-steps of at least one cell of travel (where the move is that long).
        let m = (n / k).max(1);
        let frac = |j: usize| (s as f64 + j as f64 / m as f64) / k as f64;
        let (mut lo, mut hi) = (0usize, m);
        let mut first = s == 0;
        while hi - lo > 1 {
            let mid = if first { 1 } else { lo + (hi - lo) / 2 };
            first = false;
            self.pieces.clear();
            self.units[unit].shape.sweep_span(from, target, tol, k, s, frac(mid), s == 0, &mut self.pieces);
            if self.probe_pieces(rows) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        // Name what stops the move first: what the last sub-step, from the
        // farthest safe point to the first unsafe one, runs into (the whole
        // move's first taken cell in row-major order can lie anywhere on
        // its way).
        let (safe, unsafe_) = (pose_at(from, target, frac(lo)), pose_at(from, target, frac(hi)));
        let blocker = self.step_blocker(unit, safe, unsafe_).unwrap_or(blocker);
        if s == 0 && lo == 0 {
            return Some(self.deny(now_s, unit, request_id, blocker));
        }
        let fraction = frac(lo);
        self.pieces.clear();
        self.units[unit].shape.sweep_span(from, target, tol, k, 0, fraction, true, &mut self.pieces);
        if self.install_pieces().is_err() {
            return None;
        }
        let goal = pose_at(from, target, fraction);
        let u = &mut self.units[unit];
        std::mem::swap(&mut u.map, &mut self.swept);
        u.motion = Some(Motion { request_id, from, goal, released: 0.0 });
        self.counts.partial += 1;
        Some(Answer::Partial { request_id, goal, fraction, blocker })
    }

    /// What the move of `unit` from `a` to `b` (one step of the search)
    /// runs into: the owner of a taken cell it sweeps, else the surface's
    /// edge if its body leaves the surface; None if neither.
    pub(super) fn step_blocker(&mut self, unit: usize, a: Pose2, b: Pose2) -> Option<Blocker> {
        self.sweep_into_tmp2(unit, a, b);
        let taken = self.world.common(&self.tmp2).and_then(|(c, _)| self.owner(c, unit));
        let off = (0..self.pieces.len()).any(|i| self.pieces.is_body(i) && self.grid.off_surface(self.pieces.get(i)));
        self.tmp2.clear();
        taken.or(off.then_some(Blocker::Edge))
    }
}
