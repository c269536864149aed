"""Baselines for benches/field.rs: the same occupancy grid through the `edt`
package (multi-threaded C++, 2 threads) and scipy.ndimage, timed here.

usage: edt_baseline.py OCCUPANCY.npy OURS_SQUARED.npy
Prints one JSON line: median seconds of each, and the largest difference
between their distances and ours (voxels).
"""
import json
import sys
import time

import numpy as np


def main() -> None:
    occ = np.load(sys.argv[1]).astype(bool)
    ours = np.sqrt(np.load(sys.argv[2]).astype(np.float64))
    background = np.asfortranarray(~occ).astype(np.uint8)
    out = {"voxels": int(occ.size), "occupied": int(occ.sum())}
    try:
        import edt

        runs = []
        for _ in range(3):
            t = time.perf_counter()
            d = edt.edt(background, black_border=False, parallel=2)
            runs.append(time.perf_counter() - t)
        out["edt_s"] = sorted(runs)[1]
        out["edt_max_diff"] = float(np.abs(d - ours).max())
    except ImportError:
        out["edt_s"] = None
    try:
        from scipy import ndimage

        t = time.perf_counter()
        d = ndimage.distance_transform_edt(background)
        out["scipy_s"] = time.perf_counter() - t
        out["scipy_max_diff"] = float(np.abs(d - ours).max())
    except ImportError:
        out["scipy_s"] = None
    print(json.dumps(out))


if __name__ == "__main__":
    main()
