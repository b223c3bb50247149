#!/usr/bin/env bash
# tenant_totals.sh VACCELD VACCELCTL CLIENT FIXTURE CASE (memory | contexts | sessions)
#
# A rule's limits are its tenant's totals across all its sessions
# (docs/adr/0024-tenants.md): separate processes of uid 65534, each with a
# session of its own, cannot together hold more than the rule for uid
# 65534 allows. Each process (the client's tenant-hold mode) prints "held"
# or "refused: SENTENCE"; a holder keeps its session, context and buffer
# until the pipe on its stdin is closed.
source "$(dirname "$0")/lib.sh"
case_=$1
nobody=65534
mib=$((1024 * 1024))

# hold NAME BYTES: a tenant process, left holding (or refused); its line
# is in $scratch/NAME.out, its stdin pipe open on the fd in holders[NAME].
declare -A holders pids
hold() {
	local name=$1 bytes=$2 fd
	mkfifo "$scratch/$name.in"
	"$client" tenant-hold "$nobody" "$bytes" <"$scratch/$name.in" >"$scratch/$name.out" 2>&1 &
	pids[$name]=$!
	track $!
	exec {fd}>"$scratch/$name.in"
	holders[$name]=$fd
	for _ in $(seq 600); do
		[ -s "$scratch/$name.out" ] && break
		sleep 0.05
	done
	[ -s "$scratch/$name.out" ] || fail "$name printed nothing in 30 s"
}
# expect NAME LINE: what the process printed, exactly.
expect() {
	local got
	got=$(head -n 1 "$scratch/$1.out")
	[ "$got" = "$2" ] || fail "$1 printed '$got', expected '$2'"
}
# release NAME: close its stdin; it frees everything and exits 0.
release() {
	local fd=${holders[$1]}
	exec {fd}>&-
	unset "holders[$1]"
	expect_exit "${pids[$1]}" "$1"
	# The daemon tears the session down after the client has gone.
	for _ in $(seq 100); do
		[[ $("$ctl" tenants --json) == *"\"uid:$nobody\""* ]] || return 0
		sleep 0.1
	done
	fail "the tenant still holds a session 10 s after its last process exited"
}
tenants_json() {
	"$ctl" tenants --json >"$scratch/tenants.json" || fail "vaccelctl tenants --json exited non-zero"
}

case $case_ in
memory)
	# The issue's four processes: 60 MiB each against a 64 MiB total.
	write_config '[[rule]]' "uid = $nobody" 'memory = "64M"' 'contexts = 4'
	start_daemon
	hold a $((60 * mib))
	expect a held
	for name in b c d; do
		hold "$name" $((60 * mib))
		expect "$name" "refused: ResourceLimit: uid $nobody holds 60.0 MiB of its 64.0 MiB of memory on device 0 across 2 sessions; free buffers there or raise the rule"
	done
	tenants_json
	json_check "$scratch/tenants.json" \
		"[t['sessions']['open'] for t in doc['tenants'] if t['tenant'] == 'uid:$nobody'] == [1]" \
		"[t['devices'][0]['memory_bytes'] for t in doc['tenants'] if t['tenant'] == 'uid:$nobody'] == [{'used': $((60 * mib)), 'total': $((64 * mib))}]" \
		"[t['devices'][0]['contexts'] for t in doc['tenants'] if t['tenant'] == 'uid:$nobody'] == [{'used': 1, 'total': 4}]"
	"$ctl" metrics >"$scratch/metrics.txt" || fail "vaccelctl metrics exited non-zero"
	grep -qx "vaccel_tenant_memory_bytes_used{tenant=\"uid:$nobody\",device=\"0\"} $((60 * mib))" "$scratch/metrics.txt" ||
		fail "metrics lack the tenant's memory use: $(grep vaccel_tenant_memory "$scratch/metrics.txt")"
	grep -qx "vaccel_tenant_memory_bytes_total{tenant=\"uid:$nobody\",device=\"0\"} $((64 * mib))" "$scratch/metrics.txt" ||
		fail "metrics lack the tenant's memory total"
	"$ctl" tenants >"$scratch/tenants.txt" || fail "vaccelctl tenants exited non-zero"
	grep -q "^uid:$nobody .* 60.0 MiB/64.0 MiB" "$scratch/tenants.txt" ||
		fail "vaccelctl tenants does not show the use against the total: $(cat "$scratch/tenants.txt")"
	# Everything a holder had is given back when it ends.
	release a
	hold e $((60 * mib))
	expect e held
	;;
contexts)
	write_config '[[rule]]' "uid = $nobody" 'contexts = 1'
	start_daemon
	hold a 4096
	expect a held
	hold b 4096
	expect b "refused: ResourceLimit: uid $nobody holds 1 of its 1 contexts on device 0 across 2 sessions; destroy contexts there or raise the rule"
	;;
sessions)
	write_config '[[rule]]' "uid = $nobody" 'sessions = 2'
	start_daemon
	hold a 4096
	hold b 4096
	expect a held
	expect b held
	hold c 4096
	expect c "refused: ResourceLimit: uid $nobody has 2 of its 2 sessions open; close a session or raise the rule"
	# Raised at run time, the next session fits.
	"$ctl" limits set --uid "$nobody" --sessions 3 >/dev/null || fail "limits set --sessions exited non-zero"
	hold d 4096
	expect d held
	tenants_json
	json_check "$scratch/tenants.json" \
		"[t['sessions'] for t in doc['tenants'] if t['tenant'] == 'uid:$nobody'] == [{'open': 3, 'total': 3}]"
	;;
*) fail "unknown case $case_" ;;
esac
for name in "${!holders[@]}"; do
	fd=${holders[$name]}
	exec {fd}>&- 2>/dev/null || true
done
stop_daemon
echo "tenant totals ($case_): held exactly what the rule allows across sessions"
