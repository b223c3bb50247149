// epilogue.cuh - an elementwise chain applied to a kernel's result before
// its store (backends/gpu/include/vaccel/gpu/lowering_epilogue.hpp).
// Mirrors kernels/vulkan/epilogue.glsl. Words from W:
//   W STAGES   W+1 ROW (the result's last dimension)
//   W+2+6s .. W+7+6s  stage s: OP (element_ops.cuh), FORM (bits 0-1: 0 no
//     operand, 1 element i, 2 element i % ROW, 3 element 0; bit 4 the
//     operand comes first; bit 5 nan_mode IGNORE), BUF, BASE, P0, P1
// Every operand has the result's dtype DT; each stage rounds to DT, as the
// unfused kernel's store would, so fused results equal unfused ones.
#pragma once

#include "element_ops.cuh"

namespace vaccel_cuda {

// The epilogue's words, read once into registers: a kernel applies it to
// many results, and its stage loop then reads no parameter memory.
struct Epilogue {
    unsigned stages, row;
    unsigned op[3], form[3], base[3];
    const unsigned char* buf[3];
    float p0[3], p1[3];

    __device__ __forceinline__ static Epilogue of(const Dispatch& d, unsigned w)
    {
        Epilogue e;
        e.stages = d.spec[w] < 3u ? d.spec[w] : 3u;
        e.row = d.spec[w + 1];
#pragma unroll
        for (unsigned s = 0; s < 3u; ++s) {
            const unsigned k = w + 2u + 6u * s;
            e.op[s] = d.spec[k];
            e.form[s] = d.spec[k + 1];
            e.buf[s] = s < e.stages && is_binary(e.op[s]) ? buffer(d, k + 2) : nullptr;
            e.base[s] = d.spec[k + 3];
            e.p0[s] = __uint_as_float(d.spec[k + 4]);
            e.p1[s] = __uint_as_float(d.spec[k + 5]);
        }
        return e;
    }

    // `v`: the result element `index` (dense in the result), already rounded
    // to `dt`. Not inlined, and its loop not unrolled: every operation's
    // code is in it, and a kernel calls it from many places.
    __device__ __noinline__ float apply(unsigned dt, unsigned index, float v) const
    {
#pragma unroll 1
        for (unsigned s = 0; s < 3u; ++s) {
            if (s >= stages) break;
            const bool ignore_nan = (form[s] & 32u) != 0u;
            float r;
            if (is_binary(op[s])) {
                const unsigned mode = form[s] & 3u;
                const unsigned at = mode == 1u ? index : (mode == 2u ? index % row : 0u);
                const float x = widen(dt, load_bits(buf[s], base[s] + at, dt));
                r = (form[s] & 16u) != 0u ? binary_op(op[s], x, v, ignore_nan)
                                          : binary_op(op[s], v, x, ignore_nan);
            } else {
                r = unary_op(op[s], v, p0[s], p1[s], ignore_nan);
            }
            v = widen(dt, narrow(dt, r));
        }
        return v;
    }
};

// The stored bits of a result whose unfused bits are `bits`.
__device__ __forceinline__ unsigned epilogue_bits(const Epilogue& e, unsigned dt, unsigned index,
                                                  unsigned bits)
{
    if (e.stages == 0u) return bits;
    return narrow(dt, e.apply(dt, index, widen(dt, bits)));
}

}  // namespace vaccel_cuda
