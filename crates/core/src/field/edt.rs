//! Exact Euclidean distance transform in linear time.
//!
//! Felzenszwalb & Huttenlocher, "Distance Transforms of Sampled Functions"
//! (2012): the squared distance transform of a 1-D sampled function is the
//! lower envelope of parabolas rooted at each sample; a d-dimensional
//! transform is the 1-D transform applied along each axis in turn. The
//! result is exact (squared distances are integers in voxel units, held
//! exactly in `f32` up to 2^24, i.e. grids up to 2,300 voxels on a side);
//! the envelope itself is computed in `f64`.

/// Squared distance of "no obstacle yet": larger than any grid's.
pub const FAR: f32 = 1.0e20;

/// Longest axis accepted, voxels: squared distances stay exact integers in
/// `f32` (below 2^24 per axis term) and the envelope's integer products
/// below 2^62.
pub const MAX_AXIS: usize = 4096;

/// Scratch space for [`transform_1d`], sized for the longest line.
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    v: Vec<usize>,
    zn: Vec<i64>,
    zd: Vec<i64>,
    g: Vec<i64>,
    f: Vec<f32>,
    u: Vec<u32>,
}

impl Scratch {
    /// Scratch for lines of up to `n` samples.
    pub fn new(n: usize) -> Scratch {
        Scratch { v: vec![0; n], zn: vec![0; n + 1], zd: vec![0; n + 1], g: vec![0; n], f: vec![0.0; n], u: vec![0; n] }
    }
}

/// In place: `line[q] = min_p (q − p)² + line[p]`, reading and writing
/// through a stride (so one routine serves every axis). Samples at or above
/// `cap` count as "no obstacle" and results at or above `cap` come out as
/// [`FAR`] (pass `FAR` for the untruncated transform). No allocation.
pub fn transform_1d(line: &mut [f32], start: usize, stride: usize, n: usize, cap: f32, s: &mut Scratch) {
    if n == 0 {
        return;
    }
    let mut any = false;
    for i in 0..n {
        let v = line[start + i * stride];
        s.f[i] = v;
        any |= v < cap;
    }
    if !any {
        return; // no obstacle within reach on this line: it stays as it is (all ≥ cap)
    }
    let f = &s.f;
    let (v, zn, zd, g) = (&mut s.v, &mut s.zn, &mut s.zd, &mut s.g);
    // Lower envelope of the parabolas rooted at samples below the cap. In
    // integers: g = f + q² (f is an exact integer below 2^25 for every grid
    // accepted). Breakpoint k is the fraction zn[k] / zd[k] (zd > 0) and is
    // compared by cross-multiplication, all terms below 2^62: every decision
    // is exact and no division is needed.
    const NEG: i64 = -(1 << 48);
    const POS: i64 = 1 << 48;
    let mut k: usize = 0;
    let mut started = false;
    for (q, &fq) in f.iter().enumerate().take(n) {
        if fq >= cap {
            continue;
        }
        let gq = fq as i64 + (q * q) as i64;
        if !started {
            started = true;
            v[0] = q;
            g[0] = gq;
            zn[0] = NEG;
            zd[0] = 1;
            continue;
        }
        loop {
            // Intersection of the parabolas from v[k] and q: num / den.
            let num = gq - g[k];
            let den = 2 * (q - v[k]) as i64;
            if num * zd[k] <= zn[k] * den && k > 0 {
                k -= 1;
                continue;
            }
            k += 1;
            v[k] = q;
            g[k] = gq;
            zn[k] = num;
            zd[k] = den;
            break;
        }
    }
    zn[k + 1] = POS;
    zd[k + 1] = 1;
    let mut j = 0usize;
    for q in 0..n {
        let qi = q as i64;
        while zn[j + 1] < qi * zd[j + 1] {
            j += 1;
        }
        let p = v[j];
        let d = q as f32 - p as f32;
        let r = d * d + f[p];
        line[start + q * stride] = if r < cap { r } else { FAR };
    }
}

/// First pass for a binary grid (0 at obstacles, anything else free): the
/// squared distance to the nearest obstacle on the same line, by one sweep
/// each way. Results at or above `cap` come out as [`FAR`].
fn binary_1d(line: &mut [f32], cap: f32, u: &mut [u32]) {
    let n = line.len();
    const NONE: u32 = u32::MAX / 2;
    let mut run = NONE;
    let mut any = false;
    for i in 0..n {
        let site = line[i] == 0.0;
        any |= site;
        run = if site { 0 } else { run + 1 };
        u[i] = run;
    }
    if !any {
        line.fill(FAR);
        return;
    }
    let mut run = NONE;
    for i in (0..n).rev() {
        let d = u[i];
        run = if d == 0 { 0 } else { run + 1 };
        let m = d.min(run) as f32;
        let sq = m * m;
        line[i] = if sq < cap { sq } else { FAR };
    }
}

/// Working memory for one thread of [`squared_edt_in_place`]: line scratch
/// and one x–z plane. Grows on first use, then is reused.
#[derive(Clone, Debug, Default)]
pub struct Work {
    s: Scratch,
    plane: Vec<f32>,
}

impl Work {
    fn fit(&mut self, dims: [usize; 3]) {
        let n = dims[0].max(dims[1]).max(dims[2]);
        if self.s.f.len() < n {
            self.s = Scratch::new(n);
        }
        if self.plane.len() < dims[0] * dims[2] {
            self.plane.resize(dims[0] * dims[2], 0.0);
        }
    }
}

/// Index ranges `[lo, hi)` per axis.
pub type Region = [[usize; 2]; 3];

/// x then y passes over whole z-slabs (`d` starts at slab `z0`), for lines
/// whose obstacles all lie in `sites`.
fn xy_passes(d: &mut [f32], dims: [usize; 3], z0: usize, sites: &Region, cap: f32, w: &mut Work) {
    let [nx, ny, _] = dims;
    let slab = nx * ny;
    for (dz, plane) in d.chunks_mut(slab).enumerate() {
        let z = z0 + dz;
        if z < sites[2][0] || z >= sites[2][1] {
            continue; // no obstacle in this slab: every line stays FAR
        }
        for y in sites[1][0]..sites[1][1] {
            binary_1d(&mut plane[y * nx..(y + 1) * nx], cap, &mut w.s.u);
        }
        for x in 0..nx {
            transform_1d(plane, x, nx, ny, cap, &mut w.s);
        }
    }
}

/// A grid shared by threads that each touch their own y-rows only.
#[derive(Clone, Copy)]
struct Shared(*mut f32, usize);
// SAFETY: the pointer is only used by `z_pass`, whose callers give every
// thread a disjoint range of y-rows, and the grid outlives the scope.
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

/// z pass for the y-rows in `ys`: each x–z plane is copied out row by row
/// (contiguous reads), transformed along z, and copied back.
///
/// # Safety
/// `g` must point to a live grid of `dims`, and no other thread may touch
/// the rows `ys` while this runs.
unsafe fn z_pass<P: Fn(f32, [usize; 3]) -> f32>(
    g: Shared,
    dims: [usize; 3],
    ys: std::ops::Range<usize>,
    cap: f32,
    w: &mut Work,
    post: &P,
) {
    let [nx, ny, nz] = dims;
    let slab = nx * ny;
    debug_assert!(g.1 >= slab * nz);
    let plane = &mut w.plane[..nx * nz];
    for y in ys {
        for z in 0..nz {
            // SAFETY: row (y, z) is in bounds and owned by this thread.
            let row = unsafe { std::slice::from_raw_parts(g.0.add(z * slab + y * nx), nx) };
            plane[z * nx..(z + 1) * nx].copy_from_slice(row);
        }
        for x in 0..nx {
            transform_1d(plane, x, nx, nz, cap, &mut w.s);
        }
        for z in 0..nz {
            // SAFETY: as above.
            let row = unsafe { std::slice::from_raw_parts_mut(g.0.add(z * slab + y * nx), nx) };
            for (x, (o, &v)) in row.iter_mut().zip(&plane[z * nx..(z + 1) * nx]).enumerate() {
                *o = post(v, [x, y, z]);
            }
        }
    }
}

/// In place, on an `x`-fastest grid holding `0.0` at obstacles and anything
/// else (e.g. [`FAR`]) elsewhere: the squared distance in voxels to the
/// nearest obstacle, for every voxel. Obstacles must lie inside `sites` (pass
/// the whole grid when unsure): lines without any stay untouched until a
/// later pass reaches them. Distances at or above `cap` (squared voxels)
/// come out as [`FAR`]. `threads` > 1 splits the lines among scoped threads.
pub fn squared_edt_in_place(d: &mut [f32], dims: [usize; 3], sites: &Region, cap: f32, threads: usize, w: &mut Work) {
    transform_with(d, dims, sites, cap, threads, w, &|v, _| v);
}

/// [`squared_edt_in_place`], then `post(squared distance, voxel)` stored in
/// every voxel, applied by the threads of the last pass.
pub fn transform_with<P: Fn(f32, [usize; 3]) -> f32 + Sync>(
    d: &mut [f32],
    dims: [usize; 3],
    sites: &Region,
    cap: f32,
    threads: usize,
    w: &mut Work,
    post: &P,
) {
    let [nx, ny, nz] = dims;
    assert!(
        dims.iter().all(|&n| n <= MAX_AXIS),
        "grid {dims:?} exceeds {MAX_AXIS} voxels on an axis (exactness bound)"
    );
    let slab = nx * ny;
    assert_eq!(d.len(), slab * nz, "grid does not match its dimensions");
    if d.is_empty() {
        return;
    }
    let threads = threads.clamp(1, nz.min(ny));
    w.fit(dims);
    if threads == 1 {
        xy_passes(d, dims, 0, sites, cap, w);
        // SAFETY: one thread, all rows.
        unsafe { z_pass(Shared(d.as_mut_ptr(), d.len()), dims, 0..ny, cap, w, post) };
        return;
    }
    let mut works: Vec<Work> = (0..threads).map(|_| Work::default()).collect();
    for w in &mut works {
        w.fit(dims);
    }
    let per_z = nz.div_ceil(threads);
    std::thread::scope(|sc| {
        for ((i, chunk), w) in d.chunks_mut(per_z * slab).enumerate().zip(works.iter_mut()) {
            sc.spawn(move || xy_passes(chunk, dims, i * per_z, sites, cap, w));
        }
    });
    let g = Shared(d.as_mut_ptr(), d.len());
    let per_y = ny.div_ceil(threads);
    std::thread::scope(|sc| {
        for (t, w) in works.iter_mut().enumerate() {
            let ys = (t * per_y).min(ny)..((t + 1) * per_y).min(ny);
            // SAFETY: the y-ranges are disjoint and the grid outlives the scope.
            sc.spawn(move || unsafe { z_pass(g, dims, ys, cap, w, post) });
        }
    });
}

/// Euclidean distance (voxels) from every voxel to the nearest occupied one;
/// [`FAR`]'s square root (1e10) where a grid has no obstacle at all.
pub fn distances(occupied: &[bool], dims: [usize; 3], threads: usize) -> Vec<f32> {
    whole_grid(occupied, dims, threads, &|v, _| v.sqrt())
}

/// [`distances`] in place, for a grid that holds `0.0` at occupied voxels
/// and [`FAR`] elsewhere (as a reader can fill it straight from a file):
/// no second grid is allocated.
pub fn distances_in_place(d: &mut [f32], dims: [usize; 3], threads: usize) {
    let all = [[0, dims[0]], [0, dims[1]], [0, dims[2]]];
    transform_with(d, dims, &all, FAR, threads, &mut Work::default(), &|v, _| v.sqrt());
}

/// The untruncated transform of a whole occupancy grid, then `post`.
fn whole_grid<P: Fn(f32, [usize; 3]) -> f32 + Sync>(
    occupied: &[bool],
    dims: [usize; 3],
    threads: usize,
    post: &P,
) -> Vec<f32> {
    assert_eq!(occupied.len(), dims.iter().product::<usize>(), "occupancy does not match the grid");
    let mut d: Vec<f32> = occupied.iter().map(|&o| if o { 0.0 } else { FAR }).collect();
    let all = [[0, dims[0]], [0, dims[1]], [0, dims[2]]];
    transform_with(&mut d, dims, &all, FAR, threads, &mut Work::default(), post);
    d
}

/// Squared Euclidean distance (voxel units) from every voxel to the nearest
/// occupied one, for an `x`-fastest grid of `dims`. Free space in a grid
/// without obstacles stays [`FAR`]. Untruncated, on `threads` threads.
pub fn squared_edt(occupied: &[bool], dims: [usize; 3], threads: usize) -> Vec<f32> {
    whole_grid(occupied, dims, threads, &|v, _| v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::coverage::Rng;

    fn brute(occupied: &[bool], dims: [usize; 3]) -> Vec<f32> {
        let [nx, ny, nz] = dims;
        let sites: Vec<(i64, i64, i64)> = (0..occupied.len())
            .filter(|&i| occupied[i])
            .map(|i| ((i % nx) as i64, ((i / nx) % ny) as i64, (i / (nx * ny)) as i64))
            .collect();
        (0..nx * ny * nz)
            .map(|i| {
                let (x, y, z) = ((i % nx) as i64, ((i / nx) % ny) as i64, (i / (nx * ny)) as i64);
                sites
                    .iter()
                    .map(|&(a, b, c)| ((x - a).pow(2) + (y - b).pow(2) + (z - c).pow(2)) as f32)
                    .fold(FAR, f32::min)
            })
            .collect()
    }

    #[test]
    fn the_transform_equals_brute_force_on_random_grids() {
        let mut rng = Rng::new(5);
        for round in 0..40 {
            let dims =
                [1 + (rng.unit() * 13.0) as usize, 1 + (rng.unit() * 11.0) as usize, 1 + (rng.unit() * 9.0) as usize];
            let density = [0.0, 0.01, 0.05, 0.3, 0.9][round % 5];
            let occ: Vec<bool> = (0..dims.iter().product()).map(|_| rng.unit() < density).collect();
            for threads in [1, 3] {
                assert_eq!(squared_edt(&occ, dims, threads), brute(&occ, dims), "dims {dims:?} density {density}");
            }
        }
        // A larger, sparse grid: long parabola envelopes.
        let dims = [40, 33, 27];
        let occ: Vec<bool> = (0..dims.iter().product()).map(|_| rng.unit() < 0.002).collect();
        assert!(occ.iter().any(|&o| o));
        assert_eq!(squared_edt(&occ, dims, 2), brute(&occ, dims));
    }
}
