// craft.cpp - test support: fixture reading, assertions, and flatbuffers
// written field by field (including what serialize() never writes: wrong
// versions, unknown names, negative dimensions, external data).
#include <fstream>
#include <iterator>

#include "tosa_generated.h"

#include "support.hpp"

namespace vaccel::tosa::test {

std::vector<std::uint8_t> read_fixture(const std::string& path)
{
    std::ifstream file(path, std::ios::binary);
    if (!file) fail_msg("cannot read fixture %s", path.c_str());
    return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

Graph parse_ok(const std::vector<std::uint8_t>& bytes)
{
    auto graph = parse_bytes(bytes);
    if (!graph) fail_msg("parse refused: %s", graph.error().note.c_str());
    return std::move(*graph);
}

void expect_error(const Result<Graph>& result, Errc code, std::uint32_t detail, std::uint64_t arg0)
{
    assert_false(result.has_value());
    const Error& error = result.error();
    if (error.code != code || error.detail != detail || error.arg0 != arg0) {
        fail_msg("expected code %u detail %u arg0 %llu, got code %u detail %u arg0 %llu (%s)",
                 static_cast<unsigned>(code), detail, static_cast<unsigned long long>(arg0),
                 static_cast<unsigned>(error.code), error.detail,
                 static_cast<unsigned long long>(error.arg0), error.note.c_str());
    }
}

std::uint32_t tensor_index(const Block& block, const std::string& name)
{
    for (std::size_t i = 0; i < block.tensors.size(); ++i) {
        if (block.tensors[i].name == name) return static_cast<std::uint32_t>(i);
    }
    fail_msg("no tensor %s in block %s", name.c_str(), block.name.c_str());
    return 0;
}

RawGraph raw_add()
{
    RawGraph graph;
    for (const char* name : {"a", "b", "c"}) {
        RawTensor tensor;
        tensor.name = name;
        tensor.shape = {2};
        graph.tensors.push_back(std::move(tensor));
    }
    RawOperator add;
    add.inputs = {"a", "b"};
    add.outputs = {"c"};
    graph.operators = {add};
    graph.inputs = {"a", "b"};
    graph.outputs = {"c"};
    return graph;
}

namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

Offset<flatbuffers::Vector<Offset<flatbuffers::String>>> strings(
    FlatBufferBuilder& b, const std::vector<std::string>& values)
{
    return b.CreateVectorOfStrings(values);
}

Offset<fb::TosaTensor> write_tensor(FlatBufferBuilder& b, const RawTensor& t)
{
    const auto name = b.CreateString(t.name);
    const auto shape = b.CreateVector(t.shape);
    b.ForceVectorAlignment(t.data.size(), 1, 8);
    const auto data = b.CreateVector(t.data);
    fb::TosaTensorBuilder tensor(b);
    tensor.add_name(name);
    tensor.add_shape(shape);
    tensor.add_type(static_cast<fb::DType>(t.dtype));
    tensor.add_data(data);
    tensor.add_is_unranked(t.unranked);
    tensor.add_offset(t.offset);
    tensor.add_size(t.size);
    return tensor.Finish();
}

Offset<fb::TosaOperator> write_operator(FlatBufferBuilder& b, const RawOperator& o)
{
    Offset<void> attribute;
    if (o.attribute_type != 0) attribute = Offset<void>(b.EndTable(b.StartTable()));
    const auto inputs = strings(b, o.inputs);
    const auto outputs = strings(b, o.outputs);
    return fb::CreateTosaOperator(b, static_cast<fb::Op>(o.op),
                                  static_cast<fb::Attribute>(o.attribute_type), attribute, inputs,
                                  outputs);
}

}  // namespace

std::vector<std::uint8_t> craft(const RawGraph& graph)
{
    FlatBufferBuilder b;
    std::vector<Offset<fb::TosaTensor>> tensors;
    for (const RawTensor& t : graph.tensors) tensors.push_back(write_tensor(b, t));
    std::vector<Offset<fb::TosaOperator>> operators;
    for (const RawOperator& o : graph.operators) operators.push_back(write_operator(b, o));
    const auto block = fb::CreateTosaBasicBlock(b, b.CreateString("main"),
                                                b.CreateVector(operators), b.CreateVector(tensors),
                                                strings(b, graph.inputs), strings(b, graph.outputs));
    const auto region = fb::CreateTosaRegion(b, b.CreateString("main"), b.CreateVector(&block, 1));
    const auto version = fb::CreateVersion(b, graph.major, graph.minor, graph.patch, graph.draft);
    fb::FinishTosaGraphBuffer(b, fb::CreateTosaGraph(b, version, b.CreateVector(&region, 1)));
    return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
}

}  // namespace vaccel::tosa::test
