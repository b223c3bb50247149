// kernels_qconv.cpp - the integer profile's tensor operators (see
// kernels_qconv.hpp for the numerics). Plain loops in TOSA 1.0's order.
#include "kernels_qconv.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

namespace vaccel::backend::cpu {

using tosa::DType;

std::int64_t load_int48(const std::byte* data, std::uint64_t index)
{
    std::uint64_t bits = 0;
    for (int b = 5; b >= 0; --b)
        bits = (bits << 8) | std::to_integer<std::uint64_t>(data[index * 6 + static_cast<unsigned>(b)]);
    // Bit 47 is the sign: shifting it to bit 63 and back sign-extends.
    return static_cast<std::int64_t>(bits << 16) >> 16;
}

void store_int48(std::byte* data, std::uint64_t index, std::int64_t value)
{
    auto bits = static_cast<std::uint64_t>(value);
    for (unsigned b = 0; b < 6; ++b, bits >>= 8)
        data[index * 6 + b] = static_cast<std::byte>(bits & 0xFF);
}

void unpack_int4(const std::uint8_t* packed, std::int8_t* out, std::uint64_t count)
{
    for (std::uint64_t i = 0; i < count; ++i) {
        const unsigned nibble = (packed[i / 2] >> (i % 2 == 0 ? 0 : 4)) & 0xF;
        // Bit 3 is the sign: 0x8..0xF are -8..-1.
        out[i] = static_cast<std::int8_t>(nibble >= 8 ? static_cast<int>(nibble) - 16
                                                      : static_cast<int>(nibble));
    }
}

namespace {

constexpr std::int64_t int48_min = -(std::int64_t{1} << 47);
constexpr std::int64_t int48_max = (std::int64_t{1} << 47) - 1;

// Element `index` of an INT32 or INT48 tensor (bias).
std::int64_t load_acc(const std::byte* data, std::uint64_t index, DType dtype)
{
    if (dtype == DType::int48) return load_int48(data, index);
    std::int32_t value;
    std::memcpy(&value, data + index * 4, 4);
    return value;
}

// Stores `value` saturated to the INT32 or INT48 range.
void store_acc(std::byte* data, std::uint64_t index, std::int64_t value, DType dtype)
{
    if (dtype == DType::int48) {
        store_int48(data, index, std::clamp(value, int48_min, int48_max));
        return;
    }
    const auto narrow = static_cast<std::int32_t>(
        std::clamp<std::int64_t>(value, std::numeric_limits<std::int32_t>::min(),
                                 std::numeric_limits<std::int32_t>::max()));
    std::memcpy(data + index * 4, &narrow, 4);
}

template <class In>
const In* typed(const std::byte* data)
{
    return reinterpret_cast<const In*>(data);
}

template <class In>
void matmul_typed(const In* a, const In* b, std::byte* out, std::int64_t n, std::int64_t h,
                  std::int64_t c, std::int64_t w, const IntOperands& q)
{
    for (std::int64_t batch = 0; batch < n; ++batch)
        for (std::int64_t y = 0; y < h; ++y)
            for (std::int64_t x = 0; x < w; ++x) {
                std::int64_t acc = 0;
                for (std::int64_t k = 0; k < c; ++k)
                    acc += (a[(batch * h + y) * c + k] - q.input_zp) *
                           (b[(batch * c + k) * w + x] - q.weight_zp);
                store_acc(out, static_cast<std::uint64_t>((batch * h + y) * w + x), acc,
                          q.output);
            }
}

template <class In>
void conv2d_typed(const In* in, const std::int8_t* weight, const std::byte* bias, std::byte* out,
                  const Conv2dGeometry& g, const IntOperands& q)
{
    for (std::int64_t n = 0; n < g.n; ++n)
        for (std::int64_t oy = 0; oy < g.oh; ++oy)
            for (std::int64_t ox = 0; ox < g.ow; ++ox)
                for (std::int64_t oc = 0; oc < g.oc; ++oc) {
                    std::int64_t acc = 0;
                    for (std::int64_t ky = 0; ky < g.kh; ++ky) {
                        const std::int64_t y = oy * g.stride_y - g.pad_top + ky * g.dilation_y;
                        if (y < 0 || y >= g.ih) continue;
                        for (std::int64_t kx = 0; kx < g.kw; ++kx) {
                            const std::int64_t x = ox * g.stride_x - g.pad_left + kx * g.dilation_x;
                            if (x < 0 || x >= g.iw) continue;
                            const In* source = in + ((n * g.ih + y) * g.iw + x) * g.ic;
                            const std::int8_t* taps = weight + ((oc * g.kh + ky) * g.kw + kx) * g.ic;
                            for (std::int64_t ic = 0; ic < g.ic; ++ic)
                                acc += (source[ic] - q.input_zp) * (taps[ic] - q.weight_zp);
                        }
                    }
                    acc += load_acc(bias, static_cast<std::uint64_t>(g.bias_per_channel ? oc : 0),
                                    q.output);
                    store_acc(out, static_cast<std::uint64_t>(((n * g.oh + oy) * g.ow + ox) * g.oc + oc),
                              acc, q.output);
                }
}

template <class In>
void depthwise_typed(const In* in, const std::int8_t* weight, const std::byte* bias,
                     std::byte* out, const Conv2dGeometry& g, const IntOperands& q)
{
    const std::int64_t m = g.ic == 0 ? 1 : g.oc / g.ic;  // the channel multiplier
    for (std::int64_t n = 0; n < g.n; ++n)
        for (std::int64_t oy = 0; oy < g.oh; ++oy)
            for (std::int64_t ox = 0; ox < g.ow; ++ox)
                for (std::int64_t o = 0; o < g.oc; ++o) {
                    // Output channel o = c * m + j reads input channel c;
                    // weight [kh, kw, ic, m] element (ky, kx, c, j) is at
                    // (ky * kw + kx) * oc + o.
                    std::int64_t acc = 0;
                    for (std::int64_t ky = 0; ky < g.kh; ++ky) {
                        const std::int64_t y = oy * g.stride_y - g.pad_top + ky * g.dilation_y;
                        if (y < 0 || y >= g.ih) continue;
                        for (std::int64_t kx = 0; kx < g.kw; ++kx) {
                            const std::int64_t x = ox * g.stride_x - g.pad_left + kx * g.dilation_x;
                            if (x < 0 || x >= g.iw) continue;
                            const In value = in[((n * g.ih + y) * g.iw + x) * g.ic + o / m];
                            const std::int8_t tap = weight[(ky * g.kw + kx) * g.oc + o];
                            acc += (value - q.input_zp) * (tap - q.weight_zp);
                        }
                    }
                    acc += load_acc(bias, static_cast<std::uint64_t>(g.bias_per_channel ? o : 0),
                                    q.output);
                    store_acc(out, static_cast<std::uint64_t>(((n * g.oh + oy) * g.ow + ox) * g.oc + o),
                              acc, q.output);
                }
}

// Output (oy, ox) takes tap (ky, kx) from input (y / stride_y, x / stride_x)
// where y = oy - out_pad_top - ky and x alike are non-negative multiples of
// the stride inside the input (kernels_spatial.hpp).
template <class In>
void transpose_typed(const In* in, const std::int8_t* weight, const std::byte* bias,
                     std::byte* out, const Conv2dGeometry& g, const IntOperands& q)
{
    for (std::int64_t n = 0; n < g.n; ++n)
        for (std::int64_t oy = 0; oy < g.oh; ++oy)
            for (std::int64_t ox = 0; ox < g.ow; ++ox)
                for (std::int64_t oc = 0; oc < g.oc; ++oc) {
                    std::int64_t acc = 0;
                    for (std::int64_t ky = 0; ky < g.kh; ++ky) {
                        const std::int64_t y = oy - g.pad_top - ky;
                        if (y < 0 || y % g.stride_y != 0 || y / g.stride_y >= g.ih) continue;
                        for (std::int64_t kx = 0; kx < g.kw; ++kx) {
                            const std::int64_t x = ox - g.pad_left - kx;
                            if (x < 0 || x % g.stride_x != 0 || x / g.stride_x >= g.iw) continue;
                            const In* source =
                                in + ((n * g.ih + y / g.stride_y) * g.iw + x / g.stride_x) * g.ic;
                            const std::int8_t* taps = weight + ((oc * g.kh + ky) * g.kw + kx) * g.ic;
                            for (std::int64_t ic = 0; ic < g.ic; ++ic)
                                acc += (source[ic] - q.input_zp) * (taps[ic] - q.weight_zp);
                        }
                    }
                    acc += load_acc(bias, static_cast<std::uint64_t>(g.bias_per_channel ? oc : 0),
                                    q.output);
                    store_acc(out, static_cast<std::uint64_t>(((n * g.oh + oy) * g.ow + ox) * g.oc + oc),
                              acc, q.output);
                }
}

template <class In>
void conv3d_typed(const In* in, const std::int8_t* weight, const std::byte* bias, std::byte* out,
                  const Conv3dGeometry& g, const IntOperands& q)
{
    for (std::int64_t n = 0; n < g.n; ++n)
        for (std::int64_t od = 0; od < g.od; ++od)
            for (std::int64_t oy = 0; oy < g.oh; ++oy)
                for (std::int64_t ox = 0; ox < g.ow; ++ox)
                    for (std::int64_t oc = 0; oc < g.oc; ++oc) {
                        std::int64_t acc = 0;
                        for (std::int64_t kd = 0; kd < g.kd; ++kd) {
                            const std::int64_t d = od * g.stride_d - g.pad_front + kd * g.dilation_d;
                            if (d < 0 || d >= g.id) continue;
                            for (std::int64_t ky = 0; ky < g.kh; ++ky) {
                                const std::int64_t y = oy * g.stride_y - g.pad_top + ky * g.dilation_y;
                                if (y < 0 || y >= g.ih) continue;
                                for (std::int64_t kx = 0; kx < g.kw; ++kx) {
                                    const std::int64_t x =
                                        ox * g.stride_x - g.pad_left + kx * g.dilation_x;
                                    if (x < 0 || x >= g.iw) continue;
                                    const In* source =
                                        in + (((n * g.id + d) * g.ih + y) * g.iw + x) * g.ic;
                                    const std::int8_t* taps =
                                        weight + (((oc * g.kd + kd) * g.kh + ky) * g.kw + kx) * g.ic;
                                    for (std::int64_t ic = 0; ic < g.ic; ++ic)
                                        acc += (source[ic] - q.input_zp) * (taps[ic] - q.weight_zp);
                                }
                            }
                        }
                        acc += load_acc(bias,
                                        static_cast<std::uint64_t>(g.bias_per_channel ? oc : 0),
                                        q.output);
                        store_acc(out,
                                  static_cast<std::uint64_t>(
                                      (((n * g.od + od) * g.oh + oy) * g.ow + ox) * g.oc + oc),
                                  acc, q.output);
                    }
}

// TOSA 1.0 reciprocal_scale(count) and apply_scale_32(sum, multiplier,
// shift, double_round = false): round(sum / count) by a multiply and an
// arithmetic shift. 1 << 30 <= multiplier < 1 << 31, 30 <= shift <= 62.
std::int64_t divide_by_count(std::int64_t sum, std::int64_t count)
{
    const auto value = static_cast<std::uint32_t>(count);
    const int k = 32 - std::countl_zero(value - 1);  // (1 << k) / 2 < count <= 1 << k
    const std::int64_t numerator = ((std::int64_t{1} << 30) + 1) << k;
    const std::int64_t multiplier = numerator / count;
    const int shift = 30 + k;
    const __int128 scaled = static_cast<__int128>(sum) * multiplier +
                            (static_cast<__int128>(1) << (shift - 1));
    return static_cast<std::int64_t>(scaled >> shift);
}

template <class In>
void avg_pool_typed(const In* in, In* out, const Pool2dGeometry& g, const IntOperands& q)
{
    for (std::int64_t n = 0; n < g.n; ++n)
        for (std::int64_t oy = 0; oy < g.oh; ++oy)
            for (std::int64_t ox = 0; ox < g.ow; ++ox) {
                // The window clipped to the input: never empty (pads are
                // below the kernel, plan.cpp).
                const std::int64_t top = oy * g.stride_y - g.pad_top;
                const std::int64_t left = ox * g.stride_x - g.pad_left;
                const std::int64_t y0 = std::max<std::int64_t>(top, 0);
                const std::int64_t y1 = std::min(top + g.kernel_y, g.ih);
                const std::int64_t x0 = std::max<std::int64_t>(left, 0);
                const std::int64_t x1 = std::min(left + g.kernel_x, g.iw);
                const std::int64_t count = (y1 - y0) * (x1 - x0);
                for (std::int64_t c = 0; c < g.c; ++c) {
                    std::int64_t sum = 0;
                    for (std::int64_t y = y0; y < y1; ++y)
                        for (std::int64_t x = x0; x < x1; ++x)
                            sum += in[((n * g.ih + y) * g.iw + x) * g.c + c] - q.input_zp;
                    const std::int64_t result = divide_by_count(sum, count) + q.weight_zp;
                    out[((n * g.oh + oy) * g.ow + ox) * g.c + c] = static_cast<In>(
                        std::clamp<std::int64_t>(result, std::numeric_limits<In>::min(),
                                                 std::numeric_limits<In>::max()));
                }
            }
}

}  // namespace

void matmul_int(const std::byte* a, const std::byte* b, std::byte* out, std::int64_t n,
                std::int64_t h, std::int64_t c, std::int64_t w, const IntOperands& q)
{
    if (q.input == DType::int16)
        matmul_typed(typed<std::int16_t>(a), typed<std::int16_t>(b), out, n, h, c, w, q);
    else
        matmul_typed(typed<std::int8_t>(a), typed<std::int8_t>(b), out, n, h, c, w, q);
}

void conv2d_int(const std::byte* in, const std::int8_t* weight, const std::byte* bias,
                std::byte* out, const Conv2dGeometry& g, const IntOperands& q)
{
    if (q.input == DType::int16) conv2d_typed(typed<std::int16_t>(in), weight, bias, out, g, q);
    else conv2d_typed(typed<std::int8_t>(in), weight, bias, out, g, q);
}

void depthwise_conv2d_int(const std::byte* in, const std::int8_t* weight, const std::byte* bias,
                          std::byte* out, const Conv2dGeometry& g, const IntOperands& q)
{
    if (q.input == DType::int16) depthwise_typed(typed<std::int16_t>(in), weight, bias, out, g, q);
    else depthwise_typed(typed<std::int8_t>(in), weight, bias, out, g, q);
}

void transpose_conv2d_int(const std::byte* in, const std::int8_t* weight, const std::byte* bias,
                          std::byte* out, const Conv2dGeometry& g, const IntOperands& q)
{
    if (q.input == DType::int16) transpose_typed(typed<std::int16_t>(in), weight, bias, out, g, q);
    else transpose_typed(typed<std::int8_t>(in), weight, bias, out, g, q);
}

void conv3d_int(const std::byte* in, const std::int8_t* weight, const std::byte* bias,
                std::byte* out, const Conv3dGeometry& g, const IntOperands& q)
{
    if (q.input == DType::int16) conv3d_typed(typed<std::int16_t>(in), weight, bias, out, g, q);
    else conv3d_typed(typed<std::int8_t>(in), weight, bias, out, g, q);
}

void avg_pool2d_int(const std::byte* in, std::byte* out, const Pool2dGeometry& g,
                    const IntOperands& q)
{
    if (q.input == DType::int16)
        avg_pool_typed(typed<std::int16_t>(in), reinterpret_cast<std::int16_t*>(out), g, q);
    else
        avg_pool_typed(typed<std::int8_t>(in), reinterpret_cast<std::int8_t*>(out), g, q);
}

void max_pool2d(const std::int16_t* in, std::int16_t* out, const Pool2dGeometry& g)
{
    for (std::int64_t n = 0; n < g.n; ++n)
        for (std::int64_t oy = 0; oy < g.oh; ++oy)
            for (std::int64_t ox = 0; ox < g.ow; ++ox) {
                const std::int64_t top = oy * g.stride_y - g.pad_top;
                const std::int64_t left = ox * g.stride_x - g.pad_left;
                std::int16_t* pixel = out + ((n * g.oh + oy) * g.ow + ox) * g.c;
                std::fill(pixel, pixel + g.c, std::numeric_limits<std::int16_t>::min());
                for (std::int64_t y = std::max<std::int64_t>(top, 0);
                     y < std::min(top + g.kernel_y, g.ih); ++y)
                    for (std::int64_t x = std::max<std::int64_t>(left, 0);
                         x < std::min(left + g.kernel_x, g.iw); ++x) {
                        const std::int16_t* source = in + ((n * g.ih + y) * g.iw + x) * g.c;
                        for (std::int64_t c = 0; c < g.c; ++c)
                            pixel[c] = std::max(pixel[c], source[c]);
                    }
            }
}

}  // namespace vaccel::backend::cpu
