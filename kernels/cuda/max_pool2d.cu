// max_pool2d.cu - vaccel_max_pool2d: TOSA MAX_POOL2D on NHWC, one thread per
// result element; padded positions are skipped (they hold -infinity in
// TOSA, which never wins, and every window holds a real element). Mirrors
// kernels/vulkan/max_pool2d.comp and its _narrow variant. Spec words
// (backends/gpu/src/lowering.cpp, lower_max_pool):
//   0 N  1 IH  2 IW  3 C  4 OH  5 OW  6 KH  7 KW  8 SH  9 SW  10 PT  11 PL
//   12 OUT_BUF  13 OUT_BASE  14 IN_BUF  15 IN_BASE  16 DT (DT_*)
//   17 NAN_IGNORE (0 PROPAGATE; 1 IGNORE: NaNs skipped, an all-NaN window is NaN)
// Input and result have dtype DT (widened on load, the maximum narrowed on store).
#include "common.cuh"

using namespace vaccel_cuda;

VACCEL_KERNEL(vaccel_max_pool2d)
{
    const unsigned n_count = d.spec[0], ih = d.spec[1], iw = d.spec[2], c_count = d.spec[3];
    const unsigned oh = d.spec[4], ow = d.spec[5], kh = d.spec[6], kw = d.spec[7];
    const unsigned sh = d.spec[8], sw = d.spec[9], pt = d.spec[10], pl = d.spec[11];
    unsigned char* __restrict__ out = buffer(d, 12);
    const unsigned out_base = d.spec[13];
    const unsigned char* __restrict__ in = buffer(d, 14);
    const unsigned in_base = d.spec[15], dt = d.spec[16];
    const bool ignore_nan = d.spec[17] != 0u;
    const unsigned total = n_count * oh * ow * c_count;
    for (unsigned i = first_index(); i < total; i += grid_stride()) {
        const unsigned c = i % c_count, ox = (i / c_count) % ow, oy = (i / (c_count * ow)) % oh;
        const unsigned n = i / (c_count * ow * oh);
        float acc = __uint_as_float(0xff800000u);  // -infinity
        bool all_nan = true;
        for (unsigned ky = 0u; ky < kh; ++ky) {
            const int iy = static_cast<int>(oy * sh + ky) - static_cast<int>(pt);
            if (iy < 0 || iy >= static_cast<int>(ih)) continue;
            for (unsigned kx = 0u; kx < kw; ++kx) {
                const int ix = static_cast<int>(ox * sw + kx) - static_cast<int>(pl);
                if (ix < 0 || ix >= static_cast<int>(iw)) continue;
                const unsigned at = in_base + ((n * ih + static_cast<unsigned>(iy)) * iw +
                                               static_cast<unsigned>(ix)) * c_count + c;
                const float v = widen(dt, load_bits(in, at, dt));
                if (!ignore_nan) {
                    acc = max_of(acc, v);  // NaN propagates
                } else if (!isnan(v)) {
                    acc = max_of(acc, v);
                    all_nan = false;
                }
            }
        }
        if (ignore_nan && all_nan) acc = __uint_as_float(0x7fc00000u);
        store_bits(out, out_base + i, dt, narrow(dt, acc));
    }
}
