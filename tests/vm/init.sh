#!/bin/busybox sh
# init.sh - /init of the VM test's initramfs (busybox-static).
#
# Runs the VM test's steps in order and prints one line per step,
# "VMTEST <step> PASS|FAIL", on the serial console; run-vm-test.sh decides
# from those lines (it knows the step list). First the module's own smoke
# steps against tests/vm/mini_server.c ("smoke-*": user copy of odd-sized
# payloads, RUN and BUFFER_MAP, clients killed while queued and delivered,
# a killed server), then the real system: vacceld serving
# /dev/vaccel-server, clients through libvaccel's kernel transport
# (vaccelctl, vaccel-e2e-client), raw ioctls (vm_client, vm_fastpath), and
# the round-trip benchmark ("VMBENCH" lines), and the hardened path's
# rules (uapi/vaccel_server.h, "Signals and /dev/vaccel" in uapi/vaccel.h):
# a 32-bit client, fairness under a flood (counted, never timed), payload
# memory (file mappings refused), signals and the freezer, detach, a
# refused second daemon, the per-user session cap, memory accounting, the
# unit's capabilities, no objects left behind. The
# kernel log is always printed between VMTEST-DMESG-BEGIN and
# VMTEST-DMESG-END. Powers off at the end whatever happened (qemu runs with
# -no-reboot).
#
# Layout: /bin/busybox, /vaccel.ko, /mini_server, /vm_client, /vm_tools,
# /vm_fastpath, /vm_stress, /vm_compat32 (32-bit), /vacceld, /vaccelctl,
# /e2e (vaccel-e2e-client), /bench_vm_roundtrip, /fx/add (the ADD fixture
# directory), /fx/mlp (mlp.tosa, input.npy, expected.npy),
# /dist/vacceld.service (the shipped unit).

/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /tmp /sys/fs/cgroup /run/vaccel /etc/vaccel
mount -t tmpfs tmp /tmp
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount -t debugfs debugfs /sys/kernel/debug
# A filesystem that is not shmem, for the payload steps.
mkdir -p /tmp/ramfs
mount -t ramfs ramfs /tmp/ramfs
export PATH=/bin
export VACCEL_SOCKET=/run/vaccel/vacceld.sock
ADD=/fx/add
ADD_MODEL=$ADD/flatbuffer-tflite/test_add_1x4x4x4_f32.tosa
T0=$(cut -d' ' -f1 /proc/uptime)

step() {
	echo "VMTEST $1 $2 (at $(cut -d' ' -f1 /proc/uptime) s)"
}

# pass_if STEP COMMAND...: the step passes when the command succeeds.
pass_if() {
	name=$1
	shift
	if "$@"; then step "$name" PASS; else step "$name" FAIL; fi
}

# Runs a command with a time limit; its own output says PASS or FAIL.
run() {
	limit=$1
	shift
	timeout "$limit" "$@" || echo "vm: '$*' exited $?"
}

# The kernel log holds no oops, warning or bug. The reports of the OOM
# killer (the "accounted" step provokes one in its own memory cgroup) carry
# a call trace and are left out, from "invoked oom-killer" to the "Killed
# process" line that ends them; that step checks whom they killed.
kernel_log_clean() {
	! dmesg | awk '/invoked oom-killer/ { oom = 1 } !oom { print } /out of memory: Killed process/ { oom = 0 }' |
		grep -E -q 'Oops|WARNING:|BUG:|Call Trace|general protection|RIP:'
}

echo "VMTEST begin $(uname -r)"

# The module's defaults: /dev/vaccel 0660, /dev/vaccel-server 0600. The
# unprivileged steps run as uid and gid 65534: giving the node that group
# stands in for the udev rule's group `vaccel` (dist/udev/60-vaccel.rules).
pass_if insmod sh -c 'insmod /vaccel.ko &&
	[ "$(stat -c %a /dev/vaccel)" = 660 ] &&
	[ "$(stat -c %a /dev/vaccel-server)" = 600 ] &&
	chgrp 65534 /dev/vaccel'

# --- The module's smoke steps, against mini_server ----------------------
/mini_server >/tmp/server.log 2>&1 &
server=$!
/vm_tools wait-line /tmp/server.log 'mini_server: ready' 10 >/dev/null
VMTEST_STEP=smoke-basic run 60 /vm_client basic
run 60 /vm_fastpath smoke
VMTEST_STEP=smoke-client-kill run 60 /vm_client client-kill
# A payload range remapped to a ramfs file after the ioctl's check: the
# copy checks again, under the mmap_lock it pins with.
VMTEST_STEP=smoke-payload-remap run 60 /vm_client payload-remap /tmp/server.log /tmp/ramfs
VMTEST_STEP=smoke-daemon-death run 60 \
	/vm_client daemon-death "$server" /mini_server /tmp/server2.log

# --- vacceld ------------------------------------------------------------
echo '[daemon]' >/etc/vaccel/vacceld.toml
echo 'devices = ["cpu"]' >>/etc/vaccel/vacceld.toml
: >/tmp/vacceld.log

# start_daemon [WRAPPER...]: vacceld (run through WRAPPER, which must exec
# it) serving the module's node and the socket; waits until a kernel client
# is served (10 s at most).
start_daemon() {
	"$@" /vacceld --kernel --socket "$VACCEL_SOCKET" --config /etc/vaccel/vacceld.toml \
		--log-level info >>/tmp/vacceld.log 2>&1 &
	daemon=$!
	i=0
	while [ $i -lt 100 ]; do
		kill -0 "$daemon" 2>/dev/null || return 1
		if [ -S "$VACCEL_SOCKET" ] &&
		   VACCEL_TRANSPORT=kernel /vaccelctl devices >/dev/null 2>&1; then
			return 0
		fi
		sleep 0.1
		i=$((i + 1))
	done
	echo "vm: vacceld does not serve /dev/vaccel after 10 s"
	return 1
}

# 1. The daemon attaches; `vaccelctl devices` goes through the kernel
#    (chosen automatically: /dev/vaccel exists and opens).
pass_if daemon-attach start_daemon
/vaccelctl -v devices >/tmp/devices.txt 2>&1
cat /tmp/devices.txt
pass_if devices-kernel grep -q '^vaccelctl: transport kernel' /tmp/devices.txt
# The CPU's TOSA descriptor came through the module (DEVICE_TOSA, ABI 1.2).
pass_if devices-tosa-descriptor grep -q '^    tosa descriptor 0 of 1: TOSA 1.0 ' /tmp/devices.txt

# 2. vaccelctl run through /dev/vaccel: the ADD fixture exactly, the MLP
#    within 1e-5.
run_add() {
	rm -rf /tmp/out-add
	VACCEL_TRANSPORT=kernel /vaccelctl -v run "$ADD_MODEL" -i "$ADD/placeholder_0.npy" \
		-i "$ADD/placeholder_1.npy" -o /tmp/out-add >/tmp/run-add.txt 2>&1
	status=$?
	cat /tmp/run-add.txt
	[ $status -eq 0 ] && grep -q '^vaccelctl: transport kernel' /tmp/run-add.txt &&
		/vm_tools npy-compare /tmp/out-add/TosaOutput_0.npy "$ADD/tflite_result.npy" 0
}
pass_if run-add run_add
run_mlp() {
	rm -rf /tmp/out-mlp
	VACCEL_TRANSPORT=kernel /vaccelctl -v run /fx/mlp/mlp.tosa -i x=/fx/mlp/input.npy \
		-o /tmp/out-mlp >/tmp/run-mlp.txt 2>&1
	status=$?
	cat /tmp/run-mlp.txt
	[ $status -eq 0 ] && grep -q '^vaccelctl: transport kernel' /tmp/run-mlp.txt &&
		/vm_tools npy-compare /tmp/out-mlp/y.npy /fx/mlp/expected.npy 1e-5
}
pass_if run-mlp run_mlp

# The benchmark: kernel vs socket vs in process, one run.
pass_if bench timeout 90 /bench_vm_roundtrip --iterations 1000 --block 100 --warmup 100

# 3. 8 concurrent kernel clients x 100 exact ADD submissions; then a limit
#    set through the socket is enforced through the kernel.
concurrent() {
	pids=""
	for i in 1 2 3 4 5 6 7 8; do
		VACCEL_TRANSPORT=kernel /e2e add-loop "$ADD" 100 >/tmp/add-$i.txt 2>&1 &
		pids="$pids $!"
	done
	bad=0
	for pid in $pids; do wait "$pid" || bad=$((bad + 1)); done
	[ $bad -eq 0 ] || { echo "vm: $bad of 8 clients failed"; cat /tmp/add-*.txt; }
	[ $bad -eq 0 ]
}
pass_if concurrent concurrent
limit_kernel() {
	/vaccelctl limits set --uid 0 --buffers 2 >/dev/null &&
	VACCEL_TRANSPORT=kernel /e2e limit buffers 2
	status=$?
	/vaccelctl limits reset --uid 0 >/dev/null || status=1
	return $status
}
pass_if limit limit_kernel

# 3b. The contract's gates and kernel launch through /dev/vaccel: the same
#     checks as over the socket and in process (contract_modes.cpp).
pass_if gates-kernel env VACCEL_TRANSPORT=kernel /e2e gates
pass_if launch-kernel env VACCEL_TRANSPORT=kernel /e2e launch
pass_if notify-kernel env VACCEL_TRANSPORT=kernel /e2e notify

# 3c. ABI 1.4's fast path through /dev/vaccel (raw ioctls): RUN (exact
#     output, refusals, a run whose work fails) and BUFFER_MAP (mmap() of
#     the module's tokens: the daemon buffer's own pages).
run 120 /vm_fastpath run "$ADD_MODEL"
run 60 /vm_fastpath map "$ADD_MODEL"

# 3d. A 32-bit client (the module's compat_ioctl): the ADD fixture's exact
#     bytes through SUBMIT/EVENT_WAIT and RUN.
run 60 /vm_compat32 "$ADD"

# 3e. Fairness: while a client parks 200 waits and floods from 8 threads,
#     another client is served every call, within a bounded number of the
#     flood's calls each on average (counts, not times).
run 120 /vm_stress no-starvation "$ADD_MODEL"

# 3e'. Payload memory: anonymous, shmem (memfd, tmpfs, MAP_SHARED |
#     MAP_ANONYMOUS) and hugetlb payloads move; one on a file mapping of
#     another filesystem (a ramfs here, as a FUSE file that never answers
#     would be) is refused with EOPNOTSUPP before a page is touched.
run 60 /vm_stress payload-memory "$ADD_MODEL" /tmp/ramfs

# 3f. Signals: EINTR without SA_RESTART, a restarted wait that keeps its
#     event and its absolute deadline, a waiter frozen and thawed by the
#     cgroup v2 freezer ("interrupt", "interrupt-restart", "interrupt-freeze").
mkdir -p /sys/fs/cgroup/frz
run 60 /vm_stress interrupt "$ADD_MODEL" /sys/fs/cgroup/frz
rmdir /sys/fs/cgroup/frz

# 3g. Detach: while vacceld serves two clients' parked waits, a second
#     daemon cannot attach (EBUSY); SIGTERM makes vacceld let go
#     (VACCEL_SRV_IOCTL_DETACH): every parked wait fails with -ENODEV and
#     none hangs; a new vacceld attaches and serves.
#     /sys/class/misc/vaccel-server/attached reads 1, 0 between, 1 again
#     ("detach-attached").
attached() {
	cat /sys/class/misc/vaccel-server/attached 2>/dev/null || echo unreadable
}
# stop_daemon: SIGTERM, then the daemon must exit (60 s at most: a hang
# detector, not a bound on how fast it stops); returns once it has exited.
stop_daemon() {
	kill -TERM "$daemon" 2>/dev/null
	i=0
	while kill -0 "$daemon" 2>/dev/null && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 "$daemon" 2>/dev/null; then
		echo "vm: vacceld (pid $daemon) still runs 60 s after SIGTERM; killed"
		kill -9 "$daemon"
		wait "$daemon" 2>/dev/null
		/vm_tools wait-exit "$daemon"
		return 1
	fi
	wait "$daemon" 2>/dev/null
	/vm_tools wait-exit "$daemon"
	return 0
}
attached_seen=""
detach() {
	attached_seen="$(attached)"
	for i in 1 2; do
		timeout 30 /vm_stress park "$ADD_MODEL" 8 /tmp/detach-time \
			>/tmp/detach-park-$i.txt 2>&1 &
		eval "park_$i=\$!"
	done
	for i in 1 2; do
		/vm_tools wait-line /tmp/detach-park-$i.txt 'vm_stress: parked' 30 || return 1
	done
	/vm_stress attach-busy || return 1
	/vm_tools signal TERM "$daemon" /tmp/detach-time
	bad=0
	wait "$park_1" || bad=1
	wait "$park_2" || bad=1
	cat /tmp/detach-park-*.txt
	[ $bad -eq 0 ] || echo "vm: a parked client of the detached daemon failed (above)"
	i=0
	while [ "$(attached)" != 0 ] && [ $i -lt 20 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	attached_seen="$attached_seen $(attached)"
	stop_daemon || bad=1
	start_daemon || return 1
	attached_seen="$attached_seen $(attached)"
	run_add || bad=1
	[ $bad -eq 0 ]
}
pass_if detach detach
echo "vm: /sys/class/misc/vaccel-server/attached read: $attached_seen (attached, detached, attached again)"
pass_if detach-attached [ "$attached_seen" = "1 0 1" ]

# 4. kill -9 of the daemon while kernel clients wait: the wait and every
#    later call -ENODEV (PEER_GONE; the wait's delay after the kill is
#    printed, not checked); a restarted daemon serves new clients.
daemon_kill() {
	pids=""
	for i in 1 2 3; do
		VACCEL_TRANSPORT=kernel /e2e park 1024 4 /tmp/kill-time >/tmp/park-$i.txt 2>&1 &
		pids="$pids $!"
	done
	for i in 1 2 3; do /vm_tools wait-line /tmp/park-$i.txt parked 60 || return 1; done
	# Certainly into their waits: the daemon holds three parked waits.
	i=0
	while [ "$(/vaccelctl sessions --json | tr -d ' \n' | grep -o '"waits_parked":1' | wc -l)" -lt 3 ] &&
	      [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	echo "vm: three parked waits seen after $i polls"
	[ $i -lt 100 ] || return 1
	/vm_tools kill9 "$daemon" /tmp/kill-time
	bad=0
	for pid in $pids; do wait "$pid" || bad=$((bad + 1)); done
	cat /tmp/park-*.txt
	# The killed daemon has exited (reaped, and pidfd says so) before the
	# next one starts. Its listening socket may outlive it for a moment
	# (io_uring releases the accept it held after the exit); vacceld
	# tells that stale socket from a live daemon's by the listener's pid.
	wait "$daemon" 2>/dev/null
	/vm_tools wait-exit "$daemon"
	[ $bad -eq 0 ]
}
pass_if daemon-kill daemon_kill
pass_if daemon-restart start_daemon
pass_if daemon-restart-serves env VACCEL_TRANSPORT=kernel /e2e add-loop "$ADD" 3

# 4b. A second vacceld while one serves is refused for the socket, before
#     it touches the module: no "daemon attached" line is added to the
#     kernel log, the first stays attached and serves.
attach_lines() {
	dmesg | grep -c 'vaccel: daemon attached'
}
second_daemon_refused() {
	before=$(attach_lines)
	/vacceld --kernel --socket "$VACCEL_SOCKET" --config /etc/vaccel/vacceld.toml \
		--log-level info >/tmp/second-vacceld.log 2>&1
	status=$?
	cat /tmp/second-vacceld.log
	after=$(attach_lines)
	echo "vm: the second vacceld exited $status; 'daemon attached' lines: $before before, $after after"
	[ $status -ne 0 ] && grep -q 'another vacceld is serving' /tmp/second-vacceld.log &&
		[ "$after" = "$before" ] && [ "$(attached)" = 1 ] &&
		kill -0 "$daemon" && run_add
}
pass_if second-daemon-refused second_daemon_refused

# 5. kill -9 of a client mid-wait: its session leaves the daemon's list.
session_of() {  # the session entry of pid $1 in `vaccelctl sessions --json`
	/vaccelctl sessions --json | tr -d ' \n' | sed 's/},{/}\n{/g' | grep "\"pid\":$1[,}]"
}
client_kill() {
	VACCEL_TRANSPORT=kernel /e2e park 768 1 /tmp/no-kill >/tmp/victim.txt 2>&1 &
	victim=$!
	/vm_tools wait-line /tmp/victim.txt parked 60 || return 1
	session_of $victim || { echo "vm: no session of pid $victim"; return 1; }
	kill -9 $victim
	wait $victim 2>/dev/null
	i=0
	while session_of $victim >/dev/null && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	echo "vm: the killed client's session left after $i polls"
	! session_of $victim >/dev/null
}
pass_if client-kill client_kill

# 6. An unprivileged client's hostile ioctls: only errors, no oops or
#    warning, and the daemon keeps serving a real run; once its sessions
#    are gone the module holds as many requests and sessions as before
#    (debugfs counters: "hostile-counters").
module_objects() {
	echo "$(cat /sys/kernel/debug/vaccel/requests 2>/dev/null || echo unreadable)" \
		"$(cat /sys/kernel/debug/vaccel/sessions 2>/dev/null || echo unreadable)"
}
# The count before, once it holds still (an earlier step's last session may
# still be on its way out).
objects_before=$(module_objects)
i=0
while sleep 0.3 && [ "$(module_objects)" != "$objects_before" ] && [ $i -lt 10 ]; do
	objects_before=$(module_objects)
	i=$((i + 1))
done
VMTEST_STEP=hostile run 150 /vm_client hostile-daemon 100000
pass_if hostile-kernel-log kernel_log_clean
# The hostile session's teardown is asynchronous: the real run comes once
# the daemon lists no session of the hostile client (uid 65534) any more
# (30 s at most), so the contexts it filled the device with are given back.
hostile_gone() {
	i=0
	while /vaccelctl sessions --json | tr -d ' \n' | grep -q '"uid":65534' && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	echo "vm: the hostile session left after $i polls"
	! /vaccelctl sessions --json | tr -d ' \n' | grep -q '"uid":65534'
}
hostile_then_serving() {
	hostile_gone && run_add
}
pass_if hostile-then-serving hostile_then_serving
hostile_counters() {
	i=0
	while [ "$(module_objects)" != "$objects_before" ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	echo "vm: module requests and sessions before the hostile client: $objects_before; after: $(module_objects)"
	case "$objects_before" in *unreadable*) return 1 ;; esac
	[ "$(module_objects)" = "$objects_before" ]
}
pass_if hostile-counters hostile_counters

# 7. An unprivileged process cannot open /dev/vaccel-server.
VMTEST_STEP=unprivileged run 30 /vm_client unprivileged

# 7b. The module's per-user cap on sessions (max_sessions_per_user, 64):
#     one uid is refused past it (EDQUOT, a kernel log line naming the uid
#     and the cap), another still opens, a close lets the first open again.
run 120 /vm_client session-cap
pass_if session-cap-log sh -c "dmesg | grep -q 'vaccel: uid 4001 refused a session: it holds 64, max_sessions_per_user is 64'"

# 8. Containers: a client in its own cgroup and mount namespace, with only
#    /dev/vaccel in its /dev, is known by its cgroup and held to its limit.
mkdir -p /sys/fs/cgroup/box
touch /tmp/vaccel-node
mount --bind /dev/vaccel /tmp/vaccel-node
# in_box COMMAND: runs COMMAND (a shell line) in cgroup /box and a new mount
# namespace whose /dev is a tmpfs holding only the vaccel node. The process
# keeps its pid through every exec: /tmp/box-pid names it.
in_box() {
	sh -c 'echo $$ >/tmp/box-pid && echo $$ >/sys/fs/cgroup/box/cgroup.procs &&
		exec unshare -m sh -c "mount -t tmpfs dev /dev && touch /dev/vaccel &&
			mount --bind /tmp/vaccel-node /dev/vaccel && ls /dev >/tmp/box-dev.txt &&
			$1"' sh "$1"
}
container_identity() {
	in_box 'VACCEL_TRANSPORT=kernel exec /e2e hold 8 0' >/tmp/box-hold.txt 2>&1 &
	job=$!
	/vm_tools wait-line /tmp/box-hold.txt submitted 30 || return 1
	holder=$(cat /tmp/box-pid)
	echo "vm: /dev in the box: $(cat /tmp/box-dev.txt)"
	[ "$(cat /tmp/box-dev.txt)" = vaccel ] || return 1
	entry=$(session_of $holder)
	echo "vm: session of the boxed client: $entry"
	[ -n "$entry" ] || /vaccelctl sessions --json
	kill -9 $holder
	wait $job 2>/dev/null
	echo "$entry" | grep -q '"cgroup":"/box"'
}
pass_if container-identity container_identity
container_limit() {
	/vaccelctl limits set --cgroup /box --buffers 1 >/dev/null &&
	in_box 'VACCEL_TRANSPORT=kernel exec /e2e limit buffers 1'
	status=$?
	/vaccelctl limits reset --cgroup /box >/dev/null || status=1
	return $status
}
pass_if container-limit container_limit
umount /tmp/vaccel-node

# 8b. Accounting: a client in a 16 MiB memory cgroup opens sessions until
#     refused or OOM-killed; the cgroup never passes its limit, only its
#     own process is killed, vacceld lives and another client's run passes.
#     A client of uid 65534 with RLIMIT_MEMLOCK 0 moves 8 MiB through the
#     node ("accounted-memlock": pins last one copy).
echo +memory >/sys/fs/cgroup/cgroup.subtree_control
mkdir -p /sys/fs/cgroup/acct
echo 16M >/sys/fs/cgroup/acct/memory.max
# The module's per-user cap (64 sessions) and the daemon's sessions total
# for its tenant (a rule for its cgroup) are lifted for it: memory is what
# must stop its opens here.
accounted() {
	echo 0 >/sys/module/vaccel/parameters/max_sessions_per_user
	/vaccelctl limits set --cgroup /acct --sessions 100000 >/dev/null || return 1
	timeout 60 /vm_stress accounted /sys/fs/cgroup/acct 1024
	status=$?
	echo 64 >/sys/module/vaccel/parameters/max_sessions_per_user
	/vaccelctl limits reset --cgroup /acct >/dev/null || status=1
	[ $status -eq 0 ] || return 1
	if dmesg | grep 'Out of memory' | grep -v -q 'Memory cgroup out of memory'; then
		echo "vm: a system-wide OOM happened:"
		dmesg | grep 'Out of memory'
		return 1
	fi
	if dmesg | grep 'oom-kill:' | grep -v -q 'oom_memcg=/acct,'; then
		echo "vm: the OOM killer acted outside /acct:"
		dmesg | grep 'oom-kill:'
		return 1
	fi
	kill -0 "$daemon" 2>/dev/null || { echo "vm: vacceld died"; return 1; }
	run_add
}
pass_if accounted accounted
rmdir /sys/fs/cgroup/acct
run 60 /vm_stress memlock

# 8c. The shipped unit's capabilities: vacceld started with exactly the
#     bounding, effective, permitted, inheritable and ambient sets of
#     dist/vacceld.service (and its NoNewPrivileges) serves /dev/vaccel.
unit_value() {
	grep "^$1=" /dist/vacceld.service | tail -n 1 | cut -d= -f2-
}
unit_caps() {
	grep -q '^CapabilityBoundingSet=' /dist/vacceld.service ||
		{ echo "vm: dist/vacceld.service sets no CapabilityBoundingSet="; return 1; }
	bounding=$(unit_value CapabilityBoundingSet)
	ambient=$(unit_value AmbientCapabilities)
	nnp=$(unit_value NoNewPrivileges)
	stop_daemon || return 1
	start_daemon /vm_tools cap-exec "$bounding" "$ambient" "${nnp:-no}" || return 1
	want_set=$(/vm_tools cap-mask "$bounding") || return 1
	want_ambient=$(/vm_tools cap-mask "$ambient") || return 1
	grep '^Cap' "/proc/$daemon/status" | tr '\t' ' ' >/tmp/daemon-caps.txt
	echo "vm: the unit's bounding set '$bounding' ($want_set), ambient '$ambient'; vacceld has:" \
		$(cat /tmp/daemon-caps.txt)
	for set in CapBnd CapEff CapPrm CapInh; do
		grep -q "^$set: $want_set\$" /tmp/daemon-caps.txt ||
			{ echo "vm: vacceld's $set is not $want_set"; return 1; }
	done
	grep -q "^CapAmb: $want_ambient\$" /tmp/daemon-caps.txt ||
		{ echo "vm: vacceld's CapAmb is not $want_ambient"; return 1; }
	run_add
}
pass_if unit-caps unit_caps

# 9. Device loss through /dev/vaccel: a daemon serving the CPU as two
#    devices, device 0 losing itself at its fourth acceptance (fault
#    injection): the submit it dies taking returns its event with the
#    error, its work fails, device 1 keeps serving, vaccelctl shows it.
stop_daemon
printf '[daemon]\ndevices = ["cpu"]\n[devices.cpu]\nthreads = 1\ncount = 2\ninject_loss_after = 3\n' \
	>/etc/vaccel/vacceld.toml
loss_kernel() {
	# The stopped daemon's node is released when its ring is torn down,
	# just after it exits: a new one may find it attached for a moment.
	tries=0
	until start_daemon; do
		tries=$((tries + 1))
		[ $tries -lt 25 ] || return 1
		sleep 0.2
	done
	VACCEL_TRANSPORT=kernel /e2e loss 3 || return 1
	/vaccelctl devices --json | tr -d ' \n' >/tmp/devices-loss.json
	cat /tmp/devices-loss.json
	echo
	grep -q '"index":0,"name":"[^"]*","state":"lost"' /tmp/devices-loss.json &&
		grep -q '"index":1,"name":"[^"]*","state":"ok"' /tmp/devices-loss.json
}
pass_if loss-kernel loss_kernel

# 10. rmmod after all of it (the daemon stopped first).
kill -TERM "$daemon" 2>/dev/null
wait "$daemon" 2>/dev/null
# A killed daemon's ring is torn down asynchronously after the monitor
# has completed its parked commands: the module may stay busy briefly.
i=0
while ! rmmod vaccel 2>/dev/null && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
echo "vm: rmmod after $i retries"
if ! grep -q '^vaccel ' /proc/modules &&
   dmesg | grep -q 'vaccel: unloaded (0 requests alive)'; then
	step rmmod PASS
else
	step rmmod FAIL
fi
pass_if kernel-log kernel_log_clean

echo "vm: steps took $(cut -d' ' -f1 /proc/uptime) s of uptime (began at $T0 s)"
echo "vm: vacceld log (last 30 lines)"
tail -n 30 /tmp/vacceld.log
echo "VMTEST-DMESG-BEGIN"
dmesg
echo "VMTEST-DMESG-END"
echo "VMTEST end"
poweroff -f
