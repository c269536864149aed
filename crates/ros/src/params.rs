//! The node's parameters: read from ROS parameter files
//! (`<node pattern>: ros__parameters: …`, with rcl's `*` and `**` wildcards) and `-p`
//! overrides, and checked one by one, so that a bad update (from a file,
//! the command line or, later, the parameter services) is refused with a
//! reason and changes nothing.

use crate::args::{RosArgs, node_matches};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The node's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeParams {
    /// `workcell_file`: the workcell YAML (relative paths resolve against
    /// the parameter file that set it, `package://` through the ament
    /// index).
    pub workcell_file: Option<PathBuf>,
    /// `record_file`: where the node records what it takes and publishes
    /// (a rosbag2 MCAP; none by default).
    pub record_file: Option<PathBuf>,
    /// `rate_hz`: cycles per second (1..=10000), default 500.
    pub rate_hz: f64,
    /// `cycle_on_joint_state`: also run a cycle on each joint state.
    pub cycle_on_joint_state: bool,
    /// `use_sim_time`: follow `/clock`.
    pub use_sim_time: bool,
    /// `diagnostics_hz`: diagnostics published per second (0 = none), default 10.
    pub diagnostics_hz: f64,
    /// `slow_down_m`: where a robot's stopping path approaches something to
    /// within this of the clearance margin, its speed scaling is the larger
    /// of the speed whose path keeps this far out (or half the present gap)
    /// and a ramp from `escape_speed_scaling` to 1 by where the path ends,
    /// default 0.05.
    pub slow_down_m: f64,
    /// `speed_scaling_rate`: the speed scaling changes by at most this much
    /// a second either way (but to 0 at once on a stop), default 4.
    pub speed_scaling_rate: f64,
    /// `escape_speed_scaling`: the speed scaling of a robot let go on is at
    /// least this, default 0.25 (only a stop or its grant bring it lower).
    pub escape_speed_scaling: f64,
    /// `latch_stops`: a proximity stop (cell, robot, self) stays until the
    /// `~/reset_stop` service releases it, default false.
    pub latch_stops: bool,
    /// `markers_hz`: robot markers published per second (0 = none), default 10;
    /// the cell's voxels go out once a second while markers are on.
    pub markers_hz: f64,
    /// `stop_heartbeat_s`: a robot's stop is published when it changes and
    /// again this often while it does not (0 = every cycle), default 1.
    /// The stop topics are transient local: a late subscriber is sent what
    /// the writer still holds, and RustDDS trims a writer's history only
    /// every 6 s, so fewer samples make for a shorter replay.
    pub stop_heartbeat_s: f64,
    /// `qos_overrides./<topic>.<publisher|subscription>.<policy>`: read at
    /// start ([`crate::qos`]).
    pub qos_overrides: crate::qos::QosOverrides,
    /// `shutdown_linger_s`: after SIGINT/SIGTERM (or a panic) every stop is
    /// published true and the node stays on the wire this long, so that
    /// subscribers still discovering it get that `true`, default 1.
    pub shutdown_linger_s: f64,
    /// `clearance_m`, `release_m`, `watchdog_s`, `release_hold_s`: when set,
    /// override the workcell file's values.
    pub clearance_m: Option<f64>,
    /// See `clearance_m`.
    pub release_m: Option<f64>,
    /// See `clearance_m`.
    pub watchdog_s: Option<f64>,
    /// See `clearance_m`.
    pub release_hold_s: Option<f64>,
    /// `starvation_s`: a robot waiting for others (held, slowed by its
    /// grant's end, backing away) longer than this is named in the
    /// diagnostics, default 10.
    pub starvation_s: f64,
    /// `priority_boost_after_s`: a robot waiting longer than this goes
    /// before every robot not boosted until its plan is done or replaced;
    /// 0 (the default): never.
    pub priority_boost_after_s: f64,
    /// `give_way_at_start`: a robot at its plan's start (or setting off
    /// from it) gives way to a lower one already on its way through its
    /// increment.
    pub give_way_at_start: bool,
    /// `give_way_when_caught`: otherwise, a robot at its plan's start (or
    /// setting off) gives way to a lower one on its way that can no longer
    /// stop short of its increment.
    pub give_way_when_caught: bool,
    /// `go_on_when_clear`: a robot standing in a higher one's increment
    /// goes on instead of backing away where its increment meets only
    /// what that one claims.
    pub go_on_when_clear: bool,
    /// `cloud_timeout_s`: sensed obstacles (`points`) are expected at least
    /// this often; 0 (default): sensing is optional.
    pub cloud_timeout_s: f64,
    /// `cloud_policy`: `stop` (default) stops every robot while clouds are
    /// stale (none yet, or the newest older than `cloud_timeout_s`);
    /// `warn` only reports it.
    pub cloud_policy_stops: bool,
}

impl Default for NodeParams {
    fn default() -> Self {
        NodeParams {
            workcell_file: None,
            record_file: None,
            rate_hz: 500.0,
            cycle_on_joint_state: false,
            use_sim_time: false,
            diagnostics_hz: 10.0,
            markers_hz: 10.0,
            latch_stops: false,
            slow_down_m: 0.05,
            escape_speed_scaling: 0.25,
            speed_scaling_rate: 4.0,
            stop_heartbeat_s: 1.0,
            shutdown_linger_s: 1.0,
            qos_overrides: crate::qos::QosOverrides::default(),
            clearance_m: None,
            release_m: None,
            watchdog_s: None,
            release_hold_s: None,
            starvation_s: 10.0,
            priority_boost_after_s: 0.0,
            give_way_at_start: false,
            give_way_when_caught: true,
            go_on_when_clear: false,
            cloud_timeout_s: 0.0,
            cloud_policy_stops: true,
        }
    }
}

/// A parameter that cannot be taken.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ParamError {
    /// No such parameter.
    #[error("no parameter `{0}`")]
    Unknown(String),
    /// The value is of the wrong type or out of range.
    #[error("parameter `{name}` = {value}: {problem}")]
    Invalid {
        /// The parameter.
        name: String,
        /// Its value as given.
        value: String,
        /// What is wrong.
        problem: String,
    },
    /// A parameter file could not be read.
    #[error("{file}: {problem}")]
    File {
        /// The file.
        file: PathBuf,
        /// What went wrong.
        problem: String,
    },
}

fn invalid(name: &str, value: &Value, problem: &str) -> ParamError {
    ParamError::Invalid { name: name.to_string(), value: value.to_string(), problem: problem.to_string() }
}

fn number(name: &str, v: &Value, lo: f64, hi: f64) -> Result<f64, ParamError> {
    // (JSON has no NaN or infinity: the transports pass them as text.)
    if v.as_str().and_then(|t| t.parse::<f64>().ok()).is_some_and(|x| !x.is_finite()) {
        return Err(invalid(name, v, "must be a finite number"));
    }
    let x = v.as_f64().ok_or_else(|| invalid(name, v, "must be a number"))?;
    if !(x.is_finite() && x >= lo && x <= hi) {
        return Err(invalid(name, v, &format!("must be within {lo}..={hi}")));
    }
    Ok(x)
}

fn boolean(name: &str, v: &Value) -> Result<bool, ParamError> {
    v.as_bool().ok_or_else(|| invalid(name, v, "must be true or false"))
}

/// A parameter's type and range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// `true` or `false`.
    Bool,
    /// A number within `lo..=hi`.
    Number {
        /// Least value.
        lo: f64,
        /// Greatest value.
        hi: f64,
    },
    /// A file path (relative to the parameter file that sets it,
    /// `package://` through the ament index).
    Path,
    /// A file path, or empty for none.
    OptionalPath,
    /// One of these words.
    Choice(&'static [&'static str]),
}

/// When an update takes effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applies {
    /// Read at start; `~/reload` (or a restart) for another value.
    AtStart,
    /// From the next cycle.
    NextCycle,
    /// The timer it sets is re-made at once.
    Timer,
}

/// One parameter: name, type and range, default, what it does, when an
/// update applies, and how it is read and written. [`PARAMS`] lists them
/// all; setting, declaring, describing and the table in
/// `docs/ros-interface.md` all come
/// from it.
pub struct ParamSpec {
    /// The ROS name.
    pub name: &'static str,
    /// Type and range.
    pub kind: Kind,
    /// The default, as the documented table shows it.
    pub default: &'static str,
    /// What it does.
    pub doc: &'static str,
    /// When an update applies.
    pub applies: Applies,
    /// Its value (the workcell's where the parameter overrides it and is
    /// unset).
    pub get: fn(&NodeParams, &workcell_guard_description::workcell::Workcell) -> Value,
    /// Stores a value already checked against `kind` (a path already
    /// resolved); may still refuse it against the other parameters.
    set: fn(&mut NodeParams, &Value) -> Result<(), String>,
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

macro_rules! spec {
    ($name:literal, $kind:expr, $default:literal, $applies:ident, $doc:literal,
     get: |$p:ident, $c:ident| $get:expr, set: |$q:ident, $v:ident| $set:expr) => {
        ParamSpec {
            name: $name,
            kind: $kind,
            default: $default,
            doc: $doc,
            applies: Applies::$applies,
            get: |$p, $c| {
                let _ = &$c;
                Value::from($get)
            },
            set: |$q, $v| {
                $set;
                Ok(())
            },
        }
    };
}

const fn range(lo: f64, hi: f64) -> Kind {
    Kind::Number { lo, hi }
}

/// Every parameter of the node.
pub const PARAMS: &[ParamSpec] = &[
    spec!("workcell_file", Kind::Path, "(none)", AtStart,
        "The workcell YAML; relative paths resolve against the parameter file that sets it.",
        get: |p, c| p.workcell_file.as_ref().map(|f| f.display().to_string()).unwrap_or_default(),
        set: |p, v| p.workcell_file = v.as_str().map(PathBuf::from)),
    spec!("record_file", Kind::OptionalPath, "(none)", AtStart,
        "Records every input the node takes, its timer cycles and all it publishes into this rosbag2 MCAP file (`workcell_guard replay` runs it again).",
        get: |p, c| p.record_file.as_ref().map(|f| f.display().to_string()).unwrap_or_default(),
        set: |p, v| p.record_file = v.as_str().filter(|f| !f.is_empty()).map(PathBuf::from)),
    spec!("rate_hz", range(1.0, 10_000.0), "500", Timer, "Cycles per second.",
        get: |p, c| p.rate_hz, set: |p, v| p.rate_hz = num(v)),
    spec!("cycle_on_joint_state", Kind::Bool, "false", NextCycle,
        "Also run a cycle on each joint state: the arriving robot's stop is decided and published before the others'; timer ticks within one period of such a cycle are skipped.",
        get: |p, c| p.cycle_on_joint_state, set: |p, v| p.cycle_on_joint_state = v.as_bool() == Some(true)),
    spec!("use_sim_time", Kind::Bool, "false", AtStart, "Time follows `/clock` (rosgraph_msgs/Clock; 0 before the first).",
        get: |p, c| p.use_sim_time, set: |p, v| p.use_sim_time = v.as_bool() == Some(true)),
    spec!("diagnostics_hz", range(0.0, 1000.0), "10", Timer, "Diagnostics per second (0: none).",
        get: |p, c| p.diagnostics_hz, set: |p, v| p.diagnostics_hz = num(v)),
    spec!("markers_hz", range(0.0, 100.0), "10", Timer,
        "Robot markers per second (0: none); the cell's voxels go out once a second while markers are on.",
        get: |p, c| p.markers_hz, set: |p, v| p.markers_hz = num(v)),
    spec!("latch_stops", Kind::Bool, "false", NextCycle,
        "A proximity stop (cell, robot, self) holds until `~/reset_stop` releases it.",
        get: |p, c| p.latch_stops, set: |p, v| p.latch_stops = v.as_bool() == Some(true)),
    spec!("slow_down_m", range(1e-3, 2.0), "0.05", NextCycle,
        "Speed scaling is 1 unless the robot's stopping path, at the speed it goes, takes it nearer the cell, its own links or another robot than it is now and to within this of the clearance margin; then it is the larger of the speed whose stopping path keeps this far beyond the margin (or half the present gap beyond it, where that is less) and a ramp from `escape_speed_scaling` where the path ends at the margin to 1 where it ends this past it, m. What it moves away from or past does not slow it.",
        get: |p, c| p.slow_down_m, set: |p, v| p.slow_down_m = num(v)),
    spec!("speed_scaling_rate", range(0.1, 1000.0), "4", NextCycle,
        "Speed scaling changes by at most this much a second, up or down (a controller's ramp); a stop still drops it to 0 at once and it never exceeds the grant's; on its plan it rises faster where the plan goes slower than its top speed (top speed over the speed there, at most 20 times); what the robot travels while it falls counts against its room (the faster it goes, the sooner it is slowed), 1/s.",
        get: |p, c| p.speed_scaling_rate, set: |p, v| p.speed_scaling_rate = num(v)),
    spec!("escape_speed_scaling", range(0.0, 1.0), "0.25", NextCycle,
        "Speed scaling of a robot the guard lets go on at least this, whatever its stopping path approaches (a robot that must get somewhere never stands unstopped); only a stop or its grant bring it lower.",
        get: |p, c| p.escape_speed_scaling, set: |p, v| p.escape_speed_scaling = num(v)),
    spec!("stop_heartbeat_s", range(0.0, 60.0), "1", NextCycle,
        "A stop goes out when it changes and this often while it does not, s (0: every cycle).",
        get: |p, c| p.stop_heartbeat_s, set: |p, v| p.stop_heartbeat_s = num(v)),
    spec!("shutdown_linger_s", range(0.0, 10.0), "1", AtStart,
        "On SIGINT, SIGTERM or a panic every stop goes out true and the node stays on the wire this long, s.",
        get: |p, c| p.shutdown_linger_s, set: |p, v| p.shutdown_linger_s = num(v)),
    spec!("clearance_m", range(0.0, 1.0), "the workcell's", NextCycle,
        "Overrides `margins.clearance_m`: a check within this stops, m.",
        get: |p, c| p.clearance_m.unwrap_or(c.margins.clearance_m), set: |p, v| p.clearance_m = Some(num(v))),
    spec!("release_m", range(0.0, 1.0), "the workcell's", NextCycle,
        "Overrides `margins.release_m`: a stopped robot is released beyond this, m (at least `clearance_m`).",
        get: |p, c| p.release_m.unwrap_or(c.margins.release_m), set: |p, v| p.release_m = Some(num(v))),
    spec!("watchdog_s", range(1e-4, 10.0), "the workcell's", NextCycle,
        "Overrides `guard.watchdog_s`: a joint state older than this stops its robot, s.",
        get: |p, c| p.watchdog_s.unwrap_or(c.guard.watchdog_s), set: |p, v| p.watchdog_s = Some(num(v))),
    spec!("release_hold_s", range(0.0, 60.0), "the workcell's", NextCycle,
        "Overrides `guard.release_hold_s`: how long nothing may hold a stopped robot before it is released, s.",
        get: |p, c| p.release_hold_s.unwrap_or(c.guard.release_hold_s), set: |p, v| p.release_hold_s = Some(num(v))),
    spec!("starvation_s", range(0.1, 3600.0), "10", NextCycle,
        "A robot that waits for others (held, slowed by its grant's end, backing away) longer than this is named in the diagnostics (WARN), s.",
        get: |p, c| p.starvation_s, set: |p, v| p.starvation_s = num(v)),
    spec!("priority_boost_after_s", range(0.0, 3600.0), "0", NextCycle,
        "A robot that waits for others longer than this goes before every robot not boosted (the earlier boosted first) until its plan is done or replaced; 0: never, s.",
        get: |p, c| p.priority_boost_after_s, set: |p, v| p.priority_boost_after_s = num(v)),
    spec!("give_way_at_start", Kind::Bool, "false", NextCycle,
        "A robot at its plan's start, or setting off from it (its first 0.5 s of plan time, while it can still stop short of the other's increment), waits for a lower one already on its way through its increment (until that one stands still or its plan ends) instead of sending it back; false: priority alone decides.",
        get: |p, c| p.give_way_at_start, set: |p, v| p.give_way_at_start = v.as_bool() == Some(true)),
    spec!("give_way_when_caught", Kind::Bool, "true", NextCycle,
        "With give_way_at_start false: a robot at its plan's start, or setting off from it (once per plan, while it can still stop short), waits for a lower one already on its way that can no longer stop short of its increment (its stopping path reaches into it) instead of sending it back (it would hold for its retreat all the same), unless that one's plan ends in its way (it would park there); false: priority alone decides there too.",
        get: |p, c| p.give_way_when_caught, set: |p, v| p.give_way_when_caught = v.as_bool() == Some(true)),
    spec!("go_on_when_clear", Kind::Bool, "false", NextCycle,
        "A robot standing in the increment of a higher one goes on (and goes first until its plan is done) instead of backing away, where its increment meets only what that one claims, not where it stands or is committed to go; false: it backs away, as the method has it.",
        get: |p, c| p.go_on_when_clear, set: |p, v| p.go_on_when_clear = v.as_bool() == Some(true)),
    spec!("cloud_timeout_s", range(0.0, 60.0), "0", NextCycle,
        "Sensed obstacles (`points`) are expected at least this often, s; while none has come yet or the newest is older, `cloud_policy` applies. 0: sensing is optional.",
        get: |p, c| p.cloud_timeout_s, set: |p, v| p.cloud_timeout_s = num(v)),
    spec!("cloud_policy", Kind::Choice(&["stop", "warn"]), "stop", NextCycle,
        "With `cloud_timeout_s`: `stop` stops every robot while the sensed obstacles are stale (what the cell holds is unknown); `warn` only reports it in the diagnostics.",
        get: |p, c| if p.cloud_policy_stops { "stop" } else { "warn" },
        set: |p, v| p.cloud_policy_stops = v.as_str() == Some("stop")),
];

/// The parameter named `name`.
pub fn spec(name: &str) -> Option<&'static ParamSpec> {
    PARAMS.iter().find(|s| s.name == name)
}

impl ParamSpec {
    /// Its type and range, as the documented table writes it.
    pub fn kind_text(&self) -> String {
        match self.kind {
            Kind::Bool => "bool".to_string(),
            Kind::Number { lo, hi } => format!("{lo}..={hi}"),
            Kind::Path => "path".to_string(),
            Kind::OptionalPath => "path or empty".to_string(),
            Kind::Choice(words) => words.join(" or "),
        }
    }

    /// When an update applies, in a few words.
    pub fn applies_text(&self) -> &'static str {
        match self.applies {
            Applies::AtStart => "at start",
            Applies::NextCycle => "next cycle",
            Applies::Timer => "at once",
        }
    }

    /// One line: type, range, default, when it applies, what it does (what
    /// `ros2 param describe` shows as the description).
    pub fn describe(&self) -> String {
        format!("{}; default {}; applies {}. {}", self.kind_text(), self.default, self.applies_text(), self.doc)
    }
}

/// The parameters as a Markdown table (`docs/ros-interface.md`'s).
pub fn markdown_table() -> String {
    let mut out = String::from("| Parameter | Type | Default | Applies | What it does |\n|---|---|---|---|---|\n");
    for s in PARAMS {
        let row = format!("| `{}` | {} | {} | {} | {} |\n", s.name, s.kind_text(), s.default, s.applies_text(), s.doc);
        out.push_str(&row);
    }
    out
}

impl NodeParams {
    /// Sets one parameter, or refuses it and changes nothing. `base` is the
    /// file a relative `workcell_file` is resolved against.
    pub fn set(&mut self, name: &str, v: &Value, base: Option<&Path>) -> Result<(), ParamError> {
        if name.starts_with(crate::qos::PREFIX) {
            return self.qos_overrides.set(name, v).map_err(|e| invalid(name, v, &e.problem));
        }
        let s = spec(name).ok_or_else(|| ParamError::Unknown(name.to_string()))?;
        if v.is_null() {
            return Err(invalid(name, v, "cannot be deleted: it is declared by the node (set a value instead)"));
        }
        let checked = match s.kind {
            Kind::Bool => Value::Bool(boolean(name, v)?),
            Kind::Number { lo, hi } => Value::from(number(name, v, lo, hi)?),
            Kind::OptionalPath if v.as_str() == Some("") => Value::String(String::new()),
            Kind::Choice(words) => match v.as_str() {
                Some(w) if words.contains(&w) => Value::String(w.to_string()),
                _ => return Err(invalid(name, v, &format!("must be one of {}", words.join(", ")))),
            },
            Kind::Path | Kind::OptionalPath => {
                let p = v.as_str().filter(|p| !p.is_empty()).ok_or_else(|| invalid(name, v, "must be a path"))?;
                let p = match base {
                    Some(b) => workcell_guard_description::resolve::resolve(p, b)
                        .map_err(|e| invalid(name, v, &e.to_string()))?,
                    None => PathBuf::from(p),
                };
                Value::String(p.display().to_string())
            }
        };
        let mut next = self.clone();
        (s.set)(&mut next, &checked).map_err(|problem| invalid(name, v, &problem))?;
        *self = next;
        Ok(())
    }

    /// Applies the sections of a parameter file's text (`file`: where it
    /// was read, for errors and relative paths) that name the node whose
    /// fully qualified name is `fqn`, as [`NodeParams::load`] does.
    pub fn apply_file(&mut self, text: &str, file: &Path, fqn: &str) -> Result<(), ParamError> {
        let err = |problem: String| ParamError::File { file: file.to_path_buf(), problem };
        let top: Sections = serde_saphyr::from_str(text).map_err(|e| err(e.to_string()))?;
        let mut matched = false;
        for (key, section) in top.0.iter().filter(|(k, _)| node_matches(k, fqn)) {
            matched = true;
            let Some(params) = section.get("ros__parameters").and_then(Value::as_object) else {
                return Err(err(format!("`{key}` has no `ros__parameters` mapping")));
            };
            let mut flat = Vec::new();
            for (name, v) in params {
                crate::qos::flatten(name, v, &mut flat);
            }
            for (name, v) in &flat {
                self.set(name, v, Some(file))?;
            }
        }
        if !matched {
            tracing::warn!("{}: no section names node {fqn}; nothing taken from it", file.display());
        }
        Ok(())
    }

    /// The parameters of node `node` in namespace `ns` ("/" or "/a/b"):
    /// defaults, then each parameter file in order (its sections that name
    /// the node, by rcl's rules with `*` and `**` wildcards, in the file's
    /// order: a later one over an earlier), then each `-p` (those with a
    /// `node:` prefix only where it names this node).
    pub fn load(args: &RosArgs, node: &str, ns: &str) -> Result<NodeParams, ParamError> {
        let mut p = NodeParams::default();
        let ns = ns.trim_matches('/');
        let fqn = if ns.is_empty() { format!("/{node}") } else { format!("/{ns}/{node}") };
        for file in &args.params_files {
            let text = std::fs::read_to_string(file)
                .map_err(|e| ParamError::File { file: file.clone(), problem: e.to_string() })?;
            p.apply_file(&text, file, &fqn)?;
        }
        for (name, text) in &args.params {
            let name = match name.rsplit_once(':') {
                Some((n, rest)) if n == node || node_matches(n, &fqn) => rest,
                Some(_) => continue,
                None => name.as_str(),
            };
            // As rcl does: the value is YAML (so `250` is a number, `true` a
            // boolean, anything else a string).
            let v: Value = serde_saphyr::from_str(text).unwrap_or_else(|_| Value::String(text.clone()));
            p.set(name, &v, None)?;
        }
        Ok(p)
    }
}

/// A parameter file's top-level mapping, node name patterns to sections,
/// in the file's order.
struct Sections(Vec<(String, Value)>);

impl<'de> serde::Deserialize<'de> for Sections {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Sections, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Sections;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a mapping of node names")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<Sections, A::Error> {
                let mut out = Vec::new();
                while let Some(kv) = m.next_entry::<String, Value>()? {
                    out.push(kv);
                }
                Ok(Sections(out))
            }
        }
        d.deserialize_map(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interface_reference_shows_the_parameter_table() {
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/ros-interface.md")).unwrap();
        let table = markdown_table();
        assert!(
            doc.contains(&table),
            "docs/ros-interface.md must hold the parameter table as the code has it:\n{table}"
        );
    }

    #[test]
    fn every_parameter_is_declared_described_and_set_through_the_table() {
        let mut p = NodeParams::default();
        for s in PARAMS {
            assert!(s.describe().contains(s.doc));
            let v = match s.kind {
                Kind::Bool => Value::Bool(true),
                Kind::Number { lo, hi } => Value::from(if s.name == "release_m" { hi } else { (lo + hi) / 2.0 }),
                Kind::Path | Kind::OptionalPath => Value::from("/tmp/cell.yaml"),
                Kind::Choice(words) => Value::from(words[words.len() - 1]),
            };
            p.set(s.name, &v, None).unwrap_or_else(|e| panic!("{}: {e}", s.name));
            if let Kind::Number { lo, hi } = s.kind {
                for bad in [lo - 1.0, hi + 1.0, f64::NAN] {
                    let before = p.clone();
                    assert!(p.set(s.name, &Value::from(bad), None).is_err(), "{} = {bad}", s.name);
                    assert_eq!(p, before, "a refused {} changes nothing", s.name);
                }
                assert!(p.set(s.name, &Value::from("fast"), None).is_err());
            }
        }
        assert!(matches!(p.set("no_such", &Value::Bool(true), None), Err(ParamError::Unknown(_))));
    }

    fn args(file: &Path, extra: &[&str]) -> RosArgs {
        let mut a = vec!["--ros-args".to_string(), "--params-file".into(), file.display().to_string()];
        a.extend(extra.iter().map(|s| s.to_string()));
        RosArgs::parse(a).unwrap().0
    }

    #[test]
    fn files_sections_and_overrides_apply_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("p.yaml");
        std::fs::write(dir.path().join("cell.yaml"), "").unwrap();
        std::fs::write(
            &f,
            "/**:\n  ros__parameters:\n    rate_hz: 250.0\n    use_sim_time: true\n\
             workcell_guard:\n  ros__parameters:\n    workcell_file: cell.yaml\n    clearance_m: 0.02\n\
             other_node:\n  ros__parameters:\n    rate_hz: 1.0\n",
        )
        .unwrap();
        let p = NodeParams::load(&args(&f, &["-p", "release_m:=0.05"]), "workcell_guard", "/").unwrap();
        assert_eq!(p.rate_hz, 250.0);
        assert!(p.use_sim_time);
        assert_eq!(p.workcell_file, Some(dir.path().join("cell.yaml")), "relative to the parameter file");
        assert_eq!((p.clearance_m, p.release_m), (Some(0.02), Some(0.05)));
        // A namespaced section applies to the node in that namespace.
        std::fs::write(&f, "/cell_a/workcell_guard:\n  ros__parameters:\n    rate_hz: 100\n").unwrap();
        assert_eq!(NodeParams::load(&args(&f, &[]), "workcell_guard", "/cell_a").unwrap().rate_hz, 100.0);
        assert_eq!(NodeParams::load(&args(&f, &[]), "workcell_guard", "/").unwrap().rate_hz, 500.0);
    }

    #[test]
    fn the_bundled_parameter_file_points_at_the_sample_cell() {
        let f = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("config/workcell_guard.yaml");
        let p = NodeParams::load(&args(&f, &[]), "workcell_guard", "/").unwrap();
        let cell = p.workcell_file.unwrap();
        assert_eq!(cell.file_name().unwrap(), "workcell.yaml");
        assert!(workcell_guard_description::workcell::load(&cell).is_ok());
        assert_eq!(p.rate_hz, 500.0);
    }

    #[test]
    fn bad_parameters_are_refused_with_the_reason_and_change_nothing() {
        let mut p = NodeParams::default();
        let e = p.set("rate_hz", &Value::from(0.0), None).unwrap_err();
        assert!(e.to_string().contains("rate_hz") && e.to_string().contains("1..=10000"), "{e}");
        assert!(matches!(p.set("rate_hz", &Value::from("fast"), None), Err(ParamError::Invalid { .. })));
        assert_eq!(p.set("rate", &Value::from(1.0), None), Err(ParamError::Unknown("rate".into())));
        let e = p.set("clearance_m", &Value::Null, None).unwrap_err().to_string();
        assert!(e.contains("cannot be deleted"), "{e}");
        let e = p.set("clearance_m", &Value::from("NaN"), None).unwrap_err().to_string();
        assert!(e.contains("must be a finite number"), "{e}");
        assert_eq!(p, NodeParams::default());
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("p.yaml");
        std::fs::write(&f, "workcell_guard:\n  ros__parameters:\n    workcell_file: gone.yaml\n").unwrap();
        let e = NodeParams::load(&args(&f, &[]), "workcell_guard", "/").unwrap_err();
        assert!(e.to_string().contains("gone.yaml") && e.to_string().contains("does not exist"), "{e}");
        std::fs::write(&f, "workcell_guard:\n  parameters: {}\n").unwrap();
        assert!(matches!(NodeParams::load(&args(&f, &[]), "workcell_guard", "/"), Err(ParamError::File { .. })));
        let e = NodeParams::load(&RosArgs::parse(["--ros-args", "-p", "use_sim_time:=maybe"]).unwrap().0, "n", "/")
            .unwrap_err();
        assert!(e.to_string().contains("true or false"), "{e}");
    }

    /// Each wildcard form of rcl's parameter files, in one file, applied to
    /// the node where it names it and in the file's order.
    #[test]
    fn wildcard_sections_apply_where_they_name_the_node_in_file_order() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("p.yaml");
        let section = |key: &str, hz: u32| format!("{key}:\n  ros__parameters:\n    rate_hz: {hz}\n");
        let load = |text: &str, ns: &str| {
            std::fs::write(&f, text).unwrap();
            NodeParams::load(&args(&f, &[]), "workcell_guard", ns).unwrap().rate_hz
        };
        for (key, ns, applies) in [
            ("/**", "/cell_a", true),
            ("/**/workcell_guard", "/cell_a", true),
            ("/**/workcell_guard", "/", true),
            ("/*/workcell_guard", "/cell_a", true),
            ("/*/workcell_guard", "/a/b", false),
            ("/cell_a/*", "/cell_a", true),
            ("/cell_b/*", "/cell_a", false),
            ("/*", "/", true),
            ("/*", "/cell_a", false),
            ("workcell_guard", "/", true),
            ("workcell_guard", "/cell_a", false),
            ("/**/other_node", "/cell_a", false),
        ] {
            let want = if applies { 123.0 } else { 500.0 };
            assert_eq!(load(&section(key, 123), ns), want, "{key} for a node in {ns}");
        }
        // Later sections over earlier ones, as they stand in the file.
        let text = section("/cell_a/workcell_guard", 100) + &section("/**", 200);
        assert_eq!(load(&text, "/cell_a"), 200.0);
        let text = section("/**", 200) + &section("/cell_a/workcell_guard", 100);
        assert_eq!(load(&text, "/cell_a"), 100.0);
        // `-p node:name:=value` for this node only.
        std::fs::write(&f, section("/**", 200)).unwrap();
        let p = |extra: &[&str]| NodeParams::load(&args(&f, extra), "workcell_guard", "/cell_a").unwrap().rate_hz;
        assert_eq!(p(&["-p", "workcell_guard:rate_hz:=50"]), 50.0);
        assert_eq!(p(&["-p", "/cell_a/workcell_guard:rate_hz:=60"]), 60.0);
        assert_eq!(p(&["-p", "other_node:rate_hz:=70"]), 200.0);
    }
}
