#!/usr/bin/env bash
# fallback.sh VACCELCTL FIXTURES CASE
#
# No daemon at the socket (a path in an empty scratch directory). Cases:
#   run    `run` falls back to the engine in process with the one-line notice
#          on stderr, and its output is still exact; forced with
#          VACCEL_TRANSPORT=socket it is refused instead, naming the socket
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
	"$ctl" --socket "$socket" run "$model" --input "$add/placeholder_0.npy" \
		--input "$add/placeholder_1.npy" --output-dir "$scratch/out" 2>"$scratch/err"
	cat "$scratch/err"
	[ "$(cat "$scratch/err")" = "vaccelctl: no daemon at $socket; running in process (embedded)" ] ||
		fail "stderr is not exactly the one-line fallback notice"
	compare "$scratch/out/TosaOutput_0.npy" "$add/tflite_result.npy" --exact
	rm -rf "$scratch/out"
	VACCEL_TRANSPORT=socket expect_refusal "no daemon accepts connections at $socket" \
		"$ctl" --socket "$socket" run "$model" --input "$add/placeholder_0.npy" \
		--input "$add/placeholder_1.npy" --output-dir "$scratch/out"
	[ ! -e "$scratch/out/TosaOutput_0.npy" ] || fail "a refused run wrote an output"
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
