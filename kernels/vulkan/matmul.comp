#version 450
// matmul.comp - TOSA MATMUL [N,H,C] x [N,C,W] -> [N,H,W] in FP32: one
// invocation per result element, the dot product accumulated in index order.
#include "common.glsl"

layout(constant_id = 1) const uint N = 1;
layout(constant_id = 2) const uint H = 1;
layout(constant_id = 3) const uint C = 1;
layout(constant_id = 4) const uint W = 1;
layout(constant_id = 5) const uint OUT_BUF = 0;
layout(constant_id = 6) const uint OUT_BASE = 0;
layout(constant_id = 7) const uint A_BUF = 0;
layout(constant_id = 8) const uint A_BASE = 0;
layout(constant_id = 9) const uint B_BUF = 0;
layout(constant_id = 10) const uint B_BASE = 0;

void main()
{
    for (uint i = gl_GlobalInvocationID.x; i < N * H * W; i += GRID_STRIDE) {
        uint x = i % W, y = (i / W) % H, n = i / (W * H);
        uint a = A_BASE + (n * H + y) * C;
        uint b = B_BASE + n * C * W + x;
        float acc = 0.0;
        for (uint k = 0u; k < C; ++k)
            acc += LOAD_F(A_BUF, a + k) * LOAD_F(B_BUF, b + k * W);
        STORE_F(OUT_BUF, OUT_BASE + i, acc);
    }
}
