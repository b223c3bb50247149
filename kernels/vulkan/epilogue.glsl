// epilogue.glsl - an elementwise chain applied to a kernel's result before
// its store (backends/gpu/include/vaccel/gpu/lowering_epilogue.hpp).
// Mirrors kernels/cuda/epilogue.cuh. The including shader defines
// EPILOGUE_ID, the constant_id of the first of the epilogue's words:
//   EPILOGUE_ID EP_STAGES   +1 EP_ROW (the result's last dimension)
//   +2+6s .. +7+6s  stage s: OP (element_ops.glsl), FORM (bits 0-1: 0 no
//     operand, 1 element i, 2 element i % ROW, 3 element 0; bit 4 the
//     operand comes first; bit 5 nan_mode IGNORE), BUF, BASE, P0, P1
// Every operand has the result's dtype; each stage rounds to it, as the
// unfused kernel's store would, so fused results equal unfused ones.
// Operands load with LOAD_FLOAT (common.glsl).

layout(constant_id = EPILOGUE_ID) const uint EP_STAGES = 0;
layout(constant_id = EPILOGUE_ID + 1) const uint EP_ROW = 1;
#define EPILOGUE_STAGE(s, first)                                                 \
    layout(constant_id = first) const uint EP_OP##s = 0;                         \
    layout(constant_id = first + 1) const uint EP_FORM##s = 0;                   \
    layout(constant_id = first + 2) const uint EP_BUF##s = 0;                    \
    layout(constant_id = first + 3) const uint EP_BASE##s = 0;                   \
    layout(constant_id = first + 4) const uint EP_P0_##s = 0;                    \
    layout(constant_id = first + 5) const uint EP_P1_##s = 0;
EPILOGUE_STAGE(0, EPILOGUE_ID + 2)
EPILOGUE_STAGE(1, EPILOGUE_ID + 8)
EPILOGUE_STAGE(2, EPILOGUE_ID + 14)

#define EPILOGUE_APPLY_STAGE(s, dt, index, v)                                    \
    if (EP_STAGES > s) {                                                         \
        float r_;                                                                \
        bool ignore_ = (EP_FORM##s & 32u) != 0u;                                 \
        if (EP_OP##s >= ADD && EP_OP##s <= POW) {                                \
            uint mode_ = EP_FORM##s & 3u;                                        \
            uint at_ = mode_ == 1u ? (index) : (mode_ == 2u ? (index) % EP_ROW : 0u); \
            float x_ = 0.0;                                                      \
            LOAD_FLOAT(x_, EP_BUF##s, EP_BASE##s + at_, dt)                      \
            r_ = (EP_FORM##s & 16u) != 0u ? binary_op(EP_OP##s, x_, v, ignore_)  \
                                          : binary_op(EP_OP##s, v, x_, ignore_); \
        } else {                                                                 \
            r_ = unary_op(EP_OP##s, v, uintBitsToFloat(EP_P0_##s),               \
                          uintBitsToFloat(EP_P1_##s), ignore_);                  \
        }                                                                        \
        v = widen(dt, narrow(dt, r_));                                           \
    }

// The stored bits of result element `index` (dense in the result) whose
// unfused bits are `bits`, of dtype `dt`.
uint epilogue_bits(uint dt, uint index, uint bits)
{
    if (EP_STAGES == 0u) return bits;
    float v = widen(dt, bits);
    EPILOGUE_APPLY_STAGE(0, dt, index, v)
    EPILOGUE_APPLY_STAGE(1, dt, index, v)
    EPILOGUE_APPLY_STAGE(2, dt, index, v)
    return narrow(dt, v);
}
