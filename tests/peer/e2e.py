#!/usr/bin/env python3
"""End-to-end peer for the workcell_guard node, on Eclipse Cyclone DDS.

Run only inside a network namespace of its own (tests/ros_e2e.rs does
`unshare -n` and brings up loopback only); Cyclone is configured for
loopback too, and the node is started here with ROS_LOCALHOST_ONLY=1.

It starts the node, then, as the two arms' drivers would:
  1. holds both arms turned away from each other until both stops clear;
  2. turns them towards each other, each arm decelerating at its
     configured maximum once its stop topic says true, until both rest;
  3. parts them (as an operator jogging them back) and waits for both
     stops to clear; reads diagnostics and markers on the way;
  4. sets parameters through the parameter services: a good update takes
     effect (seen in the diagnostics), bad ones are refused with reasons;
  5. sends bad joint states and a trajectory for the wrong robot: each
     stops the right arm with a diagnostic naming the problem;
  6. stops the node and sees every stop latched true.
With --scenario plans it plays planned trajectories instead (see
scenario_plans).
Every published configuration is logged (--out, JSON) for the Rust test,
which checks with exact geometry that the arms never touched.
Exits non-zero, saying why, on the first failed expectation.
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

RATE_HZ = 200.0
START = 1.5  # |pan| at rest, rad: arms turned away from each other
SPEED = 0.5  # rad/s while approaching and parting
ACCEL = 3.0  # rad/s² when speeding up
LEFT = {"names": ["shoulder_pan", "shoulder_lift", "elbow", "wrist_1", "wrist_2", "wrist_3", "finger_left"], "decel": 6.0}
RIGHT = {"names": ["j1", "j2", "j3", "j4", "j5", "j6", "j7", "finger_a_joint"], "decel": 5.0}


class Fail(Exception):
    pass


def valid(samples):
    """The samples that carry data: a writer that goes (a node ending, or
    handing over to fresh stop writers) shows up as one that does not."""
    return [x for x in samples if not type(x).__name__ == "InvalidSample"]


def expect(cond, what):
    if not cond:
        raise Fail(what)


class Peer:
    def __init__(self, domain, node_log):
        from cyclonedds.domain import DomainParticipant
        from cyclonedds.pub import DataWriter
        from cyclonedds.sub import DataReader
        from cyclonedds.topic import Topic
        import ros_types as t

        self.t = t
        self.node_log = node_log
        dp = DomainParticipant(domain)
        self.dp = dp

        def writer(name, typ, qos):
            return DataWriter(dp, Topic(dp, name, typ, qos=qos), qos=qos)

        def reader(name, typ, qos):
            return DataReader(dp, Topic(dp, name, typ, qos=qos), qos=qos)

        self.js = [writer("rt/arm_left/joint_states", t.JointState, t.QOS_SENSOR),
                   writer("rt/arm_right/joint_states", t.JointState, t.QOS_SENSOR)]
        self.traj_right = writer("rt/arm_right/planned_trajectory", t.JointTrajectory, t.QOS_RELIABLE)
        self.stops = [reader("rt/arm_left/stop", t.Bool, t.QOS_LATCHED), reader("rt/arm_right/stop", t.Bool, t.QOS_LATCHED)]
        self.diag = reader("rt/diagnostics", t.DiagnosticArray, t.QOS_RELIABLE)
        self.markers = reader("rt/markers", t.MarkerArray, t.QOS_RELIABLE)
        self.set_req = writer("rq/workcell_guard/set_parametersRequest", t.SetParameters_Request, t.QOS_RELIABLE)
        self.set_rep = reader("rr/workcell_guard/set_parametersReply", t.SetParameters_Response, t.QOS_RELIABLE)
        self.services = {}
        for srv, req, rep in (("reset_stop", t.Trigger_Request, t.Trigger_Response),
                              ("reload", t.Trigger_Request, t.Trigger_Response),
                              ("set_contact", t.SetContact_Request, t.SetContact_Response)):
            self.services[srv] = (writer(f"rq/workcell_guard/{srv}Request", req, t.QOS_RELIABLE),
                                  reader(f"rr/workcell_guard/{srv}Reply", rep, t.QOS_RELIABLE))
        # The right arm's controller, as ros2_control would offer it.
        self.controller = reader("rt/arm_right_controller/joint_trajectory", t.JointTrajectory, t.QOS_RELIABLE)
        self.cancels = reader("rq/arm_right_controller/follow_joint_trajectory/_action/cancel_goalRequest",
                              t.CancelGoal_Request, t.QOS_RELIABLE)
        # joint_trajectory_controller's speed-scaling input: transient local.
        self.speed = reader("rt/arm_right/speed_scaling", t.SpeedScalingFactor, t.QOS_LATCHED)
        self.holds = 0
        self.cancel_count = 0
        self.speeds = []
        self.display = writer("rt/display_planned_path", t.DisplayTrajectory, t.QOS_RELIABLE)
        self.unit_pose = writer("rt/mover_a/pose", t.PoseStamped, t.QOS_SENSOR)
        self.move_req = writer("rt/mover_a/move_request", t.PlatenMoveRequest, t.QOS_RELIABLE)
        self.grant = reader("rt/mover_a/grant", t.PlatenGrant, t.QOS_RELIABLE)

        self.stop = [None, None]  # latest stop flags
        self.stop_log = [[], []]  # (t, flag) on change
        self.status = {}  # latest DiagnosticStatus by name
        self.diag_count = 0
        self.sphere_markers = {}  # ns -> count of SPHERE markers in the latest array that had them
        self.voxel_points = 0
        self.pan = [START, -START]
        self.vel = [0.0, 0.0]
        self.samples = []  # (t, q_left, q_right, stop_left, stop_right)
        self.node_alive = True
        self.last_tick = time.time()
        self.seen = {}  # every (level, message) by status name, in order
        self.want_markers = False
        self.follow = None  # the right arm's plan: (times, j1 positions), played from follow_t0
        self.follow_t0 = 0.0
        self.follow_braked = False
        self.follow_leave_t = None  # plan time where the controller leaves the plan, keeping its speed

    # ---- inputs from the node
    def poll(self):
        now = time.time()
        for i, r in enumerate(self.stops):
            # A writer that goes (the node hands over to fresh stop writers
            # on shutdown) shows up as a sample without data.
            for s in valid(r.take(N=100)):
                if s.data != self.stop[i]:
                    self.stop_log[i].append((now, s.data))
                self.stop[i] = s.data
        for m in valid(self.controller.take(N=100)):
            if not m.joint_names and not m.points:
                self.holds += 1
        for c in valid(self.cancels.take(N=100)):
            if list(c.goal_info.goal_id.uuid) == [0] * 16:
                self.cancel_count += 1
        for v in valid(self.speed.take(N=1000)):
            self.speeds.append(v.factor)
        for a in valid(self.diag.take(N=100)):
            self.diag_count += 1
            for st in a.status:
                self.status[st.name] = st
                self.seen.setdefault(st.name, []).append((st.level, st.message))
        # Markers only when asked for: decoding a cube list of thousands of
        # points in Python takes long enough to starve the joint states.
        for a in valid(self.markers.take(N=20) if self.want_markers else []):
            spheres = {}
            for m in a.markers:
                if m.type == 2 and m.action == 0:
                    spheres[m.ns] = spheres.get(m.ns, 0) + 1
                if m.ns == "cell/occupied_voxels" and m.type == 6:
                    self.voxel_points = len(m.points)
            if spheres:
                self.sphere_markers = spheres

    def value(self, status, key):
        st = self.status.get(status)
        if st is None:
            return None
        for kv in st.values:
            if kv.key == key:
                return kv.value
        return None

    # ---- outputs to the node
    def q(self, i):
        if i == 0:
            return [self.pan[0], 0.7, 1.1, 0.0, 0.0, 0.0, 0.02]
        return [self.pan[1], 1.2, 0.0, -0.3, 0.0, 0.0, 0.0, 0.0]

    def publish(self, which=(0, 1), stamp=None, names=None, positions=None, stamp_now=None):
        t = self.t
        now = stamp if stamp is not None else (stamp_now if stamp_now is not None else time.time())
        for i in which:
            arm = LEFT if i == 0 else RIGHT
            msg = t.JointState(header=t.Header(stamp=t.stamp(now), frame_id=""),
                               name=list(names if names is not None else arm["names"]),
                               position=list(positions if positions is not None else self.q(i)),
                               velocity=[], effort=[])
            self.js[i].write(msg)
        if stamp is None and names is None and positions is None:
            self.samples.append((now, self.q(0), self.q(1), self.stop[0], self.stop[1]))

    def tick(self, dt, target_vel, obey):
        for i in (0, 1):
            decel = (LEFT if i == 0 else RIGHT)["decel"]
            if i == 1 and self.follow is not None:
                # The right arm's controller plays its plan until told to stop;
                # then it brakes along it (one joint moves) and stays braked.
                if obey and self.stop[1]:
                    self.follow_braked = True
                if not self.follow_braked:
                    tt, lt = time.time() - self.follow_t0, self.follow_leave_t
                    if lt is not None and tt > lt:  # where the plan brakes, it keeps its speed
                        x, v = plan_at(self.follow, lt)
                        self.pan[1], self.vel[1] = x + v * (tt - lt), v
                    else:
                        self.pan[1], self.vel[1] = plan_at(self.follow, tt)
                    continue
            if obey and self.stop[i]:
                v = self.vel[i]
                dv = min(abs(v), decel * dt)
                self.vel[i] = v - math.copysign(dv, v)
            else:
                dv = max(-ACCEL * dt, min(ACCEL * dt, target_vel[i] - self.vel[i]))
                self.vel[i] += dv
            self.pan[i] += self.vel[i] * dt

    def run(self, seconds, until=None, target_vel=(0.0, 0.0), obey=True, publish=True, what="condition", goal=None):
        """Plays joint states at RATE_HZ for up to `seconds`; returns when
        `until()` holds (or after `seconds` when there is no condition).
        With `goal` (pans), each arm heads there at up to SPEED, slowing
        down at ACCEL to arrive, instead of keeping `target_vel`."""
        period = 1.0 / RATE_HZ
        end = time.time() + seconds
        nxt = time.time()
        while time.time() < end:
            self.poll()
            if until is not None and until():
                return
            # Move by the time that really passed, so that positions and
            # stamps agree as a real driver's do.
            now = time.time()
            if goal is not None:
                for i, g in enumerate(goal):  # arrived: at rest there
                    if abs(g - self.pan[i]) < 1e-3 and abs(self.vel[i]) < 0.05:
                        self.pan[i], self.vel[i] = g, 0.0
                target_vel = tuple(math.copysign(min(SPEED, math.sqrt(2 * ACCEL * abs(g - x))), g - x)
                                   for g, x in zip(goal, self.pan))
            self.tick(min(now - self.last_tick, 0.05), target_vel, obey)
            self.last_tick = now
            if publish:
                self.publish(stamp_now=now)
            nxt += period
            pause = nxt - time.time()
            if pause > 0:
                time.sleep(pause)
            else:
                nxt = time.time()
            code = self.node.poll()
            expect(not self.node_alive or code is None, f"the node exited with {code} (log: {self.node_log})")
        expect(until is None, f"timed out after {seconds} s waiting for: {what}; {self.state()}")

    def state(self):
        msgs = {k: (v.level, v.message, [(kv.key, kv.value) for kv in v.values]) for k, v in self.status.items()}
        return f"stops {self.stop}, pans {self.pan}, {self.diag_count} diagnostics, latest {msgs}"

    def call(self, srv, req, timeout=30.0, resend_s=0.5):
        w, r = self.services[srv]
        r.take(N=100)
        end = time.time() + timeout
        while time.time() < end:  # resend until the service is matched and answers
            w.write(req)
            until = time.time() + resend_s
            while time.time() < until:
                self.run(0.02)
                for rep in r.take(N=10):
                    return rep
        raise Fail(f"no answer from ~/{srv}")

    def set_parameter(self, name, value):
        t = self.t
        self.set_rep.take(N=100)
        req = t.SetParameters_Request(parameters=[t.Parameter(name=name, value=t.ParameterValue(type=t.PARAMETER_DOUBLE, double_value=value))])
        for _ in range(40):  # until the service is matched and answers
            self.set_req.write(req)
            end = time.time() + 0.25
            while time.time() < end:
                self.run(0.02)
                for r in self.set_rep.take(N=10):
                    expect(len(r.results) == 1, f"set_parameters answered {len(r.results)} results for one parameter")
                    return r.results[0]
        raise Fail(f"no answer from set_parameters for {name}")


def trapezoid(a, b, vmax, amax, dt=0.02):
    """A plan of one joint from a to b: trapezoidal speed (or triangular),
    waypoints every dt, the last exactly b. Returns (times, positions)."""
    d = abs(b - a)
    sgn = 1.0 if b >= a else -1.0
    ta = vmax / amax
    if amax * ta * ta >= d:  # triangle
        ta = math.sqrt(d / amax)
        total, peak = 2 * ta, amax * ta
    else:
        total, peak = 2 * ta + (d - amax * ta * ta) / vmax, vmax

    def at(t):
        if t <= ta:
            return 0.5 * amax * t * t
        if t >= total - ta:
            r = total - t
            return d - 0.5 * amax * r * r
        return 0.5 * amax * ta * ta + peak * (t - ta)

    n = max(1, math.ceil(total / dt))
    times = [min(k * dt, total) for k in range(n + 1)]
    pos = [a + sgn * at(t) for t in times]
    pos[-1] = b
    return times, pos


def plan_at(plan, t):
    """Position and velocity on a plan (linear between waypoints) at t."""
    times, pos = plan
    if t >= times[-1]:
        return pos[-1], 0.0
    if t <= 0.0:
        return pos[0], 0.0
    k = min(len(times) - 2, max(0, next(i for i in range(len(times)) if times[i] > t) - 1))
    h = times[k + 1] - times[k]
    v = (pos[k + 1] - pos[k]) / h
    return pos[k] + v * (t - times[k]), v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--node", required=True)
    ap.add_argument("--params", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--scenario", default="main", choices=["main", "plans"])
    ap.add_argument("--node-arg", action="append", default=[], help="one more argument for the node (after --ros-args)")
    ap.add_argument("--left-pan", type=float, default=0.0)
    ap.add_argument("--short", type=float, default=0.0, help="right j1 where its plan ends short of the left arm")
    ap.add_argument("--near", type=float, default=0.0, help="right j1 where its plan ends nearer, still outside the margin")
    ap.add_argument("--meet", type=float, default=0.0, help="right j1 where its plan would meet the left arm")
    ap.add_argument("--margin-at", type=float, default=0.0, help="right j1 within the clearance margin of the left arm")
    a = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="wg_e2e_")
    import ros_types

    domain = 17
    env = ros_types.loopback(tmp, domain, "warn,rustdds=off,ros2_client=error")
    node_log = os.path.join(tmp, "node.log")
    node = subprocess.Popen([a.node, "--ros-args", "--params-file", a.params, "-p", "watchdog_s:=0.15", *a.node_arg],
                            env=env, stdout=open(node_log, "w"), stderr=subprocess.STDOUT)
    peer = Peer(domain, node_log)
    peer.node = node
    log = {"phases": {}, "ok": False}
    try:
        if a.scenario == "plans":
            scenario_plans(peer, log, a)
        else:
            scenario(peer, log)
        log["ok"] = True
    except Fail as e:
        log["failure"] = str(e)
    finally:
        log["samples"] = peer.samples
        log["stop_log"] = peer.stop_log
        ros_types.stop_and_save(node, a.out, log)
    ros_types.exit_on_failure(log, node_log)
    print("e2e: all expectations met;", json.dumps(log["phases"]))


def scenario(p, log):
    ph = log["phases"]
    # 1. Discovery, warm-up and release: both arms turned away, at rest.
    t0 = time.time()
    p.run(30, until=lambda: p.stop[0] is False and p.stop[1] is False, what="both stops false at the start")
    ph["start_clear_after_s"] = round(time.time() - t0, 3)

    # 2. Approach, obeying the stops.
    t_start = time.time()
    p.run(10, until=lambda: p.stop[1] and p.vel[0] == 0.0 and p.vel[1] == 0.0,
          goal=(0.0, 0.0), obey=True, what="the right arm stopped (stop=true) and both arms at rest")
    expect(p.stop[1] is True, "the right arm's stop is not true")
    first = [t for (t, f) in p.stop_log[1] if f and t > t_start]
    expect(first, "no stop=true for the right arm during the approach")
    ph["right_stop_after_s"] = round(first[0] - t_start, 3)
    ph["rest_pans"] = [round(p.pan[0], 4), round(p.pan[1], 4)]
    # The controller was told to hold and its goals were cancelled; the
    # speed scaling fell to 0 on the way.
    p.run(0.3)
    expect(p.holds >= 1, "no empty JointTrajectory reached the right arm's controller")
    expect(p.cancel_count >= 1, "no cancel of the right arm's FollowJointTrajectory goals")
    # (Its link_1 sits 8.6 cm from the pedestal, so its scaling never
    # reaches 1 with slow_down_m 0.1.)
    expect(p.speeds and max(p.speeds) > 0.5 and min(p.speeds) == 0.0 and all(0.0 <= v <= 1.0 for v in p.speeds),
           f"speed scaling not within 0..1, falling from above 0.5 to 0: {sorted(set(round(v, 2) for v in p.speeds))[:20]}")
    ph["controller"] = {"holds": p.holds, "cancels": p.cancel_count,
                        "speed_scaling_values": len(set(round(v, 3) for v in p.speeds))}
    # Diagnostics said why while it stopped, naming the other arm.
    p.run(0.3)
    said = [m for (lvl, m) in p.seen.get("workcell_guard: arm_right", []) if lvl in (1, 2) and "arm_left" in m]
    expect(said, f"no diagnostic of arm_right named arm_left (saw {sorted(set(m for _, m in p.seen.get('workcell_guard: arm_right', [])))})")
    ph["right_diagnostic"] = said[0]

    # 3. Part (jogged back, ignoring the stops), then rest: both stops clear.
    # The operator undoes the approach in reverse order: the right arm
    # (which came in last, the left standing still) first, then the left.
    # Both at once would not retrace it: from a rest a few centimetres
    # apart, the left gripper swings towards the right hand on the way.
    p.run(10, until=lambda: p.pan[1] <= -START, target_vel=(0.0, -SPEED), obey=False,
          what="the right arm jogged back")
    p.run(10, until=lambda: p.pan[0] >= START, target_vel=(SPEED, 0.0), obey=False,
          what="the left arm jogged back")
    p.pan = [START, -START]
    p.vel = [0.0, 0.0]
    t_part = time.time()
    p.run(10, until=lambda: p.stop[0] is False and p.stop[1] is False, what="both stops false after parting")
    ph["clear_after_parting_s"] = round(time.time() - t_part, 3)

    # Markers: every sphere of both arms, and the cell's voxels.
    p.want_markers = True
    p.run(10, until=lambda: p.voxel_points > 0 and len(p.sphere_markers) == 2, what="sphere and voxel markers")
    p.want_markers = False
    ph["sphere_markers"] = p.sphere_markers
    ph["voxel_points"] = p.voxel_points
    expect(p.sphere_markers.get("arm_left/spheres", 0) > 50 and p.sphere_markers.get("arm_right/spheres", 0) > 50,
           f"too few sphere markers: {p.sphere_markers}")

    # 4. Parameters through the parameter services.
    r = p.set_parameter("watchdog_s", 0.25)
    expect(r.successful, f"watchdog_s = 0.25 refused: {r.reason}")
    p.run(5, until=lambda: "watchdog_s 0.25" in (p.value("workcell_guard: node", "tuning") or ""),
          what="watchdog_s 0.25 in the node's diagnostics")
    r = p.set_parameter("release_m", 0.001)
    expect(not r.successful, "release_m = 0.001 (below clearance_m) was accepted")
    expect("clearance_m" in r.reason, f"release_m refused without naming clearance_m: {r.reason!r}")
    ph["refused_release_m"] = r.reason
    r = p.set_parameter("clearance_m", 0.5)
    expect(not r.successful, "clearance_m = 0.5 was accepted")
    ph["refused_clearance_m"] = r.reason
    r = p.set_parameter("priority_boost_after_s", -1.0)
    expect(not r.successful, "priority_boost_after_s = -1 was accepted")
    r = p.set_parameter("priority_boost_after_s", 5.0)
    expect(r.successful, f"priority_boost_after_s = 5 refused: {r.reason}")
    p.run(5, until=lambda: p.value("workcell_guard: arm_right", "priority boosted") == "no",
          what="`priority boosted: no` in arm_right's diagnostics")
    p.run(0.5)
    tuning = p.value("workcell_guard: node", "tuning") or ""
    expect("release_m 0.02" in tuning and "clearance_m 0.01" in tuning, f"a refused update changed the tuning: {tuning!r}")

    # 5. Bad messages: each stops the right arm and is named; the node keeps running.
    now = time.time
    bad = [
        ("unknown joint", dict(names=RIGHT["names"][:-1] + ["bogus"]), "no joint `bogus`"),
        ("length mismatch", dict(positions=p.q(1)[:-1]), "joint names but 7 positions"),
        ("NaN", dict(positions=[float("nan")] + p.q(1)[1:]), "is NaN"),
        ("future stamp", dict(stamp_fn=lambda: now() + 30.0), "in the future"),
        ("stamp going backwards", dict(stamp_fn=lambda: now() - 5.0), "goes backwards"),
    ]
    ph["bad_messages"] = {}
    for label, kw, needle in bad:
        stamp_fn = kw.pop("stamp_fn", None)
        t_bad = now()

        def send_bad():
            p.publish(which=(1,), stamp=stamp_fn() if stamp_fn else None, **kw)
            p.publish(which=(0,), stamp=None)

        def seen():
            st = p.status.get("workcell_guard: arm_right")
            return p.stop[1] is True and st is not None and needle in st.message and st.level == 2

        end = now() + 5
        while now() < end and not seen():
            send_bad()
            p.run(0.01, publish=False)
        st = p.status.get("workcell_guard: arm_right")
        expect(seen(), f"{label}: right arm not stopped with a diagnostic naming it (stop {p.stop[1]}, message {st.message if st else None!r})")
        ph["bad_messages"][label] = {"message": st.message, "after_s": round(now() - t_bad, 3)}
        p.run(10, until=lambda: p.stop[1] is False, what=f"right stop clears after the {label} stream ends")

    # A trajectory for the left arm sent to the right arm's topic.
    t = p.t
    wrong = t.JointTrajectory(header=t.Header(), joint_names=LEFT["names"],
                              points=[t.JointTrajectoryPoint(positions=[0.0] * 7, velocities=[], accelerations=[], effort=[],
                                                             time_from_start=t.Duration(sec=1))])
    p.traj_right.write(wrong)
    p.run(5, until=lambda: p.stop[1] is True and "arm_left" in p.status.get("workcell_guard: arm_right").message,
          what="right arm stopped for a trajectory naming arm_left's joints")
    ph["bad_messages"]["trajectory for another robot"] = {"message": p.status["workcell_guard: arm_right"].message}
    p.traj_right.write(t.JointTrajectory(header=t.Header(), joint_names=[], points=[]))
    p.run(10, until=lambda: p.stop[1] is False, what="right stop clears after an empty trajectory")
    expect(p.node.poll() is None, "the node died")

    # Services: contacts by name, latched-stop reset, platen move requests, reload.
    r = p.call("set_contact", t.SetContact_Request(body_a="arm_right/hand", body_b="arm_left/finger_left_link", allowed=True))
    expect(r.success and "allowed" in r.message, f"set_contact refused a valid pair: {r.message!r}")
    r = p.call("set_contact", t.SetContact_Request(body_a="arm_right/paw", body_b="platen_table", allowed=True))
    expect(not r.success and "no link `paw`" in r.message, f"set_contact took a bad link: {r.message!r}")
    ph["set_contact_refusal"] = r.message
    r = p.call("reset_stop", t.Trigger_Request())
    expect(r.success and r.message == "no latched stops", f"reset_stop: {r.success} {r.message!r}")
    got = []

    def granted():
        got.extend(p.grant.take(N=10))
        return bool(got)

    now_t = time.time()
    for k in range(5):  # a few poses (sensor QoS: the first may precede discovery)
        p.unit_pose.write(t.PoseStamped(header=t.Header(stamp=t.stamp(time.time()), frame_id="surface"),
                                        pose=t.Pose(position=t.Point(x=0.2, y=0.3, z=0.0))))
        p.run(0.02)
    p.move_req.write(t.PlatenMoveRequest(header=t.Header(stamp=t.stamp(now_t)), request_id=7, target=t.Pose2D(x=0.3, y=0.3, theta=0.0)))
    p.run(5, until=granted, what="a grant for mover_a")
    g = got[0]
    expect(g.request_id == 7 and g.result == 0 and abs(g.goal.x - 0.3) < 1e-9, f"unexpected grant {g}")
    ph["grant"] = {"request_id": g.request_id, "result": g.result, "goal": [g.goal.x, g.goal.y, g.goal.theta]}
    # MoveIt's display_planned_path: the right arm's columns become its plan
    # (the sample cell points arm_right at it); trajectory_start is not read.
    def planned():
        return p.value("workcell_guard: arm_right", "planned_trajectory") or ""

    pts = [t.JointTrajectoryPoint(positions=[0.1 * k] * 9, velocities=[], accelerations=[], effort=[],
                                  time_from_start=t.Duration(sec=k)) for k in range(3)]
    jt = t.JointTrajectory(header=t.Header(), joint_names=RIGHT["names"] + ["rail"], points=pts)
    start = t.RobotState(joint_state=t.JointState(header=t.Header(), name=RIGHT["names"], position=p.q(1), velocity=[], effort=[]))
    disp = t.DisplayTrajectory(model_id="workcell", trajectory=[t.RobotTrajectory(joint_trajectory=jt)], trajectory_start=start)
    end = time.time() + 10
    while time.time() < end and planned() != "3 points, 2.000 s":
        p.display.write(disp)
        p.run(0.2)
    expect(planned() == "3 points, 2.000 s", f"display_planned_path not taken for arm_right: {planned()!r}")
    ph["display_trajectory"] = planned()
    t_reload = time.time()
    # Matched long ago (discovery runs from the start): one request, a long wait.
    r = p.call("reload", t.Trigger_Request(), resend_s=30.0)
    expect(r.success and "reloaded" in r.message, f"reload: {r.success} {r.message!r}")
    ph["reload_s"] = round(time.time() - t_reload, 3)
    p.run(15, until=lambda: p.stop[0] is False and p.stop[1] is False, what="both stops false after the reload")

    # 6. Shutdown leaves every robot stopped (latched).
    p.node_alive = False
    p.node.send_signal(signal.SIGINT)
    p.run(5, until=lambda: p.stop[0] is True and p.stop[1] is True, publish=False, what="both stops true after SIGINT")
    code = p.node.wait(timeout=10)
    expect(code == 0, f"the node exited with {code} on SIGINT")



PLAN_SPEED = 1.0  # rad/s, the right arm's plans


def scenario_plans(p, log, a):
    """The plan-aware guard seen from outside: the left arm stands at
    a.left_pan; the right arm follows a JointTrajectory (published on its
    planned_trajectory topic, then played as a controller would) that ends
    short of the left arm, decelerating at its maximum: not stopped. Then a
    plan that would meet it: stopped in time (the Rust test checks the
    exact gaps of every published configuration). Last, pushed to the
    clearance margin and given a plan away: it escapes."""
    ph = log["phases"]
    t = p.t
    p.run(30, until=lambda: p.stop[0] is False and p.stop[1] is False, what="both stops false at the start")
    # The left arm turns to its place and rests there.
    p.run(20, until=lambda: p.pan[0] <= a.left_pan, target_vel=(-SPEED, 0.0), obey=False, what="left arm in place")
    p.pan[0], p.vel[0] = a.left_pan, 0.0
    p.run(10, until=lambda: p.stop[0] is False and p.stop[1] is False, what="both stops false, left arm in place")

    def plan_state():
        return p.value("workcell_guard: arm_right", "plan") or ""

    def follow(goal, label, publish=True, wait_release=False, leave=False):
        times, pos = trapezoid(p.pan[1], goal, PLAN_SPEED, RIGHT["decel"])
        q = p.q(1)
        pts = []
        for tt, x in zip(times, pos):
            qq = list(q)
            qq[0] = x
            sec = int(tt)
            pts.append(t.JointTrajectoryPoint(positions=qq, velocities=[], accelerations=[], effort=[],
                                              time_from_start=t.Duration(sec=sec, nanosec=int(round((tt - sec) * 1e9)))))
        traj = t.JointTrajectory(header=t.Header(), joint_names=RIGHT["names"], points=pts)
        end = time.time() + 10
        mine = f"{len(pts)} points, {times[-1]:.3f} s"  # this plan, not the last one, is the guard's

        def taken():
            return plan_state().startswith("on plan") and p.value("workcell_guard: arm_right", "planned_trajectory") == mine

        while publish and time.time() < end and not taken():
            p.traj_right.write(traj)
            p.run(0.2)
        expect(not publish or taken(), f"{label}: the plan was not taken: {plan_state()!r}")
        n0 = len(p.samples)
        released = None
        if wait_release:  # a controller that holds while its stop is true
            t_taken = time.time()
            p.run(10, until=lambda: p.stop[1] is False, what=f"{label}: released")
            released = round(time.time() - t_taken, 3)
        p.follow, p.follow_t0, p.follow_braked = (times, pos), time.time(), False
        # Leaving it: the controller keeps its top speed from where the
        # plan starts to brake (the first waypoint slower than the fastest).
        speeds = [abs(pos[k + 1] - pos[k]) / (times[k + 1] - times[k]) for k in range(len(times) - 1)]
        top = speeds.index(max(speeds))
        p.follow_leave_t = next(times[k] for k in range(top, len(speeds)) if speeds[k] < speeds[top] - 1e-6) if leave else None
        t_go = time.time()
        p.run(times[-1] + 3.0, until=lambda: (p.follow_braked and p.vel[1] == 0.0)
              or time.time() - t_go > times[-1] + 1.0, what=f"{label}: the right arm at rest")
        stops = [f for (tt, f) in p.stop_log[1] if f and tt >= t_go]
        result = {"stopped": bool(stops), "rest_j1": round(p.pan[1], 4), "samples": [n0, len(p.samples)],
                  "plan_state": plan_state(), "released_after_s": released}
        p.follow, p.follow_leave_t = None, None
        p.vel[1] = 0.0
        return result

    ph["short"] = follow(a.short, "plan ending short")
    expect(not ph["short"]["stopped"], f"stopped on a plan that ends short of the other arm: {ph['short']}")
    expect(abs(ph["short"]["rest_j1"] - a.short) < 1e-3, f"did not reach the end of its plan: {ph['short']}")

    def back():  # as an operator would jog it, then clear again
        p.run(20, until=lambda: p.pan[1] <= -START, target_vel=(0.0, -SPEED), obey=False, what="right arm back")
        p.pan[1], p.vel[1] = -START, 0.0
        p.run(10, until=lambda: p.stop[0] is False and p.stop[1] is False, what="both stops false, right arm back")

    # The same plan published, but the controller leaves it where it
    # brakes, keeping its speed towards the other arm: stopped in time.
    back()
    ph["left_plan"] = follow(a.short, "the same plan, left where it brakes", leave=True)
    expect(ph["left_plan"]["stopped"], f"not stopped leaving its plan towards the other arm: {ph['left_plan']}")
    # A plan braking to rest nearer (a.near, 2 cm short): on its plan it is
    # not stopped either; the same motion with the plan kept from the guard
    # is: extrapolation alone forecasts the reaction time's travel at its
    # speed on top of the braking, which reaches into the margin.
    back()
    ph["near"] = follow(a.near, "plan ending nearer")
    expect(not ph["near"]["stopped"], f"stopped on a plan that ends nearer, still outside the margin: {ph['near']}")
    back()
    ph["near_unplanned"] = follow(a.near, "the same motion, plan not published", publish=False)
    expect(ph["near_unplanned"]["stopped"], f"extrapolation alone did not stop the motion: {ph['near_unplanned']}")
    back()
    ph["meet"] = follow(a.meet, "plan meeting the other arm")
    expect(ph["meet"]["stopped"], f"not stopped on a plan that meets the other arm: {ph['meet']}")
    ph["rest_pans"] = [a.left_pan, p.pan[1]]
    # Escape: jogged on (ignoring its stop) to the clearance margin, slowly,
    # and left there: stopped. Given a plan back out, it is released at
    # once, before it moves ("escaping"), and follows the plan out.
    p.run(20, until=lambda: p.pan[1] >= a.margin_at, target_vel=(0.0, 0.1), obey=False, what="right arm at the margin")
    p.pan[1], p.vel[1] = a.margin_at, 0.0
    p.run(1.0)
    expect(p.stop[1] is True, f"not stopped standing at the margin: {p.state()}")
    p.seen.pop("workcell_guard: arm_right", None)
    ph["escape"] = follow(-START, "plan away from the margin", wait_release=True)
    said = [m for (lvl, m) in p.seen.get("workcell_guard: arm_right", []) if m.startswith("escaping")]
    expect(said, f"no diagnostic said escaping: {sorted(set(m for _, m in p.seen.get('workcell_guard: arm_right', [])))}")
    expect(not ph["escape"]["stopped"], f"stopped again while escaping: {ph['escape']}")
    expect(abs(ph["escape"]["rest_j1"] + START) < 1e-3, f"did not follow the plan out: {ph['escape']}")
    p.node_alive = False
    p.node.send_signal(signal.SIGINT)
    p.node.wait(timeout=10)


if __name__ == "__main__":
    main()
