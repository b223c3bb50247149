// kernels.hpp - the operator kernels of the CPU backend on raw tensors.
//
// Owns nothing: every kernel reads and writes memory its caller owns. Data is
// FP32 (float), BOOL (one byte per element, 0 or 1) or INT32 (ARGMAX's
// output). Decides the numerics of the CPU backend, which is the reference
// the other backends are compared with:
//  - elementwise operators compute each element with one float expression
//    (no reassociation), so results are bit-exact and reproducible; the
//    transcendental ones (EXP, LOG, POW, SIN, COS, ERF) are the C library's
//    float functions, RSQRT is 1/sqrt in float, RECIPROCAL is 1/x in float
//    (docs/operators.md lists the tolerance the tests hold them to);
//  - MAXIMUM/MINIMUM and REDUCE_MAX/MIN follow TOSA 1.0 nan_mode: PROPAGATE
//    gives NaN when any operand is NaN, IGNORE gives the other operand (NaN
//    only when all are NaN); -0 orders below +0 (IEEE 754-2019 maximum);
//  - ARGMAX gives the first index of the largest value; PROPAGATE: the first
//    NaN's index if there is one; IGNORE: NaNs are skipped, 0 if all are NaN;
//  - REDUCE_SUM/PRODUCT accumulate in float in index order;
//  - MATMUL is one GEMM per batch (gemm.hpp: OpenBLAS's sgemm, or Eigen's
//    product in VACCEL_CPU_GEMM=EIGEN builds), CONV2D the bias plus one GEMM
//    of the im2col patches (conv2d.cpp): each output is a float dot product
//    of n terms (C, or KH*KW*IC plus the bias) whose summation order,
//    blocking and FMA use are the GEMM's and may differ between machines
//    (OpenBLAS picks its kernels by CPU), thread counts and builds; the
//    tests hold them to the bound of any order, |got - exact| <= gamma(n) *
//    sum |terms|, gamma(n) = n*u / (1 - n*u), u = 2^-24 (docs/operators.md);
//  - data layout operators (TRANSPOSE, CONCAT, SLICE, PAD, TILE, REVERSE) copy
//    values of any stored dtype bit for bit.
// Shapes and attributes arrive already checked (admission.cpp, plan.cpp):
// kernels do not validate them again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace vaccel::backend::cpu {

using Shape = std::span<const std::int64_t>;

std::uint64_t element_count(Shape shape);

// maximum/minimum: nan_propagate selects TOSA nan_mode PROPAGATE, else IGNORE.
enum class Binary { add, sub, mul, maximum, minimum, pow };
// out = a (op) b with TOSA broadcast: equal ranks, each dimension of a and b
// equal to out's or 1.
void binary(Binary op, const float* a, Shape a_shape, const float* b, Shape b_shape, float* out,
            Shape out_shape, bool nan_propagate = true);

// out (BOOL, 0 or 1) = a (op) b, broadcast like binary(); NaN compares false.
enum class Compare { equal, greater, greater_equal };
void compare(Compare op, const float* a, Shape a_shape, const float* b, Shape b_shape,
             std::uint8_t* out, Shape out_shape);

// INT32 ADD SUB MAXIMUM MINIMUM and EQUAL GREATER GREATER_EQUAL, broadcast
// like the FP32 ones; ADD and SUB wrap on overflow (TOSA 1.0: unpredictable).
void binary(Binary op, const std::int32_t* a, Shape a_shape, const std::int32_t* b, Shape b_shape,
            std::int32_t* out, Shape out_shape);
void compare(Compare op, const std::int32_t* a, Shape a_shape, const std::int32_t* b,
             Shape b_shape, std::uint8_t* out, Shape out_shape);

// out = condition ? a : b, all three broadcast to out_shape (equal ranks).
void select(const std::uint8_t* condition, Shape c_shape, const float* a, Shape a_shape,
            const float* b, Shape b_shape, float* out, Shape out_shape);

enum class Unary {
    sigmoid, tanh, abs, negate, exp, log, reciprocal, rsqrt, ceil, floor, sin, cos, erf,
};
void unary(Unary op, const float* in, float* out, std::uint64_t count);

// nan_propagate: a NaN input stays NaN; otherwise (IGNORE) it becomes min.
void clamp(const float* in, float* out, std::uint64_t count, float min, float max,
           bool nan_propagate);

// A [n, h, c] x B [n, c, w] -> [n, h, w].
void matmul(const float* a, const float* b, float* out, std::int64_t n, std::int64_t h,
            std::int64_t c, std::int64_t w);

// Sums along `axis`; out has the same rank with dimension `axis` equal to 1.
void reduce_sum(const float* in, Shape in_shape, std::int32_t axis, float* out);

// Reduces along `axis` like reduce_sum (sum, max, min, product);
// nan_propagate is the nan_mode of max and min.
enum class Reduce { sum, max, min, product };
void reduce(Reduce op, const float* in, Shape in_shape, std::int32_t axis, float* out,
            bool nan_propagate = true);

// The index of the largest value along `axis` (see the numerics above); out
// has the input's shape without dimension `axis`.
void argmax(const float* in, Shape in_shape, std::int32_t axis, std::int32_t* out,
            bool nan_propagate);

// Data layout operators on values of any stored dtype: they move elements of
// `element` bytes (1, 2 or 4) as bit patterns.
//
// out[perm-permuted index] = in[index]: out dimension i is in dimension perms[i].
void transpose(const std::byte* in, Shape in_shape, std::span<const std::int32_t> perms,
               std::byte* out, std::size_t element);

// Joins the inputs (equal shapes but along `axis`) along `axis`.
void concat(std::span<const std::byte* const> inputs, std::span<const Shape> shapes,
            std::int32_t axis, std::byte* out, std::size_t element);

// out[i] = in[start + i] for every index i of out_shape.
void slice(const std::byte* in, Shape in_shape, std::span<const std::int64_t> start,
           std::byte* out, Shape out_shape, std::size_t element);

// out has in's shape grown by before[d] + after[d] in each dimension d; the
// new elements are the element at `value`.
void pad(const std::byte* in, Shape in_shape, std::span<const std::int64_t> before,
         const std::byte* value, std::byte* out, Shape out_shape, std::size_t element);

// out[i] = in[i mod in_shape] for every index i of out_shape (a multiple of in_shape).
void tile(const std::byte* in, Shape in_shape, std::byte* out, Shape out_shape,
          std::size_t element);

// out = in with dimension `axis` reversed.
void reverse(const std::byte* in, Shape in_shape, std::int32_t axis, std::byte* out,
             std::size_t element);

struct Conv2dGeometry {
    std::int64_t n = 0, ih = 0, iw = 0, ic = 0;  // input NHWC
    std::int64_t oc = 0, kh = 0, kw = 0;         // weight [oc, kh, kw, ic]
    std::int64_t oh = 0, ow = 0;                 // output [n, oh, ow, oc]
    std::int64_t pad_top = 0, pad_left = 0;
    std::int64_t stride_y = 1, stride_x = 1;
    std::int64_t dilation_y = 1, dilation_x = 1;
    bool bias_per_channel = true;  // bias [oc], else [1]
};
void conv2d(const float* in, const float* weight, const float* bias, float* out,
            const Conv2dGeometry& geometry);

}  // namespace vaccel::backend::cpu
