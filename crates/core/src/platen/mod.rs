//! Platen allocation: which planar unit may move where, answered from cell
//! maps of the shared surface.
//!
//! The method is the bitmap world map of `platen-bitmap-allocation.txt`:
//! the world map and one map per unit, each a grid of cells the size of the
//! surface. A unit's map holds its footprint and umbilical cord (when it
//! stands) or the whole area granted to its move (when it moves); the world
//! map is the fixed obstacles OR every unit's map. A move request takes the
//! unit's own map out of the world (XOR), rasterizes the area the move
//! sweeps (footprint and cord, every cell touched), and compares the world
//! XOR swept with the world OR swept word by word: where they differ, a cell
//! is taken. With no difference the swept area goes in and the move is
//! granted; otherwise the farthest safe point along the path is granted
//! (PARTIAL) or the request is DENIED with a retry-after naming the blocker,
//! and the unit's own map goes back. As pose updates arrive, the part of
//! the granted area the unit has passed is freed; on arrival all of it but
//! the unit's final footprint.
//!
//! [`Allocator`] runs on any [`CellMap`]: [`BitMap`] (u64 words) is the one
//! used; [`BoolMap`] (one `bool` per cell, cells found by a per-cell overlap
//! test) is the naive reference the tests and the benchmark compare with.

pub mod geom;
pub mod map;
mod path;
mod request;

pub use geom::{Pose2, UnitShape, pose_at, wrap};
pub use map::{BitMap, BoolMap, Cell, CellMap, Grid, Install};
pub use path::PathFault;

use crate::cell::{AllocationSettings, Platen};
use geom::Pieces;

/// What stands in a unit's way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Blocker {
    /// Another unit (index), its footprint, cord or granted area.
    Unit(usize),
    /// A fixed obstacle (index into the platen's obstacles).
    Obstacle(usize),
    /// The edge of the surface.
    Edge,
}

/// The answer to a move request.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Answer {
    /// The whole move is granted.
    Granted {
        /// The request.
        request_id: u64,
        /// Where the unit may go.
        goal: Pose2,
    },
    /// Only part of it is: the unit may go as far as `goal`, the farthest
    /// safe point along the path.
    Partial {
        /// The request.
        request_id: u64,
        /// The safe point.
        goal: Pose2,
        /// How far along the path it lies (0..1).
        fraction: f64,
        /// What is in the way beyond it.
        blocker: Blocker,
    },
    /// A unit on a path may go along it as far as `goal` (ahead of it, or
    /// behind it when it backs away); more follows as the way clears.
    Increment {
        /// The path request.
        request_id: u64,
        /// How far it may go.
        goal: Pose2,
        /// How far along the path that lies (0..1, by travel).
        fraction: f64,
        /// What keeps it from the next increment, if anything.
        blocker: Option<Blocker>,
        /// The unit of higher priority it backs away from.
        backing_from: Option<usize>,
    },
    /// Nothing is: the unit stays and may ask again after `retry_after_s`.
    Denied {
        /// The request.
        request_id: u64,
        /// When to ask again, s.
        retry_after_s: f64,
        /// What is in the way.
        blocker: Blocker,
    },
    /// The request was not considered.
    Refused {
        /// The request.
        request_id: u64,
        /// Why.
        reason: Refusal,
    },
}

impl Answer {
    /// The request answered.
    pub fn request_id(&self) -> u64 {
        match *self {
            Answer::Granted { request_id, .. }
            | Answer::Partial { request_id, .. }
            | Answer::Increment { request_id, .. }
            | Answer::Denied { request_id, .. }
            | Answer::Refused { request_id, .. } => request_id,
        }
    }
}

/// Why a request was not considered.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Refusal {
    /// The unit has a grant it has not arrived at.
    Busy {
        /// The request being carried out.
        current: u64,
    },
    /// It was denied less than the retry delay ago.
    RetryTooSoon {
        /// Wait this much longer, s.
        wait_s: f64,
    },
    /// No pose of the unit has been received.
    NoPose,
    /// The unit's last pose is too old.
    StalePose {
        /// Its age, s.
        age_s: f64,
    },
    /// The unit is stopped (see its status).
    Stopped,
    /// The target is not a finite pose.
    BadTarget,
    /// The path cannot be followed.
    BadPath(PathFault),
    /// No such unit.
    UnknownUnit,
}

/// Why a unit must stop.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StopReason {
    /// Its reported pose puts it (or its cord) outside what it holds.
    Breach {
        /// The first cell outside.
        cell: Cell,
        /// Whose the cell is, if anyone's.
        blocker: Option<Blocker>,
    },
    /// No pose update within the watchdog while it moves.
    StalePose {
        /// Age of the last one, s.
        age_s: f64,
    },
    /// A pose update was refused.
    BadPose(PoseError),
}

/// A pose update that cannot be used.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum PoseError {
    /// NaN or infinite pose or stamp.
    #[error("the pose or its stamp is not finite")]
    NotFinite,
    /// The stamp is not after the last one.
    #[error("stamp {stamp_s} s is not after the last one ({last_s} s)")]
    OutOfOrder {
        /// This stamp.
        stamp_s: f64,
        /// The last one.
        last_s: f64,
    },
    /// The stamp is ahead of the allocator's clock.
    #[error("stamp {stamp_s} s is ahead of the clock ({now_s} s)")]
    FutureStamp {
        /// This stamp.
        stamp_s: f64,
        /// The clock.
        now_s: f64,
    },
    /// No such unit.
    #[error("no such platen unit")]
    UnknownUnit,
    /// Its frame is neither the surface's nor the cell's.
    #[error("its frame_id is neither the surface frame nor the cell frame")]
    UnknownFrame,
}

/// A unit's state after an operation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum UnitStatus {
    /// Standing; it holds its footprint and cord.
    Idle,
    /// Moving under a grant; it holds what is left of the granted area.
    Moving {
        /// The grant's request.
        request_id: u64,
        /// Where it is going.
        goal: Pose2,
    },
    /// It must stop (it keeps what it holds).
    Stopped(StopReason),
}

/// The allocator could not be built: the initial layout is not free.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlatenError {
    /// Two things overlap at the start.
    #[error("platen: `{a}` and `{b}` overlap at the start (cell row {}, column {})", .cell.0, .cell.1)]
    Overlap {
        /// One.
        a: String,
        /// The other.
        b: String,
        /// The first common cell.
        cell: Cell,
    },
    /// Something reaches off the surface at the start.
    #[error("platen: `{0}` reaches off the surface at the start")]
    OffSurface(String),
}

/// What one unit is doing.
#[derive(Clone, Copy, Debug)]
struct Motion {
    request_id: u64,
    from: Pose2,
    goal: Pose2,
    /// Fraction of the path already freed.
    released: f64,
}

#[derive(Clone, Debug)]
struct Unit<M> {
    name: String,
    shape: UnitShape,
    map: M,
    pose: Pose2,
    last_stamp_s: Option<f64>,
    motion: Option<Motion>,
    retry_at_s: f64,
    stopped: Option<StopReason>,
    path: Option<path::PathRun>,
    /// What it asked for and was not granted this cycle (on a path).
    claim: M,
    max_speed_mps: f64,
    max_decel_mps2: f64,
    priority: i64,
}

/// Counters over the allocator's life.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Requests granted whole.
    pub granted: u64,
    /// Requests granted in part.
    pub partial: u64,
    /// Requests denied.
    pub denied: u64,
    /// Requests refused.
    pub refused: u64,
    /// Swept areas tested in searches for a safe point.
    pub probes: u64,
    /// Paths taken.
    pub paths: u64,
}

/// The platen allocator over cell maps `M` ([`BitMap`] in use).
#[derive(Clone, Debug)]
pub struct Allocator<M> {
    grid: Grid,
    settings: AllocationSettings,
    install: Install,
    world: M,
    fixed: M,
    obstacles: Vec<(String, M)>,
    units: Vec<Unit<M>>,
    swept: M,
    tmp: M,
    tmp2: M,
    /// Where a unit would stand at the end of what it asks (see `path`).
    foot: M,
    pieces: Pieces,
    counts: Counts,
    /// Units from the highest priority down.
    order: Vec<usize>,
    /// Each unit's place in `order`.
    rank: Vec<usize>,
    /// The claims of this cycle's units so far (see `path`).
    claims: M,
}

/// The allocator in use.
pub type BitAllocator = Allocator<BitMap>;
/// The naive reference (one `bool` per cell).
pub type NaiveAllocator = Allocator<BoolMap>;

impl<M: CellMap> Allocator<M> {
    /// Builds the maps of `platen`: obstacles, then each unit's footprint
    /// and cord at its initial pose. Fails when any two overlap or any
    /// reaches off the surface.
    pub fn new(platen: &Platen) -> Result<Allocator<M>, PlatenError> {
        let grid = Grid::new(platen.size_xy_m, platen.cell_m);
        let mut pieces = Pieces::default();
        let mut world = M::new_world(&grid);
        let mut fixed = M::new(&grid);
        let mut obstacles = Vec::new();
        for o in &platen.obstacles {
            let mut m = M::new(&grid);
            for part in geom::convex_parts(&o.polygon_xy_m) {
                m.raster(&grid, &part);
            }
            fixed.or_from(&m);
            obstacles.push((o.name.clone(), m));
        }
        let mut units = Vec::new();
        for u in &platen.units {
            let shape = UnitShape::new(u);
            let mut map = M::new(&grid);
            pieces.clear();
            shape.static_pieces(u.initial_pose, &mut pieces);
            for (i, p) in pieces.iter().enumerate() {
                if pieces.is_body(i) && grid.off_surface(p) {
                    return Err(PlatenError::OffSurface(u.name.clone()));
                }
                map.raster(&grid, p);
            }
            units.push(Unit {
                name: u.name.clone(),
                shape,
                map,
                pose: u.initial_pose,
                last_stamp_s: None,
                motion: None,
                retry_at_s: f64::NEG_INFINITY,
                stopped: None,
                path: None,
                claim: M::new(&grid),
                max_speed_mps: u.max_speed_mps,
                max_decel_mps2: u.max_decel_mps2,
                priority: u.priority,
            });
        }
        // No unit may overlap an obstacle or a later unit at the start.
        for (i, u) in units.iter().enumerate() {
            let others = obstacles.iter().map(|(n, m)| (n, m)).chain(units[i + 1..].iter().map(|v| (&v.name, &v.map)));
            for (b, mb) in others {
                if let Some(cell) = u.map.first_common(mb) {
                    return Err(PlatenError::Overlap { a: u.name.clone(), b: b.clone(), cell });
                }
            }
        }
        world.or_from(&fixed);
        for u in &units {
            world.or_from(&u.map);
        }
        let mut order: Vec<usize> = (0..units.len()).collect();
        order.sort_by_key(|&i| (std::cmp::Reverse(platen.units[i].priority), i));
        let mut rank = vec![0; order.len()];
        for (k, &i) in order.iter().enumerate() {
            rank[i] = k;
        }
        Ok(Allocator {
            claims: M::new(&grid),
            order,
            rank,
            grid,
            settings: platen.allocation,
            install: Install::AsYouGo,
            world,
            fixed,
            obstacles,
            units,
            swept: M::new(&grid),
            tmp: M::new(&grid),
            tmp2: M::new(&grid),
            foot: M::new(&grid),
            pieces,
            counts: Counts::default(),
        })
    }

    /// Chooses how swept areas are installed (both give the same answers).
    pub fn set_install(&mut self, how: Install) {
        self.install = how;
    }

    /// The grid.
    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// Number of units.
    pub fn units(&self) -> usize {
        self.units.len()
    }

    /// A unit's name.
    pub fn unit_name(&self, unit: usize) -> &str {
        &self.units[unit].name
    }

    /// An obstacle's name.
    pub fn obstacle_name(&self, i: usize) -> &str {
        &self.obstacles[i].0
    }

    /// A blocker's name.
    pub fn blocker_name(&self, b: Blocker) -> &str {
        match b {
            Blocker::Unit(i) => self.unit_name(i),
            Blocker::Obstacle(i) => self.obstacle_name(i),
            Blocker::Edge => "the surface's edge",
        }
    }

    /// A unit's last known pose.
    pub fn pose(&self, unit: usize) -> Pose2 {
        self.units[unit].pose
    }

    /// A unit's shape.
    pub fn shape(&self, unit: usize) -> &UnitShape {
        &self.units[unit].shape
    }

    /// The world map.
    pub fn world(&self) -> &M {
        &self.world
    }

    /// A unit's map.
    pub fn unit_map(&self, unit: usize) -> &M {
        &self.units[unit].map
    }

    /// The counters.
    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// A unit's status at `now_s` (the pose watchdog applies while it moves).
    pub fn status(&self, unit: usize, now_s: f64) -> UnitStatus {
        let u = &self.units[unit];
        if let Some(s) = u.stopped {
            return UnitStatus::Stopped(s);
        }
        let on_path = u.path.as_ref().map(|p| (p.request_id, p.goal()));
        match u.motion.map(|m| (m.request_id, m.goal)).or(on_path) {
            None => UnitStatus::Idle,
            Some((request_id, goal)) => {
                let age_s = u.last_stamp_s.map_or(f64::INFINITY, |t| now_s - t);
                if age_s > self.settings.pose_timeout_s {
                    UnitStatus::Stopped(StopReason::StalePose { age_s })
                } else {
                    UnitStatus::Moving { request_id, goal }
                }
            }
        }
    }

    /// Takes a pose update of `unit`: checks the unit is within what it
    /// holds, frees what it has passed, and on arrival keeps only its
    /// footprint and cord. Returns its status.
    // long: a pose update's checks in the order the allocator's invariants need them
    pub fn pose_update(&mut self, now_s: f64, unit: usize, stamp_s: f64, pose: Pose2) -> UnitStatus {
        let Some(u) = self.units.get_mut(unit) else {
            return UnitStatus::Stopped(StopReason::BadPose(PoseError::UnknownUnit));
        };
        let bad = if !(stamp_s.is_finite() && pose.iter().all(|v| v.is_finite())) {
            Some(PoseError::NotFinite)
        } else if let Some(last_s) = u.last_stamp_s.filter(|&l| stamp_s <= l) {
            Some(PoseError::OutOfOrder { stamp_s, last_s })
        } else if stamp_s > now_s {
            Some(PoseError::FutureStamp { stamp_s, now_s })
        } else {
            None
        };
        if let Some(e) = bad {
            u.stopped = Some(StopReason::BadPose(e));
            return self.status(unit, now_s);
        }
        u.last_stamp_s = Some(stamp_s);
        u.pose = pose;
        // Where the unit stands now must be inside what it holds.
        self.pieces.clear();
        u.shape.static_pieces(pose, &mut self.pieces);
        self.tmp.clear();
        let mut on = true;
        for (i, p) in self.pieces.iter().enumerate() {
            on &= !(self.pieces.is_body(i) && self.grid.off_surface(p));
            self.tmp.raster(&self.grid, p);
        }
        let outside = self.tmp.first_outside(&self.units[unit].map);
        if !on || outside.is_some() {
            // Name what it stands on, if anything: the first cell it shares
            // with the world less its own map.
            self.world.xor_from(&self.units[unit].map);
            let taken = self.world.first_common(&self.tmp);
            self.world.xor_from(&self.units[unit].map);
            let (cell, blocker) = match (taken, outside) {
                (Some(c), _) => (c, self.owner(c, unit)),
                (None, Some(c)) if on => (c, None),
                (None, c) => (c.unwrap_or((0, 0)), Some(Blocker::Edge)),
            };
            self.tmp.clear();
            self.units[unit].stopped = Some(StopReason::Breach { cell, blocker });
            return self.status(unit, now_s);
        }
        self.units[unit].stopped = None;
        let Some(m) = self.units[unit].motion else { return self.status(unit, now_s) };
        let tol = &self.settings;
        let arrived = (pose[0] - m.goal[0]).hypot(pose[1] - m.goal[1]) <= tol.arrive_tolerance_m
            && wrap(pose[2] - m.goal[2]).abs() <= tol.arrive_tolerance_rad;
        // Keep what lies ahead of the unit (from a lag behind it, or from
        // where it stands once it has arrived: it may still settle onto the
        // goal) and where it stands; free the rest.
        let start = if arrived {
            pose
        } else {
            let d = [m.goal[0] - m.from[0], m.goal[1] - m.from[1]];
            let len2 = d[0] * d[0] + d[1] * d[1];
            let turn = wrap(m.goal[2] - m.from[2]);
            let t = if len2 > 1e-18 {
                ((pose[0] - m.from[0]) * d[0] + (pose[1] - m.from[1]) * d[1]) / len2
            } else if turn != 0.0 {
                wrap(pose[2] - m.from[2]) / turn
            } else {
                0.0
            };
            let travel = len2.sqrt() + self.units[unit].shape.r_max * turn.abs();
            let lag = if travel > 0.0 { self.settings.release_lag_m / travel } else { 1.0 };
            let released = (t - lag).clamp(0.0, 1.0).max(m.released);
            if let Some(mm) = self.units[unit].motion.as_mut() {
                mm.released = released;
            }
            pose_at(m.from, m.goal, released)
        };
        self.sweep_into_tmp2(unit, start, m.goal);
        self.tmp2.or_from(&self.tmp);
        self.world.xor_from(&self.units[unit].map);
        let u = &mut self.units[unit];
        u.map.and_from(&self.tmp2);
        if arrived {
            u.motion = None;
        }
        self.tmp2.clear();
        self.tmp.clear();
        self.world.xor_from(&self.units[unit].map);
        self.status(unit, now_s)
    }

    /// Stops `unit` for a pose update that could not be read (`e`); a good
    /// pose update releases it, as after any refused one.
    pub fn refuse_pose(&mut self, unit: usize, e: PoseError) {
        if let Some(u) = self.units.get_mut(unit) {
            u.stopped = Some(StopReason::BadPose(e));
        }
    }

    /// Checks world = fixed ∪ every unit's map, with no two units' maps (or
    /// a unit's and an obstacle's) sharing a cell. Panics otherwise (tests).
    pub fn assert_invariants(&self) {
        let mut union = M::new(&self.grid);
        union.or_from(&self.fixed);
        for (i, u) in self.units.iter().enumerate() {
            if let Some(c) = self.fixed.first_common(&u.map) {
                // invariant: assert_invariants is a test check: it panics by design
                panic!("unit {} overlaps a fixed obstacle at {c:?}", u.name);
            }
            for v in &self.units[i + 1..] {
                if let Some(c) = u.map.first_common(&v.map) {
                    // invariant: assert_invariants is a test check: it panics by design
                    panic!("units {} and {} overlap at {c:?}", u.name, v.name);
                }
            }
            union.or_from(&u.map);
        }
        assert!(union.same(&self.world), "the world map is not fixed ∪ units");
        assert_eq!(union.count(), self.world.count());
    }
}
