#!/usr/bin/env bash
# usage.sh VACCELCTL VACCELD - command lines the tools cannot parse exit 2,
# with a first line of our own words (never the parser's stock text) naming
# what was wrong and, for a near miss, what was meant; the second line points
# at the --help of the command being parsed. --help and --version exit 0.
source "$(dirname "$0")/lib.sh"
ctl=$1 daemon=$2

# usage STATUS "FIRST LINE" COMMAND...
usage() {
	local want_status=$1 want=$2
	shift 2
	local status=0
	"$@" >"$scratch/out" 2>"$scratch/err" || status=$?
	[ "$status" -eq "$want_status" ] || { cat "$scratch/err"; fail "'$*' exited $status, not $want_status"; }
	local first
	first=$(head -n 1 "$scratch/err")
	[ "$first" = "$want" ] || fail "'$*' said \"$first\", not \"$want\""
	echo "ok: $* -> $status: $first"
}

usage 2 "vaccelctl: 'devcies' is not a command of vaccelctl; did you mean 'devices'?" "$ctl" devcies
usage 2 "vaccelctl: 'frobnicate' is not a command of vaccelctl" "$ctl" frobnicate
usage 2 "vaccelctl: vaccelctl needs a command: devices, run, import, sessions, limits, tenants, containers, cdi, metrics" "$ctl"
usage 2 "vaccelctl: 'sett' is not a command of vaccelctl limits; did you mean 'set'?" "$ctl" limits sett
usage 2 "vaccelctl: vaccelctl limits needs a command: get, mine, set, reset" "$ctl" limits
usage 2 "vaccelctl: vaccelctl devices has no option --jsn; did you mean '--json'?" "$ctl" devices --jsn
usage 2 "vaccelctl: vaccelctl run has no option --frobnicate" "$ctl" run m.tosa --frobnicate
usage 2 "vaccelctl: vaccelctl sessions takes no argument 'extra'" "$ctl" sessions extra
usage 2 "vaccelctl: --uid does not take 'abc': it takes a number" "$ctl" limits set --uid abc --weight 3
usage 2 "vaccelctl: --repeat takes 1 to 1000000, not 0" "$ctl" run m.tosa --repeat 0
usage 2 "vaccelctl: vaccelctl run needs its model argument" "$ctl" run
[ "$(sed -n 2p "$scratch/err")" = "vaccelctl: see 'vaccelctl run --help'" ] ||
	fail "the second line does not point at the command's --help"
usage 0 "" "$ctl" --version
grep -q "^vaccelctl " "$scratch/out" || fail "--version printed no version"
usage 0 "" "$ctl" run --help
usage 2 "vacceld: --log-level takes one of trace|debug|info|warn|error, not 'loud'" "$daemon" --log-level loud
usage 2 "vacceld: vacceld has no option --sockt; did you mean '--socket'?" "$daemon" --sockt /tmp/x
