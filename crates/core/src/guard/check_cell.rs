//! The cell check: every sampled sphere against the distance field; where
//! the field reads close enough to matter, the obstacles' exact shapes
//! decide instead (those the link may touch left out).
//!
//! Names as in the field (`field` module, "Names"): `cell_clearance` is the
//! value the check uses (conservative), `exact_cell_clearance…` parry3d's
//! exact distance for oracles and refinement.

use super::track::APPROACH_SCALING_EPS_M;
use super::*;
use crate::model::exact::LinkShape;

/// What the cell check reads besides the arms: the distance field, the
/// obstacles' exact shapes, which links may touch which obstacle, and the
/// grid's bounds.
pub(super) struct CellCheck {
    pub(super) field: DistanceField,
    pub(super) obstacles: Vec<PlacedShape>,
    /// Per obstacle, its solid shape: primitives as they are, a mesh as its
    /// convex hull (which contains it; `None` where it has none). A link's
    /// exact shape is measured against these, not a mesh's surface.
    solids: Vec<Option<PlacedShape>>,
    /// Spheres within the margin are refined by their link's exact shape
    /// as well ([`Guard::set_exact_refinement`]).
    pub(super) refine_links: bool,
    /// Bounding sphere (centre, radius) of each obstacle.
    pub(super) obstacle_bounds: Vec<([f32; 3], f32)>,
    /// Per global link: bitset of obstacles it may touch.
    pub(super) allowed_obstacles: Vec<u64>,
    pub(super) obstacle_words: usize,
    pub(super) grid_lo: [f64; 3],
    pub(super) grid_hi: [f64; 3],
    /// The cell check looks every moving sphere up, skipping nothing
    /// (the reference twin of its bound-and-anchor skipping).
    pub(super) every_sphere: bool,
}

impl CellCheck {
    /// The check of `cell`'s obstacles over `field`, for `links` global links.
    pub(super) fn new(cell: &Workcell, field: DistanceField, links: usize) -> Result<CellCheck, GuardError> {
        let obstacle_words = cell.obstacles.len().div_ceil(64).max(1);
        let mut obstacles = Vec::new();
        let mut obstacle_bounds = Vec::new();
        let solids = cell
            .obstacles
            .iter()
            .map(|o| {
                exact::solid_link_shape(&[Collision { origin: Frame::IDENTITY, shape: o.shape.clone() }])
                    .map(|s| PlacedShape::new(&s, &o.pose))
            })
            .collect();
        for o in &cell.obstacles {
            let t = o.pose.trans;
            obstacle_bounds.push((
                [t.x as f32, t.y as f32, t.z as f32],
                crate::model::spheres::bounding_radius(&o.shape) as f32 + 1e-4,
            ));
            let shape = exact::link_shape(&[Collision { origin: Frame::IDENTITY, shape: o.shape.clone() }])
                .map_err(|source| GuardError::Obstacle { name: o.name.clone(), source })?
                // invariant: one primitive collision element always gives one shape
                .expect("one collision element gives a shape");
            obstacles.push(PlacedShape::new(&shape, &o.pose));
        }
        let g = *field.grid();
        let grid_hi = std::array::from_fn(|k| g.origin_m[k] + g.dims[k] as f64 * g.resolution_m);
        Ok(CellCheck {
            field,
            obstacles,
            obstacle_bounds,
            solids,
            refine_links: cell.guard.exact_links,
            allowed_obstacles: vec![0; links * obstacle_words],
            obstacle_words,
            grid_lo: g.origin_m,
            grid_hi,
            every_sphere: false,
        })
    }

    /// Global link `global_link`'s allowed-contact bits, one per obstacle.
    #[inline]
    fn allowed_mask(&self, global_link: usize) -> &[u64] {
        let w = self.obstacle_words;
        &self.allowed_obstacles[global_link * w..(global_link + 1) * w]
    }

    /// Exact clearance of a sphere to every obstacle the link may not touch
    /// (and to the grid's faces under `outside: collision`).
    pub(super) fn exact_cell_clearance(&self, global_link: usize, c: [f32; 3], r: f32) -> f32 {
        let mask = self.allowed_mask(global_link);
        let mut best = self.face_clearance(c, r);
        for (o, (shape, (p, rad))) in self.obstacles.iter().zip(&self.obstacle_bounds).enumerate() {
            if mask[o / 64] >> (o % 64) & 1 == 1 {
                continue;
            }
            // The obstacle's bounding ball first: no nearer than its surface.
            let d2 = (c[0] - p[0]).powi(2) + (c[1] - p[1]).powi(2) + (c[2] - p[2]).powi(2);
            if d2.sqrt() - rad - r >= best {
                continue;
            }
            // ball_distance is 0 on overlap: count it as full contact.
            let d = shape.ball_distance(c, r).unwrap_or(f32::NEG_INFINITY);
            best = best.min(if d <= 0.0 { -r } else { d });
        }
        best
    }

    /// A sphere's clearance to the grid's faces under `outside: collision`
    /// (+∞ otherwise).
    fn face_clearance(&self, c: [f32; 3], r: f32) -> f32 {
        let mut best = f32::INFINITY;
        if self.field.grid().outside == Outside::Collision {
            for ((&ck, lo), hi) in c.iter().zip(self.grid_lo).zip(self.grid_hi) {
                best = best.min((f64::from(ck) - lo).min(hi - f64::from(ck)) as f32 - r);
            }
        }
        best
    }

    /// The exact distance from a link's solid shape `hull`, posed at `at`,
    /// to the solid shape of every obstacle it may not touch, and (under
    /// `outside: collision`) from a box containing it to the grid's faces;
    /// −∞ where an obstacle has no solid shape or parry3d cannot measure
    /// the pair.
    fn link_to_cell(&self, global_link: usize, hull: &LinkShape, at: &Frame) -> f32 {
        let mask = self.allowed_mask(global_link);
        let mut best = f32::INFINITY;
        if self.field.grid().outside == Outside::Collision {
            let b = hull.bounds_at(at);
            for k in 0..3 {
                best = best.min((f64::from(b[k]) - self.grid_lo[k]).min(self.grid_hi[k] - f64::from(b[3 + k])) as f32);
            }
        }
        for (o, solid) in self.solids.iter().enumerate() {
            if mask[o / 64] >> (o % 64) & 1 == 1 {
                continue;
            }
            let Some(shape) = solid else { return f32::NEG_INFINITY };
            match shape.shape_distance(hull, at) {
                Some(d) => best = best.min(d),
                None => return f32::NEG_INFINITY,
            }
        }
        best
    }
}

/// Robot `a`'s link `l` (global `global_link`) at sample `k`: its solid
/// exact shape's distance to the cell ([`CellCheck::link_to_cell`]), less the
/// link's inflation this cycle (the motion between samples and the
/// departure the spheres' inflation covers there) but what a refined
/// check gives back, as between robots ([`check_robots::given_back`]:
/// the steps' part the sample's own steps do not need, the departure's
/// within a share of the `margin`). A lower bound of the
/// clearance of every part of the link, as its spheres' clearance is of
/// the part each holds, so a sphere's clearance may be raised to it.
/// −∞ where there is no
/// shape, no pose or no distance.
fn link_cell_clearance(cell: &CellCheck, a: &mut Arm, (l, global_link): (usize, usize), k: usize, margin: f32) -> f32 {
    let Some(Some(hull)) = a.model.hulls.get(l) else { return f32::NEG_INFINITY };
    let keep =
        (a.scratch.posed.link_inflation[l] as f32 - check_robots::given_back(&a.scratch, l as u32, k, margin)).max(0.0);
    let kin = a.model.poser.kinematics();
    let dof = kin.dof();
    let Some(q) = a.scratch.forecast.path_q.get(k * dof..(k + 1) * dof) else { return f32::NEG_INFINITY };
    let frames = &mut a.scratch.look.frames;
    frames.clear();
    frames.resize(kin.link_count(), Frame::IDENTITY);
    if kin.forward(q, frames).is_err() {
        return f32::NEG_INFINITY;
    }
    let Some(at) = frames.get(l) else { return f32::NEG_INFINITY };
    cell.link_to_cell(global_link, hull, at) - keep
}

impl Guard {
    /// Clearance of a sphere of robot `robot`'s link `link` to the cell, as
    /// a stopped robot's check judges it: the field, and where that is
    /// within the release margin, the exact distance to the obstacles the
    /// link may not touch (no refinement with sensed points in the field).
    pub fn cell_clearance(&self, robot: usize, link: usize, c: [f32; 3], r: f32) -> f32 {
        let global_link = self.matrix.global(robot, link);
        let field = self.cell.field.clearance(c[0], c[1], c[2], r);
        if !self.cell.field.has_sensed() && field <= self.margins.release_m as f32 {
            self.cell.exact_cell_clearance(global_link, c, r)
        } else {
            field
        }
    }

    /// Exact clearance of a sphere of robot `robot`'s link `link` to the
    /// obstacles it may not touch and (under `outside: collision`) the
    /// grid's faces: parry3d distances, no field. Sensed points are not
    /// included. For oracles and diagnostics; not on the per-cycle path.
    pub fn exact_cell_clearance_of(&self, robot: usize, link: usize, c: [f32; 3], r: f32) -> f32 {
        self.cell.exact_cell_clearance(self.matrix.global(robot, link), c, r)
    }

    /// True when the link pair (robot `ra` link `la`, robot `rb` link `lb`)
    /// is checked: not adjacent, not always touching, not allowed to touch.
    /// `never` pairs count as checked here (an oracle should look at them).
    pub fn pair_matters(&self, ra: usize, la: usize, rb: usize, lb: usize) -> bool {
        link_pair_checked(&self.matrix, &self.allowed, self.matrix.global(ra, la), self.matrix.global(rb, lb))
    }
}

/// Whether global links `ga` and `gb` are a checked pair
/// ([`Guard::pair_matters`]), by the collision matrix and the allowed
/// contacts (bitset over global link pairs).
#[inline]
pub(super) fn link_pair_checked(matrix: &CollisionMatrix, allowed: &[u64], ga: usize, gb: usize) -> bool {
    let bit = ga * matrix.total_links() + gb;
    let allowed = allowed[bit / 64] >> (bit % 64) & 1 == 1;
    !allowed && ga != gb && matches!(matrix.class(ga, gb), PairClass::Sometimes | PairClass::Never)
}

with_avx2!(pub(super) stage fn check_cell = check_cell_avx2_fma / check_cell_impl(
    cell: &CellCheck,
    arms: &mut [Arm],
    matrix: &CollisionMatrix,
    lim: Limits,
    part: Part
));

/// Every arm `part` covers: its sampled spheres against the cell (the
/// field, and where it reads close, the obstacles' exact shapes), noted in
/// its track; its fixed links' clearance once per change.
#[inline(always)]
fn check_cell_impl(cell: &CellCheck, arms: &mut [Arm], matrix: &CollisionMatrix, lim: Limits, part: Part) {
    for (ri, arm) in arms.iter_mut().enumerate() {
        if arm.scratch.forecast.n_cfg > 0 && part.arm(ri) {
            check_arm(cell, arm, ri, matrix, lim);
        }
    }
}

/// Robot `ri`'s sampled spheres against the cell, batch by batch.
#[inline(always)]
fn check_arm(cell: &CellCheck, arm: &mut Arm, ri: usize, matrix: &CollisionMatrix, lim: Limits) {
    let margin = lim.margin;
    // Read once: the reference mode looks every sphere up.
    let every = cell.every_sphere;
    let refine_ok = !cell.field.has_sensed();
    let (refine_below, look) = cell_look(arm, lim);
    let n_cfg = arm.scratch.forecast.n_cfg;
    arm.scratch.look.now_c.fill(f32::INFINITY);
    arm.scratch.look.now_exact.fill(f32::NAN);
    note_fixed_links(cell, arm, ri, matrix, lim);
    for bi in 0..n_cfg.div_ceil(BATCH) {
        let lanes_here = (n_cfg - bi * BATCH).min(BATCH);
        let mut order = std::mem::take(&mut arm.scratch.look.order);
        let mut anchors = std::mem::take(&mut arm.scratch.look.anchors);
        order_links(cell, arm, bi, lanes_here, &mut order, &mut anchors);
        order.sort_unstable_by(|x, y| x.0.total_cmp(&y.0));
        for &(bound, ki) in &order {
            if !every && bound > look && bound >= arm.scratch.track.best {
                break;
            }
            let (l, s, en) = arm.model.ranges[ki as usize];
            let global_link = matrix.global(ri, l as usize);
            // The link's exact clearance per lane, once computed (NaN: not yet).
            let mut by_link = [f32::NAN; BATCH];
            for sl in s as usize..en as usize {
                let batch = &arm.scratch.posed.batches[bi];
                let r = arm.scratch.posed.inflated_r[sl];
                // Lanes past the last configuration repeat it.
                let skip_above = if every { f32::INFINITY } else { look.max(arm.scratch.track.best) };
                let (x, y, z) = (lanes(&batch.x, sl), lanes(&batch.y, sl), lanes(&batch.z, sl));
                let lb = cell.field.clearance_from(&anchors[ki as usize], [x, y, z], r);
                // (A NaN bound would fail `>` and be looked up.)
                if lb.iter().take(lanes_here).all(|&b| b > skip_above) {
                    continue;
                }
                let mut lane_c = [f32::INFINITY; BATCH];
                for (lane, c) in lane_c.iter_mut().enumerate().take(lanes_here) {
                    *c = if lb[lane] > skip_above {
                        lb[lane]
                    } else {
                        cell.field.clearance(x[lane], y[lane], z[lane], r)
                    };
                }
                let lo = lane_c.iter().copied().fold(f32::INFINITY, f32::min);
                if !every && lo > look && lo >= arm.scratch.track.best {
                    continue;
                }
                let pair = (Body::Link { robot: ri as u16, link: l as u16 }, Body::Cell);
                let mut least = f32::INFINITY;
                for (lane, &c0) in lane_c.iter().enumerate().take(lanes_here) {
                    let k = bi * BATCH + lane;
                    let c = if refine_ok && c0 <= refine_below {
                        let slot = (bi, sl, lane, l as usize, global_link);
                        refine_sphere(cell, arm, slot, (refine_below, margin), &mut by_link[lane])
                    } else {
                        c0
                    };
                    least = if c.is_nan() { c } else { least.min(c) };
                    if k == 0 {
                        arm.scratch.look.now_c[sl] = c;
                    } else {
                        let (now, later) = if refine_ok {
                            exact_approach(cell, arm, (bi, sl, lane, global_link), c, lim)
                        } else {
                            (arm.scratch.look.now_c[sl], c)
                        };
                        arm.scratch.track.approach(0, now, later);
                    }
                    arm.scratch.track.found(c, k, pair, Reason::Cell, margin);
                }
                arm.scratch.track.found_class(0, least, pair);
            }
        }
        arm.scratch.look.order = order;
        arm.scratch.look.anchors = anchors;
    }
}

/// What a sphere's stopping path approaches of the cell, (now, later),
/// from its clearance `later` at a later sample as the check found it:
/// where that is an approach within the slow-down distance of the margin
/// (it may slow the robot), both ends by the obstacles' exact shapes, not
/// the field's voxels. The field's value steps by up to a voxel as a
/// sphere crosses into the next one: a sphere gliding past a table at a
/// steady 2 cm "approached" it by a step at any speed, and the speed
/// scaling fell to its floor (`simulate --arms 3 --plans never --seed
/// 181`: 2 s at the escape scaling beside its own mount). Exact ends
/// approach only as far as the sphere moves nearer. `slot`: (batch, slot,
/// lane, global link).
#[inline]
fn exact_approach(
    cell: &CellCheck,
    arm: &mut Arm,
    (bi, sl, lane, global_link): (usize, usize, usize, usize),
    later: f32,
    lim: Limits,
) -> (f32, f32) {
    let now = arm.scratch.look.now_c[sl];
    let edge = lim.margin + lim.slow_down;
    if !arm.scratch.look.slowed[0] || later.is_nan() || later > edge || later >= now - APPROACH_SCALING_EPS_M {
        return (now, later);
    }
    let r = arm.scratch.posed.inflated_r[sl];
    if arm.scratch.look.now_exact[sl].is_nan() {
        let first = &arm.scratch.posed.batches[0];
        let at = [first.x[sl * BATCH], first.y[sl * BATCH], first.z[sl * BATCH]];
        arm.scratch.look.now_exact[sl] = cell.exact_cell_clearance(global_link, at, r);
    }
    let batch = &arm.scratch.posed.batches[bi];
    let i = sl * BATCH + lane;
    let exact_later = cell.exact_cell_clearance(global_link, [batch.x[i], batch.y[i], batch.z[i]], r);
    // (Both the sphere's own: a link's exact shape may refine one end.)
    (arm.scratch.look.now_exact[sl], exact_later)
}

/// A sphere within reach of a verdict (`refine_below`): the obstacles'
/// exact shapes decide, not the field's voxel bound; where that is still
/// within reach, its link's exact shape as well ([`link_cell_clearance`],
/// kept in `by_link` for the link's other spheres at that sample; NaN:
/// not computed yet). `slot`: (batch, slot, lane, link, global link).
#[inline]
fn refine_sphere(
    cell: &CellCheck,
    arm: &mut Arm,
    (bi, sl, lane, l, global_link): (usize, usize, usize, usize, usize),
    (refine_below, margin): (f32, f32),
    by_link: &mut f32,
) -> f32 {
    let i = sl * BATCH + lane;
    let batch = &arm.scratch.posed.batches[bi];
    let at = [batch.x[i], batch.y[i], batch.z[i]];
    let c = cell.exact_cell_clearance(global_link, at, arm.scratch.posed.inflated_r[sl]);
    if !cell.refine_links || c > refine_below {
        return c;
    }
    if by_link.is_nan() {
        *by_link = link_cell_clearance(cell, arm, (l, global_link), bi * BATCH + lane, margin);
    }
    c.max(*by_link)
}

/// Orders robot `a`'s moving links in batch `bi` nearest the cell first:
/// one lookup per moving link and lane bounds all of the link's spheres
/// there (`DistanceField::clearance_bound`), so once a link's bound exceeds
/// both the margin and the least clearance found so far, neither it nor any
/// after it can change the result. Each lookup is also the link's anchor
/// (in `anchors`): a sphere whose bound from it
/// (`DistanceField::clearance_from`, arithmetic only) exceeds the margin
/// and the least clearance so far is not looked up either.
#[inline(always)]
fn order_links(
    cell: &CellCheck,
    a: &Arm,
    bi: usize,
    lanes_here: usize,
    order: &mut Vec<(f32, u32)>,
    anchors: &mut [[[f32; BATCH]; 4]],
) {
    order.clear();
    for (ki, &(l, _, _)) in a.model.ranges.iter().enumerate() {
        if a.model.fixed_link[l as usize] {
            continue;
        }
        let bx = &a.scratch.posed.batches[bi].boxes[l as usize];
        let e = a.scratch.posed.link_inflation[l as usize] as f32;
        let mut lo = f32::INFINITY;
        // Lanes index six arrays at once.
        #[allow(clippy::needless_range_loop)]
        for lane in 0..lanes_here {
            let lo_c: [f32; 3] = std::array::from_fn(|c| bx[c][lane]);
            let h: [f32; 3] = std::array::from_fn(|c| 0.5 * (bx[3 + c][lane] - lo_c[c]));
            let rad = (h[0] * h[0] + h[1] * h[1] + h[2] * h[2]).sqrt() + e;
            let (cx, cy, cz) = (lo_c[0] + h[0], lo_c[1] + h[1], lo_c[2] + h[2]);
            let (b, an) = cell.field.bound_and_anchor(cx, cy, cz, rad);
            lo = if b.is_nan() { f32::NEG_INFINITY } else { lo.min(b) };
            for (row, v) in anchors[ki].iter_mut().zip(an) {
                row[lane] = v;
            }
        }
        order.push((lo, ki as u32));
    }
}

/// Where robot `ri`'s cell check refines with exact shapes, and how far
/// it looks (records clearances): exact where the field could decide,
/// within the margin for a moving robot (its stop), the release margin
/// for a stopped or escaping one. Escaping from the cell, everything
/// within the release margin is recorded, not only the margin; a robot
/// the cell may slow ([`Guard::slowed_by`]) is also looked at within the
/// slow-down distance, for what its stopping path approaches (its speed
/// scaling, [`Track::approach`]).
fn cell_look(a: &Arm, lim: Limits) -> (f32, f32) {
    let (margin, release) = (lim.margin, lim.release);
    let escape = a.scratch.track.escape.target;
    let refine_below = if a.state.phase.stopped() || escape.is_some() { release } else { margin };
    let look = if escape == Some(Target::Cell) { release.max(margin) } else { margin };
    let look = if a.scratch.look.slowed[0] { look.max(margin + lim.slow_down) } else { look };
    (refine_below, look)
}

/// Notes robot `ri`'s links that no joint moves: their clearance to the
/// cell, recomputed once per change of the field or contacts, holds at
/// every sample.
fn note_fixed_links(cell: &CellCheck, a: &mut Arm, ri: usize, matrix: &CollisionMatrix, lim: Limits) {
    let margin = lim.margin;
    if a.state.fixed_dirty || a.state.fixed_best.0.is_infinite() {
        fixed_links_to_cell(cell, a, ri, matrix, lim.release);
    }
    let (fc, fl) = a.state.fixed_best;
    if fc.is_finite() || fc.is_nan() || fc == f32::NEG_INFINITY {
        let pair = (Body::Link { robot: ri as u16, link: fl as u16 }, Body::Cell);
        let track = &mut a.scratch.track;
        track.found(fc, 0, pair, Reason::Cell, margin);
        track.found_class(0, fc, pair);
        if track.escape.target == Some(Target::Cell) {
            // They stand there at every sample.
            track.escape.take_samples(fc, 1, usize::MAX);
        }
    }
}

/// The least clearance to the cell of robot `ri`'s links that no joint
/// moves (their spheres stand where the first sample put them), and
/// which link has it: once per change of the field, contacts or margins.
fn fixed_links_to_cell(cell: &CellCheck, a: &mut Arm, ri: usize, matrix: &CollisionMatrix, release: f32) {
    let refine_ok = !cell.field.has_sensed();
    let mut best = (f32::INFINITY, 0u32);
    for &(l, s, en) in &a.model.ranges {
        if !a.model.fixed_link[l as usize] {
            continue;
        }
        let global_link = matrix.global(ri, l as usize);
        let batch = &a.scratch.posed.batches[0];
        for sl in s as usize..en as usize {
            let i = sl * BATCH;
            let mut c = cell.field.clearance(batch.x[i], batch.y[i], batch.z[i], batch.r[sl]);
            let at = [batch.x[i], batch.y[i], batch.z[i]];
            if refine_ok && c <= release {
                c = cell.exact_cell_clearance(global_link, at, batch.r[sl]);
            }
            if c < best.0 || c.is_nan() {
                best = (c, l);
            }
        }
    }
    a.state.fixed_best = best;
    a.state.fixed_dirty = false;
}
