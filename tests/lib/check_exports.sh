#!/usr/bin/env bash
# check_exports.sh LIBRARY [NM [PREFIX]] - LIBRARY (libvaccel.so, or
# libvaccel-onnx.so with PREFIX vaccel_onnx_) exports PREFIX* and nothing else.
#
# Owns: the exported-symbol rule of the shared libraries (hidden visibility plus
# a version script, userspace/lib/libvaccel.map); tests/lib/CMakeLists.txt runs
# it as lib.exports_only_vaccel_symbols. Decides:
#  - the symbols are the dynamic symbols LIBRARY defines, as NM (default:
#    nm) lists them with -D --defined-only; nm failing (no such file, not an
#    ELF object, no nm) fails the check: a table that could not be read
#    proves nothing;
#  - allowed: names starting with PREFIX (default vaccel_; a @VERSION or
#    @@VERSION suffix, which nm adds to versioned symbols, is not part of
#    the name) and version nodes VACCEL_<n> or VACCEL_<WORD>_<n> (the map's
#    node, which the linker defines);
#  - at least one PREFIX symbol must be there: an empty table (a library
#    built without the C API, or stripped of its dynamic symbols) fails
#    rather than passing as "nothing but vaccel_";
#  - every other defined name is printed, one a line, and fails the check.
# Both libraries' maps and CMake rules are in userspace/lib and onnx/.
# Exit status: 0 when the rule holds, 1 otherwise (the reason on stderr).
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 3 ]; then
	echo "usage: check_exports.sh LIBRARY [NM [PREFIX]]" >&2
	exit 1
fi
library=$1
nm=${2:-nm}
prefix=${3:-vaccel_}

# Captured first, so that nm's exit status is checked and not lost in a pipe.
if ! table=$("$nm" -D --defined-only "$library"); then
	echo "FAIL: '$nm -D --defined-only $library' failed; the exports could not be read" >&2
	exit 1
fi

# The name is the last field ("ADDRESS TYPE NAME"), without its version.
names=$(printf '%s\n' "$table" | awk 'NF >= 2 { name = $NF; sub(/@.*/, "", name); print name }')

exported=$(printf '%s\n' "$names" | awk -v p="$prefix" 'index($0, p) == 1 { n++ } END { print n + 0 }')
if [ "$exported" -eq 0 ]; then
	echo "FAIL: $library defines no $prefix symbol; nm printed:" >&2
	printf '%s\n' "$table" >&2
	exit 1
fi

offenders=$(printf '%s\n' "$names" |
	awk -v p="$prefix" 'NF && index($0, p) != 1 && !/^VACCEL_([A-Z]+_)?[0-9]+$/')
if [ -n "$offenders" ]; then
	echo "FAIL: $library exports $(printf '%s\n' "$offenders" | wc -l) symbol(s) outside $prefix*:" >&2
	printf '%s\n' "$offenders" | sed 's/^/  /' >&2
	exit 1
fi
echo "$library: $exported $prefix symbols exported, nothing else"
