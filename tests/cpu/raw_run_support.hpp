// raw_run_support.hpp - running CPU backend programs on raw slot bytes, for
// the tests of operators whose operands are not all FP32 (INT8, INT16, INT32,
// BOOL) and of submissions that fail while running.
#pragma once

#include <cmath>
#include <string>

#include "cpu_test_support.hpp"

namespace cpu_test {

using Bytes = std::vector<std::uint8_t>;

template <class T>
Bytes to_bytes(const std::vector<T>& values)
{
    Bytes bytes(values.size() * sizeof(T));
    if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
}

template <class T>
std::vector<T> from_bytes(const Bytes& bytes)
{
    std::vector<T> values(bytes.size() / sizeof(T));
    if (!bytes.empty()) std::memcpy(values.data(), bytes.data(), bytes.size());
    return values;
}

// The outcome of one submission: its final status and each output slot's
// bytes afterwards (every output buffer starts filled with 0xA5).
struct RawRun {
    EventStatus status;
    std::vector<Bytes> outputs;
};

inline RawRun run_raw(Rig& rig, Program& program, const std::vector<Bytes>& inputs)
{
    const auto slots = program.slots();
    std::vector<std::unique_ptr<Buffer>> owned;
    std::vector<Buffer*> raw;
    for (std::uint32_t s = 0; s < slots.size(); ++s) {
        // A buffer of at least one byte, for empty (zero-element) slots.
        owned.push_back(rig.buffer(slots[s].bytes == 0 ? 1 : slots[s].bytes));
        const Bytes contents = s < program.input_count() ? inputs[s] : Bytes(slots[s].bytes, 0xA5);
        assert_int_equal(contents.size(), slots[s].bytes);
        if (!contents.empty())
            assert_ok(rig.backend->write_buffer(*owned.back(), 0, std::as_bytes(std::span(contents))));
        raw.push_back(owned.back().get());
    }
    auto event = cpu_test::submit(*rig.backend, *rig.queue, program, rig.bind(program, raw), 0);
    assert_ok(event);
    RawRun run;
    run.status = rig.wait(**event);
    assert_ok(rig.backend->destroy_event(*event));
    for (std::uint32_t s = program.input_count(); s < slots.size(); ++s) {
        Bytes bytes(slots[s].bytes);
        if (!bytes.empty())
            assert_ok(rig.backend->read_buffer(*owned[s], 0, std::as_writable_bytes(std::span(bytes))));
        run.outputs.push_back(std::move(bytes));
    }
    for (auto& b : owned) assert_ok(rig.backend->free_buffer(b));
    return run;
}

// Runs a program that must complete and returns its outputs' bytes.
inline std::vector<Bytes> run_ok(Rig& rig, Program& program, const std::vector<Bytes>& inputs)
{
    RawRun run = run_raw(rig, program, inputs);
    if (run.status.state != EventState::complete)
        fail_msg("submission ended in state %u: %s", static_cast<unsigned>(run.status.state),
                 run.status.failure.note.c_str());
#ifdef VACCEL_TEST_MIRROR
    std::vector<std::span<const std::byte>> in_bytes;
    for (const auto& b : inputs) in_bytes.push_back(std::as_bytes(std::span(b)));
    std::vector<std::vector<std::byte>> out_bytes;
    for (const auto& b : run.outputs) {
        const auto span = std::as_bytes(std::span(b));
        out_bytes.emplace_back(span.begin(), span.end());
    }
    DeviceMirror::get().ran(program, in_bytes, out_bytes);
#endif
    return std::move(run.outputs);
}

inline void assert_malformed(Result<std::unique_ptr<Program>> refused, std::uint32_t reason,
                             const char* note)
{
    assert_refused(refused, Errc::invalid_argument, VACCEL_D_TOSA_MALFORMED, reason, 0);
    assert_string_equal(refused.error().note.c_str(), note);
}

// |got - want| <= tolerance * (1 + |want|), against a float64 reference.
inline void assert_near(const std::vector<float>& got, const std::vector<double>& want,
                        double tolerance)
{
    assert_int_equal(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double error = std::fabs(static_cast<double>(got[i]) - want[i]);
        if (!(error <= tolerance * (1.0 + std::fabs(want[i]))))
            fail_msg("element %zu: got %.9g, want %.17g", i, static_cast<double>(got[i]), want[i]);
    }
}

}  // namespace cpu_test
