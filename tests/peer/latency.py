#!/usr/bin/env python3
"""Latency of the workcell_guard node over loopback DDS, beside the bare
DDS round trip, measured in the same run (benches/ros_latency.rs starts
this inside its own network namespace; Cyclone is configured for
loopback, the Rust processes get ROS_LOCALHOST_ONLY=1).

Both targets run at once and the trials alternate between them, one by
one, so that whatever else the machine does hits both alike:
  - echo: a ros2-client process on the node's DDS stack and QoS that
    answers every joint state on `arm_right/joint_states` with a Bool on
    `arm_right/stop` at once (the bare round trip);
  - node: workcell_guard in namespace /node with cycle_on_joint_state: it
    maps the joint state, decides arm_right (both arms' stopping paths
    posed, arm_right's checks), publishes its stop, then the rest.
A trial publishes a `sensor_msgs/JointState` for arm_right and waits,
blocked in a Cyclone wait set, for the next `std_msgs/Bool` on that
target's `arm_right/stop`. With `--moving`, arm_right's joints swing
(about 0.6 rad/s), so its stopping path is checked at several
configurations; otherwise it holds still. A left-arm state goes to the
node every 50 node trials (its watchdog is set long).

With `--platen`, a trial is a platen move request instead: the peer
reports `mover_a`'s pose, then asks it to move 5 cm (back and forth, so
every request is granted in full) on `mover_a/move_request`, and waits for
the `workcell_guard_msgs/PlatenGrant` answering that request id on
`mover_a/grant`; the echo answers each request with a grant at once. The
node runs at its configured rate (500 Hz) and answers a request as it
arrives.
Prints p50/p99 (µs) of both and of the difference, and the JSON on the
last line.
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


def measure(echo_cmd, node_cmd, env, trials, warmup, domain, moving, platen=False):
    import math

    import ros_types as t
    from cyclonedds.core import InstanceState, ReadCondition, SampleState, ViewState, WaitSet
    from cyclonedds.domain import DomainParticipant
    from cyclonedds.pub import DataWriter
    from cyclonedds.sub import DataReader
    from cyclonedds.topic import Topic
    from cyclonedds.util import duration

    procs = [subprocess.Popen(c, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for c in (echo_cmd, node_cmd)]
    dp = DomainParticipant(domain)
    qjs, qstop = t.QOS_SENSOR, t.QOS_LATCHED

    qrel = t.QOS_RELIABLE

    class Target:
        def __init__(self, prefix):
            self.js = DataWriter(dp, Topic(dp, f"rt{prefix}/arm_right/joint_states", t.JointState, qos=qjs), qos=qjs)
            if platen:
                self.pose = DataWriter(dp, Topic(dp, f"rt{prefix}/mover_a/pose", t.PoseStamped, qos=qjs), qos=qjs)
                req = Topic(dp, f"rt{prefix}/mover_a/move_request", t.PlatenMoveRequest, qos=qrel)
                self.request = DataWriter(dp, req, qos=qrel)
                self.stop = DataReader(dp, Topic(dp, f"rt{prefix}/mover_a/grant", t.PlatenGrant, qos=qrel), qos=qrel)
            else:
                self.stop = DataReader(dp, Topic(dp, f"rt{prefix}/arm_right/stop", t.Bool, qos=qstop), qos=qstop)
            self.rid = 0
            self.at = 0
            self.ws = WaitSet(dp)
            self.ws.attach(ReadCondition(self.stop, SampleState.Any | ViewState.Any | InstanceState.Any))
            self.out = []
            self.lost = 0

    echo, node = Target(""), Target("/node")
    js_l = DataWriter(dp, Topic(dp, "rt/node/arm_left/joint_states", t.JointState, qos=qjs), qos=qjs)
    q_r0 = [-1.5, 1.2, 0.0, -0.3, 0.0, 0.0, 0.0, 0.0]
    q_l = [1.5, 0.7, 1.1, 0.0, 0.0, 0.0, 0.02]
    t_start = time.time()

    def js(names, q):
        return t.JointState(header=t.Header(stamp=t.stamp(time.time()), frame_id=""), name=names, position=q, velocity=[], effort=[])

    def q_right():
        if not moving:
            return q_r0
        s = time.time() - t_start
        return [q + 0.1 * math.sin(6.0 * s + j) for j, q in enumerate(q_r0[:7])] + [0.0]

    def platen_trial(target, timeout):
        # Report the pose reached (the last goal), then ask to go 5 cm on.
        x = 0.2 + 0.05 * target.at
        q = t.Quaternion(z=0.0, w=1.0)
        target.pose.write(t.PoseStamped(header=t.Header(stamp=t.stamp(time.time()), frame_id="surface"),
                                        pose=t.Pose(position=t.Point(x=x, y=0.3, z=0.0), orientation=q)))
        time.sleep(0.003)
        target.stop.take(N=100)
        target.rid += 1
        target.at = 1 - target.at
        req = t.PlatenMoveRequest(header=t.Header(stamp=t.stamp(time.time())), request_id=target.rid,
                                  target=t.Pose2D(x=0.2 + 0.05 * target.at, y=0.3, theta=0.0))
        t0 = time.perf_counter()
        target.request.write(req)
        end = t0 + timeout
        while True:
            got = [g for g in target.stop.take(N=10) if type(g).__name__ != "InvalidSample" and g.request_id == target.rid]
            now = time.perf_counter()
            if got:
                if got[0].result != 0:
                    raise SystemExit(f"request {target.rid} not granted in full: {got[0]}")
                return now - t0
            if now > end:
                target.at = 1 - target.at
                return None
            target.ws.wait(duration(microseconds=int((end - now) * 1e6) + 1))

    def trial(target, timeout=0.5, left=False):
        if platen:
            return platen_trial(target, timeout)
        if left:
            js_l.write(js(LEFT, q_l))
            time.sleep(0.003)
        target.stop.take(N=100)
        msg = js(RIGHT, q_right())
        t0 = time.perf_counter()
        target.js.write(msg)
        end = t0 + timeout
        while True:
            got = target.stop.take(N=1)
            now = time.perf_counter()
            if got:
                return now - t0
            if now > end:
                return None
            target.ws.wait(duration(microseconds=int((end - now) * 1e6) + 1))

    deadline = time.time() + 30
    for target, proc, cmd in ((echo, procs[0], echo_cmd), (node, procs[1], node_cmd)):
        while trial(target, 0.05, left=target is node) is None:
            if time.time() > deadline or proc.poll() is not None:
                for p in procs:
                    p.kill()
                raise SystemExit(f"no answer from {cmd[0]}: {proc.stderr.read().decode()[-2000:]}")
    for k in range(warmup + trials):
        for target in (echo, node) if k % 2 == 0 else (node, echo):
            dt = trial(target, left=(target is node and k % 50 == 0))
            time.sleep(0.002)
            if dt is None:
                target.lost += 1
            elif k >= warmup:
                target.out.append(dt * 1e6)
    for p in procs:
        p.send_signal(2)
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
    res = (echo.out, echo.lost, node.out, node.lost)
    del echo, node, js_l, dp
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--echo", required=True, help="the echo command line")
    ap.add_argument("--node", required=True)
    ap.add_argument("--params", required=True)
    ap.add_argument("--trials", type=int, default=4000, help="per target")
    ap.add_argument("--moving", action="store_true", help="arm_right swings instead of holding still")
    ap.add_argument("--platen", action="store_true", help="platen move request -> grant instead")
    a = ap.parse_args()
    import ros_types

    domain = 23
    env = ros_types.loopback(tempfile.mkdtemp(prefix="wg_lat_"), domain, "error,rustdds=off")
    node_cmd = [a.node, "--ros-args", "-r", "__ns:=/node", "--params-file", a.params, "-p", "cycle_on_joint_state:=true",
                "-p", "rate_hz:=1.0", "-p", "diagnostics_hz:=1.0", "-p", "markers_hz:=0.0", "-p", "watchdog_s:=10.0",
                # A stop per joint state, changed or not: what is timed.
                "-p", "stop_heartbeat_s:=0.0"]
    if a.platen:
        # The configured rate: the unit's pose must stay fresh between cycles.
        node_cmd = [a.node, "--ros-args", "-r", "__ns:=/node", "--params-file", a.params, "-p", "diagnostics_hz:=1.0",
                    "-p", "markers_hz:=0.0", "-p", "watchdog_s:=10.0"]
    echo, le, node, ln = measure(shlex.split(a.echo), node_cmd, env, a.trials, 50, domain, a.moving, a.platen)
    if a.platen:
        res = {"platen": "mover_a move request -> grant"}
        for name, xs in (("echo", echo), ("node", node)):
            res[name] = {"trials": len(xs), "p50_us": percentile(xs, 50), "p99_us": percentile(xs, 99)}
        res["lost"] = {"echo": le, "node": ln}
        print("platen move request -> grant (mover_a, 5 cm moves, granted in full), trials alternating:")
        print(f"  bare DDS round trip (echo): p50 {res['echo']['p50_us']:.0f} µs, p99 {res['echo']['p99_us']:.0f} µs over {len(echo)} trials")
        print(f"  request -> grant (node):    p50 {res['node']['p50_us']:.0f} µs, p99 {res['node']['p99_us']:.0f} µs over {len(node)} trials (goal: p50 <= 500 µs)")
        print(f"  added by the node: p50 {res['node']['p50_us'] - res['echo']['p50_us']:.0f} µs; lost {res['lost']}")
        print(json.dumps(res))
        return
    res = {"arm_right": "moving" if a.moving else "still"}
    for name, xs in (("echo", echo), ("node", node)):
        res[name] = {"trials": len(xs), "p50_us": percentile(xs, 50), "p99_us": percentile(xs, 99)}
    res["added_p50_us"] = res["node"]["p50_us"] - res["echo"]["p50_us"]
    res["added_p99_us"] = res["node"]["p99_us"] - res["echo"]["p99_us"]
    res["lost"] = {"echo": le, "node": ln}
    print(f"arm_right {res['arm_right']}, trials alternating between the two targets:")
    print(f"  bare DDS round trip (echo): p50 {res['echo']['p50_us']:.0f} µs, p99 {res['echo']['p99_us']:.0f} µs over {len(echo)} trials")
    print(f"  joint state -> stop (node): p50 {res['node']['p50_us']:.0f} µs, p99 {res['node']['p99_us']:.0f} µs over {len(node)} trials")
    print(f"  added by the node: p50 {res['added_p50_us']:.0f} µs, p99 {res['added_p99_us']:.0f} µs (goal: p99 <= 200 µs); lost {res['lost']}")
    print(json.dumps(res))


if __name__ == "__main__":
    main()
