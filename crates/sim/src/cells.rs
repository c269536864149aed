//! Cells for the simulators: the bundled cell with more arms, and which
//! episodes hand their plans to the guard.

use workcell_guard_core::cell::{BodyRef, Obstacle, Workcell};
use workcell_guard_core::frame::Frame;

/// The bundled cell with `n` arms (2–4): its two arms, plus copies of them
/// on pedestals behind and in front of the platen table (none added to a
/// cell without arms).
pub fn cell_with_arms(base: &Workcell, n: usize) -> Workcell {
    let mut cell = base.clone();
    cell.manipulators.truncate(n);
    if base.manipulators.is_empty() {
        return cell;
    }
    let spots = [([0.0, 1.0, 0.6], -std::f64::consts::FRAC_PI_2), ([-0.1, -1.35, 0.6], std::f64::consts::FRAC_PI_2)];
    for (k, (xyz, yaw)) in spots.iter().enumerate().take(n.saturating_sub(base.manipulators.len())) {
        let src = base.manipulators[k % base.manipulators.len()].clone();
        let mut m = src;
        m.name = format!("{}_{}", m.name, k + 2);
        m.base = Frame::from_xyz_rpy(*xyz, [0.0, 0.0, *yaw]);
        m.priority += 100 * (k as i64 + 1);
        let ri = cell.manipulators.len();
        let ped = cell.obstacles.len();
        cell.obstacles.push(Obstacle {
            name: format!("pedestal_{}", k + 2),
            pose: Frame::from_xyz_rpy([xyz[0], xyz[1], 0.3], [0.0; 3]),
            shape: workcell_guard_core::model::Shape::Cylinder { radius: 0.15, length: 0.6 },
        });
        cell.allowed_contacts.push((BodyRef::Link { robot: ri, link: 0 }, BodyRef::Obstacle(ped)));
        cell.manipulators.push(m);
    }
    cell
}

/// Which episodes' arms hand their planned trajectories to the guard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanMode {
    /// Every episode.
    Always,
    /// None: the guard forecasts by extrapolation only.
    Never,
    /// Episodes with an even seed.
    Half,
}

impl std::str::FromStr for PlanMode {
    type Err = String;
    fn from_str(s: &str) -> Result<PlanMode, String> {
        match s {
            "always" => Ok(PlanMode::Always),
            "never" => Ok(PlanMode::Never),
            "half" => Ok(PlanMode::Half),
            other => Err(format!("`{other}`: half, always or never")),
        }
    }
}

impl PlanMode {
    pub(crate) fn publishes(self, seed: u64) -> bool {
        match self {
            PlanMode::Always => true,
            PlanMode::Never => false,
            PlanMode::Half => seed.is_multiple_of(2),
        }
    }
}
