#version 450
// max_pool2d.comp - TOSA MAX_POOL2D on NHWC FP32: one invocation per result
// element; padded positions are skipped (they hold -infinity in TOSA, which
// never wins against a real element, and every window has one). Input and
// result have dtype DT (widened on load, the maximum narrowed on store).
#include "common.glsl"

layout(constant_id = 1) const uint N = 1;
layout(constant_id = 2) const uint IH = 1;
layout(constant_id = 3) const uint IW = 1;
layout(constant_id = 4) const uint C = 1;
layout(constant_id = 5) const uint OH = 1;
layout(constant_id = 6) const uint OW = 1;
layout(constant_id = 7) const uint KH = 1;
layout(constant_id = 8) const uint KW = 1;
layout(constant_id = 9) const uint SH = 1;
layout(constant_id = 10) const uint SW = 1;
layout(constant_id = 11) const uint PT = 0;
layout(constant_id = 12) const uint PL = 0;
layout(constant_id = 13) const uint OUT_BUF = 0;
layout(constant_id = 14) const uint OUT_BASE = 0;
layout(constant_id = 15) const uint IN_BUF = 0;
layout(constant_id = 16) const uint IN_BASE = 0;
layout(constant_id = 17) const uint DT = 0;  // common.glsl's DT_*
// TOSA nan_mode: 0 PROPAGATE, 1 IGNORE (NaNs skipped; an all-NaN window is NaN).
layout(constant_id = 18) const uint NAN_IGNORE = 0;

void main()
{
    for (uint i = gl_GlobalInvocationID.x; i < N * OH * OW * C; i += GRID_STRIDE) {
        uint c = i % C, ox = (i / C) % OW, oy = (i / (C * OW)) % OH, n = i / (C * OW * OH);
        float acc = uintBitsToFloat(0xff800000u);  // -infinity
        bool all_nan = true;
        for (uint ky = 0u; ky < KH; ++ky) {
            int iy = int(oy * SH + ky) - int(PT);
            if (iy < 0 || iy >= int(IH)) continue;
            for (uint kx = 0u; kx < KW; ++kx) {
                int ix = int(ox * SW + kx) - int(PL);
                if (ix < 0 || ix >= int(IW)) continue;
                uint bits = 0u;
                LOAD_BITS(bits, IN_BUF, IN_BASE + ((n * IH + uint(iy)) * IW + uint(ix)) * C + c, DT)
                float v = widen(DT, bits);
                if (NAN_IGNORE == 0u) {
                    acc = max_of(acc, v);  // NaN propagates
                } else if (!isnan(v)) {
                    acc = max_of(acc, v);
                    all_nan = false;
                }
            }
        }
        if (NAN_IGNORE != 0u && all_nan) acc = uintBitsToFloat(0x7fc00000u);
        STORE_BITS(OUT_BUF, OUT_BASE + i, DT, narrow(DT, acc))
    }
}
