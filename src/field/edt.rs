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

/// Scratch space for [`transform_1d`], sized for the longest line.
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    v: Vec<usize>,
    z: Vec<f64>,
    f: Vec<f32>,
}

impl Scratch {
    /// Scratch for lines of up to `n` samples.
    pub fn new(n: usize) -> Scratch {
        Scratch { v: vec![0; n], z: vec![0.0; n + 1], f: vec![0.0; n] }
    }
}

/// In place: `line[q] = min_p (q − p)² + line[p]`, reading and writing
/// through a stride (so one routine serves every axis). No allocation.
pub fn transform_1d(line: &mut [f32], start: usize, stride: usize, n: usize, s: &mut Scratch) {
    if n == 0 {
        return;
    }
    for i in 0..n {
        s.f[i] = line[start + i * stride];
    }
    let f = &s.f;
    let (v, z) = (&mut s.v, &mut s.z);
    // Lower envelope of the parabolas rooted at finite samples.
    let mut k: isize = -1;
    for q in 0..n {
        if f[q] >= FAR {
            continue;
        }
        loop {
            if k < 0 {
                k = 0;
                v[0] = q;
                z[0] = f64::NEG_INFINITY;
                z[1] = f64::INFINITY;
                break;
            }
            let p = v[k as usize];
            // Intersection of the parabolas from p and q, in f64 so that the
            // envelope is decided exactly for every grid size accepted.
            let (fq, fp) = (f64::from(f[q]), f64::from(f[p]));
            let sx = ((fq + (q * q) as f64) - (fp + (p * p) as f64)) / (2.0 * (q as f64 - p as f64));
            if sx <= z[k as usize] {
                k -= 1;
                continue;
            }
            k += 1;
            v[k as usize] = q;
            z[k as usize] = sx;
            z[k as usize + 1] = f64::INFINITY;
            break;
        }
    }
    if k < 0 {
        return; // no obstacle on this line: it stays FAR
    }
    let mut j = 0usize;
    for q in 0..n {
        while z[j + 1] < q as f64 {
            j += 1;
        }
        let p = v[j];
        let d = q as f32 - p as f32;
        line[start + q * stride] = d * d + f[p];
    }
}

/// Squared Euclidean distance (voxel units) from every voxel to the nearest
/// occupied one, for an `x`-fastest grid of `dims`. Free space far from
/// every obstacle, or a grid without obstacles, stays [`FAR`].
pub fn squared_edt(occupied: &[bool], dims: [usize; 3]) -> Vec<f32> {
    let [nx, ny, nz] = dims;
    assert_eq!(occupied.len(), nx * ny * nz, "occupancy does not match the grid");
    let mut d: Vec<f32> = occupied.iter().map(|&o| if o { 0.0 } else { FAR }).collect();
    let mut s = Scratch::new(nx.max(ny).max(nz));
    for z in 0..nz {
        for y in 0..ny {
            transform_1d(&mut d, (z * ny + y) * nx, 1, nx, &mut s);
        }
    }
    for z in 0..nz {
        for x in 0..nx {
            transform_1d(&mut d, z * ny * nx + x, nx, ny, &mut s);
        }
    }
    for y in 0..ny {
        for x in 0..nx {
            transform_1d(&mut d, y * nx + x, nx * ny, nz, &mut s);
        }
    }
    d
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
            assert_eq!(squared_edt(&occ, dims), brute(&occ, dims), "dims {dims:?} density {density}");
        }
        // A larger, sparse grid: long parabola envelopes.
        let dims = [40, 33, 27];
        let occ: Vec<bool> = (0..dims.iter().product()).map(|_| rng.unit() < 0.002).collect();
        assert!(occ.iter().any(|&o| o));
        assert_eq!(squared_edt(&occ, dims), brute(&occ, dims));
    }
}
