#!/bin/busybox sh
# init.sh - /init of the VM test's initramfs (busybox-static).
#
# Runs the module's smoke steps in order and prints one line per step,
# "VMTEST <step> PASS|FAIL", on the serial console; run-vm-test.sh decides
# from those lines. The kernel log is always printed between
# VMTEST-DMESG-BEGIN and VMTEST-DMESG-END. Powers off at the end whatever
# happened (qemu runs with -no-reboot).

/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /tmp /sys/fs/cgroup
mount -t tmpfs tmp /tmp
mount -t cgroup2 cgroup2 /sys/fs/cgroup
export PATH=/bin

step() {
	echo "VMTEST $1 $2"
}

# Runs a command with a time limit; its own output says PASS or FAIL.
run() {
	limit=$1
	shift
	timeout "$limit" "$@" || echo "vm: '$*' exited $?"
}

echo "VMTEST begin $(uname -r)"

if insmod /vaccel.ko &&
   [ "$(stat -c %a /dev/vaccel)" = 666 ] &&
   [ "$(stat -c %a /dev/vaccel-server)" = 600 ]; then
	step insmod PASS
else
	step insmod FAIL
fi

/mini_server >/tmp/server.log 2>&1 &
server=$!
i=0
while ! grep -q 'mini_server: ready' /tmp/server.log && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done

run 60 /vm_client basic
run 30 /vm_client unprivileged

# A client in its own cgroup is identified by it in SESSION_OPEN.
mkdir /sys/fs/cgroup/box
sh -c 'echo $$ >/sys/fs/cgroup/box/cgroup.procs && exec /vm_client open-only'
if grep -q 'uid 0 gid 0 cgroup /box$' /tmp/server.log; then
	step session-identity PASS
else
	step session-identity FAIL
fi

run 120 /vm_client hostile
run 120 /vm_client concurrent
run 60 /vm_client client-kill
run 60 /vm_client daemon-death "$server" /mini_server /tmp/server2.log

echo "vm: server logs"
cat /tmp/server.log /tmp/server2.log 2>/dev/null | tail -n 40

# A killed daemon's ring is torn down asynchronously after the monitor
# has completed its parked commands: the module may stay busy briefly.
i=0
while ! rmmod vaccel 2>/dev/null && [ $i -lt 30 ]; do
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

if dmesg | grep -E -q 'Oops|WARNING:|BUG:|Call Trace|general protection|RIP:'; then
	step kernel-log FAIL
else
	step kernel-log PASS
fi

echo "VMTEST-DMESG-BEGIN"
dmesg
echo "VMTEST-DMESG-END"
echo "VMTEST end"
poweroff -f
