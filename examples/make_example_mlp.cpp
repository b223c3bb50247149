// make_example_mlp.cpp - writes the demo model, its input and its expected output.
//
// Owns: the example MLP and its numeric oracle. Decides: the model is
//   x [4,16] -RESHAPE-> [1,4,16] -MATMUL W1 [1,16,32]-> +b1 -CLAMP(0, 3.4e38)->
//   -MATMUL W2 [1,32,8]-> +b2 -SIGMOID-> [1,4,8] -RESHAPE-> y [4,8]
// in TOSA 1.0 (constants produced by CONST operators, reshape shapes by
// CONST_SHAPE, MATMUL zero points as FP32 [1] zeros, as real producers write
// them). Every weight, bias and input comes from splitmix64 with a fixed
// seed, so the files are the same on every build. expected.npy is computed
// here with plain loops in double precision and then rounded to float: an
// oracle independent of any vaccel backend.
//
// Usage: make-example-mlp OUTPUT_DIR  (writes mlp.tosa, input.npy, expected.npy)
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "vaccel/npy/npy.hpp"
#include "vaccel/tosa/builder.hpp"
#include "splitmix64.hpp"

namespace {

using vaccel::tosa::DType;
using vaccel::tosa::Op;

constexpr int rows = 4, in_features = 16, hidden = 32, out_features = 8;
constexpr std::uint64_t seed = 0x7661636365'6c2d31ull;  // "vaccel-1"

using vaccel::examples::SplitMix64;  // splitmix64.hpp

std::vector<float> draw(SplitMix64& rng, std::size_t count, float scale)
{
    std::vector<float> values(count);
    for (float& v : values)
        v = rng.uniform(scale);
    return values;
}

struct Weights {
    std::vector<float> x, w1, b1, w2, b2;
};

// The reference: double-precision loops over the same float values.
std::vector<float> reference(const Weights& p)
{
    std::vector<float> y(rows * out_features);
    for (int i = 0; i < rows; ++i) {
        double h[hidden];
        for (int j = 0; j < hidden; ++j) {
            double sum = 0;
            for (int k = 0; k < in_features; ++k)
                sum += static_cast<double>(p.x[i * in_features + k]) * p.w1[k * hidden + j];
            sum += p.b1[j];
            h[j] = sum > 0 ? sum : 0;
        }
        for (int m = 0; m < out_features; ++m) {
            double sum = 0;
            for (int j = 0; j < hidden; ++j)
                sum += h[j] * p.w2[j * out_features + m];
            sum += p.b2[m];
            y[i * out_features + m] = static_cast<float>(1.0 / (1.0 + std::exp(-sum)));
        }
    }
    return y;
}

std::vector<std::uint8_t> int64_bytes(std::vector<std::int64_t> values)
{
    std::vector<std::uint8_t> bytes(values.size() * 8);
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
}

vaccel::tosa::Graph build_model(const Weights& p)
{
    vaccel::tosa::GraphBuilder b;
    auto constant = [&](const char* name, std::vector<std::int64_t> shape,
                        const std::vector<float>& values) {
        auto t = b.constant_f32(name, std::move(shape), values);
        b.op(Op::const_, {}, {t});
        return t;
    };
    auto shape_constant = [&](const char* name, std::vector<std::int64_t> dims) {
        auto t = b.tensor(name, {static_cast<std::int64_t>(dims.size())}, DType::shape,
                          int64_bytes(dims));
        b.op(Op::const_shape, {}, {t});
        return t;
    };

    auto x = b.tensor("x", {rows, in_features}, DType::fp32);
    b.input(x);
    auto x_shape = shape_constant("x_shape", {1, rows, in_features});
    auto w1 = constant("w1", {1, in_features, hidden}, p.w1);
    auto b1 = constant("b1", {1, 1, hidden}, p.b1);
    auto w2 = constant("w2", {1, hidden, out_features}, p.w2);
    auto b2 = constant("b2", {1, 1, out_features}, p.b2);
    const std::vector<float> zero{0.0f};
    auto zp_a = constant("matmul_a_zp", {1}, zero);
    auto zp_b = constant("matmul_b_zp", {1}, zero);
    auto y_shape = shape_constant("y_shape", {rows, out_features});

    auto x3 = b.tensor("x3", {1, rows, in_features}, DType::fp32);
    auto h = b.tensor("hidden", {1, rows, hidden}, DType::fp32);
    auto hb = b.tensor("hidden_biased", {1, rows, hidden}, DType::fp32);
    auto relu = b.tensor("hidden_relu", {1, rows, hidden}, DType::fp32);
    auto o = b.tensor("logits", {1, rows, out_features}, DType::fp32);
    auto ob = b.tensor("logits_biased", {1, rows, out_features}, DType::fp32);
    auto s = b.tensor("probabilities", {1, rows, out_features}, DType::fp32);
    auto y = b.tensor("y", {rows, out_features}, DType::fp32);

    b.op(Op::reshape, {x, x_shape}, {x3});
    b.op(Op::matmul, {x3, w1, zp_a, zp_b}, {h});
    b.op(Op::add, {h, b1}, {hb});
    b.op(Op::clamp, {hb}, {relu}, vaccel::tosa::clamp_f32_attr(0.0f, 3.4e38f));
    b.op(Op::matmul, {relu, w2, zp_a, zp_b}, {o});
    b.op(Op::add, {o, b2}, {ob});
    b.op(Op::sigmoid, {ob}, {s});
    b.op(Op::reshape, {s, y_shape}, {y});
    b.output(y);
    return b.finish();
}

vaccel::npy::Array f32_array(std::vector<std::int64_t> shape, const std::vector<float>& values)
{
    vaccel::npy::Array array{vaccel::npy::DType::f4, std::move(shape), {}};
    array.data.resize(values.size() * 4);
    std::memcpy(array.data.data(), values.data(), array.data.size());
    return array;
}

bool write_bytes(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes)
{
    std::FILE* file = std::fopen(path.c_str(), "wb");
    if (!file)
        return false;
    bool ok = std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
    return std::fclose(file) == 0 && ok;
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc != 2) {
        fmt::print(stderr, "usage: make-example-mlp OUTPUT_DIR\n");
        return 2;
    }
    std::filesystem::path dir(argv[1]);
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
        fmt::print(stderr, "make-example-mlp: cannot create {}: {}\n", dir.string(), ec.message());
        return 1;
    }

    SplitMix64 rng(seed);
    Weights p;
    p.w1 = draw(rng, in_features * hidden, 0.25f);  // ~ 1/sqrt(in_features)
    p.b1 = draw(rng, hidden, 0.1f);
    p.w2 = draw(rng, hidden * out_features, 0.35f);  // ~ 2/sqrt(hidden)
    p.b2 = draw(rng, out_features, 0.1f);
    p.x = draw(rng, rows * in_features, 1.0f);

    auto model = vaccel::tosa::serialize(build_model(p));
    // The file must read back as TOSA 1.0 before anyone runs it.
    auto parsed = vaccel::tosa::parse(std::as_bytes(std::span(model)));
    if (!parsed) {
        fmt::print(stderr, "make-example-mlp: the generated model does not parse: {}\n",
                   vaccel::describe(parsed.error()));
        return 1;
    }
    if (!write_bytes(dir / "mlp.tosa", model)) {
        fmt::print(stderr, "make-example-mlp: cannot write {}\n", (dir / "mlp.tosa").string());
        return 1;
    }
    for (auto [name, array] :
         {std::pair{"input.npy", f32_array({rows, in_features}, p.x)},
          std::pair{"expected.npy", f32_array({rows, out_features}, reference(p))}}) {
        auto written = vaccel::npy::write_file(dir / name, array);
        if (!written) {
            fmt::print(stderr, "make-example-mlp: {}\n", written.error().message);
            return 1;
        }
    }
    return 0;
}
