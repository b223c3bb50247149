// test_fixtures.cpp - parse() reads the real TOSA 1.0 files exactly.
#include "support.hpp"

using namespace vaccel;
using namespace vaccel::tosa;
using namespace vaccel::tosa::test;

namespace {

const Block& main_block(const Graph& graph)
{
    assert_int_equal(graph.regions.size(), 1);
    assert_string_equal(graph.regions[0].name.c_str(), "main");
    assert_int_equal(graph.regions[0].blocks.size(), 1);
    return graph.regions[0].blocks[0];
}

void expect_tensor(const Tensor& tensor, const char* name, std::vector<std::int64_t> shape,
                   DType dtype, std::size_t data_bytes)
{
    assert_string_equal(tensor.name.c_str(), name);
    assert_true(tensor.shape == shape);
    assert_int_equal(tensor.dtype, dtype);
    assert_int_equal(tensor.data.size(), data_bytes);
    assert_false(tensor.captured);
}

void expect_add_graph(const Graph& graph)
{
    assert_int_equal(graph.version.major, 1);
    assert_int_equal(graph.version.minor, 0);
    assert_int_equal(graph.version.patch, 0);
    const Block& block = main_block(graph);
    assert_string_equal(block.name.c_str(), "main");
    assert_int_equal(block.tensors.size(), 3);
    expect_tensor(block.tensors[0], "TosaInput_0", {1, 4, 4, 1}, DType::fp32, 0);
    expect_tensor(block.tensors[1], "TosaInput_1", {1, 4, 4, 4}, DType::fp32, 0);
    expect_tensor(block.tensors[2], "TosaOutput_0", {1, 4, 4, 4}, DType::fp32, 0);
    assert_int_equal(block.operators.size(), 1);
    const Operator& add = block.operators[0];
    assert_int_equal(add.op, Op::add);
    assert_true(add.attributes.present);
    assert_true(add.inputs == (std::vector<std::uint32_t>{0, 1}));
    assert_true(add.outputs == (std::vector<std::uint32_t>{2}));
    assert_true(block.inputs == (std::vector<std::uint32_t>{0, 1}));
    assert_true(block.outputs == (std::vector<std::uint32_t>{2}));
}

void parse_reads_add_tflite_variant(void**)
{
    expect_add_graph(parse_ok(read_fixture(add_tflite)));
}

void parse_reads_add_tf_variant(void**)
{
    expect_add_graph(parse_ok(read_fixture(add_tf)));
}

void parse_reads_conv2d_constants_at_exact_size(void**)
{
    const Graph graph = parse_ok(read_fixture(conv2d));
    const Block& block = main_block(graph);
    const Tensor& weight = block.tensors[tensor_index(block, "layer_0")];
    expect_tensor(weight, "layer_0", {16, 1, 1, 8}, DType::fp32, 16 * 8 * 4);
    const Tensor& bias = block.tensors[tensor_index(block, "layer_1")];
    expect_tensor(bias, "layer_1", {16}, DType::fp32, 64);
    // A zero point of one FP32 element: 8 bytes in the file, 4 kept.
    const Tensor& zero_point = block.tensors[tensor_index(block, "layer_2")];
    expect_tensor(zero_point, "layer_2", {1}, DType::fp32, 4);
    const Tensor& input = block.tensors[tensor_index(block, "TosaInput_0")];
    expect_tensor(input, "TosaInput_0", {1, 32, 32, 8}, DType::fp32, 0);
}

void parse_reads_conv2d_operands_and_attributes(void**)
{
    const Graph graph = parse_ok(read_fixture(conv2d));
    const Block& block = main_block(graph);
    assert_int_equal(block.operators.size(), 4);
    for (std::size_t i = 0; i < 3; ++i) assert_int_equal(block.operators[i].op, Op::const_);
    const Operator& conv = block.operators[3];
    assert_int_equal(conv.op, Op::conv2d);
    const std::uint32_t zp = tensor_index(block, "layer_2");
    const std::vector<std::uint32_t> inputs = {tensor_index(block, "TosaInput_0"),
                                               tensor_index(block, "layer_0"),
                                               tensor_index(block, "layer_1"), zp, zp};
    assert_true(conv.inputs == inputs);
    assert_true(conv.outputs == (std::vector<std::uint32_t>{tensor_index(block, "TosaOutput_0")}));
    assert_true(conv.attributes.pad == (std::vector<std::int32_t>{0, 0, 0, 0}));
    assert_true(conv.attributes.stride == (std::vector<std::int32_t>{1, 1}));
    assert_true(conv.attributes.dilation == (std::vector<std::int32_t>{1, 1}));
    assert_int_equal(conv.attributes.acc_type, DType::fp32);
    assert_false(conv.attributes.local_bound);
}

void parse_reads_maxpool2d_int8_with_draft_false(void**)
{
    const Graph graph = parse_ok(read_fixture(maxpool2d));
    assert_false(graph.version.draft);
    const Block& block = main_block(graph);
    expect_tensor(block.tensors[0], "TosaInput_0", {1, 16, 16, 16}, DType::int8, 0);
    expect_tensor(block.tensors[1], "TosaOutput_0", {1, 8, 8, 16}, DType::int8, 0);
    assert_int_equal(block.operators.size(), 1);
    const Operator& pool = block.operators[0];
    assert_int_equal(pool.op, Op::max_pool2d);
    assert_true(pool.attributes.kernel == (std::vector<std::int32_t>{2, 2}));
    assert_true(pool.attributes.stride == (std::vector<std::int32_t>{2, 2}));
    assert_true(pool.attributes.pad == (std::vector<std::int32_t>{0, 0, 0, 0}));
    assert_int_equal(pool.attributes.nan_mode, 1);  // PROPAGATE
    assert_string_equal(pool.location.c_str(), "loc(unknown)");
}

void parse_reads_lstm_regions_and_while_loop(void**)
{
    const Graph graph = parse_ok(read_fixture(lstm));
    assert_int_equal(graph.regions.size(), 3);
    assert_string_equal(graph.regions[0].name.c_str(), "main");
    assert_string_equal(graph.regions[1].name.c_str(), "tosa.while_loop_cond_region");
    assert_string_equal(graph.regions[2].name.c_str(), "tosa.while_loop_body_region");
    const Block& block = graph.regions[0].blocks[0];
    const Operator* loop = nullptr;
    for (const Operator& op : block.operators) {
        if (op.op == Op::while_loop) loop = &op;
    }
    assert_non_null(loop);
    assert_string_equal(loop->attributes.cond_graph.c_str(), "tosa.while_loop_cond_region");
    assert_string_equal(loop->attributes.body_graph.c_str(), "tosa.while_loop_body_region");
    assert_int_equal(loop->inputs.size(), 5);
    assert_int_equal(loop->outputs.size(), 5);
}

void parse_reads_lstm_variables(void**)
{
    const Graph graph = parse_ok(read_fixture(lstm));
    const Block& block = graph.regions[0].blocks[0];
    const Tensor& state = block.tensors[tensor_index(block, "Variable_0")];
    assert_true(state.variable);
    assert_string_equal(state.variable_name.c_str(), "lstm/Variable");
    expect_tensor(state, "Variable_0", {13, 2}, DType::fp32, 13 * 2 * 4);
    const Tensor& other = block.tensors[tensor_index(block, "Variable_1")];
    assert_true(other.variable);
    assert_string_equal(other.variable_name.c_str(), "lstm/Variable_1");
}

void parse_copies_parent_tensors_a_loop_body_reads(void**)
{
    const Graph graph = parse_ok(read_fixture(lstm));
    // The condition compares with main's constant layer_19 (INT32 scalar).
    const Block& cond = graph.regions[1].blocks[0];
    const Tensor& limit = cond.tensors[tensor_index(cond, "layer_19")];
    assert_true(limit.captured);
    assert_true(limit.shape.empty());
    assert_int_equal(limit.dtype, DType::int32);
    assert_int_equal(limit.data.size(), 4);
    const Block& main = graph.regions[0].blocks[0];
    assert_true(limit.data == main.tensors[tensor_index(main, "layer_19")].data);
    assert_int_equal(cond.operators[0].op, Op::greater);
    assert_int_equal(cond.operators[0].inputs[0], tensor_index(cond, "layer_19"));
}

void parse_accepts_identity_with_variable_read_table(void**)
{
    const Graph graph = parse_ok(read_fixture(lstm));
    const Block& block = graph.regions[0].blocks[0];
    std::size_t identities = 0;
    for (const Operator& op : block.operators) {
        if (op.op == Op::identity) {
            ++identities;
            assert_true(op.attributes.present);
        }
    }
    assert_int_equal(identities, 4);
}

}  // namespace

int main()
{
    const CMUnitTest tests[] = {
        cmocka_unit_test(parse_reads_add_tflite_variant),
        cmocka_unit_test(parse_reads_add_tf_variant),
        cmocka_unit_test(parse_reads_conv2d_constants_at_exact_size),
        cmocka_unit_test(parse_reads_conv2d_operands_and_attributes),
        cmocka_unit_test(parse_reads_maxpool2d_int8_with_draft_false),
        cmocka_unit_test(parse_reads_lstm_regions_and_while_loop),
        cmocka_unit_test(parse_reads_lstm_variables),
        cmocka_unit_test(parse_copies_parent_tensors_a_loop_body_reads),
        cmocka_unit_test(parse_accepts_identity_with_variable_read_table),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
