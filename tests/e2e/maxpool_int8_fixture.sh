#!/usr/bin/env bash
# maxpool_int8_fixture.sh VACCELCTL FIXTURES
#
# `vaccelctl run` on the real TOSA 1.0 INT8 MAX_POOL2D fixture (2x2 kernel,
# stride 2, no padding; the file carries no data) with an INT8 .npy input
# covering -128..127 gives NumPy's 2x2 block maxima exactly.
source "$(dirname "$0")/lib.sh"
ctl=$1 fixtures=$2
model=$fixtures/v1.0-maxpool2d_int8/simple_maxpool2d.tosa

"$PY" - "$scratch" <<'PYTHON'
import sys
import numpy as np

scratch = sys.argv[1]
values = np.random.default_rng(7).integers(-128, 128, size=(1, 16, 16, 16), dtype=np.int8)
np.save(f"{scratch}/input.npy", values)
# Each output (oy, ox) is the maximum of rows 2oy..2oy+1 and columns 2ox..2ox+1.
blocks = values.reshape(1, 8, 2, 8, 2, 16)
np.save(f"{scratch}/expected.npy", blocks.max(axis=(2, 4)))
PYTHON

"$ctl" run "$model" --input "$scratch/input.npy" --output-dir "$scratch/out"
[ -f "$scratch/out/TosaOutput_0.npy" ] || fail "no TosaOutput_0.npy in the output directory"
compare "$scratch/out/TosaOutput_0.npy" "$scratch/expected.npy" --exact

# The Vulkan device (lavapipe here) refuses the integer profile; the
# refusal names the device that runs the model, found by asking each.
status=0
"$ctl" run "$model" --input "$scratch/input.npy" --output-dir "$scratch/gpu" --device vulkan:0 \
	2>"$scratch/err" || status=$?
[ "$status" -eq 1 ] || fail "the INT8 model on vulkan:0 exited $status: $(cat "$scratch/err")"
grep -q "is not supported by this device.*; it runs on \[0\] cpu.* (--device 0)$" "$scratch/err" ||
	fail "the refusal does not name the device that runs the model: $(cat "$scratch/err")"
[ -e "$scratch/gpu" ] && fail "a refused run left its output directory behind"
echo "ok: the refusal on vulkan:0 names [0] cpu"
