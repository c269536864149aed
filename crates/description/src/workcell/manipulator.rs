//! One manipulator of the workcell file: its URDF, base, joints'
//! decelerations and accelerations, topics and sphere model.

use super::*;
use workcell_guard_core::model::Robot;

// long: one validated key after another, each a line or two
pub(super) fn manipulator(
    cx: &Ctx,
    key: &str,
    m: &RawManipulator,
    names: &mut HashSet<String>,
) -> Result<Manipulator, ConfigError> {
    let name = cx.name(&format!("{key}.name"), &m.name, names)?;
    let urdf_key = format!("{key}.urdf");
    let urdf_path = resolve::resolve(&m.urdf, cx.file).map_err(|e| cx.invalid(&urdf_key, &m.urdf, e.to_string()))?;
    let robot = urdf::load(&urdf_path).map_err(|source| ConfigError::Model {
        file: cx.file.to_path_buf(),
        key: urdf_key.clone(),
        source: Box::new(source),
    })?;
    let base = cx.pose(&format!("{key}.base_pose"), &m.base_pose)?;
    let reaction_time_s = cx.non_negative(&format!("{key}.reaction_time_s"), m.reaction_time_s)?;

    let (max_decel, max_accel) = joint_limits(cx, key, m, &robot, &urdf_path)?;

    let priority = m.priority;
    let joint_state_topic = cx.topic(&format!("{key}.joint_state_topic"), &m.joint_state_topic)?;
    let trajectory_topic = cx.topic(&format!("{key}.trajectory_topic"), &m.trajectory_topic)?;
    let optional_topic = |k: &str, t: &Option<String>| -> Result<Option<String>, ConfigError> {
        t.as_ref().map(|t| cx.topic(&format!("{key}.{k}"), t)).transpose()
    };
    let controller_command_topic = optional_topic("controller_command_topic", &m.controller_command_topic)?;
    let controller_action = optional_topic("controller_action", &m.controller_action)?;
    let speed_scaling_topic = optional_topic("speed_scaling_topic", &m.speed_scaling_topic)?;
    let speed_scaling_type = match m.speed_scaling_type {
        None | Some(raw::RawScalingType::SpeedScalingFactor) => ScalingMessage::SpeedScalingFactor,
        Some(raw::RawScalingType::Float64) => ScalingMessage::Float64,
    };
    let mut moveit_actions: Vec<String> = Vec::new();
    for (i, a) in m.moveit_actions.iter().flatten().enumerate() {
        let a = cx.topic(&format!("{key}.moveit_actions[{i}]"), a)?;
        if moveit_actions.contains(&a) || controller_action.as_ref() == Some(&a) {
            return Err(cx.invalid(format!("{key}.moveit_actions[{i}]"), &a, "named twice"));
        }
        moveit_actions.push(a);
    }
    let display_trajectory_topic = optional_topic("display_trajectory_topic", &m.display_trajectory_topic)?;

    let (spheres, sphere_source) = sphere_model(cx, key, &name, m, &robot)?;
    let tol_rad = match m.plan_tolerance_rad {
        Some(v) => cx.positive(&format!("{key}.plan_tolerance_rad"), v)?,
        None => DEFAULT_PLAN_TOLERANCE_RAD,
    };
    let tol_m = match m.plan_tolerance_m {
        Some(v) => cx.positive(&format!("{key}.plan_tolerance_m"), v)?,
        None => DEFAULT_PLAN_TOLERANCE_M,
    };
    let stopping = stopping_model(cx, key, m, &robot)?;
    let plan_tolerance =
        (0..robot.dof()).map(|d| if robot.dof_joint(d).kind.is_rotational() { tol_rad } else { tol_m }).collect();

    Ok(Manipulator {
        name,
        urdf_path,
        robot,
        base,
        topics: ManipulatorTopics {
            joint_states: joint_state_topic,
            trajectory: trajectory_topic,
            controller_command: controller_command_topic,
            controller_action,
            moveit_actions,
            speed_scaling: speed_scaling_topic,
            speed_scaling_type,
            display_trajectory: display_trajectory_topic,
        },
        priority,
        reaction_time_s,
        max_decel,
        max_accel,
        stop_mode: match m.stop_mode {
            None | Some(raw::RawStopMode::Synchronized) => workcell_guard_core::forecast::StopMode::Synchronized,
            Some(raw::RawStopMode::Independent) => workcell_guard_core::forecast::StopMode::Independent,
        },
        spheres,
        sphere_source,
        trust_reported_velocity: m.trust_reported_velocity.unwrap_or(false),
        plan_tolerance,
        stopping,
    })
}

/// A robot within this of its plan in every rotational joint is on plan
/// unless the workcell says otherwise, rad.
pub const DEFAULT_PLAN_TOLERANCE_RAD: f64 = 0.05;
/// The same for prismatic joints, m.
pub const DEFAULT_PLAN_TOLERANCE_M: f64 = 0.01;

/// Per actuated joint, its maximum deceleration and acceleration (the
/// deceleration where none is given), in the unit its kind takes.
fn joint_limits(
    cx: &Ctx,
    key: &str,
    m: &RawManipulator,
    robot: &Robot,
    urdf_path: &Path,
) -> Result<(Vec<f64>, Vec<f64>), ConfigError> {
    // Decelerations: one per actuated joint, the right unit for its kind.
    for jname in m.joints.keys() {
        let jkey = format!("{key}.joints.{jname}");
        let Some(ji) = robot.joint_index(jname) else {
            return Err(cx.invalid(
                jkey,
                jname,
                format!(
                    "URDF {} has no joint of this name (actuated joints: {})",
                    urdf_path.display(),
                    robot.dof_names.join(", ")
                ),
            ));
        };
        if robot.joints[ji].dof.is_none() {
            return Err(cx.invalid(jkey, jname, "is fixed or a mimic joint: it has no deceleration of its own"));
        }
    }
    let mut max_decel = Vec::with_capacity(robot.dof());
    let mut max_accel = Vec::with_capacity(robot.dof());
    for dof in 0..robot.dof() {
        let j = robot.dof_joint(dof);
        let jkey = format!("{key}.joints.{}", j.name);
        let Some(spec) = m.joints.get(&j.name) else {
            return Err(cx.invalid(
                format!("{key}.joints"),
                m.joints.keys().collect::<Vec<_>>(),
                format!(
                    "actuated joint `{}` has no entry; every actuated joint needs its maximum deceleration",
                    j.name
                ),
            ));
        };
        let (want, wrong) = if j.kind.is_rotational() {
            ("max_decel_radps2", spec.max_decel_mps2)
        } else {
            ("max_decel_mps2", spec.max_decel_radps2)
        };
        if wrong.is_some() {
            return Err(cx.invalid(&jkey, &j.name, format!("joint is {:?}: give `{want}`", j.kind).to_lowercase()));
        }
        let v = if j.kind.is_rotational() { spec.max_decel_radps2 } else { spec.max_decel_mps2 };
        let Some(v) = v else {
            return Err(cx.invalid(&jkey, &j.name, format!("missing `{want}`")));
        };
        let decel = cx.positive(&format!("{jkey}.{want}"), v)?;
        max_decel.push(decel);
        let (want, a, wrong) = if j.kind.is_rotational() {
            ("max_accel_radps2", spec.max_accel_radps2, spec.max_accel_mps2)
        } else {
            ("max_accel_mps2", spec.max_accel_mps2, spec.max_accel_radps2)
        };
        if wrong.is_some() {
            return Err(cx.invalid(&jkey, &j.name, format!("joint is {:?}: give `{want}`", j.kind).to_lowercase()));
        }
        max_accel.push(match a {
            Some(a) => cx.positive(&format!("{jkey}.{want}"), a)?,
            None => decel,
        });
    }
    Ok((max_decel, max_accel))
}

/// The robot's spheres: read from a sphere file (with each link's coverage
/// measured), or fitted with the parameters the file gives per link.
fn sphere_model(
    cx: &Ctx,
    key: &str,
    name: &str,
    m: &RawManipulator,
    robot: &Robot,
) -> Result<(SphereModel, SphereSource), ConfigError> {
    let raw_spheres = m.spheres.as_ref();
    let r = match raw_spheres.and_then(|s| s.file.as_ref()) {
        Some(f) => {
            let skey = format!("{key}.spheres.file");
            if raw_spheres
                .is_some_and(|s| s.max_overshoot_m.is_some() || s.max_spheres_per_link.is_some() || !s.links.is_empty())
            {
                return Err(cx.invalid(
                    &skey,
                    f,
                    "a sphere file replaces fitting: remove max_overshoot_m, max_spheres_per_link and links",
                ));
            }
            let path = resolve::resolve(f, cx.file).map_err(|e| cx.invalid(&skey, f, e.to_string()))?;
            let model = sphere_file::read(&path, robot).map_err(|source| ConfigError::SphereFile {
                file: cx.file.to_path_buf(),
                key: skey.clone(),
                source: Box::new(source),
            })?;
            let coverage = robot
                .links
                .iter()
                .zip(&model.links)
                .map(|(l, s)| coverage::check(&l.collisions, &s.fine, 20_000.0, 7))
                .collect::<Vec<_>>();
            for (l, c) in robot.links.iter().zip(&coverage) {
                if c.uncovered > 0 {
                    tracing::warn!(robot = %name, link = %l.name, uncovered = c.uncovered, samples = c.samples, worst_gap_m = c.worst_gap_m,
                        "hand-edited sphere set does not cover the link's geometry");
                }
            }
            (model, SphereSource::File { path, coverage })
        }
        None => {
            let default = SphereParams::default();
            let s = raw_spheres.map(|s| (s.max_overshoot_m, s.max_spheres_per_link, &s.links));
            let base_params = SphereParams {
                max_overshoot_m: match s.and_then(|s| s.0) {
                    Some(v) => cx.positive(&format!("{key}.spheres.max_overshoot_m"), v)?,
                    None => default.max_overshoot_m,
                },
                max_spheres: match s.and_then(|s| s.1) {
                    Some(v) => count(cx, &format!("{key}.spheres.max_spheres_per_link"), v)?,
                    None => default.max_spheres,
                },
            };
            let mut per_link = vec![base_params; robot.links.len()];
            if let Some((_, _, links)) = s {
                for (lname, lp) in links {
                    let lkey = format!("{key}.spheres.links.{lname}");
                    let Some(li) = robot.link_index(lname) else {
                        return Err(cx.invalid(lkey, lname, "no link of this name in the URDF"));
                    };
                    if let Some(v) = lp.max_overshoot_m {
                        per_link[li].max_overshoot_m = cx.positive(&format!("{lkey}.max_overshoot_m"), v)?;
                    }
                    if let Some(v) = lp.max_spheres {
                        per_link[li].max_spheres = count(cx, &format!("{lkey}.max_spheres"), v)?;
                    }
                }
            }
            // invariant: the fit asks only for the robot's own links
            let model = SphereModel::fit(robot, |l| per_link[robot.link_index(l).expect("own link")]);
            (model, SphereSource::Fitted(per_link))
        }
    };
    Ok(r)
}

/// The manipulator's `stopping:` section, inline or from its file.
fn stopping_model(
    cx: &Ctx,
    key: &str,
    m: &RawManipulator,
    robot: &Robot,
) -> Result<Option<workcell_guard_core::forecast::stopping::StoppingModel>, ConfigError> {
    let Some(raw) = &m.stopping else { return Ok(None) };
    let skey = format!("{key}.stopping");
    let Some(f) = &raw.file else {
        return crate::stopping_file::validate(raw, robot, cx.file, &skey).map(Some);
    };
    if !raw.joints.is_empty() || raw.source.is_some() {
        return Err(cx.invalid(
            format!("{skey}.file"),
            f,
            "a stopping file replaces the inline section: remove joints and source",
        ));
    }
    let path = resolve::resolve(f, cx.file).map_err(|e| cx.invalid(format!("{skey}.file"), f, e.to_string()))?;
    let text = std::fs::read_to_string(&path).map_err(|source| ConfigError::Io { file: path.clone(), source })?;
    let inner: crate::stopping_file::RawStopping = crate::yaml::parse_yaml(&text).map_err(|e| ConfigError::Parse {
        file: path.clone(),
        key: e.key.clone(),
        error: Box::new(e),
    })?;
    if inner.file.is_some() {
        return Err(ConfigError::Invalid {
            file: path,
            key: "file".into(),
            value: format!("{:?}", inner.file),
            problem: "a stopping file cannot name another".into(),
        });
    }
    crate::stopping_file::validate(&inner, robot, &path, "stopping").map(Some)
}
