//! The node's parameters: read from ROS parameter files
//! (`<node>: ros__parameters: …`, also `/**` and namespaced keys) and `-p`
//! overrides, and checked one by one, so that a bad update (from a file,
//! the command line or, later, the parameter services) is refused with a
//! reason and changes nothing.

use crate::args::RosArgs;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The node's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeParams {
    /// `workcell_file`: the workcell YAML (relative paths resolve against
    /// the parameter file that set it, `package://` through the ament
    /// index).
    pub workcell_file: Option<PathBuf>,
    /// `rate_hz`: cycles per second (1..=10000), default 500.
    pub rate_hz: f64,
    /// `cycle_on_joint_state`: also run a cycle on each joint state.
    pub cycle_on_joint_state: bool,
    /// `use_sim_time`: follow `/clock`.
    pub use_sim_time: bool,
    /// `diagnostics_hz`: diagnostics published per second (0 = none), default 10.
    pub diagnostics_hz: f64,
    /// `slow_down_m`: speed scaling falls from 1 to 0 as a robot's
    /// clearance beyond the release margin falls from this to 0, default 0.1.
    pub slow_down_m: f64,
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
}

impl Default for NodeParams {
    fn default() -> Self {
        NodeParams {
            workcell_file: None,
            rate_hz: 500.0,
            cycle_on_joint_state: false,
            use_sim_time: false,
            diagnostics_hz: 10.0,
            markers_hz: 10.0,
            latch_stops: false,
            slow_down_m: 0.1,
            stop_heartbeat_s: 1.0,
            shutdown_linger_s: 1.0,
            clearance_m: None,
            release_m: None,
            watchdog_s: None,
            release_hold_s: None,
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
    let x = v.as_f64().ok_or_else(|| invalid(name, v, "must be a number"))?;
    if !(x.is_finite() && x >= lo && x <= hi) {
        return Err(invalid(name, v, &format!("must be within {lo}..={hi}")));
    }
    Ok(x)
}

fn boolean(name: &str, v: &Value) -> Result<bool, ParamError> {
    v.as_bool().ok_or_else(|| invalid(name, v, "must be true or false"))
}

impl NodeParams {
    /// Sets one parameter, or refuses it and changes nothing. `base` is the
    /// file a relative `workcell_file` is resolved against.
    pub fn set(&mut self, name: &str, v: &Value, base: Option<&Path>) -> Result<(), ParamError> {
        match name {
            "workcell_file" => {
                let s = v.as_str().filter(|s| !s.is_empty()).ok_or_else(|| invalid(name, v, "must be a path"))?;
                let p = match base {
                    Some(b) => workcell_guard_description::resolve::resolve(s, b)
                        .map_err(|e| invalid(name, v, &e.to_string()))?,
                    None => PathBuf::from(s),
                };
                self.workcell_file = Some(p);
            }
            "rate_hz" => self.rate_hz = number(name, v, 1.0, 10_000.0)?,
            "cycle_on_joint_state" => self.cycle_on_joint_state = boolean(name, v)?,
            "use_sim_time" => self.use_sim_time = boolean(name, v)?,
            "diagnostics_hz" => self.diagnostics_hz = number(name, v, 0.0, 1000.0)?,
            "markers_hz" => self.markers_hz = number(name, v, 0.0, 100.0)?,
            "latch_stops" => self.latch_stops = boolean(name, v)?,
            "slow_down_m" => self.slow_down_m = number(name, v, 1e-3, 2.0)?,
            "stop_heartbeat_s" => self.stop_heartbeat_s = number(name, v, 0.0, 60.0)?,
            "shutdown_linger_s" => self.shutdown_linger_s = number(name, v, 0.0, 10.0)?,
            "clearance_m" => self.clearance_m = Some(number(name, v, 0.0, 1.0)?),
            "release_m" => {
                let x = number(name, v, 0.0, 1.0)?;
                if let Some(c) = self.clearance_m.filter(|&c| x < c) {
                    return Err(invalid(name, v, &format!("must be at least clearance_m ({c})")));
                }
                self.release_m = Some(x);
            }
            "watchdog_s" => self.watchdog_s = Some(number(name, v, 1e-4, 10.0)?),
            "release_hold_s" => self.release_hold_s = Some(number(name, v, 0.0, 60.0)?),
            _ => return Err(ParamError::Unknown(name.to_string())),
        }
        Ok(())
    }

    /// The parameters of node `node` in namespace `ns` ("/" or "/a/b"):
    /// defaults, then each parameter file in order (sections `/**`, then
    /// `node`, `ns/node` and `/ns/node`), then each `-p`.
    pub fn load(args: &RosArgs, node: &str, ns: &str) -> Result<NodeParams, ParamError> {
        let mut p = NodeParams::default();
        let ns = ns.trim_matches('/');
        let keys: Vec<String> = if ns.is_empty() {
            vec!["/**".into(), node.into(), format!("/{node}")]
        } else {
            vec!["/**".into(), node.into(), format!("{ns}/{node}"), format!("/{ns}/{node}")]
        };
        for file in &args.params_files {
            let err = |problem: String| ParamError::File { file: file.clone(), problem };
            let text = std::fs::read_to_string(file).map_err(|e| err(e.to_string()))?;
            let doc: Value = serde_saphyr::from_str(&text).map_err(|e| err(e.to_string()))?;
            let Some(top) = doc.as_object() else { return Err(err("expected a mapping of node names".into())) };
            for key in &keys {
                let Some(section) = top.get(key) else { continue };
                let Some(params) = section.get("ros__parameters").and_then(Value::as_object) else {
                    return Err(err(format!("`{key}` has no `ros__parameters` mapping")));
                };
                for (name, v) in params {
                    p.set(name, v, Some(file))?;
                }
            }
        }
        for (name, text) in &args.params {
            // As rcl does: the value is YAML (so `250` is a number, `true` a
            // boolean, anything else a string).
            let v: Value = serde_saphyr::from_str(text).unwrap_or_else(|_| Value::String(text.clone()));
            p.set(name, &v, None)?;
        }
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        p.set("clearance_m", &Value::from(0.03), None).unwrap();
        assert!(p.set("release_m", &Value::from(0.01), None).unwrap_err().to_string().contains("at least clearance_m"));
        assert_eq!(p, NodeParams { clearance_m: Some(0.03), ..NodeParams::default() });
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
}
