//! The six `rcl_interfaces` parameter services, served here (not by
//! ros2-client, whose servers take the enhanced request mapping only) so
//! that clients of either mapping are answered ([`super::services`]).
//!
//! A set is checked here as a whole ([`crate::node::check_params`]): each
//! parameter's type, range and read-only flag (`use_sim_time` and the
//! others read at start included), then the tuning they lead to together,
//! so parameters that are valid only together (`clearance_m` and
//! `release_m` raised at once) are taken in any order.
//! `set_parameters_atomically` is applied all or nothing.
//! `set_parameters` (what `ros2 param set` and `ros2 param load` send)
//! answers per parameter, as rclcpp does: one refused for its own type,
//! range or read-only flag leaves the others be; the others are taken
//! together, and where they fail together (a file whose margins cross)
//! none of them is applied, each result naming why. An accepted set goes to the
//! loop in one piece, and into ros2-client's store (which publishes
//! `/parameter_events`) with the types declared. NaN and infinity are
//! refused as not finite; deleting a parameter is refused as such.
//! Descriptors come from [`crate::params::PARAMS`]: type, range
//! (`floating_point_range`), read-only for what is read at start, and the
//! description with units.

use super::services::{DualServer, RequestId};
use super::topics::server;
use super::*;
use crate::params::{Applies, Kind, PARAMS, ParamSpec};
use ros2_client::dds::rustdds::DomainParticipant;
use tokio::sync::mpsc::UnboundedSender;

/// Where accepted sets go: the loop.
pub(super) type ParamSender = UnboundedSender<Vec<(String, Value)>>;
/// What the services share with the node: the parameters last accepted,
/// the workcell (replaced on a reload) and the way to the loop.
pub(super) type Shared = (Arc<Mutex<NodeParams>>, Arc<Mutex<Arc<Workcell>>>, ParamSender);
use ros2_client::parameters::raw;
use ros2_client::rcl_interfaces::{
    DescribeParametersRequest, DescribeParametersResponse, GetParameterTypesRequest, GetParameterTypesResponse,
    GetParametersRequest, GetParametersResponse, ListParametersRequest, ListParametersResponse, ListParametersResult,
    SetParametersAtomicallyResponse, SetParametersRequest, SetParametersResponse,
};

/// The node's parameter services.
pub(super) struct ParamServices {
    get: DualServer<GetParametersRequest, GetParametersResponse>,
    get_types: DualServer<GetParameterTypesRequest, GetParameterTypesResponse>,
    set: DualServer<SetParametersRequest, SetParametersResponse>,
    set_atomically: DualServer<SetParametersRequest, SetParametersAtomicallyResponse>,
    list: DualServer<ListParametersRequest, ListParametersResponse>,
    describe: DualServer<DescribeParametersRequest, DescribeParametersResponse>,
    /// The parameters as last accepted, what a set is checked against.
    current: Arc<Mutex<NodeParams>>,
    cell: Arc<Mutex<Arc<Workcell>>>,
    /// Accepted sets, to the loop.
    to_loop: UnboundedSender<Vec<(String, Value)>>,
}

/// One request to any of them.
enum Call {
    Get(RequestId, GetParametersRequest),
    Types(RequestId, GetParameterTypesRequest),
    Set(RequestId, SetParametersRequest),
    Atomic(RequestId, SetParametersRequest),
    List(RequestId, ListParametersRequest),
    Describe(RequestId, DescribeParametersRequest),
}

/// The descriptor `ros2 param describe` shows for `s`.
pub fn descriptor(s: &ParamSpec) -> raw::ParameterDescriptor {
    let (ptype, range) = match s.kind {
        Kind::Bool => (raw::ParameterType::BOOL, vec![]),
        Kind::Number { lo, hi } => {
            (raw::ParameterType::DOUBLE, vec![raw::FloatingPointRange { from_value: lo, to_value: hi, step: 0.0 }])
        }
        Kind::Path | Kind::OptionalPath | Kind::Choice(_) => (raw::ParameterType::STRING, vec![]),
    };
    let read_only = s.applies == Applies::AtStart;
    raw::ParameterDescriptor {
        name: s.name.to_string(),
        r#type: ptype,
        description: s.doc.to_string(),
        additional_constraints: match (s.kind, read_only) {
            (_, true) => "read at start: restart the node to change it".to_string(),
            (Kind::OptionalPath, _) => "a path, or empty for none".to_string(),
            (Kind::Choice(words), _) => format!("one of {}; applies {}", words.join(", "), s.applies_text()),
            _ => format!("applies {}", s.applies_text()),
        },
        read_only,
        dynamic_typing: false,
        floating_point_range: range,
        integer_range: vec![],
    }
}

/// rcl's list: every name under one of `prefixes` (all where none), at
/// most `depth` levels below it (0: any), and the prefixes of those that
/// have dots.
pub fn list(names: &[String], prefixes: &[String], depth: u64) -> ListParametersResult {
    let mut out = ListParametersResult { names: Vec::new(), prefixes: Vec::new() };
    let levels = |rest: &str| rest.matches('.').count() as u64 + 1;
    for n in names {
        let within = if prefixes.is_empty() {
            depth == 0 || levels(n) <= depth
        } else {
            prefixes.iter().any(|p| {
                n == p || n.strip_prefix(&format!("{p}.")).is_some_and(|rest| depth == 0 || levels(rest) <= depth)
            })
        };
        if within {
            out.names.push(n.clone());
            if let Some((pre, _)) = n.rsplit_once('.')
                && !out.prefixes.iter().any(|p| p == pre)
            {
                out.prefixes.push(pre.to_string());
            }
        }
    }
    out
}

/// The parameters `params` would leave, checked as a whole from `cur`
/// ([`crate::node::check_params`]), or why they are refused.
pub fn check_set(cell: &Workcell, cur: &NodeParams, params: &[raw::Parameter]) -> Result<NodeParams, String> {
    let values: Vec<Value> = params.iter().map(|p| json_of(&ParameterValue::from(p.value.clone()))).collect();
    let updates: Vec<(&str, &Value)> = params.iter().zip(&values).map(|(p, v)| (p.name.as_str(), v)).collect();
    crate::node::check_params(cell, cur, &updates).map_err(|e| e.to_string())
}

/// Each parameter's result when `params` were refused as a whole for
/// `why`: its own refusal where it has one, else that it was not applied
/// because of the rest.
fn refusals(cell: &Workcell, cur: &NodeParams, params: &[raw::Parameter], why: &str) -> Vec<raw::SetParametersResult> {
    params
        .iter()
        .map(|p| {
            let v = json_of(&ParameterValue::from(p.value.clone()));
            let reason = match crate::node::check_alone(cell, cur, &p.name, &v) {
                Err(e) => e.to_string(),
                Ok(_) => format!("not applied: a set is applied all or nothing, and it was refused: {why}"),
            };
            raw::SetParametersResult { successful: false, reason }
        })
        .collect()
}

fn result(r: Result<(), String>) -> raw::SetParametersResult {
    match r {
        Ok(()) => raw::SetParametersResult { successful: true, reason: String::new() },
        Err(reason) => raw::SetParametersResult { successful: false, reason },
    }
}

impl ParamServices {
    /// The six servers of `node`.
    pub(super) fn new(
        dp: &DomainParticipant,
        node: &mut Node,
        (current, cell, to_loop): Shared,
    ) -> Result<ParamServices, RunError> {
        let qos = QosProfile::publisher_default().history(History::KeepLast { depth: 10 });
        let fq_node = node.fully_qualified_name();
        let srv = |s: &str| format!("{}/{s}", fq_node.trim_end_matches('/'));
        let ty = |t| ("rcl_interfaces", t);
        Ok(ParamServices {
            get: server(dp, node, &srv("get_parameters"), ty("GetParameters"), &qos)?,
            get_types: server(dp, node, &srv("get_parameter_types"), ty("GetParameterTypes"), &qos)?,
            set: server(dp, node, &srv("set_parameters"), ty("SetParameters"), &qos)?,
            set_atomically: server(dp, node, &srv("set_parameters_atomically"), ty("SetParametersAtomically"), &qos)?,
            list: server(dp, node, &srv("list_parameters"), ty("ListParameters"), &qos)?,
            describe: server(dp, node, &srv("describe_parameters"), ty("DescribeParameters"), &qos)?,
            current,
            cell,
            to_loop,
        })
    }

    /// Checks `params` as a whole against the parameters last accepted
    /// and applies all of them, or none: the results, one per parameter.
    fn apply(&self, node: &Node, params: &[raw::Parameter]) -> Result<(), Vec<raw::SetParametersResult>> {
        let fail = |why: String| vec![raw::SetParametersResult { successful: false, reason: why }; params.len()];
        let mut cur = self.current.lock().map_err(|_| fail("parameters poisoned".into()))?;
        let cell = self.cell.lock().map_err(|_| fail("workcell poisoned".into()))?.clone();
        let next = check_set(&cell, &cur, params).map_err(|why| refusals(&cell, &cur, params, &why))?;
        let batch: Vec<(String, Value)> =
            params.iter().map(|p| (p.name.clone(), json_of(&ParameterValue::from(p.value.clone())))).collect();
        self.to_loop.send(batch).map_err(|_| fail("node stopped".into()))?;
        *cur = next;
        // Into ros2-client's store (it publishes the parameter events), as
        // the type each was declared with.
        let declared = super::declared(&cur, &cell);
        for p in params {
            let value = match declared.iter().find(|(n, _)| *n == p.name) {
                Some((_, v)) => v.clone(),
                None => ParameterValue::from(p.value.clone()),
            };
            if let Err(e) = node.set_parameter(&p.name, value) {
                tracing::warn!("parameter {} applied but not stored for the parameter services: {e}", p.name);
            }
        }
        Ok(())
    }

    /// `set_parameters`, as rclcpp answers it (a result per parameter, a
    /// refused one leaving the others be), but judged as a whole: each
    /// parameter on its own (type, range, read-only), then the ones that
    /// pass, together, so that parameters valid only together are taken in
    /// any order; where those fail together, none of the set is applied.
    fn set_each(&self, node: &Node, params: &[raw::Parameter]) -> Vec<raw::SetParametersResult> {
        let alone: Vec<Option<String>> = {
            let (Ok(cur), Ok(cell)) = (self.current.lock(), self.cell.lock()) else {
                return vec![result(Err("parameters poisoned".into())); params.len()];
            };
            params
                .iter()
                .map(|p| {
                    let v = json_of(&ParameterValue::from(p.value.clone()));
                    crate::node::check_alone(&cell, &cur, &p.name, &v).err().map(|e| e.to_string())
                })
                .collect()
        };
        let good: Vec<raw::Parameter> =
            params.iter().zip(&alone).filter(|(_, e)| e.is_none()).map(|(p, _)| p.clone()).collect();
        let mut together = match self.apply(node, &good) {
            Ok(()) => vec![result(Ok(())); good.len()],
            Err(results) => results,
        }
        .into_iter();
        alone
            .into_iter()
            .map(|e| match e {
                Some(reason) => result(Err(reason)),
                None => together.next().unwrap_or_else(|| result(Err("not applied".into()))),
            })
            .collect()
    }

    /// Answers calls until the node goes.
    pub(super) async fn serve(&self, node: &Node) {
        let e = |what: &'static str| move |r: Result<_, String>| r.map_err(|err| (what, err));
        let calls = futures::stream::select_all([
            self.get.receive_request_stream().map(|r| r.map(|(i, q)| Call::Get(i, q))).map(e("get")).boxed_local(),
            self.get_types
                .receive_request_stream()
                .map(|r| r.map(|(i, q)| Call::Types(i, q)))
                .map(e("types"))
                .boxed_local(),
            self.set.receive_request_stream().map(|r| r.map(|(i, q)| Call::Set(i, q))).map(e("set")).boxed_local(),
            self.set_atomically
                .receive_request_stream()
                .map(|r| r.map(|(i, q)| Call::Atomic(i, q)))
                .map(e("set atomically"))
                .boxed_local(),
            self.list.receive_request_stream().map(|r| r.map(|(i, q)| Call::List(i, q))).map(e("list")).boxed_local(),
            self.describe
                .receive_request_stream()
                .map(|r| r.map(|(i, q)| Call::Describe(i, q)))
                .map(e("describe"))
                .boxed_local(),
        ]);
        futures::pin_mut!(calls);
        // Held answers go out within a few milliseconds of their reader's
        // match; the servers' match events are read all along.
        let mut flush = tokio::time::interval(std::time::Duration::from_millis(5));
        flush.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            let sent = tokio::select! {
                call = calls.next() => match call {
                    None => return,
                    Some(Err((what, err))) => {
                        tracing::warn!("parameter {what} request not read: {err}");
                        continue;
                    }
                    Some(Ok(call)) => self.answer(node, call),
                },
                _ = flush.tick() => self.flush(),
            };
            if let Err(err) = sent {
                tracing::warn!("parameter service answer not sent: {err}");
            }
        }
    }

    /// [`DualServer::flush`] on every server.
    fn flush(&self) -> Result<(), String> {
        let sent = [
            self.get.flush(),
            self.get_types.flush(),
            self.set.flush(),
            self.set_atomically.flush(),
            self.list.flush(),
            self.describe.flush(),
        ];
        sent.into_iter().try_for_each(|r| r.map(drop))
    }

    fn answer(&self, node: &Node, call: Call) -> Result<(), String> {
        let value = |n: &str| node.get_parameter(n).unwrap_or(ParameterValue::NotSet);
        match call {
            Call::Get(id, q) => {
                let values = q.names.iter().map(|n| raw::ParameterValue::from(value(n))).collect();
                self.get.send_response(id, GetParametersResponse { values })
            }
            Call::Types(id, q) => {
                let values = q.names.iter().map(|n| ParameterValue::to_parameter_type_raw(&value(n))).collect();
                self.get_types.send_response(id, GetParameterTypesResponse { values })
            }
            Call::Set(id, q) => {
                let results = self.set_each(node, &q.parameter);
                self.set.send_response(id, SetParametersResponse { results })
            }
            Call::Atomic(id, q) => {
                let r = self.apply(node, &q.parameter).map_err(|results| {
                    let reasons: Vec<String> =
                        q.parameter
                            .iter()
                            .zip(results)
                            .filter(|(_, r)| !r.reason.starts_with("not applied"))
                            .map(|(p, r)| {
                                if r.reason.contains(&p.name) { r.reason } else { format!("{}: {}", p.name, r.reason) }
                            })
                            .collect();
                    reasons.join("; ")
                });
                self.set_atomically.send_response(id, SetParametersAtomicallyResponse { result: result(r) })
            }
            Call::List(id, q) => {
                let result = list(&node.list_parameters(), &q.prefixes, q.depth);
                self.list.send_response(id, ListParametersResponse { result })
            }
            Call::Describe(id, q) => {
                let values = q
                    .names
                    .iter()
                    .map(|n| match PARAMS.iter().find(|s| s.name == n) {
                        Some(s) => descriptor(s),
                        None => raw::ParameterDescriptor {
                            name: n.clone(),
                            r#type: ParameterValue::to_parameter_type_raw(&value(n)),
                            description: if n.starts_with(crate::qos::PREFIX) {
                                "QoS override of one of the node's endpoints".to_string()
                            } else {
                                String::new()
                            },
                            additional_constraints: String::new(),
                            read_only: n.starts_with(crate::qos::PREFIX),
                            dynamic_typing: false,
                            floating_point_range: vec![],
                            integer_range: vec![],
                        },
                    })
                    .collect();
                self.describe.send_response(id, DescribeParametersResponse { values })
            }
        }
    }
}
