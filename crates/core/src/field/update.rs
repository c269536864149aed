//! Changing the field: obstacles added and removed (rebuilt incrementally
//! over the region they reach), sensed points and occupancy, full rebuilds.

use super::*;

impl DistanceField {
    /// Adds an obstacle (pose in the cell frame) and updates only the voxels
    /// within the saturation distance of it. The result equals a full
    /// rebuild exactly.
    /// A pose or shape that is not finite, or a size that is not positive,
    /// is refused (nothing changes).
    pub fn add_obstacle(&mut self, pose: Frame, shape: Shape) -> Result<ObstacleId, FieldError> {
        check_obstacle(&pose, &shape)?;
        let placed = Placed::new(pose, shape, &self.grid);
        let vb = placed.voxels;
        let id = self.insert_placed(placed);
        if is_empty(&vb) {
            return Ok(id);
        }
        let k = self.reach();
        let r = grow(&vb, k, self.dims);
        let rd = region_dims(&r);
        let n: usize = rd.iter().product();
        // The new obstacle's own voxels as sites, in a local grid over `r`.
        self.local.clear();
        self.local.resize(n, FAR);
        // `insert_placed` left the obstacle's raster over `vb` in `marks`.
        let vd = region_dims(&vb);
        let mut m = 0;
        for z in vb[2][0]..vb[2][1] {
            for y in vb[1][0]..vb[1][1] {
                for x in vb[0][0]..vb[0][1] {
                    if self.marks[m] {
                        let li = ((z - r[2][0]) * rd[1] + (y - r[1][0])) * rd[0] + (x - r[0][0]);
                        self.local[li] = 0.0;
                    }
                    m += 1;
                }
            }
        }
        debug_assert_eq!(m, vd.iter().product::<usize>());
        let sites = shift(&vb, &r);
        edt::squared_edt_in_place(&mut self.local, rd, &sites, self.cap_sq, 1, &mut self.work);
        let mut li = 0;
        for z in r[2][0]..r[2][1] {
            for y in r[1][0]..r[1][1] {
                let row = (z * self.dims[1] + y) * self.dims[0];
                for x in r[0][0]..r[0][1] {
                    let sq = self.local[li];
                    li += 1;
                    if sq < FAR {
                        let d = self.finish(sq, [x, y, z]);
                        let cur = &mut self.dist[row + x];
                        if d < *cur {
                            *cur = d;
                        }
                    }
                }
            }
        }
        Ok(id)
    }

    /// Removes an obstacle and recomputes only the voxels within the
    /// saturation distance of it. The result equals a full rebuild exactly.
    /// Returns false when the id is unknown.
    pub fn remove_obstacle(&mut self, id: ObstacleId) -> bool {
        let Some(at) = self.obstacles.iter().position(|(i, _)| *i == id) else { return false };
        let (_, gone) = self.obstacles.remove(at);
        let vb = gone.voxels;
        if is_empty(&vb) {
            return true;
        }
        self.reoccupy(&vb);
        let k = self.reach();
        let r = grow(&vb, k, self.dims);
        let src = grow(&r, k, self.dims);
        let sd = region_dims(&src);
        let n: usize = sd.iter().product();
        self.local.clear();
        self.local.resize(n, FAR);
        let mut li = 0;
        for z in src[2][0]..src[2][1] {
            for y in src[1][0]..src[1][1] {
                let row = (z * self.dims[1] + y) * self.dims[0];
                for x in src[0][0]..src[0][1] {
                    let i = row + x;
                    if self.occ[i / 64] >> (i % 64) & 1 == 1 {
                        self.local[li] = 0.0;
                    }
                    li += 1;
                }
            }
        }
        let all = [[0, sd[0]], [0, sd[1]], [0, sd[2]]];
        edt::squared_edt_in_place(&mut self.local, sd, &all, self.cap_sq, 1, &mut self.work);
        for z in r[2][0]..r[2][1] {
            for y in r[1][0]..r[1][1] {
                let row = (z * self.dims[1] + y) * self.dims[0];
                let lrow = ((z - src[2][0]) * sd[1] + (y - src[1][0])) * sd[0];
                for x in r[0][0]..r[0][1] {
                    self.dist[row + x] = self.finish(self.local[lrow + x - src[0][0]], [x, y, z]);
                }
            }
        }
        true
    }

    /// Replaces the sensed points (cell frame; e.g. from a
    /// `sensor_msgs/PointCloud2`) and rebuilds the field. Each point occupies
    /// the voxel holding it, unless it lies within `filter_margin_m` of one
    /// of the `robots`' own spheres (self-filtering: a robot must not become
    /// its own obstacle).
    pub fn set_sensed_points(
        &mut self,
        points: &[[f32; 3]],
        robots: &[&PosedSpheres],
        filter_margin_m: f32,
    ) -> PointReport {
        let mut rep = PointReport::default();
        self.sensed.clear();
        'points: for p in points {
            if !p.iter().all(|c| c.is_finite()) {
                rep.invalid += 1;
                continue;
            }
            let Some(v) = self.voxel_of(*p) else {
                rep.outside += 1;
                continue;
            };
            for s in robots {
                for i in 0..s.len() {
                    let (dx, dy, dz) = (p[0] - s.x[i], p[1] - s.y[i], p[2] - s.z[i]);
                    let r = s.r[i] + filter_margin_m;
                    if dx * dx + dy * dy + dz * dz <= r * r {
                        rep.filtered += 1;
                        continue 'points;
                    }
                }
            }
            rep.accepted += 1;
            self.sensed.push(self.index(v) as u32);
        }
        self.sensed.sort_unstable();
        self.sensed.dedup();
        let all = [[0, self.dims[0]], [0, self.dims[1]], [0, self.dims[2]]];
        self.occ.fill(0);
        self.reoccupy(&all);
        self.rebuild();
        rep
    }

    /// Marks the voxels of an occupancy grid (`x` fastest, same dimensions)
    /// as sensed obstacles and rebuilds. For raw grids, e.g. a `.npy` file.
    pub fn set_sensed_occupancy(&mut self, occupied: &[bool]) -> Result<(), String> {
        if occupied.len() != self.dist.len() {
            return Err(format!("{} voxels given, the grid has {}", occupied.len(), self.dist.len()));
        }
        self.sensed = (0..occupied.len()).filter(|&i| occupied[i]).map(|i| i as u32).collect();
        let all = [[0, self.dims[0]], [0, self.dims[1]], [0, self.dims[2]]];
        self.occ.fill(0);
        self.reoccupy(&all);
        self.rebuild();
        Ok(())
    }

    /// Recomputes every distance from the occupancy (parallel over lines).
    pub fn rebuild(&mut self) {
        for (i, d) in self.dist.iter_mut().enumerate() {
            *d = if self.occ[i / 64] >> (i % 64) & 1 == 1 { 0.0 } else { FAR };
        }
        let all = [[0, self.dims[0]], [0, self.dims[1]], [0, self.dims[2]]];
        let threads = if self.dist.len() < 1 << 18 { 1 } else { self.threads };
        let (dims, cap, walls) = (self.dims, self.cap_sq, self.grid.outside == Outside::Collision);
        let post = move |sq: f32, v: [usize; 3]| finish(sq, v, dims, cap, walls);
        edt::transform_with(&mut self.dist, self.dims, &all, self.cap_sq, threads, &mut self.work, &post);
    }

    pub(super) fn finish(&self, sq: f32, v: [usize; 3]) -> f32 {
        finish(sq, v, self.dims, self.cap_sq, self.grid.outside == Outside::Collision)
    }

    /// How many voxels an obstacle's influence reaches: every voxel further
    /// than this along some axis is beyond the cap.
    pub(super) fn reach(&self) -> usize {
        self.cap_sq.sqrt().floor() as usize
    }

    pub(super) fn insert_placed(&mut self, placed: Placed) -> ObstacleId {
        let id = ObstacleId(self.next_id);
        self.next_id += 1;
        let vb = placed.voxels;
        if !is_empty(&vb) {
            self.marks.clear();
            self.marks.resize(region_len(&vb), false);
            placed.raster(&self.grid, &vb, &mut self.marks);
            self.set_bits(&vb);
        }
        self.obstacles.push((id, placed));
        id
    }

    /// ORs `self.marks` (laid out over region `vb`) into the occupancy.
    pub(super) fn set_bits(&mut self, vb: &Region) {
        let mut m = 0;
        for z in vb[2][0]..vb[2][1] {
            for y in vb[1][0]..vb[1][1] {
                let row = (z * self.dims[1] + y) * self.dims[0];
                for x in vb[0][0]..vb[0][1] {
                    if self.marks[m] {
                        let i = row + x;
                        self.occ[i / 64] |= 1 << (i % 64);
                    }
                    m += 1;
                }
            }
        }
    }

    /// Recomputes the occupancy inside region `vb` from the obstacles and
    /// sensed voxels that reach into it.
    pub(super) fn reoccupy(&mut self, vb: &Region) {
        for z in vb[2][0]..vb[2][1] {
            for y in vb[1][0]..vb[1][1] {
                let row = (z * self.dims[1] + y) * self.dims[0];
                for x in vb[0][0]..vb[0][1] {
                    let i = row + x;
                    self.occ[i / 64] &= !(1 << (i % 64));
                }
            }
        }
        let obstacles = std::mem::take(&mut self.obstacles);
        for (_, o) in &obstacles {
            let Some(cut) = intersect(&o.voxels, vb) else { continue };
            self.marks.clear();
            self.marks.resize(region_len(&cut), false);
            o.raster(&self.grid, &cut, &mut self.marks);
            self.set_bits(&cut);
        }
        self.obstacles = obstacles;
        let [nx, ny, _] = self.dims;
        for &i in &self.sensed {
            let i = i as usize;
            let (x, y, z) = (i % nx, (i / nx) % ny, i / (nx * ny));
            if (vb[0][0]..vb[0][1]).contains(&x)
                && (vb[1][0]..vb[1][1]).contains(&y)
                && (vb[2][0]..vb[2][1]).contains(&z)
            {
                self.occ[i / 64] |= 1 << (i % 64);
            }
        }
    }
}
