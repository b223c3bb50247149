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

// The spec words, decoded once.
struct Reduce {
    unsigned axis, inner_count, total, in_base, out_base, in_dt, out_dt;
    const unsigned char* __restrict__ in;
    unsigned char* __restrict__ out;
    bool ignore_nan;

    __device__ __forceinline__ explicit Reduce(const Dispatch& d)
        : axis(d.spec[2]), inner_count(d.spec[3]), total(d.spec[1] * d.spec[3]),
          in_base(d.spec[7]), out_base(d.spec[5]), in_dt(d.spec[8]), out_dt(d.spec[9]),
          in(buffer(d, 6)), out(buffer(d, 4)), ignore_nan(d.spec[10] != 0u)
    {
    }
    // Element k of result i's axis, with its index.
    __device__ __forceinline__ Partial element(unsigned i, unsigned k) const
    {
        const unsigned first = in_base + (i / inner_count) * axis * inner_count + i % inner_count;
        return {widen(in_dt, load_bits(in, first + k * inner_count, in_dt)), k};
    }
    template <unsigned OP>
    __device__ __forceinline__ void store(unsigned i, Partial p) const
    {
        if constexpr (OP == ARGMAX) reinterpret_cast<unsigned*>(out)[out_base + i] = p.i;
        else store_bits(out, out_base + i, out_dt, narrow(out_dt, p.v));
    }
};

// TEAM = 32: warp w of the grid reduces results w, w + warps, ...
template <unsigned OP>
__device__ __forceinline__ void run_teams(const Reduce& r)
{
    const unsigned lane = threadIdx.x % team_size;
    for (unsigned i = first_index() / team_size; i < r.total; i += grid_stride() / team_size) {
        // A lane with no element (an axis shorter than the team) has no
        // partial; the folds skip it.
        Partial p{0.0f, 0u};
        bool have = false;
        for (unsigned k = lane; k < r.axis; k += team_size) {
            const Partial v = r.element(i, k);
            p = have ? fold<OP>(p, v, r.ignore_nan) : v;
            have = true;
        }
        for (unsigned step = team_size / 2; step != 0u; step /= 2) {
            const Partial o{__shfl_down_sync(0xffffffffu, p.v, step),
                            __shfl_down_sync(0xffffffffu, p.i, step)};
            const bool other = __shfl_down_sync(0xffffffffu, have ? 1u : 0u, step) != 0u;
            if (other) p = have ? fold<OP>(p, o, r.ignore_nan) : o;
            have = have || other;
        }
        if (lane == 0u) r.store<OP>(i, p);
    }
}

// TEAM = 0: one thread per result, folding its axis in index order (the
// folds above: PROPAGATE keeps a NaN once met; IGNORE skips NaNs, all NaN
// giving NaN and ARGMAX index 0; ARGMAX keeps the first largest).
template <unsigned OP>
__device__ __forceinline__ void run(const Dispatch& d)
{
    const Reduce r(d);
    if (d.spec[11] == team_size) {
        run_teams<OP>(r);
        return;
    }
    for (unsigned i = first_index(); i < r.total; i += grid_stride()) {
        Partial p = r.element(i, 0u);
        for (unsigned k = 1u; k < r.axis; ++k) p = fold<OP>(p, r.element(i, k), r.ignore_nan);
        r.store<OP>(i, p);
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
