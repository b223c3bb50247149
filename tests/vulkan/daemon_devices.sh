#!/usr/bin/env bash
# daemon_devices.sh VACCELD VACCELCTL FIXTURES
#
# A vacceld configured with devices = ["cpu", "vulkan:0"] (lavapipe, the
# loader pointed at it by ctest) serves both: `vaccelctl devices` lists the
# CPU as [0] and lavapipe as [1] with its identity, the TOSA format with
# the FP32 tier's target and its memory domains; `run --device auto` still
# runs the ADD fixture on the CPU (device 0), and `run --device vulkan:0`
# runs it on lavapipe, exactly equal to the fixture's expected result.
# The daemon's state directory then holds lavapipe's pipeline cache file.
# Fails when lavapipe is missing.
e2e=$(cd "$(dirname "$0")/../e2e" && pwd)
source "$e2e/lib.sh"
source "$e2e/daemon.sh"
vacceld=$1 ctl=$2 fixtures=$3

printf '[daemon]\ndevices = ["cpu", "vulkan:0"]\nstate_dir = "%s"\n' "$scratch/state" >"$daemon_config"
start_daemon "$vacceld"

"$ctl" devices >"$scratch/devices.txt" || fail "vaccelctl devices failed"
cat "$scratch/devices.txt"
grep -q "^vaccel ABI .*, 2 devices$" "$scratch/devices.txt" ||
	fail "the daemon does not serve exactly two devices"
grep -q "^\[0\] cpu " "$scratch/devices.txt" || fail "device [0] is not the CPU"
grep -q "^\[1\] llvmpipe " "$scratch/devices.txt" || fail "device [1] is not lavapipe (llvmpipe)"

"$ctl" devices --json >"$scratch/devices.json" || fail "vaccelctl devices --json failed"
"$PY" - "$scratch/devices.json" <<'PY' || fail "devices --json does not describe lavapipe as expected"
import json, sys
doc = json.load(open(sys.argv[1]))
devices = doc["devices"]
assert [d["kind"] for d in devices] == ["cpu", "vulkan"], [d["kind"] for d in devices]
vk = devices[1]
assert vk["index"] == 1, vk
assert vk["name"].startswith("llvmpipe"), vk["name"]
assert vk["driver"].startswith("vaccel-vulkan llvmpipe Mesa "), vk["driver"]
# Mesa's vendor id (VK_VENDOR_ID_MESA = 0x10005) and lavapipe's device id 0;
# the UUID begins with the bytes of "mesa" (6d 65 73 61).
assert vk["vendor_id"] == 0x10005 and vk["device_id"] == 0, vk
assert vk["uuid"].replace("-", "").startswith("6d657361"), vk["uuid"]
assert vk["formats"] == ["tosa", "spirv"], vk["formats"]
assert vk["capabilities"] == ["gates", "launch"], vk["capabilities"]  # host gates, SPIR-V launches
assert vk["pci"] is None, vk["pci"]
assert vk["class"] == "other", vk["class"]  # a CPU-type Vulkan device
assert len(vk["tosa_targets"]) == 1, vk["tosa_targets"]
print("vulkan device:", vk["name"], "|", vk["driver"])
PY

add=$fixtures/v1.0-add_1x4x4x4_f32
model=$add/flatbuffer-tflite/test_add_1x4x4x4_f32.tosa
"$ctl" --verbose run "$model" --input "$add/placeholder_0.npy" --input "$add/placeholder_1.npy" \
	--device auto --output-dir "$scratch/out" >"$scratch/run.txt" 2>&1 ||
	{ cat "$scratch/run.txt"; fail "run --device auto failed"; }
grep -q " on \[0\] cpu " "$scratch/run.txt" || { cat "$scratch/run.txt"; fail "run --device auto did not choose the CPU [0]"; }
compare "$scratch/out/TosaOutput_0.npy" "$add/tflite_result.npy" --exact

"$ctl" --verbose run "$model" --input "$add/placeholder_0.npy" --input "$add/placeholder_1.npy" \
	--device vulkan:0 --output-dir "$scratch/out2" >"$scratch/run2.txt" 2>&1 ||
	{ cat "$scratch/run2.txt"; fail "run --device vulkan:0 failed"; }
grep -q " on \[1\] llvmpipe" "$scratch/run2.txt" ||
	{ cat "$scratch/run2.txt"; fail "run --device vulkan:0 did not run on lavapipe [1]"; }
compare "$scratch/out2/TosaOutput_0.npy" "$add/tflite_result.npy" --exact
# Saved after the load: one cache file, at least its 32-byte header.
cache=$(ls "$scratch"/state/vulkan/pipelines-*-10005-0000-*.bin 2>/dev/null)
[ "$(echo "$cache" | wc -w)" = 1 ] || fail "no single pipeline cache file in $scratch/state/vulkan: $cache"
[ "$(stat -c %s "$cache")" -ge 32 ] || fail "the pipeline cache $cache is shorter than its header"
echo "PASS: cpu and vulkan:0 served; the ADD fixture runs exactly on both"
