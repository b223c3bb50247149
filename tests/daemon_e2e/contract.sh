#!/usr/bin/env bash
# contract.sh VACCELD VACCELCTL CLIENT FIXTURE MODE
#
# The contract's gates, launch (also of a SPIR-V kernel on lavapipe:
# spirv-launch MODULE), notify descriptor and device loss through a real vacceld over
# the socket (vaccel-e2e-client MODE: contract_modes.cpp). For `loss` the
# daemon serves the CPU as two devices and device 0 loses itself at its
# fourth acceptance ([devices.cpu] fault injection); `vaccelctl devices`
# must then show it lost and the other one serving.
source "$(dirname "$0")/lib.sh"

mode=$1
case "$mode" in
gates | launch | notify)
	start_daemon
	"$client" "$mode"
	;;
spirv-launch)
	# $2: the saxpy test kernel; the daemon serves the CPU and lavapipe.
	printf '[daemon]\ndevices = ["cpu", "vulkan:0"]\n' >"$config"
	start_daemon
	"$client" spirv-launch "$2"
	;;
loss)
	{
		echo '[daemon]'
		echo 'devices = ["cpu"]'
		echo '[devices.cpu]'
		echo 'threads = 1'
		echo 'count = 2'
		echo 'inject_loss_after = 3'
	} >"$config"
	start_daemon
	"$client" loss 3
	"$ctl" devices
	"$ctl" devices --json >"$scratch/devices.json"
	states=$(python3 -c 'import json, sys
print(" ".join(d["state"] for d in json.load(open(sys.argv[1]))["devices"]))' "$scratch/devices.json")
	[ "$states" = "lost ok" ] || fail "vaccelctl devices --json states are '$states', expected 'lost ok'"
	;;
*)
	fail "unknown mode $mode"
	;;
esac
stop_daemon
