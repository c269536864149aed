#!/usr/bin/env python3
"""End-to-end peer for a cell of platen units alone (config/platen_cell.yaml).

Run only inside a network namespace of its own (tests/ros_e2e.rs does
`unshare -n` and brings up loopback only); Cyclone is configured for
loopback too, and the node is started here with ROS_LOCALHOST_ONLY=1.

It starts the node on the sample cell of movers (no manipulator), then, as
the units' drivers would, on Eclipse Cyclone DDS:
  1. reports every unit's pose and sees the node's diagnostics name them;
  2. asks for `slider` to slide 80 mm along the diagonal cord of `corded`,
     3 mm from its surface: granted in full;
  3. drives it there (poses along the way) and sees it arrive (diagnostics);
  4. asks for it to move 6 mm towards the cord: granted only part of the
     way, `corded` named as the blocker;
  5. a late-joining reader of the slider's grant topic gets nothing older
     than what it asked for (volatile answers are not replayed).
Exits non-zero, saying why, on the first failed expectation; writes the
answers it got to --out (JSON).
"""

import json
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

UNITS = {"corded": (0.5, 0.5, 0.0), "slider": (0.2276, 0.1724, math.pi / 4), "shuttle": (0.1, 0.5, 0.0)}
ALONG = (math.sqrt(0.5), math.sqrt(0.5))


class Fail(Exception):
    pass


def expect(cond, what):
    if not cond:
        raise Fail(what)


def main():
    import ros_types as t

    a = t.peer_args(workcell=True)
    from cyclonedds.domain import DomainParticipant
    from cyclonedds.pub import DataWriter
    from cyclonedds.sub import DataReader
    from cyclonedds.topic import Topic

    domain = 19
    node, node_log = t.start_node(a, domain, "wg_platen_", ["-p", f"workcell_file:={a.workcell}"])
    dp = DomainParticipant(domain)

    def topic(name, typ, qos):
        return Topic(dp, name, typ, qos=qos)

    poses = {u: DataWriter(dp, topic(f"rt/{u}/pose", t.PoseStamped, t.QOS_SENSOR), qos=t.QOS_SENSOR) for u in UNITS}
    grant_topic = topic("rt/slider/grant", t.PlatenGrant, t.QOS_RELIABLE)
    request = DataWriter(dp, topic("rt/slider/move_request", t.PlatenMoveRequest, t.QOS_RELIABLE), qos=t.QOS_RELIABLE)
    grants = DataReader(dp, grant_topic, qos=t.QOS_RELIABLE)
    diag = DataReader(dp, topic("rt/diagnostics", t.DiagnosticArray, t.QOS_RELIABLE), qos=t.QOS_RELIABLE)
    at = dict(UNITS)
    statuses = {}
    log = {"answers": [], "ok": False}

    def tick(seconds, until=None, what="condition"):
        end = time.time() + seconds
        while time.time() < end:
            expect(node.poll() is None, f"the node died (exit {node.poll()})")
            now = time.time()
            for u, (x, y, th) in at.items():
                poses[u].write(t.PoseStamped(header=t.Header(stamp=t.stamp(now), frame_id="surface"),
                                             pose=t.Pose(position=t.Point(x=x, y=y, z=0.0),
                                                         orientation=t.Quaternion(z=math.sin(th / 2), w=math.cos(th / 2)))))
            for d in diag.take(N=50):
                if type(d).__name__ == "InvalidSample":
                    continue
                for s in d.status:
                    statuses[s.name] = {kv.key: kv.value for kv in s.values} | {"message": s.message}
            if until is not None and until():
                return
            time.sleep(0.01)
        if until is not None:
            raise Fail(f"timed out waiting for {what}")

    def ask(rid, target):
        got = []

        def answered():
            got.extend(g for g in grants.take(N=10) if type(g).__name__ != "InvalidSample" and g.request_id == rid)
            return bool(got)

        deadline = time.time() + 10
        while not got and time.time() < deadline:
            request.write(t.PlatenMoveRequest(header=t.Header(stamp=t.stamp(time.time())), request_id=rid,
                                              target=t.Pose2D(x=target[0], y=target[1], theta=target[2])))
            try:
                tick(1.0, until=answered, what=f"an answer to request {rid}")
            except Fail:
                pass
        expect(got, f"no answer to request {rid}")
        g = got[0]
        log["answers"].append({"request_id": rid, "result": g.result, "goal": [g.goal.x, g.goal.y, g.goal.theta],
                               "fraction": g.fraction, "blocker": g.blocker, "reason": g.reason})
        return g

    def named():
        return all(any(u in name for name in statuses) for u in UNITS)

    try:
        tick(20, until=named, what="diagnostics naming every unit")
        x, y, th = at["slider"]
        goal = (x + 0.08 * ALONG[0], y + 0.08 * ALONG[1], th)
        g = ask(1, goal)
        expect(g.result == 0, f"sliding along the cord with 3 mm to spare: result {g.result} ({g.blocker!r} {g.reason!r})")
        # Drive it there at 0.2 m/s.
        steps = 40
        for k in range(1, steps + 1):
            f = k / steps
            at["slider"] = (x + f * (goal[0] - x), y + f * (goal[1] - y), th)
            tick(0.02)
        tick(1.0)
        x, y, th = at["slider"]
        towards = (x - 0.006 * ALONG[0], y + 0.006 * ALONG[1], th)
        g = ask(2, towards)
        expect(g.result == 1, f"into the cord: expected PARTIAL, got {g.result} ({g.reason!r})")
        expect(g.blocker == "corded", f"blocker {g.blocker!r}, expected the corded unit")
        expect(0.0 < g.fraction < 0.5, f"fraction {g.fraction}: 3 mm of the 6 mm are clear")
        # A late joiner hears no replay of the answers (volatile topic).
        late = DataReader(dp, grant_topic, qos=t.QOS_RELIABLE)
        tick(1.0)
        old = [s for s in late.take(N=10) if type(s).__name__ != "InvalidSample"]
        expect(not old, f"a late joiner got {len(old)} old answers")
        log["statuses"] = statuses
        log["ok"] = True
    except Fail as e:
        log["failure"] = str(e)
    finally:
        t.stop_and_save(node, a.out, log)
    t.exit_on_failure(log, node_log)
    print("platen cell: all expectations met;", json.dumps(log["answers"]))


if __name__ == "__main__":
    main()
