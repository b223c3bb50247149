// lowering_tensor.cpp - ONNX's reshaping ops, Transpose, DepthToSpace,
// SpaceToDepth, MatMul and Gemm
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

// `v` (rank >= 2) tiled along its batch dims to `batch`.
Value tile_batch(Lowering& l, Value v, const Dims& batch)
{
    Dims multiples;
    for (std::size_t i = 0; i < batch.size(); ++i) multiples.push_back(batch[i] / v.dims[i]);
    multiples.push_back(1);
    multiples.push_back(1);
    return l.tile(v, multiples);
}

// ONNX MatMul (numpy's matmul) as MATMUL [N, H, C] x [N, C, W]: a 1-D `a`
// is a row, a 1-D `b` a column (the inferred result drops that dim); batch
// dims broadcast. Where `b` has no batch of its own (a weight), `a`'s
// batch folds into its rows, one MATMUL over N = 1; else the side with a
// batch dim of 1 is tiled to the other's.
}  // namespace

Result<Value> matmul(Lowering& l, const Node& node, Value a, Value b, const Dims& out_dims, const Int8Zeros* zeros)
{
    if (a.dims.empty() || b.dims.empty()) return fail(l.refuse(node, "an operand is a scalar"));
    if (a.dims.size() == 1) a = l.reshape(a, {1, a.dims[0]});
    if (b.dims.size() == 1) b = l.reshape(b, {b.dims[0], 1});
    const std::size_t rank = std::max(a.dims.size(), b.dims.size());
    a = l.to_rank(a, rank);
    b = l.to_rank(b, rank);
    const Dims batch_a(a.dims.begin(), a.dims.end() - 2), batch_b(b.dims.begin(), b.dims.end() - 2);
    Dims batch;
    for (std::size_t i = 0; i + 2 < rank; ++i) {
        if (batch_a[i] != batch_b[i] && batch_a[i] != 1 && batch_b[i] != 1)
            return fail(l.refuse(node, fmt::format("batch dimensions {} and {} do not broadcast",
                                                   batch_a, batch_b)));
        batch.push_back(std::max(batch_a[i], batch_b[i]));
    }
    if (a.dims[rank - 1] != b.dims[rank - 2])
        return fail(l.refuse(node, "the operands' inner dimensions differ"));
    std::int64_t n = elements(batch), h = a.dims[rank - 2];
    const std::int64_t c = a.dims[rank - 1], w = b.dims[rank - 1];
    if (elements(batch_b) == 1 && n > 1) {
        h *= n;  // a's batch becomes rows of one product with b
        n = 1;
    } else {
        a = tile_batch(l, a, batch);
        b = tile_batch(l, b, batch);
    }
    Value a3 = l.reshape(a, {n, h, c}), b3 = l.reshape(b, {n, c, w});
    Value out = zeros != nullptr ? l.tensor_of({n, h, w}, tosa::DType::int32) : l.tensor({n, h, w});
    l.builder().op(Op::matmul,
                   {a3.tensor, b3.tensor, zeros != nullptr ? zeros->a : l.zero_point(),
                    zeros != nullptr ? zeros->b : l.zero_point()},
                   {out.tensor});
    return l.reshape(out, out_dims);
}

namespace {

Status lower_matmul(Lowering& l, const Node& node)
{
    auto ops = l.operands(node, 2);
    if (!ops) return fail(ops.error());
    auto out = matmul(l, node, ops->in[0], ops->in[1], ops->dims);
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

// DepthToSpace and SpaceToDepth of [N, C, H, W] by blocksize b: a RESHAPE
// to 6 dims, a TRANSPOSE, a RESHAPE to the result. DepthToSpace's DCR mode
// (the default) takes the block offsets from the channels' high part, CRD
// from their low part.
Lower block_rearrange(bool to_space)
{
    return [to_space](Lowering& l, const Node& node) -> Status {
        auto ops = l.operands(node, 1);
        if (!ops) return fail(ops.error());
        const Value& x = ops->in[0];
        if (x.dims.size() != 4) return fail(l.refuse(node, "its input is not 4-D [N, C, H, W]"));
        const std::int64_t b = int_attr(node, "blocksize", 0);
        if (b < 1) return fail(l.refuse(node, "its blocksize is missing or below 1"));
        const std::int64_t n = x.dims[0], c = x.dims[1], h = x.dims[2], w = x.dims[3];
        const auto* mode = attribute(node, "mode");
        const bool crd = mode != nullptr && mode->s() == "CRD";
        if (mode != nullptr && !crd && mode->s() != "DCR")
            return fail(l.refuse(node, fmt::format("mode {} is neither DCR nor CRD", mode->s())));
        Value v;
        if (to_space) {
            if (c % (b * b) != 0)
                return fail(l.refuse(node, fmt::format("{} channels do not divide into blocks of {}", c, b * b)));
            const std::int64_t d = c / (b * b);
            v = crd ? l.transpose(l.reshape(x, {n, d, b, b, h, w}), {0, 1, 4, 2, 5, 3})
                    : l.transpose(l.reshape(x, {n, b, b, d, h, w}), {0, 3, 4, 1, 5, 2});
        } else {
            if (h % b != 0 || w % b != 0)
                return fail(l.refuse(node, fmt::format("{} x {} does not divide into blocks of {}", h, w, b)));
            v = l.transpose(l.reshape(x, {n, c, h / b, b, w / b, b}), {0, 3, 5, 1, 2, 4});
        }
        return l.bind(node, 0, l.reshape(v, ops->dims));
    };
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
    table.emplace("DepthToSpace", Entry(block_rearrange(true), any_values));
    table.emplace("SpaceToDepth", Entry(block_rearrange(false), any_values));
}

}  // namespace vaccel::onnx::lowering
