// session.hpp - vaccelctl's one libvaccel client.
//
// Owns: the vaccel_client of a command (Ownership: the Session closes it, and
// closing releases every context, buffer, program, queue and event the
// client still owns, after in-flight work ends). Decides: how a failed
// libvaccel call becomes a refusal: what vaccelctl was doing, then
// vaccel_last_error_message() (or vaccel_strerror() when it is empty).
#pragma once

#include <memory>
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

class Session {
public:
    // Opens the automatic transport; with `verbose`, says which one on stderr.
    static Result<Session> open(bool verbose);

    vaccel_client* client() const { return client_.get(); }

    Result<struct vaccel_get_version> version() const;
    Result<std::vector<DeviceRecord>> devices() const;

private:
    struct Close {
        void operator()(vaccel_client* client) const { vaccel_client_close(client); }
    };
    explicit Session(vaccel_client* client) : client_(client) {}

    std::unique_ptr<vaccel_client, Close> client_;
};

}  // namespace vaccel::ctl
