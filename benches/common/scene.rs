//! The scene the guard benchmarks share: 4 arms (the sample cell's two and
//! copies of them on two more pedestals), each swinging every joint so that
//! its stopping path is checked at 8 configurations, against a 4 × 4 × 2 m
//! field at 2 cm; optionally each following that motion as a planned
//! trajectory the guard has.

use std::hint::black_box;
use std::time::Instant;
use workcell_guard_core::field::DistanceField;
use workcell_guard_core::forecast::track::JointPlan;
use workcell_guard_core::guard::{Guard, Inputs, JointStateIn};
use workcell_guard_core::model::coverage::Rng;
use workcell_guard_description::workcell::{self, Workcell};
use workcell_guard_sim::arms::{self as sim, Sim, SimOptions};

const DT: f64 = 0.002;

pub struct Scene {
    /// The guard under test.
    pub guard: Guard,
    start: Vec<Vec<f64>>,
    phase: Vec<Vec<f64>>,
    /// Per joint, its swing's amplitude.
    amp: Vec<Vec<f64>>,
    q: Vec<Vec<f64>>,
    /// Its clock, s.
    pub t: f64,
}

impl Scene {
    /// Every joint swings ±0.05 rad at 12 rad/s (0.6 rad/s peak), or less
    /// where 90 % of its URDF speed limit is less (the fingers): a motion
    /// the guard takes as plausible.
    pub fn step(&mut self) {
        self.t += DT;
        for (r, q) in self.q.iter_mut().enumerate() {
            for (j, x) in q.iter_mut().enumerate() {
                *x = self.start[r][j] + self.amp[r][j] * (12.0 * self.t + self.phase[r][j]).sin();
            }
        }
        let inputs: Vec<JointStateIn> = self
            .q
            .iter()
            .enumerate()
            .map(|(r, q)| JointStateIn { robot: r, stamp_s: self.t, positions: q, velocities: None })
            .collect();
        black_box(self.guard.step(self.t, &Inputs::joints(&inputs)).manipulators);
    }
}

/// Median wall time of `cycles` steps, µs.
pub fn median_us(scene: &mut Scene, cycles: usize) -> f64 {
    let mut t: Vec<f64> = (0..cycles)
        .map(|_| {
            let s = Instant::now();
            scene.step();
            s.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

/// The bench cell and a clear start for its four arms.
pub struct Bench {
    /// The cell (4 arms).
    pub cell: Workcell,
    field: DistanceField,
    /// The arms' clear start.
    pub start: Vec<Vec<f64>>,
    /// The collision matrix cache.
    pub cache: tempfile::TempDir,
}

impl Bench {
    /// Loads the sample cell, makes its 4-arm twin and finds a clear start;
    /// with `facing`, its first two arms turned part way towards each
    /// other, still clear, so that their increments meet.
    pub fn new(facing: bool) -> Bench {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let base = workcell::load(&root.join("config/workcell.yaml")).expect("sample cell");
        let mut cell = sim::cell_with_arms(&base, 4);
        // 4 × 4 × 2 m at 2 cm; 7 intervals = 8 configurations per stopping path.
        cell.voxel_grid.dims = [200, 200, 100];
        cell.guard.max_path_samples = 7;
        cell.guard.near_path_samples = 7;
        let cache = tempfile::tempdir().unwrap();
        let mut s = Sim::new(cell.clone(), SimOptions::default(), Some(cache.path())).unwrap();
        let mut start = s.clear_start(&mut Rng::new(3)).expect("a clear start for four arms");
        if facing {
            start[0] = vec![0.9, 0.7, 1.1, 0.0, 0.0, 0.0, 0.02];
            start[1] = vec![-0.9, 1.2, 0.0, -0.3, 0.0, 0.0, 0.0, 0.0];
        }
        let field = DistanceField::from_workcell(&cell);
        Bench { cell, field, start, cache }
    }

    /// A scene after 400 warm-up cycles: robot-vs-robot by all pairs or
    /// the hash; every arm on its plan or none.
    pub fn scene(&self, all_pairs: bool, plans: bool) -> Scene {
        self.scene_from(&self.start, all_pairs, plans)
    }

    /// [`Bench::scene`] with the arms swinging about `start` instead.
    pub fn scene_from(&self, start: &[Vec<f64>], all_pairs: bool, plans: bool) -> Scene {
        let cell = &self.cell;
        let mut guard =
            workcell_guard_description::build_guard(cell, self.field.clone(), Some(self.cache.path())).unwrap().0;
        guard.set_all_pairs(all_pairs);
        let mut rng = Rng::new(17);
        let phase = start.iter().map(|q| q.iter().map(|_| rng.range(0.0, std::f64::consts::TAU)).collect()).collect();
        let amp = cell
            .manipulators
            .iter()
            .map(|m| {
                (0..m.robot.dof())
                    .map(|d| m.robot.dof_joint(d).limits.map_or(0.05, |l| (0.9 * l.velocity / 12.0).min(0.05)))
                    .collect()
            })
            .collect();
        let mut sc = Scene { guard, start: start.to_vec(), phase, amp, q: start.to_vec(), t: 0.0 };
        if plans {
            // Each arm's motion as the plan it follows: waypoints every 10 ms
            // over ten minutes (what a controller is handed;
            // long enough that no benchmark runs off its end).
            for r in 0..sc.q.len() {
                let dof = sc.q[r].len();
                let times: Vec<f64> = (0..60_000).map(|k| k as f64 * 0.01).collect();
                let positions = times
                    .iter()
                    .flat_map(|&t| (0..dof).map(move |j| (t, j)))
                    .map(|(t, j)| sc.start[r][j] + sc.amp[r][j] * (12.0 * t + sc.phase[r][j]).sin())
                    .collect();
                let plan = JointPlan::new(dof, times, positions).expect("a finite, ordered plan");
                sc.guard.set_plan(r, Some(plan)).expect("the arm's joint count");
            }
        }
        for _ in 0..400 {
            sc.step();
        }
        sc
    }
}
