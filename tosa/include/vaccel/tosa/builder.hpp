// builder.hpp - builds one-block TOSA 1.0 graphs in C++.
//
// Owns: a convenient way to write a Graph with region "main" holding one
// block "main", for the example-model generator and backend tests; the
// result goes to serialize(). Decides: version 1.0.0, draft false; every
// operator carries its attribute table (`present` is set by op()), as real
// producers write; tensors are named by the caller and must be unique (parse
// refuses duplicates). The builder does not check the graph: parse() of its
// serialization does.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vaccel/tosa/graph.hpp"

namespace vaccel::tosa {

class GraphBuilder {
public:
    GraphBuilder();

    // Adds a tensor and returns its index. `data` non-empty makes it a
    // constant: exactly Tensor::byte_size() bytes, little-endian packed.
    std::uint32_t tensor(std::string name, std::vector<std::int64_t> shape, DType dtype,
                         std::vector<std::uint8_t> data = {});
    // An FP32 constant holding `values` (as many as the shape has elements).
    std::uint32_t constant_f32(std::string name, std::vector<std::int64_t> shape,
                               std::span<const float> values);
    // An FP16 constant holding `values` rounded to FP16 (f16_bytes).
    std::uint32_t constant_f16(std::string name, std::vector<std::int64_t> shape,
                               std::span<const float> values);
    // Appends an operator; `inputs`/`outputs` are tensor indices.
    void op(Op op, std::vector<std::uint32_t> inputs, std::vector<std::uint32_t> outputs,
            Attributes attributes = {});
    // Declares a tensor a graph input / output (in call order).
    void input(std::uint32_t tensor);
    void output(std::uint32_t tensor);

    // The block under construction, for what the calls above do not set
    // (variables, locations).
    Block& block() { return graph_.regions.front().blocks.front(); }
    // Hands the graph over; the builder is empty afterwards.
    Graph finish();

private:
    Graph graph_;
};

// Attributes of REDUCE_*, CONCAT, REVERSE, ARGMAX.
Attributes axis_attr(std::int32_t axis);
// Attributes of TRANSPOSE.
Attributes transpose_attr(std::vector<std::int32_t> perms);
// Attributes of an FP32 CLAMP (nan_mode PROPAGATE).
Attributes clamp_f32_attr(float min, float max);
// Attributes of an FP16 CLAMP (nan_mode PROPAGATE; min and max rounded to FP16).
Attributes clamp_f16_attr(float min, float max);
// Attributes of CONV2D, CONV3D, DEPTHWISE_CONV2D (pad top,bottom,left,right).
Attributes conv_attr(std::vector<std::int32_t> pad, std::vector<std::int32_t> stride,
                     std::vector<std::int32_t> dilation, DType acc_type = DType::fp32);
// Attributes of TRANSPOSE_CONV2D (out_pad top,bottom,left,right).
Attributes transpose_conv_attr(std::vector<std::int32_t> out_pad, std::vector<std::int32_t> stride,
                               DType acc_type = DType::fp32);
// Attributes of MAX_POOL2D (nan_mode PROPAGATE) and AVG_POOL2D.
Attributes pool_attr(std::vector<std::int32_t> kernel, std::vector<std::int32_t> stride,
                     std::vector<std::int32_t> pad, DType acc_type = DType::fp32);

// FP32 values as little-endian bytes, the layout of constant data.
std::vector<std::uint8_t> f32_bytes(std::span<const float> values);
// FP32 values rounded to IEEE binary16 (nearest, ties to even; subnormals
// kept, magnitudes from 65520 up become infinity, NaN stays a quiet NaN), as
// little-endian bytes: the layout of FP16 constant data.
std::vector<std::uint8_t> f16_bytes(std::span<const float> values);
// One FP32 value rounded to binary16 as f16_bytes does, and that FP16 value
// widened back to FP32 (exact).
std::uint16_t f16_bits(float value);
float f16_value(std::uint16_t bits);

}  // namespace vaccel::tosa
