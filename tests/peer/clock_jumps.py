#!/usr/bin/env python3
"""Jumps of the clock, tried from outside over DDS: the node runs with
`use_sim_time:=true` and `watchdog_s:=0.15`; this peer publishes `/clock`
(rosgraph_msgs/Clock, as Gazebo and ros2 bag play do) and both arms' joint
states stamped on it at 100 Hz, the simulated time running with the wall
clock from 1000 s. Then:
  - the simulated time skips 5 s ahead (a simulator fast-forwarding), the
    states following it;
  - it goes back 20 s (a simulator reset), the states following it.
Expected for each: both arms stopped within the watchdog, their
diagnostics naming the jump ("the clock jumped forward/back"), and both
running again after warm-up on the new time line; the node never dies.

Then a second node, on wall time, with libfaketime preloaded (Debian's
faketime; the monotonic clock left alone): its wall clock is stepped 5 s
ahead (as a bad NTP step would), this peer's clock and stamps staying
true: both arms stop within the watchdog, named, and stay stopped while
the clocks disagree; stepped back to true time: still stopped, the jump
back named, then running after warm-up.

Run only inside a network namespace of its own (tests/ros_robustness.rs
does `unshare -n` and brings up loopback only); Cyclone is configured for
loopback too. Writes the figures (JSON) to --out.
"""

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from e2e import Fail, expect, valid  # noqa: E402
from faults import NAMES, Q, paced  # noqa: E402

DOMAIN = 29
WATCHDOG = 0.15


class SimCell:
    """The simulated clock, both arms' joint states, stops and diagnostics."""

    def __init__(self, t, writer, reader):
        self.t = t
        self.clock = writer("rt/clock", t.Clock, t.QOS_RELIABLE)
        self.js = [writer(f"rt/{a}/joint_states", t.JointState, t.QOS_SENSOR) for a in ("arm_left", "arm_right")]
        self.stops = [reader(f"rt/{a}/stop", t.Bool, t.QOS_LATCHED) for a in ("arm_left", "arm_right")]
        self.diag = reader("rt/diagnostics", t.DiagnosticArray, t.QOS_RELIABLE)
        self.offset = 1000.0 - time.time()  # simulated time = wall time + offset
        self.stop = [None, None]
        self.status = {}

    def sim_now(self):
        return time.time() + self.offset

    def poll(self):
        for i, r in enumerate(self.stops):
            for s in valid(r.take(N=100)):
                self.stop[i] = s.data
        for a in valid(self.diag.take(N=100)):
            for st in a.status:
                self.status[st.name] = st

    def send(self):
        now = self.sim_now()
        self.write_clock(now)
        for i in (0, 1):
            self.js[i].write(self.t.JointState(header=self.t.Header(stamp=self.t.stamp(now), frame_id=""),
                                               name=NAMES[i], position=Q[i], velocity=[], effort=[]))

    def write_clock(self, now):
        self.clock.write(self.t.Clock(clock=self.t.stamp(now)))

    def run(self, seconds, until=None, what="condition"):
        return paced(self, seconds, until, what)

    def message(self, arm):
        st = self.status.get(f"workcell_guard: {arm}")
        return st.message if st is not None else ""


def jump(cell, name, by, says, figures):
    cell.run(10, until=lambda: cell.stop == [False, False], what=f"both arms running before {name}")
    t0 = time.time()
    cell.offset += by
    t_stop = cell.run(3, until=lambda: cell.stop == [True, True], what=f"both arms stopped by {name}")
    seen = {}

    def named():
        for arm in ("arm_left", "arm_right"):
            if says in cell.message(arm):
                seen[arm] = cell.message(arm)
        return len(seen) == 2

    cell.run(3, until=named, what=f"both diagnostics naming {name} ({says!r}): {cell.message('arm_right')!r}")
    t_go = cell.run(10, until=lambda: cell.stop == [False, False], what=f"both arms running again after {name}")
    figures[name] = {"stop_after_s": round(t_stop - t0, 4), "diagnostic": seen["arm_right"],
                     "running_after_s": round(t_go - t0, 4)}
    print(f"{name}: both stopped after {1e3 * (t_stop - t0):.1f} ms ({seen['arm_right']!r}); "
          f"running again {1e3 * (t_go - t0):.0f} ms after")


FAKETIME = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1"


class WallCell(SimCell):
    """Both arms' joint states stamped with this peer's (true) wall clock."""

    def sim_now(self):
        return time.time()

    def write_clock(self, now):
        pass  # No /clock: the node runs on its own wall clock.


def wall_jumps(a, t, env, tmp, writer, reader, figures):
    expect(os.path.exists(FAKETIME), f"{FAKETIME} is missing (apt-get install faketime)")
    offset_file = os.path.join(tmp, "faketime")
    open(offset_file, "w").write("+0\n")
    fenv = dict(env, LD_PRELOAD=FAKETIME, FAKETIME_TIMESTAMP_FILE=offset_file, FAKETIME_NO_CACHE="1",
                FAKETIME_DONT_FAKE_MONOTONIC="1")
    import subprocess

    log_path = os.path.join(tmp, "node_wall.log")
    node = subprocess.Popen([a.node, "--ros-args", "--params-file", a.params, "-p", f"watchdog_s:={WATCHDOG}"],
                            env=fenv, stdout=open(log_path, "w"), stderr=subprocess.STDOUT)
    try:
        cell = WallCell(t, writer, reader)
        cell.run(20, until=lambda: cell.stop == [False, False], what="both arms running on the wall clock")
        t0 = time.time()
        open(offset_file, "w").write("+5\n")
        t_stop = cell.run(3, until=lambda: cell.stop == [True, True], what="both arms stopped by the step ahead")
        ahead = {}
        cell.run(3, until=lambda: "the clock jumped forward" in cell.message("arm_right") and ahead.setdefault(
            "msg", cell.message("arm_right")) is not None, what="the step ahead named")
        cell.run(1.0)
        expect(cell.stop == [True, True], f"an arm ran while the node's clock was 5 s ahead: {cell.stop}")
        t1 = time.time()
        open(offset_file, "w").write("+0\n")
        back = {}
        cell.run(3, until=lambda: "the clock jumped back" in cell.message("arm_right") and back.setdefault(
            "msg", cell.message("arm_right")) is not None, what="the step back named")
        t_go = cell.run(10, until=lambda: cell.stop == [False, False], what="both arms running after the step back")
        figures["wall clock 5 s ahead"] = {"stop_after_s": round(t_stop - t0, 4), "diagnostic": ahead["msg"]}
        figures["wall clock back to true time"] = {"diagnostic": back["msg"], "running_after_s": round(t_go - t1, 4)}
        print(f"wall clock 5 s ahead: both stopped after {1e3 * (t_stop - t0):.1f} ms ({ahead['msg']!r}), "
              f"stopped while ahead; back: {back['msg']!r}, running {1e3 * (t_go - t1):.0f} ms after")
        expect(node.poll() is None, "the node on the stepped wall clock died")
    except Fail:
        print(open(log_path).read()[-3000:], file=sys.stderr)
        node.kill()
        raise
    t.stop_and_save(node, os.path.join(tmp, "wall.json"), {})


def main():
    import subprocess
    import tempfile

    import ros_types as t

    a = t.peer_args()
    tmp = tempfile.mkdtemp(prefix="wg_clock_")
    env = t.loopback(tmp, DOMAIN, "warn,rustdds=off,ros2_client=error")
    log_path = os.path.join(tmp, "node.log")
    node = subprocess.Popen([a.node, "--ros-args", "--params-file", a.params, "-p", "use_sim_time:=true",
                             "-p", f"watchdog_s:={WATCHDOG}"], env=env, stdout=open(log_path, "w"),
                            stderr=subprocess.STDOUT)
    figures = {}
    try:
        dp, writer, reader = t.endpoints(DOMAIN)
        cell = SimCell(t, writer, reader)
        cell.run(20, until=lambda: cell.stop == [False, False], what="both arms running on simulated time")
        jump(cell, "simulated time 5 s ahead", 5.0, "the clock jumped forward", figures)
        jump(cell, "simulated time 20 s back", -20.0, "the clock jumped back", figures)
        expect(node.poll() is None, "the node died")
        t.stop_and_save(node, os.path.join(tmp, "sim.json"), {})
        wall_jumps(a, t, env, tmp, writer, reader, figures)
    except Fail as e:
        print(f"FAIL: {e}", file=sys.stderr)
        print(open(log_path).read()[-3000:], file=sys.stderr)
        node.kill()
        sys.exit(1)
    with open(a.out, "w") as f:
        json.dump(figures, f)


if __name__ == "__main__":
    main()
