"""The `field` command end to end against the `edt` package run the same way.

usage: field_command.py [--bin target/release/workcell_guard] [--n 256] [--runs 5]

Writes a random N^3 occupancy grid (1 % occupied, `numpy.save`'s default C
order, bool), then times whole processes, alternating:
  ours: workcell_guard field --occupancy grid.npy --units voxels --out ours.npy
  edt:  python3: numpy.load, edt.edt(free, parallel=2), numpy.save (float32)
and reads each process's peak resident memory from wait4. Prints the medians,
the speed ratio (edt / ours), and our peak memory against input + output
file sizes; checks that both outputs agree.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

MAKE_GRID = (
    "import sys, numpy as np\n"
    "n = int(sys.argv[2])\n"
    "np.save(sys.argv[1], np.random.default_rng(24).random((n, n, n), dtype=np.float32) < 0.01)\n"
)

EDT_JOB = (
    "import sys, numpy as np, edt\n"
    "a = np.load(sys.argv[1])\n"
    "np.save(sys.argv[2], edt.edt(np.logical_not(a), black_border=False, parallel=2))\n"
)


COMPARE = (
    "import sys, numpy as np\n"
    "print(float(np.abs(np.load(sys.argv[1]) - np.load(sys.argv[2])).max()))\n"
)


def run(cmd):
    """Wall seconds and peak resident MB of one process."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"{cmd[0]} failed ({p.returncode}): {p.stderr.read().decode()}")
    return wall, usage.ru_maxrss / 1024.0


def main() -> None:
    ap = argparse.ArgumentParser()
    target = os.environ.get("CARGO_TARGET_DIR", "target")
    ap.add_argument("--bin", default=os.path.join(target, "release", "workcell_guard"))
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        grid, ours, theirs = (os.path.join(d, f) for f in ("grid.npy", "ours.npy", "edt.npy"))
        # Made, and compared at the end, in other processes: a child's peak
        # memory counts its parent's size when it was forked.
        subprocess.run([sys.executable, "-c", MAKE_GRID, grid, str(args.n)], check=True)
        ours_cmd = [args.bin, "field", "--occupancy", grid, "--units", "voxels", "--out", ours]
        edt_cmd = [sys.executable, "-c", EDT_JOB, grid, theirs]
        o_wall, o_rss, e_wall, e_rss = [], [], [], []
        for _ in range(args.runs):
            w, r = run(ours_cmd)
            o_wall.append(w)
            o_rss.append(r)
            w, r = run(edt_cmd)
            e_wall.append(w)
            e_rss.append(r)
        diff = subprocess.run(
            [sys.executable, "-c", COMPARE, ours, theirs], check=True, capture_output=True, text=True
        ).stdout.strip()
        in_mb = os.path.getsize(grid) / 2**20
        out_mb = os.path.getsize(ours) / 2**20
    ow, ew = statistics.median(o_wall), statistics.median(e_wall)
    peak = max(o_rss)
    print(f"field command, {args.n}^3 voxels, 1 % occupied, median of {args.runs} whole-process runs:")
    print(f"  ours (workcell_guard field)   {ow * 1e3:8.1f} ms   peak RSS {peak:7.1f} MB")
    print(f"  edt package (Python, 2 thr.)  {ew * 1e3:8.1f} ms   peak RSS {max(e_rss):7.1f} MB")
    print(f"  speed: edt / ours = {ew / ow:.2f}x (goal >= 1.5x)")
    print(
        f"  memory: peak {peak:.1f} MB / (input {in_mb:.1f} + output {out_mb:.1f} MB) = "
        f"{peak / (in_mb + out_mb):.2f} (goal <= 1.5)"
    )
    print(f"  largest difference between the outputs: {diff} voxels")


if __name__ == "__main__":
    main()
