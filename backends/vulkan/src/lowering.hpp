// lowering.hpp - how the Vulkan backend turns one TOSA operator into kernel
// dispatches (tosa/plan.hpp's Lowerer), and the operators it runs.
//
// Decides (docs/adr/0013-vulkan-backend.md):
//  - five kernels (kernels/vulkan/*.comp): elementwise (every
//    element-to-element operator and the strided copies), reduce, the two
//    MATMUL kernels (lowering_matmul.hpp) and max_pool2d; KernelSpec::spec holds the kernel's specialization
//    constants from constant_id 1 on, in declared order (constant 0, the
//    buffer count, is the program's and is added by the pipeline builder);
//  - an operand is named by its buffer (its slot, or the arena after the
//    slots) and its element offset: words for 32-bit dtypes, bytes for BOOL;
//  - storage: FP32 and INT32 elements are 4-byte words; BOOL is one byte per
//    element, packed four to a word (the TOSA byte layout clients already
//    use), written with per-byte atomics;
//  - dtypes: arithmetic runs on FP32 only (MATMUL also on FP16); copies (IDENTITY, RESHAPE,
//    TRANSPOSE, REVERSE, CONCAT) move FP32, INT32 and BOOL; anything else
//    is refused at load (Unsupported, VACCEL_D_TOSA_DTYPE, arg0 = DType,
//    arg1 = Op), though the tier admits it, because no kernel runs it.
#pragma once

#include <cstdint>

#include "matmul_tiles.hpp"
#include "vaccel/common/error.hpp"
#include "vaccel/tosa/capability.hpp"
#include "vaccel/tosa/plan.hpp"

namespace vaccel::backend::vulkan {

enum class KernelId : std::uint32_t {
    elementwise = 0, reduce = 1, matmul_tiled = 2, max_pool2d = 3,
    matmul_rows = 4,  // lowering_matmul.hpp: H <= 4 with subgroup arithmetic
    matmul_coop = 5,  // lowering_matmul.hpp: FP16 on cooperative matrices
};
inline constexpr std::uint32_t kernel_count = 6;

// The elementwise kernel's operation codes (elementwise.comp uses the same).
enum class ElementOp : std::uint32_t {
    copy32 = 0, copy8 = 1,
    add = 2, sub = 3, mul = 4, maximum = 5, minimum = 6, pow = 7,
    equal = 8, greater = 9, greater_equal = 10,
    abs = 11, negate = 12, exp = 13, log = 14, reciprocal = 15, rsqrt = 16,
    ceil = 17, floor = 18, sin = 19, cos = 20, sigmoid = 21, tanh = 22, erf = 23,
    clamp = 24, select = 25,
    logical_and = 26, logical_or = 27, logical_xor = 28, logical_not = 29,
};

// The FP32 tier's descriptor restricted to the operators lower() runs
// (every operator it lists is lowered; nothing else is advertised).
tosa::CapabilityDescriptor vulkan_descriptor();

// The Lowerer of plan_block(), MATMUL with the device's kernel choice.
Result<std::vector<tosa::DispatchRequest>> lower(const tosa::OperatorView& view,
                                                 const MatmulChoice& matmul);

}  // namespace vaccel::backend::vulkan
