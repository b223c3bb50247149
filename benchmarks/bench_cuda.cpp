// bench_cuda.cpp - the CUDA backend on a CUDA device, each figure beside its
// baseline measured in the same run (or given on the command line).
//
// Through the Backend interface in process (what a submission costs:
// bindings checked, kernels put on the stream, completion thread), wall
// clock from submit to the completion sink, the median of --runs after three
// warm-ups (backend_runs.hpp):
//  (a) FP32 MATMUL [1,N,N] x [1,N,N] in GFLOP/s (2 N^3 flops); baseline:
//      --anchor-fp32 (cuBLAS with TF32 off, from benchmarks/torch_anchor.py);
//  (b) FP16 x FP16 -> FP16 MATMUL, same shape (tensor cores); baseline:
//      --anchor-fp16 (cuBLAS FP16); FP16 -> FP32 is printed too; with
//      --f16-variants a,b,..., (b) again for each FP16 kernel variant named
//      (VACCEL_CUDA_MATMUL_F16, backends/cuda/src/lowering_matmul.hpp);
//  (c) a raw PTX axpy (tests/cuda/kernels, y = a x + y) over --axpy-bytes
//      per operand, launched through the backend; effective bandwidth counts
//      3 x bytes (two reads, one write); baseline: cuMemcpyDtoD of the same
//      bytes on the same device opened directly (2 x bytes), and the test
//      kernels' float4 copy launched through the backend;
//  (d) launch + completion of an empty kernel through the backend; baseline:
//      cuLaunchKernel + cuStreamSynchronize of the same kernel in process.
// With --two-devices: FP32 MATMUL on cuda:0 and cuda:1 at once, from two
// clients of one vacceld (started here on a private socket, serving
// "cuda:*"), each client's rate beside its rate alone.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "support/backend_runs.hpp"
#include "support/raw_cuda.hpp"
#include "support/reach_daemon.hpp"
#include "vaccel/backend/cuda.hpp"
#include "vaccel/vaccel.h"

namespace {

using namespace vaccel;
using namespace vaccel::backend;
using namespace vaccel::bench;
using kernel_args::Arg;
using tosa::DType;
using Clock = std::chrono::steady_clock;

// Median seconds of `runs` launches of `entry` (backend_runs.hpp).
double launch_seconds(Backend& backend, Queue& queue, Program& program, std::string_view entry,
                      const std::vector<Arg>& args, const std::vector<Binding>& bindings,
                      vaccel_launch_dims dims, int runs)
{
    return median_of_runs(runs, [&] {
        return timed_event(backend, "launch", [&](std::shared_ptr<EventSink> sink) {
            LaunchDesc desc;
            desc.queue = &queue;
            desc.program = &program;
            desc.entry = entry;
            desc.dims = dims;
            desc.args = args;
            desc.bindings = bindings;
            desc.sink = std::move(sink);
            return backend.launch(desc);
        });
    });
}

vaccel_launch_dims grid_of(std::uint32_t blocks, std::uint32_t threads)
{
    vaccel_launch_dims d{};
    d.grid[0] = blocks;
    d.grid[1] = d.grid[2] = 1;
    d.block[0] = threads;
    d.block[1] = d.block[2] = 1;
    return d;
}

// One client of the daemon running FP32 MATMUL N^3 on device `index`.
struct MatmulClient {
    vaccel_client* client = nullptr;
    std::uint64_t context = 0, program = 0, queue = 0, a = 0, b = 0, out = 0;
    std::uint64_t bytes = 0;

    bool open(std::uint32_t index, std::int64_t n)
    {
        if (vaccel_client_open("socket", &client) != 0) return false;
        const auto graph = tosa::serialize(matmul_graph(DType::fp32, DType::fp32, n, n, n));
        bytes = static_cast<std::uint64_t>(n * n * 4);
        auto alloc = [&](std::uint64_t* buffer) {
            struct vaccel_buffer_alloc request{};
            request.context = context;
            request.bytes = bytes;
            request.domain = VACCEL_DOMAIN_DEVICE;
            request.usage = VACCEL_USAGE_ALL;
            request.access = VACCEL_ACCESS_RW;
            if (vaccel_buffer_alloc(client, &request) != 0) return false;
            *buffer = request.buffer;
            return true;
        };
        if (vaccel_context_create(client, index, &context) != 0 ||
            vaccel_program_load(client, context, VACCEL_FORMAT_TOSA, nullptr, graph.data(),
                                graph.size(), &program, nullptr, nullptr) != 0 ||
            vaccel_queue_create(client, context, &queue) != 0 || !alloc(&a) || !alloc(&b) ||
            !alloc(&out))
            return false;
        const auto values = random_bytes(bytes / 4, DType::fp32, index + 1);
        return vaccel_buffer_write(client, a, 0, values.data(), bytes) == 0 &&
               vaccel_buffer_write(client, b, 0, values.data(), bytes) == 0;
    }
    // GFLOP/s over `runs` submit + wait.
    double run(int runs, std::int64_t n)
    {
        const vaccel_binding bindings[3] = {
            {.slot = 0, .access = VACCEL_ACCESS_READ, .buffer = a, .offset = 0, .bytes = bytes},
            {.slot = 1, .access = VACCEL_ACCESS_READ, .buffer = b, .offset = 0, .bytes = bytes},
            {.slot = 2, .access = VACCEL_ACCESS_WRITE, .buffer = out, .offset = 0, .bytes = bytes}};
        const auto start = Clock::now();
        for (int i = 0; i < runs; ++i) {
            std::uint64_t event = 0;
            if (vaccel_submit(client, queue, program, bindings, 3, 0, &event) != 0 ||
                vaccel_event_wait(client, &event, 1, VACCEL_WAIT_ALL,
                                  vaccel_deadline_after_ns(60'000'000'000ull), nullptr) != 0 ||
                vaccel_event_destroy(client, event) != 0)
                return 0;
        }
        const double s = std::chrono::duration<double>(Clock::now() - start).count();
        return 2.0 * static_cast<double>(n) * n * n * runs / s / 1e9;
    }
    ~MatmulClient() { vaccel_client_close(client); }
};

int two_devices(const char* argv0, const std::string& vacceld, std::int64_t n, int runs)
{
    VacceldProcess daemon;
    std::string path;
    if (!reach_daemon("", vacceld, argv0, -1, daemon, path, "\"cuda:*\"")) return 1;
    setenv("VACCEL_SOCKET", path.c_str(), 1);
    MatmulClient c0, c1;
    if (!c0.open(0, n) || !c1.open(1, n)) {
        std::fprintf(stderr, "bench_cuda: two clients on cuda:0 and cuda:1 could not be set up "
                             "(does the daemon serve two CUDA devices?)\n");
        return 1;
    }
    (void)c0.run(1, n);
    (void)c1.run(1, n);
    const double alone0 = c0.run(runs, n), alone1 = c1.run(runs, n);
    double together0 = 0, together1 = 0;
    std::thread t0([&] { together0 = c0.run(runs, n); });
    std::thread t1([&] { together1 = c1.run(runs, n); });
    t0.join();
    t1.join();
    std::printf("(e) two clients of one vacceld, FP32 MATMUL %lld^3 on cuda:0 and cuda:1 at once: "
                "%.1f and %.1f GFLOP/s | baseline: each alone %.1f and %.1f GFLOP/s, ratios "
                "%.3fx and %.3fx\n",
                static_cast<long long>(n), together0, together1, alone0, alone1,
                together0 / alone0, together1 / alone1);
    return daemon.stop() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv)
{
    set_program_name("bench_cuda");
    CLI::App app{"The CUDA backend's MATMUL, axpy and launch latency beside same-run baselines"};
    std::int64_t n = 4096;
    std::uint64_t axpy_bytes = 1ull << 30;
    int runs = 5, latency_runs = 2000;
    double anchor_fp32 = 0, anchor_fp16 = 0;
    std::string ptx_path = VACCEL_BENCH_CUDA_PTX, vacceld;
    bool two = false;
    std::vector<std::string> f16_variants;
    app.add_option("--matmul", n, "N of the N^3 MATMULs")->capture_default_str()->check(CLI::Range(1, 65536));
    app.add_option("--axpy-bytes", axpy_bytes, "bytes of each axpy operand and of the copy")
        ->capture_default_str()->check(CLI::Range(16ull, 1ull << 34));
    app.add_option("--runs", runs, "measured runs per figure (median)")->capture_default_str()->check(CLI::Range(1, 10000));
    app.add_option("--latency-runs", latency_runs, "measured runs of the latency figures")
        ->capture_default_str()->check(CLI::Range(1, 1000000));
    app.add_option("--anchor-fp32", anchor_fp32, "cuBLAS FP32 GFLOP/s from torch_anchor.py");
    app.add_option("--anchor-fp16", anchor_fp16, "cuBLAS FP16 GFLOP/s from torch_anchor.py");
    app.add_option("--ptx", ptx_path, "the test kernels' PTX (tests/cuda/kernels)")->capture_default_str();
    app.add_option("--f16-variants", f16_variants,
                   "FP16 MATMUL kernel variants to measure (b) again with, comma-separated "
                   "(VACCEL_CUDA_MATMUL_F16 names: v0, t128x256, ..., wgmma)")
        ->delimiter(',');
    app.add_flag("--two-devices", two, "only (e): two clients on cuda:0 and cuda:1 through vacceld");
    app.add_option("--vacceld", vacceld, "vacceld for --two-devices (default: found beside this "
                                         "program or in the build tree)");
    CLI11_PARSE(app, argc, argv);
    if (two) return two_devices(argv[0], vacceld, n, runs);

    CudaDevices found = open_cuda_devices();
    if (found.devices.empty()) {
        std::fprintf(stderr, "bench_cuda: no CUDA device: %s\n", found.unavailable.c_str());
        return 1;
    }
    Backend& backend = *found.devices[0];
    const struct vaccel_device_info& info = backend.device_info();
    std::array<std::uint8_t, 16> uuid{};
    std::memcpy(uuid.data(), info.uuid, uuid.size());
    const auto ptx = read_file(ptx_path);
    // The in-process baselines first, before this process starts any host.
    double copy_s = 0, raw_s = 0;
    std::string raw_name;
    {
        RawCuda raw(uuid, ptx);
        copy_s = raw.copy_seconds(axpy_bytes, runs);
        raw_s = raw.launch_sync_seconds(latency_runs);
        raw_name = raw.name();
    }
    std::printf("bench_cuda on %s (%s), median of %d runs after 3 warm-ups, wall clock submit to "
                "completion\n",
                info.name, info.driver, runs);

    const double flop = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
    const double fp32_s = median_seconds(backend, matmul_graph(DType::fp32, DType::fp32, n, n, n), runs, true);
    std::printf("(a) MATMUL FP32 %lld^3: %.1f GFLOP/s (%.3f ms) | baseline: %s\n",
                static_cast<long long>(n), flop / fp32_s / 1e9, fp32_s * 1e3,
                anchor_text(anchor_fp32, flop / fp32_s / 1e9).c_str());
    std::fflush(stdout);
    const double fp16_s = median_seconds(backend, matmul_graph(DType::fp16, DType::fp16, n, n, n), runs, true);
    const double fp16_32_s = median_seconds(backend, matmul_graph(DType::fp16, DType::fp32, n, n, n), runs, true);
    std::printf("(b) MATMUL FP16xFP16->FP16 %lld^3: %.1f GFLOP/s (%.3f ms); ->FP32 %.1f GFLOP/s "
                "| baseline: %s\n",
                static_cast<long long>(n), flop / fp16_s / 1e9, fp16_s * 1e3,
                flop / fp16_32_s / 1e9, anchor_text(anchor_fp16, flop / fp16_s / 1e9).c_str());
    std::fflush(stdout);
    for (const std::string& variant : f16_variants) {
        // The lowering reads the variable when each program loads.
        setenv("VACCEL_CUDA_MATMUL_F16", variant.c_str(), 1);
        const double v_s =
            median_seconds(backend, matmul_graph(DType::fp16, DType::fp16, n, n, n), runs, true);
        const double v32_s =
            median_seconds(backend, matmul_graph(DType::fp16, DType::fp32, n, n, n), runs, true);
        std::printf("(b) variant %s: FP16xFP16->FP16 %lld^3: %.1f GFLOP/s (%.3f ms); ->FP32 %.1f "
                    "GFLOP/s | baseline: %s\n",
                    variant.c_str(), static_cast<long long>(n), flop / v_s / 1e9, v_s * 1e3,
                    flop / v32_s / 1e9, anchor_text(anchor_fp16, flop / v_s / 1e9).c_str());
        std::fflush(stdout);
    }
    unsetenv("VACCEL_CUDA_MATMUL_F16");

    // (c) and (d) through one context of the backend.
    auto context = must(backend.create_context(), "create_context");
    auto queue = must(backend.create_queue(*context), "create_queue");
    ProgramDesc desc;
    desc.format = VACCEL_FORMAT_CUDA_PTX;
    desc.payload = std::as_bytes(std::span(ptx));
    auto program = must(backend.load_program(*context, desc), "load_program");
    BufferDesc buffer;
    buffer.bytes = axpy_bytes;
    buffer.domain = VACCEL_DOMAIN_DEVICE;
    BufferInfo bi;
    auto x = must(backend.allocate_buffer(*context, buffer, bi), "allocate x");
    auto y = must(backend.allocate_buffer(*context, buffer, bi), "allocate y");
    const std::vector<Binding> bindings{{0, VACCEL_ACCESS_READ, x.get(), 0, axpy_bytes},
                                        {1, VACCEL_ACCESS_READ | VACCEL_ACCESS_WRITE, y.get(), 0,
                                         axpy_bytes}};
    const std::uint64_t count = axpy_bytes / 4;
    // 4096 blocks of 256 threads: every SM full several times over; the
    // kernels loop over the rest.
    const auto blocks = static_cast<std::uint32_t>(std::min<std::uint64_t>((count / 4 + 255) / 256, 4096));
    const double axpy_s = launch_seconds(backend, *queue, *program, "axpy_stride",
                                         {Arg::ptr(0, 0), Arg::ptr(1, 0), Arg::f32(0.5f), Arg::u64(count)},
                                         bindings, grid_of(blocks, 256), runs);
    const std::vector<Binding> copy_bindings{{0, VACCEL_ACCESS_READ, x.get(), 0, axpy_bytes},
                                             {1, VACCEL_ACCESS_WRITE, y.get(), 0, axpy_bytes}};
    const double copy_kernel_s = launch_seconds(backend, *queue, *program, "copy4",
                                                {Arg::ptr(0, 0), Arg::ptr(1, 0), Arg::u64(count / 4)},
                                                copy_bindings, grid_of(blocks, 256), runs);
    const double bytes = static_cast<double>(axpy_bytes);
    const double axpy_gbs = 3 * bytes / axpy_s / 1e9, copy_gbs = 2 * bytes / copy_s / 1e9;
    std::printf("(c) raw PTX axpy over %.0f MiB: %.1f GB/s effective (3x%.0f MiB in %.3f ms) | "
                "baseline: cuMemcpyDtoD of %.0f MiB %.1f GB/s effective (2x in %.3f ms), ratio "
                "%.3fx; float4 copy kernel through the backend %.1f GB/s (%.3f ms)\n",
                bytes / 1048576, axpy_gbs, bytes / 1048576, axpy_s * 1e3, bytes / 1048576,
                copy_gbs, copy_s * 1e3, axpy_gbs / copy_gbs, 2 * bytes / copy_kernel_s / 1e9,
                copy_kernel_s * 1e3);
    std::fflush(stdout);
    const double noop_s = launch_seconds(backend, *queue, *program, "noop", {}, {},
                                         grid_of(1, 1), latency_runs);
    std::printf("(d) launch + completion of an empty kernel through the backend: %.1f us | "
                "baseline: cuLaunchKernel + cuStreamSynchronize in process %.1f us, ratio %.2fx\n",
                noop_s * 1e6, raw_s * 1e6, noop_s / raw_s);
    (void)backend.free_buffer(x);
    (void)backend.free_buffer(y);
    (void)backend.unload_program(program);
    (void)backend.destroy_queue(queue);
    (void)backend.destroy_context(context);
    return 0;
}
