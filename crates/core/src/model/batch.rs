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

/// A value on its own 64-byte line: a lane-wide load or store of it never
/// straddles two cache lines (a split access costs about twice).
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug)]
struct Line<T>(T);

impl<T> std::ops::Deref for Line<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> std::ops::DerefMut for Line<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

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
    frames: Vec<Line<[Lanes; 12]>>,
    /// Scratch: the configurations transposed, a lane-wide entry per DOF.
    qt: Vec<Line<Lanes>>,
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
            frames: vec![Line([[0.0; BATCH]; 12]); self.kinematics().link_count()],
            qt: vec![Line([0.0; BATCH]); self.kinematics().dof()],
        }
    }

    /// Poses every sphere in each of `qs`. No allocation. Each configuration
    /// gives the same result as [`pose`](Self::pose) (to `f32` rounding).
    pub fn pose_batch(&self, qs: &[&[f64]; BATCH], out: &mut PosedBatch) -> Result<(), KinematicsError> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512vl") {
            // SAFETY: `pose_batch_avx512` only requires the CPU features checked just above.
            return unsafe { self.pose_batch_avx512(qs, out) };
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: `pose_batch_avx2_fma` only requires the CPU features checked just above.
            return unsafe { self.pose_batch_avx2_fma(qs, out) };
        }
        self.pose_batch_impl::<false>(qs, out)
    }

    /// [`pose_batch`](Self::pose_batch) on the narrower paths only (AVX2
    /// where the CPU has it, else portable), never AVX-512: for tests that
    /// compare the paths on a machine that takes the widest one.
    #[doc(hidden)]
    pub fn pose_batch_narrow(&self, qs: &[&[f64]; BATCH], out: &mut PosedBatch) -> Result<(), KinematicsError> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: `pose_batch_avx2_fma` only requires the CPU features checked just above.
            return unsafe { self.pose_batch_avx2_fma(qs, out) };
        }
        self.pose_batch_impl::<false>(qs, out)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn pose_batch_avx2_fma(&self, qs: &[&[f64]; BATCH], out: &mut PosedBatch) -> Result<(), KinematicsError> {
        self.pose_batch_impl::<false>(qs, out)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma,avx512f,avx512vl")]
    fn pose_batch_avx512(&self, qs: &[&[f64]; BATCH], out: &mut PosedBatch) -> Result<(), KinematicsError> {
        self.pose_batch_impl::<true>(qs, out)
    }

    /// With `PAIRS` (only from the AVX-512 entry), spheres go two at a time
    /// through [`pose_pairs`], one in each half of a 16-lane register.
    #[inline(always)]
    fn pose_batch_impl<const PAIRS: bool>(
        &self,
        qs: &[&[f64]; BATCH],
        out: &mut PosedBatch,
    ) -> Result<(), KinematicsError> {
        forward_batch(self.kinematics(), qs, &mut out.qt, &mut out.frames)?;
        let (lx, ly, lz) = self.local();
        let n = lx.len();
        if out.x.len() != n * BATCH || out.y.len() != n * BATCH || out.z.len() != n * BATCH {
            return Err(KinematicsError::LinkCount { expected: n * BATCH, got: out.x.len() });
        }
        if out.boxes.len() != out.frames.len() {
            return Err(KinematicsError::LinkCount { expected: out.frames.len(), got: out.boxes.len() });
        }
        for (&(link, start, end), &real_end) in self.ranges().iter().zip(self.real_ends()) {
            let (s0, s1, s2) = (start as usize, real_end as usize, end as usize);
            let n = s1 - s0;
            let (xs, _) = out.x[s0 * BATCH..s2 * BATCH].as_chunks_mut::<BATCH>();
            let (ys, _) = out.y[s0 * BATCH..s2 * BATCH].as_chunks_mut::<BATCH>();
            let (zs, _) = out.z[s0 * BATCH..s2 * BATCH].as_chunks_mut::<BATCH>();
            let (f, bx) = (&out.frames[link as usize], &mut out.boxes[link as usize]);
            #[cfg(target_arch = "x86_64")]
            let posed = if PAIRS {
                let locals = (&lx[s0..s2], &ly[s0..s2], &lz[s0..s2], &out.r[s0..s2]);
                // SAFETY: only reached from `pose_batch_avx512`, compiled for
                // (and run on) AVX-512F.
                unsafe { pose_pairs(f, locals, n, (&mut *xs, &mut *ys, &mut *zs), bx) }
            } else {
                pose_lanes(f, (&lx[s0..s1], &ly[s0..s1], &lz[s0..s1], &out.r[s0..s1]), (xs, ys, zs), bx)
            };
            #[cfg(not(target_arch = "x86_64"))]
            let posed = pose_lanes(f, (&lx[s0..s1], &ly[s0..s1], &lz[s0..s1], &out.r[s0..s1]), (xs, ys, zs), bx);
            // The rest of the padding repeats the last sphere: copied, not
            // posed again (it changes no box).
            if n > 0 {
                for i in posed..s2 - s0 {
                    (xs[i], ys[i], zs[i]) = (xs[n - 1], ys[n - 1], zs[n - 1]);
                }
            }
        }
        Ok(())
    }
}

// The AVX-512 path poses slots in pairs and may take the first padding
// slot of a link with an odd number of spheres: runs must be even.
const _: () = assert!(super::posed::LANES.is_multiple_of(2));

/// Local spheres of one link (centres x, y, z and radii), a slot each.
type Locals<'a> = (&'a [f32], &'a [f32], &'a [f32], &'a [f32]);

/// Posed centres of one link's slots, x, y and z, lanes per slot.
type Outputs<'a> = (&'a mut [[f32; BATCH]], &'a mut [[f32; BATCH]], &'a mut [[f32; BATCH]]);

/// Poses the spheres of one link (frame `f`, a lane per configuration), a
/// sphere at a time across the lanes, and sets `bx` to their box. Returns
/// the slots written (all of `locals`).
#[inline(always)]
fn pose_lanes(f: &[Lanes; 12], (a, b, c, r): Locals, (xs, ys, zs): Outputs, bx: &mut [[f32; BATCH]; 6]) -> usize {
    let m: [[f32; BATCH]; 12] = std::array::from_fn(|e| std::array::from_fn(|l| f[e][l] as f32));
    let n = a.len().min(b.len()).min(c.len()).min(r.len()).min(xs.len()).min(ys.len()).min(zs.len());
    // The link's box, kept in registers: plain comparisons (not
    // f32::min's NaN rules), so the lanes go through as one vector.
    let mut bb = EMPTY_BOX;
    for (i, ((ox, oy), oz)) in xs.iter_mut().zip(ys.iter_mut()).zip(zs.iter_mut()).enumerate().take(n) {
        let (a, b, c, r) = (a[i], b[i], c[i], r[i]);
        for l in 0..BATCH {
            ox[l] = m[0][l].mul_add(a, m[3][l].mul_add(b, m[6][l].mul_add(c, m[9][l])));
        }
        for l in 0..BATCH {
            oy[l] = m[1][l].mul_add(a, m[4][l].mul_add(b, m[7][l].mul_add(c, m[10][l])));
        }
        for l in 0..BATCH {
            oz[l] = m[2][l].mul_add(a, m[5][l].mul_add(b, m[8][l].mul_add(c, m[11][l])));
        }
        for (k, o) in [&*ox, &*oy, &*oz].into_iter().enumerate() {
            for l in 0..BATCH {
                let (lo, hi) = (o[l] - r, o[l] + r);
                bb[k][l] = if lo < bb[k][l] { lo } else { bb[k][l] };
                bb[3 + k][l] = if hi > bb[3 + k][l] { hi } else { bb[3 + k][l] };
            }
        }
    }
    *bx = bb;
    n
}

/// Poses the first `n` slots of a link (frame `f`, lane per configuration)
/// two at a time, slot `i` in the low 8 lanes of a 16-lane register and
/// `i + 1` in the high ones (their outputs are adjacent: one 64-byte store),
/// and sets `bx` to their box with the same comparisons as [`pose_lanes`].
/// With `n` odd the last pair takes the first padding slot, which repeats
/// the last sphere (the runs are padded to an even length). Returns the
/// slots written.
///
/// # Safety
/// The CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn pose_pairs(
    f: &[Lanes; 12],
    (a, b, c, r): Locals,
    n: usize,
    (xs, ys, zs): Outputs,
    bx: &mut [[f32; BATCH]; 6],
) -> usize {
    use std::arch::x86_64::*;
    let len = a.len().min(b.len()).min(c.len()).min(r.len()).min(xs.len()).min(ys.len()).min(zs.len());
    let pairs = n.min(len).div_ceil(2).min(len / 2);
    // SAFETY (whole body): every pointer below stays within the slices
    // (slots 2p, 2p + 1 < len), and the feature is the caller's promise.
    unsafe {
        // Each row of the frame in f32, the same 8 lanes in both halves.
        let mm: [__m512; 12] = std::array::from_fn(|e| {
            let v = _mm512_castps256_ps512(_mm512_cvtpd_ps(_mm512_loadu_pd(f[e].as_ptr())));
            _mm512_shuffle_f32x4::<0b01_00_01_00>(v, v)
        });
        let pair = |v: &[f32], i: usize| _mm512_mask_blend_ps(0xFF00, _mm512_set1_ps(v[i]), _mm512_set1_ps(v[i + 1]));
        let mut lo = [_mm512_set1_ps(f32::INFINITY); 3];
        let mut hi = [_mm512_set1_ps(f32::NEG_INFINITY); 3];
        for p in 0..pairs {
            let i = 2 * p;
            let (pa, pb, pc, pr) = (pair(a, i), pair(b, i), pair(c, i), pair(r, i));
            for (k, out) in [xs.as_mut_ptr(), ys.as_mut_ptr(), zs.as_mut_ptr()].into_iter().enumerate() {
                let o = _mm512_fmadd_ps(
                    mm[k],
                    pa,
                    _mm512_fmadd_ps(mm[3 + k], pb, _mm512_fmadd_ps(mm[6 + k], pc, mm[9 + k])),
                );
                _mm512_storeu_ps(out.add(i).cast::<f32>(), o);
                // `min(v, acc)` keeps `acc` where `v` is NaN, as `pose_lanes` does.
                lo[k] = _mm512_min_ps(_mm512_sub_ps(o, pr), lo[k]);
                hi[k] = _mm512_max_ps(_mm512_add_ps(o, pr), hi[k]);
            }
        }
        // Both halves folded (neither holds a NaN), straight into the box:
        // no reload of narrower stores.
        let halves = |v: __m512| {
            let high = _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(v)));
            (_mm512_castps512_ps256(v), high)
        };
        for k in 0..3 {
            let ((l0, l1), (h0, h1)) = (halves(lo[k]), halves(hi[k]));
            _mm256_storeu_ps(bx[k].as_mut_ptr(), _mm256_min_ps(l1, l0));
            _mm256_storeu_ps(bx[3 + k].as_mut_ptr(), _mm256_max_ps(h1, h0));
        }
    }
    2 * pairs
}

/// Forward kinematics of [`BATCH`] configurations, a lane each.
#[inline(always)]
// long: one SIMD kernel: split, its lanes would leave the registers
fn forward_batch(
    k: &Kinematics,
    qs: &[&[f64]; BATCH],
    qt: &mut [Line<Lanes>],
    out: &mut [Line<[Lanes; 12]>],
) -> Result<(), KinematicsError> {
    if let Some(q) = qs.iter().find(|q| q.len() != k.dof()) {
        return Err(KinematicsError::JointCount { expected: k.dof(), got: q.len() });
    }
    if out.len() != k.link_count() || qt.len() != k.dof() {
        return Err(KinematicsError::LinkCount { expected: k.link_count(), got: out.len() });
    }
    // Transposed once, up front: each joint then loads its lanes as one
    // vector (built lane by lane at every joint, they would wait on eight
    // scalar stores each time).
    for (d, t) in qt.iter_mut().enumerate() {
        for l in 0..BATCH {
            t[l] = qs[l][d];
        }
    }
    out[0] = Line(flat(k.base()).map(|v| [v; BATCH]));
    for j in 0..k.link_count() - 1 {
        let (parent, origin, motion, pure, (d, mult, off)) = k.joint_parts(j);
        let o = origin;
        // Lanes innermost everywhere, so each step is one vector operation.
        // Written in place: no 768-byte copies of the parent's or this
        // link's transform (links come after their parents).
        let (done, rest) = out.split_at_mut(j + 1);
        let (p, m) = (&done[parent].0, &mut rest[0].0);
        if pure {
            m[..9].copy_from_slice(&p[..9]);
        } else {
            for col in 0..3 {
                for row in 0..3 {
                    let (o0, o1, o2) = (o[3 * col], o[3 * col + 1], o[3 * col + 2]);
                    for l in 0..BATCH {
                        m[3 * col + row][l] = p[row][l].mul_add(o0, p[3 + row][l].mul_add(o1, p[6 + row][l] * o2));
                    }
                }
            }
        }
        for row in 0..3 {
            for l in 0..BATCH {
                m[9 + row][l] =
                    p[row][l].mul_add(o[9], p[3 + row][l].mul_add(o[10], p[6 + row][l].mul_add(o[11], p[9 + row][l])));
            }
        }
        // A joint without a DOF of its own (fixed) has no lanes to read.
        let q = qt.get(d as usize).map_or([0.0; BATCH], |t| t.0);
        let x: Lanes = std::array::from_fn(|l| mult.mul_add(q[l], off));
        match motion {
            Motion::Fixed => {}
            Motion::RotX => rotate_columns(m, 3, 6, &x),
            Motion::RotY => rotate_columns(m, 6, 0, &x),
            Motion::RotZ => rotate_columns(m, 0, 3, &x),
            Motion::Rot(axis) => {
                // P·R(k, θ) column by column, R = c·I + s·[k]× + (1 − c)·k·kᵀ:
                // column j is c·P_j + s·(P·[k]×)_j + (1 − c)·(P·k)·k_j, all
                // lane-wise with the axis as scalars.
                let (s, c) = sin_cos_lanes(&x);
                let (k0, k1, k2) = (axis.x, axis.y, axis.z);
                for row in 0..3 {
                    let (p0, p1, p2) = (m[row], m[3 + row], m[6 + row]);
                    for l in 0..BATCH {
                        let u = p0[l].mul_add(k0, p1[l].mul_add(k1, p2[l] * k2));
                        let tu = (1.0 - c[l]) * u;
                        let x0 = p1[l].mul_add(k2, -(p2[l] * k1));
                        let x1 = p2[l].mul_add(k0, -(p0[l] * k2));
                        let x2 = p0[l].mul_add(k1, -(p1[l] * k0));
                        m[row][l] = c[l].mul_add(p0[l], s[l].mul_add(x0, tu * k0));
                        m[3 + row][l] = c[l].mul_add(p1[l], s[l].mul_add(x1, tu * k1));
                        m[6 + row][l] = c[l].mul_add(p2[l], s[l].mul_add(x2, tu * k2));
                    }
                }
            }
            Motion::Slide(axis) => {
                for row in 0..3 {
                    for l in 0..BATCH {
                        let along = m[row][l].mul_add(axis.x, m[3 + row][l].mul_add(axis.y, m[6 + row][l] * axis.z));
                        m[9 + row][l] = along.mul_add(x[l], m[9 + row][l]);
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
            m[a + row][l] = c[l].mul_add(u, s[l] * v);
            m[b + row][l] = c[l].mul_add(v, -(s[l] * u));
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
    // Without short-circuits (NaN fails `<` too), so it is one vector compare.
    if x.iter().fold(false, |bad, v| bad | v.is_nan() | (v.abs() >= 1.0e5)) {
        return sin_cos_scalar(x);
    }
    for l in 0..BATCH {
        let (sl, cl, quadrant) = sin_cos_kernel_fma(x[l]);
        let swap = quadrant & 1 == 1;
        let (s1, c1) = if swap { (cl, sl) } else { (sl, cl) };
        s[l] = if quadrant & 2 != 0 { -s1 } else { s1 };
        c[l] = if (quadrant + 1) & 2 != 0 { -c1 } else { c1 };
    }
    (s, c)
}

/// [`crate::frame::sin_cos_kernel`] with its products fused (the same
/// reduction and polynomials, each step one fused multiply-add: the batch
/// runs compiled for FMA).
#[inline(always)]
fn sin_cos_kernel_fma(x: f64) -> (f64, f64, u64) {
    use std::f64::consts::FRAC_2_PI;
    const PIO2_1: f64 = 1.570_796_326_734_125_6;
    const PIO2_2: f64 = 6.077_100_506_303_966e-11;
    const PIO2_3: f64 = 2.022_266_248_795_950_6e-21;
    const ROUND: f64 = 6_755_399_441_055_744.0;
    let shifted = x.mul_add(FRAC_2_PI, ROUND);
    let k = shifted - ROUND;
    let quadrant = shifted.to_bits() & 3;
    let r = (-k).mul_add(PIO2_3, (-k).mul_add(PIO2_2, (-k).mul_add(PIO2_1, x)));
    let z = r * r;
    let ps = z.mul_add(1.589_690_995_211_55e-10, -2.505_076_025_340_686_3e-8);
    let ps = z.mul_add(ps, 2.755_731_370_707_007e-6);
    let ps = z.mul_add(ps, -1.984_126_982_985_795e-4);
    let ps = z.mul_add(ps, 8.333_333_333_322_49e-3);
    let ps = z.mul_add(ps, -1.666_666_666_666_663_2e-1);
    let s = (r * z).mul_add(ps, r);
    let pc = z.mul_add(-1.135_964_755_778_819_5e-11, 2.087_572_321_298_175e-9);
    let pc = z.mul_add(pc, -2.755_731_435_139_066_3e-7);
    let pc = z.mul_add(pc, 2.480_158_728_947_673e-5);
    let pc = z.mul_add(pc, -1.388_888_888_887_411e-3);
    let pc = z.mul_add(pc, 4.166_666_666_666_66e-2);
    let c = (z * z).mul_add(pc, (-0.5f64).mul_add(z, 1.0));
    (s, c, quadrant)
}
