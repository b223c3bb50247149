// resize.cu - vaccel_resize: TOSA RESIZE on NHWC FP32, NEAREST_NEIGHBOR or
// BILINEAR, one thread per result element, the TOSA 1.0 formula as the CPU
// device computes it: y = oy * scale_y_d + offset_y, iy = floor(y /
// scale_y_n), dy = (y - iy * scale_y_n) / scale_y_n in float (likewise along
// x); the neighbours iy and iy + 1 are clamped into the input. NEAREST takes
// iy + 1 when dy >= 0.5; BILINEAR sums the corners weighted (1-dy)(1-dx),
// (1-dy)dx, dy(1-dx), dy dx in that order, each step rounded on its own.
// Mirrors kernels/vulkan/resize.comp. Spec words
// (backends/gpu/src/lowering_spatial.cpp; 7..12 are signed):
//   0 BILINEAR  1 N  2 IH  3 IW  4 C  5 OH  6 OW  7 SCALE_Y_N  8 SCALE_Y_D
//   9 SCALE_X_N  10 SCALE_X_D  11 OFFSET_Y  12 OFFSET_X
//   13 OUT_BUF  14 OUT_BASE  15 IN_BUF  16 IN_BASE
// The lowering's limits keep every intermediate inside 32 bits.
#include "common.cuh"

using namespace vaccel_cuda;

namespace {

// Rounds toward negative infinity; b > 0.
__device__ __forceinline__ int floor_div(int a, int b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

__device__ __forceinline__ int clamp_int(int v, int lo, int hi) { return min(max(v, lo), hi); }

}  // namespace

VACCEL_KERNEL(vaccel_resize)
{
    const bool bilinear = d.spec[0] != 0u;
    const unsigned n_count = d.spec[1], ih = d.spec[2], iw = d.spec[3], c_count = d.spec[4];
    const unsigned oh = d.spec[5], ow = d.spec[6];
    const int scale_y_n = static_cast<int>(d.spec[7]), scale_y_d = static_cast<int>(d.spec[8]);
    const int scale_x_n = static_cast<int>(d.spec[9]), scale_x_d = static_cast<int>(d.spec[10]);
    const int offset_y = static_cast<int>(d.spec[11]), offset_x = static_cast<int>(d.spec[12]);
    float* __restrict__ out = reinterpret_cast<float*>(buffer(d, 13)) + d.spec[14];
    const float* __restrict__ in = reinterpret_cast<const float*>(buffer(d, 15));
    const unsigned in_base = d.spec[16];
    const unsigned total = n_count * oh * ow * c_count;
    for (unsigned i = first_index(); i < total; i += grid_stride()) {
        const unsigned c = i % c_count, ox = (i / c_count) % ow, oy = (i / (c_count * ow)) % oh;
        const unsigned n = i / (c_count * ow * oh);
        const int y = static_cast<int>(oy) * scale_y_d + offset_y;
        const int iy = floor_div(y, scale_y_n);
        const float dy =
            __fdiv_rn(static_cast<float>(y - iy * scale_y_n), static_cast<float>(scale_y_n));
        const int iy0 = clamp_int(iy, 0, static_cast<int>(ih) - 1);
        const int iy1 = clamp_int(iy + 1, 0, static_cast<int>(ih) - 1);
        const int x = static_cast<int>(ox) * scale_x_d + offset_x;
        const int ix = floor_div(x, scale_x_n);
        const float dx =
            __fdiv_rn(static_cast<float>(x - ix * scale_x_n), static_cast<float>(scale_x_n));
        const int ix0 = clamp_int(ix, 0, static_cast<int>(iw) - 1);
        const int ix1 = clamp_int(ix + 1, 0, static_cast<int>(iw) - 1);
        auto at = [&](int yy, int xx) {
            return in[in_base + ((n * ih + static_cast<unsigned>(yy)) * iw +
                                 static_cast<unsigned>(xx)) * c_count + c];
        };
        float result;
        if (bilinear) {
            const float ry = __fsub_rn(1.0f, dy), rx = __fsub_rn(1.0f, dx);
            result = __fmul_rn(__fmul_rn(at(iy0, ix0), ry), rx);
            result = __fadd_rn(result, __fmul_rn(__fmul_rn(at(iy0, ix1), ry), dx));
            result = __fadd_rn(result, __fmul_rn(__fmul_rn(at(iy1, ix0), dy), rx));
            result = __fadd_rn(result, __fmul_rn(__fmul_rn(at(iy1, ix1), dy), dx));
        } else {
            result = at(dy >= 0.5f ? iy1 : iy0, dx >= 0.5f ? ix1 : ix0);
        }
        out[i] = result;
    }
}
