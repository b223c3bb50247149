#version 450
// avg_pool2d.comp - TOSA AVG_POOL2D on NHWC FP32, FP16 or BF16 (DT; FP32
// sums, the result rounded once on store): one invocation per result
// element. Sums the window's input elements in (ky, kx) order and divides
// once by their count: padding is neither summed nor counted (as on the CPU
// device; every window holds an input element because pads are below the
// kernel size, checked at load).
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
layout(constant_id = 17) const uint DT = DT_FP32;

void main()
{
    for (uint i = gl_GlobalInvocationID.x; i < N * OH * OW * C; i += GRID_STRIDE) {
        uint c = i % C, ox = (i / C) % OW, oy = (i / (C * OW)) % OH, n = i / (C * OW * OH);
        // The window clipped to the input: rows [y0, y1), columns [x0, x1).
        int top = int(oy * SH) - int(PT), left = int(ox * SW) - int(PL);
        int y0 = max(top, 0), y1 = min(top + int(KH), int(IH));
        int x0 = max(left, 0), x1 = min(left + int(KW), int(IW));
        precise float acc = 0.0;
        for (int y = y0; y < y1; ++y)
            for (int x = x0; x < x1; ++x) {
                float v;
                LOAD_FLOAT_ELEMENT(v, IN_BUF, IN_BASE + ((n * IH + uint(y)) * IW + uint(x)) * C + c, DT)
                acc += v;
            }
        precise float result = acc / float((y1 - y0) * (x1 - x0));
        STORE_FLOAT_ELEMENT(OUT_BUF, OUT_BASE + i, DT, result)
    }
}
