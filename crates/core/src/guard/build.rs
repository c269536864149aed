//! Building a guard: each robot's model, levers and buffers, the
//! obstacles' exact shapes, the hash, and which links can meet which.

use super::*;

impl Guard {
    /// Builds the guard of `cell` over its distance field and its
    /// collision matrix ([`CollisionMatrix::compute`], or a cached copy).
    pub fn new(cell: &Workcell, field: DistanceField, matrix: CollisionMatrix) -> Result<Guard, GuardError> {
        let posers: Vec<SpherePoser> =
            cell.manipulators.iter().map(|spec| SpherePoser::new(&spec.robot, &spec.spheres, spec.base)).collect();
        let settings = cell.guard;
        // Room for a standing robot's way back beside its path on (`path::append_way_back`).
        let longest = settings.max_path_samples.max(settings.near_path_samples) + 1 + path::BACK_SAMPLES;
        let max_cfg = longest.div_ceil(BATCH) * BATCH;
        let mut arms = Vec::new();
        let mut r_max = 0.0f32;
        let mut max_items = 0;
        for (ri, (spec, poser)) in cell.manipulators.iter().zip(posers).enumerate() {
            let arm = build_arm(ri, spec, poser, &matrix, &settings, max_cfg);
            r_max = r_max.max(arm.scratch.posed.batches[0].r.iter().copied().fold(0.0, f32::max));
            max_items = max_items.max(arm.model.slots * max_cfg);
            arms.push(arm);
        }
        let n = matrix.total_links();
        let hash_base_cell = 2.0 * r_max + cell.margins.release_m as f32;
        let max_links = cell.manipulators.iter().map(|m| m.robot.links.len()).max().unwrap_or(0);
        let posers: Vec<&SpherePoser> = arms.iter().map(|a| &a.model.poser).collect();
        let arbitration = arbitrate::Arbitration::new(cell, &posers);
        let mut guard = Guard {
            settings,
            margins: cell.margins,
            cell: check_cell::CellCheck::new(cell, field, n)?,
            robots: check_robots::RobotCheck::new(&arms, &matrix, max_items, hash_base_cell),
            decisions: vec![
                Decision::Stop(Stop {
                    kind: StopKind::Immediate,
                    reason: Reason::NoJointState,
                    pair: None,
                    clearance_m: f32::INFINITY,
                    time_to_contact_s: None,
                });
                arms.len()
            ],
            arms,
            allowed: vec![0; (n * n).div_ceil(64)],
            matrix,
            unknown_inputs: 0,
            pending: None,
            platen: platen::PlatenPart::new(cell.platen.as_ref())?,
            policy: CommandPolicy::default(),
            last_cloud_s: None,
            clock: clock::Clock::default(),
            supervision: vec![Supervision::START; cell.manipulators.len()],
            commands: vec![Command::START; cell.manipulators.len()],
            arbitration,
            exact: exact_pairs::ExactFrames::new(max_links, cell.guard.exact_links),
        };
        for &(a, b) in &cell.allowed_contacts {
            match guard.allow_contact(a, b) {
                Ok(()) | Err(ContactError::PlatenUnit) => {}
                // invariant: allowed contacts were validated against the same bodies when the workcell was read
                Err(e) => unreachable!("validated allowed contact {a:?}–{b:?} refused: {e}"),
            }
        }
        Ok(guard)
    }
}

/// Per joint, the speed beyond which an estimate is implausible
/// ([`IMPLAUSIBLE_SPEED_FACTOR`] times its URDF limit; ∞ without one).
fn speed_limits(robot: &crate::model::Robot) -> Vec<f64> {
    (0..robot.dof())
        .map(|d| {
            robot
                .dof_joint(d)
                .limits
                .map(|l| l.velocity)
                .filter(|&v| v.is_finite() && v > 0.0)
                .map_or(f64::INFINITY, |v| v * IMPLAUSIBLE_SPEED_FACTOR)
        })
        .collect()
}

/// Robot `ri`'s own link pairs (of those with spheres, `ranges`) its self
/// check looks at: the ones the collision matrix says sometimes meet.
fn checked_self_pairs(ri: usize, ranges: &[(u32, u32, u32)], matrix: &CollisionMatrix) -> Vec<(u32, u32)> {
    let mut self_pairs = Vec::new();
    for (ia, &(la, _, _)) in ranges.iter().enumerate() {
        for &(lb, _, _) in &ranges[ia + 1..] {
            let c = matrix.class(matrix.global(ri, la as usize), matrix.global(ri, lb as usize));
            if c == PairClass::Sometimes {
                self_pairs.push((la, lb));
            }
        }
    }
    self_pairs
}

/// Robot `ri`'s part of the guard: its model, buffers for `max_cfg`
/// sampled configurations, and its state at start (stopped, no data).
fn build_arm(
    ri: usize,
    spec: &crate::cell::Manipulator,
    poser: SpherePoser,
    matrix: &CollisionMatrix,
    settings: &GuardSettings,
    max_cfg: usize,
) -> Arm {
    let (posed, ahead) = (poser.posed_batch(), poser.posed());
    let model = arm_model(ri, spec, poser, matrix);
    let scratch = arm_scratch(spec, &model, (posed, ahead), max_cfg);
    Arm { state: arm_state(spec, settings), scratch, model }
}

/// What robot `ri`'s checks need that never changes.
fn arm_model(ri: usize, spec: &crate::cell::Manipulator, poser: SpherePoser, matrix: &CollisionMatrix) -> ArmModel {
    let ranges = poser.ranges().to_vec();
    let slots = poser.sphere_count();
    let self_pairs = checked_self_pairs(ri, &ranges, matrix);
    let levers = forecast::link_levers(&spec.robot, &spec.spheres);
    let pair_lever = self_pair_levers(&spec.robot, &levers, &self_pairs);
    let mut link_slots = vec![(0, 0); spec.robot.links.len()];
    for &(l, s, e) in &ranges {
        link_slots[l as usize] = (s as usize, e as usize);
    }
    let mut fixed_link = vec![false; spec.robot.links.len()];
    fixed_link[0] = true;
    for l in 1..spec.robot.links.len() {
        let j = &spec.robot.joints[spec.robot.links[l].parent_joint.expect("non-root")]; // invariant: non-root links
        fixed_link[l] = fixed_link[j.parent] && j.kind == crate::model::JointKind::Fixed;
    }
    ArmModel {
        decel: spec.max_decel.clone(),
        accel: spec.max_accel.clone(),
        stop_mode: spec.stop_mode,
        speed_limit: speed_limits(&spec.robot),
        lever: levers,
        reaction_s: spec.reaction_time_s,
        stopping: spec.stopping.clone(),
        pair_lever,
        self_pairs,
        link_slots,
        fixed_link,
        hulls: spec.robot.links.iter().map(|l| exact::solid_link_shape(&l.collisions)).collect(),
        slots,
        n_links: spec.robot.links.len(),
        ranges,
        poser,
    }
}

/// A robot's per-cycle buffers, sized for `max_cfg` configurations.
fn arm_scratch(
    spec: &crate::cell::Manipulator,
    model: &ArmModel,
    (posed, ahead): (PosedBatch, PosedSpheres),
    max_cfg: usize,
) -> ArmScratch {
    let dof = spec.robot.dof();
    let (slots, n_ranges, n_self_pairs) = (model.slots, model.ranges.len(), model.self_pairs.len());
    ArmScratch {
        forecast: ArmForecast {
            brake: spec.max_decel.clone(),
            beyond: None,
            speed: vec![0.0; dof],
            plan: StopPlan::STILL,
            plan_s: vec![0.0; max_cfg],
            windows: vec![(f64::NEG_INFINITY, f64::INFINITY); max_cfg],
            t0: 0.0,
            n_cfg: 0,
            present: false,
            borne_out: false,
            at_rest: false,
            reversing: false,
            problem: None,
            path_q: vec![0.0; max_cfg * spec.robot.dof()],
            offset: vec![0.0; dof],
            tv: vec![0.0; dof],
            step_travel: vec![0.0; max_cfg * spec.robot.dof()],
            departure: vec![0.0; dof],
        },
        posed: ArmPoses {
            batches: vec![posed; max_cfg / BATCH],
            posed_q: vec![0.0; max_cfg * spec.robot.dof()],
            posed_n: 0,
            inflate: 0.0,
            bounds: [0.0; 6],
            inflated_r: vec![0.0; slots],
            link_inflation: vec![0.0; spec.robot.links.len()],
            step_share: vec![1.0; max_cfg],
            link_departure: vec![0.0; spec.robot.links.len()],
            pair_inflation: vec![0.0; n_self_pairs],
            ahead,
            ahead_q: vec![0.0; dof],
        },
        look: CheckScratch {
            candidates: Vec::with_capacity(slots),
            now_c: vec![f32::INFINITY; slots],
            now_exact: vec![f32::NAN; slots],
            now_self: vec![[f32::INFINITY; 2]; n_self_pairs],
            order: Vec::with_capacity(n_ranges),
            anchors: vec![[[0.0; BATCH]; 4]; n_ranges],
            slowed: [false; 2],
            frames: Vec::with_capacity(spec.robot.links.len()),
        },
        track: Track::NONE,
    }
}

/// A robot's state at start: stopped, no data.
fn arm_state(spec: &crate::cell::Manipulator, settings: &GuardSettings) -> ArmState {
    ArmState {
        learned_decel: spec.max_decel.clone(),
        est: {
            let mut e = Estimator::new(spec.robot.dof(), settings.velocity_filter_window, spec.trust_reported_velocity)
                .with_fit_window(settings.velocity_fit_window_s);
            e.set_accel_limits(&spec.max_accel);
            e
        },
        fixed_best: (f32::INFINITY, 0),
        fixed_dirty: true,
        rejected: None,
        rejected_since: None,
        phase: hysteresis::Phase::STOPPED,
        cause: StopCause::Data,
        escape_floor: None,
        prev_class_best: [f32::INFINITY; 3],
        est_period: 0.0,
        ahead_released_s: f64::NEG_INFINITY,
        robot_releases: (0, f64::NEG_INFINITY),
        quick_restops: 0,
        follow: Follow {
            tracker: PlanTracker::new(&spec.plan_tolerance, PLAN_WINDOW_S),
            rates: Vec::new(),
            rise: Vec::new(),
            state: PlanState::None,
            off_since: None,
            parked: PlanTracker::new(&spec.plan_tolerance, PLAN_WINDOW_S),
            parked_s: None,
            parked_pending: false,
        },
    }
}

/// Per self pair, per dof: the lever of that joint on the pair's relative
/// motion (joints above the two links' common ancestor move both alike and
/// count 0), flat at `pair * dof + joint`; `levers` are the robot's link
/// levers ([`forecast::link_levers`]).
fn self_pair_levers(robot: &crate::model::Robot, levers: &[f64], self_pairs: &[(u32, u32)]) -> Vec<f64> {
    let dof = robot.dof();
    let ancestors = |l: usize| {
        let mut v = vec![l];
        let mut c = l;
        while let Some(p) = robot.parent_link(c) {
            v.push(p);
            c = p;
        }
        v
    };
    // Dofs moving each link relative to `c` (joints between c and the link).
    let dofs_below = |l: usize, c: usize| {
        let mut out = vec![0.0; dof];
        let mut cur = l;
        while cur != c {
            // invariant: the walk stays below a common ancestor, so never reaches the root
            let j = &robot.joints[robot.links[cur].parent_joint.expect("below an ancestor")];
            let w = |d: usize, out: &mut Vec<f64>| out[d] = levers[l * dof + d];
            if let Some(d) = j.dof {
                w(d, &mut out);
            } else if let Some(mm) = j.mimic {
                w(mm.dof, &mut out);
            }
            cur = j.parent;
        }
        out
    };
    let mut pair_lever = Vec::new();
    for &(la, lb) in self_pairs {
        let (aa, ab) = (ancestors(la as usize), ancestors(lb as usize));
        // invariant: a validated robot is one tree: any two links share the root
        let common = *aa.iter().find(|x| ab.contains(x)).expect("one tree has one root");
        let (da, db) = (dofs_below(la as usize, common), dofs_below(lb as usize, common));
        pair_lever.extend(da.iter().zip(&db).map(|(x, y)| x + y));
    }
    pair_lever
}
