// kernel_shapes.hpp - how the CPU kernels walk shapes: TOSA broadcasting and
// the outer x axis x inner view of a shape around one axis.
//
// Owns nothing; header-only helpers the kernel files share (kernels.cpp,
// kernels_int.cpp, kernels_data.cpp), so one walk serves every dtype.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "kernels.hpp"
#include "parallel.hpp"
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

// Steps the multi-index `index` over the first `dims` dimensions of
// `shape` like an odometer (the last of them fastest), keeping each
// operand's offset at[k] in step through its strides.
template <std::size_t N>
void advance(ShapeIndex& index, std::array<std::int64_t, N>& at,
             const std::array<ShapeIndex, N>& strides, Shape shape, std::size_t dims)
{
    for (std::size_t d = dims; d-- > 0;) {
        if (++index[d] < shape[d]) {
            for (std::size_t k = 0; k < N; ++k) at[k] += strides[k][d];
            return;
        }
        for (std::size_t k = 0; k < N; ++k) at[k] -= strides[k][d] * (shape[d] - 1);
        index[d] = 0;
    }
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
        advance(index, at, strides, out_shape, rank);
    }
}

// Calls f(out_offset, at, step, length) for every row of out_shape (its
// last dimension, `length` elements from out_offset), where operand k's
// element at output index (i_0 .. i_r-1) is at base[k] + sum i_d *
// strides[k][d]: at[k] is the offset of the row's first element and
// step[k] = strides[k][r-1] its step along the row. Rows are split over the
// CPU kernels' threads (parallel.hpp) in chunks of about `grain` elements;
// f must write only its row. Rank 0 is one row of one element.
template <std::size_t N, class F>
void strided_rows(const std::array<ShapeIndex, N>& strides, const std::array<std::int64_t, N>& base,
                  Shape out_shape, std::uint64_t grain, F f)
{
    const std::uint64_t count = element_count(out_shape);
    if (count == 0) return;
    const std::size_t rank = out_shape.size();
    if (rank == 0) {
        f(std::uint64_t{0}, base, std::array<std::int64_t, N>{}, std::int64_t{1});
        return;
    }
    std::array<std::int64_t, N> step{};
    for (std::size_t k = 0; k < N; ++k) step[k] = strides[k][rank - 1];
    const std::int64_t length = out_shape[rank - 1];
    const std::uint64_t rows = count / static_cast<std::uint64_t>(length);
    const std::uint64_t rows_grain =
        std::max<std::uint64_t>(1, grain / static_cast<std::uint64_t>(length));
    parallel_for(rows, rows_grain, [&](std::uint64_t first, std::uint64_t end) {
        // The multi-index of row `first` over dimensions 0..rank-2, then an
        // odometer from there.
        ShapeIndex index{};
        std::array<std::int64_t, N> at = base;
        std::uint64_t rest = first;
        for (std::size_t d = rank - 1; d-- > 0;) {
            const auto extent = static_cast<std::uint64_t>(out_shape[d]);
            index[d] = static_cast<std::int64_t>(rest % extent);
            rest /= extent;
            for (std::size_t k = 0; k < N; ++k) at[k] += index[d] * strides[k][d];
        }
        for (std::uint64_t row = first; row < end; ++row) {
            f(row * static_cast<std::uint64_t>(length), std::as_const(at), std::as_const(step),
              length);
            advance(index, at, strides, out_shape, rank - 1);
        }
    });
}

// strided_rows() for operands under TOSA broadcast (equal ranks; a
// dimension of 1 where the output's is larger repeats: stride 0).
template <std::size_t N, class F>
void broadcast_rows(const std::array<Shape, N>& shapes, Shape out_shape, std::uint64_t grain,
                    F f)
{
    std::array<ShapeIndex, N> strides{};
    for (std::size_t k = 0; k < N; ++k) strides[k] = broadcast_strides(shapes[k], out_shape);
    strided_rows<N>(strides, std::array<std::int64_t, N>{}, out_shape, grain, f);
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
