#!/bin/bash
# run-vm-test.sh - the VM test: the kernel module and the whole system in a
# real kernel, under qemu, on every kernel the module supports.
#
# Builds static vacceld, vaccelctl, vaccel-e2e-client, bench_vm_roundtrip
# and the example MLP in a VACCEL_STATIC=ON tree, and the static C helpers
# (tests/vm/mini_server.c, vm_client.c, vm_tools.c, vm_fastpath.c,
# vm_stress.c, and vm_compat32.c as a 32-bit program); packs a
# busybox-static initramfs with tests/vm/init.sh as /init, the ADD fixture,
# the MLP and dist/vacceld.service. Then, for each kernel: builds vaccel.ko
# against its linux-headers-*-cloud-amd64 (W=1: any warning fails), boots
# its /boot/vmlinuz under qemu (TCG) with the module added to the
# initramfs, and decides pass/fail from the "VMTEST <step> PASS" lines of
# its serial log (qemu exits 0 whatever happens): every step of STEPS must
# pass on every kernel. Prints one "PASS|FAIL|MISSING <kernel> <step>" line
# per step and kernel, the benchmark's "VMBENCH" lines; on failure, the
# failing lines and the VM's kernel log. Exit status: 0 pass, 1 fail, 2
# missing tools or kernels.
#
# Kernels: every installed /usr/src/linux-headers-*-cloud-amd64 (Debian 12:
# linux-headers-cloud-amd64 for 6.1, linux-headers-6.12-cloud-amd64 for
# 6.12); each needs its /boot/vmlinuz (linux-image-*), and at least
# VACCEL_VM_MIN_KERNELS (2) must be there. KVERS (releases, space
# separated; KVER is one) replaces the list, and then each named one must be
# installed.
#
# Environment: VACCEL_STATIC_BUILD (the static CMake tree; default
# build-static), VACCEL_VM_OUT (work directory; default
# $VACCEL_STATIC_BUILD/vm), VACCEL_VM_TIMEOUT (seconds for one kernel's VM,
# 480: a hang detector, not a bound; a loaded machine has taken 200 s),
# VACCEL_BUILD_JOBS (parallel compile jobs, 2), VACCEL_VM_SMP (each VM's
# CPUs, 2), VACCEL_VM_PARALLEL (1: boot the kernels at once, 0: one
# after the other; default 1 when the machine has 2 CPUs per VM CPU to
# spare: no step asserts a time, but two emulated VMs on too few cores run
# slowly).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
STATIC=${VACCEL_STATIC_BUILD:-$ROOT/build-static}
OUT=${VACCEL_VM_OUT:-$STATIC/vm}
TIMEOUT=${VACCEL_VM_TIMEOUT:-480}
JOBS=${VACCEL_BUILD_JOBS:-2}
SMP=${VACCEL_VM_SMP:-2}
MIN_KERNELS=${VACCEL_VM_MIN_KERNELS:-2}
STEPS="insmod smoke-basic smoke-fastpath smoke-client-kill smoke-payload-remap smoke-daemon-death
	daemon-attach devices-kernel devices-tosa-descriptor run-add run-mlp bench concurrent limit
	gates-kernel launch-kernel notify-kernel run map compat32 no-starvation payload-memory interrupt
	interrupt-restart interrupt-freeze detach detach-attached
	daemon-kill daemon-restart daemon-restart-serves second-daemon-refused client-kill
	hostile hostile-kernel-log hostile-then-serving hostile-counters unprivileged
	session-cap session-cap-log
	container-identity container-limit accounted accounted-memlock unit-caps
	loss-kernel rmmod kernel-log"

missing() {
	echo "run-vm-test: $1 is missing; install it with 'make deps', or:" >&2
	echo "  apt-get install -y linux-headers-cloud-amd64 linux-image-cloud-amd64 linux-headers-6.12-cloud-amd64 linux-image-6.12-cloud-amd64 qemu-system-x86 busybox-static cpio liburing-dev gcc-multilib" >&2
	exit 2
}

if [ -n "${KVERS:-${KVER:-}}" ]; then
	KVERS=${KVERS:-$KVER}
	for kver in $KVERS; do
		[ -d "/usr/src/linux-headers-$kver" ] || missing "/usr/src/linux-headers-$kver"
		[ -r "/boot/vmlinuz-$kver" ] || missing "/boot/vmlinuz-$kver (linux-image-$kver)"
	done
else
	KVERS=""
	for headers in $(ls -d /usr/src/linux-headers-*-cloud-amd64 2>/dev/null | sort -V); do
		kver=${headers#/usr/src/linux-headers-}
		[ -r "/boot/vmlinuz-$kver" ] || missing "/boot/vmlinuz-$kver (linux-image-$kver), for the installed headers"
		KVERS="$KVERS $kver"
	done
	count=$(echo $KVERS | wc -w)
	[ "$count" -ge "$MIN_KERNELS" ] ||
		missing "a cloud kernel (the test needs $MIN_KERNELS, 6.1 and 6.12; found $count:${KVERS:- none})"
fi
KVERS=$(echo $KVERS)
command -v qemu-system-x86_64 >/dev/null || missing qemu-system-x86_64
command -v cpio >/dev/null || missing cpio
BUSYBOX=$(command -v busybox || true)
if [ -z "$BUSYBOX" ] || ! file -L "$BUSYBOX" 2>/dev/null | grep -q 'statically linked'; then
	[ -x /bin/busybox ] || missing busybox-static
	BUSYBOX=/bin/busybox
fi
[ -r /usr/lib/x86_64-linux-gnu/liburing.a ] || missing "liburing.a"
echo 'int main(void) { return 0; }' | gcc -m32 -static -x c -o /dev/null - 2>/dev/null ||
	missing "gcc -m32 -static (gcc-multilib)"

# Kbuild's M= and the later steps need absolute paths (make test passes the
# static tree relative to the repository).
mkdir -p "$STATIC" "$OUT"
STATIC=$(realpath "$STATIC")
OUT=$(realpath "$OUT")
echo "run-vm-test: kernels $KVERS, static tree $STATIC, work dir $OUT"
began=$(date +%s)

# 1. The module for each kernel, built from a copy of kmod/ so the source
#    tree stays clean.
for kver in $KVERS; do
	kmod=$OUT/$kver/kmod
	rm -rf "$kmod"
	mkdir -p "$kmod"
	cp "$ROOT"/kmod/Kbuild "$ROOT"/kmod/*.c "$ROOT"/kmod/*.h "$kmod/"
	make -C "/usr/src/linux-headers-$kver" M="$kmod" \
		VACCEL_UAPI="$ROOT/uapi" W=1 modules >"$OUT/$kver/kmod-build.log" 2>&1 || {
		cat "$OUT/$kver/kmod-build.log"
		echo "run-vm-test: FAIL: the module does not build for $kver"
		exit 1
	}
	if grep -E -q 'warning:|error:' "$OUT/$kver/kmod-build.log"; then  # W=1 included
		cat "$OUT/$kver/kmod-build.log"
		echo "run-vm-test: FAIL: the module builds with warnings for $kver"
		exit 1
	fi
done

# 2. Static programs: the system's own (CMake, VACCEL_STATIC=ON) and the
#    C helpers.
TARGETS="vacceld vaccelctl vaccel-e2e-client bench_vm_roundtrip example-mlp"
{
	[ -f "$STATIC/build.ninja" ] ||
		cmake -S "$ROOT" -B "$STATIC" -G Ninja -DVACCEL_STATIC=ON
	cmake --build "$STATIC" -j "$JOBS" --target $TARGETS
} >"$OUT/static-build.log" 2>&1 || {
	tail -n 60 "$OUT/static-build.log"
	echo "run-vm-test: FAIL: the static programs do not build ($OUT/static-build.log)"
	exit 1
}
CFLAGS="-static -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -I$ROOT/uapi"
gcc $CFLAGS -o "$OUT/mini_server" "$ROOT/tests/vm/mini_server.c" -luring
gcc $CFLAGS -pthread -o "$OUT/vm_client" "$ROOT/tests/vm/vm_client.c"
gcc $CFLAGS -o "$OUT/vm_tools" "$ROOT/tests/vm/vm_tools.c" -lm
gcc $CFLAGS -o "$OUT/vm_fastpath" "$ROOT/tests/vm/vm_fastpath.c"
gcc $CFLAGS -pthread -o "$OUT/vm_stress" "$ROOT/tests/vm/vm_stress.c"
gcc $CFLAGS -m32 -o "$OUT/vm_compat32" "$ROOT/tests/vm/vm_compat32.c"
file "$OUT/vm_compat32" | grep -q 'ELF 32-bit.*statically linked' || {
	echo "run-vm-test: FAIL: $OUT/vm_compat32 is not a static 32-bit program"
	exit 1
}
echo "run-vm-test: built in $(($(date +%s) - began)) s"

# 3. The initramfs, shared by every kernel (programs stripped of debug
#    info: a smaller image boots faster under emulation). Each kernel's
#    module is a second cpio archive appended to it (the kernel unpacks
#    concatenated archives in order).
INITRAMFS=$OUT/root
rm -rf "$INITRAMFS"
mkdir -p "$INITRAMFS"/{bin,dev,proc,sys,tmp,fx/mlp,dist}
cp "$BUSYBOX" "$INITRAMFS/bin/busybox"
cp "$ROOT/tests/vm/init.sh" "$INITRAMFS/init"
chmod 0755 "$INITRAMFS/init"
cp "$OUT/mini_server" "$OUT/vm_client" "$OUT/vm_tools" "$OUT/vm_fastpath" \
	"$OUT/vm_stress" "$OUT/vm_compat32" "$INITRAMFS/"
for program in userspace/daemon/vacceld tools/vaccelctl/vaccelctl \
	tests/daemon_e2e/vaccel-e2e-client:e2e benchmarks/bench_vm_roundtrip; do
	path=$STATIC/${program%%:*}
	name=$(basename "${program##*:}")
	if ! file -L "$path" | grep -q 'statically linked'; then
		echo "run-vm-test: FAIL: $path is not statically linked"
		exit 1
	fi
	strip --strip-debug -o "$INITRAMFS/$name" "$path"
done
cp -r "$ROOT/tests/fixtures/tosa/v1.0-add_1x4x4x4_f32" "$INITRAMFS/fx/add"
cp "$STATIC"/examples/{mlp.tosa,input.npy,expected.npy} "$INITRAMFS/fx/mlp/"
cp "$ROOT/dist/vacceld.service" "$INITRAMFS/dist/"
(cd "$INITRAMFS" && find . | cpio -o -H newc --quiet | gzip -1) >"$OUT/initrd-base.gz"
for kver in $KVERS; do
	mkdir -p "$OUT/$kver/root"
	cp "$OUT/$kver/kmod/vaccel.ko" "$OUT/$kver/root/"
	{
		cat "$OUT/initrd-base.gz"
		(cd "$OUT/$kver/root" && echo vaccel.ko | cpio -o -H newc --quiet | gzip -1)
	} >"$OUT/$kver/initrd.gz"
done

# 4. Boot each kernel; its serial log is $OUT/<kernel>/serial.log.
#    The console shows warnings and call traces (loglevel=5, not the
#    module's pr_info lines), and a soft lockup panics the VM at once with
#    every CPU's backtrace, so a guest that hangs ends in seconds, not at
#    the hang detector, and its log says where each CPU was.
boot_once() {
	local kver=$1 log=$2 start
	start=$(date +%s)
	timeout "$TIMEOUT" qemu-system-x86_64 -accel tcg -m 1G -smp "$SMP" -nographic \
		-no-reboot -kernel "/boot/vmlinuz-$kver" -initrd "$OUT/$kver/initrd.gz" \
		-append 'console=ttyS0 panic=-1 loglevel=5 softlockup_panic=1 softlockup_all_cpu_backtrace=1' \
		</dev/null >"$log" 2>&1 || true
	tr -d '\r' <"$log" >"$log.txt"
	echo "run-vm-test: $kver: VM ran $(($(date +%s) - start)) s (limit $TIMEOUT s)"
}
# A guest that locked up (soft lockup, RCU stall) where no CPU's trace
# holds a frame of the module: emulated CPUs under a loaded host have hung
# this way with every CPU in code that is not vaccel's. Such a VM is booted
# once more, and both logs are kept and their lockup lines printed; a
# lockup in which any trace names [vaccel] fails at once.
locked_up_outside_vaccel() {
	grep -a -q -E 'soft lockup|self-detected stall|rcu_preempt detected stalls' "$1" &&
		! grep -a -q '\[vaccel\]' "$1"
}
boot() {
	local kver=$1 log=$OUT/$1/serial.log
	boot_once "$kver" "$log"
	if locked_up_outside_vaccel "$log.txt"; then
		cp "$log.txt" "$log.lockup.txt"
		echo "run-vm-test: $kver: the guest locked up with no vaccel frame on any CPU (log: $log.lockup.txt); booting it once more:"
		grep -a -E 'soft lockup|stall|RIP:|Comm:|^ *\? |^ [a-z_0-9.]+\+0x' "$log.lockup.txt" |
			head -n 60 | sed 's/^/  lockup: /'
		boot_once "$kver" "$log"
	fi
}
kernels=$(echo $KVERS | wc -w)
PARALLEL=${VACCEL_VM_PARALLEL:-}
if [ -z "$PARALLEL" ]; then
	PARALLEL=0
	[ "$(nproc)" -ge $((2 * SMP * kernels)) ] && PARALLEL=1
fi
if [ "$PARALLEL" = 1 ]; then
	echo "run-vm-test: booting $kernels kernels at once"
	for kver in $KVERS; do boot "$kver" & done
	wait
else
	for kver in $KVERS; do boot "$kver"; done
fi

# 5. Verdict, per kernel: every step must pass on every kernel.
failed=""
for kver in $KVERS; do
	log=$OUT/$kver/serial.log.txt
	echo "run-vm-test: $kver"
	booted=$(grep -a -o 'VMTEST begin .*' "$log" | head -n 1 || true)
	if [ "$booted" != "VMTEST begin $kver" ]; then
		echo "  FAIL $kver boot: the VM did not start the test on $kver (saw '${booted}')"
		failed="$failed $kver"
	fi
	for step in $STEPS; do
		line=$(grep -a -o "VMTEST $step [A-Z]*" "$log" | tail -n 1 || true)
		case "$line" in
		"VMTEST $step PASS") echo "  PASS $kver $step" ;;
		"") echo "  MISSING $kver $step"; failed="$failed $kver" ;;
		*) echo "  FAIL $kver $step"; failed="$failed $kver" ;;
		esac
	done
	grep -a '^vm_client\|^vm_fastpath\|^vm_stress\|^vm_compat32\|^vm:\|^vm_tools:\|^FAIL:\|^park:' \
		"$log" | sed 's/^/  /' || true
	echo "run-vm-test: $kver benchmark (inside the VM, TCG: the ratios are the result)"
	grep -a '^VMBENCH' "$log" | sed 's/^/  /' || echo "  no VMBENCH lines"
done
echo "run-vm-test: $(($(date +%s) - began)) s in all"

if [ -n "$failed" ]; then
	for kver in $(echo $failed | tr ' ' '\n' | sort -u); do
		log=$OUT/$kver/serial.log.txt
		echo "run-vm-test: FAIL on $kver; kernel log of its VM:"
		if grep -a -q 'VMTEST-DMESG-BEGIN' "$log"; then
			sed -n '/VMTEST-DMESG-BEGIN/,/VMTEST-DMESG-END/p' "$log"
		else
			tail -n 120 "$log"
		fi
	done
	# Last, where a tail of this output shows them: where each CPU was.
	for kver in $(echo $failed | tr ' ' '\n' | sort -u); do
		grep -a -E 'soft lockup|stall|RIP:|Comm:|^ *\? |^ [a-z_0-9.]+\+0x' "$OUT/$kver/serial.log.txt" |
			head -n 60 | sed "s/^/  $kver lockup: /" || true
	done
	echo "run-vm-test: FAIL on$(echo $failed | tr ' ' '\n' | sort -u | tr '\n' ' ' | sed 's/^/ /;s/ $//')"
	exit 1
fi
echo "run-vm-test: PASS on $KVERS (serial logs: $OUT/<kernel>/serial.log.txt)"
