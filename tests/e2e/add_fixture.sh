#!/usr/bin/env bash
# add_fixture.sh VACCELCTL FIXTURES (by-name | positional | tf)
#
# `vaccelctl run` on the real TOSA 1.0 ADD fixture reproduces TFLite's result
# exactly: dtype, shape and every byte of the data (tf: the file converted
# from TensorFlow, against TensorFlow's result).
source "$(dirname "$0")/lib.sh"
ctl=$1 fixtures=$2 mode=$3
dir=$fixtures/v1.0-add_1x4x4x4_f32
model=$dir/flatbuffer-tflite/test_add_1x4x4x4_f32.tosa

case $mode in
by-name)
	"$ctl" run "$model" --input "TosaInput_1=$dir/placeholder_1.npy" \
		--input "TosaInput_0=$dir/placeholder_0.npy" --output-dir "$scratch/out" --device cpu
	;;
positional)
	"$ctl" run "$model" --input "$dir/placeholder_0.npy" --input "$dir/placeholder_1.npy" \
		--output-dir "$scratch/out" --repeat 3
	;;
tf)
	"$ctl" run "$dir/flatbuffer-tf/test_add_1x4x4x4_f32.tosa" --input "$dir/placeholder_0.npy" \
		--input "$dir/placeholder_1.npy" --output-dir "$scratch/out"
	expected=$dir/tf_result.npy
	;;
*) fail "unknown mode $mode" ;;
esac
expected=${expected:-$dir/tflite_result.npy}

[ -f "$scratch/out/TosaOutput_0.npy" ] || fail "no TosaOutput_0.npy in the output directory"
compare "$scratch/out/TosaOutput_0.npy" "$expected" --exact
# The data after each header, byte for byte.
cmp <(tail -c 256 "$scratch/out/TosaOutput_0.npy") <(tail -c 256 "$expected") ||
	fail "output data bytes differ from $expected"
