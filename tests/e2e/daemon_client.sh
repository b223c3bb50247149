#!/usr/bin/env bash
# daemon_client.sh VACCELD CLIENT GROUP
#
# Runs one group of tests/lib/test_socket_client.cpp (libvaccel's socket
# transport through the C API) against a real vacceld on a private socket.
# For the daemon-loss group the client is given the daemon's pid to kill.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon.sh"
vacceld=$1 client=$2 group=$3

start_daemon "$vacceld"
VACCEL_TEST_DAEMON_PID=$daemon_pid "$client" "$group"
