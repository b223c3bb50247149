#!/usr/bin/env bash
# fairness.sh VACCELD VACCELCTL CLIENT FIXTURE
#
# With one client flooding the CPU device (one process keeping 16 MATMUL
# [256 x 256] submissions queued over two queues, ~2 ms each), another
# client's median round trip (ADD fixture submit + wait) stays within 2x its
# unloaded median. Both are measured in this run against the same daemon,
# interleaved (4 rounds of: flooder stopped and drained -> 100 unloaded
# samples; flooder resumed and backlogged -> 100 loaded samples), so that
# load from outside the test falls on both alike; the medians of the 400
# samples of each kind are compared, and both are printed.
#
# Scope, measured on the 2-core machines: the CPU backend runs a
# submission to its end once started (no preemption). Two queues would let
# the flood occupy both workers, so that each small submission waits for a
# running MATMUL to finish; the fair queue's headroom rule
# (backends/cpu/src/fair_queue.hpp) keeps the flood to one worker while the
# measured client is active, and hands the other one to it.
source "$(dirname "$0")/lib.sh"
rounds=4 samples=100 matmul=256 depth=16 queues=2

flooder_in_flight() {
	sessions_json "$scratch/sessions.json"
	python3 -c 'import json, sys
doc = json.load(open(sys.argv[1]))
print(sum(s["events_in_flight"] for s in doc["sessions"] if s["pid"] == int(sys.argv[2])))' \
		"$scratch/sessions.json" "$flooder"
}

start_daemon
"$client" flood $matmul $depth $queues >"$scratch/flood.out" 2>&1 &
flooder=$!
track $flooder
wait_for_line "$scratch/flood.out" flooding

for round in $(seq $rounds); do
	kill -STOP $flooder
	for _ in $(seq 100); do
		[ "$(flooder_in_flight)" -eq 0 ] && break
		sleep 0.02
	done
	[ "$(flooder_in_flight)" -eq 0 ] || fail "the stopped flooder's work did not drain in 2 s"
	"$client" rtt "$fixture" $samples "$scratch/unloaded.ns" | sed "s/^/round $round unloaded: /"

	kill -CONT $flooder
	sleep 0.1
	backlog=$(flooder_in_flight)
	[ "$backlog" -ge $((depth / 2)) ] || fail "the flooder has only $backlog submissions in flight"
	"$client" rtt "$fixture" $samples "$scratch/loaded.ns" | sed "s/^/round $round loaded:   /"
	backlog=$(flooder_in_flight)
	[ "$backlog" -ge $((depth / 2)) ] ||
		fail "the flooder had only $backlog submissions in flight after the loaded samples"
done
kill -TERM $flooder
expect_exit $flooder "the flooder ($(cat "$scratch/flood.out"))"
grep '^flood:' "$scratch/flood.out"

median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int(NR / 2) + 1] }'; }
unloaded=$(median "$scratch/unloaded.ns")
loaded=$(median "$scratch/loaded.ns")
echo "median ADD round trip over $((rounds * samples)) samples each: unloaded $((unloaded / 1000)) us," \
	"loaded $((loaded / 1000)) us (ratio $(awk -v l="$loaded" -v u="$unloaded" \
	'BEGIN { printf "%.2f", l / u }'), bound 2.00)"
[ "$loaded" -le $((2 * unloaded)) ] || fail "the loaded median is over twice the unloaded one"
stop_daemon
