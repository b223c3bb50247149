// kernels_spatial.hpp - the CPU backend's pooling and convolution kernels
// beyond CONV2D: MAX_POOL2D, AVG_POOL2D, DEPTHWISE_CONV2D, TRANSPOSE_CONV2D,
// CONV3D, on raw NHWC / NDHWC tensors.
//
// Owns nothing: every kernel reads and writes memory its caller owns.
// Decides the numerics of these operators (TOSA 1.0 semantics;
// docs/operators.md lists the tolerance the tests hold them to):
//  - MAX_POOL2D (FP32) follows nan_mode: PROPAGATE gives NaN when any value
//    of the window is NaN; IGNORE skips NaNs and gives NaN only when every
//    value of the window is NaN; -0 orders below +0 (as MAXIMUM does).
//    INT8 takes the largest value. Padding never takes part: TOSA 1.0 keeps
//    every pad below the kernel size, so each window holds an input value;
//  - AVG_POOL2D sums the window's input values in float in (ky, kx) order
//    and divides once by their count (padding is not counted);
//  - the convolutions accumulate in float from zero in (ky, kx) order
//    (CONV3D: (kd, ky, kx, ic); TRANSPOSE_CONV2D: (ky, kx, ic)), skipping
//    taps that fall on padding, then add the bias once, as TOSA 1.0 writes
//    it (out = acc + bias).
// Shapes and attributes arrive already checked (plan.cpp): kernels do not
// validate them again.
#pragma once

#include <cstdint>

#include "kernels.hpp"

namespace vaccel::backend::cpu {

// A pooling window over input [n, ih, iw, c] giving output [n, oh, ow, c].
struct Pool2dGeometry {
    std::int64_t n = 0, ih = 0, iw = 0, c = 0;
    std::int64_t oh = 0, ow = 0;
    std::int64_t kernel_y = 1, kernel_x = 1;
    std::int64_t stride_y = 1, stride_x = 1;
    std::int64_t pad_top = 0, pad_left = 0;
};

// nan_propagate: TOSA nan_mode PROPAGATE, else IGNORE.
void max_pool2d(const float* in, float* out, const Pool2dGeometry& geometry, bool nan_propagate);
void max_pool2d(const std::int8_t* in, std::int8_t* out, const Pool2dGeometry& geometry);
void avg_pool2d(const float* in, float* out, const Pool2dGeometry& geometry);

// Input [n, ih, iw, ic] (ic: the C of TOSA), weight [kh, kw, ic, m] with
// m = oc / ic, output [n, oh, ow, oc]: output channel c * m + j reads input
// channel c only. Uses Conv2dGeometry's fields with those meanings.
void depthwise_conv2d(const float* in, const float* weight, const float* bias, float* out,
                      const Conv2dGeometry& geometry);

// Input [n, ih, iw, ic], weight [oc, kh, kw, ic], output [n, oh, ow, oc];
// pad_top and pad_left are TOSA's out_pad top and left (may be negative).
// Output (oy, ox) takes tap (ky, kx) from input (y / stride_y, x / stride_x)
// where y = oy - pad_top - ky, x = ox - pad_left - kx are non-negative
// multiples of the stride inside the input; dilation is unused.
void transpose_conv2d(const float* in, const float* weight, const float* bias, float* out,
                      const Conv2dGeometry& geometry);

struct Conv3dGeometry {
    std::int64_t n = 0, id = 0, ih = 0, iw = 0, ic = 0;  // input NDHWC
    std::int64_t oc = 0, kd = 0, kh = 0, kw = 0;         // weight [oc, kd, kh, kw, ic]
    std::int64_t od = 0, oh = 0, ow = 0;                 // output [n, od, oh, ow, oc]
    std::int64_t pad_front = 0, pad_top = 0, pad_left = 0;
    std::int64_t stride_d = 1, stride_y = 1, stride_x = 1;
    std::int64_t dilation_d = 1, dilation_y = 1, dilation_x = 1;
    bool bias_per_channel = true;  // bias [oc], else [1]
};
void conv3d(const float* in, const float* weight, const float* bias, float* out,
            const Conv3dGeometry& geometry);

}  // namespace vaccel::backend::cpu
