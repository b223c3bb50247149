// cpu.hpp - opening the CPU backend.
//
// Owns nothing beyond the entry point. Decides: the CPU backend executes TOSA
// 1.0 FP32 graphs on the host with its own worker threads, and is the numeric
// reference the other backends are compared with.
#pragma once

#include <memory>

#include "vaccel/backend/backend.hpp"

namespace vaccel::backend {

struct CpuOptions {
    unsigned threads = 0;  // worker threads running submissions; 0 = hardware concurrency
};

// Never fails: the host is always there. The returned backend owns its worker
// threads; destroying it waits for accepted submissions to finish.
std::unique_ptr<vaccel::backend::Backend> open_cpu_backend(const CpuOptions& options = {});

}  // namespace vaccel::backend
