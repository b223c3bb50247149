#!/usr/bin/env bash
# foreign_handle.sh VACCELD VACCELCTL CLIENT FIXTURE
#
# A buffer handle passed from one client process to another through a pipe
# is unknown in the second session (InvalidArgument, UNKNOWN_HANDLE naming
# the handle) for write, read and free, and the owner's buffer is intact.
source "$(dirname "$0")/lib.sh"

start_daemon
"$client" foreign-handle
stop_daemon
