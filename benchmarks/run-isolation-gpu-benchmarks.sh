#!/usr/bin/env bash
# run-isolation-gpu-benchmarks.sh BUILD_DIR [DEVICE_INDEX] - the isolation
# figures of docs/PERFORMANCE.md ("the Vulkan device scheduler") on this
# machine's GPU: bench_isolation with the sizes (4 batch tenants
# looping FP32 MATMUL 4096^3, a latency tenant's ADD of 65536 floats, 300
# runs), slicing on and off, weights 100:300 and a 30% device share.
# The loader is left to find the machine's own Vulkan driver; vulkan:N must
# be a GPU. CUDA has no device scheduler yet, so there is no CUDA part.
set -euo pipefail
build=${1:?usage: run-isolation-gpu-benchmarks.sh BUILD_DIR [DEVICE_INDEX]}
index=${2:-0}
unset VK_ICD_FILENAMES VK_DRIVER_FILES
exec "$build/benchmarks/bench_isolation" --device "$index" --n 4096 --add-elements 65536 \
	--batch 4 --runs 300 --seconds 2 --slice-us "${SLICE_US:-250}"
