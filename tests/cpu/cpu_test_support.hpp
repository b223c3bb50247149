// cpu_test_support.hpp - what the CPU backend tests share.
//
// Owns: refusal assertions and a rig that
// opens the CPU backend with a context and a queue, loads graphs built with
// the TOSA GraphBuilder, runs them through the Backend interface only and
// checks that releasing everything leaves every live counter at zero.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "vaccel/backend/cpu.hpp"
#include "vaccel/tosa/builder.hpp"
#include "vaccel/tosa/graph.hpp"

#include "cmocka.hpp"

namespace cpu_test {

using namespace vaccel;
using namespace vaccel::backend;
using tosa::DType;
using tosa::Op;

// A Result/Status that must be an error with exactly these fields.
#define assert_refused(expr, errc, detail_, arg0_, arg1_)                                      \
    do {                                                                                       \
        const auto& refused_ = (expr);                                                           \
        if (refused_.has_value()) fail_msg("%s: expected a refusal, got success", #expr);     \
        const ::vaccel::Error& e_ = refused_.error();                                          \
        if (e_.code != (errc) || e_.detail != static_cast<uint32_t>(detail_) ||                 \
            e_.arg0 != static_cast<uint64_t>(arg0_) || e_.arg1 != static_cast<uint64_t>(arg1_)) \
            fail_msg("%s: got code %u detail %u arg0 %llu arg1 %llu (%s)", #expr,              \
                     static_cast<unsigned>(e_.code), e_.detail,                                \
                     static_cast<unsigned long long>(e_.arg0),                                 \
                     static_cast<unsigned long long>(e_.arg1), e_.note.c_str());              \
    } while (0)

#define assert_ok(expr)                                                                        \
    do {                                                                                       \
        const auto& ok_ = (expr);                                                                \
        if (!ok_.has_value())                                                                  \
            fail_msg("%s: unexpected refusal (code %u detail %u arg0 %llu): %s", #expr,        \
                     static_cast<unsigned>(ok_.error().code), ok_.error().detail,             \
                     static_cast<unsigned long long>(ok_.error().arg0),                        \
                     ok_.error().note.c_str());                                                \
    } while (0)

// The engine's part of an event, for tests: counts completions and calls
// an optional function (from the backend's thread) each time.
class CallbackSink final : public EventSink {
public:
    explicit CallbackSink(std::function<void()> fn = {}) : fn_(std::move(fn)) {}
    void completed(const EventStatus& status) noexcept override
    {
        last_state.store(static_cast<std::uint32_t>(status.state));
        count.fetch_add(1);
        if (fn_) fn_();
    }
    std::atomic<int> count{0};
    std::atomic<std::uint32_t> last_state{0};

private:
    std::function<void()> fn_;
};

// Backend::submit with a CallbackSink, returning just the event.
inline Result<std::unique_ptr<Event>> submit(Backend& backend, Queue& queue, Program& program,
                                             std::span<const Binding> bindings,
                                             std::uint64_t deadline_ns,
                                             std::shared_ptr<EventSink> sink = nullptr)
{
    SubmitDesc desc;
    desc.queue = &queue;
    desc.program = &program;
    desc.bindings = bindings;
    desc.deadline_ns = deadline_ns;
    desc.sink = sink ? std::move(sink) : std::make_shared<CallbackSink>();
    auto submitted = backend.submit(desc);
    if (!submitted) return std::unexpected(std::move(submitted.error()));
    return std::move(submitted->event);
}

// Backend::submit as it is, for tests that look at the whole outcome.
inline Result<Submitted> submit(Backend& backend, const SubmitDesc& desc)
{
    return backend.submit(desc);
}

inline std::span<const std::byte> bytes_of(const std::vector<float>& values)
{
    return std::as_bytes(std::span(values));
}

// Deterministic values in [-2, 2) with a fractional part.
inline std::vector<float> sample(std::size_t count, std::uint32_t seed)
{
    std::vector<float> values(count);
    std::uint32_t state = seed * 2654435761u + 12345u;
    for (float& v : values) {
        state = state * 1664525u + 1013904223u;
        v = static_cast<float>(state >> 8) / static_cast<float>(1u << 24) * 4.0f - 2.0f;
    }
    return values;
}

inline std::uint64_t now_ns()
{
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000u +
           static_cast<std::uint64_t>(now.tv_nsec);
}

// A tensor's shape product.
inline std::size_t elements(const std::vector<std::int64_t>& shape)
{
    std::size_t n = 1;
    for (auto d : shape) n *= static_cast<std::size_t>(d);
    return n;
}

// Raw tensor bytes, and FP32 values read back from them.
using TensorBytes = std::vector<std::byte>;
template <class T>
TensorBytes raw(const std::vector<T>& v)
{
    auto b = std::as_bytes(std::span(v));
    return {b.begin(), b.end()};
}
inline std::vector<float> floats(const TensorBytes& b)
{
    std::vector<float> v(b.size() / 4);
    std::memcpy(v.data(), b.data(), b.size());
    return v;
}

// The TOSA graph helpers the tests build with.
inline std::uint32_t f32(tosa::GraphBuilder& g, const char* name, std::vector<std::int64_t> shape)
{
    return g.tensor(name, std::move(shape), DType::fp32);
}
// out = x + x over n elements (the default, 70, is more than one
// GPU workgroup); each result is one IEEE addition, so exact.
inline tosa::Graph doubling(std::int64_t n = 70)
{
    tosa::GraphBuilder g;
    const auto x = f32(g, "x", {n});
    const auto out = f32(g, "out", {n});
    g.op(Op::add, {x, x}, {out});
    g.input(x);
    g.output(out);
    return g.finish();
}

// The INT8 zero `shift` of a FP32 MUL, written by a CONST operator.
inline std::uint32_t mul_shift(tosa::GraphBuilder& g, const char* name, std::int8_t value = 0)
{
    const std::uint32_t t =
        g.tensor(name, {1}, DType::int8, {static_cast<std::uint8_t>(value)});
    g.op(Op::const_, {}, {t});
    return t;
}
// An FP32 zero point constant [1], written by a CONST operator.
inline std::uint32_t zero_point(tosa::GraphBuilder& g, const char* name, float value = 0.0f)
{
    const float values[] = {value};
    const std::uint32_t t = g.constant_f32(name, {1}, values);
    g.op(Op::const_, {}, {t});
    return t;
}
// A SHAPE constant, written by a CONST_SHAPE operator.
inline std::uint32_t shape_const(tosa::GraphBuilder& g, const char* name,
                                 std::vector<std::int64_t> dims)
{
    std::vector<std::uint8_t> data(dims.size() * 8);
    std::memcpy(data.data(), dims.data(), data.size());
    const std::uint32_t t =
        g.tensor(name, {static_cast<std::int64_t>(dims.size())}, DType::shape, data);
    g.op(Op::const_shape, {}, {t});
    return t;
}

}  // namespace cpu_test

#ifdef VACCEL_TEST_MIRROR
#include "device_mirror.hpp"
#endif

namespace cpu_test {

struct Rig {
    std::unique_ptr<Backend> backend;
    std::unique_ptr<Context> context;
    std::unique_ptr<Queue> queue;

    explicit Rig(unsigned threads = 2) : Rig(CpuOptions{threads}) {}
    // `schedule`: the context's flow (set before it has a queue), if named.
    explicit Rig(const CpuOptions& options, const ContextSchedule& schedule = {})
    {
        backend = open_cpu_backend(options);
        auto c = backend->create_context();
        assert_true(c.has_value());
        context = std::move(*c);
        if (!schedule.flow.empty()) backend->set_context_schedule(*context, schedule);
        auto q = backend->create_queue(*context);
        assert_true(q.has_value());
        queue = std::move(*q);
    }

    Result<std::unique_ptr<Program>> load(tosa::Graph graph)
    {
        const std::vector<std::uint8_t> bytes = tosa::serialize(graph);
        ProgramDesc desc;
        desc.payload = std::as_bytes(std::span(bytes));
        auto program = backend->load_program(*context, desc);
#ifdef VACCEL_TEST_MIRROR
        if (program) DeviceMirror::get().loaded(**program, bytes);
#endif
        return program;
    }
    std::unique_ptr<Program> must_load(tosa::Graph graph)
    {
        auto program = load(std::move(graph));
        assert_ok(program);
        return std::move(*program);
    }

    std::unique_ptr<Buffer> buffer(std::uint64_t bytes, std::uint32_t usage = VACCEL_USAGE_ALL)
    {
        BufferDesc desc;
        desc.bytes = bytes;
        desc.usage = usage;
        BufferInfo info;
        auto b = backend->allocate_buffer(*context, desc, info);
        assert_ok(b);
        return std::move(*b);
    }
    std::unique_ptr<Buffer> buffer_with(const std::vector<float>& values)
    {
        auto b = buffer(values.size() * sizeof(float));
        assert_ok(backend->write_buffer(*b, 0, bytes_of(values)));
        return b;
    }
    std::vector<float> read(Buffer& b, std::size_t count)
    {
        std::vector<float> values(count);
        assert_ok(backend->read_buffer(b, 0, std::as_writable_bytes(std::span(values))));
        return values;
    }

    // Bindings for buffers in slot order (inputs READ, outputs WRITE).
    std::vector<Binding> bind(Program& program, const std::vector<Buffer*>& buffers)
    {
        std::vector<Binding> bindings;
        const auto slots = program.slots();
        for (std::uint32_t s = 0; s < slots.size(); ++s)
            bindings.push_back(Binding{s,
                                       slots[s].role == VACCEL_SLOT_INPUT ? VACCEL_ACCESS_READ
                                                                          : VACCEL_ACCESS_WRITE,
                                       buffers[s], 0, slots[s].bytes});
        return bindings;
    }

    EventStatus wait(Event& event)
    {
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(120);
        for (;;) {
            EventStatus status = backend->poll(event);
            if (status.state != EventState::pending) return status;
            if (std::chrono::steady_clock::now() > give_up) fail_msg("event never completed");
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
    }

    // Runs a program once on `inputs` (one vector per input slot) and
    // returns the contents of each output slot.
    std::vector<std::vector<float>> run(Program& program,
                                        const std::vector<std::vector<float>>& inputs)
    {
        const auto slots = program.slots();
        std::vector<std::unique_ptr<Buffer>> owned;
        std::vector<Buffer*> raw;
        for (std::uint32_t s = 0; s < slots.size(); ++s) {
            if (s < program.input_count()) {
                assert_int_equal(inputs[s].size() * sizeof(float), slots[s].bytes);
                owned.push_back(buffer_with(inputs[s]));
            } else {
                owned.push_back(buffer(slots[s].bytes));
            }
            raw.push_back(owned.back().get());
        }
        auto event = cpu_test::submit(*backend, *queue, program, bind(program, raw), 0);
        assert_ok(event);
        const EventStatus status = wait(**event);
        if (status.state != EventState::complete)
            fail_msg("submission ended in state %u: %s", static_cast<unsigned>(status.state),
                     status.failure.note.c_str());
        assert_ok(backend->destroy_event(*event));
        std::vector<std::vector<float>> outputs;
        for (std::uint32_t s = program.input_count(); s < slots.size(); ++s)
            outputs.push_back(read(*owned[s], slots[s].bytes / sizeof(float)));
        for (auto& b : owned) assert_ok(backend->free_buffer(b));
#ifdef VACCEL_TEST_MIRROR
        std::vector<std::span<const std::byte>> in_bytes;
        for (const auto& v : inputs) in_bytes.push_back(std::as_bytes(std::span(v)));
        std::vector<std::vector<std::byte>> out_bytes;
        for (const auto& v : outputs) {
            const auto b = std::as_bytes(std::span(v));
            out_bytes.emplace_back(b.begin(), b.end());
        }
        DeviceMirror::get().ran(program, in_bytes, out_bytes);
#endif
        return outputs;
    }

    // Runs a program once on raw slot contents of any dtype (one span per
    // input slot, of exactly the slot's size) and returns each output slot's bytes.
    std::vector<std::vector<std::byte>> run_raw(
        Program& program, const std::vector<std::span<const std::byte>>& inputs)
    {
        const auto slots = program.slots();
        std::vector<std::unique_ptr<Buffer>> owned;
        std::vector<Buffer*> raw;
        for (std::uint32_t s = 0; s < slots.size(); ++s) {
            owned.push_back(buffer(slots[s].bytes == 0 ? 1 : slots[s].bytes));
            if (s < program.input_count()) {
                assert_int_equal(inputs[s].size(), slots[s].bytes);
                if (!inputs[s].empty())
                    assert_ok(backend->write_buffer(*owned.back(), 0, inputs[s]));
            }
            raw.push_back(owned.back().get());
        }
        auto event = cpu_test::submit(*backend, *queue, program, bind(program, raw), 0);
        assert_ok(event);
        const EventStatus status = wait(**event);
        if (status.state != EventState::complete)
            fail_msg("submission ended in state %u: %s", static_cast<unsigned>(status.state),
                     status.failure.note.c_str());
        assert_ok(backend->destroy_event(*event));
        std::vector<std::vector<std::byte>> outputs;
        for (std::uint32_t s = program.input_count(); s < slots.size(); ++s) {
            std::vector<std::byte> bytes(slots[s].bytes);
            if (!bytes.empty()) assert_ok(backend->read_buffer(*owned[s], 0, bytes));
            outputs.push_back(std::move(bytes));
        }
        for (auto& b : owned) assert_ok(backend->free_buffer(b));
#ifdef VACCEL_TEST_MIRROR
        DeviceMirror::get().ran(program, inputs, outputs);
#endif
        return outputs;
    }

    // Releases the program, queue and context; every counter must be zero.
    void finish(std::unique_ptr<Program>& program)
    {
        if (program) assert_ok(backend->unload_program(program));
        finish();
    }
    void finish()
    {
        assert_ok(backend->destroy_queue(queue));
        assert_ok(backend->destroy_context(context));
        const LiveCounters live = backend->live();
        assert_int_equal(live.contexts, 0);
        assert_int_equal(live.buffers, 0);
        assert_int_equal(live.buffer_bytes, 0);
        assert_int_equal(live.programs, 0);
        assert_int_equal(live.queues, 0);
        assert_int_equal(live.events, 0);
        assert_int_equal(live.events_in_flight, 0);
    }
};

// A Rig over another device's backend: a context and a queue on `device`.
inline Rig rig_on(std::unique_ptr<Backend> device)
{
    Rig rig(1);
    assert_ok(rig.backend->destroy_queue(rig.queue));
    assert_ok(rig.backend->destroy_context(rig.context));
    rig.backend = std::move(device);
    auto c = rig.backend->create_context();
    assert_ok(c);
    rig.context = std::move(*c);
    auto q = rig.backend->create_queue(*rig.context);
    assert_ok(q);
    rig.queue = std::move(*q);
    return rig;
}

// LAUNCH of a kernel program's `entry` on `queue` (the argv already parsed),
// with a CallbackSink.
inline Result<Submitted> launch(Backend& backend, Queue& queue, Program& program,
                                std::string_view entry, const std::vector<kernel_args::Arg>& args,
                                const std::vector<Binding>& bindings, vaccel_launch_dims dims,
                                std::uint64_t deadline_ns = 0)
{
    LaunchDesc desc;
    desc.queue = &queue;
    desc.program = &program;
    desc.entry = entry;
    desc.dims = dims;
    desc.args = args;
    desc.bindings = bindings;
    desc.deadline_ns = deadline_ns;
    desc.sink = std::make_shared<CallbackSink>();
    return backend.launch(desc);
}
inline Result<Submitted> launch(Rig& rig, Program& program, std::string_view entry,
                                const std::vector<kernel_args::Arg>& args,
                                const std::vector<Binding>& bindings, vaccel_launch_dims dims,
                                std::uint64_t deadline_ns = 0)
{
    return launch(*rig.backend, *rig.queue, program, entry, args, bindings, dims, deadline_ns);
}

// Launches and waits; fails the test unless the launch completes.
inline void run(Rig& rig, Program& program, std::string_view entry,
                const std::vector<kernel_args::Arg>& args, const std::vector<Binding>& bindings,
                vaccel_launch_dims dims)
{
    auto submitted = launch(rig, program, entry, args, bindings, dims);
    assert_ok(submitted);
    const EventStatus status = rig.wait(*submitted->event);
    if (status.state != EventState::complete)
        fail_msg("launch of %.*s ended in state %u: %s", static_cast<int>(entry.size()),
                 entry.data(), static_cast<unsigned>(status.state), status.failure.note.c_str());
    assert_ok(rig.backend->destroy_event(submitted->event));
}

inline void assert_exactly(const std::vector<float>& got, const std::vector<float>& want)
{
    assert_int_equal(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i)
        if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0)
            fail_msg("element %zu: got %.9g, want %.9g", i, static_cast<double>(got[i]),
                     static_cast<double>(want[i]));
}

// |got - want| <= tolerance * (1 + |want|) per element.
inline void assert_close(const std::vector<float>& got, const std::vector<float>& want,
                         float tolerance)
{
    assert_int_equal(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        const float limit = tolerance * (1.0f + (want[i] < 0 ? -want[i] : want[i]));
        const float diff = got[i] - want[i];
        if (!(diff <= limit && -diff <= limit))
            fail_msg("element %zu: got %.9g, want %.9g", i, static_cast<double>(got[i]),
                     static_cast<double>(want[i]));
    }
}

}  // namespace cpu_test
