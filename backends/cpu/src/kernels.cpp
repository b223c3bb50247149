// kernels.cpp - FP32 operator kernels (see kernels.hpp for the numerics).
#include "kernels.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>

#include "vaccel.h"

namespace vaccel::backend::cpu {

std::uint64_t element_count(Shape shape)
{
    std::uint64_t count = 1;
    for (std::int64_t dim : shape) count *= static_cast<std::uint64_t>(dim);
    return count;
}

namespace {

using Index = std::array<std::int64_t, VACCEL_MAX_RANK>;

// Row-major strides of `shape`, with 0 where the dimension is 1 and the
// output's is larger (broadcast).
Index broadcast_strides(Shape shape, Shape out_shape)
{
    Index strides{};
    std::int64_t stride = 1;
    for (std::size_t i = shape.size(); i-- > 0;) {
        strides[i] = (shape[i] == 1 && out_shape[i] != 1) ? 0 : stride;
        stride *= shape[i];
    }
    return strides;
}

template <class F>
void broadcast_apply(const float* a, Shape a_shape, const float* b, Shape b_shape, float* out,
                     Shape out_shape, F f)
{
    const std::uint64_t count = element_count(out_shape);
    if (std::ranges::equal(a_shape, out_shape) && std::ranges::equal(b_shape, out_shape)) {
        for (std::uint64_t i = 0; i < count; ++i) out[i] = f(a[i], b[i]);
        return;
    }
    const std::size_t rank = out_shape.size();
    const Index a_strides = broadcast_strides(a_shape, out_shape);
    const Index b_strides = broadcast_strides(b_shape, out_shape);
    Index index{};
    std::int64_t a_at = 0;
    std::int64_t b_at = 0;
    for (std::uint64_t i = 0; i < count; ++i) {
        out[i] = f(a[a_at], b[b_at]);
        // Advance the multi-index like an odometer, keeping both offsets.
        for (std::size_t d = rank; d-- > 0;) {
            if (++index[d] < out_shape[d]) {
                a_at += a_strides[d];
                b_at += b_strides[d];
                break;
            }
            a_at -= a_strides[d] * (out_shape[d] - 1);
            b_at -= b_strides[d] * (out_shape[d] - 1);
            index[d] = 0;
        }
    }
}

}  // namespace

void binary(Binary op, const float* a, Shape a_shape, const float* b, Shape b_shape, float* out,
            Shape out_shape)
{
    switch (op) {
    case Binary::add:
        broadcast_apply(a, a_shape, b, b_shape, out, out_shape,
                        [](float x, float y) { return x + y; });
        break;
    case Binary::sub:
        broadcast_apply(a, a_shape, b, b_shape, out, out_shape,
                        [](float x, float y) { return x - y; });
        break;
    case Binary::mul:
        broadcast_apply(a, a_shape, b, b_shape, out, out_shape,
                        [](float x, float y) { return x * y; });
        break;
    }
}

void unary(Unary op, const float* in, float* out, std::uint64_t count)
{
    switch (op) {
    case Unary::sigmoid:
        for (std::uint64_t i = 0; i < count; ++i) out[i] = 1.0f / (1.0f + std::exp(-in[i]));
        break;
    case Unary::tanh:
        for (std::uint64_t i = 0; i < count; ++i) out[i] = std::tanh(in[i]);
        break;
    }
}

void clamp(const float* in, float* out, std::uint64_t count, float min, float max,
           bool nan_propagate)
{
    for (std::uint64_t i = 0; i < count; ++i) {
        const float value = in[i];
        if (std::isnan(value)) {
            out[i] = nan_propagate ? value : min;
            continue;
        }
        out[i] = std::min(std::max(value, min), max);
    }
}

void matmul(const float* a, const float* b, float* out, std::int64_t n, std::int64_t h,
            std::int64_t c, std::int64_t w)
{
    using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    for (std::int64_t batch = 0; batch < n; ++batch) {
        Eigen::Map<const RowMajor> lhs(a + batch * h * c, h, c);
        Eigen::Map<const RowMajor> rhs(b + batch * c * w, c, w);
        Eigen::Map<RowMajor> result(out + batch * h * w, h, w);
        result.noalias() = lhs * rhs;
    }
}

void transpose(const float* in, Shape in_shape, std::span<const std::int32_t> perms, float* out)
{
    const std::size_t rank = in_shape.size();
    Index in_strides{};
    std::int64_t stride = 1;
    for (std::size_t i = rank; i-- > 0;) {
        in_strides[i] = stride;
        stride *= in_shape[i];
    }
    // Walking the output in order: output dimension d steps the input by
    // the stride of input dimension perms[d].
    Index out_dims{};
    Index steps{};
    for (std::size_t d = 0; d < rank; ++d) {
        out_dims[d] = in_shape[static_cast<std::size_t>(perms[d])];
        steps[d] = in_strides[static_cast<std::size_t>(perms[d])];
    }
    const std::uint64_t count = element_count(in_shape);
    Index index{};
    std::int64_t at = 0;
    for (std::uint64_t i = 0; i < count; ++i) {
        out[i] = in[at];
        for (std::size_t d = rank; d-- > 0;) {
            if (++index[d] < out_dims[d]) {
                at += steps[d];
                break;
            }
            at -= steps[d] * (out_dims[d] - 1);
            index[d] = 0;
        }
    }
}

void reduce_sum(const float* in, Shape in_shape, std::int32_t axis, float* out)
{
    std::int64_t outer = 1;
    std::int64_t inner = 1;
    const auto a = static_cast<std::size_t>(axis);
    for (std::size_t i = 0; i < a; ++i) outer *= in_shape[i];
    for (std::size_t i = a + 1; i < in_shape.size(); ++i) inner *= in_shape[i];
    const std::int64_t length = in_shape[a];
    for (std::int64_t o = 0; o < outer; ++o) {
        for (std::int64_t i = 0; i < inner; ++i) {
            float sum = 0.0f;
            for (std::int64_t k = 0; k < length; ++k) sum += in[(o * length + k) * inner + i];
            out[o * inner + i] = sum;
        }
    }
}

void conv2d(const float* in, const float* weight, const float* bias, float* out,
            const Conv2dGeometry& g)
{
    for (std::int64_t n = 0; n < g.n; ++n) {
        for (std::int64_t oy = 0; oy < g.oh; ++oy) {
            for (std::int64_t ox = 0; ox < g.ow; ++ox) {
                float* pixel = out + ((n * g.oh + oy) * g.ow + ox) * g.oc;
                for (std::int64_t oc = 0; oc < g.oc; ++oc) {
                    float acc = bias[g.bias_per_channel ? oc : 0];
                    for (std::int64_t ky = 0; ky < g.kh; ++ky) {
                        const std::int64_t iy = oy * g.stride_y - g.pad_top + ky * g.dilation_y;
                        if (iy < 0 || iy >= g.ih) continue;
                        for (std::int64_t kx = 0; kx < g.kw; ++kx) {
                            const std::int64_t ix =
                                ox * g.stride_x - g.pad_left + kx * g.dilation_x;
                            if (ix < 0 || ix >= g.iw) continue;
                            const float* source = in + ((n * g.ih + iy) * g.iw + ix) * g.ic;
                            const float* taps = weight + ((oc * g.kh + ky) * g.kw + kx) * g.ic;
                            for (std::int64_t ic = 0; ic < g.ic; ++ic) acc += source[ic] * taps[ic];
                        }
                    }
                    pixel[oc] = acc;
                }
            }
        }
    }
}

}  // namespace vaccel::backend::cpu
