// backend_runs.cpp - TOSA programs run and timed through a Backend
// (backend_runs.hpp).
#include "support/backend_runs.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

namespace vaccel::bench {

using namespace vaccel::backend;
using Clock = std::chrono::steady_clock;
using tosa::DType;

namespace {

const char* program_name = "bench";

}  // namespace

void set_program_name(const char* name) { program_name = name; }

[[noreturn]] void die(const std::string& what, const Error& error)
{
    std::fprintf(stderr, "%s: %s: %s\n", program_name, what.c_str(), describe(error).c_str());
    std::exit(1);
}

struct Waiter final : EventSink {
    std::atomic<bool> done{false};
    void completed(const EventStatus&) noexcept override
    {
        done.store(true);
        done.notify_all();
    }
};

std::uint32_t zero_point(tosa::GraphBuilder& g, const char* name, DType dtype)
{
    const std::uint32_t t =
        g.tensor(name, {1}, dtype, std::vector<std::uint8_t>(tosa::dtype_bytes(dtype), 0));
    g.op(tosa::Op::const_, {}, {t});
    return t;
}

tosa::Graph matmul_graph(DType in, DType out, std::int64_t h, std::int64_t c, std::int64_t w)
{
    tosa::GraphBuilder g;
    const auto a = g.tensor("a", {1, h, c}, in);
    const auto b = g.tensor("b", {1, c, w}, in);
    const auto o = g.tensor("out", {1, h, w}, out);
    g.op(tosa::Op::matmul, {a, b, zero_point(g, "a_zp", in), zero_point(g, "b_zp", in)}, {o});
    g.input(a);
    g.input(b);
    g.output(o);
    return g.finish();
}

tosa::Graph add_graph(std::int64_t elements)
{
    tosa::GraphBuilder g;
    const auto a = g.tensor("a", {elements}, DType::fp32);
    const auto b = g.tensor("b", {elements}, DType::fp32);
    const auto o = g.tensor("out", {elements}, DType::fp32);
    g.op(tosa::Op::add, {a, b}, {o});
    g.input(a);
    g.input(b);
    g.output(o);
    return g.finish();
}

// FP16 bits of a float in [-1, 1] (truncated: the bench needs values, not
// rounding).
std::uint16_t half_bits(float v)
{
    std::uint32_t f = 0;
    std::memcpy(&f, &v, 4);
    const std::uint32_t sign = (f >> 16) & 0x8000u;
    const int exponent = static_cast<int>((f >> 23) & 0xff) - 127 + 15;
    if (exponent <= 0) return static_cast<std::uint16_t>(sign);
    return static_cast<std::uint16_t>(sign | (static_cast<std::uint32_t>(exponent) << 10) |
                                      ((f >> 13) & 0x3ffu));
}

std::vector<std::byte> random_bytes(std::size_t elements, DType dtype, unsigned seed)
{
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<std::byte> out(elements * (dtype == DType::fp16 ? 2 : 4));
    for (std::size_t i = 0; i < elements; ++i) {
        const float v = dist(rng);
        if (dtype == DType::fp16) {
            const std::uint16_t h = half_bits(v);
            std::memcpy(out.data() + 2 * i, &h, 2);
        } else {
            std::memcpy(out.data() + 4 * i, &v, 4);
        }
    }
    return out;
}

// Median seconds of `runs` submissions of `graph` (after one warm-up).
double median_seconds(Backend& backend, const tosa::Graph& graph, int runs, bool random_inputs, std::uint32_t domain)
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
        buffer.domain = domain;
        BufferInfo info;
        buffers.push_back(must(backend.allocate_buffer(*context, buffer, info), "allocate_buffer"));
        const bool input = s < program->input_count();
        if (input && random_inputs) {
            const auto dtype = static_cast<DType>(slots[s].dtype);
            const auto values = random_bytes(slots[s].bytes / (dtype == DType::fp16 ? 2 : 4),
                                             dtype, s + 1);
            if (auto ok = backend.write_buffer(*buffers.back(), 0, values); !ok)
                die("write_buffer", ok.error());
        }
        bindings.push_back({s, input ? VACCEL_ACCESS_READ : VACCEL_ACCESS_WRITE,
                            buffers.back().get(), 0, slots[s].bytes});
    }
    const double median = median_of_runs(runs, [&] {
        return timed_event(backend, "submit", [&](std::shared_ptr<EventSink> sink) {
            SubmitDesc submit;
            submit.queue = queue.get();
            submit.program = program.get();
            submit.bindings = bindings;
            submit.sink = std::move(sink);
            return backend.submit(submit);
        });
    });
    for (auto& b : buffers) (void)backend.free_buffer(b);
    (void)backend.unload_program(program);
    (void)backend.destroy_queue(queue);
    (void)backend.destroy_context(context);
    return median;
}

double median_of_runs(int runs, const std::function<double()>& once)
{
    std::vector<double> seconds;
    for (int i = 0; i < runs + warmups; ++i) {
        const double took = once();
        if (i >= warmups) seconds.push_back(took);
    }
    std::sort(seconds.begin(), seconds.end());
    return seconds[seconds.size() / 2];
}

double timed_event(Backend& backend, std::string_view what,
                   const std::function<Result<Submitted>(std::shared_ptr<EventSink>)>& start)
{
    auto waiter = std::make_shared<Waiter>();
    const auto began = Clock::now();
    auto submitted = must(start(waiter), std::string(what));
    waiter->done.wait(false);
    const double took = std::chrono::duration<double>(Clock::now() - began).count();
    const EventStatus status = backend.poll(*submitted.event);
    if (status.state != EventState::complete) {
        std::fprintf(stderr, "%s: a %.*s did not complete: %s\n", program_name,
                     static_cast<int>(what.size()), what.data(), status.failure.note.c_str());
        std::exit(1);
    }
    (void)backend.destroy_event(submitted.event);
    return took;
}

std::string anchor_text(double anchor, double ours)
{
    if (anchor <= 0) return "no anchor given (pass the figure benchmarks/torch_anchor.py prints)";
    char text[128];
    std::snprintf(text, sizeof text, "%.1f GFLOP/s anchor, ratio %.3fx", anchor, ours / anchor);
    return text;
}

}  // namespace vaccel::bench
