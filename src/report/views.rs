//! Views of the cell at one instant: top (x, y) and side (x, z) of every
//! robot's spheres coloured by clearance, each sphere's stopping reach
//! (dashed: its radius plus the stopping path's travel), the static cell's
//! occupied voxels projected, the platen surface with its units; and the
//! platen surface alone with each unit's allocation.

use super::svg::{self, Svg, clearance_colour};
use workcell_guard_core::model::PosedSpheres;
use workcell_guard_core::platen::CellMap;
use workcell_guard_ros::node::GuardNode;

/// The static cell's occupied voxels, projected once: runs of occupied
/// columns per row of the top (x, y) and side (x, z) views, in metres.
pub struct Occupancy {
    top: Vec<[f64; 4]>,
    side: Vec<[f64; 4]>,
    /// The grid's box: min corner, max corner.
    lo: [f64; 3],
    hi: [f64; 3],
}

impl Occupancy {
    /// The projections of `node`'s distance field (occupied = no
    /// distance); the side view only of the slab within 1 m (in y) of the
    /// robots' bases, so that a wall behind them does not hide them.
    pub fn new(node: &GuardNode) -> Occupancy {
        let field = node.guard().field();
        let g = field.grid();
        let [nx, ny, nz] = g.dims;
        let res = g.resolution_m;
        let o = g.origin_m;
        let ys = node.cell().manipulators.iter().map(|m| m.base.apply(&nalgebra::Point3::origin()).y);
        let (y0, y1) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| (a.min(y - 1.0), b.max(y + 1.0)));
        let mut top = vec![false; nx * ny];
        let mut side = vec![false; nx * nz];
        for i in 0..nx {
            for j in 0..ny {
                let y = o[1] + (j as f64 + 0.5) * res;
                let in_slab = y >= y0 && y <= y1;
                for k in 0..nz {
                    if field.occupied([i, j, k]) {
                        top[j * nx + i] = true;
                        side[k * nx + i] |= in_slab;
                    }
                }
            }
        }
        let runs = |cells: &[bool], rows: usize, row_o: f64| {
            let mut out = Vec::new();
            for r in 0..rows {
                let mut i = 0;
                while i < nx {
                    if cells[r * nx + i] {
                        let s = i;
                        while i < nx && cells[r * nx + i] {
                            i += 1;
                        }
                        out.push([o[0] + s as f64 * res, row_o + r as f64 * res, (i - s) as f64 * res, res]);
                    } else {
                        i += 1;
                    }
                }
            }
            out
        };
        let hi = [o[0] + nx as f64 * res, o[1] + ny as f64 * res, o[2] + nz as f64 * res];
        Occupancy { top: runs(&top, ny, o[1]), side: runs(&side, nz, o[2]), lo: o, hi }
    }
}

/// The least clearance of sphere `i` of robot `r` to the cell and to every
/// other robot's spheres, m.
fn sphere_clearance(node: &GuardNode, posed: &[PosedSpheres], r: usize, i: usize) -> f64 {
    let p = &posed[r];
    let c = [p.x[i], p.y[i], p.z[i]];
    let mut best = f64::from(node.guard().cell_clearance(r, p.link[i] as usize, c, p.r[i]));
    for (o, q) in posed.iter().enumerate().filter(|&(o, _)| o != r) {
        for j in 0..q.len() {
            let d = ((c[0] - q.x[j]).powi(2) + (c[1] - q.y[j]).powi(2) + (c[2] - q.z[j]).powi(2)).sqrt();
            best = best.min(f64::from(d - p.r[i] - q.r[j]));
        }
        let _ = o;
    }
    best
}

/// The cell at one instant, top and side by side, with `title` and the
/// `lines` (grants and stops) under it.
pub fn cell_view(node: &GuardNode, posed: &[PosedSpheres], occ: &Occupancy, title: &str, lines: &[String]) -> String {
    let scale = 95.0;
    let (wx, wy, wz) = (occ.hi[0] - occ.lo[0], occ.hi[1] - occ.lo[1], occ.hi[2] - occ.lo[2]);
    let (top_w, top_h, side_h) = (wx * scale, wy * scale, wz * scale);
    let gap = 30.0;
    let head = 24.0;
    let w = 2.0 * top_w + gap + 20.0;
    let h = head + top_h.max(side_h) + 20.0 + 16.0 * lines.len() as f64;
    let mut s = Svg::new("cell view", w, h);
    s.text(10.0, 16.0, 13.0, "start", title);
    let top = |p: [f64; 2]| (10.0 + (p[0] - occ.lo[0]) * scale, head + top_h - (p[1] - occ.lo[1]) * scale);
    let side =
        |p: [f64; 2]| (10.0 + top_w + gap + (p[0] - occ.lo[0]) * scale, head + side_h - (p[1] - occ.lo[2]) * scale);
    s.rect((10.0, head, top_w, top_h), "#f7f7f7", 1.0, None);
    s.rect((10.0 + top_w + gap, head, top_w, side_h), "#f7f7f7", 1.0, None);
    s.text(14.0, head + 12.0, 11.0, "start", "top (x right, y up)");
    s.text(14.0 + top_w + gap, head + 12.0, 11.0, "start", "side (x right, z up; the cell within 1 m of the bases)");
    for [x, y, dx, dy] in &occ.top {
        let (a, b) = top([*x, y + dy]);
        s.rect((a, b, dx * scale, dy * scale), "#8a93a6", 0.7, None);
    }
    for [x, z, dx, dz] in &occ.side {
        let (a, b) = side([*x, z + dz]);
        s.rect((a, b, dx * scale, dz * scale), "#8a93a6", 0.7, None);
    }
    platen_in_cell(node, &mut s, &top);
    let margin = node.cell().margins.clearance_m;
    let slow = margin + node.params().slow_down_m;
    for (r, p) in posed.iter().enumerate() {
        let travel = node.guard().plan(r).map_or(0.0, |sp| sp.travel_m);
        // Far ones first, so the near ones show on top.
        let mut order: Vec<usize> = (0..p.len()).collect();
        order.sort_by(|&a, &b| p.z[a].total_cmp(&p.z[b]));
        for &i in &order {
            let c = sphere_clearance(node, posed, r, i);
            let colour = clearance_colour(c, margin, slow);
            let (x, y, z, rad) = (f64::from(p.x[i]), f64::from(p.y[i]), f64::from(p.z[i]), f64::from(p.r[i]));
            s.circle(top([x, y]), rad * scale, colour, 0.35, None);
            s.circle(side([x, z]), rad * scale, colour, 0.35, None);
            if travel > 1e-3 {
                s.circle(top([x, y]), (rad + travel) * scale, "none", 0.0, Some(svg::SERIES[r % 8]));
                s.circle(side([x, z]), (rad + travel) * scale, "none", 0.0, Some(svg::SERIES[r % 8]));
            }
        }
        if let Some(m) = node.cell().manipulators.get(r) {
            let b = m.base.apply(&nalgebra::Point3::origin());
            s.text(top([b.x, b.y]).0, top([b.x, b.y]).1 + 14.0, 11.0, "middle", &m.name);
        }
    }
    let y0 = head + top_h.max(side_h) + 16.0;
    for (k, l) in lines.iter().enumerate() {
        s.text(10.0, y0 + 16.0 * k as f64, 12.0, "start", l);
    }
    s.finish()
}

/// The platen surface's outline and its units' footprints, in the top view.
fn platen_in_cell(node: &GuardNode, s: &mut Svg, top: &dyn Fn([f64; 2]) -> (f64, f64)) {
    let (Some(p), Some(alloc)) = (node.cell().platen.as_ref(), node.guard().platen()) else {
        return;
    };
    let to_cell = |q: [f64; 2]| {
        let c = p.pose.apply(&nalgebra::Point3::new(q[0], q[1], 0.0));
        top([c.x, c.y])
    };
    let [sx, sy] = p.size_xy_m;
    let outline: Vec<_> = [[0.0, 0.0], [sx, 0.0], [sx, sy], [0.0, sy]].into_iter().map(to_cell).collect();
    s.polygon(&outline, "#e8e2d0", 0.6, "#9c8f6a");
    let mut pieces = workcell_guard_core::platen::geom::Pieces::default();
    for u in 0..alloc.units() {
        pieces.clear();
        alloc.shape(u).static_pieces(alloc.pose(u), &mut pieces);
        for i in 0..pieces.len() {
            let pts: Vec<_> = pieces.get(i).iter().map(|&q| to_cell(q)).collect();
            s.polygon(&pts, svg::SERIES[(u + 4) % 8], if pieces.is_body(i) { 0.8 } else { 0.4 }, "none");
        }
    }
}

/// The platen surface at one instant: obstacles, each unit's allocation
/// (its colour, light), its footprint and cord (its colour), named.
pub fn platen_view(node: &GuardNode, title: &str) -> Option<String> {
    let p = node.cell().platen.as_ref()?;
    let alloc = node.guard().platen()?;
    let [sx, sy] = p.size_xy_m;
    let scale = 300.0 / sx.max(sy);
    let head = 22.0;
    let (w, h) = (sx * scale + 20.0, sy * scale + head + 10.0);
    let mut s = Svg::new("platen", w, h);
    s.text(10.0, 15.0, 12.0, "start", title);
    let at = |q: [f64; 2]| (10.0 + q[0] * scale, head + (sy - q[1]) * scale);
    s.rect((10.0, head, sx * scale, sy * scale), "#f3efe4", 1.0, None);
    for o in &p.obstacles {
        let pts: Vec<_> = o.polygon_xy_m.iter().map(|&q| at(q)).collect();
        s.polygon(&pts, "#8a93a6", 0.8, "#555");
    }
    let g = alloc.grid();
    let block = ((0.005 / g.cell_m).round() as usize).max(1);
    for u in 0..alloc.units() {
        let map = alloc.unit_map(u);
        let colour = svg::SERIES[(u + 4) % 8];
        for r0 in (0..g.rows).step_by(block) {
            let mut c0 = 0;
            while c0 < g.cols {
                let set = |c: usize| {
                    (r0..(r0 + block).min(g.rows)).any(|r| (c..(c + block).min(g.cols)).any(|cc| map.get((r, cc))))
                };
                if set(c0) {
                    let start = c0;
                    while c0 < g.cols && set(c0) {
                        c0 += block;
                    }
                    let y = (r0 + block).min(g.rows) as f64 * g.cell_m;
                    let (a, b) = at([start as f64 * g.cell_m, y]);
                    let width = (c0.min(g.cols) - start) as f64 * g.cell_m * scale;
                    s.rect((a, b, width, block as f64 * g.cell_m * scale), colour, 0.3, None);
                } else {
                    c0 += block;
                }
            }
        }
        let mut pieces = workcell_guard_core::platen::geom::Pieces::default();
        alloc.shape(u).static_pieces(alloc.pose(u), &mut pieces);
        for i in 0..pieces.len() {
            let pts: Vec<_> = pieces.get(i).iter().map(|&q| at(q)).collect();
            s.polygon(&pts, colour, if pieces.is_body(i) { 0.9 } else { 0.5 }, "#333");
        }
        let [x, y, _] = alloc.pose(u);
        let (a, b) = at([x, y]);
        s.text(a, b - 12.0, 11.0, "middle", alloc.unit_name(u));
    }
    Some(s.finish())
}
