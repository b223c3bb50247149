#!/usr/bin/env bash
# refusals.sh VACCELCTL FIXTURES CASE
#
# Each case is a run vaccelctl must refuse with a non-zero exit and a message
# that names the problem: v080 (a TOSA 0.80 file), fortran-order (an input
# saved in Fortran order), wrong-shape, missing-input, unknown-device.
source "$(dirname "$0")/lib.sh"
ctl=$1 fixtures=$2 case=$3
add=$fixtures/v1.0-add_1x4x4x4_f32
model=$add/flatbuffer-tflite/test_add_1x4x4x4_f32.tosa
out=(--output-dir "$scratch/out")

case $case in
v080)
	old=$fixtures/v0.80-add_1x4x4x4_f32
	expect_refusal "0.80" "$ctl" run "$old/flatbuffer-tflite/test_add_1x4x4x4_f32.tosa" \
		--input "$old/placeholder_0.npy" --input "$old/placeholder_1.npy" "${out[@]}"
	;;
fortran-order)
	"$PY" -c "import numpy as np, sys; a = np.load(sys.argv[1]); \
np.save(sys.argv[2], np.asfortranarray(a))" "$add/placeholder_1.npy" "$scratch/fortran.npy"
	message="file $scratch/fortran.npy is in Fortran order; vaccel reads C-order arrays:"
	message+=" save with np.ascontiguousarray"
	expect_refusal "$message" \
		"$ctl" run "$model" --input "TosaInput_0=$add/placeholder_0.npy" \
		--input "TosaInput_1=$scratch/fortran.npy" "${out[@]}"
	;;
wrong-shape)
	message="input 'TosaInput_0' expects shape [1,4,4,1] but $add/placeholder_1.npy"
	message+=" has shape [1,4,4,4]"
	expect_refusal "$message" \
		"$ctl" run "$model" --input "TosaInput_0=$add/placeholder_1.npy" \
		--input "TosaInput_1=$add/placeholder_1.npy" "${out[@]}"
	;;
missing-input)
	expect_refusal "input 'TosaInput_1' (slot 1) is missing" \
		"$ctl" run "$model" --input "TosaInput_0=$add/placeholder_0.npy" "${out[@]}"
	;;
unknown-device)
	expect_refusal "no device matches --device tpu:0" \
		"$ctl" run "$model" --input "$add/placeholder_0.npy" --input "$add/placeholder_1.npy" \
		--device tpu:0 "${out[@]}"
	grep -qF "the devices are: [0] cpu" "$scratch/stderr" || fail "the device list is missing"
	;;
*) fail "unknown case $case" ;;
esac
[ ! -e "$scratch/out/TosaOutput_0.npy" ] || fail "a refused run wrote an output"
