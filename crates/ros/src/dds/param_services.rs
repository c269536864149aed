//! The six `rcl_interfaces` parameter services, served here (not by
//! ros2-client, whose servers take the enhanced request mapping only) so
//! that clients of either mapping are answered ([`super::services`]).
//! Values live in the node's parameter store: a set goes through its
//! validator and set action (checked as [`crate::node::check_param`] does,
//! then handed to the loop) and publishes the `/parameter_events` it
//! publishes. Descriptors come from [`crate::params::PARAMS`]: type, range
//! (`floating_point_range`), read-only for what is read at start, and the
//! description with units.

use super::services::{DualServer, RequestId};
use super::topics::server;
use super::*;
use crate::params::{Applies, Kind, PARAMS, ParamSpec};
use ros2_client::dds::rustdds::DomainParticipant;
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
    /// The parameters as the set action last took them, to check an atomic
    /// set as a whole before any of it is applied.
    current: Arc<Mutex<NodeParams>>,
    cell: Arc<Mutex<Arc<Workcell>>>,
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

/// The parameters `params` (as `set_parameters_atomically` carries them)
/// would leave, checked one after another from `cur`: the first refusal,
/// or the parameters with all of them set.
pub fn check_set(cell: &Workcell, mut cur: NodeParams, params: &[raw::Parameter]) -> Result<NodeParams, String> {
    for p in params {
        let v = json_of(&ParameterValue::from(p.value.clone()));
        cur = check_param(cell, &cur, &p.name, &v).map_err(|e| format!("{}: {e}", p.name))?;
    }
    Ok(cur)
}

fn result(r: Result<(), String>) -> raw::SetParametersResult {
    match r {
        Ok(()) => raw::SetParametersResult { successful: true, reason: String::new() },
        Err(reason) => raw::SetParametersResult { successful: false, reason },
    }
}

impl ParamServices {
    /// The six servers under node `fq_node` (fully qualified).
    pub(super) fn new(
        dp: &DomainParticipant,
        fq_node: &str,
        current: Arc<Mutex<NodeParams>>,
        cell: Arc<Mutex<Arc<Workcell>>>,
    ) -> Result<ParamServices, RunError> {
        let qos = QosProfile::publisher_default().history(History::KeepLast { depth: 10 });
        let srv = |s: &str| format!("{}/{s}", fq_node.trim_end_matches('/'));
        let ty = |t| ("rcl_interfaces", t);
        Ok(ParamServices {
            get: server(dp, &srv("get_parameters"), ty("GetParameters"), &qos)?,
            get_types: server(dp, &srv("get_parameter_types"), ty("GetParameterTypes"), &qos)?,
            set: server(dp, &srv("set_parameters"), ty("SetParameters"), &qos)?,
            set_atomically: server(dp, &srv("set_parameters_atomically"), ty("SetParametersAtomically"), &qos)?,
            list: server(dp, &srv("list_parameters"), ty("ListParameters"), &qos)?,
            describe: server(dp, &srv("describe_parameters"), ty("DescribeParameters"), &qos)?,
            current,
            cell,
        })
    }

    /// Checks `params` one after another against the current values
    /// without applying any: the first refusal, or none.
    fn check_all(&self, params: &[raw::Parameter]) -> Result<(), String> {
        let cur = self.current.lock().map_err(|_| "parameters poisoned".to_string())?.clone();
        let cell = self.cell.lock().map_err(|_| "workcell poisoned".to_string())?.clone();
        check_set(&cell, cur, params).map(drop)
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
        while let Some(call) = calls.next().await {
            let sent = match call {
                Err((what, err)) => {
                    tracing::warn!("parameter {what} request not read: {err}");
                    continue;
                }
                Ok(call) => self.answer(node, call),
            };
            if let Err(err) = sent {
                tracing::warn!("parameter service answer not sent: {err}");
            }
        }
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
                let results = q
                    .parameter
                    .into_iter()
                    .map(|p| result(node.set_parameter(&p.name, ParameterValue::from(p.value))))
                    .collect();
                self.set.send_response(id, SetParametersResponse { results })
            }
            Call::Atomic(id, q) => {
                let r = self.check_all(&q.parameter).and_then(|()| {
                    q.parameter.into_iter().try_for_each(|p| node.set_parameter(&p.name, ParameterValue::from(p.value)))
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
