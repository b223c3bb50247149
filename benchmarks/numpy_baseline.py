#!/usr/bin/env python3
"""NumPy's time for bench_cpu_ops's shapes: prints 'MATMUL_S CONV_S BLAS'.

MATMUL: np.matmul of two float32 [1,N,N] arrays (NumPy's BLAS does the work).
CONV2D 3x3, SAME, stride 1, NHWC: im2col into [HW, 9*C] then one matmul with
the [9*C, C] weights, plus the bias. Median of 9 runs after one warm-up.
"""
import sys
import time

import numpy as np


def median_seconds(fn, runs=9):
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2]


def blas_name():
    try:
        info = np.__config__.CONFIG["Build Dependencies"]["blas"]["name"]
        return info
    except Exception:
        pass
    # The library file itself (its directory may name OpenBLAS for the
    # LAPACK beside it too), the first of these names that is mapped.
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "/" in line}
    except OSError:
        return "unknown"
    for lib in ("libopenblas", "libblis", "libmkl", "libblas"):
        for path in sorted(paths):
            if path.rsplit("/", 1)[-1].startswith(lib):
                return path
    return "unknown"


def main():
    n, hw, c = (int(v) for v in sys.argv[1:4])
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (1, n, n)).astype(np.float32)
    b = rng.uniform(-1, 1, (1, n, n)).astype(np.float32)
    matmul_s = median_seconds(lambda: np.matmul(a, b))

    x = rng.uniform(-1, 1, (1, hw, hw, c)).astype(np.float32)
    w = rng.uniform(-1, 1, (c, 3, 3, c)).astype(np.float32)  # [OC, KH, KW, IC]
    bias = rng.uniform(-1, 1, (c,)).astype(np.float32)
    w2 = w.transpose(1, 2, 3, 0).reshape(9 * c, c)

    def conv():
        padded = np.pad(x[0], ((1, 1), (1, 1), (0, 0)))
        cols = np.empty((hw, hw, 9 * c), dtype=np.float32)
        for ky in range(3):
            for kx in range(3):
                k = ky * 3 + kx
                cols[:, :, k * c:(k + 1) * c] = padded[ky:ky + hw, kx:kx + hw, :]
        return cols.reshape(hw * hw, 9 * c) @ w2 + bias

    conv_s = median_seconds(conv)
    print(f"{matmul_s:.9f} {conv_s:.9f} {blas_name()}")


if __name__ == "__main__":
    main()
