// kernels_qconv.hpp - the CPU backend's integer tensor operators (TOSA 1.0
// integer profile): MATMUL, CONV2D, DEPTHWISE_CONV2D, TRANSPOSE_CONV2D and
// CONV3D on INT8/INT16 data, AVG_POOL2D on INT8/INT16, MAX_POOL2D on INT16.
//
// Owns nothing: every kernel reads and writes memory its caller owns.
// Decides the integer numerics (docs/operators.md, "Integer tensor
// operators"):
//  - each term is (value - input_zp) * (weight - weight_zp), summed with the
//    bias in int64: exact, since a term is below 2^31 in magnitude, unless
//    one output sums more than 2^32 terms (an operand of over 4 G elements);
//  - the sum is stored in the output type (INT32, or INT48: 6 bytes, little
//    endian two's complement, as TOSA serializes it), saturated to its range.
//    TOSA 1.0 requires that it fits (the result is unpredictable otherwise);
//    saturating is what its reference model does for INT48;
//  - AVG_POOL2D divides the window's sum of (value - input_zp) by the count
//    of input (not padding) elements with TOSA's reciprocal_scale and
//    apply_scale_32 (a multiply and an arithmetic shift; for example 5 / 2
//    gives 3 and -5 / 2 gives -3), adds output_zp and clamps to the data
//    type. The product is taken in 128 bits, so any window sum is defined.
// Weights arrive as INT8 values: INT4 weights are unpacked once at load
// (unpack_int4). Shapes, attributes and zero points arrive already checked
// (plan.cpp): kernels do not validate them again.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels.hpp"
#include "kernels_spatial.hpp"
#include "vaccel/tosa/graph.hpp"

namespace vaccel::backend::cpu {

// The dtypes and zero points of one integer operator. MATMUL: input_zp is
// A_zp and weight_zp B_zp; AVG_POOL2D: weight_zp is its output_zp.
struct IntOperands {
    tosa::DType input = tosa::DType::int8;   // INT8 or INT16
    tosa::DType output = tosa::DType::int32; // INT32 or INT48 (bias too); pools: the input's
    std::int64_t input_zp = 0;
    std::int64_t weight_zp = 0;
};

// INT48 element `index` of `data` (6 bytes, little endian), sign-extended.
std::int64_t load_int48(const std::byte* data, std::uint64_t index);
// Writes the low 48 bits of `value` as element `index` of `data`.
void store_int48(std::byte* data, std::uint64_t index, std::int64_t value);

// `count` INT4 values packed two per byte, element 2i in the low nibble of
// byte i and 2i+1 in its high nibble, sign-extended into one INT8 each.
void unpack_int4(const std::uint8_t* packed, std::int8_t* out, std::uint64_t count);

// A [n, h, c] times B [n, c, w] (same dtype) into [n, h, w].
void matmul_int(const std::byte* a, const std::byte* b, std::byte* out, std::int64_t n,
                std::int64_t h, std::int64_t c, std::int64_t w, const IntOperands& operands);

// The layouts and geometry of the FP32 kernels (kernels.hpp, kernels_spatial.hpp).
void conv2d_int(const std::byte* in, const std::int8_t* weight, const std::byte* bias,
                std::byte* out, const Conv2dGeometry& geometry, const IntOperands& operands);
void depthwise_conv2d_int(const std::byte* in, const std::int8_t* weight, const std::byte* bias,
                          std::byte* out, const Conv2dGeometry& geometry,
                          const IntOperands& operands);
void transpose_conv2d_int(const std::byte* in, const std::int8_t* weight, const std::byte* bias,
                          std::byte* out, const Conv2dGeometry& geometry,
                          const IntOperands& operands);
void conv3d_int(const std::byte* in, const std::int8_t* weight, const std::byte* bias,
                std::byte* out, const Conv3dGeometry& geometry, const IntOperands& operands);

// INT8 or INT16 (operands.input); input_zp and output_zp (operands.weight_zp).
void avg_pool2d_int(const std::byte* in, std::byte* out, const Pool2dGeometry& geometry,
                    const IntOperands& operands);
void max_pool2d(const std::int16_t* in, std::int16_t* out, const Pool2dGeometry& geometry);

}  // namespace vaccel::backend::cpu
