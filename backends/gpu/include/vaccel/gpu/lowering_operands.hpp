// lowering_operands.hpp - what every lowering file shares (lowering.cpp,
// lowering_spatial.cpp and each backend's lowering_matmul.cpp): where an operand lives as a kernel names it, and the
// dtype refusal of an operator no kernel runs on a dtype.
#pragma once

#include <cstdint>
#include <optional>

#include "vaccel/common/error.hpp"
#include "vaccel/tosa/plan.hpp"

namespace vaccel::backend::gpu {

// Where one operand lives, as a kernel names it.
struct Operand {
    std::uint32_t buffer = 0;
    std::uint32_t base = 0;  // in elements of the tensor's dtype (bytes for BOOL)
};

const tosa::Tensor& tensor(const tosa::OperatorView& view, std::uint32_t index);
// Bytes per element in the kernels' storage: the dtype's own (BOOL 1).
std::uint32_t element_bytes(tosa::DType dtype);
// Unsupported, VACCEL_D_TOSA_DTYPE, arg0 = dtype, arg1 = the operator.
Error dtype_refusal(const tosa::OperatorView& view, tosa::DType dtype);
// Tensor `index`'s buffer and element offset; refuses a tensor or arena
// beyond the kernels' 32-bit offsets and a tensor with no location.
Result<Operand> operand(const tosa::OperatorView& view, std::uint32_t index);
// The elementwise kernel's code for `op` (lowering.hpp's ElementOp), as a
// number; nullopt for an operator that kernel does not run.
std::optional<std::uint32_t> element_code(tosa::Op op);

}  // namespace vaccel::backend::gpu
