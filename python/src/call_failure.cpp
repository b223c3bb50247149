// call_failure.cpp - capturing libvaccel's refusals and raising them in Python.
//
// Owns: the capture of a failed call's status and sentence, and the
// translation of CallFailure into vaccel.errors.Error (the Python module
// builds the instance, so the error classes live in one place).
#include "call_failure.hpp"

#include <cerrno>
#include <exception>
#include <vector>

#include "bindings.hpp"

namespace py = pybind11;

namespace vaccel::python {

CallFailure::CallFailure(int rc_, const vaccel_status& status_, std::string context_,
                         std::string sentence_)
    : std::runtime_error(context_ + ": " + sentence_),
      rc(rc_),
      status(status_),
      context(std::move(context_)),
      sentence(std::move(sentence_))
{
}

CallFailure CallFailure::last_call(int rc, std::string context)
{
    // Both read this thread's record of the call that just failed; the
    // message pointer is valid until this thread's next vaccel_* call.
    const vaccel_status status = *vaccel_last_status();
    std::string sentence = vaccel_last_error_message();
    if (sentence.empty())
        sentence = vaccel_strerror(rc);
    return CallFailure(rc, status, std::move(context), std::move(sentence));
}

CallFailure CallFailure::work_failed(int rc, const vaccel_status& failure, std::string context)
{
    return CallFailure(rc, failure, std::move(context), status_sentence(failure));
}

CallFailure CallFailure::refusal(std::uint32_t error, std::uint32_t detail, std::uint64_t arg0,
                                 std::uint64_t arg1, std::string context)
{
    vaccel_status status{};
    status.error = error;
    status.detail = detail;
    status.arg0 = arg0;
    status.arg1 = arg1;
    return CallFailure(contract_errno(error), status, std::move(context),
                       status_sentence(status));
}

void check(int rc, const char* context)
{
    if (rc < 0)
        throw CallFailure::last_call(rc, context);
}

void check(int rc, const std::string& context)
{
    if (rc < 0)
        throw CallFailure::last_call(rc, context);
}

std::string status_sentence(const vaccel_status& status)
{
    // The first call measures the sentence, the second writes it whole.
    const int length = vaccel_status_message(&status, nullptr, 0);
    if (length <= 0)
        return vaccel_strerror(static_cast<int>(status.error));
    std::vector<char> text(static_cast<std::size_t>(length) + 1);
    vaccel_status_message(&status, text.data(), text.size());
    return std::string(text.data(), static_cast<std::size_t>(length));
}

int contract_errno(std::uint32_t error)
{
    switch (error) {
    case VACCEL_E_UNSUPPORTED: return -EOPNOTSUPP;
    case VACCEL_E_INCOMPATIBLE: return -ENOEXEC;
    case VACCEL_E_INVALID_ARGUMENT: return -EINVAL;
    case VACCEL_E_OUT_OF_BOUNDS: return -ERANGE;
    case VACCEL_E_OUT_OF_MEMORY: return -ENOMEM;
    case VACCEL_E_RESOURCE_LIMIT: return -EDQUOT;
    case VACCEL_E_DEVICE_LOST: return -ENODEV;
    case VACCEL_E_BUSY: return -EBUSY;
    case VACCEL_E_PERMISSION_DENIED: return -EACCES;
    case VACCEL_E_DEADLINE_EXPIRED: return -ETIME;
    case VACCEL_E_EXTERNAL: return -EIO;
    case VACCEL_E_CANCELLED: return -ECANCELED;
    default: return -EINVAL;
    }
}

void set_python_error(const CallFailure& failure)
{
    try {
        // vaccel.errors is imported by the package before any call can fail.
        py::object make = py::module_::import("vaccel.errors").attr("_from_failure");
        const vaccel_status& s = failure.status;
        py::object error = make(failure.rc, s.error, s.detail, s.limit, s.arg0, s.arg1,
                                failure.context, failure.sentence);
        PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
    } catch (py::error_already_set& e) {
        e.restore();  // the Python error of building it is the clearer report
    }
}

void register_errors(py::module_& module)
{
    py::register_exception_translator([](std::exception_ptr thrown) {
        try {
            if (thrown)
                std::rethrow_exception(thrown);
        } catch (const CallFailure& failure) {
            set_python_error(failure);
        }
    });
    module.def(
        "status_message",
        [](std::uint32_t error, std::uint32_t detail, std::uint32_t limit, std::uint64_t arg0,
           std::uint64_t arg1) {
            vaccel_status status{};
            status.error = error;
            status.detail = detail;
            status.limit = limit;
            status.arg0 = arg0;
            status.arg1 = arg1;
            return status_sentence(status);
        },
        py::arg("error"), py::arg("detail") = 0, py::arg("limit") = 0, py::arg("arg0") = 0,
        py::arg("arg1") = 0, "libvaccel's sentence for a contract status (vaccel_status_message).");
    module.def(
        "error_name", [](std::uint32_t error) { return std::string(vaccel_error_name(error)); },
        "The contract error's name: 'InvalidArgument', 'Busy', ... (vaccel_error_name).");
    module.def(
        "strerror", [](int code) { return std::string(vaccel_strerror(code)); },
        "'Name: meaning' of a negative errno or a contract code (vaccel_strerror).");
    module.def("errno_of", &contract_errno,
               "The negative errno of a contract error (uapi/vaccel.h's mapping).");
}

}  // namespace vaccel::python
