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
# the floor or baseline it measured in the same run. The daemon is
# tests/support/vacceld.sh's (the CPU device, default limits). (Run bench_roundtrip
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

scratch=$(mktemp -d /tmp/vaccel-bench-XXXXXX)
source "$(dirname "$0")/../tests/support/vacceld.sh"
socket=$VACCEL_SOCKET
start_daemon "$vacceld"

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

# A daemon that does not exit 0 on SIGTERM fails the run (its log printed).
stop_daemon
exit $failed
