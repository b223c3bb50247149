// cpu.hpp - opening the CPU backend.
//
// Owns nothing beyond the entry point. Decides: the CPU backend executes TOSA
// 1.0 FP32 graphs on the host with its own worker threads, and is the numeric
// reference the other backends are compared with.
#pragma once

#include <cstdint>
#include <memory>

#include "vaccel/backend/backend.hpp"

namespace vaccel::backend {

struct CpuOptions {
    unsigned threads = 0;  // worker threads running submissions; 0 = hardware concurrency
    // Which CPU device this is when the host is served as several (names and
    // uuids differ by instance; 0 keeps the plain name).
    unsigned instance = 0;
    // Fault injection for tests ([devices.cpu] inject_loss_after): the
    // submission accepted after this many is taken indeterminately and the
    // device is lost. UINT64_MAX = never.
    std::uint64_t inject_loss_after = UINT64_MAX;
    // Tiny runs on the caller's thread ([devices.cpu] inline_us): a TOSA
    // submission whose program's last run took at most this long runs
    // inside submit() when it would otherwise wake an idle worker (nothing
    // else waits for one and one is free); charged to its context's flow as
    // a worker's run is (docs/adr/0030-cpu-tiny-runs-on-the-caller.md).
    // 0 never runs inline.
    std::uint32_t inline_us = 20;
};

// Never fails: the host is always there. The returned backend owns its worker
// threads; destroying it waits for accepted submissions to finish.
std::unique_ptr<vaccel::backend::Backend> open_cpu_backend(const CpuOptions& options = {});

}  // namespace vaccel::backend
