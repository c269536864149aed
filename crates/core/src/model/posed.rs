//! Posing a robot's fine spheres into flat arrays.
//!
//! [`SpherePoser`] holds the spheres of all links as flat link-frame arrays
//! (`lx, ly, lz, r`), grouped by link, plus the compiled kinematics.
//! [`PosedSpheres`] holds the output — cell-frame `x, y, z, r` arrays and the
//! link poses — allocated once per robot by [`SpherePoser::posed`] and
//! overwritten by every [`SpherePoser::pose`] call, which allocates nothing.
//!
//! Kinematics run in `f64`; the posed spheres are `f32`, as the per-cycle
//! checks consume them (twice the SIMD lanes of `f64`). Every posed radius
//! is inflated by [`POSE_EPS_M`], which bounds the `f32` rounding of a
//! centre for coordinates within ±64 m of the cell origin, so posing keeps
//! the model conservative.

use super::kinematics::{Kinematics, KinematicsError};
use super::robot::Robot;
use super::spheres::SphereModel;
use crate::frame::Frame;

/// Sphere runs are padded to a multiple of this (one SSE register of `f32`).
pub const LANES: usize = 4;

/// Added to every posed radius to cover `f32` rounding of the centre, metres.
pub const POSE_EPS_M: f32 = 2e-5;

/// A robot's spheres ready to be posed.
#[derive(Clone, Debug)]
pub struct SpherePoser {
    kin: Kinematics,
    /// (link, first sphere, one past the last sphere), links with spheres only.
    ranges: Vec<(u32, u32, u32)>,
    lx: Vec<f32>,
    ly: Vec<f32>,
    lz: Vec<f32>,
    r: Vec<f32>,
    link: Vec<u32>,
    /// The slots that hold a sphere of the model (the rest repeat a link's
    /// last sphere to fill a run of [`LANES`]).
    real: Vec<u32>,
    /// Per range: one past its last real (unpadded) slot.
    real_ends: Vec<u32>,
}

/// Posed spheres and link poses of one robot, in the base's frame.
#[derive(Clone, Debug, Default)]
pub struct PosedSpheres {
    /// Centre x, metres.
    pub x: Vec<f32>,
    /// Centre y, metres.
    pub y: Vec<f32>,
    /// Centre z, metres.
    pub z: Vec<f32>,
    /// Radius, metres, including [`POSE_EPS_M`].
    pub r: Vec<f32>,
    /// Link index of each sphere.
    pub link: Vec<u32>,
    /// Pose of every link.
    pub frames: Vec<Frame>,
}

impl PosedSpheres {
    /// Number of spheres.
    pub fn len(&self) -> usize {
        self.x.len()
    }
    /// True when the robot has no spheres.
    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }
}

impl SpherePoser {
    /// Flattens `spheres` (fitted for `robot`) and compiles its kinematics
    /// with the root placed at `base`.
    pub fn new(robot: &Robot, spheres: &SphereModel, base: Frame) -> SpherePoser {
        let mut p = SpherePoser {
            kin: Kinematics::new(robot, base),
            ranges: Vec::new(),
            lx: Vec::new(),
            ly: Vec::new(),
            lz: Vec::new(),
            r: Vec::new(),
            link: Vec::new(),
            real: Vec::new(),
            real_ends: Vec::new(),
        };
        for (li, ls) in spheres.links.iter().enumerate() {
            if ls.fine.is_empty() {
                continue;
            }
            let start = p.lx.len() as u32;
            // Pad each link's run to a multiple of LANES by repeating its last
            // sphere: a duplicate changes no answer, and whole chunks let the
            // posing loop run on full SIMD registers.
            let padded = ls.fine.len().div_ceil(LANES) * LANES;
            for k in 0..padded {
                if k < ls.fine.len() {
                    p.real.push(p.lx.len() as u32);
                }
                let s = &ls.fine[k.min(ls.fine.len() - 1)];
                p.lx.push(s.center.x as f32);
                p.ly.push(s.center.y as f32);
                p.lz.push(s.center.z as f32);
                p.r.push(s.radius as f32 + POSE_EPS_M);
                p.link.push(li as u32);
            }
            p.ranges.push((li as u32, start, p.lx.len() as u32));
            p.real_ends.push(start + ls.fine.len() as u32);
        }
        p
    }

    /// Link-frame sphere centres, one entry per slot.
    pub(crate) fn local(&self) -> (&[f32], &[f32], &[f32]) {
        (&self.lx, &self.ly, &self.lz)
    }

    /// Radius and link index of every slot.
    pub(crate) fn slots(&self) -> (&[f32], &[u32]) {
        (&self.r, &self.link)
    }

    /// (link, first slot, one past the last slot) for links with spheres.
    pub(crate) fn ranges(&self) -> &[(u32, u32, u32)] {
        &self.ranges
    }

    /// Per entry of [`ranges`](Self::ranges): one past its last real
    /// slot (the slots after it, to the range's end, repeat that one).
    pub(crate) fn real_ends(&self) -> &[u32] {
        &self.real_ends
    }

    /// The compiled kinematics.
    pub fn kinematics(&self) -> &Kinematics {
        &self.kin
    }

    /// Number of sphere slots (spheres plus the padding duplicates).
    pub fn sphere_count(&self) -> usize {
        self.lx.len()
    }

    /// The slots that hold the model's spheres, one each, in order (the
    /// padding duplicates left out): what a display should draw.
    pub fn model_slots(&self) -> &[u32] {
        &self.real
    }

    /// An output buffer of the right size (allocate once, reuse every cycle).
    pub fn posed(&self) -> PosedSpheres {
        PosedSpheres {
            x: vec![0.0; self.lx.len()],
            y: vec![0.0; self.lx.len()],
            z: vec![0.0; self.lx.len()],
            r: self.r.clone(),
            link: self.link.clone(),
            frames: vec![Frame::IDENTITY; self.kin.link_count()],
        }
    }

    /// Poses every sphere for joint positions `q`. No allocation.
    ///
    /// On x86-64 CPUs with AVX2 and FMA (detected once at run time) the same
    /// code runs compiled for them: eight `f32` lanes and fused multiply-adds.
    pub fn pose(&self, q: &[f64], out: &mut PosedSpheres) -> Result<(), KinematicsError> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: `pose_avx2_fma` only requires the CPU features checked just above.
            return unsafe { self.pose_avx2_fma(q, out) };
        }
        self.pose_impl(q, out)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn pose_avx2_fma(&self, q: &[f64], out: &mut PosedSpheres) -> Result<(), KinematicsError> {
        self.pose_impl(q, out)
    }

    #[inline(always)]
    fn pose_impl(&self, q: &[f64], out: &mut PosedSpheres) -> Result<(), KinematicsError> {
        self.kin.forward_inline(q, &mut out.frames)?;
        let n = self.lx.len();
        if out.x.len() != n || out.y.len() != n || out.z.len() != n {
            return Err(KinematicsError::LinkCount { expected: n, got: out.x.len().min(out.y.len()).min(out.z.len()) });
        }
        for &(link, start, end) in &self.ranges {
            let f = &out.frames[link as usize];
            let m = f.rot.as_slice(); // column-major
            let m: [f32; 9] = std::array::from_fn(|k| m[k] as f32);
            let (r00, r10, r20, r01, r11, r21, r02, r12, r22) = (m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8]);
            let (tx, ty, tz) = (f.trans.x as f32, f.trans.y as f32, f.trans.z as f32);
            let (s, e) = (start as usize, end as usize);
            for k in (s..e).step_by(LANES) {
                let l: [[f32; LANES]; 3] = [
                    // invariant: the link runs are padded to whole LANES at construction
                    self.lx[k..k + LANES].try_into().expect("runs are padded"),
                    // invariant: the link runs are padded to whole LANES at construction
                    self.ly[k..k + LANES].try_into().expect("runs are padded"),
                    // invariant: the link runs are padded to whole LANES at construction
                    self.lz[k..k + LANES].try_into().expect("runs are padded"),
                ];
                let x: [f32; LANES] = std::array::from_fn(|i| r00 * l[0][i] + r01 * l[1][i] + r02 * l[2][i] + tx);
                let y: [f32; LANES] = std::array::from_fn(|i| r10 * l[0][i] + r11 * l[1][i] + r12 * l[2][i] + ty);
                let z: [f32; LANES] = std::array::from_fn(|i| r20 * l[0][i] + r21 * l[1][i] + r22 * l[2][i] + tz);
                out.x[k..k + LANES].copy_from_slice(&x);
                out.y[k..k + LANES].copy_from_slice(&y);
                out.z[k..k + LANES].copy_from_slice(&z);
            }
        }
        Ok(())
    }
}
