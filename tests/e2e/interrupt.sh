#!/usr/bin/env bash
# interrupt.sh VACCELCTL FIXTURES - `vaccelctl run --repeat` as a person
# at a terminal sees it (a pseudo-terminal made by script(1)): a progress
# line once the runs have gone on for two seconds; Ctrl-C (SIGINT) stops
# after the run in progress, writes the last run's outputs and the timings
# so far, says it was interrupted and exits 130. Off a terminal, no
# progress line is drawn.
source "$(dirname "$0")/lib.sh"
ctl=$1 fixtures=$2
dir=$fixtures/v1.0-conv2d_1x1_1x32x32x8_f32
model=$dir/flatbuffer-tflite/test_conv2d_1x1_1x32x32x8_f32_st11_padSAME_dilat11.tosa
export VACCEL_TRANSPORT=embedded
command -v script >/dev/null || fail "script(1) (util-linux) is missing"

# A million runs take far longer than the 3.5 s before Ctrl-C (about 13 µs
# each on the slowest machine this was measured on, so 13 s).
script -qfec "$(printf '%q ' "$ctl" run "$model" -i "$dir/placeholder_0.npy" \
	-o "$scratch/out" --repeat 1000000)" "$scratch/typescript" >/dev/null 2>&1 &
runner=$!
sleep 3.5
# vaccelctl itself, not the shell script(1) started it from.
pid=$(pgrep -f -- "^$ctl run .*-o $scratch/out") || fail "the run had already ended after 3.5 s"
kill -INT "$pid"
status=0
wait "$runner" || status=$?
screen=$(tr '\r' '\n' <"$scratch/typescript")
[ "$status" -eq 130 ] || fail "an interrupted run exited $status, not 130: $screen"
grep -q '^.*vaccelctl: run [0-9]*/1000000, last .* s elapsed, about .* s left' <<<"$screen" ||
	fail "no progress line on the terminal: $screen"
grep -q 'vaccelctl: interrupted: stopping after the run in progress (Ctrl-C again ends at once)' \
	<<<"$screen" || fail "Ctrl-C was not acknowledged: $screen"
grep -q ' over [0-9]* runs (interrupted: 1000000 asked)$' <<<"$screen" ||
	fail "the summary lacks the timings so far: $screen"
grep -q '^vaccelctl: interrupted (Ctrl-C) after [0-9]* of 1000000 timed runs; the outputs and timings above are those of the runs that completed' \
	<<<"$screen" || fail "the interruption is not said: $screen"
compare "$scratch/out/TosaOutput_0.npy" "$dir/tflite_result.npy" --rtol 1e-5 --atol 1e-6

# Off a terminal: the summary alone, no progress line.
"$ctl" run "$model" -i "$dir/placeholder_0.npy" -o "$scratch/piped" --repeat 20000 \
	>"$scratch/stdout" 2>"$scratch/stderr" || fail "the piped run failed: $(cat "$scratch/stderr")"
[ -s "$scratch/stderr" ] && fail "a run off a terminal printed on stderr: $(cat "$scratch/stderr")"
grep -q ' over 20000 runs$' "$scratch/stdout" || fail "the piped run's summary: $(cat "$scratch/stdout")"
echo "ok: progress line, Ctrl-C kept $(grep -o 'after [0-9]* of' <<<"$screen" | head -1) runs"
