#!/usr/bin/env bash
# run-gpu-tests.sh TEST_DIR - the CUDA device tests on this machine's GPU
# (`make test-gpu`).
#
# `make test` registers these tests everywhere, and on a machine without a
# CUDA device each exits 77 and ctest lists it as skipped. Here they run with
# VACCEL_REQUIRE_GPU=1, so a missing device fails them instead. Every test
# program in TEST_DIR whose name starts with test_cuda_ runs; each prints
# PASS or FAIL by name (the log of a failure follows it); the script fails
# if any failed or none ran.
set -uo pipefail

dir=${1:?usage: run-gpu-tests.sh TEST_DIR}
export VACCEL_REQUIRE_GPU=1
passed=() failed=()
for test in "$dir"/test_cuda_*; do
	name=$(basename "$test")
	[ -x "$test" ] && [ -f "$test" ] || continue
	# Runs one named case a call, without a GPU; ctest runs every case (cuda.hostile.*).
	[ "$name" != test_cuda_hostile_host ] || continue
	start=$(date +%s%N)
	if "$test" >"/tmp/$name.log" 2>&1; then
		passed+=("$name")
		printf 'PASS %-45s %6d ms\n' "$name" $((($(date +%s%N) - start) / 1000000))
	else
		failed+=("$name")
		printf 'FAIL %-45s\n' "$name"
		tail -n 40 "/tmp/$name.log"
	fi
done
echo "== CUDA tests: ${#passed[@]} passed, ${#failed[@]} failed"
[ ${#passed[@]} -gt 0 ] && [ ${#failed[@]} -eq 0 ]
