// test_refusals.cpp - each malformed or unsupported construct is refused
// with its exact code, detail and reason.
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

void parse_accepts_the_crafted_add(void**)
{
    const Graph graph = parse_ok(craft(raw_add()));
    assert_int_equal(graph.regions[0].blocks[0].tensors.size(), 3);
}

void parse_refuses_unknown_operand_name(void**)
{
    RawGraph graph = raw_add();
    graph.operators[0].inputs[1] = "nowhere";
    const auto result = parse_bytes(craft(graph));
    expect_error(result, Errc::invalid_argument, VACCEL_D_TOSA_MALFORMED,
                 VACCEL_TOSA_UNKNOWN_TENSOR);
    expect_note_contains(result, "'nowhere'");
    expect_note_contains(result, "operator 0 (ADD)");
}

void parse_refuses_unknown_block_output_name(void**)
{
    RawGraph graph = raw_add();
    graph.outputs = {"d"};
    expect_error(parse_bytes(craft(graph)), Errc::invalid_argument, VACCEL_D_TOSA_MALFORMED,
                 VACCEL_TOSA_UNKNOWN_TENSOR);
}

void parse_refuses_duplicate_tensor_name(void**)
{
    RawGraph graph = raw_add();
    graph.tensors[1].name = "a";
    const auto result = parse_bytes(craft(graph));
    expect_error(result, Errc::invalid_argument, VACCEL_D_TOSA_MALFORMED,
                 VACCEL_TOSA_UNKNOWN_TENSOR);
    expect_note_contains(result, "declared twice");
}

void parse_refuses_short_constant_data(void**)
{
    RawGraph graph = raw_add();
    graph.tensors[1].shape = {3};  // needs 12 bytes
    graph.tensors[1].data = std::vector<std::uint8_t>(8, 0);
    const auto result = parse_bytes(craft(graph));
    expect_error(result, Errc::invalid_argument, VACCEL_D_TOSA_MALFORMED, VACCEL_TOSA_BAD_DATA);
    expect_note_contains(result, "needs 12 bytes");
}

void parse_keeps_exactly_the_bytes_the_shape_needs(void**)
{
    RawGraph graph = raw_add();
    graph.tensors[1].shape = {3};
    graph.tensors[1].data = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0, 0, 0, 0};
    const Graph parsed = parse_ok(craft(graph));
    const std::vector<std::uint8_t> expected = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    assert_true(parsed.regions[0].blocks[0].tensors[1].data == expected);
}

void parse_packs_int4_two_per_byte(void**)
{
    RawGraph graph = raw_add();
    graph.tensors[1].dtype = 2;  // INT4
    graph.tensors[1].shape = {3};
    graph.tensors[1].data = {0x21, 0x03, 0, 0, 0, 0, 0, 0};
    const Graph parsed = parse_ok(craft(graph));
    const Tensor& tensor = parsed.regions[0].blocks[0].tensors[1];
    assert_int_equal(tensor.byte_size(), 2);
    assert_true(tensor.data == (std::vector<std::uint8_t>{0x21, 0x03}));
}

void parse_refuses_negative_dimension(void**)
{
    RawGraph graph = raw_add();
    graph.tensors[0].shape = {-3};
    const auto result = parse_bytes(craft(graph));
    expect_error(result, Errc::invalid_argument, VACCEL_D_TOSA_MALFORMED, VACCEL_TOSA_BAD_SHAPE);
    expect_note_contains(result, "tensor 'a'");
}

void parse_refuses_dynamic_dimension_as_unsupported(void**)
{
    RawGraph graph = raw_add();
    graph.tensors[2].shape = {-1};
    const auto result = parse_bytes(craft(graph));
    expect_error(result, Errc::unsupported, VACCEL_D_TOSA_MALFORMED, VACCEL_TOSA_BAD_SHAPE);
    expect_note_contains(result, "dynamic");
}

void parse_refuses_unranked_tensor(void**)
{
    RawGraph graph = raw_add();
    graph.tensors[0].unranked = true;
    expect_error(parse_bytes(craft(graph)), Errc::unsupported, VACCEL_D_TOSA_MALFORMED,
                 VACCEL_TOSA_BAD_SHAPE);
}

void parse_refuses_more_than_2_pow_40_elements(void**)
{
    RawGraph graph = raw_add();
    graph.tensors[0].shape = {1 << 20, 1 << 20, 2};
    expect_error(parse_bytes(craft(graph)), Errc::invalid_argument, VACCEL_D_TOSA_MALFORMED,
                 VACCEL_TOSA_BAD_SHAPE);
}

void parse_refuses_external_data(void**)
{
    RawGraph graph = raw_add();
    graph.tensors[1].offset = 4096;
    graph.tensors[1].size = 8;
    expect_error(parse_bytes(craft(graph)), Errc::unsupported, VACCEL_D_TOSA_MALFORMED,
                 VACCEL_TOSA_EXTERNAL_DATA);
}

void parse_refuses_unknown_op_naming_it(void**)
{
    RawGraph graph = raw_add();
    graph.operators[0].op = 76;
    graph.operators[0].attribute_type = 0;
    const auto result = parse_bytes(craft(graph));
    expect_error(result, Errc::invalid_argument, VACCEL_D_TOSA_OPERATOR, 76);
    expect_note_contains(result, "Op 76");
}

void parse_refuses_unknown_dtype_naming_it(void**)
{
    RawGraph graph = raw_add();
    graph.tensors[0].dtype = 13;
    const auto result = parse_bytes(craft(graph));
    expect_error(result, Errc::invalid_argument, VACCEL_D_TOSA_DTYPE, 13);
    expect_note_contains(result, "DType 13");
}

void parse_refuses_attribute_of_another_operator(void**)
{
    RawGraph graph = raw_add();
    graph.operators[0].attribute_type = 3;  // Conv2dAttribute on ADD
    expect_error(parse_bytes(craft(graph)), Errc::invalid_argument, VACCEL_D_TOSA_MALFORMED,
                 VACCEL_TOSA_BAD_ATTRIBUTE);
}

void parse_refuses_unknown_attribute_type(void**)
{
    RawGraph graph = raw_add();
    graph.operators[0].attribute_type = 200;
    expect_error(parse_bytes(craft(graph)), Errc::invalid_argument, VACCEL_D_TOSA_MALFORMED,
                 VACCEL_TOSA_BAD_ATTRIBUTE);
}

void parse_reads_operator_without_attribute_table(void**)
{
    RawGraph graph = raw_add();
    graph.operators[0].attribute_type = 0;
    const Graph parsed = parse_ok(craft(graph));
    assert_false(parsed.regions[0].blocks[0].operators[0].attributes.present);
}

}  // namespace

int main()
{
    const CMUnitTest tests[] = {
        cmocka_unit_test(parse_accepts_the_crafted_add),
        cmocka_unit_test(parse_refuses_unknown_operand_name),
        cmocka_unit_test(parse_refuses_unknown_block_output_name),
        cmocka_unit_test(parse_refuses_duplicate_tensor_name),
        cmocka_unit_test(parse_refuses_short_constant_data),
        cmocka_unit_test(parse_keeps_exactly_the_bytes_the_shape_needs),
        cmocka_unit_test(parse_packs_int4_two_per_byte),
        cmocka_unit_test(parse_refuses_negative_dimension),
        cmocka_unit_test(parse_refuses_dynamic_dimension_as_unsupported),
        cmocka_unit_test(parse_refuses_unranked_tensor),
        cmocka_unit_test(parse_refuses_more_than_2_pow_40_elements),
        cmocka_unit_test(parse_refuses_external_data),
        cmocka_unit_test(parse_refuses_unknown_op_naming_it),
        cmocka_unit_test(parse_refuses_unknown_dtype_naming_it),
        cmocka_unit_test(parse_refuses_attribute_of_another_operator),
        cmocka_unit_test(parse_refuses_unknown_attribute_type),
        cmocka_unit_test(parse_reads_operator_without_attribute_table),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
