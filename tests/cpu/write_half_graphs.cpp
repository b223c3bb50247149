// write_half_graphs.cpp - writes the TOSA files half_vaccelctl.sh runs:
//   half_add.tosa: FP16 x [4,8] + FP16 y [4,8] -> FP16 sum, and the sum CAST
//                  to FP32 as a second output;
//   bf16_abs.tosa: ABS of a BF16 [4] input (vaccelctl has no .npy for BF16).
// Usage: write_half_graphs DIRECTORY
#include <cstdio>
#include <fstream>
#include <string>

#include "vaccel/tosa/builder.hpp"
#include "vaccel/tosa/graph.hpp"

namespace {

using vaccel::tosa::DType;
using vaccel::tosa::Op;

bool write(const std::string& path, const vaccel::tosa::Graph& graph)
{
    const std::vector<std::uint8_t> bytes = vaccel::tosa::serialize(graph);
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    return static_cast<bool>(out);
}

vaccel::tosa::Graph half_add()
{
    vaccel::tosa::GraphBuilder g;
    const auto x = g.tensor("x", {4, 8}, DType::fp16);
    const auto y = g.tensor("y", {4, 8}, DType::fp16);
    const auto sum = g.tensor("sum", {4, 8}, DType::fp16);
    const auto wide = g.tensor("sum_fp32", {4, 8}, DType::fp32);
    g.op(Op::add, {x, y}, {sum});
    g.op(Op::cast, {sum}, {wide});
    g.input(x);
    g.input(y);
    g.output(sum);
    g.output(wide);
    return g.finish();
}

vaccel::tosa::Graph bf16_abs()
{
    vaccel::tosa::GraphBuilder g;
    const auto x = g.tensor("x", {4}, DType::bf16);
    const auto out = g.tensor("out", {4}, DType::bf16);
    g.op(Op::abs, {x}, {out});
    g.input(x);
    g.output(out);
    return g.finish();
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: write_half_graphs DIRECTORY\n");
        return 2;
    }
    const std::string dir = argv[1];
    if (!write(dir + "/half_add.tosa", half_add()) || !write(dir + "/bf16_abs.tosa", bf16_abs())) {
        std::fprintf(stderr, "cannot write the graphs into %s\n", dir.c_str());
        return 1;
    }
    return 0;
}
