#!/usr/bin/env bash
# run-gpu-tests.sh TEST_DIR VACCELCTL - the Vulkan device tests on this
# machine's GPU instead of lavapipe (`make test-gpu`).
#
# `make test` runs tests/vulkan on Mesa's lavapipe: ctest points the loader
# at lavapipe's ICD alone. This script runs the same test programs with the
# loader left to find the machine's own drivers, after checking that the
# first Vulkan device is a GPU (`vaccelctl devices --json`, in process), so
# a machine without one fails here instead of quietly testing lavapipe
# again. Every test program whose name starts with test_vulkan_ runs, except
# test_vulkan_lavapipe (it checks lavapipe's own identity). Each prints
# PASS or FAIL by name; the script fails if any failed or none ran.
set -uo pipefail

dir=${1:?usage: run-gpu-tests.sh TEST_DIR VACCELCTL}
ctl=${2:?usage: run-gpu-tests.sh TEST_DIR VACCELCTL}
unset VK_ICD_FILENAMES VK_DRIVER_FILES
export VACCEL_TRANSPORT=embedded

gpu=$("$ctl" devices --json | python3 -c '
import json, sys
for d in json.load(sys.stdin)["devices"]:
    if d["kind"] == "vulkan":
        print(d["class"], d["name"], sep="\t")
        break
') || { echo "FAIL: vaccelctl devices failed" >&2; exit 1; }
case "$gpu" in
gpu*) echo "== Vulkan tests on ${gpu#gpu	}" ;;
"") echo "FAIL: no Vulkan device here (make test runs these on lavapipe)" >&2; exit 1 ;;
*) echo "FAIL: the first Vulkan device is not a GPU: ${gpu#*	}" >&2; exit 1 ;;
esac

passed=() failed=()
for test in "$dir"/test_vulkan_*; do
	name=$(basename "$test")
	[ -x "$test" ] && [ "$name" != test_vulkan_lavapipe ] || continue
	start=$(date +%s%N)
	if "$test" >"/tmp/$name.log" 2>&1; then
		passed+=("$name")
		printf 'PASS %-45s %6d ms\n' "$name" $((($(date +%s%N) - start) / 1000000))
	else
		failed+=("$name")
		printf 'FAIL %-45s (its errors, then the end of its log)\n' "$name"
		grep -E '^ERROR|\[  ERROR|\[   LINE|FAILED  \]' "/tmp/$name.log" | head -n 20
		tail -n 10 "/tmp/$name.log"
	fi
	grep -h '^mirror: [0-9]' "/tmp/$name.log" || true
done
echo "== ${#passed[@]} passed, ${#failed[@]} failed"
[ ${#failed[@]} -eq 0 ] && [ ${#passed[@]} -gt 0 ]
