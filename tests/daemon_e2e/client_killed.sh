#!/usr/bin/env bash
# client_killed.sh VACCELD VACCELCTL CLIENT FIXTURE
#
# kill -9 of a client with long MATMUL submissions in flight: once its work
# ends the daemon releases its session (the sessions list drops it, device
# counters return to zero), and a client running at the same time is not
# disturbed (every one of its results exact).
source "$(dirname "$0")/lib.sh"

start_daemon
"$client" hold 1024 16 >"$scratch/holder.out" 2>&1 &
holder=$!
track $holder
wait_for_line "$scratch/holder.out" submitted
"$client" add-loop "$fixture" 300 >"$scratch/other.out" 2>&1 &
other=$!
track $other

sessions_json "$scratch/before.json"
json_check "$scratch/before.json" \
	"[s['events_in_flight'] > 0 for s in doc['sessions'] if s['pid'] == $holder] == [True]"
kill -9 $holder
# 128 + SIGKILL: it died of this kill, not on its own before it.
status=0
wait $holder || status=$?
[ "$status" -eq 137 ] || fail "the holder exited $status, expected 137 (killed by SIGKILL)"
echo "killed client $holder with 16 submissions in flight"

expect_exit $other "the other client ($(cat "$scratch/other.out"))"
grep -qx "add-loop: 300 of 300 rounds exact" "$scratch/other.out" ||
	fail "the other client: $(cat "$scratch/other.out")"
wait_for_no_sessions
expect_metric vaccel_device_contexts 0
expect_metric vaccel_device_buffer_bytes 0
expect_metric vaccel_device_events_in_flight 0
echo "the killed client's session is released; the other client's 300 results are exact"
stop_daemon
