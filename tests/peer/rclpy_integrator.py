#!/usr/bin/env python3
"""Peer: the node as an integrator drives it from rclpy (ROS 2 Jazzy from
its PyPI wheels, rmw_fastrtps_cpp).

Run only with the Python of the venv scripts/test.sh makes (rclpy), and
only inside a network namespace of its own (tests/ros_rclpy.rs does
`unshare -n` and brings up loopback only); rclpy runs with
ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST and the node with
ROS_LOCALHOST_ONLY=1.

It checks, and writes what it saw to --out:
  1. `use_sim_time` (read at start) is refused by `set_parameters`, and
     stays false;
  2. `~/reset_stop` called by a new client right after `wait_for_service`
     (what `ros2 service call` does) is answered, 20 times (how long each
     took is written out: some still take 3 s);
  3. `set_parameters_atomically` with clearance and release raised
     together (valid only together) is taken; a parameter file loaded
     with `load_parameter_file` (one `set_parameters`) is taken whole in
     either order, and one that is invalid as a whole changes nothing;
  4. NaN and a deletion are refused, each with its own reason;
  5. no `/clock` subscription exists while `use_sim_time` is false.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


class Fail(Exception):
    pass


def expect(cond, what):
    if not cond:
        raise Fail(what)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--node", required=True)
    ap.add_argument("--params", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    domain = 37
    os.environ["ROS_DOMAIN_ID"] = str(domain)
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    tmp = tempfile.mkdtemp(prefix="wg_rclpy_")
    node_log = os.path.join(tmp, "node.log")
    env = dict(os.environ, ROS_LOCALHOST_ONLY="1", RUST_LOG="info,rustdds=off,ros2_client=error")
    env.pop("ROS_AUTOMATIC_DISCOVERY_RANGE")
    proc = subprocess.Popen([a.node, "--ros-args", "--params-file", a.params], env=env,
                            stdout=open(node_log, "w"), stderr=subprocess.STDOUT)
    seen = {"ok": False}
    try:
        run(seen, tmp)
        seen["ok"] = True
    except Exception as e:  # noqa: BLE001 (the Rust test reads the reason)
        seen["failure"] = repr(e)
    finally:
        if proc.poll() is None:
            import signal
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        with open(node_log, "rb") as f:
            text = f.read()
        seen["node_log_bytes"] = len(text)
        seen["node_log_ansi"] = text.count(b"\x1b[")
        with open(a.out, "w") as f:
            json.dump(seen, f)
    if not seen["ok"]:
        print("FAILED:", seen.get("failure"), file=sys.stderr)
        print(open(node_log).read()[-3000:], file=sys.stderr)
        sys.exit(1)


def run(seen, tmp):
    import rclpy
    from rcl_interfaces.msg import ParameterType, ParameterValue
    from rclpy.node import Node
    from rclpy.parameter import Parameter
    from rclpy.parameter_client import AsyncParameterClient
    from std_srvs.srv import Trigger

    rclpy.init()
    me = Node("integrator")
    target = "/workcell_guard"

    def done(fut, timeout=30.0):
        end = time.time() + timeout
        while not fut.done() and time.time() < end:
            rclpy.spin_once(me, timeout_sec=0.01)
        expect(fut.done(), "no answer in time")
        return fut.result()

    pc = AsyncParameterClient(me, target)
    expect(pc.wait_for_services(timeout_sec=20.0), "the parameter services never appeared")

    def get(*names):
        return [v for v in done(pc.get_parameters(list(names))).values]

    def set_(*params):
        return done(pc.set_parameters(list(params))).results

    # 1. use_sim_time is read at start.
    r = set_(Parameter("use_sim_time", Parameter.Type.BOOL, True))
    seen["use_sim_time"] = [r[0].successful, r[0].reason]
    expect(not r[0].successful and "read-only" in r[0].reason, f"use_sim_time taken: {seen['use_sim_time']}")
    expect(get("use_sim_time")[0].bool_value is False, "use_sim_time changed")

    # 2. A new client's first call, right after wait_for_service.
    times = []
    for k in range(20):
        c = me.create_client(Trigger, f"{target}/reset_stop")
        expect(c.wait_for_service(timeout_sec=10.0), "~/reset_stop never appeared")
        t0 = time.time()
        # (A request can wait for Fast DDS's 3-s heartbeat to be resent:
        # the race docs/ros-interface.md names; the reply waits for its
        # reader, so it is never lost.)
        res = done(c.call_async(Trigger.Request()), timeout=10.0)
        times.append(time.time() - t0)
        expect(res is not None and res.message, "empty answer")
        me.destroy_client(c)
    seen["reset_stop_s"] = times

    # 3. Sets valid only together.
    c0, r0 = (v.double_value for v in get("clearance_m", "release_m"))
    seen["margins"] = [c0, r0]
    c1, r1 = r0 + 0.005, r0 + 0.02
    res = done(pc.set_parameters_atomically([Parameter("clearance_m", Parameter.Type.DOUBLE, c1),
                                             Parameter("release_m", Parameter.Type.DOUBLE, r1)])).result
    seen["atomic"] = [res.successful, res.reason]
    expect(res.successful, f"atomic set refused: {res.reason}")
    expect([v.double_value for v in get("clearance_m", "release_m")] == [c1, r1], "atomic set not applied")
    c2, r2 = r1 + 0.005, r1 + 0.02
    good = os.path.join(tmp, "good.yaml")
    with open(good, "w") as f:
        f.write(f"/workcell_guard:\n  ros__parameters:\n    clearance_m: {c2}\n    release_m: {r2}\n")
    res = done(pc.load_parameter_file(good)).results
    seen["file"] = [[x.successful, x.reason] for x in res]
    expect(all(x.successful for x in res), f"file refused: {seen['file']}")
    expect([v.double_value for v in get("clearance_m", "release_m")] == [c2, r2], "file not applied")
    bad = os.path.join(tmp, "bad.yaml")
    with open(bad, "w") as f:
        f.write(f"/workcell_guard:\n  ros__parameters:\n    rate_hz: 250.0\n    release_m: {c2 / 2}\n")
    res = done(pc.load_parameter_file(bad)).results
    seen["bad_file"] = [[x.successful, x.reason] for x in res]
    expect(not any(x.successful for x in res), f"part of a bad file taken: {seen['bad_file']}")
    expect(get("rate_hz")[0].double_value == 500.0, "a bad file changed rate_hz")

    # 4. NaN and deletion, told apart.
    r = set_(Parameter("clearance_m", Parameter.Type.DOUBLE, float("nan")))
    seen["nan"] = r[0].reason
    expect(not r[0].successful and "finite" in r[0].reason, f"NaN: {r[0].reason}")
    from rcl_interfaces.msg import Parameter as RawParameter
    req = RawParameter(name="clearance_m", value=ParameterValue(type=ParameterType.PARAMETER_NOT_SET))
    r = done(pc.set_parameters([req])).results
    seen["delete"] = r[0].reason
    expect(not r[0].successful and "deleted" in r[0].reason, f"deletion: {r[0].reason}")

    # 5. No hidden /clock subscription.
    subs = me.get_subscriptions_info_by_topic("/clock")
    seen["clock_subscriptions"] = [str(s.topic_type) for s in subs]
    expect(not subs, f"/clock subscribed with use_sim_time false: {seen['clock_subscriptions']}")
    me.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
