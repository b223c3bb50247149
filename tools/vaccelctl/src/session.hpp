// session.hpp - vaccelctl's one libvaccel client.
//
// Owns: the vaccel_client of a command (Ownership: the Session closes it, and
// closing releases every context, buffer, program, queue and event the
// client still owns, after in-flight work ends). Decides: how a failed
// libvaccel call becomes a refusal: what vaccelctl was doing, then
// vaccel_last_error_message() (or vaccel_strerror() when it is empty).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "refusal.hpp"
#include "report.hpp"
#include "vaccel.h"  // uapi first: see the note in session.cpp
#include "vaccel/vaccel.h"

namespace vaccel::ctl {

// The refusal for libvaccel call that returned `rc` (< 0); `doing` says what
// failed, e.g. "cannot load model m.tosa on device [0] CPU".
Refusal call_refusal(int rc, std::string_view doing);

// Where the daemon listens: $VACCEL_SOCKET (which --socket sets), else
// VACCEL_SOCKET_DEFAULT.
std::string daemon_socket_path();
// The kernel module's client node: $VACCEL_DEVICE, else VACCEL_DEVICE_DEFAULT.
std::string kernel_device_path();

class Session {
public:
    // Opens the automatic transport (the daemon when it is reachable, else
    // embedded) or the one $VACCEL_TRANSPORT forces; with `verbose`, says
    // which one on stderr. With `announce_fallback`, an automatic fall back
    // to embedded is said on stderr in one line ("vaccelctl: no daemon at
    // PATH; running in process (embedded)").
    static Result<Session> open(bool verbose, bool announce_fallback = false);
    // Opens the socket transport for the admin channel; `what` names the
    // command for the refusal when no daemon is reachable.
    static Result<Session> open_daemon(bool verbose, std::string_view what);

    vaccel_client* client() const { return client_.get(); }

    Result<struct vaccel_get_version> version() const;
    // Each device with its TOSA descriptors (none from a daemon before ABI
    // 1.2, which lacks VACCEL_CAP_TOSA_DESCRIPTORS).
    Result<std::vector<DeviceRecord>> devices() const;
    Result<std::vector<vaccel_tosa_descriptor>> tosa_descriptors(std::uint32_t device) const;
    // One admin command (enum vaccel_admin_command) with its request
    // document; the daemon's answer as text. `what` names it in refusals.
    Result<std::string> admin(std::uint32_t command, const std::string& request,
                              std::string_view what) const;

private:
    struct Close {
        void operator()(vaccel_client* client) const { vaccel_client_close(client); }
    };
    explicit Session(vaccel_client* client) : client_(client) {}

    std::unique_ptr<vaccel_client, Close> client_;
};

}  // namespace vaccel::ctl
