#!/usr/bin/env python3
"""Robustness peer for the workcell_guard node, on Eclipse Cyclone DDS: the
defects a user met from outside, each tried again over the wire.

Run only inside a network namespace of its own (tests/ros_robustness.rs does
`unshare -n` and brings up loopback only); Cyclone is configured for
loopback too, and the node is started with ROS_LOCALHOST_ONLY=1.

With the node running (fault injection on: a joint state whose frame_id is
`inject-panic` makes it panic):
  1. an empty JointState as arm_right's first message, then two empty ones
     after good ones, a duplicate then an empty one, an unknown joint then
     an empty one: the node lives, arm_right stops with the reason named,
     arm_left is not stopped;
  2. every refusal class (NaN, stamp in the future, stamp going backwards,
     unknown joint, length mismatch, duplicate joint, a mimic joint off its
     leader) is named in every arm diagnostic while it lasts; a mimic joint
     that follows its leader is taken;
  3. one sphere marker per sphere of the model;
  4. a physically impossible jump (0.5 rad in 10 ms): a stop within a few
     cycles naming it, and the longest cycle (the cycle budget) printed;
  5. a late transient-local subscriber (its own process): 1.8 s after a
     stop change, and again 7.5 s after it, it is sent a replay of the stop
     writer's history ending with the current stop, and live samples after;
  6. an injected panic: both stops read true on the wire before the node
     ends, and a subscriber created right after it is sent `true` first.
Then a second node: SIGTERM, and a subscriber created right after the
signal is sent `true` first; the node exits 0.
Prints a JSON summary; exits non-zero, saying why, on the first failed
expectation.
"""

import argparse
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from e2e import LEFT, RIGHT, Fail, Peer, expect, valid  # noqa: E402

DOMAIN = 19
PANIC_FRAME = "inject-panic"


def start_node(a, env, log_path):
    env = dict(env, WORKCELL_GUARD_PANIC_ON_FRAME_ID=PANIC_FRAME)
    return subprocess.Popen([a.node, "--ros-args", "--params-file", a.params, "-p", "watchdog_s:=0.15"],
                            env=env, stdout=open(log_path, "w"), stderr=subprocess.STDOUT)


def subscribe_late(topics, seconds):
    """Runs this script as a subscriber of its own (a new process, as
    `ros2 topic echo` started later is: its DDS discovery starts from
    nothing) with a transient-local reader on each stop topic for `seconds`;
    returns a function that waits for it and gives [(t, flag)] per topic."""
    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--late-subscriber", ",".join(topics),
                             "--seconds", str(seconds)], stdout=subprocess.PIPE, text=True)

    def result():
        out, _ = proc.communicate(timeout=seconds + 30)
        expect(proc.returncode == 0, f"the late subscriber failed ({proc.returncode})")
        return json.loads(out.strip().splitlines()[-1])

    return result


def late_subscriber(topics, seconds):
    from cyclonedds.core import Policy, Qos
    from cyclonedds.domain import DomainParticipant
    from cyclonedds.sub import DataReader
    from cyclonedds.topic import Topic
    from cyclonedds.util import duration
    import ros_types as t

    dp = DomainParticipant(DOMAIN)
    qos = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.Durability.TransientLocal,
              Policy.History.KeepLast(1000), Policy.DataRepresentation(use_cdrv0_representation=True))
    readers = [DataReader(dp, Topic(dp, n, t.Bool, qos=qos), qos=qos) for n in topics]
    got = [[] for _ in topics]
    end = time.time() + seconds
    while time.time() < end:
        now = time.time()
        for i, r in enumerate(readers):
            for x in valid(r.take(N=1000)):
                got[i].append((now, bool(x.data)))
        time.sleep(0.002)
    # Leave as `ros2 topic echo` does on Ctrl-C, announcing it: a reader
    # that vanishes unannounced holds back RustDDS's trimming of the
    # writer's history until its lease runs out.
    # (cyclonedds keeps every entity in a registry: dropping the name does
    # not delete it, its own __del__ does, children included.)
    dp.__del__()
    print(json.dumps(got))


def play_while(p, result, seconds):
    """Plays good joint states for `seconds`, then waits for `result`."""
    p.run(seconds)
    return result()


def stream(p, robot, seconds, make, good_other=True):
    """Publishes `make(now)` for `robot` (kwargs for Peer.publish) and good
    states for the other arm at 100 Hz for `seconds`; returns every
    diagnostic (level, message) of `robot` seen meanwhile, from the first
    that arrived after the stream began."""
    name = "workcell_guard: " + ("arm_left" if robot == 0 else "arm_right")
    start = len(p.seen.get(name, []))
    end = time.time() + seconds
    while time.time() < end:
        p.publish(which=(robot,), **make(time.time()))
        if good_other:
            p.publish(which=(1 - robot,), stamp=time.time())
        p.run(0.01, publish=False)
    return p.seen.get(name, [])[start:]


def settle(p, what):
    p.run(30, until=lambda: p.stop[0] is False and p.stop[1] is False, what=what)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--node")
    ap.add_argument("--params")
    ap.add_argument("--spheres", help="arm_left=N,arm_right=M")
    ap.add_argument("--late-subscriber", help="(internal) topics to read as a late subscriber")
    ap.add_argument("--seconds", type=float, default=2.0)
    a = ap.parse_args()
    if a.late_subscriber:
        late_subscriber(a.late_subscriber.split(","), a.seconds)
        return
    spheres = {k + "/spheres": int(v) for k, v in (x.split("=") for x in a.spheres.split(","))}

    tmp = tempfile.mkdtemp(prefix="wg_robust_")
    import ros_types

    env = ros_types.loopback(tmp, DOMAIN, "warn,rustdds=off,ros2_client=error")
    log = os.path.join(tmp, "node.log")
    out = {}
    node = start_node(a, env, log)
    p = Peer(DOMAIN, log)
    p.node = node
    try:
        first_run(p, out, spheres)
        log2 = os.path.join(tmp, "node2.log")
        node2 = start_node(a, env, log2)
        p.node = node2
        p.node_log = log2
        p.node_alive = True
        try:
            sigterm_run(p, out)
        finally:
            if node2.poll() is None:
                node2.kill()
    except Fail as e:
        with open(p.node_log) as f:
            tail = f.read()[-3000:]
        print("FAILED:", e, file=sys.stderr)
        print("node log tail:\n" + tail, file=sys.stderr)
        print(json.dumps(out))
        sys.exit(1)
    finally:
        if node.poll() is None:
            node.kill()
    print(json.dumps(out))


def first_run(p, out, spheres):
    t0 = time.time()
    # 1. An empty message first on arm_right (arm_left good meanwhile).
    seen = stream(p, 1, 1.0, lambda now: dict(stamp=now, names=[], positions=[]))
    expect(p.node.poll() is None, "the node died on an empty first joint state")
    expect(p.stop[1] is True, "arm_right not stopped by an empty first joint state")
    expect(any("of the robot is missing" in m for _, m in seen), f"empty first state not named: {seen[-3:]}")
    settle(p, "both stops false after good states")
    out["start_clear_after_s"] = round(time.time() - t0, 3)
    empty = dict(names=[], positions=[])
    dup = dict(names=["j1", "j1"] + RIGHT["names"][2:])
    unknown = dict(names=RIGHT["names"][:-1] + ["bogus"])
    out["empty_sequences"] = []
    for label, seq in (("two empty", [empty, empty]), ("duplicate, empty", [dup, empty]),
                       ("unknown, empty", [unknown, empty])):
        left_log = len(p.stop_log[0])
        for kw in seq:
            p.publish(which=(1,), stamp=time.time(), **kw)
            p.publish(which=(0,), stamp=time.time())
            p.run(0.01, publish=False)
        # arm_left goes on; arm_right's last word was the refusal.
        end = time.time() + 0.3
        while time.time() < end:
            p.publish(which=(0,), stamp=time.time())
            p.run(0.01, publish=False)
        expect(p.node.poll() is None, f"{label}: the node died")
        expect(p.stop[1] is True, f"{label}: arm_right not stopped")
        expect(all(not f for _, f in p.stop_log[0][left_log:]), f"{label}: arm_left was stopped")
        msg = p.status["workcell_guard: arm_right"].message
        expect("refused" in msg, f"{label}: arm_right's diagnostic does not name the refusal: {msg!r}")
        out["empty_sequences"].append({"sequence": label, "message": msg})
        settle(p, f"both stops false after {label}")

    # 2. Every refusal class named in every diagnostic while it lasts.
    def nan(now):
        q = p.q(1)
        q[0] = float("nan")
        return dict(stamp=now, positions=q)

    left_mimic = LEFT["names"] + ["finger_right"]
    cases = [
        (1, "NaN", nan, "is NaN"),
        (1, "stamp in the future", lambda now: dict(stamp=now + 30.0), "in the future"),
        (1, "stamp going backwards", lambda now: dict(stamp=now - 5.0), "goes backwards"),
        (1, "unknown joint", lambda now: dict(stamp=now, **unknown), "no joint `bogus`"),
        (1, "length mismatch", lambda now: dict(stamp=now, positions=p.q(1)[:-1]), "7 positions"),
        (1, "duplicate joint", lambda now: dict(stamp=now, **dup), "appears twice"),
        (0, "mimic off its leader", lambda now: dict(stamp=now, names=left_mimic, positions=p.q(0) + [0.01]),
         "mimic joint `finger_right`"),
    ]
    out["refusals"] = {}
    for robot, label, make, needle in cases:
        seen = stream(p, robot, 1.5, make)
        # From the first diagnostic after the first refusal took effect.
        named = [m for _, m in seen]
        k = next((i for i, m in enumerate(named) if needle in m), None)
        expect(k is not None and k <= 2, f"{label}: not named early: {named[:4]}")
        rest = named[k:]
        bad = [m for m in rest if needle not in m]
        expect(len(rest) >= 8 and not bad, f"{label}: {len(rest) - len(bad)} of {len(rest)} diagnostics name it; other: {bad[:2]}")
        out["refusals"][label] = {"diagnostics": len(rest), "named": len(rest) - len(bad), "message": rest[-1]}
        expect(p.stop[robot] is True, f"{label}: not stopped")
        settle(p, f"both stops false after {label}")
    # A mimic joint that follows its leader is taken.
    seen = stream(p, 0, 1.0, lambda now: dict(stamp=now, names=left_mimic, positions=p.q(0) + [-p.q(0)[6]]))
    expect(p.stop[0] is False, f"a mimic joint on its leader stopped arm_left: {seen[-2:]}")

    # 3. Markers: one per sphere.
    p.want_markers = True
    p.run(10, until=lambda: len(p.sphere_markers) == 2, what="sphere markers")
    p.want_markers = False
    expect(p.sphere_markers == spheres, f"sphere markers {p.sphere_markers}, spheres {spheres}")
    out["sphere_markers"] = p.sphere_markers

    # 4. An impossible jump: 0.5 rad in 10 ms on arm_right's first joint.
    settle(p, "both clear before the jump")
    p.diag.take(N=100)
    t_jump = time.time()
    p.pan[1] += 0.5
    stops_at = None
    budget = []
    end = time.time() + 1.0
    while time.time() < end:
        p.run(0.01)
        v = p.value("workcell_guard: node", "cycle_time_max_s")
        if v is not None:
            budget.append(float(v))
        if stops_at is None and p.stop[1]:
            stops_at = time.time() - t_jump
    msg = p.status["workcell_guard: arm_right"].message
    expect(stops_at is not None and stops_at < 0.1, f"no stop within 0.1 s of the jump ({stops_at})")
    seen_msgs = [m for _, m in p.seen.get("workcell_guard: arm_right", [])[-15:]]
    expect(any("implausible" in m for m in seen_msgs), f"the jump is not named: {seen_msgs[-3:]}")
    out["jump"] = {"stop_after_s": round(stops_at, 4), "cycle_time_max_s": max(budget) if budget else None}
    expect(budget and max(budget) < 0.004, f"a cycle took {max(budget) if budget else None} s around the jump")
    p.pan[1] -= 0.5
    settle(p, "both clear after the jump")

    # 5. Late joiners. A change: arm_right stopped (NaN), then released.
    stream(p, 1, 0.3, nan)
    settle(p, "released after the NaN")
    t_change = time.time()
    p.run(1.8)
    got = play_while(p, subscribe_late(["rt/arm_right/stop"], 2.0), 2.5)[0]
    expect(got, "the late subscriber got nothing")
    # What it was sent at once (the replay of the writer's history), and
    # then live (the heartbeat).
    burst = [f for (t, f) in got if t <= got[0][0] + 0.05]
    out["late_after_change"] = {"replayed": burst, "then_live": len(got) - len(burst)}
    expect(burst[-1] is False, f"the replay to the late subscriber does not end with the current stop: {got}")
    expect(all(f is False for (_, f) in got[len(burst):]), f"stale samples after the replay: {got}")
    # Later, with no change for 7 s: still a replay ending with the current
    # stop. (How much of the history RustDDS has trimmed by then depends on
    # its 6-s cleaning phase and on every matched reader having
    # acknowledged; it is reported, not asserted.)
    p.run(max(0.0, 7.5 - (time.time() - t_change)))
    got = play_while(p, subscribe_late(["rt/arm_right/stop"], 2.0), 2.5)[0]
    burst = [f for (t, f) in got if t <= got[0][0] + 0.05]
    expect(burst and burst[-1] is False and all(f is False for (_, f) in got[len(burst):]),
           f"the late subscriber's replay does not end with the current stop: {got}")
    out["late_later"] = {"replayed": burst}

    # 6. An injected panic (arm_left's joint state): stops true on the wire.
    p.node_alive = False
    t = p.t
    msg = t.JointState(header=t.Header(stamp=t.stamp(time.time()), frame_id=PANIC_FRAME), name=LEFT["names"],
                       position=p.q(0), velocity=[], effort=[])
    t_inject = time.time()
    p.js[0].write(msg)
    late = subscribe_late(["rt/arm_left/stop", "rt/arm_right/stop"], 2.0)
    p.run(5, until=lambda: p.stop[0] is True and p.stop[1] is True, publish=False,
          what="both stops true after the panic")
    t_true = time.time()
    got = late()
    code = p.node.wait(timeout=10)
    expect(code != 0, "the node exited 0 after a panic")
    expect(all(g and g[0][1] is True for g in got),
           f"a subscriber joining at the panic (sent {t_inject:.4f}, true seen {t_true:.4f}) first got {got}")
    out["panic"] = {"exit_code": code, "late_subscriber": [[f for _, f in g] for g in got]}
    with open(p.node_log) as f:
        log = f.read()
    expect("fault injection" in log and "every stop published true" in log, f"the node's log: {log[-500:]}")


def sigterm_run(p, out):
    p.stop = [None, None]
    settle(p, "both stops false on the second node")
    p.node_alive = False
    p.node.send_signal(signal.SIGTERM)
    late = subscribe_late(["rt/arm_left/stop", "rt/arm_right/stop"], 2.0)
    p.run(5, until=lambda: p.stop[0] is True and p.stop[1] is True, publish=False, what="both stops true after SIGTERM")
    got = late()
    code = p.node.wait(timeout=10)
    expect(code == 0, f"the node exited {code} on SIGTERM")
    expect(all(g and g[0][1] is True for g in got), f"a subscriber created right after SIGTERM first got {got}")
    out["sigterm"] = {"exit_code": code, "late_subscriber": [[f for _, f in g] for g in got]}


if __name__ == "__main__":
    main()
