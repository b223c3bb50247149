// test_versions.cpp - only TOSA 1.0 is read; other versions and other
// files are refused by version or identifier, never misread.
#include <cstring>
#include <string>

#include "support.hpp"

using namespace vaccel;
using namespace vaccel::tosa;
using namespace vaccel::tosa::test;

namespace {

void expect_note_contains(const Result<Graph>& result, const char* text)
{
    assert_false(result.has_value());
    if (result.error().note.find(text) == std::string::npos) {
        fail_msg("note \"%s\" does not contain \"%s\"", result.error().note.c_str(), text);
    }
}

void parse_refuses_v080_tflite_file_by_version(void**)
{
    const auto result = parse_bytes(read_fixture(add_v080_tflite));
    expect_error(result, Errc::unsupported, VACCEL_D_TOSA_VERSION, 0);
    assert_int_equal(result.error().arg1, 80);
    expect_note_contains(result, "unsupported TOSA version 0.80");
}

void parse_refuses_v080_tf_file_by_version(void**)
{
    const auto result = parse_bytes(read_fixture(add_v080_tf));
    expect_error(result, Errc::unsupported, VACCEL_D_TOSA_VERSION, 0);
    assert_int_equal(result.error().arg1, 80);
    expect_note_contains(result, "0.80");
}

void parse_refuses_v090_naming_it_with_two_digits(void**)
{
    RawGraph graph = raw_add();
    graph.major = 0;
    graph.minor = 90;
    const auto result = parse_bytes(craft(graph));
    expect_error(result, Errc::unsupported, VACCEL_D_TOSA_VERSION, 0);
    assert_int_equal(result.error().arg1, 90);
    expect_note_contains(result, "unsupported TOSA version 0.90");
}

void parse_refuses_v11_draft_naming_it(void**)
{
    RawGraph graph = raw_add();
    graph.minor = 1;
    graph.draft = true;
    const auto result = parse_bytes(craft(graph));
    expect_error(result, Errc::unsupported, VACCEL_D_TOSA_VERSION, 1);
    assert_int_equal(result.error().arg1, 1);
    expect_note_contains(result, "unsupported TOSA version 1.1");
}

void parse_accepts_any_v10_patch_draft_or_not(void**)
{
    RawGraph graph = raw_add();
    graph.patch = 7;
    graph.draft = true;
    const Graph parsed = parse_ok(craft(graph));
    assert_int_equal(parsed.version.patch, 7);
    assert_true(parsed.version.draft);
    graph.draft = false;
    assert_false(parse_ok(craft(graph)).version.draft);
}

void parse_reads_absent_draft_flag_as_true(void**)
{
    // The reference model's ADD file does not write _draft: its default is true.
    assert_true(parse_ok(read_fixture(add_tflite)).version.draft);
}

void parse_refuses_wrong_identifier(void**)
{
    auto bytes = read_fixture(add_tflite);
    std::memcpy(bytes.data() + 4, "TFL3", 4);
    expect_error(parse_bytes(bytes), Errc::invalid_argument, VACCEL_D_TOSA_MALFORMED,
                 VACCEL_TOSA_NO_IDENTIFIER);
}

void parse_refuses_text_file(void**)
{
    const std::string text = "this is not a flatbuffer at all";
    const std::vector<std::uint8_t> bytes(text.begin(), text.end());
    expect_error(parse_bytes(bytes), Errc::invalid_argument, VACCEL_D_TOSA_MALFORMED,
                 VACCEL_TOSA_NO_IDENTIFIER);
}

void parse_refuses_empty_input(void**)
{
    expect_error(parse_bytes({}), Errc::invalid_argument, VACCEL_D_TOSA_MALFORMED,
                 VACCEL_TOSA_NOT_FLATBUFFER);
}

void parse_reads_unaligned_input(void**)
{
    const auto bytes = read_fixture(add_tflite);
    std::vector<std::uint8_t> shifted(bytes.size() + 1);
    std::memcpy(shifted.data() + 1, bytes.data(), bytes.size());
    const auto graph = parse(std::as_bytes(std::span(shifted).subspan(1)));
    assert_true(graph.has_value());
    assert_true(*graph == parse_ok(bytes));
}

}  // namespace

int main()
{
    const CMUnitTest tests[] = {
        cmocka_unit_test(parse_refuses_v080_tflite_file_by_version),
        cmocka_unit_test(parse_refuses_v080_tf_file_by_version),
        cmocka_unit_test(parse_refuses_v090_naming_it_with_two_digits),
        cmocka_unit_test(parse_refuses_v11_draft_naming_it),
        cmocka_unit_test(parse_accepts_any_v10_patch_draft_or_not),
        cmocka_unit_test(parse_reads_absent_draft_flag_as_true),
        cmocka_unit_test(parse_refuses_wrong_identifier),
        cmocka_unit_test(parse_refuses_text_file),
        cmocka_unit_test(parse_refuses_empty_input),
        cmocka_unit_test(parse_reads_unaligned_input),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
