#!/usr/bin/env bash
# conv2d_fixture.sh VACCELCTL FIXTURES
#
# `vaccelctl run` on the real TOSA 1.0 CONV2D fixture (CONST weights, bias and
# zero points + CONV2D) matches TFLite's result within 1e-5.
source "$(dirname "$0")/lib.sh"
ctl=$1 fixtures=$2
dir=$fixtures/v1.0-conv2d_1x1_1x32x32x8_f32

"$ctl" run "$dir/flatbuffer-tflite/test_conv2d_1x1_1x32x32x8_f32_st11_padSAME_dilat11.tosa" \
	--input "$dir/placeholder_0.npy" --output-dir "$scratch/out"
compare "$scratch/out/TosaOutput_0.npy" "$dir/tflite_result.npy" --rtol 1e-5 --atol 1e-6
