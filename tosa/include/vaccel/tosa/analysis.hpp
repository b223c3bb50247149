// analysis.hpp - the facts about a parsed TOSA 1.0 graph that every backend needs.
//
// Owns: analyze(), the one pass over a Graph that the CPU, Vulkan and CUDA
// backends share before they plan anything: what each tensor is (its
// producer, its consumers, its size), in which order the operators of each
// block run, which operators are dead, which blocks a COND_IF/WHILE_LOOP
// runs, which variables a block touches, and whether the declared shapes
// agree with the operators. Decides:
//  - the Analysis is plain values indexed like the Graph (region, block,
//    tensor and operator indices are the Graph's); it holds no pointer into
//    the Graph, so either may outlive the other;
//  - a refusal names the block and the operator index in its note and uses
//    the codes the parser and the CPU backend use: InvalidArgument with
//    VACCEL_D_TOSA_MALFORMED (arg0 = enum vaccel_tosa_reason) for a graph
//    TOSA 1.0 forbids, InvalidArgument with VACCEL_D_TOSA_GRAPH / CYCLE for
//    a graph with no execution order, Unsupported with MALFORMED /
//    BAD_SHAPE for a dynamic (-1) dimension; arg1 is always 0.
//
// What analyze() checks, in this order (the first failure is returned):
//  1. tensors: a TOSA 1.0 dtype (else VACCEL_D_TOSA_DTYPE, arg0 = dtype);
//     static dimensions, -1 Unsupported and other negatives InvalidArgument
//     (BAD_SHAPE); each dimension fits the file's int32 and the element
//     count is at most max_tensor_elements, checked without overflow
//     (BAD_SHAPE); constant data of exactly the packed byte size (BAD_DATA);
//     names unique in their block (UNKNOWN_TENSOR);
//  2. operators: a TOSA 1.0 Op (else VACCEL_D_TOSA_OPERATOR, arg0 = Op); every
//     tensor index in range (UNKNOWN_TENSOR);
//  3. control flow: every COND_IF then/else and WHILE_LOOP cond/body name
//     resolves (BAD_ATTRIBUTE) and no block runs itself, directly or through
//     nested blocks (GRAPH / CYCLE);
//  4. per block, children before parents: one producer per tensor, none for
//     a block input (GRAPH / CYCLE, as the CPU backend); a CONST/CONST_SHAPE
//     output carries data (BAD_DATA); a VARIABLE_READ/VARIABLE_WRITE names
//     a variable tensor, and every tensor an operator reads (by operand, or
//     by name in a block it runs) or the block outputs is defined: produced,
//     a block input, a constant, a variable or an enclosing block's
//     (UNKNOWN_TENSOR); an execution order exists (GRAPH / CYCLE);
//  5. per operator, operand counts (ARITY), attributes (BAD_ATTRIBUTE) and
//     shapes (BAD_SHAPE) for the operators whose output shape TOSA 1.0
//     defines as a simple function of the inputs:
//       - elementwise binary, equal ranks, broadcasting dimensions of 1:
//         ADD SUB MUL MAXIMUM MINIMUM POW EQUAL GREATER GREATER_EQUAL
//         LOGICAL_AND LOGICAL_OR LOGICAL_XOR BITWISE_AND BITWISE_OR
//         BITWISE_XOR INTDIV ARITHMETIC_RIGHT_SHIFT LOGICAL_LEFT_SHIFT
//         LOGICAL_RIGHT_SHIFT (MUL's shift is [1]); SELECT over three;
//       - shape kept: ABS BITWISE_NOT CEIL CLZ COS EXP FLOOR LOG LOGICAL_NOT
//         NEGATE (zero points [1]) RECIPROCAL RSQRT SIN ERF SIGMOID TANH
//         CLAMP IDENTITY CAST RESCALE TABLE REVERSE (axis in range);
//       - MATMUL [N,H,C] x [N,C,W] -> [N,H,W] (zero points [1]);
//       - TRANSPOSE (perms a permutation), CONCAT (axis), REDUCE_* (the axis
//         kept as 1), ARGMAX (the axis removed);
//       - RESHAPE (element count kept; the output equals the SHAPE operand
//         when that is a constant); SLICE, PAD, TILE (rank kept; the output
//         follows their SHAPE operands when those are constants; PAD's
//         pad_const is [1]);
//       - COND_IF (a one-element condition; operand and result counts and
//         shapes equal the then/else blocks' inputs and outputs) and
//         WHILE_LOOP (operands, results, cond and body inputs and body
//         outputs agree in count and shape; cond yields one element).
//     Accepted as declared, operands and shapes unchecked: AVG_POOL2D
//     CONV2D CONV3D DEPTHWISE_CONV2D FFT2D MAX_POOL2D RFFT2D
//     TRANSPOSE_CONV2D GATHER SCATTER RESIZE CUSTOM VARIABLE VARIABLE_READ
//     VARIABLE_WRITE CONST CONST_SHAPE (beyond their data), the extra
//     operands of RESCALE and TABLE, and every dtype rule (backends admit
//     dtypes per operator themselves).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vaccel/common/error.hpp"
#include "vaccel/tosa/graph.hpp"

namespace vaccel::tosa {

// "No operator": the producer of a value no operator of its block writes.
inline constexpr std::uint32_t no_operator = UINT32_MAX;

// What a tensor of a block is at run time.
enum class ValueKind : std::uint8_t {
    // Declared but given by nothing (no producer, not an input, no data).
    // Only a tensor nobody reads may be this: reading one is refused.
    none,
    computed,     // written by the operator `producer`
    // Known before the block runs: the output of a CONST/CONST_SHAPE
    // (`producer` is that operator) or data no operator writes.
    constant,
    block_input,  // one of Block::inputs
    // A variable tensor (Tensor::variable): state that persists across
    // invocations. Its operators read and write it; none produces it.
    variable,
    // A copy of an enclosing block's tensor read by name (Tensor::captured)
    // that this block does not write: its value is the enclosing block's.
    captured,
};

std::string_view value_kind_name(ValueKind kind);  // "computed", "constant", ...

// One tensor of a block, as the analysis sees it.
struct Value {
    ValueKind kind = ValueKind::none;
    std::uint32_t producer = no_operator;
    // Operators that read it, ascending: its explicit operands, and the
    // COND_IF/WHILE_LOOP operators whose blocks read it by name.
    std::vector<std::uint32_t> consumers;
    std::uint64_t elements = 0;  // product of the dimensions (1 for rank 0)
    std::uint64_t bytes = 0;     // packed: INT4 two per byte, BOOL one, SHAPE eight

    friend bool operator==(const Value&, const Value&) = default;
};

// A block of the graph: Graph::regions[region].blocks[block].
struct BlockRef {
    std::uint32_t region = 0;
    std::uint32_t block = 0;

    friend bool operator==(const BlockRef&, const BlockRef&) = default;
};

// One operator of a block, beyond what the Graph says.
struct OperatorInfo {
    // The blocks it runs: COND_IF then, else; WHILE_LOOP cond, body; else none.
    std::vector<BlockRef> blocks;
    // Tensors of this block that `blocks` (or blocks nested in them) read by
    // name, ascending: inputs of the operator as real as its operands, so
    // they order it after their producers and keep those live.
    std::vector<std::uint32_t> implicit_inputs;
    // Writes a variable (VARIABLE_WRITE, or any operator whose output is a
    // variable tensor, as real producers write IDENTITY), declares one
    // (VARIABLE), is a CUSTOM operator (its effects are unknown), or runs a
    // block that has a side effect.
    bool side_effect = false;
    // No block output depends on it and it has no side effect.
    bool dead = false;

    friend bool operator==(const OperatorInfo&, const OperatorInfo&) = default;
};

// A variable tensor of a block. Variables are identified across blocks by
// name: the same name in a loop body is the same state.
struct Variable {
    std::string name;     // Tensor::variable_name, or the tensor's name when empty
    std::uint32_t tensor = 0;
    std::vector<std::uint32_t> declarations;  // VARIABLE operators naming it
    // Operators that read / write it, ascending, including COND_IF and
    // WHILE_LOOP operators whose blocks read / write a variable of this name.
    std::vector<std::uint32_t> readers;
    std::vector<std::uint32_t> writers;

    friend bool operator==(const Variable&, const Variable&) = default;
};

struct BlockAnalysis {
    std::string name;
    std::vector<Value> values;            // one per Block::tensors entry, same index
    std::vector<OperatorInfo> operators;  // one per Block::operators entry, same index
    // Every operator once, each after the producers of its inputs (explicit
    // and implicit); a variable's accesses keep their declared order (TOSA
    // runs a block's list in order, so a read before a write sees the old
    // state). Ties go to the lowest index, so a valid declared order is kept.
    std::vector<std::uint32_t> order;
    std::vector<std::uint32_t> live_order;  // `order` without the dead operators
    std::vector<std::uint32_t> dead;        // ascending
    std::vector<std::uint32_t> constants;   // tensors of kind constant, ascending
    std::vector<std::uint32_t> captured;    // tensors of kind captured, ascending
    std::vector<std::uint32_t> inputs;      // Block::inputs
    std::vector<std::uint32_t> outputs;     // Block::outputs
    std::vector<Variable> variables;        // in tensor order
    bool side_effects = false;              // some operator has a side effect

    friend bool operator==(const BlockAnalysis&, const BlockAnalysis&) = default;
};

struct RegionAnalysis {
    std::string name;
    std::vector<BlockAnalysis> blocks;  // parallel to Region::blocks

    friend bool operator==(const RegionAnalysis&, const RegionAnalysis&) = default;
};

struct Analysis {
    std::vector<RegionAnalysis> regions;  // parallel to Graph::regions

    const BlockAnalysis& block(BlockRef ref) const
    {
        return regions[ref.region].blocks[ref.block];
    }

    friend bool operator==(const Analysis&, const Analysis&) = default;
};

// Analyzes every block of every region (see the top of this file for what
// is checked and what is refused). A COND_IF/WHILE_LOOP names the block it
// runs by region name, as TOSA 1.0 writes it (the region's first block), or
// else by block name; the first match in graph order wins.
Result<Analysis> analyze(const Graph& graph);

}  // namespace vaccel::tosa
