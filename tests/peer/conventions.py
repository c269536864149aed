#!/usr/bin/env python3
"""End-to-end peer for the ROS conventions a ROS 2 engineer meets on day one.

Run only inside a network namespace of its own (tests/ros_e2e.rs does
`unshare -n` and brings up loopback only); Cyclone is configured for
loopback too, and the node runs with ROS_LOCALHOST_ONLY=1.

The node runs on the sample cell with QoS overrides on the command line
(`arm_left/state`: volatile, best effort, depth 7). On Eclipse Cyclone DDS, as other
ROS 2 tools see it, this peer checks:
  1. discovery shows the node's endpoints with the QoS they offer: the
     overridden one as overridden, the others as documented; arm_right's
     speed scaling as control_msgs/SpeedScalingFactor (reliable, transient
     local), arm_left's as std_msgs/Float64;
  2. joint-state writers matched but silent are named as such in the
     diagnostics;
  3. `<robot>/state` (GuardState): a stop for want of joint states first,
     then, with joint states flowing, the documented fields;
  4. a transient-local SpeedScalingFactor reader that joins late gets the
     latest scaling; the Float64 reader gets its values;
  5. the services and parameter services answer both request mappings:
     without a header, and with rmw_cyclonedds's (the reply echoing it);
     the descriptors carry ranges, read-only flags and descriptions; a
     read-only parameter is refused;
  6. MoveIt's `execute_trajectory` goals are cancelled while arm_right
     stands stopped;
  7. the first marker message a new subscriber gets starts with DELETEALL;
  8. a reader asking for more than a topic offers (transient local on the
     overridden volatile state) is reported in the node's diagnostics.
Exits non-zero on the first failed expectation; writes what it saw to --out.
"""

import json
import math
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

LEFT = ["shoulder_pan", "shoulder_lift", "elbow", "wrist_1", "wrist_2", "wrist_3", "finger_left"]
RIGHT = ["j1", "j2", "j3", "j4", "j5", "j6", "j7", "finger_a_joint"]
Q_LEFT = [1.5, 0.7, 1.1, 0.0, 0.0, 0.0, 0.02]
Q_RIGHT = [-1.5, 1.2, 0.0, -0.3, 0.0, 0.0, 0.0, 0.0]


class Fail(Exception):
    pass


def expect(cond, what):
    if not cond:
        raise Fail(what)


def valid(samples):
    return [x for x in samples if not type(x).__name__ == "InvalidSample"]


def finite(x):
    """`x`, or its text where JSON has no number for it (inf)."""
    return x if math.isfinite(x) else str(x)


def wait_for(what, poll, timeout=10.0, step=0.05):
    end = time.time() + timeout
    while time.time() < end:
        v = poll()
        if v:
            return v
        time.sleep(step)
    raise Fail(f"timed out waiting for {what}")


def main():
    import ros_types as t
    from cyclonedds.builtin import BuiltinDataReader, BuiltinTopicDcpsPublication
    from cyclonedds.core import Policy
    from cyclonedds.domain import DomainParticipant
    from cyclonedds.pub import DataWriter
    from cyclonedds.sub import DataReader
    from cyclonedds.topic import Topic

    a = t.peer_args()
    domain = 23
    overrides = ["-p", "qos_overrides./arm_left/state.publisher.durability:=volatile",
                 "-p", "qos_overrides./arm_left/state.publisher.reliability:=best_effort",
                 "-p", "qos_overrides./arm_left/state.publisher.depth:=7"]
    node, node_log = t.start_node(a, domain, "wg_conv_", overrides)
    seen = {}
    try:
        dp, writer, reader = t.endpoints(domain)
        diag = reader("rt/diagnostics", t.DiagnosticArray, t.QOS_RELIABLE)
        statuses = {}

        def poll_diag():
            for d in valid(diag.take(N=100)):
                for s in d.status:
                    statuses[s.name] = s
            return statuses

        # 1. Discovery: the QoS each endpoint offers.
        pubs = BuiltinDataReader(dp, BuiltinTopicDcpsPublication)
        found = {}

        def poll_pubs():
            for p in valid(pubs.take(N=200)):
                found[p.topic_name] = p
            return all(n in found for n in ("rt/arm_left/state", "rt/arm_right/state",
                                            "rt/arm_right/speed_scaling", "rt/arm_left/speed_scaling"))

        wait_for("the node's writers in discovery", poll_pubs, timeout=15)
        qos = {n: (str(found[n].qos[Policy.Durability]), str(found[n].qos[Policy.History]),
                   str(found[n].qos[Policy.Reliability]), found[n].type_name) for n in found if n.startswith("rt/")}
        seen["discovery"] = {n: list(v) for n, v in qos.items()}
        left, right = qos["rt/arm_left/state"], qos["rt/arm_right/state"]
        # (History and depth are not part of what discovery announces.)
        expect("Volatile" in left[0] and "BestEffort" in left[2], f"arm_left/state not overridden: {left}")
        expect("TransientLocal" in right[0] and "Reliable" in right[2], f"arm_right/state: {right}")
        ssf = qos["rt/arm_right/speed_scaling"]
        expect(ssf[3] == "control_msgs::msg::dds_::SpeedScalingFactor_" and "TransientLocal" in ssf[0]
               and "Reliable" in ssf[2], f"arm_right's speed scaling: {ssf}")
        expect(qos["rt/arm_left/speed_scaling"][3] == "std_msgs::msg::dds_::Float64_", f"{qos['rt/arm_left/speed_scaling']}")
        print("discovery:", json.dumps(seen["discovery"], indent=1))

        # 2. Matched but silent joint-state writers.
        js = [writer("rt/arm_left/joint_states", t.JointState, t.QOS_SENSOR),
              writer("rt/arm_right/joint_states", t.JointState, t.QOS_SENSOR)]
        states = [reader("rt/arm_left/state", t.GuardState, t.QOS_SENSOR),
                  reader("rt/arm_right/state", t.GuardState, t.QOS_LATCHED)]
        float_speed = reader("rt/arm_left/speed_scaling", t.Float64, t.QOS_RELIABLE)

        def silent():
            s = poll_diag().get("workcell_guard: arm_left")
            return s if s is not None and "matched on `arm_left/joint_states` but silent" in s.message else None

        s = wait_for("the diagnostics to name the silent joint-state writer", silent)
        seen["silent"] = s.message

        # 3. The state before any joint state: stopped, reason named.
        first = wait_for("arm_right/state", lambda: valid(states[1].take(N=10)))
        expect(first[-1].decision == 1 and first[-1].reason in (4, 7), f"first state: {first[-1]}")

        # Joint states flow at 100 Hz from here on.
        def publish():
            now = time.time()
            for w, names, q in ((js[0], LEFT, Q_LEFT), (js[1], RIGHT, Q_RIGHT)):
                w.write(t.JointState(header=t.Header(stamp=t.stamp(now), frame_id=""), name=names, position=q,
                                     velocity=[], effort=[]))

        def run(secs):
            end = time.time() + secs
            while time.time() < end:
                publish()
                time.sleep(0.01)

        run(2.0)
        got = [valid(r.take(N=200)) for r in states]
        expect(got[0] and got[1], "no states while joint states flow")
        st = got[1][-1]
        seen["state"] = {"robot": st.robot, "decision": st.decision, "source": st.source, "reason": st.reason,
                         "reason_text": st.reason_text, "closest_link": st.closest_link,
                         "closest_other": st.closest_other, "clearance_m": finite(st.clearance_m),
                         "time_to_contact_s": finite(st.time_to_contact_s), "speed_scale": st.speed_scale,
                         "grant_state": st.grant_state, "on_plan": st.on_plan, "frame_id": st.header.frame_id}
        print("state:", seen["state"])
        expect(st.robot == "arm_right" and st.header.frame_id == "world", f"{seen['state']}")
        expect(st.decision == 0 and st.source == 0 and st.reason == 0 and st.reason_text == "", f"not running: {seen['state']}")
        expect(st.clearance_m > 0.0 and 0.0 < st.speed_scale <= 1.0, f"{seen['state']}")
        expect(st.grant_state == 4 and not st.on_plan, f"no plan given, yet: {seen['state']}")
        expect(st.header.stamp.sec > 0, "unstamped state")

        # 4. A late transient-local SpeedScalingFactor reader gets the latest.
        late = reader("rt/arm_right/speed_scaling", t.SpeedScalingFactor, t.QOS_LATCHED)
        got = []
        end = time.time() + 3
        while time.time() < end and not got:
            publish()
            got = valid(late.take(N=100))
            time.sleep(0.01)
        expect(got, "a late transient-local SpeedScalingFactor reader got nothing")
        seen["late_factor"] = got[-1].factor
        # The scaling may still be ramping (rate-limited) from the release:
        # the latest factor lies between the state read before the reader
        # joined and a state published after it. A state goes out on a
        # change and at diagnostics_hz (10 Hz), so the factor can be up to
        # 0.1 s newer than the newest state: wait for one more.
        after = valid(states[1].take(N=200))
        end = time.time() + 2
        while time.time() < end:
            publish()
            newer = valid(states[1].take(N=200))
            after += newer
            if newer:
                break
            time.sleep(0.01)
        bounds = sorted([st.speed_scale, after[-1].speed_scale if after else st.speed_scale])
        seen["late_factor_between"] = bounds
        expect(bounds[0] - 0.02 < got[-1].factor < bounds[1] + 0.02,
               f"late factor {got[-1].factor} vs states {bounds[0]}..{bounds[1]}")
        floats = valid(float_speed.take(N=1000))
        expect(floats and all(0.0 <= f.data <= 1.0 for f in floats), f"arm_left Float64 scaling: {floats[:3]}")
        seen["float64_values"] = len(floats)

        # 5. Services: both request mappings.
        plain_rq = writer("rq/workcell_guard/reset_stopRequest", t.Trigger_Request, t.QOS_RELIABLE)
        plain_rr = reader("rr/workcell_guard/reset_stopReply", t.Trigger_Response, t.QOS_RELIABLE)
        set_rq = writer("rq/workcell_guard/set_parametersRequest", t.SetParameters_Request, t.QOS_RELIABLE)
        set_rr = reader("rr/workcell_guard/set_parametersReply", t.SetParameters_Response, t.QOS_RELIABLE)
        get_rq = writer("rq/workcell_guard/get_parametersRequest", t.GetParameters_Request, t.QOS_RELIABLE)
        get_rr = reader("rr/workcell_guard/get_parametersReply", t.GetParameters_Response, t.QOS_RELIABLE)
        # The Cyclone-mapped twins share the type names: their own participant.
        cy = DomainParticipant(domain)

        def cw(name, typ):
            return DataWriter(cy, Topic(cy, name, typ, qos=t.QOS_RELIABLE), qos=t.QOS_RELIABLE)

        def cr(name, typ):
            return DataReader(cy, Topic(cy, name, typ, qos=t.QOS_RELIABLE), qos=t.QOS_RELIABLE)

        cy_rq = cw("rq/workcell_guard/reset_stopRequest", t.Trigger_Request_Cyclone)
        cy_rr = cr("rr/workcell_guard/reset_stopReply", t.Trigger_Response_Cyclone)
        cy_set_rq = cw("rq/workcell_guard/set_parametersRequest", t.SetParameters_Request_Cyclone)
        cy_set_rr = cr("rr/workcell_guard/set_parametersReply", t.SetParameters_Response_Cyclone)
        cy_desc_rq = cw("rq/workcell_guard/describe_parametersRequest", t.DescribeParameters_Request_Cyclone)
        cy_desc_rr = cr("rr/workcell_guard/describe_parametersReply", t.DescribeParameters_Response_Cyclone)
        guid = [random.randrange(256) for _ in range(8)]

        def call(w, r, req, match=lambda x: True, what="reply"):
            """Writes `req` until a reply matching `match` arrives (a writer
            needs its readers discovered); returns it."""
            end = time.time() + 10
            while time.time() < end:
                w.write(req)
                t_end = time.time() + 0.3
                while time.time() < t_end:
                    publish()
                    for x in valid(r.take(N=20)):
                        if match(x):
                            return x
                    time.sleep(0.01)
            raise Fail(f"no {what}")

        rep = call(plain_rq, plain_rr, t.Trigger_Request(), what="reset_stop reply without a header")
        seen["reset_plain"] = rep.message
        rep = call(cy_rq, cy_rr, t.Trigger_Request_Cyclone(guid_low=guid, seq=41),
                   match=lambda x: list(x.guid_low) == guid and x.seq == 41, what="reset_stop reply with the Cyclone header")
        seen["reset_cyclone"] = rep.message
        expect(rep.message == seen["reset_plain"], f"{rep.message!r} vs {seen['reset_plain']!r}")

        def dbl(name, v):
            return t.Parameter(name=name, value=t.ParameterValue(type=t.PARAMETER_DOUBLE, double_value=v))

        rep = call(set_rq, set_rr, t.SetParameters_Request(parameters=[dbl("diagnostics_hz", 20.0)]), what="set (plain)")
        expect(rep.results and rep.results[0].successful, f"plain set refused: {rep.results}")
        rep = call(cy_set_rq, cy_set_rr,
                   t.SetParameters_Request_Cyclone(guid_low=guid, seq=42, parameters=[dbl("diagnostics_hz", 25.0),
                                                                                      dbl("release_m", -1.0)]),
                   match=lambda x: x.seq == 42, what="set (Cyclone)")
        expect(len(rep.results) == 2 and rep.results[0].successful and not rep.results[1].successful
               and "release_m" in rep.results[1].reason, f"Cyclone set: {rep.results}")
        ro = t.Parameter(name="workcell_file", value=t.ParameterValue(type=4, string_value="/elsewhere.yaml"))
        rep = call(set_rq, set_rr, t.SetParameters_Request(parameters=[ro]),
                   match=lambda x: x.results and not x.results[0].successful, what="refusal of a read-only set")
        expect("read-only" in rep.results[0].reason, f"{rep.results[0].reason}")
        rep = call(get_rq, get_rr, t.GetParameters_Request(names=["diagnostics_hz"]),
                   match=lambda x: x.values and abs(x.values[0].double_value - 25.0) < 1e-9, what="diagnostics_hz = 25")
        names = ["workcell_file", "release_m", "qos_overrides./arm_left/state.publisher.depth", "rate_hz"]
        rep = call(get_rq, get_rr, t.GetParameters_Request(names=[names[2]]),
                   match=lambda x: x.values and x.values[0].integer_value == 7, what="the QoS override's value 7")
        rep = call(cy_desc_rq, cy_desc_rr, t.DescribeParameters_Request_Cyclone(guid_low=guid, seq=43, names=names),
                   match=lambda x: x.seq == 43, what="describe (Cyclone)")
        d = {x.name: x for x in rep.descriptors}
        seen["descriptors"] = {n: {"type": x.type, "read_only": x.read_only, "description": x.description,
                                   "range": [(r.from_value, r.to_value) for r in x.floating_point_range]}
                               for n, x in d.items()}
        expect(d["workcell_file"].read_only and d["workcell_file"].type == 4, f"{seen['descriptors']}")
        expect(not d["release_m"].read_only and d["release_m"].type == 3 and d["release_m"].floating_point_range
               and d["release_m"].description, f"{seen['descriptors']}")
        expect(d[names[2]].read_only and d[names[2]].type == 2, f"{seen['descriptors']}")
        expect(d["rate_hz"].floating_point_range[0].to_value >= 1000, f"{seen['descriptors']}")

        # 6. MoveIt's action: its goals are cancelled while the arm stands
        # stopped (no joint state for it any more: the watchdog stops it).
        cancels = reader("rq/execute_trajectory/_action/cancel_goalRequest", t.CancelGoal_Request, t.QOS_RELIABLE)
        end = time.time() + 4
        n_cancel = 0
        while time.time() < end and n_cancel == 0:
            js[0].write(t.JointState(header=t.Header(stamp=t.stamp(time.time()), frame_id=""), name=LEFT,
                                     position=Q_LEFT, velocity=[], effort=[]))
            n_cancel += len(valid(cancels.take(N=100)))
            time.sleep(0.01)
        expect(n_cancel > 0, "no cancel of MoveIt's execute_trajectory goals while arm_right is stopped")
        seen["moveit_cancels"] = n_cancel

        # 7. Markers: the first message to a new subscriber clears rviz.
        markers = reader("rt/markers", t.MarkerArray, t.QOS_RELIABLE)
        first = wait_for("markers", lambda: valid(markers.take(N=1)), timeout=5)
        expect(first[0].markers and first[0].markers[0].action == 3, f"first marker action {first[0].markers[:1]}")

        # 8. A reader that asks for more than the overridden state offers.
        # (On the other participant: a topic's QoS is one per participant.)
        strict = DataReader(cy, Topic(cy, "rt/arm_left/state", t.GuardState, qos=t.QOS_LATCHED), qos=t.QOS_LATCHED)

        def reported():
            s = poll_diag().get("workcell_guard: node")
            if s is None:
                return None
            keys = {kv.key: kv.value for kv in s.values}
            return keys.get("incompatible QoS /arm_left/state")

        seen["incompatible"] = wait_for("the incompatible QoS in the diagnostics", reported, timeout=8)
        del strict
        print("seen:", json.dumps(seen, indent=1, default=str))
    except Fail as e:
        print(f"FAIL: {e}", file=sys.stderr)
        t.stop_and_save(node, a.out, seen)
        print(open(node_log).read()[-4000:], file=sys.stderr)
        sys.exit(1)
    t.stop_and_save(node, a.out, seen)


if __name__ == "__main__":
    main()
