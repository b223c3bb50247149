#!/usr/bin/python3
"""compare.py GOT.npy WANT.npy - whether vaccel's output matches torch's:
|got - want| <= 1e-4 + 1e-3 |want| everywhere (numpy.allclose), and the
expected output is not all but zero (a comparison that could not fail).
Prints the largest error beside the largest expected magnitude."""
import sys

import numpy as np

got, want = np.load(sys.argv[1]), np.load(sys.argv[2])
if got.shape != want.shape:
    print(f"shape {got.shape}, expected {want.shape}")
    sys.exit(1)
scale = float(np.abs(want).max())
error = float(np.abs(got.astype(np.float64) - want).max())
print(f"max |error| {error:.3g}, max |expected| {scale:.3g}")
if scale < 1e-2:
    print("the expected output is all but zero: nothing is compared")
    sys.exit(1)
sys.exit(0 if np.allclose(got, want, rtol=1e-3, atol=1e-4) else 1)
