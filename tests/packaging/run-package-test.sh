#!/usr/bin/env bash
# run-package-test.sh - the Debian packages (debian/), from build to purge,
# on this machine (make package-test; docs/install.md, "Debian packages").
#
#   run-package-test.sh
#
# Builds the packages (make deb), runs lintian on them (any error fails),
# installs them with apt-get, checks the installed system, then removes and
# purges them:
#   - the unit passes systemd-analyze verify (which works without systemd
#     as PID 1: a broken copy of the unit must be reported, or the check
#     itself fails);
#   - vacceld --version and vaccelctl --version print CMakeLists.txt's
#     project() version;
#   - the bash and zsh completions and the man pages are installed, each by
#     its program's package; bash loads the completions, zsh -n passes on
#     them (where zsh is installed) and man -w finds the pages (where
#     man-db is);
#   - a vacceld started from the installed files (a copy of the installed
#     config with a private socket and state dir in a temporary folder)
#     serves `vaccelctl devices`, and is stopped at the end whatever happens;
#   - model_client.c, built once with pkg-config and once through
#     find_package(vaccel) (cmake-client/), runs the TOSA ADD fixture
#     through that daemon and in process, its output exact;
#   - python3 -c 'import vaccel' where python3-vaccel was built;
#   - DKMS built and installed vaccel.ko for every kernel with headers;
#   - `dpkg -r` leaves only the conffiles (and the unit's enablement links,
#     which deb-systemd-helper keeps until purge) and no module;
#   - `dpkg --purge` leaves /usr, /etc, /lib, /var/lib/dkms and the groups
#     as they were before the installation, down to each file and folder.
# One PASS or FAIL line per check, then "N passed, M failed"; the exit
# status is 1 when any check failed.
#
# Runs as root, on a machine with none of vaccel's packages, no vaccel in
# DKMS and no vaccel groups (it refuses otherwise: what it finds would not
# be its own to purge). Whatever happens, the daemon is stopped and the
# packages are purged before it exits. DKMS signs the modules with a key
# made in the temporary folder, so the machine's MOK (/var/lib/dkms/mok.key)
# is neither created nor used.
#
# Environment: VACCEL_DEB_DIR (the packages; default build-deb/),
# VACCEL_DEB_CLEAN=1 (build them from an empty tree: make package-test
# DEB_CLEAN=1), VACCEL_PACKAGE_TEST_NO_BUILD=1 (test the packages already
# there).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DEB_DIR=${VACCEL_DEB_DIR:-$ROOT/build-deb}
FIXTURE=$ROOT/tests/fixtures/tosa/v1.0-add_1x4x4x4_f32
PACKAGES=(vaccel-dkms vacceld libvaccel1 libvaccel-dev vaccelctl)
# python3-vaccel where the tree builds the Python part (as tools/make-deb.sh decides).
grep -Eq '^[[:space:]]*add_subdirectory\(python\)' "$ROOT/CMakeLists.txt" && PACKAGES+=(python3-vaccel)
ALL_PACKAGES=(vaccel-dkms vacceld libvaccel1 libvaccel-dev vaccelctl python3-vaccel)
GROUPS_MADE=(vaccel vaccel-admin)
START=$(date +%s)

passed=0
failed=0
pass() {
	echo "PASS: $*"
	passed=$((passed + 1))
}
fail() {
	echo "FAIL: $*"
	failed=$((failed + 1))
}
die() {
	echo "run-package-test: $*" >&2
	exit 1
}

# check NAME COMMAND...: PASS when COMMAND succeeds; else FAIL with the
# end of its output.
check() {
	local name=$1
	shift
	if "$@" >"$TMP/check.log" 2>&1; then
		pass "$name"
	else
		fail "$name"
		tail -n 40 "$TMP/check.log" | sed 's/^/    /'
	fi
}

installed_packages() {
	local p
	for p in "${ALL_PACKAGES[@]}"; do
		dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' "$p" 2>/dev/null |
			awk '$1 !~ /^un/ && $1 !~ /^pn/ { print $2 }'
	done
}

# Every file, folder and link under /usr, /etc, /lib (when not a link to
# /usr/lib, as on merged-/usr Debian) and /var/lib/dkms, as "TYPE PATH".
snapshot() {
	local roots=(/usr /etc /var/lib/dkms)
	[ -L /lib ] || roots+=(/lib)
	find "${roots[@]}" -xdev -printf '%y %p\n' 2>/dev/null | LC_ALL=C sort
}

group_names() {
	cut -d: -f1 /etc/group | LC_ALL=C sort
}

version=$(sed -n 's/^project(vaccel VERSION \([0-9][0-9.]*\).*/\1/p' "$ROOT/CMakeLists.txt")
abi=$("$ROOT/tools/kmod-dkms.sh" version)
if [ -z "$version" ] || [ -z "$abi" ]; then
	die "cannot read the project version (CMakeLists.txt) or the contract ABI (uapi/vaccel.h)"
fi

# Preconditions: what this test installs and purges must not be there yet.
[ "$(id -u)" -eq 0 ] || die "run as root: it installs and purges packages (sudo make package-test)"
present=$(installed_packages | tr '\n' ' ')
[ -z "$present" ] ||
	die "refused: $present already installed; the test purges what it installs and would purge these too: dpkg --purge $present, then run it again"
[ -z "$(dkms status -m vaccel 2>/dev/null)" ] ||
	die "refused: DKMS already has vaccel ($(dkms status -m vaccel | head -n 1)), e.g. from make dkms-install: make dkms-remove, then run it again"
for group in "${GROUPS_MADE[@]}"; do
	! getent group "$group" >/dev/null ||
		die "refused: the group $group exists already (make install?); purging the packages would remove it: groupdel $group, then run it again"
done
[ ! -e /etc/vaccel ] ||
	die "refused: /etc/vaccel exists (make install?); the package installs its config there: move it away, then run it again"

TMP=$(mktemp -d /tmp/vaccel-package-test.XXXXXX)
DAEMON_PID=
cleanup() {
	if [ -n "$DAEMON_PID" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
		kill -TERM "$DAEMON_PID" 2>/dev/null
		for _ in $(seq 1 100); do kill -0 "$DAEMON_PID" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$DAEMON_PID" 2>/dev/null
	fi
	local left
	left=$(installed_packages | tr '\n' ' ')
	if [ -n "$left" ]; then
		echo "run-package-test: purging $left (the test stopped before it did)"
		# shellcheck disable=SC2086 # one word per package
		dpkg --purge $left >/dev/null 2>&1 || echo "run-package-test: dpkg --purge $left failed: purge them by hand" >&2
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
export DEBIAN_FRONTEND=noninteractive
# DKMS signs with a throwaway key (see above).
export mok_signing_key=$TMP/mok.key mok_certificate=$TMP/mok.pub

echo "== vaccel $version (contract ABI $abi): ${PACKAGES[*]}"

# 1. Build.
if [ "${VACCEL_PACKAGE_TEST_NO_BUILD:-0}" != 1 ]; then
	build_start=$(date +%s)
	if make -C "$ROOT" deb DEB_BUILD="$DEB_DIR" DEB_CLEAN="${VACCEL_DEB_CLEAN:-}" >"$TMP/make-deb.log" 2>&1; then
		pass "make deb ($(($(date +%s) - build_start)) s)"
	else
		fail "make deb (log: the end below)"
		tail -n 60 "$TMP/make-deb.log" | sed 's/^/    /'
		echo "$passed passed, $failed failed"
		exit 1
	fi
fi
debs=()
for p in "${PACKAGES[@]}"; do
	deb=$(find "$DEB_DIR" -maxdepth 1 -name "${p}_${version}_*.deb" | head -n 1)
	if [ -n "$deb" ]; then
		debs+=("$deb")
	else
		fail "package $p ${version}: no ${p}_${version}_*.deb in $DEB_DIR"
	fi
done
[ ${#debs[@]} -eq ${#PACKAGES[@]} ] && pass "packages built, version $version: ${PACKAGES[*]}"
if [ ${#debs[@]} -eq 0 ]; then
	echo "$passed passed, $failed failed"
	exit 1
fi

# 2. lintian: no error; warnings and notes are listed.
changes=$(find "$DEB_DIR" -maxdepth 1 -name "vaccel_${version}_*.changes" | head -n 1)
if [ -z "$changes" ]; then
	fail "lintian: no vaccel_${version}_*.changes in $DEB_DIR"
else
	lintian --info --display-info "$changes" >"$TMP/lintian.log" 2>&1
	if grep -q '^E: ' "$TMP/lintian.log"; then
		fail "lintian $(basename "$changes"): errors"
	else
		pass "lintian $(basename "$changes"): no error ($(grep -c '^W: ' "$TMP/lintian.log") warnings, $(grep -c '^I: ' "$TMP/lintian.log") notes)"
	fi
	grep -E '^(E|W|I): ' "$TMP/lintian.log" | sort -u | sed 's/^/    /'
fi

# 3. Install.
snapshot >"$TMP/before.files"
group_names >"$TMP/before.groups"
dpkg-query -W -f='${Package}\n' | LC_ALL=C sort >"$TMP/before.packages"
check "apt-get install ${debs[*]##*/}" \
	apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=300 "${debs[@]}"
dpkg-query -W -f='${Package}\n' | LC_ALL=C sort >"$TMP/after.packages"
# What apt pulled in besides ours goes with them at the end.
mapfile -t pulled < <(LC_ALL=C comm -13 "$TMP/before.packages" "$TMP/after.packages" |
	grep -vxF -f <(printf '%s\n' "${ALL_PACKAGES[@]}"))
[ ${#pulled[@]} -eq 0 ] || echo "    apt-get also installed: ${pulled[*]} (purged at the end)"
for p in "${PACKAGES[@]}"; do
	check "$p installed" bash -c "dpkg-query -W -f='\${db:Status-Abbrev}' $p | grep -q '^ii'"
done

# 4. The installed system.
unit=/lib/systemd/system/vacceld.service
check "systemd-analyze verify $unit: nothing to report" \
	bash -c "out=\$(systemd-analyze verify $unit 2>&1); rc=\$?; echo \"\$out\"; [ \$rc -eq 0 ] && [ -z \"\$out\" ]"
sed 's/^Type=notify$/Type=notify\nNoSuchSetting=1/' "$unit" >"$TMP/vacceld.service"
check "systemd-analyze verify reports a broken copy of the unit (it works here, systemd $( (ps -p 1 -o comm= | grep -qx systemd) && echo is || echo is not) PID 1)" \
	bash -c "systemd-analyze verify $TMP/vacceld.service 2>&1 | grep -q NoSuchSetting"
check "unit: ExecStart /usr/sbin/vacceld, Documentation in /usr/share/doc/vacceld" \
	bash -c "grep -q '^ExecStart=/usr/sbin/vacceld ' $unit && grep '^Documentation=' $unit | grep -q /usr/share/doc/vacceld/install.md && [ -f /usr/share/doc/vacceld/install.md ]"
check "unit: ExecStartPre checks /etc/vaccel/vacceld.toml, and the installed one is good" \
	bash -c "grep -qx 'ExecStartPre=/usr/sbin/vacceld --check-config /etc/vaccel/vacceld.toml' $unit && /usr/sbin/vacceld --check-config /etc/vaccel/vacceld.toml | grep -q ': good: '"
check "vacceld --version: vacceld $version" bash -c "/usr/sbin/vacceld --version | tee /dev/stderr | grep -q '^vacceld $version '"
check "vaccelctl --version: vaccelctl $version" bash -c "/usr/bin/vaccelctl --version | tee /dev/stderr | grep -q '^vaccelctl $version '"
# The shell completions and man pages, each in its package; bash loads the
# completion, zsh parses it (where installed), man finds the pages.
for entry in vaccelctl:/usr/share/bash-completion/completions/vaccelctl \
	vaccelctl:/usr/share/zsh/vendor-completions/_vaccelctl \
	vaccelctl:/usr/share/man/man1/vaccelctl.1.gz \
	vacceld:/usr/share/bash-completion/completions/vacceld \
	vacceld:/usr/share/zsh/vendor-completions/_vacceld \
	vacceld:/usr/share/man/man8/vacceld.8.gz; do
	check "${entry#*:} installed by ${entry%%:*}" \
		bash -c "[ -f ${entry#*:} ] && dpkg-query -S ${entry#*:} | grep -qx '${entry%%:*}: ${entry#*:}'"
done
for program in vaccelctl vacceld; do
	check "bash: the installed completion of $program registers _$program" \
		bash -c "source /usr/share/bash-completion/completions/$program && complete -p $program | grep -q -- '-F _$program '"
	if command -v zsh >/dev/null; then
		check "zsh -n /usr/share/zsh/vendor-completions/_$program" zsh -n "/usr/share/zsh/vendor-completions/_$program"
	fi
done
if command -v man >/dev/null; then
	check "man -w vaccelctl: /usr/share/man/man1/vaccelctl.1.gz" \
		bash -c "man -w vaccelctl | tee /dev/stderr | grep -qx /usr/share/man/man1/vaccelctl.1.gz"
	check "man -w 8 vacceld: /usr/share/man/man8/vacceld.8.gz" \
		bash -c "man -w 8 vacceld | tee /dev/stderr | grep -qx /usr/share/man/man8/vacceld.8.gz"
fi
check "groups ${GROUPS_MADE[*]} created" bash -c "getent group ${GROUPS_MADE[*]} | wc -l | grep -qx ${#GROUPS_MADE[@]}"
check "/etc/vaccel/vacceld.toml is a conffile of vacceld" \
	bash -c "dpkg-query -W -f='\${Conffiles}\n' vacceld | grep -q '^ /etc/vaccel/vacceld.toml '"
check "libvaccel1: soname libvaccel.so.1" \
	bash -c "objdump -p /usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/libvaccel.so.1 | grep -q 'SONAME *libvaccel.so.1$'"
check "vaccel.pc: version $version" bash -c "[ \"\$(pkg-config --modversion vaccel)\" = $version ]"

# DKMS: built and installed for every kernel with its headers.
mapfile -t kernels < <(for build in /lib/modules/*/build; do
	[ -f "$build/Makefile" ] && basename "$(dirname "$build")"; done | sort -V)
dkms status -m vaccel >"$TMP/dkms.status" 2>&1
sed 's/^/    /' "$TMP/dkms.status"
if [ ${#kernels[@]} -eq 0 ]; then
	fail "dkms: no kernel here has its headers (/lib/modules/*/build): apt-get install linux-headers-cloud-amd64"
fi
for kver in "${kernels[@]}"; do
	check "dkms: vaccel/$abi installed for $kver" \
		bash -c "grep -q '^vaccel/$abi, $kver, [^:]*: installed' $TMP/dkms.status &&
			ko=\$(ls /lib/modules/$kver/updates/dkms/vaccel.ko* | head -n 1) &&
			modinfo -F vermagic \"\$ko\" | grep -q '^$kver '"
done

# 5. A daemon from the installed files, on a private socket.
sock=$TMP/vacceld.sock
sed -e "s|^socket = .*|socket = \"$sock\"|" -e "s|^state_dir = .*|state_dir = \"$TMP/state\"|" \
	/etc/vaccel/vacceld.toml >"$TMP/vacceld.toml"
/usr/sbin/vacceld --config "$TMP/vacceld.toml" --no-kernel --log-level info >"$TMP/vacceld.log" 2>&1 &
DAEMON_PID=$!
for _ in $(seq 1 300); do
	[ -S "$sock" ] && break
	kill -0 "$DAEMON_PID" 2>/dev/null || break
	sleep 0.1
done
check "vacceld serves $sock (config: a copy of /etc/vaccel/vacceld.toml)" \
	bash -c "[ -S $sock ] && kill -0 $DAEMON_PID || { cat $TMP/vacceld.log; false; }"
export VACCEL_SOCKET=$sock
check "vaccelctl -v devices through the daemon: transport socket, a CPU device" \
	bash -c "VACCEL_TRANSPORT=socket vaccelctl -v devices >$TMP/devices.txt 2>&1; rc=\$?; head -n 12 $TMP/devices.txt;
		[ \$rc -eq 0 ] && grep -qF 'transport socket ($sock)' $TMP/devices.txt && grep -qi 'cpu' $TMP/devices.txt"

# 6. An application built against the installed packages, two ways.
check "model_client built with pkg-config" \
	bash -c "cc -Wall -Wextra -Werror -o $TMP/model_client_pc $ROOT/tests/packaging/model_client.c \$(pkg-config --cflags --libs vaccel)"
check "model_client built with find_package(vaccel $version)" \
	bash -c "cmake -S $ROOT/tests/packaging/cmake-client -B $TMP/cmake-client -G Ninja -DVACCEL_VERSION=$version &&
		cmake --build $TMP/cmake-client"
for client in "$TMP/model_client_pc" "$TMP/cmake-client/model_client"; do
	[ -x "$client" ] || continue
	check "$(basename "$(dirname "$client")")/$(basename "$client") uses the installed libvaccel.so.1" \
		bash -c "ldd $client | tee /dev/stderr | grep -Eq 'libvaccel.so.1 => (/usr)?/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/libvaccel.so.1 '"
	for transport in socket embedded; do
		check "$(basename "$client"): the ADD fixture exact over $transport" \
			bash -c "VACCEL_TRANSPORT=$transport $client $FIXTURE | tee /dev/stderr | tail -n 1 | grep -qx 'model_client: PASS'"
	done
done

# 7. Python: Debian's python3 (/usr/bin), whose dist-packages the package
# fills; another python3 first on PATH would not look there.
if [[ " ${PACKAGES[*]} " == *" python3-vaccel "* ]]; then
	check "/usr/bin/python3 -c 'import vaccel' (the installed module)" \
		bash -c "cd $TMP && /usr/bin/python3 -I -c 'import vaccel; print(vaccel.__file__)' | tee /dev/stderr | grep -q '^/usr/lib/python3/dist-packages/vaccel/'"
fi

# The daemon stops cleanly on SIGTERM.
kill -TERM "$DAEMON_PID" 2>/dev/null
daemon_status=1
for _ in $(seq 1 300); do kill -0 "$DAEMON_PID" 2>/dev/null || break; sleep 0.1; done
if ! kill -0 "$DAEMON_PID" 2>/dev/null; then wait "$DAEMON_PID"; daemon_status=$?; fi
check "vacceld stops on SIGTERM with status 0" bash -c "[ $daemon_status -eq 0 ] || { tail -n 20 $TMP/vacceld.log; false; }"
DAEMON_PID=
unset VACCEL_SOCKET

# 8. Remove: only the conffiles stay (and deb-systemd-helper's enablement
# links of vacceld.service, kept until purge by Debian's design).
dpkg-query -W -f='${Conffiles}\n' "${PACKAGES[@]}" | awk 'NF { print $1 }' >"$TMP/conffiles"
check "dpkg -r ${PACKAGES[*]}" dpkg -r "${PACKAGES[@]}"
snapshot >"$TMP/removed.files"
{
	while read -r path; do
		echo "f $path"
		dir=$(dirname "$path")
		grep -qxF "d $dir" "$TMP/before.files" || echo "d $dir"
	done <"$TMP/conffiles"
	grep -E '^l /etc/systemd/system/[^/]+\.(wants|requires)/vacceld\.service$' "$TMP/removed.files"
} | LC_ALL=C sort -u >"$TMP/allowed.files"
LC_ALL=C comm -13 "$TMP/before.files" "$TMP/removed.files" >"$TMP/removed.added"
LC_ALL=C comm -23 "$TMP/before.files" "$TMP/removed.files" >"$TMP/removed.gone"
check "dpkg -r leaves only the conffiles: $(tr '\n' ' ' <"$TMP/conffiles")" \
	bash -c "LC_ALL=C comm -23 $TMP/removed.added $TMP/allowed.files | sed 's/^/left: /'; sed 's/^/gone: /' $TMP/removed.gone;
		[ -z \"\$(LC_ALL=C comm -23 $TMP/removed.added $TMP/allowed.files)\" ] && [ ! -s $TMP/removed.gone ]"
check "dpkg -r: DKMS has no vaccel, no vaccel.ko is left" \
	bash -c "[ -z \"\$(dkms status -m vaccel)\" ] && ! ls /lib/modules/*/updates/dkms/vaccel.ko* 2>/dev/null"

# 9. Purge: everything as it was.
check "dpkg --purge ${PACKAGES[*]}${pulled[*]:+ (and ${pulled[*]})}" dpkg --purge "${PACKAGES[@]}" "${pulled[@]}"
snapshot >"$TMP/purged.files"
group_names >"$TMP/purged.groups"
check "dpkg --purge leaves /usr /etc /lib /var/lib/dkms as before the installation" \
	bash -c "diff $TMP/before.files $TMP/purged.files | grep '^[<>]' | sed -e 's/^</gone:/' -e 's/^>/left:/' | head -n 40;
		cmp -s $TMP/before.files $TMP/purged.files"
check "dpkg --purge leaves the groups as before (${GROUPS_MADE[*]} removed)" \
	diff "$TMP/before.groups" "$TMP/purged.groups"

echo "== $(($(date +%s) - START)) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
