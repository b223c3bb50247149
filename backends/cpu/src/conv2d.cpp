// conv2d.cpp - CONV2D as im2col + GEMM (see kernels.hpp for the numerics).
//
// The output [n, oh, ow, oc] is a matrix of P = n*oh*ow pixel rows by oc
// columns: row p = bias + patch(p) [K] x weight^T, where K = kh*kw*ic and the
// weight [oc, kh, kw, ic] is already the row-major [oc, K] matrix. A 1x1,
// stride 1, unpadded convolution's patches are the input's own rows, so the
// input goes to the GEMM as it is. Otherwise the patches of a block of rows
// are gathered (zeros where the kernel reads padding) into a per-thread
// scratch of at most max(im2col_block_floats, K) floats, so the memory a
// convolution needs beyond its tensors does not grow with the input.
#include <algorithm>
#include <vector>

#include "gemm.hpp"
#include "kernels.hpp"
#include "parallel.hpp"

namespace vaccel::backend::cpu {

namespace {

// 1 MiB of patches per block: large enough that each block is a GEMM the
// BLAS threads well (the bench's 3x3x64 patches: 455 rows), small enough
// to stay in cache-sized pieces.
constexpr std::int64_t im2col_block_floats = std::int64_t{1} << 18;

// Rows [first, first + rows) of the output start as the bias.
void fill_bias(const float* bias, const Conv2dGeometry& g, float* out, std::int64_t rows)
{
    for (std::int64_t row = 0; row < rows; ++row) {
        float* pixel = out + row * g.oc;
        if (g.bias_per_channel)
            std::copy_n(bias, g.oc, pixel);
        else
            std::fill_n(pixel, g.oc, bias[0]);
    }
}

// The patch of output pixel `p` (flattened n, oy, ox) in (ky, kx, ic) order.
void gather_patch(const float* in, const Conv2dGeometry& g, std::int64_t p, float* patch)
{
    const std::int64_t ox = p % g.ow;
    const std::int64_t oy = (p / g.ow) % g.oh;
    const std::int64_t n = p / (g.ow * g.oh);
    for (std::int64_t ky = 0; ky < g.kh; ++ky) {
        const std::int64_t iy = oy * g.stride_y - g.pad_top + ky * g.dilation_y;
        for (std::int64_t kx = 0; kx < g.kw; ++kx, patch += g.ic) {
            const std::int64_t ix = ox * g.stride_x - g.pad_left + kx * g.dilation_x;
            if (iy < 0 || iy >= g.ih || ix < 0 || ix >= g.iw)
                std::fill_n(patch, g.ic, 0.0f);
            else
                std::copy_n(in + ((n * g.ih + iy) * g.iw + ix) * g.ic, g.ic, patch);
        }
    }
}

}  // namespace

void conv2d(const float* in, const float* weight, const float* bias, float* out,
            const Conv2dGeometry& g)
{
    const std::int64_t pixels = g.n * g.oh * g.ow;
    const std::int64_t k = g.kh * g.kw * g.ic;
    if (pixels == 0 || g.oc == 0) return;
    const bool patches_are_rows = g.kh == 1 && g.kw == 1 && g.stride_y == 1 && g.stride_x == 1 &&
                                  g.pad_top == 0 && g.pad_left == 0 && g.oh == g.ih &&
                                  g.ow == g.iw;
    if (patches_are_rows) {
        parallel_for(static_cast<std::uint64_t>(pixels),
                     std::max<std::uint64_t>(1, elementwise_grain / static_cast<std::uint64_t>(g.oc)),
                     [&](std::uint64_t begin, std::uint64_t end) {
                         fill_bias(bias, g, out + static_cast<std::int64_t>(begin) * g.oc,
                                   static_cast<std::int64_t>(end - begin));
                     });
        gemm(pixels, g.oc, k, in, k, weight, k, true, out, g.oc, true);
        return;
    }
    // k is 0 when KH, KW or IC is (TOSA dimensions may be 0): the bias alone,
    // which gemm() leaves in place.
    const std::int64_t block_rows =
        std::max<std::int64_t>(1, im2col_block_floats / std::max<std::int64_t>(k, 1));
    // Reused by every convolution this worker runs; never larger than one block.
    thread_local std::vector<float> scratch;
    const std::int64_t rows_max = std::min(block_rows, pixels);
    if (scratch.size() < static_cast<std::size_t>(rows_max * k))
        scratch.resize(static_cast<std::size_t>(rows_max * k));
    for (std::int64_t first = 0; first < pixels; first += block_rows) {
        const std::int64_t rows = std::min(block_rows, pixels - first);
        float* block_out = out + first * g.oc;
        // The gather and the bias over the kernels' threads (parallel.hpp):
        // each row its own patch and output pixel.
        float* patches = scratch.data();
        parallel_for(static_cast<std::uint64_t>(rows),
                     std::max<std::uint64_t>(1, elementwise_grain / static_cast<std::uint64_t>(k + g.oc)),
                     [&](std::uint64_t begin, std::uint64_t end) {
                         for (auto row = static_cast<std::int64_t>(begin); row < static_cast<std::int64_t>(end); ++row)
                             gather_patch(in, g, first + row, patches + row * k);
                         fill_bias(bias, g, block_out + static_cast<std::int64_t>(begin) * g.oc,
                                   static_cast<std::int64_t>(end - begin));
                     });
        gemm(rows, g.oc, k, scratch.data(), k, weight, k, true, block_out, g.oc, true);
    }
}

}  // namespace vaccel::backend::cpu
