// conv_graphs.hpp - CONV2D / DEPTHWISE_CONV2D graphs of one operator for the
// GPU backends' tests (CUDA and Vulkan), and a float64 reference of CONV2D (NHWC, TOSA's weight
// layout [OC,KH,KW,IC], zero padding, bias per channel or [1]).
#pragma once

#include <cstdint>
#include <vector>

#include "vaccel/tosa/builder.hpp"
#include "vaccel/tosa/graph.hpp"

namespace conv_test {

struct Conv {
    std::vector<std::int64_t> input, weight;  // [N,H,W,C], [OC,KH,KW,C] (depthwise [KH,KW,C,M])
    std::vector<std::int32_t> pad, stride, dilation;  // pad top, bottom, left, right
    std::int64_t bias = 0;  // 0: per channel, else its extent (1)
    vaccel::tosa::DType dtype = vaccel::tosa::DType::fp32;
    vaccel::tosa::Op op = vaccel::tosa::Op::conv2d;

    bool depthwise() const { return op == vaccel::tosa::Op::depthwise_conv2d; }
    std::int64_t oc() const { return depthwise() ? weight[2] * weight[3] : weight[0]; }
    std::int64_t kh() const { return depthwise() ? weight[0] : weight[1]; }
    std::int64_t kw() const { return depthwise() ? weight[1] : weight[2]; }
    std::int64_t oh() const
    {
        return (input[1] - 1 + pad[0] + pad[1] - (kh() - 1) * dilation[0]) / stride[0] + 1;
    }
    std::int64_t ow() const
    {
        return (input[2] - 1 + pad[2] + pad[3] - (kw() - 1) * dilation[1]) / stride[1] + 1;
    }
    std::int64_t bias_extent() const { return bias != 0 ? bias : oc(); }
};

// x, w, b in, y out (slots 0..3), zero points serialized constants.
inline vaccel::tosa::Graph conv_graph(const Conv& c)
{
    using vaccel::tosa::Op;
    vaccel::tosa::GraphBuilder g;
    const auto x = g.tensor("x", c.input, c.dtype);
    const auto w = g.tensor("w", c.weight, c.dtype);
    const auto b = g.tensor("b", {c.bias_extent()}, c.dtype);
    const auto zp = [&](const char* name) {
        const auto t = g.tensor(name, {1}, c.dtype,
                                std::vector<std::uint8_t>(vaccel::tosa::dtype_bytes(c.dtype), 0));
        g.op(Op::const_, {}, {t});
        return t;
    };
    const auto y = g.tensor("y", {c.input[0], c.oh(), c.ow(), c.oc()}, c.dtype);
    g.op(c.op, {x, w, b, zp("x_zp"), zp("w_zp")}, {y},
         vaccel::tosa::conv_attr(c.pad, c.stride, c.dilation, vaccel::tosa::DType::fp32));
    for (auto t : {x, w, b}) g.input(t);
    g.output(y);
    return g.finish();
}

// CONV2D in float64: each result, and the sum of its terms' magnitudes
// (what bounds its rounding error), NHWC.
struct ConvReference {
    std::vector<double> value, magnitude;
};
inline ConvReference conv_reference(const Conv& c, const std::vector<float>& x,
                                    const std::vector<float>& w, const std::vector<float>& b)
{
    const std::int64_t n = c.input[0], ih = c.input[1], iw = c.input[2], ic = c.input[3];
    const std::int64_t oc = c.oc(), kh = c.kh(), kw = c.kw(), oh = c.oh(), ow = c.ow();
    ConvReference r;
    r.value.resize(static_cast<std::size_t>(n * oh * ow * oc));
    r.magnitude.resize(r.value.size());
    std::size_t i = 0;
    for (std::int64_t in = 0; in < n; ++in)
        for (std::int64_t oy = 0; oy < oh; ++oy)
            for (std::int64_t ox = 0; ox < ow; ++ox)
                for (std::int64_t o = 0; o < oc; ++o, ++i) {
                    const double bias = b[static_cast<std::size_t>(c.bias != 0 ? 0 : o)];
                    double sum = bias, mag = bias < 0 ? -bias : bias;
                    for (std::int64_t ky = 0; ky < kh; ++ky) {
                        const std::int64_t iy = oy * c.stride[0] + ky * c.dilation[0] - c.pad[0];
                        if (iy < 0 || iy >= ih) continue;
                        for (std::int64_t kx = 0; kx < kw; ++kx) {
                            const std::int64_t ix = ox * c.stride[1] + kx * c.dilation[1] - c.pad[2];
                            if (ix < 0 || ix >= iw) continue;
                            for (std::int64_t ch = 0; ch < ic; ++ch) {
                                const double t =
                                    static_cast<double>(x[static_cast<std::size_t>(((in * ih + iy) * iw + ix) * ic + ch)]) *
                                    w[static_cast<std::size_t>(((o * kh + ky) * kw + kx) * ic + ch)];
                                sum += t;
                                mag += t < 0 ? -t : t;
                            }
                        }
                    }
                    r.value[i] = sum;
                    r.magnitude[i] = mag;
                }
    return r;
}

}  // namespace conv_test
