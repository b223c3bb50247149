// make_network.cpp - writes a real network as a TOSA 1.0 program, its input,
// its weights and a description other programs rebuild it from.
//
// Owns: ResNet-18, ResNet-50, MobileNetV2, a BERT-base encoder and a
// GPT-2-style decoder block as TOSA graphs built with the project's own
// GraphBuilder, FP32 or FP16, with seeded random weights. Decides
// (docs/networks.md has the whole contract):
// - images are NHWC, CONV2D weights [OC,KH,KW,IC], DEPTHWISE_CONV2D weights
//   [KH,KW,C,1], linear weights [IN,OUT] (y = x W + b); BatchNorm is folded
//   into the convolution's weight and bias here, so the files hold the folded
//   values and no BatchNorm exists anywhere after generation;
// - convolutions and pools pad as PyTorch does (the same p on every side,
//   output floor((H + 2p - K) / s) + 1); TOSA 1.0 wants the padded extent to
//   be an exact multiple of the stride, so the bottom/right padding is cut to
//   what the last window reads, and rows no window reads are SLICEd off;
// - a transformer keeps its residual stream as [1, B*S, D] so every linear
//   layer is one MATMUL against a [1, IN, OUT] constant, and attention is a
//   batched MATMUL over [B*H, S, dh];
// - every value comes from splitmix64 with the seed (make_example_mlp's
//   generator), drawn in a fixed order, so one seed gives the same files on
//   every machine; scales are He (before a ReLU) or Xavier-like (elsewhere)
//   uniform draws, and the last convolution of a residual branch is scaled
//   down, so activations stay O(1) through every layer;
// - weights/<name>.npy are float32 in every model; the FP16 model's constants
//   are those values rounded to FP16 (nearest even), its input .npy is
//   float16, and it runs FP16 end to end (CONV2D, DEPTHWISE_CONV2D and
//   AVG_POOL2D accumulate in FP32 through acc_type, MATMUL yields FP16).
//
// Usage: make-network NAME OUT_DIR [--batch N] [--dtype fp32|fp16] [--image H]
//   [--classes K] [--width W] [--layers L] [--hidden D] [--heads H] [--ffn F]
//   [--seq S] [--seed X]   (NAME: resnet18 resnet50 mobilenetv2 bert gpt2-block)
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "vaccel/npy/npy.hpp"
#include "vaccel/tosa/builder.hpp"
#include "../splitmix64.hpp"

namespace {

namespace fs = std::filesystem;
using vaccel::tosa::DType;
using vaccel::tosa::Op;
using json = nlohmann::json;
using Shape = std::vector<std::int64_t>;

constexpr std::uint64_t default_seed = 0x7661636365'6c2d6eull;  // "vaccel-n"

using vaccel::examples::SplitMix64;  // splitmix64.hpp

std::int64_t elements(const Shape& shape)
{
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
}

struct Options {
    std::string name;
    fs::path out;
    std::int64_t batch = 1;
    DType dtype = DType::fp32;
    std::int64_t image = 224, classes = 1000, width = 0;  // width 0: the network's own
    std::int64_t layers = -1, hidden = 768, heads = 12, ffn = 0, seq = 128;
    std::uint64_t seed = default_seed;
};

// A parameter as it is written to weights/<name>.npy (float32).
struct Param {
    std::string name;
    Shape shape;
    std::vector<float> values;
};

// The graph under construction with its dtype, its parameters and the
// generator the weights come from.
class Net {
public:
    Net(DType dtype, std::uint64_t seed) : dtype_(dtype), rng_(seed) {}

    vaccel::tosa::GraphBuilder b;
    std::vector<Param> params;
    SplitMix64& rng() { return rng_; }
    DType dtype() const { return dtype_; }
    bool fp16() const { return dtype_ == DType::fp16; }

    const Shape& shape(std::uint32_t t) { return b.block().tensors[t].shape; }

    // A fresh activation tensor; names get a counter so they never repeat.
    std::uint32_t act(const std::string& name, Shape shape)
    {
        return b.tensor(fmt::format("{}#{}", name, count_++), std::move(shape), dtype_);
    }
    // A constant of the model's dtype, produced by a CONST operator.
    std::uint32_t constant(const std::string& name, Shape shape, const std::vector<float>& values)
    {
        auto t = fp16() ? b.constant_f16(name, std::move(shape), values)
                        : b.constant_f32(name, std::move(shape), values);
        b.op(Op::const_, {}, {t});
        return t;
    }
    // A parameter: written to weights/ and baked into the graph as `shape`
    // (which may add leading 1s to the file's shape).
    std::uint32_t param(const std::string& name, Shape file_shape, std::vector<float> values,
                        Shape graph_shape = {})
    {
        if (graph_shape.empty()) graph_shape = file_shape;
        auto t = constant(name, graph_shape, values);
        params.push_back(Param{name, std::move(file_shape), std::move(values)});
        return t;
    }
    std::vector<float> draw(std::int64_t count, float scale)
    {
        std::vector<float> v(static_cast<std::size_t>(count));
        for (float& x : v) x = rng_.uniform(scale);
        return v;
    }
    // A value broadcast against a tensor of rank `rank`.
    std::uint32_t scalar(float value, std::size_t rank)
    {
        auto key = fmt::format("{}/{}", value, rank);
        if (auto it = scalars_.find(key); it != scalars_.end()) return it->second;
        auto t = constant(fmt::format("scalar_{}_r{}", value, rank), Shape(rank, 1), {value});
        return scalars_[key] = t;
    }
    std::uint32_t shape_constant(const Shape& dims)
    {
        std::vector<std::uint8_t> bytes(dims.size() * 8);
        std::memcpy(bytes.data(), dims.data(), bytes.size());
        auto t = b.tensor(fmt::format("shape#{}", count_++), {static_cast<std::int64_t>(dims.size())},
                          DType::shape, std::move(bytes));
        b.op(Op::const_shape, {}, {t});
        return t;
    }
    // The zero points MATMUL and the convolutions take: [1] zeros of the dtype.
    std::uint32_t zero_point()
    {
        if (!zero_point_) zero_point_ = constant("zero_point", {1}, {0.0f});
        return *zero_point_;
    }

    // ---- operators (each returns its output tensor)
    std::uint32_t binary(Op op, std::uint32_t x, std::uint32_t y, const std::string& name)
    {
        Shape out = shape(x);
        const Shape& other = shape(y);
        for (std::size_t d = 0; d < out.size(); ++d) out[d] = std::max(out[d], other[d]);
        auto t = act(name, out);
        if (op == Op::mul) {
            if (!shift_) {
                shift_ = b.tensor("mul_shift", {1}, DType::int8, {0});
                b.op(Op::const_, {}, {*shift_});
            }
            b.op(op, {x, y, *shift_}, {t});
        } else {
            b.op(op, {x, y}, {t});
        }
        return t;
    }
    std::uint32_t unary(Op op, std::uint32_t x, const std::string& name)
    {
        auto t = act(name, shape(x));
        b.op(op, {x}, {t});
        return t;
    }
    std::uint32_t scale(std::uint32_t x, float value, const std::string& name)
    {
        return binary(Op::mul, x, scalar(value, shape(x).size()), name);
    }
    std::uint32_t clamp(std::uint32_t x, float lo, float hi, const std::string& name)
    {
        auto t = act(name, shape(x));
        b.op(Op::clamp, {x}, {t},
             fp16() ? vaccel::tosa::clamp_f16_attr(lo, hi) : vaccel::tosa::clamp_f32_attr(lo, hi));
        return t;
    }
    std::uint32_t relu(std::uint32_t x, const std::string& name)
    {
        return clamp(x, 0.0f, fp16() ? 65504.0f : 3.4028234663852886e38f, name);
    }
    std::uint32_t reshape(std::uint32_t x, Shape dims, const std::string& name)
    {
        auto s = shape_constant(dims);
        auto t = act(name, std::move(dims));
        b.op(Op::reshape, {x, s}, {t});
        return t;
    }
    std::uint32_t transpose(std::uint32_t x, std::vector<std::int32_t> perms,
                            const std::string& name)
    {
        Shape out;
        for (auto p : perms) out.push_back(shape(x)[static_cast<std::size_t>(p)]);
        auto t = act(name, out);
        b.op(Op::transpose, {x}, {t}, vaccel::tosa::transpose_attr(std::move(perms)));
        return t;
    }
    std::uint32_t reduce(Op op, std::uint32_t x, std::int32_t axis, const std::string& name)
    {
        Shape out = shape(x);
        out[static_cast<std::size_t>(axis)] = 1;
        auto t = act(name, out);
        auto attributes = vaccel::tosa::axis_attr(axis);
        if (op == Op::reduce_max) attributes.nan_mode = 1;  // PROPAGATE
        b.op(op, {x}, {t}, std::move(attributes));
        return t;
    }
    std::uint32_t slice(std::uint32_t x, Shape start, Shape size, const std::string& name)
    {
        auto s0 = shape_constant(start);
        auto s1 = shape_constant(size);
        auto t = act(name, size);
        b.op(Op::slice, {x, s0, s1}, {t});
        return t;
    }
    std::uint32_t matmul(std::uint32_t x, std::uint32_t y, const std::string& name)
    {
        const Shape& a = shape(x);
        auto t = act(name, {a[0], a[1], shape(y)[2]});
        b.op(Op::matmul, {x, y, zero_point(), zero_point()}, {t});
        return t;
    }

    // PyTorch-style symmetric padding on an NHWC tensor for a window of
    // `kernel` at `stride`: returns the (possibly SLICEd) input and the TOSA
    // pad [top, bottom, left, right] that gives floor((H + 2p - K) / s) + 1.
    std::pair<std::uint32_t, std::vector<std::int32_t>> window(std::uint32_t x, std::int64_t kernel,
                                                               std::int64_t stride, std::int64_t pad,
                                                               const std::string& name)
    {
        Shape in = shape(x);
        std::int64_t after[2];
        bool cut = false;
        for (int axis = 0; axis < 2; ++axis) {
            const std::int64_t h = in[1 + axis];
            const std::int64_t out = (h + 2 * pad - kernel) / stride + 1;
            after[axis] = (out - 1) * stride + kernel - h - pad;
            if (after[axis] < 0) {  // rows past the last window: drop them
                in[1 + axis] = h + after[axis];
                after[axis] = 0;
                cut = true;
            }
        }
        if (cut) x = slice(x, {0, 0, 0, 0}, in, name + ".cut");
        return {x,
                {static_cast<std::int32_t>(pad), static_cast<std::int32_t>(after[0]),
                 static_cast<std::int32_t>(pad), static_cast<std::int32_t>(after[1])}};
    }
    static std::int64_t window_out(std::int64_t h, std::int64_t k, std::int64_t s, std::int64_t p)
    {
        return (h + 2 * p - k) / s + 1;
    }

    // A convolution followed by BatchNorm, folded: weight [OC,KH,KW,IC] He
    // (relu) or Xavier-like uniform times `gain`, BatchNorm's gamma, beta,
    // running mean and variance drawn and folded into weight and bias.
    std::uint32_t conv_bn(std::uint32_t x, const std::string& name, std::int64_t oc,
                          std::int64_t kernel, std::int64_t stride, std::int64_t pad, bool relu_after,
                          float gain = 1.0f)
    {
        const std::int64_t ic = shape(x)[3];
        const std::int64_t fan_in = kernel * kernel * ic;
        auto w = draw(oc * fan_in, gain * std::sqrt((relu_after ? 6.0f : 3.0f) / fan_in));
        auto bias = fold_batch_norm(w, oc);
        auto wt = param(name + ".weight", {oc, kernel, kernel, ic}, std::move(w));
        auto bt = param(name + ".bias", {oc}, std::move(bias));
        auto [input, pads] = window(x, kernel, stride, pad, name);
        const Shape& s = shape(x);
        auto t = act(name, {s[0], window_out(s[1], kernel, stride, pad),
                            window_out(s[2], kernel, stride, pad), oc});
        b.op(Op::conv2d, {input, wt, bt, zero_point(), zero_point()}, {t},
             vaccel::tosa::conv_attr(pads, {static_cast<std::int32_t>(stride), static_cast<std::int32_t>(stride)},
                                     {1, 1}, DType::fp32));
        return relu_after ? relu(t, name + ".relu") : t;
    }
    // Depthwise convolution (multiplier 1) + folded BatchNorm; weight [KH,KW,C,1].
    std::uint32_t depthwise_bn(std::uint32_t x, const std::string& name, std::int64_t kernel,
                               std::int64_t stride, std::int64_t pad)
    {
        const std::int64_t c = shape(x)[3];
        const std::int64_t fan_in = kernel * kernel;
        // Drawn as [C][KH*KW] so the fold is per row, then laid out [KH,KW,C,1].
        auto w = draw(c * fan_in, std::sqrt(6.0f / fan_in));
        auto bias = fold_batch_norm(w, c);
        std::vector<float> laid(w.size());
        for (std::int64_t ch = 0; ch < c; ++ch)
            for (std::int64_t k = 0; k < fan_in; ++k)
                laid[static_cast<std::size_t>(k * c + ch)] = w[static_cast<std::size_t>(ch * fan_in + k)];
        auto wt = param(name + ".weight", {kernel, kernel, c, 1}, std::move(laid));
        auto bt = param(name + ".bias", {c}, std::move(bias));
        auto [input, pads] = window(x, kernel, stride, pad, name);
        const Shape& s = shape(x);
        auto t = act(name, {s[0], window_out(s[1], kernel, stride, pad),
                            window_out(s[2], kernel, stride, pad), c});
        b.op(Op::depthwise_conv2d, {input, wt, bt, zero_point(), zero_point()}, {t},
             vaccel::tosa::conv_attr(pads, {static_cast<std::int32_t>(stride), static_cast<std::int32_t>(stride)},
                                     {1, 1}, DType::fp32));
        return t;
    }
    std::uint32_t max_pool(std::uint32_t x, std::int64_t kernel, std::int64_t stride, std::int64_t pad,
                           const std::string& name)
    {
        auto [input, pads] = window(x, kernel, stride, pad, name);
        const Shape& s = shape(x);
        auto t = act(name, {s[0], window_out(s[1], kernel, stride, pad),
                            window_out(s[2], kernel, stride, pad), s[3]});
        auto k = static_cast<std::int32_t>(kernel), st = static_cast<std::int32_t>(stride);
        b.op(Op::max_pool2d, {input}, {t}, vaccel::tosa::pool_attr({k, k}, {st, st}, pads));
        return t;
    }
    // Global average pool [N,H,W,C] -> [N,1,1,C].
    std::uint32_t global_avg_pool(std::uint32_t x, const std::string& name)
    {
        const Shape s = shape(x);
        auto t = act(name, {s[0], 1, 1, s[3]});
        b.op(Op::avg_pool2d, {x, zero_point(), zero_point()}, {t},
             vaccel::tosa::pool_attr({static_cast<std::int32_t>(s[1]), static_cast<std::int32_t>(s[2])},
                                     {1, 1}, {0, 0, 0, 0}, DType::fp32));
        return t;
    }
    // y = x W + b on [1, N, IN]: W [IN, OUT] uniform(+-sqrt(gain / IN)).
    std::uint32_t linear(std::uint32_t x, const std::string& name, std::int64_t out, float gain = 3.0f)
    {
        const std::int64_t in = shape(x)[2];
        auto w = param(name + ".weight", {in, out}, draw(in * out, std::sqrt(gain / in)), {1, in, out});
        auto bias = param(name + ".bias", {out}, draw(out, 0.1f), {1, 1, out});
        return binary(Op::add, matmul(x, w, name + ".matmul"), bias, name);
    }
    // LayerNorm over the last axis of [1, N, D]: gamma in [0.8, 1.2), beta +-0.1.
    std::uint32_t layer_norm(std::uint32_t x, const std::string& name, float eps)
    {
        const std::int64_t d = shape(x)[2];
        std::vector<float> gamma(static_cast<std::size_t>(d));
        for (float& g : gamma) g = rng_.between(0.8f, 1.2f);
        auto gt = param(name + ".gamma", {d}, std::move(gamma), {1, 1, d});
        auto bt = param(name + ".beta", {d}, draw(d, 0.1f), {1, 1, d});
        const float inv_d = 1.0f / static_cast<float>(d);
        auto mean = scale(reduce(Op::reduce_sum, x, 2, name + ".sum"), inv_d, name + ".mean");
        auto centered = binary(Op::sub, x, mean, name + ".centered");
        auto squares = binary(Op::mul, centered, centered, name + ".squares");
        auto var = scale(reduce(Op::reduce_sum, squares, 2, name + ".sumsq"), inv_d, name + ".var");
        auto inv = unary(Op::rsqrt, binary(Op::add, var, scalar(eps, 3), name + ".var_eps"),
                         name + ".rstd");
        auto normed = binary(Op::mul, centered, inv, name + ".normed");
        return binary(Op::add, binary(Op::mul, normed, gt, name + ".scaled"), bt, name);
    }
    // GELU, 0.5 x (1 + erf(x / sqrt 2)).
    std::uint32_t gelu_erf(std::uint32_t x, const std::string& name)
    {
        const auto r = shape(x).size();
        auto e = unary(Op::erf, scale(x, static_cast<float>(1.0 / std::sqrt(2.0)), name + ".scaled"),
                       name + ".erf");
        auto one_plus = binary(Op::add, e, scalar(1.0f, r), name + ".one_plus");
        return binary(Op::mul, scale(x, 0.5f, name + ".half"), one_plus, name);
    }
    // GELU, tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
    std::uint32_t gelu_tanh(std::uint32_t x, const std::string& name)
    {
        const auto r = shape(x).size();
        auto cube = binary(Op::mul, binary(Op::mul, x, x, name + ".sq"), x, name + ".cube");
        auto inner = binary(Op::add, x, scale(cube, 0.044715f, name + ".cube_scaled"), name + ".inner");
        auto t = unary(Op::tanh, scale(inner, static_cast<float>(std::sqrt(2.0 / M_PI)), name + ".arg"),
                       name + ".tanh");
        auto one_plus = binary(Op::add, t, scalar(1.0f, r), name + ".one_plus");
        return binary(Op::mul, scale(x, 0.5f, name + ".half"), one_plus, name);
    }
    // Multi-head self-attention on the [1, B*S, D] stream; `mask` an additive
    // [1, S, S] constant or none.
    std::uint32_t attention(std::uint32_t x, const std::string& name, std::int64_t batch,
                            std::int64_t seq, std::int64_t heads, std::optional<std::uint32_t> mask)
    {
        const std::int64_t d = shape(x)[2], dh = d / heads;
        auto q = linear(x, name + ".q", d);
        auto k = linear(x, name + ".k", d);
        auto v = linear(x, name + ".v", d);
        auto split = [&](std::uint32_t t, std::vector<std::int32_t> perms, const std::string& n) {
            auto four = reshape(t, {batch, seq, heads, dh}, n + ".heads");
            auto moved = transpose(four, std::move(perms), n + ".moved");
            const Shape& m = shape(moved);
            return reshape(moved, {batch * heads, m[2], m[3]}, n + ".batched");
        };
        auto qh = split(q, {0, 2, 1, 3}, name + ".q");  // [B*H, S, dh]
        auto kh = split(k, {0, 2, 3, 1}, name + ".k");  // [B*H, dh, S]
        auto vh = split(v, {0, 2, 1, 3}, name + ".v");  // [B*H, S, dh]
        auto scores = scale(matmul(qh, kh, name + ".qk"), static_cast<float>(1.0 / std::sqrt(dh)),
                            name + ".scores");
        if (mask) scores = binary(Op::add, scores, *mask, name + ".masked");
        auto top = reduce(Op::reduce_max, scores, 2, name + ".max");
        auto e = unary(Op::exp, binary(Op::sub, scores, top, name + ".shifted"), name + ".exp");
        auto inv = unary(Op::reciprocal, reduce(Op::reduce_sum, e, 2, name + ".denominator"),
                         name + ".inv");
        auto probs = binary(Op::mul, e, inv, name + ".probs");
        auto ctx = matmul(probs, vh, name + ".context");  // [B*H, S, dh]
        auto ctx4 = reshape(ctx, {batch, heads, seq, dh}, name + ".context4");
        auto merged = transpose(ctx4, {0, 2, 1, 3}, name + ".merged");
        auto flat = reshape(merged, {1, batch * seq, d}, name + ".flat");
        return linear(flat, name + ".out", d);
    }

private:
    // Draws BatchNorm's parameters for `channels` rows of `w` (row-major, one
    // row per channel), scales each row by gamma / sqrt(var + eps) and
    // returns the folded bias beta - mean * gamma / sqrt(var + eps).
    std::vector<float> fold_batch_norm(std::vector<float>& w, std::int64_t channels)
    {
        const std::size_t row = w.size() / static_cast<std::size_t>(channels);
        std::vector<float> bias(static_cast<std::size_t>(channels));
        for (std::int64_t c = 0; c < channels; ++c) {
            const double gamma = rng_.between(0.8f, 1.2f), beta = rng_.uniform(0.1f);
            const double mean = rng_.uniform(0.1f), var = rng_.between(0.8f, 1.25f);
            const double s = gamma / std::sqrt(var + 1e-5);
            for (std::size_t i = 0; i < row; ++i) {
                float& v = w[static_cast<std::size_t>(c) * row + i];
                v = static_cast<float>(v * s);
            }
            bias[static_cast<std::size_t>(c)] = static_cast<float>(beta - mean * s);
        }
        return bias;
    }

    DType dtype_;
    SplitMix64 rng_;
    std::uint64_t count_ = 0;
    std::map<std::string, std::uint32_t> scalars_;
    std::optional<std::uint32_t> zero_point_, shift_;
};

// What was built: the graph's input and output, and the description.
struct Built {
    std::uint32_t input = 0, output = 0;
    std::vector<float> input_values;
    json architecture;
};

// An input tensor drawn uniform in +-sqrt(3) (unit variance).
std::uint32_t make_input(Net& net, Built& built, const std::string& name, Shape shape)
{
    built.input_values = net.draw(elements(shape), std::sqrt(3.0f));
    built.input = net.b.tensor(name, std::move(shape), net.dtype());
    net.b.input(built.input);
    return built.input;
}

// The classifier head shared by the convolutional networks: global average
// pool, [N,1,1,C] -> [1,N,C], MATMUL FC + bias, -> logits [N, classes].
std::uint32_t classifier(Net& net, std::uint32_t x, std::int64_t batch, std::int64_t classes)
{
    auto pooled = net.global_avg_pool(x, "avgpool");
    const std::int64_t c = net.shape(pooled)[3];
    auto rows = net.reshape(pooled, {1, batch, c}, "avgpool.rows");
    auto logits3 = net.linear(rows, "fc", classes);
    auto logits = net.b.tensor("logits", {batch, classes}, net.dtype());
    net.b.op(Op::reshape, {logits3, net.shape_constant({batch, classes})}, {logits});
    return logits;
}

Built build_resnet(Net& net, const Options& o, bool bottleneck)
{
    Built built;
    const std::vector<int> blocks = bottleneck ? std::vector<int>{3, 4, 6, 3} : std::vector<int>{2, 2, 2, 2};
    const std::int64_t base = o.width ? o.width : 64, expansion = bottleneck ? 4 : 1;
    std::vector<std::int64_t> widths{base, base * 2, base * 4, base * 8};
    auto x = make_input(net, built, "image", {o.batch, o.image, o.image, 3});
    x = net.conv_bn(x, "conv1", base, 7, 2, 3, true);
    x = net.max_pool(x, 3, 2, 1, "maxpool");
    // The last convolution of each residual branch is scaled so the sum with
    // the shortcut grows slowly (a real trained network's last BatchNorm
    // gamma is small for the same reason).
    const float branch_gain = 0.5f;
    for (std::size_t stage = 0; stage < blocks.size(); ++stage) {
        for (int i = 0; i < blocks[stage]; ++i) {
            const std::string n = fmt::format("layer{}.{}", stage + 1, i);
            const std::int64_t stride = (i == 0 && stage > 0) ? 2 : 1;
            const std::int64_t out = widths[stage] * expansion;
            const std::int64_t in = net.shape(x)[3];
            std::uint32_t y;
            if (bottleneck) {  // ResNet v1.5: the stride is on the 3x3 convolution
                y = net.conv_bn(x, n + ".conv1", widths[stage], 1, 1, 0, true);
                y = net.conv_bn(y, n + ".conv2", widths[stage], 3, stride, 1, true);
                y = net.conv_bn(y, n + ".conv3", out, 1, 1, 0, false, branch_gain);
            } else {
                y = net.conv_bn(x, n + ".conv1", widths[stage], 3, stride, 1, true);
                y = net.conv_bn(y, n + ".conv2", out, 3, 1, 1, false, branch_gain);
            }
            std::uint32_t shortcut = x;
            if (stride != 1 || in != out)
                shortcut = net.conv_bn(x, n + ".downsample", out, 1, stride, 0, false);
            x = net.relu(net.binary(Op::add, y, shortcut, n + ".sum"), n + ".relu");
        }
    }
    built.output = classifier(net, x, o.batch, o.classes);
    built.architecture = {{"block", bottleneck ? "bottleneck" : "basic"},
                          {"blocks", blocks},
                          {"widths", widths},
                          {"expansion", expansion},
                          {"stem", {{"kernel", 7}, {"stride", 2}, {"pad", 3}, {"channels", base}}},
                          {"max_pool", {{"kernel", 3}, {"stride", 2}, {"pad", 1}}},
                          {"stride_on", bottleneck ? "conv2" : "conv1"},
                          {"classes", o.classes}};
    return built;
}

// torchvision's _make_divisible: channels rounded to a multiple of 8, never
// below 90% of the asked number.
std::int64_t divisible(double value)
{
    std::int64_t v = std::max<std::int64_t>(8, static_cast<std::int64_t>(value + 4) / 8 * 8);
    if (v < 0.9 * value) v += 8;
    return v;
}

Built build_mobilenetv2(Net& net, const Options& o)
{
    Built built;
    const double mult = o.width ? static_cast<double>(o.width) / 32.0 : 1.0;
    const int settings[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
                                {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
    const std::int64_t stem = divisible(32 * mult), head = divisible(1280 * std::max(1.0, mult));
    auto x = make_input(net, built, "image", {o.batch, o.image, o.image, 3});
    x = net.clamp(net.conv_bn(x, "features.0", stem, 3, 2, 1, false, std::sqrt(2.0f)), 0, 6,
                  "features.0.relu6");
    json described = json::array();
    int index = 1;
    for (const auto& s : settings) {
        const std::int64_t out = divisible(s[1] * mult);
        for (int i = 0; i < s[2]; ++i, ++index) {
            const std::string n = fmt::format("features.{}", index);
            const std::int64_t in = net.shape(x)[3], stride = i == 0 ? s[3] : 1;
            const std::int64_t hidden = in * s[0];
            const bool residual = stride == 1 && in == out;
            std::uint32_t y = x;
            if (s[0] != 1)
                y = net.clamp(net.conv_bn(y, n + ".expand", hidden, 1, 1, 0, false, std::sqrt(2.0f)), 0,
                              6, n + ".expand.relu6");
            y = net.clamp(net.depthwise_bn(y, n + ".depthwise", 3, stride, 1), 0, 6,
                          n + ".depthwise.relu6");
            y = net.conv_bn(y, n + ".project", out, 1, 1, 0, false, residual ? 0.5f : 1.0f);
            if (residual) y = net.binary(Op::add, x, y, n + ".sum");
            x = y;
            described.push_back({{"name", n}, {"in", in}, {"expand", s[0]}, {"hidden", hidden},
                                 {"out", out}, {"stride", stride}, {"residual", residual}});
        }
    }
    const std::string n = fmt::format("features.{}", index);
    x = net.clamp(net.conv_bn(x, n, head, 1, 1, 0, false, std::sqrt(2.0f)), 0, 6, n + ".relu6");
    built.output = classifier(net, x, o.batch, o.classes);
    built.architecture = {{"stem", {{"name", "features.0"}, {"kernel", 3}, {"stride", 2}, {"pad", 1},
                                    {"channels", stem}}},
                          {"blocks", described},
                          {"head", {{"name", n}, {"channels", head}}},
                          {"activation", "relu6"},
                          {"classes", o.classes}};
    return built;
}

// The [1, S, S] causal mask: 0 where key <= query, `masked` above.
std::uint32_t causal_mask(Net& net, std::int64_t seq, float masked)
{
    std::vector<float> values(static_cast<std::size_t>(seq * seq));
    for (std::int64_t q = 0; q < seq; ++q)
        for (std::int64_t k = 0; k < seq; ++k)
            values[static_cast<std::size_t>(q * seq + k)] = k <= q ? 0.0f : masked;
    return net.constant("causal_mask", {1, seq, seq}, values);
}

Built build_transformer(Net& net, const Options& o, bool gpt2)
{
    Built built;
    const std::int64_t layers = o.layers >= 0 ? o.layers : (gpt2 ? 1 : 12);
    const std::int64_t d = o.hidden, ffn = o.ffn ? o.ffn : 4 * o.hidden;
    const float eps = gpt2 ? 1e-5f : 1e-12f;
    // Large enough that exp() of a masked score is 0, small enough for FP16.
    const float masked = net.fp16() ? -1e4f : -1e9f;
    auto x = make_input(net, built, "hidden_states", {o.batch, o.seq, d});
    auto h = net.reshape(x, {1, o.batch * o.seq, d}, "stream");
    std::optional<std::uint32_t> mask;
    if (gpt2) mask = causal_mask(net, o.seq, masked);
    for (std::int64_t l = 0; l < layers; ++l) {
        const std::string n = fmt::format("layer.{}", l);
        if (gpt2) {  // pre-LayerNorm: x + attn(ln1(x)), then x + mlp(ln2(x))
            auto a = net.attention(net.layer_norm(h, n + ".ln1", eps), n + ".attn", o.batch, o.seq,
                                   o.heads, mask);
            h = net.binary(Op::add, h, a, n + ".attn.residual");
            auto m = net.linear(net.layer_norm(h, n + ".ln2", eps), n + ".mlp.fc", ffn);
            m = net.linear(net.gelu_tanh(m, n + ".mlp.gelu"), n + ".mlp.proj", d, 1.5f);
            h = net.binary(Op::add, h, m, n + ".mlp.residual");
        } else {  // post-LayerNorm: ln(x + attn(x)), then ln(x + ffn(x))
            auto a = net.attention(h, n + ".attention", o.batch, o.seq, o.heads, std::nullopt);
            h = net.layer_norm(net.binary(Op::add, h, a, n + ".attention.residual"),
                               n + ".attention.ln", eps);
            auto f = net.linear(h, n + ".ffn.in", ffn);
            f = net.linear(net.gelu_erf(f, n + ".ffn.gelu"), n + ".ffn.out", d, 1.5f);
            h = net.layer_norm(net.binary(Op::add, h, f, n + ".ffn.residual"), n + ".ffn.ln", eps);
        }
    }
    auto out = net.b.tensor("output", {o.batch, o.seq, d}, net.dtype());
    net.b.op(Op::reshape, {h, net.shape_constant({o.batch, o.seq, d})}, {out});
    built.output = out;
    built.architecture = {{"layers", layers}, {"hidden", d},         {"heads", o.heads},
                          {"ffn", ffn},       {"seq", o.seq},        {"layer_norm_eps", eps},
                          {"gelu", gpt2 ? "tanh" : "erf"},
                          {"norm", gpt2 ? "pre" : "post"},
                          {"causal", gpt2}};
    if (gpt2) built.architecture["mask_value"] = masked;
    return built;
}

bool write_bytes(const fs::path& path, const std::vector<std::uint8_t>& bytes)
{
    std::FILE* file = std::fopen(path.c_str(), "wb");
    if (!file) return false;
    bool ok = std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
    return std::fclose(file) == 0 && ok;
}

vaccel::npy::Array f32_array(const Shape& shape, const std::vector<float>& values)
{
    vaccel::npy::Array array{vaccel::npy::DType::f4, shape, {}};
    array.data.resize(values.size() * 4);
    std::memcpy(array.data.data(), values.data(), array.data.size());
    return array;
}

// A decimal integer, or a hexadecimal one after 0x.
std::optional<std::int64_t> parse_int(std::string_view text)
{
    const bool hex = text.starts_with("0x");
    if (hex) text.remove_prefix(2);
    std::uint64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, hex ? 16 : 10);
    if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
    return static_cast<std::int64_t>(value);
}

constexpr const char* usage =
    "usage: make-network NAME OUT_DIR [--batch N] [--dtype fp32|fp16] [--image H] [--classes K]\n"
    "         [--width W] [--layers L] [--hidden D] [--heads H] [--ffn F] [--seq S] [--seed X]\n"
    "  NAME: resnet18, resnet50, mobilenetv2, bert, gpt2-block (docs/networks.md)\n";

std::optional<Options> parse_options(int argc, char** argv)
{
    if (argc < 3) {
        fmt::print(stderr, "{}", usage);
        return std::nullopt;
    }
    Options o;
    o.name = argv[1];
    o.out = argv[2];
    const std::vector<std::string> names{"resnet18", "resnet50", "mobilenetv2", "bert", "gpt2-block"};
    if (std::find(names.begin(), names.end(), o.name) == names.end()) {
        fmt::print(stderr, "make-network: unknown network '{}': give one of resnet18, resnet50, "
                           "mobilenetv2, bert, gpt2-block\n", o.name);
        return std::nullopt;
    }
    std::map<std::string, std::int64_t*> numbers{
        {"--batch", &o.batch}, {"--image", &o.image},   {"--classes", &o.classes},
        {"--width", &o.width}, {"--layers", &o.layers}, {"--hidden", &o.hidden},
        {"--heads", &o.heads}, {"--ffn", &o.ffn},       {"--seq", &o.seq}};
    for (int i = 3; i < argc; i += 2) {
        const std::string flag = argv[i];
        if (i + 1 >= argc) {
            fmt::print(stderr, "make-network: {} needs a value\n{}", flag, usage);
            return std::nullopt;
        }
        const std::string value = argv[i + 1];
        if (flag == "--dtype") {
            if (value != "fp32" && value != "fp16") {
                fmt::print(stderr, "make-network: --dtype {} refused: give fp32 or fp16\n", value);
                return std::nullopt;
            }
            o.dtype = value == "fp16" ? DType::fp16 : DType::fp32;
        } else if (flag == "--seed") {
            auto v = parse_int(value);
            if (!v) {
                fmt::print(stderr, "make-network: --seed {} is not an integer (decimal or 0x hex)\n", value);
                return std::nullopt;
            }
            o.seed = static_cast<std::uint64_t>(*v);
        } else if (auto it = numbers.find(flag); it != numbers.end()) {
            auto v = parse_int(value);
            if (!v || *v < (flag == "--layers" || flag == "--width" || flag == "--ffn" ? 0 : 1)) {
                fmt::print(stderr, "make-network: {} {} refused: give a positive integer\n", flag, value);
                return std::nullopt;
            }
            *it->second = *v;
        } else {
            fmt::print(stderr, "make-network: unknown option {}\n{}", flag, usage);
            return std::nullopt;
        }
    }
    if ((o.name == "bert" || o.name == "gpt2-block") && o.hidden % o.heads != 0) {
        fmt::print(stderr, "make-network: --hidden {} is not a multiple of --heads {}: attention "
                           "splits the hidden size evenly between heads\n", o.hidden, o.heads);
        return std::nullopt;
    }
    const std::int64_t smallest = o.name == "mobilenetv2" ? 32 : o.name.starts_with("resnet") ? 32 : 1;
    if (o.image < smallest) {
        fmt::print(stderr, "make-network: --image {} refused: {} downsamples by 32, give at least 32\n",
                   o.image, o.name);
        return std::nullopt;
    }
    return o;
}

json tensor_json(const vaccel::tosa::Tensor& t, const std::string& file = {})
{
    json j = {{"name", t.name}, {"shape", t.shape},
              {"dtype", t.dtype == DType::fp16 ? "float16" : "float32"}};
    if (!file.empty()) j["file"] = file;
    return j;
}

}  // namespace

int main(int argc, char** argv)
{
    auto options = parse_options(argc, argv);
    if (!options) return 2;
    const Options& o = *options;
    std::error_code ec;
    fs::create_directories(o.out / "weights", ec);
    if (ec) {
        fmt::print(stderr, "make-network: cannot create {}: {}\n", (o.out / "weights").string(),
                   ec.message());
        return 1;
    }

    Net net(o.dtype, o.seed);
    Built built;
    if (o.name == "resnet18" || o.name == "resnet50")
        built = build_resnet(net, o, o.name == "resnet50");
    else if (o.name == "mobilenetv2")
        built = build_mobilenetv2(net, o);
    else
        built = build_transformer(net, o, o.name == "gpt2-block");
    net.b.output(built.output);
    const auto input_tensor = net.b.block().tensors[built.input];
    const auto output_tensor = net.b.block().tensors[built.output];

    auto model = vaccel::tosa::serialize(net.b.finish());
    if (model.size() > vaccel::tosa::max_artifact_bytes) {
        fmt::print(stderr,
                   "make-network: refused: the {} {} program would be {} MiB, more than the {} MiB a "
                   "TOSA file may hold in this build (vaccel::tosa::max_artifact_bytes), so no device "
                   "could load it; ask for --dtype fp16 (half the bytes) or fewer --layers or a "
                   "smaller --hidden\n",
                   o.name, o.dtype == DType::fp16 ? "fp16" : "fp32", model.size() >> 20,
                   vaccel::tosa::max_artifact_bytes >> 20);
        return 1;
    }
    // The file must read back as TOSA 1.0 before anyone runs it.
    auto parsed = vaccel::tosa::parse(std::as_bytes(std::span(model)));
    if (!parsed) {
        fmt::print(stderr, "make-network: the generated {} does not parse: {}\n", o.name,
                   vaccel::describe(parsed.error()));
        return 1;
    }
    if (!write_bytes(o.out / "model.tosa", model)) {
        fmt::print(stderr, "make-network: cannot write {}\n", (o.out / "model.tosa").string());
        return 1;
    }

    // The input: float32, or float16 (rounded as the FP16 constants are).
    const std::string input_file = input_tensor.name + ".npy";
    vaccel::npy::Array input = f32_array(input_tensor.shape, built.input_values);
    if (o.dtype == DType::fp16)
        input = vaccel::npy::Array{vaccel::npy::DType::f2, input_tensor.shape,
                                   vaccel::tosa::f16_bytes(built.input_values)};
    std::vector<std::pair<fs::path, vaccel::npy::Array>> files;
    files.emplace_back(o.out / input_file, std::move(input));
    json params = json::array();
    for (const Param& p : net.params) {
        params.push_back({{"name", p.name}, {"shape", p.shape}, {"file", "weights/" + p.name + ".npy"}});
        files.emplace_back(o.out / "weights" / (p.name + ".npy"), f32_array(p.shape, p.values));
    }
    for (const auto& [path, array] : files) {
        auto written = vaccel::npy::write_file(path, array);
        if (!written) {
            fmt::print(stderr, "make-network: {}\n", written.error().message);
            return 1;
        }
    }

    std::int64_t count = 0;
    for (const Param& p : net.params) count += elements(p.shape);
    json description = {
        {"name", o.name},
        {"dtype", o.dtype == DType::fp16 ? "fp16" : "fp32"},
        {"options",
         {{"batch", o.batch}, {"image", o.image}, {"classes", o.classes}, {"width", o.width},
          {"layers", o.layers}, {"hidden", o.hidden}, {"heads", o.heads}, {"ffn", o.ffn},
          {"seq", o.seq}, {"seed", fmt::format("{:#x}", o.seed)}}},
        {"layout",
         {{"activations", o.name == "bert" || o.name == "gpt2-block" ? "[batch, seq, hidden]" : "NHWC"},
          {"conv2d_weight", "[OC, KH, KW, IC]"},
          {"depthwise_weight", "[KH, KW, C, 1]"},
          {"linear_weight", "[IN, OUT], y = x W + b"},
          {"batch_norm", "folded into the preceding convolution's weight and bias"},
          {"weights_dtype", "float32 (the fp16 model's constants are these rounded to FP16)"}}},
        {"architecture", built.architecture},
        {"inputs", json::array({tensor_json(input_tensor, input_file)})},
        {"outputs", json::array({tensor_json(output_tensor)})},
        {"parameter_count", count},
        {"parameters", params},
    };
    std::FILE* file = std::fopen((o.out / "network.json").c_str(), "w");
    const std::string text = description.dump(1) + "\n";
    if (!file || std::fwrite(text.data(), 1, text.size(), file) != text.size() || std::fclose(file) != 0) {
        fmt::print(stderr, "make-network: cannot write {}\n", (o.out / "network.json").string());
        return 1;
    }
    fmt::print("make-network: {} {} -> {} ({} parameters, {} operators)\n", o.name,
               o.dtype == DType::fp16 ? "fp16" : "fp32", o.out.string(), count,
               parsed->regions.front().blocks.front().operators.size());
    return 0;
}
