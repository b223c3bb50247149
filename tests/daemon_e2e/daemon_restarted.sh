#!/usr/bin/env bash
# daemon_restarted.sh VACCELD VACCELCTL CLIENT FIXTURE
#
# Limits set at run time with `vaccelctl limits set` are persisted in the
# config file (rewritten atomically) and survive a kill -9 of the daemon: a
# daemon restarted with the same config lists them and enforces them on new
# clients.
source "$(dirname "$0")/lib.sh"

write_config
start_daemon
"$ctl" limits set --uid 0 --buffers 5 --queues 2 || fail "vaccelctl limits set exited non-zero"
kill_daemon
echo "daemon killed after limits set; restarting with the same config"
wait_for_socket_refused
start_daemon

"$ctl" limits get --json >"$scratch/limits.json" || fail "vaccelctl limits get exited non-zero"
json_check "$scratch/limits.json" \
	"[(r['buffers'], r['queues']) for r in doc['rules'] if r['selector'] == {'uid': 0}] == [(5, 2)]"
"$client" limit buffers 5
"$client" limit queues 2
stop_daemon
