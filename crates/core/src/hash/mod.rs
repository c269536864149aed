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
//! costs no memset and no allocation.

/// Most spheres one hash holds (labels are `u32`).
pub const MAX_ITEMS: usize = 1 << 24;

const EMPTY: u32 = u32::MAX;

/// A spatial hash of labelled spheres.
#[derive(Clone, Debug)]
pub struct SpatialHash {
    inv_cell: f32,
    cell: f32,
    mask: usize,
    keys: Vec<u64>,
    heads: Vec<u32>,
    gens: Vec<u32>,
    gen_now: u32,
    x: Vec<f32>,
    y: Vec<f32>,
    z: Vec<f32>,
    r: Vec<f32>,
    label: Vec<u32>,
    next: Vec<u32>,
    len: usize,
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
        SpatialHash {
            inv_cell: 1.0 / cell_m,
            cell: cell_m,
            mask: slots - 1,
            keys: vec![0; slots],
            heads: vec![EMPTY; slots],
            gens: vec![0; slots],
            gen_now: 1,
            x: vec![0.0; capacity],
            y: vec![0.0; capacity],
            z: vec![0.0; capacity],
            r: vec![0.0; capacity],
            label: vec![0; capacity],
            next: vec![EMPTY; capacity],
            len: 0,
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
        self.keys.len() * (8 + 4 + 4) + self.x.len() * (4 * 4 + 4 + 4)
    }

    /// Empties the hash (no memory is touched but a counter).
    pub fn clear(&mut self) {
        self.len = 0;
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
            self.heads[s] = EMPTY;
        }
        let i = self.len;
        self.x[i] = x;
        self.y[i] = y;
        self.z[i] = z;
        self.r[i] = r;
        self.label[i] = label;
        self.next[i] = self.heads[s];
        self.heads[s] = i as u32;
        self.len += 1;
        true
    }

    /// Calls `f(label, gap)` for every held sphere whose gap to the sphere
    /// `(x, y, z, r)` (centre distance minus both radii; negative = overlap)
    /// is at most `threshold`. Complete when the cell edge is at least
    /// `2·r_max + threshold` over both spheres' radii.
    #[inline]
    pub fn for_each_near(&self, x: f32, y: f32, z: f32, r: f32, threshold: f32, mut f: impl FnMut(u32, f32)) {
        let (cx, cy, cz) = (cell_coord(x, self.inv_cell), cell_coord(y, self.inv_cell), cell_coord(z, self.inv_cell));
        for dz in -1..=1 {
            for dy in -1..=1 {
                for dx in -1..=1 {
                    // Wrapping: a coordinate saturated at `i32::MAX` (a sphere posed
                    // absurdly far) aliases like any other under `pack`.
                    let (s, found) = self.find(pack(cx.wrapping_add(dx), cy.wrapping_add(dy), cz.wrapping_add(dz)));
                    if !found {
                        continue;
                    }
                    let mut i = self.heads[s];
                    while i != EMPTY {
                        let k = i as usize;
                        let (ex, ey, ez) = (self.x[k] - x, self.y[k] - y, self.z[k] - z);
                        let reach = self.r[k] + r + threshold;
                        let d2 = ex * ex + ey * ey + ez * ez;
                        if d2 <= reach * reach {
                            f(self.label[k], d2.sqrt() - self.r[k] - r);
                        }
                        i = self.next[k];
                    }
                }
            }
        }
    }

    /// Checks the structure: every held sphere is reachable from exactly
    /// one bucket, the bucket of its own cell. Panics with the reason.
    pub fn assert_invariants(&self) {
        let mut seen = vec![false; self.len];
        for s in 0..self.keys.len() {
            if self.gens[s] != self.gen_now {
                continue;
            }
            let mut i = self.heads[s];
            while i != EMPTY {
                let k = i as usize;
                assert!(k < self.len, "bucket {s} links to item {k} beyond {}", self.len);
                assert!(!seen[k], "item {k} is linked twice");
                seen[k] = true;
                let key = pack(
                    cell_coord(self.x[k], self.inv_cell),
                    cell_coord(self.y[k], self.inv_cell),
                    cell_coord(self.z[k], self.inv_cell),
                );
                assert_eq!(key, self.keys[s], "item {k} is in the wrong bucket");
                i = self.next[k];
            }
        }
        assert!(seen.iter().all(|&b| b), "an item is in no bucket");
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
        h.for_each_near(0.101, 0.0, 0.0, 0.02, 0.0, |l, g| hits.push((l, g)));
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].0, 7);
        assert!(hits[0].1 < 0.0);
        h.assert_invariants();
        h.clear();
        let mut n = 0;
        h.for_each_near(0.101, 0.0, 0.0, 0.02, 0.0, |_, _| n += 1);
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
            h.for_each_near(x, x, x, 0.02, 0.0, |l, _| hits.push(l));
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
