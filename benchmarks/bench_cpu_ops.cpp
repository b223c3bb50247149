// bench_cpu_ops.cpp - the CPU backend's heavy operators beside NumPy.
//
// FP32 MATMUL [1,1024,1024] x [1,1024,1024] and a 3x3 CONV2D (1x56x56x64 ->
// 64, SAME padding, stride 1) run through the Backend interface (the path a
// submission takes: plan, arena, execution, output copy) on every core, the
// median of repeated runs printed in GFLOP/s beside NumPy's on the same
// shapes in the same run (benchmarks/numpy_baseline.py: its MATMUL is
// np.matmul over the BLAS NumPy is linked with, named in the output; its
// CONV2D an im2col + matmul). The two sides alternate over 5 rounds (each
// side's median of 9 runs per round), so a burst of other load on a shared
// machine hits both sides of the round it falls in; the summary gives the
// median of the rounds and the range of the per-round ratios. Nothing is
// asserted: the figures are the result.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "vaccel/backend/cpu.hpp"
#include "vaccel/tosa/builder.hpp"
#include "vaccel/tosa/graph.hpp"

namespace {

using namespace vaccel;
using namespace vaccel::backend;
using Clock = std::chrono::steady_clock;

[[noreturn]] void die(const std::string& what, const Error& error)
{
    std::fprintf(stderr, "bench_cpu_ops: %s: %s\n", what.c_str(), describe(error).c_str());
    std::exit(1);
}

template <class T>
T must(Result<T> result, const std::string& what)
{
    if (!result) die(what, result.error());
    return std::move(*result);
}

// Wakes the bench when its submission has left pending (the sink is told
// after the state changed). Waiting on a futex, not polling: a polling
// thread would take one of the cores the GEMM's threads run on.
struct Waiter final : EventSink {
    std::atomic<bool> done{false};
    void completed(const EventStatus&) noexcept override
    {
        done.store(true);
        done.notify_all();
    }
};

std::vector<float> noise(std::size_t count, unsigned seed)
{
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> out(count);
    for (float& v : out) v = dist(rng);
    return out;
}

std::uint32_t zero(tosa::GraphBuilder& g, const char* name)
{
    const float z = 0.0f;
    return g.constant_f32(name, {1}, std::span(&z, 1));
}

tosa::Graph matmul_graph(std::int64_t n)
{
    tosa::GraphBuilder g;
    const auto a = g.tensor("a", {1, n, n}, tosa::DType::fp32);
    const auto b = g.tensor("b", {1, n, n}, tosa::DType::fp32);
    const auto c = g.tensor("c", {1, n, n}, tosa::DType::fp32);
    g.op(tosa::Op::matmul, {a, b, zero(g, "a_zp"), zero(g, "b_zp")}, {c});
    g.input(a);
    g.input(b);
    g.output(c);
    return g.finish();
}

tosa::Graph conv_graph(std::int64_t hw, std::int64_t channels)
{
    tosa::GraphBuilder g;
    const auto in = g.tensor("in", {1, hw, hw, channels}, tosa::DType::fp32);
    const auto weights = noise(static_cast<std::size_t>(channels * 3 * 3 * channels), 7);
    const auto w = g.constant_f32("w", {channels, 3, 3, channels}, weights);
    const auto biases = noise(static_cast<std::size_t>(channels), 8);
    const auto bias = g.constant_f32("bias", {channels}, biases);
    const auto out = g.tensor("out", {1, hw, hw, channels}, tosa::DType::fp32);
    g.op(tosa::Op::conv2d, {in, w, bias, zero(g, "in_zp"), zero(g, "w_zp")}, {out},
         tosa::conv_attr({1, 1, 1, 1}, {1, 1}, {1, 1}));
    g.input(in);
    g.output(out);
    return g.finish();
}

// Median seconds of `runs` submissions of `graph` with random inputs.
double median_seconds(Backend& backend, const tosa::Graph& graph, int runs)
{
    auto context = must(backend.create_context(), "create_context");
    auto queue = must(backend.create_queue(*context), "create_queue");
    const std::vector<std::uint8_t> bytes = tosa::serialize(graph);
    ProgramDesc desc;
    desc.payload = std::as_bytes(std::span(bytes));
    auto program = must(backend.load_program(*context, desc), "load_program");
    std::vector<std::unique_ptr<Buffer>> buffers;
    std::vector<Binding> bindings;
    const auto slots = program->slots();
    for (std::uint32_t s = 0; s < slots.size(); ++s) {
        BufferDesc buffer;
        buffer.bytes = slots[s].bytes;
        BufferInfo info;
        buffers.push_back(must(backend.allocate_buffer(*context, buffer, info), "allocate"));
        if (s < program->input_count()) {
            const auto values = noise(slots[s].bytes / sizeof(float), s + 1);
            (void)backend.write_buffer(*buffers.back(), 0, std::as_bytes(std::span(values)));
        }
        bindings.push_back({s, s < program->input_count() ? VACCEL_ACCESS_READ : VACCEL_ACCESS_WRITE,
                            buffers.back().get(), 0, slots[s].bytes});
    }
    std::vector<double> seconds;
    for (int i = 0; i < runs + 1; ++i) {
        SubmitDesc submit;
        submit.queue = queue.get();
        submit.program = program.get();
        submit.bindings = bindings;
        auto waiter = std::make_shared<Waiter>();
        submit.sink = waiter;
        const auto start = Clock::now();
        auto submitted = must(backend.submit(submit), "submit");
        waiter->done.wait(false);
        const double took = std::chrono::duration<double>(Clock::now() - start).count();
        if (backend.poll(*submitted.event).state != EventState::complete) {
            std::fprintf(stderr, "bench_cpu_ops: a run failed\n");
            std::exit(1);
        }
        (void)backend.destroy_event(submitted.event);
        if (i > 0) seconds.push_back(took);  // the first run warms up
    }
    std::sort(seconds.begin(), seconds.end());
    for (auto& b : buffers) (void)backend.free_buffer(b);
    (void)backend.unload_program(program);
    (void)backend.destroy_queue(queue);
    (void)backend.destroy_context(context);
    return seconds[seconds.size() / 2];
}

struct Figures {
    double matmul_s = 0, conv_s = 0;
};

double median(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv)
{
    const std::string numpy_script = argc > 1 ? argv[1] : "benchmarks/numpy_baseline.py";
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    auto backend = open_cpu_backend(CpuOptions{threads});
    constexpr std::int64_t n = 1024;
    constexpr std::int64_t hw = 56, channels = 64;
    constexpr int rounds = 5;
    const double matmul_flop = 2.0 * n * n * n;
    const double conv_flop = 2.0 * hw * hw * channels * channels * 9;

    // The first python3 with NumPy (a pyenv one may come first on PATH).
    std::string python;
    for (const char* candidate : {"python3", "/usr/bin/python3"})
        if (std::system((std::string(candidate) + " -c 'import numpy' >/dev/null 2>&1").c_str()) ==
            0) {
            python = candidate;
            break;
        }
    if (python.empty()) {
        std::fprintf(stderr, "bench_cpu_ops: no python3 with NumPy: install python3-numpy "
                             "(make deps)\n");
        return 1;
    }
    const std::string command = python + " " + numpy_script + " " + std::to_string(n) + " " +
                                std::to_string(hw) + " " + std::to_string(channels);
    char blas[256] = "unknown";
    auto numpy_figures = [&]() {
        Figures f;
        FILE* numpy = popen(command.c_str(), "r");
        if (numpy == nullptr ||
            std::fscanf(numpy, "%lf %lf %255s", &f.matmul_s, &f.conv_s, blas) != 3) {
            std::fprintf(stderr, "bench_cpu_ops: %s gave no figures\n", command.c_str());
            std::exit(1);
        }
        pclose(numpy);
        return f;
    };

    std::printf("CPU backend vs NumPy, FP32, %u threads, %d rounds alternating the two, each "
                "the median of 9 runs (after 1 warm-up)\n",
                threads, rounds);
    std::vector<double> ours_mm, numpy_mm, ratio_mm, ours_conv, numpy_conv, ratio_conv;
    for (int round = 0; round < rounds; ++round) {
        const Figures ours{median_seconds(*backend, matmul_graph(n), 9),
                           median_seconds(*backend, conv_graph(hw, channels), 9)};
        const Figures numpy = numpy_figures();
        ours_mm.push_back(matmul_flop / ours.matmul_s / 1e9);
        numpy_mm.push_back(matmul_flop / numpy.matmul_s / 1e9);
        ratio_mm.push_back(numpy.matmul_s / ours.matmul_s);
        ours_conv.push_back(conv_flop / ours.conv_s / 1e9);
        numpy_conv.push_back(conv_flop / numpy.conv_s / 1e9);
        ratio_conv.push_back(numpy.conv_s / ours.conv_s);
        std::printf("round %d: MATMUL %.1f vs %.1f GF/s (%.2fx), CONV2D %.1f vs %.1f GF/s "
                    "(%.2fx)\n",
                    round + 1, ours_mm.back(), numpy_mm.back(), ratio_mm.back(), ours_conv.back(),
                    numpy_conv.back(), ratio_conv.back());
        std::fflush(stdout);
    }
    std::printf("%-40s %12s %12s %14s %14s\n", "operation (median of rounds)", "vaccel GF/s",
                "NumPy GF/s", "vaccel/NumPy", "ratio range");
    std::printf("%-40s %12.1f %12.1f %13.2fx %6.2f-%.2fx\n", "MATMUL [1,1024,1024]x[1,1024,1024]",
                median(ours_mm), median(numpy_mm), median(ratio_mm),
                *std::min_element(ratio_mm.begin(), ratio_mm.end()),
                *std::max_element(ratio_mm.begin(), ratio_mm.end()));
    std::printf("%-40s %12.1f %12.1f %13.2fx %6.2f-%.2fx\n", "CONV2D 3x3 1x56x56x64 -> 64 (SAME)",
                median(ours_conv), median(numpy_conv), median(ratio_conv),
                *std::min_element(ratio_conv.begin(), ratio_conv.end()),
                *std::max_element(ratio_conv.begin(), ratio_conv.end()));
    std::printf("NumPy's BLAS: %s; MATMUL target: >= 0.80x NumPy\n", blas);
    return 0;
}
