//! The batch posing kernel as it was at commit d21c67e (144 ns per
//! configuration then, before the AVX-512 rework), kept here as a baseline that
//! runs in the same process as today's: the same slot layout and boxes,
//! eight configurations in `f64` lanes through the kinematics, then every
//! slot (padding included) posed a sphere at a time in 8 `f32` lanes with
//! separate products and sums, on the AVX2 + FMA path, general axes by a
//! full Rodrigues matrix product.
//!
//! It is written against the public model types only (the kernel itself
//! used crate internals), with the arithmetic in the same order.

use workcell_guard_core::Frame;
use workcell_guard_core::frame::{sin_cos, sin_cos_kernel};
use workcell_guard_core::model::batch::EMPTY_BOX;
use workcell_guard_core::model::posed::{LANES, POSE_EPS_M};
use workcell_guard_core::model::{BATCH, JointKind, Robot, SphereModel};

type Lanes = [f64; BATCH];

#[derive(Clone, Copy)]
enum Motion {
    Fixed,
    RotX,
    RotY,
    RotZ,
    Rot([f64; 3]),
    Slide([f64; 3]),
}

struct Joint {
    parent: usize,
    child: usize,
    origin: [f64; 12],
    pure: bool,
    motion: Motion,
    dof: usize,
    mult: f64,
    off: f64,
}

/// The d21c67e kernel with its own copy of the model in flat arrays.
pub struct Previous {
    base: [f64; 12],
    joints: Vec<Joint>,
    ranges: Vec<(usize, usize, usize)>,
    lx: Vec<f32>,
    ly: Vec<f32>,
    lz: Vec<f32>,
    r: Vec<f32>,
    frames: Vec<[Lanes; 12]>,
    /// Outputs: slot `s`, configuration `b` at `s * BATCH + b`.
    pub x: Vec<f32>,
    pub y: Vec<f32>,
    pub z: Vec<f32>,
    pub boxes: Vec<[[f32; BATCH]; 6]>,
}

fn flat(f: &Frame) -> [f64; 12] {
    let r = f.rot.as_slice();
    [r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], f.trans.x, f.trans.y, f.trans.z]
}

impl Previous {
    pub fn new(robot: &Robot, spheres: &SphereModel, base: &Frame) -> Previous {
        let mut joints = Vec::new();
        for j in &robot.joints {
            let (dof, mult, off) = match (j.dof, j.mimic) {
                (Some(d), _) => (d, 1.0, 0.0),
                (None, Some(m)) => (m.dof, m.multiplier, m.offset),
                (None, None) => (0, 0.0, 0.0),
            };
            let a = [j.axis.x, j.axis.y, j.axis.z];
            let sign = |i: usize| ((0..3).all(|k| k == i || a[k] == 0.0) && a[i].abs() == 1.0).then_some(a[i]);
            let (motion, s) = match j.kind {
                JointKind::Fixed => (Motion::Fixed, 1.0),
                JointKind::Prismatic => (Motion::Slide(a), 1.0),
                _ => match (sign(0), sign(1), sign(2)) {
                    (Some(s), _, _) => (Motion::RotX, s),
                    (_, Some(s), _) => (Motion::RotY, s),
                    (_, _, Some(s)) => (Motion::RotZ, s),
                    _ => (Motion::Rot(a), 1.0),
                },
            };
            let origin = flat(&j.origin);
            let pure = origin[..9] == [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
            joints.push(Joint {
                parent: j.parent,
                child: j.child,
                origin,
                pure,
                motion,
                dof,
                mult: s * mult,
                off: s * off,
            });
        }
        assert!(joints.iter().all(|j| j.parent < j.child), "links in topological order");
        let (mut lx, mut ly, mut lz, mut r, mut ranges) = (vec![], vec![], vec![], vec![], vec![]);
        for (li, ls) in spheres.links.iter().enumerate().filter(|(_, ls)| !ls.fine.is_empty()) {
            let start = lx.len();
            for k in 0..ls.fine.len().div_ceil(LANES) * LANES {
                let s = &ls.fine[k.min(ls.fine.len() - 1)];
                lx.push(s.center.x as f32);
                ly.push(s.center.y as f32);
                lz.push(s.center.z as f32);
                r.push(s.radius as f32 + POSE_EPS_M);
            }
            ranges.push((li, start, lx.len()));
        }
        let n = lx.len() * BATCH;
        Previous {
            base: flat(base),
            frames: vec![[[0.0; BATCH]; 12]; robot.links.len()],
            boxes: vec![[[0.0; BATCH]; 6]; robot.links.len()],
            joints,
            ranges,
            lx,
            ly,
            lz,
            r,
            x: vec![0.0; n],
            y: vec![0.0; n],
            z: vec![0.0; n],
        }
    }

    /// Poses eight configurations (the AVX2 + FMA build where the CPU has it, as then).
    pub fn pose_batch(&mut self, qs: &[&[f64]; BATCH]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: only requires the CPU features checked just above.
            return unsafe { self.pose_avx2_fma(qs) };
        }
        self.pose_impl(qs)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn pose_avx2_fma(&mut self, qs: &[&[f64]; BATCH]) {
        self.pose_impl(qs)
    }

    #[inline(always)]
    fn pose_impl(&mut self, qs: &[&[f64]; BATCH]) {
        self.forward(qs);
        for &(link, start, end) in &self.ranges {
            let f = &self.frames[link];
            let m: [[f32; BATCH]; 12] = std::array::from_fn(|e| std::array::from_fn(|b| f[e][b] as f32));
            let mut bx = EMPTY_BOX;
            for s in start..end {
                let (a, b, c, r) = (self.lx[s], self.ly[s], self.lz[s], self.r[s]);
                let ox: &mut [f32; BATCH] = (&mut self.x[s * BATCH..(s + 1) * BATCH]).try_into().unwrap();
                for l in 0..BATCH {
                    ox[l] = m[0][l] * a + m[3][l] * b + m[6][l] * c + m[9][l];
                }
                let oy: &mut [f32; BATCH] = (&mut self.y[s * BATCH..(s + 1) * BATCH]).try_into().unwrap();
                for l in 0..BATCH {
                    oy[l] = m[1][l] * a + m[4][l] * b + m[7][l] * c + m[10][l];
                }
                let oz: &mut [f32; BATCH] = (&mut self.z[s * BATCH..(s + 1) * BATCH]).try_into().unwrap();
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
            self.boxes[link] = bx;
        }
    }

    #[inline(always)]
    fn forward(&mut self, qs: &[&[f64]; BATCH]) {
        let out = &mut self.frames;
        out[0] = self.base.map(|v| [v; BATCH]);
        for jt in &self.joints {
            let o = &jt.origin;
            let (done, rest) = out.split_at_mut(jt.child);
            let (p, m) = (&done[jt.parent], &mut rest[0]);
            if jt.pure {
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
                x[l] = jt.mult * qs[l][jt.dof] + jt.off;
            }
            match jt.motion {
                Motion::Fixed => {}
                Motion::RotX => rotate_columns(m, 3, 6, &x),
                Motion::RotY => rotate_columns(m, 6, 0, &x),
                Motion::RotZ => rotate_columns(m, 0, 3, &x),
                Motion::Rot([ax, ay, az]) => {
                    let (s, c) = sin_cos_lanes(&x);
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
                Motion::Slide([ax, ay, az]) => {
                    for row in 0..3 {
                        for l in 0..BATCH {
                            m[9 + row][l] += (m[row][l] * ax + m[3 + row][l] * ay + m[6 + row][l] * az) * x[l];
                        }
                    }
                }
            }
        }
    }
}

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

#[cold]
#[inline(never)]
fn sin_cos_scalar(x: &Lanes) -> (Lanes, Lanes) {
    let (mut s, mut c) = ([0.0; BATCH], [0.0; BATCH]);
    for l in 0..BATCH {
        (s[l], c[l]) = sin_cos(x[l]);
    }
    (s, c)
}

#[inline(always)]
fn sin_cos_lanes(x: &Lanes) -> (Lanes, Lanes) {
    let (mut s, mut c) = ([0.0; BATCH], [0.0; BATCH]);
    if x.iter().any(|v| v.is_nan() || v.abs() >= 1.0e5) {
        return sin_cos_scalar(x);
    }
    for l in 0..BATCH {
        let (sl, cl, quadrant) = sin_cos_kernel(x[l]);
        let (s1, c1) = if quadrant & 1 == 1 { (cl, sl) } else { (sl, cl) };
        s[l] = if quadrant & 2 != 0 { -s1 } else { s1 };
        c[l] = if (quadrant + 1) & 2 != 0 { -c1 } else { c1 };
    }
    (s, c)
}
