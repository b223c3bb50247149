#!/usr/bin/env bash
# concurrent_clients.sh VACCELD VACCELCTL CLIENT FIXTURE
#
# 16 client processes, each 200 submissions of the real ADD fixture over
# one daemon: every output is exact (each client compares every byte), no
# completion is lost (the device counts exactly 16 x 200 submissions), and
# once the clients have exited no session is left and every device counter
# (contexts, buffer bytes, events in flight) is back to zero.
source "$(dirname "$0")/lib.sh"
clients=16 rounds=200

start_daemon
pids=()
for i in $(seq $clients); do
	"$client" add-loop "$fixture" $rounds >"$scratch/client.$i.out" 2>&1 &
	pids+=($!)
	track $!
done
for i in $(seq $clients); do
	expect_exit "${pids[$((i - 1))]}" "client $i ($(cat "$scratch/client.$i.out"))"
	grep -qx "add-loop: $rounds of $rounds rounds exact" "$scratch/client.$i.out" ||
		fail "client $i: $(cat "$scratch/client.$i.out")"
done
echo "$clients clients x $rounds submissions: every output exact"

wait_for_no_sessions
json_check "$scratch/sessions.json" \
	'[s["pid"] for s in doc["sessions"]] == [me]' \
	'all(s["events_in_flight"] == 0 and s["contexts"] == 0 for s in doc["sessions"])'
expect_metric vaccel_device_submissions_total $((clients * rounds))
expect_metric vaccel_device_contexts 0
expect_metric vaccel_device_buffer_bytes 0
expect_metric vaccel_device_events_in_flight 0
echo "no session left; $((clients * rounds)) submissions counted; device counters at zero"
stop_daemon
