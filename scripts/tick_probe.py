#!/usr/bin/env python3
"""A baseline for missed cycles: a process that does nothing but keep a
fixed schedule (default 500 Hz, the node's cycle), counting the ticks it
skipped as the node counts its own (a tick woken a period or more late
skips the ticks it overran). What it skips, the machine took (other
processes, a hypervisor's steal), not the node. Writes "ticks skipped"
to the file it is given, five times a second, until killed.

  python3 scripts/tick_probe.py OUT [--hz 500]

scripts/soak.py and tests/peer/faults.py run it beside the node
(`start`, `counts`) and report both counts.
"""

import argparse
import os
import subprocess
import sys
import time


def start(out, hz=500.0):
    """The probe as a child process, writing to `out`."""
    return subprocess.Popen([sys.executable, os.path.abspath(__file__), out, "--hz", str(hz)])


def counts(out):
    """(ticks, skipped) the probe writing to `out` reported last; (None,
    None) before its first report."""
    try:
        ticks, skipped = open(out).read().split()
        return int(ticks), int(skipped)
    except (OSError, ValueError):
        return None, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--hz", type=float, default=500.0)
    a = ap.parse_args()
    period = 1.0 / a.hz
    nxt = time.monotonic()
    ticks = skipped = 0
    written = nxt
    while True:
        nxt += period
        pause = nxt - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        now = time.monotonic()
        behind = int((now - nxt) / period)
        if behind > 0:
            skipped += behind
            nxt += behind * period
        ticks += 1
        if now - written >= 0.2:
            written = now
            tmp = a.out + ".tmp"
            with open(tmp, "w") as f:
                f.write(f"{ticks} {skipped}\n")
            os.replace(tmp, a.out)


if __name__ == "__main__":
    main()
