//! The spatial hash for robot-vs-robot checks.
//!
//! Method text: `hashed-collision-warning.txt`. Space is cut into cubic
//! cells; the labels of one robot's swept spheres are deposited in the
//! bucket of the cell their centre falls in, and each sphere of another robot
//! looks at the 27 buckets around its own cell. Only bucket-mates get the
//! exact sphere–sphere test. With a cell edge of at least
//! `2·r_max + threshold`, two spheres whose gap is at most `threshold` always
//! have centres in neighbouring cells, so nothing is missed (the property
//! test checks this against all pairs).
//!
//! Buckets live in an open-addressed table keyed by the packed cell
//! coordinates, sized by the number of spheres, not by the cell's volume:
//! memory follows the robots. Clearing is a generation bump, so a cycle
//! costs no memset and no allocation. Once filled, the hash is sealed:
//! each bucket's spheres are laid out side by side, and a query scans
//! them in blocks of 8 (no chain of dependent loads).

/// Most spheres one hash holds (labels are `u32`).
pub const MAX_ITEMS: usize = 1 << 24;

/// Spheres tested at once in a bucket's scan (one mask, then the hits).
const LANES: usize = 8;

/// A spatial hash of labelled spheres.
///
/// Spheres go in with [`insert`](Self::insert); [`seal`](Self::seal) then
/// lays each bucket's spheres out side by side (a counting sort over the
/// buckets used), and the [`Sealed`] view it returns answers queries by
/// scanning contiguous coordinates: no chain of dependent loads.
#[derive(Clone, Debug)]
pub struct SpatialHash {
    inv_cell: f32,
    cell: f32,
    mask: usize,
    /// Per table slot: its cell key, the generation it was last used in,
    /// how many spheres its bucket holds and where they start once sealed.
    keys: Vec<u64>,
    gens: Vec<u32>,
    counts: Vec<u32>,
    starts: Vec<u32>,
    gen_now: u32,
    /// The slots used this generation, in first-use order.
    used: Vec<u32>,
    used_len: usize,
    /// Spheres as inserted, with the slot of their bucket.
    x: Vec<f32>,
    y: Vec<f32>,
    z: Vec<f32>,
    r: Vec<f32>,
    label: Vec<u32>,
    slot: Vec<u32>,
    /// Sealed: the same spheres, bucket by bucket.
    sx: Vec<f32>,
    sy: Vec<f32>,
    sz: Vec<f32>,
    sr: Vec<f32>,
    slabel: Vec<u32>,
    len: usize,
    sealed: bool,
}

#[inline]
fn cell_coord(v: f32, inv: f32) -> i32 {
    (v * inv).floor() as i32
}

#[inline]
fn pack(ix: i32, iy: i32, iz: i32) -> u64 {
    let m = (1u64 << 21) - 1;
    ((ix as u64) & m) | (((iy as u64) & m) << 21) | (((iz as u64) & m) << 42)
}

#[inline]
fn mix(k: u64) -> u64 {
    // A 64-bit finaliser (multiply–xorshift): neighbouring cells land far apart.
    let mut h = k.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^= h >> 29;
    h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^ (h >> 32)
}

impl SpatialHash {
    /// A hash for up to `capacity` spheres in cells of edge `cell_m`.
    ///
    /// # Panics
    /// If `cell_m` is not positive and finite or `capacity` exceeds
    /// [`MAX_ITEMS`] (both are set up once, from validated configuration).
    pub fn new(capacity: usize, cell_m: f32) -> SpatialHash {
        assert!(cell_m.is_finite() && cell_m > 0.0, "hash cell edge must be positive, got {cell_m}");
        assert!(capacity <= MAX_ITEMS, "at most {MAX_ITEMS} spheres per hash");
        let slots = (capacity.max(4) * 2).next_power_of_two();
        // The sealed arrays are padded to whole scans of `LANES`.
        let padded = capacity + LANES;
        SpatialHash {
            inv_cell: 1.0 / cell_m,
            cell: cell_m,
            mask: slots - 1,
            keys: vec![0; slots],
            gens: vec![0; slots],
            counts: vec![0; slots],
            starts: vec![0; slots],
            gen_now: 1,
            used: vec![0; capacity],
            used_len: 0,
            x: vec![0.0; capacity],
            y: vec![0.0; capacity],
            z: vec![0.0; capacity],
            r: vec![0.0; capacity],
            label: vec![0; capacity],
            slot: vec![0; capacity],
            sx: vec![0.0; padded],
            sy: vec![0.0; padded],
            sz: vec![0.0; padded],
            sr: vec![0.0; padded],
            slabel: vec![0; padded],
            len: 0,
            sealed: true,
        }
    }

    /// Changes the cell edge (empties the hash; no allocation).
    pub fn set_cell_m(&mut self, cell_m: f32) {
        if cell_m.is_finite() && cell_m > 0.0 && cell_m != self.cell {
            self.cell = cell_m;
            self.inv_cell = 1.0 / cell_m;
        }
        self.clear();
    }

    /// The cell edge, metres.
    pub fn cell_m(&self) -> f32 {
        self.cell
    }

    /// Spheres held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Spheres it can hold.
    pub fn capacity(&self) -> usize {
        self.x.len()
    }

    /// Bytes held by the table and the sphere arrays.
    pub fn memory_bytes(&self) -> usize {
        self.keys.len() * (8 + 4 * 3) + self.x.len() * (4 * 4 + 4 * 3) + self.sx.len() * (4 * 4 + 4)
    }

    /// Empties the hash (no memory is touched but a counter).
    pub fn clear(&mut self) {
        self.len = 0;
        self.used_len = 0;
        self.sealed = true;
        self.gen_now = self.gen_now.wrapping_add(1);
        if self.gen_now == 0 {
            self.gens.fill(0);
            self.gen_now = 1;
        }
    }

    #[inline]
    fn find(&self, key: u64) -> (usize, bool) {
        let mut s = mix(key) as usize & self.mask;
        loop {
            if self.gens[s] != self.gen_now {
                return (s, false);
            }
            if self.keys[s] == key {
                return (s, true);
            }
            s = (s + 1) & self.mask;
        }
    }

    /// Adds a sphere; false (and nothing added) when full.
    #[inline]
    pub fn insert(&mut self, x: f32, y: f32, z: f32, r: f32, label: u32) -> bool {
        if self.len >= self.x.len() {
            return false;
        }
        let key = pack(cell_coord(x, self.inv_cell), cell_coord(y, self.inv_cell), cell_coord(z, self.inv_cell));
        let (s, found) = self.find(key);
        if !found {
            self.gens[s] = self.gen_now;
            self.keys[s] = key;
            self.counts[s] = 0;
            // (at most one new bucket per sphere: `used` has room)
            self.used[self.used_len] = s as u32;
            self.used_len += 1;
        }
        let i = self.len;
        self.x[i] = x;
        self.y[i] = y;
        self.z[i] = z;
        self.r[i] = r;
        self.label[i] = label;
        self.slot[i] = s as u32;
        self.counts[s] += 1;
        self.len += 1;
        self.sealed = false;
        true
    }

    /// Lays the spheres out bucket by bucket (once after the last
    /// insert; again only after more) and returns the view that answers
    /// queries. Within a bucket the latest inserted comes first.
    pub fn seal(&mut self) -> Sealed<'_> {
        if !self.sealed {
            let mut at = 0u32;
            for &s in &self.used[..self.used_len] {
                let s = s as usize;
                at += self.counts[s];
                // (each bucket filled from its end, below)
                self.starts[s] = at;
            }
            for i in 0..self.len {
                let s = self.slot[i] as usize;
                self.starts[s] -= 1;
                let j = self.starts[s] as usize;
                self.sx[j] = self.x[i];
                self.sy[j] = self.y[i];
                self.sz[j] = self.z[i];
                self.sr[j] = self.r[i];
                self.slabel[j] = self.label[i];
            }
            self.sealed = true;
        }
        Sealed { h: self }
    }

    /// Checks the structure: every held sphere is in exactly one bucket,
    /// the bucket of its own cell. Panics with the reason.
    pub fn assert_invariants(&mut self) {
        let len = self.len;
        let h = self.seal().h;
        let mut seen = 0usize;
        for s in 0..h.keys.len() {
            if h.gens[s] != h.gen_now {
                continue;
            }
            let (lo, n) = (h.starts[s] as usize, h.counts[s] as usize);
            assert!(lo + n <= len, "bucket {s} runs to {} beyond {len}", lo + n);
            for j in lo..lo + n {
                let key = pack(
                    cell_coord(h.sx[j], h.inv_cell),
                    cell_coord(h.sy[j], h.inv_cell),
                    cell_coord(h.sz[j], h.inv_cell),
                );
                assert_eq!(key, h.keys[s], "sphere {j} is in the wrong bucket");
            }
            seen += n;
        }
        assert_eq!(seen, len, "the buckets hold {seen} spheres of {len}");
    }
}

/// A sealed [`SpatialHash`]: its queries.
#[derive(Clone, Copy, Debug)]
pub struct Sealed<'a> {
    h: &'a SpatialHash,
}

impl Sealed<'_> {
    /// Calls `f(label, gap)` for every held sphere whose gap to the sphere
    /// `(x, y, z, r)` (centre distance minus both radii; negative = overlap)
    /// is at most `threshold`. Complete when the cell edge is at least
    /// `2·r_max + threshold` over both spheres' radii.
    ///
    /// Inlined always: the scan is compiled with its caller's target
    /// features (the robot check's AVX2 build scans 8 spheres at once).
    #[inline(always)]
    pub fn for_each_near(&self, x: f32, y: f32, z: f32, r: f32, threshold: f32, mut f: impl FnMut(u32, f32)) {
        let h = self.h;
        let (cx, cy, cz) = (cell_coord(x, h.inv_cell), cell_coord(y, h.inv_cell), cell_coord(z, h.inv_cell));
        for dz in -1..=1 {
            for dy in -1..=1 {
                for dx in -1..=1 {
                    // Wrapping: a coordinate saturated at `i32::MAX` (a sphere posed
                    // absurdly far) aliases like any other under `pack`.
                    let (s, found) = h.find(pack(cx.wrapping_add(dx), cy.wrapping_add(dy), cz.wrapping_add(dz)));
                    if !found {
                        continue;
                    }
                    let (lo, n) = (h.starts[s] as usize, h.counts[s] as usize);
                    // Whole scans of `LANES`: the arrays are padded, and a
                    // lane past the bucket is masked off.
                    let mut j = lo;
                    while j < lo + n {
                        let chunk = |v: &'_ [f32]| v.get(j..).and_then(|v| v.first_chunk::<LANES>()).copied();
                        let (Some(xs), Some(ys), Some(zs), Some(rs)) =
                            (chunk(&h.sx), chunk(&h.sy), chunk(&h.sz), chunk(&h.sr))
                        else {
                            break; // (never: the arrays are padded by `LANES`)
                        };
                        let mut hits = 0u32;
                        for l in 0..LANES {
                            let (ex, ey, ez) = (xs[l] - x, ys[l] - y, zs[l] - z);
                            // (summed in the order of the gap's bound, `r_k + r + threshold`)
                            let reach = rs[l] + r + threshold;
                            let near = ex * ex + ey * ey + ez * ez <= reach * reach;
                            hits |= u32::from(near) << l;
                        }
                        hits &= if lo + n - j >= LANES { u32::MAX } else { (1u32 << (lo + n - j)) - 1 };
                        while hits != 0 {
                            let k = j + hits.trailing_zeros() as usize;
                            hits &= hits - 1;
                            let (ex, ey, ez) = (h.sx[k] - x, h.sy[k] - y, h.sz[k] - z);
                            f(h.slabel[k], (ex * ex + ey * ey + ez * ez).sqrt() - h.sr[k] - r);
                        }
                        j += LANES;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_across_a_cell_face_are_found() {
        let mut h = SpatialHash::new(8, 0.1);
        assert!(h.insert(0.099, 0.0, 0.0, 0.02, 7));
        let mut hits = Vec::new();
        h.seal().for_each_near(0.101, 0.0, 0.0, 0.02, 0.0, |l, g| hits.push((l, g)));
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].0, 7);
        assert!(hits[0].1 < 0.0);
        h.assert_invariants();
        h.clear();
        let mut n = 0;
        h.seal().for_each_near(0.101, 0.0, 0.0, 0.02, 0.0, |_, _| n += 1);
        assert_eq!(n, 0);
    }

    #[test]
    fn spheres_posed_beyond_the_cell_coordinates_range_are_found() {
        // 3e8 m over 0.1 m cells is past i32::MAX cells: the coordinate
        // saturates, and its neighbours wrap (a fuzzed recording once made
        // the `+ 1` overflow).
        let mut h = SpatialHash::new(8, 0.1);
        for (i, x) in [3.0e8_f32, -3.0e8, f32::MAX].into_iter().enumerate() {
            assert!(h.insert(x, x, x, 0.02, i as u32));
            let mut hits = Vec::new();
            h.seal().for_each_near(x, x, x, 0.02, 0.0, |l, _| hits.push(l));
            assert!(hits.contains(&(i as u32)), "{x}: {hits:?}");
        }
        h.assert_invariants();
    }

    #[test]
    fn a_full_hash_refuses_instead_of_overwriting() {
        let mut h = SpatialHash::new(2, 0.1);
        assert!(h.insert(0.0, 0.0, 0.0, 0.01, 0));
        assert!(h.insert(1.0, 0.0, 0.0, 0.01, 1));
        assert!(!h.insert(2.0, 0.0, 0.0, 0.01, 2));
        assert_eq!(h.len(), 2);
    }
}
