#!/usr/bin/env bash
# daemon_killed.sh VACCELD VACCELCTL CLIENT FIXTURE
#
# kill -9 of the daemon while clients are parked in vaccel_event_wait():
# each client's wait returns -ENODEV (DeviceLost, PEER_GONE: the loss ended
# it, not its 120 s deadline), and so does every later call it makes. The
# client prints how long after the kill its wait returned (the kill time is
# written just before the kill, so the figure can only overstate the delay);
# that time is a figure, not a check.
source "$(dirname "$0")/lib.sh"
clients=3

start_daemon
pids=()
for i in $(seq $clients); do
	"$client" park 2048 12 "$scratch/kill_time" >"$scratch/parked.$i.out" 2>&1 &
	pids+=($!)
	track $!
done
for i in $(seq $clients); do
	wait_for_line "$scratch/parked.$i.out" parked
done
# Certainly into their waits: the daemon lists one parked wait per client
# (10 s at most).
parked=0
for tries in $(seq 100); do
	parked=$("$ctl" sessions --json | python3 -c 'import json, sys
print(sum(s["waits_parked"] for s in json.load(sys.stdin)["sessions"]))')
	[ "$parked" -ge "$clients" ] && break
	sleep 0.1
done
[ "$parked" -ge "$clients" ] || fail "the daemon holds $parked parked waits, expected $clients"
date +%s%N >"$scratch/kill_time"
kill_daemon
for i in $(seq $clients); do
	expect_exit "${pids[$((i - 1))]}" "parked client $i ($(cat "$scratch/parked.$i.out"))"
	grep '^park:' "$scratch/parked.$i.out"
done
