// lowering_context.hpp - what every op lowering shares (lowering.hpp).
//
// Owns: the Lowering state (the TOSA builder, the ONNX value -> TOSA tensor
// map) and the helpers the op families use; each family's file adds its
// op types to the one table (lowering.cpp).
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>
#include <numeric>
#include <optional>
#include <unordered_map>

#include "lowering.hpp"
#include "vaccel/tosa/builder.hpp"

namespace vaccel::onnx::lowering {

using tosa::Op;
using Dims = std::vector<std::int64_t>;
using Node = ::onnx::NodeProto;

// TOSA's nan_mode PROPAGATE: a NaN operand gives NaN, as in ONNX.
constexpr std::uint32_t nan_propagate = 1;

// The TOSA tensor holding an ONNX value, and its dims.
struct Value {
    std::uint32_t tensor = 0;
    Dims dims;
};

inline std::int64_t elements(const Dims& dims)
{
    return std::accumulate(dims.begin(), dims.end(), std::int64_t{1}, std::multiplies<>());
}

class Lowering {
public:
    explicit Lowering(const Model& model) : model_(model) {}

    Result<Imported> run();

    // ---- what the op lowerings use ----
    // A refusal naming the node, its op type and why.
    Error refuse(const Node& node, std::string why) const
    {
        return Error::of(Errc::unsupported)
            .with_note(fmt::format("node '{}' ({}): {}", node.name().empty() ? node.output(0) : node.name(),
                                   node.op_type(), why));
    }
    Result<Value> input(const Node& node, int i);
    // The value's data when it is known at import: an initializer, a
    // Constant node, a given input value, or a node folded (folding.hpp).
    const ConstantData* constant_of(const std::string& name) const
    {
        if (auto it = folded_.find(name); it != folded_.end()) return &it->second;
        return model_.constant(name);
    }
    Result<Dims> output_dims(const Node& node, int i = 0) const;
    // A new FP32 tensor; `name` empty makes an internal one.
    Value tensor(const Dims& dims, std::string name = {});
    Status bind(const Node& node, int i, Value v);
    Value reshape(Value v, const Dims& dims);
    // TRANSPOSE of `v` by `perm` (the result's dim i is v's perm[i]).
    Value transpose(Value v, std::vector<std::int32_t> perm);
    // A CONST_SHAPE operand holding `values`.
    std::uint32_t shape_operand(const Dims& values);
    // `v` reshaped to `rank` dims by leading 1s (TOSA broadcasting needs
    // equal ranks).
    Value to_rank(Value v, std::size_t rank);
    Value constant(const Dims& dims, std::vector<float> values);
    Value scalar_like(float value, std::size_t rank) { return constant(Dims(rank, 1), {value}); }
    std::uint32_t mul_shift();
    std::uint32_t zero_point();
    Value unary(Op op, Value x, const Dims& dims, tosa::Attributes attrs = {});
    Value binary(Op op, Value a, Value b, const Dims& dims);
    Value mul(Value a, Value b, const Dims& dims);

    const Model& model() const { return model_; }
    tosa::GraphBuilder& builder() { return g_; }

private:
    std::string fresh(std::string_view base) { return fmt::format("{}#{}", base, serial_++); }

    const Model& model_;
    tosa::GraphBuilder g_;
    std::unordered_map<std::string, Value> values_;
    std::unordered_map<std::string, ConstantData> folded_;
    std::optional<std::uint32_t> shift_, zero_;
    std::uint64_t serial_ = 0;
};

// ---- attributes ----

inline const ::onnx::AttributeProto* attribute(const Node& node, std::string_view name)
{
    for (const auto& a : node.attribute())
        if (a.name() == name) return &a;
    return nullptr;
}

inline std::int64_t int_attr(const Node& node, std::string_view name, std::int64_t otherwise)
{
    const auto* a = attribute(node, name);
    return a != nullptr ? a->i() : otherwise;
}

inline float float_attr(const Node& node, std::string_view name, float otherwise)
{
    const auto* a = attribute(node, name);
    return a != nullptr ? a->f() : otherwise;
}

inline std::optional<Dims> ints_attr(const Node& node, std::string_view name)
{
    const auto* a = attribute(node, name);
    if (a == nullptr) return std::nullopt;
    return Dims(a->ints().begin(), a->ints().end());
}

using Lower = std::function<Status(Lowering&, const Node&)>;
using Table = std::unordered_map<std::string, Lower>;

// The op families (lowering_*.cpp): each adds its op types to `table`.
void add_elementwise(Table& table);
void add_tensor(Table& table);
void add_nn(Table& table);
void add_data(Table& table);

}  // namespace vaccel::onnx::lowering
