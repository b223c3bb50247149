#!/usr/bin/env bash
# daemon_killed.sh VACCELD VACCELCTL CLIENT FIXTURE
#
# kill -9 of the daemon while clients are parked in vaccel_event_wait():
# each client's wait returns -ENODEV (DeviceLost, PEER_GONE) within 1 s of
# the kill, and so does every later call it makes (the client measures and
# asserts both; the kill time is written just before the kill, so its figure
# can only overstate the delay).
source "$(dirname "$0")/lib.sh"
clients=3

start_daemon
pids=()
for i in $(seq $clients); do
	"$client" park 1024 12 "$scratch/kill_time" >"$scratch/parked.$i.out" 2>&1 &
	pids+=($!)
	track $!
done
for i in $(seq $clients); do
	wait_for_line "$scratch/parked.$i.out" parked
done
sleep 0.3  # into their waits
date +%s%N >"$scratch/kill_time"
kill_daemon
for i in $(seq $clients); do
	expect_exit "${pids[$((i - 1))]}" "parked client $i ($(cat "$scratch/parked.$i.out"))"
	grep '^park:' "$scratch/parked.$i.out"
done
