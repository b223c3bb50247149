#!/usr/bin/env bash
# run-demo.sh BUILD_DIR - the vaccel demo: list the devices, run the example
# MLP through `vaccelctl run`, print its outputs and timing, and check them.
#
# The model, its input and its expected output are generated at build time
# into BUILD_DIR/examples by make-example-mlp (a TOSA 1.0 graph written with
# the project's own builder; the expected output comes from the generator's
# double-precision loops, not from any vaccel backend). Exits non-zero if
# the outputs differ from expected.npy by more than 1e-5 relative.
set -euo pipefail

build=${1:?usage: examples/run-demo.sh BUILD_DIR}
ctl=$build/tools/vaccelctl/vaccelctl
examples=$build/examples
out=$examples/demo-output

for file in "$ctl" "$examples/mlp.tosa" "$examples/input.npy" "$examples/expected.npy"; do
	[ -e "$file" ] || { echo "run-demo: $file is missing: build first (make)" >&2; exit 1; }
done
py=
for candidate in python3 /usr/bin/python3; do
	if command -v "$candidate" >/dev/null && "$candidate" -c 'import numpy' 2>/dev/null; then
		py=$candidate
		break
	fi
done
[ -n "$py" ] || { echo "run-demo: python3 with NumPy is needed: make deps" >&2; exit 1; }

echo "== vaccelctl devices"
"$ctl" devices
echo
echo "== vaccelctl run mlp.tosa, 20 runs"
echo "   x [4,16] -> MATMUL+ADD+RELU -> MATMUL+ADD+SIGMOID -> y [4,8]"
"$ctl" run "$examples/mlp.tosa" --input "x=$examples/input.npy" --output-dir "$out" --repeat 20
echo
echo "== output y ($out/y.npy) against expected.npy"
"$py" - "$out/y.npy" "$examples/expected.npy" <<'PY'
import sys
import numpy as np
y, expected = np.load(sys.argv[1]), np.load(sys.argv[2])
np.set_printoptions(precision=6, suppress=True, linewidth=100)
print(y)
if y.dtype != expected.dtype or y.shape != expected.shape:
    sys.exit(f"FAIL: y is {y.dtype} {y.shape}, expected {expected.dtype} {expected.shape}")
relative = np.abs(y.astype(np.float64) - expected) / np.abs(expected.astype(np.float64))
if not np.all(relative <= 1e-5):
    sys.exit(f"FAIL: y differs from expected.npy by up to {relative.max():.3g} relative (> 1e-5)")
print(f"OK: y matches expected.npy (max relative error {relative.max():.3g}, tolerance 1e-5)")
PY
