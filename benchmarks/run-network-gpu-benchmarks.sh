#!/usr/bin/env bash
# run-network-gpu-benchmarks.sh MAKE_NETWORK VACCELCTL VACCELD [CASE...] -
# real networks through vaccel beside the same networks in PyTorch eager, on
# the same GPU, in one run (docs/PERFORMANCE.md). A CASE is
# NAME:BATCH:DTYPE[:OPTIONS] (NAME as make-network takes it, DTYPE fp32 or
# fp16, OPTIONS more make-network options, comma separated); the default
# list is the one docs/PERFORMANCE.md records (BERT-base FP32 at 2 layers:
# 12 layers of FP32 weights pass the 256 MiB a TOSA file may have).
#
# For each case: make-network writes the network with its seeded weights
# (docs/networks.md); networks_torch.py builds the same network in PyTorch
# from those weights and torch_time below times its forward pass (TF32 off
# for FP32); then
# `vaccelctl run -n RUNS` times vaccel_run of the model:
#  - embedded on cuda:0, as vaccel runs it (CONV2D as implicit GEMM, one
#    CUDA graph per run), and again with VACCEL_CUDA_CONV=direct
#    VACCEL_CUDA_GRAPHS=0, the kernels and launches of before, as the
#    same-run baseline of what those two changed;
#  - embedded on vulkan:0;
#  - through one vacceld over its socket, on cuda:0 (the cost of sharing).
# Each line prints the median of RUNS, torch's median beside it, the ratio
# torch ms / vaccel ms (above 1: vaccel is faster), and the largest
# difference from torch's output, as max |vaccel - torch| / (1 + |torch|).
# A device that refuses the network prints its refusal in place of a time.
# Timings are medians of whole vaccel_run round trips with the bindings
# made once (vaccelctl's), against torch.cuda.Event around one forward
# pass with the input already on the GPU.
# Environment: RUNS (20).
set -euo pipefail
make_network=${1:?usage: run-network-gpu-benchmarks.sh MAKE_NETWORK VACCELCTL VACCELD [CASE...]}
vaccelctl=${2:?usage: run-network-gpu-benchmarks.sh MAKE_NETWORK VACCELCTL VACCELD [CASE...]}
vacceld=${3:?usage: run-network-gpu-benchmarks.sh MAKE_NETWORK VACCELCTL VACCELD [CASE...]}
shift 3
here=$(cd "$(dirname "$0")" && pwd)
runs=${RUNS:-20}
cases=("$@")
if [ ${#cases[@]} -eq 0 ]; then
	cases=(resnet18:1:fp32 resnet50:1:fp32 resnet50:8:fp32 resnet50:32:fp32 mobilenetv2:1:fp32
		bert:1:fp32:--layers,2 bert:8:fp32:--layers,2 gpt2-block:1:fp32
		resnet50:1:fp16 resnet50:8:fp16 bert:1:fp16:--layers,2 bert:1:fp16 gpt2-block:1:fp16)
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

echo "== $(date -u +%Y-%m-%dT%H:%MZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 || echo 'no nvidia-smi'), $runs runs each, medians"

# The median ms of `vaccelctl run -d DEVICE` (its --json), or its refusal's
# first line.
vaccel_ms() {
	local dir=$1 out=$2 device=$3 json
	mkdir -p "$out"
	if json=$("$vaccelctl" run -d "$device" -n "$runs" --json -i "$dir/$(input_of "$dir")" -o "$out" \
		"$dir/model.tosa" 2>"$out.err"); then
		python3 -c 'import json,sys; print("%.3f" % (json.load(sys.stdin)["timing"]["median_ns"] / 1e6))' <<<"$json"
	else
		echo "refused: $(grep -v '^vaccelctl: transport' "$out.err" | head -n 1)"
	fi
}
# PyTorch eager on cuda (networks_torch.py's modules, TF32 off, cuDNN's
# defaults), 3 untimed forward passes, then the median of RUNS, each timed
# by CUDA events around one forward pass; writes the output to $2.
torch_time() {
	python3 - "$here" "$1" "$2" "$runs" <<'EOF'
import statistics
import sys
import numpy as np
import torch
sys.path.insert(0, sys.argv[1])
import networks_torch
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
module, x, desc = networks_torch.build(sys.argv[2])
dtype = torch.float16 if desc["dtype"] == "fp16" else torch.float32
module = module.to("cuda", dtype)
x = x.to("cuda", dtype)
times = []
with torch.no_grad():
    for _ in range(3):
        out = module(x)
    for _ in range(int(sys.argv[4])):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        out = module(x)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
np.save(sys.argv[3], out.float().cpu().numpy())
print("torch median %.3f ms (torch %s)" % (statistics.median(times), torch.__version__))
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
for c in "${cases[@]}"; do
	IFS=: read -r name batch dtype options <<<"$c"
	dir=$scratch/$name-b$batch-$dtype
	# shellcheck disable=SC2086
	"$make_network" "$name" "$dir" --batch "$batch" --dtype "$dtype" ${options//,/ } >/dev/null
	torch=$(torch_time "$dir" "$dir/torch.npy")
	torch_ms=$(sed -n 's/^torch median \([0-9.]*\) ms.*/\1/p' <<<"$torch")
	[ -n "$torch_ms" ] || { echo "$c: no torch timing in: $torch" >&2; exit 1; }
	output=$(output_of "$dir")
	line() {
		local label=$1 ms=$2 out=$3
		if [[ $ms == refused* ]]; then
			printf '%-22s %-34s %s\n' "$c" "$label" "$ms"
		else
			printf '%-22s %-34s %10s %10s %7.2fx %9s\n' "$c" "$label" "$ms" "$torch_ms" \
				"$(python3 -c "print($torch_ms / $ms)")" "$(difference "$out/$output.npy" "$dir/torch.npy")"
		fi
	}
	ms=$(VACCEL_TRANSPORT=embedded vaccel_ms "$dir" "$dir/cuda" cuda:0)
	line "cuda:0 embedded" "$ms" "$dir/cuda"
	ms=$(VACCEL_TRANSPORT=embedded VACCEL_CUDA_CONV=direct VACCEL_CUDA_GRAPHS=0 \
		vaccel_ms "$dir" "$dir/cuda-before" cuda:0)
	line "cuda:0 embedded, direct, no graphs" "$ms" "$dir/cuda-before"
	ms=$(VACCEL_TRANSPORT=embedded vaccel_ms "$dir" "$dir/vulkan" vulkan:0)
	line "vulkan:0 embedded" "$ms" "$dir/vulkan"
	ms=$(VACCEL_TRANSPORT=socket VACCEL_SOCKET=$socket vaccel_ms "$dir" "$dir/socket" cuda:0)
	line "cuda:0 through vacceld" "$ms" "$dir/socket"
	rm -rf "$dir"
done
