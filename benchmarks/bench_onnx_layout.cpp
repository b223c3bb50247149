// bench_onnx_layout.cpp - what keeping values NHWC between convolutions
// saves (onnx/src/lowering_layout.cpp), on the CPU device.
//
// A ResNet-style ONNX model made here (no download): a [1, 64, 56, 56]
// input through `blocks` basic blocks (Conv 3x3 -> BatchNormalization ->
// Relu -> Conv 3x3 -> BatchNormalization -> Add the block's input -> Relu),
// random weights. It is imported twice, as the importer does by default
// and with ImportOptions::transpose_per_node (each Conv between TRANSPOSEs
// of its own, the graph before values kept NHWC twins), and both graphs run
// through the CPU backend on every core, alternating over rounds (each the
// median of --runs). Prints each graph's TRANSPOSE count and median time,
// and the ratio. Nothing is asserted.
#include <onnx/onnx_pb.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <random>
#include <thread>

#include "support/backend_runs.hpp"
#include "vaccel/backend/cpu.hpp"
#include "vaccel/onnx/importer.hpp"

namespace {

using namespace vaccel;
using T = ::onnx::TensorProto;

std::string resnet_blocks(int blocks, std::int64_t channels, std::int64_t hw)
{
    ::onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(13);
    auto* g = m.mutable_graph();
    g->set_name("resnet_blocks");
    auto port = [&](::onnx::ValueInfoProto* v, const std::string& name) {
        v->set_name(name);
        auto* type = v->mutable_type()->mutable_tensor_type();
        type->set_elem_type(T::FLOAT);
        for (std::int64_t d : {std::int64_t{1}, channels, hw, hw}) type->mutable_shape()->add_dim()->set_dim_value(d);
    };
    port(g->add_input(), "x");
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    auto constant = [&](const std::string& name, std::vector<std::int64_t> dims, float scale, float offset) {
        auto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(T::FLOAT);
        std::int64_t count = 1;
        for (std::int64_t d : dims) t->add_dims(d), count *= d;
        for (std::int64_t i = 0; i < count; ++i) t->add_float_data(offset + scale * dist(rng));
    };
    auto node = [&](const char* op, std::vector<std::string> in, const std::string& out) {
        auto* n = g->add_node();
        n->set_op_type(op);
        for (const auto& i : in) n->add_input(i);
        n->add_output(out);
        return n;
    };
    std::string x = "x";
    for (int b = 0; b < blocks; ++b) {
        std::string v = x;
        for (int half = 0; half < 2; ++half) {
            const std::string p = "b" + std::to_string(b) + "_" + std::to_string(half);
            constant(p + "_w", {channels, channels, 3, 3}, 0.05f, 0.0f);
            for (const char* s : {"_s", "_b", "_m"}) constant(p + s, {channels}, 0.1f, s[1] == 's' ? 1.0f : 0.0f);
            constant(p + "_v", {channels}, 0.1f, 1.0f);
            auto* conv = node("Conv", {v, p + "_w"}, p + "_c");
            auto* pads = conv->add_attribute();
            pads->set_name("pads");
            pads->set_type(::onnx::AttributeProto::INTS);
            for (int i = 0; i < 4; ++i) pads->add_ints(1);
            node("BatchNormalization", {p + "_c", p + "_s", p + "_b", p + "_m", p + "_v"}, p + "_n");
            if (half == 1) {
                node("Add", {p + "_n", x}, p + "_a");
                node("Relu", {p + "_a"}, p + "_r");
            } else {
                node("Relu", {p + "_n"}, p + "_r");
            }
            v = p + "_r";
        }
        x = v;
    }
    node("Identity", {x}, "y");
    port(g->add_output(), "y");
    return m.SerializeAsString();
}

tosa::Graph imported(const std::string& model, bool per_node)
{
    vaccel::onnx::ImportOptions options;
    options.transpose_per_node = per_node;
    return bench::must(vaccel::onnx::import_model(std::as_bytes(std::span(model)), options), "import").graph;
}

long transposes(const tosa::Graph& g)
{
    const auto& ops = g.regions[0].blocks[0].operators;
    return std::ranges::count_if(ops, [](const tosa::Operator& o) { return o.op == tosa::Op::transpose; });
}

}  // namespace

int main(int argc, char** argv)
{
    CLI::App app{"bench_onnx_layout: NHWC kept between convolutions vs a TRANSPOSE pair per Conv, CPU device"};
    int blocks = 4, runs = 9, rounds = 5;
    app.add_option("--blocks", blocks, "basic blocks of 64 channels at 56 x 56")->check(CLI::Range(1, 16));
    app.add_option("--runs", runs, "runs per figure (median)")->check(CLI::Range(1, 1000));
    app.add_option("--rounds", rounds, "rounds alternating the two graphs")->check(CLI::Range(1, 100));
    CLI11_PARSE(app, argc, argv);
    bench::set_program_name("bench_onnx_layout");
    const std::string model = resnet_blocks(blocks, 64, 56);
    const tosa::Graph kept = imported(model, false), per_node = imported(model, true);
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    auto backend = backend::open_cpu_backend(backend::CpuOptions{threads});
    std::vector<double> ours, baseline, ratios;
    for (int r = 0; r < rounds; ++r) {
        const double b = bench::median_seconds(*backend, per_node, runs, true, VACCEL_DOMAIN_HOST);
        const double o = bench::median_seconds(*backend, kept, runs, true, VACCEL_DOMAIN_HOST);
        baseline.push_back(b);
        ours.push_back(o);
        ratios.push_back(o / b);
        std::printf("round %d: NHWC kept %.2f ms, TRANSPOSE pair per Conv %.2f ms, %.3fx\n", r + 1, o * 1e3, b * 1e3,
                    o / b);
    }
    auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    std::sort(ratios.begin(), ratios.end());
    std::printf("%d basic blocks (%d Convs, 64 x 56 x 56), %u threads, %d rounds of %d runs:\n", blocks, 2 * blocks,
                threads, rounds, runs);
    std::printf("  NHWC kept:              %ld TRANSPOSEs, median %.2f ms\n", transposes(kept), median(ours) * 1e3);
    std::printf("  TRANSPOSE pair per Conv: %ld TRANSPOSEs, median %.2f ms (baseline)\n", transposes(per_node),
                median(baseline) * 1e3);
    std::printf("  ratio %.3fx (rounds %.3f to %.3f)\n", median(ours) / median(baseline), ratios.front(), ratios.back());
    return 0;
}
