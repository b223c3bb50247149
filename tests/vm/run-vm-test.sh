#!/bin/bash
# run-vm-test.sh - the VM test: the kernel module and the whole system in a
# real kernel, under qemu.
#
# Builds vaccel.ko against the installed linux-headers-*-cloud-amd64; builds
# static vacceld, vaccelctl, vaccel-e2e-client, bench_vm_roundtrip and the
# example MLP in a VACCEL_STATIC=ON tree, and the static C helpers
# (tests/vm/mini_server.c, vm_client.c, vm_tools.c, vm_fastpath.c); packs
# a busybox-static initramfs with tests/vm/init.sh as /init, the ADD
# fixture and the MLP;
# boots the matching linux-image-cloud-amd64 under qemu (TCG), and decides
# pass/fail from the "VMTEST <step> PASS" lines of the serial log (qemu
# exits 0 whatever happens): every step of STEPS must pass. Prints the
# benchmark's "VMBENCH" lines; on failure, the failing lines and the VM's
# kernel log. Exit status: 0 pass, 1 fail, 2 missing tools.
#
# Environment: KVER (kernel release to build for and boot; default the
# newest installed *-cloud-amd64 headers), VACCEL_STATIC_BUILD (the static
# CMake tree; default build-static), VACCEL_VM_OUT (work directory; default
# $VACCEL_STATIC_BUILD/vm), VACCEL_VM_TIMEOUT (seconds for the VM, 170),
# VACCEL_BUILD_JOBS (parallel compile jobs, 2), VACCEL_VM_SMP (the VM's
# CPUs, 2).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
STATIC=${VACCEL_STATIC_BUILD:-$ROOT/build-static}
OUT=${VACCEL_VM_OUT:-$STATIC/vm}
TIMEOUT=${VACCEL_VM_TIMEOUT:-170}
JOBS=${VACCEL_BUILD_JOBS:-2}
SMP=${VACCEL_VM_SMP:-2}
STEPS="insmod smoke-basic smoke-fastpath smoke-client-kill smoke-daemon-death
	daemon-attach devices-kernel devices-tosa-descriptor run-add run-mlp bench concurrent limit
	gates-kernel launch-kernel notify-kernel run map daemon-kill daemon-restart daemon-restart-serves client-kill
	hostile hostile-kernel-log hostile-then-serving unprivileged
	container-identity container-limit loss-kernel rmmod kernel-log"

missing() {
	echo "run-vm-test: $1 is missing; install it with 'make deps', or:" >&2
	echo "  apt-get install -y linux-headers-cloud-amd64 linux-image-cloud-amd64 qemu-system-x86 busybox-static cpio liburing-dev" >&2
	exit 2
}

if [ -z "${KVER:-}" ]; then
	KVER=$(ls -d /usr/src/linux-headers-*-cloud-amd64 2>/dev/null | sort -V |
	       tail -n 1 | sed 's|/usr/src/linux-headers-||')
fi
[ -n "$KVER" ] || missing "linux-headers-cloud-amd64"
KERNEL=/boot/vmlinuz-$KVER
[ -r "$KERNEL" ] || missing "$KERNEL (linux-image-$KVER)"
command -v qemu-system-x86_64 >/dev/null || missing qemu-system-x86_64
command -v cpio >/dev/null || missing cpio
BUSYBOX=$(command -v busybox || true)
if [ -z "$BUSYBOX" ] || ! file -L "$BUSYBOX" 2>/dev/null | grep -q 'statically linked'; then
	[ -x /bin/busybox ] || missing busybox-static
	BUSYBOX=/bin/busybox
fi
[ -r /usr/lib/x86_64-linux-gnu/liburing.a ] || missing "liburing.a"

# Kbuild's M= and the later steps need absolute paths (make test passes the
# static tree relative to the repository).
mkdir -p "$STATIC" "$OUT"
STATIC=$(realpath "$STATIC")
OUT=$(realpath "$OUT")
echo "run-vm-test: kernel $KVER, static tree $STATIC, work dir $OUT"
began=$(date +%s)

# 1. The module, built from a copy of kmod/ so the source tree stays clean.
rm -rf "$OUT/kmod"
mkdir -p "$OUT/kmod"
cp "$ROOT"/kmod/Kbuild "$ROOT"/kmod/*.c "$ROOT"/kmod/*.h "$OUT/kmod/"
make -C "/usr/src/linux-headers-$KVER" M="$OUT/kmod" \
	VACCEL_UAPI="$ROOT/uapi" W=1 modules >"$OUT/kmod-build.log" 2>&1 || {
	cat "$OUT/kmod-build.log"
	echo "run-vm-test: FAIL: the module does not build"
	exit 1
}
if grep -E -q 'warning:|error:' "$OUT/kmod-build.log"; then  # W=1 included
	cat "$OUT/kmod-build.log"
	echo "run-vm-test: FAIL: the module builds with warnings"
	exit 1
fi

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
gcc $CFLAGS -o "$OUT/vm_client" "$ROOT/tests/vm/vm_client.c"
gcc $CFLAGS -o "$OUT/vm_tools" "$ROOT/tests/vm/vm_tools.c" -lm
gcc $CFLAGS -o "$OUT/vm_fastpath" "$ROOT/tests/vm/vm_fastpath.c"
echo "run-vm-test: built in $(($(date +%s) - began)) s"

# 3. The initramfs (programs stripped of debug info: a smaller image boots
#    faster under emulation).
INITRAMFS=$OUT/root
rm -rf "$INITRAMFS"
mkdir -p "$INITRAMFS"/{bin,dev,proc,sys,tmp,fx/mlp}
cp "$BUSYBOX" "$INITRAMFS/bin/busybox"
cp "$ROOT/tests/vm/init.sh" "$INITRAMFS/init"
chmod 0755 "$INITRAMFS/init"
cp "$OUT/kmod/vaccel.ko" "$OUT/mini_server" "$OUT/vm_client" "$OUT/vm_tools" \
	"$OUT/vm_fastpath" "$INITRAMFS/"
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
(cd "$INITRAMFS" && find . | cpio -o -H newc --quiet | gzip -1) >"$OUT/initrd.gz"

# 4. Boot.
LOG=$OUT/serial.log
start=$(date +%s)
timeout "$TIMEOUT" qemu-system-x86_64 -accel tcg -m 1G -smp "$SMP" -nographic \
	-no-reboot -kernel "$KERNEL" -initrd "$OUT/initrd.gz" \
	-append 'console=ttyS0 panic=-1 quiet' </dev/null >"$LOG" 2>&1 || true
tr -d '\r' <"$LOG" >"$LOG.txt"
echo "run-vm-test: VM ran $(($(date +%s) - start)) s (limit $TIMEOUT s)"

# 5. Verdict.
failed=0
for step in $STEPS; do
	line=$(grep -a -o "VMTEST $step [A-Z]*" "$LOG.txt" | tail -n 1 || true)
	case "$line" in
	"VMTEST $step PASS") echo "  PASS $step" ;;
	"") echo "  MISSING $step"; failed=1 ;;
	*) echo "  FAIL $step"; failed=1 ;;
	esac
done
grep -a '^vm_client\|^vm_fastpath\|^vm:\|^vm_tools:\|^FAIL:\|^park:' "$LOG.txt" | sed 's/^/  /' || true
echo "run-vm-test: benchmark (inside the VM, TCG: the ratios are the result)"
grep -a '^VMBENCH' "$LOG.txt" | sed 's/^/  /' || echo "  no VMBENCH lines"
echo "run-vm-test: $(($(date +%s) - began)) s in all"

if [ "$failed" -ne 0 ]; then
	echo "run-vm-test: FAIL; kernel log of the VM:"
	if grep -a -q 'VMTEST-DMESG-BEGIN' "$LOG.txt"; then
		sed -n '/VMTEST-DMESG-BEGIN/,/VMTEST-DMESG-END/p' "$LOG.txt"
	else
		tail -n 120 "$LOG.txt"
	fi
	exit 1
fi
echo "run-vm-test: PASS (serial log: $LOG.txt)"
