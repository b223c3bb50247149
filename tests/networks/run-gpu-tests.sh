#!/usr/bin/env bash
# run-gpu-tests.sh BUILD_DIR [DEVICE...] - the networks cases of tests/networks
# on this machine's GPUs instead of lavapipe.
#
# ctest runs tests/networks on the CPU and on lavapipe; this script runs the
# same check_network.py cases on each DEVICE (default: vulkan:0 cuda:0) with
# the loader left to find the machine's own Vulkan driver. vulkan:0 must be a
# GPU (vaccelctl devices --json), so a machine without one fails instead of
# testing lavapipe again. Every case must run and match the float64
# reference (and the CPU backend). Each case prints
# PASS or FAIL by name; the script fails if any failed.
set -uo pipefail

build=${1:?usage: run-gpu-tests.sh BUILD_DIR [DEVICE...]}
shift
devices=("$@")
[ ${#devices[@]} -gt 0 ] || devices=(vulkan:0 cuda:0)
here=$(cd "$(dirname "$0")" && pwd)
ctl=$build/tools/vaccelctl/vaccelctl
make_network=$build/examples/make-network
unset VK_ICD_FILENAMES VK_DRIVER_FILES
export VACCEL_TRANSPORT=embedded

for dev in "${devices[@]}"; do
	if [[ $dev == vulkan:* ]]; then
		class=$("$ctl" devices --json | python3 -c '
import json, sys
print(next((d["class"] for d in json.load(sys.stdin)["devices"] if d["kind"] == "vulkan"), ""))')
		[[ $class == gpu* ]] || { echo "FAIL: the first Vulkan device is not a GPU ('$class')" >&2; exit 1; }
	fi
done

conv=(--image 32 --classes 10 --width 16 --batch 2)
declare -A options=(
	[resnet18]="${conv[*]}" [resnet50]="${conv[*]}" [mobilenetv2]="${conv[*]}"
	[bert]="--layers 2 --hidden 64 --heads 2 --seq 16 --batch 2"
	[gpt2-block]="--hidden 64 --heads 2 --seq 16 --batch 2")
passed=0 failed=0
for dev in "${devices[@]}"; do
	for net in resnet18 resnet50 mobilenetv2 bert gpt2-block; do
		for dtype in fp32 fp16; do
			name="networks.${net}_${dtype}_${dev%%:*}"
			# shellcheck disable=SC2086
			if out=$(python3 "$here/check_network.py" --make-network "$make_network" --vaccelctl "$ctl" \
				--device "$dev" "$net" "$dtype" ${options[$net]} 2>&1); then
				passed=$((passed + 1))
				echo "PASS $name: $(grep -E " on $dev:" <<<"$out" | head -n 1)"
			else
				failed=$((failed + 1))
				echo "FAIL $name"
				sed 's/^/    /' <<<"$out" | tail -n 8
			fi
		done
	done
done
echo "== $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
