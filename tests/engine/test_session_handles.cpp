// test_session_handles.cpp - handles are per session, die with their object,
// name one kind, and a context outlives no refusal.
#include "test_programs.hpp"
#include "engine_support.hpp"

using namespace vaccel;
using namespace vaccel::test;

namespace {

void context_of_another_session_is_an_unknown_handle(void**)
{
    auto devices = cpu_devices();
    engine::Session owner(devices);
    engine::Session other(devices);
    const std::uint64_t context = make_context(owner);

    vaccel_buffer_alloc alloc = buffer_request(context, 64);
    assert_refused(call(other, VACCEL_OP_BUFFER_ALLOC, alloc), Errc::invalid_argument,
                   VACCEL_D_UNKNOWN_HANDLE, context, 0);
    assert_refused(release(other, VACCEL_OP_CONTEXT_DESTROY, context), Errc::invalid_argument,
                   VACCEL_D_UNKNOWN_HANDLE, context, 0);
    // Still alive and usable where it was made.
    make_buffer(owner, context, 64);
}

void freed_buffer_handle_is_unknown(void**)
{
    engine::Session session(cpu_devices());
    const std::uint64_t context = make_context(session);
    const std::uint64_t buffer = make_buffer(session, context, 16);
    assert_ok(release(session, VACCEL_OP_BUFFER_FREE, buffer));

    assert_refused(release(session, VACCEL_OP_BUFFER_FREE, buffer), Errc::invalid_argument,
                   VACCEL_D_UNKNOWN_HANDLE, buffer, 0);
    std::vector<std::byte> data(16);
    vaccel_buffer_transfer write{};
    write.buffer = buffer;
    write.length = data.size();
    assert_refused(call(session, VACCEL_OP_BUFFER_WRITE, write, data), Errc::invalid_argument,
                   VACCEL_D_UNKNOWN_HANDLE, buffer, 0);
    // A new buffer never reuses the stale handle.
    assert_int_not_equal(make_buffer(session, context, 16), buffer);
}

void buffer_handle_given_as_context_is_the_wrong_kind(void**)
{
    engine::Session session(cpu_devices());
    const std::uint64_t context = make_context(session);
    const std::uint64_t buffer = make_buffer(session, context, 16);
    assert_refused(release(session, VACCEL_OP_CONTEXT_DESTROY, buffer), Errc::invalid_argument,
                   VACCEL_D_WRONG_HANDLE_KIND, buffer, 0);
}

void context_destroy_with_children_is_busy_and_the_context_still_works(void**)
{
    engine::Session session(cpu_devices());
    const std::uint64_t context = make_context(session);
    const std::uint64_t buffer = make_buffer(session, context, 16);
    const std::uint64_t program = load_program(session, context, add_program(4));
    vaccel_queue_create queue{};
    queue.context = context;
    assert_ok(call(session, VACCEL_OP_QUEUE_CREATE, queue));

    assert_refused(release(session, VACCEL_OP_CONTEXT_DESTROY, context), Errc::busy,
                   VACCEL_D_IN_USE, 3, 0);
    // The refusal left it alive: it still takes new children.
    const std::uint64_t second = make_buffer(session, context, 16);
    assert_refused(release(session, VACCEL_OP_CONTEXT_DESTROY, context), Errc::busy,
                   VACCEL_D_IN_USE, 4, 0);

    assert_ok(release(session, VACCEL_OP_BUFFER_FREE, buffer));
    assert_ok(release(session, VACCEL_OP_BUFFER_FREE, second));
    assert_ok(release(session, VACCEL_OP_PROGRAM_UNLOAD, program));
    assert_ok(release(session, VACCEL_OP_QUEUE_DESTROY, queue.queue));
    assert_ok(release(session, VACCEL_OP_CONTEXT_DESTROY, context));
    assert_int_equal(session.object_count(), 0);
}

void buffer_of_another_context_cannot_be_bound(void**)
{
    engine::Session session(cpu_devices());
    const std::uint64_t context = make_context(session);
    const std::uint64_t elsewhere = make_context(session);
    const std::uint64_t a = make_buffer(session, context, 16);
    const std::uint64_t b = make_buffer(session, elsewhere, 16);
    const std::uint64_t c = make_buffer(session, context, 16);
    const std::uint64_t program = load_program(session, context, add_program(4));
    vaccel_queue_create queue{};
    queue.context = context;
    assert_ok(call(session, VACCEL_OP_QUEUE_CREATE, queue));

    const vaccel_binding bindings[3] = {
        {0, VACCEL_ACCESS_READ, a, 0, 16},
        {1, VACCEL_ACCESS_READ, b, 0, 16},
        {2, VACCEL_ACCESS_WRITE, c, 0, 16},
    };
    vaccel_submit submit{};
    submit.queue = queue.queue;
    submit.program = program;
    submit.binding_count = 3;
    assert_refused(call(session, VACCEL_OP_SUBMIT, submit, std::as_bytes(std::span(bindings))),
                   Errc::incompatible, VACCEL_D_BINDING_CONTEXT, 1, 0);
    assert_int_equal(context_limits(session, context).used_events, 0);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(context_of_another_session_is_an_unknown_handle),
        cmocka_unit_test(freed_buffer_handle_is_unknown),
        cmocka_unit_test(buffer_handle_given_as_context_is_the_wrong_kind),
        cmocka_unit_test(context_destroy_with_children_is_busy_and_the_context_still_works),
        cmocka_unit_test(buffer_of_another_context_cannot_be_bound),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
