// lowering_tensor.cpp - ONNX's reshaping ops, Transpose, MatMul and Gemm
// (lowering.hpp lists what each becomes).
#include <algorithm>

#include "lowering_context.hpp"

#include <limits>

namespace vaccel::onnx::lowering {

namespace {

// Reshape, Flatten, Squeeze, Unsqueeze: the shape inference found is the
// result's; the data is the same bytes in the same order.
Status lower_reshape(Lowering& l, const Node& node)
{
    auto x = l.input(node, 0);
    if (!x) return fail(x.error());
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    if (elements(*dims) != elements(x->dims))
        return fail(l.refuse(node, "the inferred result does not hold as many elements as the input"));
    Value out = l.reshape(*x, *dims);
    if (out.tensor == x->tensor) out = l.unary(Op::identity, *x, *dims);
    return l.bind(node, 0, out);
}

Status lower_transpose(Lowering& l, const Node& node)
{
    auto x = l.input(node, 0);
    if (!x) return fail(x.error());
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    const std::size_t rank = x->dims.size();
    Dims perm = ints_attr(node, "perm").value_or(Dims{});
    if (perm.empty())
        for (std::size_t i = 0; i < rank; ++i) perm.push_back(static_cast<std::int64_t>(rank - 1 - i));
    Dims sorted = perm;
    std::ranges::sort(sorted);
    for (std::size_t i = 0; i < sorted.size(); ++i)
        if (sorted[i] != static_cast<std::int64_t>(i) || sorted.size() != rank)
            return fail(l.refuse(node, "its perm does not name every axis once"));
    Value out = l.transpose(*x, std::vector<std::int32_t>(perm.begin(), perm.end()));
    if (out.dims != *dims) return fail(l.refuse(node, "its perm does not give the inferred result"));
    return l.bind(node, 0, out);
}

// MATMUL [N, H, C] x [N, C, W]; `a` and `b` of rank >= 2 with equal batch dims.
Result<Value> matmul(Lowering& l, const Node& node, Value a, Value b, const Dims& out_dims)
{
    if (a.dims.size() < 2 || b.dims.size() < 2)
        return fail(l.refuse(node, "a 1-D operand is not imported yet (only rank 2 and up)"));
    const std::size_t rank = out_dims.size();
    a = l.to_rank(a, rank);
    b = l.to_rank(b, rank);
    const Dims batch_a(a.dims.begin(), a.dims.end() - 2), batch_b(b.dims.begin(), b.dims.end() - 2);
    if (batch_a != batch_b)
        return fail(l.refuse(node, fmt::format("batch dimensions {} and {} differ; broadcasting "
                                               "MatMul's batch is not imported yet",
                                               batch_a, batch_b)));
    const std::int64_t n = elements(batch_a), h = a.dims[rank - 2], c = a.dims[rank - 1],
                       w = b.dims[rank - 1];
    Value a3 = l.reshape(a, {n, h, c}), b3 = l.reshape(b, {n, c, w});
    Value out = l.tensor({n, h, w});
    l.builder().op(Op::matmul, {a3.tensor, b3.tensor, l.zero_point(), l.zero_point()}, {out.tensor});
    return l.reshape(out, out_dims);
}

Status lower_matmul(Lowering& l, const Node& node)
{
    auto a = l.input(node, 0);
    if (!a) return fail(a.error());
    auto b = l.input(node, 1);
    if (!b) return fail(b.error());
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    auto out = matmul(l, node, *a, *b, *dims);
    if (!out) return fail(out.error());
    return l.bind(node, 0, *out);
}

Value transpose_2d(Lowering& l, Value v) { return l.transpose(v, {1, 0}); }

Status lower_gemm(Lowering& l, const Node& node)
{
    auto a = l.input(node, 0);
    if (!a) return fail(a.error());
    auto b = l.input(node, 1);
    if (!b) return fail(b.error());
    auto dims = l.output_dims(node);
    if (!dims) return fail(dims.error());
    if (a->dims.size() != 2 || b->dims.size() != 2)
        return fail(l.refuse(node, "A and B must be matrices"));
    Value av = int_attr(node, "transA", 0) != 0 ? transpose_2d(l, *a) : *a;
    Value bv = int_attr(node, "transB", 0) != 0 ? transpose_2d(l, *b) : *b;
    auto product = matmul(l, node, av, bv, *dims);
    if (!product) return fail(product.error());
    Value y = *product;
    if (const float alpha = float_attr(node, "alpha", 1.0f); alpha != 1.0f)
        y = l.mul(y, l.scalar_like(alpha, 2), *dims);
    if (node.input_size() > 2 && !node.input(2).empty()) {
        auto c = l.input(node, 2);
        if (!c) return fail(c.error());
        Value cv = *c;
        if (const float beta = float_attr(node, "beta", 1.0f); beta != 1.0f)
            cv = l.mul(cv, l.scalar_like(beta, cv.dims.size()), cv.dims);
        y = l.binary(Op::add, y, cv, *dims);
    }
    return l.bind(node, 0, y);
}

}  // namespace

void add_tensor(Table& table)
{
    table.emplace("Reshape", Entry(lower_reshape, any_values));
    table.emplace("Flatten", Entry(lower_reshape, any_values));
    table.emplace("Squeeze", Entry(lower_reshape, any_values));
    table.emplace("Unsqueeze", Entry(lower_reshape, any_values));
    table.emplace("Transpose", Entry(lower_transpose, any_values));
    table.emplace("MatMul", lower_matmul);
    table.emplace("Gemm", lower_gemm);
}

}  // namespace vaccel::onnx::lowering
