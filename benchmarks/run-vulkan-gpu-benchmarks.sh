#!/usr/bin/env bash
# run-vulkan-gpu-benchmarks.sh BENCH_VULKAN BENCH_ROUNDTRIP VACCELD - the
# Vulkan backend's figures on a machine with an NVIDIA GPU and PyTorch,
# each beside its anchor measured in the same run (docs/PERFORMANCE.md):
#  1. torch_anchor.py: cuBLAS FP32 (TF32 off) and FP16 MATMUL, a
#     device-to-device copy, an FP32 ADD and a GEMV, through PyTorch;
#  2. bench_vulkan with those MATMUL anchors: FP32 and FP16 MATMUL 4096^3,
#     ADD of 2 x 1 GiB against vkCmdCopyBuffer of the same bytes, GEMV
#     1x4096x4096 (read its time against torch's line above), the no-op
#     latency through the backend against a raw vkQueueSubmit;
#  3. bench_roundtrip --device vulkan: a no-op submission and its
#     completion through vacceld against vkQueueSubmit + vkWaitForFences.
# Extra arguments for bench_vulkan go in $BENCH_VULKAN_ARGS.
set -euo pipefail
bench_vulkan=${1:?usage: run-vulkan-gpu-benchmarks.sh BENCH_VULKAN BENCH_ROUNDTRIP VACCELD}
bench_roundtrip=${2:?usage: run-vulkan-gpu-benchmarks.sh BENCH_VULKAN BENCH_ROUNDTRIP VACCELD}
vacceld=${3:?usage: run-vulkan-gpu-benchmarks.sh BENCH_VULKAN BENCH_ROUNDTRIP VACCELD}
here=$(cd "$(dirname "$0")" && pwd)

echo "== $(date -u +%Y-%m-%dT%H:%MZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo 'no nvidia-smi')"
anchors=$(python3 "$here/torch_anchor.py")
echo "$anchors"
fp32=$(sed -n 's/^cuBLAS MATMUL FP32 .*: \([0-9.]*\) GFLOP\/s.*/\1/p' <<<"$anchors")
fp16=$(sed -n 's/^cuBLAS MATMUL FP16 .*: \([0-9.]*\) GFLOP\/s.*/\1/p' <<<"$anchors")
[ -n "$fp32" ] && [ -n "$fp16" ] || { echo "no cuBLAS anchors in torch_anchor's output" >&2; exit 1; }
echo
# shellcheck disable=SC2086
"$bench_vulkan" --anchor-fp32 "$fp32" --anchor-fp16 "$fp16" ${BENCH_VULKAN_ARGS:-}
echo
"$bench_roundtrip" --device vulkan --vacceld "$vacceld" --iterations 5000 --warmup 500
