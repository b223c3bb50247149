// test_session_limits.cpp - check-then-commit of context limits through a
// Session, with a policy narrowing the device's limits.
#include "test_programs.hpp"
#include "engine_support.hpp"

using namespace vaccel;
using namespace vaccel::test;

namespace {

// Grants two buffers and one program per context; everything else as the
// device offers.
class TinyPolicy final : public engine::LimitPolicy {
public:
    vaccel_device_limits limits(const engine::SessionIdentity&, std::uint32_t,
                                const vaccel_device_info& device) const override
    {
        vaccel_device_limits limits = device.limits;
        limits.max_buffers = 2;
        limits.max_programs = 1;
        limits.max_contexts = 1;
        return limits;
    }
};

engine::SessionOptions tiny()
{
    engine::SessionOptions options;
    options.policy = std::make_shared<TinyPolicy>();
    return options;
}

void third_buffer_is_refused_with_the_buffers_limit_and_counters_unchanged(void**)
{
    engine::Session session(cpu_devices(), tiny());
    const std::uint64_t context = make_context(session);
    make_buffer(session, context, 64);
    make_buffer(session, context, 32);

    vaccel_buffer_alloc third = buffer_request(context, 16);
    auto refused = call(session, VACCEL_OP_BUFFER_ALLOC, third);
    assert_refused(refused, Errc::resource_limit, VACCEL_D_LIMIT, 2, 2);
    assert_int_equal(refused.error().limit, VACCEL_LIMIT_BUFFERS);
    assert_int_equal(third.buffer, 0);

    const vaccel_context_limits after = context_limits(session, context);
    assert_int_equal(after.limits.max_buffers, 2);
    assert_int_equal(after.used_buffers, 2);
    assert_int_equal(after.used_memory_bytes, 96);
}

void buffer_alloc_works_again_after_a_free(void**)
{
    engine::Session session(cpu_devices(), tiny());
    const std::uint64_t context = make_context(session);
    const std::uint64_t first = make_buffer(session, context, 64);
    make_buffer(session, context, 64);
    vaccel_buffer_alloc refused = buffer_request(context, 64);
    assert_false(call(session, VACCEL_OP_BUFFER_ALLOC, refused).has_value());

    assert_ok(release(session, VACCEL_OP_BUFFER_FREE, first));
    vaccel_buffer_alloc again = buffer_request(context, 8);
    assert_ok(call(session, VACCEL_OP_BUFFER_ALLOC, again));
    assert_int_not_equal(again.buffer, 0);
    const vaccel_context_limits after = context_limits(session, context);
    assert_int_equal(after.used_buffers, 2);
    assert_int_equal(after.used_memory_bytes, 72);
}

void second_context_is_refused_by_the_session_contexts_limit(void**)
{
    engine::Session session(cpu_devices(), tiny());
    make_context(session);
    vaccel_context_create second{};
    auto refused = call(session, VACCEL_OP_CONTEXT_CREATE, second);
    assert_refused(refused, Errc::resource_limit, VACCEL_D_LIMIT, 1, 1);
    assert_int_equal(refused.error().limit, VACCEL_LIMIT_CONTEXTS);
}

void program_the_backend_refuses_charges_nothing(void**)
{
    engine::Session session(cpu_devices(), tiny());
    const std::uint64_t context = make_context(session);
    const std::vector<std::byte> garbage(64, std::byte{0x5a});
    vaccel_program_load load{};
    load.context = context;
    load.format = VACCEL_FORMAT_TOSA;
    load.payload_bytes = garbage.size();
    auto refused = call(session, VACCEL_OP_PROGRAM_LOAD, load, garbage);
    assert_false(refused.has_value());
    assert_int_equal(refused.error().code, Errc::invalid_argument);
    assert_int_equal(refused.error().detail, VACCEL_D_TOSA_MALFORMED);
    assert_int_equal(context_limits(session, context).used_programs, 0);

    // The one program the policy grants is still available.
    load_program(session, context, add_program(4));
    assert_int_equal(context_limits(session, context).used_programs, 1);
}

// Grants artifacts of at most 16 bytes.
class SmallArtifactPolicy final : public engine::LimitPolicy {
public:
    vaccel_device_limits limits(const engine::SessionIdentity&, std::uint32_t,
                                const vaccel_device_info& device) const override
    {
        vaccel_device_limits limits = device.limits;
        limits.max_artifact_bytes = 16;
        return limits;
    }
};

void artifact_above_the_limit_is_refused_before_the_backend(void**)
{
    engine::SessionOptions options;
    options.policy = std::make_shared<SmallArtifactPolicy>();
    engine::Session session(cpu_devices(), options);
    const std::uint64_t context = make_context(session);
    const std::vector<std::byte> artifact = add_program(4);
    vaccel_program_load load{};
    load.context = context;
    load.format = VACCEL_FORMAT_TOSA;
    load.payload_bytes = artifact.size();
    auto refused = call(session, VACCEL_OP_PROGRAM_LOAD, load, artifact);
    assert_refused(refused, Errc::resource_limit, VACCEL_D_LIMIT, 16, artifact.size());
    assert_int_equal(refused.error().limit, VACCEL_LIMIT_ARTIFACT_BYTES);
    assert_int_equal(context_limits(session, context).used_programs, 0);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(third_buffer_is_refused_with_the_buffers_limit_and_counters_unchanged),
        cmocka_unit_test(buffer_alloc_works_again_after_a_free),
        cmocka_unit_test(second_context_is_refused_by_the_session_contexts_limit),
        cmocka_unit_test(program_the_backend_refuses_charges_nothing),
        cmocka_unit_test(artifact_above_the_limit_is_refused_before_the_backend),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
