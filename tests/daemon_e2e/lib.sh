# lib.sh - shared by the daemon end-to-end scripts (sourced, not run).
#
# Owns: the scratch directory of one test and the checks every script
# uses; the private daemon and the processes a test tracks are
# tests/support/vacceld.sh's. Decides:
#  - every script is called as SCRIPT VACCELD VACCELCTL CLIENT FIXTURE [ARGS];
#    sourcing this file takes the first four (the script's own arguments
#    remain in "$@");
#  - the daemon listens on a socket inside a fresh mkdtemp directory (made
#    0755); the clients find it through VACCEL_SOCKET and always use the
#    socket transport (VACCEL_TRANSPORT=socket, never a silent fallback);
#  - $config is the daemon's config file ($daemon_config).
set -euo pipefail

vacceld=$1 ctl=$2 client=$3 fixture=$4
shift 4

scratch=$(mktemp -d "${TMPDIR:-/tmp}/vaccel-daemon-e2e.XXXXXX")
# Other users (the non-admin test) must reach the socket inside it.
chmod 0755 "$scratch"

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# The daemon, its socket, config and log; track, start_daemon, stop_daemon,
# kill_daemon and the cleanup on exit.
source "$(dirname "${BASH_SOURCE[0]}")/../support/vacceld.sh"
export VACCEL_TRANSPORT=socket
config=$daemon_config

# write_config [RULE-LINES...]: a config serving the CPU device with the
# given lines appended (e.g. '[[rule]]' 'uid = 0' 'buffers = 5').
write_config() {
	{
		echo '[daemon]'
		echo 'devices = ["cpu"]'
		local line
		for line in "$@"; do echo "$line"; done
	} >"$config"
}

# wait_for_socket_refused: until connecting to the socket is refused (2 s at
# most). The kernel tears a killed process's io_uring down asynchronously,
# so its listening socket may accept connections for a moment after the
# process is reaped.
wait_for_socket_refused() {
	python3 - "$VACCEL_SOCKET" <<'PY' || fail "$VACCEL_SOCKET still accepts connections 2 s after the daemon died"
import socket, sys, time
for _ in range(200):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        s.connect(sys.argv[1])
    except OSError:
        sys.exit(0)
    finally:
        s.close()
    time.sleep(0.01)
sys.exit(1)
PY
}

# wait_for_line FILE LINE [SECONDS]: until FILE has LINE (a client's
# announcement), failing after SECONDS (default 30).
wait_for_line() {
	local file=$1 line=$2 limit=${3:-30} tries
	for tries in $(seq $((limit * 20))); do
		grep -qx -- "$line" "$file" 2>/dev/null && return 0
		sleep 0.05
	done
	fail "no '$line' in $file within $limit s: $(cat "$file" 2>/dev/null)"
}

# expect_exit PID NAME: the background process exits 0.
expect_exit() {
	local status=0
	wait "$1" || status=$?
	[ "$status" -eq 0 ] || fail "$2 exited $status"
}

# json_check FILE PYTHON-EXPRESSION...: each expression, with `doc` the
# parsed document and `me` the pid in $self (if set), must be true.
json_check() {
	local file=$1
	shift
	python3 - "$file" "${self:-0}" "$@" <<'PY' || fail "document $file: see above"
import json, sys
doc = json.load(open(sys.argv[1]))
me = int(sys.argv[2])
for expression in sys.argv[3:]:
    if not eval(expression):
        print(f"{expression} is false in: {json.dumps(doc)}", file=sys.stderr)
        sys.exit(1)
PY
}

# sessions_json FILE: `vaccelctl sessions --json` into FILE, with $self set
# to vaccelctl's pid (its own session is in the list).
sessions_json() {
	"$ctl" sessions --json >"$1" &
	self=$!
	wait "$self" || fail "vaccelctl sessions --json exited non-zero"
}

# wait_for_no_sessions: until the sessions document lists no session but
# vaccelctl's own (10 s at most); leaves it in $scratch/sessions.json.
wait_for_no_sessions() {
	local tries
	for tries in $(seq 100); do
		sessions_json "$scratch/sessions.json"
		if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(any(s["pid"] != int(sys.argv[2]) for s in d["sessions"]))' \
			"$scratch/sessions.json" "$self"; then
			return 0
		fi
		sleep 0.1
	done
	fail "sessions still listed 10 s after their clients exited: $(cat "$scratch/sessions.json")"
}

# metric NAME: the value (last field) of the first sample of NAME in
# `vaccelctl metrics` (label values may hold spaces).
metric() {
	# awk reads to the end: leaving early would kill vaccelctl with SIGPIPE
	# mid-document (and pipefail would fail the script).
	"$ctl" metrics | awk -v name="$1" '!found && ($1 == name || index($1, name "{") == 1) { print $NF; found = 1 }'
}

# expect_metric NAME VALUE
expect_metric() {
	local value
	value=$(metric "$1")
	[ -n "$value" ] && awk -v v="$value" -v e="$2" 'BEGIN { exit !(v + 0 == e + 0) }' ||
		fail "metric $1 is '$value', expected $2"
}
