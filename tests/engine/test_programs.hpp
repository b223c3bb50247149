// test_programs.hpp - small TOSA programs the engine and libvaccel tests run.
//
// Owns: the programs, built with the project's GraphBuilder and serialized
// to TOSA 1.0 flatbuffers. Decides: every program is FP32 (but INTDIV's); inputs are the
// first slots, outputs the last, in the order declared here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "vaccel/tosa/builder.hpp"
#include "vaccel/tosa/graph.hpp"

namespace vaccel::test {

inline std::vector<std::byte> as_bytes(const std::vector<std::uint8_t>& data)
{
    std::vector<std::byte> out(data.size());
    for (std::size_t i = 0; i < data.size(); ++i)
        out[i] = static_cast<std::byte>(data[i]);
    return out;
}

// c = a + b, each of shape [n]: slots 0 = a, 1 = b, 2 = c.
inline std::vector<std::byte> add_program(std::int64_t n)
{
    tosa::GraphBuilder builder;
    const auto a = builder.tensor("a", {n}, tosa::DType::fp32);
    const auto b = builder.tensor("b", {n}, tosa::DType::fp32);
    const auto c = builder.tensor("c", {n}, tosa::DType::fp32);
    builder.op(tosa::Op::add, {a, b}, {c});
    builder.input(a);
    builder.input(b);
    builder.output(c);
    return as_bytes(tosa::serialize(builder.finish()));
}

// c = a x b with a, b, c of shape [1, n, n]: slots 0 = a, 1 = b, 2 = c.
// Large n keeps a submission pending for a while.
inline std::vector<std::byte> matmul_program(std::int64_t n)
{
    tosa::GraphBuilder builder;
    const float zero[1] = {0.0f};
    const auto a = builder.tensor("a", {1, n, n}, tosa::DType::fp32);
    const auto b = builder.tensor("b", {1, n, n}, tosa::DType::fp32);
    const auto a_zp = builder.constant_f32("a_zp", {1}, zero);
    const auto b_zp = builder.constant_f32("b_zp", {1}, zero);
    const auto c = builder.tensor("c", {1, n, n}, tosa::DType::fp32);
    builder.op(tosa::Op::matmul, {a, b, a_zp, b_zp}, {c});
    builder.input(a);
    builder.input(b);
    builder.output(c);
    return as_bytes(tosa::serialize(builder.finish()));
}

// c = a / b (TOSA INTDIV) on INT32 of shape [n]: slots 0 = a, 1 = b, 2 = c.
// A zero in b fails the run after it was accepted (VACCEL_D_EXECUTION).
inline std::vector<std::byte> intdiv_program(std::int64_t n)
{
    tosa::GraphBuilder builder;
    const auto a = builder.tensor("a", {n}, tosa::DType::int32);
    const auto b = builder.tensor("b", {n}, tosa::DType::int32);
    const auto c = builder.tensor("c", {n}, tosa::DType::int32);
    builder.op(tosa::Op::intdiv, {a, b}, {c});
    builder.input(a);
    builder.input(b);
    builder.output(c);
    return as_bytes(tosa::serialize(builder.finish()));
}

}  // namespace vaccel::test
