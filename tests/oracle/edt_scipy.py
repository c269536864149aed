"""Oracle for tests/suite/field.rs: scipy's exact Euclidean distance transform of
an occupancy grid, compared with ours.

usage: edt_scipy.py OCCUPANCY.npy OURS_VOXELS.npy
Prints the largest absolute difference, in voxels.
"""
import sys

import numpy as np
from scipy import ndimage

occ = np.load(sys.argv[1]).astype(bool)
ours = np.load(sys.argv[2]).astype(np.float64)
assert occ.shape == ours.shape, (occ.shape, ours.shape)
# scipy measures the distance of every nonzero element to the nearest zero.
theirs = ndimage.distance_transform_edt(~occ)
print(float(np.abs(theirs - ours).max()))
