// test_session_work.cpp - submissions through a Session: results, waits and
// the teardown of a session with work in flight.
#include <atomic>
#include <cstring>
#include <memory>

#include "test_programs.hpp"
#include "engine_support.hpp"

using namespace vaccel;
using namespace vaccel::test;

namespace {

struct Run {
    std::uint64_t context, a, b, c, program, queue;
};

Run prepare(engine::Session& session, const std::vector<std::byte>& artifact, std::uint64_t bytes)
{
    Run run{};
    run.context = make_context(session);
    run.a = make_buffer(session, run.context, bytes);
    run.b = make_buffer(session, run.context, bytes);
    run.c = make_buffer(session, run.context, bytes);
    run.program = load_program(session, run.context, artifact);
    vaccel_queue_create queue{};
    queue.context = run.context;
    assert_ok(call(session, VACCEL_OP_QUEUE_CREATE, queue));
    run.queue = queue.queue;
    return run;
}

std::uint64_t submit(engine::Session& session, const Run& run, std::uint64_t bytes)
{
    const vaccel_binding bindings[3] = {
        {0, VACCEL_ACCESS_READ, run.a, 0, bytes},
        {1, VACCEL_ACCESS_READ, run.b, 0, bytes},
        {2, VACCEL_ACCESS_WRITE, run.c, 0, bytes},
    };
    vaccel_submit args{};
    args.queue = run.queue;
    args.program = run.program;
    args.binding_count = 3;
    assert_ok(call(session, VACCEL_OP_SUBMIT, args, std::as_bytes(std::span(bindings))));
    return args.event;
}

// A gate of the run's context.
std::uint64_t make_gate(engine::Session& session, const Run& run)
{
    vaccel_gate_create gate{};
    gate.context = run.context;
    assert_ok(call(session, VACCEL_OP_GATE_CREATE, gate));
    return gate.gate;
}

// submit() held by `gate` until it reaches `value`.
std::uint64_t submit_after(engine::Session& session, const Run& run, std::uint64_t bytes,
                           std::uint64_t gate, std::uint64_t value)
{
    const vaccel_binding bindings[3] = {
        {0, VACCEL_ACCESS_READ, run.a, 0, bytes},
        {1, VACCEL_ACCESS_READ, run.b, 0, bytes},
        {2, VACCEL_ACCESS_WRITE, run.c, 0, bytes},
    };
    vaccel_submit_after args{};
    args.queue = run.queue;
    args.program = run.program;
    args.binding_count = 3;
    args.gate = gate;
    args.value = value;
    assert_ok(call(session, VACCEL_OP_SUBMIT_AFTER, args, std::as_bytes(std::span(bindings))));
    return args.event;
}

void write_floats(engine::Session& session, std::uint64_t buffer, std::span<const float> values)
{
    vaccel_buffer_transfer write{};
    write.buffer = buffer;
    write.length = values.size_bytes();
    assert_ok(call(session, VACCEL_OP_BUFFER_WRITE, write, std::as_bytes(values)));
}

void add_result_is_read_back_after_wait(void**)
{
    engine::Session session(cpu_devices());
    const Run run = prepare(session, add_program(4), 16);
    const float a[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    const float b[4] = {10.0f, 20.0f, 30.0f, -4.0f};
    write_floats(session, run.a, a);
    write_floats(session, run.b, b);
    const std::uint64_t event = submit(session, run, 16);

    vaccel_event_wait wait{};
    wait.count = 1;
    wait.flags = VACCEL_WAIT_ALL;
    wait.timeout_ns = UINT64_MAX;
    assert_ok(call(session, VACCEL_OP_EVENT_WAIT, wait, std::as_bytes(std::span(&event, 1))));
    assert_int_equal(wait.done_count, 1);
    assert_int_equal(wait.first_done, 0);

    vaccel_event_poll poll{};
    poll.event = event;
    assert_ok(call(session, VACCEL_OP_EVENT_POLL, poll));
    assert_int_equal(poll.state, VACCEL_EVENT_COMPLETE);

    float c[4] = {};
    vaccel_buffer_transfer read{};
    read.buffer = run.c;
    read.length = sizeof c;
    assert_ok(call(session, VACCEL_OP_BUFFER_READ, read, {},
                   std::as_writable_bytes(std::span(c))));
    const float expected[4] = {11.0f, 22.0f, 33.0f, 0.0f};
    assert_memory_equal(c, expected, sizeof c);
}

void queue_with_a_live_event_is_busy_until_the_event_is_destroyed(void**)
{
    engine::Session session(cpu_devices());
    const Run run = prepare(session, add_program(4), 16);
    const std::uint64_t event = submit(session, run, 16);
    assert_refused(release(session, VACCEL_OP_QUEUE_DESTROY, run.queue), Errc::busy,
                   VACCEL_D_IN_USE, 1, 0);

    vaccel_event_wait wait{};
    wait.count = 1;
    wait.timeout_ns = UINT64_MAX;
    assert_ok(call(session, VACCEL_OP_EVENT_WAIT, wait, std::as_bytes(std::span(&event, 1))));
    assert_ok(release(session, VACCEL_OP_EVENT_DESTROY, event));
    assert_int_equal(context_limits(session, run.context).used_events, 0);
    assert_ok(release(session, VACCEL_OP_QUEUE_DESTROY, run.queue));
}

void session_teardown_with_work_in_flight_leaves_no_backend_object(void**)
{
    auto devices = cpu_devices();
    {
        engine::Session session(devices);
        constexpr std::int64_t n = 384;
        constexpr std::uint64_t bytes = n * n * sizeof(float);
        const Run run = prepare(session, matmul_program(n), bytes);
        submit(session, run, bytes);
        const backend::LiveCounters during = devices->device(0)->live();
        assert_int_equal(during.contexts, 1);
        assert_int_equal(during.buffers, 3);
        assert_int_equal(during.events, 1);
        // The session ends here with the submission possibly in flight.
    }
    const backend::LiveCounters after = devices->device(0)->live();
    assert_int_equal(after.contexts, 0);
    assert_int_equal(after.buffers, 0);
    assert_int_equal(after.buffer_bytes, 0);
    assert_int_equal(after.programs, 0);
    assert_int_equal(after.queues, 0);
    assert_int_equal(after.events, 0);
    assert_int_equal(after.events_in_flight, 0);
}

void write_to_a_buffer_in_flight_is_busy_naming_its_handle(void**)
{
    engine::Session session(cpu_devices());
    const Run run = prepare(session, add_program(4), 16);
    const std::uint64_t gate = make_gate(session, run);
    const std::uint64_t event = submit_after(session, run, 16, gate, 1);
    const float data[4] = {};
    vaccel_buffer_transfer write{};
    write.buffer = run.c;
    write.length = sizeof data;
    // Held by the gate: certainly in flight. The refusal names the client's
    // handle, never anything of the backend's.
    assert_refused(call(session, VACCEL_OP_BUFFER_WRITE, write, std::as_bytes(std::span(data))),
                   Errc::busy, VACCEL_D_IN_FLIGHT, run.c, 1);
    vaccel_handle_release destroy{};
    destroy.handle = event;
    assert_refused(call(session, VACCEL_OP_EVENT_DESTROY, destroy), Errc::busy,
                   VACCEL_D_NOT_COMPLETE, event, 0);
    vaccel_gate_value raise{};
    raise.gate = gate;
    raise.value = 1;
    assert_ok(call(session, VACCEL_OP_GATE_RAISE, raise));
    vaccel_event_wait wait{};
    wait.count = 1;
    wait.flags = VACCEL_WAIT_ALL;
    wait.timeout_ns = ~0ull;
    assert_ok(call(session, VACCEL_OP_EVENT_WAIT, wait, std::as_bytes(std::span(&event, 1))));
    assert_ok(call(session, VACCEL_OP_BUFFER_WRITE, write, std::as_bytes(std::span(data))));
}

// Counts wakes (from backend threads).
struct Counting final : engine::Waiter {
    void wake() noexcept override { woken.fetch_add(1); }
    std::atomic<int> woken{0};
};

void session_teardown_cancels_gated_work_and_releases_everything(void**)
{
    auto devices = cpu_devices();
    auto heard = std::make_shared<Counting>();
    {
        engine::Session session(devices);
        session.set_completion_listener(heard);
        const Run run = prepare(session, add_program(4), 16);
        const std::uint64_t gate = make_gate(session, run);
        submit_after(session, run, 16, gate, 1);
        const backend::LiveCounters during = devices->device(0)->live();
        assert_int_equal(during.gates, 1);
        assert_int_equal(during.events_in_flight, 1);
        // The session ends with its work waiting on a gate nobody raises:
        // teardown cancels it instead of waiting forever.
    }
    assert_int_equal(heard->woken.load(), 1);
    const backend::LiveCounters after = devices->device(0)->live();
    assert_int_equal(after.contexts, 0);
    assert_int_equal(after.buffers, 0);
    assert_int_equal(after.gates, 0);
    assert_int_equal(after.queues, 0);
    assert_int_equal(after.events, 0);
    assert_int_equal(after.events_in_flight, 0);
}

void wait_on_an_unknown_event_is_refused(void**)
{
    engine::Session session(cpu_devices());
    const std::uint64_t bogus = 0x1234;
    vaccel_event_wait wait{};
    wait.count = 1;
    assert_refused(call(session, VACCEL_OP_EVENT_WAIT, wait, std::as_bytes(std::span(&bogus, 1))),
                   Errc::invalid_argument, VACCEL_D_UNKNOWN_HANDLE, bogus, 0);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(add_result_is_read_back_after_wait),
        cmocka_unit_test(queue_with_a_live_event_is_busy_until_the_event_is_destroyed),
        cmocka_unit_test(session_teardown_with_work_in_flight_leaves_no_backend_object),
        cmocka_unit_test(write_to_a_buffer_in_flight_is_busy_naming_its_handle),
        cmocka_unit_test(session_teardown_cancels_gated_work_and_releases_everything),
        cmocka_unit_test(wait_on_an_unknown_event_is_refused),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
