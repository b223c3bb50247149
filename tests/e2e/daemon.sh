# daemon.sh - a private vacceld for one end-to-end script (sourced after
# lib.sh, not run).
#
# Owns: the daemon process of one script, its socket, config and log, all
# inside the script's scratch directory. Decides:
#  - the daemon listens on $scratch/run/vacceld.sock (exported as
#    VACCEL_SOCKET, so every client of the script finds it) and keeps its
#    limits in $scratch/vacceld.toml, never in /etc;
#  - start_daemon returns once the socket accepts a connection (10 s at
#    most; a daemon that exits or never accepts fails the script);
#  - on every exit path the daemon (and anything started with track) is
#    killed with SIGKILL and reaped before the scratch directory goes; a
#    failure prints the daemon's log.

export VACCEL_SOCKET=$scratch/run/vacceld.sock
unset VACCEL_TRANSPORT
daemon_config=$scratch/vacceld.toml
daemon_log=$scratch/vacceld.log
daemon_pid=
tracked_pids=()

stop_everything() {
	local status=$?
	local pid
	for pid in "${tracked_pids[@]}" $daemon_pid; do
		kill -9 "$pid" 2>/dev/null || true
	done
	for pid in "${tracked_pids[@]}" $daemon_pid; do
		wait "$pid" 2>/dev/null || true
	done
	if [ "$status" -ne 0 ] && [ -f "$daemon_log" ]; then
		echo "--- vacceld log (last 40 lines)" >&2
		tail -n 40 "$daemon_log" >&2
	fi
	rm -rf "$scratch"
	exit "$status"
}
trap stop_everything EXIT
trap 'exit 130' INT TERM

# track PID: killed on exit if still running.
track() {
	tracked_pids+=("$1")
}

# socket_accepts PATH: a SOCK_SEQPACKET connection to PATH succeeds.
socket_accepts() {
	"$PY" - "$1" <<'PY' 2>/dev/null
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
s.close()
PY
}

# start_daemon VACCELD: vacceld serving the CPU device on the private socket.
start_daemon() {
	local vacceld=$1
	[ -x "$vacceld" ] || fail "vacceld not found at $vacceld"
	[ -f "$daemon_config" ] || printf '[daemon]\ndevices = ["cpu"]\n' >"$daemon_config"
	"$vacceld" --socket "$VACCEL_SOCKET" --config "$daemon_config" --log-level info \
		2>>"$daemon_log" &
	daemon_pid=$!
	local try
	for try in $(seq 100); do
		socket_accepts "$VACCEL_SOCKET" && return 0
		kill -0 "$daemon_pid" 2>/dev/null || fail "vacceld exited before accepting connections"
		sleep 0.1
	done
	fail "vacceld did not accept connections on $VACCEL_SOCKET within 10 s"
}
