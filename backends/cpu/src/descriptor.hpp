// descriptor.hpp - the CPU device's TOSA capability descriptor.
//
// Decides: the descriptor is derived, at run time, from the admitted set
// (admission.cpp) and nothing else names the CPU's operators; a row added to
// that table shows up here, in VACCEL_IOCTL_DEVICE_TOSA and in `vaccelctl
// devices` without another edit (docs/adr/0014-tosa-descriptors.md).
#pragma once

#include <span>

#include "admission.hpp"
#include "vaccel/tosa/capability.hpp"

namespace vaccel::backend::cpu {

// The descriptor of `rows` (admitted_operators() in the backend; tests pass
// their own tables). `slot_dtype` says which dtypes a block input/output may
// have (admitted_slot_dtype()). Derivation, per part:
//  - operators: every op of a row, ascending by Op, each with the dtypes it
//    takes (its rows' output and input dtypes, SHAPE included) and the
//    constraints the CPU's compiler (plan.cpp) puts on its operand values;
//  - dtypes (SHAPE excepted: shapes are not tensors to a descriptor), each
//    role where the table allows it: input/output where `slot_dtype` admits
//    it, constant where a CONST row produces it, intermediate where a row
//    other than CONST produces it and some row consumes it; a dtype whose
//    only role is constant is parameter-only;
//  - target: TOSA 1.0, level 8K (the CPU sets no size limit below the 8K
//    level's), profile FP when a row computes on a floating-point dtype,
//    INT when a row computes integers from integers; the extension of each
//    extended dtype (INT16, INT4, BF16, FP8E4M3, FP8E5M2) and operator
//    group (FFT2D/RFFT2D, COND_IF/WHILE_LOOP, VARIABLE*) a row uses;
//  - envelope: with control flow any number of regions and blocks (else
//    one), static shapes, runtime conditions kept (the CPU checks indices,
//    divisors and shifts while it runs).
tosa::CapabilityDescriptor derive_descriptor(std::span<const AdmittedOperator> rows,
                                             bool (*slot_dtype)(tosa::DType));

// derive_descriptor(admitted_operators(), admitted_slot_dtype), computed once.
const tosa::CapabilityDescriptor& cpu_descriptor();

}  // namespace vaccel::backend::cpu
