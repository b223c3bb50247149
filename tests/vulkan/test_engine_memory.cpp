// test_engine_memory.cpp - a program's device memory counts against the
// client's memory limit (userspace/engine/src/program_ops.cpp), through a
// Session over the Vulkan device on lavapipe (the CPU's programs hold no
// device memory of their own): a program whose arena is past what the limit
// has left is refused before it is allocated; one that fits is charged, so
// buffers then find less room; unloading gives the bytes back.
#include "vaccel/backend/vulkan.hpp"
#include "vaccel/tosa/builder.hpp"
#include "vaccel/tosa/graph.hpp"
#include "../engine/engine_support.hpp"

using namespace vaccel;
using namespace vaccel::test;

namespace {

constexpr std::uint64_t memory_limit = 64 * 1024;

class SmallMemory final : public engine::LimitPolicy {
public:
    vaccel_device_limits limits(const engine::SessionIdentity&, std::uint32_t,
                                const vaccel_device_info& device) const override
    {
        vaccel_device_limits limits = device.limits;
        limits.max_memory_bytes = memory_limit;
        return limits;
    }
};

std::shared_ptr<engine::DeviceManager> lavapipe_devices()
{
    backend::VulkanDevices found = backend::open_vulkan_devices();
    if (found.devices.size() != 1) fail_msg("expected lavapipe alone: %s", found.unavailable.c_str());
    return std::make_shared<engine::DeviceManager>(std::move(found.devices));
}

// out = (x + x) + (x + x) over n FP32 values: x + x lives in the arena (4n bytes).
std::vector<std::byte> two_adds(std::int64_t n)
{
    tosa::GraphBuilder g;
    const auto x = g.tensor("x", {n}, tosa::DType::fp32);
    const auto twice = g.tensor("twice", {n}, tosa::DType::fp32);
    const auto out = g.tensor("out", {n}, tosa::DType::fp32);
    g.op(tosa::Op::add, {x, x}, {twice});
    // `twice` is read twice, so no epilogue folds it away: it stays in the arena.
    g.op(tosa::Op::add, {twice, twice}, {out});
    g.input(x);
    g.output(out);
    const auto bytes = tosa::serialize(g.finish());
    return std::vector<std::byte>(reinterpret_cast<const std::byte*>(bytes.data()),
                                  reinterpret_cast<const std::byte*>(bytes.data()) + bytes.size());
}

void a_programs_arena_counts_against_the_memory_limit(void**)
{
    engine::SessionOptions options;
    options.policy = std::make_shared<SmallMemory>();
    engine::Session session(lavapipe_devices(), std::move(options));
    const std::uint64_t context = make_context(session);

    // 128 KiB of arena against a 64 KiB limit: refused, nothing charged.
    const auto big = two_adds(32768);
    vaccel_program_load load{};
    load.context = context;
    load.format = VACCEL_FORMAT_TOSA;
    load.payload_bytes = big.size();
    auto refused = call(session, VACCEL_OP_PROGRAM_LOAD, load, big);
    assert_refused(refused, Errc::resource_limit, VACCEL_D_LIMIT, memory_limit, 32768 * 4);
    assert_int_equal(refused.error().limit, VACCEL_LIMIT_MEMORY_BYTES);
    assert_int_equal(context_limits(session, context).used_memory_bytes, 0);

    // 16 KiB fits and is charged: a 60 KiB buffer no longer does.
    const std::uint64_t program = load_program(session, context, two_adds(4096));
    const std::uint64_t charged = context_limits(session, context).used_memory_bytes;
    assert_true(charged >= 4096 * 4 && charged <= 4096 * 4 + 256);
    vaccel_buffer_alloc buffer = buffer_request(context, 60 * 1024);
    auto no_room = call(session, VACCEL_OP_BUFFER_ALLOC, buffer);
    assert_false(no_room.has_value());
    assert_int_equal(no_room.error().limit, VACCEL_LIMIT_MEMORY_BYTES);

    // Unloading gives the bytes back.
    assert_ok(release(session, VACCEL_OP_PROGRAM_UNLOAD, program));
    assert_int_equal(context_limits(session, context).used_memory_bytes, 0);
    make_buffer(session, context, 60 * 1024);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_programs_arena_counts_against_the_memory_limit),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
