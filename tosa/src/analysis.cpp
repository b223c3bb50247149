// analysis.cpp - analyze(): values, execution order, liveness, variables,
// control-flow references and shape checks of a parsed TOSA 1.0 graph.
//
// Owns: the passes behind analysis.hpp and the order they run in: every
// tensor and operand of every block first (so later passes index without
// checks), then the COND_IF/WHILE_LOOP references (so later passes may walk
// nested blocks without recursing forever), then each block with the blocks
// it runs already analyzed. Decides:
//  - what a nested block needs from the block that runs it is summarized by
//    name (Summary): the tensors it reads from enclosing blocks, the
//    variables it reads and writes, whether it has a side effect. The
//    parser resolves captured names the same way, by name up the regions;
//  - a variable is state, not a value: writing one defines no tensor and
//    reading one depends on no producer. Its accesses are ordered as the
//    block lists them (a read after a write sees the write, a write after a
//    read waits for it), which is how TOSA runs a block's list;
//  - refusals use detail::refuse/malformed (flatbuffer.hpp) like the parser,
//    with arg1 = 0.
// Invariant: no pass recurses on the graph's nesting; hostile depth costs
// heap, never stack.
#include "vaccel/tosa/analysis.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "flatbuffer.hpp"

namespace vaccel::tosa {
namespace {

using detail::malformed;
using detail::refuse;

constexpr std::uint32_t last_dtype = static_cast<std::uint32_t>(DType::fp8e5m2);
constexpr std::int64_t dynamic_dim = -1;
// Shapes travel as int32 in the file; a larger dimension cannot be written.
constexpr std::int64_t max_dim = std::numeric_limits<std::int32_t>::max();

using Shape = std::vector<std::int64_t>;
using Indices = std::vector<std::uint32_t>;
using NameIndex = std::unordered_map<std::string, std::uint32_t>;

std::string shape_text(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ",")); }

std::string operator_site(const Block& block, std::size_t index)
{
    return fmt::format("operator {} ({}) of block '{}'", index, op_name(block.operators[index].op),
                       block.name);
}

std::unexpected<Error> operator_refusal(std::uint32_t reason, const Block& block,
                                        std::size_t index, std::string_view why)
{
    return malformed(reason, fmt::format("{} refused: {}", operator_site(block, index), why));
}

// InvalidArgument / VACCEL_D_TOSA_GRAPH / CYCLE: no execution order exists.
std::unexpected<Error> no_order(std::string note)
{
    return refuse(Errc::invalid_argument, VACCEL_D_TOSA_GRAPH, VACCEL_TOSA_CYCLE, std::move(note));
}

// The name that identifies a variable across blocks.
const std::string& variable_key(const Tensor& tensor)
{
    return tensor.variable_name.empty() ? tensor.name : tensor.variable_name;
}

// ----- block layout and control-flow references ----------------------------

// Every block of the graph numbered in graph order (region by region).
struct Layout {
    std::vector<BlockRef> refs;      // flat id -> block
    std::vector<std::size_t> first;  // region -> flat id of its first block

    std::size_t id(BlockRef ref) const { return first[ref.region] + ref.block; }
};

Layout lay_out(const Graph& graph)
{
    Layout layout;
    for (std::uint32_t r = 0; r < graph.regions.size(); ++r) {
        layout.first.push_back(layout.refs.size());
        for (std::uint32_t b = 0; b < graph.regions[r].blocks.size(); ++b) {
            layout.refs.push_back(BlockRef{r, b});
        }
    }
    return layout;
}

// The attribute fields through which an operator names the blocks it runs.
struct Reference {
    std::string_view field;
    const std::string* name;
};

std::vector<Reference> references_of(const Operator& op)
{
    if (op.op == Op::cond_if) {
        return {{"then_graph", &op.attributes.then_graph},
                {"else_graph", &op.attributes.else_graph}};
    }
    if (op.op == Op::while_loop) {
        return {{"cond_graph", &op.attributes.cond_graph},
                {"body_graph", &op.attributes.body_graph}};
    }
    return {};
}

// Block lookup by the names a COND_IF/WHILE_LOOP may use; first match wins.
class BlockNames {
public:
    explicit BlockNames(const Graph& graph)
    {
        for (std::uint32_t r = 0; r < graph.regions.size(); ++r) {
            const Region& region = graph.regions[r];
            if (!region.blocks.empty()) regions_.emplace(region.name, BlockRef{r, 0});
            for (std::uint32_t b = 0; b < region.blocks.size(); ++b) {
                blocks_.emplace(region.blocks[b].name, BlockRef{r, b});
            }
        }
    }

    std::optional<BlockRef> find(const std::string& name) const
    {
        if (name.empty()) return std::nullopt;
        if (const auto region = regions_.find(name); region != regions_.end()) return region->second;
        if (const auto block = blocks_.find(name); block != blocks_.end()) return block->second;
        return std::nullopt;
    }

private:
    std::unordered_map<std::string, BlockRef> regions_;  // region name -> its first block
    std::unordered_map<std::string, BlockRef> blocks_;
};

Status resolve_references(const Graph& graph, Analysis& analysis)
{
    const BlockNames names(graph);
    for (std::uint32_t r = 0; r < graph.regions.size(); ++r) {
        for (std::uint32_t b = 0; b < graph.regions[r].blocks.size(); ++b) {
            const Block& block = graph.regions[r].blocks[b];
            for (std::size_t i = 0; i < block.operators.size(); ++i) {
                for (const Reference& reference : references_of(block.operators[i])) {
                    const auto target = names.find(*reference.name);
                    if (!target) {
                        return operator_refusal(
                            VACCEL_TOSA_BAD_ATTRIBUTE, block, i,
                            fmt::format("its {} '{}' names no region (and no block) of the graph",
                                        reference.field, *reference.name));
                    }
                    analysis.regions[r].blocks[b].operators[i].blocks.push_back(*target);
                }
            }
        }
    }
    return {};
}

// The blocks in an order where every block comes after the blocks it runs,
// or a refusal if some block runs itself. An iterative depth-first search:
// a reference to a block still on the search path closes a loop of
// references, which would nest without end.
Result<std::vector<std::size_t>> children_first(const Graph& graph, const Layout& layout,
                                                const Analysis& analysis)
{
    enum class Mark : std::uint8_t { unseen, on_path, done };
    struct Frame {
        std::size_t id;
        std::size_t op = 0;   // next operator to look at
        std::size_t ref = 0;  // next reference of that operator
    };
    std::vector<Mark> marks(layout.refs.size(), Mark::unseen);
    std::vector<std::size_t> order;
    order.reserve(layout.refs.size());
    for (std::size_t root = 0; root < layout.refs.size(); ++root) {
        if (marks[root] != Mark::unseen) continue;
        std::vector<Frame> path{{root}};
        marks[root] = Mark::on_path;
        while (!path.empty()) {
            Frame& frame = path.back();
            const BlockAnalysis& here = analysis.block(layout.refs[frame.id]);
            if (frame.op == here.operators.size()) {
                marks[frame.id] = Mark::done;
                order.push_back(frame.id);
                path.pop_back();
                continue;
            }
            const auto& targets = here.operators[frame.op].blocks;
            if (frame.ref == targets.size()) {
                ++frame.op;
                frame.ref = 0;
                continue;
            }
            const BlockRef target = targets[frame.ref++];
            const std::size_t next = layout.id(target);
            if (marks[next] == Mark::on_path) {
                const BlockRef ref = layout.refs[frame.id];
                const Block& block = graph.regions[ref.region].blocks[ref.block];
                const Block& callee = graph.regions[target.region].blocks[target.block];
                return no_order(fmt::format(
                    "{} refused: it runs block '{}' of region '{}', which runs (directly or through "
                    "nested blocks) the block holding this operator; recursive control flow nests "
                    "without end",
                    operator_site(block, frame.op), callee.name,
                    graph.regions[target.region].name));
            }
            if (marks[next] == Mark::unseen) {
                marks[next] = Mark::on_path;
                path.push_back(Frame{next});  // `frame` is not used past this point
            }
        }
    }
    return order;
}

// ----- tensors and operands --------------------------------------------------

Status check_tensor(const Block& block, const Tensor& tensor, Value& value)
{
    const auto dtype = static_cast<std::uint32_t>(tensor.dtype);
    if (dtype == 0 || dtype > last_dtype) {
        return refuse(Errc::invalid_argument, VACCEL_D_TOSA_DTYPE, dtype,
                      fmt::format("tensor '{}' of block '{}' refused: DType {} is not a TOSA 1.0 "
                                  "element type (1..{})",
                                  tensor.name, block.name, dtype, last_dtype));
    }
    std::uint64_t elements = 1;
    for (std::size_t axis = 0; axis < tensor.shape.size(); ++axis) {
        const std::int64_t dim = tensor.shape[axis];
        if (dim == dynamic_dim) {
            return refuse(Errc::unsupported, VACCEL_D_TOSA_MALFORMED, VACCEL_TOSA_BAD_SHAPE,
                          fmt::format("tensor '{}' of block '{}' refused: dimension {} is dynamic "
                                      "(-1); dynamic shapes are not supported, give a static shape",
                                      tensor.name, block.name, axis));
        }
        if (dim < 0 || dim > max_dim) {
            return malformed(VACCEL_TOSA_BAD_SHAPE,
                             fmt::format("tensor '{}' of block '{}' refused: dimension {} is {}; "
                                         "dimensions must be in 0..2^31-1",
                                         tensor.name, block.name, axis, dim));
        }
        // Invariant: elements <= 2^40 before the product and dim < 2^31, so
        // the product fits 2^71: the checked multiply catches what 64 bits
        // cannot hold, the bound the rest.
        if (__builtin_mul_overflow(elements, static_cast<std::uint64_t>(dim), &elements) ||
            elements > max_tensor_elements) {
            return malformed(VACCEL_TOSA_BAD_SHAPE,
                             fmt::format("tensor '{}' of block '{}' refused: its shape {} has more "
                                         "than 2^40 elements",
                                         tensor.name, block.name, shape_text(tensor.shape)));
        }
    }
    value.elements = elements;
    // Invariant: elements <= 2^40 and an element is at most 8 bytes, so no overflow.
    value.bytes = tensor.dtype == DType::int4 ? elements / 2 + elements % 2
                                              : elements * dtype_bytes(tensor.dtype);
    if (!tensor.data.empty() && tensor.data.size() != value.bytes) {
        return malformed(VACCEL_TOSA_BAD_DATA,
                         fmt::format("tensor '{}' of block '{}' refused: its shape {} needs {} "
                                     "bytes of {} data, it holds {}",
                                     tensor.name, block.name, shape_text(tensor.shape),
                                     value.bytes, dtype_name(tensor.dtype), tensor.data.size()));
    }
    return {};
}

Status check_tensors(const Block& block, BlockAnalysis& out, NameIndex& names)
{
    for (std::uint32_t t = 0; t < block.tensors.size(); ++t) {
        const Tensor& tensor = block.tensors[t];
        if (auto checked = check_tensor(block, tensor, out.values[t]); !checked) return checked;
        if (!names.emplace(tensor.name, t).second) {
            return malformed(VACCEL_TOSA_UNKNOWN_TENSOR,
                             fmt::format("block '{}' refused: tensor name '{}' is declared twice; a "
                                         "name must identify one tensor",
                                         block.name, tensor.name));
        }
    }
    return {};
}

Status check_operands(const Block& block)
{
    const std::size_t count = block.tensors.size();
    for (std::size_t i = 0; i < block.operators.size(); ++i) {
        const Operator& op = block.operators[i];
        const auto kind = static_cast<std::uint32_t>(op.op);
        if (kind == 0 || kind >= op_count) {
            return refuse(Errc::invalid_argument, VACCEL_D_TOSA_OPERATOR, kind,
                          fmt::format("operator {} of block '{}' refused: Op {} is not a TOSA 1.0 "
                                      "operator (1..{})",
                                      i, block.name, kind, op_count - 1));
        }
        for (const auto* operands : {&op.inputs, &op.outputs}) {
            for (const std::uint32_t tensor : *operands) {
                if (tensor >= count) {
                    return operator_refusal(
                        VACCEL_TOSA_UNKNOWN_TENSOR, block, i,
                        fmt::format("it {} tensor index {}, and the block has {} tensors",
                                    operands == &op.inputs ? "reads" : "writes", tensor, count));
                }
            }
        }
    }
    for (const auto* list : {&block.inputs, &block.outputs}) {
        for (const std::uint32_t tensor : *list) {
            if (tensor >= count) {
                return malformed(VACCEL_TOSA_UNKNOWN_TENSOR,
                                 fmt::format("block '{}' refused: its {} list names tensor index "
                                             "{}, and the block has {} tensors",
                                             block.name,
                                             list == &block.inputs ? "input" : "output", tensor,
                                             count));
            }
        }
    }
    return {};
}

// ----- shapes ---------------------------------------------------------------

// The shape rule of an operator: what its output shape is a function of.
enum class Rule : std::uint8_t {
    unchecked, binary, select, unary, reverse, matmul, transpose, reshape, concat, slice, pad,
    tile, reduce, argmax, cond_if, while_loop,
};

struct ShapeRule {
    Rule rule = Rule::unchecked;
    std::size_t inputs = 0;  // exact count, or the least with `variadic`
    bool variadic = false;
};

ShapeRule rule_of(Op op)
{
    switch (op) {
    case Op::add: case Op::sub: case Op::maximum: case Op::minimum: case Op::pow:
    case Op::equal: case Op::greater: case Op::greater_equal: case Op::logical_and:
    case Op::logical_or: case Op::logical_xor: case Op::bitwise_and: case Op::bitwise_or:
    case Op::bitwise_xor: case Op::intdiv: case Op::arithmetic_right_shift:
    case Op::logical_left_shift: case Op::logical_right_shift:
        return {Rule::binary, 2};
    case Op::mul: return {Rule::binary, 3};  // input1, input2, shift
    case Op::select: return {Rule::select, 3};
    case Op::abs: case Op::bitwise_not: case Op::ceil: case Op::clz: case Op::cos: case Op::exp:
    case Op::floor: case Op::log: case Op::logical_not: case Op::reciprocal: case Op::rsqrt:
    case Op::sin: case Op::erf: case Op::sigmoid: case Op::tanh: case Op::clamp:
    case Op::identity: case Op::cast:
        return {Rule::unary, 1};
    case Op::negate: return {Rule::unary, 3};   // input1, input1_zp, output_zp
    case Op::rescale: return {Rule::unary, 5};  // input, multiplier, shift, input_zp, output_zp
    case Op::table: return {Rule::unary, 2};    // input1, table
    case Op::reverse: return {Rule::reverse, 1};
    case Op::matmul: return {Rule::matmul, 4};  // A, B, A_zp, B_zp
    case Op::transpose: return {Rule::transpose, 1};
    case Op::reshape: return {Rule::reshape, 2};  // input1, shape
    case Op::concat: return {Rule::concat, 1, true};
    case Op::slice: return {Rule::slice, 3};  // input1, start, size
    case Op::pad: return {Rule::pad, 3};      // input1, padding, pad_const
    case Op::tile: return {Rule::tile, 2};    // input1, multiples
    case Op::reduce_all: case Op::reduce_any: case Op::reduce_max: case Op::reduce_min:
    case Op::reduce_product: case Op::reduce_sum:
        return {Rule::reduce, 1};
    case Op::argmax: return {Rule::argmax, 1};
    case Op::cond_if: return {Rule::cond_if, 1, true};
    case Op::while_loop: return {Rule::while_loop, 0, true};
    default: return {};
    }
}

// Checks one operator of a block whose tensors, operands, references and
// values are already known good.
class ShapeChecker {
public:
    ShapeChecker(const Graph& graph, const Block& block, const BlockAnalysis& analysis)
        : graph_(graph), block_(block), analysis_(analysis)
    {
    }

    Status check(std::uint32_t index)
    {
        index_ = index;
        op_ = &block_.operators[index];
        const ShapeRule rule = rule_of(op_->op);
        if (rule.rule == Rule::unchecked) return {};
        if (rule.rule != Rule::cond_if && rule.rule != Rule::while_loop) {
            const bool inputs_ok = rule.variadic ? op_->inputs.size() >= rule.inputs
                                                 : op_->inputs.size() == rule.inputs;
            if (!inputs_ok || op_->outputs.size() != 1) {
                return fail_with(VACCEL_TOSA_ARITY,
                                 fmt::format("it has {} inputs and {} outputs; TOSA 1.0 defines "
                                             "{}{} and 1",
                                             op_->inputs.size(), op_->outputs.size(),
                                             rule.variadic ? "at least " : "", rule.inputs));
            }
        }
        switch (rule.rule) {
        case Rule::binary: return check_binary();
        case Rule::select: return check_broadcast(3);
        case Rule::unary: return check_unary();
        case Rule::reverse: return check_reverse();
        case Rule::matmul: return check_matmul();
        case Rule::transpose: return check_transpose();
        case Rule::reshape: return check_reshape();
        case Rule::concat: return check_concat();
        case Rule::slice: return check_slice();
        case Rule::pad: return check_pad();
        case Rule::tile: return check_tile();
        case Rule::reduce: return check_reduce(false);
        case Rule::argmax: return check_reduce(true);
        case Rule::cond_if: return check_cond_if();
        case Rule::while_loop: return check_while_loop();
        case Rule::unchecked: break;
        }
        return {};
    }

private:
    const Tensor& input(std::size_t i) const { return block_.tensors[op_->inputs[i]]; }
    const Tensor& output() const { return block_.tensors[op_->outputs[0]]; }

    std::unexpected<Error> fail_with(std::uint32_t reason, std::string_view why) const
    {
        return operator_refusal(reason, block_, index_, why);
    }

    Status expect_output(const Shape& inferred) const
    {
        if (output().shape == inferred) return {};
        return fail_with(VACCEL_TOSA_BAD_SHAPE,
                         fmt::format("output '{}' is declared {} but the operands give {}",
                                     output().name, shape_text(output().shape),
                                     shape_text(inferred)));
    }

    // Zero points, MUL's shift, PAD's pad_const: TOSA 1.0 gives them shape [1].
    Status expect_single(std::size_t operand, std::string_view what) const
    {
        if (input(operand).shape == Shape{1}) return {};
        return fail_with(VACCEL_TOSA_BAD_SHAPE,
                         fmt::format("{} '{}' has shape {}; TOSA 1.0 defines [1]", what,
                                     input(operand).name, shape_text(input(operand).shape)));
    }

    Result<std::size_t> axis_in(const Shape& shape) const
    {
        const std::int32_t axis = op_->attributes.axis;
        if (axis < 0 || static_cast<std::size_t>(axis) >= shape.size()) {
            return fail_with(VACCEL_TOSA_BAD_ATTRIBUTE,
                             fmt::format("axis {} is outside rank {}", axis, shape.size()));
        }
        return static_cast<std::size_t>(axis);
    }

    // The values of a SHAPE operand when they are known before the block
    // runs: its data, when it is a constant (or an enclosing block's).
    std::optional<Shape> shape_values(std::size_t operand) const
    {
        const std::uint32_t tensor = op_->inputs[operand];
        const Tensor& t = block_.tensors[tensor];
        const ValueKind kind = analysis_.values[tensor].kind;
        if (t.dtype != DType::shape || t.data.empty()) return std::nullopt;
        if (kind != ValueKind::constant && kind != ValueKind::captured) return std::nullopt;
        // Invariant: check_tensor() made data exactly elements * 8 bytes.
        Shape values(t.data.size() / sizeof(std::int64_t));
        std::memcpy(values.data(), t.data.data(), values.size() * sizeof(std::int64_t));
        return values;
    }

    Status expect_count(const Shape& values, std::size_t count, std::string_view what) const
    {
        if (values.size() == count) return {};
        return fail_with(VACCEL_TOSA_BAD_SHAPE,
                         fmt::format("{} has {} values for an input of rank {}; it needs {}", what,
                                     values.size(), input(0).shape.size(), count));
    }

    Status expect_same_rank() const
    {
        if (output().shape.size() == input(0).shape.size()) return {};
        return fail_with(VACCEL_TOSA_BAD_SHAPE,
                         fmt::format("output '{}' {} and input '{}' {} differ in rank",
                                     output().name, shape_text(output().shape), input(0).name,
                                     shape_text(input(0).shape)));
    }

    // TOSA 1.0 broadcasting: equal ranks; per dimension equal sizes, or 1.
    Status check_broadcast(std::size_t operands) const
    {
        Shape shape = input(0).shape;
        for (std::size_t i = 1; i < operands; ++i) {
            const Shape& other = input(i).shape;
            if (other.size() != shape.size()) {
                return fail_with(VACCEL_TOSA_BAD_SHAPE,
                                 fmt::format("operands {} and {} differ in rank; TOSA "
                                             "broadcasting needs equal ranks",
                                             shape_text(input(0).shape), shape_text(other)));
            }
            for (std::size_t d = 0; d < shape.size(); ++d) {
                if (shape[d] == other[d] || other[d] == 1) continue;
                if (shape[d] != 1) {
                    return fail_with(VACCEL_TOSA_BAD_SHAPE,
                                     fmt::format("operand '{}' {} does not broadcast with {} "
                                                 "(dimension {})",
                                                 input(i).name, shape_text(other),
                                                 shape_text(shape), d));
                }
                shape[d] = other[d];
            }
        }
        return expect_output(shape);
    }

    Status check_binary() const
    {
        if (op_->op == Op::mul) {
            if (auto shift = expect_single(2, "shift"); !shift) return shift;
        }
        return check_broadcast(2);
    }

    Status check_unary() const
    {
        if (op_->op == Op::negate) {
            if (auto zp = expect_single(1, "input1_zp"); !zp) return zp;
            if (auto zp = expect_single(2, "output_zp"); !zp) return zp;
        }
        return expect_output(input(0).shape);
    }

    Status check_reverse() const
    {
        if (auto axis = axis_in(input(0).shape); !axis) return fail(std::move(axis.error()));
        return expect_output(input(0).shape);
    }

    Status check_matmul() const
    {
        const Shape& a = input(0).shape;
        const Shape& b = input(1).shape;
        if (a.size() != 3 || b.size() != 3 || a[0] != b[0] || a[2] != b[1]) {
            return fail_with(VACCEL_TOSA_BAD_SHAPE,
                             fmt::format("A {} and B {} are not [N,H,C] and [N,C,W]",
                                         shape_text(a), shape_text(b)));
        }
        if (auto zp = expect_single(2, "A_zp"); !zp) return zp;
        if (auto zp = expect_single(3, "B_zp"); !zp) return zp;
        return expect_output({a[0], a[1], b[2]});
    }

    Status check_transpose() const
    {
        const Shape& shape = input(0).shape;
        const auto& perms = op_->attributes.perms;
        if (perms.size() != shape.size()) {
            return fail_with(VACCEL_TOSA_BAD_ATTRIBUTE,
                             fmt::format("perms has {} entries for rank {}", perms.size(),
                                         shape.size()));
        }
        std::vector<bool> seen(shape.size(), false);
        Shape result(shape.size());
        for (std::size_t i = 0; i < perms.size(); ++i) {
            const std::int32_t p = perms[i];
            if (p < 0 || static_cast<std::size_t>(p) >= shape.size() ||
                seen[static_cast<std::size_t>(p)]) {
                return fail_with(VACCEL_TOSA_BAD_ATTRIBUTE,
                                 fmt::format("perms [{}] is not a permutation of 0..{}",
                                             fmt::join(perms, ","), shape.size() - 1));
            }
            seen[static_cast<std::size_t>(p)] = true;
            result[i] = shape[static_cast<std::size_t>(p)];
        }
        return expect_output(result);
    }

    Status check_reshape() const
    {
        if (const auto target = shape_values(1); target && *target != output().shape) {
            // TOSA 1.0 takes the complete output shape: a -1 (TOSA 0.80's
            // inferred dimension) is a mismatch like any other.
            const bool inferred = std::ranges::find(*target, dynamic_dim) != target->end();
            return fail_with(VACCEL_TOSA_BAD_SHAPE,
                             fmt::format("output '{}' is declared {} but the shape operand '{}' is "
                                         "{}{}",
                                         output().name, shape_text(output().shape),
                                         input(1).name, shape_text(*target),
                                         inferred ? " (TOSA 1.0 RESHAPE takes the complete "
                                                    "shape, no -1)"
                                                  : ""));
        }
        if (analysis_.values[op_->inputs[0]].elements != analysis_.values[op_->outputs[0]].elements) {
            return fail_with(VACCEL_TOSA_BAD_SHAPE,
                             fmt::format("reshape from {} to {} changes the element count",
                                         shape_text(input(0).shape), shape_text(output().shape)));
        }
        return {};
    }

    Status check_concat() const
    {
        const Shape& out = output().shape;
        auto axis = axis_in(out);
        if (!axis) return fail(std::move(axis.error()));
        std::uint64_t along = 0;  // at most inputs * 2^31: no overflow
        for (std::size_t i = 0; i < op_->inputs.size(); ++i) {
            const Shape& in = input(i).shape;
            bool fits = in.size() == out.size();
            for (std::size_t d = 0; fits && d < in.size(); ++d) {
                fits = d == *axis || in[d] == out[d];
            }
            if (!fits) {
                return fail_with(VACCEL_TOSA_BAD_SHAPE,
                                 fmt::format("input {} '{}' {} does not fit output {} outside "
                                             "axis {}",
                                             i, input(i).name, shape_text(in), shape_text(out),
                                             *axis));
            }
            along += static_cast<std::uint64_t>(in[*axis]);
        }
        if (along != static_cast<std::uint64_t>(out[*axis])) {
            return fail_with(VACCEL_TOSA_BAD_SHAPE,
                             fmt::format("the inputs sum to {} along axis {}, output '{}' {} has {}",
                                         along, *axis, output().name, shape_text(out),
                                         out[*axis]));
        }
        return {};
    }

    Status check_slice() const
    {
        if (auto rank = expect_same_rank(); !rank) return rank;
        const auto start = shape_values(1);
        const auto size = shape_values(2);
        if (!start || !size) return {};  // computed operands: the output is as declared
        const Shape& in = input(0).shape;
        if (auto count = expect_count(*start, in.size(), "start"); !count) return count;
        if (auto count = expect_count(*size, in.size(), "size"); !count) return count;
        for (std::size_t d = 0; d < in.size(); ++d) {
            // Invariant: in[d] < 2^31, so start + size is only formed once
            // both are known to lie in 0..in[d].
            const std::int64_t begin = (*start)[d];
            const std::int64_t extent = (*size)[d];
            if (begin < 0 || begin >= in[d] || extent < 1 || extent > in[d] - begin) {
                return fail_with(VACCEL_TOSA_BAD_SHAPE,
                                 fmt::format("start {} and size {} leave input {} in dimension {}",
                                             shape_text(*start), shape_text(*size),
                                             shape_text(in), d));
            }
        }
        return expect_output(*size);
    }

    Status check_pad() const
    {
        if (auto pad_const = expect_single(2, "pad_const"); !pad_const) return pad_const;
        if (auto rank = expect_same_rank(); !rank) return rank;
        const auto padding = shape_values(1);
        if (!padding) return {};
        const Shape& in = input(0).shape;
        if (auto count = expect_count(*padding, 2 * in.size(), "padding"); !count) return count;
        Shape result(in.size());
        for (std::size_t d = 0; d < in.size(); ++d) {
            const std::int64_t before = (*padding)[2 * d];
            const std::int64_t after = (*padding)[2 * d + 1];
            if (before < 0 || after < 0 || before > max_dim || after > max_dim) {
                return fail_with(VACCEL_TOSA_BAD_SHAPE,
                                 fmt::format("padding {} must hold values in 0..2^31-1",
                                             shape_text(*padding)));
            }
            result[d] = in[d] + before + after;  // each < 2^31: no overflow
        }
        return expect_output(result);
    }

    Status check_tile() const
    {
        if (auto rank = expect_same_rank(); !rank) return rank;
        const auto multiples = shape_values(1);
        if (!multiples) return {};
        const Shape& in = input(0).shape;
        if (auto count = expect_count(*multiples, in.size(), "multiples"); !count) return count;
        Shape result(in.size());
        for (std::size_t d = 0; d < in.size(); ++d) {
            if ((*multiples)[d] < 0 ||
                __builtin_mul_overflow(in[d], (*multiples)[d], &result[d])) {
                return fail_with(VACCEL_TOSA_BAD_SHAPE,
                                 fmt::format("multiples {} must hold values >= 0 whose products "
                                             "with {} fit",
                                             shape_text(*multiples), shape_text(in)));
            }
        }
        return expect_output(result);
    }

    // REDUCE_* keep the axis as 1; ARGMAX removes it.
    Status check_reduce(bool remove) const
    {
        Shape shape = input(0).shape;
        const auto axis = axis_in(shape);
        if (!axis) return fail(std::move(axis.error()));
        if (remove) {
            shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(*axis));
        } else {
            shape[*axis] = 1;
        }
        return expect_output(shape);
    }

    const Block& target(std::size_t i) const
    {
        const BlockRef ref = analysis_.operators[index_].blocks[i];
        return graph_.regions[ref.region].blocks[ref.block];
    }

    // The shapes of `list` (indices into `block`) equal `expected`, in order.
    Status expect_shapes(const std::vector<Shape>& expected, const Block& block,
                         const std::vector<std::uint32_t>& list, std::string_view what) const
    {
        for (std::size_t k = 0; k < expected.size(); ++k) {
            const Tensor& tensor = block.tensors[list[k]];
            if (tensor.shape == expected[k]) continue;
            return fail_with(VACCEL_TOSA_BAD_SHAPE,
                             fmt::format("{} {} '{}' of block '{}' is {}, the operator's is {}",
                                         what, k, tensor.name, block.name,
                                         shape_text(tensor.shape), shape_text(expected[k])));
        }
        return {};
    }

    std::vector<Shape> shapes_of(const std::vector<std::uint32_t>& list, std::size_t skip) const
    {
        std::vector<Shape> shapes;
        for (std::size_t k = skip; k < list.size(); ++k) {
            shapes.push_back(block_.tensors[list[k]].shape);
        }
        return shapes;
    }

    Status check_cond_if() const
    {
        if (op_->inputs.empty()) {
            return fail_with(VACCEL_TOSA_ARITY, "it has no condition operand");
        }
        const Block& then_block = target(0);
        const Block& else_block = target(1);
        const std::size_t operands = op_->inputs.size() - 1;  // the first is the condition
        for (const Block* branch : {&then_block, &else_block}) {
            if (branch->inputs.size() != operands || branch->outputs.size() != op_->outputs.size()) {
                return fail_with(VACCEL_TOSA_ARITY,
                                 fmt::format("it passes {} values and takes {} results; block '{}' "
                                             "takes {} and yields {}",
                                             operands, op_->outputs.size(), branch->name,
                                             branch->inputs.size(), branch->outputs.size()));
            }
        }
        if (input(0).shape.size() > 1 || analysis_.values[op_->inputs[0]].elements != 1) {
            return fail_with(VACCEL_TOSA_BAD_SHAPE,
                             fmt::format("condition '{}' is {}; it must hold one element",
                                         input(0).name, shape_text(input(0).shape)));
        }
        const auto passed = shapes_of(op_->inputs, 1);
        const auto results = shapes_of(op_->outputs, 0);
        for (const Block* branch : {&then_block, &else_block}) {
            if (auto in = expect_shapes(passed, *branch, branch->inputs, "input"); !in) return in;
            if (auto out = expect_shapes(results, *branch, branch->outputs, "output"); !out) {
                return out;
            }
        }
        return {};
    }

    Status check_while_loop() const
    {
        const Block& cond = target(0);
        const Block& body = target(1);
        const std::size_t n = op_->inputs.size();
        if (op_->outputs.size() != n || cond.inputs.size() != n || body.inputs.size() != n ||
            body.outputs.size() != n || cond.outputs.size() != 1) {
            return fail_with(VACCEL_TOSA_ARITY,
                             fmt::format("it carries {} values and takes {} results; cond block "
                                         "'{}' takes {} and yields {} (one), body block '{}' takes "
                                         "{} and yields {} (all must equal the carried count)",
                                         n, op_->outputs.size(), cond.name, cond.inputs.size(),
                                         cond.outputs.size(), body.name, body.inputs.size(),
                                         body.outputs.size()));
        }
        const auto carried = shapes_of(op_->inputs, 0);
        if (auto out = expect_shapes(carried, block_, op_->outputs, "result"); !out) return out;
        if (auto in = expect_shapes(carried, cond, cond.inputs, "input"); !in) return in;
        if (auto in = expect_shapes(carried, body, body.inputs, "input"); !in) return in;
        if (auto out = expect_shapes(carried, body, body.outputs, "output"); !out) return out;
        const Tensor& verdict = cond.tensors[cond.outputs[0]];
        if (verdict.shape.size() > 1 || verdict.element_count() != 1) {
            return fail_with(VACCEL_TOSA_BAD_SHAPE,
                             fmt::format("cond block '{}' yields '{}' {}; it must hold one element",
                                         cond.name, verdict.name, shape_text(verdict.shape)));
        }
        return {};
    }

    const Graph& graph_;
    const Block& block_;
    const BlockAnalysis& analysis_;
    std::uint32_t index_ = 0;
    const Operator* op_ = nullptr;
};

// ----- one block --------------------------------------------------------------

// What the block that runs a nested block must know of it, by name.
struct Summary {
    std::set<std::string> needs;   // tensors read from enclosing blocks (not variables)
    std::set<std::string> reads;   // variables read
    std::set<std::string> writes;  // variables written
    bool side_effects = false;
};

class BlockPass {
public:
    BlockPass(const Graph& graph, const Layout& layout, BlockRef ref, const NameIndex& names,
              const std::vector<Summary>& summaries, BlockAnalysis& out)
        : graph_(graph), layout_(layout), block_(graph.regions[ref.region].blocks[ref.block]),
          names_(names), summaries_(summaries), out_(out),
          is_input_(block_.tensors.size(), false), reads_(block_.operators.size()),
          writes_(block_.operators.size()), declarations_(block_.tensors.size())
    {
    }

    Status run()
    {
        for (const std::uint32_t tensor : block_.inputs) is_input_[tensor] = true;
        if (auto done = find_producers(); !done) return done;
        if (auto done = classify(); !done) return done;
        if (auto done = find_variable_accesses(); !done) return done;
        find_implicit_inputs();
        if (auto done = check_reads(); !done) return done;
        list_consumers();
        if (auto done = order(); !done) return done;
        find_dead();
        ShapeChecker shapes(graph_, block_, out_);
        for (std::uint32_t i = 0; i < block_.operators.size(); ++i) {
            if (auto checked = shapes.check(i); !checked) return checked;
        }
        list_tensors();
        return {};
    }

    Summary summary() const
    {
        Summary summary;
        for (std::uint32_t t = 0; t < block_.tensors.size(); ++t) {
            if (out_.values[t].kind == ValueKind::captured) summary.needs.insert(block_.tensors[t].name);
        }
        for (std::size_t i = 0; i < block_.operators.size(); ++i) {
            for (const BlockRef ref : out_.operators[i].blocks) {
                // A name this block declares is resolved here (an implicit
                // input); the rest comes from further out.
                for (const std::string& name : summaries_[layout_.id(ref)].needs) {
                    if (!names_.contains(name)) summary.needs.insert(name);
                }
            }
            summary.reads.insert(reads_[i].begin(), reads_[i].end());
            summary.writes.insert(writes_[i].begin(), writes_[i].end());
        }
        summary.side_effects = out_.side_effects;
        return summary;
    }

private:
    // Each non-variable tensor gets at most one producer, and a block input none.
    Status find_producers()
    {
        for (std::uint32_t i = 0; i < block_.operators.size(); ++i) {
            for (const std::uint32_t t : block_.operators[i].outputs) {
                if (block_.tensors[t].variable) continue;  // a write of state defines nothing
                Value& value = out_.values[t];
                if (value.producer != no_operator || is_input_[t]) {
                    return no_order(fmt::format(
                        "{} refused: it writes tensor '{}', which is already {}; each tensor must "
                        "have one producer",
                        operator_site(block_, i), block_.tensors[t].name,
                        is_input_[t] ? std::string("a block input")
                                     : fmt::format("written by operator {}", value.producer)));
                }
                value.producer = i;
            }
        }
        return {};
    }

    Status classify()
    {
        for (std::uint32_t t = 0; t < block_.tensors.size(); ++t) {
            const Tensor& tensor = block_.tensors[t];
            Value& value = out_.values[t];
            if (tensor.variable) {
                value.kind = ValueKind::variable;
            } else if (value.producer != no_operator) {
                const Op op = block_.operators[value.producer].op;
                const bool constant = op == Op::const_ || op == Op::const_shape;
                // A shape of no elements (a RESHAPE to rank 0) has no
                // bytes to carry.
                const bool empty_shape = op == Op::const_shape && tensor.element_count() == 0;
                if (constant && tensor.data.empty() && !empty_shape) {
                    return operator_refusal(VACCEL_TOSA_BAD_DATA, block_, value.producer,
                                            fmt::format("its output '{}' carries no data",
                                                        tensor.name));
                }
                value.kind = constant ? ValueKind::constant : ValueKind::computed;
            } else if (is_input_[t]) {
                value.kind = ValueKind::block_input;
            } else if (tensor.captured) {
                value.kind = ValueKind::captured;
            } else if (!tensor.data.empty()) {
                value.kind = ValueKind::constant;
            }
        }
        return {};
    }

    Status find_variable_accesses()
    {
        for (std::uint32_t i = 0; i < block_.operators.size(); ++i) {
            const Operator& op = block_.operators[i];
            bool named = false;
            for (const auto* operands : {&op.inputs, &op.outputs}) {
                for (const std::uint32_t t : *operands) {
                    const Tensor& tensor = block_.tensors[t];
                    if (!tensor.variable) continue;
                    named = true;
                    if (op.op == Op::variable) {
                        if (declarations_[t].empty() || declarations_[t].back() != i) {
                            declarations_[t].push_back(i);
                        }
                    } else if (op.op == Op::variable_write || operands == &op.outputs) {
                        writes_[i].insert(variable_key(tensor));
                    } else {
                        reads_[i].insert(variable_key(tensor));
                    }
                }
            }
            if (!named && (op.op == Op::variable_read || op.op == Op::variable_write)) {
                return operator_refusal(VACCEL_TOSA_UNKNOWN_TENSOR, block_, i,
                                        "it names no variable tensor (a tensor with the variable "
                                        "flag); name the variable it accesses");
            }
            for (const BlockRef ref : out_.operators[i].blocks) {
                const Summary& nested = summaries_[layout_.id(ref)];
                reads_[i].insert(nested.reads.begin(), nested.reads.end());
                writes_[i].insert(nested.writes.begin(), nested.writes.end());
            }
        }
        return {};
    }

    void find_implicit_inputs()
    {
        for (std::uint32_t i = 0; i < block_.operators.size(); ++i) {
            OperatorInfo& info = out_.operators[i];
            for (const BlockRef ref : info.blocks) {
                for (const std::string& name : summaries_[layout_.id(ref)].needs) {
                    const auto found = names_.find(name);
                    if (found == names_.end()) continue;  // an enclosing block's: no local order
                    const Tensor& tensor = block_.tensors[found->second];
                    if (tensor.variable) {
                        reads_[i].insert(variable_key(tensor));
                    } else {
                        info.implicit_inputs.push_back(found->second);
                    }
                }
            }
            std::ranges::sort(info.implicit_inputs);
            const auto repeated = std::ranges::unique(info.implicit_inputs);
            info.implicit_inputs.erase(repeated.begin(), repeated.end());
        }
    }

    // Calls `visit(tensor)` for every tensor operator `i` reads as a value.
    template <class Visit>
    void each_read(std::uint32_t i, Visit&& visit) const
    {
        for (const std::uint32_t t : block_.operators[i].inputs) visit(t);
        for (const std::uint32_t t : out_.operators[i].implicit_inputs) visit(t);
    }

    Status check_reads() const
    {
        for (std::uint32_t i = 0; i < block_.operators.size(); ++i) {
            const Indices& explicit_reads = block_.operators[i].inputs;
            const Indices& implicit_reads = out_.operators[i].implicit_inputs;
            for (const Indices* reads : {&explicit_reads, &implicit_reads}) {
                for (const std::uint32_t t : *reads) {
                    if (out_.values[t].kind != ValueKind::none) continue;
                    return operator_refusal(
                        VACCEL_TOSA_UNKNOWN_TENSOR, block_, i,
                        fmt::format("it reads tensor '{}'{}, which no operator writes and which "
                                    "is neither a block input, a constant, a variable nor an "
                                    "enclosing block's tensor",
                                    block_.tensors[t].name,
                                    reads == &explicit_reads ? ""
                                                             : " (by name, in a block it runs)"));
                }
            }
        }
        for (const std::uint32_t t : block_.outputs) {
            if (out_.values[t].kind == ValueKind::none) {
                return malformed(VACCEL_TOSA_UNKNOWN_TENSOR,
                                 fmt::format("block '{}' refused: its output '{}' is written by no "
                                             "operator",
                                             block_.name, block_.tensors[t].name));
            }
        }
        return {};
    }

    void list_consumers()
    {
        // Operators are visited in ascending order, so each list is sorted
        // and a repeat of the same operator is always its last entry.
        for (std::uint32_t i = 0; i < block_.operators.size(); ++i) {
            each_read(i, [&](std::uint32_t t) {
                auto& consumers = out_.values[t].consumers;
                if (consumers.empty() || consumers.back() != i) consumers.push_back(i);
            });
        }
    }

    Status order()
    {
        const auto count = static_cast<std::uint32_t>(block_.operators.size());
        std::vector<std::vector<std::uint32_t>> after(count);   // operator -> those waiting on it
        std::vector<std::vector<std::uint32_t>> before(count);  // operator -> those it waits on
        std::vector<std::uint32_t> waiting(count, 0);
        const auto edge = [&](std::uint32_t from, std::uint32_t to) {
            after[from].push_back(to);
            before[to].push_back(from);
            ++waiting[to];
        };
        for (std::uint32_t i = 0; i < count; ++i) {
            each_read(i, [&](std::uint32_t t) {
                if (out_.values[t].producer != no_operator) edge(out_.values[t].producer, i);
            });
        }
        // Variable accesses in declared order: a read waits for the last
        // write before it; a write waits for the reads since that write and
        // for the write itself.
        struct Chain {
            std::uint32_t last_write = no_operator;
            std::vector<std::uint32_t> reads;
        };
        std::map<std::string, Chain> chains;
        for (std::uint32_t i = 0; i < count; ++i) {
            for (const std::string& name : reads_[i]) {
                Chain& chain = chains[name];
                if (chain.last_write != no_operator) edge(chain.last_write, i);
                chain.reads.push_back(i);
            }
            for (const std::string& name : writes_[i]) {
                Chain& chain = chains[name];
                for (const std::uint32_t reader : chain.reads) {
                    if (reader != i) edge(reader, i);
                }
                if (chain.last_write != no_operator) edge(chain.last_write, i);
                chain.last_write = i;
                chain.reads.clear();
            }
        }
        // Kahn's algorithm, lowest ready index first.
        std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>> ready;
        for (std::uint32_t i = 0; i < count; ++i) {
            if (waiting[i] == 0) ready.push(i);
        }
        while (!ready.empty()) {
            const std::uint32_t i = ready.top();
            ready.pop();
            out_.order.push_back(i);
            for (const std::uint32_t next : after[i]) {
                if (--waiting[next] == 0) ready.push(next);
            }
        }
        if (out_.order.size() == count) return {};
        return no_order(describe_cycle(before, waiting));
    }

    // Names a cycle among the operators left waiting. Each of them waits on
    // another waiting one; following the first such from any of them for
    // `count` steps must end on a cycle, which one more walk lists.
    std::string describe_cycle(const std::vector<std::vector<std::uint32_t>>& before,
                               const std::vector<std::uint32_t>& waiting) const
    {
        const auto stuck_before = [&](std::uint32_t i) {
            return *std::ranges::find_if(before[i], [&](std::uint32_t p) { return waiting[p] != 0; });
        };
        std::uint32_t on_cycle = static_cast<std::uint32_t>(
            std::ranges::find_if(waiting, [](std::uint32_t w) { return w != 0; }) - waiting.begin());
        for (std::size_t step = 0; step < block_.operators.size(); ++step) {
            on_cycle = stuck_before(on_cycle);
        }
        std::vector<std::uint32_t> cycle{on_cycle};
        for (std::uint32_t i = stuck_before(on_cycle); i != on_cycle; i = stuck_before(i)) {
            cycle.push_back(i);
        }
        std::ranges::reverse(cycle);  // dependency direction: each feeds the next
        std::ranges::rotate(cycle, std::ranges::min_element(cycle));
        std::string path;
        for (const std::uint32_t i : cycle) {
            path += fmt::format("{} ({}) -> ", i, op_name(block_.operators[i].op));
        }
        path += std::to_string(cycle.front());
        return fmt::format("{} refused: it depends on itself through the cycle {} (of tensors or "
                           "variable accesses); a TOSA block must be acyclic",
                           operator_site(block_, cycle.front()), path);
    }

    void find_dead()
    {
        const std::size_t count = block_.operators.size();
        std::vector<bool> live(count, false);
        std::vector<std::uint32_t> pending;
        for (std::uint32_t i = 0; i < count; ++i) {
            const Operator& op = block_.operators[i];
            OperatorInfo& info = out_.operators[i];
            info.side_effect = !writes_[i].empty() || op.op == Op::variable ||
                               op.op == Op::variable_write || op.op == Op::custom;
            for (const BlockRef ref : info.blocks) {
                info.side_effect = info.side_effect || summaries_[layout_.id(ref)].side_effects;
            }
            out_.side_effects = out_.side_effects || info.side_effect;
            if (info.side_effect) pending.push_back(i);
        }
        for (const std::uint32_t t : block_.outputs) {
            if (out_.values[t].producer != no_operator) pending.push_back(out_.values[t].producer);
        }
        while (!pending.empty()) {
            const std::uint32_t i = pending.back();
            pending.pop_back();
            if (live[i]) continue;
            live[i] = true;
            each_read(i, [&](std::uint32_t t) {
                const std::uint32_t producer = out_.values[t].producer;
                if (producer != no_operator && !live[producer]) pending.push_back(producer);
            });
        }
        for (std::uint32_t i = 0; i < count; ++i) {
            out_.operators[i].dead = !live[i];
            if (!live[i]) out_.dead.push_back(i);
        }
        for (const std::uint32_t i : out_.order) {
            if (live[i]) out_.live_order.push_back(i);
        }
    }

    void list_tensors()
    {
        out_.inputs = block_.inputs;
        out_.outputs = block_.outputs;
        for (std::uint32_t t = 0; t < block_.tensors.size(); ++t) {
            const ValueKind kind = out_.values[t].kind;
            if (kind == ValueKind::constant) out_.constants.push_back(t);
            if (kind == ValueKind::captured) out_.captured.push_back(t);
            if (kind != ValueKind::variable) continue;
            Variable variable;
            variable.name = variable_key(block_.tensors[t]);
            variable.tensor = t;
            variable.declarations = declarations_[t];
            for (std::uint32_t i = 0; i < block_.operators.size(); ++i) {
                if (reads_[i].contains(variable.name)) variable.readers.push_back(i);
                if (writes_[i].contains(variable.name)) variable.writers.push_back(i);
            }
            out_.variables.push_back(std::move(variable));
        }
    }

    const Graph& graph_;
    const Layout& layout_;
    const Block& block_;
    const NameIndex& names_;
    const std::vector<Summary>& summaries_;
    BlockAnalysis& out_;
    std::vector<bool> is_input_;
    std::vector<std::set<std::string>> reads_;   // per operator: variables it reads
    std::vector<std::set<std::string>> writes_;  // per operator: variables it writes
    std::vector<std::vector<std::uint32_t>> declarations_;  // per tensor: VARIABLE operators
};

}  // namespace

std::string_view value_kind_name(ValueKind kind)
{
    switch (kind) {
    case ValueKind::none: return "none";
    case ValueKind::computed: return "computed";
    case ValueKind::constant: return "constant";
    case ValueKind::block_input: return "block input";
    case ValueKind::variable: return "variable";
    case ValueKind::captured: return "captured";
    }
    return "none";
}

Result<Analysis> analyze(const Graph& graph)
{
    const Layout layout = lay_out(graph);
    Analysis analysis;
    analysis.regions.resize(graph.regions.size());
    for (std::size_t r = 0; r < graph.regions.size(); ++r) {
        analysis.regions[r].name = graph.regions[r].name;
        analysis.regions[r].blocks.resize(graph.regions[r].blocks.size());
    }
    std::vector<NameIndex> names(layout.refs.size());
    for (const BlockRef ref : layout.refs) {
        const Block& block = graph.regions[ref.region].blocks[ref.block];
        BlockAnalysis& out = analysis.regions[ref.region].blocks[ref.block];
        out.name = block.name;
        out.values.resize(block.tensors.size());
        out.operators.resize(block.operators.size());
        if (auto checked = check_tensors(block, out, names[layout.id(ref)]); !checked) {
            return fail(std::move(checked.error()));
        }
        if (auto checked = check_operands(block); !checked) return fail(std::move(checked.error()));
    }
    if (auto resolved = resolve_references(graph, analysis); !resolved) {
        return fail(std::move(resolved.error()));
    }
    auto order = children_first(graph, layout, analysis);
    if (!order) return fail(std::move(order.error()));
    std::vector<Summary> summaries(layout.refs.size());
    for (const std::size_t id : *order) {
        const BlockRef ref = layout.refs[id];
        BlockPass pass(graph, layout, ref, names[id], summaries,
                       analysis.regions[ref.region].blocks[ref.block]);
        if (auto done = pass.run(); !done) return fail(std::move(done.error()));
        summaries[id] = pass.summary();
    }
    return analysis;
}

}  // namespace vaccel::tosa
