// kernels.cpp - FP32 operator kernels (see kernels.hpp for the numerics).
#include "kernels.hpp"
#include "kernel_shapes.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "gemm.hpp"
#include "parallel.hpp"
#include "vaccel.h"

namespace vaccel::backend::cpu {

std::uint64_t element_count(Shape shape)
{
    std::uint64_t count = 1;
    for (std::int64_t dim : shape) count *= static_cast<std::uint64_t>(dim);
    return count;
}

namespace {

// out = f(a, b) under TOSA broadcast, row by row (kernel_shapes.hpp): the
// four loops of a row are one each for whether a and b step along it, so
// the compiler vectorizes them; each element is still f of its own two
// operands, whatever the split.
template <class In, class T, class F>
void broadcast_apply(const In* a, Shape a_shape, const In* b, Shape b_shape, T* out,
                     Shape out_shape, F f)
{
    if (std::ranges::equal(a_shape, out_shape) && std::ranges::equal(b_shape, out_shape)) {
        parallel_for(element_count(out_shape), elementwise_grain,
                     [&](std::uint64_t begin, std::uint64_t end) {
                         for (std::uint64_t i = begin; i < end; ++i) out[i] = f(a[i], b[i]);
                     });
        return;
    }
    broadcast_rows<2>({a_shape, b_shape}, out_shape, elementwise_grain,
                      [&](std::uint64_t o, const std::array<std::int64_t, 2>& at,
                          const std::array<std::int64_t, 2>& step, std::int64_t length) {
                          const In* x = a + at[0];
                          const In* y = b + at[1];
                          T* z = out + o;
                          if (step[0] != 0 && step[1] != 0) {
                              for (std::int64_t j = 0; j < length; ++j) z[j] = f(x[j], y[j]);
                          } else if (step[0] != 0) {
                              const In v = y[0];
                              for (std::int64_t j = 0; j < length; ++j) z[j] = f(x[j], v);
                          } else if (step[1] != 0) {
                              const In v = x[0];
                              for (std::int64_t j = 0; j < length; ++j) z[j] = f(v, y[j]);
                          } else {
                              std::fill_n(z, length, f(x[0], y[0]));
                          }
                      });
}

// Applies f to every element of [0, count) over the kernels' threads.
template <class F>
void each_element(std::uint64_t count, F f)
{
    parallel_for(count, elementwise_grain, [&](std::uint64_t begin, std::uint64_t end) {
        for (std::uint64_t i = begin; i < end; ++i) f(i);
    });
}

// TOSA 1.0 apply_max_s / apply_min_s for floats. Equal operands (only +0 and
// -0 differ while comparing equal) order -0 below +0.
float max_of(float x, float y, bool nan_propagate)
{
    if (std::isnan(x) || std::isnan(y)) {
        if (nan_propagate || (std::isnan(x) && std::isnan(y)))
            return std::numeric_limits<float>::quiet_NaN();
        return std::isnan(x) ? y : x;
    }
    if (x == y) return std::signbit(x) ? y : x;
    return x > y ? x : y;
}

float min_of(float x, float y, bool nan_propagate)
{
    if (std::isnan(x) || std::isnan(y)) {
        if (nan_propagate || (std::isnan(x) && std::isnan(y)))
            return std::numeric_limits<float>::quiet_NaN();
        return std::isnan(x) ? y : x;
    }
    if (x == y) return std::signbit(x) ? x : y;
    return x < y ? x : y;
}


ShapeIndex row_major_strides(Shape shape)
{
    ShapeIndex strides{};
    std::int64_t stride = 1;
    for (std::size_t i = shape.size(); i-- > 0;) {
        strides[i] = stride;
        stride *= shape[i];
    }
    return strides;
}

// Calls f(out_offset, index) for every element of shape in row-major order.
template <class F>
void walk(Shape shape, F f)
{
    const std::uint64_t count = element_count(shape);
    ShapeIndex index{};
    for (std::uint64_t i = 0; i < count; ++i) {
        f(i, index);
        for (std::size_t d = shape.size(); d-- > 0;) {
            if (++index[d] < shape[d]) break;
            index[d] = 0;
        }
    }
}

// Output rows (its last dimension) over the kernels' threads: output
// dimension d steps the input by the stride of input dimension perms[d].
template <class T>
void transpose_of(const T* in, Shape in_shape, std::span<const std::int32_t> perms, T* out)
{
    const ShapeIndex in_strides = row_major_strides(in_shape);
    std::array<ShapeIndex, 1> steps{};
    ShapeIndex out_dims{};
    for (std::size_t d = 0; d < in_shape.size(); ++d) {
        out_dims[d] = in_shape[static_cast<std::size_t>(perms[d])];
        steps[0][d] = in_strides[static_cast<std::size_t>(perms[d])];
    }
    strided_rows<1>(steps, {0}, Shape(out_dims.data(), in_shape.size()), elementwise_grain,
                    [&](std::uint64_t o, const std::array<std::int64_t, 1>& at,
                        const std::array<std::int64_t, 1>& step, std::int64_t length) {
                        const T* from = in + at[0];
                        T* to = out + o;
                        if (step[0] == 1) {
                            std::copy_n(from, length, to);
                        } else {
                            for (std::int64_t j = 0; j < length; ++j) to[j] = from[j * step[0]];
                        }
                    });
}

template <class T>
void slice_of(const T* in, Shape in_shape, std::span<const std::int64_t> start, T* out,
              Shape out_shape)
{
    const std::array<ShapeIndex, 1> strides{row_major_strides(in_shape)};
    std::int64_t base = 0;
    for (std::size_t d = 0; d < in_shape.size(); ++d) base += start[d] * strides[0][d];
    strided_rows<1>(strides, {base}, out_shape, elementwise_grain,
                    [&](std::uint64_t o, const std::array<std::int64_t, 1>& at,
                        const std::array<std::int64_t, 1>&, std::int64_t length) {
                        std::copy_n(in + at[0], length, out + o);
                    });
}

template <class T>
void pad_of(const T* in, Shape in_shape, std::span<const std::int64_t> before, T value, T* out,
            Shape out_shape)
{
    const ShapeIndex strides = row_major_strides(in_shape);
    walk(out_shape, [&](std::uint64_t i, const ShapeIndex& index) {
        std::int64_t at = 0;
        for (std::size_t d = 0; d < out_shape.size(); ++d) {
            const std::int64_t source = index[d] - before[d];
            if (source < 0 || source >= in_shape[d]) {
                out[i] = value;
                return;
            }
            at += source * strides[d];
        }
        out[i] = in[at];
    });
}

template <class T>
void tile_of(const T* in, Shape in_shape, T* out, Shape out_shape)
{
    const ShapeIndex strides = row_major_strides(in_shape);
    walk(out_shape, [&](std::uint64_t i, const ShapeIndex& index) {
        std::int64_t at = 0;
        for (std::size_t d = 0; d < out_shape.size(); ++d) at += index[d] % in_shape[d] * strides[d];
        out[i] = in[at];
    });
}

// Calls f(T{}) with an unsigned type of `element` bytes (1, 2 or 4): the
// data layout operators move bit patterns, whatever the dtype.
template <class F>
void with_element(std::size_t element, F f)
{
    switch (element) {
    case 1: f(std::uint8_t{}); break;
    case 2: f(std::uint16_t{}); break;
    default: f(std::uint32_t{}); break;
    }
}

}  // namespace

void binary(Binary op, const float* a, Shape a_shape, const float* b, Shape b_shape, float* out,
            Shape out_shape, bool nan_propagate)
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
    case Binary::maximum:
        broadcast_apply(a, a_shape, b, b_shape, out, out_shape,
                        [=](float x, float y) { return max_of(x, y, nan_propagate); });
        break;
    case Binary::minimum:
        broadcast_apply(a, a_shape, b, b_shape, out, out_shape,
                        [=](float x, float y) { return min_of(x, y, nan_propagate); });
        break;
    case Binary::pow:
        broadcast_apply(a, a_shape, b, b_shape, out, out_shape,
                        [](float x, float y) { return std::pow(x, y); });
        break;
    }
}

void compare(Compare op, const float* a, Shape a_shape, const float* b, Shape b_shape,
             std::uint8_t* out, Shape out_shape)
{
    switch (op) {
    case Compare::equal:
        broadcast_apply(a, a_shape, b, b_shape, out, out_shape,
                        [](float x, float y) { return std::uint8_t{x == y}; });
        break;
    case Compare::greater:
        broadcast_apply(a, a_shape, b, b_shape, out, out_shape,
                        [](float x, float y) { return std::uint8_t{x > y}; });
        break;
    case Compare::greater_equal:
        broadcast_apply(a, a_shape, b, b_shape, out, out_shape,
                        [](float x, float y) { return std::uint8_t{x >= y}; });
        break;
    }
}

// INT32: TOSA 1.0 makes overflow a REQUIRE condition (the result is
// unpredictable); these wrap in two's complement, computed in uint32_t so
// that no C++ signed overflow happens.
void binary(Binary op, const std::int32_t* a, Shape a_shape, const std::int32_t* b, Shape b_shape,
            std::int32_t* out, Shape out_shape)
{
    const auto wrap = [](std::uint32_t v) { return static_cast<std::int32_t>(v); };
    switch (op) {
    case Binary::add:
        broadcast_apply(a, a_shape, b, b_shape, out, out_shape, [&](std::int32_t x, std::int32_t y) {
            return wrap(static_cast<std::uint32_t>(x) + static_cast<std::uint32_t>(y));
        });
        break;
    case Binary::sub:
        broadcast_apply(a, a_shape, b, b_shape, out, out_shape, [&](std::int32_t x, std::int32_t y) {
            return wrap(static_cast<std::uint32_t>(x) - static_cast<std::uint32_t>(y));
        });
        break;
    case Binary::maximum:
        broadcast_apply(a, a_shape, b, b_shape, out, out_shape,
                        [](std::int32_t x, std::int32_t y) { return std::max(x, y); });
        break;
    case Binary::minimum:
        broadcast_apply(a, a_shape, b, b_shape, out, out_shape,
                        [](std::int32_t x, std::int32_t y) { return std::min(x, y); });
        break;
    case Binary::mul:
    case Binary::pow: break;  // not admitted on INT32 (admission.cpp)
    }
}

void compare(Compare op, const std::int32_t* a, Shape a_shape, const std::int32_t* b,
             Shape b_shape, std::uint8_t* out, Shape out_shape)
{
    switch (op) {
    case Compare::equal:
        broadcast_apply(a, a_shape, b, b_shape, out, out_shape,
                        [](std::int32_t x, std::int32_t y) { return std::uint8_t{x == y}; });
        break;
    case Compare::greater:
        broadcast_apply(a, a_shape, b, b_shape, out, out_shape,
                        [](std::int32_t x, std::int32_t y) { return std::uint8_t{x > y}; });
        break;
    case Compare::greater_equal:
        broadcast_apply(a, a_shape, b, b_shape, out, out_shape,
                        [](std::int32_t x, std::int32_t y) { return std::uint8_t{x >= y}; });
        break;
    }
}

void select(const std::uint8_t* condition, Shape c_shape, const float* a, Shape a_shape,
            const float* b, Shape b_shape, float* out, Shape out_shape)
{
    broadcast_walk<3>({c_shape, a_shape, b_shape}, out_shape,
                      [&](std::uint64_t i, const std::array<std::int64_t, 3>& at) {
                          out[i] = condition[at[0]] != 0 ? a[at[1]] : b[at[2]];
                      });
}

void unary(Unary op, const float* in, float* out, std::uint64_t count)
{
    const auto apply = [&](auto f) { each_element(count, [&](std::uint64_t i) { out[i] = f(in[i]); }); };
    switch (op) {
    case Unary::sigmoid: apply([](float x) { return 1.0f / (1.0f + std::exp(-x)); }); break;
    case Unary::tanh: apply([](float x) { return std::tanh(x); }); break;
    case Unary::abs: apply([](float x) { return std::fabs(x); }); break;
    case Unary::negate: apply([](float x) { return -x; }); break;
    case Unary::exp: apply([](float x) { return std::exp(x); }); break;
    case Unary::log: apply([](float x) { return std::log(x); }); break;
    case Unary::reciprocal: apply([](float x) { return 1.0f / x; }); break;
    case Unary::rsqrt: apply([](float x) { return 1.0f / std::sqrt(x); }); break;
    case Unary::ceil: apply([](float x) { return std::ceil(x); }); break;
    case Unary::floor: apply([](float x) { return std::floor(x); }); break;
    case Unary::sin: apply([](float x) { return std::sin(x); }); break;
    case Unary::cos: apply([](float x) { return std::cos(x); }); break;
    case Unary::erf: apply([](float x) { return std::erf(x); }); break;
    }
}

// Branch-free, so that it vectorizes: a NaN fails both comparisons and
// passes through as it is (PROPAGATE), or becomes min (IGNORE); -0 and +0
// compare equal and pass through, as in std::min(std::max(v, min), max).
void clamp(const float* in, float* out, std::uint64_t count, float min, float max,
           bool nan_propagate)
{
    each_element(count, [&](std::uint64_t i) {
        const float value = in[i];
        float clamped = value < min ? min : value;
        clamped = max < clamped ? max : clamped;
        out[i] = !nan_propagate && value != value ? min : clamped;
    });
}

void matmul(const float* a, const float* b, float* out, std::int64_t n, std::int64_t h,
            std::int64_t c, std::int64_t w)
{
    for (std::int64_t batch = 0; batch < n; ++batch)
        gemm(h, w, c, a + batch * h * c, c, b + batch * c * w, w, false, out + batch * h * w, w,
             false);
}


namespace {

// Calls line(o, i0, i1) for the outputs [o * inner + i0, o * inner + i1)
// of a reduction over the middle of outer x length x inner, split over the
// kernels' threads; each output is reduced whole by one thread.
template <class Line>
void each_reduction(const AxisSplit& s, Line line)
{
    const auto inner = static_cast<std::uint64_t>(s.inner);
    const std::uint64_t outputs = static_cast<std::uint64_t>(s.outer) * inner;
    const auto per_output = static_cast<std::uint64_t>(std::max<std::int64_t>(1, s.length));
    parallel_for(outputs, std::max<std::uint64_t>(1, elementwise_grain / per_output),
                 [&](std::uint64_t begin, std::uint64_t end) {
                     while (begin < end) {
                         const std::uint64_t o = begin / inner, i0 = begin % inner;
                         const std::uint64_t i1 = std::min(inner, i0 + (end - begin));
                         line(static_cast<std::int64_t>(o), static_cast<std::int64_t>(i0),
                              static_cast<std::int64_t>(i1));
                         begin += i1 - i0;
                     }
                 });
}

}  // namespace

// Each output is 0 + x_0 + x_1 + ... in index order; the loops run across
// the inner outputs for each k, so they read rows and vectorize.
void reduce_sum(const float* in, Shape in_shape, std::int32_t axis, float* out)
{
    const AxisSplit s = split_at(in_shape, axis);
    each_reduction(s, [&](std::int64_t o, std::int64_t i0, std::int64_t i1) {
        float* sums = out + o * s.inner;
        const float* block = in + o * s.length * s.inner;
        if (s.inner == 1) {
            float sum = 0.0f;
            for (std::int64_t k = 0; k < s.length; ++k) sum += block[k];
            sums[0] = sum;
            return;
        }
        std::fill(sums + i0, sums + i1, 0.0f);
        for (std::int64_t k = 0; k < s.length; ++k) {
            const float* row = block + k * s.inner;
            for (std::int64_t i = i0; i < i1; ++i) sums[i] += row[i];
        }
    });
}

void reduce(Reduce op, const float* in, Shape in_shape, std::int32_t axis, float* out,
             bool nan_propagate)
{
    if (op == Reduce::sum) {
        reduce_sum(in, in_shape, axis, out);
        return;
    }
    const AxisSplit s = split_at(in_shape, axis);
    each_reduction(s, [&](std::int64_t o, std::int64_t i0, std::int64_t i1) {
        for (std::int64_t i = i0; i < i1; ++i) {
            const float* line = in + o * s.length * s.inner + i;
            // An empty axis gives the operation's identity (TOSA's initial value).
            float acc = op == Reduce::product ? 1.0f
                        : s.length == 0 ? (op == Reduce::max ? -1.0f : 1.0f) *
                                              std::numeric_limits<float>::infinity()
                                        : line[0];
            for (std::int64_t k = op == Reduce::product ? 0 : 1; k < s.length; ++k) {
                const float value = line[k * s.inner];
                switch (op) {
                case Reduce::max: acc = max_of(acc, value, nan_propagate); break;
                case Reduce::min: acc = min_of(acc, value, nan_propagate); break;
                default: acc *= value; break;
                }
            }
            out[o * s.inner + i] = acc;
        }
    });
}

void argmax(const float* in, Shape in_shape, std::int32_t axis, std::int32_t* out,
            bool nan_propagate)
{
    const AxisSplit s = split_at(in_shape, axis);
    for (std::int64_t o = 0; o < s.outer; ++o) {
        for (std::int64_t i = 0; i < s.inner; ++i) {
            const float* line = in + o * s.length * s.inner + i;
            float best = -std::numeric_limits<float>::infinity();
            std::int64_t best_index = 0;
            for (std::int64_t k = 0; k < s.length; ++k) {
                const float value = line[k * s.inner];
                if (std::isnan(value)) {
                    if (nan_propagate) {
                        best_index = k;
                        break;
                    }
                    continue;
                }
                if (value > best) {
                    best = value;
                    best_index = k;
                }
            }
            out[o * s.inner + i] = static_cast<std::int32_t>(best_index);
        }
    }
}

// ----- data layout operators: moves of `element`-byte values of any dtype

void transpose(const std::byte* in, Shape in_shape, std::span<const std::int32_t> perms,
               std::byte* out, std::size_t element)
{
    with_element(element, [&](auto tag) {
        using T = decltype(tag);
        transpose_of(reinterpret_cast<const T*>(in), in_shape, perms, reinterpret_cast<T*>(out));
    });
}

void concat(std::span<const std::byte* const> inputs, std::span<const Shape> shapes,
            std::int32_t axis, std::byte* out, std::size_t element)
{
    // Each outer row of the output is the inputs' rows one after the other.
    const AxisSplit first = split_at(shapes[0], axis);
    for (std::int64_t o = 0; o < first.outer; ++o) {
        for (std::size_t k = 0; k < inputs.size(); ++k) {
            const AxisSplit s = split_at(shapes[k], axis);
            const auto row = static_cast<std::size_t>(s.length * s.inner) * element;
            std::memcpy(out, inputs[k] + static_cast<std::size_t>(o) * row, row);
            out += row;
        }
    }
}

void slice(const std::byte* in, Shape in_shape, std::span<const std::int64_t> start,
           std::byte* out, Shape out_shape, std::size_t element)
{
    with_element(element, [&](auto tag) {
        using T = decltype(tag);
        slice_of(reinterpret_cast<const T*>(in), in_shape, start, reinterpret_cast<T*>(out),
                 out_shape);
    });
}

void pad(const std::byte* in, Shape in_shape, std::span<const std::int64_t> before,
         const std::byte* value, std::byte* out, Shape out_shape, std::size_t element)
{
    with_element(element, [&](auto tag) {
        using T = decltype(tag);
        T fill;
        std::memcpy(&fill, value, sizeof fill);
        pad_of(reinterpret_cast<const T*>(in), in_shape, before, fill, reinterpret_cast<T*>(out),
               out_shape);
    });
}

void tile(const std::byte* in, Shape in_shape, std::byte* out, Shape out_shape,
          std::size_t element)
{
    with_element(element, [&](auto tag) {
        using T = decltype(tag);
        tile_of(reinterpret_cast<const T*>(in), in_shape, reinterpret_cast<T*>(out), out_shape);
    });
}

void reverse(const std::byte* in, Shape in_shape, std::int32_t axis, std::byte* out,
             std::size_t element)
{
    const AxisSplit s = split_at(in_shape, axis);
    const auto block = static_cast<std::size_t>(s.inner) * element;
    for (std::int64_t o = 0; o < s.outer; ++o)
        for (std::int64_t k = 0; k < s.length; ++k)
            std::memcpy(out + static_cast<std::size_t>(o * s.length + k) * block,
                        in + static_cast<std::size_t>(o * s.length + (s.length - 1 - k)) * block,
                        block);
}

}  // namespace vaccel::backend::cpu
