#!/usr/bin/env bash
# fallback.sh VACCELCTL FIXTURES CASE
#
# No daemon at the socket (a path in an empty scratch directory). Cases:
#   run    a socket named with --socket or VACCEL_SOCKET is never replaced
#          `run` is refused, naming the socket, and writes nothing; forced
#          with VACCEL_TRANSPORT=socket the same. With nothing named and no
#          daemon at the default endpoints, `run` falls back to the engine in
#          process with the one-line notice, which -q silences, and its
#          output is exact (where a default endpoint exists, only the exact
#          output is checked: a daemon may serve it)
#   admin  sessions, limits get|set|reset and metrics each fail with the
#          clear "no daemon" refusal
source "$(dirname "$0")/lib.sh"
ctl=$1 fixtures=$2 case=$3
add=$fixtures/v1.0-add_1x4x4x4_f32
model=$add/flatbuffer-tflite/test_add_1x4x4x4_f32.tosa
socket=$scratch/run/vacceld.sock
unset VACCEL_TRANSPORT VACCEL_SOCKET

case $case in
run)
	inputs=(--input "$add/placeholder_0.npy" --input "$add/placeholder_1.npy")
	expect_refusal "no daemon accepts connections at $socket" \
		"$ctl" --socket "$socket" run "$model" "${inputs[@]}" --output-dir "$scratch/out"
	[ ! -e "$scratch/out/TosaOutput_0.npy" ] || fail "a refused run wrote an output"
	VACCEL_SOCKET=$socket expect_refusal "no daemon accepts connections at $socket" \
		"$ctl" run "$model" "${inputs[@]}" --output-dir "$scratch/out"
	[ ! -e "$scratch/out/TosaOutput_0.npy" ] || fail "a refused run wrote an output"
	VACCEL_TRANSPORT=socket expect_refusal "no daemon accepts connections at $socket" \
		"$ctl" --socket "$socket" run "$model" "${inputs[@]}" --output-dir "$scratch/out"
	[ ! -e "$scratch/out/TosaOutput_0.npy" ] || fail "a refused run wrote an output"
	defaults_exist=false
	[ -e /run/vaccel/vacceld.sock ] || [ -e /dev/vaccel ] && defaults_exist=true
	for quiet in "" -q; do
		# shellcheck disable=SC2086
		"$ctl" $quiet run "$model" "${inputs[@]}" --output-dir "$scratch/out" 2>"$scratch/err"
		cat "$scratch/err"
		compare "$scratch/out/TosaOutput_0.npy" "$add/tflite_result.npy" --exact
		rm -rf "$scratch/out"
		$defaults_exist && continue
		if [ -z "$quiet" ]; then
			[ "$(cat "$scratch/err")" = "vaccelctl: no daemon at /run/vaccel/vacceld.sock; running in process (embedded)" ] ||
				fail "stderr is not exactly the one-line fallback notice"
		else
			[ ! -s "$scratch/err" ] || fail "-q printed a note"
		fi
	done
	;;
admin)
	for command in "sessions" "sessions --json" "limits get" "limits set --uid 0 --buffers 1" \
		"limits reset --default" "metrics"; do
		# shellcheck disable=SC2086
		expect_refusal "no daemon at $socket: '${command%% --*}' asks vacceld" \
			"$ctl" --socket "$socket" $command
	done
	;;
*) fail "unknown case $case" ;;
esac
