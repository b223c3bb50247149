#!/usr/bin/env bash
# run-demo.sh BUILD_DIR - the vaccel demo: one daemon serving a real network
# to two clients at once.
#
#  1. writes ResNet-18 (batch 1, 224x224 RGB, 1000 classes, FP32, seeded
#     random weights: docs/networks.md) with make-network;
#  2. starts vacceld on a private socket (a fresh temporary directory)
#     serving the CPU and every Vulkan device the machine has (Mesa's
#     lavapipe on a machine without a GPU, which `make deps` installs);
#  3. runs the network through `vaccelctl run` from two clients at once:
#     client a on the CPU, client b on the first Vulkan device when there is
#     one (else also on the CPU), and shows `vaccelctl sessions` while both
#     are running;
#  4. prints each client's timing, checks both outputs against the NumPy
#     float64 reference of the same network (tests/networks/reference.py,
#     which rebuilds it from network.json and the weights, never from
#     model.tosa) with the networks tests' FP32 tolerance, and prints the
#     top-5 classes of each;
#  5. stops the daemon with SIGTERM and requires a clean exit (status 0).
#
# DEMO_REPEAT (default 3) runs each client that many times (the timing is
# the median). Exits non-zero if an output is off the reference, or if the
# daemon does not stop cleanly.
set -euo pipefail

build=${1:?usage: examples/run-demo.sh BUILD_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
vacceld=$build/userspace/daemon/vacceld
ctl=$build/tools/vaccelctl/vaccelctl
make_network=$build/examples/make-network
reference=$root/tests/networks/reference.py
repeat=${DEMO_REPEAT:-3}

for file in "$vacceld" "$ctl" "$make_network" "$reference"; do
	[ -e "$file" ] || { echo "run-demo: $file is missing: build first (make demo)" >&2; exit 1; }
done
py=
for candidate in python3 /usr/bin/python3; do
	if command -v "$candidate" >/dev/null && "$candidate" -c 'import numpy' 2>/dev/null; then
		py=$candidate
		break
	fi
done
[ -n "$py" ] || { echo "run-demo: python3 with NumPy is needed: make deps" >&2; exit 1; }

# The daemon's private home: socket, config, log and the network. Whatever
# happens, the daemon and the clients do not outlive the demo.
home=$(mktemp -d "${TMPDIR:-/tmp}/vaccel-demo.XXXXXX")
daemon=
clients=()
finish() {
	local pid
	for pid in "${clients[@]}" $daemon; do kill -9 "$pid" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$home"
}
trap finish EXIT

net=$home/resnet18
echo "== make-network resnet18 (batch 1, 224x224, 1000 classes, FP32, seeded weights)"
"$make_network" resnet18 "$net" --batch 1
echo

export VACCEL_SOCKET=$home/vacceld.sock VACCEL_TRANSPORT=socket
printf '[daemon]\ndevices = ["cpu", "vulkan:*"]\n' >"$home/vacceld.toml"
echo "== vacceld --socket $VACCEL_SOCKET (devices: cpu, vulkan:*)"
"$vacceld" --socket "$VACCEL_SOCKET" --config "$home/vacceld.toml" 2>"$home/vacceld.log" &
daemon=$!
for _ in $(seq 100); do
	grep -q "serving" "$home/vacceld.log" && break
	kill -0 "$daemon" 2>/dev/null || { cat "$home/vacceld.log" >&2; exit 1; }
	sleep 0.1
done
cat "$home/vacceld.log"
echo
echo "== vaccelctl devices"
"$ctl" devices
echo

# Client b's device: the first Vulkan device the daemon serves, if any.
device_b=$("$ctl" devices --json | "$py" -c '
import json, sys
kinds = [d["kind"] for d in json.load(sys.stdin)["devices"]]
print("vulkan:0" if "vulkan" in kinds else "cpu")')
echo "== two clients: vaccelctl run model.tosa --repeat $repeat, at the same time"
echo "   image [1,224,224,3] -> ResNet-18 (20 CONV2D, 8 residual ADDs) -> logits [1,1000]"
echo "   client a on cpu, client b on $device_b"
for name in a b; do
	device=cpu
	[ "$name" = b ] && device=$device_b
	"$ctl" --verbose run "$net/model.tosa" --input "image=$net/image.npy" --device "$device" \
		--output-dir "$home/out-$name" --repeat "$repeat" >"$home/run-$name.txt" 2>&1 &
	clients+=($!)
done
echo "   client a: pid ${clients[0]}, client b: pid ${clients[1]}"

# Show the sessions once both clients have a context, i.e. are running.
for _ in $(seq 400); do
	running=$("$ctl" sessions --json | "$py" -c \
		'import json, sys; print(sum(s["contexts"] > 0 for s in json.load(sys.stdin)["sessions"]))')
	[ "$running" -ge 2 ] && break
	sleep 0.05
done
echo
echo "== vaccelctl sessions (while both run)"
"$ctl" sessions
echo

status=0
for i in 0 1; do
	wait "${clients[$i]}" || status=$?
done
clients=()
for name in a b; do
	echo "== client $name: $(cat "$home/run-$name.txt")"
done
[ "$status" -eq 0 ] || { echo "run-demo: a client failed" >&2; exit 1; }
echo

echo "== outputs against the NumPy float64 reference"
"$py" "$reference" "$net" --output "$home/reference.npy" >/dev/null
"$py" - "$home/reference.npy" "$home/out-a/logits.npy" "$home/out-b/logits.npy" <<'PY'
import sys
import numpy as np
want = np.load(sys.argv[1])
tolerance = 1e-4  # tests/networks/check_network.py's FP32 tolerance
for name, path in zip("ab", sys.argv[2:]):
    got = np.load(path)
    if got.dtype != np.float32 or got.shape != want.shape:
        sys.exit(f"FAIL: client {name}: logits are {got.dtype} {got.shape}, expected float32 {want.shape}")
    error = (np.abs(got.astype(np.float64) - want) / (1.0 + np.abs(want))).max()
    if not error <= tolerance:
        sys.exit(f"FAIL: client {name}: logits differ from the reference by {error:.3g} "
                 f"(|got - want| / (1 + |want|)), beyond {tolerance:g}")
    top = np.argsort(-got[0])[:5]
    logits = ", ".join(f"{v:.4f}" for v in got[0][top])
    print(f"client {name}: top-5 classes {top.tolist()} (logits {logits})")
    print(f"OK: max |got - want| / (1 + |want|) = {error:.3g} (tolerance {tolerance:g})")
PY
echo

echo "== stopping vacceld (SIGTERM)"
kill -TERM "$daemon"
status=0
wait "$daemon" || status=$?
daemon=
tail -n 3 "$home/vacceld.log"
[ "$status" -eq 0 ] || { echo "run-demo: vacceld exited $status after SIGTERM" >&2; exit 1; }
echo "vacceld stopped cleanly (exit 0)"
