#version 450
// reduce.comp - REDUCE_SUM/MAX/MIN/PRODUCT and ARGMAX over one axis of a
// tensor seen as [OUTER, AXIS, INNER]. The input's dtype (IN_DT) is widened
// to FP32 on load; the result is rounded once into OUT_DT (ARGMAX writes
// INT32). TEAM 0: one invocation per result element, reading the axis in
// order (sums accumulate in FP32 in index order). TEAM 32: a team of 32
// invocations per result (two teams a workgroup): lane l folds elements l,
// l + 32, ... in order, then lanes fold pairwise at distance 16, 8, 4, 2, 1
// in shared memory: the same pairs as kernels/cuda/reduce.cu's warp
// shuffles, so both devices sum in one order. The lowering sends 32 work
// items per result.
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
layout(constant_id = 12) const uint TEAM = 0;

const uint TEAM_SIZE = 32u;
shared float team_v[64];
shared uint team_i[64];
shared bool team_have[64];

float load_input(uint i)
{
    uint bits = 0u;
    LOAD_BITS(bits, IN_BUF, i, IN_DT)
    return widen(IN_DT, bits);
}

// ARGMAX: whether (av, ai) wins over (bv, bi), a total order so partials
// fold in any grouping: the larger value, the lower index on a tie;
// PROPAGATE: a NaN beats every number; IGNORE: every number beats a NaN.
bool wins(float av, uint ai, float bv, uint bi)
{
    bool an = isnan(av), bn = isnan(bv);
    if (an && bn) return ai < bi;
    if (an || bn) return an != (NAN_IGNORE != 0u);
    if (av != bv) return av > bv;
    return ai < bi;
}

// Folds (bv, bi) into (av, ai).
void fold(inout float av, inout uint ai, float bv, uint bi)
{
    if (OP == 0u) av += bv;
    else if (OP == 3u) av *= bv;
    else if (OP == 1u) av = NAN_IGNORE != 0u ? max_ignoring_nan(av, bv) : max_of(av, bv);
    else if (OP == 2u) av = NAN_IGNORE != 0u ? min_ignoring_nan(av, bv) : min_of(av, bv);
    else if (!wins(av, ai, bv, bi)) { av = bv; ai = bi; }
}

// TEAM = 32. The loop runs per workgroup (uniform, for the barriers); a
// team whose result is past the end only takes part in them.
void run_teams()
{
    uint lane = gl_LocalInvocationID.x % TEAM_SIZE;
    uint team = gl_LocalInvocationID.x / TEAM_SIZE;
    for (uint base = gl_WorkGroupID.x * 2u; base < OUTER * INNER; base += gl_NumWorkGroups.x * 2u) {
        uint i = base + team;
        float v = 0.0;
        uint at = 0u;
        bool have = false;
        if (i < OUTER * INNER) {
            uint outer = i / INNER, inner = i % INNER;
            uint first = IN_BASE + outer * AXIS * INNER + inner;
            for (uint k = lane; k < AXIS; k += TEAM_SIZE) {
                float x = load_input(first + k * INNER);
                if (have) fold(v, at, x, k);
                else { v = x; at = k; have = true; }
            }
        }
        team_v[gl_LocalInvocationID.x] = v;
        team_i[gl_LocalInvocationID.x] = at;
        team_have[gl_LocalInvocationID.x] = have;
        barrier();
        for (uint step = TEAM_SIZE / 2u; step != 0u; step /= 2u) {
            if (lane < step) {
                uint other = gl_LocalInvocationID.x + step;
                if (team_have[other]) {
                    if (have) fold(v, at, team_v[other], team_i[other]);
                    else { v = team_v[other]; at = team_i[other]; have = true; }
                }
            }
            barrier();
            team_v[gl_LocalInvocationID.x] = v;
            team_i[gl_LocalInvocationID.x] = at;
            team_have[gl_LocalInvocationID.x] = have;
            barrier();
        }
        if (lane == 0u && i < OUTER * INNER) {
            if (OP == 4u) bufs[OUT_BUF].w[OUT_BASE + i] = at;
            else {
                STORE_BITS(OUT_BUF, OUT_BASE + i, OUT_DT, narrow(OUT_DT, v))
            }
        }
    }
}

void main()
{
    if (TEAM == TEAM_SIZE) {
        run_teams();
        return;
    }
    // One invocation per result, folding its axis in index order with
    // fold(): PROPAGATE keeps a NaN once met; IGNORE skips NaNs, all NaN
    // giving NaN and ARGMAX index 0; ARGMAX keeps the first largest.
    for (uint i = gl_GlobalInvocationID.x; i < OUTER * INNER; i += GRID_STRIDE) {
        uint outer = i / INNER, inner = i % INNER;
        uint first = IN_BASE + outer * AXIS * INNER + inner;
        float acc = load_input(first);
        uint best = 0u;
        for (uint k = 1u; k < AXIS; ++k) fold(acc, best, load_input(first + k * INNER), k);
        if (OP == 4u) bufs[OUT_BUF].w[OUT_BASE + i] = best;
        else {
            STORE_BITS(OUT_BUF, OUT_BASE + i, OUT_DT, narrow(OUT_DT, acc))
        }
    }
}
