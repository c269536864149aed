//! Forward kinematics over any tree of revolute, continuous, prismatic,
//! fixed and mimic joints, allocating nothing per call.
//!
//! [`Kinematics`] is compiled once from a [`Robot`]: per joint the parent
//! link, the constant origin, the kind of motion and where its position comes
//! from (an entry of `q`, or `multiplier · q[dof] + offset` for a mimic).
//! Axis-aligned axes (the common case) get a rotation that touches two columns
//! of the origin matrix instead of a full matrix product. Links are in
//! topological order, so one forward pass fills every link's pose.

use super::robot::{JointKind, Robot};
use crate::frame::{Frame, sin_cos};
use nalgebra::{Matrix3, Vector3};

/// Wrong input length to [`Kinematics::forward`].
#[derive(Debug, thiserror::Error, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum KinematicsError {
    /// `q` does not have one entry per actuated joint.
    #[error("joint vector has {got} entries, the robot has {expected} actuated joints")]
    JointCount {
        /// Entries expected.
        expected: usize,
        /// Entries given.
        got: usize,
    },
    /// `out` does not have one frame per link.
    #[error("output has room for {got} link poses, the robot has {expected} links")]
    LinkCount {
        /// Links in the robot.
        expected: usize,
        /// Room given.
        got: usize,
    },
}

/// How a joint moves its child (axis signs folded into the position source).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Motion {
    Fixed,
    RotX,
    RotY,
    RotZ,
    Rot(Vector3<f64>),
    Slide(Vector3<f64>),
}

/// Compiled forward kinematics of one robot.
#[derive(Clone, Debug)]
pub struct Kinematics {
    base: Frame,
    dof: usize,
    parent: Vec<u32>,
    origin: Vec<Frame>,
    motion: Vec<Motion>,
    /// Per joint: the origin has no rotation.
    pure_translation: Vec<bool>,
    /// Per joint: (index into q, multiplier, offset); the joint's position is
    /// `multiplier · q[index] + offset`. Axis signs are folded in.
    source: Vec<(u32, f64, f64)>,
}

impl Kinematics {
    /// Compiles the robot's kinematics; `base` places its root link in the
    /// caller's frame (the cell, for a workcell).
    pub fn new(robot: &Robot, base: Frame) -> Kinematics {
        let mut parent = Vec::with_capacity(robot.joints.len());
        let mut origin = Vec::with_capacity(robot.joints.len());
        let mut motion = Vec::with_capacity(robot.joints.len());
        let mut source = Vec::with_capacity(robot.joints.len());
        for j in &robot.joints {
            parent.push(j.parent as u32);
            origin.push(j.origin);
            let (dof, mult, off) = match (j.dof, j.mimic) {
                (Some(d), _) => (d, 1.0, 0.0),
                (None, Some(m)) => (m.dof, m.multiplier, m.offset),
                (None, None) => (0, 0.0, 0.0),
            };
            let a = j.axis;
            let axis_sign = |i: usize| {
                let others = (0..3).filter(|&k| k != i).all(|k| a[k] == 0.0);
                (others && a[i].abs() == 1.0).then_some(a[i])
            };
            let (m, sign) = match j.kind {
                JointKind::Fixed => (Motion::Fixed, 1.0),
                JointKind::Prismatic => (Motion::Slide(a), 1.0),
                JointKind::Revolute | JointKind::Continuous => {
                    if let Some(s) = axis_sign(0) {
                        (Motion::RotX, s)
                    } else if let Some(s) = axis_sign(1) {
                        (Motion::RotY, s)
                    } else if let Some(s) = axis_sign(2) {
                        (Motion::RotZ, s)
                    } else {
                        (Motion::Rot(a), 1.0)
                    }
                }
            };
            motion.push(m);
            source.push((dof as u32, sign * mult, sign * off));
        }
        let pure_translation = origin.iter().map(|o: &Frame| o.rot == Matrix3::identity()).collect();
        Kinematics { base, pure_translation, dof: robot.dof(), parent, origin, motion, source }
    }

    /// Number of links (poses written by [`forward`](Self::forward)).
    pub fn link_count(&self) -> usize {
        self.parent.len() + 1
    }

    /// Number of actuated joints (entries of `q`).
    pub fn dof(&self) -> usize {
        self.dof
    }

    /// The base pose.
    pub fn base(&self) -> &Frame {
        &self.base
    }

    /// Joint `j`: parent link, origin as 12 column-major values, motion,
    /// whether the origin is a pure translation, and its position source.
    #[inline(always)]
    pub(crate) fn joint_parts(&self, j: usize) -> (usize, [f64; 12], Motion, bool, (u32, f64, f64)) {
        (self.parent[j] as usize, flat(&self.origin[j]), self.motion[j], self.pure_translation[j], self.source[j])
    }

    /// Writes every link's pose, in the base's frame, into `out` (one entry
    /// per link, topological order). No allocation.
    pub fn forward(&self, q: &[f64], out: &mut [Frame]) -> Result<(), KinematicsError> {
        self.forward_inline(q, out)
    }

    /// [`forward`](Self::forward), inlined into callers compiled for wider
    /// instruction sets (see `SpherePoser::pose`).
    #[inline(always)]
    pub(crate) fn forward_inline(&self, q: &[f64], out: &mut [Frame]) -> Result<(), KinematicsError> {
        if q.len() != self.dof {
            return Err(KinematicsError::JointCount { expected: self.dof, got: q.len() });
        }
        if out.len() != self.link_count() {
            return Err(KinematicsError::LinkCount { expected: self.link_count(), got: out.len() });
        }
        out[0] = self.base;
        for j in 0..self.parent.len() {
            let (d, mult, off) = self.source[j];
            // Everything on scalars in registers: [r0..r8] column-major rotation, [t0..t2].
            let p = flat(&out[self.parent[j] as usize]);
            let o = flat(&self.origin[j]);
            // m = parent ∘ origin; an origin without rotation (the common
            // case) costs only its translation.
            let mut m = [0.0f64; 12];
            if self.pure_translation[j] {
                m[..9].copy_from_slice(&p[..9]);
            } else {
                for col in 0..3 {
                    for row in 0..3 {
                        m[3 * col + row] =
                            p[row] * o[3 * col] + p[3 + row] * o[3 * col + 1] + p[6 + row] * o[3 * col + 2];
                    }
                }
            }
            for row in 0..3 {
                m[9 + row] = p[row] * o[9] + p[3 + row] * o[10] + p[6 + row] * o[11] + p[9 + row];
            }
            // Then the joint's own motion, applied to m's columns.
            let x = mult * q[d as usize] + off;
            match self.motion[j] {
                Motion::Fixed => {}
                Motion::RotX => {
                    let (s, c) = sin_cos(x);
                    rotate_columns(&mut m, 3, 6, c, s);
                }
                Motion::RotY => {
                    let (s, c) = sin_cos(x);
                    rotate_columns(&mut m, 6, 0, c, s);
                }
                Motion::RotZ => {
                    let (s, c) = sin_cos(x);
                    rotate_columns(&mut m, 0, 3, c, s);
                }
                Motion::Rot(axis) => {
                    // Rodrigues: R = I + s·[a]× + (1 − c)·[a]×², then m·R.
                    let (s, c) = sin_cos(x);
                    let (ax, ay, az) = (axis.x, axis.y, axis.z);
                    let t = 1.0 - c;
                    let r = [
                        t * ax * ax + c,
                        t * ax * ay + s * az,
                        t * ax * az - s * ay,
                        t * ax * ay - s * az,
                        t * ay * ay + c,
                        t * ay * az + s * ax,
                        t * ax * az + s * ay,
                        t * ay * az - s * ax,
                        t * az * az + c,
                    ];
                    let a = m;
                    for col in 0..3 {
                        for row in 0..3 {
                            m[3 * col + row] =
                                a[row] * r[3 * col] + a[3 + row] * r[3 * col + 1] + a[6 + row] * r[3 * col + 2];
                        }
                    }
                }
                Motion::Slide(axis) => {
                    let (ax, ay, az) = (axis.x * x, axis.y * x, axis.z * x);
                    for row in 0..3 {
                        m[9 + row] += m[row] * ax + m[3 + row] * ay + m[6 + row] * az;
                    }
                }
            }
            out[j + 1] = Frame { rot: Matrix3::from_column_slice(&m[..9]), trans: Vector3::new(m[9], m[10], m[11]) };
        }
        Ok(())
    }
}

/// A frame as 12 values: column-major rotation, then translation.
#[inline(always)]
pub(crate) fn flat(f: &Frame) -> [f64; 12] {
    let r = f.rot.as_slice();
    [r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], f.trans.x, f.trans.y, f.trans.z]
}

/// Rotates columns `a` and `b` of a column-major matrix by an angle about
/// the third axis: `a' = c·a + s·b`, `b' = c·b − s·a`.
#[inline(always)]
fn rotate_columns(m: &mut [f64; 12], a: usize, b: usize, c: f64, s: f64) {
    for row in 0..3 {
        let (u, v) = (m[a + row], m[b + row]);
        m[a + row] = c * u + s * v;
        m[b + row] = c * v - s * u;
    }
}
