// test_validation.cpp - the shared argument rules: overflow-safe ranges,
// buffer descriptors, and the binding rules in their documented order.
#include "test_support.hpp"

#include <array>
#include <cstddef>
#include <vector>

#include "vaccel/common/validation.hpp"

using namespace vaccel;
using validate::BindingFacts;
using validate::SlotSpec;

namespace {

// ---- ranges ---------------------------------------------------------------

void range_returns_end_of_a_fitting_range(void**)
{
    auto end = validate::range(16, 4, 12);
    assert_ok(end);
    assert_int_equal(*end, 16);
}

void range_refuses_offset_that_would_overflow(void**)
{
    assert_refused(validate::range(16, UINT64_MAX - 1, 4), Errc::out_of_bounds, VACCEL_D_RANGE,
                   UINT64_MAX - 1, 4);
}

void range_refuses_length_that_would_overflow(void**)
{
    assert_refused(validate::range(16, 4, UINT64_MAX), Errc::out_of_bounds, VACCEL_D_RANGE, 4,
                   UINT64_MAX);
}

void range_refuses_one_byte_past_the_end(void**)
{
    assert_refused(validate::range(16, 16, 1), Errc::out_of_bounds, VACCEL_D_RANGE, 16, 1);
    assert_refused(validate::range(16, 8, 9), Errc::out_of_bounds, VACCEL_D_RANGE, 8, 9);
}

void range_refuses_zero_length(void**)
{
    assert_refused(validate::range(16, 0, 0), Errc::invalid_argument, VACCEL_D_RANGE, 0, 0);
    assert_refused(validate::range(16, 20, 0), Errc::invalid_argument, VACCEL_D_RANGE, 20, 0);
}

// ---- buffer descriptors ---------------------------------------------------

vaccel_device_info host_device()
{
    vaccel_device_info device{};
    device.memory_caps = VACCEL_MEM_HOST_VISIBLE;
    device.limits.max_buffer_bytes = 1 << 20;
    return device;
}

void buffer_desc_accepts_a_valid_request(void**)
{
    assert_ok(validate::buffer_desc(host_device(), 1024, 64, VACCEL_DOMAIN_HOST,
                                    VACCEL_USAGE_STORAGE, VACCEL_ACCESS_RW));
    assert_ok(validate::buffer_desc(host_device(), 1 << 20, 0, VACCEL_DOMAIN_HOST,
                                    VACCEL_USAGE_ALL, VACCEL_ACCESS_READ));
}

void buffer_desc_refuses_zero_bytes(void**)
{
    assert_refused(validate::buffer_desc(host_device(), 0, 0, VACCEL_DOMAIN_HOST,
                                         VACCEL_USAGE_STORAGE, VACCEL_ACCESS_RW),
                   Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                   offsetof(vaccel_buffer_alloc, bytes), 0);
}

void buffer_desc_refuses_bytes_above_the_device_limit(void**)
{
    auto refused = validate::buffer_desc(host_device(), (1 << 20) + 1, 0, VACCEL_DOMAIN_HOST,
                                         VACCEL_USAGE_STORAGE, VACCEL_ACCESS_RW);
    assert_refused(refused, Errc::resource_limit, VACCEL_D_LIMIT, 1 << 20, (1 << 20) + 1);
    assert_int_equal(refused.error().limit, VACCEL_LIMIT_BUFFER_BYTES);
}

void buffer_desc_refuses_alignment_not_a_power_of_two(void**)
{
    assert_refused(validate::buffer_desc(host_device(), 64, 48, VACCEL_DOMAIN_HOST,
                                         VACCEL_USAGE_STORAGE, VACCEL_ACCESS_RW),
                   Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                   offsetof(vaccel_buffer_alloc, alignment), 48);
}

void buffer_desc_refuses_alignment_above_the_maximum(void**)
{
    // 16 GiB alignment for 64 bytes would make a 16 GiB allocation out of a
    // 64-byte request (found by fuzzing the daemon).
    const std::uint64_t huge = std::uint64_t{1} << 34;
    assert_refused(validate::buffer_desc(host_device(), 64, huge, VACCEL_DOMAIN_HOST,
                                         VACCEL_USAGE_STORAGE, VACCEL_ACCESS_RW),
                   Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                   offsetof(vaccel_buffer_alloc, alignment), huge);
    assert_refused(validate::buffer_desc(host_device(), 64, VACCEL_MAX_ALIGNMENT * 2,
                                         VACCEL_DOMAIN_HOST, VACCEL_USAGE_STORAGE,
                                         VACCEL_ACCESS_RW),
                   Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                   offsetof(vaccel_buffer_alloc, alignment), VACCEL_MAX_ALIGNMENT * 2);
    assert_true(validate::buffer_desc(host_device(), 64, VACCEL_MAX_ALIGNMENT, VACCEL_DOMAIN_HOST,
                                      VACCEL_USAGE_STORAGE, VACCEL_ACCESS_RW)
                    .has_value());
}

void buffer_desc_refuses_unknown_domain_as_invalid(void**)
{
    assert_refused(validate::buffer_desc(host_device(), 64, 0, 9, VACCEL_USAGE_STORAGE,
                                         VACCEL_ACCESS_RW),
                   Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                   offsetof(vaccel_buffer_alloc, domain), 9);
}

void buffer_desc_refuses_domain_the_device_lacks_as_unsupported(void**)
{
    assert_refused(validate::buffer_desc(host_device(), 64, 0, VACCEL_DOMAIN_DEVICE,
                                         VACCEL_USAGE_STORAGE, VACCEL_ACCESS_RW),
                   Errc::unsupported, VACCEL_D_BAD_VALUE, offsetof(vaccel_buffer_alloc, domain),
                   VACCEL_DOMAIN_DEVICE);
}

void buffer_desc_refuses_empty_or_unknown_usage(void**)
{
    assert_refused(validate::buffer_desc(host_device(), 64, 0, VACCEL_DOMAIN_HOST, 0,
                                         VACCEL_ACCESS_RW),
                   Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                   offsetof(vaccel_buffer_alloc, usage), 0);
    assert_refused(validate::buffer_desc(host_device(), 64, 0, VACCEL_DOMAIN_HOST, 0x9,
                                         VACCEL_ACCESS_RW),
                   Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                   offsetof(vaccel_buffer_alloc, usage), 0x9);
}

void buffer_desc_refuses_empty_or_unknown_access(void**)
{
    assert_refused(validate::buffer_desc(host_device(), 64, 0, VACCEL_DOMAIN_HOST,
                                         VACCEL_USAGE_STORAGE, 0),
                   Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                   offsetof(vaccel_buffer_alloc, access), 0);
    assert_refused(validate::buffer_desc(host_device(), 64, 0, VACCEL_DOMAIN_HOST,
                                         VACCEL_USAGE_STORAGE, 4),
                   Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                   offsetof(vaccel_buffer_alloc, access), 4);
}

// ---- bindings ---------------------------------------------------------------

// A program with one 16-byte input (slot 0) and one 32-byte output (slot 1).
const std::array<SlotSpec, 2> two_slots = {{
    {VACCEL_SLOT_INPUT, 16},
    {VACCEL_SLOT_OUTPUT, 32},
}};

BindingFacts input_binding()
{
    return BindingFacts{0, VACCEL_ACCESS_READ, 0xa, 64, VACCEL_USAGE_STORAGE, VACCEL_ACCESS_RW,
                        0, 16};
}
BindingFacts output_binding()
{
    return BindingFacts{1, VACCEL_ACCESS_WRITE, 0xb, 64, VACCEL_USAGE_STORAGE, VACCEL_ACCESS_RW,
                        32, 32};
}

Status check(const std::vector<BindingFacts>& bindings, std::uint32_t max = 8)
{
    return validate::bindings(two_slots, bindings, max);
}

void bindings_accepts_a_complete_list(void**)
{
    assert_ok(check({input_binding(), output_binding()}));
    assert_ok(check({output_binding(), input_binding()}));
}

void bindings_refuses_an_empty_list(void**)
{
    assert_refused(check({}), Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                   offsetof(vaccel_submit, binding_count), 0);
}

void bindings_refuses_more_than_max_before_looking_at_any(void**)
{
    BindingFacts bad = input_binding();
    bad.access = 0;  // would be refused by rule 2, but the count comes first
    auto refused = check({bad, output_binding()}, 1);
    assert_refused(refused, Errc::resource_limit, VACCEL_D_LIMIT, 1, 2);
    assert_int_equal(refused.error().limit, VACCEL_LIMIT_BINDINGS);
}

void bindings_refuses_access_other_than_read_or_write(void**)
{
    BindingFacts b = input_binding();
    b.access = VACCEL_ACCESS_RW;
    b.buffer_usage = 0;  // later rule, not reported
    assert_refused(check({b, output_binding()}), Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                   offsetof(vaccel_binding, access), VACCEL_ACCESS_RW);
}

void bindings_refuses_access_the_buffer_does_not_allow(void**)
{
    BindingFacts b = output_binding();
    b.buffer_access = VACCEL_ACCESS_READ;
    b.buffer_usage = 0;  // later rule, not reported
    assert_refused(check({input_binding(), b}), Errc::permission_denied, VACCEL_D_ACCESS,
                   VACCEL_ACCESS_WRITE, VACCEL_ACCESS_READ);
}

void bindings_refuses_buffer_without_storage_usage(void**)
{
    BindingFacts b = input_binding();
    b.buffer_usage = VACCEL_USAGE_TRANSFER_DST;
    b.offset = 60;  // out of bounds too: later rule, not reported
    assert_refused(check({b, output_binding()}), Errc::permission_denied, VACCEL_D_USAGE,
                   VACCEL_USAGE_STORAGE, VACCEL_USAGE_TRANSFER_DST);
}

void bindings_refuses_range_past_the_buffer(void**)
{
    BindingFacts b = input_binding();
    b.offset = 56;
    b.slot = 7;  // unknown slot too: later rule, not reported
    assert_refused(check({b, output_binding()}), Errc::out_of_bounds, VACCEL_D_RANGE, 56, 16);
}

void bindings_refuses_overflowing_range(void**)
{
    BindingFacts b = input_binding();
    b.offset = UINT64_MAX - 1;
    b.bytes = 4;
    assert_refused(check({b, output_binding()}), Errc::out_of_bounds, VACCEL_D_RANGE,
                   UINT64_MAX - 1, 4);
}

void bindings_refuses_zero_bytes(void**)
{
    BindingFacts b = input_binding();
    b.bytes = 0;
    assert_refused(check({b, output_binding()}), Errc::invalid_argument, VACCEL_D_RANGE, 0, 0);
}

void bindings_refuses_slot_the_program_lacks(void**)
{
    BindingFacts b = output_binding();
    b.slot = 2;
    assert_refused(check({input_binding(), b}), Errc::incompatible, VACCEL_D_BINDING_SLOT, 1, 2);
}

void bindings_refuses_slot_bound_twice(void**)
{
    BindingFacts again = input_binding();
    again.buffer = 0xc;
    again.bytes = 8;  // wrong size too: later rule, not reported
    assert_refused(check({input_binding(), again, output_binding()}), Errc::invalid_argument,
                   VACCEL_D_BINDING_DUPLICATE, 1, 0);
}

void bindings_refuses_access_that_contradicts_the_slot_role(void**)
{
    BindingFacts b = input_binding();
    b.access = VACCEL_ACCESS_WRITE;
    b.bytes = 8;  // wrong size too: later rule, not reported
    assert_refused(check({b, output_binding()}), Errc::incompatible, VACCEL_D_ACCESS,
                   VACCEL_ACCESS_WRITE, VACCEL_ACCESS_READ);
}

void bindings_refuses_bytes_other_than_the_slot_needs(void**)
{
    BindingFacts b = output_binding();
    b.bytes = 16;
    assert_refused(check({input_binding(), b}), Errc::incompatible, VACCEL_D_BINDING_SIZE, 1, 32);
}

void bindings_refuses_a_missing_slot_after_per_binding_rules(void**)
{
    const std::array<SlotSpec, 3> three = {{
        {VACCEL_SLOT_INPUT, 16},
        {VACCEL_SLOT_INPUT, 16},
        {VACCEL_SLOT_OUTPUT, 32},
    }};
    BindingFacts out = output_binding();
    out.slot = 2;
    assert_ok(validate::bindings(three, std::vector<BindingFacts>{input_binding(),
                                                                  [] {
                                                                      BindingFacts b =
                                                                          input_binding();
                                                                      b.slot = 1;
                                                                      return b;
                                                                  }(),
                                                                  out},
                                 8));
    assert_refused(validate::bindings(three, std::vector<BindingFacts>{input_binding(), out}, 8),
                   Errc::incompatible, VACCEL_D_BINDING_MISSING, 1, 3);
    // A per-binding reason in the list wins over the missing slot.
    BindingFacts short_out = out;
    short_out.bytes = 8;
    assert_refused(
        validate::bindings(three, std::vector<BindingFacts>{input_binding(), short_out}, 8),
        Errc::incompatible, VACCEL_D_BINDING_SIZE, 1, 32);
}

void bindings_refuses_written_buffer_also_bound_for_reading(void**)
{
    BindingFacts out = output_binding();
    out.buffer = input_binding().buffer;  // disjoint ranges: [0,16) and [32,64)
    assert_refused(check({input_binding(), out}), Errc::incompatible, VACCEL_D_BINDING_ALIAS, 1,
                   0);
}

void bindings_refuses_written_buffer_whatever_the_order(void**)
{
    BindingFacts out = output_binding();
    out.buffer = input_binding().buffer;
    assert_refused(check({out, input_binding()}), Errc::incompatible, VACCEL_D_BINDING_ALIAS, 1,
                   0);
}

void bindings_reports_a_missing_slot_before_aliasing(void**)
{
    const std::array<SlotSpec, 3> three = {{
        {VACCEL_SLOT_INPUT, 16},
        {VACCEL_SLOT_OUTPUT, 32},
        {VACCEL_SLOT_OUTPUT, 32},
    }};
    BindingFacts out = output_binding();
    out.buffer = input_binding().buffer;
    assert_refused(validate::bindings(three, std::vector<BindingFacts>{input_binding(), out}, 8),
                   Errc::incompatible, VACCEL_D_BINDING_MISSING, 2, 3);
}

void bindings_allows_one_buffer_read_by_two_slots(void**)
{
    const std::array<SlotSpec, 3> three = {{
        {VACCEL_SLOT_INPUT, 16},
        {VACCEL_SLOT_INPUT, 16},
        {VACCEL_SLOT_OUTPUT, 32},
    }};
    BindingFacts second = input_binding();
    second.slot = 1;  // same buffer, same range, both read
    BindingFacts out = output_binding();
    out.slot = 2;
    assert_ok(validate::bindings(three, std::vector<BindingFacts>{input_binding(), second, out},
                                 8));
}

// ---- zero -------------------------------------------------------------------

void zero_names_the_first_nonzero_byte(void**)
{
    std::array<std::byte, 16> bytes{};
    assert_ok(validate::zero(bytes, 0, 16));
    bytes[9] = std::byte{1};
    bytes[12] = std::byte{1};
    assert_ok(validate::zero(bytes, 0, 9));
    assert_refused(validate::zero(bytes, 4, 12), Errc::invalid_argument,
                   VACCEL_D_RESERVED_NONZERO, 9, 0);
}

void zero_refuses_a_range_outside_the_struct(void**)
{
    std::array<std::byte, 8> bytes{};
    assert_refused(validate::zero(bytes, 4, 8), Errc::invalid_argument, VACCEL_D_BAD_SIZE, 8, 12);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(range_returns_end_of_a_fitting_range),
        cmocka_unit_test(range_refuses_offset_that_would_overflow),
        cmocka_unit_test(range_refuses_length_that_would_overflow),
        cmocka_unit_test(range_refuses_one_byte_past_the_end),
        cmocka_unit_test(range_refuses_zero_length),
        cmocka_unit_test(buffer_desc_accepts_a_valid_request),
        cmocka_unit_test(buffer_desc_refuses_zero_bytes),
        cmocka_unit_test(buffer_desc_refuses_bytes_above_the_device_limit),
        cmocka_unit_test(buffer_desc_refuses_alignment_not_a_power_of_two),
        cmocka_unit_test(buffer_desc_refuses_alignment_above_the_maximum),
        cmocka_unit_test(buffer_desc_refuses_unknown_domain_as_invalid),
        cmocka_unit_test(buffer_desc_refuses_domain_the_device_lacks_as_unsupported),
        cmocka_unit_test(buffer_desc_refuses_empty_or_unknown_usage),
        cmocka_unit_test(buffer_desc_refuses_empty_or_unknown_access),
        cmocka_unit_test(bindings_accepts_a_complete_list),
        cmocka_unit_test(bindings_refuses_an_empty_list),
        cmocka_unit_test(bindings_refuses_more_than_max_before_looking_at_any),
        cmocka_unit_test(bindings_refuses_access_other_than_read_or_write),
        cmocka_unit_test(bindings_refuses_access_the_buffer_does_not_allow),
        cmocka_unit_test(bindings_refuses_buffer_without_storage_usage),
        cmocka_unit_test(bindings_refuses_range_past_the_buffer),
        cmocka_unit_test(bindings_refuses_overflowing_range),
        cmocka_unit_test(bindings_refuses_zero_bytes),
        cmocka_unit_test(bindings_refuses_slot_the_program_lacks),
        cmocka_unit_test(bindings_refuses_slot_bound_twice),
        cmocka_unit_test(bindings_refuses_access_that_contradicts_the_slot_role),
        cmocka_unit_test(bindings_refuses_bytes_other_than_the_slot_needs),
        cmocka_unit_test(bindings_refuses_a_missing_slot_after_per_binding_rules),
        cmocka_unit_test(bindings_refuses_written_buffer_also_bound_for_reading),
        cmocka_unit_test(bindings_refuses_written_buffer_whatever_the_order),
        cmocka_unit_test(bindings_reports_a_missing_slot_before_aliasing),
        cmocka_unit_test(bindings_allows_one_buffer_read_by_two_slots),
        cmocka_unit_test(zero_names_the_first_nonzero_byte),
        cmocka_unit_test(zero_refuses_a_range_outside_the_struct),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
