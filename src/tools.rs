//! The file tools of the command line: `field` (a distance field or an
//! occupancy grid's exact distance transform as `.npy`), `model` (link
//! poses and posed spheres of one configuration) and `spheres` (a robot's
//! sphere set for hand-tuning).

use crate::AnyError;
use std::path::PathBuf;
use workcell_guard_core::Frame;
use workcell_guard_core::field::{self, DistanceField, edt};
use workcell_guard_core::model::{SphereModel, SphereParams, SpherePoser};
use workcell_guard_description::workcell;
use workcell_guard_description::{npy, sphere_file, urdf};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Units {
    Metres,
    Voxels,
    Layers,
    Occupancy,
}

pub(crate) fn field(
    cell: Option<&std::path::Path>,
    occupancy: Option<&std::path::Path>,
    out: &std::path::Path,
    units: Units,
    resolution_m: Option<f64>,
) -> Result<(), AnyError> {
    let start = std::time::Instant::now();
    match (cell, occupancy) {
        (Some(path), occ) => {
            let wc = workcell::load(path)?;
            if let Some(r) = resolution_m
                && r != wc.voxel_grid.resolution_m
            {
                return Err(
                    format!("--resolution-m {r} contradicts the workcell's {}", wc.voxel_grid.resolution_m).into()
                );
            }
            let mut f = DistanceField::from_workcell(&wc);
            if let Some(file) = occ {
                let g = npy::read_occupancy(file, true, false)?;
                if g.dims != f.dims() {
                    return Err(format!(
                        "{}: shape {:?} does not match the workcell's grid {:?}",
                        file.display(),
                        g.dims,
                        f.dims()
                    )
                    .into());
                }
                f.set_sensed_occupancy(&g.values)?;
            }
            let dims = f.dims();
            println!(
                "field of {}: {:?} voxels at {} m, {} occupied, saturated at {} m, outside = {:?}",
                path.display(),
                dims,
                wc.voxel_grid.resolution_m,
                f.occupied_count(),
                f.cap_voxels() as f64 * wc.voxel_grid.resolution_m,
                wc.voxel_grid.outside
            );
            let [nx, ny, _] = dims;
            let occupied = |i: usize| f.occupied([i % nx, (i / nx) % ny, i / (nx * ny)]);
            write_field(out, dims, units, Some(wc.voxel_grid.resolution_m), f.voxel_distances(), &occupied)?;
        }
        (None, Some(file)) => {
            // Read straight into the grid the transform works on: 0 at
            // obstacles, FAR elsewhere; it becomes the distances in place.
            let g = npy::read_occupancy(file, 0.0f32, edt::FAR)?;
            if g.dims.iter().any(|&n| n > edt::MAX_AXIS) {
                return Err(format!("shape {:?}: at most {} voxels per axis", g.dims, edt::MAX_AXIS).into());
            }
            let mut d = g.values;
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
            edt::distances_in_place(&mut d, g.dims, threads);
            println!("exact distance transform of {:?} voxels, {} occupied", g.dims, g.occupied);
            write_field(out, g.dims, units, resolution_m, &d, &|i| d[i] == 0.0)?;
        }
        (None, None) => return Err("give a workcell, an --occupancy grid, or both".into()),
    }
    println!("wrote {} ({:?}, indexed [x, y, z]) in {:.2} s", out.display(), units, start.elapsed().as_secs_f64());
    Ok(())
}

/// Streams the chosen units of a field (`x` fastest) to `out`, converting
/// voxel by voxel: no copy of the grid is made.
fn write_field(
    out: &std::path::Path,
    dims: [usize; 3],
    units: Units,
    res: Option<f64>,
    dist: &[f32],
    occupied: &dyn Fn(usize) -> bool,
) -> Result<(), AnyError> {
    match units {
        Units::Voxels => npy::write_f32(out, dims, dist)?,
        Units::Metres => {
            let r = res.ok_or("--units metres needs a workcell or --resolution-m")? as f32;
            npy::write_items(out, dims, npy::Dtype::F32, dist.iter().map(|d| (d * r).to_le_bytes()))?
        }
        Units::Layers => {
            let layers = dist.iter().map(|&d| field::layer_of(d).to_le_bytes());
            npy::write_items(out, dims, npy::Dtype::U32, layers)?
        }
        Units::Occupancy => npy::write_items(out, dims, npy::Dtype::U8, (0..dist.len()).map(|i| [occupied(i) as u8]))?,
    }
    Ok(())
}

pub(crate) fn model(
    path: &std::path::Path,
    joints: &[String],
    json: bool,
    params: SphereParams,
    sphere_path: Option<PathBuf>,
) -> Result<(), AnyError> {
    if !(params.max_overshoot_m.is_finite() && params.max_overshoot_m > 0.0) || params.max_spheres == 0 {
        return Err(format!(
            "--max-overshoot-m must be positive and --max-spheres at least 1 (got {} and {})",
            params.max_overshoot_m, params.max_spheres
        )
        .into());
    }
    let robot = urdf::load(path)?;
    let mut q = vec![0.0; robot.dof()];
    for spec in joints {
        let (name, value) = spec.split_once('=').ok_or_else(|| format!("--joint `{spec}`: expected NAME=VALUE"))?;
        let v: f64 = value.trim().parse().map_err(|_| format!("--joint `{spec}`: `{value}` is not a number"))?;
        if !v.is_finite() {
            return Err(format!("--joint `{spec}`: value must be finite").into());
        }
        let Some(d) = robot.dof_index(name) else {
            let why = if robot.joint_index(name).is_some() {
                "is fixed or a mimic joint"
            } else {
                "is not a joint of this robot"
            };
            return Err(
                format!("--joint `{spec}`: `{name}` {why} (actuated joints: {})", robot.dof_names.join(", ")).into()
            );
        };
        q[d] = v;
    }
    let spheres = match &sphere_path {
        Some(p) => sphere_file::read(p, &robot)?,
        None => SphereModel::fit(&robot, |_| params),
    };
    let poser = SpherePoser::new(&robot, &spheres, Frame::IDENTITY);
    let mut posed = poser.posed();
    poser.pose(&q, &mut posed)?;

    if json {
        let links: Vec<_> = robot
            .links
            .iter()
            .zip(&posed.frames)
            .map(|(l, f)| serde_json::json!({ "name": l.name, "pose": f.to_row_major() }))
            .collect();
        let spheres: Vec<_> = (0..posed.len())
            .map(|i| serde_json::json!({ "link": robot.links[posed.link[i] as usize].name, "center": [f64::from(posed.x[i]), f64::from(posed.y[i]), f64::from(posed.z[i])], "radius": f64::from(posed.r[i]) }))
            .collect();
        let joints: serde_json::Map<String, serde_json::Value> =
            robot.dof_names.iter().zip(&q).map(|(n, v)| (n.clone(), serde_json::json!(v))).collect();
        let doc = serde_json::json!({ "robot": robot.name, "root_link": robot.links[0].name, "joints": joints, "links": links, "spheres": spheres });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        println!(
            "robot `{}`: {} links, {} actuated joints, {} spheres",
            robot.name,
            robot.links.len(),
            robot.dof(),
            posed.len()
        );
        for (l, f) in robot.links.iter().zip(&posed.frames) {
            let t = f.trans;
            println!("  {:<28} xyz [{:+.6}, {:+.6}, {:+.6}]", l.name, t.x, t.y, t.z);
        }
    }
    Ok(())
}

/// The forms `spheres` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum SphereFormat {
    /// This package's sphere file (read back with `spheres: {file: …}`).
    Yaml,
    /// cuRobo's collision-spheres YAML.
    Curobo,
    /// SRDF `<link_sphere_approximation>` elements.
    Srdf,
}

pub(crate) fn write_spheres(
    path: &std::path::Path,
    robot: &str,
    out: &std::path::Path,
    format: SphereFormat,
) -> Result<(), AnyError> {
    let wc = workcell::load(path)?;
    let m = wc
        .manipulators
        .iter()
        .find(|m| m.name == robot)
        .ok_or_else(|| format!("no manipulator `{robot}` in {}", path.display()))?;
    let text = match format {
        SphereFormat::Yaml => None,
        SphereFormat::Curobo => Some(sphere_file::curobo_text(&m.robot, &m.spheres)),
        SphereFormat::Srdf => Some(sphere_file::srdf_text(&m.robot, &m.spheres)),
    };
    match text {
        None => sphere_file::write(out, &m.robot, &m.spheres)?,
        Some(t) => std::fs::write(out, t).map_err(|e| format!("{}: {e}", out.display()))?,
    }
    println!("wrote {} spheres of `{}` to {}", m.spheres.fine_count(), robot, out.display());
    Ok(())
}
