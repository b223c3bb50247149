// driver.hpp - the CUDA driver API, loaded at run time.
//
// Owns: the one dlopen of libcuda.so.1 per process (never closed: the
// driver keeps threads and static state alive until exit) and the table of
// entry points, resolved through cuGetProcAddress at the CUDA version of
// the headers we build with (docs/adr/0018-cuda-backend.md). Nothing links
// libcuda: a machine without the driver simply has no CUDA device.
// Thread-safe: load_driver() initialises once; the table is read-only after.
#pragma once

#include <cuda.h>

#include <string>
#include <string_view>

namespace vaccel::backend::cuda {

// Every driver call the backend makes; each member has the prototype cuda.h
// gives its name (cuda.h maps names to their newest versions, e.g.
// cuCtxCreate to cuCtxCreate_v4, and cuGetProcAddress resolves the same).
// Not every name is remapped: cuCtxSynchronize stays (void) in cuda.h while
// cuGetProcAddress at 13.0 gives the version taking a context, so such a
// function must not be listed here; tests/cuda/check_driver_calls.py fails
// the build's tests when one is.
#define VACCEL_CUDA_DRIVER_CALLS(X)                                                        \
    X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString)                  \
    X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetUuid)               \
    X(cuDeviceGetAttribute) X(cuDeviceTotalMem)                                            \
    X(cuCtxCreate) X(cuCtxDestroy) X(cuCtxPushCurrent) X(cuCtxPopCurrent)                     \
    X(cuCtxSetCurrent)                                                                     \
    X(cuMemAlloc) X(cuMemFree) X(cuMemAllocManaged) X(cuMemHostAlloc) X(cuMemFreeHost)    \
    X(cuMemHostGetDevicePointer) X(cuMemsetD8) X(cuMemcpyHtoD) X(cuMemcpyDtoH)            \
    X(cuMemcpyDtoD)                                                                        \
    X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction) X(cuFuncGetAttribute)    \
    X(cuFuncSetAttribute) X(cuFuncGetParamInfo) X(cuLaunchKernel) X(cuLaunchHostFunc)     \
    X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamWaitEvent) X(cuStreamSynchronize)      \
    X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord) X(cuEventQuery)                   \
    X(cuEventSynchronize) X(cuEventElapsedTime)                                            \
    X(cuLinkCreate) X(cuLinkAddData) X(cuLinkComplete) X(cuLinkDestroy)                  \
    X(cuStreamBeginCapture) X(cuStreamEndCapture) X(cuGraphInstantiateWithFlags)           \
    X(cuGraphDestroy)                                                                      \
    X(cuGraphLaunch) X(cuGraphExecDestroy)

struct Driver {
#define VACCEL_CUDA_DECLARE(name) decltype(&::name) name = nullptr;
    VACCEL_CUDA_DRIVER_CALLS(VACCEL_CUDA_DECLARE)
#undef VACCEL_CUDA_DECLARE
    int version = 0;  // cuDriverGetVersion: 1000 * major + 10 * minor

    // "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was
    // encountered)" for `result`.
    std::string describe(CUresult result) const;
};

// The driver, initialised (cuInit); nullptr when there is none, with `why`
// set (no libcuda.so.1, a driver older than the headers, cuInit failed).
// The same answer for the life of the process.
const Driver* load_driver(std::string& why);

// Whether `result` is an error CUDA makes sticky (a kernel's illegal
// address, illegal instruction, trap, misaligned access, timeout...): every
// context of the process is unusable from then on; the device and other
// processes are not affected.
bool context_fault(CUresult result);

}  // namespace vaccel::backend::cuda
