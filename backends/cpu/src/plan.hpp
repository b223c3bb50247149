// plan.hpp - a TOSA graph compiled for the CPU backend.
//
// Owns: everything a submission needs to run a program, computed once at
// load time: the slots, where every tensor lives, the operator steps in
// execution order with resolved operand indices and parameters.
// Decides: where tensors live is the shared plan's decision (tosa/plan.hpp,
// docs/adr/0010-shared-plan.md) with staged outputs: inputs are read in
// place from their slots, intermediates, constants and outputs live in one
// arena packed by lifetime, views (RESHAPE, IDENTITY) are their source's
// bytes, and outputs are copied to their slots after the last step. The
// arena is made per loaded program (arena_pool.hpp), never per run; its
// constants are written when it is made and never overwritten. Storage is
// byte-based: every value carries its dtype (FP32: 4-byte float, BOOL: one
// byte 0 or 1, INT8: 1, INT16: 2 and INT32: 4 bytes, INT48: 6 bytes little
// endian; an INT4 constant is unpacked at load into an INT8 value; FP16 and
// BF16: 2, FP8: 1, in their own encoding) and its offset and size are in
// bytes. Arena
// ranges start at multiples of 256 bytes from a base aligned to at least 16,
// so every element type is aligned.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kernels.hpp"
#include "kernels_spatial.hpp"
#include "kernels_data.hpp"
#include "kernels_qconv.hpp"
#include "kernels_int.hpp"
#include "vaccel/backend/backend.hpp"
#include "vaccel/common/error.hpp"
#include "vaccel/tosa/graph.hpp"
#include "vaccel/tosa/plan.hpp"

namespace vaccel::backend::cpu {

enum class Home : std::uint8_t {
    slot,      // a bound slot: read in place from the buffer (inputs)
    constant,  // Plan::constants at `offset` (bytes): a constant only a step reads as data
    arena,     // the program's arena at `offset` (bytes)
    state,     // program variable `slot` (Plan::variables of the main plan)
    captured,  // the enclosing block's value given for captured index `slot`
};

struct Value {
    Home home = Home::arena;
    tosa::DType dtype = tosa::DType::fp32;  // a stored dtype (admission.cpp)
    std::uint32_t slot = 0;     // Home::slot / state / captured
    std::uint64_t offset = 0;   // Home::constant / Home::arena, in bytes
    std::vector<std::int64_t> shape;
    std::uint64_t elements = 0;
    std::uint64_t bytes = 0;    // elements * the dtype's size
};

// The bytes one element of an executed dtype occupies (BOOL: 1).
std::uint64_t element_bytes(tosa::DType dtype);

enum class StepKind : std::uint8_t {
    binary,     // ADD SUB MUL MAXIMUM MINIMUM POW: `binary`, nan_propagate
    compare,    // EQUAL GREATER GREATER_EQUAL: FP32 or INT32 operands, BOOL output
    select,     // SELECT: BOOL condition, FP32 operands
    unary,      // SIGMOID TANH ABS NEGATE EXP LOG RECIPROCAL RSQRT CEIL FLOOR SIN COS ERF
    clamp,
    matmul,
    copy,       // IDENTITY into a variable, VARIABLE_READ, VARIABLE_WRITE (views need no step)
    cond_if,    // inputs: condition, operands; results; calls: then, else
    while_loop, // inputs: initial values; results: the loop values; calls: cond, body
    transpose,
    reduce,     // REDUCE_SUM MAX MIN PRODUCT: `reduce`, axis, nan_propagate
    argmax,     // FP32 input, INT32 output: axis, nan_propagate
    conv2d,
    concat,     // axis; every input is a data operand
    slice,      // start
    pad,        // start (padding before each dimension), pad_value
    tile,
    reverse,    // axis
    // Pools and the convolutions beyond CONV2D (kernels_spatial.hpp).
    max_pool2d,        // pool, nan_propagate; FP32 or INT8 by the output's dtype
    avg_pool2d,        // pool
    depthwise_conv2d,  // conv
    transpose_conv2d,  // conv (pad_top/pad_left: out_pad top/left)
    conv3d,            // conv3d
    // Indexing, conversion, logical, resampling and Fourier operators
    // (kernels_data.hpp).
    gather,       // values, indices: any stored dtype, INT32 indices
    scatter,      // values_in, indices, input
    cast,         // from the input's dtype to the output's
    logical,      // LOGICAL_AND OR XOR: `logical`, BOOL broadcast
    logical_not,
    reduce_bool,  // REDUCE_ALL (reduce_all) or REDUCE_ANY: axis
    resize,       // `resize`
    fft2d,        // real, imaginary -> output, output_imag: inverse
    rfft2d,       // real -> output, output_imag
    // Integer operators (kernels_int.hpp): parameters in Step::integer.
    rescale,      // INT8/INT16/INT32 input -> output: integer.rescale
    table,        // input, table
    int_binary,   // MUL (integer), INTDIV, shifts, BITWISE_AND/OR/XOR: integer.binary
    int_unary,    // ABS, NEGATE (integer), BITWISE_NOT, CLZ: integer.unary
    int_clamp,    // integer.min, integer.max
    int_reduce,   // REDUCE_SUM/MAX/MIN on integers: integer.reduce, axis
    int_argmax,   // INT8/INT16 input, INT32 output: axis
    select_any,   // SELECT on integers and BOOL: condition, a, b
};

// A nested block run by a control-flow step: Plan::nested[block] of the main
// plan, and for each of that block's captured indices the value of the
// calling block it reads (a tensor of the same name there).
struct BlockCall {
    std::uint32_t block = 0;
    std::vector<std::uint32_t> captures;
};

struct Step {
    StepKind kind = StepKind::copy;
    std::uint32_t op_index = 0;            // index of the operator in the block
    std::vector<std::uint32_t> inputs;     // value indices (data operands only)
    std::uint32_t output = 0;              // value index
    Binary binary = Binary::add;           // binary
    Compare compare = Compare::equal;      // compare
    Unary unary = Unary::sigmoid;          // unary
    Reduce reduce = Reduce::sum;           // reduce
    std::vector<std::int32_t> perms;       // transpose
    std::int32_t axis = 0;                 // reduce, argmax, concat, reverse
    std::vector<std::int64_t> start;       // slice: start; pad: padding before
    std::array<std::byte, 4> pad_value{};  // pad: pad_const's element, its dtype's bytes
    float min = 0.0f, max = 0.0f;          // clamp (narrow floats: widened exactly)
    bool nan_propagate = true;             // clamp, maximum, minimum, reduce max/min, argmax
    Conv2dGeometry conv;                   // conv2d, depthwise_conv2d, transpose_conv2d
    Pool2dGeometry pool;                   // max_pool2d, avg_pool2d
    Conv3dGeometry conv3d;                 // conv3d
    // Indexing, conversion, logical, resampling and Fourier operators.
    Logical logical = Logical::land;       // logical
    bool reduce_all = true;                // reduce_bool: ALL, else ANY
    ResizeGeometry resize;                 // resize
    bool inverse = false;                  // fft2d
    std::uint32_t output_imag = 0;         // fft2d, rfft2d: the second output's value index
    IntegerParams integer;                 // the integer operators above
    // cond_if / while_loop: the values the operator yields, and the blocks it runs.
    std::vector<std::uint32_t> results;
    std::vector<BlockCall> calls;
    // Integer tensor operators (kernels_qconv.hpp): MATMUL, the convolutions
    // and AVG_POOL2D on INT8/INT16 data: dtypes and zero points.
    IntOperands quant;
    // An operand or result is FP16, BF16 or FP8: the step runs on FP32
    // copies and narrows its result (execute.cpp; CAST converts directly).
    bool narrow_float = false;
};

// A variable of the program: state that persists across submissions.
struct VariableInfo {
    std::string name;
    tosa::DType dtype = tosa::DType::fp32;
    std::vector<std::int64_t> shape;
    std::uint64_t bytes = 0;
    std::vector<std::uint8_t> initial;  // the declaration's data (zeros when it has none)
};

struct Plan {
    std::vector<SlotInfo> slots;            // inputs first, then outputs
    std::uint32_t input_count = 0;
    std::vector<std::uint32_t> slot_values; // value index of each slot
    std::vector<Value> values;
    std::vector<Step> steps;                // execution order
    std::vector<std::byte> constants;       // ranges at multiples of 64 bytes (see above)
    std::uint64_t arena_bytes = 0;
    // Written into every arena when it is made, before its first run.
    std::vector<tosa::ConstantPlan> arena_constants;
    // Control flow (the main plan only): the blocks COND_IF and WHILE_LOOP
    // run, each planned on its own with its arena range at a distinct offset
    // of the same arena (blocks never run themselves, so one range per block
    // suffices: arena_bytes and arena_constants above cover them all), and
    // the program's variables.
    std::vector<Plan> nested;
    std::vector<VariableInfo> variables;
    // A nested block: the names of the tensors it reads from the block that
    // runs it, by captured index (Home::captured values).
    std::vector<std::string> captured_names;
};

// Admits and compiles a parsed graph: the first block of the first region
// is the program, every block a COND_IF or WHILE_LOOP runs is compiled with
// it; operators and dtypes of the admitted set, consistent shapes, an
// execution order. A graph of several blocks that no control flow joins is
// refused. Refusals carry the contract detail and a note naming the culprit.
Result<std::shared_ptr<const Plan>> compile(const tosa::Graph& graph);

}  // namespace vaccel::backend::cpu
