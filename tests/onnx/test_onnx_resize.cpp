// test_onnx_resize.cpp - which TOSA form a Resize imports to
// (onnx/src/lowering_resize.cpp), and which graph inputs a model needs as
// values (importer.hpp, value_inputs). The node suite checks the numbers of
// every form against ONNX's own expected outputs; this checks the choice.
#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "../support/cmocka.hpp"
#include "vaccel/onnx/importer.hpp"

namespace {

using namespace vaccel;
namespace vo = vaccel::onnx;
using T = ::onnx::TensorProto;

void add_float_input(::onnx::GraphProto& g, const std::string& name, std::vector<std::int64_t> dims)
{
    auto* in = g.add_input();
    in->set_name(name);
    auto* type = in->mutable_type()->mutable_tensor_type();
    type->set_elem_type(T::FLOAT);
    for (std::int64_t d : dims) type->mutable_shape()->add_dim()->set_dim_value(d);
}

// X of dims `in` resized to `sizes` by a Resize with `attrs` (name, value).
std::string resize_model_of(std::vector<std::int64_t> in, std::vector<std::int64_t> sizes,
                            std::vector<std::pair<std::string, std::string>> attrs)
{
    ::onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(13);
    auto* g = m.mutable_graph();
    g->set_name("resize");
    add_float_input(*g, "X", in);
    auto* s = g->add_initializer();
    s->set_name("sizes");
    s->set_data_type(T::INT64);
    s->add_dims(4);
    for (std::int64_t v : sizes) s->add_int64_data(v);
    auto* node = g->add_node();
    node->set_op_type("Resize");
    node->set_name("r");
    for (const char* in : {"X", "", "", "sizes"}) node->add_input(in);
    node->add_output("Y");
    for (const auto& [k, v] : attrs) {
        auto* a = node->add_attribute();
        a->set_name(k);
        a->set_type(::onnx::AttributeProto::STRING);
        a->set_s(v);
    }
    g->add_output()->set_name("Y");
    return m.SerializeAsString();
}

// X [1, 2, h, w].
std::string resize_model(std::int64_t h, std::int64_t w, std::vector<std::int64_t> sizes,
                         std::vector<std::pair<std::string, std::string>> attrs)
{
    return resize_model_of({1, 2, h, w}, std::move(sizes), std::move(attrs));
}

std::span<const std::byte> bytes(const std::string& s)
{
    return std::as_bytes(std::span(s.data(), s.size()));
}

std::size_t count(const tosa::Graph& graph, tosa::Op op)
{
    std::size_t n = 0;
    for (const auto& o : graph.regions[0].blocks[0].operators) n += o.op == op;
    return n;
}

void imported(const std::string& model, std::size_t resizes, std::size_t matmuls)
{
    auto got = vo::import_model(bytes(model));
    if (!got) fail_msg("%s", got.error().note.c_str());
    assert_int_equal(count(got->graph, tosa::Op::resize), resizes);
    assert_int_equal(count(got->graph, tosa::Op::matmul), matmuls);
}

void whole_scales_take_tosa_resize(void**)
{
    // Twice, nearest, every nearest_mode and the usual transforms.
    for (const char* rounding : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})
        for (const char* transform : {"half_pixel", "asymmetric", "pytorch_half_pixel"})
            imported(resize_model(4, 6, {1, 2, 8, 12},
                                  {{"mode", "nearest"}, {"nearest_mode", rounding},
                                   {"coordinate_transformation_mode", transform}}),
                     1, 0);
    imported(resize_model(4, 6, {1, 2, 8, 12}, {{"mode", "linear"}}), 1, 0);
    imported(resize_model(8, 8, {1, 2, 4, 4}, {{"mode", "linear"}}), 1, 0);
    imported(resize_model(4, 4, {1, 2, 7, 7},
                          {{"mode", "linear"}, {"coordinate_transformation_mode", "align_corners"}}),
             1, 0);
}

void what_tosa_cannot_read_takes_a_matmul_per_axis(void**)
{
    // Cubic has four taps; TOSA's RESIZE reads two.
    imported(resize_model(4, 6, {1, 2, 8, 12}, {{"mode", "cubic"}}), 0, 2);
    // Only W resized: one MATMUL.
    imported(resize_model(4, 6, {1, 2, 4, 12}, {{"mode", "cubic"}}), 0, 1);
    // The channels resized: TOSA resizes H and W only.
    imported(resize_model(4, 6, {1, 4, 4, 6}, {{"mode", "nearest"}}), 0, 1);
}

void refused(const std::string& model, const char* wanted)
{
    auto got = vo::import_model(bytes(model));
    assert_false(got.has_value());
    if (got.error().note.find(wanted) == std::string::npos)
        fail_msg("refused with \"%s\", not \"%s\"", got.error().note.c_str(), wanted);
}

// A model can declare any dims: the importer refuses to compute a weight
// matrix or a sample table past its bound instead of allocating it.
void huge_declared_dims_are_refused_not_allocated(void**)
{
    refused(resize_model_of({1, 1, 100000, 100000}, {1, 1, 100001, 100001}, {{"mode", "cubic"}}),
            "node 'r' (Resize): axis 2 resizes 100000 to 100001: its weight matrix would hold "
            "more than 16777216 values");
    refused(resize_model_of({1, 1, 2, 2}, {1, 1, 2, std::int64_t{1} << 40}, {{"mode", "nearest"}}),
            "node 'r' (Resize): axis 3 resizes to 1099511627776, more samples than the 16777216");
}

// A Conv or ConvTranspose of `op` on FLOAT16 data whose constant weights
// W [1, 1, 1, 1] are FLOAT16 values.
std::string conv_with_half_weights(const char* op)
{
    ::onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(13);
    auto* g = m.mutable_graph();
    g->set_name("conv");
    add_float_input(*g, "X", {1, 1, 3, 3});
    g->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(T::FLOAT16);
    auto* w = g->add_initializer();
    w->set_name("W");
    w->set_data_type(T::FLOAT16);
    for (int i = 0; i < 4; ++i) w->add_dims(1);
    w->add_int32_data(0x4000);  // 2.0
    auto* node = g->add_node();
    node->set_op_type(op);
    node->set_name("c");
    node->add_input("X");
    node->add_input("W");
    node->add_output("Y");
    g->add_output()->set_name("Y");
    return m.SerializeAsString();
}

// An FP16 convolution, whose constant weights the importer cannot take as
// FLOAT values, is refused by node before its weights are read, never
// reinterpreted. (lowering_nn.cpp and lowering_conv_transpose.cpp also
// refuse non-FLOAT constant weights themselves, for an op type that may
// one day admit FLOAT16 data.)
void fp16_convolutions_are_refused_by_node(void**)
{
    for (const char* op : {"Conv", "ConvTranspose"}) {
        auto got = vo::import_model(bytes(conv_with_half_weights(op)));
        assert_false(got.has_value());
        const std::string& note = got.error().note;
        const std::string wanted = std::string("node 'c' (") + op +
                                   "): 'X' is FLOAT16; FLOAT16 values are not imported for this "
                                   "op type";
        if (note.find(wanted) == std::string::npos)
            fail_msg("%s: refused with \"%s\", not \"%s\"", op, note.c_str(), wanted.c_str());
    }
}

void parameters_and_what_they_are_computed_from_are_value_inputs(void**)
{
    ::onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(13);
    auto* g = m.mutable_graph();
    add_float_input(*g, "X", {2, 3});
    add_float_input(*g, "scales", {2});
    add_float_input(*g, "offset", {2});
    add_float_input(*g, "data", {2, 3});
    // scales feeds Resize directly; offset through an Add; X through
    // Shape, which reads only its shape; data is data.
    auto node = [&](const char* op, std::vector<std::string> in, std::string out) {
        auto* n = g->add_node();
        n->set_op_type(op);
        for (const auto& i : in) n->add_input(i);
        n->add_output(out);
    };
    node("Add", {"scales", "offset"}, "moved");
    node("Resize", {"data", "", "moved"}, "Y");
    node("Shape", {"X"}, "shape");
    node("Reshape", {"data", "shape"}, "Z");
    auto got = vo::value_inputs(bytes(m.SerializeAsString()));
    if (!got) fail_msg("%s", got.error().note.c_str());
    assert_int_equal(got->size(), 2);
    assert_string_equal((*got)[0].c_str(), "scales");
    assert_string_equal((*got)[1].c_str(), "offset");
    auto refused = vo::value_inputs(bytes(std::string("not a model")));
    assert_false(refused.has_value());
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(whole_scales_take_tosa_resize),
        cmocka_unit_test(what_tosa_cannot_read_takes_a_matmul_per_axis),
        cmocka_unit_test(huge_declared_dims_are_refused_not_allocated),
        cmocka_unit_test(fp16_convolutions_are_refused_by_node),
        cmocka_unit_test(parameters_and_what_they_are_computed_from_are_value_inputs),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
