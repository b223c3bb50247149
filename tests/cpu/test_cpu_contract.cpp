// test_cpu_contract.cpp - the Backend contract as the CPU backend keeps it:
// buffers, transfers, in-flight gates, releases, events, deadlines, bindings.
#include <atomic>
#include <cmath>
#include <cstring>

#include <optional>

#include "cpu_test_support.hpp"

using namespace cpu_test;

namespace {

// One MATMUL [1,n,n] x [1,n,n]: long enough that a submission is still
// running when the test's next call arrives.
constexpr std::int64_t long_n = 1024;

std::unique_ptr<Program> load_long_matmul(Rig& rig)
{
    tosa::GraphBuilder g;
    const auto a = f32(g, "a", {1, long_n, long_n});
    const auto b = f32(g, "b", {1, long_n, long_n});
    const auto out = f32(g, "out", {1, long_n, long_n});
    g.op(Op::matmul, {a, b, zero_point(g, "a_zp"), zero_point(g, "b_zp")}, {out});
    g.input(a);
    g.input(b);
    g.output(out);
    return rig.must_load(g.finish());
}

// in [4] -> tanh -> out [4]: the small program of the binding tests.
std::unique_ptr<Program> load_tanh(Rig& rig)
{
    tosa::GraphBuilder g;
    const auto in = f32(g, "in", {4});
    const auto out = f32(g, "out", {4});
    g.op(Op::tanh, {in}, {out});
    g.input(in);
    g.output(out);
    return rig.must_load(g.finish());
}

// A submission that is certainly pending until open(): it waits on a host
// gate (submit_after), so the tests of in-flight rules never race the worker.
struct LongRun {
    std::unique_ptr<Program> program;
    std::unique_ptr<Buffer> a, b, out;
    std::unique_ptr<Gate> gate;
    std::unique_ptr<Event> event;

    // gated = false: submitted plainly, so it occupies its queue while it
    // runs (for the tests of queue order).
    explicit LongRun(Rig& rig, bool gated = true)
    {
        program = load_long_matmul(rig);
        const std::uint64_t bytes = long_n * long_n * sizeof(float);
        a = rig.buffer(bytes);
        b = rig.buffer(bytes);
        out = rig.buffer(bytes);
        auto g = rig.backend->create_gate(*rig.context);
        assert_ok(g);
        gate = std::move(*g);
        const auto bindings = rig.bind(*program, {a.get(), b.get(), out.get()});
        SubmitDesc desc;
        desc.queue = rig.queue.get();
        desc.program = program.get();
        desc.bindings = bindings;
        desc.after = gated ? gate.get() : nullptr;
        desc.after_value = 1;
        desc.sink = std::make_shared<CallbackSink>();
        auto e = rig.backend->submit(desc);
        assert_ok(e);
        event = std::move(e->event);
    }

    // Another submission held by the same gate (certainly in flight until
    // the gate is raised); the event, or the refusal.
    Result<std::unique_ptr<Event>> held_too(Rig& rig, Program& other,
                                            std::span<const Binding> bindings,
                                            std::uint64_t deadline_ns = 0)
    {
        SubmitDesc desc;
        desc.queue = rig.queue.get();
        desc.program = &other;
        desc.bindings = bindings;
        desc.deadline_ns = deadline_ns;
        desc.after = gate.get();
        desc.after_value = 1;
        desc.sink = std::make_shared<CallbackSink>();
        auto submitted = rig.backend->submit(desc);
        if (!submitted) return std::unexpected(std::move(submitted.error()));
        return std::move(submitted->event);
    }

    // Lets it run and waits for its end.
    EventStatus run_to_end(Rig& rig)
    {
        assert_ok(rig.backend->raise_gate(*gate, 1));
        return rig.wait(*event);
    }

    void release(Rig& rig)
    {
        assert_int_equal(run_to_end(rig).state, EventState::complete);
        assert_ok(rig.backend->destroy_event(event));
        assert_ok(rig.backend->destroy_gate(gate));
        assert_ok(rig.backend->free_buffer(a));
        assert_ok(rig.backend->free_buffer(b));
        assert_ok(rig.backend->free_buffer(out));
        assert_ok(rig.backend->unload_program(program));
    }
};

std::uint64_t identity(const std::unique_ptr<Buffer>& buffer)
{
    return buffer->identity();
}

void device_info_describes_the_cpu(void**)
{
    auto backend = open_cpu_backend(CpuOptions{3});
    const vaccel_device_info& info = backend->device_info();
    assert_int_equal(info.device_class, VACCEL_CLASS_OTHER);
    assert_string_equal(info.driver, "vaccel-cpu");
    assert_int_equal(std::strncmp(info.name, "cpu (3 threads)", 15), 0);
    assert_int_equal(info.memory_caps, VACCEL_MEM_HOST_VISIBLE | VACCEL_MEM_SHARED);
    assert_int_equal(info.formats, VACCEL_FORMAT_BIT(VACCEL_FORMAT_TOSA) |
                                       VACCEL_FORMAT_BIT(VACCEL_FORMAT_CPU_BUILTIN));
    assert_int_equal(info.flags, VACCEL_CAP_TOSA | VACCEL_CAP_DEADLINES | VACCEL_CAP_GATES |
                                     VACCEL_CAP_LAUNCH);
    assert_int_equal(info.limits.max_gates, 256);
    assert_int_equal(info.tosa_target_count, 1);
    assert_int_equal(info.tosa_targets[0].major, 1);
    assert_int_equal(info.tosa_targets[0].minor, 0);
    assert_int_equal(info.tosa_targets[0].profiles, VACCEL_TOSA_PRO_INT | VACCEL_TOSA_PRO_FP);
    assert_int_equal(info.tosa_targets[0].level, VACCEL_TOSA_LEVEL_8K);
    assert_int_equal(info.limits.max_events, 1024);
    assert_true(info.limits.max_bindings >= 1 && info.limits.max_bindings <= VACCEL_MAX_BINDINGS);
    assert_true(info.memory_bytes > 0);
    assert_true(info.limits.max_buffer_bytes <= info.memory_bytes);
    // The uuid is derived from the name: the same on every open.
    auto again = open_cpu_backend(CpuOptions{3});
    assert_memory_equal(info.uuid, again->device_info().uuid, 16);
}

void allocation_is_aligned_zeroed_and_truthful(void**)
{
    Rig rig;
    BufferDesc desc;
    desc.bytes = 100;
    desc.alignment = 4096;
    BufferInfo info;
    auto buffer = rig.backend->allocate_buffer(*rig.context, desc, info);
    assert_ok(buffer);
    assert_int_equal(info.allocation_bytes, 4096);
    assert_true(info.measured_alignment >= 4096);
    assert_int_equal(info.measured_alignment & (info.measured_alignment - 1), 0);
    assert_int_equal(info.properties,
                     VACCEL_PROP_HOST_VISIBLE | VACCEL_PROP_COHERENT | VACCEL_PROP_DIRECT_BINDING);
    std::vector<std::byte> contents(100, std::byte{0xff});
    assert_ok(rig.backend->read_buffer(**buffer, 0, contents));
    for (std::byte b : contents) assert_int_equal(static_cast<int>(b), 0);
    assert_int_equal(rig.backend->live().buffer_bytes, 4096);
    assert_ok(rig.backend->free_buffer(*buffer));
    rig.finish();
}

void default_alignment_is_at_least_64(void**)
{
    Rig rig;
    BufferDesc desc;
    desc.bytes = 1;
    BufferInfo info;
    auto buffer = rig.backend->allocate_buffer(*rig.context, desc, info);
    assert_ok(buffer);
    assert_int_equal(info.allocation_bytes, 64);
    assert_true(info.measured_alignment >= 64);
    assert_ok(rig.backend->free_buffer(*buffer));
    rig.finish();
}

void device_domain_is_unsupported(void**)
{
    Rig rig;
    BufferDesc desc;
    desc.bytes = 64;
    desc.domain = VACCEL_DOMAIN_DEVICE;
    BufferInfo info;
    auto refused = rig.backend->allocate_buffer(*rig.context, desc, info);
    assert_false(refused.has_value());
    assert_int_equal(refused.error().code, Errc::unsupported);
    desc.domain = VACCEL_DOMAIN_SHARED;
    auto shared = rig.backend->allocate_buffer(*rig.context, desc, info);
    assert_ok(shared);
    assert_ok(rig.backend->free_buffer(*shared));
    rig.finish();
}

void write_without_transfer_dst_is_denied(void**)
{
    Rig rig;
    auto buffer = rig.buffer(16, VACCEL_USAGE_STORAGE | VACCEL_USAGE_TRANSFER_SRC);
    const std::vector<float> values{1, 2, 3, 4};
    assert_refused(rig.backend->write_buffer(*buffer, 0, bytes_of(values)),
                   Errc::permission_denied, VACCEL_D_USAGE, VACCEL_USAGE_TRANSFER_DST,
                   VACCEL_USAGE_STORAGE | VACCEL_USAGE_TRANSFER_SRC);
    assert_ok(rig.backend->free_buffer(buffer));
    rig.finish();
}

void read_without_transfer_src_is_denied(void**)
{
    Rig rig;
    auto buffer = rig.buffer(16, VACCEL_USAGE_STORAGE | VACCEL_USAGE_TRANSFER_DST);
    std::vector<std::byte> out(16);
    assert_refused(rig.backend->read_buffer(*buffer, 0, out), Errc::permission_denied,
                   VACCEL_D_USAGE, VACCEL_USAGE_TRANSFER_SRC,
                   VACCEL_USAGE_STORAGE | VACCEL_USAGE_TRANSFER_DST);
    assert_ok(rig.backend->free_buffer(buffer));
    rig.finish();
}

void transfer_past_the_end_is_out_of_bounds(void**)
{
    Rig rig;
    auto buffer = rig.buffer(16);
    const std::vector<float> values{1, 2};
    assert_refused(rig.backend->write_buffer(*buffer, 12, bytes_of(values)), Errc::out_of_bounds,
                   VACCEL_D_RANGE, 12, 8);
    assert_ok(rig.backend->write_buffer(*buffer, 8, bytes_of(values)));
    std::vector<float> back(2);
    assert_ok(rig.backend->read_buffer(*buffer, 8, std::as_writable_bytes(std::span(back))));
    assert_exactly(back, values);
    assert_ok(rig.backend->free_buffer(buffer));
    rig.finish();
}

void poll_reports_pending_then_complete(void**)
{
    Rig rig;
    LongRun run(rig);
    assert_int_equal(rig.backend->poll(*run.event).state, EventState::pending);
    assert_int_equal(rig.backend->live().events_in_flight, 1);
    assert_int_equal(run.run_to_end(rig).state, EventState::complete);
    assert_int_equal(rig.backend->live().events_in_flight, 0);
    run.release(rig);
    rig.finish();
}

void write_to_in_flight_buffer_is_busy(void**)
{
    Rig rig;
    LongRun run(rig);
    std::vector<float> values(4, 1.0f);
    assert_refused(rig.backend->write_buffer(*run.a, 0, bytes_of(values)), Errc::busy,
                   VACCEL_D_IN_FLIGHT, identity(run.a), 1);
    assert_int_equal(run.a->in_flight(), 1);
    run.run_to_end(rig);
    assert_int_equal(run.a->in_flight(), 0);
    assert_ok(rig.backend->write_buffer(*run.a, 0, bytes_of(values)));
    run.release(rig);
    rig.finish();
}

void read_of_in_flight_output_is_busy(void**)
{
    Rig rig;
    LongRun run(rig);
    std::vector<std::byte> out(16);
    assert_refused(rig.backend->read_buffer(*run.out, 0, out), Errc::busy, VACCEL_D_IN_FLIGHT,
                   identity(run.out), 1);
    run.release(rig);
    rig.finish();
}

void free_of_in_flight_buffer_is_busy_and_buffer_survives(void**)
{
    Rig rig;
    LongRun run(rig);
    Buffer* before = run.b.get();
    assert_refused(rig.backend->free_buffer(run.b), Errc::busy, VACCEL_D_IN_FLIGHT,
                   before->identity(), 1);
    assert_ptr_equal(run.b.get(), before);
    run.run_to_end(rig);
    const std::vector<float> values{1.5f, 2.5f};
    assert_ok(rig.backend->write_buffer(*run.b, 0, bytes_of(values)));
    std::vector<float> back(2);
    assert_ok(rig.backend->read_buffer(*run.b, 0, std::as_writable_bytes(std::span(back))));
    assert_exactly(back, values);
    run.release(rig);
    rig.finish();
}

void unload_of_in_flight_program_is_busy(void**)
{
    Rig rig;
    LongRun run(rig);
    assert_refused(rig.backend->unload_program(run.program), Errc::busy, VACCEL_D_IN_USE, 1, 0);
    assert_non_null(run.program.get());
    run.release(rig);
    rig.finish();
}

void destroy_of_pending_event_is_busy(void**)
{
    Rig rig;
    LongRun run(rig);
    Event* event = run.event.get();
    // The backend names no event: the engine puts the handle in arg0.
    assert_refused(rig.backend->destroy_event(run.event), Errc::busy, VACCEL_D_NOT_COMPLETE, 0,
                   0);
    assert_ptr_equal(run.event.get(), event);
    run.release(rig);
    rig.finish();
}

void destroy_context_with_children_is_busy(void**)
{
    Rig rig;
    auto buffer = rig.buffer(64);
    auto program = load_tanh(rig);
    // One queue, one buffer, one program.
    assert_refused(rig.backend->destroy_context(rig.context), Errc::busy, VACCEL_D_IN_USE, 3, 0);
    assert_non_null(rig.context.get());
    assert_ok(rig.backend->free_buffer(buffer));
    rig.finish(program);
}

void second_writer_of_in_flight_buffer_is_busy(void**)
{
    Rig rig;
    LongRun run(rig);
    auto program = load_tanh(rig);
    auto in = rig.buffer(16);
    // The long run writes run.out: binding it as another output is refused,
    // and so is reading it as an input.
    assert_refused(cpu_test::submit(*rig.backend, *rig.queue, *program,
                                       rig.bind(*program, {in.get(), run.out.get()}), 0),
                   Errc::busy, VACCEL_D_IN_FLIGHT, identity(run.out), 1);
    assert_refused(cpu_test::submit(*rig.backend, *rig.queue, *program,
                                       rig.bind(*program, {run.out.get(), in.get()}), 0),
                   Errc::busy, VACCEL_D_IN_FLIGHT, identity(run.out), 1);
    // All or nothing: `in` was not left held by the refused submissions.
    assert_int_equal(in->in_flight(), 0);
    const std::vector<float> values(4, 0.5f);
    assert_ok(rig.backend->write_buffer(*in, 0, bytes_of(values)));
    run.release(rig);
    assert_ok(rig.backend->free_buffer(in));
    rig.finish(program);
}

void in_flight_input_may_be_read_by_another_submission(void**)
{
    Rig rig;
    LongRun run(rig);
    tosa::GraphBuilder g;
    const auto in = f32(g, "in", {1, long_n, long_n});
    const auto out = f32(g, "out", {1, long_n, long_n});
    g.op(Op::identity, {in}, {out});
    g.input(in);
    g.output(out);
    auto program = rig.must_load(g.finish());
    auto copy = rig.buffer(long_n * long_n * sizeof(float));
    // Held by the same gate, so both readers are certainly in flight.
    auto second = run.held_too(rig, *program, rig.bind(*program, {run.a.get(), copy.get()}));
    assert_ok(second);
    assert_int_equal(run.a->in_flight(), 2);
    // Writing into a buffer two submissions read is still refused.
    auto other = rig.buffer(long_n * long_n * sizeof(float));
    assert_refused(cpu_test::submit(*rig.backend, *rig.queue, *program,
                                       rig.bind(*program, {other.get(), run.a.get()}), 0),
                   Errc::busy, VACCEL_D_IN_FLIGHT, identity(run.a), 2);
    assert_int_equal(other->in_flight(), 0);
    assert_ok(rig.backend->free_buffer(other));
    assert_ok(rig.backend->raise_gate(*run.gate, 1));
    assert_int_equal(rig.wait(**second).state, EventState::complete);
    assert_ok(rig.backend->destroy_event(*second));
    run.release(rig);
    assert_ok(rig.backend->free_buffer(copy));
    rig.finish(program);
}

void submissions_of_one_queue_complete_in_order(void**)
{
    Rig rig;
    LongRun run(rig, false);
    auto program = load_tanh(rig);
    auto in = rig.buffer(16);
    auto out = rig.buffer(16);
    auto quick = cpu_test::submit(*rig.backend, *rig.queue, *program, rig.bind(*program, {in.get(), out.get()}), 0);
    assert_ok(quick);
    assert_int_equal(rig.wait(**quick).state, EventState::complete);
    // The quick one was queued behind the long one: that one is done too.
    assert_int_equal(rig.backend->poll(*run.event).state, EventState::complete);
    assert_ok(rig.backend->destroy_event(*quick));
    run.release(rig);
    assert_ok(rig.backend->free_buffer(in));
    assert_ok(rig.backend->free_buffer(out));
    rig.finish(program);
}

void completion_sink_is_told_once_per_event(void**)
{
    Rig rig;
    auto program = load_tanh(rig);
    auto in = rig.buffer_with({0.0f, 1.0f, -1.0f, 2.0f});
    auto out = rig.buffer(16);
    auto sink = std::make_shared<CallbackSink>();
    auto event = cpu_test::submit(*rig.backend, *rig.queue, *program,
                                  rig.bind(*program, {in.get(), out.get()}), 0, sink);
    assert_ok(event);
    rig.wait(**event);
    // The sink is told after the state is published: give it a moment.
    for (int i = 0; i < 10000 && sink->count.load() < 1; ++i)
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    assert_int_equal(sink->count.load(), 1);
    assert_int_equal(sink->last_state.load(), VACCEL_EVENT_COMPLETE);
    assert_ok(rig.backend->destroy_event(*event));
    assert_int_equal(sink->count.load(), 1);
    assert_ok(rig.backend->free_buffer(in));
    assert_ok(rig.backend->free_buffer(out));
    rig.finish(program);
}

void past_deadline_is_refused_at_submit(void**)
{
    Rig rig;
    auto program = load_tanh(rig);
    auto in = rig.buffer(16);
    auto out = rig.buffer(16);
    assert_refused(cpu_test::submit(*rig.backend, *rig.queue, *program,
                                       rig.bind(*program, {in.get(), out.get()}), 1),
                   Errc::deadline_expired, VACCEL_D_DEADLINE, 0, 0);
    assert_int_equal(in->in_flight(), 0);
    assert_int_equal(rig.backend->live().events, 0);
    assert_ok(rig.backend->free_buffer(in));
    assert_ok(rig.backend->free_buffer(out));
    rig.finish(program);
}

void deadline_passing_in_the_queue_fails_the_event_and_writes_nothing(void**)
{
    Rig rig;
    LongRun run(rig);
    auto program = load_tanh(rig);
    auto in = rig.buffer_with({1.0f, 2.0f, 3.0f, 4.0f});
    auto out = rig.buffer(16);
    // Held by the gate past its deadline: certainly late when it starts.
    const std::uint64_t deadline = now_ns() + 1'000'000;
    auto late = run.held_too(rig, *program, rig.bind(*program, {in.get(), out.get()}), deadline);
    assert_ok(late);
    while (now_ns() <= deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    assert_ok(rig.backend->raise_gate(*run.gate, 1));
    const EventStatus status = rig.wait(**late);
    assert_int_equal(status.state, EventState::failed);
    assert_int_equal(status.failure.code, Errc::deadline_expired);
    assert_int_equal(status.failure.detail, VACCEL_D_DEADLINE);
    assert_exactly(rig.read(*out, 4), {0.0f, 0.0f, 0.0f, 0.0f});
    assert_int_equal(out->in_flight(), 0);
    assert_ok(rig.backend->destroy_event(*late));
    run.release(rig);
    assert_ok(rig.backend->free_buffer(in));
    assert_ok(rig.backend->free_buffer(out));
    rig.finish(program);
}

void future_deadline_is_met(void**)
{
    Rig rig;
    auto program = load_tanh(rig);
    auto in = rig.buffer_with({0.5f, 0.5f, 0.5f, 0.5f});
    auto out = rig.buffer(16);
    auto event = cpu_test::submit(*rig.backend, *rig.queue, *program, rig.bind(*program, {in.get(), out.get()}),
                                     now_ns() + 60'000'000'000ull);
    assert_ok(event);
    assert_int_equal(rig.wait(**event).state, EventState::complete);
    assert_exactly(rig.read(*out, 4), std::vector<float>(4, std::tanh(0.5f)));
    assert_ok(rig.backend->destroy_event(*event));
    assert_ok(rig.backend->free_buffer(in));
    assert_ok(rig.backend->free_buffer(out));
    rig.finish(program);
}

// A program of two inputs and one output for the binding rules.
std::unique_ptr<Program> load_add(Rig& rig)
{
    tosa::GraphBuilder g;
    const auto a = f32(g, "a", {4});
    const auto b = f32(g, "b", {4});
    const auto out = f32(g, "out", {4});
    g.op(Op::add, {a, b}, {out});
    g.input(a);
    g.input(b);
    g.output(out);
    return rig.must_load(g.finish());
}

void submit_refuses_slot_bound_twice(void**)
{
    Rig rig;
    auto program = load_add(rig);
    auto a = rig.buffer(16), b = rig.buffer(16), out = rig.buffer(16);
    std::vector<Binding> bindings = rig.bind(*program, {a.get(), b.get(), out.get()});
    bindings[1].slot = 0;
    assert_refused(cpu_test::submit(*rig.backend, *rig.queue, *program, bindings, 0), Errc::invalid_argument,
                   VACCEL_D_BINDING_DUPLICATE, 1, 0);
    for (auto* buffer : {&a, &b, &out}) assert_ok(rig.backend->free_buffer(*buffer));
    rig.finish(program);
}

void submit_refuses_written_buffer_bound_twice(void**)
{
    Rig rig;
    auto program = load_add(rig);
    auto a = rig.buffer(16), b = rig.buffer(16);
    // The output buffer is also bound as input b.
    assert_refused(cpu_test::submit(*rig.backend, *rig.queue, *program,
                                       rig.bind(*program, {a.get(), b.get(), b.get()}), 0),
                   Errc::incompatible, VACCEL_D_BINDING_ALIAS, 2, 1);
    // Reading one buffer through two slots is fine, and counts as one
    // submission (held by the long run's gate, so still in flight when
    // asked).
    LongRun run(rig);
    auto event = run.held_too(rig, *program, rig.bind(*program, {a.get(), a.get(), b.get()}));
    assert_ok(event);
    assert_int_equal(a->in_flight(), 1);
    assert_ok(rig.backend->raise_gate(*run.gate, 1));
    assert_int_equal(rig.wait(**event).state, EventState::complete);
    assert_ok(rig.backend->destroy_event(*event));
    run.release(rig);
    for (auto* buffer : {&a, &b}) assert_ok(rig.backend->free_buffer(*buffer));
    rig.finish(program);
}

void submit_refuses_missing_slot(void**)
{
    Rig rig;
    auto program = load_add(rig);
    auto a = rig.buffer(16), b = rig.buffer(16), out = rig.buffer(16);
    std::vector<Binding> bindings = rig.bind(*program, {a.get(), b.get(), out.get()});
    bindings.erase(bindings.begin() + 1);
    assert_refused(cpu_test::submit(*rig.backend, *rig.queue, *program, bindings, 0), Errc::incompatible,
                   VACCEL_D_BINDING_MISSING, 1, 3);
    for (auto* buffer : {&a, &b, &out}) assert_ok(rig.backend->free_buffer(*buffer));
    rig.finish(program);
}

void submit_refuses_wrong_size(void**)
{
    Rig rig;
    auto program = load_add(rig);
    auto a = rig.buffer(32), b = rig.buffer(16), out = rig.buffer(16);
    std::vector<Binding> bindings = rig.bind(*program, {a.get(), b.get(), out.get()});
    bindings[0].bytes = 20;
    assert_refused(cpu_test::submit(*rig.backend, *rig.queue, *program, bindings, 0), Errc::incompatible,
                   VACCEL_D_BINDING_SIZE, 0, 16);
    for (auto* buffer : {&a, &b, &out}) assert_ok(rig.backend->free_buffer(*buffer));
    rig.finish(program);
}

void binding_at_an_offset_reads_and_writes_there(void**)
{
    Rig rig;
    auto program = load_add(rig);
    // Both inputs in one buffer, the second at an offset that is not a
    // multiple of four; the output at an offset too.
    auto inputs = rig.buffer(64);
    auto out = rig.buffer(64);
    const std::vector<float> a{1, 2, 3, 4}, b{10, 20, 30, 40};
    assert_ok(rig.backend->write_buffer(*inputs, 0, bytes_of(a)));
    assert_ok(rig.backend->write_buffer(*inputs, 21, bytes_of(b)));
    std::vector<Binding> bindings{{0, VACCEL_ACCESS_READ, inputs.get(), 0, 16},
                                  {1, VACCEL_ACCESS_READ, inputs.get(), 21, 16},
                                  {2, VACCEL_ACCESS_WRITE, out.get(), 32, 16}};
    auto event = cpu_test::submit(*rig.backend, *rig.queue, *program, bindings, 0);
    assert_ok(event);
    assert_int_equal(rig.wait(**event).state, EventState::complete);
    std::vector<float> back(4);
    assert_ok(rig.backend->read_buffer(*out, 32, std::as_writable_bytes(std::span(back))));
    assert_exactly(back, {11, 22, 33, 44});
    assert_ok(rig.backend->destroy_event(*event));
    assert_ok(rig.backend->free_buffer(inputs));
    assert_ok(rig.backend->free_buffer(out));
    rig.finish(program);
}

void event_limit_per_context_is_enforced(void**)
{
    Rig rig;
    auto program = load_tanh(rig);
    auto in = rig.buffer(16);
    std::vector<std::unique_ptr<Event>> events;
    const std::uint32_t max = rig.backend->device_info().limits.max_events;
    auto out = rig.buffer(16);
    for (std::uint32_t i = 0; i < max; ++i) {
        auto event = cpu_test::submit(*rig.backend, *rig.queue, *program,
                                         rig.bind(*program, {in.get(), out.get()}), 0);
        assert_ok(event);
        // Complete events still count until destroyed.
        rig.wait(**event);
        events.push_back(std::move(*event));
    }
    assert_refused(cpu_test::submit(*rig.backend, *rig.queue, *program, rig.bind(*program, {in.get(), out.get()}), 0),
                   Errc::resource_limit, VACCEL_D_LIMIT, max, max);
    for (auto& event : events) {
        rig.wait(*event);
        assert_ok(rig.backend->destroy_event(event));
    }
    assert_ok(rig.backend->free_buffer(in));
    assert_ok(rig.backend->free_buffer(out));
    rig.finish(program);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(device_info_describes_the_cpu),
        cmocka_unit_test(allocation_is_aligned_zeroed_and_truthful),
        cmocka_unit_test(default_alignment_is_at_least_64),
        cmocka_unit_test(device_domain_is_unsupported),
        cmocka_unit_test(write_without_transfer_dst_is_denied),
        cmocka_unit_test(read_without_transfer_src_is_denied),
        cmocka_unit_test(transfer_past_the_end_is_out_of_bounds),
        cmocka_unit_test(poll_reports_pending_then_complete),
        cmocka_unit_test(write_to_in_flight_buffer_is_busy),
        cmocka_unit_test(read_of_in_flight_output_is_busy),
        cmocka_unit_test(free_of_in_flight_buffer_is_busy_and_buffer_survives),
        cmocka_unit_test(unload_of_in_flight_program_is_busy),
        cmocka_unit_test(destroy_of_pending_event_is_busy),
        cmocka_unit_test(destroy_context_with_children_is_busy),
        cmocka_unit_test(second_writer_of_in_flight_buffer_is_busy),
        cmocka_unit_test(in_flight_input_may_be_read_by_another_submission),
        cmocka_unit_test(submissions_of_one_queue_complete_in_order),
        cmocka_unit_test(completion_sink_is_told_once_per_event),
        cmocka_unit_test(past_deadline_is_refused_at_submit),
        cmocka_unit_test(deadline_passing_in_the_queue_fails_the_event_and_writes_nothing),
        cmocka_unit_test(future_deadline_is_met),
        cmocka_unit_test(submit_refuses_slot_bound_twice),
        cmocka_unit_test(submit_refuses_written_buffer_bound_twice),
        cmocka_unit_test(submit_refuses_missing_slot),
        cmocka_unit_test(submit_refuses_wrong_size),
        cmocka_unit_test(binding_at_an_offset_reads_and_writes_there),
        cmocka_unit_test(event_limit_per_context_is_enforced),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
