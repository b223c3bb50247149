// test_model_variables.cpp - the model rewrite behind `vaccelctl run --variable`:
// a model without variables passes byte for byte; a model with variables
// gets one IDENTITY and one output per variable of its first block, after
// everything else, and --variable values replace every declaration's data;
// bad arguments are refused with the names involved.
#include <cstring>
#include <fstream>
#include <iterator>

#include "model_variables.hpp"
#include "vaccel/tosa/builder.hpp"
#include "vaccel/tosa/graph.hpp"

#include "cmocka.hpp"

using namespace vaccel;
using namespace vaccel::ctl;

namespace {

std::vector<std::uint8_t> slurp(const std::string& path)
{
    std::ifstream file(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

// x + state -> y; state <- y. The variable "acc" starts at [1, 2].
std::vector<std::uint8_t> accumulator()
{
    tosa::GraphBuilder g;
    const float initial[] = {1, 2};
    const auto var = g.constant_f32("acc_tensor", {2}, initial);
    g.block().tensors[var].variable = true;
    g.block().tensors[var].variable_name = "model/acc";
    const auto x = g.tensor("x", {2}, tosa::DType::fp32);
    const auto state = g.tensor("state", {2}, tosa::DType::fp32);
    const auto y = g.tensor("y", {2}, tosa::DType::fp32);
    g.op(tosa::Op::identity, {var}, {state});
    g.op(tosa::Op::add, {state, x}, {y});
    g.op(tosa::Op::identity, {y}, {var});
    g.input(x);
    g.output(y);
    return tosa::serialize(g.finish());
}

void a_model_without_variables_is_passed_unchanged(void**)
{
    const auto bytes = slurp(VACCEL_FIXTURES_DIR
                             "/v1.0-add_1x4x4x4_f32/flatbuffer-tflite/test_add_1x4x4x4_f32.tosa");
    assert_true(bytes.size() > 100);
    auto exposed = expose_variables(bytes, {});
    assert_true(exposed.has_value());
    assert_true(exposed->bytes == bytes);
    assert_true(exposed->variables.empty());
    auto refused = expose_variables(bytes, {{"acc", npy::Array{}}});
    assert_false(refused.has_value());
    assert_string_equal(refused.error().message.c_str(),
                        "--variable acc: the model declares no variables in its first block");
}

void variables_become_outputs_read_last(void**)
{
    npy::Array start{npy::DType::f4, {2}, std::vector<std::uint8_t>(8)};
    const float values[] = {10, 20};
    std::memcpy(start.data.data(), values, 8);
    auto exposed = expose_variables(accumulator(), {{"model/acc", start}});
    assert_true(exposed.has_value());
    assert_int_equal(exposed->variables.size(), 1);
    assert_string_equal(exposed->variables[0].first.c_str(), "model/acc");
    assert_string_equal(exposed->variables[0].second.c_str(), "variable.model_acc");
    auto graph = tosa::parse(std::as_bytes(std::span(exposed->bytes)));
    assert_true(graph.has_value());
    const tosa::Block& block = graph->regions[0].blocks[0];
    assert_int_equal(block.outputs.size(), 2);
    const tosa::Tensor& added = block.tensors[block.outputs[1]];
    assert_string_equal(added.name.c_str(), "variable.model_acc");
    const tosa::Operator& last = block.operators.back();
    assert_true(last.op == tosa::Op::identity);
    assert_true(block.tensors[last.inputs[0]].variable);
    assert_true(last.outputs[0] == block.outputs[1]);
    // The declaration now starts at [10, 20].
    assert_memory_equal(block.tensors[last.inputs[0]].data.data(), values, 8);
}

void bad_variable_arguments_are_refused(void**)
{
    assert_false(variable_argument("acc").has_value());
    assert_false(variable_argument("=x.npy").has_value());
    assert_false(variable_argument("acc=").has_value());
    auto ok = variable_argument("a=b=c.npy");
    assert_true(ok.has_value());
    assert_string_equal(ok->first.c_str(), "a");
    assert_string_equal(ok->second.c_str(), "b=c.npy");

    npy::Array wrong{npy::DType::f4, {3}, std::vector<std::uint8_t>(12)};
    auto shape = expose_variables(accumulator(), {{"model/acc", wrong}});
    assert_false(shape.has_value());
    assert_string_equal(shape.error().message.c_str(),
                        "variable 'model/acc' is float32 [2] but the file holds float32 [3]; "
                        "give a .npy file of exactly that dtype and shape");
    auto unknown = expose_variables(accumulator(), {{"acc", wrong}});
    assert_false(unknown.has_value());
    assert_string_equal(unknown.error().message.c_str(),
                        "--variable acc: the model has no variable of that name; its variables "
                        "are 'model/acc'");
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_model_without_variables_is_passed_unchanged),
        cmocka_unit_test(variables_become_outputs_read_last),
        cmocka_unit_test(bad_variable_arguments_are_refused),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
