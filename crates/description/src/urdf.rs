//! URDF to [`Robot`]: every `urdf_rs` type stays in this file.
//!
//! Checks made here, each with its own error: one root link, no link with two
//! parent joints (a kinematic loop), joints naming existing links, finite
//! origins and non-zero axes, supported joint types, mimic joints that name
//! an existing joint without cycles, shapes with positive sizes, mesh files
//! that resolve and load.

use crate::mesh::{self, MeshError};
use crate::resolve::{self, ResolveError};
use nalgebra::Vector3;
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use workcell_guard_core::frame::Frame;
use workcell_guard_core::model::geometry::{Collision, Shape};
use workcell_guard_core::model::robot::{Joint, JointKind, Limits, Link, Mimic, Robot};

/// A URDF that cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The file could not be read.
    #[error("cannot read URDF {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The XML is not a URDF urdf-rs understands.
    #[error("cannot parse URDF {path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// No link at all.
    #[error("URDF {path} has no links")]
    NoLinks {
        /// The file.
        path: PathBuf,
    },
    /// Two links share a name, or two joints do.
    #[error("URDF {path}: {kind} `{name}` is defined twice")]
    Duplicate {
        /// The file.
        path: PathBuf,
        /// "link" or "joint".
        kind: &'static str,
        /// The repeated name.
        name: String,
    },
    /// More than one link has no parent joint.
    #[error("URDF {path} has {} root links ({}); a robot has exactly one", roots.len(), roots.join(", "))]
    MultipleRoots {
        /// The file.
        path: PathBuf,
        /// The links without a parent joint.
        roots: Vec<String>,
    },
    /// A link is the child of two joints, or the joints form a cycle.
    #[error("URDF {path} has a kinematic loop at link `{link}` (joints {})", joints.join(", "))]
    KinematicLoop {
        /// The file.
        path: PathBuf,
        /// A link on the loop.
        link: String,
        /// The joints involved.
        joints: Vec<String>,
    },
    /// A joint names a link that does not exist.
    #[error("URDF {path}: joint `{joint}` names unknown link `{link}`")]
    UnknownLink {
        /// The file.
        path: PathBuf,
        /// The joint.
        joint: String,
        /// The missing link.
        link: String,
    },
    /// Floating, planar or spherical joints.
    #[error(
        "URDF {path}: joint `{joint}` has type {kind}, which workcell_guard does not support (revolute, continuous, prismatic, fixed)"
    )]
    UnsupportedJoint {
        /// The file.
        path: PathBuf,
        /// The joint.
        joint: String,
        /// Its type.
        kind: String,
    },
    /// A mimic joint names a missing joint, or mimics form a cycle.
    #[error("URDF {path}: mimic joint `{joint}`: {problem}")]
    Mimic {
        /// The file.
        path: PathBuf,
        /// The mimic joint.
        joint: String,
        /// What is wrong.
        problem: String,
    },
    /// A number that must be finite (or positive) is not.
    #[error("URDF {path}: {what} = {value}: {problem}")]
    BadValue {
        /// The file.
        path: PathBuf,
        /// Which value, e.g. `joint `j1` origin xyz`.
        what: String,
        /// The value as written.
        value: String,
        /// What is wrong.
        problem: String,
    },
    /// A mesh URI does not resolve.
    #[error("URDF {path}: link `{link}`: {source}")]
    Resolve {
        /// The file.
        path: PathBuf,
        /// The link whose collision names the mesh.
        link: String,
        /// Why.
        source: ResolveError,
    },
    /// A mesh file does not load.
    #[error("URDF {path}: link `{link}`: {source}")]
    Mesh {
        /// The file.
        path: PathBuf,
        /// The link whose collision names the mesh.
        link: String,
        /// Why.
        source: MeshError,
    },
}

/// Reads and converts a URDF file.
pub fn load(path: &Path) -> Result<Robot, ModelError> {
    let xml = std::fs::read_to_string(path).map_err(|source| ModelError::Io { path: path.to_path_buf(), source })?;
    load_str(&xml, path)
}

/// Converts URDF text; `path` names it in errors and anchors relative URIs.
pub fn load_str(xml: &str, path: &Path) -> Result<Robot, ModelError> {
    let urdf = urdf_rs::read_from_string(xml)
        .map_err(|e| ModelError::Parse { path: path.to_path_buf(), message: e.to_string() })?;
    convert(&urdf, path)
}

fn bad(path: &Path, what: String, value: String, problem: &str) -> ModelError {
    ModelError::BadValue { path: path.to_path_buf(), what, value, problem: problem.to_string() }
}

fn finite3(path: &Path, what: String, v: [f64; 3]) -> Result<[f64; 3], ModelError> {
    if v.iter().all(|c| c.is_finite()) { Ok(v) } else { Err(bad(path, what, format!("{v:?}"), "must be finite")) }
}

fn pose(path: &Path, what: &str, p: &urdf_rs::Pose) -> Result<Frame, ModelError> {
    let xyz = finite3(path, format!("{what} origin xyz"), p.xyz.0)?;
    let rpy = finite3(path, format!("{what} origin rpy"), p.rpy.0)?;
    Ok(Frame::from_xyz_rpy(xyz, rpy))
}

// long: one pass over the URDF's links and joints, converted field by field
fn convert(urdf: &urdf_rs::Robot, path: &Path) -> Result<Robot, ModelError> {
    if urdf.links.is_empty() {
        return Err(ModelError::NoLinks { path: path.to_path_buf() });
    }
    let mut link_ix: HashMap<&str, usize> = HashMap::new();
    for (i, l) in urdf.links.iter().enumerate() {
        if link_ix.insert(l.name.as_str(), i).is_some() {
            return Err(ModelError::Duplicate { path: path.to_path_buf(), kind: "link", name: l.name.clone() });
        }
    }
    let mut joint_names: HashMap<&str, usize> = HashMap::new();
    for (i, j) in urdf.joints.iter().enumerate() {
        if joint_names.insert(j.name.as_str(), i).is_some() {
            return Err(ModelError::Duplicate { path: path.to_path_buf(), kind: "joint", name: j.name.clone() });
        }
    }

    // Parent joint of each link (URDF order), and children lists.
    let mut parent_of: Vec<Option<usize>> = vec![None; urdf.links.len()];
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); urdf.links.len()];
    for (ji, j) in urdf.joints.iter().enumerate() {
        let lookup = |name: &str| {
            link_ix.get(name).copied().ok_or_else(|| ModelError::UnknownLink {
                path: path.to_path_buf(),
                joint: j.name.clone(),
                link: name.to_string(),
            })
        };
        let p = lookup(&j.parent.link)?;
        let c = lookup(&j.child.link)?;
        if let Some(prev) = parent_of[c] {
            return Err(ModelError::KinematicLoop {
                path: path.to_path_buf(),
                link: j.child.link.clone(),
                joints: vec![urdf.joints[prev].name.clone(), j.name.clone()],
            });
        }
        parent_of[c] = Some(ji);
        children[p].push(ji);
    }
    let roots: Vec<usize> = (0..urdf.links.len()).filter(|&i| parent_of[i].is_none()).collect();
    if roots.len() > 1 {
        return Err(ModelError::MultipleRoots {
            path: path.to_path_buf(),
            roots: roots.iter().map(|&i| urdf.links[i].name.clone()).collect(),
        });
    }
    let Some(&root) = roots.first() else {
        // Every link has a parent: the joints form a cycle.
        // invariant: no root means every link has a parent joint
        let j = &urdf.joints[parent_of[0].expect("checked")];
        return Err(ModelError::KinematicLoop {
            path: path.to_path_buf(),
            link: urdf.links[0].name.clone(),
            joints: vec![j.name.clone()],
        });
    };

    // Breadth-first order from the root.
    let mut order = Vec::with_capacity(urdf.links.len());
    let mut queue = VecDeque::from([root]);
    while let Some(l) = queue.pop_front() {
        order.push(l);
        for &ji in &children[l] {
            queue.push_back(link_ix[urdf.joints[ji].child.link.as_str()]);
        }
    }
    if order.len() != urdf.links.len() {
        // invariant: fewer links ordered than exist means one was left out
        let stray = (0..urdf.links.len()).find(|i| !order.contains(i)).expect("exists");
        return Err(ModelError::KinematicLoop {
            path: path.to_path_buf(),
            link: urdf.links[stray].name.clone(),
            joints: parent_of[stray].map(|j| vec![urdf.joints[j].name.clone()]).unwrap_or_default(),
        });
    }
    let mut new_ix = vec![0usize; urdf.links.len()];
    for (new, &old) in order.iter().enumerate() {
        new_ix[old] = new;
    }

    let mut links = Vec::with_capacity(order.len());
    for (new, &old) in order.iter().enumerate() {
        let l = &urdf.links[old];
        let collisions = l.collision.iter().map(|c| collision(path, &l.name, c)).collect::<Result<Vec<_>, _>>()?;
        links.push(Link { name: l.name.clone(), parent_joint: (new > 0).then(|| new - 1), collisions });
    }

    // Joints in child-link order; actuated joints numbered in that order.
    let mut joints = Vec::with_capacity(order.len().saturating_sub(1));
    let mut dof_names = Vec::new();
    for &old in order.iter().skip(1) {
        // invariant: every link but the root has a parent joint (checked above)
        let j = &urdf.joints[parent_of[old].expect("non-root has a parent")];
        let (kind, origin, axis, limits) = joint_geometry(j, path)?;
        joints.push(Joint {
            name: j.name.clone(),
            kind,
            parent: new_ix[link_ix[j.parent.link.as_str()]],
            child: new_ix[old],
            origin,
            axis,
            limits,
            dof: None,
            mimic: None,
        });
    }
    // Actuated joints are numbered in the URDF's document order, as other
    // tools (robot_state_publisher, yourdfpy) list them.
    for uj in &urdf.joints {
        // invariant: every URDF joint was converted into `joints` above
        let j = joints.iter_mut().find(|j| j.name == uj.name).expect("every joint was converted");
        if j.kind.moves() && uj.mimic.is_none() {
            j.dof = Some(dof_names.len());
            dof_names.push(j.name.clone());
        }
    }
    resolve_mimics(urdf, path, &mut joints)?;
    Ok(Robot { name: urdf.name.clone(), links, joints, dof_names })
}

/// A URDF joint's kind, origin, unit axis and limits, each checked.
fn joint_geometry(
    j: &urdf_rs::Joint,
    path: &Path,
) -> Result<(JointKind, Frame, Vector3<f64>, Option<Limits>), ModelError> {
    let kind = match j.joint_type {
        urdf_rs::JointType::Fixed => JointKind::Fixed,
        urdf_rs::JointType::Revolute => JointKind::Revolute,
        urdf_rs::JointType::Continuous => JointKind::Continuous,
        urdf_rs::JointType::Prismatic => JointKind::Prismatic,
        ref other => {
            return Err(ModelError::UnsupportedJoint {
                path: path.to_path_buf(),
                joint: j.name.clone(),
                kind: format!("{other:?}").to_lowercase(),
            });
        }
    };
    let origin = pose(path, &format!("joint `{}`", j.name), &j.origin)?;
    let axis_raw = finite3(path, format!("joint `{}` axis", j.name), j.axis.xyz.0)?;
    let axis = Vector3::from(axis_raw);
    if kind.moves() && axis.norm() < 1e-12 {
        return Err(bad(path, format!("joint `{}` axis", j.name), format!("{axis_raw:?}"), "must not be zero"));
    }
    let axis = if kind.moves() { axis.normalize() } else { axis };
    let limits = match kind {
        JointKind::Revolute | JointKind::Prismatic => {
            let (lo, hi) = (j.limit.lower, j.limit.upper);
            if lo.is_nan() || hi.is_nan() || lo > hi {
                return Err(bad(
                    path,
                    format!("joint `{}` limit", j.name),
                    format!("lower={lo} upper={hi}"),
                    "lower must not exceed upper",
                ));
            }
            Some(Limits { lower: lo, upper: hi, velocity: j.limit.velocity })
        }
        JointKind::Continuous => {
            Some(Limits { lower: f64::NEG_INFINITY, upper: f64::INFINITY, velocity: j.limit.velocity })
        }
        JointKind::Fixed => None,
    };
    Ok((kind, origin, axis, limits))
}

/// Turns each mimic joint into `multiplier · q[dof] + offset` of an actuated
/// joint, following chains of mimics.
fn resolve_mimics(urdf: &urdf_rs::Robot, path: &Path, joints: &mut [Joint]) -> Result<(), ModelError> {
    let by_name: HashMap<String, usize> = joints.iter().enumerate().map(|(i, j)| (j.name.clone(), i)).collect();
    let spec: HashMap<&str, &urdf_rs::Mimic> =
        urdf.joints.iter().filter_map(|j| j.mimic.as_ref().map(|m| (j.name.as_str(), m))).collect();
    for i in 0..joints.len() {
        let name = joints[i].name.clone();
        let Some(_) = spec.get(name.as_str()) else { continue };
        if !joints[i].kind.moves() {
            continue; // a fixed joint with <mimic> has nothing to follow
        }
        let (mut mult, mut off) = (1.0, 0.0);
        let mut current = name.clone();
        let mut seen = vec![name.clone()];
        let dof = loop {
            let m = spec[current.as_str()];
            let (m_mult, m_off) = (m.multiplier.unwrap_or(1.0), m.offset.unwrap_or(0.0));
            if !m_mult.is_finite() || !m_off.is_finite() {
                return Err(ModelError::Mimic {
                    path: path.to_path_buf(),
                    joint: name,
                    problem: format!("multiplier {m_mult} and offset {m_off} must be finite"),
                });
            }
            // q_current = m_mult * q_source + m_off, and q_name = mult * q_current + off
            off += mult * m_off;
            mult *= m_mult;
            let Some(&src) = by_name.get(&m.joint) else {
                return Err(ModelError::Mimic {
                    path: path.to_path_buf(),
                    joint: name,
                    problem: format!("follows `{}`, which is not a joint of this robot", m.joint),
                });
            };
            if let Some(d) = joints[src].dof {
                break d;
            }
            if !spec.contains_key(m.joint.as_str()) || !joints[src].kind.moves() {
                return Err(ModelError::Mimic {
                    path: path.to_path_buf(),
                    joint: name,
                    problem: format!("follows `{}`, which does not move", m.joint),
                });
            }
            if seen.contains(&m.joint) {
                return Err(ModelError::Mimic {
                    path: path.to_path_buf(),
                    joint: name,
                    problem: format!("mimic joints form a cycle: {}", seen.join(" -> ")),
                });
            }
            seen.push(m.joint.clone());
            current = m.joint.clone();
        };
        joints[i].mimic = Some(Mimic { dof, multiplier: mult, offset: off });
    }
    Ok(())
}

fn collision(path: &Path, link: &str, c: &urdf_rs::Collision) -> Result<Collision, ModelError> {
    let what = format!("link `{link}` collision");
    let origin = pose(path, &what, &c.origin)?;
    let positive = |name: &str, v: f64| {
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            Err(bad(path, format!("{what} {name}"), v.to_string(), "must be positive and finite"))
        }
    };
    let shape = match &c.geometry {
        urdf_rs::Geometry::Box { size } => {
            let s = size.0;
            for v in s {
                positive("box size", v)?;
            }
            Shape::Box { half_extents: [s[0] / 2.0, s[1] / 2.0, s[2] / 2.0] }
        }
        urdf_rs::Geometry::Cylinder { radius, length } => Shape::Cylinder {
            radius: positive("cylinder radius", *radius)?,
            length: positive("cylinder length", *length)?,
        },
        urdf_rs::Geometry::Capsule { radius, length } => Shape::Capsule {
            radius: positive("capsule radius", *radius)?,
            length: positive("capsule length", *length)?,
        },
        urdf_rs::Geometry::Sphere { radius } => Shape::Sphere { radius: positive("sphere radius", *radius)? },
        urdf_rs::Geometry::Mesh { filename, scale } => {
            let scale = scale.map(|s| s.0).unwrap_or([1.0; 3]);
            let file = resolve::resolve(filename, path).map_err(|source| ModelError::Resolve {
                path: path.to_path_buf(),
                link: link.to_string(),
                source,
            })?;
            Shape::Mesh(mesh::load(&file, scale).map_err(|source| ModelError::Mesh {
                path: path.to_path_buf(),
                link: link.to_string(),
                source,
            })?)
        }
    };
    Ok(Collision { origin, shape })
}
