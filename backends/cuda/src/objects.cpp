// objects.cpp - releasing the CUDA backend's objects (objects.hpp).
#include "objects.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <ctime>

namespace vaccel::backend::cuda {

std::uint64_t monotonic_ns()
{
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000u +
           static_cast<std::uint64_t>(now.tv_nsec);
}

Error DeviceCore::error(CUresult result, std::string_view what) const
{
    Errc code = Errc::external;
    if (result == CUDA_ERROR_OUT_OF_MEMORY) code = Errc::out_of_memory;
    if (result == CUDA_ERROR_ECC_UNCORRECTABLE || result == CUDA_ERROR_DEVICE_UNAVAILABLE ||
        result == CUDA_ERROR_NO_DEVICE || result == CUDA_ERROR_DEVICE_NOT_LICENSED)
        code = Errc::device_lost;
    return Error::of(code, VACCEL_D_NONE, static_cast<std::uint64_t>(result))
        .with_note(fmt::format("{} on \"{}\" failed: {}", what, info.name, cu->describe(result)));
}

ContextState::~ContextState()
{
    if (context == nullptr) return;
    // Destroying the context frees what is left in it (the kernels' modules).
    device->cu->cuCtxDestroy(context);
    device->counters.contexts.fetch_sub(1);
}

ScopedContext::ScopedContext(const Driver& cu, CUcontext context) : cu_(&cu)
{
    if (cu.cuCtxPushCurrent(context) != CUDA_SUCCESS) cu_ = nullptr;
}

ScopedContext::~ScopedContext()
{
    CUcontext popped = nullptr;
    if (cu_ != nullptr) cu_->cuCtxPopCurrent(&popped);
}

Result<ScopedContext> ContextState::enter() const
{
    ScopedContext scope(*device->cu, context);
    if (!scope.pushed())
        return fail(Error::of(Errc::external)
                        .with_note(fmt::format("making a CUDA context of \"{}\" current failed",
                                               device->info.name)));
    return scope;
}

Status ContextState::usable() const
{
    if (faulted.load(std::memory_order_acquire)) return fail(fault);
    if (device->lost.load(std::memory_order_acquire))
        return fail(Error::of(Errc::device_lost, VACCEL_D_DEVICE_STATE)
                        .with_note(fmt::format("the CUDA device \"{}\" was lost; use another "
                                               "device",
                                               device->info.name)));
    return {};
}

void ContextState::poison(CUresult result, std::string_view what)
{
    static std::mutex first;  // one writer of `fault`, ever, per context
    std::lock_guard lock(first);
    if (faulted.load(std::memory_order_acquire)) return;
    fault = Error::of(Errc::device_lost, VACCEL_D_NONE, static_cast<std::uint64_t>(result))
                .with_note(fmt::format("{} failed with {}: CUDA keeps this error for the whole "
                                       "process the context runs in, so the context's work "
                                       "failed and it takes no more; the device and other "
                                       "contexts are unaffected when each context runs in a "
                                       "process of its own (vaccel-cuda-host, the default). "
                                       "Destroy the context and create a new one",
                                       what, device->cu->describe(result)));
    faulted.store(true, std::memory_order_release);
}

CudaBuffer::~CudaBuffer()
{
    const DeviceCore& core = *owner->device;
    if (address != 0 || host != nullptr) {
        const auto scope = owner->enter();
        if (desc_.domain == VACCEL_DOMAIN_HOST)
            core.cu->cuMemFreeHost(host);
        else
            core.cu->cuMemFree(address);
    }
    if (!counted) return;
    owner->buffers -= 1;
    owner->memory_bytes -= allocation_bytes;
    owner->device->counters.buffers.fetch_sub(1);
    owner->device->counters.buffer_bytes.fetch_sub(allocation_bytes);
}

QueueState::~QueueState()
{
    if (stream == nullptr) return;
    const auto scope = owner->enter();
    owner->device->cu->cuStreamDestroy(stream);
    owner->queues -= 1;
    owner->device->counters.queues.fetch_sub(1);
}

ProgramState::~ProgramState()
{
    const Driver& cu = *owner->device->cu;
    const auto scope = owner->enter();
    if (last_run != nullptr) cu.cuEventDestroy(last_run);
    for (const RecordedRun& r : recorded)
        for (CUgraphExec exec : r.segments)
            if (exec != nullptr) cu.cuGraphExecDestroy(exec);
    for (CUevent e : cost_events) cu.cuEventDestroy(e);
    if (profile) {
        if (const std::string report = profile_report(*profile, launches); !report.empty())
            std::fputs(report.c_str(), stderr);
        for (CUevent e : profile->events) cu.cuEventDestroy(e);
    }
    if (arena != 0) {
        cu.cuMemFree(arena);
        owner->memory_bytes -= arena_bytes;
    }
    if (module != nullptr) cu.cuModuleUnload(module);
    if (counted) owner->device->counters.programs.fetch_sub(1);
}

SubmissionState::~SubmissionState()
{
    release();
    if (done != nullptr || !marks.empty()) {
        const auto scope = queue->owner->enter();
        if (done != nullptr) queue->owner->device->cu->cuEventDestroy(done);
        for (CUevent e : marks) queue->owner->device->cu->cuEventDestroy(e);
    }
}

void SubmissionState::release()
{
    if (released) return;
    released = true;
    for (const Held& h : held) (h.writes ? h.buffer->writers : h.buffer->readers).fetch_sub(1);
    held.clear();
    if (program) program->in_flight.fetch_sub(1);
}

}  // namespace vaccel::backend::cuda
