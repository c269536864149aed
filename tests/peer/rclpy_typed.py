#!/usr/bin/env python3
"""Peer: the node as rclpy sees it with the package's own message types
(ROS 2 Jazzy from its PyPI wheels, rmw_fastrtps_cpp), the same checks on
either transport: `--transport r2r` (the node on rcl, as colcon installs
it) or `--transport dds` (the node's built-in DDS transport).

Run only with the Python of the prefix scripts/ros2_prefix.sh makes, its
environment and the colcon install space (scripts/colcon_ws.sh) sourced
(tests/ros_colcon.rs does), and only inside a network namespace of its own
(`unshare -n`, only loopback up); both sides on loopback only
(ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST, ROS_LOCALHOST_ONLY=1).

Without `--node`, the node is found as `ros2 run workcell_guard
workcell_guard` finds it: `lib/workcell_guard/workcell_guard` under the
package's prefix in the ament index. The cell is the installed sample cell
(`share/workcell_guard/config`), copied with every file named by a
`package://` URI (resolved by the node through the ament index), both
speed scalings as std_msgs/Float64 and no MoveIt display topic
(control_msgs and moveit_msgs have no wheels, and r2r serves only the
types of the prefix it was built against). It checks, and writes what it
saw to --out:
  1. the graph: one node besides this one (no second participant of the
     node's own); `~/reset_stop`, `~/reload`, `~/set_contact`,
     `~/set_priority` in the graph with their types, and listed under the
     node with the six parameter services (what `ros2 node info` shows);
  2. with both arms publishing joint states turned away from each other:
     each arm's stop goes false, its GuardState and ManipulatorGrant arrive
     typed, and diagnostics arrive; then both cross the front of the cell
     on plans, each moving only as far as its grant allows: arm_left
     (priority 20) finishes first, arm_right's grants name it;
  3. `~/set_priority` refuses an unknown robot and names it, takes a known
     one; `~/set_contact` refuses an unknown body and names it; `~/reset_stop`
     is answered; a platen unit's move request is granted (PlatenGrant,
     typed); every class of bad joint state (an unknown joint, a length
     mismatch, NaN, a stamp in the future, a stamp going backwards) stops
     the right arm with an error diagnostic naming it, and the stop clears
     when good states come again;
  4. parameters: a valid `slow_down_m` is taken, a negative one refused with
     a reason, and the descriptor carries the parameter's description;
     a stream of joint states one position short (100 a second for 2 s) is
     logged as a few throttled lines, not one per message;
  5. on SIGTERM, a subscriber that joins while the node lingers reads every
     arm's stop as true (transient local), and the node exits with 0;
  6. a second node, told to panic in its loop on one joint state's frame
     id (WORKCELL_GUARD_PANIC_ON_FRAME_ID): a subscriber that joins after
     the panic reads every stop true, and the node exits with an error.
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

LEFT = ["shoulder_pan", "shoulder_lift", "elbow", "wrist_1", "wrist_2", "wrist_3", "finger_left"]
RIGHT = ["j1", "j2", "j3", "j4", "j5", "j6", "j7", "finger_a_joint"]
Q_LEFT = [1.5, 0.7, 1.1, 0.0, 0.0, 0.0, 0.02]
Q_RIGHT = [-1.5, 1.2, 0.0, -0.3, 0.0, 0.0, 0.0, 0.0]
PANIC_FRAME = "inject-panic"


class Fail(Exception):
    pass


def expect(cond, what):
    if not cond:
        raise Fail(what)


def cell_copy(config, tmp, uris=None):
    """The sample cell and parameters of folder `config` in `tmp`, with the
    changes above; the files the cell names by the repository's paths, or,
    with `uris` (e.g. "package://workcell_guard"), by URIs under it."""
    text = open(os.path.join(config, "workcell.yaml")).read()
    text = text.replace("control_msgs/msg/SpeedScalingFactor", "std_msgs/msg/Float64")
    text = re.sub(r"(?m)^\s*display_trajectory_topic:.*\n", "", text)
    top = uris or os.path.dirname(os.path.abspath(config))
    text = text.replace("urdf: ../urdf/", "urdf: %s/urdf/" % top)
    text = text.replace("{file: spheres/", "{file: %s/config/spheres/" % top)
    if not uris:
        text = text.replace("package://workcell_guard/", top + "/")
    cell = os.path.join(tmp, "workcell.yaml")
    open(cell, "w").write(text)
    params = open(os.path.join(config, "workcell_guard.yaml")).read()
    params = params.replace("workcell_file: workcell.yaml", "workcell_file: " + cell)
    p = os.path.join(tmp, "workcell_guard.yaml")
    open(p, "w").write(params)
    return p


def installed():
    """The node and its config folder as the ament index has them."""
    from ament_index_python.packages import get_package_prefix, get_package_share_directory
    node = os.path.join(get_package_prefix("workcell_guard"), "lib", "workcell_guard", "workcell_guard")
    expect(os.access(node, os.X_OK), "no executable %s in the install space" % node)
    return node, os.path.join(get_package_share_directory("workcell_guard"), "config")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--transport", choices=("r2r", "dds"), required=True)
    ap.add_argument("--node", help="the node's executable (default: the installed one)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.environ["ROS_DOMAIN_ID"] = "41"
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    tmp = tempfile.mkdtemp(prefix="wg_typed_")
    node, config = installed()
    node = a.node or node
    params = cell_copy(config, tmp, uris="package://workcell_guard")
    node_log = os.path.join(tmp, "node.log")
    env = dict(os.environ, RUST_LOG="info", ROS_LOCALHOST_ONLY="1")
    proc = subprocess.Popen([node, "--ros-args", "--params-file", params], env=env,
                            stdout=open(node_log, "w"), stderr=subprocess.STDOUT)
    seen = {"ok": False, "transport": a.transport, "node": node}
    try:
        run(seen, proc, node_log, a.transport)
        proc = subprocess.Popen([node, "--ros-args", "--params-file", params],
                                env=dict(env, WORKCELL_GUARD_PANIC_ON_FRAME_ID=PANIC_FRAME, RUST_BACKTRACE="0"),
                                stdout=open(node_log, "a"), stderr=subprocess.STDOUT)
        panic(seen, proc)
        seen["ok"] = True
    except Fail as e:
        seen["failure"] = str(e)
    finally:
        if proc.poll() is None:
            proc.kill()
        seen["node_log_tail"] = open(node_log, errors="replace").read()[-3000:]
        json.dump(seen, open(a.out, "w"), indent=1)
    print(json.dumps(seen, indent=1))
    return 0 if seen["ok"] else 1


class Peer:
    """rclpy's side: joint-state publishers, and what the node says."""

    def __init__(self):
        import rclpy
        from rclpy.node import Node
        from rclpy.qos import QoSProfile, ReliabilityPolicy, DurabilityPolicy, HistoryPolicy, qos_profile_sensor_data
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Bool

        rclpy.init()
        self.rclpy, self.JointState, self.Bool = rclpy, JointState, Bool
        self.me = Node("rclpy_peer")
        self.latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                                  durability=DurabilityPolicy.TRANSIENT_LOCAL, history=HistoryPolicy.KEEP_LAST)
        self.js = {arm: self.me.create_publisher(JointState, arm + "/joint_states", qos_profile_sensor_data)
                   for arm in ("arm_left", "arm_right")}

    def publish(self, frame_id="", right=None):
        """Both arms' joint states; `right` (names, positions, stamp in
        seconds, each None for the usual) replaces the right arm's."""
        now = self.me.get_clock().now()
        names_r, q_r, stamp_r = right or (None, None, None)
        for arm, names, q, stamp in (("arm_left", LEFT, Q_LEFT, None), ("arm_right", names_r or RIGHT, q_r or Q_RIGHT, stamp_r)):
            m = self.JointState()
            if stamp is None:
                m.header.stamp = now.to_msg()
            else:
                m.header.stamp.sec, m.header.stamp.nanosec = int(stamp), int((stamp % 1.0) * 1e9)
            m.header.frame_id = frame_id
            m.name, m.position = names, q
            self.js[arm].publish(m)

    def late_stops(self, seconds):
        """Subscribes anew to every stop and reads for `seconds`."""
        late = {}
        subs = [self.me.create_subscription(self.Bool, arm + "/stop", lambda m, arm=arm: late.__setitem__(arm, m.data),
                                            self.latched) for arm in ("arm_left", "arm_right")]
        end = time.time() + seconds
        while time.time() < end and len(late) < 2:
            self.rclpy.spin_once(self.me, timeout_sec=0.01)
        for x in subs:
            self.me.destroy_subscription(x)
        return late


PEER = None


def panic(seen, proc):
    p = PEER
    stops = {}
    subs = [p.me.create_subscription(p.Bool, arm + "/stop", lambda m, arm=arm: stops.__setitem__(arm, m.data),
                                     p.latched) for arm in ("arm_left", "arm_right")]
    # A debug build takes seconds to load the cell and build its field.
    end = time.time() + 60.0
    while time.time() < end and not (stops.get("arm_left") is False and stops.get("arm_right") is False):
        p.publish()
        p.rclpy.spin_once(p.me, timeout_sec=0.01)
    expect(stops == {"arm_left": False, "arm_right": False}, "the second node did not release: %s" % stops)
    p.publish(PANIC_FRAME)
    # Once the stops went out true, a new subscriber joins.
    end = time.time() + 5.0
    while time.time() < end and stops != {"arm_left": True, "arm_right": True}:
        p.rclpy.spin_once(p.me, timeout_sec=0.01)
    seen["stops_on_panic"] = dict(stops)
    for x in subs:
        p.me.destroy_subscription(x)
    late = p.late_stops(5.0)
    seen["stops_after_panic"] = late
    expect(late == {"arm_left": True, "arm_right": True}, "a late joiner after the panic read %s" % late)
    proc.wait(timeout=10)
    seen["exit_code_after_panic"] = proc.returncode
    expect(proc.returncode not in (0, None), "the node exited with %s after a panic" % proc.returncode)
    p.me.destroy_node()
    p.rclpy.shutdown()


def turns(seen, proc):
    """Both arms cross the front of the cell on plans, each moving only as
    far as its grant allows (tests/peer/arbitration.py's executors):
    arm_left (priority 20) finishes first, arm_right's grants name it."""
    from arbitration import ARMS, Executor, q_at, PLAN_S, STEP_S, DT, PROCEED, HOLD, BACK_AWAY
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    from workcell_guard_msgs.msg import ManipulatorGrant
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    p = PEER
    me, rclpy = p.me, p.rclpy
    reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
    plans = [me.create_publisher(JointTrajectory, m["name"] + "/planned_trajectory", reliable) for m in ARMS]
    grants, stops = [None, None], [True, True]
    subs = []
    for i, m in enumerate(ARMS):
        subs.append(me.create_subscription(ManipulatorGrant, m["name"] + "/grant",
                                           lambda g, i=i: grants.__setitem__(i, g), p.latched))
        subs.append(me.create_subscription(p.Bool, m["name"] + "/stop",
                                           lambda b, i=i: stops.__setitem__(i, b.data), p.latched))
    ex = [Executor(m) for m in ARMS]

    def publish_states():
        now = me.get_clock().now().to_msg()
        for i, m in enumerate(ARMS):
            js = p.JointState()
            js.header.stamp, js.name, js.position = now, m["joints"], q_at(m, ex[i].s)
            p.js[m["name"]].publish(js)

    def drain():
        for _ in range(20):
            rclpy.spin_once(me, timeout_sec=0.0)

    end = time.time() + 15.0
    while time.time() < end and not (all(g is not None for g in grants) and not any(stops)
                                     and all(pl.get_subscription_count() > 0 for pl in plans)):
        publish_states()
        drain()
        time.sleep(DT)
    expect(all(g is not None for g in grants) and not any(stops), "no grants, or stops, at rest: %s %s" % (grants, stops))
    stamp = me.get_clock().now().to_msg()
    for i, m in enumerate(ARMS):
        jt = JointTrajectory(joint_names=m["joints"])
        jt.header.stamp = stamp
        for k in range(int(round(PLAN_S / STEP_S)) + 1):
            t_s = k * STEP_S
            jt.points.append(JointTrajectoryPoint(positions=q_at(m, t_s), time_from_start=Duration(
                sec=int(t_s), nanosec=int(round((t_s % 1) * 1e9)))))
        plans[i].publish(jt)
    start = prev = time.time()
    finished, yielded, tick = [None, None], False, start
    while time.time() < start + 20.0 and None in finished:
        expect(proc.poll() is None, "the node exited (code %s)" % proc.poll())
        drain()
        now = time.time()
        for i in range(2):
            ex[i].step(grants[i], stops[i], 1.0, now - prev)  # no scaling input
            if ex[i].done() and finished[i] is None:
                finished[i] = round(now - start, 3)
        g = grants[1]
        yielded = yielded or (g.held_by == "arm_left" and g.state in (PROCEED, HOLD, BACK_AWAY))
        prev = now
        publish_states()
        tick += DT
        time.sleep(max(0.0, tick - time.time()))
    seen["turns_finished_s"] = finished
    expect(None not in finished, "an arm did not finish within 20 s: %s" % finished)
    expect(finished[0] < finished[1], "arm_left (priority 20) did not finish first: %s" % finished)
    expect(yielded, "arm_right's grant never named arm_left as the robot it yields to")
    for x in subs:
        me.destroy_subscription(x)
    # From here on the arms report where their plans ended.
    Q_LEFT[:] = q_at(ARMS[0], PLAN_S)
    Q_RIGHT[:] = q_at(ARMS[1], PLAN_S)


def run(seen, proc, node_log, transport):
    global PEER
    PEER = Peer()
    import rclpy
    from rclpy.parameter import Parameter
    from rcl_interfaces.srv import SetParameters, DescribeParameters, GetParameters
    from std_msgs.msg import Bool
    from std_srvs.srv import Trigger
    from diagnostic_msgs.msg import DiagnosticArray
    from workcell_guard_msgs.msg import GuardState, ManipulatorGrant
    from workcell_guard_msgs.srv import SetContact, SetPriority

    me, latched, publish = PEER.me, PEER.latched, PEER.publish
    got = {"stop": {}, "state": {}, "grant": {}, "diag": 0}
    for arm in ("arm_left", "arm_right"):
        me.create_subscription(Bool, arm + "/stop", lambda m, arm=arm: got["stop"].__setitem__(arm, m.data), latched)
        me.create_subscription(GuardState, arm + "/state",
                               lambda m, arm=arm: got["state"].__setitem__(arm, m), latched)
        me.create_subscription(ManipulatorGrant, arm + "/grant",
                               lambda m, arm=arm: got["grant"].__setitem__(arm, m), latched)
    got["status"] = {}

    def diagnostics(m):
        got["diag"] += 1
        for st in m.status:
            got["status"][st.name] = st

    me.create_subscription(DiagnosticArray, "/diagnostics", diagnostics, 10)

    def spin_for(s, until=None):
        end = time.time() + s
        while time.time() < end:
            publish()
            rclpy.spin_once(me, timeout_sec=0.01)
            expect(proc.poll() is None, "the node exited (code %s)" % proc.poll())
            if until is not None and until():
                return True
        return False

    # 1. the graph
    want = {"/workcell_guard/reset_stop": "std_srvs/srv/Trigger",
            "/workcell_guard/reload": "std_srvs/srv/Trigger",
            "/workcell_guard/set_contact": "workcell_guard_msgs/srv/SetContact",
            "/workcell_guard/set_priority": "workcell_guard_msgs/srv/SetPriority"}

    def under_node():
        try:
            return dict((n, t[0]) for n, t in me.get_service_names_and_types_by_node("workcell_guard", "/"))
        except Exception:
            return {}

    def in_graph():
        return dict((n, t[0]) for n, t in me.get_service_names_and_types())

    def nodes_():
        return sorted("%s%s" % (ns.rstrip("/") + "/", n) for n, ns in me.get_node_names_and_namespaces())

    spin_for(60.0, lambda: all(in_graph().get(k) == v for k, v in want.items()) and "/workcell_guard" in nodes_()
             and all(under_node().get(k) == v for k, v in want.items()))
    graph, listed = in_graph(), under_node()
    seen["services_in_graph"] = dict((k, graph.get(k)) for k in want)
    seen["services_under_node"] = dict((k, listed.get(k)) for k in want)
    for k, v in want.items():
        expect(graph.get(k) == v, "%s not in the graph as %s: %s" % (k, v, graph))
        expect(listed.get(k) == v, "%s not listed under the node as %s: %s" % (k, v, listed))
    params = [k for k in under_node() if k.startswith("/workcell_guard/") and "parameter" in k]
    seen["parameter_services_under_node"] = sorted(params)
    expect(len(params) == 6, "the six parameter services not listed under the node: %s" % params)
    nodes = nodes_()
    seen["nodes"] = nodes
    expect(nodes == ["/rclpy_peer", "/workcell_guard"], "the graph holds other nodes than the node and this one: %s" % nodes)

    # 2. stops released, typed state and grant, diagnostics
    spin_for(60.0, lambda: all(got["stop"].get(arm) is False for arm in ("arm_left", "arm_right"))
             and len(got["state"]) == 2 and len(got["grant"]) == 2 and got["diag"] > 0)
    seen["stops"] = dict(got["stop"])
    seen["diagnostics"] = got["diag"]
    for arm in ("arm_left", "arm_right"):
        expect(got["stop"].get(arm) is False, "%s's stop not released: %s" % (arm, got["stop"]))
        st = got["state"].get(arm)
        expect(st is not None and st.robot == arm, "no GuardState for %s" % arm)
        expect(got["grant"].get(arm) is not None, "no ManipulatorGrant for %s" % arm)
    seen["state_left"] = {"decision": got["state"]["arm_left"].decision,
                          "clearance_m": got["state"]["arm_left"].clearance_m}
    expect(got["diag"] > 0, "no diagnostics")

    # 2b. two arms taking turns by their grants
    turns(seen, proc)

    # 3. services, typed
    def call(cli, req):
        expect(cli.wait_for_service(timeout_sec=10.0), "%s not available" % cli.srv_name)
        fut = cli.call_async(req)
        end = time.time() + 10.0
        while not fut.done() and time.time() < end:
            publish()
            rclpy.spin_once(me, timeout_sec=0.01)
        expect(fut.done(), "%s not answered" % cli.srv_name)
        return fut.result()

    prio = me.create_client(SetPriority, "/workcell_guard/set_priority")
    r = call(prio, SetPriority.Request(robot="arm_nowhere", priority=3))
    seen["set_priority_unknown"] = [r.success, r.message]
    expect(not r.success and "arm_nowhere" in r.message, "unknown robot not refused by name: %s" % r.message)
    r = call(prio, SetPriority.Request(robot="arm_left", priority=3))
    seen["set_priority_known"] = [r.success, r.message]
    expect(r.success, "a known robot's priority refused: %s" % r.message)
    contact = me.create_client(SetContact, "/workcell_guard/set_contact")
    r = call(contact, SetContact.Request(body_a="no_such_link", body_b="cell", allowed=True))
    seen["set_contact_unknown"] = [r.success, r.message]
    expect(not r.success and "no_such_link" in r.message, "unknown body not refused by name: %s" % r.message)
    r = call(me.create_client(Trigger, "/workcell_guard/reset_stop"), Trigger.Request())
    seen["reset_stop"] = [r.success, r.message]

    # 3b. platen: a move request for mover_a, granted typed
    from geometry_msgs.msg import PoseStamped, Pose2D
    from workcell_guard_msgs.msg import PlatenMoveRequest, PlatenGrant
    from rclpy.qos import QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
    reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
    pose = me.create_publisher(PoseStamped, "mover_a/pose", qos_profile_sensor_data)
    move = me.create_publisher(PlatenMoveRequest, "mover_a/move_request", reliable)
    grants = []
    me.create_subscription(PlatenGrant, "mover_a/grant", grants.append, reliable)
    at = PoseStamped()
    at.header.frame_id, at.pose.position.x, at.pose.position.y, at.pose.orientation.w = "surface", 0.2, 0.3, 1.0

    def move_granted():
        at.header.stamp = me.get_clock().now().to_msg()
        pose.publish(at)
        if move.get_subscription_count() > 0 and not grants:
            req = PlatenMoveRequest(request_id=7, target=Pose2D(x=0.3, y=0.3, theta=0.0))
            req.header.stamp = me.get_clock().now().to_msg()
            move.publish(req)
        return any(g.request_id == 7 for g in grants)

    expect(spin_for(10.0, move_granted), "no PlatenGrant for mover_a's move request")
    g = [g for g in grants if g.request_id == 7][0]
    seen["platen_grant"] = {"result": g.result, "goal": [g.goal.x, g.goal.y, g.goal.theta], "reason": g.reason}
    expect(g.result == PlatenGrant.GRANTED and abs(g.goal.x - 0.3) < 1e-9, "unexpected grant %s" % g)

    # 3c. every bad joint state stops the right arm with a diagnostic naming it; the node runs on
    stamp_now = time.time
    bad = [
        ("unknown joint", (RIGHT[:-1] + ["bogus"], None, None), "no joint `bogus`"),
        ("length mismatch", (None, Q_RIGHT[:-1], None), "joint names but 7 positions"),
        ("NaN", (None, [float("nan")] + Q_RIGHT[1:], None), "is NaN"),
        ("future stamp", (None, None, lambda: stamp_now() + 30.0), "in the future"),
        ("stamp going backwards", (None, None, lambda: stamp_now() - 5.0), "goes backwards"),
    ]
    seen["bad_messages"] = {}
    for label, (names, q, stamp_fn), needle in bad:
        def stopped_naming_it():
            PEER.publish(right=(names, q, stamp_fn() if stamp_fn else None))
            st = got["status"].get("workcell_guard: arm_right")
            return got["stop"].get("arm_right") is True and st is not None and needle in st.message \
                and st.level == b"\x02"

        t_bad = time.time()
        ok = False
        end = time.time() + 5.0
        while time.time() < end and not ok:
            ok = stopped_naming_it()
            rclpy.spin_once(me, timeout_sec=0.01)
        st = got["status"].get("workcell_guard: arm_right")
        expect(ok, "%s: right arm not stopped with a diagnostic naming it (stop %s, message %r)"
               % (label, got["stop"].get("arm_right"), st.message if st else None))
        seen["bad_messages"][label] = {"message": st.message, "after_s": round(time.time() - t_bad, 3)}
        expect(spin_for(10.0, lambda: got["stop"].get("arm_right") is False),
               "right stop does not clear after the %s stream ends" % label)

    # 4. parameters
    setp = me.create_client(SetParameters, "/workcell_guard/set_parameters")
    ok = call(setp, SetParameters.Request(parameters=[Parameter("slow_down_m", value=0.06).to_parameter_msg()]))
    bad = call(setp, SetParameters.Request(parameters=[Parameter("slow_down_m", value=-1.0).to_parameter_msg()]))
    seen["set_slow_down"] = [ok.results[0].successful, bad.results[0].successful, bad.results[0].reason]
    expect(ok.results[0].successful, "a valid slow_down_m refused: %s" % ok.results[0].reason)
    expect(not bad.results[0].successful and bad.results[0].reason, "a negative slow_down_m taken, or no reason")
    desc = call(me.create_client(DescribeParameters, "/workcell_guard/describe_parameters"),
                DescribeParameters.Request(names=["slow_down_m"]))
    d = desc.descriptors[0]
    seen["descriptor"] = {"description": d.description, "read_only": d.read_only,
                          "ranges": [[x.from_value, x.to_value] for x in d.floating_point_range]}
    expect("slow" in d.description.lower() or "scaling" in d.description.lower(),
           "no description in the descriptor: %r" % d.description)

    # 4a. the arbitration's switches: giving way to a robot caught in the
    # increment is on by default (giving way more widely off), and can be
    # switched off at run time
    getp = me.create_client(GetParameters, "/workcell_guard/get_parameters")
    before = call(getp, GetParameters.Request(names=["give_way_when_caught", "give_way_at_start"]))
    off = call(setp, SetParameters.Request(
        parameters=[Parameter("give_way_when_caught", value=False).to_parameter_msg()]))
    after = call(getp, GetParameters.Request(names=["give_way_when_caught"]))
    seen["give_way_when_caught"] = [[v.bool_value for v in before.values], off.results[0].successful,
                                    after.values[0].bool_value]
    expect([v.bool_value for v in before.values] == [True, False],
           "give_way_when_caught / give_way_at_start not true / false by default: %r" % before.values)
    expect(off.results[0].successful and not after.values[0].bool_value,
           "give_way_when_caught not switched off: %s" % off.results[0].reason)

    # 4b. a stream of refused joint states, throttled in the log
    def refusals():
        return sum(1 for x in open(node_log, errors="replace") if "arm_left" in x and "refused" in x)

    before = refusals()
    bad = PEER.JointState()
    bad.name, bad.position = LEFT, Q_LEFT[:-1]
    for _ in range(200):
        bad.header.stamp = me.get_clock().now().to_msg()
        PEER.js["arm_left"].publish(bad)
        rclpy.spin_once(me, timeout_sec=0.01)
    time.sleep(0.3)
    lines = refusals() - before
    seen["bad_stream_log_lines"] = lines
    expect(1 <= lines <= 5, "200 joint states one position short in 2 s logged %d lines of refusal" % lines)

    # 5. SIGTERM, then a late joiner
    proc.send_signal(signal.SIGTERM)
    end = time.time() + 5.0
    while time.time() < end and got["stop"] != {"arm_left": True, "arm_right": True}:
        rclpy.spin_once(me, timeout_sec=0.01)
    seen["stops_on_sigterm"] = dict(got["stop"])
    late = PEER.late_stops(5.0)
    seen["late_joiner_stops"] = late
    expect(late == {"arm_left": True, "arm_right": True}, "a late joiner after SIGTERM read %s" % late)
    proc.wait(timeout=10)
    seen["exit_code"] = proc.returncode
    expect(proc.returncode == 0, "the node exited with %s after SIGTERM" % proc.returncode)


if __name__ == "__main__":
    sys.exit(main())
