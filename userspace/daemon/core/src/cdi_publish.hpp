// cdi_publish.hpp - vacceld writes the CDI spec of what it serves
// (--cdi-spec FILE), at start and on every SIGHUP, so the spec never
// describes devices the daemon no longer serves (ADR 0023).
//
// Owns nothing. Decides: the spec names the daemon's devices by index and
// name, gives containers /dev/vaccel when the module's node is attached
// (the client node exists) and the daemon's socket otherwise, and runs
// the hook program named by --cdi-hook, by default the vaccelctl installed
// beside vacceld (PREFIX/sbin/vacceld -> PREFIX/bin/vaccelctl).
#pragma once

#include <string>

#include "vaccel/engine/device_manager.hpp"

namespace vaccel::daemon {

struct CdiPublication {
    std::string spec_path;     // where to write it
    std::string hook_program;  // empty: beside vacceld
    std::string socket_path;   // what the daemon listens on (absolute)
    bool kernel_attached = false;
};

// Writes the spec; the error is a sentence for the operator, or empty.
std::string publish_cdi_spec(const CdiPublication& what, engine::DeviceManager& devices);

}  // namespace vaccel::daemon
