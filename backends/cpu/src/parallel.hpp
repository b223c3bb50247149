// parallel.hpp - the threads the CPU kernels split one operator over.
//
// Owns one process-wide pool of helper threads (docs/adr/0029-cpu-operator-
// threads.md). Decides:
//  - size: a CPU device opening with `workers` worker threads raises the
//    pool to min(largest workers seen, the host's cores) threads, the
//    caller counted (so that many minus one helpers); the count only grows,
//    as the BLAS's does (gemm.hpp), and several CPU devices share the pool;
//  - one operator at a time: parallel_for() takes the pool if it is free;
//    a caller that finds it taken (another worker's operator) runs its
//    whole range itself, so a tenant never waits for another's operator and
//    the process never runs more kernel threads than cores;
//  - a range shorter than two grains runs on the caller without touching
//    the pool (no wake-up for small tensors);
//  - the helpers block on a condition variable between operators (no
//    spinning): waking them costs microseconds, which is why grains are
//    tens of thousands of elements;
//  - chunks are disjoint ranges [begin, end) of [0, count); body must write
//    only what its range owns and must not throw (the kernels do neither
//    allocation that throws nor I/O). The results do not depend on the
//    split: every element is computed by the same expression wherever it
//    runs, so a kernel's bytes are the same with 1 thread or 16.
// Helpers start on the first size_parallel_threads() call, from the thread
// opening a CPU device, and inherit its signal mask (vacceld blocks the
// signals its signalfd reads on every thread).
#pragma once

#include <cstdint>
#include <memory>
#include <type_traits>

namespace vaccel::backend::cpu {

// Raises the pool to min(largest workers seen, cores) threads.
void size_parallel_threads(unsigned workers);

// Threads parallel_for() can use now, the caller included (1 before any
// CPU device opened).
unsigned parallel_threads();

// While one lives, parallel_for() on this thread runs every range on the
// calling thread alone (a serial reference for tests; the helpers set one
// for the body they run, so a body's own parallel_for stays on its thread).
class SerialScope {
public:
    SerialScope();
    ~SerialScope();
    SerialScope(const SerialScope&) = delete;
    SerialScope& operator=(const SerialScope&) = delete;
};

namespace detail {
bool serial_here();
using ChunkFn = void (*)(void* body, std::uint64_t begin, std::uint64_t end);
void parallel_run(std::uint64_t count, std::uint64_t grain, ChunkFn fn, void* body);
}  // namespace detail

// Calls body(begin, end) over disjoint chunks covering [0, count), each at
// least `grain` long except the last, on the pool's threads and the caller;
// returns when every chunk has run.
template <class Body>
void parallel_for(std::uint64_t count, std::uint64_t grain, Body&& body)
{
    if (count == 0) return;
    if (grain == 0) grain = 1;
    if (count < 2 * grain || detail::serial_here()) {
        body(std::uint64_t{0}, count);
        return;
    }
    detail::parallel_run(
        count, grain,
        [](void* b, std::uint64_t begin, std::uint64_t end) {
            (*static_cast<std::remove_reference_t<Body>*>(b))(begin, end);
        },
        const_cast<void*>(static_cast<const void*>(std::addressof(body))));
}

// Elements of one chunk of an elementwise kernel: large enough that the
// wake-up of a helper is small beside it.
inline constexpr std::uint64_t elementwise_grain = 32 * 1024;

}  // namespace vaccel::backend::cpu
