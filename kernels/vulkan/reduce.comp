#version 450
// reduce.comp - REDUCE_SUM/MAX/MIN/PRODUCT and ARGMAX over one axis of a
// tensor seen as [OUTER, AXIS, INNER]; one invocation per result element,
// reading the axis in order (sums accumulate in FP32 in index order).
// The input's dtype (IN_DT) is widened to FP32 on load; the result is
// rounded once into OUT_DT (ARGMAX writes INT32).
#include "common.glsl"

layout(constant_id = 1) const uint OP = 0;  // 0 sum, 1 max, 2 min, 3 product, 4 argmax
layout(constant_id = 2) const uint OUTER = 1;
layout(constant_id = 3) const uint AXIS = 1;
layout(constant_id = 4) const uint INNER = 1;
layout(constant_id = 5) const uint OUT_BUF = 0;
layout(constant_id = 6) const uint OUT_BASE = 0;
layout(constant_id = 7) const uint IN_BUF = 0;
layout(constant_id = 8) const uint IN_BASE = 0;
layout(constant_id = 9) const uint IN_DT = 0;   // common.glsl's DT_*
layout(constant_id = 10) const uint OUT_DT = 0;
// TOSA nan_mode of REDUCE_MAX/MIN and ARGMAX: 0 PROPAGATE, 1 IGNORE.
layout(constant_id = 11) const uint NAN_IGNORE = 0;

float load_input(uint i)
{
    uint bits = 0u;
    LOAD_BITS(bits, IN_BUF, i, IN_DT)
    return widen(IN_DT, bits);
}

void main()
{
    for (uint i = gl_GlobalInvocationID.x; i < OUTER * INNER; i += GRID_STRIDE) {
        uint outer = i / INNER, inner = i % INNER;
        uint first = IN_BASE + outer * AXIS * INNER + inner;
        float acc = load_input(first);
        uint best = 0u;
        for (uint k = 1u; k < AXIS; ++k) {
            float v = load_input(first + k * INNER);
            if (OP == 0u) acc += v;
            else if (OP == 3u) acc *= v;
            // PROPAGATE: once acc is NaN it stays; IGNORE: NaNs are skipped
            // (all NaN: NaN).
            else if (OP == 1u) acc = NAN_IGNORE != 0u ? max_ignoring_nan(acc, v) : max_of(acc, v);
            else if (OP == 2u) acc = NAN_IGNORE != 0u ? min_ignoring_nan(acc, v) : min_of(acc, v);
            // ARGMAX: the first index of the largest value. PROPAGATE: the
            // first NaN wins; IGNORE: NaNs are skipped (all NaN: index 0).
            else if (NAN_IGNORE != 0u) {
                if (!isnan(v) && (isnan(acc) || v > acc)) { acc = v; best = k; }
            } else if (!isnan(acc) && (isnan(v) || v > acc)) { acc = v; best = k; }
        }
        if (OP == 4u) bufs[OUT_BUF].w[OUT_BASE + i] = best;
        else {
            STORE_BITS(OUT_BUF, OUT_BASE + i, OUT_DT, narrow(OUT_DT, acc))
        }
    }
}
