// bench_codec.cpp - cost of encoding and strictly decoding wire messages,
// against copying the same bytes (memcpy) in the same run.
#include <array>
#include <cstring>
#include <vector>

#include <benchmark/benchmark.h>

#include "vaccel/common/codec.hpp"

using namespace vaccel;

namespace {

struct Message {
    std::vector<std::byte> args;
    std::vector<std::byte> payload;
    std::uint32_t opcode;
};

Message submit_with_4_bindings()
{
    vaccel_submit submit{};
    submit.queue = 0x1001;
    submit.program = 0x2001;
    submit.binding_count = 4;
    std::array<vaccel_binding, 4> bindings{};
    for (std::uint32_t i = 0; i < 4; ++i)
        bindings[i] = vaccel_binding{i, i == 3 ? VACCEL_ACCESS_WRITE : VACCEL_ACCESS_READ,
                                     0x3000 + i, 0, 4096};
    auto args = bytes_of(submit);
    auto payload = bytes_of(std::span<const vaccel_binding>(bindings));
    return {{args.begin(), args.end()}, {payload.begin(), payload.end()}, VACCEL_OP_SUBMIT};
}

Message write_4k()
{
    vaccel_buffer_transfer transfer{};
    transfer.buffer = 0x3000;
    transfer.length = 4096;
    auto args = bytes_of(transfer);
    return {{args.begin(), args.end()}, std::vector<std::byte>(4096, std::byte{0x5a}),
            VACCEL_OP_BUFFER_WRITE};
}

// Encode into a reused buffer (no allocation), then decode it strictly.
void encode_decode(benchmark::State& state, const Message& m)
{
    std::vector<std::byte> wire;
    wire.reserve(sizeof(vaccel_msg_header) + m.args.size() + m.payload.size());
    std::uint64_t seq = 0;
    for (auto _ : state) {
        wire.clear();
        append_request(wire, m.opcode, ++seq, 0, m.args, m.payload);
        auto view = decode_request(wire);
        if (!view)
            state.SkipWithError("decode refused the message");
        benchmark::DoNotOptimize(view);
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * wire.size()));
}

// Baseline: copy the same number of bytes once (what any transport does).
void copy_baseline(benchmark::State& state, const Message& m)
{
    const std::size_t bytes = sizeof(vaccel_msg_header) + m.args.size() + m.payload.size();
    std::vector<std::byte> source(bytes, std::byte{1});
    std::vector<std::byte> target(bytes);
    for (auto _ : state) {
        std::memcpy(target.data(), source.data(), bytes);
        benchmark::DoNotOptimize(target.data());
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}

void BM_SubmitEncodeDecode(benchmark::State& state) { encode_decode(state, submit_with_4_bindings()); }
void BM_SubmitMemcpyBaseline(benchmark::State& state) { copy_baseline(state, submit_with_4_bindings()); }
void BM_Write4KEncodeDecode(benchmark::State& state) { encode_decode(state, write_4k()); }
void BM_Write4KMemcpyBaseline(benchmark::State& state) { copy_baseline(state, write_4k()); }

// The allocating encode_request() for comparison with the append variant.
void BM_SubmitEncodeAllocatingDecode(benchmark::State& state)
{
    const Message m = submit_with_4_bindings();
    for (auto _ : state) {
        auto wire = encode_request(m.opcode, 1, 0, m.args, m.payload);
        auto view = decode_request(wire);
        benchmark::DoNotOptimize(view);
    }
}

}  // namespace

BENCHMARK(BM_SubmitEncodeDecode);
BENCHMARK(BM_SubmitMemcpyBaseline);
BENCHMARK(BM_SubmitEncodeAllocatingDecode);
BENCHMARK(BM_Write4KEncodeDecode);
BENCHMARK(BM_Write4KMemcpyBaseline);

BENCHMARK_MAIN();
