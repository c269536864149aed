//! The workcell description: what is in the cell and how to guard it.
//!
//! Read in stages, as the STYLE notes ask: the YAML is parsed into raw
//! structs that refuse unknown keys (`raw`), then [`load`] validates every
//! value and cross-reference and builds the core objects (URDFs loaded,
//! sphere models fitted or read). Every error names the file, the key path
//! and the bad value. Safety-relevant values (margins, decelerations,
//! reaction times, priorities, the grid where there are manipulators) have
//! no defaults.
//!
//! Units are in the key names: `_m`, `_s`, `_rad`, `_mps`, `_radps2`,
//! `_mps2`. Decelerations are per actuated joint, `max_decel_radps2` for
//! rotational joints and `max_decel_mps2` for prismatic ones; every actuated
//! joint must have one, and naming a joint the URDF lacks is an error.
//! A manipulator's optional `stopping:` section (inline, or `{file: …}`)
//! holds the stopping model `workcell_guard calibrate` fitted
//! ([`crate::stopping_file`]).

mod manipulator;
mod raw;

use manipulator::manipulator;

pub use workcell_guard_core::cell::*;

use crate::urdf::{self, ModelError};
pub use crate::yaml::parse_yaml;
use crate::{mesh, resolve, sphere_file};
use raw::*;
use std::collections::{BTreeMap, HashSet};
use std::fmt::Debug;
use std::path::{Path, PathBuf};
use workcell_guard_core::field::Outside;

/// A platen unit's braking when its file gives none, m/s² (documented in
/// the sample workcell).
pub const DEFAULT_UNIT_DECEL_MPS2: f64 = 2.0;
use workcell_guard_core::frame::Frame;
use workcell_guard_core::model::coverage;
use workcell_guard_core::model::geometry::Shape;
use workcell_guard_core::model::{SphereModel, SphereParams};

/// A workcell file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{file}: cannot read: {source}")]
    Io {
        /// The file.
        file: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The YAML is malformed, has an unknown key, or a value of the wrong type.
    #[error("{file}: {error}")]
    Parse {
        /// The file.
        file: PathBuf,
        /// Key path, e.g. `manipulators[0].joints` (as in `error`).
        key: String,
        /// Where and why.
        error: Box<crate::yaml::YamlError>,
    },
    /// A value is out of range, or names something that does not exist.
    #[error("{file}: {key} = {value}: {problem}")]
    Invalid {
        /// The file.
        file: PathBuf,
        /// Key path.
        key: String,
        /// The value as read.
        value: String,
        /// What is wrong.
        problem: String,
    },
    /// A robot description named by the file cannot be used.
    #[error("{file}: {key}: {source}")]
    Model {
        /// The workcell file.
        file: PathBuf,
        /// Key path of the reference.
        key: String,
        /// Why.
        source: Box<ModelError>,
    },
    /// A sphere file named by the workcell cannot be used.
    #[error("{file}: {key}: {source}")]
    SphereFile {
        /// The workcell file.
        file: PathBuf,
        /// Key path of the reference.
        key: String,
        /// Why.
        source: Box<sphere_file::SphereFileError>,
    },
}

struct Ctx<'a> {
    file: &'a Path,
}

impl Ctx<'_> {
    fn invalid(&self, key: impl Into<String>, value: impl Debug, problem: impl Into<String>) -> ConfigError {
        ConfigError::Invalid {
            file: self.file.to_path_buf(),
            key: key.into(),
            value: format!("{value:?}"),
            problem: problem.into(),
        }
    }
    fn finite(&self, key: &str, v: f64) -> Result<f64, ConfigError> {
        if v.is_finite() { Ok(v) } else { Err(self.invalid(key, v, "must be a finite number")) }
    }
    fn positive(&self, key: &str, v: f64) -> Result<f64, ConfigError> {
        if v.is_finite() && v > 0.0 { Ok(v) } else { Err(self.invalid(key, v, "must be positive and finite")) }
    }
    fn non_negative(&self, key: &str, v: f64) -> Result<f64, ConfigError> {
        if v.is_finite() && v >= 0.0 {
            Ok(v)
        } else {
            Err(self.invalid(key, v, "must be zero or positive, and finite"))
        }
    }
    fn finite_n<const N: usize>(&self, key: &str, v: [f64; N]) -> Result<[f64; N], ConfigError> {
        if v.iter().all(|c| c.is_finite()) {
            Ok(v)
        } else {
            Err(self.invalid(key, v, "every entry must be a finite number"))
        }
    }
    fn pose(&self, key: &str, p: &RawPose) -> Result<Frame, ConfigError> {
        let xyz = self.finite_n(&format!("{key}.xyz_m"), p.xyz_m)?;
        let rpy = self.finite_n(&format!("{key}.rpy_rad"), p.rpy_rad)?;
        Ok(Frame::from_xyz_rpy(xyz, rpy))
    }
    fn name(&self, key: &str, name: &str, seen: &mut HashSet<String>) -> Result<String, ConfigError> {
        let ok = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit());
        if !ok {
            return Err(self.invalid(
                key,
                name,
                "names are letters, digits and '_', not starting with a digit (they become ROS topic names)",
            ));
        }
        if !seen.insert(name.to_string()) {
            return Err(self.invalid(key, name, "this name is used twice in the cell"));
        }
        Ok(name.to_string())
    }
    fn topic(&self, key: &str, t: &str) -> Result<String, ConfigError> {
        let ok = !t.is_empty()
            && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '/' || c == '~')
            && !t.contains("//")
            && !t.ends_with('/');
        if ok { Ok(t.to_string()) } else { Err(self.invalid(key, t, "not a valid ROS topic name")) }
    }
}

/// Reads and validates a workcell file.
pub fn load(file: &Path) -> Result<Workcell, ConfigError> {
    let text = std::fs::read_to_string(file).map_err(|source| ConfigError::Io { file: file.to_path_buf(), source })?;
    load_str(&text, file)
}

/// Validates workcell YAML; `file` names it in errors and anchors relative paths.
pub fn load_str(text: &str, file: &Path) -> Result<Workcell, ConfigError> {
    let raw: RawWorkcell = parse_yaml(text).map_err(|e| ConfigError::Parse {
        file: file.to_path_buf(),
        key: e.key.clone(),
        error: Box::new(e),
    })?;
    let cx = Ctx { file };
    validate(&cx, raw)
}

// long: one validated section after another, each a line or two
fn validate(cx: &Ctx, raw: RawWorkcell) -> Result<Workcell, ConfigError> {
    if raw.cell_frame.is_empty() || raw.cell_frame.contains(char::is_whitespace) {
        return Err(cx.invalid("cell_frame", &raw.cell_frame, "must be a tf frame name"));
    }
    let margins = Margins {
        clearance_m: cx.non_negative("margins.clearance_m", raw.margins.clearance_m)?,
        release_m: cx.non_negative("margins.release_m", raw.margins.release_m)?,
    };
    if margins.release_m < margins.clearance_m {
        return Err(cx.invalid(
            "margins.release_m",
            margins.release_m,
            format!(
                "must be at least margins.clearance_m ({}), or a released robot would stop again at once",
                margins.clearance_m
            ),
        ));
    }
    // The field is what the manipulators are checked against: a cell of
    // platen units alone needs none, and gets one voxel nothing reads.
    let voxel_grid = match (&raw.voxel_grid, raw.manipulators.is_empty()) {
        (Some(g), _) => voxel_grid(cx, g)?,
        (None, true) => VoxelGrid::UNUSED,
        (None, false) => {
            return Err(cx.invalid(
                "voxel_grid",
                "(missing)",
                "required when the cell has manipulators: they are checked against its distance field",
            ));
        }
    };

    let mut names = HashSet::new();
    if raw.manipulators.is_empty() && raw.platen.is_none() {
        return Err(cx.invalid(
            "manipulators",
            "[]",
            "a workcell needs a manipulator or a platen with units: there is nothing to guard",
        ));
    }
    let mut manipulators = Vec::new();
    let mut priorities = BTreeMap::new();
    for (i, m) in raw.manipulators.iter().enumerate() {
        let key = format!("manipulators[{i}]");
        let man = manipulator(cx, &key, m, &mut names)?;
        if let Some(other) = priorities.insert(man.priority, man.name.clone()) {
            return Err(cx.invalid(
                format!("{key}.priority"),
                man.priority,
                format!("`{other}` has the same priority; priorities decide who proceeds and must differ"),
            ));
        }
        manipulators.push(man);
    }

    let platen = raw.platen.as_ref().map(|p| platen(cx, p, &mut names)).transpose()?;

    let mut obstacles = Vec::new();
    for (i, o) in raw.obstacles.iter().enumerate() {
        let key = format!("obstacles[{i}]");
        obstacles.push(Obstacle {
            name: cx.name(&format!("{key}.name"), &o.name, &mut names)?,
            pose: cx.pose(&format!("{key}.pose"), &o.pose)?,
            shape: obstacle_shape(cx, &format!("{key}.geometry"), &o.geometry)?,
        });
    }

    let mut allowed_contacts = Vec::new();
    for (i, [a, b]) in raw.allowed_contacts.iter().enumerate() {
        let key = format!("allowed_contacts[{i}]");
        let ra = body_ref(cx, &format!("{key}[0]"), a, &manipulators, &obstacles, platen.as_ref())?;
        let rb = body_ref(cx, &format!("{key}[1]"), b, &manipulators, &obstacles, platen.as_ref())?;
        if ra == rb {
            return Err(cx.invalid(&key, [a, b], "a body cannot be allowed to touch itself"));
        }
        allowed_contacts.push((ra, rb));
    }

    Ok(Workcell {
        file: cx.file.to_path_buf(),
        cell_frame: raw.cell_frame,
        margins,
        voxel_grid,
        manipulators,
        platen,
        obstacles,
        allowed_contacts,
        guard: guard_settings(cx, raw.guard.as_ref())?,
    })
}

fn guard_settings(cx: &Ctx, g: Option<&RawGuard>) -> Result<GuardSettings, ConfigError> {
    let mut s = GuardSettings::default();
    let Some(g) = g else { return Ok(s) };
    if let Some(v) = g.watchdog_s {
        s.watchdog_s = cx.positive("guard.watchdog_s", v)?;
    }
    if let Some(v) = g.release_hold_s {
        s.release_hold_s = cx.non_negative("guard.release_hold_s", v)?;
    }
    if let Some(v) = g.velocity_filter_window {
        s.velocity_filter_window = bounded(cx, "guard.velocity_filter_window", v, 1, 64)?;
    }
    if let Some(v) = g.velocity_fit_window_s {
        if !(v.is_finite() && (0.0..=0.5).contains(&v)) {
            return Err(cx.invalid(
                "guard.velocity_fit_window_s",
                v,
                "must be within 0..=0.5 s (0: five-point differences)",
            ));
        }
        s.velocity_fit_window_s = v;
    }
    if let Some(v) = g.max_path_samples {
        s.max_path_samples = bounded(cx, "guard.max_path_samples", v, 1, 1024)?;
    }
    match g.near_path_samples {
        Some(v) => {
            s.near_path_samples = bounded(cx, "guard.near_path_samples", v, 1, 1024)?;
            if s.near_path_samples < s.max_path_samples {
                return Err(cx.invalid(
                    "guard.near_path_samples",
                    v,
                    format!("must be at least guard.max_path_samples ({})", s.max_path_samples),
                ));
            }
        }
        // Unset: the default, or the cap itself when that is higher.
        None => s.near_path_samples = s.near_path_samples.max(s.max_path_samples),
    }
    if let Some(v) = g.matrix_samples {
        s.matrix_samples = bounded(cx, "guard.matrix_samples", v, 100, 1_000_000)?;
    }
    if let Some(v) = g.matrix_never_slack_m {
        s.matrix_never_slack_m = cx.non_negative("guard.matrix_never_slack_m", v)?;
    }
    if let Some(v) = g.exact_links {
        s.exact_links = v;
    }
    Ok(s)
}

fn bounded(cx: &Ctx, key: &str, v: i64, lo: i64, hi: i64) -> Result<usize, ConfigError> {
    if (lo..=hi).contains(&v) {
        Ok(v as usize)
    } else {
        Err(cx.invalid(key, v, format!("must be between {lo} and {hi}")))
    }
}

fn voxel_grid(cx: &Ctx, g: &RawVoxelGrid) -> Result<VoxelGrid, ConfigError> {
    let origin_m = cx.finite_n("voxel_grid.origin_m", g.origin_m)?;
    let res = cx.positive("voxel_grid.resolution_m", g.resolution_m)?;
    let mut dims = [0usize; 3];
    for (k, s) in g.size_m.iter().enumerate() {
        let s = cx.positive(&format!("voxel_grid.size_m[{k}]"), *s)?;
        let n = (s / res - 1e-9).ceil();
        if n < 1.0 || n > workcell_guard_core::field::edt::MAX_AXIS as f64 {
            return Err(cx.invalid(
                format!("voxel_grid.size_m[{k}]"),
                s,
                format!(
                    "gives no voxel, or more than {} voxels along this axis, at this resolution",
                    workcell_guard_core::field::edt::MAX_AXIS
                ),
            ));
        }
        dims[k] = n as usize;
    }
    let total = dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d));
    if total.is_none_or(|t| t > MAX_VOXELS) {
        return Err(cx.invalid(
            "voxel_grid",
            format!("{dims:?} voxels"),
            format!("more than {MAX_VOXELS} voxels; raise resolution_m or shrink size_m"),
        ));
    }
    let max_distance_m = cx.positive("voxel_grid.max_distance_m", g.max_distance_m)?;
    if max_distance_m < 2.0 * res {
        return Err(cx.invalid(
            "voxel_grid.max_distance_m",
            max_distance_m,
            format!("below two voxels ({} m): the field could not tell any sphere clear", 2.0 * res),
        ));
    }
    Ok(VoxelGrid {
        origin_m,
        resolution_m: res,
        dims,
        max_distance_m,
        outside: match g.outside {
            None | Some(RawOutside::Collision) => Outside::Collision,
            Some(RawOutside::Free) => Outside::Free,
        },
    })
}

fn count(cx: &Ctx, key: &str, v: i64) -> Result<usize, ConfigError> {
    if (1..=4096).contains(&v) { Ok(v as usize) } else { Err(cx.invalid(key, v, "must be between 1 and 4096")) }
}

fn obstacle_shape(cx: &Ctx, key: &str, g: &RawGeometry) -> Result<Shape, ConfigError> {
    Ok(match g {
        RawGeometry::Box { size_m } => {
            let k = format!("{key}.box.size_m");
            let s = cx.finite_n(&k, *size_m)?;
            for v in s {
                cx.positive(&k, v)?;
            }
            Shape::Box { half_extents: s.map(|v| v / 2.0) }
        }
        RawGeometry::Sphere { radius_m } => {
            Shape::Sphere { radius: cx.positive(&format!("{key}.sphere.radius_m"), *radius_m)? }
        }
        RawGeometry::Cylinder { radius_m, length_m } => Shape::Cylinder {
            radius: cx.positive(&format!("{key}.cylinder.radius_m"), *radius_m)?,
            length: cx.positive(&format!("{key}.cylinder.length_m"), *length_m)?,
        },
        RawGeometry::Mesh { uri, scale } => {
            let k = format!("{key}.mesh.uri");
            let path = resolve::resolve(uri, cx.file).map_err(|e| cx.invalid(&k, uri, e.to_string()))?;
            let scale = cx.finite_n(&format!("{key}.mesh.scale"), scale.unwrap_or([1.0; 3]))?;
            Shape::Mesh(mesh::load(&path, scale).map_err(|e| cx.invalid(&k, uri, e.to_string()))?)
        }
    })
}

// long: one validated key after another, each a line or two
fn platen(cx: &Ctx, p: &RawPlaten, names: &mut HashSet<String>) -> Result<Platen, ConfigError> {
    let pose = cx.pose("platen.surface.pose", &p.surface.pose)?;
    let size = cx.finite_n("platen.surface.size_xy_m", p.surface.size_xy_m)?;
    for v in size {
        cx.positive("platen.surface.size_xy_m", v)?;
    }
    let cell_m = cx.positive("platen.surface.cell_m", p.surface.cell_m)?;
    if size.iter().any(|s| s / cell_m > 65_536.0) {
        return Err(cx.invalid("platen.surface.cell_m", cell_m, "more than 65536 cells along an edge"));
    }
    let inside = |q: [f64; 2]| q[0] >= 0.0 && q[1] >= 0.0 && q[0] <= size[0] && q[1] <= size[1];
    let outside_msg = format!("outside the surface (0..{}, 0..{})", size[0], size[1]);
    let mut obstacles = Vec::new();
    for (i, o) in p.obstacles.iter().enumerate() {
        let key = format!("platen.obstacles[{i}]");
        let name = cx.name(&format!("{key}.name"), &o.name, names)?;
        let polygon_xy_m = simple_polygon(cx, &format!("{key}.polygon_xy_m"), &o.polygon_xy_m)?;
        obstacles.push(PlatenObstacle { name, polygon_xy_m });
    }
    let mut units = Vec::new();
    for (i, u) in p.units.iter().enumerate() {
        let key = format!("platen.units[{i}]");
        let name = cx.name(&format!("{key}.name"), &u.name, names)?;
        let fp = simple_polygon(cx, &format!("{key}.footprint_xy_m"), &u.footprint_xy_m)?;
        let umbilical = match &u.umbilical {
            None => None,
            Some(c) => {
                let ck = format!("{key}.umbilical");
                let anchor_xy_m = cx.finite_n(&format!("{ck}.anchor_xy_m"), c.anchor_xy_m)?;
                if !inside(anchor_xy_m) {
                    return Err(cx.invalid(format!("{ck}.anchor_xy_m"), anchor_xy_m, outside_msg));
                }
                let mut via_xy_m = Vec::new();
                for (k, v) in c.via_xy_m.iter().enumerate() {
                    let vk = format!("{ck}.via_xy_m[{k}]");
                    let v = cx.finite_n(&vk, *v)?;
                    if !inside(v) {
                        return Err(cx.invalid(vk, v, outside_msg));
                    }
                    via_xy_m.push(v);
                }
                let attach_xy_m = cx.finite_n(&format!("{ck}.attach_xy_m"), c.attach_xy_m.unwrap_or([0.0, 0.0]))?;
                let width_m = cx.positive(&format!("{ck}.width_m"), c.width_m)?;
                Some(Umbilical { anchor_xy_m, via_xy_m, attach_xy_m, width_m })
            }
        };
        let ip = &u.initial_pose;
        let pk = format!("{key}.initial_pose");
        let pose3 = [
            cx.finite(&format!("{pk}.x_m"), ip.x_m)?,
            cx.finite(&format!("{pk}.y_m"), ip.y_m)?,
            cx.finite(&format!("{pk}.theta_rad"), ip.theta_rad)?,
        ];
        let (s, c) = pose3[2].sin_cos();
        for v in &fp {
            let w = [pose3[0] + c * v[0] - s * v[1], pose3[1] + s * v[0] + c * v[1]];
            if !inside(w) {
                return Err(cx.invalid(
                    &pk,
                    [pose3[0], pose3[1], pose3[2]],
                    format!("footprint vertex {w:?} lies outside the surface"),
                ));
            }
        }
        units.push(PlatenUnit {
            name,
            footprint_xy_m: fp,
            umbilical,
            max_speed_mps: cx.positive(&format!("{key}.max_speed_mps"), u.max_speed_mps)?,
            max_decel_mps2: match u.max_decel_mps2 {
                Some(v) => cx.positive(&format!("{key}.max_decel_mps2"), v)?,
                None => DEFAULT_UNIT_DECEL_MPS2,
            },
            priority: u.priority.unwrap_or(0),
            initial_pose: pose3,
        });
    }
    let mut allocation = AllocationSettings::default();
    if let Some(a) = &p.allocation {
        let k = |f: &str| format!("platen.allocation.{f}");
        if let Some(v) = a.retry_after_s {
            allocation.retry_after_s = cx.non_negative(&k("retry_after_s"), v)?;
        }
        if let Some(v) = a.pose_timeout_s {
            allocation.pose_timeout_s = cx.positive(&k("pose_timeout_s"), v)?;
        }
        if let Some(v) = a.arrive_tolerance_m {
            allocation.arrive_tolerance_m = cx.non_negative(&k("arrive_tolerance_m"), v)?;
        }
        if let Some(v) = a.arrive_tolerance_rad {
            allocation.arrive_tolerance_rad = cx.non_negative(&k("arrive_tolerance_rad"), v)?;
        }
        if let Some(v) = a.release_lag_m {
            allocation.release_lag_m = cx.non_negative(&k("release_lag_m"), v)?;
        }
        if let Some(v) = a.path_check_s {
            allocation.path_check_s = cx.positive(&k("path_check_s"), v)?;
        }
        if let Some(v) = a.priority_boost_after_s {
            allocation.priority_boost_after_s = Some(cx.positive(&k("priority_boost_after_s"), v)?);
        }
    }
    Ok(Platen { pose, size_xy_m: size, cell_m, units, obstacles, allocation })
}

/// A simple polygon with area, made counter-clockwise.
fn simple_polygon(cx: &Ctx, key: &str, raw: &[[f64; 2]]) -> Result<Vec<[f64; 2]>, ConfigError> {
    let mut fp: Vec<[f64; 2]> = raw.iter().map(|v| cx.finite_n(key, *v)).collect::<Result<_, _>>()?;
    if fp.len() < 3 {
        return Err(cx.invalid(key, &fp, "a polygon needs at least three vertices"));
    }
    let area2: f64 = (0..fp.len())
        .map(|k| {
            let (a, b) = (fp[k], fp[(k + 1) % fp.len()]);
            a[0] * b[1] - b[0] * a[1]
        })
        .sum();
    if area2.abs() < 1e-12 {
        return Err(cx.invalid(key, &fp, "the polygon has no area"));
    }
    if let Some((a, b)) = self_intersection(&fp) {
        return Err(cx.invalid(key, &fp, format!("polygon edges {a} and {b} cross; give a simple polygon")));
    }
    if area2 < 0.0 {
        fp.reverse();
    }
    Ok(fp)
}

/// First pair of non-adjacent polygon edges that intersect.
fn self_intersection(p: &[[f64; 2]]) -> Option<(usize, usize)> {
    let n = p.len();
    let cross = |o: [f64; 2], a: [f64; 2], b: [f64; 2]| (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
    for i in 0..n {
        for j in i + 1..n {
            if j == i + 1 || (i == 0 && j == n - 1) {
                continue;
            }
            let (a, b, c, d) = (p[i], p[(i + 1) % n], p[j], p[(j + 1) % n]);
            let (d1, d2, d3, d4) = (cross(c, d, a), cross(c, d, b), cross(a, b, c), cross(a, b, d));
            if d1 * d2 <= 0.0 && d3 * d4 <= 0.0 {
                return Some((i, j));
            }
        }
    }
    None
}

fn body_ref(
    cx: &Ctx,
    key: &str,
    s: &str,
    mans: &[Manipulator],
    obs: &[Obstacle],
    platen: Option<&Platen>,
) -> Result<BodyRef, ConfigError> {
    if let Some((robot, link)) = s.split_once('/') {
        let Some(ri) = mans.iter().position(|m| m.name == robot) else {
            return Err(cx.invalid(key, s, format!("no manipulator `{robot}`")));
        };
        let Some(li) = mans[ri].robot.link_index(link) else {
            return Err(cx.invalid(key, s, format!("manipulator `{robot}` has no link `{link}`")));
        };
        return Ok(BodyRef::Link { robot: ri, link: li });
    }
    if let Some(i) = obs.iter().position(|o| o.name == s) {
        return Ok(BodyRef::Obstacle(i));
    }
    if let Some(i) = platen.and_then(|p| p.units.iter().position(|u| u.name == s)) {
        return Ok(BodyRef::PlatenUnit(i));
    }
    Err(cx.invalid(key, s, "names no `robot/link`, obstacle or platen unit"))
}
