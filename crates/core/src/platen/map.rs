//! Cell maps of the surface: the [`CellMap`] operations the allocator needs,
//! the packed [`BitMap`] (u64 words, row-major) it runs on, and the naive
//! per-cell [`BoolMap`] it is checked against.

mod bool_map;

pub use bool_map::{BoolMap, polygon_meets_box};

/// The surface's grid of square cells (surface frame, origin at a corner).
#[derive(Clone, Copy, Debug)]
pub struct Grid {
    /// Cells along x.
    pub cols: usize,
    /// Cells along y.
    pub rows: usize,
    /// Cell edge, m.
    pub cell_m: f64,
    /// Surface size, m.
    pub size_xy_m: [f64; 2],
    /// Every polygon is rasterized as if grown by this much (m), so a
    /// rounding error can never drop a touched cell.
    pub eps_m: f64,
    /// 1 / cell_m.
    inv_cell: f64,
}

impl Grid {
    /// The grid of a `size` surface at `cell_m` cells.
    pub fn new(size_xy_m: [f64; 2], cell_m: f64) -> Grid {
        let n = |s: f64| ((s / cell_m - 1e-9).ceil() as usize).max(1);
        Grid { cols: n(size_xy_m[0]), rows: n(size_xy_m[1]), cell_m, size_xy_m, eps_m: 1e-9, inv_cell: 1.0 / cell_m }
    }

    /// Whether some point of `poly` lies off the surface (by more than eps).
    pub fn off_surface(&self, poly: &[[f64; 2]]) -> bool {
        poly.iter().any(|p| {
            p[0] < -self.eps_m
                || p[1] < -self.eps_m
                || p[0] > self.size_xy_m[0] + self.eps_m
                || p[1] > self.size_xy_m[1] + self.eps_m
        })
    }

    /// The rows a polygon's height spans (clamped to the grid).
    pub fn rows_of(&self, poly: &[[f64; 2]]) -> Option<(usize, usize)> {
        let (mut ymin, mut ymax) = (f64::INFINITY, f64::NEG_INFINITY);
        for p in poly {
            ymin = ymin.min(p[1]);
            ymax = ymax.max(p[1]);
        }
        self.span(ymin, ymax, self.rows)
    }

    /// Cell index range `[lo, hi]` (clamped) of the coordinate range.
    #[inline]
    pub(crate) fn span(&self, lo: f64, hi: f64, n: usize) -> Option<(usize, usize)> {
        let a = (lo - self.eps_m) * self.inv_cell;
        let b = (hi + self.eps_m) * self.inv_cell;
        // floor(b) < 0 or floor(a) > n - 1 (NaN: neither holds, refused).
        if !(b >= 0.0 && a < n as f64) {
            return None;
        }
        // Both are ≥ 0 where converted: truncation is floor.
        let c0 = if a > 0.0 { a as usize } else { 0 };
        Some((c0, (b as usize).min(n - 1)))
    }
}

/// A cell: (row, column).
pub type Cell = (usize, usize);

/// How a swept area goes into the world map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Install {
    /// Rasterize the whole swept area, compare it with the world word by
    /// word, then install it.
    CheckFirst,
    /// Install while rasterizing, word by word; at a conflict, take back
    /// the words installed (the default: measured faster, see the bench).
    AsYouGo,
}

/// The operations the allocator runs on its maps. Every map is the size of
/// the surface; an operation touches only the rows and words the operand
/// has ever had set since it was last cleared.
pub trait CellMap: Clone {
    /// An empty map of `grid`.
    fn new(grid: &Grid) -> Self;
    /// An empty map of `grid` that will only ever be operated on, never
    /// be the operand (the world): it need not track where it is set.
    fn new_world(grid: &Grid) -> Self {
        Self::new(grid)
    }
    /// Clears every cell.
    fn clear(&mut self);
    /// Sets every cell the convex polygon (counter-clockwise) touches.
    fn raster(&mut self, grid: &Grid, poly: &[[f64; 2]]);
    /// Rasterizes the convex polygon into this (swept) map and, cell by
    /// cell, into `world`: the cells new to this map must be clear in the
    /// world, and go into both. At the first taken cell it stops and names
    /// it (row-major within the polygon), with the polygon's last row
    /// ([`Grid::rows_of`]); this map then holds exactly what went into the
    /// world (to take back with `world.xor_from(self)`).
    fn raster_install(&mut self, grid: &Grid, poly: &[[f64; 2]], world: &mut Self) -> Result<(), (Cell, usize)>;
    /// Whether the convex polygon touches a set cell in rows `rows.0..=rows.1`
    /// (the map is unchanged; `&mut` only for the rasterizer's scratch).
    fn hits(&mut self, grid: &Grid, poly: &[[f64; 2]], rows: (usize, usize)) -> bool;
    /// The first cell (row-major) set in both, and the last row holding
    /// one: one pass for [`CellMap::first_common`] and the rows to search.
    fn common(&self, other: &Self) -> Option<(Cell, usize)>;
    /// self ^= other.
    fn xor_from(&mut self, other: &Self);
    /// self |= other.
    fn or_from(&mut self, other: &Self);
    /// self &= other.
    fn and_from(&mut self, other: &Self);
    /// The first cell (row-major) set in both, comparing self XOR other
    /// with self OR other.
    fn first_common(&self, other: &Self) -> Option<Cell>;
    /// The first cell set here and not in `other`.
    fn first_outside(&self, other: &Self) -> Option<Cell>;
    /// Installs `swept` (self ^= swept) if no cell is set in both;
    /// otherwise leaves self as it was and names the first common cell.
    fn install(&mut self, swept: &Self, how: Install) -> Result<(), Cell>;
    /// Whether a cell is set.
    fn get(&self, cell: Cell) -> bool;
    /// Number of set cells.
    fn count(&self) -> usize;
    /// Whether both hold the same cells.
    fn same(&self, other: &Self) -> bool;
}

/// A packed bit map: one bit per cell, u64 words, row-major, bit `c % 64`
/// of word `c / 64` is column `c`. Each row remembers the words ever set in
/// it (since the last clear), so operations walk only those.
#[derive(Clone, Debug)]
pub struct BitMap {
    wpr: usize,
    words: Vec<u64>,
    /// Per row: first and last word that may be non-zero (lo > hi: none).
    lo: Vec<u32>,
    hi: Vec<u32>,
    /// Rows that may be non-zero: r0..=r1 (r0 > r1: none).
    r0: usize,
    r1: usize,
    /// Rasterizer scratch.
    spans: Spans,
    /// Every row and word counts as possibly set (the world map, which is
    /// only ever the target of operations, not their operand).
    untracked: bool,
}

impl BitMap {
    /// Widens row r's word range (the row range is widened by the caller,
    /// once per operation, with [`BitMap::touch_rows`]).
    #[inline(always)]
    fn touch(&mut self, r: usize, w0: usize, w1: usize) {
        if self.untracked {
            return;
        }
        self.lo[r] = self.lo[r].min(w0 as u32);
        self.hi[r] = self.hi[r].max(w1 as u32);
    }

    #[inline(always)]
    fn touch_rows(&mut self, r0: usize, r1: usize) {
        if r0 <= r1 {
            self.r0 = self.r0.min(r0);
            self.r1 = self.r1.max(r1);
        }
    }

    /// Sets a span of row r.
    #[inline]
    fn set_span(&mut self, r: usize, sp: RowSpan) {
        let base = r * self.wpr;
        for (i, w) in self.words[base + sp.w0..base + sp.w1 + 1].iter_mut().enumerate() {
            *w |= sp.mask(i);
        }
        self.touch(r, sp.w0, sp.w1);
    }

    /// self = op(self, other), word by word over the words `other` may
    /// have set.
    #[inline(always)]
    fn combine(&mut self, other: &BitMap, op: impl Fn(u64, u64) -> u64) {
        self.touch_rows(other.r0, other.r1);
        for (r, w0, w1) in other.rows() {
            let b = r * self.wpr;
            let (d, s) = (&mut self.words[b + w0..b + w1 + 1], &other.words[b + w0..b + w1 + 1]);
            for (d, s) in d.iter_mut().zip(s) {
                *d = op(*d, *s);
            }
            self.touch(r, w0, w1);
        }
    }

    /// Rows (and their word ranges) of `self` that may be non-zero.
    #[inline]
    fn rows(&self) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
        let range = if self.r0 > self.r1 { 0..0 } else { self.r0..self.r1 + 1 };
        let (lo, hi) = (&self.lo[range.clone()], &self.hi[range.clone()]);
        range.zip(lo.iter().zip(hi)).filter(|(_, (l, h))| l <= h).map(|(r, (&l, &h))| (r, l as usize, h as usize))
    }
}

/// min / max without NaN handling (the inputs are finite).
#[inline(always)]
fn fmin(a: f64, b: f64) -> f64 {
    if a < b { a } else { b }
}
#[inline(always)]
fn fmax(a: f64, b: f64) -> f64 {
    if a > b { a } else { b }
}

/// Per row of cells, the x extent of a convex polygon within the row's strip
/// [r·c − eps, (r+1)·c + eps]: the extremes of the polygon's edges clipped
/// to the strip (a convex polygon's extent in a strip is on its boundary).
#[derive(Clone, Debug)]
struct Spans {
    xl: Vec<f64>,
    xr: Vec<f64>,
}

/// A row's cells c0..=c1 as words w0..=w1, with the first and last word's
/// masks.
#[derive(Clone, Copy)]
struct RowSpan {
    w0: usize,
    w1: usize,
    first: u64,
    last: u64,
}

impl RowSpan {
    #[inline(always)]
    fn new(c0: usize, c1: usize) -> RowSpan {
        RowSpan { w0: c0 / 64, w1: c1 / 64, first: !0u64 << (c0 % 64), last: !0u64 >> (63 - c1 % 64) }
    }

    /// Mask of the span's i-th word (computed, so that no memset call is
    /// made for a few words).
    #[inline(always)]
    fn mask(&self, i: usize) -> u64 {
        (if i == 0 { self.first } else { !0 }) & (if i == self.w1 - self.w0 { self.last } else { !0 })
    }
}

impl Spans {
    /// Row r's span, once filled.
    #[inline(always)]
    fn row(&self, grid: &Grid, r: usize) -> Option<RowSpan> {
        let (xl, xr) = (self.xl[r], self.xr[r]);
        if xl > xr {
            return None;
        }
        grid.span(xl, xr, grid.cols).map(|(c0, c1)| RowSpan::new(c0, c1))
    }

    fn new(rows: usize) -> Spans {
        Spans { xl: vec![f64::INFINITY; rows], xr: vec![f64::NEG_INFINITY; rows] }
    }

    /// Fills rows r_lo..=r_hi (returned) for `poly`.
    /// Only rows within `clip` are filled.
    fn fill(&mut self, grid: &Grid, poly: &[[f64; 2]], clip: (usize, usize)) -> Option<(usize, usize)> {
        let (r_lo, r_hi) = grid.rows_of(poly)?;
        let (r_lo, r_hi) = (r_lo.max(clip.0), r_hi.min(clip.1));
        if r_lo > r_hi {
            return None;
        }
        self.xl[r_lo..=r_hi].fill(f64::INFINITY);
        self.xr[r_lo..=r_hi].fill(f64::NEG_INFINITY);
        let (c, e) = (grid.cell_m, grid.eps_m);
        let n = poly.len();
        for i in 0..n {
            let (mut a, mut b) = (poly[i], poly[(i + 1) % n]);
            if a[1] > b[1] {
                std::mem::swap(&mut a, &mut b);
            }
            let Some((ra, rb)) = grid.span(a[1], b[1], grid.rows) else { continue };
            let (ra, rb) = (ra.max(r_lo), rb.min(r_hi));
            if ra > rb {
                continue;
            }
            let dy = b[1] - a[1];
            let xl = &mut self.xl[ra..=rb];
            let xr = &mut self.xr[ra..=rb];
            if dy <= 0.0 {
                let (lo, hi) = (a[0].min(b[0]), a[0].max(b[0]));
                for (l, r) in xl.iter_mut().zip(xr.iter_mut()) {
                    *l = fmin(*l, lo);
                    *r = fmax(*r, hi);
                }
                continue;
            }
            let k = (b[0] - a[0]) / dy;
            // The edge's x over a row's strip, clipped to the edge's ends.
            let clipped = |r: usize| {
                let ya = fmax(r as f64 * c - e, a[1]);
                let yb = fmin((r + 1) as f64 * c + e, b[1]);
                let (xa, xb) = (a[0] + (ya - a[1]) * k, a[0] + (yb - a[1]) * k);
                (fmin(xa, xb), fmax(xa, xb))
            };
            for r in [ra, rb] {
                let (lo, hi) = clipped(r);
                xl[r - ra] = fmin(xl[r - ra], lo);
                xr[r - ra] = fmax(xr[r - ra], hi);
            }
            if rb > ra + 1 {
                // Rows strictly inside the edge's height: no clipping; x at
                // the strip's bottom is p + r·c·k, at its top (c + 2e)·k on.
                let p = a[0] + (-e - a[1]) * k;
                let ck = c * k;
                let d = (c + 2.0 * e) * k;
                let (dlo, dhi) = (fmin(d, 0.0), fmax(d, 0.0));
                // Row numbers as i32 (rows < 2^16): a conversion that
                // vectorizes.
                let (xl, xr) = (&mut xl[1..rb - ra], &mut xr[1..rb - ra]);
                let first = (ra + 1) as i32;
                for (i, (l, h)) in xl.iter_mut().zip(xr.iter_mut()).enumerate() {
                    let x = p + (first + i as i32) as f64 * ck;
                    *l = fmin(*l, x + dlo);
                    *h = fmax(*h, x + dhi);
                }
            }
        }
        Some((r_lo, r_hi))
    }
}

impl CellMap for BitMap {
    fn new_world(grid: &Grid) -> BitMap {
        let mut m = BitMap::new(grid);
        m.untracked = true;
        m.lo.fill(0);
        m.hi.fill((m.wpr - 1) as u32);
        m.r0 = 0;
        m.r1 = grid.rows - 1;
        m
    }

    fn new(grid: &Grid) -> BitMap {
        let wpr = grid.cols.div_ceil(64);
        BitMap {
            wpr,
            words: vec![0; wpr * grid.rows],
            lo: vec![u32::MAX; grid.rows],
            hi: vec![0; grid.rows],
            r0: usize::MAX,
            r1: 0,
            spans: Spans::new(grid.rows),
            untracked: false,
        }
    }

    fn clear(&mut self) {
        if self.untracked {
            self.words.fill(0);
            return;
        }
        if self.r0 > self.r1 {
            return;
        }
        for r in self.r0..=self.r1 {
            if self.lo[r] <= self.hi[r] {
                let base = r * self.wpr;
                self.words[base + self.lo[r] as usize..=base + self.hi[r] as usize].fill(0);
            }
            self.lo[r] = u32::MAX;
            self.hi[r] = 0;
        }
        self.r0 = usize::MAX;
        self.r1 = 0;
    }

    fn raster(&mut self, grid: &Grid, poly: &[[f64; 2]]) {
        let Some((r_lo, r_hi)) = self.spans.fill(grid, poly, (0, usize::MAX)) else { return };
        self.touch_rows(r_lo, r_hi);
        for r in r_lo..=r_hi {
            if let Some(sp) = self.spans.row(grid, r) {
                self.set_span(r, sp);
            }
        }
    }

    fn raster_install(&mut self, grid: &Grid, poly: &[[f64; 2]], world: &mut BitMap) -> Result<(), (Cell, usize)> {
        let Some((r_lo, r_hi)) = self.spans.fill(grid, poly, (0, usize::MAX)) else { return Ok(()) };
        self.touch_rows(r_lo, r_hi);
        world.touch_rows(r_lo, r_hi);
        for r in r_lo..=r_hi {
            let Some(sp) = self.spans.row(grid, r) else { continue };
            let (w0, w1) = (sp.w0, sp.w1);
            let b = r * self.wpr;
            let (sw, wo) = (&mut self.words[b + w0..b + w1 + 1], &mut world.words[b + w0..b + w1 + 1]);
            for (i, (s, x)) in sw.iter_mut().zip(wo.iter_mut()).enumerate() {
                let new = sp.mask(i) & !*s;
                let w = *x;
                // Taken where world XOR new differs from world OR new.
                if (w ^ new) != (w | new) {
                    if i > 0 {
                        self.touch(r, w0, w0 + i - 1);
                        world.touch(r, w0, w0 + i - 1);
                    }
                    return Err(((r, (w0 + i) * 64 + (w & new).trailing_zeros() as usize), r_hi));
                }
                *s |= new;
                *x = w ^ new;
            }
            self.touch(r, w0, w1);
            world.touch(r, w0, w1);
        }
        Ok(())
    }

    fn common(&self, other: &BitMap) -> Option<(Cell, usize)> {
        let mut out: Option<(Cell, usize)> = None;
        for (r, w0, w1) in other.rows() {
            let b = r * self.wpr;
            let (x, s) = (&self.words[b + w0..b + w1 + 1], &other.words[b + w0..b + w1 + 1]);
            if let Some(i) = x.iter().zip(s).position(|(&x, &s)| x & s != 0) {
                let first = out.map_or((r, (w0 + i) * 64 + (x[i] & s[i]).trailing_zeros() as usize), |o| o.0);
                out = Some((first, r));
            }
        }
        out
    }

    fn hits(&mut self, grid: &Grid, poly: &[[f64; 2]], rows: (usize, usize)) -> bool {
        // Only rows that may hold set cells can be hit.
        let clip = (self.r0.max(rows.0), self.r1.min(rows.1));
        let Some((r_lo, r_hi)) = self.spans.fill(grid, poly, clip) else { return false };
        for r in r_lo..=r_hi {
            let Some(sp) = self.spans.row(grid, r) else { continue };
            let row = &self.words[r * self.wpr + sp.w0..r * self.wpr + sp.w1 + 1];
            for (i, &w) in row.iter().enumerate() {
                if w & sp.mask(i) != 0 {
                    return true;
                }
            }
        }
        false
    }

    fn xor_from(&mut self, other: &BitMap) {
        self.combine(other, |d, s| d ^ s);
    }

    fn or_from(&mut self, other: &BitMap) {
        self.combine(other, |d, s| d | s);
    }

    fn and_from(&mut self, other: &BitMap) {
        if self.untracked {
            for (d, s) in self.words.iter_mut().zip(&other.words) {
                *d &= *s;
            }
            return;
        }
        if self.r0 > self.r1 {
            return;
        }
        let (mut r0, mut r1) = (usize::MAX, 0);
        for r in self.r0..self.r1 + 1 {
            if self.lo[r] > self.hi[r] {
                continue;
            }
            let b = r * self.wpr;
            let (a0, a1) = (self.lo[r] as usize, self.hi[r] as usize);
            let (o0, o1) = ((other.lo[r] as usize).max(a0), (other.hi[r] as usize).min(a1));
            if o0 > o1 {
                self.words[b + a0..b + a1 + 1].fill(0);
                self.lo[r] = u32::MAX;
                self.hi[r] = 0;
                continue;
            }
            self.words[b + a0..b + o0].fill(0);
            self.words[b + o1 + 1..b + a1 + 1].fill(0);
            let (d, s) = (&mut self.words[b + o0..b + o1 + 1], &other.words[b + o0..b + o1 + 1]);
            for (d, s) in d.iter_mut().zip(s) {
                *d &= *s;
            }
            self.lo[r] = o0 as u32;
            self.hi[r] = o1 as u32;
            r0 = r0.min(r);
            r1 = r1.max(r);
        }
        self.r0 = r0;
        self.r1 = r1;
    }

    fn first_common(&self, other: &BitMap) -> Option<Cell> {
        for (r, w0, w1) in other.rows() {
            let b = r * self.wpr;
            let (x, s) = (&self.words[b + w0..b + w1 + 1], &other.words[b + w0..b + w1 + 1]);
            // Taken where world XOR swept differs from world OR swept.
            let hit = x.iter().zip(s).position(|(&x, &s)| (x ^ s) != (x | s));
            if let Some(i) = hit {
                let (x, s) = (x[i], s[i]);
                return Some((r, (w0 + i) * 64 + ((x ^ s) ^ (x | s)).trailing_zeros() as usize));
            }
        }
        None
    }

    fn first_outside(&self, other: &BitMap) -> Option<Cell> {
        for (r, w0, w1) in self.rows() {
            let b = r * self.wpr;
            let (x, o) = (&self.words[b + w0..b + w1 + 1], &other.words[b + w0..b + w1 + 1]);
            if let Some(i) = x.iter().zip(o).position(|(&x, &o)| x & !o != 0) {
                return Some((r, (w0 + i) * 64 + (x[i] & !o[i]).trailing_zeros() as usize));
            }
        }
        None
    }

    fn install(&mut self, swept: &BitMap, how: Install) -> Result<(), Cell> {
        match how {
            Install::CheckFirst => {
                if let Some(cell) = self.first_common(swept) {
                    return Err(cell);
                }
                self.xor_from(swept);
                Ok(())
            }
            Install::AsYouGo => {
                let mut conflict = None;
                'rows: for (r, w0, w1) in swept.rows() {
                    let b = r * self.wpr;
                    let (d, s) = (&mut self.words[b + w0..b + w1 + 1], &swept.words[b + w0..b + w1 + 1]);
                    for (i, (d, &s)) in d.iter_mut().zip(s).enumerate() {
                        let x = *d;
                        if (x ^ s) != (x | s) {
                            conflict = Some((r, w0 + i));
                            break 'rows;
                        }
                        *d = x ^ s;
                    }
                }
                let Some((cr, cw)) = conflict else {
                    self.touch_rows(swept.r0, swept.r1);
                    for (r, w0, w1) in swept.rows() {
                        self.touch(r, w0, w1);
                    }
                    return Ok(());
                };
                // Take back every word installed before the conflict.
                for (r, w0, w1) in swept.rows() {
                    let b = r * self.wpr;
                    let end = if r == cr { cw } else { w1 + 1 };
                    let (d, s) = (&mut self.words[b + w0..b + end], &swept.words[b + w0..b + end]);
                    for (d, s) in d.iter_mut().zip(s) {
                        *d ^= *s;
                    }
                    if r == cr {
                        break;
                    }
                }
                let (x, s) = (self.words[cr * self.wpr + cw], swept.words[cr * self.wpr + cw]);
                Err((cr, cw * 64 + (x & s).trailing_zeros() as usize))
            }
        }
    }

    fn get(&self, (r, c): Cell) -> bool {
        self.words[r * self.wpr + c / 64] >> (c % 64) & 1 == 1
    }

    fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    fn same(&self, other: &BitMap) -> bool {
        self.words == other.words
    }
}
