// call_failure.hpp - a refused or failed libvaccel call, on its way to Python.
//
// Owns: CallFailure, the one C++ exception the extension throws, and its
// translation into vaccel.Error (python/vaccel/errors.py). Decides:
//  - a failed libvaccel call is captured on the thread that made it, right
//    after the call (libvaccel's last status is per thread): the negative
//    errno, the contract status, and vaccel_last_error_message();
//  - a failed run is its failure status, whose sentence is
//    vaccel_status_message();
//  - a refusal the extension makes itself (a closed client, a released
//    object) carries a contract status too, and libvaccel's sentence for
//    that status: every error a user sees has the same fields;
//  - `context` says what the extension was doing ("cannot load the program
//    on device 0"); str() of the Python error is "<context>: <sentence>".
// CallFailure holds no Python object, so it may be thrown with the GIL
// released; it becomes a Python exception only once the GIL is held again.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

// The contract (uapi) before the library header: see tools/vaccelctl/src/session.cpp.
#include <vaccel.h>
#include <vaccel/vaccel.h>

namespace vaccel::python {

class CallFailure : public std::runtime_error {
public:
    CallFailure(int rc, const vaccel_status& status, std::string context, std::string sentence);

    // This thread's last libvaccel call returned `rc` (< 0).
    static CallFailure last_call(int rc, std::string context);
    // Accepted work that failed or was cancelled (vaccel_run's `failure`).
    static CallFailure work_failed(int rc, const vaccel_status& failure, std::string context);
    // A refusal of the extension itself, with the status libvaccel would
    // report for it (`error`: enum vaccel_error, `detail`: enum vaccel_detail).
    static CallFailure refusal(std::uint32_t error, std::uint32_t detail, std::uint64_t arg0,
                               std::uint64_t arg1, std::string context);

    int rc;  // the negative errno
    vaccel_status status;
    std::string context;
    std::string sentence;  // libvaccel's sentence for the status
};

// Throws CallFailure::last_call(rc, context) when rc < 0.
void check(int rc, const char* context);
void check(int rc, const std::string& context);

// libvaccel's sentence for any status (vaccel_status_message).
std::string status_sentence(const vaccel_status& status);
// The negative errno of a contract error (uapi/vaccel.h's mapping).
int contract_errno(std::uint32_t error);

// Sets the Python error for `failure` (the GIL must be held): an instance of
// the vaccel.Error subclass its contract error names.
void set_python_error(const CallFailure& failure);

}  // namespace vaccel::python
