//! Closed-loop simulation of a platen's units under the allocator: each
//! unit asks to go to random poses, moves along what it is granted at its
//! maximum speed reporting its pose every cycle, and asks again after a
//! denial's retry delay. An independent oracle checks, every cycle, the
//! real shapes (footprint parts as polygons, cords as rectangles of their
//! width) of every pair of units and against the fixed obstacles.

use std::time::Instant;
use workcell_guard_core::cell::Platen;
use workcell_guard_core::model::coverage::Rng;
use workcell_guard_core::platen::geom::{UnitShape, place};
use workcell_guard_core::platen::{Answer, BitAllocator, PlatenError, Pose2, UnitStatus, pose_at, wrap};

/// What a platen simulation saw.
#[derive(Clone, Debug, Default)]
pub struct PlatenSimReport {
    /// Episodes run.
    pub episodes: usize,
    /// Cycles run.
    pub cycles: usize,
    /// Requests answered, by answer.
    pub granted: usize,
    /// Partial grants.
    pub partial: usize,
    /// Denials.
    pub denied: usize,
    /// Refusals.
    pub refused: usize,
    /// Moves completed (arrivals).
    pub arrivals: usize,
    /// Cycles in which some unit was stopped.
    pub stops: usize,
    /// Pairs of real shapes found overlapping (unit–unit or unit–obstacle).
    pub overlaps: usize,
    /// Distance travelled by all units, m.
    pub travelled_m: f64,
    /// Time spent deciding requests, s.
    pub decide_s: f64,
    /// Every decision's time, s (in the order made).
    pub decisions_s: Vec<f64>,
}

impl PlatenSimReport {
    /// What `simulate` prints: `units` units, episodes of `duration_s` at
    /// `dt_s` cycles.
    pub fn summary(&self, units: usize, duration_s: f64, dt_s: f64) -> String {
        let t = self;
        let asked = t.granted + t.partial + t.denied;
        format!(
            "\nplaten: {units} units, {} episodes of {duration_s} s, {} cycles at {} ms; pose updates every cycle\n\
             requests {asked}: granted {}, partial {}, denied {} (refused {}); {} arrivals, {:.2} m travelled; \
             per decision p50 {:.1} µs, p99 {:.1} µs, mean {:.1} µs\n\
             overlaps of real shapes (cycles × pairs): {}; cycles with a unit stopped: {}\n",
            t.episodes,
            t.cycles,
            dt_s * 1e3,
            t.granted,
            t.partial,
            t.denied,
            t.refused,
            t.arrivals,
            t.travelled_m,
            t.decision_us(0.5),
            t.decision_us(0.99),
            1e6 * t.decide_s / asked.max(1) as f64,
            t.overlaps,
            t.stops
        )
    }

    /// Adds another report.
    pub fn merge(&mut self, o: &PlatenSimReport) {
        self.episodes += o.episodes;
        self.cycles += o.cycles;
        self.granted += o.granted;
        self.partial += o.partial;
        self.denied += o.denied;
        self.refused += o.refused;
        self.arrivals += o.arrivals;
        self.stops += o.stops;
        self.overlaps += o.overlaps;
        self.travelled_m += o.travelled_m;
        self.decide_s += o.decide_s;
        self.decisions_s.extend_from_slice(&o.decisions_s);
    }

    /// The `q`-quantile of the decision times, µs (NaN without decisions).
    pub fn decision_us(&self, q: f64) -> f64 {
        let mut v = self.decisions_s.clone();
        v.sort_by(f64::total_cmp);
        v.get(((v.len().max(1) - 1) as f64 * q).round() as usize).map_or(f64::NAN, |s| s * 1e6)
    }
}

enum Phase {
    Wait(f64),
    Move { from: Pose2, goal: Pose2, s: f64, len: f64 },
}

/// Convex polygons of a unit standing at `pose`: footprint parts, cord runs.
pub(crate) fn real_shapes(shape: &UnitShape, pose: Pose2, out: &mut Vec<Vec<[f64; 2]>>) {
    out.clear();
    for part in &shape.parts {
        out.push(part.iter().map(|&p| place(pose, p)).collect());
    }
    if let Some(c) = &shape.cord {
        let mut pts = c.fixed.clone();
        pts.push(place(pose, c.attach));
        for w in pts.windows(2) {
            let (a, b) = (w[0], w[1]);
            let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
            let l = dx.hypot(dy);
            if l == 0.0 {
                continue;
            }
            let (nx, ny) = (-dy / l * c.half_width, dx / l * c.half_width);
            out.push(vec![
                [a[0] - nx, a[1] - ny],
                [b[0] - nx, b[1] - ny],
                [b[0] + nx, b[1] + ny],
                [a[0] + nx, a[1] + ny],
            ]);
        }
    }
}

/// Whether two convex polygons overlap with positive depth (separating
/// axes; touching is not overlapping).
pub fn convex_overlap(a: &[[f64; 2]], b: &[[f64; 2]]) -> bool {
    for poly in [a, b] {
        let n = poly.len();
        for i in 0..n {
            let (p, q) = (poly[i], poly[(i + 1) % n]);
            let ax = [q[1] - p[1], p[0] - q[0]];
            let proj = |s: &[[f64; 2]]| {
                s.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                    let d = ax[0] * v[0] + ax[1] * v[1];
                    (lo.min(d), hi.max(d))
                })
            };
            let ((a0, a1), (b0, b1)) = (proj(a), proj(b));
            if a1 <= b0 || b1 <= a0 {
                return false;
            }
        }
    }
    true
}

/// Runs one episode of `duration_s` at `dt_s` cycles.
// long: one episode's loop: requests, moves and the oracle, in order
pub fn episode(platen: &Platen, seed: u64, duration_s: f64, dt_s: f64) -> Result<PlatenSimReport, PlatenError> {
    let mut a = BitAllocator::new(platen)?;
    let mut rng = Rng::new(seed);
    let n = a.units();
    let mut rep = PlatenSimReport { episodes: 1, ..Default::default() };
    let mut phase: Vec<Phase> = (0..n).map(|_| Phase::Wait(rng.range(0.0, 0.2))).collect();
    let mut pose: Vec<Pose2> = (0..n).map(|u| a.pose(u)).collect();
    let obstacles: Vec<Vec<Vec<[f64; 2]>>> =
        platen.obstacles.iter().map(|o| workcell_guard_core::platen::geom::convex_parts(&o.polygon_xy_m)).collect();
    let (w, h) = (platen.size_xy_m[0], platen.size_xy_m[1]);
    let mut shapes: Vec<Vec<Vec<[f64; 2]>>> = vec![Vec::new(); n];
    let mut id = 0u64;
    let steps = (duration_s / dt_s).round() as usize;
    for k in 0..steps {
        let t = k as f64 * dt_s;
        let mut stopped = false;
        for u in 0..n {
            // Move, then report.
            if let Phase::Move { from, goal, s, len } = &mut phase[u] {
                let v = platen.units[u].max_speed_mps;
                let before = *s;
                *s = if *len > 0.0 { (*s + v * dt_s / *len).min(1.0) } else { 1.0 };
                rep.travelled_m += (*s - before) * *len;
                pose[u] = pose_at(*from, *goal, *s);
            }
            match a.pose_update(t, u, t, pose[u]) {
                UnitStatus::Idle => {
                    if let Phase::Move { .. } = phase[u] {
                        rep.arrivals += 1;
                        phase[u] = Phase::Wait(rng.range(0.0, 0.2));
                    }
                }
                UnitStatus::Stopped(_) => stopped = true,
                UnitStatus::Moving { .. } => {}
            }
            if let Phase::Wait(left) = &mut phase[u] {
                *left -= dt_s;
                if *left <= 0.0 {
                    let target =
                        [rng.range(0.0, w), rng.range(0.0, h), rng.range(-std::f64::consts::PI, std::f64::consts::PI)];
                    id += 1;
                    let s = Instant::now();
                    let ans = a.request(t, u, id, target);
                    let took = s.elapsed().as_secs_f64();
                    rep.decide_s += took;
                    rep.decisions_s.push(took);
                    match ans {
                        Answer::Granted { goal, .. } | Answer::Partial { goal, .. } => {
                            if matches!(ans, Answer::Granted { .. }) {
                                rep.granted += 1;
                            } else {
                                rep.partial += 1;
                            }
                            let from = pose[u];
                            let r = a.shape(u).r_max;
                            let len = (goal[0] - from[0]).hypot(goal[1] - from[1]) + r * wrap(goal[2] - from[2]).abs();
                            phase[u] = Phase::Move { from, goal, s: 0.0, len };
                        }
                        Answer::Denied { retry_after_s, .. } => {
                            rep.denied += 1;
                            phase[u] = Phase::Wait(retry_after_s + 1e-9);
                        }
                        Answer::Refused { .. } | Answer::Increment { .. } => {
                            rep.refused += 1;
                            phase[u] = Phase::Wait(0.05);
                        }
                    }
                }
            }
        }
        rep.stops += stopped as usize;
        // The oracle: real shapes, pairwise and against obstacles.
        for u in 0..n {
            real_shapes(a.shape(u), pose[u], &mut shapes[u]);
        }
        for u in 0..n {
            for v in u + 1..n {
                if shapes[u].iter().any(|p| shapes[v].iter().any(|q| convex_overlap(p, q))) {
                    rep.overlaps += 1;
                }
            }
            if obstacles.iter().any(|o| o.iter().any(|p| shapes[u].iter().any(|q| convex_overlap(p, q)))) {
                rep.overlaps += 1;
            }
        }
        rep.cycles += 1;
    }
    Ok(rep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_is_positive_depth_only() {
        let sq = |x: f64| vec![[x, 0.0], [x + 1.0, 0.0], [x + 1.0, 1.0], [x, 1.0]];
        assert!(convex_overlap(&sq(0.0), &sq(0.5)));
        assert!(!convex_overlap(&sq(0.0), &sq(1.0)));
        assert!(!convex_overlap(&sq(0.0), &sq(1.5)));
    }
}
