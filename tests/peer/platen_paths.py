#!/usr/bin/env python3
"""End-to-end peer for platen units on crossing paths (config/platen_crossing.yaml).

Run only inside a network namespace of its own (tests/ros_e2e.rs does
`unshare -n` and brings up loopback only); Cyclone is configured for
loopback too, and the node is started here with ROS_LOCALHOST_ONLY=1.

It starts the node on the sample cell of two movers, then, as their
drivers would, on Eclipse Cyclone DDS:
  1. reports both units' poses until the node's diagnostics name them;
  2. sends two bad path requests (too fast; naming the other unit) and
     sees each REFUSED with its reason;
  3. asks both units for paths that cross at the surface's middle, at the
     same time, same speed, same distance from the crossing: unguarded they
     would collide;
  4. drives each unit along its path as far as its latest grant on
     <unit>/grant allows (braking at 2 m/s^2 to stop at the grant's end,
     backing along its path when told to), reporting poses at 100 Hz;
  5. checks every 10 ms that the two squares never overlap, and that both
     reach their path's end.
Exits non-zero, saying why, on the first failed expectation; writes every
answer and both units' arrival times to --out (JSON).
"""

import json
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

HALF = 0.06
SPEED = 0.3
DECEL = 2.0
UNITS = {"east_west": [(0.15, 0.5), (0.85, 0.5)], "north_south": [(0.5, 0.15), (0.5, 0.85)]}


class Fail(Exception):
    pass


def expect(cond, what):
    if not cond:
        raise Fail(what)


class Follower:
    def __init__(self, pts):
        self.pts = pts
        self.total = math.dist(pts[0], pts[1])
        self.s = 0.0
        self.v = 0.0
        self.goal_s = 0.0

    def pose(self):
        f = self.s / self.total
        (x0, y0), (x1, y1) = self.pts
        return (x0 + f * (x1 - x0), y0 + f * (y1 - y0))

    def step(self, dt):
        d = self.goal_s - self.s
        want = math.copysign(min(SPEED, math.sqrt(2 * DECEL * abs(d))), d)
        self.v += max(-DECEL * dt, min(DECEL * dt, want - self.v))
        s = self.s + self.v * dt
        if (self.v > 0 and s >= self.goal_s) or (self.v < 0 and s <= self.goal_s):
            self.s, self.v = self.goal_s, 0.0
        else:
            self.s = s


def main():
    import ros_types as t

    a = t.peer_args(workcell=True)
    domain = 23
    node, node_log = t.start_node(a, domain, "wg_paths_", ["-p", f"workcell_file:={a.workcell}"])
    _dp, writer, reader = t.endpoints(domain)  # the participant lives as long as the run
    poses = {u: writer(f"rt/{u}/pose", t.PoseStamped, t.QOS_SENSOR) for u in UNITS}
    requests = {u: writer(f"rt/{u}/path_request", t.PlatenPathRequest, t.QOS_RELIABLE) for u in UNITS}
    grants = {u: reader(f"rt/{u}/grant", t.PlatenGrant, t.QOS_RELIABLE) for u in UNITS}
    diag = reader("rt/diagnostics", t.DiagnosticArray, t.QOS_RELIABLE)
    units = {u: Follower(p) for u, p in UNITS.items()}
    log = {"answers": [], "arrived_s": {}, "least_gap_m": 1.0, "ok": False}
    statuses = {}
    t0 = time.time()

    def publish_poses():
        now = time.time()
        for u, f in units.items():
            x, y = f.pose()
            poses[u].write(t.PoseStamped(header=t.Header(stamp=t.stamp(now), frame_id="surface"),
                                         pose=t.Pose(position=t.Point(x=x, y=y, z=0.0),
                                                     orientation=t.Quaternion(z=0.0, w=1.0))))

    def take_answers():
        got = []
        for u, r in grants.items():
            for g in r.take(N=50):
                if type(g).__name__ == "InvalidSample":
                    continue
                entry = {"unit": u, "t": time.time() - t0, "request_id": g.request_id, "result": g.result,
                         "fraction": g.fraction, "blocker": g.blocker, "reason": g.reason}
                log["answers"].append(entry)
                got.append((u, g))
        return got

    def ticked(seconds, until=None):
        """Publishes poses and reads diagnostics for `seconds`, or until
        `until()` holds (then True)."""
        end = time.time() + seconds
        while time.time() < end:
            expect(node.poll() is None, f"the node died (exit {node.poll()})")
            publish_poses()
            for d in diag.take(N=50):
                if type(d).__name__ != "InvalidSample":
                    for s in d.status:
                        statuses[s.name] = s.message
            if until is not None and until():
                return True
            time.sleep(0.01)
        return False

    def tick(seconds, until=None, what="condition"):
        if not ticked(seconds, until) and until is not None:
            raise Fail(f"timed out waiting for {what}")

    def request(u, rid, speed, name=None):
        (x, y) = UNITS[u][1]
        requests[u].write(t.PlatenPathRequest(header=t.Header(stamp=t.stamp(time.time())),
                                              unit=u if name is None else name, request_id=rid,
                                              waypoints=[t.Pose2D(x=x, y=y, theta=0.0)], speed_mps=speed))

    try:
        tick(20, until=lambda: all(any(u in n for n in statuses) for u in UNITS), what="diagnostics naming both")
        # Bad requests: too fast, and naming the other unit.
        refusals = {}

        def refused():
            for u, g in take_answers():
                if g.result == 3:
                    refusals[g.request_id] = g.reason
            return 91 in refusals and 92 in refusals

        # Sent again until answered: the node's readers may match these
        # writers after the diagnostics arrive, and a volatile request
        # written before that is not delivered.
        for _ in range(10):
            request("east_west", 91, 5.0)
            request("north_south", 92, SPEED, name="east_west")
            if ticked(0.5, until=refused):
                break
        else:
            raise Fail("timed out waiting for both bad path requests refused")
        expect("speed" in refusals[91], f"too fast: {refusals[91]!r}")
        expect("another unit" in refusals[92], f"wrong unit: {refusals[92]!r}")
        # The crossing paths, asked for at once.
        for u in UNITS:
            request(u, 1, SPEED)
        dt = 0.01
        end = time.time() + 30
        while len(log["arrived_s"]) < len(UNITS):
            expect(time.time() < end, f"not both at their paths' ends within 30 s: {log['arrived_s']}")
            for u, g in take_answers():
                if g.request_id != 1:
                    continue
                expect(g.result in (0, 1), f"{u}: path answered {g.result} ({g.reason!r})")
                units[u].goal_s = units[u].total if g.result == 0 else g.fraction * units[u].total
            for u, f in units.items():
                f.step(dt)
                if u not in log["arrived_s"] and f.s >= f.total - 1e-9:
                    log["arrived_s"][u] = time.time() - t0
            (ax, ay), (bx, by) = units["east_west"].pose(), units["north_south"].pose()
            gap = max(abs(ax - bx), abs(ay - by)) - 2 * HALF
            log["least_gap_m"] = min(log["least_gap_m"], gap)
            expect(gap > 0.0, f"the units overlap: {gap:.4f} m at {ax:.3f},{ay:.3f} / {bx:.3f},{by:.3f}")
            tick(dt)
        log["ok"] = True
    except Fail as e:
        log["failure"] = str(e)
    finally:
        t.stop_and_save(node, a.out, log)
    t.exit_on_failure(log, node_log)
    print("platen paths: all expectations met;", json.dumps(log["arrived_s"]), "least gap", log["least_gap_m"])


if __name__ == "__main__":
    main()
