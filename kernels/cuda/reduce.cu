// reduce.cu - vaccel_reduce: REDUCE_SUM/MAX/MIN/PRODUCT and ARGMAX over one
// axis of a tensor seen as [OUTER, AXIS, INNER]; one thread per result
// element, reading the axis in index order (sums and products accumulate in
// FP32 in that order). Mirrors kernels/vulkan/reduce.comp and its _narrow
// variant. Spec words (backends/gpu/src/lowering.cpp, lower_reduce):
//   0 OP (0 sum, 1 max, 2 min, 3 product, 4 argmax)  1 OUTER  2 AXIS  3 INNER
//   4 OUT_BUF  5 OUT_BASE  6 IN_BUF  7 IN_BASE  8 IN_DT  9 OUT_DT (DT_*)
//   10 NAN_IGNORE (nan_mode: 0 PROPAGATE, 1 IGNORE)
// The input is widened to FP32 on load; the result is rounded once into
// OUT_DT (ARGMAX writes INT32 words). The lowering sends no work for an
// empty axis.
#include "common.cuh"

namespace {

using namespace vaccel_cuda;

enum : unsigned { SUM = 0, MAX = 1, MIN = 2, PRODUCT = 3, ARGMAX = 4 };

template <unsigned OP>
__device__ __forceinline__ void run(const Dispatch& d)
{
    const unsigned outer_count = d.spec[1], axis = d.spec[2], inner_count = d.spec[3];
    unsigned char* __restrict__ out = buffer(d, 4);
    const unsigned out_base = d.spec[5];
    const unsigned char* __restrict__ in = buffer(d, 6);
    const unsigned in_base = d.spec[7], in_dt = d.spec[8], out_dt = d.spec[9];
    const bool ignore_nan = d.spec[10] != 0u;
    const unsigned total = outer_count * inner_count;
    for (unsigned i = first_index(); i < total; i += grid_stride()) {
        const unsigned outer = i / inner_count, inner = i % inner_count;
        const unsigned first = in_base + outer * axis * inner_count + inner;
        float acc = widen(in_dt, load_bits(in, first, in_dt));
        unsigned best = 0u;
        for (unsigned k = 1u; k < axis; ++k) {
            const float v = widen(in_dt, load_bits(in, first + k * inner_count, in_dt));
            if constexpr (OP == SUM) acc = acc + v;
            else if constexpr (OP == PRODUCT) acc = acc * v;
            // PROPAGATE: once acc is NaN it stays; IGNORE: NaNs are skipped
            // (all NaN: NaN).
            else if constexpr (OP == MAX)
                acc = ignore_nan ? max_ignoring_nan(acc, v) : max_of(acc, v);
            else if constexpr (OP == MIN)
                acc = ignore_nan ? min_ignoring_nan(acc, v) : min_of(acc, v);
            // ARGMAX: the first index of the largest value. PROPAGATE: the
            // first NaN wins; IGNORE: NaNs are skipped (all NaN: index 0).
            else if (ignore_nan) {
                if (!isnan(v) && (isnan(acc) || v > acc)) { acc = v; best = k; }
            } else if (!isnan(acc) && (isnan(v) || v > acc)) {
                acc = v;
                best = k;
            }
        }
        if constexpr (OP == ARGMAX) reinterpret_cast<unsigned*>(out)[out_base + i] = best;
        else store_bits(out, out_base + i, out_dt, narrow(out_dt, acc));
    }
}

}  // namespace

VACCEL_KERNEL(vaccel_reduce)
{
    switch (d.spec[0]) {
    case SUM: run<SUM>(d); break;
    case MAX: run<MAX>(d); break;
    case MIN: run<MIN>(d); break;
    case PRODUCT: run<PRODUCT>(d); break;
    case ARGMAX: run<ARGMAX>(d); break;
    default: break;
    }
}
