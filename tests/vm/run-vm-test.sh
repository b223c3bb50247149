#!/bin/bash
# run-vm-test.sh - the kernel module's VM test.
#
# Builds vaccel.ko against the installed linux-headers-*-cloud-amd64, the
# static test programs (tests/vm/mini_server.c, tests/vm/vm_client.c), packs
# a busybox-static initramfs with tests/vm/init.sh as /init, boots the
# matching linux-image-cloud-amd64 under qemu (TCG), and decides pass/fail
# from the "VMTEST <step> PASS" lines of the serial log (qemu exits 0
# whatever happens). On failure it prints the failing lines and the VM's
# kernel log. Exit status: 0 pass, 1 fail, 2 missing tools.
#
# Environment: KVER (kernel release to build for and boot; default the
# newest installed *-cloud-amd64 headers), VACCEL_VM_OUT (work directory;
# default build-kmod/vm), VACCEL_VM_TIMEOUT (seconds for the VM, 170).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${VACCEL_VM_OUT:-$ROOT/build-kmod/vm}
TIMEOUT=${VACCEL_VM_TIMEOUT:-170}
STEPS="insmod basic unprivileged session-identity hostile concurrent client-kill daemon-death rmmod kernel-log"

missing() {
	echo "run-vm-test: $1 is missing; install it with:" >&2
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

echo "run-vm-test: kernel $KVER, work dir $OUT"
mkdir -p "$OUT"

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

# 2. Static test programs.
CFLAGS="-static -O2 -Wall -Wextra -Werror -I$ROOT/uapi"
gcc $CFLAGS -o "$OUT/mini_server" "$ROOT/tests/vm/mini_server.c" -luring
gcc $CFLAGS -o "$OUT/vm_client" "$ROOT/tests/vm/vm_client.c"

# 3. The initramfs.
INITRAMFS=$OUT/root
rm -rf "$INITRAMFS"
mkdir -p "$INITRAMFS"/{bin,dev,proc,sys,tmp}
cp "$BUSYBOX" "$INITRAMFS/bin/busybox"
cp "$ROOT/tests/vm/init.sh" "$INITRAMFS/init"
cp "$OUT/kmod/vaccel.ko" "$OUT/mini_server" "$OUT/vm_client" "$INITRAMFS/"
chmod 0755 "$INITRAMFS/init"
(cd "$INITRAMFS" && find . | cpio -o -H newc --quiet | gzip -1) >"$OUT/initrd.gz"

# 4. Boot.
LOG=$OUT/serial.log
start=$(date +%s)
timeout "$TIMEOUT" qemu-system-x86_64 -accel tcg -m 1G -smp 2 -nographic \
	-no-reboot -kernel "$KERNEL" -initrd "$OUT/initrd.gz" \
	-append 'console=ttyS0 panic=-1 quiet' </dev/null >"$LOG" 2>&1 || true
tr -d '\r' <"$LOG" >"$LOG.txt"
echo "run-vm-test: VM ran $(($(date +%s) - start)) s"

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
grep -a '^vm_client\|^vm:' "$LOG.txt" | sed 's/^/  /' || true

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
