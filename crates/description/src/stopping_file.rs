//! A manipulator's learned stopping model as YAML: the `stopping:`
//! section of a workcell manipulator, inline or in its own file
//! (`stopping: {file: stopping/arm_left.yaml}`), as `workcell_guard
//! calibrate` writes it.
//!
//! ```yaml
//! source: {recordings: [stops.mcap], stops: 1600, held_out: 400}
//! joints:
//!   shoulder_pan:
//!     stops: 1370                    # stops it was fitted to
//!     speed_range: [0.08, 1.95]      # rad/s (m/s for a prismatic joint)
//!     position_range: [-1.2, 1.4]    # rad (m)
//!     reaction_time_s: 0.0163
//!     speed_knots: [0.08, 0.7, 1.3, 1.95]
//!     braking_s2: [0.053, 0.062, 0.071, 0.081]   # braking distance per v², per knot
//!     gravity: [0.008, 0.003, 0.0008, -0.001, 0.0045, 0.002]
//!     spread: [4.4e-5, 0.0018, 0.00018]
//!     quantile: 4.05
//! ```
//!
//! The terms are [`workcell_guard_core::forecast::stopping`]'s. Joints
//! left out have no model (their configured deceleration stands); the
//! speed range must match the knots' ends.

use crate::workcell::ConfigError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use workcell_guard_core::forecast::stopping::{JointStopping, StoppingModel};
use workcell_guard_core::model::robot::Robot;

/// The section as written.
#[derive(Deserialize, Serialize, Debug, Default, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawStopping {
    /// A file holding the section instead (relative to the workcell).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// What the model was fitted to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<RawSource>,
    /// Per joint name, its model.
    #[serde(default)]
    pub joints: BTreeMap<String, RawJointStopping>,
}

/// What a stopping model was fitted to.
#[derive(Deserialize, Serialize, Debug, Default, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawSource {
    /// The recordings.
    #[serde(default)]
    pub recordings: Vec<String>,
    /// Stops found in them.
    #[serde(default)]
    pub stops: usize,
    /// Of those, held out of the fit to score it.
    #[serde(default)]
    pub held_out: usize,
}

/// One joint's model as written.
#[derive(Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawJointStopping {
    /// Stops fitted.
    pub stops: usize,
    /// Speeds covered, rad/s or m/s.
    pub speed_range: [f64; 2],
    /// Positions covered, rad or m.
    pub position_range: [f64; 2],
    /// Reaction time of the point model, s.
    pub reaction_time_s: f64,
    /// Speed knots, ascending.
    pub speed_knots: Vec<f64>,
    /// Braking distance per v² at each knot.
    pub braking_s2: Vec<f64>,
    /// Gravity terms.
    pub gravity: [f64; 6],
    /// Residual spread coefficients.
    pub spread: [f64; 3],
    /// Quantile of the normalised residuals.
    pub quantile: f64,
}

impl RawJointStopping {
    /// The written form of `m` fitted to `stops` over `position_range`.
    pub fn from_model(m: &JointStopping, stops: usize, position_range: (f64, f64)) -> RawJointStopping {
        let (lo, hi) = m.range();
        RawJointStopping {
            stops,
            speed_range: [lo, hi],
            position_range: [position_range.0, position_range.1],
            reaction_time_s: m.reaction_s,
            speed_knots: m.speeds.clone(),
            braking_s2: m.braking.clone(),
            gravity: m.gravity,
            spread: m.spread,
            quantile: m.quantile,
        }
    }
}

/// The validated model of `raw` for `robot` (`key` the section's key path
/// for errors, `file` the file it came from).
pub(crate) fn validate(raw: &RawStopping, robot: &Robot, file: &Path, key: &str) -> Result<StoppingModel, ConfigError> {
    let invalid = |k: String, v: &dyn std::fmt::Debug, p: &str| ConfigError::Invalid {
        file: file.to_path_buf(),
        key: k,
        value: format!("{v:?}"),
        problem: p.to_string(),
    };
    let mut joints = vec![None; robot.dof()];
    for (name, j) in &raw.joints {
        let jk = format!("{key}.joints.{name}");
        let d = robot.joint_index(name).and_then(|ji| robot.joints[ji].dof).ok_or_else(|| {
            invalid(jk.clone(), name, &format!("is not an actuated joint of the URDF ({})", robot.dof_names.join(", ")))
        })?;
        let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
        let k = &j.speed_knots;
        if k.len() < 2 || k.len() != j.braking_s2.len() {
            return Err(invalid(
                format!("{jk}.speed_knots"),
                k,
                "needs at least 2 knots, as many as braking_s2 has values",
            ));
        }
        if !finite(k) || k[0] <= 0.0 || k.windows(2).any(|w| w[1] <= w[0]) {
            return Err(invalid(format!("{jk}.speed_knots"), k, "must be positive, finite and ascending"));
        }
        if j.speed_range != [k[0], k[k.len() - 1]] {
            return Err(invalid(format!("{jk}.speed_range"), &j.speed_range, "must be the first and last speed knot"));
        }
        if !finite(&j.braking_s2) || j.braking_s2.iter().any(|&b| b < 0.0) {
            return Err(invalid(format!("{jk}.braking_s2"), &j.braking_s2, "must be zero or positive, and finite"));
        }
        if !finite(&j.gravity) {
            return Err(invalid(format!("{jk}.gravity"), &j.gravity, "must be finite"));
        }
        if !finite(&j.spread) || j.spread.iter().any(|&c| c < 0.0) || j.spread[0] <= 0.0 {
            return Err(invalid(
                format!("{jk}.spread"),
                &j.spread,
                "must be finite and not negative, the first positive",
            ));
        }
        if !j.quantile.is_finite() {
            return Err(invalid(format!("{jk}.quantile"), &j.quantile, "must be finite"));
        }
        if !(j.reaction_time_s.is_finite() && j.reaction_time_s >= 0.0) {
            return Err(invalid(
                format!("{jk}.reaction_time_s"),
                &j.reaction_time_s,
                "must be zero or positive, and finite",
            ));
        }
        let m = JointStopping {
            reaction_s: j.reaction_time_s,
            speeds: k.clone(),
            braking: j.braking_s2.clone(),
            gravity: j.gravity,
            spread: j.spread,
            quantile: j.quantile,
            rotational: robot.dof_joint(d).kind.is_rotational(),
        };
        // The bound must be a distance wherever the model is used.
        for i in 0..=64 {
            let v = k[0] + (k[k.len() - 1] - k[0]) * i as f64 / 64.0;
            let q = j.position_range[0] + (j.position_range[1] - j.position_range[0]) * (i % 9) as f64 / 8.0;
            if !(m.bound(v, q) > 0.0 && m.bound(-v, q) > 0.0) {
                return Err(invalid(
                    jk,
                    &(v, q),
                    "the model's stopping distance is not positive at this speed and position",
                ));
            }
        }
        joints[d] = Some(m);
    }
    Ok(StoppingModel { joints })
}

/// The section as YAML text, with a header saying where it came from.
pub fn to_yaml(raw: &RawStopping, robot_name: &str) -> Result<String, String> {
    let text = serde_saphyr::to_string(raw).map_err(|e| e.to_string())?;
    Ok(format!(
        "# Stopping model of manipulator `{robot_name}`, written by `workcell_guard calibrate` {}.\n\
         # Name it from the workcell: `stopping: {{file: <this file>}}` in the manipulator.\n{text}",
        env!("CARGO_PKG_VERSION")
    ))
}
