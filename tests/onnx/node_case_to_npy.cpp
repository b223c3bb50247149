// node_case_to_npy.cpp - node_case_to_npy CASE_DIR OUT_DIR: one ONNX node
// test's data set 0 as .npy files, for the vaccelctl test
// (vaccelctl_onnx.sh): OUT_DIR/in/NAME.npy per graph input and
// OUT_DIR/want/NAME.npy per output (FLOAT as <f4, INT64 as <i8), named by
// the model's own names. Prints one NAME=PATH line per input, in order.
#include <onnx/onnx_pb.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "vaccel/npy/npy.hpp"

namespace fs = std::filesystem;
using namespace vaccel;

static bool convert(const fs::path& pb, const fs::path& out)
{
    std::ifstream in(pb, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    ::onnx::TensorProto t;
    if (!t.ParseFromString(s.str())) return false;
    npy::Array a;
    a.shape.assign(t.dims().begin(), t.dims().end());
    if (t.data_type() == ::onnx::TensorProto::FLOAT) {
        a.dtype = npy::DType::f4;
        if (!t.raw_data().empty()) a.data.assign(t.raw_data().begin(), t.raw_data().end());
        else
            for (float v : t.float_data()) {
                std::uint8_t b[4];
                std::memcpy(b, &v, 4);
                a.data.insert(a.data.end(), b, b + 4);
            }
    } else if (t.data_type() == ::onnx::TensorProto::INT64) {
        a.dtype = npy::DType::i8;
        if (!t.raw_data().empty()) a.data.assign(t.raw_data().begin(), t.raw_data().end());
        else
            for (std::int64_t v : t.int64_data()) {
                std::uint8_t b[8];
                std::memcpy(b, &v, 8);
                a.data.insert(a.data.end(), b, b + 8);
            }
    } else {
        return false;
    }
    return npy::write_file(out, a).has_value();
}

int main(int argc, char** argv)
{
    if (argc != 3) {
        std::fprintf(stderr, "usage: node_case_to_npy CASE_DIR OUT_DIR\n");
        return 2;
    }
    const fs::path dir = argv[1], out = argv[2];
    std::ifstream in(dir / "model.onnx", std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    ::onnx::ModelProto model;
    if (!model.ParseFromString(s.str())) return 1;
    std::set<std::string> inits;
    for (const auto& i : model.graph().initializer()) inits.insert(i.name());
    fs::create_directories(out / "in");
    fs::create_directories(out / "want");
    int n = 0;
    for (const auto& i : model.graph().input()) {
        if (inits.contains(i.name())) continue;
        const fs::path file = out / "in" / (i.name() + ".npy");
        if (!convert(dir / "test_data_set_0" / ("input_" + std::to_string(n++) + ".pb"), file))
            return 1;
        std::printf("%s=%s\n", i.name().c_str(), file.c_str());
    }
    n = 0;
    for (const auto& o : model.graph().output())
        if (!convert(dir / "test_data_set_0" / ("output_" + std::to_string(n++) + ".pb"),
                     out / "want" / (o.name() + ".npy")))
            return 1;
    return 0;
}
