//! The node's services on rcl, typed and served through the node (so
//! `ros2 node info` and `ros2 service list` show them): `~/reset_stop` and
//! `~/reload` (`std_srvs/Trigger`), `~/set_contact` and `~/set_priority`
//! (`workcell_guard_msgs`), when r2r was built against a prefix holding
//! both packages (cfg `wg_msgs_typed`, set by the build script: r2r's types
//! are those of the prefix it was built against; its doc-only bindings hold
//! neither). Without them the node says at start that it serves none.

use crate::msg;
use ::r2r as r2;
use futures::StreamExt;
use futures::stream::LocalBoxStream;

#[cfg(wg_msgs_typed)]
type TriggerSrv = r2::std_srvs::srv::Trigger::Service;
#[cfg(wg_msgs_typed)]
type ContactSrv = r2::workcell_guard_msgs::srv::SetContact::Service;
#[cfg(wg_msgs_typed)]
type PrioritySrv = r2::workcell_guard_msgs::srv::SetPriority::Service;

/// A request waiting for the loop's answer: r2r's handle to respond on
/// (none without the services).
pub(super) enum Request {
    #[cfg(wg_msgs_typed)]
    Trigger(r2::ServiceRequest<TriggerSrv>),
    #[cfg(wg_msgs_typed)]
    Contact(r2::ServiceRequest<ContactSrv>),
    #[cfg(wg_msgs_typed)]
    Priority(r2::ServiceRequest<PrioritySrv>),
}

/// The node's four services as streams of requests.
pub(super) struct Services {
    pub(super) reset_stop: LocalBoxStream<'static, Request>,
    pub(super) reload: LocalBoxStream<'static, Request>,
    pub(super) set_contact: LocalBoxStream<'static, (Request, msg::SetContactRequest)>,
    pub(super) set_priority: LocalBoxStream<'static, (Request, msg::SetPriorityRequest)>,
}

/// Creates the services on `node`.
#[cfg(wg_msgs_typed)]
pub(super) fn create(node: &mut r2::Node) -> r2::Result<Services> {
    let qos = r2::QosProfile::services_default;
    let reset_stop = node.create_service::<TriggerSrv>("~/reset_stop", qos())?.map(Request::Trigger).boxed_local();
    let reload = node.create_service::<TriggerSrv>("~/reload", qos())?.map(Request::Trigger).boxed_local();
    let set_contact = node
        .create_service::<ContactSrv>("~/set_contact", qos())?
        .map(|rq| {
            let m = &rq.message;
            let req = msg::SetContactRequest { body_a: m.body_a.clone(), body_b: m.body_b.clone(), allowed: m.allowed };
            (Request::Contact(rq), req)
        })
        .boxed_local();
    let set_priority = node
        .create_service::<PrioritySrv>("~/set_priority", qos())?
        .map(|rq| {
            let req = msg::SetPriorityRequest { robot: rq.message.robot.clone(), priority: rq.message.priority };
            (Request::Priority(rq), req)
        })
        .boxed_local();
    Ok(Services { reset_stop, reload, set_contact, set_priority })
}

/// Without the services' types: none, said at start.
#[cfg(not(wg_msgs_typed))]
pub(super) fn create(_: &mut r2::Node) -> r2::Result<Services> {
    tracing::warn!(
        "r2r was built without std_srvs and workcell_guard_msgs in its prefix: ~/reset_stop, ~/reload, \
         ~/set_contact and ~/set_priority are not served (build the messages into the prefix, then r2r again: \
         scripts/ros2_prefix.sh)"
    );
    fn none<T: 'static>() -> LocalBoxStream<'static, T> {
        futures::stream::pending().boxed_local()
    }
    Ok(Services { reset_stop: none(), reload: none(), set_contact: none(), set_priority: none() })
}

#[cfg(wg_msgs_typed)]
fn sent(r: r2::Result<()>) {
    if let Err(e) = r {
        tracing::warn!("service answer not sent: {e}");
    }
}

/// Answers a `std_srvs/Trigger` request.
#[cfg_attr(not(wg_msgs_typed), allow(unused_variables))]
pub(super) fn answer_trigger(request: Request, answer: msg::TriggerResponse) {
    match request {
        #[cfg(wg_msgs_typed)]
        Request::Trigger(rq) => {
            sent(rq.respond(r2::std_srvs::srv::Trigger::Response { success: answer.success, message: answer.message }))
        }
        #[cfg(wg_msgs_typed)]
        _ => {}
    }
}

/// Answers a `~/set_contact` request.
#[cfg_attr(not(wg_msgs_typed), allow(unused_variables))]
pub(super) fn answer_set_contact(request: Request, answer: msg::SetContactResponse) {
    match request {
        #[cfg(wg_msgs_typed)]
        Request::Contact(rq) => sent(rq.respond(r2::workcell_guard_msgs::srv::SetContact::Response {
            success: answer.success,
            message: answer.message,
        })),
        #[cfg(wg_msgs_typed)]
        _ => {}
    }
}

/// Answers a `~/set_priority` request.
#[cfg_attr(not(wg_msgs_typed), allow(unused_variables))]
pub(super) fn answer_set_priority(request: Request, answer: msg::SetPriorityResponse) {
    match request {
        #[cfg(wg_msgs_typed)]
        Request::Priority(rq) => sent(rq.respond(r2::workcell_guard_msgs::srv::SetPriority::Response {
            success: answer.success,
            message: answer.message,
        })),
        #[cfg(wg_msgs_typed)]
        _ => {}
    }
}
