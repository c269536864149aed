//! The node's services on the guard: releasing latched stops, a robot's
//! priority, allowed contacts. Each refusal says why.

use super::GuardNode;
use workcell_guard_description::workcell::BodyRef;

/// Why a service call (`~/reset_stop`, `~/set_contact`) was refused; its
/// text is the answer's `message`.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ServiceError {
    /// Latched robots still in conflict keep their latch.
    #[error("still stopped: {}{}", held.iter().map(|(n, c)| format!("`{n}` ({c})")).collect::<Vec<_>>().join(", "),
        if released.is_empty() { String::new() } else {
            format!("; released {}", released.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "))
        })]
    StillStopped {
        /// Robots still stopped, with what stopped them.
        held: Vec<(String, String)>,
        /// Robots released by the same call.
        released: Vec<String>,
    },
    /// `robot/link` names no robot of the cell.
    #[error("no manipulator `{0}`")]
    NoRobot(String),
    /// The robot has no such link.
    #[error("manipulator `{robot}` has no link `{link}`")]
    NoLink {
        /// The robot.
        robot: String,
        /// The link asked for.
        link: String,
    },
    /// Another robot has that priority (priorities are unique: they order
    /// robots where plans cross).
    #[error("priority {priority} is `{holder}`'s: priorities must be unique")]
    PriorityTaken {
        /// The priority asked for.
        priority: i64,
        /// The robot that has it.
        holder: String,
    },
    /// The name is no `robot/link`, obstacle or platen unit.
    #[error("`{0}` names no `robot/link`, obstacle or platen unit")]
    NoBody(String),
    /// The guard refuses the pair.
    #[error("`{a}` – `{b}`: {source}")]
    Contact {
        /// First body, as named.
        a: String,
        /// Second body, as named.
        b: String,
        /// Why.
        source: workcell_guard_core::guard::ContactError,
    },
}

impl GuardNode {
    /// Releases latched stops (`latch_stops`) of robots the guard now lets
    /// go; refuses, naming them, while any is still in conflict.
    pub fn reset_stops(&mut self) -> Result<String, ServiceError> {
        let mut released = Vec::new();
        let mut held = Vec::new();
        let (cell, io) = (&self.cell, &self.io);
        self.guard.reset_latches(|r, freed| {
            let name = cell.manipulators[r].name.clone();
            if freed {
                released.push(name);
            } else {
                held.push((name, io[r].cause.clone()));
            }
        });
        let quoted = |v: &[String]| v.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
        match (released.is_empty(), held.is_empty()) {
            (true, true) => Ok("no latched stops".into()),
            (_, true) => Ok(format!("released {}", quoted(&released))),
            _ => Err(ServiceError::StillStopped { held, released }),
        }
    }

    /// Gives robot `robot` priority `priority` (higher goes first where
    /// plans cross) until changed again or the workcell reloaded.
    pub fn set_priority(&mut self, robot: &str, priority: i32) -> Result<String, ServiceError> {
        let c = &self.cell;
        let ri = c
            .manipulators
            .iter()
            .position(|m| m.name == robot)
            .ok_or_else(|| ServiceError::NoRobot(robot.to_string()))?;
        let was = self.guard.priority(ri).unwrap_or_default();
        let taken = (0..c.manipulators.len()).find(|&o| o != ri && self.guard.priority(o) == Some(i64::from(priority)));
        if let Some(o) = taken {
            return Err(ServiceError::PriorityTaken {
                priority: i64::from(priority),
                holder: c.manipulators[o].name.clone(),
            });
        }
        self.guard.set_priority(ri, i64::from(priority));
        Ok(format!("`{robot}`: priority {was} -> {priority}"))
    }

    /// Allows or forbids contact between two bodies named as in the
    /// workcell file (`robot/link`, an obstacle, a platen unit).
    pub fn set_contact(&mut self, a: &str, b: &str, allowed: bool) -> Result<String, ServiceError> {
        let (ra, rb) = (self.body(a)?, self.body(b)?);
        let r = if allowed { self.guard.allow_contact(ra, rb) } else { self.guard.forbid_contact(ra, rb) };
        r.map_err(|source| ServiceError::Contact { a: a.to_string(), b: b.to_string(), source })?;
        Ok(format!("contact between `{a}` and `{b}` {}", if allowed { "allowed" } else { "forbidden" }))
    }

    fn body(&self, s: &str) -> Result<BodyRef, ServiceError> {
        let c = &self.cell;
        if let Some((robot, link)) = s.split_once('/') {
            let ri = c
                .manipulators
                .iter()
                .position(|m| m.name == robot)
                .ok_or_else(|| ServiceError::NoRobot(robot.to_string()))?;
            let li = c.manipulators[ri]
                .robot
                .link_index(link)
                .ok_or_else(|| ServiceError::NoLink { robot: robot.to_string(), link: link.to_string() })?;
            return Ok(BodyRef::Link { robot: ri, link: li });
        }
        if let Some(i) = c.obstacles.iter().position(|o| o.name == s) {
            return Ok(BodyRef::Obstacle(i));
        }
        if let Some(i) = c.platen.as_ref().and_then(|p| p.units.iter().position(|u| u.name == s)) {
            return Ok(BodyRef::PlatenUnit(i));
        }
        Err(ServiceError::NoBody(s.to_string()))
    }
}
