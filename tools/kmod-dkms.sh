#!/usr/bin/env bash
# kmod-dkms.sh - vaccel.ko through DKMS (kmod/dkms.conf); behind the
# top-level `make dkms-install`, `make dkms-remove` and `make dkms-check`.
#
#   kmod-dkms.sh stage DIR          lay out a DKMS source tree in DIR
#   kmod-dkms.sh version            print VERSION (the Debian package's
#                                   /usr/src/vaccel-VERSION, debian/rules)
#   kmod-dkms.sh install [KVER...]  the tree in /usr/src/vaccel-VERSION,
#                                   dkms add, build and install for each KVER
#   kmod-dkms.sh remove             dkms remove --all of every vaccel version
#                                   and its /usr/src tree
#   kmod-dkms.sh check [KVER...]    dkms add and build for each KVER in a
#                                   private DKMS tree, removed afterwards
#
# KVER defaults, for install, to every installed kernel whose headers are
# installed too; for check, to every kernel whose headers are installed
# (/lib/modules/KVER/build). VERSION is the contract ABI of uapi/vaccel.h.
# install, remove and check run as root (through sudo when needed).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
readonly MODULE=vaccel

die() {
	echo "kmod-dkms: $*" >&2
	exit 1
}

# VACCEL_ABI_MAJOR.VACCEL_ABI_MINOR of uapi/vaccel.h.
abi_version() {
	local version
	version=$(awk '$1 == "#define" && $2 == "VACCEL_ABI_MAJOR" { major = $3 }
		       $1 == "#define" && $2 == "VACCEL_ABI_MINOR" { minor = $3 }
		       END { if (major != "" && minor != "") print major "." minor }' \
		"$ROOT/uapi/vaccel.h")
	[ -n "$version" ] || die "no VACCEL_ABI_MAJOR/MINOR in $ROOT/uapi/vaccel.h"
	echo "$version"
}

# Every kernel with its headers installed, oldest first; with --booted,
# only those whose image is installed too (its modules in /lib/modules).
kernels_with_headers() {
	local build dir
	for build in /lib/modules/*/build; do
		dir=$(dirname "$build")
		[ -f "$build/Makefile" ] || continue
		[ "${1:-}" != --booted ] || [ -d "$dir/kernel" ] || continue
		basename "$dir"
	done | sort -V
}

# The versions of vaccel DKMS knows ("vaccel/2.0, 6.1.0-57-cloud-amd64,
# x86_64: installed" or "vaccel/2.0: added").
registered_versions() {
	dkms status -m "$MODULE" | sed -n "s|^$MODULE/\([^,:]*\)[,:].*|\1|p" | sort -u
}

need_dkms() {
	command -v dkms >/dev/null ||
		die "dkms is not installed: apt-get install dkms (or make deps)"
}

as_root() {
	[ "$(id -u)" -eq 0 ] || exec sudo "$0" "$@"
}

# The source tree DKMS copies and builds: the module's sources, the two
# contract headers in uapi/ (dkms.conf points Kbuild's VACCEL_UAPI there) and
# dkms.conf with its version filled in.
stage() {
	local dir=$1 version
	version=$(abi_version)
	rm -rf "$dir"
	mkdir -p "$dir/uapi"
	cp "$ROOT"/kmod/Kbuild "$ROOT"/kmod/*.c "$ROOT"/kmod/*.h "$dir/"
	cp "$ROOT"/uapi/vaccel.h "$ROOT"/uapi/vaccel_server.h "$dir/uapi/"
	sed "s/@VACCEL_ABI_VERSION@/$version/" "$ROOT/kmod/dkms.conf" >"$dir/dkms.conf"
}

dkms_remove() {
	local version
	for version in $(registered_versions); do
		dkms remove -m "$MODULE" -v "$version" --all
		rm -rf "/usr/src/$MODULE-$version"
	done
}

dkms_install() {
	local version kver
	version=$(abi_version)
	local kernels=("$@")
	[ ${#kernels[@]} -gt 0 ] || mapfile -t kernels < <(kernels_with_headers --booted)
	[ ${#kernels[@]} -gt 0 ] ||
		die "no installed kernel has its headers (/lib/modules/*/build): apt-get install linux-headers-$(uname -r)"
	# One version at a time: each installs the same updates/dkms/vaccel.ko.
	dkms_remove
	stage "/usr/src/$MODULE-$version"
	dkms add -m "$MODULE" -v "$version"
	for kver in "${kernels[@]}"; do
		dkms build -m "$MODULE" -v "$version" -k "$kver" ||
			die "building $MODULE/$version for $kver failed (log above); name the kernels to build for with KVERS=..."
		dkms install -m "$MODULE" -v "$version" -k "$kver"
	done
	dkms status -m "$MODULE"
}

# dkms add + build in a private DKMS tree under /tmp: nothing is added to
# /usr/src, /var/lib/dkms or /lib/modules. The module is signed with a
# throwaway key made there, never with the machine's MOK
# (/var/lib/dkms/mok.key), which is neither read nor created.
dkms_check() {
	local version kver
	version=$(abi_version)
	local kernels=("$@")
	[ ${#kernels[@]} -gt 0 ] || mapfile -t kernels < <(kernels_with_headers)
	[ ${#kernels[@]} -gt 0 ] ||
		die "no kernel headers under /lib/modules/*/build: apt-get install linux-headers-cloud-amd64"
	local tmp
	tmp=$(mktemp -d /tmp/vaccel-dkms-check.XXXXXX)
	local tree=(--dkmstree "$tmp/dkms" --sourcetree "$tmp/src" --installtree "$tmp/modules")
	# shellcheck disable=SC2064 # expanded now, on purpose
	trap "dkms remove ${tree[*]} -m $MODULE -v $version --all >/dev/null 2>&1 || true; rm -rf '$tmp'" EXIT
	mkdir -p "$tmp/dkms" "$tmp/src" "$tmp/modules"
	export mok_signing_key="$tmp/mok.key" mok_certificate="$tmp/mok.pub"

	stage "$tmp/stage"
	dkms add "${tree[@]}" "$tmp/stage"
	local failed=() built=()
	for kver in "${kernels[@]}"; do
		echo "== dkms build $MODULE/$version -k $kver"
		if ! dkms build "${tree[@]}" -m "$MODULE" -v "$version" -k "$kver"; then
			echo "-- make.log of $kver (its errors):"
			grep -E -B2 -A3 'error|Error' "$tmp/dkms/$MODULE/$version/build/make.log" | head -n 40 || true
			failed+=("$kver")
			continue
		fi
		local ko vermagic signer
		ko=$(find "$tmp/dkms/$MODULE/$version/$kver" -path '*/module/vaccel.ko*' | head -n 1)
		[ -n "$ko" ] || { echo "-- $kver: dkms reported success but left no vaccel.ko"; failed+=("$kver"); continue; }
		vermagic=$(modinfo -F vermagic "$ko" | cut -d' ' -f1)
		signer=$(modinfo -F signer "$ko" || true)
		if [ "$vermagic" != "$kver" ]; then
			echo "-- $kver: $ko has vermagic $vermagic"
			failed+=("$kver")
			continue
		fi
		built+=("$kver ($(basename "$ko"), signed by: ${signer:-nobody})")
	done
	echo "== dkms-check $MODULE/$version"
	local line
	for line in "${built[@]}"; do echo "built:  $line"; done
	for line in "${failed[@]}"; do echo "FAILED: $line"; done
	[ ${#failed[@]} -eq 0 ]
}

command=${1:-}
shift || true
case "$command" in
stage)
	[ $# -eq 1 ] || die "usage: $0 stage DIR"
	stage "$1"
	;;
version)
	abi_version
	;;
install | remove | check)
	as_root "$command" "$@"
	need_dkms
	"dkms_$command" "$@"
	;;
*)
	die "usage: $0 stage DIR | version | install [KVER...] | remove | check [KVER...]"
	;;
esac
