//! The sample cell, its field, one collision-matrix cache per test binary,
//! and driving a guard with joint states.

use std::sync::OnceLock;
use workcell_guard_core::field::DistanceField;
use workcell_guard_core::guard::{Decision, Guard, Inputs, JointStateIn};
use workcell_guard_core::model::coverage::Rng;
use workcell_guard_description::workcell::{self, Workcell};

pub fn sample_cell() -> &'static Workcell {
    static CELL: OnceLock<Workcell> = OnceLock::new();
    CELL.get_or_init(|| workcell::load(&super::repo().join("config/workcell.yaml")).expect("sample cell loads"))
}

pub fn sample_field() -> DistanceField {
    static FIELD: OnceLock<DistanceField> = OnceLock::new();
    FIELD.get_or_init(|| DistanceField::from_workcell(sample_cell())).clone()
}

/// The matrix cache shared by the tests of this file (computed once).
pub fn cache_dir() -> &'static std::path::Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().unwrap()).path()
}

pub fn feed(g: &mut Guard, qs: &[Vec<f64>], t: f64) -> Vec<Decision> {
    let inputs: Vec<JointStateIn> = qs
        .iter()
        .enumerate()
        .map(|(r, q)| JointStateIn { robot: r, stamp_s: t, positions: q, velocities: None })
        .collect();
    g.step(t, &Inputs::joints(&inputs)).manipulators.to_vec()
}

/// Random joint speeds a controller could make (within 90 % of each
/// joint's URDF limit, up to 0.3 rad/s or m/s), but the first two arms'
/// first joints turning them towards each other at 1 rad/s.
pub fn random_speeds(cell: &Workcell, rng: &mut Rng) -> Vec<Vec<f64>> {
    let mut v: Vec<Vec<f64>> = cell
        .manipulators
        .iter()
        .map(|m| {
            (0..m.robot.dof())
                .map(|d| {
                    let lim = m.robot.dof_joint(d).limits.map_or(f64::INFINITY, |l| 0.9 * l.velocity).min(0.3);
                    rng.range(-lim, lim)
                })
                .collect()
        })
        .collect();
    v[0][0] = -1.0;
    v[1][0] = 1.0;
    v
}

/// A guard of the sample cell.
pub fn guard() -> Guard {
    workcell_guard_description::build_guard(sample_cell(), sample_field(), Some(cache_dir())).unwrap().0
}
