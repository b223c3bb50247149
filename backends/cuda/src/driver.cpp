// driver.cpp - loading the CUDA driver (driver.hpp).
#include "driver.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <mutex>

namespace vaccel::backend::cuda {
namespace {

struct Loaded {
    Driver driver;
    std::string why;
    bool ok = false;
};

Loaded load()
{
    Loaded out;
    // RTLD_NODELETE: the driver's threads outlive any handle we could close.
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (library == nullptr) {
        const char* error = dlerror();
        out.why = fmt::format("no CUDA driver (libcuda.so.1 could not be loaded: {})",
                              error != nullptr ? error : "not found");
        return out;
    }
    auto get_proc = reinterpret_cast<decltype(&::cuGetProcAddress)>(
        dlsym(library, "cuGetProcAddress_v2"));
    if (get_proc == nullptr) {
        out.why = "the CUDA driver is older than 12.0 (no cuGetProcAddress_v2); install a "
                  "driver for CUDA 13";
        return out;
    }
    Driver& d = out.driver;
    const char* missing = nullptr;
    auto resolve = [&](const char* name, void** slot) {
        CUdriverProcAddressQueryResult status{};
        if (get_proc(name, slot, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status) !=
                CUDA_SUCCESS ||
            status != CU_GET_PROC_ADDRESS_SUCCESS || *slot == nullptr) {
            if (missing == nullptr) missing = name;
            *slot = nullptr;
        }
    };
#define VACCEL_CUDA_RESOLVE(name) resolve(#name, reinterpret_cast<void**>(&d.name));
    VACCEL_CUDA_DRIVER_CALLS(VACCEL_CUDA_RESOLVE)
#undef VACCEL_CUDA_RESOLVE
    if (missing != nullptr) {
        out.why = fmt::format("the CUDA driver lacks {} at CUDA {}.{}; install a driver for "
                              "CUDA {}.{} or newer",
                              missing, CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10,
                              CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
        return out;
    }
    if (CUresult r = d.cuInit(0); r != CUDA_SUCCESS) {
        out.why = fmt::format("cuInit failed: {}", d.describe(r));
        return out;
    }
    d.cuDriverGetVersion(&d.version);
    out.ok = true;
    return out;
}

}  // namespace

std::string Driver::describe(CUresult result) const
{
    const char* name = nullptr;
    const char* text = nullptr;
    if (cuGetErrorName == nullptr || cuGetErrorName(result, &name) != CUDA_SUCCESS)
        name = nullptr;
    if (cuGetErrorString == nullptr || cuGetErrorString(result, &text) != CUDA_SUCCESS)
        text = nullptr;
    if (name == nullptr) return fmt::format("CUresult {}", static_cast<int>(result));
    return text == nullptr ? std::string(name) : fmt::format("{} ({})", name, text);
}

const Driver* load_driver(std::string& why)
{
    static Loaded loaded = load();
    why = loaded.why;
    return loaded.ok ? &loaded.driver : nullptr;
}

bool context_fault(CUresult result)
{
    switch (result) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
        return true;
    default:
        return false;
    }
}

}  // namespace vaccel::backend::cuda
