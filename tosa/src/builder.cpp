// builder.cpp - GraphBuilder and the attribute helpers.
//
// Owns: the one-region, one-block graphs built in C++. Decides: the
// defaults a hand-built graph gets (see builder.hpp).
#include "vaccel/tosa/builder.hpp"

#include <bit>
#include <cstring>
#include <utility>

namespace vaccel::tosa {
namespace {

constexpr std::uint32_t nan_propagate = 1;  // NanPropagationMode::PROPAGATE

static_assert(std::endian::native == std::endian::little,
              "constant data is little-endian; this build writes it in host order");

Graph empty_graph()
{
    Graph graph;
    graph.version = Version{1, 0, 0, false};
    Region region;
    region.name = "main";
    Block block;
    block.name = "main";
    region.blocks.push_back(std::move(block));
    graph.regions.push_back(std::move(region));
    return graph;
}

}  // namespace

std::vector<std::uint8_t> f32_bytes(std::span<const float> values)
{
    std::vector<std::uint8_t> bytes(values.size_bytes());
    if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
}

GraphBuilder::GraphBuilder() : graph_(empty_graph()) {}

std::uint32_t GraphBuilder::tensor(std::string name, std::vector<std::int64_t> shape, DType dtype,
                                   std::vector<std::uint8_t> data)
{
    Tensor tensor;
    tensor.name = std::move(name);
    tensor.shape = std::move(shape);
    tensor.dtype = dtype;
    tensor.data = std::move(data);
    block().tensors.push_back(std::move(tensor));
    return static_cast<std::uint32_t>(block().tensors.size() - 1);
}

std::uint32_t GraphBuilder::constant_f32(std::string name, std::vector<std::int64_t> shape,
                                         std::span<const float> values)
{
    return tensor(std::move(name), std::move(shape), DType::fp32, f32_bytes(values));
}

void GraphBuilder::op(Op op, std::vector<std::uint32_t> inputs,
                      std::vector<std::uint32_t> outputs, Attributes attributes)
{
    attributes.present = true;
    block().operators.push_back(
        Operator{op, std::move(attributes), std::move(inputs), std::move(outputs), {}});
}

void GraphBuilder::input(std::uint32_t tensor) { block().inputs.push_back(tensor); }

void GraphBuilder::output(std::uint32_t tensor) { block().outputs.push_back(tensor); }

Graph GraphBuilder::finish() { return std::exchange(graph_, empty_graph()); }

Attributes axis_attr(std::int32_t axis)
{
    Attributes attributes;
    attributes.present = true;
    attributes.axis = axis;
    return attributes;
}

Attributes transpose_attr(std::vector<std::int32_t> perms)
{
    Attributes attributes;
    attributes.present = true;
    attributes.perms = std::move(perms);
    return attributes;
}

Attributes clamp_f32_attr(float min, float max)
{
    Attributes attributes;
    attributes.present = true;
    attributes.min_val = f32_bytes(std::span(&min, 1));
    attributes.max_val = f32_bytes(std::span(&max, 1));
    attributes.nan_mode = nan_propagate;
    return attributes;
}

Attributes conv_attr(std::vector<std::int32_t> pad, std::vector<std::int32_t> stride,
                     std::vector<std::int32_t> dilation, DType acc_type)
{
    Attributes attributes;
    attributes.present = true;
    attributes.pad = std::move(pad);
    attributes.stride = std::move(stride);
    attributes.dilation = std::move(dilation);
    attributes.acc_type = acc_type;
    return attributes;
}

Attributes pool_attr(std::vector<std::int32_t> kernel, std::vector<std::int32_t> stride,
                     std::vector<std::int32_t> pad, DType acc_type)
{
    Attributes attributes;
    attributes.present = true;
    attributes.kernel = std::move(kernel);
    attributes.stride = std::move(stride);
    attributes.pad = std::move(pad);
    attributes.acc_type = acc_type;
    attributes.nan_mode = nan_propagate;
    return attributes;
}

}  // namespace vaccel::tosa
