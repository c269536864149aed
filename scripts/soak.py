#!/usr/bin/env python3
"""Soak: the node on a cell of eight arms, each sending joint states at
1 kHz over DDS, for a given time; prints and writes (JSON) the node's
resident memory after warm-up and at the end, its cycle time since start
(p50, p99, p99.99, max), the timer cycles it missed (beside what a
process keeping the same schedule and doing nothing else skipped over the
same time, scripts/tick_probe.py: the machine's share), and the joint
states sent, taken and lost.

Run it only inside a network namespace of its own, loopback up, e.g.
  unshare -n sh -c 'ip link set lo up && python3 scripts/soak.py \\
      --node target/release/workcell_guard --duration 600 --out soak.json'
(tests/ros_robustness.rs runs it for 60 s). Cyclone is configured for
loopback, the node runs with ROS_LOCALHOST_ONLY=1.

The cell: the sample workcell's two arms copied into four bays 3 m apart
(eight arms, distinct topics and priorities, no platen, no obstacles but
the floor), written to a temporary directory. Each arm swings its first
joint by ±0.3 rad at 0.2 Hz, clear of everything. The joint states start
once the node has built its guard and sends diagnostics.
"""

import argparse
import copy
import json
import math
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests", "peer"))

DOMAIN = 31
BAYS = 4
REST = {"arm6": [1.5, 0.7, 1.1, 0.0, 0.0, 0.0, 0.02], "arm7": [-1.5, 1.2, 0.0, -0.3, 0.0, 0.0, 0.0, 0.0]}


def soak_cell(tmp):
    """The eight-arm cell (module text) in `tmp`; returns its path and the
    arms as (name, kind: arm6 or arm7)."""
    import yaml

    base = yaml.safe_load(open(os.path.join(REPO, "config/workcell.yaml")))
    arms, out = [], []
    for bay in range(BAYS):
        y = (bay - (BAYS - 1) / 2) * 3.0
        for m in base["manipulators"]:
            m = copy.deepcopy(m)
            kind = "arm6" if "arm6" in m["urdf"] else "arm7"
            name = f"{m['name']}_{bay}"
            m["name"] = name
            m["urdf"] = os.path.join(REPO, "urdf", os.path.basename(m["urdf"]))
            if isinstance(m.get("spheres"), dict) and "file" in m["spheres"]:
                m["spheres"]["file"] = os.path.join(REPO, "config", m["spheres"]["file"])
            m["base_pose"]["xyz_m"][1] = y
            m["joint_state_topic"] = f"{name}/joint_states"
            m["trajectory_topic"] = f"{name}/planned_trajectory"
            m["priority"] = len(out) + 1
            for k in ("controller_command_topic", "controller_action", "moveit_actions", "speed_scaling_topic",
                      "speed_scaling_type", "display_trajectory_topic"):
                m.pop(k, None)
            out.append(m)
            arms.append((name, kind))
    cell = {
        "cell_frame": base["cell_frame"],
        "margins": base["margins"],
        # Fewer random configurations for the collision matrix: it is built
        # once, before the soak, and the soak is about the cycles after.
        "guard": dict(base["guard"], matrix_samples=1000),
        "voxel_grid": {"origin_m": [-2.0, -BAYS * 1.5 - 0.5, 0.0], "size_m": [4.0, BAYS * 3.0 + 1.0, 2.4],
                       "resolution_m": 0.04, "max_distance_m": 0.3, "outside": "collision"},
        "manipulators": out,
    }
    path = os.path.join(tmp, "soak_cell.yaml")
    yaml.safe_dump(cell, open(path, "w"), sort_keys=False)
    return path, arms


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return None


def main():
    import ros_types as t
    import tick_probe

    ap = argparse.ArgumentParser()
    ap.add_argument("--node", required=True)
    ap.add_argument("--duration", type=float, default=60.0, help="seconds of joint states after warm-up")
    ap.add_argument("--warmup", type=float, default=10.0)
    ap.add_argument("--rate", type=float, default=1000.0, help="joint states per second per arm")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="wg_soak_")
    env = t.loopback(tmp, DOMAIN, "warn,rustdds=off,ros2_client=error")
    cell, arms = soak_cell(tmp)
    names = {"arm6": ["shoulder_pan", "shoulder_lift", "elbow", "wrist_1", "wrist_2", "wrist_3", "finger_left"],
             "arm7": ["j1", "j2", "j3", "j4", "j5", "j6", "j7", "finger_a_joint"]}
    log = os.path.join(tmp, "node.log")
    node = subprocess.Popen([a.node, "--ros-args", "--params-file", os.path.join(REPO, "config/workcell_guard.yaml"),
                             "-p", f"workcell_file:={cell}", "-p", "watchdog_s:=0.25", "-p", "markers_hz:=0"],
                            env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT)
    # The machine's own share of missed ticks, beside the node's: a process
    # keeping the node's schedule and doing nothing else.
    probe_file = os.path.join(tmp, "probe.txt")
    probe = tick_probe.start(probe_file)
    # The joint states stand for other machines' controllers: this harness
    # (one Python process writing 8000 samples a second) must not take the
    # node's core on a small machine, so it yields to the node when both
    # want the CPU (the node was started before, at the default priority).
    os.nice(10)
    dp, writer, reader = t.endpoints(DOMAIN)
    js = [writer(f"rt/{n}/joint_states", t.JointState, t.QOS_SENSOR) for n, _ in arms]
    diag = reader("rt/diagnostics", t.DiagnosticArray, t.QOS_RELIABLE)
    node_status = {}

    def cycle_counts():
        """(cycles, missed cycles) since the node's start, from its last
        diagnostic; (None, None) before one."""
        parts = node_status.get("cycle_time_since_start_s", "").split()
        cycles = int(parts[-2]) if len(parts) >= 10 else None
        missed = int(node_status["missed_cycles"]) if "missed_cycles" in node_status else None
        return cycles, missed

    def poll():
        for d in diag.take(N=100):
            if type(d).__name__ == "InvalidSample":
                continue
            for s in d.status:
                if s.name == "workcell_guard: node":
                    node_status.clear()
                    node_status.update({kv.key: kv.value for kv in s.values})

    # The node is up once it sends diagnostics (the guard is built first).
    up_by = time.time() + 600
    while not node_status and time.time() < up_by:
        poll()
        if node.poll() is not None:
            print(f"FAIL: the node exited with {node.poll()}\n" + open(log).read()[-3000:], file=sys.stderr)
            sys.exit(1)
        time.sleep(0.1)
    if not node_status:
        print("FAIL: no diagnostics from the node in 600 s", file=sys.stderr)
        sys.exit(1)
    msgs = [t.JointState(header=t.Header(), name=names[k], position=list(REST[k]), velocity=[], effort=[])
            for _, k in arms]
    sent = 0
    period = 1.0 / a.rate
    t0 = time.time()
    nxt = t0
    rss_start = None
    at_warmup = None  # (cycles, missed) when the warm-up ended
    probe_at_warmup = (None, None)  # the probe's (ticks, skipped) then
    late_ticks = 0  # this harness's own 1 ms ticks it was late for by a tick or more
    samples = []
    end = t0 + a.warmup + a.duration
    next_poll = t0
    while time.time() < end:
        now = time.time()
        for w, m, (_, k) in zip(js, msgs, arms):
            m.header.stamp = t.stamp(now)
            m.position[0] = REST[k][0] + 0.3 * math.sin(2 * math.pi * 0.2 * (now - t0))
            w.write(m)
            sent += 1
        if now >= next_poll:
            next_poll = now + 1.0
            poll()
            expect_alive = node.poll()
            if expect_alive is not None:
                print(f"FAIL: the node exited with {expect_alive}\n" + open(log).read()[-3000:], file=sys.stderr)
                sys.exit(1)
            rss = rss_kib(node.pid)
            samples.append((round(now - t0, 1), rss))
            if rss_start is None and now - t0 >= a.warmup:
                rss_start = rss
                at_warmup = cycle_counts()
                probe_at_warmup = tick_probe.counts(probe_file)
        nxt += period
        pause = nxt - time.time()
        if pause > 0:
            time.sleep(pause)
        elif pause < -period:
            late_ticks += 1
            if pause < -0.05:
                nxt = time.time()  # fell behind: do not burst to catch up
    time.sleep(1.0)
    poll()
    time.sleep(0.3)
    poll()
    rss_end = rss_kib(node.pid)
    taken = int(node_status.get("joint_states", "0"))
    cyc = node_status.get("cycle_time_since_start_s", "")
    parts = cyc.split()
    q = {parts[i]: float(parts[i + 1]) for i in range(0, 8, 2)} if len(parts) >= 8 else {}
    cycles_end, missed_end = cycle_counts()
    probe_end = tick_probe.counts(probe_file)
    probe.kill()
    probe.wait()

    def diff(end, start):
        return end - start if end is not None and start is not None else None

    result = {
        "robots": len(arms), "rate_hz_per_robot": a.rate, "seconds": a.duration, "warmup_s": a.warmup,
        "rss_after_warmup_kib": rss_start, "rss_end_kib": rss_end,
        "rss_growth_kib": (rss_end - rss_start) if rss_start and rss_end else None,
        "cycle_p50_us": q.get("p50", 0) * 1e6, "cycle_p99_us": q.get("p99", 0) * 1e6,
        "cycle_p9999_us": q.get("p99.99", 0) * 1e6, "cycle_max_us": q.get("max", 0) * 1e6,
        "cycles": cycles_end,
        "missed_cycles": missed_end,
        # The soak proper: from the end of the warm-up on.
        "cycles_after_warmup": diff(cycles_end, at_warmup[0] if at_warmup else None),
        "missed_cycles_after_warmup": diff(missed_end, at_warmup[1] if at_warmup else None),
        "harness_late_ticks": late_ticks,
        # The baseline (scripts/tick_probe.py): what the machine skipped of
        # a schedule like the node's, over the same time.
        "probe_ticks_after_warmup": diff(probe_end[0], probe_at_warmup[0]),
        "probe_skipped_after_warmup": diff(probe_end[1], probe_at_warmup[1]),
        "joint_states_sent": sent, "joint_states_taken": taken, "lost": sent - taken,
        "lost_fraction": (sent - taken) / sent if sent else None,
        "send_rate_achieved_hz": sent / (a.warmup + a.duration) / len(arms),
        "rss_kib_every_s": samples,
    }
    t.stop_and_save(node, a.out, result)
    brief = {k: v for k, v in result.items() if k != "rss_kib_every_s"}
    print(json.dumps(brief, indent=1))


if __name__ == "__main__":
    main()
