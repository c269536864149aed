//! The collision-matrix cache: a cell's [`CollisionMatrix`] as JSON, named
//! by its geometry key ([`matrix::key`]), so that a restart with the same
//! robots skips the sampling. A file that cannot be read, or that belongs
//! to another geometry or format, is ignored (with a warning) and
//! rewritten.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use workcell_guard_core::cell::Workcell;
use workcell_guard_core::field::DistanceField;
use workcell_guard_core::guard::matrix::{self, CollisionMatrix, FORMAT, PairClass};
use workcell_guard_core::guard::{Guard, GuardError};
use workcell_guard_core::model::SpherePoser;

/// Where the matrix came from.
#[derive(Debug)]
pub enum CacheOutcome {
    /// Read from this file.
    Loaded(PathBuf),
    /// Computed and written to this file.
    Written(PathBuf),
    /// Computed; no cache directory was given.
    Computed,
    /// Computed; the cache could not be read or written (the reason).
    CacheFailed(String),
}

/// One pair that is not `sometimes`: `robot/link` names, its class and
/// its least sampled gap (m).
type CachedPair = (String, String, String, Option<f32>);

#[derive(Serialize, Deserialize)]
struct CacheFile {
    format: u32,
    key: String,
    samples: usize,
    never_slack_m: f64,
    /// Pairs not listed are `sometimes`.
    pairs: Vec<CachedPair>,
}

/// The guard of `cell` over `field`, its collision matrix read from the
/// cache in `cache_dir` when it holds this geometry's, computed (and
/// written there) otherwise.
pub fn build_guard(
    cell: &Workcell,
    field: DistanceField,
    cache_dir: Option<&Path>,
) -> Result<(Guard, CacheOutcome), GuardError> {
    let (matrix, outcome) = load_or_compute(cell, cache_dir);
    Ok((Guard::new(cell, field, matrix)?, outcome))
}

/// The cached matrix when the cache holds this geometry's, else a fresh
/// one (written to the cache when a directory is given).
pub fn load_or_compute(cell: &Workcell, cache_dir: Option<&Path>) -> (CollisionMatrix, CacheOutcome) {
    let compute = || {
        let posers: Vec<SpherePoser> =
            cell.manipulators.iter().map(|m| SpherePoser::new(&m.robot, &m.spheres, m.base)).collect();
        CollisionMatrix::compute(cell, &posers)
    };
    let k = matrix::key(cell);
    let Some(dir) = cache_dir else {
        return (compute(), CacheOutcome::Computed);
    };
    let file = dir.join(format!("collision_matrix-{k:016x}.json"));
    if let Ok(text) = std::fs::read_to_string(&file) {
        match from_json(cell, &text, k) {
            Ok(m) => return (m, CacheOutcome::Loaded(file)),
            Err(why) => tracing::warn!(file = %file.display(), %why, "ignoring the cached collision matrix"),
        }
    }
    let m = compute();
    let write = std::fs::create_dir_all(dir).and_then(|_| {
        let tmp = file.with_extension("json.tmp");
        std::fs::write(&tmp, to_json(&m, cell))?;
        std::fs::rename(&tmp, &file)
    });
    match write {
        Ok(()) => (m, CacheOutcome::Written(file)),
        Err(e) => (m, CacheOutcome::CacheFailed(format!("{}: {e}", file.display()))),
    }
}

/// The matrix as the cache stores it.
pub fn to_json(m: &CollisionMatrix, cell: &Workcell) -> String {
    let names = CollisionMatrix::link_names(cell);
    let pairs =
        m.special_pairs().map(|(a, b, c, g)| (names[a].clone(), names[b].clone(), c.name().to_string(), g)).collect();
    let f = CacheFile {
        format: FORMAT,
        key: format!("{:016x}", m.key()),
        samples: cell.guard.matrix_samples,
        never_slack_m: cell.guard.matrix_never_slack_m,
        pairs,
    };
    // invariant: plain numbers and strings always serialise to JSON
    serde_json::to_string_pretty(&f).expect("plain data serialises")
}

/// Reads a cached matrix back, for the geometry of key `k`.
pub fn from_json(cell: &Workcell, text: &str, k: u64) -> Result<CollisionMatrix, String> {
    let f: CacheFile = serde_json::from_str(text).map_err(|e| e.to_string())?;
    if f.format != FORMAT || f.key != format!("{k:016x}") {
        return Err(format!("format {} key {} (want {FORMAT} {k:016x})", f.format, f.key));
    }
    let names = CollisionMatrix::link_names(cell);
    let index = |s: &str| names.iter().position(|n| n == s).ok_or_else(|| format!("unknown link {s}"));
    let mut pairs = Vec::with_capacity(f.pairs.len());
    for (a, b, c, g) in &f.pairs {
        let class = PairClass::from_name(c).ok_or_else(|| format!("unknown pair class {c}"))?;
        pairs.push((index(a)?, index(b)?, class, *g));
    }
    CollisionMatrix::from_special_pairs(cell, k, pairs)
}
