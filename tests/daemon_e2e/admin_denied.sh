#!/usr/bin/env bash
# admin_denied.sh VACCELD VACCELCTL CLIENT FIXTURE
#
# A client that is neither root nor in the admin group (uid/gid 65534, no
# groups) is served as a client but refused every admin command with
# PermissionDenied / NOT_ADMIN naming its uid and gid; `vaccelctl sessions`
# run as that user exits non-zero and says why. Root is served (control).
source "$(dirname "$0")/lib.sh"

start_daemon
"$client" admin-denied
"$ctl" sessions >/dev/null || fail "vaccelctl sessions as root exited non-zero"
status=0
setpriv --reuid=65534 --regid=65534 --clear-groups "$ctl" sessions \
	>"$scratch/nobody.out" 2>"$scratch/nobody.err" || status=$?
cat "$scratch/nobody.err"
[ "$status" -ne 0 ] || fail "vaccelctl sessions as uid 65534 exited 0"
grep -q "PermissionDenied" "$scratch/nobody.err" ||
	fail "vaccelctl's refusal does not say PermissionDenied"
grep -qi "admin" "$scratch/nobody.err" || fail "vaccelctl's refusal does not mention the admin right"
echo "uid 65534: refused (vaccelctl exit $status)"
stop_daemon
