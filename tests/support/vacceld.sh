# vacceld.sh - a private vacceld for one test or benchmark script (sourced,
# not run, after the script has made its scratch directory $scratch).
#
# Owns: the daemon process of one script, its socket, config and log, all
# inside $scratch, and the processes the script tracks. Decides:
#  - the daemon listens on $scratch/run/vacceld.sock (exported as
#    VACCEL_SOCKET, so every client of the script finds it) and keeps its
#    limits in $daemon_config ($scratch/vacceld.toml), never in /etc; with
#    no config written first it serves the CPU device;
#  - it logs at $daemon_log_level (info unless set before sourcing: at
#    least info, since readiness is read from the log);
#  - start_daemon returns once the daemon logs that it serves on the socket
#    (10 s at most; the log is appended to across restarts, so it waits for
#    one more such line than there was);
#  - on every exit path each tracked process and the daemon are killed with
#    SIGKILL and reaped, then $scratch is removed; a failure prints the
#    daemon's log (its last 40 lines) first.

: "${scratch:?vacceld.sh is sourced after \$scratch is made}"
export VACCEL_SOCKET=$scratch/run/vacceld.sock
daemon_config=$scratch/vacceld.toml
daemon_log=$scratch/vacceld.log
daemon_log_level=${daemon_log_level:-info}
# More vacceld options for start_daemon (e.g. --cdi-spec FILE), set by the script.
daemon_args=()
# A command that execs vacceld (e.g. setpriv dropping capabilities), set by
# the script; the daemon's pid stays the one started.
daemon_wrapper=()
daemon_pid=
tracked_pids=()

if ! declare -F fail >/dev/null; then
	fail() {
		echo "FAIL: $*" >&2
		exit 1
	}
fi

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

# track PID: killed on exit if still running then.
track() {
	tracked_pids+=("$1")
}

# start_daemon [VACCELD]: vacceld ($vacceld unless given) on the private
# socket with $daemon_config.
start_daemon() {
	local binary=${1:-${vacceld:-}}
	[ -x "$binary" ] || fail "vacceld not found at '$binary'"
	[ -f "$daemon_config" ] || printf '[daemon]\ndevices = ["cpu"]\n' >"$daemon_config"
	local served
	served=$(grep -c "vacceld: serving .* on $VACCEL_SOCKET" "$daemon_log" 2>/dev/null || true)
	"${daemon_wrapper[@]}" "$binary" --socket "$VACCEL_SOCKET" --config "$daemon_config" \
		--log-level "$daemon_log_level" "${daemon_args[@]}" 2>>"$daemon_log" &
	daemon_pid=$!
	local tries
	for tries in $(seq 100); do
		[ "$(grep -c "vacceld: serving .* on $VACCEL_SOCKET" "$daemon_log")" -gt "${served:-0}" ] &&
			return 0
		kill -0 "$daemon_pid" 2>/dev/null || fail "vacceld exited before serving"
		sleep 0.1
	done
	fail "vacceld did not report serving on $VACCEL_SOCKET within 10 s"
}

# stop_daemon: SIGTERM, and the daemon must exit 0 within 10 s (a clean
# stop); else it is killed and the script fails.
stop_daemon() {
	kill -TERM "$daemon_pid"
	local tries
	for tries in $(seq 200); do
		kill -0 "$daemon_pid" 2>/dev/null || break
		sleep 0.05
	done
	kill -0 "$daemon_pid" 2>/dev/null && kill -9 "$daemon_pid"
	local status=0
	wait "$daemon_pid" || status=$?
	daemon_pid=
	[ "$status" -eq 0 ] || fail "vacceld exited $status after SIGTERM (expected 0)"
}

# kill_daemon: SIGKILL, reaped.
kill_daemon() {
	kill -9 "$daemon_pid"
	wait "$daemon_pid" 2>/dev/null || true
	daemon_pid=
}
