// support.hpp - shared pieces of the tosa tests: CMocka, fixture files,
// error assertions and hand-crafted flatbuffers (craft.cpp).
#pragma once

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <csetjmp>
#include <string>
#include <vector>

#include "cmocka.hpp"
#include "vaccel/tosa/builder.hpp"
#include "vaccel/tosa/graph.hpp"

namespace vaccel::tosa::test {

// Paths under the shared fixture folder.
inline const std::string add_tflite =
    VACCEL_FIXTURES "/v1.0-add_1x4x4x4_f32/flatbuffer-tflite/test_add_1x4x4x4_f32.tosa";
inline const std::string add_tf =
    VACCEL_FIXTURES "/v1.0-add_1x4x4x4_f32/flatbuffer-tf/test_add_1x4x4x4_f32.tosa";
inline const std::string conv2d = VACCEL_FIXTURES
    "/v1.0-conv2d_1x1_1x32x32x8_f32/flatbuffer-tflite/"
    "test_conv2d_1x1_1x32x32x8_f32_st11_padSAME_dilat11.tosa";
inline const std::string maxpool2d = VACCEL_FIXTURES "/v1.0-maxpool2d_int8/simple_maxpool2d.tosa";
inline const std::string lstm = VACCEL_FIXTURES
    "/v1.0-lstm_stateful_13x21x3_f32/flatbuffer-tflite/test_lstm_stateful_13x21x3_f32.tosa";
inline const std::string add_v080_tflite =
    VACCEL_FIXTURES "/v0.80-add_1x4x4x4_f32/flatbuffer-tflite/test_add_1x4x4x4_f32.tosa";
inline const std::string add_v080_tf =
    VACCEL_FIXTURES "/v0.80-add_1x4x4x4_f32/flatbuffer-tf/test_add_1x4x4x4_f32.tosa";

// COND_IF(p, x) -> y over FP32 [2] values, with two more regions "then"
// (EXP) and "else" (LOG), one block each taking and giving an FP32 [2]:
// the condition and result shapes are the caller's.
inline Graph cond_if_graph(std::vector<std::int64_t> condition, std::vector<std::int64_t> result)
{
    GraphBuilder b;
    const auto p = b.tensor("p", std::move(condition), DType::boolean);
    const auto x = b.tensor("x", {2}, DType::fp32);
    const auto y = b.tensor("y", std::move(result), DType::fp32);
    Attributes branches;
    branches.then_graph = "then";
    branches.else_graph = "else";
    b.op(Op::cond_if, {p, x}, {y}, branches);
    b.input(p);
    b.input(x);
    b.output(y);
    Graph graph = b.finish();
    for (const char* name : {"then", "else"}) {
        Block branch;
        branch.name = std::string(name) + "_bb";
        Tensor in;
        in.name = "in";
        in.shape = {2};
        in.dtype = DType::fp32;
        Tensor out = in;
        out.name = "out";
        branch.tensors = {in, out};
        Operator op;
        op.op = name[0] == 't' ? Op::exp : Op::log;
        op.attributes.present = true;
        op.inputs = {0};
        op.outputs = {1};
        branch.operators = {op};
        branch.inputs = {0};
        branch.outputs = {1};
        Region region;
        region.name = name;
        region.blocks = {branch};
        graph.regions.push_back(region);
    }
    return graph;
}

// The whole file; fails the test if it cannot be read.
std::vector<std::uint8_t> read_fixture(const std::string& path);

inline Result<Graph> parse_bytes(const std::vector<std::uint8_t>& bytes)
{
    return parse(std::as_bytes(std::span(bytes)));
}

// Parses and fails the test (printing the note) unless it succeeds.
Graph parse_ok(const std::vector<std::uint8_t>& bytes);

// Fails the test unless `result` is an error with exactly these values.
void expect_error(const Result<Graph>& result, Errc code, std::uint32_t detail,
                  std::uint64_t arg0);

// The index of the tensor called `name` in `block`; fails the test if none.
std::uint32_t tensor_index(const Block& block, const std::string& name);

// ----- hand-crafted files with one region and block "main" -----------------

struct RawTensor {
    std::string name;
    std::vector<std::int32_t> shape;
    std::uint32_t dtype = 7;  // FP32
    std::vector<std::uint8_t> data;
    bool unranked = false;
    std::uint64_t offset = 0, size = 0;
};

struct RawOperator {
    std::uint32_t op = 15;              // ADD
    std::uint32_t attribute_type = 15;  // written as an empty table; 0 = none
    std::vector<std::string> inputs, outputs;
};

struct RawGraph {
    std::int32_t major = 1, minor = 0, patch = 0;
    bool draft = false;
    std::vector<RawTensor> tensors;
    std::vector<RawOperator> operators;
    std::vector<std::string> inputs, outputs;
};

// A valid TOSA 1.0 ADD of two FP32[2] tensors ("a" + "b" -> "c").
RawGraph raw_add();
std::vector<std::uint8_t> craft(const RawGraph& graph);

}  // namespace vaccel::tosa::test
