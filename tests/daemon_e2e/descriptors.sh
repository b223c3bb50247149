#!/usr/bin/env bash
# descriptors.sh VACCELD VACCELCTL CLIENT FIXTURE
#
# VACCEL_IOCTL_DEVICE_TOSA over the socket: a real vacceld serves the CPU as
# two devices, and `vaccelctl devices` (text and --json) shows each one's
# TOSA capability descriptor next to the fields it always showed.
source "$(dirname "$0")/lib.sh"

{
	echo '[daemon]'
	echo 'devices = ["cpu"]'
	echo '[devices.cpu]'
	echo 'threads = 1'
	echo 'count = 2'
} >"$config"
start_daemon

"$ctl" devices >"$scratch/devices.txt" || fail "vaccelctl devices failed"
# The CPU's profiles and extensions follow its table (docs/adr/0014-tosa-descriptors.md).
ext='int16, int4, bf16, fp8e4m3, fp8e5m2, fft, variable, controlflow'
for line in 'vaccel ABI 2\.3, 2 devices' \
	"    tosa targets   1\\.0  profiles int, fp  level 8K  extensions $ext" \
	'    tosa descriptor 0 of 1: TOSA 1\.0 INT FP level 8K \+INT16 \+INT4 \+BF16 \+FP8E4M3 \+FP8E5M2 \+FFT \+VARIABLE \+CONTROLFLOW' \
	'      envelope  any number of regions, any number of blocks, static shapes, advisory runtime conditions'; do
	[ "$(grep -cxE -- "$line" "$scratch/devices.txt")" -ge 1 ] ||
		fail "vaccelctl devices does not print '$line'; it printed: $(cat "$scratch/devices.txt")"
done
# Each device's descriptor comes right after the fields it always had.
[ "$(grep -A1 -E '^    capabilities ' "$scratch/devices.txt" | grep -c 'tosa descriptor 0 of 1')" = 2 ] ||
	fail "the descriptors do not follow each device's capabilities line"

# One ADD row per device: FP32 marked, no constraint.
adds=$(grep -cE '^      ADD +.*x +-$' "$scratch/devices.txt")
[ "$adds" = 2 ] || fail "expected an ADD row under each of the 2 devices, found $adds"

"$ctl" devices --json >"$scratch/devices.json" || fail "vaccelctl devices --json failed"
verdict=$(/usr/bin/python3 - "$scratch/devices.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
problems = []
if (doc["abi"]["major"], doc["abi"]["minor"]) != (2, 3) or "tosa-descriptors" not in doc["abi"]["capabilities"]:
    problems.append("abi %r is not 2.3 with tosa-descriptors" % doc["abi"])
for device in doc["devices"]:
    # The fields that were there before stay.
    for key in ("index", "name", "state", "driver", "formats", "tosa_targets", "capabilities"):
        if key not in device:
            problems.append("device %s lacks %s" % (device.get("index"), key))
    descriptors = device["tosa_descriptors"]
    if len(descriptors) != 1:
        problems.append("device %s has %d descriptors" % (device["index"], len(descriptors)))
        continue
    d = descriptors[0]
    ops = {o["operator"]: o for o in d["operators"]}
    dtypes = {t["dtype"]: t for t in d["dtypes"]}
    expect = [
        (d["target"], "TOSA 1.0 INT FP level 8K +INT16 +INT4 +BF16 +FP8E4M3 +FP8E5M2 +FFT "
                      "+VARIABLE +CONTROLFLOW"),
        (ops["ADD"]["dtypes"], ["INT32", "FP32", "FP16", "BF16"]),
        (ops["RESHAPE"]["constraints"], ["constant-parameters"]),
        (ops["EQUAL"]["dtypes"], ["BOOL", "INT32", "FP32", "FP16", "BF16"]),
        (ops["WHILE_LOOP"]["dtypes"], ["BOOL", "INT8", "INT16", "INT32", "INT48", "FP32", "FP16",
                                       "BF16", "FP8E4M3", "FP8E5M2"]),
        (dtypes["FP32"]["roles"], ["input", "output", "constant", "intermediate"]),
        ("CUSTOM" in ops, False),
        ([o["operator"] for o in d["operators"] if o["dtypes"] is None], []),
        (d["envelope"]["max_blocks"], 4294967295),
    ]
    for got, want in expect:
        if got != want:
            problems.append("device %s: got %r, expected %r" % (device["index"], got, want))
print("; ".join(problems) if problems else "ok")
PY
)
[ "$verdict" = ok ] || fail "vaccelctl devices --json: $verdict"
stop_daemon
