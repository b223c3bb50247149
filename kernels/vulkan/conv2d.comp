#version 450
// conv2d.comp - TOSA CONV2D and DEPTHWISE_CONV2D on NHWC FP32, FP16 or BF16
// (every operand of dtype DT; narrow elements widened to FP32 on load, the
// result rounded once on store): one invocation per result element. The sum starts at zero and takes the taps
// in (ky, kx, ic) order, skipping those that fall on padding, then adds the
// bias once (out = acc + bias, as TOSA 1.0 writes it). `precise` keeps each
// product and sum its own rounding step (no fused multiply-add), as on the
// CPU device.
#include "common.glsl"

layout(constant_id = 1) const uint DEPTHWISE = 0;  // 1: weight [KH,KW,IC,M], else [OC,KH,KW,IC]
layout(constant_id = 2) const uint N = 1;
layout(constant_id = 3) const uint IH = 1;
layout(constant_id = 4) const uint IW = 1;
layout(constant_id = 5) const uint IC = 1;
layout(constant_id = 6) const uint OH = 1;
layout(constant_id = 7) const uint OW = 1;
layout(constant_id = 8) const uint OC = 1;
layout(constant_id = 9) const uint KH = 1;
layout(constant_id = 10) const uint KW = 1;
layout(constant_id = 11) const uint SY = 1;
layout(constant_id = 12) const uint SX = 1;
layout(constant_id = 13) const uint DY = 1;
layout(constant_id = 14) const uint DX = 1;
layout(constant_id = 15) const uint PT = 0;
layout(constant_id = 16) const uint PL = 0;
layout(constant_id = 17) const uint M = 1;  // depthwise channel multiplier (OC = IC * M)
layout(constant_id = 18) const uint BIAS_PER_CHANNEL = 1;  // bias [OC], else [1]
layout(constant_id = 19) const uint OUT_BUF = 0;
layout(constant_id = 20) const uint OUT_BASE = 0;
layout(constant_id = 21) const uint IN_BUF = 0;
layout(constant_id = 22) const uint IN_BASE = 0;
layout(constant_id = 23) const uint W_BUF = 0;
layout(constant_id = 24) const uint W_BASE = 0;
layout(constant_id = 25) const uint B_BUF = 0;
layout(constant_id = 26) const uint B_BASE = 0;
layout(constant_id = 27) const uint DT = DT_FP32;

void main()
{
    for (uint i = gl_GlobalInvocationID.x; i < N * OH * OW * OC; i += GRID_STRIDE) {
        uint oc = i % OC, ox = (i / OC) % OW, oy = (i / (OC * OW)) % OH, n = i / (OC * OW * OH);
        precise float acc = 0.0;
        for (uint ky = 0u; ky < KH; ++ky) {
            int iy = int(oy * SY + ky * DY) - int(PT);
            if (iy < 0 || iy >= int(IH)) continue;
            for (uint kx = 0u; kx < KW; ++kx) {
                int ix = int(ox * SX + kx * DX) - int(PL);
                if (ix < 0 || ix >= int(IW)) continue;
                uint pixel = IN_BASE + ((n * IH + uint(iy)) * IW + uint(ix)) * IC;
                if (DEPTHWISE != 0u) {
                    // weight (ky, kx, c, j) for output channel oc = c * M + j
                    // is at (ky * KW + kx) * OC + oc.
                    float x, w;
                    LOAD_FLOAT_ELEMENT(x, IN_BUF, pixel + oc / M, DT)
                    LOAD_FLOAT_ELEMENT(w, W_BUF, W_BASE + (ky * KW + kx) * OC + oc, DT)
                    precise float p = x * w;
                    acc += p;
                } else {
                    uint taps = W_BASE + ((oc * KH + ky) * KW + kx) * IC;
                    for (uint c = 0u; c < IC; ++c) {
                        float x, w;
                        LOAD_FLOAT_ELEMENT(x, IN_BUF, pixel + c, DT)
                        LOAD_FLOAT_ELEMENT(w, W_BUF, taps + c, DT)
                        precise float p = x * w;
                        acc += p;
                    }
                }
            }
        }
        float bias;
        LOAD_FLOAT_ELEMENT(bias, B_BUF, B_BASE + (BIAS_PER_CHANNEL != 0u ? oc : 0u), DT)
        precise float result = acc + bias;
        STORE_FLOAT_ELEMENT(OUT_BUF, OUT_BASE + i, DT, result)
    }
}
