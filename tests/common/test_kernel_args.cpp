// test_kernel_args.cpp - the tagged kernel-argument buffer: exact wire bytes,
// every refusal with its code, detail and arguments, the order of the
// checks, pointer resolution against bindings and the parameter block.
#include "test_support.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <vector>

#include "vaccel/common/kernel_args.hpp"

using namespace vaccel;
using namespace vaccel::kernel_args;

namespace {

std::vector<std::byte> bytes(std::initializer_list<unsigned> values)
{
    std::vector<std::byte> out;
    for (unsigned v : values)
        out.push_back(static_cast<std::byte>(v));
    return out;
}

void assert_bytes_equal(const std::vector<std::byte>& got, const std::vector<std::byte>& want)
{
    assert_int_equal(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i)
        if (got[i] != want[i])
            fail_msg("byte %zu: got 0x%02x, want 0x%02x", i, std::to_integer<unsigned>(got[i]),
                     std::to_integer<unsigned>(want[i]));
}

vaccel_binding binding(std::uint32_t slot, std::uint64_t offset, std::uint64_t bytes_)
{
    vaccel_binding b{};
    b.slot = slot;
    b.access = VACCEL_ACCESS_READ;
    b.buffer = 0x1000 + slot;
    b.offset = offset;
    b.bytes = bytes_;
    return b;
}

// A backend's address_of: buffer base 0xd000'0000 per binding index (spaced
// 1 MiB apart) plus the binding's offset.
struct FakeDevice {
    std::vector<vaccel_binding> bindings;
    std::vector<std::size_t> asked;  // binding indexes address_of was called with

    std::uint64_t address_of(std::size_t index)
    {
        asked.push_back(index);
        return 0xd000'0000ULL + (index << 20) + bindings[index].offset;
    }
    Result<ParamBlock> lay_out(std::span<const Arg> args)
    {
        return kernel_args::lay_out(args, bindings,
                                    [this](std::size_t index) { return address_of(index); });
    }
};

// An argv of `count` i32 records, each 5 bytes, value = index.
std::vector<std::byte> i32_records(std::size_t count)
{
    std::vector<Arg> args;
    for (std::size_t i = 0; i < count; ++i)
        args.push_back(Arg::i32(static_cast<std::int32_t>(i)));
    return encode(args);
}

// --- parsing and encoding --------------------------------------------------

void empty_argv_parses_to_no_args(void**)
{
    auto parsed = parse({});
    assert_ok(parsed);
    assert_true(parsed->empty());
    assert_true(encode({}).empty());
}

void scalars_encode_to_exact_little_endian_bytes_and_round_trip(void**)
{
    const std::vector<Arg> args = {
        Arg::i32(-7),
        Arg::u32(0xdeadbeef),
        Arg::i64(-1'000'000'000'000),
        Arg::u64(0x00c0ffeebabef00dULL),
        Arg::f32(3.14159274f),  // 0x40490fdb
        Arg::f64(2.718281828459045),  // 0x4005bf0a8b145769
    };
    const auto wire = encode(args);
    // -1e12 = 0xffff'ff17'2b5a'f000
    assert_bytes_equal(wire, bytes({
        0x01, 0xf9, 0xff, 0xff, 0xff,
        0x05, 0xef, 0xbe, 0xad, 0xde,
        0x02, 0x00, 0xf0, 0x5a, 0x2b, 0x17, 0xff, 0xff, 0xff,
        0x06, 0x0d, 0xf0, 0xbe, 0xba, 0xee, 0xff, 0xc0, 0x00,
        0x03, 0xdb, 0x0f, 0x49, 0x40,
        0x04, 0x69, 0x57, 0x14, 0x8b, 0x0a, 0xbf, 0x05, 0x40,
    }));
    auto parsed = parse(wire);
    assert_ok(parsed);
    assert_int_equal(parsed->size(), args.size());
    assert_true(*parsed == args);
    assert_int_equal(as_i32((*parsed)[0]), -7);
    assert_int_equal(as_u32((*parsed)[1]), 0xdeadbeef);
    assert_true(as_i64((*parsed)[2]) == -1'000'000'000'000);
    assert_true(as_u64((*parsed)[3]) == 0x00c0ffeebabef00dULL);
    assert_true(as_f32((*parsed)[4]) == 3.14159274f);
    assert_true(as_f64((*parsed)[5]) == 2.718281828459045);
}

void values_are_read_little_endian_from_the_wire(void**)
{
    auto parsed = parse(bytes({0x05, 0x01, 0x02, 0x03, 0x04,
                               0x06, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08}));
    assert_ok(parsed);
    assert_int_equal(as_u32((*parsed)[0]), 0x04030201);
    assert_true(as_u64((*parsed)[1]) == 0x0807060504030201ULL);
}

void four_byte_values_keep_the_high_half_zero(void**)
{
    // Negative i32 must not sign-extend into raw, or == and encode differ.
    assert_true(Arg::i32(-1).raw == 0xffffffffULL);
    assert_true(Arg::f32(-0.0f).raw == 0x80000000ULL);
    auto parsed = parse(bytes({0x01, 0xff, 0xff, 0xff, 0xff}));
    assert_ok(parsed);
    assert_true((*parsed)[0] == Arg::i32(-1));
}

void nan_payloads_round_trip_bit_for_bit(void**)
{
    const std::vector<Arg> args = {Arg{Tag::f32, 0x7fc00123}, Arg{Tag::f64, 0xfff8000000000abcULL}};
    assert_true(std::isnan(as_f32(args[0])) && std::isnan(as_f64(args[1])));
    auto parsed = parse(encode(args));
    assert_ok(parsed);
    assert_true(*parsed == args);
}

void pointer_record_is_slot_then_bytes(void**)
{
    const std::vector<Arg> args = {Arg::ptr(3, 128)};
    assert_bytes_equal(encode(args), bytes({0x07, 0x03, 0, 0, 0, 0x80, 0, 0, 0}));
    auto parsed = parse(encode(args));
    assert_ok(parsed);
    assert_int_equal(parsed->size(), 1);
    assert_true((*parsed)[0].tag == Tag::ptr);
    assert_int_equal(ptr_slot((*parsed)[0]), 3);
    assert_int_equal(ptr_bytes((*parsed)[0]), 128);
}

void pointer_resolves_to_the_bound_address(void**)
{
    FakeDevice device{{binding(5, 0, 16), binding(3, 64, 256)}, {}};
    auto parsed = parse(encode(std::vector<Arg>{Arg::ptr(3, 128)}));
    assert_ok(parsed);
    auto block = device.lay_out(*parsed);
    assert_ok(block);
    assert_int_equal(block->size(), 1);
    // Binding index 1 carries slot 3: base 0xd010'0000 + offset 64.
    assert_int_equal(device.asked.size(), 1);
    assert_int_equal(device.asked[0], 1);
    assert_true(block->get<std::uint64_t>(0) == 0xd010'0040ULL);
    assert_bytes_equal(block->bytes, bytes({0x40, 0x00, 0x10, 0xd0, 0, 0, 0, 0}));
}

void mixed_args_keep_their_order(void**)
{
    const std::vector<Arg> args = {Arg::i32(11), Arg::ptr(0, 16), Arg::f64(1.5), Arg::ptr(1, 8),
                                   Arg::u64(42)};
    const auto wire = encode(args);
    assert_int_equal(wire.size(), 5 + 9 + 9 + 9 + 9);
    auto parsed = parse(wire);
    assert_ok(parsed);
    assert_int_equal(parsed->size(), 5);
    assert_true((*parsed)[0] == Arg::i32(11));
    assert_true((*parsed)[2] == Arg::f64(1.5));
    assert_true((*parsed)[4] == Arg::u64(42));
    assert_int_equal(ptr_slot((*parsed)[1]), 0);
    assert_int_equal(ptr_bytes((*parsed)[1]), 16);
    assert_int_equal(ptr_slot((*parsed)[3]), 1);
    assert_int_equal(ptr_bytes((*parsed)[3]), 8);

    FakeDevice device{{binding(1, 1024, 8), binding(0, 32, 16)}, {}};
    auto block = device.lay_out(*parsed);
    assert_ok(block);
    assert_int_equal(block->get<std::int32_t>(0), 11);
    assert_true(block->get<std::uint64_t>(1) == 0xd010'0020ULL);  // index 1 + 32
    assert_true(block->get<double>(2) == 1.5);
    assert_true(block->get<std::uint64_t>(3) == 0xd000'0400ULL);  // index 0 + 1024
    assert_true(block->get<std::uint64_t>(4) == 42);
    // address_of is asked once per pointer, in argument order.
    assert_int_equal(device.asked.size(), 2);
    assert_int_equal(device.asked[0], 1);
    assert_int_equal(device.asked[1], 0);
}

void exactly_the_maximum_of_records_is_accepted(void**)
{
    auto parsed = parse(i32_records(VACCEL_MAX_KERNEL_ARGS));
    assert_ok(parsed);
    assert_int_equal(parsed->size(), VACCEL_MAX_KERNEL_ARGS);
    assert_int_equal(as_i32(parsed->back()), VACCEL_MAX_KERNEL_ARGS - 1);
}

// --- refusals of parse -----------------------------------------------------

void unknown_tag_is_refused_with_offset_and_byte(void**)
{
    assert_refused(parse(bytes({0xff, 0, 0, 0, 0})), Errc::invalid_argument,
                   VACCEL_D_KERNEL_ARG_TAG, 0, 0xff);
    // The first byte past the known tags, after one good record.
    assert_refused(parse(bytes({0x05, 1, 2, 3, 4, 0x08, 0, 0, 0, 0})), Errc::invalid_argument,
                   VACCEL_D_KERNEL_ARG_TAG, 5, 0x08);
}

void zero_byte_followed_by_more_is_an_unknown_tag(void**)
{
    // A 0x00 is padding only when nothing but zeros follows.
    assert_refused(parse(bytes({0x05, 1, 2, 3, 4, 0x00, 0x00, 0x05, 1, 2, 3, 4})),
                   Errc::invalid_argument, VACCEL_D_KERNEL_ARG_TAG, 5, 0x00);
    assert_refused(parse(bytes({0x00, 0x01})), Errc::invalid_argument, VACCEL_D_KERNEL_ARG_TAG,
                   0, 0x00);
}

void trailing_zero_bytes_are_refused_with_offset_and_count(void**)
{
    // One i32 record then three bytes of padding up to 8.
    assert_refused(parse(bytes({0x01, 1, 0, 0, 0, 0, 0, 0})), Errc::invalid_argument,
                   VACCEL_D_KERNEL_ARG_TRAILING, 5, 3);
    assert_refused(parse(bytes({0x01, 1, 0, 0, 0, 0})), Errc::invalid_argument,
                   VACCEL_D_KERNEL_ARG_TRAILING, 5, 1);
    // Nothing but zeros: no record at all.
    assert_refused(parse(std::vector<std::byte>(16)), Errc::invalid_argument,
                   VACCEL_D_KERNEL_ARG_TRAILING, 0, 16);
}

void truncated_record_is_refused_with_missing_bytes(void**)
{
    // I64 promises 8 bytes, 3 follow.
    assert_refused(parse(bytes({0x02, 1, 2, 3})), Errc::invalid_argument,
                   VACCEL_D_KERNEL_ARG_TRUNCATED, 0, 5);
    // A lone tag at the end, after a good record.
    assert_refused(parse(bytes({0x05, 1, 2, 3, 4, 0x03})), Errc::invalid_argument,
                   VACCEL_D_KERNEL_ARG_TRUNCATED, 5, 4);
    // A pointer with its slot but without its bytes.
    assert_refused(parse(bytes({0x07, 1, 0, 0, 0})), Errc::invalid_argument,
                   VACCEL_D_KERNEL_ARG_TRUNCATED, 0, 4);
    // One byte short.
    assert_refused(parse(bytes({0x06, 1, 2, 3, 4, 5, 6, 7})), Errc::invalid_argument,
                   VACCEL_D_KERNEL_ARG_TRUNCATED, 0, 1);
}

void oversized_argv_is_a_resource_limit(void**)
{
    const auto refused = parse(std::vector<std::byte>(VACCEL_MAX_KERNEL_ARGS_BYTES + 1));
    assert_refused(refused, Errc::resource_limit, VACCEL_D_LIMIT, VACCEL_MAX_KERNEL_ARGS_BYTES,
                   VACCEL_MAX_KERNEL_ARGS_BYTES + 1);
    assert_int_equal(refused.error().limit, VACCEL_LIMIT_KERNEL_ARGS_BYTES);
}

void too_many_records_is_a_resource_limit(void**)
{
    const auto argv = i32_records(VACCEL_MAX_KERNEL_ARGS + 1);
    assert_true(argv.size() <= VACCEL_MAX_KERNEL_ARGS_BYTES);  // under the byte cap
    const auto refused = parse(argv);
    assert_refused(refused, Errc::resource_limit, VACCEL_D_LIMIT, VACCEL_MAX_KERNEL_ARGS,
                   VACCEL_MAX_KERNEL_ARGS);
    assert_int_equal(refused.error().limit, VACCEL_LIMIT_KERNEL_ARGS);
}

// --- the order of the checks ----------------------------------------------

void oversize_is_checked_before_any_tag(void**)
{
    // Every byte is a bad tag, but the size is refused first.
    std::vector<std::byte> argv(VACCEL_MAX_KERNEL_ARGS_BYTES + 1, std::byte{0xff});
    assert_refused(parse(argv), Errc::resource_limit, VACCEL_D_LIMIT,
                   VACCEL_MAX_KERNEL_ARGS_BYTES, VACCEL_MAX_KERNEL_ARGS_BYTES + 1);
    // At exactly the maximum the bytes are looked at.
    argv.pop_back();
    assert_refused(parse(argv), Errc::invalid_argument, VACCEL_D_KERNEL_ARG_TAG, 0, 0xff);
    std::vector<std::byte> zeros(VACCEL_MAX_KERNEL_ARGS_BYTES);
    assert_refused(parse(zeros), Errc::invalid_argument, VACCEL_D_KERNEL_ARG_TRAILING, 0,
                   VACCEL_MAX_KERNEL_ARGS_BYTES);
}

void record_count_is_checked_before_the_next_tag(void**)
{
    const std::size_t end = VACCEL_MAX_KERNEL_ARGS * 5;
    // After the maximum of records: a bad tag, zero padding, a truncated
    // record - each is the 129th record and refused as one.
    for (unsigned next : {0xffu, 0x00u, 0x02u}) {
        auto argv = i32_records(VACCEL_MAX_KERNEL_ARGS);
        assert_int_equal(argv.size(), end);
        argv.push_back(static_cast<std::byte>(next));
        assert_refused(parse(argv), Errc::resource_limit, VACCEL_D_LIMIT, VACCEL_MAX_KERNEL_ARGS,
                       VACCEL_MAX_KERNEL_ARGS);
    }
}

void earlier_faults_win_over_later_ones(void**)
{
    // A bad tag before a truncated record; a truncated record runs to the
    // end, so nothing can come after it.
    assert_refused(parse(bytes({0x09, 0x02, 1})), Errc::invalid_argument,
                   VACCEL_D_KERNEL_ARG_TAG, 0, 0x09);
    // Bytes that would be a bad tag are value bytes of the record before.
    auto parsed = parse(bytes({0x05, 0xff, 0x00, 0x00, 0x00}));
    assert_ok(parsed);
    assert_int_equal(as_u32((*parsed)[0]), 0xff);
}

// --- lay_out: pointers against bindings -------------------------------------

void pointer_to_an_unbound_slot_is_refused(void**)
{
    FakeDevice device{{binding(0, 0, 64)}, {}};
    const std::vector<Arg> args = {Arg::u32(1), Arg::ptr(0, 8), Arg::ptr(7, 8)};
    assert_refused(device.lay_out(args), Errc::invalid_argument, VACCEL_D_KERNEL_ARG_POINTER, 2,
                   7);
    // With no bindings at all.
    FakeDevice bare{};
    assert_refused(bare.lay_out(std::vector<Arg>{Arg::ptr(0, 0)}), Errc::invalid_argument,
                   VACCEL_D_KERNEL_ARG_POINTER, 0, 0);
    assert_true(bare.asked.empty());
}

void pointer_reaching_past_its_binding_is_out_of_bounds(void**)
{
    // Binding [24, 32) of its buffer; the kernel would touch 16 bytes.
    FakeDevice device{{binding(2, 24, 8)}, {}};
    const auto refused = device.lay_out(std::vector<Arg>{Arg::ptr(2, 16)});
    assert_refused(refused, Errc::out_of_bounds, VACCEL_D_RANGE, 24, 16);
    assert_true(!refused.error().note.empty());
    assert_true(device.asked.empty());  // no address for a refused pointer
    // One byte past.
    assert_refused(device.lay_out(std::vector<Arg>{Arg::ptr(2, 9)}), Errc::out_of_bounds,
                   VACCEL_D_RANGE, 24, 9);
}

void huge_pointer_values_do_not_wrap(void**)
{
    constexpr std::uint32_t max32 = std::numeric_limits<std::uint32_t>::max();
    constexpr std::uint64_t max64 = std::numeric_limits<std::uint64_t>::max();
    // The largest bytes a record can say, at the largest slot and offset.
    FakeDevice device{{binding(max32, max64 - 4, 1024)}, {}};
    auto parsed = parse(encode(std::vector<Arg>{Arg::ptr(max32, max32)}));
    assert_ok(parsed);
    assert_int_equal(ptr_slot((*parsed)[0]), max32);
    assert_int_equal(ptr_bytes((*parsed)[0]), max32);
    assert_refused(device.lay_out(*parsed), Errc::out_of_bounds, VACCEL_D_RANGE, max64 - 4,
                   max32);
    // Offset plus record bytes would overflow 64 bits; only bytes are
    // compared (the binding's own range was checked with the bindings).
    FakeDevice wide{{binding(0, max64, max64)}, {}};
    assert_ok(wide.lay_out(std::vector<Arg>{Arg::ptr(0, max32)}));
}

void zero_length_pointer_and_whole_binding_are_allowed(void**)
{
    FakeDevice device{{binding(0, 32, 32)}, {}};
    auto zero = device.lay_out(std::vector<Arg>{Arg::ptr(0, 0)});
    assert_ok(zero);
    assert_true(zero->get<std::uint64_t>(0) == 0xd000'0020ULL);
    assert_ok(device.lay_out(std::vector<Arg>{Arg::ptr(0, 32)}));
    // Even a binding of no bytes takes a pointer of no bytes.
    FakeDevice empty{{binding(1, 64, 0)}, {}};
    assert_ok(empty.lay_out(std::vector<Arg>{Arg::ptr(1, 0)}));
}

void first_binding_with_the_slot_is_used(void**)
{
    FakeDevice device{{binding(4, 0, 8), binding(4, 16, 64)}, {}};
    assert_refused(device.lay_out(std::vector<Arg>{Arg::ptr(4, 64)}), Errc::out_of_bounds,
                   VACCEL_D_RANGE, 0, 64);
}

// --- the parameter block ------------------------------------------------------

void block_has_one_offset_per_arg(void**)
{
    FakeDevice device{{binding(0, 0, 8)}, {}};
    const std::vector<Arg> args = {Arg::i32(1), Arg::f64(2.0), Arg::ptr(0, 8)};
    auto block = device.lay_out(args);
    assert_ok(block);
    assert_int_equal(block->size(), 3);
    assert_int_equal(block->offsets.size(), 3);

    auto none = device.lay_out({});
    assert_ok(none);
    assert_int_equal(none->size(), 0);
    assert_true(none->bytes.empty());
}

void block_holds_exact_bytes_at_natural_alignment(void**)
{
    FakeDevice device{{binding(6, 0x40, 16)}, {}};
    const std::int32_t i32_value = -0x01020304;  // 0xfefdfcfc
    const std::vector<Arg> args = {
        Arg::i32(i32_value),
        Arg::f64(1234.5),  // 0x40934a0000000000
        Arg::ptr(6, 16),
        Arg::u64(0x00c0ffeebabef00dULL),
        Arg::f32(1.0f),  // 0x3f800000
        Arg::u32(7),
        Arg::i64(-2),
    };
    auto block = device.lay_out(args);
    assert_ok(block);
    const std::vector<std::uint32_t> want_offsets = {0, 8, 16, 24, 32, 36, 40};
    assert_true(block->offsets == want_offsets);
    // The project assumes a little-endian host (codec.cpp), so host order
    // is the order written out here.
    assert_bytes_equal(block->bytes, bytes({
        0xfc, 0xfc, 0xfd, 0xfe, 0, 0, 0, 0,              // i32, 4 zero pad
        0x00, 0x00, 0x00, 0x00, 0x00, 0x4a, 0x93, 0x40,  // f64
        0x40, 0x00, 0x00, 0xd0, 0x00, 0x00, 0x00, 0x00,  // ptr: 0xd000'0040
        0x0d, 0xf0, 0xbe, 0xba, 0xee, 0xff, 0xc0, 0x00,  // u64
        0x00, 0x00, 0x80, 0x3f,                          // f32
        0x07, 0x00, 0x00, 0x00,                          // u32
        0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,  // i64
    }));
    // Natural alignment holds in memory too, not only as offsets.
    for (std::size_t i = 0; i < args.size(); ++i) {
        const auto address = reinterpret_cast<std::uintptr_t>(block->bytes.data()) +
                             block->offsets[i];
        assert_int_equal(address % value_bytes(args[i].tag), 0);
    }
    // Typed reads.
    assert_int_equal(block->get<std::int32_t>(0), i32_value);
    assert_true(block->get<double>(1) == 1234.5);
    assert_true(block->get<std::uint64_t>(2) == 0xd000'0040ULL);
    assert_true(block->get<std::uint64_t>(3) == 0x00c0ffeebabef00dULL);
    assert_true(block->get<float>(4) == 1.0f);
    assert_int_equal(block->get<std::uint32_t>(5), 7);
    assert_true(block->get<std::int64_t>(6) == -2);
}

void block_get_out_of_range_reads_nothing(void**)
{
    FakeDevice device{};
    auto block = device.lay_out(std::vector<Arg>{Arg::u32(9)});
    assert_ok(block);
    assert_int_equal(block->get<std::uint32_t>(1), 0);   // no such argument
    assert_true(block->get<std::uint64_t>(0) == 0);      // wider than what is there
}

// --- pinned wire constants --------------------------------------------------

void tag_value_sizes_are_pinned(void**)
{
    assert_int_equal(value_bytes(Tag::i32), 4);
    assert_int_equal(value_bytes(Tag::i64), 8);
    assert_int_equal(value_bytes(Tag::f32), 4);
    assert_int_equal(value_bytes(Tag::f64), 8);
    assert_int_equal(value_bytes(Tag::u32), 4);
    assert_int_equal(value_bytes(Tag::u64), 8);
    assert_int_equal(value_bytes(Tag::ptr), 8);
}

void tag_bytes_are_pinned(void**)
{
    assert_int_equal(static_cast<unsigned>(Tag::i32), 0x01);
    assert_int_equal(static_cast<unsigned>(Tag::i64), 0x02);
    assert_int_equal(static_cast<unsigned>(Tag::f32), 0x03);
    assert_int_equal(static_cast<unsigned>(Tag::f64), 0x04);
    assert_int_equal(static_cast<unsigned>(Tag::u32), 0x05);
    assert_int_equal(static_cast<unsigned>(Tag::u64), 0x06);
    assert_int_equal(static_cast<unsigned>(Tag::ptr), 0x07);
    assert_int_equal(VACCEL_MAX_KERNEL_ARGS, 128);
    assert_int_equal(VACCEL_MAX_KERNEL_ARGS_BYTES, 4096);
    for (unsigned b = 0; b < 256; ++b)
        assert_int_equal(tag_of(static_cast<std::uint8_t>(b)).has_value(), b >= 1 && b <= 7);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(empty_argv_parses_to_no_args),
        cmocka_unit_test(scalars_encode_to_exact_little_endian_bytes_and_round_trip),
        cmocka_unit_test(values_are_read_little_endian_from_the_wire),
        cmocka_unit_test(four_byte_values_keep_the_high_half_zero),
        cmocka_unit_test(nan_payloads_round_trip_bit_for_bit),
        cmocka_unit_test(pointer_record_is_slot_then_bytes),
        cmocka_unit_test(pointer_resolves_to_the_bound_address),
        cmocka_unit_test(mixed_args_keep_their_order),
        cmocka_unit_test(exactly_the_maximum_of_records_is_accepted),
        cmocka_unit_test(unknown_tag_is_refused_with_offset_and_byte),
        cmocka_unit_test(zero_byte_followed_by_more_is_an_unknown_tag),
        cmocka_unit_test(trailing_zero_bytes_are_refused_with_offset_and_count),
        cmocka_unit_test(truncated_record_is_refused_with_missing_bytes),
        cmocka_unit_test(oversized_argv_is_a_resource_limit),
        cmocka_unit_test(too_many_records_is_a_resource_limit),
        cmocka_unit_test(oversize_is_checked_before_any_tag),
        cmocka_unit_test(record_count_is_checked_before_the_next_tag),
        cmocka_unit_test(earlier_faults_win_over_later_ones),
        cmocka_unit_test(pointer_to_an_unbound_slot_is_refused),
        cmocka_unit_test(pointer_reaching_past_its_binding_is_out_of_bounds),
        cmocka_unit_test(huge_pointer_values_do_not_wrap),
        cmocka_unit_test(zero_length_pointer_and_whole_binding_are_allowed),
        cmocka_unit_test(first_binding_with_the_slot_is_used),
        cmocka_unit_test(block_has_one_offset_per_arg),
        cmocka_unit_test(block_holds_exact_bytes_at_natural_alignment),
        cmocka_unit_test(block_get_out_of_range_reads_nothing),
        cmocka_unit_test(tag_value_sizes_are_pinned),
        cmocka_unit_test(tag_bytes_are_pinned),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
