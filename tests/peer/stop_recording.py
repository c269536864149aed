"""Recorded stops of the sample cell's arm_right as another cell's rosbag2
writer leaves them (`mcap-ros2-support`: its own CDR encoder, the message
definitions written out here), under a braking physics of its own that
`workcell_guard calibrate` is not told:

- every joint moving in every stop; the stop commanded by `/arm_right/stop`,
  by the speed scaling falling to 0 (`control_msgs/SpeedScalingFactor`), or
  by a hold (an empty trajectory on the controller's command topic),
  released by the flag, the scaling back at 1, or the controller's next
  trajectory;
- the reaction 12-24 ms (per stop), then the deceleration ramping up over
  15 ms to a brake that weakens with speed, plus Coulomb friction and,
  on the pitch joints (j2, j4), gravity along or against the motion;
- a slow gripper (finger_a_joint, 0.0105-0.025 m/s: too narrow a speed
  range to fit);
- early releases (15 % of the stops, 0.12-0.3 s after the command, before
  the slower joints stand; the arm still stops before it moves on);
- drift at rest: j2 and j4 creep at 1-4 mrad/s under gravity once stopped;
- joint states at RATE Hz with +-25 % jitter on their spacing, logged
  0.3-1.5 ms after their stamps, positions only, in their own joint order,
  with noise (15 urad, 2 um).

Usage: stop_recording.py OUT.mcap --rate HZ --stops N --seed S
Prints a JSON line: stops per source, early releases, states written.
"""

import argparse
import json

import numpy as np

RULE = "=" * 80
TIME = "int32 sec\nuint32 nanosec\n"
HEADER = f"std_msgs/Header header\n"
HEADER_DEF = f"{RULE}\nMSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n" \
             f"{RULE}\nMSG: builtin_interfaces/Time\n{TIME}"
DEFINITIONS = {
    "sensor_msgs/msg/JointState":
        f"{HEADER}string[] name\nfloat64[] position\nfloat64[] velocity\nfloat64[] effort\n{HEADER_DEF}",
    "trajectory_msgs/msg/JointTrajectory": (
        f"{HEADER}string[] joint_names\nJointTrajectoryPoint[] points\n{HEADER_DEF}"
        f"{RULE}\nMSG: trajectory_msgs/JointTrajectoryPoint\n"
        "float64[] positions\nfloat64[] velocities\nfloat64[] accelerations\nfloat64[] effort\n"
        "builtin_interfaces/Duration time_from_start\n"
        f"{RULE}\nMSG: builtin_interfaces/Duration\n{TIME}"
    ),
    "std_msgs/msg/Bool": "bool data\n",
    "control_msgs/msg/SpeedScalingFactor": "float64 factor\n",
}

NAMES = ["j1", "j2", "j3", "j4", "j5", "j6", "j7", "finger_a_joint"]
LIMITS = [(-2.9, 2.9), (-1.8, 1.8), (-2.9, 2.9), (-3.0, 0.1), (-2.9, 2.9), (-0.5, 3.7), (-3.1, 3.1), (0.0, 0.04)]
VMAX = [2.0, 2.0, 2.2, 2.2, 2.6, 2.6, 3.0, 0.2]
# The brake at rest speed, rad/s^2 (m/s^2), and its fade at the joint's top speed.
BRAKE = [7.0, 7.0, 9.0, 9.0, 14.0, 14.0, 14.0, 2.0]
FADE = 0.25
FRICTION = [0.3, 0.3, 0.4, 0.4, 0.5, 0.5, 0.5, 0.0]
# Gravity on the pitch joints: amplitude (rad/s^2) and phase.
GRAVITY = [(0.0, 0.0), (2.0, 0.3), (0.0, 0.0), (1.5, -0.4), (0.0, 0.0), (0.0, 0.0), (0.0, 0.0), (0.0, 0.0)]
DRIFT = [0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]
ACCEL = [5.0, 5.0, 6.0, 6.0, 8.0, 8.0, 8.0, 0.5]
NOISE = [1.5e-5] * 7 + [2e-6]
RAMP_S = 0.015
GRIPPER = 7


def brake_of(j, v, q, direction):
    """The deceleration joint j brakes at from speed v at position q."""
    g, phase = GRAVITY[j]
    return BRAKE[j] * (1.0 - FADE * v / VMAX[j]) + FRICTION[j] - direction * g * np.sin(q + phase)


def braking(v0, d):
    """(duration, distance) of a stop from v0 under a deceleration rising
    to d over RAMP_S."""
    if v0 <= d * RAMP_S / 2.0:
        t0 = np.sqrt(2.0 * RAMP_S * v0 / d)
        return t0, v0 * t0 - d * t0 ** 3 / (6.0 * RAMP_S)
    v1 = v0 - d * RAMP_S / 2.0
    x1 = v0 * RAMP_S - d * RAMP_S ** 2 / 6.0
    return RAMP_S + v1 / d, x1 + v1 * v1 / (2.0 * d)


def brake_pos(u, v0, d):
    """Distance braked u after the brake starts (u within the stop)."""
    if v0 <= d * RAMP_S / 2.0:
        t0 = np.sqrt(2.0 * RAMP_S * v0 / d)
        u = np.minimum(u, t0)
        return v0 * u - d * u ** 3 / (6.0 * RAMP_S)
    v1 = v0 - d * RAMP_S / 2.0
    x1 = v0 * RAMP_S - d * RAMP_S ** 2 / 6.0
    ramp = v0 * np.minimum(u, RAMP_S) - d * np.minimum(u, RAMP_S) ** 3 / (6.0 * RAMP_S)
    w = np.clip(u - RAMP_S, 0.0, v1 / d)
    return np.where(u <= RAMP_S, ramp, x1 + v1 * w - 0.5 * d * w * w)


def plan(rng, stops):
    """The stops: per stop and joint its motion, per stop its command."""
    q = np.array([0.0, 0.2, 0.0, -1.4, 0.0, 1.6, 0.0, 0.02])
    t = 1.0
    out = []
    for k in range(stops):
        react = rng.uniform(0.012, 0.024)
        joints = []
        t_move = t
        t_cruise = 0.0
        for j in range(8):
            lo, hi = LIMITS[j]
            if j == GRIPPER:
                v = rng.uniform(0.0105, 0.025)
            else:
                v = rng.uniform(0.08, 0.95 * VMAX[j])
            centre, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
            if abs(q[j] - centre) > 0.4 * half:
                direction = -np.sign(q[j] - centre)
            else:
                direction = rng.choice([-1.0, 1.0])
            t_acc = v / ACCEL[j]
            t_cruise = max(t_cruise, t_acc)
            joints.append([j, q[j], direction * v, direction, t_acc])
        tc = t_move + t_cruise + rng.uniform(0.15, 0.3)
        tb = tc + react
        rest_end = tb
        motion = []
        for j, q0, w, direction, t_acc in joints:
            v = abs(w)
            q_acc = q0 + direction * v * t_acc / 2.0
            q_b = q_acc + w * (tb - t_move - t_acc)
            d = brake_of(j, v, q_b, direction)
            dur, dist = braking(v, d)
            q_rest = q_b + direction * dist
            drift = 0.0
            if DRIFT[j]:
                g, phase = GRAVITY[j]
                drift = -np.sign(np.sin(q_rest + phase)) * rng.uniform(0.001, 0.004)
            motion.append((q0, w, direction, t_acc, q_acc, q_b, d, dur, q_rest, drift))
            rest_end = max(rest_end, tb + dur)
        early = rng.uniform() < 0.15
        release = tc + (rng.uniform(0.12, 0.3) if early else rng.uniform(0.5, 0.8))
        t_next = max(release, rest_end + 0.05) + rng.uniform(0.0, 0.1)
        source = ["flag", "scaling", "hold"][k % 3]
        out.append({"t_move": t_move, "tc": tc, "tb": tb, "release": release, "t_next": t_next,
                    "motion": motion, "early": early, "source": source})
        for j, m in enumerate(motion):
            q_rest, drift, dur = m[8], m[9], m[7]
            q[j] = q_rest + drift * (t_next - (tb + dur))
        t = t_next
    return out, t


def positions(seg, t):
    """Every joint's position at stamps t (within the segment)."""
    out = np.empty((len(t), 8))
    u_move = t - seg["t_move"]
    for j, (q0, w, direction, t_acc, q_acc, q_b, d, dur, q_rest, drift) in enumerate(seg["motion"]):
        v = abs(w)
        a = v / t_acc
        acc = q0 + direction * 0.5 * a * np.minimum(u_move, t_acc) ** 2
        cruise = q_acc + w * (u_move - t_acc)
        ub = t - seg["tb"]
        brake = q_b + direction * brake_pos(np.maximum(ub, 0.0), v, d)
        rest = q_rest + drift * np.maximum(ub - dur, 0.0)
        out[:, j] = np.where(u_move < t_acc, acc, np.where(ub < 0.0, cruise, np.where(ub < dur, brake, rest)))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--rate", type=float, required=True)
    ap.add_argument("--stops", type=int, required=True)
    ap.add_argument("--seed", type=int, required=True)
    a = ap.parse_args()
    from mcap_ros2.writer import Writer

    rng = np.random.default_rng(a.seed)
    segs, t_end = plan(rng, a.stops)
    dt = 1.0 / a.rate
    spacing = dt * (1.0 + rng.uniform(-0.25, 0.25, int((t_end + 1.0) / dt) + 10))
    stamps = 0.5 + np.cumsum(spacing)
    stamps = stamps[stamps < t_end]
    q = np.empty((len(stamps), 8))
    starts = np.array([s["t_move"] for s in segs])
    which = np.searchsorted(starts, stamps, side="right") - 1
    first = np.array([0.0, 0.2, 0.0, -1.4, 0.0, 1.6, 0.0, 0.02])
    q[which < 0] = first
    for k, seg in enumerate(segs):
        sel = which == k
        if sel.any():
            q[sel] = positions(seg, stamps[sel])
    q += rng.normal(0.0, 1.0, q.shape) * np.array(NOISE)
    order = rng.permutation(8)
    t0 = 1.7e9
    events = []
    lag = rng.uniform(0.0003, 0.0015, len(stamps))
    for i in range(len(stamps)):
        events.append((stamps[i] + lag[i], 0, i))
    for k, seg in enumerate(segs):
        events.append((seg["tc"], 1, k))
        events.append((seg["release"], 2, k))
    events.sort()

    counts = {"flag": 0, "scaling": 0, "hold": 0}
    with open(a.out, "wb") as f:
        w = Writer(f)
        schema = {name: w.register_msgdef(name, text) for name, text in DEFINITIONS.items()}

        def put(topic, kind, msg, at):
            ns = int(round((t0 + at) * 1e9))
            w.write_message(topic, schema[kind], msg, log_time=ns, publish_time=ns)

        def stamp(at):
            sec = int(np.floor(t0 + at))
            return {"sec": sec, "nanosec": int(round((t0 + at - sec) * 1e9)) % 1000000000}

        names = [NAMES[j] for j in order]
        for at, kind, i in events:
            if kind == 0:
                msg = {"header": {"stamp": stamp(stamps[i]), "frame_id": ""}, "name": names,
                       "position": [float(x) for x in q[i, order]], "velocity": [], "effort": []}
                put("/arm_right/joint_states", "sensor_msgs/msg/JointState", msg, at)
                continue
            seg = segs[i]
            on = kind == 1
            if on:
                counts[seg["source"]] += 1
            if seg["source"] == "flag":
                put("/arm_right/stop", "std_msgs/msg/Bool", {"data": on}, at)
            elif seg["source"] == "scaling":
                put("/arm_right/speed_scaling", "control_msgs/msg/SpeedScalingFactor",
                    {"factor": 0.0 if on else 1.0}, at)
            else:
                points = [] if on else [{"positions": [0.0] * 8, "velocities": [], "accelerations": [], "effort": [],
                                         "time_from_start": {"sec": 1, "nanosec": 0}}]
                put("/arm_right_controller/joint_trajectory", "trajectory_msgs/msg/JointTrajectory",
                    {"header": {"stamp": {"sec": 0, "nanosec": 0}, "frame_id": ""}, "joint_names": NAMES,
                     "points": points}, at)
        w.finish()
    print(json.dumps({"sources": counts, "early": sum(s["early"] for s in segs), "states": len(stamps)}))


if __name__ == "__main__":
    main()
