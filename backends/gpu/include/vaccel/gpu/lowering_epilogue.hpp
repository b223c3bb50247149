// lowering_epilogue.hpp - elementwise chains folded into the GPU kernel
// that produces their operand (tosa/plan.hpp's epilogues).
//
// Decides (docs/adr/0027-gpu-epilogues.md):
//  - a chain link is a float elementwise operator of the stage set (ADD,
//    SUB, MUL, MAXIMUM, MINIMUM, POW, CLAMP and the unary float functions)
//    on FP32, FP16 or BF16 whose other operand, if any, is read at the
//    result's element index i in one of three forms: `same` (laid out as the
//    result: element i), `row` (broadcast over every dimension but the last:
//    element i % ROW) or `scalar` (one element); at most
//    max_epilogue_stages links a chain;
//  - every stage computes in FP32 on the value rounded to the result's
//    dtype and rounds its own result to it again, exactly as the unfused
//    elementwise kernel does, so a fused plan's bytes equal the unfused
//    plan's on the same device (tests/vulkan/test_epilogues.cpp checks it);
//  - the words: epilogue_words() appends, at a position each kernel fixes,
//    STAGES, ROW, then per stage OP (lowering.hpp's ElementOp), FORM (bits
//    0-1 the form: 0 none, 1 same, 2 row, 3 scalar; bit 4 the operand
//    comes first, as in SUB x - t; bit 5 nan_mode IGNORE), BUF, BASE, P0, P1
//    (CLAMP's bounds as FP32 bits), always for max_epilogue_stages stages
//    (unused ones zero);
//  - a producer whose kernel has no epilogue (every kernel but the
//    elementwise one and those a backend says take one) is followed by one
//    in-place pass of the elementwise kernel that applies the stages:
//    n operators become two dispatches, never more than before;
//  - VACCEL_GPU_FUSION=0 plans without epilogues (the benchmarks' and the
//    tests' baseline); unset, empty or 1 fuses; anything else is refused.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "vaccel/common/error.hpp"
#include "vaccel/tosa/plan.hpp"
#include "vaccel/gpu/lowering_operands.hpp"

namespace vaccel::backend::gpu {

inline constexpr std::size_t max_epilogue_stages = 3;
// STAGES, ROW, then six words per stage.
inline constexpr std::size_t epilogue_word_count = 2 + 6 * max_epilogue_stages;

enum class EpilogueForm : std::uint32_t { none = 0, same = 1, row = 2, scalar = 3 };

struct EpilogueStage {
    std::uint32_t op = 0;  // ElementOp
    EpilogueForm form = EpilogueForm::none;
    bool operand_first = false;
    bool nan_ignore = false;
    Operand operand;
    float p0 = 0, p1 = 0;
};

struct Epilogue {
    std::vector<EpilogueStage> stages;
    std::uint32_t row = 1;  // the result's last dimension
    bool empty() const { return stages.empty(); }
};

// The plan's filter (PlanOptions::epilogue) for the GPU kernels.
bool epilogue_link(const tosa::EpilogueLink& link);
// Whether VACCEL_GPU_FUSION leaves fusion on; InvalidArgument
// (VACCEL_D_BAD_VALUE) naming the valid values otherwise.
Result<bool> fusion_chosen();
// The plan options a GPU backend plans with: `base` plus the epilogue
// filter when fusion is on.
tosa::PlanOptions with_epilogues(tosa::PlanOptions base, bool fusion);

// The stages of view.epilogue, with their operands' locations.
Result<Epilogue> epilogue_of(const tosa::OperatorView& view);
// Appends the epilogue's words (epilogue_word_count of them).
void epilogue_words(std::vector<std::uint32_t>& spec, const Epilogue& epilogue);
// The in-place pass over the producer's result that applies `epilogue`
// where the producer's kernel does not.
Result<tosa::DispatchRequest> epilogue_pass(const tosa::OperatorView& view,
                                            const Epilogue& epilogue);

}  // namespace vaccel::backend::gpu
