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

// `v`: the result element `index` (dense in the result), already rounded to `dt`.
__device__ __forceinline__ float epilogue_apply(const Dispatch& d, unsigned w, unsigned dt,
                                                unsigned index, float v)
{
    const unsigned stages = d.spec[w];
    for (unsigned s = 0; s < stages; ++s) {
        const unsigned k = w + 2u + 6u * s;
        const unsigned op = d.spec[k], form = d.spec[k + 1];
        const bool ignore_nan = (form & 32u) != 0u;
        float r;
        if (is_binary(op)) {
            const unsigned mode = form & 3u;
            const unsigned at = mode == 1u ? index : (mode == 2u ? index % d.spec[w + 1] : 0u);
            const float x = widen(dt, load_bits(buffer(d, k + 2), d.spec[k + 3] + at, dt));
            r = (form & 16u) != 0u ? binary_op(op, x, v, ignore_nan)
                                   : binary_op(op, v, x, ignore_nan);
        } else {
            r = unary_op(op, v, __uint_as_float(d.spec[k + 4]), __uint_as_float(d.spec[k + 5]),
                         ignore_nan);
        }
        v = widen(dt, narrow(dt, r));
    }
    return v;
}

// The stored bits of a result whose unfused bits are `bits`.
__device__ __forceinline__ unsigned epilogue_bits(const Dispatch& d, unsigned w, unsigned dt,
                                                  unsigned index, unsigned bits)
{
    if (d.spec[w] == 0u) return bits;
    return narrow(dt, epilogue_apply(d, w, dt, index, widen(dt, bits)));
}

}  // namespace vaccel_cuda
