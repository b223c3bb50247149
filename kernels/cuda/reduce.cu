// reduce.cu - vaccel_reduce: REDUCE_SUM/MAX/MIN/PRODUCT and ARGMAX over one
// axis of a tensor seen as [OUTER, AXIS, INNER]. Mirrors
// kernels/vulkan/reduce.comp and its _narrow variant. Spec words
// (backends/gpu/src/lowering.cpp, lower_reduce):
//   0 OP (0 sum, 1 max, 2 min, 3 product, 4 argmax)  1 OUTER  2 AXIS  3 INNER
//   4 OUT_BUF  5 OUT_BASE  6 IN_BUF  7 IN_BASE  8 IN_DT  9 OUT_DT (DT_*)
//   10 NAN_IGNORE (nan_mode: 0 PROPAGATE, 1 IGNORE)
//   11 TEAM: 0, one thread per result element, reading the axis in index
//      order (sums and products accumulate in FP32 in that order); 32, a
//      team of 32 threads (a warp) per result: lane l folds elements l,
//      l + 32, ... in order, then the lanes are folded pairwise at distance
//      16, 8, 4, 2, 1 (reduce.comp folds the same pairs, in shared memory),
//      so a result does not depend on the grid. The lowering sends 32 work
//      items per result.
// The input is widened to FP32 on load; the result is rounded once into
// OUT_DT (ARGMAX writes INT32 words). The lowering sends no work for an
// empty axis.
#include "common.cuh"

namespace {

using namespace vaccel_cuda;

enum : unsigned { SUM = 0, MAX = 1, MIN = 2, PRODUCT = 3, ARGMAX = 4 };

// A partial result: the value so far and, for ARGMAX, its index.
struct Partial {
    float v;
    unsigned i;
};

// ARGMAX: whether `a` wins over `b`, a total order over (value, index) so
// partials fold in any grouping: the larger value, the lower index on a
// tie; PROPAGATE: a NaN beats every number; IGNORE: every number beats a NaN.
__device__ __forceinline__ bool wins(Partial a, Partial b, bool ignore_nan)
{
    const bool an = isnan(a.v), bn = isnan(b.v);
    if (an && bn) return a.i < b.i;
    if (an || bn) return an != ignore_nan;
    if (a.v != b.v) return a.v > b.v;
    return a.i < b.i;
}

template <unsigned OP>
__device__ __forceinline__ Partial fold(Partial a, Partial b, bool ignore_nan)
{
    if constexpr (OP == SUM) return {a.v + b.v, 0u};
    else if constexpr (OP == PRODUCT) return {a.v * b.v, 0u};
    else if constexpr (OP == MAX)
        return {ignore_nan ? max_ignoring_nan(a.v, b.v) : max_of(a.v, b.v), 0u};
    else if constexpr (OP == MIN)
        return {ignore_nan ? min_ignoring_nan(a.v, b.v) : min_of(a.v, b.v), 0u};
    else return wins(a, b, ignore_nan) ? a : b;
}

constexpr unsigned team_size = 32u;

// TEAM = 32: warp w of the grid reduces results w, w + warps, ...
template <unsigned OP>
__device__ __forceinline__ void run_teams(const Dispatch& d)
{
    const unsigned outer_count = d.spec[1], axis = d.spec[2], inner_count = d.spec[3];
    unsigned char* __restrict__ out = buffer(d, 4);
    const unsigned out_base = d.spec[5];
    const unsigned char* __restrict__ in = buffer(d, 6);
    const unsigned in_base = d.spec[7], in_dt = d.spec[8], out_dt = d.spec[9];
    const bool ignore_nan = d.spec[10] != 0u;
    const unsigned total = outer_count * inner_count;
    const unsigned lane = threadIdx.x % team_size;
    for (unsigned i = first_index() / team_size; i < total; i += grid_stride() / team_size) {
        const unsigned outer = i / inner_count, inner = i % inner_count;
        const unsigned first = in_base + outer * axis * inner_count + inner;
        // A lane with no element (an axis shorter than the team) has no
        // partial; the folds skip it.
        Partial p{0.0f, 0u};
        bool have = false;
        for (unsigned k = lane; k < axis; k += team_size) {
            const Partial v{widen(in_dt, load_bits(in, first + k * inner_count, in_dt)), k};
            p = have ? fold<OP>(p, v, ignore_nan) : v;
            have = true;
        }
        for (unsigned step = team_size / 2; step != 0u; step /= 2) {
            const Partial o{__shfl_down_sync(0xffffffffu, p.v, step),
                            __shfl_down_sync(0xffffffffu, p.i, step)};
            const bool other = __shfl_down_sync(0xffffffffu, have ? 1u : 0u, step) != 0u;
            if (other) p = have ? fold<OP>(p, o, ignore_nan) : o;
            have = have || other;
        }
        if (lane != 0u) continue;
        if constexpr (OP == ARGMAX) reinterpret_cast<unsigned*>(out)[out_base + i] = p.i;
        else store_bits(out, out_base + i, out_dt, narrow(out_dt, p.v));
    }
}

template <unsigned OP>
__device__ __forceinline__ void run(const Dispatch& d)
{
    if (d.spec[11] == team_size) {
        run_teams<OP>(d);
        return;
    }
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
