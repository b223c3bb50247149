// test_hostile.cpp - damaged files give an error, never a crash: every
// truncation and every single-bit flip of the ADD fixture (run these under
// -DVACCEL_SANITIZE=ON to catch undefined behaviour, not only crashes).
#include "support.hpp"

using namespace vaccel;
using namespace vaccel::tosa;
using namespace vaccel::tosa::test;

namespace {

bool refused_as_malformed(const Result<Graph>& result)
{
    return !result && result.error().code == Errc::invalid_argument &&
           result.error().detail == VACCEL_D_TOSA_MALFORMED;
}

// A truncation either loses bytes the graph uses (refused as malformed) or
// only trailing bytes no table refers to (the same graph).
void parse_refuses_every_truncation_of_add_that_loses_data(void**)
{
    const auto bytes = read_fixture(add_tflite);
    const Graph whole = parse_ok(bytes);
    std::size_t refused = 0;
    for (std::size_t length = 0; length < bytes.size(); ++length) {
        const std::vector<std::uint8_t> cut(bytes.begin(), bytes.begin() + length);
        const auto result = parse_bytes(cut);
        if (refused_as_malformed(result)) {
            ++refused;
        } else if (!result || !(*result == whole)) {
            fail_msg("truncation to %zu bytes neither refused nor harmless", length);
        }
    }
    // Only the zero padding at the end may go unnoticed.
    assert_true(refused + 8 >= bytes.size());
}

void parse_survives_every_bit_flip_of_add(void**)
{
    auto bytes = read_fixture(add_tflite);
    std::size_t accepted = 0;
    for (std::size_t bit = 0; bit < bytes.size() * 8; ++bit) {
        bytes[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
        const auto result = parse_bytes(bytes);
        if (result) {
            ++accepted;
        } else if (result.error().code != Errc::invalid_argument &&
                   result.error().code != Errc::unsupported) {
            fail_msg("bit %zu: unexpected error code %u", bit,
                     static_cast<unsigned>(result.error().code));
        }
        bytes[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
    }
    // Flips inside names and padding leave a valid file; most flips do not.
    assert_true(accepted > 0);
    assert_true(accepted < bytes.size() * 8);
}

void parse_survives_every_byte_value_in_lstm_header(void**)
{
    // The first 256 bytes hold the root, version and region offsets.
    auto bytes = read_fixture(lstm);
    for (std::size_t at = 0; at < 256; ++at) {
        const std::uint8_t original = bytes[at];
        for (unsigned value : {0x00u, 0x7fu, 0x80u, 0xffu}) {
            bytes[at] = static_cast<std::uint8_t>(value);
            const auto result = parse_bytes(bytes);
            if (!result && result.error().code != Errc::invalid_argument &&
                result.error().code != Errc::unsupported) {
                fail_msg("byte %zu = %u: unexpected error code %u", at, value,
                         static_cast<unsigned>(result.error().code));
            }
        }
        bytes[at] = original;
    }
}

}  // namespace

int main()
{
    const CMUnitTest tests[] = {
        cmocka_unit_test(parse_refuses_every_truncation_of_add_that_loses_data),
        cmocka_unit_test(parse_survives_every_bit_flip_of_add),
        cmocka_unit_test(parse_survives_every_byte_value_in_lstm_header),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
