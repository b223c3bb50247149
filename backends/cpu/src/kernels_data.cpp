// kernels_data.cpp - GATHER SCATTER, CAST, logical, RESIZE, FFT2D RFFT2D
// kernels (see kernels_data.hpp for the numerics).
#include "kernels_data.hpp"
#include "kernel_shapes.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <numbers>
#include <vector>

#include "vaccel.h"

namespace vaccel::backend::cpu {

using tosa::DType;

// ---------------------------------------------------------------- GATHER, SCATTER

IndexFault gather(const std::byte* values, const std::int32_t* indices, std::byte* out,
                  std::int64_t n, std::int64_t k, std::int64_t w, std::int64_t c,
                  std::size_t element)
{
    const std::size_t row = static_cast<std::size_t>(c) * element;  // one [c] row in bytes
    for (std::int64_t i = 0; i < n; ++i) {
        for (std::int64_t j = 0; j < w; ++j) {
            const std::int32_t index = indices[i * w + j];
            if (index < 0 || index >= k)
                return {IndexFault::Kind::out_of_range, i, j, index};
            std::memcpy(out + static_cast<std::size_t>(i * w + j) * row,
                        values + static_cast<std::size_t>(i * k + index) * row, row);
        }
    }
    return {};
}

IndexFault scatter(const std::byte* values_in, const std::int32_t* indices,
                   const std::byte* input, std::byte* out, std::int64_t n, std::int64_t k,
                   std::int64_t w, std::int64_t c, std::size_t element)
{
    const std::size_t row = static_cast<std::size_t>(c) * element;
    std::memcpy(out, values_in, static_cast<std::size_t>(n * k) * row);
    std::vector<bool> written(static_cast<std::size_t>(k));
    for (std::int64_t i = 0; i < n; ++i) {
        written.assign(written.size(), false);
        for (std::int64_t j = 0; j < w; ++j) {
            const std::int32_t index = indices[i * w + j];
            if (index < 0 || index >= k)
                return {IndexFault::Kind::out_of_range, i, j, index};
            if (written[static_cast<std::size_t>(index)])
                return {IndexFault::Kind::duplicate, i, j, index};
            written[static_cast<std::size_t>(index)] = true;
            std::memcpy(out + static_cast<std::size_t>(i * k + index) * row,
                        input + static_cast<std::size_t>(i * w + j) * row, row);
        }
    }
    return {};
}

// ---------------------------------------------------------------- CAST

namespace {

template <class T>
T load(const std::byte* base, std::uint64_t i)
{
    T value;
    std::memcpy(&value, base + i * sizeof(T), sizeof(T));
    return value;
}

template <class T>
void store(std::byte* base, std::uint64_t i, T value)
{
    std::memcpy(base + i * sizeof(T), &value, sizeof(T));
}

// An integer or BOOL element, widened.
std::int64_t load_integer(DType dtype, const std::byte* base, std::uint64_t i)
{
    switch (dtype) {
    case DType::boolean: return load<std::uint8_t>(base, i) != 0 ? 1 : 0;
    case DType::int8: return load<std::int8_t>(base, i);
    case DType::int16: return load<std::int16_t>(base, i);
    default: return load<std::int32_t>(base, i);
    }
}

// Float to integer: round to nearest, ties to even (nearbyint in the default
// rounding mode), saturating; NaN gives 0.
template <class T>
T float_to_integer(float x)
{
    if (std::isnan(x)) return 0;
    // Both limits are exact in float for 8 and 16 bits; for 32 bits max
    // rounds up to 2^31, so `>=` catches everything that does not fit.
    if (x >= static_cast<float>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    if (x <= static_cast<float>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
    return static_cast<T>(std::nearbyint(x));
}

void store_from_float(DType to, std::byte* out, std::uint64_t i, float x)
{
    switch (to) {
    case DType::int8: store(out, i, float_to_integer<std::int8_t>(x)); break;
    case DType::int16: store(out, i, float_to_integer<std::int16_t>(x)); break;
    case DType::int32: store(out, i, float_to_integer<std::int32_t>(x)); break;
    case DType::boolean: store<std::uint8_t>(out, i, x != 0.0f ? 1 : 0); break;
    default: store(out, i, x); break;
    }
}

// Integer to integer keeps the low bits (C++ conversions are modular).
void store_from_integer(DType to, std::byte* out, std::uint64_t i, std::int64_t x)
{
    switch (to) {
    case DType::boolean: store<std::uint8_t>(out, i, x != 0 ? 1 : 0); break;
    case DType::int8: store(out, i, static_cast<std::int8_t>(x)); break;
    case DType::int16: store(out, i, static_cast<std::int16_t>(x)); break;
    case DType::int32: store(out, i, static_cast<std::int32_t>(x)); break;
    default: store(out, i, static_cast<float>(x)); break;  // nearest (IEEE default)
    }
}

}  // namespace

void cast(DType from, const std::byte* in, DType to, std::byte* out, std::uint64_t count)
{
    if (from == DType::fp32) {
        for (std::uint64_t i = 0; i < count; ++i) store_from_float(to, out, i, load<float>(in, i));
        return;
    }
    for (std::uint64_t i = 0; i < count; ++i)
        store_from_integer(to, out, i, load_integer(from, in, i));
}

// ---------------------------------------------------------------- logical

void logical(Logical op, const std::uint8_t* a, Shape a_shape, const std::uint8_t* b,
             Shape b_shape, std::uint8_t* out, Shape out_shape)
{
    const auto apply = [op](std::uint8_t x, std::uint8_t y) -> std::uint8_t {
        switch (op) {
        case Logical::land: return (x != 0 && y != 0) ? 1 : 0;
        case Logical::lor: return (x != 0 || y != 0) ? 1 : 0;
        case Logical::lxor: return ((x != 0) != (y != 0)) ? 1 : 0;
        }
        return 0;
    };
    broadcast_walk<2>({a_shape, b_shape}, out_shape,
                      [&](std::uint64_t i, const std::array<std::int64_t, 2>& at) {
                          out[i] = apply(a[at[0]], b[at[1]]);
                      });
}

void logical_not(const std::uint8_t* in, std::uint8_t* out, std::uint64_t count)
{
    for (std::uint64_t i = 0; i < count; ++i) out[i] = in[i] != 0 ? 0 : 1;
}

void reduce_bool(bool all, const std::uint8_t* in, Shape in_shape, std::int32_t axis,
                 std::uint8_t* out)
{
    const auto a = static_cast<std::size_t>(axis);
    std::int64_t outer = 1, inner = 1;
    for (std::size_t d = 0; d < a; ++d) outer *= in_shape[d];
    for (std::size_t d = a + 1; d < in_shape.size(); ++d) inner *= in_shape[d];
    const std::int64_t length = in_shape[a];
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t i = 0; i < inner; ++i) {
            bool result = all;  // the empty reduction: ALL true, ANY false
            for (std::int64_t l = 0; l < length; ++l) {
                const bool value = in[(o * length + l) * inner + i] != 0;
                result = all ? (result && value) : (result || value);
            }
            out[o * inner + i] = result ? 1 : 0;
        }
}

// ---------------------------------------------------------------- RESIZE

namespace {

std::int64_t floor_div(std::int64_t a, std::int64_t b)  // b > 0
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

}  // namespace

void resize(const float* in, float* out, const ResizeGeometry& g)
{
    const auto at = [&](std::int64_t n, std::int64_t y, std::int64_t x, std::int64_t c) {
        return in[((n * g.ih + y) * g.iw + x) * g.c + c];
    };
    float* o = out;
    for (std::int64_t n = 0; n < g.n; ++n)
        for (std::int64_t oy = 0; oy < g.oh; ++oy) {
            const std::int64_t y = oy * g.scale_y_d + g.offset_y;
            const std::int64_t iy = floor_div(y, g.scale_y_n);
            const float dy = static_cast<float>(y - iy * g.scale_y_n) /
                             static_cast<float>(g.scale_y_n);
            // The checked attributes keep -1 <= iy < ih; the clamps keep
            // every read inside the input regardless.
            const std::int64_t iy0 = std::clamp<std::int64_t>(iy, 0, g.ih - 1);
            const std::int64_t iy1 = std::clamp<std::int64_t>(iy + 1, 0, g.ih - 1);
            for (std::int64_t ox = 0; ox < g.ow; ++ox) {
                const std::int64_t x = ox * g.scale_x_d + g.offset_x;
                const std::int64_t ix = floor_div(x, g.scale_x_n);
                const float dx = static_cast<float>(x - ix * g.scale_x_n) /
                                 static_cast<float>(g.scale_x_n);
                const std::int64_t ix0 = std::clamp<std::int64_t>(ix, 0, g.iw - 1);
                const std::int64_t ix1 = std::clamp<std::int64_t>(ix + 1, 0, g.iw - 1);
                for (std::int64_t c = 0; c < g.c; ++c) {
                    if (g.bilinear) {
                        float acc = at(n, iy0, ix0, c) * (1.0f - dy) * (1.0f - dx);
                        acc += at(n, iy0, ix1, c) * (1.0f - dy) * dx;
                        acc += at(n, iy1, ix0, c) * dy * (1.0f - dx);
                        acc += at(n, iy1, ix1, c) * dy * dx;
                        *o++ = acc;
                    } else {
                        *o++ = at(n, dy >= 0.5f ? iy1 : iy0, dx >= 0.5f ? ix1 : ix0, c);
                    }
                }
            }
        }
}

// ---------------------------------------------------------------- FFT2D, RFFT2D

namespace {

using Complex = std::complex<double>;

// e^(sign * 2 pi i m / length) for m in [0, length / 2): the twiddle
// factors of a radix-2 transform of `length` points.
std::vector<Complex> twiddles(std::size_t length, double sign)
{
    std::vector<Complex> table(std::max<std::size_t>(length / 2, 1));
    for (std::size_t m = 0; m < table.size(); ++m) {
        const double angle = 2.0 * std::numbers::pi * static_cast<double>(m) /
                             static_cast<double>(length);
        table[m] = {std::cos(angle), sign * std::sin(angle)};
    }
    return table;
}

// In-place iterative radix-2 transform; a.size() is a power of two (checked
// at load) and `table` its twiddles().
void fft_in_place(std::vector<Complex>& a, const std::vector<Complex>& table)
{
    const std::size_t n = a.size();
    for (std::size_t i = 1, j = 0; i < n; ++i) {  // bit-reversed order
        std::size_t bit = n >> 1;
        for (; (j & bit) != 0; bit >>= 1) j ^= bit;
        j ^= bit;
        if (i < j) std::swap(a[i], a[j]);
    }
    for (std::size_t length = 2; length <= n; length <<= 1) {
        const std::size_t half = length / 2;
        const std::size_t stride = n / length;  // into the table of n points
        for (std::size_t i = 0; i < n; i += length)
            for (std::size_t k = 0; k < half; ++k) {
                const Complex u = a[i + k];
                const Complex v = a[i + k + half] * table[k * stride];
                a[i + k] = u + v;
                a[i + k + half] = u - v;
            }
    }
}

// data [h, w] -> result [h, out_w]: every row transformed (keeping its first
// out_w frequencies), then every kept column.
void transform(const std::vector<Complex>& data, std::size_t h, std::size_t w,
               std::size_t out_w, double sign, std::vector<Complex>& result)
{
    const std::vector<Complex> along_w = twiddles(w, sign);
    const std::vector<Complex> along_h = twiddles(h, sign);
    result.assign(h * out_w, 0.0);
    std::vector<Complex> line(w);
    for (std::size_t y = 0; y < h; ++y) {
        std::copy_n(data.begin() + static_cast<std::ptrdiff_t>(y * w), w, line.begin());
        fft_in_place(line, along_w);
        std::copy_n(line.begin(), out_w, result.begin() + static_cast<std::ptrdiff_t>(y * out_w));
    }
    line.resize(h);
    for (std::size_t x = 0; x < out_w; ++x) {
        for (std::size_t y = 0; y < h; ++y) line[y] = result[y * out_w + x];
        fft_in_place(line, along_h);
        for (std::size_t y = 0; y < h; ++y) result[y * out_w + x] = line[y];
    }
}

}  // namespace

void fft2d(const float* in_real, const float* in_imag, float* out_real, float* out_imag,
           std::int64_t n, std::int64_t h, std::int64_t w, bool inverse)
{
    const auto rows = static_cast<std::size_t>(h);
    const auto columns = static_cast<std::size_t>(w);
    const std::size_t plane = rows * columns;
    std::vector<Complex> data(plane);
    std::vector<Complex> result;
    for (std::size_t base = 0; base < static_cast<std::size_t>(n) * plane; base += plane) {
        for (std::size_t i = 0; i < plane; ++i) data[i] = {in_real[base + i], in_imag[base + i]};
        transform(data, rows, columns, columns, inverse ? 1.0 : -1.0, result);
        for (std::size_t i = 0; i < plane; ++i) {
            out_real[base + i] = static_cast<float>(result[i].real());
            out_imag[base + i] = static_cast<float>(result[i].imag());
        }
    }
}

void rfft2d(const float* in, float* out_real, float* out_imag, std::int64_t n, std::int64_t h,
            std::int64_t w)
{
    const auto rows = static_cast<std::size_t>(h);
    const auto columns = static_cast<std::size_t>(w);
    const std::size_t kept = columns / 2 + 1;  // the other half is the conjugate mirror
    const std::size_t plane = rows * columns;
    const std::size_t out_plane = rows * kept;
    std::vector<Complex> data(plane);
    std::vector<Complex> result;
    for (std::size_t b = 0; b < static_cast<std::size_t>(n); ++b) {
        for (std::size_t i = 0; i < plane; ++i) data[i] = {in[b * plane + i], 0.0};
        transform(data, rows, columns, kept, -1.0, result);
        for (std::size_t i = 0; i < out_plane; ++i) {
            out_real[b * out_plane + i] = static_cast<float>(result[i].real());
            out_imag[b * out_plane + i] = static_cast<float>(result[i].imag());
        }
    }
}

}  // namespace vaccel::backend::cpu
