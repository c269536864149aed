"""The learned stopping model as a user sees it over DDS: the node runs on a
workcell whose arm_left names a stopping file `workcell_guard calibrate`
wrote; this peer (Cyclone DDS, loopback only, in the test's network
namespace) plays arm_left's joint states and reads /diagnostics.

- At rest, and turning at a speed its recorded stops covered, arm_left's
  status says `stopping_model: learned (...)`, level OK.
- Turning faster than any recorded stop (--fast rad/s, between the fastest
  covered and the URDF limit), the status says which joint and that its
  configured figures are used, at WARN, with the same in its message.
- Slowed down again, the status is back to `learned`.

Usage: stopping.py --node BIN --params FILE --out LOG --workcell CELL --fast RADPS --covered RADPS
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import e2e  # noqa: E402
from e2e import Fail, Peer, expect  # noqa: E402

# Speeding up and slowing down briskly keeps the turn within the joint's
# range (the peer's arm, not the guard, sets this pace).
e2e.ACCEL = 10.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--node", required=True)
    ap.add_argument("--params", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--workcell", required=True)
    ap.add_argument("--fast", type=float, required=True)
    ap.add_argument("--covered", type=float, required=True)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="wg_stopping_")
    import ros_types

    domain = 23
    env = ros_types.loopback(tmp, domain, "warn,rustdds=off,ros2_client=error")
    node_log = os.path.join(tmp, "node.log")
    node = subprocess.Popen([a.node, "--ros-args", "--params-file", a.params, "-p", "watchdog_s:=0.15",
                             "-p", f"workcell_file:={a.workcell}"],
                            env=env, stdout=open(node_log, "w"), stderr=subprocess.STDOUT)
    p = Peer(domain, node_log)
    p.node = node
    log = {"phases": {}, "ok": False}
    try:
        scenario(p, log, a)
        log["ok"] = True
    except Fail as e:
        log["failure"] = str(e)
    finally:
        ros_types.stop_and_save(node, a.out, log)
    ros_types.exit_on_failure(log, node_log)
    print("stopping: all expectations met;", json.dumps(log["phases"]))


def scenario(p, log, a):
    status = "workcell_guard: arm_left"

    def model():
        return p.value(status, "stopping_model") or ""

    def level():
        st = p.status.get(status)
        return None if st is None else st.level

    # At rest: the learned model, level OK (once the guard has history).
    p.run(20.0, until=lambda: model().startswith("learned") and level() == 0, what="arm_left learned, OK")
    log["phases"]["at_rest"] = model()
    # Within the covered speeds (away from the other arm): still learned.
    slow = 0.5 * a.covered
    p.run(3.0, until=lambda: abs(p.vel[0] - slow) < 1e-3, target_vel=(slow, 0.0), obey=False, what="slow turn")
    p.run(0.3, target_vel=(slow, 0.0), obey=False)
    expect(model().startswith("learned"), f"at {slow:.2f} rad/s, within the covered speeds: {model()!r}")
    expect(level() == 0, f"at {slow:.2f} rad/s the status level is {level()}: {p.state()}")
    log["phases"]["covered"] = {"speed": slow, "model": model()}
    # Faster than any recorded stop: the configured figures, named, at WARN.
    p.run(3.0, until=lambda: model().startswith("beyond"), target_vel=(a.fast, 0.0), obey=False,
          what=f"the beyond-range warning at {a.fast} rad/s")
    st = p.status[status]
    expect("shoulder_pan" in model() and "configured figures are used" in model(), model())
    expect(st.level == 1, f"level {st.level} while beyond the recorded stops: {st.message}")
    expect("faster than the recorded stops" in st.message, st.message)
    log["phases"]["beyond"] = {"speed": p.vel[0], "model": model(), "message": st.message, "pan": p.pan[0]}
    # Braking back to rest: learned again.
    p.run(3.0, until=lambda: abs(p.vel[0]) < 1e-3 and model().startswith("learned"), target_vel=(0.0, 0.0),
          obey=False, what="learned again at rest")
    log["phases"]["rest_again"] = {"model": model(), "level": level(), "pan": p.pan[0]}


if __name__ == "__main__":
    main()
