//! What a person watches: the diagnostics (one status per robot and per
//! platen unit) and the rviz markers (robots' spheres coloured by
//! decision, the cell's occupied voxels).

use super::*;
use workcell_guard_core::guard::{BeyondModel, PlanState, StopSource};

const GREEN: ColorRGBA = ColorRGBA { r: 0.1, g: 0.8, b: 0.2, a: 0.6 };
const AMBER: ColorRGBA = ColorRGBA { r: 1.0, g: 0.65, b: 0.0, a: 0.7 };
const RED: ColorRGBA = ColorRGBA { r: 0.95, g: 0.1, b: 0.1, a: 0.8 };
const GREY: ColorRGBA = ColorRGBA { r: 0.5, g: 0.5, b: 0.5, a: 0.4 };
const VOXEL: ColorRGBA = ColorRGBA { r: 0.3, g: 0.35, b: 0.45, a: 0.5 };

/// For this long after a jump of the clock, the stops it caused name it.
const CLOCK_JUMP_NOTE_S: f64 = 10.0;

impl GuardNode {
    /// Robot `r`'s turn-taking in its status: a hold or starvation as its
    /// message (unless it has an input fault), its grant, how long it
    /// waits and whether its priority is boosted as values 7 to 9.
    fn fill_turns(
        s: &mut DiagnosticStatus,
        r: usize,
        no_fault: bool,
        (guard, grant, starvation_s): (&Guard, &ManipulatorGrant, f64),
    ) {
        let c = guard.commands()[r];
        if no_fault && c.source == StopSource::Grant {
            s.level = s.level.max(DiagnosticStatus::WARN);
            s.message.clear();
            let _ = write!(s.message, "holds on its path: {}", grant.reason);
        }
        let waiting = guard.waiting(r);
        if no_fault && let Some(w) = waiting.filter(|w| w.starving) {
            s.level = s.level.max(DiagnosticStatus::WARN);
            s.message.clear();
            let _ = write!(
                s.message,
                "starving: waiting for {} for {:.1} s (starvation_s {}): {}",
                grant.held_by, w.for_s, starvation_s, grant.reason
            );
        }
        // Grown, never shrunk: values past these (the stopping model's)
        // keep their strings from cycle to cycle.
        if s.values.len() < 10 {
            s.values.resize_with(10, KeyValue::default);
        }
        let g = grant;
        let state = ["proceed", "hold", "back away", "done", "no plan"].get(g.state as usize).unwrap_or(&"?");
        set_kv(&mut s.values[7], "grant", format_args!("{state}: {}", g.reason));
        match waiting {
            Some(w) => set_kv(&mut s.values[8], "waiting", format_args!("for {:.3} s", w.for_s)),
            None => set_kv(&mut s.values[8], "waiting", format_args!("no")),
        }
        match (guard.lifted(r), guard.boosted_since(r)) {
            (Some(t), _) => set_kv(&mut s.values[9], "priority boosted", format_args!("lifted since {t:.3} s")),
            (None, Some(t)) => set_kv(&mut s.values[9], "priority boosted", format_args!("since {t:.3} s")),
            (None, None) => set_kv(&mut s.values[9], "priority boosted", format_args!("no")),
        }
    }

    /// Robot `m`'s stopping figures as value 10: learned or configured,
    /// and a warning while a joint moves faster than its learned model
    /// covers.
    fn fill_stopping(
        s: &mut DiagnosticStatus,
        m: &workcell_guard_core::cell::Manipulator,
        beyond: Option<BeyondModel>,
    ) {
        if s.values.len() < 11 {
            s.values.resize_with(11, KeyValue::default);
        }
        let v = &mut s.values[10];
        match (&m.stopping, beyond) {
            (None, _) => set_kv(v, "stopping_model", format_args!("configured: reaction_time_s and max_decel")),
            (Some(st), None) => set_kv(
                v,
                "stopping_model",
                format_args!(
                    "learned ({} joints; reaction {:.4} s)",
                    st.joints.iter().flatten().count(),
                    st.reaction_s().unwrap_or(m.reaction_time_s)
                ),
            ),
            (Some(_), Some(b)) => {
                let joint = m.robot.dof_names.get(b.joint as usize).map_or("?", String::as_str);
                set_kv(
                    v,
                    "stopping_model",
                    format_args!(
                        "beyond the recorded stops: {joint} at {:.3} > {:.3} covered; its configured figures are used",
                        b.speed, b.covered
                    ),
                );
                if s.level == DiagnosticStatus::OK {
                    s.level = DiagnosticStatus::WARN;
                    let _ = write!(
                        s.message,
                        "; {joint} faster than the recorded stops ({:.3} > {:.3})",
                        b.speed, b.covered
                    );
                }
            }
        }
    }

    /// The diagnostics of the last cycle, stamped `stamp`: one status per
    /// manipulator (decision, reason, closest pair, clearance, time to
    /// contact, cycle time) and one for the node.
    // long: one status per robot, its keys in the order rqt_robot_monitor lists them
    pub fn diagnostics(&mut self, stamp: Time) -> &DiagnosticArray {
        let n = self.io.len();
        let units = self.unit_status.len();
        self.diag.header.stamp = stamp;
        self.diag.status.resize_with(n + units + 1, DiagnosticStatus::default);
        self.fill_unit_statuses(n);
        let decisions = self.guard.decisions();
        for (r, s) in self.diag.status.iter_mut().take(n).enumerate() {
            self.names.fill_status(s, r, &decisions[r]);
            let io = &self.io[r];
            if let Some(f) = &io.fault {
                s.level = DiagnosticStatus::ERROR;
                s.message.clear();
                let _ = write!(s.message, "stop now: {f}");
            } else if let Decision::Stop(st) = decisions[r]
                && matches!(st.reason, Reason::Holding { .. })
                && !io.cause.is_empty()
            {
                let _ = write!(s.message, "; stopped for: {}", io.cause);
            } else if self.guard.commands()[r].source == StopSource::StaleSensing {
                s.level = s.level.max(DiagnosticStatus::WARN);
                s.message.clear();
                let _ = write!(
                    s.message,
                    "stop now: sensed obstacles stale (no cloud within cloud_timeout_s = {} s)",
                    self.params.cloud_timeout_s
                );
            } else if self.guard.latched(r) && !decisions[r].is_stop() {
                s.level = DiagnosticStatus::WARN;
                s.message.clear();
                let _ = write!(s.message, "latched stop: clear now, call ~/reset_stop (stopped for: {})", io.cause);
            }
            Self::fill_turns(s, r, io.fault.is_none(), (&self.guard, &self.arm_grants[r], self.params.starvation_s));
            Self::fill_stopping(s, &self.cell.manipulators[r], self.guard.beyond_stopping_model(r));
            set_kv(&mut s.values[3], "cycle_time_s", format_args!("{:.6}", self.cycle_s));
            match self.guard.plan_state(r).unwrap_or(PlanState::None) {
                PlanState::None => set_kv(&mut s.values[6], "plan", format_args!("none")),
                PlanState::On { time_s, deviation } => set_kv(
                    &mut s.values[6],
                    "plan",
                    format_args!("on plan at {time_s:.3} s (deviation {deviation:.2} of tolerance): forecast along it"),
                ),
                PlanState::Off { deviation, for_s } => set_kv(
                    &mut s.values[6],
                    "plan",
                    format_args!("off plan for {for_s:.3} s ({deviation:.2} × tolerance): forecast by extrapolation"),
                ),
                PlanState::Finished => set_kv(&mut s.values[6], "plan", format_args!("finished: plan dropped")),
                PlanState::Abandoned => set_kv(
                    &mut s.values[6],
                    "plan",
                    format_args!(
                        "abandoned (off plan longer than {} s): plan dropped",
                        workcell_guard_core::guard::PLAN_ABANDON_S
                    ),
                ),
            }
            set_kv(&mut s.values[4], "refused_messages", format_args!("{}", io.refused));
            let now = crate::convert::time_s(stamp).unwrap_or(f64::NAN);
            let arriving = now - io.arrived_s <= self.guard.settings().watchdog_s;
            if let Decision::Stop(st) = decisions[r]
                && let Reason::StaleJointState { age_s } = st.reason
                && arriving
            {
                let _ = write!(
                    s.message,
                    "; states arrive, stamped {age_s:.3} s behind the node's clock: do the clocks agree?"
                );
            } else if let Some(Some(k)) = self.js_publishers.get(r).copied()
                && let Decision::Stop(st) = decisions[r]
                && matches!(st.reason, Reason::NoJointState | Reason::StaleJointState { .. })
            {
                let topic = &self.cell.manipulators[r].topics.joint_states;
                let _ = match k {
                    0 => write!(s.message, "; no publisher on `{topic}`"),
                    k => write!(s.message, "; {k} publisher(s) matched on `{topic}` but silent"),
                };
            }
            if let (Some(j), Decision::Stop(st)) = (self.guard.clock_jump(), decisions[r])
                && matches!(
                    st.reason,
                    Reason::NoJointState
                        | Reason::StaleJointState { .. }
                        | Reason::BadJointState(_)
                        | Reason::WarmingUp { .. }
                )
                && now - j.at_s < CLOCK_JUMP_NOTE_S
            {
                let way = if j.by_s < 0.0 { "back" } else { "forward" };
                let _ = write!(s.message, "; the clock jumped {way} {:.3} s at {:.3} s", j.by_s.abs(), j.at_s);
            }
            match io.trajectory {
                Some(t) => set_kv(
                    &mut s.values[5],
                    "planned_trajectory",
                    format_args!("{} points, {:.3} s", t.points, t.duration_s),
                ),
                None => set_kv(&mut s.values[5], "planned_trajectory", format_args!("none")),
            }
        }
        self.fill_node_status(n + units, stamp);
        &self.diag
    }

    /// The node's own status: counters, tuning, sensing, QoS problems.
    fn fill_node_status(&mut self, i: usize, stamp: Time) {
        let s = &mut self.diag.status[i];
        s.level = DiagnosticStatus::OK;
        s.name.clear();
        s.name.push_str("workcell_guard: node");
        s.hardware_id.clear();
        s.message.clear();
        s.message.push_str("running");
        s.values.resize_with(11, KeyValue::default);
        let ct = &self.times;
        set_kv(
            &mut s.values[8],
            "cycle_time_since_start_s",
            format_args!(
                "p50 {:.6} p99 {:.6} p99.99 {:.6} max {:.6} over {} cycles",
                ct.quantile(0.5),
                ct.quantile(0.99),
                ct.quantile(0.9999),
                ct.max_s(),
                ct.count()
            ),
        );
        set_kv(&mut s.values[9], "missed_cycles", format_args!("{}", ct.missed()));
        set_kv(&mut s.values[10], "published_samples_dropped", format_args!("{}", self.samples_dropped));
        set_kv(&mut s.values[6], "first_stop_time_s", format_args!("{:.6}", self.first_s));
        // The cycle budget: the longest cycle since the last diagnostics.
        set_kv(&mut s.values[7], "cycle_time_max_s", format_args!("{:.6}", self.cycle_max_s));
        self.cycle_max_s = 0.0;
        match self.sensing.as_ref() {
            Some(sn) => match sn.report {
                Some(r) => set_kv(
                    &mut s.values[5],
                    "sensed_points",
                    format_args!(
                        "{} accepted, {} filtered (robots), {} outside, {} invalid; last cloud at {:.3} s",
                        r.accepted, r.filtered, r.outside, r.invalid, sn.last_cloud_s
                    ),
                ),
                None => set_kv(&mut s.values[5], "sensed_points", format_args!("first cloud being folded in")),
            },
            None => set_kv(&mut s.values[5], "sensed_points", format_args!("no cloud received")),
        }
        if let Some(e) = &self.cloud_error {
            s.level = DiagnosticStatus::WARN;
            s.message.clear();
            let _ = write!(s.message, "point cloud refused: {e}");
        }
        let now_s = f64::from(stamp.sec) + f64::from(stamp.nanosec) * 1e-9;
        if let Some(age) = self.guard.sensing_stale(now_s) {
            s.level = if self.params.cloud_policy_stops { DiagnosticStatus::ERROR } else { DiagnosticStatus::WARN };
            s.message.clear();
            let act = if self.params.cloud_policy_stops { "every robot stopped" } else { "cloud_policy warn" };
            let _ = match age.is_finite() {
                true => write!(s.message, "sensed obstacles stale: newest cloud {age:.3} s old ({act})"),
                false => write!(s.message, "sensed obstacles stale: no cloud on `points` yet ({act})"),
            };
        }
        if !self.qos_notes.is_empty() {
            s.level = DiagnosticStatus::WARN;
            s.message.clear();
            let _ = write!(s.message, "incompatible QoS on {} topic(s): they do not connect", self.qos_notes.len());
            for (topic, what) in &self.qos_notes {
                s.values.push(KeyValue { key: format!("incompatible QoS {topic}"), value: what.clone() });
            }
        }
        let t = self.guard.tuning();
        set_kv(&mut s.values[0], "rate_hz", format_args!("{}", self.params.rate_hz));
        set_kv(&mut s.values[1], "cycles", format_args!("{}", self.stats.cycles));
        set_kv(&mut s.values[2], "joint_states", format_args!("{}", self.stats.joint_states));
        set_kv(&mut s.values[3], "refused_messages", format_args!("{}", self.stats.refused));
        set_kv(
            &mut s.values[4],
            "tuning",
            format_args!(
                "clearance_m {} release_m {} watchdog_s {} release_hold_s {}",
                t.clearance_m, t.release_m, t.watchdog_s, t.release_hold_s
            ),
        );
    }

    /// One status per platen unit, after the robots' `n`.
    fn fill_unit_statuses(&mut self, n: usize) {
        for (u, st) in self.unit_status.iter().enumerate() {
            let s = &mut self.diag.status[n + u];
            let name = self.cell.platen.as_ref().map_or("?", |p| p.units[u].name.as_str());
            s.name.clear();
            let _ = write!(s.name, "workcell_guard: {name}");
            s.hardware_id.clear();
            s.hardware_id.push_str(name);
            s.message.clear();
            s.values.clear();
            match st {
                UnitStatus::Idle => {
                    s.level = DiagnosticStatus::OK;
                    s.message.push_str("idle");
                }
                UnitStatus::Moving { request_id, goal } => {
                    s.level = DiagnosticStatus::OK;
                    let _ = write!(
                        s.message,
                        "moving (request {request_id}) to ({:.4}, {:.4}, {:.4})",
                        goal[0], goal[1], goal[2]
                    );
                }
                UnitStatus::Stopped(why) => {
                    s.level = DiagnosticStatus::ERROR;
                    let _ = match why {
                        StopReason::Breach { cell, blocker } => write!(
                            s.message,
                            "stopped: outside its allocation at cell ({}, {}){}",
                            cell.0,
                            cell.1,
                            blocker.map(|b| format!(", on {}", blocker_name(&self.cell, b))).unwrap_or_default()
                        ),
                        StopReason::StalePose { age_s } => write!(s.message, "stopped: pose {age_s:.3} s old"),
                        StopReason::BadPose(PoseError::UnknownFrame) => write!(
                            s.message,
                            "stopped: pose refused: frame_id `{}` is neither `{}` (the platen's surface) nor `{}` (the cell frame)",
                            self.platen_frames.get(u).map_or("?", String::as_str),
                            platen::SURFACE_FRAME,
                            self.cell.cell_frame
                        ),
                        StopReason::BadPose(e) => write!(s.message, "stopped: pose refused: {e}"),
                    };
                }
            }
        }
    }

    pub(super) fn build_markers(&mut self) {
        let frame = self.cell.cell_frame.clone();
        self.markers.markers.clear();
        for (r, m) in self.cell.manipulators.iter().enumerate() {
            for i in 0..self.io[r].poser.model_slots().len() {
                self.markers.markers.push(Marker {
                    header: Header { stamp: Time::default(), frame_id: frame.clone() },
                    ns: format!("{}/spheres", m.name),
                    id: i as i32,
                    kind: 2, // SPHERE
                    action: Marker::ADD,
                    color: GREY,
                    ..Marker::default()
                });
            }
        }
        // The static cell: its surface (occupied voxels with a free
        // neighbour) as one cube list, thinned evenly past the cap.
        let f = self.guard.field();
        let g = *f.grid();
        let d = f.dims();
        let free = |x: usize, y: usize, z: usize, dx: isize, dy: isize, dz: isize| {
            let (a, b, c) = (x as isize + dx, y as isize + dy, z as isize + dz);
            a < 0
                || b < 0
                || c < 0
                || a >= d[0] as isize
                || b >= d[1] as isize
                || c >= d[2] as isize
                || !f.occupied([a as usize, b as usize, c as usize])
        };
        let mut surface = Vec::new();
        for x in 0..d[0] {
            for y in 0..d[1] {
                for z in 0..d[2] {
                    if f.occupied([x, y, z])
                        && (free(x, y, z, -1, 0, 0)
                            || free(x, y, z, 1, 0, 0)
                            || free(x, y, z, 0, -1, 0)
                            || free(x, y, z, 0, 1, 0)
                            || free(x, y, z, 0, 0, -1)
                            || free(x, y, z, 0, 0, 1))
                    {
                        surface.push([x, y, z]);
                    }
                }
            }
        }
        let stride = surface.len().div_ceil(MAX_VOXEL_MARKERS).max(1);
        let c = |i: usize, a: usize| g.origin_m[a] + (i as f64 + 0.5) * g.resolution_m;
        let points: Vec<Point> =
            surface.iter().step_by(stride).map(|v| Point { x: c(v[0], 0), y: c(v[1], 1), z: c(v[2], 2) }).collect();
        let s = g.resolution_m;
        self.cell_markers.markers = vec![Marker {
            header: Header { stamp: Time::default(), frame_id: frame },
            ns: "cell/occupied_voxels".into(),
            id: 0,
            kind: Marker::CUBE_LIST,
            action: Marker::ADD,
            scale: crate::msg::Vector3 { x: s, y: s, z: s },
            color: VOXEL,
            points,
            ..Marker::default()
        }];
    }

    /// Markers of the robots' spheres at their latest joint states,
    /// coloured by the robot's clearance (green: beyond the release margin;
    /// amber: within it; red: stopped for proximity, the closest pair's
    /// links brightest; grey: no joint state yet).
    pub fn markers(&mut self, stamp: Time) -> &MarkerArray {
        let t = self.guard.tuning();
        let decisions = self.guard.decisions();
        let mut k = 0;
        for (r, io) in self.io.iter_mut().enumerate() {
            let slots = io.poser.model_slots();
            let n = slots.len();
            let ok = io.has_q && io.poser.pose(&io.q, &mut io.posed).is_ok();
            let (colour, pair) = match decisions[r] {
                Decision::Continue { clearance_m, pair, .. } => {
                    (if (clearance_m as f64) > t.release_m { GREEN } else { AMBER }, pair)
                }
                Decision::Stop(s) => (if s.pair.is_some() { RED } else { AMBER }, s.pair),
            };
            let hot = match pair {
                Some((Body::Link { robot, link }, _)) if robot as usize == r => Some(link),
                _ => None,
            };
            for (m, &slot) in self.markers.markers[k..k + n].iter_mut().zip(slots) {
                let i = slot as usize;
                m.header.stamp = stamp;
                if !ok {
                    m.action = Marker::DELETE;
                    continue;
                }
                m.action = Marker::ADD;
                m.pose.position = Point { x: io.posed.x[i] as f64, y: io.posed.y[i] as f64, z: io.posed.z[i] as f64 };
                let dia = 2.0 * io.posed.r[i] as f64;
                m.scale = crate::msg::Vector3 { x: dia, y: dia, z: dia };
                m.color = colour;
                if hot == Some(io.posed.link[i] as u16) {
                    m.color.a = 1.0;
                }
            }
            k += n;
        }
        &self.markers
    }

    /// The static cell's surface voxels as a cube-list marker (publish it
    /// now and then: it is large and changes only with the field).
    pub fn cell_markers(&mut self, stamp: Time) -> &MarkerArray {
        for m in &mut self.cell_markers.markers {
            m.header.stamp = stamp;
        }
        &self.cell_markers
    }
}

pub(super) fn set_kv(kv: &mut KeyValue, key: &str, v: std::fmt::Arguments<'_>) {
    if kv.key != key {
        kv.key.clear();
        kv.key.push_str(key);
    }
    kv.value.clear();
    let _ = kv.value.write_fmt(v);
}

impl GuardNode {
    /// How many publishers robot `r`'s joint-state topic has matched (the
    /// diagnostics tell "no publisher" from "matched but silent").
    pub fn set_joint_state_publishers(&mut self, r: usize, count: Option<usize>) {
        if let Some(c) = self.js_publishers.get_mut(r) {
            *c = count;
        }
    }

    /// Samples the transport dropped since start (states and grants a
    /// subscriber did not acknowledge): shown in the node's diagnostics.
    pub fn set_samples_dropped(&mut self, n: u64) {
        self.samples_dropped = n;
    }

    /// The peers on the node's topics that do not connect for their QoS
    /// now (topic, how): shown in the node's diagnostics; each new one is
    /// logged once.
    pub fn set_qos_mismatches(&mut self, mut now: Vec<(String, String)>) {
        now.truncate(64);
        for n in now.iter().filter(|n| !self.qos_notes.contains(n)) {
            tracing::warn!("incompatible QoS on {}: {}", n.0, n.1);
        }
        self.qos_notes = now;
    }

    /// Robot `r`'s spheres posed at its latest joint state (`None` before
    /// its first, or where its positions do not pose).
    pub fn posed_spheres(&mut self, r: usize) -> Option<&workcell_guard_core::model::PosedSpheres> {
        let io = self.io.get_mut(r)?;
        (io.has_q && io.poser.pose(&io.q, &mut io.posed).is_ok()).then_some(&io.posed)
    }

    /// Why robot `r` is stopped now, as text: its grant's hold, or what
    /// started its stop.
    pub fn stop_cause(&self, r: usize) -> String {
        match self.guard.commands().get(r) {
            Some(c) if c.source == StopSource::StaleSensing => {
                format!("sensed obstacles stale (no cloud within cloud_timeout_s = {} s)", self.params.cloud_timeout_s)
            }
            Some(c) if c.source == StopSource::RefusedInput => {
                self.io.get(r).and_then(|io| io.fault.as_ref()).map_or_else(String::new, |f| f.to_string())
            }
            Some(c) if c.source == StopSource::Grant => {
                let g = self.arm_grants.get(r).map_or("", |g| g.reason.as_str());
                format!("holds on its path: {g}")
            }
            _ => self.io.get(r).map_or(String::new(), |io| io.cause.clone()),
        }
    }
}
