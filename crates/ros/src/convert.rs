//! Messages to core inputs and decisions to messages, and nothing else:
//! stamps, joint states by name into a robot's joint order, stop flags and
//! diagnostics. Buffers are kept and reused, so a cycle allocates nothing
//! while the publishers keep their joint order.

use crate::msg::{DiagnosticStatus, JointState, KeyValue, Time};
use std::fmt::Write;
use workcell_guard_core::guard::{Body, Decision, Reason, StopKind};
use workcell_guard_description::workcell::Workcell;

/// A ROS time in seconds; None if the nanoseconds are out of range.
pub fn time_s(t: Time) -> Option<f64> {
    (t.nanosec < 1_000_000_000).then_some(t.sec as f64 + t.nanosec as f64 * 1e-9)
}

/// Seconds as a ROS time (rounded to the nanosecond); None if not finite or
/// outside the 32-bit seconds range.
pub fn to_time(s: f64) -> Option<Time> {
    if !s.is_finite() {
        return None;
    }
    let sec = s.floor();
    if sec < i32::MIN as f64 || sec > i32::MAX as f64 {
        return None;
    }
    let mut nanosec = ((s - sec) * 1e9).round() as u32;
    let mut sec = sec as i32;
    if nanosec >= 1_000_000_000 {
        nanosec -= 1_000_000_000;
        sec = sec.checked_add(1)?;
    }
    Some(Time { sec, nanosec })
}

/// A joint state that cannot be mapped onto the robot's joints.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum JointStateError {
    /// Names and positions differ in number.
    #[error("{names} joint names but {positions} positions")]
    PositionCount {
        /// Names.
        names: usize,
        /// Positions.
        positions: usize,
    },
    /// Velocities are given, but not one per name.
    #[error("{names} joint names but {velocities} velocities")]
    VelocityCount {
        /// Names.
        names: usize,
        /// Velocities.
        velocities: usize,
    },
    /// A name appears twice.
    #[error("joint `{0}` appears twice")]
    DuplicateJoint(String),
    /// A joint of the robot is missing.
    #[error("joint `{0}` of the robot is missing")]
    MissingJoint(String),
    /// A name the robot has no joint of.
    #[error("the robot has no joint `{0}`")]
    UnknownJoint(String),
    /// The stamp's nanoseconds are out of range.
    #[error("stamp nanoseconds {0} out of range")]
    BadStamp(u32),
    /// A mimic joint's position is not where its leader puts it.
    #[error(
        "mimic joint `{joint}` at {position} but its leader `{leader}` puts it at {expected} (tolerance {tolerance})"
    )]
    MimicMismatch {
        /// The mimic joint.
        joint: String,
        /// Its position in the message.
        position: f64,
        /// The joint it follows.
        leader: String,
        /// `multiplier · leader + offset`.
        expected: f64,
        /// The largest difference taken.
        tolerance: f64,
    },
}

/// A joint that follows another (URDF `<mimic>`): drivers may publish it,
/// and its position is checked against its leader's.
#[derive(Clone, Debug, PartialEq)]
pub struct MimicJoint {
    /// Its name.
    pub name: String,
    /// The actuated joint it follows (index into the robot's joint order).
    pub leader: usize,
    /// `q = multiplier · q_leader + offset`.
    pub multiplier: f64,
    /// See `multiplier`.
    pub offset: f64,
}

/// Largest difference between a published mimic joint's position and the
/// one its leader gives it, rad or m: a mimic joint driven by the same
/// motor follows within encoder resolution; one that does not is a wiring
/// or naming fault.
pub const MIMIC_TOLERANCE: f64 = 1e-3;

/// Maps joint states by name onto one robot's joint order. The order of
/// the names last seen is cached: while it stays the same, mapping is a
/// copy through an index table. Every index it reads a message with was
/// checked against that message's lengths first, so no message can make
/// it read out of bounds.
#[derive(Clone, Debug)]
pub struct JointMap {
    dof: Vec<String>,
    mimics: Vec<MimicJoint>,
    /// The names last mapped successfully; meaningful only while `learned`.
    seen: Vec<String>,
    learned: bool,
    /// For each robot joint, its index in the message.
    index: Vec<usize>,
    /// (index in the message, mimic) of each mimic joint the message names.
    mimic_index: Vec<(usize, usize)>,
    positions: Vec<f64>,
    velocities: Vec<f64>,
}

/// A joint state in the robot's order.
#[derive(Clone, Copy, Debug)]
pub struct Mapped<'a> {
    /// Stamp, s.
    pub stamp_s: f64,
    /// Positions.
    pub positions: &'a [f64],
    /// Velocities, when the message has them.
    pub velocities: Option<&'a [f64]>,
}

impl JointMap {
    /// A map onto joints named `dof_names`, in that order, with no mimic joints.
    pub fn new(dof_names: &[String]) -> JointMap {
        JointMap::with_mimics(dof_names, Vec::new())
    }

    /// A map onto a robot's actuated joints that also takes its mimic joints.
    pub fn of_robot(robot: &workcell_guard_core::model::Robot) -> JointMap {
        let mimics = robot
            .joints
            .iter()
            .filter_map(|j| {
                j.mimic.map(|m| MimicJoint {
                    name: j.name.clone(),
                    leader: m.dof,
                    multiplier: m.multiplier,
                    offset: m.offset,
                })
            })
            .filter(|m| m.leader < robot.dof_names.len())
            .collect();
        JointMap::with_mimics(&robot.dof_names, mimics)
    }

    /// A map onto joints named `dof_names` that also takes `mimics`.
    pub fn with_mimics(dof_names: &[String], mimics: Vec<MimicJoint>) -> JointMap {
        let n = dof_names.len();
        JointMap {
            dof: dof_names.to_vec(),
            mimic_index: Vec::with_capacity(mimics.len()),
            mimics,
            seen: Vec::new(),
            learned: false,
            index: vec![0; n],
            positions: vec![0.0; n],
            velocities: vec![0.0; n],
        }
    }

    /// Learns the index table of a new name list. On any refusal the map
    /// holds no table (`learned` false), so the next message is learned
    /// anew whatever its names.
    fn learn(&mut self, names: &[String]) -> Result<(), JointStateError> {
        self.learned = false;
        self.seen.clear();
        self.mimic_index.clear();
        for (i, n) in names.iter().enumerate() {
            if names[..i].contains(n) {
                return Err(JointStateError::DuplicateJoint(n.clone()));
            }
            if !self.dof.contains(n) {
                match self.mimics.iter().position(|m| &m.name == n) {
                    Some(k) => self.mimic_index.push((i, k)),
                    None => return Err(JointStateError::UnknownJoint(n.clone())),
                }
            }
        }
        for (d, name) in self.dof.iter().enumerate() {
            match names.iter().position(|n| n == name) {
                Some(i) => self.index[d] = i,
                None => return Err(JointStateError::MissingJoint(name.clone())),
            }
        }
        self.seen.extend_from_slice(names);
        self.learned = true;
        Ok(())
    }

    /// The message in the robot's joint order. Values are passed on as
    /// they are (the core refuses NaN and bad stamps with its own reasons);
    /// mimic joints are checked against their leaders and then dropped.
    pub fn map(&mut self, msg: &JointState) -> Result<Mapped<'_>, JointStateError> {
        let names = msg.name.len();
        if msg.position.len() != names {
            return Err(JointStateError::PositionCount { names, positions: msg.position.len() });
        }
        if !msg.velocity.is_empty() && msg.velocity.len() != names {
            return Err(JointStateError::VelocityCount { names, velocities: msg.velocity.len() });
        }
        let stamp_s = time_s(msg.header.stamp).ok_or(JointStateError::BadStamp(msg.header.stamp.nanosec))?;
        if !self.learned || self.seen != msg.name {
            self.learn(&msg.name)?;
        }
        // Indices were learned from a name list equal to this message's,
        // whose positions (and velocities, if any) match it in length; the
        // checked reads below cannot fail, and would refuse if they did.
        let missing = |d: usize| JointStateError::MissingJoint(self.dof.get(d).cloned().unwrap_or_default());
        for (d, &i) in self.index.iter().enumerate() {
            self.positions[d] = *msg.position.get(i).ok_or_else(|| missing(d))?;
        }
        for &(i, k) in &self.mimic_index {
            let (Some(m), Some(&position)) = (self.mimics.get(k), msg.position.get(i)) else { continue };
            let Some(&lead) = self.positions.get(m.leader) else { continue };
            let expected = m.multiplier * lead + m.offset;
            // NaN fails this test too: the leader's NaN is the core's to
            // name, a mimic's own NaN is named here.
            let off = (position - expected).abs();
            let within = off.partial_cmp(&MIMIC_TOLERANCE).is_some_and(|o| o.is_le());
            if !within && lead.is_finite() {
                return Err(JointStateError::MimicMismatch {
                    joint: m.name.clone(),
                    position,
                    leader: self.dof.get(m.leader).cloned().unwrap_or_default(),
                    expected,
                    tolerance: MIMIC_TOLERANCE,
                });
            }
        }
        let velocities = if msg.velocity.is_empty() {
            None
        } else {
            for (d, &i) in self.index.iter().enumerate() {
                self.velocities[d] = *msg.velocity.get(i).ok_or_else(|| missing(d))?;
            }
            Some(&self.velocities[..])
        };
        Ok(Mapped { stamp_s, positions: &self.positions, velocities })
    }
}

/// Sets a key and clears its value (keeping both strings' memory).
fn value<'a>(kv: &'a mut KeyValue, key: &str) -> &'a mut String {
    kv.key.clear();
    kv.key.push_str(key);
    kv.value.clear();
    &mut kv.value
}

/// A robot's diagnostic message while nothing stops it: it may move (it
/// need not be moving).
pub const CLEAR: &str = "clear: may move";

/// Names of robots and links, for messages.
#[derive(Clone, Debug)]
pub struct Names {
    robots: Vec<String>,
    links: Vec<Vec<String>>,
    joints: Vec<Vec<String>>,
}

impl Names {
    /// The names of a cell's manipulators and their links.
    pub fn new(cell: &Workcell) -> Names {
        Names {
            robots: cell.manipulators.iter().map(|m| m.name.clone()).collect(),
            links: cell.manipulators.iter().map(|m| m.robot.links.iter().map(|l| l.name.clone()).collect()).collect(),
            joints: cell.manipulators.iter().map(|m| m.robot.dof_names.clone()).collect(),
        }
    }

    fn robot(&self, i: usize) -> &str {
        self.robots.get(i).map_or("?", String::as_str)
    }

    pub(crate) fn body(&self, b: Body, out: &mut String) {
        match b {
            Body::Cell => out.push_str("cell"),
            Body::Link { robot, link } => {
                let l = self.links.get(robot as usize).and_then(|l| l.get(link as usize));
                let _ = write!(out, "{}/{}", self.robot(robot as usize), l.map_or("?", String::as_str));
            }
        }
    }

    /// One line saying why a robot stopped.
    pub(crate) fn reason(&self, robot: usize, r: Reason, out: &mut String) {
        let _ = match r {
            Reason::Cell => write!(out, "stopping path too close to the cell"),
            Reason::Robot { other } => write!(out, "stopping path too close to `{}`", self.robot(other as usize)),
            Reason::SelfCollision => write!(out, "two of its own links too close"),
            Reason::NoJointState => write!(out, "no joint state received"),
            Reason::StaleJointState { age_s } => write!(out, "joint state {age_s:.3} s old"),
            Reason::BadJointState(e) => write!(out, "joint state refused: {e}"),
            Reason::WarmingUp { have, need } => write!(out, "warming up: {have} of {need} joint states"),
            Reason::ImplausibleMotion { joint, speed, limit } => write!(
                out,
                "joint state implausible: joint `{}` moving at {speed:.3}, beyond its limit {limit:.3} (a jump or a wrong stamp)",
                self.joints.get(robot).and_then(|j| j.get(joint as usize)).map_or("?", String::as_str)
            ),
            Reason::OtherRobotUnknown { other } => {
                write!(out, "`{}` has never reported its joint state", self.robot(other as usize))
            }
            Reason::Holding { clear_for_s } => write!(out, "holding: clear for {clear_for_s:.3} s"),
        };
    }

    /// Fills `s` with robot `robot`'s decision: OK to continue, WARN for a
    /// stop the guard chose (proximity, hold, start-up), ERROR for a stop
    /// forced by missing or bad data. Reuses the strings' memory.
    pub fn fill_status(&self, s: &mut DiagnosticStatus, robot: usize, d: &Decision) {
        s.name.clear();
        let _ = write!(s.name, "workcell_guard: {}", self.robot(robot));
        s.hardware_id.clear();
        s.hardware_id.push_str(self.robot(robot));
        s.message.clear();
        let (clearance, pair, ttc) = match d {
            Decision::Continue { clearance_m, pair, escaping } => {
                s.level = DiagnosticStatus::OK;
                s.message.push_str(if *escaping { "escaping: moving away from what stopped it" } else { CLEAR });
                (*clearance_m, *pair, None)
            }
            Decision::Stop(st) => {
                s.level = match st.reason {
                    Reason::NoJointState
                    | Reason::StaleJointState { .. }
                    | Reason::BadJointState(_)
                    | Reason::ImplausibleMotion { .. }
                    | Reason::OtherRobotUnknown { .. } => DiagnosticStatus::ERROR,
                    _ => DiagnosticStatus::WARN,
                };
                s.message.push_str(match st.kind {
                    StopKind::OnPath => "stop on path: ",
                    StopKind::Immediate => "stop now: ",
                });
                self.reason(robot, st.reason, &mut s.message);
                (st.clearance_m, st.pair, st.time_to_contact_s)
            }
        };
        if s.values.len() < 3 {
            s.values.resize_with(3, KeyValue::default);
        }
        let _ = write!(value(&mut s.values[0], "clearance_m"), "{clearance:.4}");
        let v = value(&mut s.values[1], "closest_pair");
        if let Some((a, b)) = pair {
            self.body(a, v);
            v.push_str(" <-> ");
            self.body(b, v);
        }
        let v = value(&mut s.values[2], "time_to_contact_s");
        if let Some(ttc) = ttc {
            let _ = write!(v, "{ttc:.4}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msg::Header;
    use workcell_guard_core::guard::Stop;

    fn js(names: &[&str], pos: &[f64], vel: &[f64]) -> JointState {
        JointState {
            header: Header { stamp: Time { sec: 12, nanosec: 500_000_000 }, frame_id: String::new() },
            name: names.iter().map(|s| s.to_string()).collect(),
            position: pos.to_vec(),
            velocity: vel.to_vec(),
            effort: vec![],
        }
    }

    fn dof() -> Vec<String> {
        ["j1", "j2", "j3"].iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn joint_states_are_reordered_by_name() {
        let mut m = JointMap::new(&dof());
        let out = m.map(&js(&["j3", "j1", "j2"], &[3.0, 1.0, 2.0], &[])).unwrap();
        assert_eq!(out.positions, &[1.0, 2.0, 3.0]);
        assert_eq!(out.velocities, None);
        assert_eq!(out.stamp_s, 12.5);
        let out = m.map(&js(&["j2", "j3", "j1"], &[2.0, 3.0, 1.0], &[0.2, 0.3, 0.1])).unwrap();
        assert_eq!(out.positions, &[1.0, 2.0, 3.0]);
        assert_eq!(out.velocities, Some(&[0.1, 0.2, 0.3][..]));
    }

    #[test]
    fn mismatched_joint_states_are_refused_by_name() {
        let mut m = JointMap::new(&dof());
        use JointStateError as E;
        assert_eq!(
            m.map(&js(&["j1", "j2", "j3"], &[1.0, 2.0], &[])).unwrap_err(),
            E::PositionCount { names: 3, positions: 2 }
        );
        assert_eq!(
            m.map(&js(&["j1", "j2", "j3"], &[1.0, 2.0, 3.0], &[0.0])).unwrap_err(),
            E::VelocityCount { names: 3, velocities: 1 }
        );
        assert_eq!(m.map(&js(&["j1", "j2"], &[1.0, 2.0], &[])).unwrap_err(), E::MissingJoint("j3".into()));
        assert_eq!(m.map(&js(&["j1", "j2", "j9"], &[1.0, 2.0, 3.0], &[])).unwrap_err(), E::UnknownJoint("j9".into()));
        assert_eq!(m.map(&js(&["j1", "j1", "j3"], &[1.0, 2.0, 3.0], &[])).unwrap_err(), E::DuplicateJoint("j1".into()));
        let mut bad = js(&["j1", "j2", "j3"], &[1.0, 2.0, 3.0], &[]);
        bad.header.stamp.nanosec = 1_000_000_000;
        assert_eq!(m.map(&bad).unwrap_err(), E::BadStamp(1_000_000_000));
        // A refusal does not poison the cache: a good message maps again.
        assert!(m.map(&js(&["j1", "j2", "j3"], &[1.0, 2.0, 3.0], &[])).is_ok());
        // NaN passes through (the core refuses it with its own reason).
        assert!(m.map(&js(&["j1", "j2", "j3"], &[f64::NAN, 2.0, 3.0], &[])).unwrap().positions[0].is_nan());
    }

    #[test]
    fn an_empty_joint_state_is_refused_in_every_sequence_and_never_read_past_its_end() {
        use JointStateError as E;
        let empty = || js(&[], &[], &[]);
        // First message empty.
        let mut m = JointMap::new(&dof());
        assert_eq!(m.map(&empty()).unwrap_err(), E::MissingJoint("j1".into()));
        assert_eq!(m.map(&empty()).unwrap_err(), E::MissingJoint("j1".into()));
        // Two empty after good ones.
        let mut m = JointMap::new(&dof());
        assert!(m.map(&js(&["j1", "j2", "j3"], &[1.0, 2.0, 3.0], &[])).is_ok());
        assert!(m.map(&js(&["j1", "j2", "j3"], &[1.0, 2.0, 3.0], &[])).is_ok());
        assert_eq!(m.map(&empty()).unwrap_err(), E::MissingJoint("j1".into()));
        assert_eq!(m.map(&empty()).unwrap_err(), E::MissingJoint("j1".into()));
        // A refusal (duplicate, unknown, missing) and then an empty one.
        for bad in [
            js(&["j1", "j1", "j3"], &[1.0, 2.0, 3.0], &[]),
            js(&["j1", "j2", "j9"], &[1.0, 2.0, 3.0], &[]),
            js(&["j1", "j2"], &[1.0, 2.0], &[]),
        ] {
            let mut m = JointMap::new(&dof());
            assert!(m.map(&js(&["j1", "j2", "j3"], &[1.0, 2.0, 3.0], &[])).is_ok());
            assert!(m.map(&bad).is_err());
            assert_eq!(m.map(&empty()).unwrap_err(), E::MissingJoint("j1".into()));
            // And it maps good messages again afterwards.
            assert_eq!(m.map(&js(&["j3", "j2", "j1"], &[3.0, 2.0, 1.0], &[])).unwrap().positions, &[1.0, 2.0, 3.0]);
        }
    }

    #[test]
    fn mimic_joints_are_taken_when_they_follow_their_leader_and_refused_otherwise() {
        let mimic = MimicJoint { name: "finger_2".into(), leader: 2, multiplier: -1.0, offset: 0.01 };
        let mut m = JointMap::with_mimics(&dof(), vec![mimic]);
        let out = m.map(&js(&["j1", "j2", "j3", "finger_2"], &[1.0, 2.0, 0.03, -0.02], &[0.0; 4])).unwrap();
        assert_eq!(out.positions, &[1.0, 2.0, 0.03]);
        assert_eq!(out.velocities, Some(&[0.0, 0.0, 0.0][..]));
        let e = m.map(&js(&["j1", "j2", "j3", "finger_2"], &[1.0, 2.0, 0.03, 0.02], &[])).unwrap_err();
        assert!(
            matches!(&e, JointStateError::MimicMismatch { joint, leader, expected, .. }
                if joint == "finger_2" && leader == "j3" && (*expected + 0.02).abs() < 1e-12),
            "{e:?}"
        );
        assert!(e.to_string().contains("mimic joint `finger_2` at 0.02 but its leader `j3`"), "{e}");
        // Without the mimic joint, still fine.
        assert!(m.map(&js(&["j1", "j2", "j3"], &[1.0, 2.0, 3.0], &[])).is_ok());
        // A robot's mimic joints come from its URDF.
        let cell = workcell_guard_description::workcell::load(
            &std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("config/workcell.yaml"),
        )
        .unwrap();
        let robot = &cell.manipulators[0].robot;
        let mj = robot.joints.iter().find(|j| j.mimic.is_some()).expect("the sample arm has a mimic gripper");
        let mut m = JointMap::of_robot(robot);
        let mut names: Vec<&str> = robot.dof_names.iter().map(String::as_str).collect();
        let mut q = vec![0.0; names.len()];
        let mm = mj.mimic.unwrap();
        names.push(&mj.name);
        q.push(mm.offset);
        assert!(m.map(&js(&names, &q, &[])).is_ok());
        *q.last_mut().unwrap() += 0.1;
        assert!(matches!(m.map(&js(&names, &q, &[])), Err(JointStateError::MimicMismatch { .. })));
    }

    #[test]
    fn times_convert_both_ways() {
        assert_eq!(to_time(12.5), Some(Time { sec: 12, nanosec: 500_000_000 }));
        assert_eq!(to_time(-0.25), Some(Time { sec: -1, nanosec: 750_000_000 }));
        assert_eq!(to_time(0.999_999_999_9), Some(Time { sec: 1, nanosec: 0 }));
        assert_eq!(to_time(f64::NAN), None);
        assert_eq!(to_time(1e12), None);
        assert_eq!(time_s(Time { sec: 3, nanosec: 250_000_000 }), Some(3.25));
    }

    #[test]
    fn decisions_become_a_status() {
        let cell = workcell_guard_description::workcell::load(
            &std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("config/workcell.yaml"),
        )
        .unwrap();
        let names = Names::new(&cell);
        let stop = Decision::Stop(Stop {
            kind: StopKind::OnPath,
            reason: Reason::Robot { other: 1 },
            pair: Some((Body::Link { robot: 0, link: 3 }, Body::Link { robot: 1, link: 2 })),
            clearance_m: 0.004,
            time_to_contact_s: Some(0.12),
        });
        let mut s = DiagnosticStatus::default();
        names.fill_status(&mut s, 0, &stop);
        assert_eq!(s.level, DiagnosticStatus::WARN);
        assert_eq!(s.message, format!("stop on path: stopping path too close to `{}`", cell.manipulators[1].name));
        let l0 = &cell.manipulators[0].robot.links[3].name;
        assert!(s.values[1].value.starts_with(&format!("{}/{l0} <-> ", cell.manipulators[0].name)), "{:?}", s.values);
        assert_eq!(s.values[2].value, "0.1200");
        let go = Decision::Continue { clearance_m: 0.25, pair: None, escaping: false };
        names.fill_status(&mut s, 1, &go);
        assert_eq!((s.level, s.message.as_str(), s.values[0].value.as_str()), (DiagnosticStatus::OK, CLEAR, "0.2500"));
        assert_eq!(s.values[2].value, "");
        let data = Decision::Stop(Stop {
            kind: StopKind::Immediate,
            reason: Reason::NoJointState,
            pair: None,
            clearance_m: f32::INFINITY,
            time_to_contact_s: None,
        });
        names.fill_status(&mut s, 1, &data);
        assert_eq!((s.level, s.message.as_str()), (DiagnosticStatus::ERROR, "stop now: no joint state received"));
    }
}

/// A point cloud that cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CloudError {
    /// No `x`, `y` or `z` field of type FLOAT32 or FLOAT64.
    #[error("no FLOAT32/FLOAT64 field `{0}`")]
    MissingField(&'static str),
    /// A field does not fit in a point.
    #[error("field `{0}` reaches past point_step {1}")]
    FieldOutside(&'static str, u32),
    /// `data` is shorter than the layout says.
    #[error("{have} data bytes, the layout needs {need}")]
    ShortData {
        /// Bytes present.
        have: usize,
        /// Bytes needed.
        need: usize,
    },
    /// The cloud is not in the cell frame.
    #[error("frame `{got}`, expected the cell frame `{want}` (no tf lookups yet)")]
    Frame {
        /// The cloud's frame.
        got: String,
        /// The cell frame.
        want: String,
    },
}

/// The x, y, z of every point of `msg` into `out` (cleared first; points
/// with a non-finite coordinate are kept, for the field to count them).
pub fn cloud_points(msg: &crate::msg::PointCloud2, out: &mut Vec<[f32; 3]>) -> Result<(), CloudError> {
    use crate::msg::PointField;
    out.clear();
    let field = |n: &'static str| -> Result<(usize, u8), CloudError> {
        let f = msg
            .fields
            .iter()
            .find(|f| f.name == n && (f.datatype == PointField::FLOAT32 || f.datatype == PointField::FLOAT64))
            .ok_or(CloudError::MissingField(n))?;
        let size = if f.datatype == PointField::FLOAT32 { 4 } else { 8 };
        if f.offset as usize + size > msg.point_step as usize {
            return Err(CloudError::FieldOutside(n, msg.point_step));
        }
        Ok((f.offset as usize, f.datatype))
    };
    let fx = [field("x")?, field("y")?, field("z")?];
    let (w, h) = (msg.width as usize, msg.height as usize);
    let (step, row) = (msg.point_step as usize, msg.row_step as usize);
    // Sizes come from the message: computed without overflow (a sum past
    // `usize` is a cloud no data can hold).
    let span = w.checked_mul(step);
    let need = if w == 0 || h == 0 { Some(0) } else { (h - 1).checked_mul(row).and_then(|x| x.checked_add(span?)) };
    let all = h.saturating_mul(span.unwrap_or(usize::MAX));
    match (need, span) {
        (Some(need), Some(span)) if msg.data.len() >= need && (h <= 1 || row >= span) => {}
        _ => return Err(CloudError::ShortData { have: msg.data.len(), need: need.unwrap_or(usize::MAX).max(all) }),
    }
    let big = msg.is_bigendian;
    let read = |b: &[u8], (off, ty): (usize, u8)| -> f32 {
        if ty == PointField::FLOAT32 {
            // invariant: the field's bytes were bounds-checked against the point step above
            let a: [u8; 4] = b[off..off + 4].try_into().expect("checked above");
            if big { f32::from_be_bytes(a) } else { f32::from_le_bytes(a) }
        } else {
            // invariant: the field's bytes were bounds-checked against the point step above
            let a: [u8; 8] = b[off..off + 8].try_into().expect("checked above");
            (if big { f64::from_be_bytes(a) } else { f64::from_le_bytes(a) }) as f32
        }
    };
    out.reserve(w * h);
    for r in 0..h {
        for c in 0..w {
            let p = &msg.data[r * row + c * step..r * row + (c + 1) * step];
            out.push([read(p, fx[0]), read(p, fx[1]), read(p, fx[2])]);
        }
    }
    Ok(())
}

#[cfg(test)]
mod cloud_tests {
    use super::*;
    use crate::msg::{PointCloud2, PointField};

    fn cloud(h: u32, w: u32, step: u32, row: u32, data: Vec<u8>) -> PointCloud2 {
        let f = |name: &str, offset| PointField { name: name.into(), offset, datatype: PointField::FLOAT32, count: 1 };
        PointCloud2 {
            height: h,
            width: w,
            fields: vec![f("x", 0), f("y", 4), f("z", 8)],
            point_step: step,
            row_step: row,
            data,
            ..PointCloud2::default()
        }
    }

    #[test]
    fn sizes_from_the_message_never_overflow_or_read_past_the_data() {
        let mut out = Vec::new();
        for (h, w, step, row) in [
            (u32::MAX, u32::MAX, u32::MAX, u32::MAX),
            (2, u32::MAX, 16, u32::MAX),
            (u32::MAX, 1, 12, 0),
            (3, 2, 12, 12),
        ] {
            let e = cloud_points(&cloud(h, w, step, row, vec![0; 64]), &mut out).unwrap_err();
            assert!(matches!(e, CloudError::ShortData { have: 64, .. }), "{h}×{w}, step {step}, row {row}: {e:?}");
        }
        let ok = cloud(2, 2, 12, 24, vec![0; 48]);
        cloud_points(&ok, &mut out).unwrap();
        assert_eq!(out.len(), 4);
    }
}
