//! The reference map: one `bool` per cell, rastered the plain way; the
//! twin the bitmap's word logic is tested against.

use super::*;

/// The naive reference: one `bool` per cell, and a polygon's cells found by
/// testing each cell of its bounding box for overlap (separating axes).
#[derive(Clone, Debug)]
pub struct BoolMap {
    cols: usize,
    cells: Vec<bool>,
    /// Bounding box that may hold set cells: rows r0..=r1, cols c0..=c1.
    bbox: (usize, usize, usize, usize),
}

const NO_BOX: (usize, usize, usize, usize) = (usize::MAX, 0, usize::MAX, 0);

impl BoolMap {
    fn grow(&mut self, (r0, r1, c0, c1): (usize, usize, usize, usize)) {
        let b = &mut self.bbox;
        *b = (b.0.min(r0), b.1.max(r1), b.2.min(c0), b.3.max(c1));
    }

    fn cells_of(&self) -> impl Iterator<Item = Cell> + '_ {
        let (r0, r1, c0, c1) = self.bbox;
        let rows = if r0 > r1 { 0..0 } else { r0..r1 + 1 };
        rows.flat_map(move |r| (c0..=c1).map(move |c| (r, c)))
    }
}

/// Whether a convex polygon meets the box [x0, x1] × [y0, y1] (no axis
/// separates them).
pub fn polygon_meets_box(poly: &[[f64; 2]], x0: f64, x1: f64, y0: f64, y1: f64) -> bool {
    let (mut px0, mut px1, mut py0, mut py1) = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY);
    for p in poly {
        px0 = px0.min(p[0]);
        px1 = px1.max(p[0]);
        py0 = py0.min(p[1]);
        py1 = py1.max(p[1]);
    }
    if px1 < x0 || px0 > x1 || py1 < y0 || py0 > y1 {
        return false;
    }
    let n = poly.len();
    for i in 0..n {
        let (a, b) = (poly[i], poly[(i + 1) % n]);
        let nrm = [b[1] - a[1], a[0] - b[0]]; // outward for counter-clockwise
        if nrm == [0.0, 0.0] {
            continue;
        }
        let pa = nrm[0] * a[0] + nrm[1] * a[1];
        let boxmin =
            [x0, x1].iter().flat_map(|&x| [y0, y1].map(move |y| nrm[0] * x + nrm[1] * y)).fold(f64::INFINITY, f64::min);
        // Every polygon vertex has projection <= pa (convex, CCW).
        if n > 2 && boxmin > pa {
            return false;
        }
        if n == 2 {
            // A segment: both normals separate.
            let boxmax = [x0, x1]
                .iter()
                .flat_map(|&x| [y0, y1].map(move |y| nrm[0] * x + nrm[1] * y))
                .fold(f64::NEG_INFINITY, f64::max);
            if boxmin > pa || boxmax < pa {
                return false;
            }
        }
    }
    true
}

impl CellMap for BoolMap {
    fn new(grid: &Grid) -> BoolMap {
        BoolMap { cols: grid.cols, cells: vec![false; grid.cols * grid.rows], bbox: NO_BOX }
    }

    fn clear(&mut self) {
        let cells: Vec<Cell> = self.cells_of().collect();
        for (r, c) in cells {
            self.cells[r * self.cols + c] = false;
        }
        self.bbox = NO_BOX;
    }

    fn raster(&mut self, grid: &Grid, poly: &[[f64; 2]]) {
        let (c, e) = (grid.cell_m, grid.eps_m);
        let mut any = false;
        let mut b = NO_BOX;
        let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY);
        for p in poly {
            (x0, x1, y0, y1) = (x0.min(p[0]), x1.max(p[0]), y0.min(p[1]), y1.max(p[1]));
        }
        // Only the polygon's bounding box can meet it.
        let (Some((ra, rb)), Some((ca, cb))) = (grid.span(y0, y1, grid.rows), grid.span(x0, x1, grid.cols)) else {
            return;
        };
        for r in ra..=rb {
            for col in ca..=cb {
                let (x0, y0) = (col as f64 * c - e, r as f64 * c - e);
                let (x1, y1) = ((col + 1) as f64 * c + e, (r + 1) as f64 * c + e);
                if polygon_meets_box(poly, x0, x1, y0, y1) {
                    self.cells[r * self.cols + col] = true;
                    b = (b.0.min(r), b.1.max(r), b.2.min(col), b.3.max(col));
                    any = true;
                }
            }
        }
        if any {
            self.grow(b);
        }
    }

    fn raster_install(&mut self, grid: &Grid, poly: &[[f64; 2]], world: &mut BoolMap) -> Result<(), (Cell, usize)> {
        let mut probe = BoolMap::new(grid);
        probe.raster(grid, poly);
        for (r, c) in probe.cells_of() {
            let i = r * self.cols + c;
            if !probe.cells[i] || self.cells[i] {
                continue;
            }
            if world.cells[i] {
                return Err(((r, c), grid.rows_of(poly).map_or(r, |rows| rows.1)));
            }
            self.cells[i] = true;
            world.cells[i] = true;
            self.grow((r, r, c, c));
            world.grow((r, r, c, c));
        }
        Ok(())
    }

    fn hits(&mut self, grid: &Grid, poly: &[[f64; 2]], rows: (usize, usize)) -> bool {
        let mut probe = BoolMap::new(grid);
        probe.raster(grid, poly);
        probe.cells_of().any(|(r, c)| {
            let i = r * self.cols + c;
            r >= rows.0 && r <= rows.1 && probe.cells[i] && self.cells[i]
        })
    }

    fn common(&self, other: &BoolMap) -> Option<(Cell, usize)> {
        let mut out: Option<(Cell, usize)> = None;
        for (r, c) in other.cells_of() {
            let i = r * self.cols + c;
            if self.cells[i] && other.cells[i] {
                out = Some((out.map_or((r, c), |o| o.0), r));
            }
        }
        out
    }

    fn xor_from(&mut self, other: &BoolMap) {
        for (r, c) in other.cells_of() {
            self.cells[r * self.cols + c] ^= other.cells[r * self.cols + c];
        }
        if other.bbox.0 <= other.bbox.1 {
            self.grow(other.bbox);
        }
    }

    fn or_from(&mut self, other: &BoolMap) {
        for (r, c) in other.cells_of() {
            self.cells[r * self.cols + c] |= other.cells[r * self.cols + c];
        }
        if other.bbox.0 <= other.bbox.1 {
            self.grow(other.bbox);
        }
    }

    fn and_from(&mut self, other: &BoolMap) {
        let cells: Vec<Cell> = self.cells_of().collect();
        for (r, c) in cells {
            self.cells[r * self.cols + c] &= other.cells[r * self.cols + c];
        }
    }

    fn first_common(&self, other: &BoolMap) -> Option<Cell> {
        other.cells_of().find(|&(r, c)| self.cells[r * self.cols + c] && other.cells[r * self.cols + c])
    }

    fn first_outside(&self, other: &BoolMap) -> Option<Cell> {
        self.cells_of().find(|&(r, c)| self.cells[r * self.cols + c] && !other.cells[r * self.cols + c])
    }

    fn install(&mut self, swept: &BoolMap, _how: Install) -> Result<(), Cell> {
        if let Some(cell) = self.first_common(swept) {
            return Err(cell);
        }
        self.or_from(swept);
        Ok(())
    }

    fn get(&self, (r, c): Cell) -> bool {
        self.cells[r * self.cols + c]
    }

    fn count(&self) -> usize {
        self.cells.iter().filter(|&&b| b).count()
    }

    fn same(&self, other: &BoolMap) -> bool {
        self.cells == other.cells
    }
}
