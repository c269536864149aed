//! Exact refinement before a stop for the cell: where an arm's spheres come
//! within the clearance margin of the cell but its links' exact shapes
//! (meshes as their convex hulls) stay well clear of every obstacle and
//! the grid's faces, the arm is not stopped; with the refinement off (the
//! spheres alone, the baseline) it is, for the cell. An arm driving at the
//! cell (no plan: its path extrapolated) is still stopped before its
//! shapes reach the margin's other side, and comes to rest nearer than the
//! spheres alone let it. The sample cell's right arm, lowered by its
//! shoulder; the left arm parked away from it.

use crate::common;

use crate::refine::{q_left, q_right};
use common::cell::{guard, sample_cell, sample_field};
use workcell_guard_core::field::Outside;
use workcell_guard_core::frame::Frame;
use workcell_guard_core::guard::{Guard, Inputs, JointStateIn, Reason};
use workcell_guard_core::model::exact::{LinkShape, PlacedShape, solid_link_shape};
use workcell_guard_core::model::{Collision, PosedSpheres, SpherePoser};

const DT: f64 = 0.002;
/// The left arm's pan: turned away from the right arm.
const LEFT_AWAY: f64 = -1.2;
/// The right arm's shoulder speed towards the cell when driving, rad/s.
const SPEED: f64 = 0.5;

/// The right arm at yaw `j1`, shoulder `p`.
fn q(j1: f64, p: f64) -> Vec<f64> {
    let mut q = q_right(j1);
    q[1] = p;
    q
}

/// The right arm's spheres and links' solid shapes, and the cell's
/// obstacles' solid shapes and the grid's faces: the oracle.
struct Oracle {
    poser: SpherePoser,
    posed: PosedSpheres,
    hulls: Vec<Option<LinkShape>>,
    obstacles: Vec<PlacedShape>,
    faces: Option<([f64; 3], [f64; 3])>,
    /// Links no joint moves (the check handles them apart).
    fixed: Vec<bool>,
}

impl Oracle {
    fn new() -> Oracle {
        let cell = sample_cell();
        let m = &cell.manipulators[1];
        let poser = SpherePoser::new(&m.robot, &m.spheres, m.base);
        let mut posed = poser.posed();
        let hulls = m.robot.links.iter().map(|l| solid_link_shape(&l.collisions)).collect();
        let obstacles = cell
            .obstacles
            .iter()
            .map(|o| {
                let s = solid_link_shape(&[Collision { origin: Frame::IDENTITY, shape: o.shape.clone() }]).unwrap();
                PlacedShape::new(&s, &o.pose)
            })
            .collect();
        let g = *sample_field().grid();
        let faces = (g.outside == Outside::Collision)
            .then(|| (g.origin_m, std::array::from_fn(|k| g.origin_m[k] + g.dims[k] as f64 * g.resolution_m)));
        poser.pose(&q(0.0, 0.5), &mut posed).unwrap();
        let before: Vec<Frame> = posed.frames.clone();
        poser.pose(&[0.3; 8], &mut posed).unwrap();
        let fixed = before.iter().zip(&posed.frames).map(|(a, b)| (a.trans - b.trans).norm() < 1e-9).collect();
        Oracle { poser, posed, hulls, obstacles, faces, fixed }
    }

    /// At `qr`: the least cell clearance of the moving links' spheres by the
    /// guard's sphere check (field, and exact spheres where it reads
    /// close), and of their exact shapes to every obstacle and face, m.
    fn at(&mut self, g: &Guard, qr: &[f64]) -> (f64, f64) {
        self.poser.pose(qr, &mut self.posed).unwrap();
        let p = &self.posed;
        let mut spheres = f64::INFINITY;
        for i in 0..p.x.len() {
            let l = p.link[i] as usize;
            if !self.fixed[l] {
                spheres = spheres.min(f64::from(g.cell_clearance(1, l, [p.x[i], p.y[i], p.z[i]], p.r[i])));
            }
        }
        let mut exact = f64::INFINITY;
        for (l, hull) in self.hulls.iter().enumerate() {
            let Some(h) = hull.as_ref().filter(|_| !self.fixed[l]) else { continue };
            let at = &p.frames[l];
            for o in &self.obstacles {
                exact = exact.min(f64::from(o.shape_distance(h, at).unwrap()));
            }
            if let Some((lo, hi)) = self.faces {
                let b = h.bounds_at(at);
                for k in 0..3 {
                    exact = exact.min((f64::from(b[k]) - lo[k]).min(hi[k] - f64::from(b[3 + k])));
                }
            }
        }
        (spheres, exact)
    }
}

/// One cycle with the right arm at `qr` (its shoulder moving at `v`):
/// whether it is stopped, and for what.
fn step(g: &mut Guard, t: f64, qr: &[f64], v: f64) -> (bool, Option<Reason>) {
    let l = q_left(LEFT_AWAY);
    let vl = vec![0.0; l.len()];
    let mut vr = vec![0.0; qr.len()];
    vr[1] = v;
    let inputs = [
        JointStateIn { robot: 0, stamp_s: t, positions: &l, velocities: Some(&vl) },
        JointStateIn { robot: 1, stamp_s: t, positions: qr, velocities: Some(&vr) },
    ];
    g.step(t, &Inputs::joints(&inputs));
    let c = &g.commands()[1];
    (c.stop, c.cause.map(|c| c.reason))
}

/// Both arms standing, the right one at `qr`, for 1.5 s: whether it is
/// stopped at the end, and for what.
fn stand(exact: bool, qr: &[f64]) -> (bool, Option<Reason>) {
    let mut g = guard();
    g.set_exact_refinement(exact);
    let mut last = (true, None);
    for k in 0..750 {
        last = step(&mut g, k as f64 * DT, qr, 0.0);
    }
    last
}

/// The first pose, lowering the right arm's shoulder at each yaw in turn,
/// whose spheres read within half the margin of the cell while its
/// shapes stay more than twice the margin clear: (yaw, shoulder).
fn spheres_near_shapes_clear(o: &mut Oracle, g: &Guard, margin: f64) -> (f64, f64) {
    for yi in 0..=30 {
        let j1 = -1.5 + 0.1 * f64::from(yi);
        for pi in 0..=130 {
            let p = 0.02 * f64::from(pi);
            let (spheres, exact) = o.at(g, &q(j1, p));
            if spheres < margin {
                if spheres < 0.5 * margin && exact > 2.0 * margin {
                    return (j1, p);
                }
                break; // this yaw's first approach is not the case
            }
        }
    }
    panic!("no pose of the right arm has its spheres near the cell and its shapes clear");
}

#[test]
fn an_arm_whose_spheres_are_within_the_margin_of_the_cell_but_whose_shapes_are_not_is_not_stopped() {
    let margin = sample_cell().margins.clearance_m;
    let g = guard();
    let mut o = Oracle::new();
    let (j1, p) = spheres_near_shapes_clear(&mut o, &g, margin);
    let (spheres, exact) = o.at(&g, &q(j1, p));
    println!("right arm yaw {j1:.2}, shoulder {p:.2}: spheres {spheres:.4} m, shapes {exact:.4} m (margin {margin} m)");
    let on = stand(true, &q(j1, p));
    let off = stand(false, &q(j1, p));
    println!("stopped with the refinement: {on:?}; spheres alone: {off:?}");
    assert!(!on.0, "stopped although the shapes are {exact:.4} m clear of the cell: {on:?}");
    assert!(off.0 && matches!(off.1, Some(Reason::Cell)), "the baseline stops for the cell: {off:?}");
}

/// The right arm lowers its shoulder at SPEED from `p0 - 0.4` towards the
/// cell at yaw `j1` (no plan), braking at its configured deceleration a
/// reaction time after a stop: where it rests, the least clearance of its
/// shapes on the way, and whether it was stopped for the cell.
fn drive(exact: bool, j1: f64, p0: f64, o: &mut Oracle) -> (f64, f64, bool) {
    let mut g = guard();
    g.set_exact_refinement(exact);
    let m = &sample_cell().manipulators[1];
    let (react, decel) = (m.reaction_time_s, m.max_decel[1]);
    let (mut p, mut v, mut t) = (p0 - 0.4, 0.0, 0.0);
    for _ in 0..600 {
        step(&mut g, t, &q(j1, p), 0.0);
        t += DT;
    }
    let (mut brake_at, mut least, mut for_cell) = (None::<f64>, f64::INFINITY, false);
    for k in 0..3000 {
        let (stop, why) = step(&mut g, t, &q(j1, p), v);
        if stop && brake_at.is_none() {
            brake_at = Some(t + react);
            for_cell = matches!(why, Some(Reason::Cell));
        }
        v = match brake_at {
            Some(b) if t >= b => (v - decel * DT).max(0.0),
            _ => SPEED,
        };
        p += v * DT;
        t += DT;
        if k % 5 == 0 || v == 0.0 {
            least = least.min(o.at(&g, &q(j1, p)).1);
        }
        if brake_at.is_some() && v == 0.0 {
            break;
        }
    }
    (p, least, for_cell)
}

#[test]
fn an_arm_driving_at_the_cell_is_stopped_before_its_shapes_reach_it_and_nearer_than_by_spheres_alone() {
    let margin = sample_cell().margins.clearance_m;
    let g = guard();
    let mut o = Oracle::new();
    let (j1, p0) = spheres_near_shapes_clear(&mut o, &g, margin);
    let (p_on, least_on, cell_on) = drive(true, j1, p0, &mut o);
    let (p_off, least_off, cell_off) = drive(false, j1, p0, &mut o);
    println!("refined: rest at shoulder {p_on:.4}, least exact clearance {least_on:.4} m (for the cell: {cell_on})");
    println!(
        "spheres alone: rest at shoulder {p_off:.4}, least exact clearance {least_off:.4} m (for the cell: {cell_off})"
    );
    assert!(cell_on && cell_off, "both stopped for the cell");
    assert!(least_on > 0.0, "the shapes touched the cell: {least_on}");
    assert!(p_on > p_off + 0.005, "the refinement let it come no nearer: {p_on} vs {p_off}");
}
