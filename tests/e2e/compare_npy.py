#!/usr/bin/env python3
"""compare_npy.py - checks an output .npy against an expected one.

Usage: compare_npy.py ACTUAL EXPECTED (--exact | --rtol R [--atol A])

--exact: same dtype, same shape, same data bytes (np.array_equal and a byte
compare of the data). --rtol: same dtype and shape, and
|actual - expected| <= A + R * |expected| everywhere (A defaults to 0).
Prints what it found and exits 1 on any difference.
"""
import argparse
import sys

import numpy as np


def main():
    parser = argparse.ArgumentParser(description="compare two .npy files")
    parser.add_argument("actual")
    parser.add_argument("expected")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--exact", action="store_true")
    mode.add_argument("--rtol", type=float)
    parser.add_argument("--atol", type=float, default=0.0)
    args = parser.parse_args()

    actual = np.load(args.actual)
    expected = np.load(args.expected)
    if actual.dtype != expected.dtype:
        print(f"{args.actual}: dtype {actual.dtype}, expected {expected.dtype}")
        return 1
    if actual.shape != expected.shape:
        print(f"{args.actual}: shape {actual.shape}, expected {expected.shape}")
        return 1
    if args.exact:
        if not np.array_equal(actual, expected) or actual.tobytes() != expected.tobytes():
            diff = np.argwhere(actual != expected)
            first = tuple(diff[0]) if len(diff) else "?"
            print(f"{args.actual}: {len(diff)} elements differ from {args.expected}, "
                  f"first at {first}")
            return 1
        print(f"{args.actual}: identical to {args.expected} ({actual.dtype}, {actual.shape})")
        return 0
    error = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
    bound = args.atol + args.rtol * np.abs(expected.astype(np.float64))
    if not np.all(error <= bound):
        worst = np.unravel_index(np.argmax(error - bound), error.shape)
        print(f"{args.actual}: differs from {args.expected} beyond rtol {args.rtol} "
              f"atol {args.atol}: at {worst} {actual[worst]!r} vs {expected[worst]!r}")
        return 1
    print(f"{args.actual}: matches {args.expected} within rtol {args.rtol} atol {args.atol} "
          f"(max abs error {error.max():.3g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
