#version 450
// pad_tile.comp - TOSA PAD, SLICE and TILE: one invocation per result
// element, whose source coordinate along each of 6 dimensions (leading ones
// of size 1) is, for PAD and SLICE, c - BEFORE[d] (outside [0, IN[d]) the
// element is FILL; SLICE's BEFORE is minus its start, so every source lies
// inside), and for TILE, c mod IN[d]. Elements of 4, 2 or 1 bytes (dtype
// DT) are moved bit for bit.
#include "common.glsl"

layout(constant_id = 1) const uint TILE = 0;   // 1: TILE, else PAD or SLICE
layout(constant_id = 2) const uint DT = DT_FP32;  // common.glsl's DT_*
layout(constant_id = 3) const uint D0 = 1;
layout(constant_id = 4) const uint D1 = 1;
layout(constant_id = 5) const uint D2 = 1;
layout(constant_id = 6) const uint D3 = 1;
layout(constant_id = 7) const uint D4 = 1;
layout(constant_id = 8) const uint D5 = 1;
layout(constant_id = 9) const uint I0 = 1;
layout(constant_id = 10) const uint I1 = 1;
layout(constant_id = 11) const uint I2 = 1;
layout(constant_id = 12) const uint I3 = 1;
layout(constant_id = 13) const uint I4 = 1;
layout(constant_id = 14) const uint I5 = 1;
layout(constant_id = 15) const int B0 = 0;
layout(constant_id = 16) const int B1 = 0;
layout(constant_id = 17) const int B2 = 0;
layout(constant_id = 18) const int B3 = 0;
layout(constant_id = 19) const int B4 = 0;
layout(constant_id = 20) const int B5 = 0;
layout(constant_id = 21) const uint FILL = 0;  // PAD's pad_const: the element's bits
layout(constant_id = 22) const uint OUT_BUF = 0;
layout(constant_id = 23) const uint OUT_BASE = 0;
layout(constant_id = 24) const uint IN_BUF = 0;
layout(constant_id = 25) const uint IN_BASE = 0;

// The source coordinate along one dimension; false when PAD's falls outside.
bool source(uint c, uint size, int before, out uint s)
{
    if (TILE != 0u) {
        s = c % size;
        return true;
    }
    int at = int(c) - before;
    s = uint(at);
    return at >= 0 && at < int(size);
}

void main()
{
    const uint total = D0 * D1 * D2 * D3 * D4 * D5;
    for (uint i = gl_GlobalInvocationID.x; i < total; i += GRID_STRIDE) {
        uint r = i;
        uint c5 = r % D5; r /= D5;
        uint c4 = r % D4; r /= D4;
        uint c3 = r % D3; r /= D3;
        uint c2 = r % D2; r /= D2;
        uint c1 = r % D1; r /= D1;
        uint c0 = r;
        uint s0, s1, s2, s3, s4, s5;
        bool inside = source(c0, I0, B0, s0);
        inside = source(c1, I1, B1, s1) && inside;
        inside = source(c2, I2, B2, s2) && inside;
        inside = source(c3, I3, B3, s3) && inside;
        inside = source(c4, I4, B4, s4) && inside;
        inside = source(c5, I5, B5, s5) && inside;
        uint value = FILL;
        if (inside) {
            uint from = IN_BASE + ((((s0 * I1 + s1) * I2 + s2) * I3 + s3) * I4 + s4) * I5 + s5;
            LOAD_ELEMENT(value, IN_BUF, from, DT)
        }
        STORE_ELEMENT(OUT_BUF, OUT_BASE + i, DT, value)
    }
}
