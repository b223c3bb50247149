// test_session_descriptors.cpp - VACCEL_OP_DEVICE_TOSA through a session.
//
// Specifies: a device's descriptors come back in the backend's order with
// the device's count filled in, and an unknown device or descriptor index is
// refused naming the index and the count.
#include <cstddef>
#include <string>

#include "vaccel/tosa/capability.hpp"

#include "engine_support.hpp"

using namespace vaccel;
using namespace vaccel::test;

namespace {

// The CPU backend, offering the three floating-point tiers as its
// descriptors: a device with more than one descriptor.
class TieredCpu final : public backend::Backend {
public:
    TieredCpu() : cpu_(backend::open_cpu_backend(backend::CpuOptions{1})) {}
    std::vector<tosa::CapabilityDescriptor> tosa_descriptors() const override
    {
        return {tosa::fp32_tier(), tosa::fp16_tier(), tosa::fp8_tier()};
    }
    const vaccel_device_info& device_info() const override { return cpu_->device_info(); }
    Result<std::unique_ptr<backend::Context>> create_context() override
    {
        return cpu_->create_context();
    }
    Status destroy_context(std::unique_ptr<backend::Context>& c) override
    {
        return cpu_->destroy_context(c);
    }
    Result<std::unique_ptr<backend::Buffer>> allocate_buffer(backend::Context& c,
                                                             const backend::BufferDesc& d,
                                                             backend::BufferInfo& i) override
    {
        return cpu_->allocate_buffer(c, d, i);
    }
    Status free_buffer(std::unique_ptr<backend::Buffer>& b) override { return cpu_->free_buffer(b); }
    Status write_buffer(backend::Buffer& b, std::uint64_t o, std::span<const std::byte> d) override
    {
        return cpu_->write_buffer(b, o, d);
    }
    Status read_buffer(backend::Buffer& b, std::uint64_t o, std::span<std::byte> d) override
    {
        return cpu_->read_buffer(b, o, d);
    }
    Result<std::unique_ptr<backend::Program>> load_program(backend::Context& c,
                                                           const backend::ProgramDesc& d) override
    {
        return cpu_->load_program(c, d);
    }
    Status unload_program(std::unique_ptr<backend::Program>& p) override
    {
        return cpu_->unload_program(p);
    }
    Result<std::unique_ptr<backend::Queue>> create_queue(backend::Context& c) override
    {
        return cpu_->create_queue(c);
    }
    Status destroy_queue(std::unique_ptr<backend::Queue>& q) override
    {
        return cpu_->destroy_queue(q);
    }
    Result<std::unique_ptr<backend::Gate>> create_gate(backend::Context& c) override
    {
        return cpu_->create_gate(c);
    }
    Status raise_gate(backend::Gate& g, std::uint64_t v) override { return cpu_->raise_gate(g, v); }
    std::uint64_t gate_value(const backend::Gate& g) const override { return cpu_->gate_value(g); }
    Status destroy_gate(std::unique_ptr<backend::Gate>& g) override { return cpu_->destroy_gate(g); }
    Result<backend::Submitted> submit(const backend::SubmitDesc& d) override
    {
        return cpu_->submit(d);
    }
    Result<backend::Submitted> launch(const backend::LaunchDesc& d) override
    {
        return cpu_->launch(d);
    }
    backend::EventStatus poll(backend::Event& e) override { return cpu_->poll(e); }
    Status destroy_event(std::unique_ptr<backend::Event>& e) override
    {
        return cpu_->destroy_event(e);
    }
    std::uint64_t cancel_pending(backend::Context& c, const Error& why) override
    {
        return cpu_->cancel_pending(c, why);
    }
    backend::DeviceState state() const override { return cpu_->state(); }
    backend::LiveCounters live() const override { return cpu_->live(); }

private:
    std::unique_ptr<backend::Backend> cpu_;
};

// Device 0: the plain CPU; device 1: the tiered one.
std::shared_ptr<engine::DeviceManager> cpu_and_tiered()
{
    std::vector<std::unique_ptr<backend::Backend>> backends;
    backends.push_back(backend::open_cpu_backend(backend::CpuOptions{1}));
    backends.push_back(std::make_unique<TieredCpu>());
    return std::make_shared<engine::DeviceManager>(std::move(backends));
}

void the_cpu_answers_its_one_descriptor(void**)
{
    engine::Session session(cpu_and_tiered());
    vaccel_device_tosa q{};
    assert_ok(call(session, VACCEL_OP_DEVICE_TOSA, q));
    assert_int_equal(q.status.error, VACCEL_OK);
    assert_int_equal(q.descriptor.descriptor_count, 1);
    // TOSA 1.0, profile FP, level 8K; ADD (Op 15) on FP32 (DType 7).
    assert_int_equal(q.descriptor.target.major, 1);
    assert_int_equal(q.descriptor.target.minor, 0);
    assert_int_equal(q.descriptor.target.profiles & VACCEL_TOSA_PRO_FP, VACCEL_TOSA_PRO_FP);
    assert_int_equal(q.descriptor.target.level, VACCEL_TOSA_LEVEL_8K);
    assert_int_equal(q.descriptor.operators[15].present, 1);
    assert_int_equal(q.descriptor.operators[15].dtypes & (1u << 7), 1u << 7);
    assert_int_equal(q.descriptor.dtypes[7].roles, VACCEL_TOSA_ROLE_ALL);
    // Control flow: blocks in any number.
    assert_int_equal(q.descriptor.envelope.max_regions, UINT32_MAX);
    // The device's own target is the descriptor's.
    vaccel_device_query info{};
    assert_ok(call(session, VACCEL_OP_DEVICE_QUERY, info));
    assert_memory_equal(&info.info.tosa_targets[0], &q.descriptor.target,
                        sizeof(vaccel_tosa_target));
}

void a_tiered_device_answers_each_tier_in_order(void**)
{
    engine::Session session(cpu_and_tiered());
    const tosa::CapabilityDescriptor tiers[] = {tosa::fp32_tier(), tosa::fp16_tier(),
                                                tosa::fp8_tier()};
    for (std::uint32_t index = 0; index < 3; ++index) {
        vaccel_device_tosa q{};
        q.device = 1;
        q.index = index;
        assert_ok(call(session, VACCEL_OP_DEVICE_TOSA, q));
        assert_int_equal(q.descriptor.descriptor_count, 3);
        vaccel_tosa_descriptor expected = tosa::to_uapi(tiers[index]);
        expected.descriptor_count = 3;
        assert_memory_equal(&q.descriptor, &expected, sizeof expected);
    }
}

void unknown_device_and_index_past_the_descriptors_are_refused(void**)
{
    engine::Session session(cpu_and_tiered());
    vaccel_device_tosa q{};
    q.device = 2;  // two devices: 0 and 1
    assert_refused(call(session, VACCEL_OP_DEVICE_TOSA, q), Errc::invalid_argument,
                   VACCEL_D_NO_DEVICE, 2, 2);
    q.device = 0;
    q.index = 1;  // the CPU has one
    assert_refused(call(session, VACCEL_OP_DEVICE_TOSA, q), Errc::invalid_argument,
                   VACCEL_D_NO_TOSA_DESCRIPTOR, 1, 1);
    q.device = 1;
    q.index = 3;  // the tiered device has three
    assert_refused(call(session, VACCEL_OP_DEVICE_TOSA, q), Errc::invalid_argument,
                   VACCEL_D_NO_TOSA_DESCRIPTOR, 3, 3);
    const Error refused = call(session, VACCEL_OP_DEVICE_TOSA, q).error();
    const std::string text = describe(refused);
    if (text.find("TOSA descriptor index 3 does not exist (the device has 3); pick an index "
                  "below 3") == std::string::npos)
        fail_msg("unexpected sentence: %s", text.c_str());
}

void malformed_requests_are_refused_before_the_lookup(void**)
{
    engine::Session session(cpu_and_tiered());
    vaccel_device_tosa q{};
    q.flags = 1;
    assert_refused(call(session, VACCEL_OP_DEVICE_TOSA, q), Errc::invalid_argument,
                   VACCEL_D_UNKNOWN_FLAGS, 1, 0);
    q.flags = 0;
    q.reserved = 1;
    assert_refused(call(session, VACCEL_OP_DEVICE_TOSA, q), Errc::invalid_argument,
                   VACCEL_D_RESERVED_NONZERO, offsetof(vaccel_device_tosa, reserved), 0);
}

void version_reports_the_descriptor_capability(void**)
{
    engine::Session session(cpu_and_tiered());
    vaccel_get_version v{};
    assert_ok(call(session, VACCEL_OP_GET_VERSION, v));
    assert_int_equal(v.major, VACCEL_ABI_MAJOR);
    assert_int_equal(v.minor, VACCEL_ABI_MINOR);
    assert_int_equal(v.capabilities & VACCEL_CAP_TOSA_DESCRIPTORS, VACCEL_CAP_TOSA_DESCRIPTORS);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_cpu_answers_its_one_descriptor),
        cmocka_unit_test(a_tiered_device_answers_each_tier_in_order),
        cmocka_unit_test(unknown_device_and_index_past_the_descriptors_are_refused),
        cmocka_unit_test(malformed_requests_are_refused_before_the_lookup),
        cmocka_unit_test(version_reports_the_descriptor_capability),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
