#!/usr/bin/env bash
# half_vaccelctl.sh VACCELCTL WRITE_HALF_GRAPHS
#
# `vaccelctl run` on an FP16 graph with '<f2' .npy inputs: the FP16 sum is
# NumPy's float16 sum bit for bit ('<f2' out), its CAST to FP32 the same
# values as '<f4'. A BF16 slot has no standard .npy dtype: vaccelctl refuses
# the model naming the tensor and the dtypes it carries.
source "$(dirname "$0")/../e2e/lib.sh"
ctl=$1 writer=$2

"$writer" "$scratch" || fail "write_half_graphs could not write the graphs"

"$PY" - "$scratch" <<'PYTHON'
import sys
import numpy as np

scratch = sys.argv[1]
rng = np.random.default_rng(11)
# Magnitudes from subnormal to near the top of the range, and the corners:
# 65504 + 32 overflows to inf, 2**-24 + 2**-24 is the subnormal 2**-23.
x = (rng.standard_normal((4, 8)) * 10.0 ** rng.integers(-6, 5, (4, 8))).astype(np.float16)
y = (rng.standard_normal((4, 8)) * 10.0 ** rng.integers(-6, 5, (4, 8))).astype(np.float16)
x[0, 0], y[0, 0] = 65504, 32
x[0, 1], y[0, 1] = 2.0 ** -24, 2.0 ** -24
np.save(f"{scratch}/x.npy", x)
np.save(f"{scratch}/y.npy", y)
# NumPy adds float16 arrays in float16 (the exact sum, rounded to nearest even).
with np.errstate(over="ignore"):
    total = x + y
np.save(f"{scratch}/sum.npy", total)
np.save(f"{scratch}/sum_fp32.npy", total.astype(np.float32))
PYTHON

"$ctl" run "$scratch/half_add.tosa" --input "x=$scratch/x.npy" --input "y=$scratch/y.npy" \
	--output-dir "$scratch/out"
compare "$scratch/out/sum.npy" "$scratch/sum.npy" --exact
compare "$scratch/out/sum_fp32.npy" "$scratch/sum_fp32.npy" --exact

# An FP32 file for an FP16 slot is refused with the conversion to make.
"$PY" -c "import numpy as np; np.save('$scratch/x32.npy', np.zeros((4, 8), np.float32))"
expect_refusal "convert with arr.astype('<f2')" \
	"$ctl" run "$scratch/half_add.tosa" --input "x=$scratch/x32.npy" --input "y=$scratch/y.npy" \
	--output-dir "$scratch/out32"

"$PY" -c "import numpy as np; np.save('$scratch/b.npy', np.zeros(4, np.float32))"
expect_refusal "tensor 'x' has TOSA dtype BF16, which vaccelctl cannot carry in a .npy file" \
	"$ctl" run "$scratch/bf16_abs.tosa" --input "$scratch/b.npy" --output-dir "$scratch/outb"
