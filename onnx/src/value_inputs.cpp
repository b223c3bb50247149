// value_inputs.cpp - the graph inputs a model needs as values
// (importer.hpp, value_inputs).
#include <onnx/onnx_pb.h>

#include <map>
#include <set>
#include <string_view>

#include "lowering.hpp"
#include "vaccel/onnx/importer.hpp"

namespace vaccel::onnx {

// TOSA's shapes are static, so these are needed at import.
const std::vector<int>& parameter_inputs(std::string_view op)
{
    static const std::map<std::string_view, std::vector<int>> table = {
        {"Reshape", {1}},         {"Expand", {1}},        {"Tile", {1}},
        {"Slice", {1, 2, 3, 4}},  {"Pad", {1, 2}},        {"Resize", {1, 2, 3}},
        {"Upsample", {1}},        {"ConstantOfShape", {0}}, {"Range", {0, 1, 2}},
        {"Squeeze", {1}},         {"Unsqueeze", {1}},     {"Split", {1}},
        {"ReduceSum", {1}},       {"ReduceMean", {1}},    {"ReduceMax", {1}},
        {"ReduceMin", {1}},       {"ReduceProd", {1}},    {"ReduceL1", {1}},
        {"ReduceL2", {1}},        {"ReduceLogSum", {1}},  {"ReduceLogSumExp", {1}},
        {"ReduceSumSquare", {1}}, {"TopK", {1}},          {"OneHot", {1}},
        {"Clip", {1, 2}},         {"CumSum", {1}},        {"Trilu", {1}},
        {"Dropout", {1, 2}},      {"HannWindow", {0}},    {"HammingWindow", {0}},
        {"BlackmanWindow", {0}},  {"Compress", {1}},      {"DFT", {1}},
        {"RNN", {4}},             {"GRU", {4}},           {"LSTM", {4}},
        // The integer products' zero points are TOSA operands (lowering_integer.cpp).
        {"MatMulInteger", {2, 3}}, {"ConvInteger", {2, 3}},
        {"QLinearMatMul", {2, 5}}, {"QLinearConv", {2, 5}},
    };
    static const std::vector<int> none;
    const auto it = table.find(op);
    return it == table.end() ? none : it->second;
}

Result<std::vector<std::string>> value_inputs(std::span<const std::byte> model)
{
    ::onnx::ModelProto proto;
    if (model.size() > static_cast<std::size_t>(INT32_MAX) ||
        !proto.ParseFromArray(model.data(), static_cast<int>(model.size())))
        return fail(Error::of(Errc::invalid_argument)
                        .with_note("the file is not an ONNX model (its protobuf does not parse)"));
    const ::onnx::GraphProto& graph = proto.graph();
    std::set<std::string> initializers;
    for (const auto& i : graph.initializer()) initializers.insert(i.name());
    std::map<std::string, const ::onnx::NodeProto*> producer;
    for (const auto& node : graph.node())
        for (const auto& out : node.output()) producer[out] = &node;
    // Walks up from each parameter operand to the graph inputs it is
    // computed from; Shape and Size read only their input's shape.
    std::set<std::string> needed, seen;
    std::vector<std::string> pending;
    for (const auto& node : graph.node())
        for (int i : parameter_inputs(node.op_type()))
            if (i < node.input_size() && !node.input(i).empty()) pending.push_back(node.input(i));
    while (!pending.empty()) {
        const std::string name = std::move(pending.back());
        pending.pop_back();
        if (!seen.insert(name).second || initializers.contains(name)) continue;
        const auto made = producer.find(name);
        if (made == producer.end()) {
            needed.insert(name);
            continue;
        }
        const std::string& op = made->second->op_type();
        if (op == "Shape" || op == "Size") continue;
        for (const auto& in : made->second->input())
            if (!in.empty()) pending.push_back(in);
    }
    std::vector<std::string> out;
    for (const auto& input : graph.input())
        if (needed.contains(input.name())) out.push_back(input.name());
    return out;
}

}  // namespace vaccel::onnx
