#!/usr/bin/env bash
# make-deb.sh - vaccel's Debian packages (debian/), behind `make deb`.
#
#   make-deb.sh      build every package into OUT (default build-deb/):
#                    OUT/*.deb, the .changes and .buildinfo
#
# The source tree as git sees it (tracked files and untracked ones that are
# not ignored) is copied to OUT/vaccel-VERSION, debian/changelog is written
# there, and dpkg-buildpackage builds the binary packages from it with
# Debian's build flags. The CMake tree OUT/obj stays between runs, so a
# second run compiles only what changed; VACCEL_DEB_CLEAN=1 (make deb
# DEB_CLEAN=1) removes OUT first. No -dbgsym packages, and no debug info
# compiled, unless VACCEL_DEB_DBGSYM=1 (make deb DEB_DBGSYM=1): they would be
# *.deb files beside the others (a plain `apt install ./build-deb/*.deb`
# would install them too), and debug info costs build time.
#
# The version: the one of CMakeLists.txt's project(). debian/changelog is
# generated from it at each build rather than kept in the tree, so that
# there is one place to change a version and a package can never carry a
# stale one. The entry is dated by the last commit (reproducible builds),
# signed by debian/control's Maintainer, for the distribution this machine
# runs. Where CMakeLists.txt does not add python/ (the Python part, which
# installs the module with COMPONENT python), the build profile nopython
# leaves python3-vaccel out.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${VACCEL_DEB_DIR:-$ROOT/build-deb}

die() {
	echo "make-deb: $*" >&2
	exit 1
}

version=$(sed -n 's/^project(vaccel VERSION \([0-9][0-9.]*\).*/\1/p' "$ROOT/CMakeLists.txt")
[ -n "$version" ] || die "no 'project(vaccel VERSION X.Y.Z' line in $ROOT/CMakeLists.txt"
for tool in dpkg-buildpackage dh dh_dkms fakeroot git; do
	command -v "$tool" >/dev/null ||
		die "$tool is missing: install debhelper, dh-dkms, dpkg-dev, fakeroot and git (make deps)"
done

if [ "${VACCEL_DEB_CLEAN:-0}" = 1 ]; then
	rm -rf "$OUT"
fi
src=$OUT/vaccel-$version
mkdir -p "$OUT"
# Earlier results go first: `apt install ./build-deb/*.deb` installs this build's.
rm -rf "$OUT"/vaccel-[0-9]*
rm -f "$OUT"/*.deb "$OUT"/*.changes "$OUT"/*.buildinfo

# The copy keeps the files' times, so the kept CMake tree sees what changed.
mkdir -p "$src"
(cd "$ROOT" && git ls-files -z --cached --others --exclude-standard) |
	rsync -a --from0 --files-from=- --ignore-missing-args "$ROOT/" "$src/"
[ -f "$src/debian/control" ] || die "$src has no debian/control: is $ROOT a git checkout of vaccel?"

maintainer=$(sed -n 's/^Maintainer: *//p' "$ROOT/debian/control")
[ -n "$maintainer" ] || die "no Maintainer field in $ROOT/debian/control"
codename=$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release)
codename=${codename:-unstable}
epoch=$(git -C "$ROOT" log -1 --format=%ct 2>/dev/null || date +%s)
cat >"$src/debian/changelog" <<EOF
vaccel ($version) $codename; urgency=medium

  * vaccel $version (the version of CMakeLists.txt's project()).

 -- $maintainer  $(date -u -R -d "@$epoch")
EOF

profiles=()
if ! grep -Eq '^[[:space:]]*add_subdirectory\(python\)' "$src/CMakeLists.txt"; then
	echo "make-deb: CMakeLists.txt has no add_subdirectory(python): python3-vaccel is not built (build profile nopython)"
	profiles=(-Pnopython)
fi

# -nc: the source copy is fresh; the pre-clean would only remove the kept
# CMake tree. -us -uc: nothing is signed.
echo "make-deb: vaccel $version in $src (CMake tree $OUT/obj)"
cd "$src"
# Without -dbgsym packages, nothing keeps the debug info: -g goes too.
build_options=${DEB_BUILD_OPTIONS:-}
if [ "${VACCEL_DEB_DBGSYM:-0}" != 1 ]; then
	build_options="$build_options noautodbgsym"
	export DEB_CFLAGS_MAINT_STRIP=-g DEB_CXXFLAGS_MAINT_STRIP=-g
fi
SOURCE_DATE_EPOCH=$epoch VACCEL_DEB_BUILDDIR=$OUT/obj DEB_BUILD_OPTIONS=${build_options# } \
	dpkg-buildpackage -b -nc -us -uc "${profiles[@]}"
echo "make-deb: built in $OUT:"
(cd "$OUT" && ls -1 ./*.deb ./*.changes)
