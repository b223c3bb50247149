// kernels_data.hpp - the CPU backend's kernels for indexing, conversion,
// logical, resampling and Fourier operators (GATHER SCATTER, CAST,
// LOGICAL_AND/OR/XOR/NOT REDUCE_ALL/ANY, RESIZE, FFT2D RFFT2D).
//
// Owns nothing: every kernel reads and writes memory its caller owns.
// Decides the numerics of these operators (docs/operators.md lists them):
//  - GATHER and SCATTER copy elements bit for bit, of any stored dtype; an
//    index outside [0, K), or (SCATTER) an index written twice in one batch,
//    is reported back instead of being used: TOSA 1.0 leaves the result
//    unpredictable (REQUIRE), and the backend never reads or writes out of
//    bounds for it;
//  - CAST follows TOSA 1.0: float to integer rounds to nearest, ties to even,
//    and saturates (+-Inf to the extremes, NaN to 0: the backend's choice,
//    TOSA 1.0 does not define it); integer narrowing keeps the low bits
//    (two's complement wrap); integer to FP32 rounds to nearest; to BOOL is
//    x != 0; from BOOL is 0 or 1;
//  - RESIZE computes in float with the TOSA 1.0 formula (the fraction dy is
//    the remainder over scale_n; BILINEAR sums the four weighted corners in
//    the order v00, v01, v10, v11);
//  - FFT2D and RFFT2D compute in double (radix-2 transforms of every row,
//    then of every column) and round each result to float once; the inverse
//    is not scaled.
// Shapes and attributes arrive already checked (plan.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels.hpp"
#include "vaccel/tosa/graph.hpp"

namespace vaccel::backend::cpu {

// Where GATHER or SCATTER met an index it must not use.
struct IndexFault {
    enum class Kind : std::uint8_t { none, out_of_range, duplicate };
    Kind kind = Kind::none;
    std::int64_t batch = 0;     // n
    std::int64_t position = 0;  // w
    std::int32_t index = 0;     // indices[n, w]
};

// values [n, k, c], indices [n, w] -> out [n, w, c]; `element` bytes per
// element. Stops at the first index outside [0, k).
IndexFault gather(const std::byte* values, const std::int32_t* indices, std::byte* out,
                  std::int64_t n, std::int64_t k, std::int64_t w, std::int64_t c,
                  std::size_t element);

// out [n, k, c] = values_in, then out[i, indices[i, j], :] = input[i, j, :].
// Stops at the first index outside [0, k) or already written in its batch.
IndexFault scatter(const std::byte* values_in, const std::int32_t* indices,
                   const std::byte* input, std::byte* out, std::int64_t n, std::int64_t k,
                   std::int64_t w, std::int64_t c, std::size_t element);

// out[i] = CAST(in[i]) from dtype `from` to dtype `to` (FP32, INT8, INT16,
// INT32, BOOL; the pairs docs/operators.md lists).
void cast(tosa::DType from, const std::byte* in, tosa::DType to, std::byte* out,
          std::uint64_t count);

// BOOL operands (one byte, 0 or 1), broadcast like binary().
enum class Logical { land, lor, lxor };
void logical(Logical op, const std::uint8_t* a, Shape a_shape, const std::uint8_t* b,
             Shape b_shape, std::uint8_t* out, Shape out_shape);
void logical_not(const std::uint8_t* in, std::uint8_t* out, std::uint64_t count);

// REDUCE_ALL (all = true) or REDUCE_ANY along `axis`, which is kept as 1.
void reduce_bool(bool all, const std::uint8_t* in, Shape in_shape, std::int32_t axis,
                 std::uint8_t* out);

struct ResizeGeometry {
    std::int64_t n = 0, ih = 0, iw = 0, c = 0;  // input NHWC
    std::int64_t oh = 0, ow = 0;                // output [n, oh, ow, c]
    std::int64_t scale_y_n = 1, scale_y_d = 1, scale_x_n = 1, scale_x_d = 1;
    std::int64_t offset_y = 0, offset_x = 0;
    bool bilinear = false;  // else NEAREST_NEIGHBOR
};
void resize(const float* in, float* out, const ResizeGeometry& geometry);

// [n, h, w] complex (real and imaginary planes) -> [n, h, w]; inverse uses
// the positive exponent and is not divided by h * w.
void fft2d(const float* in_real, const float* in_imag, float* out_real, float* out_imag,
           std::int64_t n, std::int64_t h, std::int64_t w, bool inverse);
// [n, h, w] real -> [n, h, w / 2 + 1] complex, the forward transform.
void rfft2d(const float* in, float* out_real, float* out_imag, std::int64_t n, std::int64_t h,
            std::int64_t w);

}  // namespace vaccel::backend::cpu
