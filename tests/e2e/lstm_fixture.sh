#!/usr/bin/env bash
# lstm_fixture.sh VACCELCTL FIXTURES
#
# `vaccelctl run` on the real stateful LSTM fixture (three regions: WHILE_LOOP
# over 21 time steps, two variables, GATHER, CONV2D, SLICE, SIGMOID, TANH,
# MUL) matches TFLite's result within 1e-5.
source "$(dirname "$0")/lib.sh"
ctl=$1 fixtures=$2
dir=$fixtures/v1.0-lstm_stateful_13x21x3_f32

"$ctl" run "$dir/flatbuffer-tflite/test_lstm_stateful_13x21x3_f32.tosa" \
	--input "$dir/placeholder_0.npy" --output-dir "$scratch/out"
compare "$scratch/out/TosaOutput_0.npy" "$dir/tflite_result.npy" --rtol 1e-5 --atol 1e-6
