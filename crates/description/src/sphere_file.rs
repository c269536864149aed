//! Sphere sets as YAML, for users to inspect and hand-tune
//! (`config/spheres/<robot>.yaml`).
//!
//! ```yaml
//! robot: wg_arm7            # the URDF's robot name
//! links:
//!   - link: upper_arm
//!     spheres:
//!       - {center_m: [0.0, 0.0, 0.12], radius_m: 0.07}
//! ```
//! Links left out have no spheres. Reading checks names and radii; the
//! caller then checks coverage against the URDF geometry and warns.

use nalgebra::Point3;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use workcell_guard_core::model::robot::Robot;
use workcell_guard_core::model::spheres::{LinkSpheres, Sphere, SphereModel};

/// A sphere file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SphereFileError {
    /// Could not read or write the file.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The YAML does not have the expected shape.
    #[error("{path}: {key}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// Key path of the problem.
        key: String,
        /// The parser's message.
        message: String,
    },
    /// A value is out of range or names something unknown.
    #[error("{path}: {key} = {value}: {problem}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Key path.
        key: String,
        /// The value.
        value: String,
        /// What is wrong.
        problem: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    robot: String,
    links: Vec<RawLink>,
}

/// What `write` emits: the same shape, each sphere on one line.
#[derive(Serialize)]
struct OutFile {
    robot: String,
    links: Vec<OutLink>,
}

#[derive(Serialize)]
struct OutLink {
    link: String,
    spheres: Vec<serde_saphyr::FlowMap<OutSphere>>,
}

#[derive(Serialize)]
struct OutSphere {
    center_m: [f64; 3],
    radius_m: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLink {
    link: String,
    spheres: Vec<RawSphere>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSphere {
    center_m: [f64; 3],
    radius_m: f64,
}

/// Writes a robot's fine spheres as YAML.
pub fn write(path: &Path, robot: &Robot, model: &SphereModel) -> Result<(), SphereFileError> {
    let raw = OutFile {
        robot: robot.name.clone(),
        links: robot
            .links
            .iter()
            .zip(&model.links)
            .filter(|(_, s)| !s.fine.is_empty())
            .map(|(l, s)| OutLink {
                link: l.name.clone(),
                spheres: s
                    .fine
                    .iter()
                    .map(|s| {
                        serde_saphyr::FlowMap(OutSphere {
                            center_m: [s.center.x, s.center.y, s.center.z],
                            radius_m: s.radius,
                        })
                    })
                    .collect(),
            })
            .collect(),
    };
    let text = serde_saphyr::to_string(&raw).map_err(|e| SphereFileError::Parse {
        path: path.to_path_buf(),
        key: String::new(),
        message: e.to_string(),
    })?;
    let header = format!(
        "# Sphere set for robot `{}` written by workcell_guard {}.\n# Edit freely: on load, every link is checked for coverage against its URDF geometry.\n",
        robot.name,
        env!("CARGO_PKG_VERSION")
    );
    std::fs::write(path, header + &text).map_err(|source| SphereFileError::Io { path: path.to_path_buf(), source })
}

/// The links with fine spheres: (name, spheres).
fn links_with_spheres<'a>(robot: &'a Robot, model: &'a SphereModel) -> impl Iterator<Item = (&'a str, &'a [Sphere])> {
    robot
        .links
        .iter()
        .zip(&model.links)
        .filter(|(_, s)| !s.fine.is_empty())
        .map(|(l, s)| (l.name.as_str(), &s.fine[..]))
}

/// The fine spheres as cuRobo's collision-spheres YAML (the file its robot
/// configuration's `collision_spheres` names): per link, in its frame,
/// `center` (m) and `radius` (m).
pub fn curobo_text(robot: &Robot, model: &SphereModel) -> String {
    let mut out = format!(
        "# Collision spheres of `{}` for cuRobo, written by workcell_guard {} (link frames, metres).\ncollision_spheres:\n",
        robot.name,
        env!("CARGO_PKG_VERSION")
    );
    for (link, spheres) in links_with_spheres(robot, model) {
        out.push_str(&format!("  \"{link}\":\n"));
        for s in spheres {
            out.push_str(&format!(
                "    - {{\"center\": [{}, {}, {}], \"radius\": {}}}\n",
                s.center.x, s.center.y, s.center.z, s.radius
            ));
        }
    }
    out
}

/// The fine spheres as SRDF `<link_sphere_approximation>` elements of a
/// `<robot>` (MoveIt's form; link frames, metres).
pub fn srdf_text(robot: &Robot, model: &SphereModel) -> String {
    let esc = |s: &str| s.replace('&', "&amp;").replace('<', "&lt;").replace('"', "&quot;");
    let mut out = format!(
        "<?xml version=\"1.0\"?>\n<!-- Sphere approximation of `{}` written by workcell_guard {} -->\n<robot name=\"{}\">\n",
        esc(&robot.name),
        env!("CARGO_PKG_VERSION"),
        esc(&robot.name)
    );
    for (link, spheres) in links_with_spheres(robot, model) {
        out.push_str(&format!("  <link_sphere_approximation link=\"{}\">\n", esc(link)));
        for s in spheres {
            out.push_str(&format!(
                "    <sphere center=\"{} {} {}\" radius=\"{}\"/>\n",
                s.center.x, s.center.y, s.center.z, s.radius
            ));
        }
        out.push_str("  </link_sphere_approximation>\n");
    }
    out.push_str("</robot>\n");
    out
}

/// Reads a sphere file for `robot`.
pub fn read(path: &Path, robot: &Robot) -> Result<SphereModel, SphereFileError> {
    let text =
        std::fs::read_to_string(path).map_err(|source| SphereFileError::Io { path: path.to_path_buf(), source })?;
    read_str(&text, path, robot)
}

/// [`read`] on a sphere file's text (`path` names it in errors).
pub fn read_str(text: &str, path: &Path, robot: &Robot) -> Result<SphereModel, SphereFileError> {
    let raw: RawFile = crate::yaml::parse_yaml(text).map_err(|e| SphereFileError::Parse {
        path: path.to_path_buf(),
        key: e.key.clone(),
        message: e.to_string(),
    })?;
    let invalid = |key: String, value: String, problem: &str| SphereFileError::Invalid {
        path: path.to_path_buf(),
        key,
        value,
        problem: problem.to_string(),
    };
    if raw.robot != robot.name {
        return Err(invalid("robot".into(), raw.robot, &format!("the URDF's robot is `{}`", robot.name)));
    }
    let mut links = vec![Vec::new(); robot.links.len()];
    for (i, l) in raw.links.iter().enumerate() {
        let Some(li) = robot.link_index(&l.link) else {
            return Err(invalid(format!("links[{i}].link"), l.link.clone(), "no such link in the URDF"));
        };
        if !links[li].is_empty() {
            return Err(invalid(format!("links[{i}].link"), l.link.clone(), "listed twice"));
        }
        for (k, s) in l.spheres.iter().enumerate() {
            let key = format!("links[{i}].spheres[{k}]");
            if !s.center_m.iter().all(|c| c.is_finite()) {
                return Err(invalid(format!("{key}.center_m"), format!("{:?}", s.center_m), "must be finite"));
            }
            if !(s.radius_m.is_finite() && s.radius_m > 0.0) {
                return Err(invalid(format!("{key}.radius_m"), s.radius_m.to_string(), "must be positive and finite"));
            }
            links[li].push(Sphere { center: Point3::from(s.center_m), radius: s.radius_m });
        }
    }
    Ok(SphereModel { links: links.into_iter().map(|fine| LinkSpheres::from_fine(fine, f64::NAN)).collect() })
}
