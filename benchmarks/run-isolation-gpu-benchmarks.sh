#!/usr/bin/env bash
# run-isolation-gpu-benchmarks.sh BUILD_DIR [CUDA_INDEX [VULKAN_INDEX]] - the
# isolation figures of docs/PERFORMANCE.md ("device schedulers") on this
# machine's GPU, for cuda:N and vulkan:N: bench_isolation with the issue's
# sizes (4 batch tenants looping FP32 MATMUL 4096^3, a latency tenant's ADD
# of 65536 floats, 300 runs), weights 100:300 and a 30% device share;
# slicing on and off on both. The loader is left to find the machine's own
# Vulkan driver (vulkan:N must be a GPU); the CUDA contexts run in
# vaccel-cuda-host processes ($VACCEL_CUDA_HOST, or the one the build made).
set -euo pipefail
build=${1:?usage: run-isolation-gpu-benchmarks.sh BUILD_DIR [CUDA_INDEX [VULKAN_INDEX]]}
cuda=${2:-0}
vulkan=${3:-0}
unset VK_ICD_FILENAMES VK_DRIVER_FILES
sizes=(--n 4096 --add-elements 65536 --batch 4 --runs 300 --seconds 2)
echo "== $(date -u +%Y-%m-%dT%H:%MZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 || echo 'no nvidia-smi')"
"$build/benchmarks/bench_isolation" --device "cuda:$cuda" "${sizes[@]}" --slice-us "${SLICE_US:-250}" ||
	echo "(cuda:$cuda not measured: see the line above)"
echo
"$build/benchmarks/bench_isolation" --device "vulkan:$vulkan" "${sizes[@]}" --slice-us "${SLICE_US:-250}"
