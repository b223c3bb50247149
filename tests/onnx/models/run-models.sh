#!/usr/bin/env bash
# run-models.sh BUILD_DIR DEVICE... - the real models of docs/onnx.md
# ("Real models"): each exported from torch with random weights
# (export_models.py, into BUILD_DIR/onnx-models, once), run through
# `vaccelctl run MODEL.onnx` on each DEVICE (cpu, vulkan:N, cuda:N) and
# compared with torch's own output (compare.py). Prints PASS or FAIL per
# model and device with the run's time; fails if any failed. MODELS="a b"
# picks models.
set -uo pipefail
build=${1:?usage: run-models.sh BUILD_DIR DEVICE...}
shift
[ $# -gt 0 ] || set -- cpu
here=$(cd "$(dirname "$0")" && pwd)
vaccelctl=$(realpath "$build/tools/vaccelctl/vaccelctl")
models=$(realpath -m "$build/onnx-models")
names=${MODELS:-resnet50 mobilenet_v2 efficientnet_b0 vit_b_16 transformer_encoder gpt2}
# Outside the repository: its onnx/ folder would shadow Python's onnx.
cd /tmp || exit 1
for name in $names; do
	[ -f "$models/$name/expected.npy" ] || /usr/bin/python3 "$here/export_models.py" "$models" "$name" 2>&1 | grep -v Warning
done
passed=0 failed=0
for device in "$@"; do
	for name in $names; do
		out=$(mktemp -d)
		if run=$("$vaccelctl" run "$models/$name/model.onnx" -i "input=$models/$name/input.npy" \
			-o "$out" -d "$device" 2>&1) &&
			verdict=$(/usr/bin/python3 "$here/compare.py" "$out/output.npy" "$models/$name/expected.npy"); then
			passed=$((passed + 1))
			printf 'PASS %-20s %-10s %s; %s\n' "$name" "$device" "$verdict" "$(grep -o 'median [^(]*' <<<"$run")"
		else
			failed=$((failed + 1))
			printf 'FAIL %-20s %-10s %s\n' "$name" "$device" "$(tail -n 2 <<<"${verdict:-$run}")"
		fi
		verdict=
		rm -rf "$out"
	done
done
echo "== real models: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
