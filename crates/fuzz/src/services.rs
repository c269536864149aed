//! The `service_requests` target: a request to one of the node's services
//! as it arrives on DDS (its payload in either request mapping), decoded
//! the way the node's dual-mapping servers decode it, then taken as far as
//! the node takes it without a network: parameter sets checked against the
//! sample cell, parameter lists filtered.

use crate::node::sample;
use ros2_client::rcl_interfaces::{
    DescribeParametersRequest, GetParameterTypesRequest, GetParametersRequest, ListParametersRequest,
    SetParametersRequest,
};
use serde::de::DeserializeOwned;
use workcell_guard_ros::dds::param_services::{check_set, list};
use workcell_guard_ros::dds::services::decode_request_bytes;
use workcell_guard_ros::msg::{SetContactRequest, SetPriorityRequest, TriggerRequest};
use workcell_guard_ros::params::{NodeParams, PARAMS};

/// The first byte: bits 0-2 the type (`std_srvs/Trigger`, our
/// `SetContact` and `SetPriority`, then rcl_interfaces' `GetParameters`,
/// `GetParameterTypes`, `SetParameters`, `ListParameters`,
/// `DescribeParameters`), bit 3 big-endian CDR, bit 4 the enhanced mapping
/// (a related sample identity); the rest the payload.
pub(crate) fn service_requests(data: &[u8]) {
    let Some((&pick, payload)) = data.split_first() else { return };
    let (big, enhanced) = (pick & 8 != 0, pick & 16 != 0);
    fn read<Q: DeserializeOwned>(p: &[u8], big: bool, enhanced: bool) -> Option<Q> {
        decode_request_bytes::<Q>(p, big, enhanced).ok()
    }
    match pick & 7 {
        0 => drop(read::<TriggerRequest>(payload, big, enhanced)),
        1 => drop(read::<SetContactRequest>(payload, big, enhanced)),
        2 => drop(read::<SetPriorityRequest>(payload, big, enhanced)),
        3 => drop(read::<GetParametersRequest>(payload, big, enhanced)),
        4 => drop(read::<GetParameterTypesRequest>(payload, big, enhanced)),
        5 => {
            if let Some(q) = read::<SetParametersRequest>(payload, big, enhanced) {
                let _ = check_set(&sample().cell, &NodeParams::default(), &q.parameter);
            }
        }
        6 => {
            if let Some(q) = read::<ListParametersRequest>(payload, big, enhanced) {
                let names: Vec<String> = PARAMS.iter().map(|s| s.name.to_string()).collect();
                let _ = list(&names, &q.prefixes, q.depth);
            }
        }
        _ => drop(read::<DescribeParametersRequest>(payload, big, enhanced)),
    }
}
