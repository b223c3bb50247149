#!/usr/bin/env python3
"""sweep_reference.py DIR - the float64 oracle of test_cpu_sweep.

DIR holds manifest.txt ("STEM OPERATOR ARITY" per line) and, per case,
STEM_in0.npy [STEM_in1.npy] and STEM_out.npy (what the CPU backend gave).
Each operator is computed here from the inputs in float64 with NumPy (TOSA
1.0 semantics: NaN modes, -0 below +0 for MAXIMUM/MINIMUM), rounded to
float32, and compared within the operator's bound in units in the last place
(ULP, counted on the ordered float32 bit patterns, so subnormals and the step
from the largest finite value to infinity count one each); 0 means bit-exact
(any NaN matches any NaN). Prints every disagreement (at most 20) and exits 1
if there is one.
"""
import math
import sys
from pathlib import Path

import numpy as np

# Bounds against float64 (docs/operators.md gives the per-operator tolerance;
# SIGMOID's float formula 1 / (1 + expf(-x)) rounds three times: 4 ULP).
ULP = {
    "ADD": 0, "SUB": 0, "MUL": 0, "MAXIMUM": 0, "MAXIMUM_IGNORE": 0, "MINIMUM": 0,
    "MINIMUM_IGNORE": 0, "POW": 2, "ABS": 0, "CEIL": 0, "FLOOR": 0, "NEGATE": 0,
    "EXP": 2, "LOG": 2, "SIN": 2, "COS": 2, "RECIPROCAL": 0, "RSQRT": 2, "ERF": 5,
    "SIGMOID": 4, "TANH": 2,
}
COMPARISONS = {"EQUAL": np.equal, "GREATER": np.greater, "GREATER_EQUAL": np.greater_equal}


def ieee_max(a, b, propagate, want_max):
    """TOSA 1.0 apply_max_s/apply_min_s: -0 orders below +0."""
    a, b = np.broadcast_arrays(a, b)
    pick_a = (a > b) if want_max else (a < b)
    tie = (a == b)
    # Equal values differ only for +0/-0: the maximum takes +0, the minimum -0.
    a_signed = np.signbit(a)
    tie_a = tie & (a_signed != want_max)
    out = np.where(pick_a | tie_a, a, b)
    a_nan, b_nan = np.isnan(a), np.isnan(b)
    if propagate:
        out = np.where(a_nan | b_nan, np.nan, out)
    else:
        out = np.where(a_nan, b, np.where(b_nan, a, out))
    return out


def reference(op, x):
    a = x[0]
    b = x[1] if len(x) > 1 else None
    with np.errstate(all="ignore"):
        if op == "ADD": return a + b
        if op == "SUB": return a - b
        if op == "MUL": return a * b
        if op == "MAXIMUM": return ieee_max(a, b, True, True)
        if op == "MAXIMUM_IGNORE": return ieee_max(a, b, False, True)
        if op == "MINIMUM": return ieee_max(a, b, True, False)
        if op == "MINIMUM_IGNORE": return ieee_max(a, b, False, False)
        if op == "POW": return np.power(a, b)
        if op == "ABS": return np.abs(a)
        if op == "CEIL": return np.ceil(a)
        if op == "FLOOR": return np.floor(a)
        if op == "NEGATE": return -a
        if op == "EXP": return np.exp(a)
        if op == "LOG": return np.log(a)
        if op == "SIN": return np.sin(a)
        if op == "COS": return np.cos(a)
        if op == "RECIPROCAL": return 1.0 / a
        if op == "RSQRT": return 1.0 / np.sqrt(a)
        if op == "ERF": return np.vectorize(math.erf, otypes=[np.float64])(a)
        if op == "SIGMOID": return 1.0 / (1.0 + np.exp(-a))
        if op == "TANH": return np.tanh(a)
    raise SystemExit(f"sweep_reference.py: unknown operator {op}")


def ordered(values):
    bits = values.astype(np.float32).view(np.int32).astype(np.int64)
    return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)


def main():
    folder = Path(sys.argv[1])
    failures = []
    cases = 0
    for line in (folder / "manifest.txt").read_text().splitlines():
        stem, op, arity = line.split()
        inputs = [np.load(folder / f"{stem}_in{i}.npy") for i in range(int(arity))]
        got = np.load(folder / f"{stem}_out.npy")
        wide = [v.astype(np.float64) for v in inputs]
        cases += 1
        if op in COMPARISONS:
            want = COMPARISONS[op](*wide)
            bad = got != want
        else:
            with np.errstate(over="ignore"):  # values beyond float32 become inf
                want = reference(op, wide).astype(np.float32)
            both_nan = np.isnan(got) & np.isnan(want)
            distance = np.abs(ordered(got) - ordered(want))
            bad = ~both_nan & ((np.isnan(got) != np.isnan(want)) | (distance > ULP[op]))
        for index in zip(*np.nonzero(np.atleast_1d(bad))):
            if got.ndim == 0:
                index = ()
            operands = ", ".join(
                repr(np.broadcast_to(v, got.shape)[index]) for v in inputs)
            failures.append(f"{stem} {op} shape {got.shape} at {index}: inputs ({operands}) "
                            f"gave {got[index]!r}, float64 reference {want[index]!r}")
    for failure in failures[:20]:
        print(failure)
    if failures:
        print(f"{len(failures)} elements disagree over {cases} cases")
        return 1
    print(f"sweep: {cases} cases agree with the float64 reference")
    return 0


if __name__ == "__main__":
    sys.exit(main())
