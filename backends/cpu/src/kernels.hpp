// kernels.hpp - the FP32 operator kernels of the CPU backend on raw tensors.
//
// Owns nothing: every kernel reads and writes memory its caller owns. Decides
// the numerics of the CPU backend, which is the reference the other backends
// are compared with:
//  - elementwise operators compute each element with one float expression
//    (no reassociation), so results are bit-exact and reproducible;
//  - MATMUL uses Eigen's GEMM per batch, REDUCE_SUM accumulates in float in
//    index order, CONV2D accumulates in float in (ky, kx, ic) order after the
//    bias.
// Shapes arrive already checked by admission (admit.cpp): kernels do not
// validate them again.
#pragma once

#include <cstdint>
#include <span>

namespace vaccel::backend::cpu {

using Shape = std::span<const std::int64_t>;

std::uint64_t element_count(Shape shape);

enum class Binary { add, sub, mul };
// out = a (op) b with TOSA broadcast: equal ranks, each dimension of a and b
// equal to out's or 1.
void binary(Binary op, const float* a, Shape a_shape, const float* b, Shape b_shape, float* out,
            Shape out_shape);

enum class Unary { sigmoid, tanh };
void unary(Unary op, const float* in, float* out, std::uint64_t count);

// nan_propagate: a NaN input stays NaN; otherwise (IGNORE) it becomes min.
void clamp(const float* in, float* out, std::uint64_t count, float min, float max,
           bool nan_propagate);

// A [n, h, c] x B [n, c, w] -> [n, h, w].
void matmul(const float* a, const float* b, float* out, std::int64_t n, std::int64_t h,
            std::int64_t c, std::int64_t w);

// out[perm-permuted index] = in[index]: out dimension i is in dimension perms[i].
void transpose(const float* in, Shape in_shape, std::span<const std::int32_t> perms, float* out);

// Sums along `axis`; out has the same rank with dimension `axis` equal to 1.
void reduce_sum(const float* in, Shape in_shape, std::int32_t axis, float* out);

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
