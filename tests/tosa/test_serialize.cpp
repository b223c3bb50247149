// test_serialize.cpp - serialize() writes what parse() reads back unchanged,
// for builder-made graphs and for every real fixture.
#include <cmath>
#include <cstring>
#include <limits>

#include "support.hpp"

using namespace vaccel;
using namespace vaccel::tosa;
using namespace vaccel::tosa::test;

namespace {

Graph round_trip(const Graph& graph)
{
    const std::vector<std::uint8_t> bytes = serialize(graph);
    assert_true(bytes.size() >= 8);
    assert_memory_equal(bytes.data() + 4, "TOSA", 4);
    return parse_ok(bytes);
}

// Every field of Attributes set to something other than its default.
Attributes every_field()
{
    Attributes a;
    a.present = true;
    a.axis = -2;
    a.nan_mode = 2;
    a.perms = {3, 1, 2, 0};
    a.kernel = {3, 3};
    a.stride = {2, 1};
    a.pad = {1, 0, 1, 0};
    a.dilation = {2, 2};
    a.out_pad = {0, 1, 0, 1};
    a.acc_type = DType::int32;
    a.local_bound = true;
    a.min_val = {1, 2, 3, 4};
    a.max_val = {5, 6, 7, 8};
    a.resize_mode = 2;
    a.scale32 = true;
    a.per_channel = true;
    a.input_unsigned = true;
    a.output_unsigned = true;
    a.rounding_mode = 3;
    a.round = true;
    a.inverse = true;
    a.then_graph = "then";
    a.else_graph = "else";
    a.cond_graph = "cond";
    a.body_graph = "body";
    a.operator_name = "my.op";
    a.domain_name = "my.domain";
    a.implementation_attrs = {9, 8, 7};
    return a;
}

// The fields `op`'s table holds, copied from `all`; the rest at defaults.
Attributes fields_of(Op op, const Attributes& all)
{
    Attributes a;
    a.present = true;
    switch (op) {
    case Op::conv2d: case Op::conv3d: case Op::depthwise_conv2d:
        a.pad = all.pad; a.stride = all.stride; a.dilation = all.dilation;
        a.local_bound = all.local_bound; a.acc_type = all.acc_type;
        break;
    case Op::avg_pool2d:
        a.kernel = all.kernel; a.stride = all.stride; a.pad = all.pad; a.acc_type = all.acc_type;
        break;
    case Op::max_pool2d:
        a.kernel = all.kernel; a.stride = all.stride; a.pad = all.pad; a.nan_mode = all.nan_mode;
        break;
    case Op::transpose_conv2d:
        a.out_pad = all.out_pad; a.stride = all.stride; a.local_bound = all.local_bound;
        a.acc_type = all.acc_type;
        break;
    case Op::fft2d: a.inverse = all.inverse; a.local_bound = all.local_bound; break;
    case Op::rfft2d: a.local_bound = all.local_bound; break;
    case Op::clamp:
        a.min_val = all.min_val; a.max_val = all.max_val; a.nan_mode = all.nan_mode;
        break;
    case Op::arithmetic_right_shift: a.round = all.round; break;
    case Op::maximum: case Op::minimum: a.nan_mode = all.nan_mode; break;
    case Op::argmax: case Op::reduce_max: case Op::reduce_min:
        a.axis = all.axis; a.nan_mode = all.nan_mode;
        break;
    case Op::reduce_all: case Op::reduce_any: case Op::reduce_product: case Op::reduce_sum:
    case Op::concat: case Op::reverse:
        a.axis = all.axis;
        break;
    case Op::transpose: a.perms = all.perms; break;
    case Op::resize: a.resize_mode = all.resize_mode; break;
    case Op::rescale:
        a.scale32 = all.scale32; a.rounding_mode = all.rounding_mode;
        a.per_channel = all.per_channel; a.input_unsigned = all.input_unsigned;
        a.output_unsigned = all.output_unsigned;
        break;
    case Op::custom:
        a.operator_name = all.operator_name; a.domain_name = all.domain_name;
        a.implementation_attrs = all.implementation_attrs;
        break;
    case Op::cond_if: a.then_graph = all.then_graph; a.else_graph = all.else_graph; break;
    case Op::while_loop: a.cond_graph = all.cond_graph; a.body_graph = all.body_graph; break;
    default: break;
    }
    return a;
}

void serialize_round_trips_every_operator_with_its_attributes(void**)
{
    GraphBuilder builder;
    const std::uint32_t x = builder.tensor("x", {2, 3}, DType::fp32);
    const std::uint32_t y = builder.tensor("y", {2, 3}, DType::fp32);
    builder.input(x);
    builder.output(y);
    const Attributes all = every_field();
    for (std::uint32_t value = 1; value < op_count; ++value) {
        const Op op = static_cast<Op>(value);
        builder.op(op, {x}, {y}, fields_of(op, all));
    }
    const Graph graph = builder.finish();
    assert_int_equal(graph.regions[0].blocks[0].operators.size(), op_count - 1);
    assert_true(round_trip(graph) == graph);
}

void serialize_round_trips_constants_of_every_dtype(void**)
{
    GraphBuilder builder;
    for (std::uint32_t value = 1; value <= 12; ++value) {
        const DType dtype = static_cast<DType>(value);
        Tensor probe;
        probe.shape = {3};
        probe.dtype = dtype;
        std::vector<std::uint8_t> data(probe.byte_size());
        for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i + value);
        builder.tensor(std::string(dtype_name(dtype)), {3}, dtype, std::move(data));
    }
    const Graph graph = builder.finish();
    const Graph back = round_trip(graph);
    assert_true(back == graph);
    const Block& block = back.regions[0].blocks[0];
    assert_int_equal(block.tensors[tensor_index(block, "INT4")].data.size(), 2);
    assert_int_equal(block.tensors[tensor_index(block, "INT48")].data.size(), 18);
    assert_int_equal(block.tensors[tensor_index(block, "SHAPE")].data.size(), 24);
}

void serialize_round_trips_variables_scalars_and_locations(void**)
{
    GraphBuilder builder;
    const std::uint32_t state =
        builder.tensor("state", {2}, DType::int32, {1, 0, 0, 0, 2, 0, 0, 0});
    builder.block().tensors[state].variable = true;
    builder.block().tensors[state].variable_name = "model/state";
    const std::uint32_t scalar = builder.tensor("scalar", {}, DType::int32);
    builder.op(Op::identity, {state}, {scalar});
    builder.block().operators.back().location = "loc(\"model.py\":3)";
    builder.output(scalar);
    Graph graph = builder.finish();
    graph.version = Version{1, 0, 2, true};
    assert_true(round_trip(graph) == graph);
}

void builder_writes_version_1_0_0_final_in_main(void**)
{
    GraphBuilder builder;
    const float values[] = {1.5f, -2.0f};
    const std::uint32_t c = builder.constant_f32("c", {2}, values);
    const std::uint32_t out = builder.tensor("out", {2}, DType::fp32);
    builder.op(Op::clamp, {c}, {out}, clamp_f32_attr(-1.0f, 1.0f));
    builder.output(out);
    const Graph graph = round_trip(builder.finish());
    assert_true(graph.version == (Version{1, 0, 0, false}));
    assert_string_equal(graph.regions[0].name.c_str(), "main");
    const Block& block = graph.regions[0].blocks[0];
    assert_string_equal(block.name.c_str(), "main");
    float read[2];
    std::memcpy(read, block.tensors[c].data.data(), sizeof read);
    assert_true(read[0] == 1.5f && read[1] == -2.0f);
    float max = 0;
    std::memcpy(&max, block.operators[0].attributes.max_val.data(), sizeof max);
    assert_true(max == 1.0f);
}

void serialize_pads_constant_data_to_8_bytes(void**)
{
    GraphBuilder builder;
    builder.tensor("zp", {1}, DType::int8, {42});
    const std::vector<std::uint8_t> bytes = serialize(builder.finish());
    // Parsing keeps one byte; the file holds an 8-byte vector.
    const Graph graph = parse_ok(bytes);
    assert_true(graph.regions[0].blocks[0].tensors[0].data == (std::vector<std::uint8_t>{42}));
}

void serialize_out_of_range_index_is_refused_by_parse(void**)
{
    GraphBuilder builder;
    const std::uint32_t x = builder.tensor("x", {1}, DType::fp32);
    builder.op(Op::abs, {x}, {7});
    expect_error(parse_bytes(serialize(builder.finish())), Errc::invalid_argument,
                 VACCEL_D_TOSA_MALFORMED, VACCEL_TOSA_UNKNOWN_TENSOR);
}

void expect_fixture_round_trips(const std::string& path)
{
    const Graph graph = parse_ok(read_fixture(path));
    assert_true(round_trip(graph) == graph);
}

void serialize_round_trips_add_fixtures(void**)
{
    expect_fixture_round_trips(add_tflite);
    expect_fixture_round_trips(add_tf);
}

void serialize_round_trips_conv2d_fixture(void**) { expect_fixture_round_trips(conv2d); }

void serialize_round_trips_maxpool2d_fixture(void**) { expect_fixture_round_trips(maxpool2d); }

void serialize_round_trips_lstm_fixture_with_captures(void**)
{
    expect_fixture_round_trips(lstm);
}

}  // namespace

// The builder's FP16 constants: binary16 rounded to nearest, ties to even,
// the bit patterns NumPy's float16 gives for the same values.
void f16_bytes_round_to_nearest_even(void**)
{
    const float inf = std::numeric_limits<float>::infinity();
    const std::pair<float, std::uint16_t> cases[] = {
        {1.0f, 0x3C00},          {-2.5f, 0xC100},       {65504.0f, 0x7BFF},
        {65519.0f, 0x7BFF},      {65520.0f, 0x7C00},    {-1e6f, 0xFC00},
        {0x1p-24f, 0x0001},      {0x1p-25f, 0x0000},    {0x3p-26f, 0x0001},
        {0x3p-25f, 0x0002},      {0x1p-14f, 0x0400},    {0x3FFp-24f, 0x03FF},
        {1.0f + 0x1p-11f, 0x3C00}, {1.0f + 0x3p-11f, 0x3C02}, {-0.0f, 0x8000},
        {inf, 0x7C00},           {0.1f, 0x2E66},        {-1e-9f, 0x8000},
        {0.333333343f, 0x3555},  {1e4f, 0x70E2},        {2049.0f, 0x6800},
    };
    for (const auto& [value, want] : cases) {
        const std::vector<std::uint8_t> bytes = f16_bytes(std::span(&value, 1));
        assert_int_equal(bytes.size(), 2);
        assert_int_equal(bytes[0] | bytes[1] << 8, want);
        assert_int_equal(f16_bits(value), want);
        assert_int_equal(f16_bits(f16_value(want)), want);  // widening is exact
    }
    assert_true(f16_value(0x3555) == 0.333251953125f);
    assert_true(f16_value(0x0001) == 0x1p-24f);
    assert_true(f16_value(0xC100) == -2.5f);
    assert_int_equal(f16_bits(std::nanf("")) & 0x7E00u, 0x7E00u);
}

int main()
{
    const CMUnitTest tests[] = {
        cmocka_unit_test(serialize_round_trips_every_operator_with_its_attributes),
        cmocka_unit_test(f16_bytes_round_to_nearest_even),
        cmocka_unit_test(serialize_round_trips_constants_of_every_dtype),
        cmocka_unit_test(serialize_round_trips_variables_scalars_and_locations),
        cmocka_unit_test(builder_writes_version_1_0_0_final_in_main),
        cmocka_unit_test(serialize_pads_constant_data_to_8_bytes),
        cmocka_unit_test(serialize_out_of_range_index_is_refused_by_parse),
        cmocka_unit_test(serialize_round_trips_add_fixtures),
        cmocka_unit_test(serialize_round_trips_conv2d_fixture),
        cmocka_unit_test(serialize_round_trips_maxpool2d_fixture),
        cmocka_unit_test(serialize_round_trips_lstm_fixture_with_captures),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
