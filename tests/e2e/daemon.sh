# daemon.sh - a private vacceld for one end-to-end script (sourced after
# lib.sh, not run).
#
# The daemon, its socket ($scratch/run/vacceld.sock, exported as
# VACCEL_SOCKET), config ($daemon_config) and log, track, start_daemon
# VACCELD and the cleanup on every exit path are tests/support/vacceld.sh's.
# Decides: the clients choose their transport themselves (VACCEL_TRANSPORT
# is unset).

source "$here/../support/vacceld.sh"
unset VACCEL_TRANSPORT
