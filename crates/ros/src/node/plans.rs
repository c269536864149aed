//! Planned trajectories (`JointTrajectory`, and MoveIt's
//! `DisplayTrajectory` split per robot): checked against the robot's
//! joints; a bad one stops the robot until a good or an empty one comes.

use super::*;
use workcell_guard_core::forecast::track::JointPlan;

impl GuardNode {
    /// Takes a planned trajectory for `robot`: checked against the robot's
    /// joints; a bad one stops the robot until a good one (or an empty one,
    /// which clears the plan) arrives.
    pub fn on_trajectory(&mut self, robot: usize, msg: &JointTrajectory) -> Result<(), InputFault> {
        let r = self.trajectory_in(robot, msg);
        self.sync_refused(robot);
        r
    }

    pub(super) fn trajectory_in(&mut self, robot: usize, msg: &JointTrajectory) -> Result<(), InputFault> {
        let Some(m) = self.cell.manipulators.get(robot) else {
            self.stats.refused += 1;
            return Ok(());
        };
        let check = || -> Result<TrajectoryInfo, TrajectoryError> {
            let dof = &m.robot.dof_names;
            for (i, j) in msg.joint_names.iter().enumerate() {
                if msg.joint_names[..i].contains(j) {
                    return Err(TrajectoryError::DuplicateJoint(j.clone()));
                }
                if !dof.contains(j) {
                    let owner =
                        self.cell.manipulators.iter().find(|o| o.robot.dof_names.contains(j)).map(|o| o.name.clone());
                    return Err(TrajectoryError::UnknownJoint { joint: j.clone(), owner });
                }
            }
            let mut last = f64::NEG_INFINITY;
            for (k, p) in msg.points.iter().enumerate() {
                if p.positions.len() != msg.joint_names.len() {
                    return Err(TrajectoryError::PointLength {
                        point: k,
                        positions: p.positions.len(),
                        names: msg.joint_names.len(),
                    });
                }
                if p.positions.iter().chain(&p.velocities).chain(&p.accelerations).any(|x| !x.is_finite()) {
                    return Err(TrajectoryError::NotFinite { point: k });
                }
                let t = p.time_from_start.sec as f64 + p.time_from_start.nanosec as f64 * 1e-9;
                if p.time_from_start.nanosec >= 1_000_000_000 || t <= last {
                    return Err(TrajectoryError::TimeOrder { point: k });
                }
                last = t;
            }
            Ok(TrajectoryInfo { points: msg.points.len(), duration_s: last.max(0.0) })
        };
        let r = check();
        let io = &mut self.io[robot];
        match r {
            Ok(info) => {
                if matches!(io.fault, Some(InputFault::Trajectory(_))) {
                    io.fault = None;
                }
                io.trajectory = (info.points > 0).then_some(info);
                io.plan_stamp = msg.header.stamp;
                let plan = if info.points > 0 { self.joint_plan(robot, msg) } else { None };
                let _ = self.guard.set_plan(robot, plan);
                Ok(())
            }
            Err(e) => {
                io.refused += 1;
                self.stats.refused += 1;
                let f = InputFault::Trajectory(e);
                io.fault = Some(f.clone());
                Err(f)
            }
        }
    }

    /// Takes MoveIt's DisplayTrajectory for `robot`: the columns of its
    /// joints, from every trajectory that names any, become its planned
    /// trajectory (checked as [`GuardNode::on_trajectory`] does). A message
    /// naming none of its joints is for another robot and is ignored
    /// (`Ok(false)`).
    pub fn on_display_trajectory(
        &mut self,
        robot: usize,
        msg: &crate::msg::DisplayTrajectory,
    ) -> Result<bool, InputFault> {
        let Some(m) = self.cell.manipulators.get(robot) else { return Ok(false) };
        let dof = &m.robot.dof_names;
        let mut out = JointTrajectory::default();
        let mut offset = 0.0;
        for rt in &msg.trajectory {
            let jt = &rt.joint_trajectory;
            let cols: Vec<usize> = (0..jt.joint_names.len()).filter(|&i| dof.contains(&jt.joint_names[i])).collect();
            if cols.is_empty() {
                continue;
            }
            let names: Vec<String> = cols.iter().map(|&i| jt.joint_names[i].clone()).collect();
            if out.joint_names.is_empty() {
                out.header = jt.header.clone();
                out.joint_names = names;
            } else if out.joint_names != names {
                return Err(self.refuse_trajectory(
                    robot,
                    TrajectoryError::DuplicateJoint("(the display's trajectories name different joints)".into()),
                ));
            }
            let mut last = 0.0;
            for p in &jt.points {
                let pick = |v: &Vec<f64>| -> Vec<f64> {
                    if v.len() == jt.joint_names.len() { cols.iter().map(|&i| v[i]).collect() } else { Vec::new() }
                };
                let t = p.time_from_start.sec as f64 + p.time_from_start.nanosec as f64 * 1e-9;
                last = t;
                if offset > 0.0 && t <= 0.0 {
                    continue; // a later trajectory starts where the one before ended
                }
                let at = crate::convert::to_time(offset + t).unwrap_or_default();
                out.points.push(crate::msg::JointTrajectoryPoint {
                    positions: if p.positions.len() == jt.joint_names.len() {
                        pick(&p.positions)
                    } else {
                        p.positions.clone()
                    },
                    velocities: pick(&p.velocities),
                    accelerations: pick(&p.accelerations),
                    effort: Vec::new(),
                    time_from_start: crate::msg::Duration { sec: at.sec, nanosec: at.nanosec },
                });
            }
            offset += last;
        }
        if out.joint_names.is_empty() {
            return Ok(false);
        }
        self.on_trajectory(robot, &out).map(|()| true)
    }

    /// A checked trajectory as the core's plan, in the robot's joint
    /// order: joints it does not name hold their newest measured position
    /// (a MoveIt group without the gripper); `None` when such a joint has
    /// no measurement yet.
    fn joint_plan(&self, robot: usize, msg: &JointTrajectory) -> Option<JointPlan> {
        let m = &self.cell.manipulators[robot];
        let dof = m.robot.dof();
        let cols: Vec<Option<usize>> =
            m.robot.dof_names.iter().map(|n| msg.joint_names.iter().position(|j| j == n)).collect();
        let held = self.guard.last_positions(robot);
        if cols.iter().any(Option::is_none) && held.is_none() {
            return None;
        }
        let mut times = Vec::with_capacity(msg.points.len());
        let mut positions = Vec::with_capacity(msg.points.len() * dof);
        for p in &msg.points {
            times.push(p.time_from_start.sec as f64 + p.time_from_start.nanosec as f64 * 1e-9);
            for (d, c) in cols.iter().enumerate() {
                positions.push(match c {
                    Some(i) => p.positions[*i],
                    None => held.map_or(0.0, |h| h[d]),
                });
            }
        }
        JointPlan::new(dof, times, positions).ok()
    }

    pub(super) fn refuse_trajectory(&mut self, robot: usize, e: TrajectoryError) -> InputFault {
        let f = InputFault::Trajectory(e);
        self.io[robot].refused += 1;
        self.stats.refused += 1;
        self.io[robot].fault = Some(f.clone());
        self.sync_refused(robot);
        f
    }
}
