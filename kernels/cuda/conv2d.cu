// conv2d.cu - vaccel_conv2d: TOSA CONV2D and DEPTHWISE_CONV2D on NHWC FP32,
// FP16 or BF16 (every operand one dtype, DT; narrow elements widened to FP32
// on load, the result rounded once on store), one thread per result element. The sum starts at zero and takes the taps
// in (ky, kx, ic) order, skipping those on padding, then adds the bias once
// (out = acc + bias, as TOSA 1.0 writes it); each product and sum is its
// own rounding step (__fmul_rn, __fadd_rn: no fused multiply-add), as on
// the CPU device. Mirrors kernels/vulkan/conv2d.comp. Spec words
// (backends/gpu/src/lowering_spatial.cpp, lower_conv):
//   0 DEPTHWISE (1: weight [KH,KW,IC,M], else [OC,KH,KW,IC])
//   1 N  2 IH  3 IW  4 IC  5 OH  6 OW  7 OC  8 KH  9 KW  10 SY  11 SX
//   12 DY  13 DX  14 PT  15 PL  16 M (OC = IC * M)  17 BIAS_PER_CHANNEL
//   18 OUT_BUF 19 OUT_BASE 20 IN_BUF 21 IN_BASE 22 W_BUF 23 W_BASE 24 B_BUF 25 B_BASE
//   26 DT (common.cuh's DT_FP32, DT_FP16 or DT_BF16)
#include "common.cuh"

namespace {

using namespace vaccel_cuda;

// Element i of an FP32 (DT_FP32) or 16-bit float operand, as FP32.
template <unsigned DT>
__device__ __forceinline__ float element(const unsigned char* __restrict__ p, unsigned i)
{
    if constexpr (DT == DT_FP32) return reinterpret_cast<const float*>(p)[i];
    else return widen(DT, load_bits(p, i, DT));
}

template <bool DEPTHWISE, unsigned DT>
__device__ __forceinline__ void run(const Dispatch& d)
{
    const unsigned n_count = d.spec[1], ih = d.spec[2], iw = d.spec[3], ic = d.spec[4];
    const unsigned oh = d.spec[5], ow = d.spec[6], oc_count = d.spec[7];
    const unsigned kh = d.spec[8], kw = d.spec[9], sy = d.spec[10], sx = d.spec[11];
    const unsigned dy = d.spec[12], dx = d.spec[13], pt = d.spec[14], pl = d.spec[15];
    const unsigned m = d.spec[16];
    const bool bias_per_channel = d.spec[17] != 0u;
    unsigned char* __restrict__ out = buffer(d, 18);
    const unsigned char* __restrict__ in = buffer(d, 20);
    const unsigned char* __restrict__ weight = buffer(d, 22);
    const unsigned char* __restrict__ bias = buffer(d, 24);
    const unsigned out_base = d.spec[19], in_base = d.spec[21], w_base = d.spec[23];
    const unsigned b_base = d.spec[25];
    const unsigned total = n_count * oh * ow * oc_count;
    for (unsigned i = first_index(); i < total; i += grid_stride()) {
        const unsigned oc = i % oc_count, ox = (i / oc_count) % ow;
        const unsigned oy = (i / (oc_count * ow)) % oh, n = i / (oc_count * ow * oh);
        float acc = 0.0f;
        for (unsigned ky = 0u; ky < kh; ++ky) {
            const int iy = static_cast<int>(oy * sy + ky * dy) - static_cast<int>(pt);
            if (iy < 0 || iy >= static_cast<int>(ih)) continue;
            for (unsigned kx = 0u; kx < kw; ++kx) {
                const int ix = static_cast<int>(ox * sx + kx * dx) - static_cast<int>(pl);
                if (ix < 0 || ix >= static_cast<int>(iw)) continue;
                const unsigned pixel = in_base + ((n * ih + static_cast<unsigned>(iy)) * iw +
                                                  static_cast<unsigned>(ix)) * ic;
                if constexpr (DEPTHWISE) {
                    // weight (ky, kx, c, j) for output channel oc = c * M + j
                    // is at (ky * KW + kx) * OC + oc.
                    const unsigned tap = w_base + (ky * kw + kx) * oc_count + oc;
                    acc = __fadd_rn(acc, __fmul_rn(element<DT>(in, pixel + oc / m),
                                                   element<DT>(weight, tap)));
                } else {
                    const unsigned taps = w_base + ((oc * kh + ky) * kw + kx) * ic;
                    for (unsigned c = 0u; c < ic; ++c)
                        acc = __fadd_rn(acc, __fmul_rn(element<DT>(in, pixel + c),
                                                       element<DT>(weight, taps + c)));
                }
            }
        }
        const float result =
            __fadd_rn(acc, element<DT>(bias, b_base + (bias_per_channel ? oc : 0u)));
        store_bits(out, out_base + i, DT, narrow(DT, result));
    }
}

template <unsigned DT>
__device__ __forceinline__ void run_dtype(const Dispatch& d)
{
    if (d.spec[0] != 0u) run<true, DT>(d);
    else run<false, DT>(d);
}

}  // namespace

VACCEL_KERNEL(vaccel_conv2d)
{
    switch (d.spec[26]) {
    case DT_FP16: run_dtype<DT_FP16>(d); break;
    case DT_BF16: run_dtype<DT_BF16>(d); break;
    default: run_dtype<DT_FP32>(d); break;
    }
}
