#!/usr/bin/env bash
# run-daemon-benchmarks.sh - the daemon's benchmarks against one vacceld.
#
# Usage: benchmarks/run-daemon-benchmarks.sh [BUILD_DIR]   (default: build)
#
# Starts vacceld from BUILD_DIR on a private socket (serving the CPU device
# with default limits), runs the SOCK_SEQPACKET floor, the no-op round trip
# (socket vs in process vs floor), the 1/4/16-client throughput, the
# 64 MiB transfer and the fast-path (vaccel_run, mapped buffers) benchmarks
# against it, then stops it with SIGTERM and
# checks that it exited cleanly. Each benchmark prints its figures beside
# the floor or baseline it measured in the same run. (Run bench_roundtrip
# alone to also get the set with every process pinned to one CPU: that one
# starts pinned daemons of its own.) Exit status: non-zero if any benchmark
# or the daemon failed.
set -u -o pipefail

build=${1:-build}
bench="$build/benchmarks"
vacceld=${VACCELD:-}
if [[ -z "$vacceld" ]]; then
    for candidate in "$build/userspace/daemon/vacceld" "$build/userspace/daemon/src/vacceld"; do
        [[ -x "$candidate" ]] && vacceld=$candidate && break
    done
fi
if [[ -z "$vacceld" ]]; then
    vacceld=$(find "$build" -name vacceld -type f -perm -u+x -print -quit 2>/dev/null)
fi
if [[ -z "$vacceld" || ! -x "$vacceld" ]]; then
    echo "run-daemon-benchmarks: no vacceld in $build; build it (cmake --build $build --target vacceld) or set VACCELD" >&2
    exit 1
fi
for program in bench_seqpacket_floor bench_roundtrip bench_throughput bench_transfer bench_fastpath; do
    if [[ ! -x "$bench/$program" ]]; then
        echo "run-daemon-benchmarks: $bench/$program is missing; build the benchmarks first" >&2
        exit 1
    fi
done

dir=$(mktemp -d /tmp/vaccel-bench-XXXXXX)
socket="$dir/vacceld.sock"
log="$dir/vacceld.log"
printf '# Written by run-daemon-benchmarks.sh: the CPU device, default limits.\n[daemon]\ndevices = ["cpu"]\n' >"$dir/vacceld.toml"

"$vacceld" --socket "$socket" --config "$dir/vacceld.toml" --log-level warn 2>"$log" &
daemon=$!
stop_daemon() {
    if kill -0 "$daemon" 2>/dev/null; then
        kill -TERM "$daemon"
        for _ in $(seq 100); do kill -0 "$daemon" 2>/dev/null || break; sleep 0.05; done
        if kill -0 "$daemon" 2>/dev/null; then
            echo "run-daemon-benchmarks: vacceld did not stop within 5 s of SIGTERM; killing it" >&2
            kill -KILL "$daemon"
        fi
    fi
    wait "$daemon"
}
cleanup() { rm -rf "$dir"; }
trap 'stop_daemon >/dev/null 2>&1; cleanup' INT TERM

# Ready once the socket exists and the daemon says it serves (its stderr).
for _ in $(seq 200); do
    [[ -S "$socket" ]] && grep -q "serving" "$log" 2>/dev/null && break
    kill -0 "$daemon" 2>/dev/null || break
    sleep 0.05
done
if [[ ! -S "$socket" ]] || ! kill -0 "$daemon" 2>/dev/null; then
    echo "run-daemon-benchmarks: vacceld did not start serving on $socket:" >&2
    cat "$log" >&2
    stop_daemon
    cleanup
    exit 1
fi

echo "vacceld ($vacceld) serving on $socket"
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), kernel $(uname -r), $(date -u +%Y-%m-%dT%H:%MZ)"
failed=0
run() {
    echo
    echo "== $*"
    "$@" || { echo "run-daemon-benchmarks: $1 failed" >&2; failed=1; }
}
run "$bench/bench_seqpacket_floor"
run "$bench/bench_roundtrip" --socket "$socket"
run "$bench/bench_throughput" --socket "$socket"
run "$bench/bench_transfer" --socket "$socket"
run "$bench/bench_fastpath" --socket "$socket"

stop_daemon
status=$?
if [[ $status -ne 0 ]]; then
    echo "run-daemon-benchmarks: vacceld exited with status $status on SIGTERM:" >&2
    cat "$log" >&2
    failed=1
fi
cleanup
exit $failed
