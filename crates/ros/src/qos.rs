//! `qos_overrides` parameters, as rclcpp names them:
//! `qos_overrides./<topic>.<publisher|subscription>.<policy>` with policy
//! `reliability` (`reliable`, `best_effort`, `system_default`),
//! `durability` (`volatile`, `transient_local`, `system_default`),
//! `history` (`keep_last`, `keep_all`, `system_default`) or `depth` (an
//! integer ≥ 1). In a parameter file they nest
//! (`qos_overrides: /arm_left/stop: publisher: {depth: 5}`). They are read
//! at start; each must name a topic the node has, with the direction the
//! node uses it in, or the node does not start.

use serde_json::Value;
use std::collections::BTreeMap;

/// Which end of a topic the node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Endpoint {
    /// The node publishes it.
    Publisher,
    /// The node subscribes to it.
    Subscription,
}

impl Endpoint {
    /// As the parameter names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Endpoint::Publisher => "publisher",
            Endpoint::Subscription => "subscription",
        }
    }
}

/// Reliability, as overridden.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReliabilityKind {
    /// Every sample delivered (resent).
    Reliable,
    /// Samples may be lost.
    BestEffort,
}

/// Durability, as overridden.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DurabilityKind {
    /// Late joiners get nothing old.
    Volatile,
    /// Late joiners get the writer's history.
    TransientLocal,
}

/// History, as overridden.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HistoryKind {
    /// Keep the last `depth`.
    KeepLast,
    /// Keep everything.
    KeepAll,
}

/// One endpoint's overrides (`None`: the node's own choice; a policy set
/// to `system_default` is the node's own choice too).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QosOverride {
    /// `reliability`.
    pub reliability: Option<ReliabilityKind>,
    /// `durability`.
    pub durability: Option<DurabilityKind>,
    /// `history`.
    pub history: Option<HistoryKind>,
    /// `depth`.
    pub depth: Option<u32>,
}

/// Every override, by fully qualified topic and endpoint.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QosOverrides {
    /// The overrides, with each parameter's value as given (to declare them).
    pub by_endpoint: BTreeMap<(String, Endpoint), QosOverride>,
    given: BTreeMap<String, Value>,
}

/// A `qos_overrides` parameter that cannot be taken.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("parameter `{name}`: {problem}")]
pub struct QosError {
    /// The parameter.
    pub name: String,
    /// What is wrong.
    pub problem: String,
}

/// The prefix of every override parameter.
pub const PREFIX: &str = "qos_overrides.";

impl QosOverrides {
    /// Takes parameter `name` (with its `qos_overrides.` prefix) = `v`.
    pub fn set(&mut self, name: &str, v: &Value) -> Result<(), QosError> {
        let err = |problem: String| QosError { name: name.to_string(), problem };
        let rest = name.strip_prefix(PREFIX).ok_or_else(|| err(format!("does not start with `{PREFIX}`")))?;
        let mut parts = rest.rsplitn(3, '.');
        let (policy, end, topic) = match (parts.next(), parts.next(), parts.next()) {
            (Some(p), Some(e), Some(t)) => (p, e, t),
            _ => return Err(err("must be qos_overrides./<topic>.<publisher|subscription>.<policy>".into())),
        };
        if !topic.starts_with('/') || topic.len() < 2 {
            return Err(err(format!("topic `{topic}` must be fully qualified (start with `/`)")));
        }
        let end = match end {
            "publisher" => Endpoint::Publisher,
            "subscription" => Endpoint::Subscription,
            e => return Err(err(format!("`{e}` is neither `publisher` nor `subscription`"))),
        };
        let mut o = self.by_endpoint.get(&(topic.to_string(), end)).copied().unwrap_or_default();
        match policy {
            "reliability" => {
                let c = [("reliable", ReliabilityKind::Reliable), ("best_effort", ReliabilityKind::BestEffort)];
                o.reliability = pick(v, &c).map_err(err)?;
            }
            "durability" => {
                let c = [("volatile", DurabilityKind::Volatile), ("transient_local", DurabilityKind::TransientLocal)];
                o.durability = pick(v, &c).map_err(err)?;
            }
            "history" => {
                o.history = pick(v, &[("keep_last", HistoryKind::KeepLast), ("keep_all", HistoryKind::KeepAll)])
                    .map_err(err)?;
            }
            "depth" => {
                let d = v.as_u64().filter(|&d| (1..=u64::from(u32::MAX)).contains(&d));
                o.depth = Some(d.ok_or_else(|| err(format!("{v} is not an integer ≥ 1")))? as u32);
            }
            p => return Err(err(format!("no QoS policy `{p}` (reliability, durability, history, depth)"))),
        }
        self.by_endpoint.insert((topic.to_string(), end), o);
        self.given.insert(name.to_string(), v.clone());
        Ok(())
    }

    /// The override of `topic`'s `end`, if any.
    pub fn get(&self, topic: &str, end: Endpoint) -> Option<&QosOverride> {
        self.by_endpoint.get(&(topic.to_string(), end))
    }

    /// Each parameter as given, to declare (read-only).
    pub fn parameters(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.given.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Every overridden endpoint that is not among `endpoints` (the node's
    /// own, fully qualified): an error naming them and the node's own.
    pub fn check_against(&self, endpoints: &[(String, Endpoint)]) -> Result<(), QosError> {
        for (topic, end) in self.by_endpoint.keys() {
            if !endpoints.iter().any(|(t, e)| t == topic && e == end) {
                let same: Vec<String> = endpoints.iter().filter(|(_, e)| e == end).map(|(t, _)| t.clone()).collect();
                return Err(QosError {
                    name: format!("{PREFIX}{topic}.{}", end.as_str()),
                    problem: format!(
                        "the node has no {} on `{topic}`; its {}s: {}",
                        end.as_str(),
                        end.as_str(),
                        same.join(", ")
                    ),
                });
            }
        }
        Ok(())
    }
}

/// The choice word `v` names, or `None` for `system_default` (the node's
/// own choice); any other value is refused, naming what is allowed.
fn pick<T: Copy>(v: &Value, choices: &[(&str, T)]) -> Result<Option<T>, String> {
    let word = v.as_str().map(str::trim);
    if word == Some("system_default") {
        return Ok(None);
    }
    match choices.iter().find(|(w, _)| Some(*w) == word) {
        Some(&(_, k)) => Ok(Some(k)),
        None => {
            let allowed: Vec<&str> = choices.iter().map(|(w, _)| *w).chain(["system_default"]).collect();
            Err(format!("{v} is not one of {}", allowed.join(", ")))
        }
    }
}

/// A nested parameter mapping flattened to dotted names, as rcl reads
/// parameter files (`a: {b: 1}` is `a.b`).
pub fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, Value)>) {
    match v.as_object() {
        Some(m) => {
            for (k, v) in m {
                let name = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten(&name, v, out);
            }
        }
        None => out.push((prefix.to_string(), v.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_are_read_as_rclcpp_names_them_and_bad_ones_refused_by_name() {
        let mut q = QosOverrides::default();
        q.set("qos_overrides./arm_left/stop.publisher.depth", &Value::from(5)).unwrap();
        q.set("qos_overrides./arm_left/stop.publisher.reliability", &Value::from("best_effort")).unwrap();
        q.set("qos_overrides./diagnostics.publisher.durability", &Value::from("transient_local")).unwrap();
        let o = q.get("/arm_left/stop", Endpoint::Publisher).unwrap();
        assert_eq!((o.depth, o.reliability, o.durability), (Some(5), Some(ReliabilityKind::BestEffort), None));
        assert!(q.get("/arm_left/stop", Endpoint::Subscription).is_none());
        for (name, v, says) in [
            ("qos_overrides./a.publisher.depth", Value::from(0), "integer ≥ 1"),
            ("qos_overrides./a.publisher.reliability", Value::from("sometimes"), "not one of"),
            ("qos_overrides./a.writer.depth", Value::from(1), "neither"),
            ("qos_overrides./a.publisher.lifespan", Value::from(1), "no QoS policy"),
            ("qos_overrides.a.publisher.depth", Value::from(1), "fully qualified"),
            ("qos_overrides.depth", Value::from(1), "must be"),
        ] {
            let before = q.clone();
            let e = q.set(name, &v).unwrap_err();
            assert!(e.to_string().contains(says), "{name}: {e}");
            assert_eq!(q, before);
        }
        let mine = vec![("/arm_left/stop".to_string(), Endpoint::Publisher)];
        let e = q.check_against(&mine).unwrap_err();
        assert!(e.problem.contains("no publisher on `/diagnostics`") && e.problem.contains("/arm_left/stop"), "{e}");
    }

    #[test]
    fn nested_parameter_maps_flatten_to_dotted_names() {
        let v: Value = serde_json::json!({"/arm_left/stop": {"publisher": {"depth": 5, "reliability": "reliable"}}});
        let mut out = Vec::new();
        flatten("qos_overrides", &v, &mut out);
        out.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(out[0].0, "qos_overrides./arm_left/stop.publisher.depth");
        assert_eq!(out[1], ("qos_overrides./arm_left/stop.publisher.reliability".to_string(), Value::from("reliable")));
    }
}
