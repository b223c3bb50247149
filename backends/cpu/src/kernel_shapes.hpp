// kernel_shapes.hpp - how the CPU kernels walk shapes: TOSA broadcasting and
// the outer x axis x inner view of a shape around one axis.
//
// Owns nothing; header-only helpers the kernel files share (kernels.cpp,
// kernels_int.cpp, kernels_data.cpp), so one walk serves every dtype.
#pragma once

#include <array>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "kernels.hpp"
#include "vaccel.h"

namespace vaccel::backend::cpu {

using ShapeIndex = std::array<std::int64_t, VACCEL_MAX_RANK>;

// Row-major strides of `shape`, with 0 where the dimension is 1 and the
// output's is larger (broadcast).
inline ShapeIndex broadcast_strides(Shape shape, Shape out_shape)
{
    ShapeIndex strides{};
    std::int64_t stride = 1;
    for (std::size_t i = shape.size(); i-- > 0;) {
        strides[i] = (shape[i] == 1 && out_shape[i] != 1) ? 0 : stride;
        stride *= shape[i];
    }
    return strides;
}

// Calls f(out_index, offsets) for every element of out_shape in row-major
// order, with each operand's element offset under TOSA broadcast (equal
// ranks; a dimension of 1 where the output's is larger repeats). When f
// returns bool, false stops the walk.
template <std::size_t N, class F>
void broadcast_walk(const std::array<Shape, N>& shapes, Shape out_shape, F f)
{
    const std::uint64_t count = element_count(out_shape);
    const std::size_t rank = out_shape.size();
    std::array<ShapeIndex, N> strides{};
    for (std::size_t k = 0; k < N; ++k) strides[k] = broadcast_strides(shapes[k], out_shape);
    ShapeIndex index{};
    std::array<std::int64_t, N> at{};
    for (std::uint64_t i = 0; i < count; ++i) {
        if constexpr (std::is_same_v<std::invoke_result_t<F&, std::uint64_t,
                                                          const std::array<std::int64_t, N>&>,
                                     bool>) {
            if (!f(i, std::as_const(at))) return;
        } else {
            f(i, std::as_const(at));
        }
        // Advance the multi-index like an odometer, keeping every offset.
        for (std::size_t d = rank; d-- > 0;) {
            if (++index[d] < out_shape[d]) {
                for (std::size_t k = 0; k < N; ++k) at[k] += strides[k][d];
                break;
            }
            for (std::size_t k = 0; k < N; ++k) at[k] -= strides[k][d] * (out_shape[d] - 1);
            index[d] = 0;
        }
    }
}

// outer x length x inner view of a shape around `axis`.
struct AxisSplit {
    std::int64_t outer = 1, length = 1, inner = 1;
};

inline AxisSplit split_at(Shape shape, std::int32_t axis)
{
    AxisSplit s;
    const auto a = static_cast<std::size_t>(axis);
    for (std::size_t i = 0; i < a; ++i) s.outer *= shape[i];
    for (std::size_t i = a + 1; i < shape.size(); ++i) s.inner *= shape[i];
    s.length = shape[a];
    return s;
}

}  // namespace vaccel::backend::cpu
