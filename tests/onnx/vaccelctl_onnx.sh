#!/usr/bin/env bash
# vaccelctl_onnx.sh VACCELCTL NODE_CASE_TO_NPY NODE_TESTS_DIR
#
# ONNX models where users meet them: `vaccelctl import` writes a TOSA file
# and names the model's inputs and outputs; `vaccelctl run MODEL.onnx` binds
# every input by its ONNX name, folds an input whose value sets a shape
# (Reshape's shape, Resize's float scales), binds INT64 data (Gather's
# indices) narrowed to INT32, and writes each output as OUTPUT_NAME.npy in
# the model's own type (ArgMax's INT64), equal to ONNX's expected output
# (rtol 1e-3, atol 1e-7); the imported TOSA file runs the same. Refusals: an
# op type not imported, a file that is not ONNX, a bad --input-shape, an
# INT64 index outside INT32, each with exit status 1 and its first line
# checked.
source "$(dirname "$0")/../e2e/lib.sh"
ctl=$1 to_npy=$2 cases=$3

check_outputs() {  # DIR_OF_OUTPUTS DIR_OF_WANTED
    "$PY" - "$1" "$2" <<'PYTHON' || fail "outputs differ from ONNX's expected ones"
import os, sys
import numpy as np
got_dir, want_dir = sys.argv[1], sys.argv[2]
for name in sorted(os.listdir(want_dir)):
    want = np.load(os.path.join(want_dir, name))
    got = np.load(os.path.join(got_dir, name))
    assert got.shape == want.shape, (name, got.shape, want.shape)
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-7)
PYTHON
}

for case in test_conv_with_strides_and_asymmetric_padding test_gemm_all_attributes \
            test_reshape_reordered_all_dims test_softmax_axis_1 test_gather_0 \
            test_argmax_default_axis_example test_resize_upsample_scales_linear; do
    dir="$scratch/$case"
    mapfile -t inputs < <("$to_npy" "$cases/$case" "$dir") || fail "$case: no .npy data"
    args=()
    for i in "${inputs[@]}"; do args+=(--input "$i"); done
    out=$("$ctl" run --device cpu "$cases/$case/model.onnx" "${args[@]}" -o "$dir/out" 2>&1) ||
        fail "$case: vaccelctl run failed: $out"
    check_outputs "$dir/out" "$dir/want"
    # The same model imported to a file and run as TOSA (not where a folded
    # input is fixed at import, nor where the model's INT64 data differs
    # from the TOSA file's INT32 slots).
    if [[ $case != test_reshape_reordered_all_dims && $case != test_resize_* &&
          $case != test_gather_0 && $case != test_argmax_* ]]; then
        first=$("$ctl" import "$cases/$case/model.onnx" -o "$dir/model.tosa") ||
            fail "$case: vaccelctl import failed"
        [[ $first == "wrote $dir/model.tosa: inputs "* ]] || fail "$case: import said: $first"
        "$ctl" run --device cpu "$dir/model.tosa" "${args[@]}" -o "$dir/out2" > /dev/null 2>&1 ||
            fail "$case: the imported TOSA file did not run"
        check_outputs "$dir/out2" "$dir/want"
    fi
done

# Refusals, each naming what was refused.
expect_refusal() {  # WANTED_PREFIX COMMAND...
    local want=$1
    shift
    local got rc=0
    got=$("$@" 2>&1 >/dev/null) || rc=$?
    [[ $rc == 1 ]] || fail "expected exit status 1, got $rc from: $*"
    [[ ${got%%$'\n'*} == "$want"* ]] || fail "expected '$want...', got: $got"
}
expect_refusal "vaccelctl: cannot import $cases/test_gridsample/model.onnx: node 'Y' (GridSample): this op type is not imported yet" \
    "$ctl" import "$cases/test_gridsample/model.onnx" -o "$scratch/gridsample.tosa"
printf 'not a model' > "$scratch/bad.onnx"
expect_refusal "vaccelctl: cannot import $scratch/bad.onnx: the file is not an ONNX model" \
    "$ctl" import "$scratch/bad.onnx"
expect_refusal "vaccelctl: --input-shape x=1,,3: '' is not a dimension" \
    "$ctl" import "$cases/test_relu/model.onnx" --input-shape x=1,,3
expect_refusal "vaccelctl: cannot import $cases/test_relu/model.onnx: --input-shape names 'nope'" \
    "$ctl" import "$cases/test_relu/model.onnx" --input-shape nope=1
"$PY" -c "import numpy as np; a = np.load('$scratch/test_gather_0/in/indices.npy'); a[1] = 2**33; np.save('$scratch/big.npy', a)"
# (run, in process, prints its embedded-fallback note first: the last line.)
rc=0
got=$("$ctl" run --device cpu "$cases/test_gather_0/model.onnx" \
    --input "data=$scratch/test_gather_0/in/data.npy" --input "indices=$scratch/big.npy" \
    -o "$scratch/big" 2>&1 >/dev/null) || rc=$?
[[ $rc == 1 ]] || fail "an INT64 index outside INT32: exit status $rc"
[[ ${got##*$'\n'} == "vaccelctl: $scratch/big.npy: input 'indices' element 1 holds 8589934592, outside INT32"* ]] ||
    fail "an INT64 index outside INT32: $got"
[[ ! -e $scratch/big/y.npy ]] || fail "a refused run wrote an output"
echo "vaccelctl imports and runs ONNX models"
