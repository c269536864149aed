#!/usr/bin/env python3
"""Latency of the workcell_guard node over loopback DDS, beside the bare
DDS round trip, measured in the same run (benches/ros_latency.rs starts
this inside its own network namespace; Cyclone is configured for
loopback, the Rust processes get ROS_LOCALHOST_ONLY=1).

For each target in turn (the echo, then the node) this peer publishes a
`sensor_msgs/JointState` for arm_right and waits, polling, for the next
`std_msgs/Bool` on arm_right/stop (blocked in a Cyclone wait set):
  - echo: a ros2-client process on the node's DDS stack and QoS that
    answers every joint state with a Bool at once (the bare round trip);
  - node: workcell_guard with cycle_on_joint_state, which maps the joint
    state, runs a full guard cycle for both arms and publishes the stops.
Prints p50/p99 (µs) of both and of the difference, as JSON on the last line.
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

RIGHT = ["j1", "j2", "j3", "j4", "j5", "j6", "j7", "finger_a_joint"]
LEFT = ["shoulder_pan", "shoulder_lift", "elbow", "wrist_1", "wrist_2", "wrist_3", "finger_left"]


def percentile(xs, p):
    s = sorted(xs)
    k = min(len(s) - 1, max(0, int(round(p / 100.0 * (len(s) - 1)))))
    return s[k]


def measure(cmd, env, trials, warmup, domain):
    import ros_types as t
    from cyclonedds.domain import DomainParticipant
    from cyclonedds.pub import DataWriter
    from cyclonedds.sub import DataReader
    from cyclonedds.topic import Topic

    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    dp = DomainParticipant(domain)
    qjs, qstop = t.QOS_SENSOR, t.QOS_LATCHED
    js_r = DataWriter(dp, Topic(dp, "rt/arm_right/joint_states", t.JointState, qos=qjs), qos=qjs)
    js_l = DataWriter(dp, Topic(dp, "rt/arm_left/joint_states", t.JointState, qos=qjs), qos=qjs)
    stop = DataReader(dp, Topic(dp, "rt/arm_right/stop", t.Bool, qos=qstop), qos=qstop)
    # Wait blocked in Cyclone (not spinning in Python), leaving the CPU to
    # the process measured: this machine has two cores.
    from cyclonedds.core import InstanceState, ReadCondition, SampleState, ViewState, WaitSet
    from cyclonedds.util import duration

    ws = WaitSet(dp)
    ws.attach(ReadCondition(stop, SampleState.Any | ViewState.Any | InstanceState.Any))
    q_r = [-1.5, 1.2, 0.0, -0.3, 0.0, 0.0, 0.0, 0.0]
    q_l = [1.5, 0.7, 1.1, 0.0, 0.0, 0.0, 0.02]

    def js(names, q):
        return t.JointState(header=t.Header(stamp=t.stamp(time.time()), frame_id=""), name=names, position=q, velocity=[], effort=[])

    def trial(timeout=0.5, left=False):
        if left:
            # The other arm must be known (and fresh within the watchdog) for
            # the right arm to be cleared; its cycle is let finish first, so
            # that only the right arm's joint state is timed.
            js_l.write(js(LEFT, q_l))
            time.sleep(0.003)
        stop.take(N=100)
        msg = js(RIGHT, q_r)
        t0 = time.perf_counter()
        js_r.write(msg)
        end = t0 + timeout
        while True:
            got = stop.take(N=1)
            now = time.perf_counter()
            if got:
                return now - t0
            if now > end:
                return None
            ws.wait(duration(microseconds=int((end - now) * 1e6) + 1))

    # Discovery: until answers come back.
    deadline = time.time() + 30
    while trial(0.05, left=True) is None:
        if time.time() > deadline or proc.poll() is not None:
            proc.kill()
            raise SystemExit(f"no answer from {cmd[0]}: {proc.stderr.read().decode()[-2000:]}")
    out = []
    lost = 0
    for k in range(warmup + trials):
        dt = trial(left=(k % 50 == 0))
        time.sleep(0.002)
        if dt is None:
            lost += 1
            continue
        if k >= warmup:
            out.append(dt * 1e6)
    proc.send_signal(2)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
    del stop, js_r, js_l, dp
    return out, lost


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--echo", required=True, help="the echo command line")
    ap.add_argument("--node", required=True)
    ap.add_argument("--params", required=True)
    ap.add_argument("--trials", type=int, default=2000)
    a = ap.parse_args()
    import ros_types

    domain = 23
    env = ros_types.loopback(tempfile.mkdtemp(prefix="wg_lat_"), domain, "error,rustdds=off")
    node_cmd = [a.node, "--ros-args", "--params-file", a.params, "-p", "cycle_on_joint_state:=true",
                "-p", "rate_hz:=1.0", "-p", "diagnostics_hz:=1.0", "-p", "markers_hz:=0.0", "-p", "watchdog_s:=10.0"]
    res = {}
    # Interleave rounds so that drifts of a noisy machine hit both alike.
    rounds = 4
    echo, node = [], []
    lost = {"echo": 0, "node": 0}
    for r in range(rounds):
        e, le = measure(shlex.split(a.echo), env, a.trials // rounds, 50, domain)
        n, ln = measure(node_cmd, env, a.trials // rounds, 50, domain)
        echo += e
        node += n
        lost["echo"] += le
        lost["node"] += ln
    for name, xs in (("echo", echo), ("node", node)):
        res[name] = {"trials": len(xs), "p50_us": percentile(xs, 50), "p99_us": percentile(xs, 99)}
    res["added_p50_us"] = res["node"]["p50_us"] - res["echo"]["p50_us"]
    res["added_p99_us"] = res["node"]["p99_us"] - res["echo"]["p99_us"]
    res["lost"] = lost
    print(f"bare DDS round trip (echo): p50 {res['echo']['p50_us']:.0f} µs, p99 {res['echo']['p99_us']:.0f} µs over {len(echo)} trials")
    print(f"joint state -> stop (node): p50 {res['node']['p50_us']:.0f} µs, p99 {res['node']['p99_us']:.0f} µs over {len(node)} trials")
    print(f"added by the node: p50 {res['added_p50_us']:.0f} µs, p99 {res['added_p99_us']:.0f} µs (goal: p99 <= 200 µs); lost {lost}")
    print(json.dumps(res))


if __name__ == "__main__":
    main()
