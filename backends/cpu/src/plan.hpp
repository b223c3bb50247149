// plan.hpp - a TOSA graph compiled for the CPU backend.
//
// Owns: everything a submission needs to run a program, computed once at
// load time: the slots, where every tensor lives (a bound slot, the plan's
// constants, or an offset in the per-run arena), the operator steps in
// execution order with resolved operand indices and parameters.
// Decides: a submission allocates only the arena (arena_floats floats) and
// never parses or resolves anything.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kernels.hpp"
#include "vaccel/backend/backend.hpp"
#include "vaccel/common/error.hpp"
#include "vaccel/tosa/graph.hpp"

namespace vaccel::backend::cpu {

enum class Home : std::uint8_t {
    slot,      // a bound input slot: read in place from the buffer
    constant,  // Plan::constants at `offset` (floats)
    arena,     // the per-run arena at `offset` (floats)
};

struct Value {
    Home home = Home::arena;
    std::uint32_t slot = 0;     // Home::slot
    std::uint64_t offset = 0;   // Home::constant / Home::arena, in floats
    std::vector<std::int64_t> shape;
    std::uint64_t elements = 0;
};

enum class StepKind : std::uint8_t {
    add, sub, mul, matmul, copy, transpose, clamp, sigmoid, tanh, reduce_sum, conv2d,
};

struct Step {
    StepKind kind = StepKind::copy;
    std::uint32_t op_index = 0;            // index of the operator in the block
    std::vector<std::uint32_t> inputs;     // value indices (data operands only)
    std::uint32_t output = 0;              // value index
    std::vector<std::int32_t> perms;       // transpose
    std::int32_t axis = 0;                 // reduce_sum
    float min = 0.0f, max = 0.0f;          // clamp
    bool nan_propagate = true;             // clamp
    Conv2dGeometry conv;                   // conv2d
};

struct Plan {
    std::vector<SlotInfo> slots;            // inputs first, then outputs
    std::uint32_t input_count = 0;
    std::vector<std::uint32_t> slot_values; // value index of each slot
    std::vector<Value> values;
    std::vector<Step> steps;                // execution order
    std::vector<float> constants;
    std::uint64_t arena_floats = 0;
};

// Admits and compiles a parsed graph: exactly one region with one block,
// operators and dtypes of the admitted set, consistent shapes, an execution
// order. Refusals carry the contract detail and a note naming the culprit.
Result<std::shared_ptr<const Plan>> compile(const tosa::Graph& graph);

}  // namespace vaccel::backend::cpu
