// folding.cpp - computing constant nodes at import (folding.hpp).
#include "folding.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace vaccel::onnx {

namespace {

using Dims = std::vector<std::int64_t>;
using T = ::onnx::TensorProto;

bool is_float(std::int32_t elem)
{
    return elem == T::FLOAT || elem == T::DOUBLE || elem == T::FLOAT16 || elem == T::BFLOAT16;
}

// A constant as doubles (exact for the integers shape arithmetic uses).
struct Array {
    std::int32_t elem = T::INT64;
    Dims dims;
    std::vector<double> v;
};

std::size_t count(const Dims& dims)
{
    return static_cast<std::size_t>(
        std::accumulate(dims.begin(), dims.end(), std::int64_t{1}, std::multiplies<>()));
}

Array array_of(const ConstantData& c)
{
    Array a{c.type.elem, c.type.dims, {}};
    if (is_float(c.type.elem))
        a.v.assign(c.floats.begin(), c.floats.end());
    else
        for (std::int64_t x : c.ints) a.v.push_back(static_cast<double>(x));
    return a;
}

ConstantData data_of(const Array& a)
{
    ConstantData c;
    c.type = {a.elem, a.dims};
    if (is_float(a.elem)) {
        c.type.elem = T::FLOAT;
        for (double x : a.v) c.floats.push_back(static_cast<float>(x));
    } else {
        for (double x : a.v) c.ints.push_back(static_cast<std::int64_t>(x));
    }
    return c;
}

const ::onnx::AttributeProto* attr(const ::onnx::NodeProto& node, std::string_view name)
{
    for (const auto& a : node.attribute())
        if (a.name() == name) return &a;
    return nullptr;
}

std::int64_t int_attr(const ::onnx::NodeProto& node, std::string_view name, std::int64_t otherwise)
{
    const auto* a = attr(node, name);
    return a != nullptr ? a->i() : otherwise;
}

// Row-major strides, and the flat index in `dims` of multi-index `at`
// broadcast to it (size-1 dimensions read index 0).
std::vector<std::size_t> strides(const Dims& dims)
{
    std::vector<std::size_t> s(dims.size(), 1);
    for (std::size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * static_cast<std::size_t>(dims[i]);
    return s;
}

std::size_t broadcast_index(const Dims& dims, const Dims& out, const std::vector<std::size_t>& at)
{
    const std::size_t lead = out.size() - dims.size();
    std::size_t flat = 0;
    const auto s = strides(dims);
    for (std::size_t i = 0; i < dims.size(); ++i)
        if (dims[i] != 1) flat += at[lead + i] * s[i];
    return flat;
}

std::optional<Dims> broadcast_dims(const std::vector<const Array*>& in)
{
    std::size_t rank = 0;
    for (const Array* a : in) rank = std::max(rank, a->dims.size());
    Dims out(rank, 1);
    for (const Array* a : in)
        for (std::size_t i = 0; i < a->dims.size(); ++i) {
            std::int64_t& o = out[rank - a->dims.size() + i];
            const std::int64_t d = a->dims[i];
            if (d == o || d == 1) continue;
            if (o != 1) return std::nullopt;
            o = d;
        }
    return out;
}

// Visits every multi-index of `dims` in row-major order.
template <class F>
void each_index(const Dims& dims, F&& f)
{
    std::vector<std::size_t> at(dims.size(), 0);
    const std::size_t n = count(dims);
    for (std::size_t flat = 0; flat < n; ++flat) {
        f(at, flat);
        for (std::size_t i = dims.size(); i-- > 0;) {
            if (++at[i] < static_cast<std::size_t>(dims[i])) break;
            at[i] = 0;
        }
    }
}

std::optional<Array> elementwise(const std::string& op, const std::vector<Array>& in)
{
    std::vector<const Array*> ptrs;
    for (const Array& a : in) ptrs.push_back(&a);
    auto out_dims = broadcast_dims(ptrs);
    if (!out_dims) return std::nullopt;
    Array out;
    const bool compare = op == "Equal" || op == "Less" || op == "Greater";
    out.elem = compare ? T::BOOL : (op == "Where" ? in[1].elem : in[0].elem);
    out.dims = *out_dims;
    const bool integer = !is_float(out.elem);
    out.v.resize(count(out.dims));
    each_index(out.dims, [&](const std::vector<std::size_t>& at, std::size_t flat) {
        auto x = [&](std::size_t k) { return in[k].v[broadcast_index(in[k].dims, out.dims, at)]; };
        double r = 0;
        if (op == "Add") r = x(0) + x(1);
        else if (op == "Sub") r = x(0) - x(1);
        else if (op == "Mul") r = x(0) * x(1);
        else if (op == "Div") r = integer ? (x(1) == 0 ? 0 : std::trunc(x(0) / x(1))) : x(0) / x(1);
        else if (op == "Equal") r = x(0) == x(1);
        else if (op == "Less") r = x(0) < x(1);
        else if (op == "Greater") r = x(0) > x(1);
        else if (op == "Min") r = std::min(x(0), x(1));
        else if (op == "Max") r = std::max(x(0), x(1));
        else if (op == "Where") r = x(0) != 0 ? x(1) : x(2);
        out.v[flat] = r;
    });
    return out;
}

Array gather(const Array& data, const Array& indices, std::int64_t axis)
{
    const auto a = static_cast<std::size_t>(axis);
    Array out{data.elem, {}, {}};
    out.dims.assign(data.dims.begin(), data.dims.begin() + static_cast<std::ptrdiff_t>(a));
    out.dims.insert(out.dims.end(), indices.dims.begin(), indices.dims.end());
    out.dims.insert(out.dims.end(), data.dims.begin() + static_cast<std::ptrdiff_t>(a) + 1, data.dims.end());
    const std::size_t outer = count(Dims(data.dims.begin(), data.dims.begin() + static_cast<std::ptrdiff_t>(a)));
    const std::size_t inner = count(Dims(data.dims.begin() + static_cast<std::ptrdiff_t>(a) + 1, data.dims.end()));
    const auto axis_len = static_cast<std::size_t>(data.dims[a]);
    for (std::size_t o = 0; o < outer; ++o)
        for (double idx : indices.v) {
            auto i = static_cast<std::int64_t>(idx);
            if (i < 0) i += static_cast<std::int64_t>(axis_len);
            const auto base = (o * axis_len + static_cast<std::size_t>(i)) * inner;
            for (std::size_t k = 0; k < inner; ++k) out.v.push_back(data.v[base + k]);
        }
    return out;
}

}  // namespace

std::optional<ConstantData> fold(const ::onnx::NodeProto& node, const Model& model,
                                 const ConstantLookup& constant)
{
    const std::string& op = node.op_type();
    if (node.output_size() < 1 || node.input_size() < 1) return std::nullopt;
    if (op == "Shape" || op == "Size") {
        const auto type = model.type_of(node.input(0));
        if (!type) return std::nullopt;
        Array out{T::INT64, {}, {}};
        if (op == "Size") {
            out.v = {static_cast<double>(count(type->dims))};
            return data_of(out);
        }
        const auto rank = static_cast<std::int64_t>(type->dims.size());
        std::int64_t start = int_attr(node, "start", 0), end = int_attr(node, "end", rank);
        if (start < 0) start += rank;
        if (end < 0) end += rank;
        start = std::clamp<std::int64_t>(start, 0, rank);
        end = std::clamp<std::int64_t>(end, start, rank);
        for (std::int64_t i = start; i < end; ++i) out.v.push_back(static_cast<double>(type->dims[static_cast<std::size_t>(i)]));
        out.dims = {end - start};
        return data_of(out);
    }
    std::vector<Array> in;
    for (const auto& name : node.input()) {
        if (name.empty()) {
            in.emplace_back();
            continue;
        }
        const ConstantData* c = constant(name);
        if (c == nullptr || count(c->type.dims) > max_folded_elements) return std::nullopt;
        in.push_back(array_of(*c));
    }
    if (in.empty()) return std::nullopt;
    const auto out_type = model.type_of(node.output(0));
    if (op == "ConstantOfShape") {
        Array out{T::FLOAT, {}, {}};
        for (double d : in[0].v) out.dims.push_back(static_cast<std::int64_t>(d));
        double value = 0;
        if (const auto* a = attr(node, "value"); a != nullptr && a->has_t()) {
            auto v = decode_tensor(a->t());
            if (!v) return std::nullopt;
            out.elem = v->type.elem;
            value = !v->floats.empty() ? v->floats[0] : (!v->ints.empty() ? static_cast<double>(v->ints[0]) : 0);
        }
        if (count(out.dims) > max_folded_elements) return std::nullopt;
        out.v.assign(count(out.dims), value);
        return data_of(out);
    }
    if (op == "Identity" || op == "Cast" || op == "Reshape" || op == "Flatten" || op == "Squeeze" ||
        op == "Unsqueeze") {
        if (!out_type) return std::nullopt;
        Array out = in[0];
        out.dims = out_type->dims;
        if (op == "Cast") {
            out.elem = static_cast<std::int32_t>(int_attr(node, "to", T::FLOAT));
            if (!is_float(out.elem))
                for (double& x : out.v) x = std::trunc(x);
        }
        if (count(out.dims) != out.v.size()) return std::nullopt;
        return data_of(out);
    }
    if (op == "Gather") {
        if (in.size() != 2) return std::nullopt;
        std::int64_t axis = int_attr(node, "axis", 0);
        if (axis < 0) axis += static_cast<std::int64_t>(in[0].dims.size());
        if (axis < 0 || axis >= static_cast<std::int64_t>(in[0].dims.size())) return std::nullopt;
        for (double i : in[1].v)
            if (i < -static_cast<double>(in[0].dims[static_cast<std::size_t>(axis)]) ||
                i >= static_cast<double>(in[0].dims[static_cast<std::size_t>(axis)]))
                return std::nullopt;
        return data_of(gather(in[0], in[1], axis));
    }
    if (op == "Concat") {
        std::int64_t axis = int_attr(node, "axis", 0);
        const auto rank = static_cast<std::int64_t>(in[0].dims.size());
        if (axis < 0) axis += rank;
        if (axis != 0 || rank != 1) return std::nullopt;  // shape vectors
        Array out{in[0].elem, {0}, {}};
        for (const Array& a : in) {
            out.v.insert(out.v.end(), a.v.begin(), a.v.end());
            out.dims[0] += a.dims.empty() ? 1 : a.dims[0];
        }
        return data_of(out);
    }
    if (op == "Slice") {
        if (in.size() < 3 || in[0].dims.size() != 1) return std::nullopt;
        const auto n = static_cast<std::int64_t>(in[0].v.size());
        if (in.size() > 4 && !in[4].v.empty() && in[4].v[0] != 1) return std::nullopt;
        auto s = static_cast<std::int64_t>(in[1].v[0]), e = static_cast<std::int64_t>(in[2].v[0]);
        if (s < 0) s += n;
        if (e < 0) e += n;
        s = std::clamp<std::int64_t>(s, 0, n);
        e = std::clamp<std::int64_t>(e, s, n);
        Array out{in[0].elem, {e - s}, {in[0].v.begin() + s, in[0].v.begin() + e}};
        return data_of(out);
    }
    if (op == "Range") {
        if (in.size() != 3) return std::nullopt;
        const double start = in[0].v.at(0), limit = in[1].v.at(0), delta = in[2].v.at(0);
        if (delta == 0) return std::nullopt;
        Array out{in[0].elem, {}, {}};
        const auto steps = static_cast<std::int64_t>(std::max(0.0, std::ceil((limit - start) / delta)));
        if (static_cast<std::size_t>(steps) > max_folded_elements) return std::nullopt;
        for (std::int64_t i = 0; i < steps; ++i) out.v.push_back(start + static_cast<double>(i) * delta);
        out.dims = {steps};
        return data_of(out);
    }
    if (op == "Not" || op == "Neg" || op == "Abs") {
        Array out = in[0];
        for (double& x : out.v) x = op == "Not" ? (x == 0 ? 1 : 0) : op == "Neg" ? -x : std::fabs(x);
        return data_of(out);
    }
    static const std::vector<std::string> binary{"Add", "Sub", "Mul", "Div", "Equal", "Less",
                                                 "Greater", "Min", "Max", "Where"};
    if (std::ranges::find(binary, op) != binary.end()) {
        if (in.size() != (op == "Where" ? 3u : 2u)) return std::nullopt;
        auto out = elementwise(op, in);
        if (!out) return std::nullopt;
        return data_of(*out);
    }
    return std::nullopt;
}

namespace {

bool every_value_typed(const Model& model)
{
    for (const auto& node : model.graph().node())
        for (const auto& out : node.output())
            if (!out.empty() && !model.type_of(out)) return false;
    return true;
}

// The types make_constant writes: FLOAT and the integers (and BOOL).
bool writable(const ConstantData& data)
{
    using T = ::onnx::TensorProto;
    switch (data.type.elem) {
    case T::FLOAT: case T::INT64: case T::INT32: case T::INT16: case T::INT8: case T::UINT64:
    case T::UINT32: case T::UINT16: case T::UINT8: case T::BOOL: return true;
    default: return false;
    }
}

}  // namespace

Status fold_until_shapes_settle(Model& model)
{
    for (int round = 0; round < max_folding_rounds && !every_value_typed(model); ++round) {
        std::map<std::string, ConstantData> folded;
        const ConstantLookup lookup = [&](const std::string& name) -> const ConstantData* {
            if (auto it = folded.find(name); it != folded.end()) return &it->second;
            return model.constant(name);
        };
        std::vector<int> nodes;
        const auto& graph = model.graph();
        for (int i = 0; i < graph.node_size(); ++i) {
            const auto& node = graph.node(i);
            if (node.op_type() == "Constant" || node.output_size() != 1) continue;
            auto data = fold(node, model, lookup);
            if (!data || !writable(*data)) continue;
            folded.emplace(node.output(0), std::move(*data));
            nodes.push_back(i);
        }
        if (nodes.empty()) return {};
        for (int i : nodes) model.make_constant(i, folded.at(graph.node(i).output(0)));
        if (auto ok = model.infer_shapes(); !ok) return ok;
    }
    return {};
}

}  // namespace vaccel::onnx
