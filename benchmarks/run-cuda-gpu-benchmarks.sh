#!/usr/bin/env bash
# run-cuda-gpu-benchmarks.sh BENCH_CUDA BENCH_ROUNDTRIP VACCELD - the CUDA
# backend's figures on a machine with an NVIDIA GPU and PyTorch, each beside
# its anchor measured in the same run (docs/PERFORMANCE.md):
#  1. torch_anchor.py: cuBLAS FP32 (TF32 off) and FP16 MATMUL through PyTorch;
#  2. bench_cuda with those anchors: FP32 and FP16 MATMUL 4096^3, a raw PTX
#     axpy over 1 GiB against cuMemcpyDtoD of the same bytes, the launch
#     latency through the backend against cuLaunchKernel +
#     cuStreamSynchronize;
#  3. bench_roundtrip --device cuda: an empty kernel's launch and completion
#     through vacceld against the in-process launch plus 1.5x the ping-pong
#     floor of the same run;
#  4. with two CUDA devices, bench_cuda --two-devices.
# Extra arguments for bench_cuda go in $BENCH_CUDA_ARGS.
set -euo pipefail
bench_cuda=${1:?usage: run-cuda-gpu-benchmarks.sh BENCH_CUDA BENCH_ROUNDTRIP VACCELD}
bench_roundtrip=${2:?usage: run-cuda-gpu-benchmarks.sh BENCH_CUDA BENCH_ROUNDTRIP VACCELD}
vacceld=${3:?usage: run-cuda-gpu-benchmarks.sh BENCH_CUDA BENCH_ROUNDTRIP VACCELD}
here=$(cd "$(dirname "$0")" && pwd)

echo "== $(date -u +%Y-%m-%dT%H:%MZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 || echo 'no nvidia-smi')"
anchors=$(python3 "$here/torch_anchor.py")
echo "$anchors"
fp32=$(sed -n 's/^cuBLAS MATMUL FP32 .*: \([0-9.]*\) GFLOP\/s.*/\1/p' <<<"$anchors")
fp16=$(sed -n 's/^cuBLAS MATMUL FP16 .*: \([0-9.]*\) GFLOP\/s.*/\1/p' <<<"$anchors")
[ -n "$fp32" ] && [ -n "$fp16" ] || { echo "no cuBLAS anchors in torch_anchor's output" >&2; exit 1; }
echo
# shellcheck disable=SC2086
"$bench_cuda" --anchor-fp32 "$fp32" --anchor-fp16 "$fp16" --runs 20 ${BENCH_CUDA_ARGS:-}
echo
"$bench_roundtrip" --device cuda --vacceld "$vacceld" --iterations 5000 --warmup 500
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
if [ "$gpus" -ge 2 ]; then
	echo
	"$bench_cuda" --two-devices --vacceld "$vacceld" --runs 20
else
	echo
	echo "(e) two devices: not measured, this machine has $gpus CUDA device(s)"
fi
