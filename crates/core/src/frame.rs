//! Rigid transforms as a rotation matrix and a translation.
//!
//! `nalgebra::Isometry3` stores a unit quaternion; composing and applying it
//! costs more than a 3×3 matrix product, and forward kinematics composes a
//! transform per joint and applies one per sphere. [`Frame`] keeps the
//! rotation as a `Matrix3` (column-major, nine `f64` inline) and the
//! translation as a `Vector3`: fixed-size, `Copy`, never on the heap.

use nalgebra::{Isometry3, Matrix3, Point3, Rotation3, Translation3, UnitQuaternion, Vector3};

/// A rigid transform `p ↦ rot · p + trans`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frame {
    /// Rotation part (orthonormal).
    pub rot: Matrix3<f64>,
    /// Translation part, metres.
    pub trans: Vector3<f64>,
}

impl Default for Frame {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Frame {
    /// The identity transform.
    pub const IDENTITY: Frame =
        Frame { rot: Matrix3::new(1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), trans: Vector3::new(0.0, 0.0, 0.0) };

    /// URDF convention: translate by `xyz`, rotate by fixed-axis roll, pitch,
    /// yaw (`R = Rz(yaw) · Ry(pitch) · Rx(roll)`).
    pub fn from_xyz_rpy(xyz: [f64; 3], rpy: [f64; 3]) -> Frame {
        let rot = Rotation3::from_euler_angles(rpy[0], rpy[1], rpy[2]);
        Frame { rot: *rot.matrix(), trans: Vector3::new(xyz[0], xyz[1], xyz[2]) }
    }

    /// `self ∘ other`: first `other`, then `self`.
    #[inline(always)]
    pub fn compose(&self, other: &Frame) -> Frame {
        // Written out on scalars: nalgebra's generic product was half of the
        // forward-kinematics time.
        let a = self.rot.as_slice(); // column-major
        let b = other.rot.as_slice();
        let mut r = [0.0; 9];
        for col in 0..3 {
            let (b0, b1, b2) = (b[3 * col], b[3 * col + 1], b[3 * col + 2]);
            for row in 0..3 {
                r[3 * col + row] = a[row] * b0 + a[3 + row] * b1 + a[6 + row] * b2;
            }
        }
        let (t0, t1, t2) = (other.trans.x, other.trans.y, other.trans.z);
        let t = [0, 1, 2].map(|row| a[row] * t0 + a[3 + row] * t1 + a[6 + row] * t2 + self.trans[row]);
        Frame { rot: Matrix3::from_column_slice(&r), trans: Vector3::new(t[0], t[1], t[2]) }
    }

    /// Applies the transform to a point.
    #[inline(always)]
    pub fn apply(&self, p: &Point3<f64>) -> Point3<f64> {
        Point3::from(self.rot * p.coords + self.trans)
    }

    /// The inverse transform.
    pub fn inverse(&self) -> Frame {
        let rt = self.rot.transpose();
        Frame { rot: rt, trans: -(rt * self.trans) }
    }

    /// Homogeneous 4×4 matrix, row-major.
    #[rustfmt::skip]
    pub fn to_row_major(&self) -> [f64; 16] {
        let r = &self.rot;
        let t = &self.trans;
        [
            r[(0, 0)], r[(0, 1)], r[(0, 2)], t[0],
            r[(1, 0)], r[(1, 1)], r[(1, 2)], t[1],
            r[(2, 0)], r[(2, 1)], r[(2, 2)], t[2],
            0.0, 0.0, 0.0, 1.0,
        ]
    }

    /// As a nalgebra isometry (for callers that want quaternions).
    pub fn to_isometry(&self) -> Isometry3<f64> {
        // Closed form (the rotation is orthonormal), renormalised against
        // rounding; `from_matrix`'s iteration costs more than the query
        // the pose is for.
        let q = UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(self.rot));
        let q = UnitQuaternion::new_normalize(q.into_inner());
        Isometry3::from_parts(Translation3::from(self.trans), q)
    }

    /// True when every entry is finite.
    pub fn is_finite(&self) -> bool {
        self.rot.iter().all(|v| v.is_finite()) && self.trans.iter().all(|v| v.is_finite())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rpy_matches_urdf_fixed_axis_convention() {
        let (r, p, y) = (0.3, -0.7, 1.1);
        let f = Frame::from_xyz_rpy([0.0; 3], [r, p, y]);
        let expect = Rotation3::from_axis_angle(&Vector3::z_axis(), y)
            * Rotation3::from_axis_angle(&Vector3::y_axis(), p)
            * Rotation3::from_axis_angle(&Vector3::x_axis(), r);
        assert!((f.rot - expect.matrix()).norm() < 1e-14);
    }

    #[test]
    fn compose_then_inverse_is_identity() {
        let a = Frame::from_xyz_rpy([0.1, 0.2, 0.3], [0.4, 0.5, 0.6]);
        let b = a.compose(&a.inverse());
        assert!((b.rot - Matrix3::identity()).norm() < 1e-14);
        assert!(b.trans.norm() < 1e-14);
    }
}

/// Sine and cosine of `x` together, to within about one ulp for
/// `|x| < 1e5` (joint angles); larger or non-finite `x` fall back to the
/// standard library.
///
/// Forward kinematics takes one sine and one cosine per revolute joint, and
/// the C library's `sincos` was a fifth of the posing time. This is the
/// classic scheme: reduce by multiples of π/2 with a three-part Cody–Waite
/// constant (exact products for the quadrant counts that occur), then
/// minimax polynomials on `[-π/4, π/4]`.
#[inline(always)]
pub fn sin_cos(x: f64) -> (f64, f64) {
    if x.is_nan() || x.abs() >= 1.0e5 {
        return x.sin_cos();
    }
    let (s, c, quadrant) = sin_cos_kernel(x);
    match quadrant {
        0 => (s, c),
        1 => (c, -s),
        2 => (-s, -c),
        _ => (-c, s),
    }
}

/// The reduction and polynomials of [`sin_cos`] for `|x| < 1e5`: the sine
/// and cosine of the reduced angle and the quadrant (0–3), with no branch.
#[inline(always)]
pub fn sin_cos_kernel(x: f64) -> (f64, f64, u64) {
    use std::f64::consts::FRAC_2_PI;
    const PIO2_1: f64 = 1.570_796_326_734_125_6; // first 33 bits of π/2
    const PIO2_2: f64 = 6.077_100_506_303_966e-11; // next 33 bits
    const PIO2_3: f64 = 2.022_266_248_795_950_6e-21; // the rest
    // Round to nearest by the 1.5·2^52 trick: no libm call on baseline x86-64.
    const ROUND: f64 = 6_755_399_441_055_744.0;
    let shifted = x * FRAC_2_PI + ROUND;
    let k = shifted - ROUND;
    // The low bits of the shifted value's mantissa are k mod 4, also for negative k.
    let quadrant = shifted.to_bits() & 3;
    let r = ((x - k * PIO2_1) - k * PIO2_2) - k * PIO2_3;
    let z = r * r;
    let s = r + r
        * z
        * (-1.666_666_666_666_663_2e-1
            + z * (8.333_333_333_322_49e-3
                + z * (-1.984_126_982_985_795e-4
                    + z * (2.755_731_370_707_007e-6
                        + z * (-2.505_076_025_340_686_3e-8 + z * 1.589_690_995_211_55e-10)))));
    let c = 1.0 - 0.5 * z
        + z * z
            * (4.166_666_666_666_66e-2
                + z * (-1.388_888_888_887_411e-3
                    + z * (2.480_158_728_947_673e-5
                        + z * (-2.755_731_435_139_066_3e-7
                            + z * (2.087_572_321_298_175e-9 + z * -1.135_964_755_778_819_5e-11)))));
    (s, c, quadrant)
}

#[cfg(test)]
mod sin_cos_tests {
    use super::sin_cos;

    #[test]
    fn sin_cos_matches_the_standard_library_to_a_few_ulp() {
        let mut worst: f64 = 0.0;
        let mut x = -400.0;
        while x < 400.0 {
            let (s, c) = sin_cos(x);
            worst = worst.max((s - x.sin()).abs()).max((c - x.cos()).abs());
            x += 0.000_731;
        }
        assert!(worst < 5e-16, "worst error {worst:e}");
        for x in [0.0, -0.0, 1e-300, std::f64::consts::FRAC_PI_4, 1e6, f64::MAX] {
            let (s, c) = sin_cos(x);
            assert!((s - x.sin()).abs() < 1e-15 && (c - x.cos()).abs() < 1e-15, "{x}");
        }
        assert!(sin_cos(f64::NAN).0.is_nan() && sin_cos(f64::INFINITY).1.is_nan());
    }
}
