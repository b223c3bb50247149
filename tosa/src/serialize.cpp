// serialize.cpp - writes a Graph as a TOSA 1.0 flatbuffer.
//
// Owns: the inverse of decode.cpp. Decides:
//  - the file carries identifier "TOSA" and the graph's version as given;
//  - every operator with `present` attributes carries the table of its own
//    Op; without, none (NONE);
//  - constant data is written 8-aligned and zero-padded to a multiple of 8
//    bytes, as real producers write it;
//  - captured tensors are not written (their block refers to the parent's
//    declaration by name, as the file it came from did);
//  - an index out of range of the block's tensors is written as a name no
//    tensor carries, so parse() refuses the file instead of this writer
//    reading out of bounds.
#include <fmt/format.h>

#include "flatbuffer.hpp"

namespace vaccel::tosa {
namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;
using flatbuffers::String;
using flatbuffers::Vector;

constexpr std::size_t data_alignment = 8;

Offset<fb::TosaTensor> write_tensor(FlatBufferBuilder& b, const Tensor& tensor)
{
    const auto name = b.CreateString(tensor.name);
    std::vector<std::int32_t> dims;
    dims.reserve(tensor.shape.size());
    for (const std::int64_t dim : tensor.shape) dims.push_back(static_cast<std::int32_t>(dim));
    const auto shape = b.CreateVector(dims);
    Offset<Vector<std::uint8_t>> data;
    if (!tensor.data.empty()) {
        std::vector<std::uint8_t> padded = tensor.data;
        padded.resize((padded.size() + data_alignment - 1) / data_alignment * data_alignment, 0);
        b.ForceVectorAlignment(padded.size(), sizeof(std::uint8_t), data_alignment);
        data = b.CreateVector(padded);
    } else {
        data = b.CreateVector(std::vector<std::uint8_t>{});
    }
    const auto variable_name = b.CreateString(tensor.variable_name);
    return fb::CreateTosaTensor(b, name, shape, static_cast<fb::DType>(tensor.dtype), data,
                                tensor.variable, /*is_unranked=*/false, variable_name);
}

Offset<String> name_of(FlatBufferBuilder& b, const Block& block, std::uint32_t index)
{
    if (index >= block.tensors.size()) {
        return b.CreateString(fmt::format("<tensor index {} out of range>", index));
    }
    // Shared strings: a name used by many operators is written once.
    return b.CreateSharedString(block.tensors[index].name);
}

Offset<Vector<Offset<String>>> names_of(FlatBufferBuilder& b, const Block& block,
                                        const std::vector<std::uint32_t>& indices)
{
    std::vector<Offset<String>> names;
    names.reserve(indices.size());
    for (const std::uint32_t index : indices) names.push_back(name_of(b, block, index));
    return b.CreateVector(names);
}

Offset<fb::TosaOperator> write_operator(FlatBufferBuilder& b, const Block& block,
                                        const Operator& op)
{
    Offset<void> attribute;
    auto attribute_type = fb::Attribute::NONE;
    if (op.attributes.present) {
        attribute = detail::encode_attributes(b, op.op, op.attributes);
        attribute_type = static_cast<fb::Attribute>(op.op);  // union index = Op value
    }
    const auto inputs = names_of(b, block, op.inputs);
    const auto outputs = names_of(b, block, op.outputs);
    Offset<fb::OpLocation> location;
    if (!op.location.empty()) location = fb::CreateOpLocation(b, b.CreateString(op.location));
    return fb::CreateTosaOperator(b, static_cast<fb::Op>(op.op), attribute_type, attribute, inputs,
                                  outputs, location);
}

Offset<fb::TosaBasicBlock> write_block(FlatBufferBuilder& b, const Block& block)
{
    const auto name = b.CreateString(block.name);
    std::vector<Offset<fb::TosaOperator>> operators;
    operators.reserve(block.operators.size());
    for (const Operator& op : block.operators) operators.push_back(write_operator(b, block, op));
    std::vector<Offset<fb::TosaTensor>> tensors;
    tensors.reserve(block.tensors.size());
    for (const Tensor& tensor : block.tensors) {
        if (!tensor.captured) tensors.push_back(write_tensor(b, tensor));
    }
    const auto operator_vector = b.CreateVector(operators);
    const auto tensor_vector = b.CreateVector(tensors);
    const auto inputs = names_of(b, block, block.inputs);
    const auto outputs = names_of(b, block, block.outputs);
    return fb::CreateTosaBasicBlock(b, name, operator_vector, tensor_vector, inputs, outputs);
}

Offset<fb::TosaRegion> write_region(FlatBufferBuilder& b, const Region& region)
{
    const auto name = b.CreateString(region.name);
    std::vector<Offset<fb::TosaBasicBlock>> blocks;
    blocks.reserve(region.blocks.size());
    for (const Block& block : region.blocks) blocks.push_back(write_block(b, block));
    return fb::CreateTosaRegion(b, name, b.CreateVector(blocks));
}

}  // namespace

std::vector<std::uint8_t> serialize(const Graph& graph)
{
    FlatBufferBuilder b;
    std::vector<Offset<fb::TosaRegion>> regions;
    regions.reserve(graph.regions.size());
    for (const Region& region : graph.regions) regions.push_back(write_region(b, region));
    const auto region_vector = b.CreateVector(regions);
    const Version& v = graph.version;
    const auto version = fb::CreateVersion(b, v.major, v.minor, v.patch, v.draft);
    fb::FinishTosaGraphBuffer(b, fb::CreateTosaGraph(b, version, region_vector));
    return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
}

}  // namespace vaccel::tosa
