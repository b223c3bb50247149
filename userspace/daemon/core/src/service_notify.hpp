// service_notify.hpp - telling the service manager where vacceld stands
// (systemd's notify protocol, sd_notify(3); dist/vacceld.service is
// Type=notify).
//
// Decides: the messages are READY=1 once the daemon serves, RELOADING=1 /
// READY=1 around a reload, STOPPING=1 when the drain begins, each with a
// STATUS= line an operator reads in `systemctl status`. Without
// NOTIFY_SOCKET in the environment nothing is sent. Failures are ignored:
// the service manager is told what it can be told, the daemon serves
// either way.
#pragma once

#include <string_view>

namespace vaccel::daemon {

// Sends `state` (newline-separated VAR=value assignments) to the service
// manager, when one listens. Any thread.
void notify_service(std::string_view state);

}  // namespace vaccel::daemon
