// test_session_requests.cpp - malformed requests are refused before any
// handler runs, with the detail that names the fault.
#include <cstddef>

#include "engine_support.hpp"

using namespace vaccel;
using namespace vaccel::test;

namespace {

void nonzero_pad_is_refused_with_its_offset(void**)
{
    engine::Session session(cpu_devices());
    vaccel_queue_create queue{};
    queue.context = make_context(session);
    queue.pad = 1;
    assert_refused(call(session, VACCEL_OP_QUEUE_CREATE, queue), Errc::invalid_argument,
                   VACCEL_D_RESERVED_NONZERO, offsetof(vaccel_queue_create, pad), 0);
    assert_int_equal(queue.queue, 0);
}

void unknown_flags_are_refused_with_the_bits(void**)
{
    engine::Session session(cpu_devices());
    vaccel_context_create create{};
    create.flags = 0x4;
    assert_refused(call(session, VACCEL_OP_CONTEXT_CREATE, create), Errc::invalid_argument,
                   VACCEL_D_UNKNOWN_FLAGS, 0x4, 0);
    assert_int_equal(session.object_count(), 0);
}

void wrong_struct_size_is_refused_with_both_sizes(void**)
{
    engine::Session session(cpu_devices());
    std::byte args[sizeof(vaccel_context_create) + 8] = {};
    assert_refused(session.call(VACCEL_OP_CONTEXT_CREATE, args, {}, {}), Errc::invalid_argument,
                   VACCEL_D_BAD_SIZE, sizeof args, sizeof(vaccel_context_create));
}

void nonzero_status_on_entry_is_refused(void**)
{
    engine::Session session(cpu_devices());
    vaccel_device_count count{};
    count.status.arg1 = 7;
    assert_refused(call(session, VACCEL_OP_DEVICE_COUNT, count), Errc::invalid_argument,
                   VACCEL_D_RESERVED_NONZERO, offsetof(vaccel_status, arg1), 0);
}

void user_pointer_on_the_wire_is_refused(void**)
{
    engine::Session session(cpu_devices());
    const std::uint64_t context = make_context(session);
    const std::uint64_t buffer = make_buffer(session, context, 8);
    std::byte data[8] = {};
    vaccel_buffer_transfer write{};
    write.buffer = buffer;
    write.length = sizeof data;
    write.data = reinterpret_cast<std::uintptr_t>(data);
    assert_refused(call(session, VACCEL_OP_BUFFER_WRITE, write, data), Errc::invalid_argument,
                   VACCEL_D_RESERVED_NONZERO, offsetof(vaccel_buffer_transfer, data), 0);
}

void payload_shorter_than_announced_is_refused(void**)
{
    engine::Session session(cpu_devices());
    const std::uint64_t context = make_context(session);
    const std::uint64_t buffer = make_buffer(session, context, 16);
    std::byte data[8] = {};
    vaccel_buffer_transfer write{};
    write.buffer = buffer;
    write.length = 16;
    assert_refused(call(session, VACCEL_OP_BUFFER_WRITE, write, data), Errc::invalid_argument,
                   VACCEL_D_BAD_SIZE, 8, 16);
}

void unknown_opcode_is_refused(void**)
{
    engine::Session session(cpu_devices());
    std::byte args[sizeof(vaccel_status)] = {};
    assert_refused(session.call(VACCEL_OP_COUNT, args, {}, {}), Errc::invalid_argument,
                   VACCEL_D_UNKNOWN_OPCODE, VACCEL_OP_COUNT, 0);
}

void device_index_past_the_end_names_index_and_count(void**)
{
    engine::Session session(cpu_devices());
    vaccel_context_create create{};
    create.device = 5;
    assert_refused(call(session, VACCEL_OP_CONTEXT_CREATE, create), Errc::invalid_argument,
                   VACCEL_D_NO_DEVICE, 5, 1);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nonzero_pad_is_refused_with_its_offset),
        cmocka_unit_test(unknown_flags_are_refused_with_the_bits),
        cmocka_unit_test(wrong_struct_size_is_refused_with_both_sizes),
        cmocka_unit_test(nonzero_status_on_entry_is_refused),
        cmocka_unit_test(user_pointer_on_the_wire_is_refused),
        cmocka_unit_test(payload_shorter_than_announced_is_refused),
        cmocka_unit_test(unknown_opcode_is_refused),
        cmocka_unit_test(device_index_past_the_end_names_index_and_count),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
