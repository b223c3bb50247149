#version 450
// resize.comp - TOSA RESIZE on NHWC FP32, NEAREST_NEIGHBOR or BILINEAR: one
// invocation per result element, the TOSA 1.0 formula as the CPU device
// computes it: y = oy * scale_y_d + offset_y, iy = floor(y / scale_y_n),
// dy = (y - iy * scale_y_n) / scale_y_n in float (likewise along x); the
// neighbours iy and iy + 1 are clamped into the input. NEAREST takes iy + 1
// when dy >= 0.5; BILINEAR sums the corners v00, v01, v10, v11 weighted
// (1 - dy)(1 - dx), (1 - dy)dx, dy(1 - dx), dy dx, in that order. TOSA's
// limits (checked at load) keep every intermediate inside 32 bits.
#include "common.glsl"

layout(constant_id = 1) const uint BILINEAR = 0;
layout(constant_id = 2) const uint N = 1;
layout(constant_id = 3) const uint IH = 1;
layout(constant_id = 4) const uint IW = 1;
layout(constant_id = 5) const uint C = 1;
layout(constant_id = 6) const uint OH = 1;
layout(constant_id = 7) const uint OW = 1;
layout(constant_id = 8) const int SCALE_Y_N = 1;
layout(constant_id = 9) const int SCALE_Y_D = 1;
layout(constant_id = 10) const int SCALE_X_N = 1;
layout(constant_id = 11) const int SCALE_X_D = 1;
layout(constant_id = 12) const int OFFSET_Y = 0;
layout(constant_id = 13) const int OFFSET_X = 0;
layout(constant_id = 14) const uint OUT_BUF = 0;
layout(constant_id = 15) const uint OUT_BASE = 0;
layout(constant_id = 16) const uint IN_BUF = 0;
layout(constant_id = 17) const uint IN_BASE = 0;

// Rounds toward negative infinity (GLSL's int division truncates); b > 0.
int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

float at(uint n, int y, int x, uint c)
{
    return LOAD_F(IN_BUF, IN_BASE + ((n * IH + uint(y)) * IW + uint(x)) * C + c);
}

void main()
{
    for (uint i = gl_GlobalInvocationID.x; i < N * OH * OW * C; i += GRID_STRIDE) {
        uint c = i % C, ox = (i / C) % OW, oy = (i / (C * OW)) % OH, n = i / (C * OW * OH);
        int y = int(oy) * SCALE_Y_D + OFFSET_Y;
        int iy = floor_div(y, SCALE_Y_N);
        precise float dy = float(y - iy * SCALE_Y_N) / float(SCALE_Y_N);
        int iy0 = clamp(iy, 0, int(IH) - 1), iy1 = clamp(iy + 1, 0, int(IH) - 1);
        int x = int(ox) * SCALE_X_D + OFFSET_X;
        int ix = floor_div(x, SCALE_X_N);
        precise float dx = float(x - ix * SCALE_X_N) / float(SCALE_X_N);
        int ix0 = clamp(ix, 0, int(IW) - 1), ix1 = clamp(ix + 1, 0, int(IW) - 1);
        precise float result;
        if (BILINEAR != 0u) {
            precise float ry = 1.0 - dy, rx = 1.0 - dx;
            result = at(n, iy0, ix0, c) * ry * rx;
            result += at(n, iy0, ix1, c) * ry * dx;
            result += at(n, iy1, ix0, c) * dy * rx;
            result += at(n, iy1, ix1, c) * dy * dx;
        } else {
            result = at(n, dy >= 0.5 ? iy1 : iy0, dx >= 0.5 ? ix1 : ix0, c);
        }
        STORE_F(OUT_BUF, OUT_BASE + i, result);
    }
}
