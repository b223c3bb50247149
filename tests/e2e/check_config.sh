#!/usr/bin/env bash
# check_config.sh VACCELD DIST_CONFIG - `vacceld --check-config FILE` reads the
# file as the daemon would at start and opens nothing: exit 0 and a line of
# what it sets for a good file (the shipped one among them); exit 1 and the
# first error, with the file and line where there is one, for a bad one,
# including what a backend refuses of its [devices.NAME] table and of the
# device list; never the contract's field words.
source "$(dirname "$0")/lib.sh"
daemon=$1 shipped=$2

# check STATUS "FIRST LINE" FILE
check() {
	local want_status=$1 want=$2 file=$3 status=0
	"$daemon" --check-config "$file" >"$scratch/out" 2>"$scratch/err" || status=$?
	local said
	said=$(cat "$scratch/out" "$scratch/err" | head -n 1)
	[ "$status" -eq "$want_status" ] || fail "--check-config $file exited $status, not $want_status: $said"
	[ "$said" = "$want" ] || fail "--check-config $file said \"$said\", not \"$want\""
	grep -q "argument struct" "$scratch/out" "$scratch/err" && fail "the message shows the contract's field words"
	echo "ok: $file -> $status: $said"
}

cp "$shipped" "$scratch/shipped.toml"
check 0 "vacceld: $scratch/shipped.toml: good: 1 rule, devices: cpu, vulkan:*, cuda:*, socket /run/vaccel/vacceld.sock" "$scratch/shipped.toml"

printf '[daemon]\ndevices = ["cpu"]\n\n[[rule]]\nuid = 1000\nweight = 300\n' >"$scratch/good.toml"
check 0 "vacceld: $scratch/good.toml: good: 1 rule, devices: cpu, socket /run/vaccel/vacceld.sock" "$scratch/good.toml"

printf '[daemon]\ndevicez = ["cpu"]\n' >"$scratch/typo.toml"
check 1 "vacceld: $scratch/typo.toml:2: key 'daemon.devicez': is not a [daemon] setting; use devices, socket, admin_group or state_dir" "$scratch/typo.toml"

printf '[[rule]]\nuid = 1000\nweight = 5000\n' >"$scratch/weight.toml"
check 1 "vacceld: $scratch/weight.toml:3: key 'rule.weight': 5000 is out of range; use 1..1000" "$scratch/weight.toml"

printf '[devices.cpu]\ninline_us = 5000\n' >"$scratch/backend.toml"
check 1 "vacceld: $scratch/backend.toml:2: [devices.cpu] inline_us is at most 1000 (a millisecond: the calling thread serves other clients meanwhile); 0 never runs a submission inline" "$scratch/backend.toml"

printf '[devices.cpu]\nthreads = 2\ncolour = 1\n' >"$scratch/key.toml"
check 1 "vacceld: $scratch/key.toml:3: [devices.cpu] colour is not a setting of the cpu backend; its settings are threads, count, inline_us, inject_loss_after, inject_loss_device" "$scratch/key.toml"

printf '[daemon]\ndevices = ["cpu"]\n\n[devices.tpu]\nx = 1\n' >"$scratch/unknown.toml"
"$daemon" --check-config "$scratch/unknown.toml" >"$scratch/out" 2>&1 || true
grep -q "unknown.toml:4: \[devices.tpu\] names no backend of this build" "$scratch/out" ||
	fail "an unknown backend table is not named with its line: $(cat "$scratch/out")"

printf '[daemon]\ndevices = ["cpu:x"]\n' >"$scratch/pattern.toml"
status=0
"$daemon" --check-config "$scratch/pattern.toml" >/dev/null 2>&1 || status=$?
[ "$status" -eq 1 ] || fail "a bad device pattern passed the check"

check 1 "vacceld: $scratch/absent.toml: cannot be read: No such file or directory" "$scratch/absent.toml"
