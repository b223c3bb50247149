// test_session_limits.cpp - check-then-commit of context limits through a
// Session, with a policy narrowing the device's limits.
#include <cstring>

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
    engine::Session session(cpu_devices(), std::move(options));
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

// A session of a container given device 1 of two: CONTEXT_CREATE on
// device 0 is PermissionDenied / DEVICE_NOT_GRANTED (arg0 the device, arg1
// the given devices as bits), charges nothing, and device 1 still works.
void context_on_a_device_the_container_was_not_given_is_refused(void**)
{
    std::vector<std::unique_ptr<backend::Backend>> backends;
    backends.push_back(backend::open_cpu_backend(backend::CpuOptions{1}));
    backends.push_back(backend::open_cpu_backend(backend::CpuOptions{1}));
    auto devices = std::make_shared<engine::DeviceManager>(std::move(backends));
    engine::SessionOptions options;
    options.identity.container = "0123456789abcdef";
    options.identity.devices = std::vector<std::uint32_t>{1};
    engine::Session session(devices, std::move(options));

    vaccel_context_create refused{};
    refused.device = 0;
    auto status = call(session, VACCEL_OP_CONTEXT_CREATE, refused);
    assert_refused(status, Errc::permission_denied, VACCEL_D_DEVICE_NOT_GRANTED, 0, 0b10);
    assert_int_equal(refused.context, 0);
    assert_non_null(std::strstr(describe(status.error()).c_str(),
                                "device 0 was not given to this session's container (it was "
                                "given device 1); start the container with --device "
                                "vaccel.dev/accel=0 (or =all)"));
    assert_int_equal(devices->device(0)->stats().live.contexts, 0);
    make_context(session, 1);

    // A session with no device list (not a container's, or given all) opens both.
    engine::Session everyone(devices, engine::SessionOptions{});
    make_context(everyone, 0);
    make_context(everyone, 1);
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
        cmocka_unit_test(context_on_a_device_the_container_was_not_given_is_refused),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
