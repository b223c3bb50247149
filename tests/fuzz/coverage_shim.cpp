// coverage_shim.cpp - lets libFuzzer steer by coverage of code built with g++.
//
// g++ 12 cannot emit libFuzzer's own instrumentation (-fsanitize=fuzzer), and
// clang 14 cannot compile this project (its C++23 library needs newer
// concepts). g++ does emit -fsanitize-coverage=trace-pc (a call per basic
// block) and trace-cmp (comparison operands, which libFuzzer uses directly).
// This file turns each trace-pc call into a hit on an 8-bit counter table
// that it registers with libFuzzer as "inline 8-bit counters", the form
// libFuzzer reads coverage from. libFuzzer's own __sanitizer_cov_trace_pc
// (which only refuses to run) is made weak in the archive at build time, so
// the definition below is the one linked.
//
// Invariant: only the fuzzer's thread runs instrumented code while an input
// executes; counters are plain bytes as libFuzzer expects (races would only
// blur coverage, never break memory safety).
#include <cstddef>
#include <cstdint>

extern "C" void __sanitizer_cov_8bit_counters_init(std::uint8_t* begin, std::uint8_t* end);

namespace {

constexpr std::size_t counter_bits = 16;
alignas(64) std::uint8_t counters[std::size_t{1} << counter_bits];

struct Registration {
    Registration() { __sanitizer_cov_8bit_counters_init(counters, counters + sizeof counters); }
} registration;

}  // namespace

// Called at every instrumented basic block: the caller's address names it.
extern "C" __attribute__((no_sanitize_address, no_sanitize_undefined)) void
__sanitizer_cov_trace_pc()
{
    const auto pc = reinterpret_cast<std::uintptr_t>(__builtin_return_address(0));
    const std::uintptr_t slot = (pc ^ (pc >> counter_bits)) & ((std::uintptr_t{1} << counter_bits) - 1);
    ++counters[slot];
}

// g++'s trace-cmp also reports float and double comparisons, which
// libFuzzer 14 has no hooks for; they carry nothing it could use, so they
// are accepted and ignored (code that compares floating point, such as a
// JSON library, then links).
extern "C" void __sanitizer_cov_trace_cmpf(float, float) {}
extern "C" void __sanitizer_cov_trace_cmpd(double, double) {}
