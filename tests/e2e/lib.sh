# lib.sh - shared by the end-to-end scripts (sourced, not run).
#
# Owns: finding a python3 with NumPy, a scratch directory removed on exit,
# and the checks every script uses. Decides: a failed check prints what was
# expected and what happened, then exits 1.

set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

find_python() {
	local candidate
	for candidate in python3 /usr/bin/python3; do
		if command -v "$candidate" >/dev/null && "$candidate" -c 'import numpy' 2>/dev/null; then
			echo "$candidate"
			return 0
		fi
	done
	echo "no python3 with NumPy found: install python3-numpy (make deps)" >&2
	return 1
}
PY=$(find_python)

scratch=$(mktemp -d "${TMPDIR:-/tmp}/vaccel-e2e.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# compare ACTUAL EXPECTED (--exact | --rtol R [--atol A])
compare() {
	"$PY" "$here/compare_npy.py" "$@" || fail "$1 does not match $2"
}

# expect_refusal "MESSAGE PART" COMMAND...: the command must exit non-zero
# and its stderr must contain the part.
expect_refusal() {
	local part=$1
	shift
	local status=0
	"$@" >"$scratch/stdout" 2>"$scratch/stderr" || status=$?
	cat "$scratch/stderr"
	[ "$status" -ne 0 ] || fail "'$*' exited 0; expected a refusal containing: $part"
	grep -qF -- "$part" "$scratch/stderr" ||
		fail "'$*' exited $status but its message lacks: $part"
	echo "refused as expected (exit $status)"
}
