// test_cpp_api.cpp - the RAII layer of vaccel.hpp: objects release
// themselves, calls return Expected values carrying the contract status.
#include <array>
#include <cerrno>
#include <cstring>
#include <string>

#include "test_programs.hpp"
#include "vaccel/vaccel.hpp"
#include "lib_support.hpp"

using namespace vaccel::test;

namespace {

void raii_objects_run_an_add_and_release_everything(void**)
{
    auto client = vaccel::Client::open();
    assert_true(client.has_value());
    uint64_t context_handle = 0;
    {
        auto context = client->create_context(0);
        assert_true(context.has_value());
        context_handle = context->handle();
        auto a = context->alloc_buffer({.bytes = 16});
        auto b = context->alloc_buffer({.bytes = 16});
        auto c = context->alloc_buffer({.bytes = 16});
        assert_true(a && b && c);
        const std::array<float, 4> in_a = {1.5f, 2.5f, -3.0f, 0.0f};
        const std::array<float, 4> in_b = {0.5f, 0.5f, 3.0f, 8.0f};
        assert_true(a->write(0, std::as_bytes(std::span(in_a))).has_value());
        assert_true(b->write(0, std::as_bytes(std::span(in_b))).has_value());
        const auto artifact = add_program(4);
        auto program = context->load_program(VACCEL_FORMAT_TOSA, artifact);
        assert_true(program.has_value());
        assert_int_equal(program->input_count(), 2);
        assert_int_equal(program->output_count(), 1);
        auto queue = context->create_queue();
        assert_true(queue.has_value());
        const std::array<vaccel_binding, 3> bindings = {
            a->bind(0, VACCEL_ACCESS_READ), b->bind(1, VACCEL_ACCESS_READ),
            c->bind(2, VACCEL_ACCESS_WRITE)};
        auto event = queue->submit(*program, bindings);
        assert_true(event.has_value());
        assert_true(event->wait(vaccel_deadline_after_ns(60ull * 1000000000ull)).has_value());
        std::array<float, 4> out = {};
        assert_true(c->read(0, std::as_writable_bytes(std::span(out))).has_value());
        const std::array<float, 4> expected = {2.0f, 3.0f, 0.0f, 8.0f};
        assert_memory_equal(out.data(), expected.data(), sizeof out);
        // Leaving the scope releases event, queue, program, buffers, context
        // (reverse order of declaration).
    }
    auto gone = client->create_context(0);
    assert_true(gone.has_value());
    // The released context's handle is unknown now.
    assert_int_equal(vaccel_context_destroy(client->get(), context_handle), -EINVAL);
    assert_int_equal(vaccel_last_status()->detail, VACCEL_D_UNKNOWN_HANDLE);
}

void refused_call_carries_code_status_and_message(void**)
{
    auto client = vaccel::Client::open();
    assert_true(client.has_value());
    auto refused = client->create_context(1000);
    assert_false(refused.has_value());
    assert_int_equal(refused.error().code, -EINVAL);
    assert_int_equal(refused.error().status.error, VACCEL_E_INVALID_ARGUMENT);
    assert_int_equal(refused.error().status.detail, VACCEL_D_NO_DEVICE);
    assert_int_equal(refused.error().status.arg0, 1000);
    assert_false(refused.error().message.empty());
}

void explicit_release_reports_busy_and_keeps_the_context(void**)
{
    auto client = vaccel::Client::open();
    auto context = client->create_context(0);
    assert_true(context.has_value());
    auto buffer = context->alloc_buffer({.bytes = 8});
    assert_true(buffer.has_value());
    auto busy = context->release();
    assert_false(busy.has_value());
    assert_int_equal(busy.error().code, -EBUSY);
    assert_int_equal(busy.error().status.arg0, 1);
    assert_true(static_cast<bool>(*context));
    assert_true(buffer->release().has_value());
    assert_true(context->release().has_value());
    assert_false(static_cast<bool>(*context));
}

void admin_over_embedded_is_an_unsupported_client_error(void**)
{
    auto client = vaccel::Client::open(VACCEL_TRANSPORT_EMBEDDED);
    assert_true(client.has_value());
    auto answer = client->admin(VACCEL_ADMIN_METRICS);
    assert_false(answer.has_value());
    assert_int_equal(answer.error().code, -EOPNOTSUPP);
    assert_int_equal(answer.error().status.error, VACCEL_E_UNSUPPORTED);
    if (answer.error().message.find("needs the daemon") == std::string::npos)
        fail_msg("unexpected message: \"%s\"", answer.error().message.c_str());
}

void device_tosa_all_lists_every_descriptor_and_refuses_an_unknown_device(void**)
{
    auto client = vaccel::Client::open(VACCEL_TRANSPORT_EMBEDDED);
    assert_true(client.has_value());
    auto count = client->device_count();
    assert_true(count.has_value());
    std::uint32_t cpus = 0;
    for (std::uint32_t device = 0; device < *count; ++device) {
        auto all = client->device_tosa_all(device);
        assert_true(all.has_value());
        for (std::uint32_t i = 0; i < all->size(); ++i) {
            assert_int_equal((*all)[i].descriptor_count, all->size());
            auto one = client->device_tosa(device, i);
            assert_true(one.has_value());
            assert_memory_equal(&*one, &(*all)[i], sizeof *one);
        }
        auto info = client->device_info(device);
        assert_true(info.has_value());
        if (std::string(info->driver) != "vaccel-cpu") continue;
        // A CPU: one descriptor, ADD (Op 15) in it.
        ++cpus;
        assert_int_equal(all->size(), 1);
        assert_int_equal((*all)[0].operators[15].present, 1);
    }
    assert_true(cpus >= 1);
    auto none = client->device_tosa_all(*count);
    assert_false(none.has_value());
    assert_int_equal(none.error().code, -EINVAL);
    assert_int_equal(none.error().status.detail, VACCEL_D_NO_DEVICE);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(raii_objects_run_an_add_and_release_everything),
        cmocka_unit_test(refused_call_carries_code_status_and_message),
        cmocka_unit_test(explicit_release_reports_busy_and_keeps_the_context),
        cmocka_unit_test(admin_over_embedded_is_an_unsupported_client_error),
        cmocka_unit_test(device_tosa_all_lists_every_descriptor_and_refuses_an_unknown_device),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
