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

// The TOSA tensor holding an ONNX value, its dims and its element type
// (the ONNX type's carrier, ports.hpp).
struct Value {
    std::uint32_t tensor = 0;
    Dims dims;
    tosa::DType dtype = tosa::DType::fp32;
};

// The element types an op type's lowering handles (Entry below); a node
// with an input or output of another carrier is refused before it lowers.
enum Kinds : std::uint8_t {
    fp32_values = 1,
    fp16_values = 2,
    int_values = 4,
    bool_values = 8,
    bf16_values = 16,
    float_values = fp32_values | fp16_values,
    number_values = float_values | int_values,
    any_values = number_values | bool_values,
    every_carrier = any_values | bf16_values,
};

inline std::int64_t elements(const Dims& dims)
{
    return std::accumulate(dims.begin(), dims.end(), std::int64_t{1}, std::multiplies<>());
}

class Lowering {
public:
    explicit Lowering(const Model& model, bool transpose_per_node = false)
        : model_(model), transpose_per_node_(transpose_per_node)
    {
    }

    Result<Imported> run();

    // ---- what the op lowerings use ----
    // A refusal naming the node, its op type and why.
    Error refuse(const Node& node, std::string why) const
    {
        // A node is named by its name, else its first output; a malformed
        // one may have neither.
        const std::string& name = !node.name().empty() || node.output_size() == 0 ? node.name() : node.output(0);
        return Error::of(Errc::unsupported)
            .with_note(fmt::format("node '{}' ({}): {}", name, node.op_type(), why));
    }
    Result<Value> input(const Node& node, int i);
    // The node's inputs 0..count-1 and its output 0's dims: what most
    // lowerings open with.
    struct Operands {
        std::vector<Value> in;
        Dims dims;
    };
    Result<Operands> operands(const Node& node, int count);
    // The value's data when it is known at import: an initializer, a
    // Constant node, a given input value, or a node folded (folding.hpp).
    const ConstantData* constant_of(const std::string& name) const
    {
        if (auto it = folded_.find(name); it != folded_.end()) return &it->second;
        return model_.constant(name);
    }
    Result<Dims> output_dims(const Node& node, int i = 0) const;
    // The carrier of the node's output i (ports.hpp); refuses a type
    // without one.
    Result<tosa::DType> output_type(const Node& node, int i = 0) const;
    // The element type new tensors and constants get unless a lowering
    // says otherwise: the carrier of the node's output 0, set by run()
    // before each node lowers (FP32 where it has none).
    tosa::DType element_type() const { return type_; }
    // For a lowering whose intermediate values are of another type than
    // its output (ArgMax works on its input's type, then gives INT32).
    void set_element_type(tosa::DType dtype) { type_ = dtype; }
    // A new tensor of element_type() / of `dtype`; `name` empty makes an
    // internal one.
    Value tensor(const Dims& dims, std::string name = {}) { return tensor_of(dims, type_, std::move(name)); }
    Value tensor_of(const Dims& dims, tosa::DType dtype, std::string name = {});
    Status bind(const Node& node, int i, Value v);
    // RESHAPE / TRANSPOSE of `v`, in its own element type.
    Value reshape(Value v, const Dims& dims);
    // TRANSPOSE of `v` by `perm` (the result's dim i is v's perm[i]).
    Value transpose(Value v, std::vector<std::int32_t> perm);
    // SLICE of `v` from `start`, `size` long; TILE of `v` by `multiples`
    // (`v` itself when every multiple is 1); both in v's own element type.
    Value slice(Value v, const Dims& start, const Dims& size);
    Value tile(Value v, const Dims& multiples);
    // A CONST_SHAPE operand holding `values`.
    std::uint32_t shape_operand(const Dims& values);
    // `v` reshaped to `rank` dims by leading 1s (TOSA broadcasting needs
    // equal ranks).
    Value to_rank(Value v, std::size_t rank);
    // A constant of element_type() holding `values` (rounded to FP16 or
    // truncated to INT32 where that is the type).
    Value constant(const Dims& dims, std::vector<float> values) { return constant_typed(dims, std::move(values), type_); }
    Value constant_typed(const Dims& dims, std::vector<float> values, tosa::DType dtype);
    Value scalar_like(float value, std::size_t rank) { return constant(Dims(rank, 1), {value}); }
    // A constant of the carrier of `data`'s ONNX type; refuses an integer
    // outside INT32 (naming `name`) and types without a carrier.
    Result<Value> constant_data(const ConstantData& data, const std::string& name);
    Value constant_ints(const Dims& dims, const std::vector<std::int64_t>& values, tosa::DType dtype);
    std::uint32_t mul_shift();
    // A zero of element_type(), as NEGATE's and MATMUL's zero points.
    std::uint32_t zero_point();
    Value unary(Op op, Value x, const Dims& dims, tosa::Attributes attrs = {});
    // `op` of `operands` (brought to the result's rank) into a new tensor of
    // `dtype`: for ops whose operands are all tensors (not MUL's shift or
    // NEGATE's zero points).
    Value apply(Op op, std::vector<Value> operands, const Dims& dims, tosa::DType dtype,
                tosa::Attributes attrs = {});
    Value binary(Op op, Value a, Value b, const Dims& dims);
    Value mul(Value a, Value b, const Dims& dims);

    // NCHW to NHWC and back (TRANSPOSE), remembering each pair: a value
    // that came from NHWC goes back to it without a TRANSPOSE, and the
    // elementwise operators of such values run in NHWC (lowering_layout.cpp).
    Value to_channels_last(Value nchw);
    Value to_channels_first(Value nhwc);

    const Model& model() const { return model_; }
    tosa::GraphBuilder& builder() { return g_; }

    Status check_kinds(const Node& node, std::uint8_t kinds) const;

private:
    std::string fresh(std::string_view base) { return fmt::format("{}#{}", base, serial_++); }
    // `op` of `operands` into `dims` run in NHWC by `emit` (given the NHWC
    // operands and dims), where lowering_layout.cpp's rule allows; the
    // result in NCHW.
    std::optional<Value> in_channels_last(Op op, const std::vector<Value>& operands, const Dims& dims,
                                          const std::function<Value(std::vector<Value>, const Dims&)>& emit);

    const Model& model_;
    tosa::GraphBuilder g_;
    std::unordered_map<std::string, Value> values_;
    std::unordered_map<std::string, ConstantData> folded_;
    std::optional<std::uint32_t> shift_;
    std::unordered_map<tosa::DType, std::uint32_t> zeros_;
    std::unordered_map<std::uint32_t, Value> channels_last_;  // NCHW tensor -> its NHWC twin
    bool transpose_per_node_ = false;                         // no twins (ImportOptions)
    tosa::DType type_ = tosa::DType::fp32;
    std::uint64_t serial_ = 0;
};

// Removes the operators whose results nothing reads (no operator, no
// output), then the tensors no operator or port names
// (lowering_layout.cpp).
void prune(tosa::Graph& graph);

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
// An op type's lowering and the element types it handles (FP32 only
// unless the family says more).
struct Entry {
    Entry(Lower l, std::uint8_t k = fp32_values) : lower(std::move(l)), kinds(k) {}
    template <class F>
        requires std::is_invocable_r_v<Status, F, Lowering&, const Node&>
    Entry(F f, std::uint8_t k = fp32_values) : lower(std::move(f)), kinds(k)
    {
    }
    Lower lower;
    std::uint8_t kinds;
};
using Table = std::unordered_map<std::string, Entry>;

// The op families (lowering_*.cpp): each adds its op types to `table`.
void add_elementwise(Table& table);
void add_logic(Table& table);
void add_tensor(Table& table);
void add_nn(Table& table);
void add_data(Table& table);
void add_cast(Table& table);
void add_loss(Table& table);

// The INT8 zero points ([1] constants) of an integer MATMUL's or CONV2D's
// two INT8 operands, whose result is then INT32 (lowering_integer.cpp).
struct Int8Zeros {
    std::uint32_t a, b;
};
// ONNX MatMul of `a` and `b` (lowering_tensor.cpp): float operands, or INT8
// ones with `zeros`.
Result<Value> matmul(Lowering& l, const Node& node, Value a, Value b, const Dims& out_dims,
                     const Int8Zeros* zeros = nullptr);
// ONNX Conv (1-D or 2-D; any group) of NCHW `x` by OIHW `w`
// (lowering_nn.cpp): float operands (`w_data` its FLOAT constant data, if
// known, reordered at import), or INT8 ones with `zeros` (INT32 result).
Result<Value> conv2d(Lowering& l, const Node& node, const Value& x, const Value& w, const ConstantData* w_data,
                     const std::optional<Value>& bias, const Int8Zeros* zeros);
// The same into the 4-D `out_dims` (a 1-D convolution's lifted result).
Result<Value> conv2d(Lowering& l, const Node& node, const Value& x, const Value& w, const ConstantData* w_data,
                     const std::optional<Value>& bias, const Int8Zeros* zeros, const Dims& out_dims);

// BatchNormalization with training_mode 1 (lowering_norm.cpp).
Status batch_norm_training(Lowering& l, const Node& node);

// A quantization's parameters (lowering_quantize.cpp).
struct QuantParams {
    Dims dims;                                 // of the input's rank: 1s but at `axis`
    Value scale;                               // FP32, of `dims`
    const ConstantData* scale_data = nullptr;  // when known at import
    std::optional<Value> zero;                 // INT32, of `dims`; none: 0
    std::int32_t quantized = ::onnx::TensorProto::UINT8;  // the quantized side's ONNX type (INT8, UINT8, INT32)
};
// saturate(round(x / scale) + zero) of FP32 `x`, in INT32, by `p`;
// `inverse` is 1 / scale, of p.dims.
Value quantize(Lowering& l, Value x, const QuantParams& p, Value inverse);

// Softmax (exp(x - max) * (1 / sum)) or, with `log`, LogSoftmax ((x - max)
// - log(sum)) of `x` over `axis` (lowering_elementwise.cpp).
Value softmax_along(Lowering& l, Value x, const Dims& dims, std::int64_t axis, bool log);
void add_gather(Table& table);
void add_resize(Table& table);
void add_conv_transpose(Table& table);
void add_quantize(Table& table);
void add_math(Table& table);
void add_norm(Table& table);
void add_indicator(Table& table);
void add_scatter(Table& table);
void add_integer(Table& table);
void add_recurrent(Table& table);

}  // namespace vaccel::onnx::lowering
