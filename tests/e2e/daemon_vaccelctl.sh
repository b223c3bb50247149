#!/usr/bin/env bash
# daemon_vaccelctl.sh VACCELD VACCELCTL FIXTURES CASE
#
# vaccelctl against a real vacceld on a private socket. Cases:
#   run       `run` of the ADD fixture goes through the socket (--verbose
#             says so) and its output is exact
#   sessions  `sessions --json` lists a connected client with its pid and
#             uid; the table shows the same pid
#   limits    `limits set --uid <me> --buffers 1` makes a run needing 3
#             buffers fail naming the buffers limit; `limits get` shows the
#             rule; `limits reset` removes it and the run succeeds again
#   metrics   `metrics` is Prometheus text with HELP and TYPE lines for every
#             documented metric
#   not-admin a user who is neither root nor in the admin group is refused
#             `sessions` with PermissionDenied naming its uid, while `run`
#             through the same daemon works for it, and `limits mine` shows
#             it its own rule's totals (set by root) and nothing of others
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon.sh"
vacceld=$1 ctl=$2 fixtures=$3 case=$4
add=$fixtures/v1.0-add_1x4x4x4_f32
model=$add/flatbuffer-tflite/test_add_1x4x4x4_f32.tosa
inputs=(--input "$add/placeholder_0.npy" --input "$add/placeholder_1.npy")

start_daemon "$vacceld"

run_add() {
	"$ctl" --verbose run "$model" "${inputs[@]}" --output-dir "$scratch/out" "$@"
}

case $case in
run)
	run_add >"$scratch/run.out" 2>"$scratch/run.err" || {
		cat "$scratch/run.err"
		fail "run through the daemon failed"
	}
	cat "$scratch/run.err"
	grep -qx "vaccelctl: transport socket ($VACCEL_SOCKET)" "$scratch/run.err" ||
		fail "--verbose does not say the run went through the socket"
	! grep -q "running in process" "$scratch/run.err" || fail "a fallback notice with a daemon up"
	compare "$scratch/out/TosaOutput_0.npy" "$add/tflite_result.npy" --exact
	;;
sessions)
	# A client that stays connected: a run repeated until it is killed.
	"$ctl" run "$model" "${inputs[@]}" --output-dir "$scratch/bg" --repeat 1000000 \
		>/dev/null 2>"$scratch/bg.err" &
	client=$!
	track "$client"
	listed=
	for try in $(seq 100); do
		"$ctl" sessions --json >"$scratch/sessions.json"
		if "$PY" - "$scratch/sessions.json" "$client" "$(id -u)" <<'PY'; then
import json, sys
doc = json.load(open(sys.argv[1]))
pid, uid = int(sys.argv[2]), int(sys.argv[3])
mine = [s for s in doc["sessions"] if s["pid"] == pid]
if not mine:
    sys.exit(1)  # not connected yet
s = mine[0]
assert len(mine) == 1, mine
assert s["uid"] == uid, s
for key in ("id", "gid", "cgroup", "contexts", "buffers", "memory_bytes", "programs",
            "events_in_flight", "submissions", "errors"):
    assert key in s, f"session lacks {key}: {s}"
print(f"session {s['id']}: pid {s['pid']} uid {s['uid']} cgroup {s['cgroup']}")
PY
			listed=yes
			break
		fi
		kill -0 "$client" 2>/dev/null || { cat "$scratch/bg.err"; fail "the client exited"; }
		sleep 0.1
	done
	[ -n "$listed" ] || fail "sessions --json never listed pid $client: $(cat "$scratch/sessions.json")"
	"$ctl" sessions >"$scratch/sessions.txt"
	cat "$scratch/sessions.txt"
	head -1 "$scratch/sessions.txt" | grep -q "^id  *pid  *uid  *tenant  *cgroup  *contexts  *buffers  *memory  *programs  *gates  *in-flight  *submissions  *errors  *device-time  *held  *share$" ||
		fail "sessions table header is not the documented one"
	awk -v pid="$client" 'NR > 1 && $2 == pid { found = 1 } END { exit !found }' \
		"$scratch/sessions.txt" || fail "the sessions table lacks pid $client"
	;;
limits)
	me=$(id -u)
	"$ctl" limits set --uid "$me" --buffers 1 >"$scratch/set.txt"
	cat "$scratch/set.txt"
	grep -q "^uid:$me  " "$scratch/set.txt" || fail "limits set does not show the rule it set"
	"$ctl" limits get --json >"$scratch/rules.json"
	"$PY" - "$scratch/rules.json" "$me" <<'PY' || fail "limits get --json lacks the rule"
import json, sys
doc = json.load(open(sys.argv[1]))
rules = [r for r in doc["rules"] if r["selector"] == {"uid": int(sys.argv[2])}]
assert len(rules) == 1 and rules[0]["buffers"] == 1, doc
PY
	grep -q "buffers *= *1" "$daemon_config" || fail "the rule was not persisted in the config"
	"$ctl" limits mine >"$scratch/mine.txt"
	cat "$scratch/mine.txt"
	grep -q "^you: uid $me, " "$scratch/mine.txt" || fail "limits mine does not say who I am"
	grep -q "^rule: uid:$me; tenant uid:$me; weight 100, priority batch, device share 100%$" \
		"$scratch/mine.txt" || fail "limits mine does not name my rule"
	expect_refusal "buffers" run_add
	grep -q "ResourceLimit" "$scratch/stderr" || fail "the refusal does not say ResourceLimit"
	grep -q "uid $me holds 1 of its 1 buffers on device 0 across 1 session; free buffers there or raise the rule" "$scratch/stderr" ||
		fail "the refusal does not name the tenant, its total and its use"
	"$ctl" limits reset --uid "$me" >"$scratch/reset.txt"
	grep -qx "rule uid:$me removed" "$scratch/reset.txt" || fail "reset says: $(cat "$scratch/reset.txt")"
	"$ctl" limits reset --uid "$me" | grep -qx "no rule uid:$me: nothing removed" ||
		fail "a second reset does not say nothing was removed"
	run_add >/dev/null 2>&1 || fail "the run still fails after limits reset"
	compare "$scratch/out/TosaOutput_0.npy" "$add/tflite_result.npy" --exact
	;;
metrics)
	# One session with work done, so the per-session metrics have a sample.
	run_add >/dev/null 2>&1 || fail "run through the daemon failed"
	"$ctl" metrics >"$scratch/metrics.txt"
	for name in vaccel_device_sessions vaccel_device_contexts vaccel_device_buffer_bytes \
		vaccel_device_events_in_flight vaccel_device_submissions_total \
		vaccel_session_memory_bytes vaccel_session_events_in_flight \
		vaccel_session_submissions_total vaccel_session_errors_total vaccel_sessions \
		vaccel_daemon_uptime_seconds; do
		grep -q "^# HELP $name " "$scratch/metrics.txt" || fail "no HELP line for $name"
		grep -q "^# TYPE $name \(gauge\|counter\)$" "$scratch/metrics.txt" ||
			fail "no TYPE line for $name"
	done
	grep -q '^vaccel_device_submissions_total{device="0",name="[^"]*"} [1-9]' \
		"$scratch/metrics.txt" || fail "the device's submissions counter does not count the run"
	echo "metrics: $(grep -c '^# TYPE' "$scratch/metrics.txt") metric families"
	;;
not-admin)
	# As root: become nobody (65534) for the client. Otherwise this user is
	# already no admin (the daemon runs without an admin group it knows).
	as_user=()
	outsider=$(id -u)
	if [ "$outsider" -eq 0 ]; then
		outsider=65534
		as_user=(setpriv --reuid "$outsider" --regid "$outsider" --clear-groups)
		chmod 0755 "$scratch"  # the socket's directory, reachable by the outsider
	fi
	mkdir "$scratch/outsider"
	[ "$outsider" -eq "$(id -u)" ] || chown "$outsider" "$scratch/outsider"
	expect_refusal "PermissionDenied: the daemon's admin channel (sessions) serves root and members of its admin group on the host, never a process inside a container (whatever its uid), and uid $outsider" \
		"${as_user[@]}" "$ctl" sessions
	expect_refusal "uid $outsider" "${as_user[@]}" "$ctl" limits set --default --buffers 1
	# The rule root sets for the outsider (a user who is not root cannot
	# set one: then the outsider has no rule and the default totals).
	rule=none
	if [ "$(id -u)" -eq 0 ]; then
		"$ctl" limits set --uid "$outsider" --contexts 3 --sessions 5 >/dev/null
		rule=uid:$outsider
	fi
	"${as_user[@]}" "$ctl" limits mine --json >"$scratch/mine.json" 2>"$scratch/mine.err" ||
		{ cat "$scratch/mine.err"; fail "limits mine was refused to uid $outsider"; }
	"$PY" - "$scratch/mine.json" "$outsider" "$rule" <<'PY' || fail "limits mine --json is not the outsider's own"
import json, sys
doc = json.load(open(sys.argv[1]))
me, rule = int(sys.argv[2]), sys.argv[3]
assert doc["caller"]["uid"] == me and doc["rule"] == rule, doc
assert doc["tenant"] == "uid:%d" % me and doc["devices"], doc
if rule != "none":
    assert doc["sessions"]["total"] == 5, doc
    assert all(d["contexts"]["total"] == 3 for d in doc["devices"]), doc
assert "tenants" not in doc and "sessions" not in json.dumps(doc["devices"]), doc
PY
	"${as_user[@]}" "$ctl" --verbose run "$model" "${inputs[@]}" --output-dir "$scratch/outsider" \
		2>"$scratch/outsider.err" || { cat "$scratch/outsider.err"; fail "the outsider's run failed"; }
	grep -q "transport socket" "$scratch/outsider.err" || fail "the outsider's run did not use the daemon"
	compare "$scratch/outsider/TosaOutput_0.npy" "$add/tflite_result.npy" --exact
	;;
*) fail "unknown case $case" ;;
esac
