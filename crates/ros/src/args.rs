//! The ROS 2 command line: what `ros2 run` and `ros2 launch` pass after
//! `--ros-args` (node name and namespace remaps, topic remaps, parameter
//! files, single parameters), parsed as rcl does, with an error naming the
//! argument for anything it would refuse.

use std::path::PathBuf;

/// What the `--ros-args` sections of a command line say.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RosArgs {
    /// `-r __node:=name`.
    pub node_name: Option<String>,
    /// `-r __ns:=/namespace`.
    pub namespace: Option<String>,
    /// Topic and service remaps `from:=to`, in order (a `node:` prefix
    /// restricts one to that node).
    pub remaps: Vec<Remap>,
    /// `--params-file path`, in order.
    pub params_files: Vec<PathBuf>,
    /// `-p name:=value`, in order (values as YAML text).
    pub params: Vec<(String, String)>,
    /// `--log-level [logger:=]level`.
    pub log_levels: Vec<String>,
}

/// One remap rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Remap {
    /// Only for this node, if given.
    pub node: Option<String>,
    /// Name matched.
    pub from: String,
    /// Replacement.
    pub to: String,
}

/// A command-line argument rcl would refuse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ArgsError {
    /// A flag without its value.
    #[error("`{0}` needs a value")]
    MissingValue(String),
    /// A rule without `:=`.
    #[error("`{flag} {rule}`: expected `name:=value`")]
    NoAssignment {
        /// The flag.
        flag: String,
        /// The rule.
        rule: String,
    },
    /// A flag that is not a ROS argument.
    #[error("unknown ROS argument `{0}`")]
    Unknown(String),
    /// An empty name or node name.
    #[error("`{0}`: empty name")]
    EmptyName(String),
}

impl RosArgs {
    /// Splits `args` (without the program name) into the ROS arguments and
    /// the others (returned in order). `--ros-args` opens a section that
    /// runs to a lone `--` or the end; there may be several.
    pub fn parse<I, S>(args: I) -> Result<(RosArgs, Vec<String>), ArgsError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut ros = RosArgs::default();
        let mut rest = Vec::new();
        let mut it = args.into_iter().map(Into::into);
        while let Some(a) = it.next() {
            if a != "--ros-args" {
                rest.push(a);
                continue;
            }
            while let Some(f) = it.next() {
                match f.as_str() {
                    "--" => break,
                    "--ros-args" => {}
                    "-r" | "--remap" => {
                        let rule = it.next().ok_or_else(|| ArgsError::MissingValue(f.clone()))?;
                        ros.remap(&f, rule)?;
                    }
                    "-p" | "--param" => {
                        let rule = it.next().ok_or_else(|| ArgsError::MissingValue(f.clone()))?;
                        let (name, value) = assignment(&f, &rule)?;
                        ros.params.push((name, value));
                    }
                    "--params-file" => {
                        let path = it.next().ok_or_else(|| ArgsError::MissingValue(f.clone()))?;
                        ros.params_files.push(PathBuf::from(path));
                    }
                    "--log-level" => {
                        let level = it.next().ok_or_else(|| ArgsError::MissingValue(f.clone()))?;
                        ros.log_levels.push(level);
                    }
                    "-e" | "--enclave" | "--log-config-file" => {
                        it.next().ok_or_else(|| ArgsError::MissingValue(f.clone()))?;
                    }
                    "--enable-rosout-logs"
                    | "--disable-rosout-logs"
                    | "--enable-stdout-logs"
                    | "--disable-stdout-logs"
                    | "--enable-external-lib-logs"
                    | "--disable-external-lib-logs" => {}
                    _ => return Err(ArgsError::Unknown(f)),
                }
            }
        }
        Ok((ros, rest))
    }

    fn remap(&mut self, flag: &str, rule: String) -> Result<(), ArgsError> {
        let (lhs, to) = assignment(flag, &rule)?;
        // `node:from` restricts the rule to a node (not for `__ns`-style
        // special names without a prefix, which are global).
        let (node, from) = match lhs.split_once(':') {
            Some((n, f)) if !n.is_empty() => (Some(n.to_string()), f.to_string()),
            _ => (None, lhs),
        };
        match from.as_str() {
            "__node" | "__name" => self.node_name = Some(to),
            "__ns" => self.namespace = Some(to),
            _ => self.remaps.push(Remap { node, from, to }),
        }
        Ok(())
    }

    /// The name `name` (relative or absolute) after the remaps that apply
    /// to node `node` (the first matching rule wins, as in rcl).
    pub fn remapped<'a>(&'a self, node: &str, name: &'a str) -> &'a str {
        self.remaps
            .iter()
            .find(|r| r.from == name && r.node.as_deref().is_none_or(|n| n == node))
            .map_or(name, |r| r.to.as_str())
    }
}

fn assignment(flag: &str, rule: &str) -> Result<(String, String), ArgsError> {
    let Some((name, value)) = rule.split_once(":=") else {
        return Err(ArgsError::NoAssignment { flag: flag.to_string(), rule: rule.to_string() });
    };
    if name.is_empty() || name.ends_with(':') {
        return Err(ArgsError::EmptyName(rule.to_string()));
    }
    Ok((name.to_string(), value.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_ros2_launch_passes_is_understood() {
        let argv = [
            "run",
            "config/workcell.yaml",
            "--ros-args",
            "-r",
            "__node:=guard_left",
            "-r",
            "__ns:=/cell_a",
            "--params-file",
            "/tmp/p.yaml",
            "-p",
            "rate_hz:=250.0",
            "-r",
            "arm_left/joint_states:=/left/joint_states",
            "-r",
            "other_node:markers:=/elsewhere",
            "--log-level",
            "debug",
            "--",
            "--verbose",
        ];
        let (ros, rest) = RosArgs::parse(argv).unwrap();
        assert_eq!(rest, ["run", "config/workcell.yaml", "--verbose"]);
        assert_eq!(ros.node_name.as_deref(), Some("guard_left"));
        assert_eq!(ros.namespace.as_deref(), Some("/cell_a"));
        assert_eq!(ros.params_files, [PathBuf::from("/tmp/p.yaml")]);
        assert_eq!(ros.params, [("rate_hz".to_string(), "250.0".to_string())]);
        assert_eq!(ros.log_levels, ["debug"]);
        assert_eq!(ros.remapped("guard_left", "arm_left/joint_states"), "/left/joint_states");
        assert_eq!(ros.remapped("guard_left", "markers"), "markers", "a rule for another node does not apply");
        assert_eq!(ros.remapped("other_node", "markers"), "/elsewhere");
    }

    #[test]
    fn bad_ros_arguments_are_refused_by_name() {
        assert_eq!(RosArgs::parse(["--ros-args", "-p"]).unwrap_err(), ArgsError::MissingValue("-p".into()));
        assert!(matches!(
            RosArgs::parse(["--ros-args", "-p", "rate_hz=3"]).unwrap_err(),
            ArgsError::NoAssignment { .. }
        ));
        assert_eq!(
            RosArgs::parse(["--ros-args", "--frobnicate"]).unwrap_err(),
            ArgsError::Unknown("--frobnicate".into())
        );
        assert_eq!(RosArgs::parse(["--ros-args", "-r", ":=x"]).unwrap_err(), ArgsError::EmptyName(":=x".into()));
        // Without --ros-args nothing is taken.
        let (ros, rest) = RosArgs::parse(["-p", "x"]).unwrap();
        assert_eq!((ros, rest), (RosArgs::default(), vec!["-p".to_string(), "x".to_string()]));
    }
}
