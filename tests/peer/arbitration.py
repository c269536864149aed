#!/usr/bin/env python3
"""End-to-end peer for priority arbitration (config/workcell.yaml).

Run only inside a network namespace of its own (tests/ros_e2e.rs does
`unshare -n` and brings up loopback only); Cyclone is configured for
loopback too, and the node is started here with ROS_LOCALHOST_ONLY=1.

It starts the node on the sample cell and, on Eclipse Cyclone DDS, plays
both arms' drivers and executors:
  1. both arms report their joint states at rest, facing away from each
     other, until the node's grants say NO_PLAN for both;
  2. raises arm_right's priority from 10 to 30 through `~/set_priority`
     and puts it back; an unknown robot is refused, named;
  3. each publishes a plan on `<robot>/planned_trajectory` turning it
     across the front of the cell, so that the two cross (arm_left has
     priority 20, arm_right 10);
     each moves along its plan only as far as `<robot>/grant` allows
     (PROCEED up to granted_until, slowing to pause there; HOLD pauses;
     BACK_AWAY goes back along the plan; the stop flag brakes), with
     --obey-scaling no faster than `<robot>/speed_scaling` says (plan time
     runs at that share of real time, as ros2_controllers'
     joint_trajectory_controller scales it), within its first joint's
     deceleration, until both finish,
     arm_left first; every change of each arm's stop flag and speed
     scaling is logged for the Rust test (the higher one never stopped or
     slowed, the lower one's flag never flipping back);
  4. a late-joining reader of `arm_right/grant` gets its latest grant
     (DONE), not an old HOLD.
With --late S, steps 2 and 4 are left out and step 3's plans go out apart:
arm_right's first, arm_left's S seconds later, while arm_right crosses;
arm_right must finish first (arm_left gives way to it).
Exits non-zero, saying why, on the first failed expectation; writes every
published configuration and the grants seen to --out (JSON), from which
the Rust test checks the arms never touched (exact geometry).
"""

import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

ARMS = [
    {"name": "arm_left", "joints": ["shoulder_pan", "shoulder_lift", "elbow", "wrist_1", "wrist_2", "wrist_3", "finger_left"],
     "rest": [0.7, 1.1, 0.0, 0.0, 0.0, 0.02], "from": 1.5, "to": -1.5, "decel": 6.0},
    {"name": "arm_right", "joints": ["j1", "j2", "j3", "j4", "j5", "j6", "j7", "finger_a_joint"],
     "rest": [1.2, 0.0, -0.3, 0.0, 0.0, 0.0, 0.0], "from": -1.5, "to": 1.5, "decel": 5.0},
]
PLAN_S = 2.0
STEP_S = 0.02
DT = 0.004
PROCEED, HOLD, BACK_AWAY, DONE, NO_PLAN = 0, 1, 2, 3, 4


# With --obey-scaling the executors also follow `<robot>/speed_scaling`;
# without, they go at their plans' pace wherever their grants let them (a
# controller with no speed-scaling input), and the lower arm is held.
OBEY_SCALING = "--obey-scaling" in sys.argv
if OBEY_SCALING:
    sys.argv.remove("--obey-scaling")
# With --late S, one round instead of steps 2 to 4: arm_right's plan goes
# out first and arm_left's S seconds later, while arm_right crosses: too
# near to stop short of arm_left's first increment, arm_right goes on and
# arm_left, standing at its plan's start, gives way (give_way_when_caught).
LATE_S = None
if "--late" in sys.argv:
    k = sys.argv.index("--late")
    LATE_S = float(sys.argv[k + 1])
    del sys.argv[k:k + 2]


class Fail(Exception):
    pass


def expect(cond, what):
    if not cond:
        raise Fail(what)


def pan_at(arm, s):
    u = min(max(s / PLAN_S, 0.0), 1.0)
    return arm["from"] + (arm["to"] - arm["from"]) * u * u * (3.0 - 2.0 * u)


def q_at(arm, s):
    return [pan_at(arm, s)] + arm["rest"]


class Executor:
    """An arm's executor: plan time `s` advances at `pace` (plan seconds
    per second), changed within the first joint's deceleration."""

    def __init__(self, arm):
        self.arm, self.s, self.pace = arm, 0.0, 0.0

    def rate(self):
        # Plan seconds per second per second the first joint allows here.
        ds = 1e-3
        w = abs(pan_at(self.arm, self.s + ds) - pan_at(self.arm, self.s)) / ds
        return min(self.arm["decel"] / w, 1e3) if w > 1e-9 else 1e3

    def step(self, grant, stop, scaling, dt):
        """`dt` seconds since its last step, at most 3 DT: it moves in real
        time (its joint states' stamps and positions agree, whether or not
        this process kept its pace), and where this process stalled longer
        it held still for the rest, as a controller that missed its cycles
        holds (it never runs on blind to its commands)."""
        dt = min(dt, 3 * DT)
        b, react = self.rate(), 0.05
        until = grant.granted_until.sec + grant.granted_until.nanosec * 1e-9 if grant else 0.0
        state = grant.state if grant else NO_PLAN
        if stop or state == HOLD:
            want = 0.0
        elif state == BACK_AWAY:
            want = -0.5 if self.s > until else 0.0
        elif state == PROCEED:
            room = max(until - self.s, 0.0)
            want = min(1.0, b * (-react + math.sqrt(react * react + 2.0 * room / b)))
        else:
            want = 1.0
        if OBEY_SCALING:
            want = min(want, max(scaling, 0.0))
        if want < self.pace:
            self.pace = max(self.pace - b * dt, want)
        else:
            self.pace = min(self.pace + b * dt, want)
        s = min(max(self.s + self.pace * dt, 0.0), PLAN_S)
        if state in (PROCEED, HOLD) and s > max(until, self.s):
            # Never past its grant: it stops there (harder than it could:
            # safe, and it sets off again from rest).
            s = max(until, self.s)
            self.pace = 0.0
        self.s = s

    def done(self):
        return self.s >= PLAN_S - 1e-9


def main():
    import ros_types as t

    a = t.peer_args()
    from cyclonedds.domain import DomainParticipant
    from cyclonedds.pub import DataWriter
    from cyclonedds.sub import DataReader
    from cyclonedds.topic import Topic

    domain = 21
    # The joint-state watchdog at 0.15 s, not the cell's 0.05 s: this
    # scenario is about the grants; on a loaded two-core machine (CI runs
    # the DDS scenarios side by side) a 50 ms gap between two joint states
    # stopped both arms for a stale state, which is the watchdog's business
    # (tests/peer/faults.py), not the arbitration's.
    node, node_log = t.start_node(a, domain, "wg_arbitration_", ["-p", "watchdog_s:=0.15"])
    dp = DomainParticipant(domain)
    topics = {}

    def topic(name, typ, qos):
        if name not in topics:
            topics[name] = Topic(dp, name, typ, qos=qos)
        return topics[name]

    js = [DataWriter(dp, topic(f"rt/{m['name']}/joint_states", t.JointState, t.QOS_SENSOR), qos=t.QOS_SENSOR) for m in ARMS]
    plans = [DataWriter(dp, topic(f"rt/{m['name']}/planned_trajectory", t.JointTrajectory, t.QOS_RELIABLE), qos=t.QOS_RELIABLE)
             for m in ARMS]
    grant_readers = [DataReader(dp, topic(f"rt/{m['name']}/grant", t.ManipulatorGrant, t.QOS_LATCHED), qos=t.QOS_LATCHED)
                     for m in ARMS]
    stop_readers = [DataReader(dp, topic(f"rt/{m['name']}/stop", t.Bool, t.QOS_LATCHED), qos=t.QOS_LATCHED) for m in ARMS]
    priority_req = DataWriter(dp, topic("rq/workcell_guard/set_priorityRequest", t.SetPriority_Request, t.QOS_RELIABLE),
                              qos=t.QOS_RELIABLE)
    priority_rep = DataReader(dp, topic("rr/workcell_guard/set_priorityReply", t.SetPriority_Response, t.QOS_RELIABLE),
                              qos=t.QOS_RELIABLE)
    # arm_left's speed scaling is a std_msgs/Float64, arm_right's a
    # control_msgs/SpeedScalingFactor (config/workcell.yaml).
    scaling_readers = [
        DataReader(dp, topic("rt/arm_left/speed_scaling", t.Float64, t.QOS_RELIABLE), qos=t.QOS_RELIABLE),
        DataReader(dp, topic("rt/arm_right/speed_scaling", t.SpeedScalingFactor, t.QOS_LATCHED), qos=t.QOS_LATCHED),
    ]
    ex = [Executor(m) for m in ARMS]
    grants, stops, scalings = [None, None], [True, True], [0.0, 0.0]
    # Per round and arm: [seconds since the plans, value] at each change.
    log = {"samples": [], "grants": [[], []], "finished": [], "stop_changes": [], "scaling_changes": [],
           "grant_changes": [], "ok": False}

    def poll():
        for i in range(2):
            for g in grant_readers[i].take(N=100):
                if type(g).__name__ == "InvalidSample":
                    continue
                grants[i] = g
            for s in stop_readers[i].take(N=100):
                if type(s).__name__ == "InvalidSample":
                    continue
                stops[i] = s.data
            for v in scaling_readers[i].take(N=100):
                if type(v).__name__ == "InvalidSample":
                    continue
                scalings[i] = v.data if i == 0 else v.factor

    def publish(now):
        for i, m in enumerate(ARMS):
            js[i].write(t.JointState(header=t.Header(stamp=t.stamp(now)), name=m["joints"], position=q_at(ex[i].arm, ex[i].s)))

    def note(i, now):
        g = grants[i]
        row = [round(now, 4), g.state, round(g.granted_until.sec + g.granted_until.nanosec * 1e-9, 4), g.held_by,
               bool(stops[i]), round(ex[i].s, 4), g.reason]
        past = log["grants"][i]
        if not past or past[-1][1:5] != row[1:5]:
            past.append(row)

    def round_trip(arms, first, last, delays=(0.0, 0.0)):
        """Publishes `arms`' plans, arm i's `delays[i]` seconds after the
        round starts, and moves each as granted until both finish; `first`
        must finish first, `last`'s grants must name it."""
        held_since = None
        # The plans' points made first: under load, making them between two
        # joint states left a gap past the node's watchdog, and the round
        # began with both arms stopped for a stale joint state.
        points = []
        for m in arms:
            n = int(round(PLAN_S / STEP_S)) + 1
            pts = []
            for k in range(n):
                s = k * STEP_S
                pts.append(t.JointTrajectoryPoint(positions=q_at(m, s), time_from_start=t.Duration(sec=int(s), nanosec=int(round((s % 1) * 1e9)))))
            points.append(pts)
        # At rest, not stopped and at full speed before the plans go out (a
        # stop for a late joint state is not the arbitration's).
        end = time.time() + 10
        while any(stops) or min(scalings) < 1.0:
            expect(time.time() < end, f"not let go at rest before the plans: stops {stops}, scalings {scalings}")
            publish(time.time())
            poll()
            time.sleep(DT)
        for i in range(2):
            ex[i] = Executor(arms[i])
        plan_stamps = [None, None]

        def send_plans(since):
            for i, m in enumerate(arms):
                if plan_stamps[i] is None and since >= delays[i]:
                    # (no joint state here: one stamped just before the
                    # round's own, at the last positions, reads as a jump)
                    plan_stamps[i] = t.stamp(time.time())
                    plans[i].write(t.JointTrajectory(header=t.Header(stamp=plan_stamps[i]), joint_names=m["joints"],
                                                     points=points[i]))
                    log["plan_sent"][i] = round(since, 4)

        log["plan_sent"] = [None, None]
        send_plans(0.0)
        publish(time.time())
        start = time.time()
        finished = [None, None]
        stamps_seen = set()
        next_tick = prev_t = time.time()
        stop_changes, scaling_changes = [[], []], [[], []]
        while time.time() < start + 20 and None in finished:
            expect(node.poll() is None, f"the node died (exit {node.poll()})")
            send_plans(time.time() - start)
            now = time.time()
            poll()
            for i in range(2):
                if plan_stamps[i] is None:
                    continue  # at rest until its plan goes out
                note(i, now - start)
                if not stop_changes[i] or stop_changes[i][-1][1] != bool(stops[i]):
                    stop_changes[i].append([round(now - start, 4), bool(stops[i])])
                if not scaling_changes[i] or abs(scaling_changes[i][-1][1] - scalings[i]) > 1e-9:
                    scaling_changes[i].append([round(now - start, 4), scalings[i]])
                if grants[i].state in (PROCEED, HOLD, BACK_AWAY):
                    stamps_seen.add((grants[i].plan_stamp.sec, grants[i].plan_stamp.nanosec))
                ex[i].step(grants[i], stops[i], scalings[i], now - prev_t)
                if ex[i].done() and finished[i] is None:
                    finished[i] = round(now - start, 3)
            prev_t = now
            # A hold and the stop flag arrive on two topics, in either order:
            # they may disagree for a moment, not for 0.1 s.
            if grants[last].state == HOLD and not stops[last]:
                held_since = held_since if held_since is not None else now
                expect(now - held_since < 0.1, f"{ARMS[last]['name']} held for 0.1 s with its stop flag false")
            else:
                held_since = None
            publish(now)
            log["samples"].append([round(now - start, 4), q_at(ex[0].arm, ex[0].s), q_at(ex[1].arm, ex[1].s)])
            next_tick += DT
            time.sleep(max(0.0, next_tick - time.time()))
        log["finished"].append(finished)
        log["stop_changes"].append(stop_changes)
        log["scaling_changes"].append(scaling_changes)
        names = [m["name"] for m in ARMS]
        expect(None not in finished, f"an arm did not finish within 20 s: {finished}")
        expect(finished[first] < finished[last], f"{names[first]} did not finish first: {finished}")
        expect(stamps_seen == {(s.sec, s.nanosec) for s in plan_stamps}, f"plan stamps in the grants {stamps_seen}")
        yielded = [r for r in log["grants"][last] if r[3] == names[first] and r[1] in (PROCEED, HOLD, BACK_AWAY)]
        expect(yielded, f"{names[last]}'s grant never named {names[first]} as the robot it yields to")
        log["grant_changes"].append(log["grants"])
        log["grants"] = [[], []]

    def set_priority(robot, priority):
        w, r = priority_req, priority_rep
        r.take(N=100)
        end = time.time() + 20
        while time.time() < end:  # resend until the service is matched and answers
            w.write(t.SetPriority_Request(robot=robot, priority=priority))
            until = time.time() + 0.5
            while time.time() < until:
                publish(time.time())
                time.sleep(0.01)
                for rep in r.take(N=10):
                    if type(rep).__name__ != "InvalidSample":
                        return rep
        raise Fail("no answer from ~/set_priority")

    try:
        # 1. At rest until both arms have grants, NO_PLAN, no stop and full speed.
        end = time.time() + 15
        while time.time() < end:
            expect(node.poll() is None, f"the node died (exit {node.poll()})")
            publish(time.time())
            poll()
            # (and the speed scalings up to 1: let go, a robot's scaling
            # ramps from 0 at the policy's rate)
            if all(g is not None and g.state == NO_PLAN for g in grants) and not any(stops) and min(scalings) >= 1.0:
                break
            time.sleep(DT)
        expect(all(g is not None for g in grants), "no grant from the node on <robot>/grant")
        expect(all(g.state == NO_PLAN for g in grants), f"grants at rest without plans: {[g.state for g in grants]}")
        expect(min(scalings) >= 1.0, f"speed scalings at rest without plans: {scalings}")
        expect([g.robot for g in grants] == [m["name"] for m in ARMS], f"grants name {[g.robot for g in grants]}")
        if LATE_S is not None:
            # arm_right (10) sets off first; arm_left (20) lets it pass.
            round_trip(ARMS, 1, 0, (LATE_S, 0.0))
        else:
            # 2. Priorities at run time: arm_right's raised (10 -> 30) and put
            # back (its effect on the turns is tested in process: here arm_right
            # cannot go first, arm_left's start stands in its way); an unknown
            # robot is refused, named.
            r = set_priority("arm_right", 30)
            expect(r.success and "10 -> 30" in r.message, f"set_priority refused arm_right: {r.message!r}")
            r = set_priority("arm_right", 10)
            expect(r.success and "30 -> 10" in r.message, f"set_priority did not take arm_right back: {r.message!r}")
            r = set_priority("arm_middle", 5)
            expect(not r.success and "arm_middle" in r.message, f"set_priority took an unknown robot: {r.message!r}")
            log["set_priority_refusal"] = r.message
            # 3. The plans, and moving as granted: arm_left (20) first.
            round_trip(ARMS, 0, 1)
            # 4. A late joiner gets the latest grant.
            for _ in range(50):
                publish(time.time())
                time.sleep(0.01)
            late = DataReader(dp, topics["rt/arm_right/grant"], qos=t.QOS_LATCHED)
            got = []
            end = time.time() + 8
            first = None
            while time.time() < end and not (first and time.time() > first + 1 and got[-1].state == DONE):
                # (A transient-local writer replays its history first, up to its
                # bound: while the late joiner acknowledges it, the writer's
                # window is full and the newest grants are dropped, so the
                # replay may end on an older one. Read until the current one
                # has come, a second at least, 8 s at most.)
                got += [g for g in late.take(N=100) if type(g).__name__ != "InvalidSample"]
                first = first or (time.time() if got else None)
                publish(time.time())
                time.sleep(0.01)
            expect(got, "a late joiner got no grant on arm_right/grant")
            expect(got[-1].state == DONE, f"a late joiner got state {got[-1].state} ({got[-1].reason}), not DONE")
        log["ok"] = True
    except Fail as e:
        log["failure"] = str(e)
    finally:
        # The node's own word on each stop it made (its log), for the Rust
        # test's messages.
        try:
            with open(node_log) as f:
                log["node_stops"] = [ln.strip() for ln in f if "stopped (" in ln][-20:]
        except OSError:
            log["node_stops"] = []
        t.stop_and_save(node, a.out, log)
    for i, m in enumerate(ARMS):
        print(f"{m['name']}: {len(log['grants'][i])} grant changes; the last:", log["grants"][i][-14:])
    t.exit_on_failure(log, node_log)
    print("arbitration: finished at", log["finished"], "s (each round: arm_left, arm_right)")


if __name__ == "__main__":
    main()
