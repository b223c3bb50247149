// test_session_runs.cpp - RUN's daemon seams (begin_run, run_done,
// finish_run) and BUFFER_MAP's (buffer_mapping) on a real CPU backend:
// a ticket is no handle the client can name, it is released by its finish
// or by the session's teardown, and a mapping is the buffer's memory.
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <optional>

#include "test_programs.hpp"
#include "engine_support.hpp"

using namespace vaccel;
using namespace vaccel::test;

namespace {

struct AddRun {
    std::uint64_t context = 0, a = 0, b = 0, c = 0, program = 0, queue = 0;
};

AddRun add_run(engine::Session& session)
{
    AddRun run;
    run.context = make_context(session);
    run.a = make_buffer(session, run.context, 16);
    run.b = make_buffer(session, run.context, 16);
    run.c = make_buffer(session, run.context, 16);
    run.program = load_program(session, run.context, add_program(4));
    vaccel_queue_create queue{};
    queue.context = run.context;
    assert_ok(call(session, VACCEL_OP_QUEUE_CREATE, queue));
    run.queue = queue.queue;
    return run;
}

std::vector<vaccel_binding> bindings_of(const AddRun& run)
{
    return {{0, VACCEL_ACCESS_READ, run.a, 0, 16},
            {1, VACCEL_ACCESS_READ, run.b, 0, 16},
            {2, VACCEL_ACCESS_WRITE, run.c, 0, 16}};
}

vaccel_run run_args(const AddRun& run)
{
    vaccel_run args{};
    args.queue = run.queue;
    args.program = run.program;
    args.binding_count = 3;
    return args;
}

void wait_until_done(engine::Session& session, std::uint64_t ticket)
{
    auto waiter = std::make_shared<engine::SleepingWaiter>();
    for (;;) {
        auto done = session.run_done(ticket, waiter);
        assert_true(done.has_value());
        if (*done)
            return;
        waiter->sleep(std::nullopt);
    }
}

void ticket_is_no_client_handle_and_finish_releases_it(void**)
{
    engine::Session session(cpu_devices());
    AddRun run = add_run(session);
    const auto bindings = bindings_of(run);
    vaccel_run args = run_args(run);
    std::uint64_t ticket = 0;
    auto bytes = std::as_writable_bytes(std::span(&args, 1));
    assert_ok(session.begin_run(bytes, std::as_bytes(std::span(bindings)), ticket));
    assert_true(ticket != 0);
    // The client's event ops do not know it.
    vaccel_event_poll poll{};
    poll.event = ticket;
    assert_refused(call(session, VACCEL_OP_EVENT_POLL, poll), Errc::invalid_argument,
                   VACCEL_D_UNKNOWN_HANDLE, ticket, 0);
    assert_refused(release(session, VACCEL_OP_EVENT_DESTROY, ticket), Errc::invalid_argument,
                   VACCEL_D_UNKNOWN_HANDLE, ticket, 0);
    vaccel_event_wait wait{};
    wait.count = 1;
    assert_refused(call(session, VACCEL_OP_EVENT_WAIT, wait, std::as_bytes(std::span(&ticket, 1))),
                   Errc::invalid_argument, VACCEL_D_UNKNOWN_HANDLE, ticket, 0);
    // While it runs it is one event of the context.
    wait_until_done(session, ticket);
    assert_int_equal(context_limits(session, run.context).used_events, 1);
    assert_ok(session.finish_run(ticket, bytes));
    assert_int_equal(args.state, VACCEL_EVENT_COMPLETE);
    assert_int_equal(args.failure.error, VACCEL_OK);
    assert_int_equal(context_limits(session, run.context).used_events, 0);
    // Finished once: the ticket is gone.
    assert_refused(session.finish_run(ticket, bytes), Errc::invalid_argument,
                   VACCEL_D_UNKNOWN_HANDLE, ticket, 0);
}

void refused_begin_makes_no_ticket(void**)
{
    engine::Session session(cpu_devices());
    AddRun run = add_run(session);
    auto bindings = bindings_of(run);
    bindings[1].slot = 0;  // slot 0 twice
    vaccel_run args = run_args(run);
    std::uint64_t ticket = 77;
    auto bytes = std::as_writable_bytes(std::span(&args, 1));
    assert_refused(session.begin_run(bytes, std::as_bytes(std::span(bindings)), ticket),
                   Errc::invalid_argument, VACCEL_D_BINDING_DUPLICATE, 1, 0);
    assert_int_equal(ticket, 0);
    assert_int_equal(context_limits(session, run.context).used_events, 0);
    assert_int_equal(session.stats().errors, 1);
}

void teardown_releases_an_unfinished_ticket(void**)
{
    auto devices = cpu_devices();
    {
        engine::Session session(devices);
        AddRun run = add_run(session);
        const auto bindings = bindings_of(run);
        vaccel_run args = run_args(run);
        std::uint64_t ticket = 0;
        assert_ok(session.begin_run(std::as_writable_bytes(std::span(&args, 1)),
                                    std::as_bytes(std::span(bindings)), ticket));
    }  // the client went away mid-run
    const backend::LiveCounters live = devices->device(0)->live();
    assert_int_equal(live.events, 0);
    assert_int_equal(live.buffers, 0);
    assert_int_equal(live.contexts, 0);
}

void mapping_is_the_buffers_memory_in_a_shareable_file(void**)
{
    engine::Session session(cpu_devices());
    AddRun run = add_run(session);
    const float one[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    vaccel_buffer_transfer write{};
    write.buffer = run.a;
    write.length = sizeof one;
    assert_ok(call(session, VACCEL_OP_BUFFER_WRITE, write, std::as_bytes(std::span(one))));
    auto mapping = session.buffer_mapping(run.a);
    assert_true(mapping.has_value());
    assert_true(mapping->fd >= 0);
    assert_int_equal(mapping->bytes, 16);
    assert_int_equal(mapping->offset, 0);
    // The bytes moved with the buffer, and the file holds the same pages.
    assert_memory_equal(mapping->address, one, sizeof one);
    const long page = sysconf(_SC_PAGESIZE);
    void* other = mmap(nullptr, static_cast<std::size_t>(page), PROT_READ | PROT_WRITE, MAP_SHARED,
                       mapping->fd, 0);
    assert_true(other != MAP_FAILED);
    static_cast<float*>(other)[0] = 9.0f;
    float back[4] = {};
    vaccel_buffer_transfer read{};
    read.buffer = run.a;
    read.length = sizeof back;
    assert_ok(call(session, VACCEL_OP_BUFFER_READ, read, {}, std::as_writable_bytes(std::span(back))));
    assert_true(back[0] == 9.0f && back[3] == 4.0f);
    munmap(other, static_cast<std::size_t>(page));
    close(mapping->fd);
    // A second mapping is the same memory.
    auto again = session.buffer_mapping(run.a);
    assert_true(again.has_value());
    assert_ptr_equal(again->address, mapping->address);
    close(again->fd);
    assert_refused(session.buffer_mapping(0x4242), Errc::invalid_argument, VACCEL_D_UNKNOWN_HANDLE,
                   0x4242, 0);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ticket_is_no_client_handle_and_finish_releases_it),
        cmocka_unit_test(refused_begin_makes_no_ticket),
        cmocka_unit_test(teardown_releases_an_unfinished_ticket),
        cmocka_unit_test(mapping_is_the_buffers_memory_in_a_shareable_file),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
