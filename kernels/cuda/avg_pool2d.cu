// avg_pool2d.cu - vaccel_avg_pool2d: TOSA AVG_POOL2D on NHWC FP32, FP16 or
// BF16 (DT; FP32 sums, the result rounded once on store), one thread per
// result element. Sums the window's input elements in (ky, kx) order
// and divides once by their count: padding is neither summed nor counted
// (as on the CPU device; pads are below the kernel size, so every window
// holds an element). Mirrors kernels/vulkan/avg_pool2d.comp. Spec words
// (backends/gpu/src/lowering_spatial.cpp):
//   0 N  1 IH  2 IW  3 C  4 OH  5 OW  6 KH  7 KW  8 SH  9 SW  10 PT  11 PL
//   12 OUT_BUF  13 OUT_BASE  14 IN_BUF  15 IN_BASE  16 DT
#include "common.cuh"

namespace {

using namespace vaccel_cuda;

template <unsigned DT>
__device__ __forceinline__ void run(const Dispatch& d)
{
    const unsigned n_count = d.spec[0], ih = d.spec[1], iw = d.spec[2], c_count = d.spec[3];
    const unsigned oh = d.spec[4], ow = d.spec[5];
    const int kh = static_cast<int>(d.spec[6]), kw = static_cast<int>(d.spec[7]);
    const unsigned sh = d.spec[8], sw = d.spec[9];
    const int pt = static_cast<int>(d.spec[10]), pl = static_cast<int>(d.spec[11]);
    unsigned char* __restrict__ out = buffer(d, 12);
    const unsigned char* __restrict__ in = buffer(d, 14);
    const unsigned out_base = d.spec[13], in_base = d.spec[15];
    const unsigned total = n_count * oh * ow * c_count;
    for (unsigned i = first_index(); i < total; i += grid_stride()) {
        const unsigned c = i % c_count, ox = (i / c_count) % ow, oy = (i / (c_count * ow)) % oh;
        const unsigned n = i / (c_count * ow * oh);
        // The window clipped to the input: rows [y0, y1), columns [x0, x1).
        const int top = static_cast<int>(oy * sh) - pt, left = static_cast<int>(ox * sw) - pl;
        const int y0 = max(top, 0), y1 = min(top + kh, static_cast<int>(ih));
        const int x0 = max(left, 0), x1 = min(left + kw, static_cast<int>(iw));
        float acc = 0.0f;
        for (int y = y0; y < y1; ++y)
            for (int x = x0; x < x1; ++x) {
                const unsigned at = in_base + ((n * ih + static_cast<unsigned>(y)) * iw +
                                               static_cast<unsigned>(x)) * c_count + c;
                acc = __fadd_rn(acc, widen(DT, load_bits(in, at, DT)));
            }
        const float mean = __fdiv_rn(acc, static_cast<float>((y1 - y0) * (x1 - x0)));
        store_bits(out, out_base + i, DT, narrow(DT, mean));
    }
}

}  // namespace

VACCEL_KERNEL(vaccel_avg_pool2d)
{
    switch (d.spec[16]) {
    case DT_FP16: run<DT_FP16>(d); break;
    case DT_BF16: run<DT_BF16>(d); break;
    default: run<DT_FP32>(d); break;
    }
}
