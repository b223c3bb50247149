#!/usr/bin/env bash
# run_pytest.sh TRANSPORT PYTHON VACCELD EXAMPLE - the vaccel package's tests over one transport.
#
# Runs every test in tests/python with pytest, then the newcomer's example
# (EXAMPLE: examples/python/run_model.py), both through TRANSPORT:
#  - embedded: in process, no daemon;
#  - socket: a private vacceld (tests/support/vacceld.sh: its own socket,
#    config and log in a scratch directory, killed on every exit path)
#    serving the CPU, whose rule for this user caps each context at 3 queues
#    ([rule.context]), so that the runs of many threads meet the queue limit.
# VACCEL_TEST_QUEUE_LIMIT tells the tests the queue limit they run under.
# VACCEL_TRANSPORT forces the transport on libvaccel's automatic choice,
# VACCEL_TEST_TRANSPORT tells the tests which one to expect. pytest's exit
# status is this script's; 5 (no test collected) is a failure too, as is
# any skipped test (conftest.py reports it failed).
set -euo pipefail

transport=${1:?usage: run_pytest.sh TRANSPORT PYTHON VACCELD EXAMPLE}
python=$2 vacceld=$3 example=$4
here=$(cd "$(dirname "$0")" && pwd)

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

scratch=$(mktemp -d "${TMPDIR:-/tmp}/vaccel-python.XXXXXX")
case $transport in
socket)
	source "$here/../support/vacceld.sh"
	printf '[daemon]\ndevices = ["cpu"]\n\n[[rule]]\nuid = %d\n[rule.context]\nqueues = 3\n' "$(id -u)" \
		>"$daemon_config"
	start_daemon "$vacceld"
	export VACCEL_TEST_QUEUE_LIMIT=3
	;;
embedded)
	trap 'rm -rf "$scratch"' EXIT
	unset VACCEL_SOCKET
	export VACCEL_TEST_QUEUE_LIMIT=64 # the CPU device's own
	;;
*) fail "unknown transport '$transport' (embedded or socket)" ;;
esac
export VACCEL_TRANSPORT=$transport VACCEL_TEST_TRANSPORT=$transport
export PYTHONDONTWRITEBYTECODE=1

status=0
"$python" -m pytest -p no:cacheprovider -q -rA "$here" || status=$?
[ "$status" -ne 5 ] || fail "pytest collected no test in $here"
[ "$status" -eq 0 ] || fail "pytest exited $status over the $transport transport"

"$python" "$example" "$VACCEL_EXAMPLES_DIR" || fail "$example failed over the $transport transport"
