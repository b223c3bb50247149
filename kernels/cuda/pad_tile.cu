// pad_tile.cu - vaccel_pad_tile: TOSA PAD, SLICE and TILE, one thread per
// result element, whose source coordinate along each of 6 dimensions
// (leading ones of size 1) is, for PAD and SLICE, c - BEFORE[d] (outside
// [0, IN[d]) the element is FILL; SLICE's BEFORE is minus its start, so
// every source lies inside), and for TILE, c mod IN[d]. Elements are 32-bit
// words or BOOL bytes, moved bit for bit. Mirrors kernels/vulkan/pad_tile.comp.
// Spec words (backends/gpu/src/lowering_spatial.cpp, pad_tile):
//   0 TILE  1 BYTES (1: BOOL bytes, else words)  2..7 D0..D5 (result)
//   8..13 I0..I5 (input)  14..19 B0..B5 (BEFORE, signed)
//   20 FILL (the element's bits)  21 OUT_BUF  22 OUT_BASE  23 IN_BUF  24 IN_BASE
#include "common.cuh"

namespace {

using namespace vaccel_cuda;

// The source coordinate along dimension k; false when PAD's falls outside.
template <bool TILE>
__device__ __forceinline__ bool source(const Dispatch& d, unsigned k, unsigned c, unsigned& s)
{
    const unsigned size = d.spec[8 + k];
    if constexpr (TILE) {
        s = c % size;
        return true;
    } else {
        const int at = static_cast<int>(c) - static_cast<int>(d.spec[14 + k]);
        s = static_cast<unsigned>(at);
        return at >= 0 && at < static_cast<int>(size);
    }
}

template <bool TILE, unsigned BYTES>
__device__ __forceinline__ void run(const Dispatch& d)
{
    // A dtype of that width: the bits move unchanged whatever the dtype.
    constexpr unsigned DT = BYTES == 4u ? DT_FP32 : BYTES == 2u ? DT_FP16 : DT_INT8;
    unsigned char* __restrict__ out = buffer(d, 21);
    const unsigned out_base = d.spec[22];
    const unsigned char* __restrict__ in = buffer(d, 23);
    const unsigned in_base = d.spec[24], fill = d.spec[20];
    const unsigned d1 = d.spec[3], d2 = d.spec[4], d3 = d.spec[5], d4 = d.spec[6], d5 = d.spec[7];
    const unsigned total = d.spec[2] * d1 * d2 * d3 * d4 * d5;
    for (unsigned i = first_index(); i < total; i += grid_stride()) {
        unsigned c[6];
        unsigned r = i;
        c[5] = r % d5; r /= d5;
        c[4] = r % d4; r /= d4;
        c[3] = r % d3; r /= d3;
        c[2] = r % d2; r /= d2;
        c[1] = r % d1; r /= d1;
        c[0] = r;
        unsigned s[6];
        bool inside = true;
#pragma unroll
        for (unsigned k = 0; k < 6u; ++k) inside = source<TILE>(d, k, c[k], s[k]) && inside;
        unsigned value = fill;
        if (inside) {
            unsigned from = s[0];
#pragma unroll
            for (unsigned k = 1; k < 6u; ++k) from = from * d.spec[8 + k] + s[k];
            from += in_base;
            value = load_bits(in, from, DT);
        }
        store_bits(out, out_base + i, DT, value);
    }
}

template <unsigned BYTES>
__device__ __forceinline__ void run_width(const Dispatch& d)
{
    if (d.spec[0] != 0u) run<true, BYTES>(d);
    else run<false, BYTES>(d);
}

}  // namespace

VACCEL_KERNEL(vaccel_pad_tile)
{
    switch (dtype_bytes(d.spec[1])) {
    case 4u: run_width<4u>(d); break;
    case 2u: run_width<2u>(d); break;
    default: run_width<1u>(d); break;
    }
}
