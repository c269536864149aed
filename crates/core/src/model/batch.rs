//! Posing a robot's spheres for [`BATCH`] configurations at once.
//!
//! The per-cycle checks look at several configurations of the same robot
//! together (the samples along its stopping path). Posing them together lets
//! every arithmetic step run across configurations in SIMD lanes: the same
//! forward kinematics and sphere transforms as [`SpherePoser::pose`], with a
//! lane per configuration. Output layout: sphere slot `s`, configuration `b`
//! at `s * BATCH + b`, so the checks read a sphere's eight positions in one
//! load.

use super::kinematics::{Kinematics, KinematicsError, Motion, flat};
use super::posed::SpherePoser;
use crate::frame::sin_cos;

/// Configurations posed together.
pub const BATCH: usize = 8;

type Lanes = [f64; BATCH];

/// A box that holds nothing (every minimum +∞, every maximum −∞).
pub const EMPTY_BOX: [[f32; BATCH]; 6] = [
    [f32::INFINITY; BATCH],
    [f32::INFINITY; BATCH],
    [f32::INFINITY; BATCH],
    [f32::NEG_INFINITY; BATCH],
    [f32::NEG_INFINITY; BATCH],
    [f32::NEG_INFINITY; BATCH],
];

/// Posed spheres of one robot in [`BATCH`] configurations.
#[derive(Clone, Debug)]
pub struct PosedBatch {
    /// Centre x of slot `s` in configuration `b` at `s * BATCH + b`, metres.
    pub x: Vec<f32>,
    /// Centre y, same layout.
    pub y: Vec<f32>,
    /// Centre z, same layout.
    pub z: Vec<f32>,
    /// Radius per slot (the same in every configuration), metres.
    pub r: Vec<f32>,
    /// Link index per slot.
    pub link: Vec<u32>,
    /// Per link, per lane, the box around its spheres: minimum x, y, z,
    /// then maximum x, y, z (a link without spheres: every minimum +∞,
    /// every maximum −∞). Made while posing, from the values in registers.
    pub boxes: Vec<[[f32; BATCH]; 6]>,
    /// Scratch: link poses, 12 lanes-wide entries (column-major rotation,
    /// then translation) per link.
    frames: Vec<[Lanes; 12]>,
}

impl SpherePoser {
    /// An output buffer for [`pose_batch`](Self::pose_batch) (allocate once).
    pub fn posed_batch(&self) -> PosedBatch {
        let (r, link) = self.slots();
        let n = r.len();
        PosedBatch {
            x: vec![0.0; n * BATCH],
            y: vec![0.0; n * BATCH],
            z: vec![0.0; n * BATCH],
            r: r.to_vec(),
            link: link.to_vec(),
            boxes: vec![EMPTY_BOX; self.kinematics().link_count()],
            frames: vec![[[0.0; BATCH]; 12]; self.kinematics().link_count()],
        }
    }

    /// Poses every sphere in each of `qs`. No allocation. Each configuration
    /// gives the same result as [`pose`](Self::pose) (to `f32` rounding).
    pub fn pose_batch(&self, qs: &[&[f64]; BATCH], out: &mut PosedBatch) -> Result<(), KinematicsError> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: `pose_batch_avx2_fma` only requires the CPU features checked just above.
            return unsafe { self.pose_batch_avx2_fma(qs, out) };
        }
        self.pose_batch_impl(qs, out)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn pose_batch_avx2_fma(&self, qs: &[&[f64]; BATCH], out: &mut PosedBatch) -> Result<(), KinematicsError> {
        self.pose_batch_impl(qs, out)
    }

    #[inline(always)]
    fn pose_batch_impl(&self, qs: &[&[f64]; BATCH], out: &mut PosedBatch) -> Result<(), KinematicsError> {
        forward_batch(self.kinematics(), qs, &mut out.frames)?;
        let (lx, ly, lz) = self.local();
        let n = lx.len();
        if out.x.len() != n * BATCH || out.y.len() != n * BATCH || out.z.len() != n * BATCH {
            return Err(KinematicsError::LinkCount { expected: n * BATCH, got: out.x.len() });
        }
        if out.boxes.len() != out.frames.len() {
            return Err(KinematicsError::LinkCount { expected: out.frames.len(), got: out.boxes.len() });
        }
        for &(link, start, end) in self.ranges() {
            let f = &out.frames[link as usize];
            let m: [[f32; BATCH]; 12] = std::array::from_fn(|e| std::array::from_fn(|b| f[e][b] as f32));
            // The link's box, kept in registers: plain comparisons (not
            // f32::min's NaN rules), so the lanes go through as one vector.
            let mut bx = EMPTY_BOX;
            for s in start as usize..end as usize {
                let (a, b, c, r) = (lx[s], ly[s], lz[s], out.r[s]);
                // invariant: a slot of BATCH lanes in arrays sized to whole slots
                let ox: &mut [f32; BATCH] = (&mut out.x[s * BATCH..(s + 1) * BATCH]).try_into().expect("sized");
                for l in 0..BATCH {
                    ox[l] = m[0][l] * a + m[3][l] * b + m[6][l] * c + m[9][l];
                }
                // invariant: a slot of BATCH lanes in arrays sized to whole slots
                let oy: &mut [f32; BATCH] = (&mut out.y[s * BATCH..(s + 1) * BATCH]).try_into().expect("sized");
                for l in 0..BATCH {
                    oy[l] = m[1][l] * a + m[4][l] * b + m[7][l] * c + m[10][l];
                }
                // invariant: a slot of BATCH lanes in arrays sized to whole slots
                let oz: &mut [f32; BATCH] = (&mut out.z[s * BATCH..(s + 1) * BATCH]).try_into().expect("sized");
                for l in 0..BATCH {
                    oz[l] = m[2][l] * a + m[5][l] * b + m[8][l] * c + m[11][l];
                }
                for (k, o) in [&*ox, &*oy, &*oz].into_iter().enumerate() {
                    for l in 0..BATCH {
                        let (lo, hi) = (o[l] - r, o[l] + r);
                        bx[k][l] = if lo < bx[k][l] { lo } else { bx[k][l] };
                        bx[3 + k][l] = if hi > bx[3 + k][l] { hi } else { bx[3 + k][l] };
                    }
                }
            }
            out.boxes[link as usize] = bx;
        }
        Ok(())
    }
}

/// Forward kinematics of [`BATCH`] configurations, a lane each.
#[inline(always)]
fn forward_batch(k: &Kinematics, qs: &[&[f64]; BATCH], out: &mut [[Lanes; 12]]) -> Result<(), KinematicsError> {
    if let Some(q) = qs.iter().find(|q| q.len() != k.dof()) {
        return Err(KinematicsError::JointCount { expected: k.dof(), got: q.len() });
    }
    if out.len() != k.link_count() {
        return Err(KinematicsError::LinkCount { expected: k.link_count(), got: out.len() });
    }
    out[0] = flat(k.base()).map(|v| [v; BATCH]);
    for j in 0..k.link_count() - 1 {
        let (parent, origin, motion, pure, (d, mult, off)) = k.joint_parts(j);
        let o = origin;
        // Lanes innermost everywhere, so each step is one vector operation.
        // Written in place: no 768-byte copies of the parent's or this
        // link's transform (links come after their parents).
        let (done, rest) = out.split_at_mut(j + 1);
        let (p, m) = (&done[parent], &mut rest[0]);
        if pure {
            m[..9].copy_from_slice(&p[..9]);
        } else {
            for col in 0..3 {
                for row in 0..3 {
                    let (o0, o1, o2) = (o[3 * col], o[3 * col + 1], o[3 * col + 2]);
                    for l in 0..BATCH {
                        m[3 * col + row][l] = p[row][l] * o0 + p[3 + row][l] * o1 + p[6 + row][l] * o2;
                    }
                }
            }
        }
        for row in 0..3 {
            for l in 0..BATCH {
                m[9 + row][l] = p[row][l] * o[9] + p[3 + row][l] * o[10] + p[6 + row][l] * o[11] + p[9 + row][l];
            }
        }
        let mut x: Lanes = [0.0; BATCH];
        for l in 0..BATCH {
            x[l] = mult * qs[l][d as usize] + off;
        }
        match motion {
            Motion::Fixed => {}
            Motion::RotX => rotate_columns(m, 3, 6, &x),
            Motion::RotY => rotate_columns(m, 6, 0, &x),
            Motion::RotZ => rotate_columns(m, 0, 3, &x),
            Motion::Rot(axis) => {
                let (s, c) = sin_cos_lanes(&x);
                let (ax, ay, az) = (axis.x, axis.y, axis.z);
                // Rodrigues, column-major, a lane per configuration.
                let mut r = [[0.0; BATCH]; 9];
                for l in 0..BATCH {
                    let (s, c) = (s[l], c[l]);
                    let t = 1.0 - c;
                    r[0][l] = t * ax * ax + c;
                    r[1][l] = t * ax * ay + s * az;
                    r[2][l] = t * ax * az - s * ay;
                    r[3][l] = t * ax * ay - s * az;
                    r[4][l] = t * ay * ay + c;
                    r[5][l] = t * ay * az + s * ax;
                    r[6][l] = t * ax * az + s * ay;
                    r[7][l] = t * ay * az - s * ax;
                    r[8][l] = t * az * az + c;
                }
                let a: [Lanes; 9] = std::array::from_fn(|i| m[i]);
                for col in 0..3 {
                    for row in 0..3 {
                        for l in 0..BATCH {
                            m[3 * col + row][l] = a[row][l] * r[3 * col][l]
                                + a[3 + row][l] * r[3 * col + 1][l]
                                + a[6 + row][l] * r[3 * col + 2][l];
                        }
                    }
                }
            }
            Motion::Slide(axis) => {
                for row in 0..3 {
                    for l in 0..BATCH {
                        m[9 + row][l] += (m[row][l] * axis.x + m[3 + row][l] * axis.y + m[6 + row][l] * axis.z) * x[l];
                    }
                }
            }
        }
    }
    Ok(())
}

/// Columns `a`, `b` rotated by the angles `x`: `a' = c·a + s·b`, `b' = c·b − s·a`.
#[inline(always)]
fn rotate_columns(m: &mut [Lanes; 12], a: usize, b: usize, x: &Lanes) {
    let (s, c) = sin_cos_lanes(x);
    for row in 0..3 {
        for l in 0..BATCH {
            let (u, v) = (m[a + row][l], m[b + row][l]);
            m[a + row][l] = c[l] * u + s[l] * v;
            m[b + row][l] = c[l] * v - s[l] * u;
        }
    }
}

/// The rare path: some lane is out of the reduced range.
#[cold]
#[inline(never)]
fn sin_cos_scalar(x: &Lanes) -> (Lanes, Lanes) {
    let mut s = [0.0; BATCH];
    let mut c = [0.0; BATCH];
    for l in 0..BATCH {
        (s[l], c[l]) = sin_cos(x[l]);
    }
    (s, c)
}

/// [`sin_cos`] over lanes without branches, so it vectorizes; any lane out
/// of the reduced range sends the whole batch to the scalar version.
#[inline(always)]
fn sin_cos_lanes(x: &Lanes) -> (Lanes, Lanes) {
    let mut s = [0.0; BATCH];
    let mut c = [0.0; BATCH];
    if x.iter().any(|v| v.is_nan() || v.abs() >= 1.0e5) {
        return sin_cos_scalar(x);
    }
    for l in 0..BATCH {
        let (sl, cl, quadrant) = crate::frame::sin_cos_kernel(x[l]);
        let swap = quadrant & 1 == 1;
        let (s1, c1) = if swap { (cl, sl) } else { (sl, cl) };
        s[l] = if quadrant & 2 != 0 { -s1 } else { s1 };
        c[l] = if (quadrant + 1) & 2 != 0 { -c1 } else { c1 };
    }
    (s, c)
}
