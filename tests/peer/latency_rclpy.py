#!/usr/bin/env python3
"""Latency of the node as rclpy sees it (ROS 2 Jazzy's client library on
rmw_fastrtps_cpp): a JointState of arm_right published from rclpy, to the
next std_msgs/Bool on arm_right/stop read by rclpy; beside an rclpy echo
(a second rclpy process that answers each joint state with a Bool) in the
same run, the trials alternating one by one between the targets.

Targets: `--node` (the dds build) and, with `--r2r-node`, the r2r build on
rcl, each in a namespace of its own with cycle_on_joint_state and a stop
per joint state (stop_heartbeat_s 0), on the sample cell as
tests/peer/rclpy_typed.py copies it (Float64 speed scaling, no MoveIt display
topic: control_msgs and moveit_msgs have no wheels). Run with the prefix's Python and
environment (scripts/ros2_prefix.sh), inside a network namespace of its own:

  source target/ros2-jazzy/env.sh
  unshare -n sh -c 'ip link set lo up && python tests/peer/latency_rclpy.py \\
      --node target/release/workcell_guard --r2r-node target/r2r/release/workcell_guard'

Prints p50/p99 (µs) of each target, and the JSON on the last line.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rclpy_typed import cell_copy  # noqa: E402

RIGHT = ["j1", "j2", "j3", "j4", "j5", "j6", "j7", "finger_a_joint"]
LEFT = ["shoulder_pan", "shoulder_lift", "elbow", "wrist_1", "wrist_2", "wrist_3", "finger_left"]


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def echo(ns):
    """The rclpy echo: each joint state on <ns>/arm_right/joint_states
    answered at once with a Bool on <ns>/arm_right/stop."""
    import rclpy
    from rclpy.node import Node
    from rclpy.qos import qos_profile_sensor_data, QoSProfile, ReliabilityPolicy, DurabilityPolicy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Bool

    rclpy.init()
    n = Node("echo", namespace=ns)
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    pub = n.create_publisher(Bool, "arm_right/stop", latched)
    n.create_subscription(JointState, "arm_right/joint_states", lambda m: pub.publish(Bool(data=False)),
                          qos_profile_sensor_data)
    rclpy.spin(n)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--node", required=True)
    ap.add_argument("--r2r-node")
    ap.add_argument("--repo", default=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    ap.add_argument("--trials", type=int, default=500)
    ap.add_argument("--echo-ns")
    a = ap.parse_args()
    if a.echo_ns:
        echo(a.echo_ns)
        return 0
    os.environ["ROS_DOMAIN_ID"] = "43"
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    env = dict(os.environ, RUST_LOG="error", ROS_LOCALHOST_ONLY="1")
    # Both transports on the same cell: the sample one with Float64 speed
    # scaling and no MoveIt display topic, which r2r on the wheels can serve.
    params = cell_copy(os.path.join(a.repo, "config"), tempfile.mkdtemp(prefix="wg_lat_rclpy_"))
    node_args = ["--params-file", params, "-p", "cycle_on_joint_state:=true", "-p", "rate_hz:=1.0",
                 "-p", "diagnostics_hz:=1.0", "-p", "markers_hz:=0.0", "-p", "watchdog_s:=10.0",
                 "-p", "stop_heartbeat_s:=0.0"]
    procs = {"echo": [sys.executable, os.path.abspath(__file__), "--node", "-", "--echo-ns", "/echo"],
             "dds": [a.node, "--ros-args", "-r", "__ns:=/dds"] + node_args}
    if a.r2r_node:
        procs["r2r"] = [a.r2r_node, "--ros-args", "-r", "__ns:=/r2r"] + node_args
    running = [subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
               for cmd in procs.values()]
    try:
        res = measure(list(procs), a.trials)
    finally:
        for p in running:
            p.terminate()
        for p in running:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
    for k, v in res.items():
        print("%-5s p50 %7.0f µs  p99 %7.0f µs  (%d trials)" % (k, v["p50_us"], v["p99_us"], v["n"]))
    print(json.dumps(res))
    return 0


def measure(targets, trials):
    import rclpy
    from rclpy.node import Node
    from rclpy.qos import qos_profile_sensor_data, QoSProfile, ReliabilityPolicy, DurabilityPolicy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Bool

    rclpy.init()
    me = Node("latency_peer")
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    got = {}
    pubs = {}
    for t in targets:
        pubs[t] = (me.create_publisher(JointState, "/%s/arm_right/joint_states" % t, qos_profile_sensor_data),
                   me.create_publisher(JointState, "/%s/arm_left/joint_states" % t, qos_profile_sensor_data))
        me.create_subscription(Bool, "/%s/arm_right/stop" % t,
                               lambda m, t=t: got.__setitem__(t, time.perf_counter()), latched)

    def js(names, q):
        m = JointState()
        m.header.stamp = me.get_clock().now().to_msg()
        m.name, m.position = names, q
        return m

    def trial(t, timeout=0.5):
        got.pop(t, None)
        # drain what is already queued
        rclpy.spin_once(me, timeout_sec=0)
        got.pop(t, None)
        t0 = time.perf_counter()
        pubs[t][0].publish(js(RIGHT, [-1.5, 1.2, 0.0, -0.3, 0.0, 0.0, 0.0, 0.0]))
        while time.perf_counter() - t0 < timeout:
            rclpy.spin_once(me, timeout_sec=0.001)
            if t in got:
                return got[t] - t0
        return None

    # Discovery and warm-up: every target answers.
    end = time.time() + 30
    ready = set()
    while time.time() < end and len(ready) < len(targets):
        for t in targets:
            pubs[t][1].publish(js(LEFT, [1.5, 0.7, 1.1, 0.0, 0.0, 0.0, 0.02]))
            if trial(t, 0.1) is not None:
                ready.add(t)
    missing = set(targets) - ready
    if missing:
        raise SystemExit("no answer from %s within 30 s" % ", ".join(sorted(missing)))
    lat = {t: [] for t in targets}
    for k in range(trials + 50):
        for t in targets:
            if k % 50 == 0:
                pubs[t][1].publish(js(LEFT, [1.5, 0.7, 1.1, 0.0, 0.0, 0.0, 0.02]))
            d = trial(t)
            if k >= 50 and d is not None:
                lat[t].append(d * 1e6)
    return {t: {"n": len(v), "p50_us": percentile(v, 50) if v else float("nan"),
                "p99_us": percentile(v, 99) if v else float("nan"), "lost": trials - len(v)} for t, v in lat.items()}


if __name__ == "__main__":
    sys.exit(main())
