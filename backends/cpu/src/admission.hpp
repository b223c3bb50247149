// admission.hpp - what the CPU backend accepts of a TOSA block, and in what order it runs it.
//
// Owns nothing. Decides the admitted set (operators per dtype, tensor dtypes
// per operand role, operand counts) and the execution order (producers before
// consumers, ties broken by declaration order, operators that no block output
// depends on marked dead).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vaccel/common/error.hpp"
#include "vaccel/tosa/graph.hpp"

namespace vaccel::backend::cpu {

// One row of the admitted set (admission.cpp): `op` with its output of
// `dtype` and its inputs of `inputs` (variadic: one or more, each inputs[0]).
struct AdmittedOperator {
    tosa::Op op = tosa::Op::unknown;
    tosa::DType dtype = tosa::DType::unknown;
    std::vector<tosa::DType> inputs;
    bool variadic = false;
};

// The admitted set, row by row in table order: the one source of what the
// CPU runs (its capability descriptor is derived from it, descriptor.cpp).
std::vector<AdmittedOperator> admitted_operators();

// Whether a block input or output may have `dtype` (FP32, BOOL, INT32).
bool admitted_slot_dtype(tosa::DType dtype);

// InvalidArgument / VACCEL_D_TOSA_MALFORMED, arg0 = reason, with a note.
Error malformed(std::uint32_t reason, std::string note);

// Every operator of the block in the admitted set with admitted tensor dtypes
// and the right operand counts; every block input and output FP32, BOOL or
// INT32.
Status admit_block(const tosa::Block& block);

struct ExecutionOrder {
    std::vector<std::uint32_t> operators;  // live operators, producers first
    std::vector<bool> constant;            // per tensor: carries data (CONST / CONST_SHAPE)
};

// Orders the block's operators. A tensor read before any producer wrote it
// (and neither a block input nor a constant) is malformed; operators that
// can never all run (a cycle, or a tensor produced twice) are refused with
// VACCEL_D_TOSA_GRAPH / VACCEL_TOSA_CYCLE.
Result<ExecutionOrder> order_block(const tosa::Block& block);

}  // namespace vaccel::backend::cpu
