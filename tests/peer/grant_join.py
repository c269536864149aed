#!/usr/bin/env python3
"""Peer: subscribers that join a grant topic cost nobody a grant.

Run only inside a network namespace of its own (tests/ros_robustness.rs
does `unshare -n` and brings up loopback only); Cyclone is configured for
loopback too, and the node runs with ROS_LOCALHOST_ONLY=1.

The node runs on the sample cell; this peer plays both arms' joint states
at rest (200 Hz) and reads `/arm_left/grant` with one default-QoS reader
(reliable, volatile, keep last 10) for 8 s, then three more default-QoS
readers join, and it reads on for 4 s. It writes to --out: the grants the
first reader got per second before and after the join, its longest gap,
and the node's `published_samples_dropped` before and after the join.
"""

import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

LEFT = ["shoulder_pan", "shoulder_lift", "elbow", "wrist_1", "wrist_2", "wrist_3", "finger_left"]
RIGHT = ["j1", "j2", "j3", "j4", "j5", "j6", "j7", "finger_a_joint"]
Q_LEFT = [1.5, 0.7, 1.1, 0.0, 0.0, 0.0, 0.02]
Q_RIGHT = [-1.5, 1.2, 0.0, -0.3, 0.0, 0.0, 0.0, 0.0]


def main():
    import ros_types as t

    a = t.peer_args()
    node, node_log = t.start_node(a, 31, "wg_join_")
    log = {"ok": False}
    try:
        dp, writer, reader = t.endpoints(31)
        js = [writer("rt/arm_left/joint_states", t.JointState, t.QOS_SENSOR),
              writer("rt/arm_right/joint_states", t.JointState, t.QOS_SENSOR)]
        diag = reader("rt/diagnostics", t.DiagnosticArray, t.QOS_RELIABLE)
        first = reader("rt/arm_left/grant", t.ManipulatorGrant, t.QOS_RELIABLE)
        got = []  # arrival times of the first reader's grants
        dropped = [None]
        joined = []

        def poll():
            now = time.time()
            for g in first.take(N=1000):
                if type(g).__name__ != "InvalidSample":
                    got.append(now)
            for d in diag.take(N=100):
                if type(d).__name__ == "InvalidSample":
                    continue
                for s in d.status:
                    for kv in s.values:
                        if kv.key == "published_samples_dropped":
                            dropped[0] = int(kv.value)
            for r in joined:
                r.take(N=1000)

        def play(seconds):
            end = time.time() + seconds
            while time.time() < end:
                now = time.time()
                js[0].write(t.JointState(header=t.Header(stamp=t.stamp(now), frame_id=""), name=LEFT,
                                         position=Q_LEFT, velocity=[], effort=[]))
                js[1].write(t.JointState(header=t.Header(stamp=t.stamp(now), frame_id=""), name=RIGHT,
                                         position=Q_RIGHT, velocity=[], effort=[]))
                poll()
                time.sleep(0.005)

        # The node up and publishing (its diagnostics name the dropped count).
        end = time.time() + 60
        while dropped[0] is None and time.time() < end:
            play(0.1)
        if dropped[0] is None:
            raise RuntimeError("no diagnostics from the node in 60 s")
        play(8.0)
        t_join = time.time()
        before = dropped[0]
        n_before = sum(1 for x in got if t_join - 4.0 <= x < t_join)
        for _ in range(3):
            joined.append(reader("rt/arm_left/grant", t.ManipulatorGrant, t.QOS_RELIABLE))
        play(4.0)
        after = dropped[0]
        n_after = sum(1 for x in got if x >= t_join)
        gaps = [b - a_ for a_, b in zip(got, got[1:])]
        log.update(ok=True, grants_per_s_before=n_before / 4.0, grants_per_s_after=n_after / 4.0,
                   longest_gap_s=max(gaps) if gaps else None, received=len(got),
                   dropped_before=before, dropped_after=after)
        print(log)
    except Exception as e:  # noqa: BLE001 (the Rust test reads the reason)
        log["failure"] = repr(e)
    finally:
        t.stop_and_save(node, a.out, log)
    t.exit_on_failure(log, node_log)


if __name__ == "__main__":
    main()
