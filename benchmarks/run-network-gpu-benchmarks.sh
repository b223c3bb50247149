#!/usr/bin/env bash
# run-network-gpu-benchmarks.sh MAKE_NETWORK VACCELCTL VACCELD [CASE...] -
# real networks through vaccel beside the same networks in PyTorch eager, on
# the same machine, in one run (docs/PERFORMANCE.md). A CASE is
# NAME:BATCH:DTYPE[:OPTIONS] (NAME as make-network takes it, DTYPE fp32 or
# fp16, OPTIONS more make-network options, comma separated); the default
# list is every network of docs/networks.md at the batches it names, in
# FP32 and FP16.
#
# For each case: make-network writes the network with its seeded weights
# (docs/networks.md); networks_torch.py builds the same network in PyTorch
# from those weights and torch_time below times its forward pass (TF32 off
# for FP32); then `vaccelctl run -n RUNS` times vaccel_run of the model on
# each path PATHS lists (comma separated, default cuda,before,vulkan,socket):
#  - cuda: embedded on cuda:0, as vaccel runs it (CONV2D as implicit GEMM,
#    one CUDA graph per run);
#  - before: the same with VACCEL_CUDA_CONV=direct VACCEL_CUDA_GRAPHS=0
#    VACCEL_GPU_FUSION=0, the kernels and launches of before, the same-run
#    baseline of what those changed;
#  - unfused: cuda:0 with VACCEL_GPU_FUSION=0 only (one dispatch per
#    operator, no epilogues), the same-run baseline of fusion;
#  - conv-mma: cuda:0 with VACCEL_CUDA_CONV_MMA=1 (FP16 CONV2D on the
#    tensor cores), against cuda (the FP32 cores) in the same run;
#  - tf32: through a second vacceld whose [devices.cuda] fp32_math = "tf32"
#    (docs/adr/0028-tensor-core-convolutions-and-tf32.md), against torch
#    with TF32 allowed; for FP32 cases only (FP16 does not change);
#  - vulkan: embedded on vulkan:0; vulkan-unfused: the same without fusion;
#  - socket: through one vacceld over its socket, on cuda:0 (the cost of
#    sharing);
#  - cpu: embedded on the CPU backend, against PyTorch on the CPU with as
#    many threads as the backend's (the machine's hardware threads);
#  - profile: cuda:0 with VACCEL_CUDA_PROFILE=1 (docs/operators.md), which
#    prints the kernel time of a run and its largest kernels and operators.
# Each line prints the median of RUNS, torch's median beside it, the ratio
# torch ms / vaccel ms (above 1: vaccel is faster), and the largest
# difference from torch's output, as max |vaccel - torch| / (1 + |torch|).
# A device that refuses the network prints its refusal in place of a time.
# Timings are medians of whole vaccel_run round trips with the bindings
# made once (vaccelctl's), after WARMUP untimed ones, against torch.cuda.Event around one forward
# pass with the input already on the GPU (on the CPU: a monotonic clock).
# Environment: RUNS (20), WARMUP (10), PATHS.
set -euo pipefail
make_network=${1:?usage: run-network-gpu-benchmarks.sh MAKE_NETWORK VACCELCTL VACCELD [CASE...]}
vaccelctl=${2:?usage: run-network-gpu-benchmarks.sh MAKE_NETWORK VACCELCTL VACCELD [CASE...]}
vacceld=${3:?usage: run-network-gpu-benchmarks.sh MAKE_NETWORK VACCELCTL VACCELD [CASE...]}
shift 3
here=$(cd "$(dirname "$0")" && pwd)
runs=${RUNS:-20}
# Untimed runs first: a Vulkan device's clocks take a few hundred ms of work
# to rise (a cold vulkan:0 ResNet-18 ran at a median of 13 to 21 ms, then
# 4.0 ms warm), and torch gets its 3.
warmup=${WARMUP:-10}
paths=",${PATHS:-cuda,before,vulkan,socket},"
cases=("$@")
if [ ${#cases[@]} -eq 0 ]; then
	for dtype in fp32 fp16; do
		cases+=(resnet18:1:$dtype resnet50:1:$dtype resnet50:8:$dtype resnet50:32:$dtype
			mobilenetv2:1:$dtype bert:1:$dtype bert:8:$dtype gpt2-block:1:$dtype)
	done
fi

scratch=$(mktemp -d /tmp/vaccel-netbench-XXXXXX)
printf '[daemon]\ndevices = ["cuda:0", "vulkan:0"]\nstate_dir = "%s"\n' "$scratch/state" >"$scratch/vacceld.toml"
mkdir -p "$scratch/run"
socket=$scratch/run/vacceld.sock
"$vacceld" --socket "$socket" --config "$scratch/vacceld.toml" --no-kernel >"$scratch/vacceld.log" 2>&1 &
daemon=$!
trap 'kill $daemon 2>/dev/null; wait $daemon 2>/dev/null; rm -rf "$scratch"' EXIT
for _ in $(seq 100); do [ -S "$socket" ] && break; sleep 0.1; done
[ -S "$socket" ] || { cat "$scratch/vacceld.log"; echo "vacceld did not start" >&2; exit 1; }
tf32_socket=$scratch/run/vacceld-tf32.sock
if [[ $paths == *",tf32,"* ]]; then
	printf '[daemon]\ndevices = ["cuda:0"]\nstate_dir = "%s"\n[devices.cuda]\nfp32_math = "tf32"\n' \
		"$scratch/state-tf32" >"$scratch/vacceld-tf32.toml"
	"$vacceld" --socket "$tf32_socket" --config "$scratch/vacceld-tf32.toml" --no-kernel \
		>"$scratch/vacceld-tf32.log" 2>&1 &
	tf32_daemon=$!
	trap 'kill $daemon $tf32_daemon 2>/dev/null; wait $daemon $tf32_daemon 2>/dev/null; rm -rf "$scratch"' EXIT
	for _ in $(seq 100); do [ -S "$tf32_socket" ] && break; sleep 0.1; done
	[ -S "$tf32_socket" ] || { cat "$scratch/vacceld-tf32.log"; echo "the tf32 vacceld did not start" >&2; exit 1; }
fi

echo "== $(date -u +%Y-%m-%dT%H:%MZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 || echo 'no nvidia-smi'), $runs runs each, medians"

# The median ms of `vaccelctl run -d DEVICE` (its --json), or its refusal's
# first line.
vaccel_ms() {
	local dir=$1 out=$2 device=$3 json
	mkdir -p "$out"
	if json=$("$vaccelctl" run -d "$device" -n "$runs" --warmup "$warmup" --json -i "$dir/$(input_of "$dir")" -o "$out" \
		"$dir/model.tosa" 2>"$out.err"); then
		python3 -c 'import json,sys; print("%.3f" % (json.load(sys.stdin)["timing"]["median_ns"] / 1e6))' <<<"$json"
	else
		echo "refused: $(grep -v '^vaccelctl: transport' "$out.err" | head -n 1)"
	fi
}
# PyTorch eager on DEVICE $3 (networks_torch.py's modules, TF32 off unless
# $4 is "tf32",
# cuDNN's defaults; on the CPU with one thread per hardware thread), 3
# untimed forward passes, then the median of RUNS, each timed by CUDA
# events (a monotonic clock on the CPU) around one forward pass; writes the
# output to $2.
torch_time() {
	python3 - "$here" "$1" "$2" "$runs" "$3" "${4:-fp32}" <<'EOF'
import os
import statistics
import sys
import time
import numpy as np
import torch
sys.path.insert(0, sys.argv[1])
import networks_torch
torch.backends.cuda.matmul.allow_tf32 = sys.argv[6] == "tf32"
torch.backends.cudnn.allow_tf32 = sys.argv[6] == "tf32"
device = sys.argv[5]
if device == "cpu":
    torch.set_num_threads(os.cpu_count())
module, x, desc = networks_torch.build(sys.argv[2])
dtype = torch.float16 if desc["dtype"] == "fp16" else torch.float32
module = module.to(device, dtype)
x = x.to(device, dtype)
times = []
with torch.no_grad():
    for _ in range(3):
        out = module(x)
    for _ in range(int(sys.argv[4])):
        if device == "cpu":
            start = time.monotonic()
            out = module(x)
            times.append((time.monotonic() - start) * 1e3)
            continue
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        out = module(x)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
np.save(sys.argv[3], out.float().cpu().numpy())
print("torch median %.3f ms (torch %s, %s, %d threads)" % (
    statistics.median(times), torch.__version__, device, torch.get_num_threads()))
EOF
}
input_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["inputs"][0]["file"])' "$1/network.json"; }
output_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["outputs"][0]["name"])' "$1/network.json"; }
# max |a - b| / (1 + |b|) of vaccel's output against torch's.
difference() {
	python3 - "$1" "$2" <<'EOF'
import sys
import numpy as np
a = np.load(sys.argv[1]).astype(np.float64)
b = np.load(sys.argv[2]).astype(np.float64)
print("%.1e" % float(np.max(np.abs(a - b) / (1 + np.abs(b)))) if a.shape == b.shape else "shape %s vs %s" % (a.shape, b.shape))
EOF
}

printf '%-22s %-34s %10s %10s %8s %9s\n' network path "vaccel ms" "torch ms" ratio "max diff"
want() { [[ $paths == *",$1,"* ]]; }
for c in "${cases[@]}"; do
	IFS=: read -r name batch dtype options <<<"$c"
	dir=$scratch/$name-b$batch-$dtype
	# shellcheck disable=SC2086
	if ! made=$("$make_network" "$name" "$dir" --batch "$batch" --dtype "$dtype" ${options//,/ } 2>&1); then
		printf '%-22s %s\n' "$c" "make-network refused: $(tail -n 1 <<<"$made")"
		continue
	fi
	output=$(output_of "$dir")
	# One line: the path's median beside torch's ($4, on the same device).
	line() {
		local label=$1 ms=$2 out=$3 torch_ms=$4 reference=$5
		if [[ $ms == refused* ]]; then
			printf '%-22s %-34s %s\n' "$c" "$label" "$ms"
		else
			printf '%-22s %-34s %10s %10s %7.2fx %9s\n' "$c" "$label" "$ms" "$torch_ms" \
				"$(python3 -c "print($torch_ms / $ms)")" "$(difference "$out/$output.npy" "$reference")"
		fi
	}
	torch_ms_on() {
		local t
		t=$(torch_time "$dir" "$dir/torch-$1${2:+-$2}.npy" "$1" "${2:-}")
		sed -n 's/^torch median \([0-9.]*\) ms.*/\1/p' <<<"$t" | grep . || { echo "$c: no torch timing in: $t" >&2; exit 1; }
	}
	if want cuda || want before || want unfused || want conv-mma || want vulkan || want vulkan-unfused || want socket; then
		torch_ms=$(torch_ms_on cuda)
		if want cuda; then
			ms=$(VACCEL_TRANSPORT=embedded vaccel_ms "$dir" "$dir/cuda" cuda:0)
			line "cuda:0 embedded" "$ms" "$dir/cuda" "$torch_ms" "$dir/torch-cuda.npy"
		fi
		if want before; then
			ms=$(VACCEL_TRANSPORT=embedded VACCEL_CUDA_CONV=direct VACCEL_CUDA_GRAPHS=0 \
				VACCEL_GPU_FUSION=0 vaccel_ms "$dir" "$dir/cuda-before" cuda:0)
			line "cuda:0 embedded, direct, no graphs" "$ms" "$dir/cuda-before" "$torch_ms" "$dir/torch-cuda.npy"
		fi
		if want unfused; then
			ms=$(VACCEL_TRANSPORT=embedded VACCEL_GPU_FUSION=0 vaccel_ms "$dir" "$dir/cuda-unfused" cuda:0)
			line "cuda:0 embedded, unfused" "$ms" "$dir/cuda-unfused" "$torch_ms" "$dir/torch-cuda.npy"
		fi
		if want conv-mma; then
			ms=$(VACCEL_TRANSPORT=embedded VACCEL_CUDA_CONV_MMA=1 vaccel_ms "$dir" "$dir/cuda-mma" cuda:0)
			line "cuda:0 embedded, CONV2D tensor cores" "$ms" "$dir/cuda-mma" "$torch_ms" "$dir/torch-cuda.npy"
		fi
		if want vulkan; then
			ms=$(VACCEL_TRANSPORT=embedded vaccel_ms "$dir" "$dir/vulkan" vulkan:0)
			line "vulkan:0 embedded" "$ms" "$dir/vulkan" "$torch_ms" "$dir/torch-cuda.npy"
		fi
		if want vulkan-unfused; then
			ms=$(VACCEL_TRANSPORT=embedded VACCEL_GPU_FUSION=0 vaccel_ms "$dir" "$dir/vulkan-unfused" vulkan:0)
			line "vulkan:0 embedded, unfused" "$ms" "$dir/vulkan-unfused" "$torch_ms" "$dir/torch-cuda.npy"
		fi
		if want socket; then
			ms=$(VACCEL_TRANSPORT=socket VACCEL_SOCKET=$socket vaccel_ms "$dir" "$dir/socket" cuda:0)
			line "cuda:0 through vacceld" "$ms" "$dir/socket" "$torch_ms" "$dir/torch-cuda.npy"
		fi
	fi
	if want tf32 && [ "$dtype" = fp32 ]; then
		torch_ms=$(torch_ms_on cuda tf32)
		ms=$(VACCEL_TRANSPORT=socket VACCEL_SOCKET=$tf32_socket vaccel_ms "$dir" "$dir/tf32" cuda:0)
		line "cuda:0 vacceld tf32 (torch tf32)" "$ms" "$dir/tf32" "$torch_ms" "$dir/torch-cuda-tf32.npy"
	fi
	if want cpu; then
		torch_ms=$(torch_ms_on cpu)
		ms=$(VACCEL_TRANSPORT=embedded vaccel_ms "$dir" "$dir/cpu" cpu)
		line "cpu embedded (torch on the cpu)" "$ms" "$dir/cpu" "$torch_ms" "$dir/torch-cpu.npy"
	fi
	if want profile; then
		VACCEL_TRANSPORT=embedded VACCEL_CUDA_PROFILE=1 vaccel_ms "$dir" "$dir/profile" cuda:0 >/dev/null
		echo "$c: kernel profile of cuda:0 (VACCEL_CUDA_PROFILE=1)"
		awk '/vaccel CUDA profile/ {p = 1} p' "$dir/profile.err" |
			awk '/by operator/ {b = 1} b || n++ < 22' | sed 's/^/    /'
	fi
	rm -rf "$dir"
done
