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

std::uint16_t f16_bits(float value)
{
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
    const std::uint16_t sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
    const std::uint32_t magnitude = bits & 0x7FFFFFFFu;
    if (magnitude > 0x7F800000u)  // NaN: quiet, top payload bits kept
        return static_cast<std::uint16_t>(sign | 0x7E00u | ((magnitude >> 13) & 0x3FFu));
    if (magnitude >= 0x477FF000u)  // from 65520 up (and infinity): infinity
        return static_cast<std::uint16_t>(sign | 0x7C00u);
    if (magnitude < 0x38800000u) {  // below 2^-14: subnormal or zero, in units of 2^-24
        // |value| * 2^24, rounded to nearest even; exact in double.
        const double units = static_cast<double>(std::bit_cast<float>(magnitude)) * 16777216.0;
        double whole = static_cast<double>(static_cast<std::uint32_t>(units));
        const double rest = units - whole;
        if (rest > 0.5 || (rest == 0.5 && static_cast<std::uint32_t>(whole) % 2 == 1))
            whole += 1;
        return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(whole));
    }
    // Normal: rebias the exponent (127 -> 15), round the 13 dropped bits.
    const std::uint32_t rebased = magnitude - (112u << 23);
    std::uint32_t half = rebased >> 13;
    const std::uint32_t dropped = rebased & 0x1FFFu;
    if (dropped > 0x1000u || (dropped == 0x1000u && (half & 1u)))
        ++half;  // a carry into the exponent is the right result
    return static_cast<std::uint16_t>(sign | half);
}

float f16_value(std::uint16_t bits)
{
    const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
    const std::uint32_t exponent = (bits >> 10) & 0x1Fu;
    const std::uint32_t mantissa = bits & 0x3FFu;
    if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
        const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
        return sign ? -magnitude : magnitude;
    }
    if (exponent == 0x1F)
        return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
    return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

std::vector<std::uint8_t> f16_bytes(std::span<const float> values)
{
    std::vector<std::uint8_t> bytes(values.size() * 2);
    for (std::size_t i = 0; i < values.size(); ++i) {
        const std::uint16_t bits = f16_bits(values[i]);
        bytes[2 * i] = static_cast<std::uint8_t>(bits);
        bytes[2 * i + 1] = static_cast<std::uint8_t>(bits >> 8);
    }
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

std::uint32_t GraphBuilder::constant_f16(std::string name, std::vector<std::int64_t> shape,
                                         std::span<const float> values)
{
    return tensor(std::move(name), std::move(shape), DType::fp16, f16_bytes(values));
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

Attributes clamp_f16_attr(float min, float max)
{
    Attributes attributes;
    attributes.present = true;
    attributes.min_val = f16_bytes(std::span(&min, 1));
    attributes.max_val = f16_bytes(std::span(&max, 1));
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

Attributes transpose_conv_attr(std::vector<std::int32_t> out_pad, std::vector<std::int32_t> stride,
                               DType acc_type)
{
    Attributes attributes;
    attributes.present = true;
    attributes.out_pad = std::move(out_pad);
    attributes.stride = std::move(stride);
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
