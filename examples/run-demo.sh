#!/usr/bin/env bash
# run-demo.sh BUILD_DIR - the vaccel demo: one daemon, two clients sharing it.
#
#  1. starts vacceld on a private socket (a fresh temporary directory)
#     serving the CPU and every Vulkan device the machine has (Mesa's
#     lavapipe on a machine without a GPU, which `make deps` installs);
#  2. runs the example MLP through `vaccelctl run` from two clients at once
#     (enough --repeat that they overlap): client a on the CPU, client b on
#     the first Vulkan device when there is one (else also on the CPU), and
#     shows `vaccelctl sessions` while both are running;
#  3. prints each client's timing and output, and checks both outputs;
#  4. stops the daemon with SIGTERM and requires a clean exit (status 0).
#
# The model, its input and its expected output are generated at build time
# into BUILD_DIR/examples by make-example-mlp (a TOSA 1.0 graph written with
# the project's own builder; the expected output comes from the generator's
# double-precision loops, not from any vaccel backend). Exits non-zero if an
# output differs from expected.npy by more than 1e-5 relative, or if the
# daemon does not stop cleanly.
set -euo pipefail

build=${1:?usage: examples/run-demo.sh BUILD_DIR}
vacceld=$build/userspace/daemon/vacceld
ctl=$build/tools/vaccelctl/vaccelctl
examples=$build/examples
repeat=${DEMO_REPEAT:-3000}

for file in "$vacceld" "$ctl" "$examples/mlp.tosa" "$examples/input.npy" "$examples/expected.npy"; do
	[ -e "$file" ] || { echo "run-demo: $file is missing: build first (make)" >&2; exit 1; }
done
py=
for candidate in python3 /usr/bin/python3; do
	if command -v "$candidate" >/dev/null && "$candidate" -c 'import numpy' 2>/dev/null; then
		py=$candidate
		break
	fi
done
[ -n "$py" ] || { echo "run-demo: python3 with NumPy is needed: make deps" >&2; exit 1; }

# The daemon's private home: socket, config and log. Whatever happens, the
# daemon and the clients do not outlive the demo.
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
echo "== two clients: vaccelctl run mlp.tosa --repeat $repeat, at the same time"
echo "   x [4,16] -> MATMUL+ADD+RELU -> MATMUL+ADD+SIGMOID -> y [4,8]"
echo "   client a on cpu, client b on $device_b"
for name in a b; do
	device=cpu
	[ "$name" = b ] && device=$device_b
	"$ctl" --verbose run "$examples/mlp.tosa" --input "x=$examples/input.npy" --device "$device" \
		--output-dir "$home/out-$name" --repeat "$repeat" >"$home/run-$name.txt" 2>&1 &
	clients+=($!)
done
echo "   client a: pid ${clients[0]}, client b: pid ${clients[1]}"

# Show the sessions once both clients have a context, i.e. are running.
for _ in $(seq 200); do
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

echo "== outputs y against expected.npy"
"$py" - "$examples/expected.npy" "$home/out-a/y.npy" "$home/out-b/y.npy" <<'PY'
import sys
import numpy as np
expected = np.load(sys.argv[1])
np.set_printoptions(precision=6, suppress=True, linewidth=100)
for name, path in zip("ab", sys.argv[2:]):
    y = np.load(path)
    if y.dtype != expected.dtype or y.shape != expected.shape:
        sys.exit(f"FAIL: client {name}: y is {y.dtype} {y.shape}, expected {expected.dtype} {expected.shape}")
    relative = np.abs(y.astype(np.float64) - expected) / np.abs(expected.astype(np.float64))
    if not np.all(relative <= 1e-5):
        sys.exit(f"FAIL: client {name}: y differs from expected.npy by up to {relative.max():.3g} relative")
    print(f"client {name}: y =")
    print(y)
    print(f"OK: matches expected.npy (max relative error {relative.max():.3g}, tolerance 1e-5)")
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
