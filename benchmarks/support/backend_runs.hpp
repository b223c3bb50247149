// backend_runs.hpp - running TOSA programs through a Backend and timing
// them, for the backends' benchmarks (bench_vulkan, bench_cuda,
// bench_onnx_layout).
//
// Decides: a figure is the median wall clock of --runs submissions after three
// warm-ups, from submit to the completion sink, with every binding in a
// Device-domain buffer unless the caller names another; MATMUL inputs are
// random in [-1, 1], ADD's zero. Any refusal or a run that does not
// complete ends the program with the reason.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <string>
#include <vector>

#include "vaccel/backend/backend.hpp"
#include "vaccel/tosa/builder.hpp"

namespace vaccel::bench {

// Unmeasured runs before each figure (clocks ramp up, caches fill).
inline constexpr int warmups = 3;

// The program name in messages ("bench_vulkan").
void set_program_name(const char* name);
[[noreturn]] void die(const std::string& what, const Error& error);
template <class T>
T must(Result<T> result, const std::string& what)
{
    if (!result) die(what, result.error());
    return std::move(*result);
}

// [1,h,c] x [1,c,w] -> [1,h,w] of `in` into `out`.
tosa::Graph matmul_graph(tosa::DType in, tosa::DType out, std::int64_t h, std::int64_t c,
                         std::int64_t w);
// out = a + b over `elements` FP32 values.
tosa::Graph add_graph(std::int64_t elements);
// `elements` random values in [-1, 1] as FP32 or FP16 bytes.
std::vector<std::byte> random_bytes(std::size_t elements, tosa::DType dtype, unsigned seed);
// The median of `runs` calls of `once` (each returning seconds), after
// `warmups` unmeasured ones.
double median_of_runs(int runs, const std::function<double()>& once);
// Seconds from `start` (a submit or launch given the sink) to its
// completion; ends the program when it is refused or does not complete.
double timed_event(backend::Backend& backend, std::string_view what,
                   const std::function<Result<backend::Submitted>(std::shared_ptr<backend::EventSink>)>& start);
// The median seconds of `runs` submissions of `graph` on `backend`, its
// buffers in `domain`: Device memory by default, as a GPU client allocates
// it (the Host domain is system memory: every GPU kernel access would cross
// PCIe); the CPU device takes Host.
double median_seconds(backend::Backend& backend, const tosa::Graph& graph, int runs,
                      bool random_inputs, std::uint32_t domain = VACCEL_DOMAIN_DEVICE);
// "<anchor> GFLOP/s anchor, ratio <ours/anchor>x", or that none was given.
std::string anchor_text(double anchor, double ours);

}  // namespace vaccel::bench
