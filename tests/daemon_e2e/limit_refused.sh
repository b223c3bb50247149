#!/usr/bin/env bash
# limit_refused.sh VACCELD VACCELCTL CLIENT FIXTURE KIND (config | vaccelctl)
#
# The limit KIND (contexts, memory, buffers, programs, queues, events, gates), set
# for uid 0 (the tests run as root) either in the config file given to
# vacceld or at run time with `vaccelctl limits set`, is enforced: the
# client uses exactly up to it, and one more is refused with ResourceLimit
# naming the limit, its value and the use, leaving every counter unchanged
# (the client checks vaccel_context_limits before and after).
source "$(dirname "$0")/lib.sh"
kind=$1 source=$2

# The value each limit is set to, as the config file, vaccelctl and the
# client spell it.
case $kind in
contexts) config_line='contexts = 3' option=(--contexts 3) key=contexts value=3 ;;
memory) config_line='memory = "1M"' option=(--memory 1M) key=memory_bytes value=1048576 ;;
buffers) config_line='buffers = 5' option=(--buffers 5) key=buffers value=5 ;;
programs) config_line='programs = 2' option=(--programs 2) key=programs value=2 ;;
queues) config_line='queues = 2' option=(--queues 2) key=queues value=2 ;;
events) config_line='events = 4' option=(--events 4) key=events value=4 ;;
gates) config_line='gates = 3' option=(--gates 3) key=gates value=3 ;;
*) fail "unknown limit kind $kind" ;;
esac

case $source in
config)
	write_config '[[rule]]' 'uid = 0' "$config_line"
	start_daemon
	;;
vaccelctl)
	write_config
	start_daemon
	"$ctl" limits set --uid 0 "${option[@]}" || fail "vaccelctl limits set exited non-zero"
	grep -q '^uid = 0' "$config" || fail "limits set did not persist the rule: $(cat "$config")"
	;;
*) fail "unknown source $source" ;;
esac

"$ctl" limits get --json >"$scratch/limits.json" || fail "vaccelctl limits get exited non-zero"
json_check "$scratch/limits.json" \
	"[r['$key'] for r in doc['rules'] if r['selector'] == {'uid': 0}] == [$value]"

"$client" limit "$kind" "$value"
stop_daemon
