#!/usr/bin/env bash
# run-container-test.sh BUILD STATIC_BUILD - vaccel in real podman containers
# through CDI (docs/adr/0023-containers-through-cdi.md).
#
# A private vacceld (BUILD's, serving the CPU and the first Vulkan device:
# lavapipe here) writes its CDI spec to /run/cdi (--cdi-spec); an image
# made from a local tarball (busybox and BUILD-static's static vaccelctl,
# no registry) runs the ADD fixture. Root podman from Debian 12, vfs
# storage, runc (crun refuses hybrid cgroups), rlimits given explicitly.
# Each step prints "PASS|FAIL <step>"; the run ends with
# "N passed, M failed" and fails on any FAIL.
#
# The daemon runs as the shipped unit (dist/vacceld.service) runs it, as far
# as there is no systemd here: root with an empty capability bounding set,
# no ambient or inheritable capabilities and no_new_privs
# (CapabilityBoundingSet=, AmbientCapabilities=, NoNewPrivileges=yes,
# through setpriv), in a mount namespace of its own (ProtectSystem= and
# PrivateTmp= give it one; unshare -m), with the unit's LimitNOFILE and
# UMask. Not reproduced: the seccomp filter, the device policy and the
# read-only file system (the daemon's files stay in $scratch).
#
# Steps: the daemon has no capability and its own mount namespace; the
# spec vacceld writes equals `vaccelctl cdi generate`'s; a
# container runs the model and its output is exact; the host's
# `vaccelctl sessions` shows the container's session and `containers` the
# registration, gone once the container stopped; accel=0 / accel=1 /
# both restrict what the container may open; a limit for the container's
# cgroup refuses its main process, a child of it, `podman exec`, a process
# with a cleared environment and one that entered by nsenter (its cgroup the
# host's), while a host process outside the container is not refused; the
# hook refuses to register a host process; root inside a container is no
# administrator: it cannot set limits, remove its container's
# registration, widen its devices or register another container's id.
set -uo pipefail

build=${1:?usage: run-container-test.sh BUILD STATIC_BUILD}
static=${2:?usage: run-container-test.sh BUILD STATIC_BUILD}
root=$(cd "$(dirname "$0")/../.." && pwd)
vacceld=$build/userspace/daemon/vacceld
ctl=$build/tools/vaccelctl/vaccelctl
static_ctl=$static/tools/vaccelctl/vaccelctl
add=$root/tests/fixtures/tosa/v1.0-add_1x4x4x4_f32
image=localhost/vaccel-container-test:latest
spec=/run/cdi/vaccel-container-test.yaml

[ "$(id -u)" = 0 ] || { echo "run-container-test: root podman needs root" >&2; exit 1; }
# Debian's python3 with NumPy compares the outputs.
py=/usr/bin/python3
"$py" -c 'import numpy' 2>/dev/null ||
	{ echo "run-container-test: /usr/bin/python3 with NumPy is missing: make deps" >&2; exit 1; }
for tool in podman runc nsenter; do
	command -v "$tool" >/dev/null ||
		{ echo "run-container-test: $tool is missing: make deps" >&2; exit 1; }
done
for file in "$vacceld" "$ctl" "$static_ctl"; do
	[ -x "$file" ] || { echo "run-container-test: $file is missing: build first" >&2; exit 1; }
done

scratch=$(mktemp -d /tmp/vaccel-containers.XXXXXX)
daemon_log_level=debug
. "$root/tests/support/vacceld.sh"
podman_() {
	podman --storage-driver vfs --runtime runc "$@"
}
run_flags=(--ulimit nofile=1024:1024 --ulimit nproc=1024:1024 --network none)
containers=()
cleanup_containers() {
	local c
	for c in "${containers[@]}"; do podman_ rm -f -t 0 "$c" >/dev/null 2>&1 || true; done
	rm -f "$spec"
}
trap 'cleanup_containers; stop_everything' EXIT

passed=0
failed=0
step() { # step NAME COMMAND...: PASS when the command succeeds
	local name=$1
	shift
	if "$@" >"$scratch/step.log" 2>&1; then
		echo "PASS $name"
		passed=$((passed + 1))
	else
		echo "FAIL $name"
		sed 's/^/    /' "$scratch/step.log"
		failed=$((failed + 1))
	fi
}

# The image: busybox, the static vaccelctl and the ADD fixture.
rootfs=$scratch/rootfs
mkdir -p "$rootfs/bin" "$rootfs/usr/bin" "$rootfs/model" "$rootfs/out" "$rootfs/tmp" \
	"$rootfs/run" "$rootfs/proc" "$rootfs/sys" "$rootfs/dev" "$rootfs/etc"
cp /bin/busybox "$rootfs/bin/busybox"
for applet in sh env cat sleep ls grep true; do ln -s busybox "$rootfs/bin/$applet"; done
cp "$static_ctl" "$rootfs/usr/bin/vaccelctl"
cp "$add/flatbuffer-tflite/test_add_1x4x4x4_f32.tosa" "$add/placeholder_0.npy" \
	"$add/placeholder_1.npy" "$rootfs/model/"
echo 'root:x:0:0:root:/:/bin/sh' >"$rootfs/etc/passwd"
tar -C "$rootfs" -cf "$scratch/rootfs.tar" . || exit 1
podman_ import "$scratch/rootfs.tar" "$image" >/dev/null ||
	{ echo "run-container-test: podman import failed" >&2; exit 1; }

# The daemon: CPU (device 0) and the first Vulkan device (1), its spec in /run/cdi.
printf '[daemon]\ndevices = ["cpu", "vulkan:0"]\n' >"$daemon_config"
daemon_args=(--cdi-spec "$spec" --cdi-hook "$(readlink -f "$ctl")")
mkdir -p /run/cdi
unit=$root/dist/vacceld.service
grep -qx 'CapabilityBoundingSet=' "$unit" && grep -qx 'AmbientCapabilities=' "$unit" &&
	grep -qx 'NoNewPrivileges=yes' "$unit" && grep -qx 'LimitNOFILE=65536' "$unit" &&
	grep -qx 'UMask=0022' "$unit" ||
	fail "$unit changed its capabilities, limits or umask: make this test run vacceld as it says"
# LimitNOFILE=65536, or this shell's hard limit where it is lower and cannot
# be raised (no CAP_SYS_RESOURCE).
nofile=$(ulimit -Hn)
[ "$nofile" = unlimited ] || [ "$nofile" -ge 65536 ] && nofile=65536
daemon_wrapper=(unshare --mount --propagation slave prlimit --nofile="$nofile:$nofile" --
	setpriv --bounding-set -all --inh-caps -all --ambient-caps -all --no-new-privs)
umask 0022
start_daemon "$vacceld"
[ -f "$spec" ] || fail "vacceld did not write $spec"

runs_as_the_unit() {
	grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' "/proc/$daemon_pid/status"
	[ "$(awk '/^CapEff:/ {print $2}' "/proc/$daemon_pid/status")" = 0000000000000000 ] &&
		[ "$(awk '/^CapPrm:/ {print $2}' "/proc/$daemon_pid/status")" = 0000000000000000 ] &&
		[ "$(awk '/^CapBnd:/ {print $2}' "/proc/$daemon_pid/status")" = 0000000000000000 ] &&
		[ "$(awk '/^NoNewPrivs:/ {print $2}' "/proc/$daemon_pid/status")" = 1 ] &&
		[ "$(readlink "/proc/$daemon_pid/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ]
}
step vacceld-runs-with-no-capability-in-its-own-mount-namespace runs_as_the_unit

model_args=(run /model/test_add_1x4x4x4_f32.tosa -i /model/placeholder_0.npy
	-i /model/placeholder_1.npy -o /out)
model_run=(vaccelctl "${model_args[@]}")

spec_matches_generate() {
	"$ctl" cdi generate --output "$scratch/generated.yaml" --hook-program "$(readlink -f "$ctl")" &&
		diff <(grep -v '^# vaccel' "$spec") <(grep -v '^# vaccel' "$scratch/generated.yaml") &&
		grep -q '^kind: "vaccel.dev/accel"' "$spec" && grep -q '^cdiVersion: "0.5.0"' "$spec" &&
		grep -q 'containerPath: "/run/vaccel"' "$spec" &&
		grep -q "VACCEL_SOCKET=/run/vaccel/vacceld.sock" "$spec"
}
step spec-written-by-vacceld-equals-generate spec_matches_generate

exact_output() { # exact_output DIR: TosaOutput_0.npy equals the fixture's expected result
	"$py" - "$1/TosaOutput_0.npy" "$add/tflite_result.npy" <<'PY'
import sys, numpy as np
got, want = np.load(sys.argv[1]), np.load(sys.argv[2])
assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.shape)
assert np.array_equal(got, want), np.abs(got - want).max()
PY
}

runs_model_in_container() {
	mkdir -p "$scratch/out-all"
	podman_ run --rm "${run_flags[@]}" --device vaccel.dev/accel=all -v "$scratch/out-all:/out" \
		"$image" "${model_run[@]}" -v &&
		exact_output "$scratch/out-all"
}
step container-runs-model runs_model_in_container

# A container that keeps a session open, seen from the host.
start_long_container() { # start_long_container NAME DEVICE-ARGS...: runs a long model loop
	local name=$1
	shift
	containers+=("$name")
	podman_ run -d --name "$name" "${run_flags[@]}" "$@" "$image" \
		"${model_run[@]}" --repeat 1000000 >/dev/null
}
container_id() { podman_ inspect --format '{{.Id}}' "$1"; }
container_pid() { podman_ inspect --format '{{.State.Pid}}' "$1"; }

host_sees_session() {
	start_long_container vaccel-long --device vaccel.dev/accel=all || return 1
	local id
	id=$(container_id vaccel-long) || return 1
	local tries
	for tries in $(seq 100); do
		"$ctl" sessions --json >"$scratch/sessions.json" 2>&1 &&
			"$py" - "$scratch/sessions.json" "$id" <<'PY' && break
import json, sys
doc, cid = json.load(open(sys.argv[1])), sys.argv[2]
mine = [s for s in doc["sessions"] if s["container"] == cid]
assert mine and mine[0]["cgroup"].endswith(cid) and mine[0]["contexts"] >= 1, doc
PY
		sleep 0.1
	done
	[ "$tries" -lt 100 ] || { cat "$scratch/sessions.json"; return 1; }
	"$ctl" containers | grep -q "^${id:0:12} " &&
		"$ctl" containers --json | "$py" -c '
import json, sys
doc = json.load(sys.stdin)
c = [c for c in doc["containers"] if c["id"] == sys.argv[1]]
assert c and c[0]["devices"] == "all" and c[0]["sessions"] >= 1, doc' "$id"
}
step host-sees-container-session host_sees_session

registration_ends_with_container() {
	local id
	id=$(container_id vaccel-long) || return 1
	podman_ rm -f -t 0 vaccel-long >/dev/null || return 1
	local tries
	for tries in $(seq 50); do
		"$ctl" containers --json | grep -q "$id" || return 0
		sleep 0.1
	done
	"$ctl" containers --json
	return 1
}
step registration-ends-with-container registration_ends_with_container

# accel=N: the container may open device N only.
device_run() { # device_run DEVICE CDI-DEVICES...: the model on DEVICE in a container given them
	local device=$1
	shift
	local args=() d
	for d in "$@"; do args+=(--device "vaccel.dev/accel=$d"); done
	podman_ run --rm "${run_flags[@]}" "${args[@]}" "$image" "${model_run[@]}" --device "$device"
}
only_device_0() {
	device_run cpu 0 || return 1
	device_run vulkan:0 0 >"$scratch/refused.txt" 2>&1 && { cat "$scratch/refused.txt"; return 1; }
	cat "$scratch/refused.txt"
	grep -q "device 1 was not given to this session's container (it was given device 0)" \
		"$scratch/refused.txt"
}
step accel-0-opens-device-0-only only_device_0
only_device_1() {
	device_run vulkan:0 1 || return 1
	device_run cpu 1 >"$scratch/refused.txt" 2>&1 && return 1
	grep -q "device 0 was not given to this session's container (it was given device 1)" \
		"$scratch/refused.txt"
}
step accel-1-opens-device-1-only only_device_1
both_devices() {
	device_run cpu 0 1 && device_run vulkan:0 0 1
}
step accel-0-and-1-open-both both_devices

# Limits for the container's cgroup, and the ways around them.
limit_refused() { # limit_refused COMMAND...: the command fails with the contexts limit
	"$@" >"$scratch/limited.txt" 2>&1 && { cat "$scratch/limited.txt"; return 1; }
	cat "$scratch/limited.txt"
	grep -q "ResourceLimit" "$scratch/limited.txt" && grep -qi "context" "$scratch/limited.txt"
}
setup_limited_container() {
	containers+=(vaccel-limited)
	podman_ create --name vaccel-limited "${run_flags[@]}" --device vaccel.dev/accel=all \
		"$image" "${model_run[@]}" >/dev/null || return 1
	limited_id=$(container_id vaccel-limited) || return 1
	limited_cgroup=/libpod_parent/libpod-$limited_id
	"$ctl" limits set --cgroup "$limited_cgroup" --contexts 0 >/dev/null
}
step limit-set-for-container-cgroup setup_limited_container
main_process_refused() {
	limit_refused podman_ start -a vaccel-limited
}
step limit-refuses-container-main-process main_process_refused

# A second container under the same limit that stays up for exec and nsenter.
setup_idle_container() {
	containers+=(vaccel-idle)
	podman_ run -d --name vaccel-idle "${run_flags[@]}" --device vaccel.dev/accel=all \
		"$image" sleep 600 >/dev/null || return 1
	idle_id=$(container_id vaccel-idle) || return 1
	idle_pid=$(container_pid vaccel-idle) || return 1
	# Works before its limit (the refusals below are the limit's doing).
	podman_ exec vaccel-idle "${model_run[@]}" >/dev/null &&
		"$ctl" limits set --cgroup "/libpod_parent/libpod-$idle_id" --contexts 0 >/dev/null
}
step idle-container-runs-before-its-limit setup_idle_container
step limit-refuses-podman-exec limit_refused podman_ exec vaccel-idle "${model_run[@]}"
step limit-refuses-child-process \
	limit_refused podman_ exec vaccel-idle sh -c "sh -c '${model_run[*]}'"
step limit-refuses-cleared-environment \
	limit_refused podman_ exec vaccel-idle env -i /usr/bin/vaccelctl "${model_args[@]}"
nsenter_refused() {
	# The entered process keeps this script's cgroup: only its namespaces
	# make it the container's.
	nsenter -t "$idle_pid" -m -p -r -w env -i /bin/cat /proc/self/cgroup >"$scratch/ns-cgroup.txt" ||
		return 1
	grep -q "libpod-$idle_id" "$scratch/ns-cgroup.txt" && { cat "$scratch/ns-cgroup.txt"; return 1; }
	limit_refused nsenter -t "$idle_pid" -m -p -r -w env -i /usr/bin/vaccelctl "${model_args[@]}"
}
step limit-refuses-nsenter nsenter_refused
host_not_refused() {
	mkdir -p "$scratch/out-host"
	"$ctl" run "$add/flatbuffer-tflite/test_add_1x4x4x4_f32.tosa" -i "$add/placeholder_0.npy" \
		-i "$add/placeholder_1.npy" -o "$scratch/out-host" && exact_output "$scratch/out-host"
}
step host-process-outside-container-not-limited host_not_refused
limit_reset_frees() {
	"$ctl" limits reset --cgroup "/libpod_parent/libpod-$idle_id" >/dev/null &&
		podman_ exec vaccel-idle "${model_run[@]}" >/dev/null
}
step limit-reset-frees-container limit_reset_frees

hook_refuses_host_process() {
	local pid
	for pid in 1 $$; do
		echo "{\"ociVersion\":\"1.0.2\",\"id\":\"not-a-container\",\"pid\":$pid}" |
			"$ctl" cdi hook create --devices 0 >"$scratch/hook.txt" 2>&1 && return 1
		cat "$scratch/hook.txt"
		grep -q "was not registered" "$scratch/hook.txt" &&
			grep -q "container not-a-contai not registered: process $pid is not a container's first process" \
				"$daemon_log" || return 1
	done
	! "$ctl" containers --json | grep -q not-a-container
}
step hook-refuses-to-register-a-host-process hook_refuses_host_process

# Root inside a container is no administrator (admin_authority.hpp). The
# container below was given device 0 only; its root tries what an
# administrator may do.
setup_zero_container() {
	containers+=(vaccel-zero)
	podman_ run -d --name vaccel-zero "${run_flags[@]}" --device vaccel.dev/accel=0 \
		"$image" sleep 600 >/dev/null || return 1
	zero_id=$(container_id vaccel-zero) || return 1
	registration_is vaccel-zero '[0]'
}
registration_is() { # registration_is NAME DEVICES-JSON: NAME is registered with those devices
	local id
	id=$(container_id "$1") || return 1
	"$ctl" containers --json | "$py" -c '
import json, sys
doc = json.load(sys.stdin)
c = [c for c in doc["containers"] if c["id"] == sys.argv[1]]
assert len(c) == 1 and c[0]["devices"] == json.loads(sys.argv[2]), doc' "$id" "$2"
}
refused_not_admin() { # refused_not_admin COMMAND...: fails as not an administrator
	"$@" >"$scratch/not-admin.txt" 2>&1 && { cat "$scratch/not-admin.txt"; return 1; }
	cat "$scratch/not-admin.txt"
	grep -qi "admin" "$scratch/not-admin.txt"
}
step container-given-device-0-is-registered setup_zero_container
container_root_cannot_set_limits() {
	refused_not_admin podman_ exec vaccel-zero vaccelctl limits set --default --contexts 0 &&
		refused_not_admin podman_ exec vaccel-zero vaccelctl limits reset \
			--cgroup "/libpod_parent/libpod-$idle_id" &&
		"$ctl" limits get --json | "$py" -c '
import json, sys
rules = json.load(sys.stdin)["rules"]
assert not [r for r in rules if r["selector"] == {"default": True}], rules'
}
step container-root-cannot-set-limits container_root_cannot_set_limits
container_root_cannot_remove_registration() {
	refused_not_admin podman_ exec vaccel-zero sh -c \
		"echo '{\"id\":\"$zero_id\"}' | vaccelctl cdi hook remove" &&
		registration_is vaccel-zero '[0]'
}
step container-root-cannot-remove-its-registration container_root_cannot_remove_registration
container_root_cannot_widen() {
	refused_not_admin podman_ exec vaccel-zero sh -c \
		"echo '{\"id\":\"$zero_id\",\"pid\":1}' | vaccelctl cdi hook create --devices all" &&
		registration_is vaccel-zero '[0]' &&
		device_run_in vaccel-zero vulkan:0 >"$scratch/refused.txt" 2>&1 && return 1
	grep -q "device 1 was not given to this session's container" "$scratch/refused.txt"
}
device_run_in() { # device_run_in NAME DEVICE: the model on DEVICE in running container NAME
	podman_ exec "$1" "${model_run[@]}" --device "$2"
}
step container-root-cannot-widen-its-devices container_root_cannot_widen
container_root_cannot_register_another() {
	refused_not_admin podman_ exec vaccel-zero sh -c \
		"echo '{\"id\":\"victim-container\",\"pid\":1}' | vaccelctl cdi hook create --devices all" &&
		! "$ctl" containers --json | grep -q victim-container &&
		grep -q "a session of a registered container never administers" "$daemon_log"
}
step container-root-cannot-register-another-id container_root_cannot_register_another

cleanup_containers
containers=()
stop_daemon
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
