#!/usr/bin/env bash
# cdi_generate.sh VACCELD VACCELCTL - `vaccelctl cdi generate` without a
# running daemon: the spec lists the devices a configuration would serve,
# as `vacceld --list-devices` opens them, and names that configuration's
# socket; with a daemon it lists the daemon's; an explicit socket that does
# not answer is refused, never replaced; a configuration a backend refuses
# is named with its file and line.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon.sh"
vacceld=$1 ctl=$2
# The private daemon's socket is named only once it runs (below).
daemon_socket=$VACCEL_SOCKET
unset VACCEL_SOCKET

printf '[daemon]\ndevices = ["cpu"]\nsocket = "%s/other.sock"\n\n[devices.cpu]\ncount = 2\n' \
	"$scratch" >"$scratch/two.toml"

# vacceld --list-devices: the document, the socket, no socket opened.
"$vacceld" --list-devices --config "$scratch/two.toml" >"$scratch/list.json" ||
	fail "vacceld --list-devices failed"
"$PY" - "$scratch/list.json" "$scratch/other.sock" <<'PY' || fail "--list-devices is not the config's devices"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["socket"] == sys.argv[2], doc
assert [d["index"] for d in doc["devices"]] == [0, 1], doc
assert all(d["name"].startswith("cpu") or "CPU" in d["name"] for d in doc["devices"]), doc
PY
[ -e "$scratch/other.sock" ] && fail "--list-devices opened the socket"

# cdi generate --config: from that configuration, no daemon asked.
"$ctl" cdi generate --config "$scratch/two.toml" --daemon-program "$vacceld" --socket-only \
	--output "$scratch/two.yaml" >"$scratch/out" || fail "cdi generate --config failed"
grep -q "^$scratch/two.yaml: 2 device(s) as vaccel.dev/accel=all" "$scratch/out" ||
	fail "cdi generate says: $(cat "$scratch/out")"
# The host's socket in the hooks, its directory mounted at /run/vaccel.
grep -q "\"--socket\", \"$scratch/other.sock\"" "$scratch/two.yaml" &&
	grep -q "VACCEL_SOCKET=/run/vaccel/other.sock" "$scratch/two.yaml" &&
	grep -q "hostPath: \"$scratch\"" "$scratch/two.yaml" ||
	fail "the spec does not name the configuration's socket"
for name in '"0"' '"1"' '"all"'; do
	grep -q "name: $name" "$scratch/two.yaml" || fail "the spec has no device $name"
done

# A backend's refusal of the configuration: its file and line.
printf '[devices.cpu]\nthreads = 2\ncolour = 1\n' >"$scratch/bad.toml"
status=0
"$ctl" cdi generate --config "$scratch/bad.toml" --daemon-program "$vacceld" --output - \
	>/dev/null 2>"$scratch/err" || status=$?
[ "$status" -eq 1 ] || fail "a refused configuration exited $status"
grep -q "vacceld: no device to serve: $scratch/bad.toml:3: \[devices.cpu\] colour is not a setting" \
	"$scratch/err" || fail "the refusal lacks the file and line: $(cat "$scratch/err")"

# An explicit socket nobody answers: refused, not replaced by the config.
status=0
VACCEL_SOCKET="$scratch/nobody.sock" "$ctl" cdi generate --daemon-program "$vacceld" --output - \
	>/dev/null 2>"$scratch/err" || status=$?
[ "$status" -eq 1 ] || fail "cdi generate with a dead explicit socket exited $status"
grep -q "or give --config FILE" "$scratch/err" || fail "the refusal says: $(cat "$scratch/err")"

# No socket named and none answering at the default one: the default
# configuration's devices, said on stderr (a daemon serving the default
# socket on this machine would answer instead, and the test says so).
status=0
env -u VACCEL_SOCKET "$ctl" cdi generate --daemon-program "$vacceld" --socket-only --output - \
	>"$scratch/implicit.yaml" 2>"$scratch/err" || status=$?
[ "$status" -eq 0 ] || fail "cdi generate with no daemon exited $status: $(cat "$scratch/err")"
grep -q "^vaccelctl: no daemon at /run/vaccel/vacceld.sock; the spec is made from the devices /etc/vaccel/vacceld.toml would serve$" \
	"$scratch/err" || fail "no note of where the devices came from (a daemon at the default socket?): $(cat "$scratch/err")"
grep -q 'name: "0"' "$scratch/implicit.yaml" || fail "the default configuration's spec has no device 0"

# With a daemon: its devices and its socket (start_daemon serves the CPU).
export VACCEL_SOCKET=$daemon_socket
start_daemon "$vacceld"
"$ctl" cdi generate --daemon-program "$vacceld" --socket-only --output - >"$scratch/daemon.yaml" ||
	fail "cdi generate through the daemon failed"
grep -q "\"--socket\", \"$VACCEL_SOCKET\"" "$scratch/daemon.yaml" ||
	fail "the spec does not name the daemon's socket"
echo "ok: cdi generate from a configuration and from a daemon"
