#!/usr/bin/env bash
# lstm_variables.sh VACCELCTL FIXTURES
#
# The stateful LSTM's two variables through `vaccelctl run --variable`:
#  1. one run from the declared state matches TFLite and writes both
#     variables' final values beside the output;
#  2. two runs of one load (--repeat 2) carry the state: the second output
#     differs from the first;
#  3. one run started (--variable) from run 1's final values gives exactly
#     the second output and final values of the two-run load;
#  4. an unknown variable name and a value of the wrong shape are refused;
#  5. --warmup runs really run, untimed: --warmup 1 --repeat 1 gives the
#     two-run output, and its timing counts one run.
source "$(dirname "$0")/lib.sh"
ctl=$1 fixtures=$2
dir=$fixtures/v1.0-lstm_stateful_13x21x3_f32
model=$dir/flatbuffer-tflite/test_lstm_stateful_13x21x3_f32.tosa
in=(--input "$dir/placeholder_0.npy")
v0=variable.lstm_Variable.npy
v1=variable.lstm_Variable_1.npy

"$ctl" run "$model" "${in[@]}" --output-dir "$scratch/one"
compare "$scratch/one/TosaOutput_0.npy" "$dir/tflite_result.npy" --rtol 1e-5 --atol 1e-6
[ -f "$scratch/one/$v0" ] && [ -f "$scratch/one/$v1" ] || fail "variables not written: $(ls "$scratch/one")"

"$ctl" run "$model" "${in[@]}" --repeat 2 --output-dir "$scratch/two"
if "$PY" "$here/compare_npy.py" "$scratch/two/TosaOutput_0.npy" "$scratch/one/TosaOutput_0.npy" \
	--exact >/dev/null; then
	fail "the second run of one load gave the first run's output: the state did not carry over"
fi

"$ctl" run "$model" "${in[@]}" --output-dir "$scratch/resumed" \
	--variable "lstm/Variable=$scratch/one/$v0" --variable "lstm/Variable_1=$scratch/one/$v1"
compare "$scratch/resumed/TosaOutput_0.npy" "$scratch/two/TosaOutput_0.npy" --exact
compare "$scratch/resumed/$v0" "$scratch/two/$v0" --exact
compare "$scratch/resumed/$v1" "$scratch/two/$v1" --exact

expect_refusal "the model has no variable of that name; its variables are 'lstm/Variable_1', 'lstm/Variable'" \
	"$ctl" run "$model" "${in[@]}" --output-dir "$scratch/x" --variable "nope=$scratch/one/$v0"
"$PY" -c "import numpy as np, sys; np.save(sys.argv[1], np.zeros((2, 13), np.float32))" "$scratch/wrong.npy"
expect_refusal "variable 'lstm/Variable' is float32 [13,2] but the file holds float32 [2,13]" \
	"$ctl" run "$model" "${in[@]}" --output-dir "$scratch/x" --variable "lstm/Variable=$scratch/wrong.npy"

json=$("$ctl" run "$model" "${in[@]}" --warmup 1 --repeat 1 --json --output-dir "$scratch/warm")
compare "$scratch/warm/TosaOutput_0.npy" "$scratch/two/TosaOutput_0.npy" --exact
[ "$("$PY" -c 'import json, sys; print(json.load(sys.stdin)["timing"]["repeat"])' <<<"$json")" = 1 ] ||
	fail "--warmup 1 --repeat 1 timed other than one run: $json"
