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
    /// `-p [node:]name:=value`, in order (values as YAML text; a `node:`
    /// prefix, kept in the name, restricts one to the nodes it matches).
    pub params: Vec<(String, String)>,
    /// `--log-level [logger:=]level`: (logger, level), the level lower case.
    pub log_levels: Vec<(Option<String>, String)>,
    /// rcl arguments taken that mean nothing here (enclaves, log files and
    /// configurations, rosout and stdout switches), as given.
    pub no_effect: Vec<String>,
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
    /// A log level rcl does not know.
    #[error("`--log-level {0}`: expected [logger:=]debug|info|warn|error|fatal|unset")]
    BadLogLevel(String),
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
                        let rule = it.next().ok_or_else(|| ArgsError::MissingValue(f.clone()))?;
                        ros.log_levels.push(log_level(&rule)?);
                    }
                    "-e" | "--enclave" | "--log-config-file" | "--log-file-name" => {
                        let v = it.next().ok_or_else(|| ArgsError::MissingValue(f.clone()))?;
                        ros.no_effect.push(format!("{f} {v}"));
                    }
                    "--enable-rosout-logs"
                    | "--disable-rosout-logs"
                    | "--enable-stdout-logs"
                    | "--disable-stdout-logs"
                    | "--enable-external-lib-logs"
                    | "--disable-external-lib-logs" => ros.no_effect.push(f),
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

/// `[logger:=]level` with rcl's level names (any case).
fn log_level(rule: &str) -> Result<(Option<String>, String), ArgsError> {
    let (logger, level) = match rule.split_once(":=") {
        Some((l, v)) if !l.is_empty() => (Some(l.to_string()), v),
        Some(_) => return Err(ArgsError::BadLogLevel(rule.to_string())),
        None => (None, rule),
    };
    let level = level.to_ascii_lowercase();
    match level.as_str() {
        "debug" | "info" | "warn" | "error" | "fatal" | "unset" => Ok((logger, level)),
        _ => Err(ArgsError::BadLogLevel(rule.to_string())),
    }
}

impl RosArgs {
    /// The `tracing` filter `--log-level` asks for, for node `node` (`None`
    /// when it gives none): a level without a logger for every logger
    /// (the DDS libraries' kept at warn at most: rcl's external libraries
    /// are not raised by it); one for the node's logger (its name, or
    /// `workcell_guard`) for this package's crates. Other loggers' levels
    /// are taken and mean nothing here. `fatal` is `error`; `unset` leaves
    /// the default (warn).
    pub fn log_filter(&self, node: &str) -> Option<String> {
        let tracing_level = |l: &str| {
            match l {
                "fatal" => "error",
                "unset" => "warn",
                other => other,
            }
            .to_string()
        };
        let mut global = None;
        let mut ours = None;
        for (logger, level) in &self.log_levels {
            match logger.as_deref() {
                None => global = Some(tracing_level(level)),
                Some(l) if l == node || l == "workcell_guard" || l.starts_with(&format!("{node}.")) => {
                    ours = Some(tracing_level(level))
                }
                Some(_) => {}
            }
        }
        if global.is_none() && ours.is_none() {
            return None;
        }
        let base = global.clone().unwrap_or_else(|| "warn".into());
        let mut f = format!("{base},rustdds=warn,ros2_client=warn");
        if let Some(l) = ours.or(global) {
            for c in ["workcell_guard", "workcell_guard_ros", "workcell_guard_core", "workcell_guard_description"] {
                f.push_str(&format!(",{c}={l}"));
            }
        }
        Some(f)
    }
}

/// Whether the node with fully qualified name `fqn` (`/ns/node`) is one
/// that `pattern` names, by rcl's rules for parameter files: a name
/// without a leading `/` is taken from the root; `*` stands for one token,
/// `**` for any number (none included).
pub fn node_matches(pattern: &str, fqn: &str) -> bool {
    fn go(p: &[&str], n: &[&str]) -> bool {
        match (p.first(), n.first()) {
            (None, None) => true,
            (Some(&"**"), _) => go(&p[1..], n) || (!n.is_empty() && go(p, &n[1..])),
            (Some(&"*"), Some(_)) => go(&p[1..], &n[1..]),
            (Some(a), Some(b)) if a == b => go(&p[1..], &n[1..]),
            _ => false,
        }
    }
    let tokens = |s: &str| s.split('/').filter(|t| !t.is_empty()).map(str::to_string).collect::<Vec<_>>();
    let (p, n) = (tokens(pattern), tokens(fqn));
    go(&p.iter().map(String::as_str).collect::<Vec<_>>(), &n.iter().map(String::as_str).collect::<Vec<_>>())
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
        assert_eq!(ros.log_levels, [(None, "debug".to_string())]);
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

    /// rcl's argument tests (test_arguments.cpp), the cases this node
    /// meets, rewritten: what rcl takes is taken, what it refuses refused.
    #[test]
    fn rcl_arguments_are_taken_and_refused_as_rcl_does() {
        let ok = |a: &[&str]| {
            let mut v = vec!["--ros-args"];
            v.extend_from_slice(a);
            RosArgs::parse(v).map(|(r, _)| r)
        };
        for a in [
            &["--log-level", "UNSET"][..],
            &["--log-level", "Debug"],
            &["--log-level", "rcl:=debug"],
            &["--log-level", "workcell_guard:=FATAL"],
            &["--log-file-name", "my_log"],
            &["--log-config-file", "file.config"],
            &["--enclave", "/foo"],
            &["-e", "/foo/bar"],
            &["--enable-rosout-logs", "--disable-stdout-logs", "--enable-external-lib-logs"],
            &["-p", "foo:=bar"],
            &["--param", "node:foo:=bar"],
            &["-r", "__ns:=/ns", "-r", "node:foo:=bar"],
        ] {
            assert!(ok(a).is_ok(), "{a:?}: {:?}", ok(a));
        }
        let r = ok(&["--log-file-name", "my_log", "--disable-rosout-logs"]).unwrap();
        assert_eq!(r.no_effect, ["--log-file-name my_log", "--disable-rosout-logs"]);
        assert_eq!(ok(&["-p", "node:foo:=1"]).unwrap().params, [("node:foo".to_string(), "1".to_string())]);
        for (a, e) in [
            (&["--log-level"][..], ArgsError::MissingValue("--log-level".into())),
            (&["--log-level", "foo"], ArgsError::BadLogLevel("foo".into())),
            (&["--log-level", ":=debug"], ArgsError::BadLogLevel(":=debug".into())),
            (&["--log-level", "rcl:=verbose"], ArgsError::BadLogLevel("rcl:=verbose".into())),
            (&["--log-file-name"], ArgsError::MissingValue("--log-file-name".into())),
            (&["-e"], ArgsError::MissingValue("-e".into())),
            (&["-p", ":=bar"], ArgsError::EmptyName(":=bar".into())),
            (&["-p", "node::=bar"], ArgsError::EmptyName("node::=bar".into())),
            (&["--params"], ArgsError::Unknown("--params".into())),
        ] {
            assert_eq!(ok(a).unwrap_err(), e, "{a:?}");
        }
    }

    #[test]
    fn log_levels_become_a_filter_for_this_packages_crates() {
        let f = |a: &[&str]| {
            let mut v = vec!["--ros-args"];
            v.extend_from_slice(a);
            RosArgs::parse(v).unwrap().0.log_filter("workcell_guard")
        };
        assert_eq!(f(&[]), None);
        assert_eq!(f(&["--log-level", "rcl:=debug"]), None, "another logger's level means nothing here");
        let g = f(&["--log-level", "debug"]).unwrap();
        assert!(g.starts_with("debug,rustdds=warn") && g.contains("workcell_guard_ros=debug"), "{g}");
        let n = f(&["--log-level", "info", "--log-level", "workcell_guard:=debug"]).unwrap();
        assert!(n.starts_with("info,") && n.contains("workcell_guard_core=debug"), "{n}");
        assert!(f(&["--log-level", "FATAL"]).unwrap().starts_with("error,"));
    }

    /// The wildcard examples of the ROS 2 parameter documentation and rcl's
    /// yaml parser tests.
    #[test]
    fn node_patterns_match_as_rcl_matches_them() {
        for (p, fqn, want) in [
            ("/**", "/workcell_guard", true),
            ("/**", "/a/b/workcell_guard", true),
            ("workcell_guard", "/workcell_guard", true),
            ("workcell_guard", "/cell/workcell_guard", false),
            ("/cell/workcell_guard", "/cell/workcell_guard", true),
            ("cell/workcell_guard", "/cell/workcell_guard", true),
            ("/*", "/workcell_guard", true),
            ("/*", "/cell/workcell_guard", false),
            ("/*/workcell_guard", "/cell/workcell_guard", true),
            ("/*/workcell_guard", "/workcell_guard", false),
            ("/*/workcell_guard", "/a/b/workcell_guard", false),
            ("/**/workcell_guard", "/workcell_guard", true),
            ("/**/workcell_guard", "/a/b/workcell_guard", true),
            ("/**/workcell_guard", "/a/b/other", false),
            ("/cell/*", "/cell/workcell_guard", true),
            ("/cell/*", "/other/workcell_guard", false),
            ("/cell/**", "/cell/x/workcell_guard", true),
            ("/a/**/b/*", "/a/x/y/b/node", true),
            ("/a/**/b/*", "/a/b/node", true),
            ("/a/**/b/*", "/a/b", false),
        ] {
            assert_eq!(node_matches(p, fqn), want, "{p} vs {fqn}");
        }
    }
}
