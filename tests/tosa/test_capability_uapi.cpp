// test_capability_uapi.cpp - a capability descriptor in its uapi form
// (struct vaccel_tosa_descriptor, VACCEL_IOCTL_DEVICE_TOSA) and back.
//
// Specifies: the round trip of every tier and of a descriptor with per
// operator dtypes, the exact bytes to_uapi() writes, and each field
// descriptor_from_uapi() refuses, with its byte offset.
#include <algorithm>
#include <cstddef>
#include <string>

#include "vaccel/tosa/capability.hpp"

#include "support.hpp"

using namespace vaccel;
using namespace vaccel::tosa;

namespace {

void expect_bad_value(const vaccel_tosa_descriptor& uapi, std::uint64_t offset,
                      std::uint64_t value)
{
    auto read = descriptor_from_uapi(uapi);
    if (read) fail_msg("accepted a descriptor with byte %llu = %llu",
                       static_cast<unsigned long long>(offset),
                       static_cast<unsigned long long>(value));
    if (read.error().code != Errc::invalid_argument || read.error().detail != VACCEL_D_BAD_VALUE ||
        read.error().arg0 != offset || read.error().arg1 != value)
        fail_msg("refused with detail %u arg0 %llu arg1 %llu (%s), expected BAD_VALUE %llu %llu",
                 read.error().detail, static_cast<unsigned long long>(read.error().arg0),
                 static_cast<unsigned long long>(read.error().arg1), read.error().note.c_str(),
                 static_cast<unsigned long long>(offset), static_cast<unsigned long long>(value));
}

void every_tier_survives_the_round_trip(void**)
{
    for (const CapabilityDescriptor& tier : {fp32_tier(), fp16_tier(), fp8_tier()}) {
        auto back = descriptor_from_uapi(to_uapi(tier));
        if (!back) fail_msg("refused: %s", back.error().note.c_str());
        // The uapi arrays carry no order: the tiers come back ascending.
        CapabilityDescriptor sorted = tier;
        std::ranges::sort(sorted.dtypes, {}, &DTypeCapability::dtype);
        std::ranges::sort(sorted.operators, {}, &OperatorCapability::op);
        assert_true(*back == sorted);
    }
}

void to_uapi_writes_each_entry_at_its_enum_value(void**)
{
    CapabilityDescriptor d;
    d.target = fp8_target();
    d.dtypes = {{DType::int8, role_bit(Role::constant), true},
                {DType::fp32, all_roles, false}};
    d.operators = {{Op::mul, constraint_bit(OperatorConstraint::zero_shift),
                    {DType::int8, DType::fp32}},
                   {Op::add, 0, {}}};
    d.graph = GraphEnvelope{2, 3, true, RuntimeConditionSupport::advisory_only};
    const vaccel_tosa_descriptor u = to_uapi(d);
    assert_int_equal(u.target.extensions, VACCEL_TOSA_EXT_FP8E4M3 | VACCEL_TOSA_EXT_FP8E5M2);
    assert_int_equal(u.descriptor_count, 0);  // the engine's to fill
    assert_int_equal(u.envelope.max_regions, 2);
    assert_int_equal(u.envelope.max_blocks, 3);
    assert_int_equal(u.envelope.dynamic_shapes, 1);
    assert_int_equal(u.envelope.runtime_conditions, VACCEL_TOSA_RUNTIME_ADVISORY);
    // INT8 is DType 3, FP32 is 7: constant = 4; all roles = 15.
    assert_int_equal(u.dtypes[3].roles, 4);
    assert_int_equal(u.dtypes[3].parameter_only, 1);
    assert_int_equal(u.dtypes[7].roles, 15);
    assert_int_equal(u.dtypes[8].roles, 0);
    // MUL is Op 28: zero_shift = 16; dtypes INT8 | FP32 = (1 << 3) | (1 << 7) = 136.
    assert_int_equal(u.operators[28].present, 1);
    assert_int_equal(u.operators[28].constraints, 16);
    assert_int_equal(u.operators[28].dtypes, 136);
    // ADD is Op 15: present, dtypes not stated.
    assert_int_equal(u.operators[15].present, 1);
    assert_int_equal(u.operators[15].dtypes, 0);
    assert_int_equal(u.operators[30].present, 0);  // SUB
    auto back = descriptor_from_uapi(u);
    assert_true(back.has_value());
    assert_int_equal(back->operators.size(), 2);
    assert_true(back->operators[0].op == Op::add);  // ascending: 15 before 28
    assert_true(back->operators[1] == d.operators[0]);
    assert_true(back->graph == d.graph);
}

void unknown_fields_are_refused_at_their_offset(void**)
{
    using D = vaccel_tosa_descriptor;
    const vaccel_tosa_descriptor good = to_uapi(fp32_tier());
    const std::size_t dtypes = offsetof(D, dtypes);
    const std::size_t ops = offsetof(D, operators);
    const std::size_t op_size = sizeof(vaccel_tosa_op_caps);

    auto u = good;
    u.pad = 1;
    expect_bad_value(u, offsetof(D, pad), 1);
    u = good;
    u.reserved[1] = 9;
    expect_bad_value(u, offsetof(D, reserved) + 8, 9);
    u = good;
    u.envelope.dynamic_shapes = 2;
    expect_bad_value(u, offsetof(D, envelope) + 8, 2);
    u = good;
    u.envelope.runtime_conditions = 2;
    expect_bad_value(u, offsetof(D, envelope) + 12, 2);
    u = good;
    u.dtypes[7].roles = 0x10;  // FP32 with a fifth role bit
    expect_bad_value(u, dtypes + 7 * 8, 0x10);
    u = good;
    u.dtypes[7].parameter_only = 2;
    expect_bad_value(u, dtypes + 7 * 8 + 4, 2);
    u = good;
    u.dtypes[13].roles = 1;  // DType 13 is past FP8E5M2 (12): arg1 = the index
    expect_bad_value(u, dtypes + 13 * 8, 13);
    u = good;
    u.dtypes[0].roles = 1;  // UNKNOWN
    expect_bad_value(u, dtypes, 0);
    u = good;
    u.operators[15].present = 2;  // ADD
    expect_bad_value(u, ops + 15 * op_size, 2);
    u = good;
    u.operators[3].constraints = VACCEL_TOSA_OPC_ZERO_SHIFT;  // CONV2D, not in the tier
    expect_bad_value(u, ops + 3 * op_size, 0);
    u = good;
    u.operators[15].constraints = 0x20;
    expect_bad_value(u, ops + 15 * op_size + 2, 0x20);
    u = good;
    u.operators[15].pad = 1;
    expect_bad_value(u, ops + 15 * op_size + 1, 1);
    u = good;
    u.operators[15].dtypes = 1u << 13;  // no DType 13
    expect_bad_value(u, ops + 15 * op_size + 4, 1u << 13);
    u = good;
    u.operators[80].present = 1;  // Op 80: past CONST_SHAPE (75)
    expect_bad_value(u, ops + 80 * op_size, 80);
    u = good;
    u.target.profiles = 0;  // no profile: the target's own refusal
    auto read = descriptor_from_uapi(u);
    assert_false(read.has_value());
    assert_int_equal(read.error().detail, VACCEL_D_TARGET);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_tier_survives_the_round_trip),
        cmocka_unit_test(to_uapi_writes_each_entry_at_its_enum_value),
        cmocka_unit_test(unknown_fields_are_refused_at_their_offset),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
