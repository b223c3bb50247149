// float_formats.hpp - the narrow float encodings the CPU backend stores:
// FP16, BF16, FP8E4M3 and FP8E5M2 (docs/adr/0011-narrow-floats-on-the-cpu.md).
//
// Decides: how each encoding widens to FP32 (always exact) and how a value
// narrows to it: round to nearest, ties to even, once, from the exact value.
// FP16 is IEEE binary16 with subnormals; BF16 is the upper 16 bits of
// binary32; FP8E4M3 and FP8E5M2 are the OCP 8-bit formats (E4M3: bias 7, no
// infinity, NaN only as S.1111.111, largest finite 448; E5M2: bias 15, IEEE
// infinities and NaNs, largest finite 57344). A magnitude that rounds past
// the largest finite value becomes infinity (FP16, BF16, E5M2) or NaN (E4M3),
// which is the OCP non-saturating mode TOSA 1.0 CAST requires for FP8. A NaN
// stays a NaN of the same sign, quiet, keeping the top bits of its payload.
#pragma once

#include <cstddef>
#include <cstdint>

#include "vaccel/tosa/graph.hpp"

namespace vaccel::backend::cpu {

// FP16, BF16, FP8E4M3 or FP8E5M2: stored narrow, computed in FP32.
bool is_narrow_float(tosa::DType dtype);
// FP32 or one of the narrow floats.
bool is_float(tosa::DType dtype);

// One element's bits (the low 8 or 16 bits of `bits`) as FP32. Exact.
float widen_bits(tosa::DType dtype, std::uint32_t bits);
// `value` rounded to `dtype` (see above), as its bits.
std::uint32_t narrow_bits(tosa::DType dtype, double value);

// Bulk forms over little-endian element bytes.
void widen(tosa::DType dtype, const std::byte* in, float* out, std::uint64_t count);
void narrow(tosa::DType dtype, const float* in, std::byte* out, std::uint64_t count);

// The first element of raw bytes in float `dtype` (FP32 included) as FP32:
// CLAMP bounds, PAD's pad_const and zero points. `bytes` must hold one element.
float read_float(tosa::DType dtype, const std::uint8_t* bytes);

// CAST where either side is a narrow float, over `count` elements: float to
// float and integer to float round once to nearest even; float to INT8,
// INT16 or INT32 rounds to nearest even and saturates, NaN giving 0 (as the
// FP32 CAST does).
void cast_narrow(tosa::DType from, const std::byte* in, tosa::DType to, std::byte* out,
                 std::uint64_t count);

}  // namespace vaccel::backend::cpu
