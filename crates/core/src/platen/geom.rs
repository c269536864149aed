//! Planar geometry of the units: convex parts of a footprint, the umbilical
//! cord, and the convex pieces whose union covers a unit's swept area.
//!
//! Everything a map holds is the union of convex polygons, so one conservative
//! rasterizer (every cell the polygon touches) serves the footprints, the
//! cords and the swept areas alike.

use crate::cell::PlatenUnit;
use std::f64::consts::PI;

/// A pose on the surface: x, y (m, surface frame) and θ (rad).
pub type Pose2 = [f64; 3];

/// Angle wrapped into (−π, π].
pub fn wrap(a: f64) -> f64 {
    let mut w = a.rem_euclid(2.0 * PI);
    if w > PI {
        w -= 2.0 * PI;
    }
    w
}

/// The pose a fraction `t` of the way along a straight move: position
/// interpolated linearly, heading turned the shorter way round.
pub fn pose_at(from: Pose2, to: Pose2, t: f64) -> Pose2 {
    [from[0] + (to[0] - from[0]) * t, from[1] + (to[1] - from[1]) * t, from[2] + wrap(to[2] - from[2]) * t]
}

/// A point of the unit frame placed at `pose`.
#[inline]
pub fn place(pose: Pose2, p: [f64; 2]) -> [f64; 2] {
    let (s, c) = pose[2].sin_cos();
    [pose[0] + c * p[0] - s * p[1], pose[1] + s * p[0] + c * p[1]]
}

/// Convex polygons in one flat buffer (counter-clockwise, no repeats).
#[derive(Clone, Debug, Default)]
pub struct Pieces {
    pts: Vec<[f64; 2]>,
    ends: Vec<usize>,
    /// Per piece: part of the unit's body (which must stay on the surface),
    /// not of its cord (which leaves it at the anchor).
    body: Vec<bool>,
    /// Input of the hull being built (kept to reuse its capacity).
    scratch: Vec<[f64; 2]>,
}

impl Pieces {
    /// Forgets every piece (keeps the memory).
    pub fn clear(&mut self) {
        self.pts.clear();
        self.ends.clear();
        self.body.clear();
    }

    /// Whether piece `i` is part of the unit's body (not its cord).
    pub fn is_body(&self, i: usize) -> bool {
        self.body[i]
    }

    /// Number of pieces.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Piece `i`.
    pub fn get(&self, i: usize) -> &[[f64; 2]] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.pts[start..self.ends[i]]
    }

    /// Every piece.
    pub fn iter(&self) -> impl Iterator<Item = &[[f64; 2]]> {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Adds a polygon known to be convex and counter-clockwise.
    fn push_convex(&mut self, poly: impl Iterator<Item = [f64; 2]>) {
        self.body.push(true);
        self.pts.extend(poly);
        self.ends.push(self.pts.len());
    }

    /// Adds the convex hull of `points` grown by the disc of radius `pad`,
    /// as a regular polygon around that disc ([`pad_ring`]): it contains
    /// the disc and reaches at most [`PAD_EXCESS_M`] or 2 % of `pad`
    /// beyond it in any direction, whichever is more. A square would reach
    /// `pad·(√2 − 1)` beyond it diagonally: 2.5 mm per side of a 12 mm cord
    /// at 45°.
    fn push_hull(&mut self, points: impl Iterator<Item = [f64; 2]>, pad: f64, body: bool) {
        self.body.push(body);
        self.scratch.clear();
        let (ring, sides) = if pad > 0.0 { pad_ring(pad) } else { ([[0.0; 2]; PAD_SIDES], 1) };
        for p in points {
            for d in &ring[..sides] {
                self.scratch.push([p[0] + d[0], p[1] + d[1]]);
            }
        }
        self.scratch.sort_unstable_by(|a, b| a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])));
        self.scratch.dedup();
        let n = self.scratch.len();
        let start = self.pts.len();
        if n <= 2 {
            self.pts.extend_from_slice(&self.scratch);
            self.ends.push(self.pts.len());
            return;
        }
        // Andrew's monotone chain: lower hull left to right, then upper.
        let cross =
            |o: [f64; 2], a: [f64; 2], b: [f64; 2]| (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
        for i in 0..n {
            let p = self.scratch[i];
            while self.pts.len() >= start + 2
                && cross(self.pts[self.pts.len() - 2], self.pts[self.pts.len() - 1], p) <= 0.0
            {
                self.pts.pop();
            }
            self.pts.push(p);
        }
        let lower = self.pts.len();
        for i in (0..n - 1).rev() {
            let p = self.scratch[i];
            while self.pts.len() > lower && cross(self.pts[self.pts.len() - 2], self.pts[self.pts.len() - 1], p) <= 0.0
            {
                self.pts.pop();
            }
            self.pts.push(p);
        }
        self.pts.pop(); // the first point again
        self.ends.push(self.pts.len());
    }
}

/// Most sides of the polygon that stands for a disc when a hull is grown
/// ([`Pieces`]).
pub const PAD_SIDES: usize = 16;

/// How far beyond the disc the polygon standing for it may reach, m (where
/// [`PAD_SIDES`] sides allow).
pub const PAD_EXCESS_M: f64 = 2.5e-4;

/// The vertices of the regular polygon around the disc of radius `pad`
/// (centred on the origin, one edge facing each axis) with the fewest of 4,
/// 8 or 16 sides that reaches at most [`PAD_EXCESS_M`] beyond the disc, or
/// 16; and how many there are.
fn pad_ring(pad: f64) -> ([[f64; 2]; PAD_SIDES], usize) {
    let sides = [4, 8, PAD_SIDES]
        .into_iter()
        .find(|&n| pad * (1.0 / (PI / n as f64).cos() - 1.0) <= PAD_EXCESS_M)
        .unwrap_or(PAD_SIDES);
    let step = 2.0 * PI / sides as f64;
    let r = pad / (0.5 * step).cos();
    let mut ring = [[0.0; 2]; PAD_SIDES];
    for (k, v) in ring.iter_mut().enumerate().take(sides) {
        let (s, c) = ((k as f64 + 0.5) * step).sin_cos();
        *v = [r * c, r * s];
    }
    (ring, sides)
}

/// A unit's cord: fixed from its anchor through the guide points, then a
/// straight run to the attachment point on the unit.
#[derive(Clone, Debug)]
pub struct CordShape {
    /// Anchor, then the guide points (surface frame).
    pub fixed: Vec<[f64; 2]>,
    /// Attachment point (unit frame).
    pub attach: [f64; 2],
    /// Half the cord's width.
    pub half_width: f64,
}

/// A unit's planar shape: its footprint as convex parts, and its cord.
#[derive(Clone, Debug)]
pub struct UnitShape {
    /// Convex parts of the footprint (unit frame, counter-clockwise).
    pub parts: Vec<Vec<[f64; 2]>>,
    /// Largest distance of a footprint vertex or the attachment point from
    /// the unit's origin.
    pub r_max: f64,
    /// The cord, if it has one.
    pub cord: Option<CordShape>,
}

impl UnitShape {
    /// The shape of a validated unit (its footprint is a simple,
    /// counter-clockwise polygon).
    pub fn new(unit: &PlatenUnit) -> UnitShape {
        let parts = convex_parts(&unit.footprint_xy_m);
        let cord = unit.umbilical.as_ref().map(|u| {
            let mut fixed = vec![u.anchor_xy_m];
            fixed.extend_from_slice(&u.via_xy_m);
            CordShape { fixed, attach: u.attach_xy_m, half_width: 0.5 * u.width_m }
        });
        let norm = |p: &[f64; 2]| p[0].hypot(p[1]);
        let r_max =
            unit.footprint_xy_m.iter().map(norm).chain(cord.as_ref().map(|c| norm(&c.attach))).fold(0.0, f64::max);
        UnitShape { parts, r_max, cord }
    }

    /// Appends the pieces covering the unit standing at `pose`.
    pub fn static_pieces(&self, pose: Pose2, out: &mut Pieces) {
        for part in &self.parts {
            out.push_convex(part.iter().map(|&p| place(pose, p)));
        }
        if let Some(c) = &self.cord {
            self.fixed_cord(c, out);
            // invariant: a cord is validated to have its anchor point
            let last = *c.fixed.last().expect("a cord has an anchor");
            out.push_hull([last, place(pose, c.attach)].into_iter(), c.half_width, false);
        }
    }

    fn fixed_cord(&self, c: &CordShape, out: &mut Pieces) {
        for w in c.fixed.windows(2) {
            out.push_hull(w.iter().copied(), c.half_width, false);
        }
    }

    /// Appends pieces whose union covers every point the unit (and its cord)
    /// occupies on the way from `from` to `to` ([`pose_at`]), with the
    /// rotation's bulge over each sub-move kept under `tol`.
    ///
    /// Over a sub-move turning by δ, a body point at radius r strays from
    /// the straight line between its end positions by at most r·δ²/8 (the
    /// second derivative of its path is r·δ², and it is 0 at both ends), so
    /// the hull of each convex part at both ends, grown by that, covers it.
    /// The cord's free run sweeps the triangle of its last fixed point and
    /// the attachment point's two ends, grown the same way.
    pub fn sweep_pieces(&self, from: Pose2, to: Pose2, tol: f64, out: &mut Pieces) {
        let k = self.sweep_steps(from, to, tol);
        self.sweep_span(from, to, tol, k, 0, 1.0, true, out);
    }

    /// The steps [`sweep_pieces`](Self::sweep_pieces) cuts the move from
    /// `from` to `to` into: enough that each step's bulge stays under `tol`
    /// (1 without turning; at most 64).
    pub fn sweep_steps(&self, from: Pose2, to: Pose2, tol: f64) -> usize {
        let turn = wrap(to[2] - from[2]);
        if turn == 0.0 || self.r_max == 0.0 {
            1
        } else {
            ((turn.abs() * (self.r_max / (8.0 * tol)).sqrt()).ceil() as usize).clamp(1, 64)
        }
    }

    /// Appends the pieces covering the part of the move from `from` to `to`
    /// between the end of its step `s0` (fraction `s0 / k`) and fraction
    /// `f1 > s0 / k`, the move cut into `k` equal steps (at least
    /// [`sweep_steps`](Self::sweep_steps)): one hull per step, the last one
    /// partial, each grown by its own turn's bulge; with the fixed part of
    /// the cord if `fixed`. With `s0 = 0`, `f1 = 1` and the least `k` these
    /// are [`sweep_pieces`](Self::sweep_pieces)' pieces; a prefix of the
    /// move cut into the same `k` steps shares every whole step's pieces
    /// with the move itself.
    #[allow(clippy::too_many_arguments)]
    pub fn sweep_span(
        &self,
        from: Pose2,
        to: Pose2,
        tol: f64,
        k: usize,
        s0: usize,
        f1: f64,
        fixed: bool,
        out: &mut Pieces,
    ) {
        let k = k.max(self.sweep_steps(from, to, tol));
        let turn = wrap(to[2] - from[2]);
        let mut t0 = s0 as f64 / k as f64;
        let mut a = pose_at(from, to, t0);
        for i in s0 + 1..=k {
            let t = i as f64 / k as f64;
            let last = t >= f1 || i == k;
            let t1 = if last { f1.min(1.0) } else { t };
            let b = pose_at(from, to, t1);
            let step = turn * (t1 - t0);
            let bulge = self.r_max * step * step / 8.0;
            t0 = t1;
            for part in &self.parts {
                out.push_hull(part.iter().map(|&p| place(a, p)).chain(part.iter().map(|&p| place(b, p))), bulge, true);
            }
            if let Some(c) = &self.cord {
                // invariant: a cord is validated to have its anchor point
                let last = *c.fixed.last().expect("a cord has an anchor");
                out.push_hull([last, place(a, c.attach), place(b, c.attach)].into_iter(), c.half_width + bulge, false);
            }
            if last {
                break;
            }
            a = b;
        }
        if let (Some(c), true) = (&self.cord, fixed) {
            self.fixed_cord(c, out);
        }
    }
}

/// Splits a simple counter-clockwise polygon into convex parts: itself when
/// it is convex, its triangles (ear clipping) otherwise.
pub fn convex_parts(poly: &[[f64; 2]]) -> Vec<Vec<[f64; 2]>> {
    let n = poly.len();
    let cross = |o: [f64; 2], a: [f64; 2], b: [f64; 2]| (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
    if (0..n).all(|i| cross(poly[i], poly[(i + 1) % n], poly[(i + 2) % n]) >= 0.0) {
        return vec![poly.to_vec()];
    }
    let mut idx: Vec<usize> = (0..n).collect();
    let mut out = Vec::new();
    while idx.len() > 3 {
        let m = idx.len();
        let ear = (0..m).find(|&i| {
            let (a, b, c) = (poly[idx[(i + m - 1) % m]], poly[idx[i]], poly[idx[(i + 1) % m]]);
            if cross(a, b, c) <= 0.0 {
                return false;
            }
            // No other vertex inside (or on) the triangle.
            idx.iter().all(|&j| {
                let p = poly[j];
                if p == a || p == b || p == c {
                    return true;
                }
                !(cross(a, b, p) >= 0.0 && cross(b, c, p) >= 0.0 && cross(c, a, p) >= 0.0)
            })
        });
        // A simple polygon always has an ear; fall back to the first vertex
        // only against rounding (the hull pieces stay conservative).
        let i = ear.unwrap_or(0);
        out.push(vec![poly[idx[(i + m - 1) % m]], poly[idx[i]], poly[idx[(i + 1) % m]]]);
        idx.remove(i);
    }
    out.push(idx.iter().map(|&j| poly[j]).collect());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hull_of_a_square_grown() {
        let mut p = Pieces::default();
        p.push_hull([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.5, 0.5]].into_iter(), 0.0, true);
        assert_eq!(p.get(0).len(), 4);
        p.push_hull([[0.0, 0.0], [1.0, 0.0]].into_iter(), 0.1, false);
        let q = p.get(1);
        // Two half 16-gons joined (16 vertices, give or take a nearly
        // collinear one), the axis-facing edges at 0.1 from the segment.
        assert!((16..=18).contains(&q.len()), "{q:?}");
        let (lo, hi) = q.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), p| (l.min(p[0]), h.max(p[0])));
        assert!((lo + 0.1).abs() < 1e-12 && (hi - 1.1).abs() < 1e-12, "{lo} {hi}");
    }

    /// Distance from `p` to the segment `a`–`b`.
    fn to_segment(p: [f64; 2], a: [f64; 2], b: [f64; 2]) -> f64 {
        let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
        let t = (((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / (dx * dx + dy * dy)).clamp(0.0, 1.0);
        (p[0] - a[0] - t * dx).hypot(p[1] - a[1] - t * dy)
    }

    /// Whether `p` lies in the convex counter-clockwise polygon `q`.
    fn inside(q: &[[f64; 2]], p: [f64; 2]) -> bool {
        (0..q.len()).all(|i| {
            let (a, b) = (q[i], q[(i + 1) % q.len()]);
            (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]) >= -1e-12
        })
    }

    #[test]
    fn a_grown_segment_covers_its_disc_sweep_and_hardly_more_in_any_direction() {
        let hw = 0.006;
        for deg in [0.0f64, 10.0, 22.5, 30.0, 45.0, 60.0, 80.0, 135.0] {
            let (s, c) = deg.to_radians().sin_cos();
            let (a, b) = ([0.1, 0.2], [0.1 + 0.3 * c, 0.2 + 0.3 * s]);
            let mut p = Pieces::default();
            p.push_hull([a, b].into_iter(), hw, false);
            let q = p.get(0);
            // Every vertex within 2 % of the half-width beyond it.
            let worst = q.iter().map(|&v| to_segment(v, a, b)).fold(0.0, f64::max);
            assert!(worst <= hw * 1.0197 && worst >= hw, "{deg}°: reaches {worst}");
            // Every point within the half-width of the segment is inside.
            for k in 0..=64 {
                let t = k as f64 / 64.0;
                for m in 0..32 {
                    let (ms, mc) = (m as f64 * PI / 16.0).sin_cos();
                    let pt = [a[0] + t * (b[0] - a[0]) + hw * mc, a[1] + t * (b[1] - a[1]) + hw * ms];
                    assert!(inside(q, pt), "{deg}°: {pt:?} outside");
                }
            }
        }
    }

    #[test]
    fn l_shape_splits_into_triangles_of_the_same_area() {
        let l = [[0.0, 0.0], [2.0, 0.0], [2.0, 1.0], [1.0, 1.0], [1.0, 2.0], [0.0, 2.0]];
        let parts = convex_parts(&l);
        let area = |p: &[[f64; 2]]| {
            0.5 * (0..p.len())
                .map(|i| p[i][0] * p[(i + 1) % p.len()][1] - p[(i + 1) % p.len()][0] * p[i][1])
                .sum::<f64>()
        };
        assert!(parts.len() > 1);
        assert!(parts.iter().all(|p| area(p) > 0.0));
        assert!((parts.iter().map(|p| area(p)).sum::<f64>() - 3.0).abs() < 1e-12);
    }

    #[test]
    fn wrap_takes_the_short_way() {
        assert!((wrap(1.5 * PI) + 0.5 * PI).abs() < 1e-12);
        assert!((pose_at([0.0, 0.0, 3.0], [1.0, 0.0, -3.0], 0.5)[2] - PI).abs() < 0.3);
    }
}
