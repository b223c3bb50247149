// lowering_logic.cpp - comparisons, logical ops and Where (lowering.hpp
// lists what each becomes). Comparisons take numbers of one type and give
// BOOL; Not, And, Or and Xor take and give BOOL; Where selects between two
// values of any one type by a BOOL condition. All broadcast as ONNX does.
#include "lowering_context.hpp"

namespace vaccel::onnx::lowering {

namespace {

// a OP b, or b OP a when `swapped` (Less is Greater with its operands turned).
Lower compare(Op op, bool swapped = false)
{
    return [op, swapped](Lowering& l, const Node& node) -> Status {
        auto ops = l.operands(node, 2);
        if (!ops) return fail(ops.error());
        const Value &a = ops->in[0], &b = ops->in[1];
        if (a.dtype != b.dtype) return fail(l.refuse(node, "its operands are of different types"));
        return l.bind(node, 0, swapped ? l.binary(op, b, a, ops->dims) : l.binary(op, a, b, ops->dims));
    };
}

Status lower_not(Lowering& l, const Node& node)
{
    auto x = l.input(node, 0);
    if (!x) return fail(x.error());
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    return l.bind(node, 0, l.unary(Op::logical_not, *x, *dims));
}

Status lower_where(Lowering& l, const Node& node)
{
    auto condition = l.input(node, 0);
    if (!condition) return fail(condition.error());
    auto x = l.input(node, 1);
    if (!x) return fail(x.error());
    auto y = l.input(node, 2);
    if (!y) return fail(y.error());
    if (condition->dtype != tosa::DType::boolean)
        return fail(l.refuse(node, "its condition is not BOOL"));
    if (x->dtype != y->dtype) return fail(l.refuse(node, "its two choices are of different types"));
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    const Value c = l.to_rank(*condition, dims->size());
    const Value a = l.to_rank(*x, dims->size());
    const Value b = l.to_rank(*y, dims->size());
    Value out = l.tensor(*dims);
    l.builder().op(Op::select, {c.tensor, a.tensor, b.tensor}, {out.tensor});
    return l.bind(node, 0, out);
}

}  // namespace

void add_logic(Table& table)
{
    table.emplace("Equal", Entry(compare(Op::equal), any_values));
    table.emplace("Greater", Entry(compare(Op::greater), any_values));
    table.emplace("GreaterOrEqual", Entry(compare(Op::greater_equal), any_values));
    table.emplace("Less", Entry(compare(Op::greater, true), any_values));
    table.emplace("LessOrEqual", Entry(compare(Op::greater_equal, true), any_values));
    table.emplace("Not", Entry(lower_not, bool_values));
    table.emplace("And", Entry(compare(Op::logical_and), bool_values));
    table.emplace("Or", Entry(compare(Op::logical_or), bool_values));
    table.emplace("Xor", Entry(compare(Op::logical_xor), bool_values));
    table.emplace("Where", Entry(lower_where, any_values));
}

}  // namespace vaccel::onnx::lowering
