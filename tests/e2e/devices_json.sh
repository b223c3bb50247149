#!/usr/bin/env bash
# devices_json.sh VACCELCTL
#
# `vaccelctl devices --json` is one JSON document listing a cpu device that
# admits TOSA; `vaccelctl devices` lists the same device for people.
source "$(dirname "$0")/lib.sh"
ctl=$1

"$ctl" devices --json >"$scratch/devices.json"
"$PY" - "$scratch/devices.json" <<'PY' || fail "devices --json is not the expected document"
import json, sys
doc = json.load(open(sys.argv[1]))
cpus = [d for d in doc["devices"] if d["kind"] == "cpu"]
assert cpus, f"no cpu device in {doc['devices']}"
cpu = cpus[0]
assert "tosa" in cpu["formats"], cpu["formats"]
assert cpu["tosa_targets"] and cpu["tosa_targets"][0]["version"] == "1.0", cpu["tosa_targets"]
assert cpu["limits"]["max_bindings"] > 0, cpu["limits"]
assert doc["abi"]["major"] == 2, doc["abi"]
print(f"devices --json: {len(doc['devices'])} device(s), cpu is [{cpu['index']}] {cpu['name']}")
PY
"$ctl" devices >"$scratch/devices.txt"
grep -q "^\[0\] " "$scratch/devices.txt" || fail "devices text lists no device [0]"
grep -q "formats  *tosa" "$scratch/devices.txt" || fail "devices text lacks the formats row"

# -L: one line per device, "[index] kind:N  name  (memory, state)".
"$ctl" devices -L >"$scratch/devices.lines"
cat "$scratch/devices.lines"
count=$("$PY" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["devices"]))' "$scratch/devices.json")
[ "$(wc -l <"$scratch/devices.lines")" -eq "$count" ] || fail "devices -L does not print one line per device"
cpu_name=$("$PY" -c 'import json,sys; print([d for d in json.load(open(sys.argv[1]))["devices"] if d["kind"] == "cpu"][0]["name"])' "$scratch/devices.json")
grep -qxF "[0] cpu:0  $cpu_name  ($(grep -o '^    memory  *[0-9.]* [KMGT]*i*B' "$scratch/devices.txt" | head -1 | sed 's/^    memory  *//'), ok)" "$scratch/devices.lines" ||
	fail "devices -L has no line '[0] cpu:0  $cpu_name  (MEMORY, ok)'"
