#!/usr/bin/env bash
# example_mlp.sh VACCELCTL EXAMPLES_BUILD_DIR
#
# The generated example MLP, run through vaccelctl, matches expected.npy (the
# generator's double-precision oracle) within 1e-5 relative.
source "$(dirname "$0")/lib.sh"
ctl=$1 examples=$2

"$ctl" run "$examples/mlp.tosa" --input "x=$examples/input.npy" --output-dir "$scratch/out" \
	--repeat 3 --json >"$scratch/run.json"
"$PY" - "$scratch/run.json" <<'PY' || fail "run --json is not the expected document"
import json, sys
doc = json.load(open(sys.argv[1]))
assert [t["name"] for t in doc["inputs"]] == ["x"], doc["inputs"]
assert [t["shape"] for t in doc["outputs"]] == [[4, 8]], doc["outputs"]
assert doc["timing"]["repeat"] == 3 and len(doc["timing"]["samples_ns"]) == 3, doc["timing"]
assert doc["timing"]["min_ns"] <= doc["timing"]["median_ns"] <= doc["timing"]["max_ns"]
PY
compare "$scratch/out/y.npy" "$examples/expected.npy" --rtol 1e-5
