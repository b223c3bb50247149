// kernels_spatial.cpp - pooling and the convolutions beyond CONV2D (see
// kernels_spatial.hpp for the numerics).
#include "kernels_spatial.hpp"
#include "parallel.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace vaccel::backend::cpu {

namespace {

// The window of output (oy, ox) clipped to the input: rows [y0, y1),
// columns [x0, x1). Never empty: every pad is below the kernel size and the
// input has rows and columns (plan.cpp checks both).
struct Window {
    std::int64_t y0, y1, x0, x1;
};

Window window(const Pool2dGeometry& g, std::int64_t oy, std::int64_t ox)
{
    const std::int64_t top = oy * g.stride_y - g.pad_top;
    const std::int64_t left = ox * g.stride_x - g.pad_left;
    return Window{std::max<std::int64_t>(top, 0), std::min(top + g.kernel_y, g.ih),
                  std::max<std::int64_t>(left, 0), std::min(left + g.kernel_x, g.iw)};
}

// Output pixel p (flattened n, oy, ox) of an output oh x ow.
struct OutputPixel {
    std::int64_t n, oy, ox;
};

OutputPixel output_pixel(std::uint64_t p, std::int64_t oh, std::int64_t ow)
{
    const auto row = static_cast<std::int64_t>(p / static_cast<std::uint64_t>(ow));
    return {row / oh, row % oh, static_cast<std::int64_t>(p % static_cast<std::uint64_t>(ow))};
}

// For every output pixel: start(pixel), then add(pixel, input pixel) for
// each input pixel of its window in (y, x) order, then finish(pixel, count).
// Channels are innermost, so every call walks contiguous memory.
// For every output pixel: start(pixel), then add(pixel, input pixel) for
// each input pixel of its window in (y, x) order, then finish(pixel, count).
// Channels are innermost, so every call walks contiguous memory. Output
// pixels are split over the kernels' threads (parallel.hpp); each is
// computed whole by one of them, in the same order.
template <class T, class Start, class Add, class Finish>
void each_window(const T* in, T* out, const Pool2dGeometry& g, Start start, Add add,
                 Finish finish)
{
    const auto pixels = static_cast<std::uint64_t>(g.n * g.oh * g.ow);
    const std::uint64_t work = static_cast<std::uint64_t>(std::max<std::int64_t>(
        1, g.c * g.kernel_y * g.kernel_x));
    parallel_for(pixels, std::max<std::uint64_t>(1, elementwise_grain / work),
                 [&](std::uint64_t begin, std::uint64_t end) {
                     for (std::uint64_t p = begin; p < end; ++p) {
                         const auto [n, oy, ox] = output_pixel(p, g.oh, g.ow);
                         const Window w = window(g, oy, ox);
                         T* pixel = out + static_cast<std::int64_t>(p) * g.c;
                         start(pixel);
                         for (std::int64_t y = w.y0; y < w.y1; ++y)
                             for (std::int64_t x = w.x0; x < w.x1; ++x)
                                 add(pixel, in + ((n * g.ih + y) * g.iw + x) * g.c);
                         finish(pixel, (w.y1 - w.y0) * (w.x1 - w.x0));
                     }
                 });
}

// TOSA's maximum of the running value and one more: see kernels_spatial.hpp.
float max_step(float acc, float value, bool nan_propagate)
{
    // The common cases first: ordered and different.
    if (value > acc) return value;
    if (value < acc) return acc;
    if (value == acc) return std::signbit(acc) && !std::signbit(value) ? value : acc;
    // At least one NaN.
    if (std::isnan(acc)) return nan_propagate ? acc : value;
    return nan_propagate ? value : acc;
}

}  // namespace

void max_pool2d(const float* in, float* out, const Pool2dGeometry& g, bool nan_propagate)
{
    // PROPAGATE starts below every number; IGNORE starts at NaN, which the
    // first non-NaN value replaces.
    const float initial = nan_propagate ? -std::numeric_limits<float>::infinity()
                                        : std::numeric_limits<float>::quiet_NaN();
    each_window(
        in, out, g, [&](float* pixel) { std::fill(pixel, pixel + g.c, initial); },
        [&](float* pixel, const float* source) {
            for (std::int64_t c = 0; c < g.c; ++c)
                pixel[c] = max_step(pixel[c], source[c], nan_propagate);
        },
        [](float*, std::int64_t) {});
}

void max_pool2d(const std::int8_t* in, std::int8_t* out, const Pool2dGeometry& g)
{
    each_window(
        in, out, g,
        [&](std::int8_t* pixel) {
            std::fill(pixel, pixel + g.c, std::numeric_limits<std::int8_t>::min());
        },
        [&](std::int8_t* pixel, const std::int8_t* source) {
            for (std::int64_t c = 0; c < g.c; ++c) pixel[c] = std::max(pixel[c], source[c]);
        },
        [](std::int8_t*, std::int64_t) {});
}

void avg_pool2d(const float* in, float* out, const Pool2dGeometry& g)
{
    each_window(
        in, out, g, [&](float* pixel) { std::fill(pixel, pixel + g.c, 0.0f); },
        [&](float* pixel, const float* source) {
            for (std::int64_t c = 0; c < g.c; ++c) pixel[c] += source[c];
        },
        [&](float* pixel, std::int64_t count) {
            for (std::int64_t c = 0; c < g.c; ++c) pixel[c] /= static_cast<float>(count);
        });
}

void depthwise_conv2d(const float* in, const float* weight, const float* bias, float* out,
                      const Conv2dGeometry& g)
{
    // The channel multiplier (no input channels: no output channels either).
    const std::int64_t m = g.ic == 0 ? 1 : g.oc / g.ic;
    const auto pixels = static_cast<std::uint64_t>(g.n * g.oh * g.ow);
    const auto work = static_cast<std::uint64_t>(std::max<std::int64_t>(1, g.oc * g.kh * g.kw));
    // Output pixels over the kernels' threads, each whole on one of them.
    parallel_for(pixels, std::max<std::uint64_t>(1, elementwise_grain / work),
                 [&](std::uint64_t begin, std::uint64_t end) {
        for (std::uint64_t p = begin; p < end; ++p) {
            const auto [n, oy, ox] = output_pixel(p, g.oh, g.ow);
            // The output pixel accumulates all its channels at once, tap by tap.
            float* pixel = out + static_cast<std::int64_t>(p) * g.oc;
            std::fill(pixel, pixel + g.oc, 0.0f);
            for (std::int64_t ky = 0; ky < g.kh; ++ky) {
                const std::int64_t iy = oy * g.stride_y - g.pad_top + ky * g.dilation_y;
                if (iy < 0 || iy >= g.ih) continue;
                for (std::int64_t kx = 0; kx < g.kw; ++kx) {
                    const std::int64_t ix = ox * g.stride_x - g.pad_left + kx * g.dilation_x;
                    if (ix < 0 || ix >= g.iw) continue;
                    const float* source = in + ((n * g.ih + iy) * g.iw + ix) * g.ic;
                    // weight [kh, kw, ic, m]: element (ky, kx, c, j) is at
                    // ((ky * kw + kx) * ic + c) * m + j = (ky * kw + kx) * oc + o
                    // for output channel o = c * m + j.
                    const float* taps = weight + (ky * g.kw + kx) * g.oc;
                    if (m == 1) {  // the common multiplier, without the division
                        for (std::int64_t o = 0; o < g.oc; ++o) pixel[o] += source[o] * taps[o];
                    } else {
                        for (std::int64_t o = 0; o < g.oc; ++o)
                            pixel[o] += source[o / m] * taps[o];
                    }
                }
            }
            for (std::int64_t o = 0; o < g.oc; ++o) pixel[o] += bias[g.bias_per_channel ? o : 0];
        }
    });
}

void transpose_conv2d(const float* in, const float* weight, const float* bias, float* out,
                      const Conv2dGeometry& g)
{
    for (std::int64_t n = 0; n < g.n; ++n)
        for (std::int64_t oy = 0; oy < g.oh; ++oy)
            for (std::int64_t ox = 0; ox < g.ow; ++ox) {
                float* pixel = out + ((n * g.oh + oy) * g.ow + ox) * g.oc;
                for (std::int64_t oc = 0; oc < g.oc; ++oc) {
                    float acc = 0.0f;
                    for (std::int64_t ky = 0; ky < g.kh; ++ky) {
                        const std::int64_t y = oy - g.pad_top - ky;
                        if (y < 0 || y % g.stride_y != 0 || y / g.stride_y >= g.ih) continue;
                        for (std::int64_t kx = 0; kx < g.kw; ++kx) {
                            const std::int64_t x = ox - g.pad_left - kx;
                            if (x < 0 || x % g.stride_x != 0 || x / g.stride_x >= g.iw) continue;
                            const float* source =
                                in + ((n * g.ih + y / g.stride_y) * g.iw + x / g.stride_x) * g.ic;
                            const float* taps = weight + ((oc * g.kh + ky) * g.kw + kx) * g.ic;
                            for (std::int64_t ic = 0; ic < g.ic; ++ic) acc += source[ic] * taps[ic];
                        }
                    }
                    pixel[oc] = acc + bias[g.bias_per_channel ? oc : 0];
                }
            }
}

void conv3d(const float* in, const float* weight, const float* bias, float* out,
            const Conv3dGeometry& g)
{
    for (std::int64_t n = 0; n < g.n; ++n)
        for (std::int64_t od = 0; od < g.od; ++od)
            for (std::int64_t oy = 0; oy < g.oh; ++oy)
                for (std::int64_t ox = 0; ox < g.ow; ++ox) {
                    float* pixel = out + (((n * g.od + od) * g.oh + oy) * g.ow + ox) * g.oc;
                    for (std::int64_t oc = 0; oc < g.oc; ++oc) {
                        float acc = 0.0f;
                        for (std::int64_t kd = 0; kd < g.kd; ++kd) {
                            const std::int64_t d =
                                od * g.stride_d - g.pad_front + kd * g.dilation_d;
                            if (d < 0 || d >= g.id) continue;
                            for (std::int64_t ky = 0; ky < g.kh; ++ky) {
                                const std::int64_t y =
                                    oy * g.stride_y - g.pad_top + ky * g.dilation_y;
                                if (y < 0 || y >= g.ih) continue;
                                for (std::int64_t kx = 0; kx < g.kw; ++kx) {
                                    const std::int64_t x =
                                        ox * g.stride_x - g.pad_left + kx * g.dilation_x;
                                    if (x < 0 || x >= g.iw) continue;
                                    const float* source =
                                        in + (((n * g.id + d) * g.ih + y) * g.iw + x) * g.ic;
                                    const float* taps =
                                        weight +
                                        (((oc * g.kd + kd) * g.kh + ky) * g.kw + kx) * g.ic;
                                    for (std::int64_t ic = 0; ic < g.ic; ++ic)
                                        acc += source[ic] * taps[ic];
                                }
                            }
                        }
                        pixel[oc] = acc + bias[g.bias_per_channel ? oc : 0];
                    }
                }
}

}  // namespace vaccel::backend::cpu
