#!/usr/bin/env bash
# malformed.sh VACCELD VACCELCTL CLIENT FIXTURE KIND
#
# A malformed message of KIND on a raw connection: the daemon closes that
# connection (without answering), logs why, and goes on serving: a new
# connection is answered and a client running throughout gets every result
# exact.
source "$(dirname "$0")/lib.sh"
kind=$1

start_daemon
"$client" add-loop "$fixture" 300 >"$scratch/other.out" 2>&1 &
other=$!
track $other
"$client" malformed "$kind" >"$scratch/offender.out" 2>&1 &
offender=$!
track $offender
expect_exit $offender "the malformed-message client ($(cat "$scratch/offender.out"))"
cat "$scratch/offender.out"
# The reason is logged with the peer's pid, so it is this client's line.
grep -E "session [0-9]+ \(pid $offender uid [0-9]+\) closed: malformed message: " "$daemon_log" ||
	fail "the daemon logged no reason for closing pid $offender's connection"
expect_exit $other "the well-behaved client ($(cat "$scratch/other.out"))"
grep -qx "add-loop: 300 of 300 rounds exact" "$scratch/other.out" ||
	fail "the well-behaved client: $(cat "$scratch/other.out")"
stop_daemon
