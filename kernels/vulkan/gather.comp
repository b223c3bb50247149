#version 450
// gather.comp - TOSA GATHER: values [N,K,C], INT32 indices [N,W] -> result
// [N,W,C], 32-bit elements (FP32, INT32) copied bit for bit: one
// invocation per result element. An index outside [0, K) breaks TOSA 1.0's
// REQUIRE (the result is unpredictable): its row is written as zeros and
// nothing outside the values is ever read.
#include "common.glsl"

layout(constant_id = 1) const uint N = 1;
layout(constant_id = 2) const uint K = 1;
layout(constant_id = 3) const uint W = 1;
layout(constant_id = 4) const uint C = 1;
layout(constant_id = 5) const uint OUT_BUF = 0;
layout(constant_id = 6) const uint OUT_BASE = 0;
layout(constant_id = 7) const uint VAL_BUF = 0;
layout(constant_id = 8) const uint VAL_BASE = 0;
layout(constant_id = 9) const uint IDX_BUF = 0;
layout(constant_id = 10) const uint IDX_BASE = 0;

void main()
{
    for (uint i = gl_GlobalInvocationID.x; i < N * W * C; i += GRID_STRIDE) {
        uint c = i % C, w = (i / C) % W, n = i / (C * W);
        int index = int(bufs[IDX_BUF].w[IDX_BASE + n * W + w]);
        bool inside = index >= 0 && index < int(K);
        uint value = 0u;
        if (inside) value = bufs[VAL_BUF].w[VAL_BASE + (n * K + uint(index)) * C + c];
        bufs[OUT_BUF].w[OUT_BASE + i] = value;
    }
}
