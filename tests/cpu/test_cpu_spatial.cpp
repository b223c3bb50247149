// test_cpu_spatial.cpp - MAX_POOL2D (FP32 and INT8), AVG_POOL2D,
// DEPTHWISE_CONV2D, TRANSPOSE_CONV2D and CONV3D run through the Backend
// interface, and their refusals of what TOSA 1.0 forbids.
//
// Expected values are derived by hand (in the comments) or by float64
// references written here in another form than the kernels: the input is
// padded explicitly (-inf for MAX_POOL2D, a NaN marker for AVG_POOL2D, zeros
// for the convolutions) and every window is then read densely;
// TRANSPOSE_CONV2D is a scatter of each input pixel into the output, where
// the kernel gathers. Bounds (docs/operators.md): MAX_POOL2D exact (any NaN
// matches any NaN); AVG_POOL2D rel 1e-6; the convolutions rel 1e-5, as
// |got - want| <= t * (1 + |want|).
#include <cmath>
#include <limits>
#include <string>

#include "cpu_test_support.hpp"

using namespace cpu_test;

namespace {

constexpr float nan = std::numeric_limits<float>::quiet_NaN();
constexpr double inf = std::numeric_limits<double>::infinity();
constexpr std::uint32_t propagate = 1;
constexpr std::uint32_t ignore = 2;

using Dims = std::vector<std::int64_t>;
using Ints = std::vector<std::int32_t>;

// ------------------------------------------------------------------ graphs

tosa::Attributes max_pool_attr(Ints kernel, Ints stride, Ints pad, std::uint32_t nan_mode)
{
    tosa::Attributes attributes = tosa::pool_attr(std::move(kernel), std::move(stride),
                                                  std::move(pad));
    attributes.nan_mode = nan_mode;
    return attributes;
}

using tosa::transpose_conv_attr;

// in -> MAX_POOL2D (operator 0) -> out.
tosa::Graph max_pool_graph(Dims in, Dims out, tosa::Attributes attributes,
                           DType dtype = DType::fp32)
{
    tosa::GraphBuilder g;
    const auto input = g.tensor("in", std::move(in), dtype);
    const auto output = g.tensor("out", std::move(out), dtype);
    g.op(Op::max_pool2d, {input}, {output}, attributes);
    g.input(input);
    g.output(output);
    return g.finish();
}

// in -> AVG_POOL2D (operator 2, after its two zero-point constants) -> out.
tosa::Graph avg_pool_graph(Dims in, Dims out, tosa::Attributes attributes, float input_zp = 0.0f,
                           float output_zp = 0.0f)
{
    tosa::GraphBuilder g;
    const auto input = f32(g, "in", std::move(in));
    const auto output = f32(g, "out", std::move(out));
    const auto izp = zero_point(g, "input_zp", input_zp);
    const auto ozp = zero_point(g, "output_zp", output_zp);
    g.op(Op::avg_pool2d, {input, izp, ozp}, {output}, attributes);
    g.input(input);
    g.output(output);
    return g.finish();
}

// in, weight, bias (graph inputs in that order) -> `op` (operator 2, after
// its two zero-point constants) -> out.
tosa::Graph conv_graph(Op op, Dims in, Dims weight, Dims bias, Dims out,
                       tosa::Attributes attributes, float input_zp = 0.0f,
                       float weight_zp = 0.0f)
{
    tosa::GraphBuilder g;
    const auto input = f32(g, "in", std::move(in));
    const auto w = f32(g, "weight", std::move(weight));
    const auto b = f32(g, "bias", std::move(bias));
    const auto output = f32(g, "out", std::move(out));
    const auto izp = zero_point(g, "input_zp", input_zp);
    const auto wzp = zero_point(g, "weight_zp", weight_zp);
    g.op(op, {input, w, b, izp, wzp}, {output}, attributes);
    g.input(input);
    g.input(w);
    g.input(b);
    g.output(output);
    return g.finish();
}

std::vector<float> run_once(tosa::Graph graph, const std::vector<std::vector<float>>& inputs)
{
    Rig rig;
    auto program = rig.must_load(std::move(graph));
    auto out = rig.run(*program, inputs)[0];
    rig.finish(program);
    return out;
}

// Bit-exact, except that any NaN matches any NaN.
void assert_same(const std::vector<float>& got, const std::vector<float>& want)
{
    assert_int_equal(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (std::isnan(want[i]) && std::isnan(got[i])) continue;
        if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0)
            fail_msg("element %zu: got %.9g, want %.9g", i, static_cast<double>(got[i]),
                     static_cast<double>(want[i]));
    }
}

void assert_malformed(Result<std::unique_ptr<Program>> refused, std::uint32_t reason,
                      const char* note)
{
    assert_refused(refused, Errc::invalid_argument, VACCEL_D_TOSA_MALFORMED, reason, 0);
    assert_string_equal(refused.error().note.c_str(), note);
}

// -------------------------------------------------------- float64 references

// A dense row-major array of any rank, in float64.
struct Dense {
    Dims shape;
    std::vector<double> values;

    std::size_t offset(const Dims& index) const
    {
        std::size_t at = 0;
        for (std::size_t d = 0; d < shape.size(); ++d)
            at = at * static_cast<std::size_t>(shape[d]) + static_cast<std::size_t>(index[d]);
        return at;
    }
    double at(const Dims& index) const { return values[offset(index)]; }
};

// x with before[d] / after[d] elements of `fill` added around dimension d.
Dense padded(const std::vector<float>& x, const Dims& shape, const Dims& before,
             const Dims& after, double fill)
{
    Dense out;
    for (std::size_t d = 0; d < shape.size(); ++d)
        out.shape.push_back(before[d] + shape[d] + after[d]);
    out.values.assign(elements(out.shape), fill);
    Dims index(shape.size(), 0);
    for (float value : x) {
        Dims target(shape.size());
        for (std::size_t d = 0; d < shape.size(); ++d) target[d] = index[d] + before[d];
        out.values[out.offset(target)] = value;
        for (std::size_t d = shape.size(); d-- > 0;) {
            if (++index[d] < shape[d]) break;
            index[d] = 0;
        }
    }
    return out;
}

// pad is TOSA's [top, bottom, left, right]; NHWC.
Dense padded_nhwc(const std::vector<float>& x, const Dims& shape, const Ints& pad, double fill)
{
    return padded(x, shape, {0, pad[0], pad[2], 0}, {0, pad[1], pad[3], 0}, fill);
}

std::vector<float> ref_max_pool(const std::vector<float>& x, const Dims& s, const Ints& kernel,
                                const Ints& stride, const Ints& pad)
{
    // -inf padding never wins: every window holds an input value.
    const Dense p = padded_nhwc(x, s, pad, -inf);
    const std::int64_t oh = (p.shape[1] - kernel[0]) / stride[0] + 1;
    const std::int64_t ow = (p.shape[2] - kernel[1]) / stride[1] + 1;
    std::vector<float> out;
    for (std::int64_t n = 0; n < s[0]; ++n)
        for (std::int64_t oy = 0; oy < oh; ++oy)
            for (std::int64_t ox = 0; ox < ow; ++ox)
                for (std::int64_t c = 0; c < s[3]; ++c) {
                    double best = -inf;
                    for (std::int64_t ky = 0; ky < kernel[0]; ++ky)
                        for (std::int64_t kx = 0; kx < kernel[1]; ++kx)
                            best = std::max(best, p.at({n, oy * stride[0] + ky,
                                                        ox * stride[1] + kx, c}));
                    out.push_back(static_cast<float>(best));
                }
    return out;
}

std::vector<float> ref_avg_pool(const std::vector<float>& x, const Dims& s, const Ints& kernel,
                                const Ints& stride, const Ints& pad)
{
    // NaN marks padding (the inputs have none): it is neither summed nor counted.
    const Dense p = padded_nhwc(x, s, pad, std::nan(""));
    const std::int64_t oh = (p.shape[1] - kernel[0]) / stride[0] + 1;
    const std::int64_t ow = (p.shape[2] - kernel[1]) / stride[1] + 1;
    std::vector<float> out;
    for (std::int64_t n = 0; n < s[0]; ++n)
        for (std::int64_t oy = 0; oy < oh; ++oy)
            for (std::int64_t ox = 0; ox < ow; ++ox)
                for (std::int64_t c = 0; c < s[3]; ++c) {
                    double sum = 0.0;
                    int count = 0;
                    for (std::int64_t ky = 0; ky < kernel[0]; ++ky)
                        for (std::int64_t kx = 0; kx < kernel[1]; ++kx) {
                            const double v =
                                p.at({n, oy * stride[0] + ky, ox * stride[1] + kx, c});
                            if (std::isnan(v)) continue;
                            sum += v;
                            ++count;
                        }
                    out.push_back(static_cast<float>(sum / count));
                }
    return out;
}

// weight [KH, KW, C, M]; output channel c * M + m.
std::vector<float> ref_depthwise(const std::vector<float>& x, const Dims& s,
                                 const std::vector<float>& w, const Dims& ws,
                                 const std::vector<float>& bias, const Ints& pad,
                                 const Ints& stride, const Ints& dilation)
{
    const Dense p = padded_nhwc(x, s, pad, 0.0);
    const Dense weight{ws, {w.begin(), w.end()}};
    const std::int64_t kh = ws[0], kw = ws[1], channels = ws[2], m = ws[3];
    const std::int64_t oh = (p.shape[1] - 1 - (kh - 1) * dilation[0]) / stride[0] + 1;
    const std::int64_t ow = (p.shape[2] - 1 - (kw - 1) * dilation[1]) / stride[1] + 1;
    std::vector<float> out;
    for (std::int64_t n = 0; n < s[0]; ++n)
        for (std::int64_t oy = 0; oy < oh; ++oy)
            for (std::int64_t ox = 0; ox < ow; ++ox)
                for (std::int64_t c = 0; c < channels; ++c)
                    for (std::int64_t j = 0; j < m; ++j) {
                        double acc = bias.size() == 1 ? bias[0] : bias[c * m + j];
                        for (std::int64_t ky = 0; ky < kh; ++ky)
                            for (std::int64_t kx = 0; kx < kw; ++kx)
                                acc += p.at({n, oy * stride[0] + ky * dilation[0],
                                             ox * stride[1] + kx * dilation[1], c}) *
                                       weight.at({ky, kx, c, j});
                        out.push_back(static_cast<float>(acc));
                    }
    return out;
}

// Every input pixel scattered through every tap: output (iy * sy + ky +
// out_pad_top, ix * sx + kx + out_pad_left) gains in * weight[oc, ky, kx, ic].
std::vector<float> ref_transpose_conv(const std::vector<float>& x, const Dims& s,
                                      const std::vector<float>& w, const Dims& ws,
                                      const std::vector<float>& bias, const Ints& out_pad,
                                      const Ints& stride)
{
    const Dense input{s, {x.begin(), x.end()}};
    const Dense weight{ws, {w.begin(), w.end()}};
    const std::int64_t oc_count = ws[0], kh = ws[1], kw = ws[2];
    const std::int64_t oh = (s[1] - 1) * stride[0] + out_pad[0] + out_pad[1] + kh;
    const std::int64_t ow = (s[2] - 1) * stride[1] + out_pad[2] + out_pad[3] + kw;
    Dense out{{s[0], oh, ow, oc_count}, {}};
    out.values.assign(elements(out.shape), 0.0);
    for (std::int64_t n = 0; n < s[0]; ++n)
        for (std::int64_t iy = 0; iy < s[1]; ++iy)
            for (std::int64_t ix = 0; ix < s[2]; ++ix)
                for (std::int64_t ky = 0; ky < kh; ++ky)
                    for (std::int64_t kx = 0; kx < kw; ++kx) {
                        const std::int64_t oy = iy * stride[0] + ky + out_pad[0];
                        const std::int64_t ox = ix * stride[1] + kx + out_pad[2];
                        if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
                        for (std::int64_t oc = 0; oc < oc_count; ++oc)
                            for (std::int64_t ic = 0; ic < s[3]; ++ic)
                                out.values[out.offset({n, oy, ox, oc})] +=
                                    input.at({n, iy, ix, ic}) * weight.at({oc, ky, kx, ic});
                    }
    std::vector<float> result;
    for (std::size_t i = 0; i < out.values.size(); ++i) {
        const std::size_t oc = i % static_cast<std::size_t>(oc_count);
        const double b = bias.size() == 1 ? bias[0] : bias[oc];
        result.push_back(static_cast<float>(out.values[i] + b));
    }
    return result;
}

// pad [d0, d1, top, bottom, left, right]; weight [OC, KD, KH, KW, IC].
std::vector<float> ref_conv3d(const std::vector<float>& x, const Dims& s,
                              const std::vector<float>& w, const Dims& ws,
                              const std::vector<float>& bias, const Ints& pad, const Ints& stride,
                              const Ints& dilation)
{
    const Dense p = padded(x, s, {0, pad[0], pad[2], pad[4], 0}, {0, pad[1], pad[3], pad[5], 0},
                           0.0);
    const Dense weight{ws, {w.begin(), w.end()}};
    Dims o(3);
    for (int d = 0; d < 3; ++d)
        o[d] = (p.shape[d + 1] - 1 - (ws[d + 1] - 1) * dilation[d]) / stride[d] + 1;
    std::vector<float> out;
    for (std::int64_t n = 0; n < s[0]; ++n)
        for (std::int64_t od = 0; od < o[0]; ++od)
            for (std::int64_t oy = 0; oy < o[1]; ++oy)
                for (std::int64_t ox = 0; ox < o[2]; ++ox)
                    for (std::int64_t oc = 0; oc < ws[0]; ++oc) {
                        double acc = bias.size() == 1 ? bias[0] : bias[oc];
                        for (std::int64_t kd = 0; kd < ws[1]; ++kd)
                            for (std::int64_t ky = 0; ky < ws[2]; ++ky)
                                for (std::int64_t kx = 0; kx < ws[3]; ++kx)
                                    for (std::int64_t ic = 0; ic < s[4]; ++ic)
                                        acc += p.at({n, od * stride[0] + kd * dilation[0],
                                                     oy * stride[1] + ky * dilation[1],
                                                     ox * stride[2] + kx * dilation[2], ic}) *
                                               weight.at({oc, kd, ky, kx, ic});
                        out.push_back(static_cast<float>(acc));
                    }
    return out;
}

// ---------------------------------------------------------------- MAX_POOL2D

void max_pool2d_takes_window_maxima_never_padding(void**)
{
    // in [1,3,3,1] = [[-1,-2,-3],[-4,-5,-6],[-7,-8,-9]], kernel 2x2, stride 2,
    // pad top 1 and left 1: (3 + 1 - 2) / 2 + 1 = 2 rows and columns.
    // (0,0): rows -1..0, columns -1..0: only -1 (padding is not a 0);
    // (0,1): row 0, columns 1..2: max(-2,-3) = -2; (1,0): rows 1..2,
    // column 0: max(-4,-7) = -4; (1,1): max(-5,-6,-8,-9) = -5.
    const std::vector<float> in{-1, -2, -3, -4, -5, -6, -7, -8, -9};
    assert_same(run_once(max_pool_graph({1, 3, 3, 1}, {1, 2, 2, 1},
                                        max_pool_attr({2, 2}, {2, 2}, {1, 0, 1, 0}, propagate)),
                         {in}),
                {-1, -2, -4, -5});
}

void max_pool2d_nan_modes(void**)
{
    // in [1,2,6,1], kernel 2x2, stride 2: three windows,
    // {1, NaN, 3, 2}, {NaN, NaN, NaN, NaN}, {5, -2, 0.5, 4}.
    const std::vector<float> in{1, nan, nan, nan, 5, -2, 3, 2, nan, nan, 0.5f, 4};
    // PROPAGATE: any NaN makes the window NaN.
    assert_same(run_once(max_pool_graph({1, 2, 6, 1}, {1, 1, 3, 1},
                                        max_pool_attr({2, 2}, {2, 2}, {0, 0, 0, 0}, propagate)),
                         {in}),
                {nan, nan, 5});
    // IGNORE: NaNs are skipped; a window of NaNs only stays NaN.
    assert_same(run_once(max_pool_graph({1, 2, 6, 1}, {1, 1, 3, 1},
                                        max_pool_attr({2, 2}, {2, 2}, {0, 0, 0, 0}, ignore)),
                         {in}),
                {3, nan, 5});
}

void max_pool2d_orders_negative_zero_below_zero(void**)
{
    // Windows {-0, +0} and {+0, -0} (kernel 1x2, stride 2): both +0, bit for bit.
    for (const std::uint32_t mode : {propagate, ignore})
        assert_same(run_once(max_pool_graph({1, 1, 4, 1}, {1, 1, 2, 1},
                                            max_pool_attr({1, 2}, {1, 2}, {0, 0, 0, 0}, mode)),
                             {{-0.0f, 0.0f, 0.0f, -0.0f}}),
                    {0.0f, 0.0f});
}

void max_pool2d_matches_reference_with_padding_and_stride(void**)
{
    // [2,7,6,3], kernel 3x2, stride 2, pad [1,1,0,0]:
    // (7 + 2 - 3) / 2 + 1 = 4 rows, (6 - 2) / 2 + 1 = 3 columns.
    const Dims s{2, 7, 6, 3};
    const std::vector<float> in = sample(elements(s), 11);
    const auto got = run_once(max_pool_graph(s, {2, 4, 3, 3},
                                             max_pool_attr({3, 2}, {2, 2}, {1, 1, 0, 0}, ignore)),
                              {in});
    assert_same(got, ref_max_pool(in, s, {3, 2}, {2, 2}, {1, 1, 0, 0}));
}

void max_pool2d_int8(void**)
{
    // in [1,2,6,1] INT8, kernel 2x2, stride 2: windows {-128,5,-7,-3} -> 5,
    // {127,-1,0,-128} -> 127, {-100,-128,-99,-127} -> -99.
    Rig rig;
    auto program = rig.must_load(max_pool_graph(
        {1, 2, 6, 1}, {1, 1, 3, 1}, max_pool_attr({2, 2}, {2, 2}, {0, 0, 0, 0}, propagate),
        DType::int8));
    const auto slots = program->slots();
    assert_int_equal(slots[0].bytes, 12);
    assert_int_equal(slots[0].dtype, static_cast<std::uint32_t>(DType::int8));
    assert_int_equal(slots[1].bytes, 3);
    const std::vector<std::int8_t> in{-128, 5, 127, -1, -100, -128, -7, -3, 0, -128, -99, -127};
    const auto out = rig.run_raw(*program, {std::as_bytes(std::span(in))});
    const std::vector<std::int8_t> want{5, 127, -99};
    assert_memory_equal(out[0].data(), want.data(), want.size());
    rig.finish(program);
}

void max_pool2d_refuses_what_tosa_forbids(void**)
{
    Rig rig;
    const Dims in{1, 4, 4, 1};
    const Dims out{1, 2, 2, 1};
    const auto load = [&](tosa::Attributes a, Dims o) {
        return rig.load(max_pool_graph(in, o, a));
    };
    assert_malformed(load(max_pool_attr({0, 2}, {2, 2}, {0, 0, 0, 0}, propagate), out),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 0 (MAX_POOL2D): kernel [0,2] and stride [2,2] must be >= 1, pad "
                     "[0,0,0,0] >= 0");
    assert_malformed(load(max_pool_attr({2, 2}, {2, 0}, {0, 0, 0, 0}, propagate), out),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 0 (MAX_POOL2D): kernel [2,2] and stride [2,0] must be >= 1, pad "
                     "[0,0,0,0] >= 0");
    assert_malformed(load(max_pool_attr({2, 2}, {2, 2}, {0, -1, 0, 0}, propagate), out),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 0 (MAX_POOL2D): kernel [2,2] and stride [2,2] must be >= 1, pad "
                     "[0,-1,0,0] >= 0");
    assert_malformed(load(max_pool_attr({2, 2}, {2}, {0, 0, 0, 0}, propagate), out),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 0 (MAX_POOL2D): kernel and stride need 2 values each, pad 4");
    // Pad as large as the kernel: right pad 2 against a kernel 2 wide.
    assert_malformed(load(max_pool_attr({2, 2}, {2, 2}, {0, 0, 0, 2}, propagate), {1, 2, 3, 1}),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 0 (MAX_POOL2D): pad [0,0,0,2] must be below the kernel [2,2] "
                     "(top and bottom below its height, left and right below its width)");
    // (4 + 0 - 3) / 2 does not divide exactly.
    assert_malformed(load(max_pool_attr({3, 3}, {2, 2}, {0, 0, 0, 0}, propagate), {1, 1, 1, 1}),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 0 (MAX_POOL2D): along the height the padded input less the kernel "
                     "extent is 1, not a multiple of the stride 2; TOSA 1.0 requires an exact "
                     "division: change the padding");
    assert_malformed(load(max_pool_attr({5, 1}, {1, 1}, {0, 0, 0, 0}, propagate), {1, 0, 4, 1}),
                     VACCEL_TOSA_BAD_SHAPE,
                     "operator 0 (MAX_POOL2D): along the height the kernel is larger than the "
                     "padded input");
    // No rows: with pad 1 above and below a 2-high window would still fit.
    assert_malformed(rig.load(max_pool_graph({1, 0, 4, 1}, {1, 1, 2, 1},
                                             max_pool_attr({2, 2}, {2, 2}, {1, 1, 0, 0},
                                                           propagate))),
                     VACCEL_TOSA_BAD_SHAPE,
                     "operator 0 (MAX_POOL2D): input [1,0,4,1] has no rows or no columns to pool");
    assert_malformed(load(max_pool_attr({2, 2}, {2, 2}, {0, 0, 0, 0}, 0), out),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 0 (MAX_POOL2D): nan_mode 0 is neither PROPAGATE (1) nor IGNORE "
                     "(2)");
    assert_malformed(load(max_pool_attr({2, 2}, {1, 1}, {0, 0, 0, 0}, propagate), out),
                     VACCEL_TOSA_BAD_SHAPE,
                     "operator 0 (MAX_POOL2D): output 'out' is declared [1,2,2,1] but the "
                     "operands give [1,3,3,1]");
    // INT8 in, FP32 out: the output's dtype picks the row, the input must match it.
    tosa::GraphBuilder g;
    const auto input = g.tensor("in", {1, 2, 2, 1}, DType::int8);
    const auto output = f32(g, "out", {1, 1, 1, 1});
    g.op(Op::max_pool2d, {input}, {output}, max_pool_attr({2, 2}, {2, 2}, {0, 0, 0, 0}, propagate));
    g.input(input);
    g.output(output);
    assert_refused(rig.load(g.finish()), Errc::unsupported, VACCEL_D_TOSA_DTYPE, DType::int8,
                   Op::max_pool2d);
    rig.finish();
}

// ---------------------------------------------------------------- AVG_POOL2D

void avg_pool2d_divides_by_the_input_values_only(void**)
{
    // in [1,3,3,1] = [[1,2,3],[4,5,6],[7,8,9]], kernel 2x2, stride 1, pad 1
    // on every side: 4x4 windows clipped to the input, e.g. (0,0) = {1} -> 1,
    // (0,1) = {1,2} -> 1.5, (1,1) = {1,2,4,5} -> 3, (2,3) = {6,9} -> 7.5.
    // Sums and divisors (1, 2, 4) are exact in float.
    const std::vector<float> in{1, 2, 3, 4, 5, 6, 7, 8, 9};
    const auto got = run_once(avg_pool_graph({1, 3, 3, 1}, {1, 4, 4, 1},
                                             tosa::pool_attr({2, 2}, {1, 1}, {1, 1, 1, 1})),
                              {in});
    assert_exactly(got, {1, 1.5f, 2.5f, 3,       //
                         2.5f, 3, 4, 4.5f,       //
                         5.5f, 6, 7, 7.5f,       //
                         7, 7.5f, 8.5f, 9});
}

void avg_pool2d_matches_reference_with_padding_and_stride(void**)
{
    // [1,8,9,4], kernel 3x3, stride [2,3], pad [1,0,2,1]:
    // (8 + 1 - 3) / 2 + 1 = 4 rows, (9 + 3 - 3) / 3 + 1 = 4 columns.
    const Dims s{1, 8, 9, 4};
    const std::vector<float> in = sample(elements(s), 12);
    const auto got = run_once(avg_pool_graph(s, {1, 4, 4, 4},
                                             tosa::pool_attr({3, 3}, {2, 3}, {1, 0, 2, 1})),
                              {in});
    assert_close(got, ref_avg_pool(in, s, {3, 3}, {2, 3}, {1, 0, 2, 1}), 1e-6f);
}

void avg_pool2d_refuses_what_tosa_forbids(void**)
{
    Rig rig;
    const Dims in{1, 4, 4, 1};
    const Dims out{1, 2, 2, 1};
    const tosa::Attributes ok = tosa::pool_attr({2, 2}, {2, 2}, {0, 0, 0, 0});
    assert_malformed(rig.load(avg_pool_graph(in, out, ok, 1.0f)), VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (AVG_POOL2D): input_zp 'input_zp' must be zero for FP32");
    assert_malformed(rig.load(avg_pool_graph(in, out, ok, 0.0f, -3.0f)),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (AVG_POOL2D): output_zp 'output_zp' must be zero for FP32");
    assert_malformed(rig.load(avg_pool_graph(in, out,
                                             tosa::pool_attr({2, 2}, {2, 2}, {0, 0, 0, 0},
                                                             DType::fp16))),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (AVG_POOL2D): acc_type is FP16; TOSA 1.0 allows only FP32 for "
                     "FP32 data");
    assert_malformed(rig.load(avg_pool_graph(in, {1, 3, 2, 1},
                                             tosa::pool_attr({2, 2}, {2, 2}, {2, 0, 0, 0}))),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (AVG_POOL2D): pad [2,0,0,0] must be below the kernel [2,2] "
                     "(top and bottom below its height, left and right below its width)");
    // (4 + 1 - 2) / 2 does not divide exactly.
    assert_malformed(rig.load(avg_pool_graph(in, out,
                                             tosa::pool_attr({2, 2}, {2, 2}, {0, 0, 1, 0}))),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (AVG_POOL2D): along the width the padded input less the kernel "
                     "extent is 3, not a multiple of the stride 2; TOSA 1.0 requires an exact "
                     "division: change the padding");
    rig.finish();
}

// ---------------------------------------------------------- DEPTHWISE_CONV2D

void depthwise_conv2d_hand_case(void**)
{
    // in [1,2,2,1] = [1,2,3,4]; weight [2,2,1,2]: multiplier 0 all ones,
    // multiplier 1 = [1,0,0,-1]; bias [0.5,-1]:
    // channel 0: 1+2+3+4 + 0.5 = 10.5; channel 1: 1 - 4 - 1 = -4.
    const auto got =
        run_once(conv_graph(Op::depthwise_conv2d, {1, 2, 2, 1}, {2, 2, 1, 2}, {2}, {1, 1, 1, 2},
                            tosa::conv_attr({0, 0, 0, 0}, {1, 1}, {1, 1})),
                 {{1, 2, 3, 4}, {1, 1, 1, 0, 1, 0, 1, -1}, {0.5f, -1}});
    assert_exactly(got, {10.5f, -4});
}

void depthwise_conv2d_matches_reference(void**)
{
    // [2,7,6,3] with multiplier 2, kernel 3x2, stride [2,1], dilation [1,2],
    // pad [1,1,0,2]: (7-1+2-2)/2+1 = 4 rows, (6-1+2-2)/1+1 = 6 columns.
    {
        const Dims s{2, 7, 6, 3};
        const Dims ws{3, 2, 3, 2};
        const auto in = sample(elements(s), 21);
        const auto w = sample(elements(ws), 22);
        const auto b = sample(6, 23);
        const auto got = run_once(conv_graph(Op::depthwise_conv2d, s, ws, {6}, {2, 4, 6, 6},
                                             tosa::conv_attr({1, 1, 0, 2}, {2, 1}, {1, 2})),
                                  {in, w, b});
        assert_close(got, ref_depthwise(in, s, w, ws, b, {1, 1, 0, 2}, {2, 1}, {1, 2}), 1e-5f);
    }
    // [1,5,5,2], multiplier 1, kernel 2x2, dilation 2 both ways, bias [1]:
    // (5-1-2)/1+1 = 3 rows and columns.
    {
        const Dims s{1, 5, 5, 2};
        const Dims ws{2, 2, 2, 1};
        const auto in = sample(elements(s), 24);
        const auto w = sample(elements(ws), 25);
        const std::vector<float> b{0.25f};
        const auto got = run_once(conv_graph(Op::depthwise_conv2d, s, ws, {1}, {1, 3, 3, 2},
                                             tosa::conv_attr({0, 0, 0, 0}, {1, 1}, {2, 2})),
                                  {in, w, b});
        assert_close(got, ref_depthwise(in, s, w, ws, b, {0, 0, 0, 0}, {1, 1}, {2, 2}), 1e-5f);
    }
}

void depthwise_conv2d_refuses_what_tosa_forbids(void**)
{
    Rig rig;
    const Dims in{1, 4, 4, 2};
    const Dims out{1, 3, 3, 2};
    const auto attr = tosa::conv_attr({0, 0, 0, 0}, {1, 1}, {1, 1});
    const auto load = [&](Dims w, Dims b, Dims o, tosa::Attributes a, float izp = 0.0f,
                          float wzp = 0.0f) {
        return rig.load(conv_graph(Op::depthwise_conv2d, in, std::move(w), std::move(b),
                                   std::move(o), std::move(a), izp, wzp));
    };
    assert_malformed(load({2, 2, 3, 1}, {2}, out, attr), VACCEL_TOSA_BAD_SHAPE,
                     "operator 2 (DEPTHWISE_CONV2D): input [1,4,4,2] and weight [2,2,3,1] are "
                     "not [N,H,W,C] and [KH,KW,C,M]");
    assert_malformed(load({2, 2, 2, 2}, {2}, {1, 3, 3, 4}, attr), VACCEL_TOSA_BAD_SHAPE,
                     "operator 2 (DEPTHWISE_CONV2D): bias [2] must be [4] (C*M) or [1]");
    assert_malformed(load({2, 2, 2, 1}, {2}, out, tosa::conv_attr({0, 0, 0, 0}, {1, 1}, {0, 1})),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (DEPTHWISE_CONV2D): pad must be >= 0, stride and dilation >= 1");
    // (4 - 1 - 1) / 3 does not divide exactly.
    assert_malformed(load({2, 2, 2, 1}, {2}, {1, 1, 1, 2},
                          tosa::conv_attr({0, 0, 0, 0}, {3, 3}, {1, 1})),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (DEPTHWISE_CONV2D): along the height the padded input less the "
                     "kernel extent is 2, not a multiple of the stride 3; TOSA 1.0 requires an "
                     "exact division: change the padding");
    assert_malformed(load({2, 2, 2, 1}, {2}, out, attr, 0.0f, 2.0f), VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (DEPTHWISE_CONV2D): weight_zp 'weight_zp' must be zero for FP32");
    assert_malformed(load({2, 2, 2, 1}, {2}, out,
                          tosa::conv_attr({0, 0, 0, 0}, {1, 1}, {1, 1}, DType::fp16)),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (DEPTHWISE_CONV2D): acc_type is FP16; TOSA 1.0 allows only FP32 "
                     "for FP32 data");
    assert_malformed(load({2, 2, 2, 1}, {2}, {1, 3, 3, 1}, attr), VACCEL_TOSA_BAD_SHAPE,
                     "operator 2 (DEPTHWISE_CONV2D): output 'out' is declared [1,3,3,1] but the "
                     "operands give [1,3,3,2]");
    rig.finish();
}

// ---------------------------------------------------------- TRANSPOSE_CONV2D

void transpose_conv2d_hand_cases(void**)
{
    // Stride 2 with a 2x2 kernel: the taps do not overlap; output
    // (2*iy + ky, 2*ix + kx) = in[iy][ix] * w[ky][kx] + bias, OH = (2-1)*2 + 2 = 4.
    // in = [[1,2],[3,4]], w = [[1,2],[3,4]], bias 0.5.
    {
        const auto got = run_once(conv_graph(Op::transpose_conv2d, {1, 2, 2, 1}, {1, 2, 2, 1},
                                             {1}, {1, 4, 4, 1},
                                             transpose_conv_attr({0, 0, 0, 0}, {2, 2})),
                                  {{1, 2, 3, 4}, {1, 2, 3, 4}, {0.5f}});
        assert_exactly(got, {1.5f, 2.5f, 2.5f, 4.5f,    //
                             3.5f, 4.5f, 6.5f, 8.5f,    //
                             3.5f, 6.5f, 4.5f, 8.5f,    //
                             9.5f, 12.5f, 12.5f, 16.5f});
    }
    // Stride 1, in [1,1,2,1] = [1,2], w [1,1,2,1] = [10,1]: OW = 1 + 2 = 3;
    // out[0] = 1*10, out[1] = 1*1 + 2*10 = 21, out[2] = 2*1.
    {
        const auto got = run_once(conv_graph(Op::transpose_conv2d, {1, 1, 2, 1}, {1, 1, 2, 1},
                                             {1}, {1, 1, 3, 1},
                                             transpose_conv_attr({0, 0, 0, 0}, {1, 1})),
                                  {{1, 2}, {10, 1}, {0}});
        assert_exactly(got, {10, 21, 2});
    }
    // The same with out_pad left -1 and right 2: the first column is cropped
    // and two columns of bias only follow: [21, 2, 0, 0].
    {
        const auto got = run_once(conv_graph(Op::transpose_conv2d, {1, 1, 2, 1}, {1, 1, 2, 1},
                                             {1}, {1, 1, 4, 1},
                                             transpose_conv_attr({0, 0, -1, 2}, {1, 1})),
                                  {{1, 2}, {10, 1}, {0}});
        assert_exactly(got, {21, 2, 0, 0});
    }
}

void transpose_conv2d_matches_reference(void**)
{
    // [1,3,4,2] -> 3 channels, kernel 3x2, stride [2,3], out_pad [1,0,-1,2]:
    // OH = 2*2 + 1 + 0 + 3 = 8, OW = 3*3 - 1 + 2 + 2 = 12.
    const Dims s{1, 3, 4, 2};
    const Dims ws{3, 3, 2, 2};
    const auto in = sample(elements(s), 31);
    const auto w = sample(elements(ws), 32);
    const auto b = sample(3, 33);
    const auto got = run_once(conv_graph(Op::transpose_conv2d, s, ws, {3}, {1, 8, 12, 3},
                                         transpose_conv_attr({1, 0, -1, 2}, {2, 3})),
                              {in, w, b});
    assert_close(got, ref_transpose_conv(in, s, w, ws, b, {1, 0, -1, 2}, {2, 3}), 1e-5f);
}

void transpose_conv2d_refuses_what_tosa_forbids(void**)
{
    Rig rig;
    const Dims in{1, 2, 2, 1};
    const auto load = [&](Dims w, Dims o, tosa::Attributes a) {
        return rig.load(conv_graph(Op::transpose_conv2d, in, std::move(w), {1}, std::move(o),
                                   std::move(a)));
    };
    assert_malformed(load({1, 2, 2, 1}, {1, 2, 4, 1}, transpose_conv_attr({-2, 0, 0, 0}, {2, 2})),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (TRANSPOSE_CONV2D): out_pad [-2,0,0,0] must be above minus the "
                     "kernel size [2,2] (top and bottom against its height, left and right "
                     "against its width)");
    assert_malformed(load({1, 2, 2, 1}, {1, 4, 4, 1}, transpose_conv_attr({0, 0, 0, 0}, {0, 2})),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (TRANSPOSE_CONV2D): stride [0,2] must be >= 1");
    assert_malformed(load({1, 2, 2, 1}, {1, 4, 4, 1}, transpose_conv_attr({0, 0, 0}, {2, 2})),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (TRANSPOSE_CONV2D): out_pad needs 4 values, stride 2");
    assert_malformed(load({1, 2, 2, 3}, {1, 4, 4, 1}, transpose_conv_attr({0, 0, 0, 0}, {2, 2})),
                     VACCEL_TOSA_BAD_SHAPE,
                     "operator 2 (TRANSPOSE_CONV2D): input [1,2,2,1] and weight [1,2,2,3] are "
                     "not [N,H,W,IC] and [OC,KH,KW,IC]");
    assert_malformed(load({1, 2, 2, 1}, {1, 4, 4, 1},
                          transpose_conv_attr({0, 0, 0, 0}, {2, 2}, DType::int32)),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (TRANSPOSE_CONV2D): acc_type is INT32; TOSA 1.0 allows only FP32 "
                     "for FP32 data");
    // OH = (2-1)*1 + 0 + 0 + 2 = 3, not 4.
    assert_malformed(load({1, 2, 2, 1}, {1, 4, 4, 1}, transpose_conv_attr({0, 0, 0, 0}, {1, 1})),
                     VACCEL_TOSA_BAD_SHAPE,
                     "operator 2 (TRANSPOSE_CONV2D): output 'out' is declared [1,4,4,1] but the "
                     "operands give [1,3,3,1]");
    rig.finish();
}

// ------------------------------------------------------------------- CONV3D

void conv3d_hand_case(void**)
{
    // in [1,2,2,2,1] = 1..8, weight [1,2,2,2,1] all ones, bias -6: the one
    // output is 1+2+...+8 - 6 = 30.
    const auto got = run_once(conv_graph(Op::conv3d, {1, 2, 2, 2, 1}, {1, 2, 2, 2, 1}, {1},
                                         {1, 1, 1, 1, 1},
                                         tosa::conv_attr({0, 0, 0, 0, 0, 0}, {1, 1, 1}, {1, 1, 1})),
                              {{1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 1, 1, 1, 1, 1, 1}, {-6}});
    assert_exactly(got, {30});
}

void conv3d_matches_reference(void**)
{
    // [1,4,5,4,2] -> 2 channels, kernel 2x3x2, stride [1,2,1], dilation
    // [2,1,1], pad [1,0,1,1,0,1]: OD = (4-1+1-2)/1+1 = 3,
    // OH = (5-1+2-2)/2+1 = 3, OW = (4-1+1-1)/1+1 = 4.
    const Dims s{1, 4, 5, 4, 2};
    const Dims ws{2, 2, 3, 2, 2};
    const auto in = sample(elements(s), 41);
    const auto w = sample(elements(ws), 42);
    const auto b = sample(2, 43);
    const auto got = run_once(conv_graph(Op::conv3d, s, ws, {2}, {1, 3, 3, 4, 2},
                                         tosa::conv_attr({1, 0, 1, 1, 0, 1}, {1, 2, 1}, {2, 1, 1})),
                              {in, w, b});
    assert_close(got, ref_conv3d(in, s, w, ws, b, {1, 0, 1, 1, 0, 1}, {1, 2, 1}, {2, 1, 1}),
                 1e-5f);
}

void conv3d_refuses_what_tosa_forbids(void**)
{
    Rig rig;
    const auto load = [&](Dims in, Dims w, Dims o, tosa::Attributes a) {
        return rig.load(conv_graph(Op::conv3d, std::move(in), std::move(w), {1}, std::move(o),
                                   std::move(a)));
    };
    const Dims in{1, 3, 3, 3, 1};
    const Dims w{1, 2, 2, 2, 1};
    const Dims out{1, 2, 2, 2, 1};
    assert_malformed(load(in, w, out, tosa::conv_attr({0, 0, 0, 0}, {1, 1, 1}, {1, 1, 1})),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (CONV3D): pad needs 6 values, stride and dilation 3 each");
    assert_malformed(load(in, w, out,
                          tosa::conv_attr({0, 0, 0, 0, 0, 0}, {1, 1, 1}, {1, 0, 1})),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (CONV3D): pad must be >= 0, stride and dilation >= 1");
    // Depth: (3 - 1 - 1) / 2 does not divide exactly.
    assert_malformed(load(in, w, {1, 1, 2, 2, 1},
                          tosa::conv_attr({0, 0, 0, 0, 0, 0}, {2, 1, 1}, {1, 1, 1})),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (CONV3D): along the depth the padded input less the kernel "
                     "extent is 1, not a multiple of the stride 2; TOSA 1.0 requires an exact "
                     "division: change the padding");
    assert_malformed(load({1, 3, 3, 1}, {1, 2, 2, 1}, {1, 2, 2, 1},
                          tosa::conv_attr({0, 0, 0, 0, 0, 0}, {1, 1, 1}, {1, 1, 1})),
                     VACCEL_TOSA_BAD_SHAPE,
                     "operator 2 (CONV3D): input [1,3,3,1] and weight [1,2,2,1] are not "
                     "[N,D,H,W,IC] and [OC,KD,KH,KW,IC]");
    assert_malformed(load(in, w, out,
                          tosa::conv_attr({0, 0, 0, 0, 0, 0}, {1, 1, 1}, {1, 1, 1}, DType::fp16)),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (CONV3D): acc_type is FP16; TOSA 1.0 allows only FP32 for FP32 "
                     "data");
    rig.finish();
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(max_pool2d_takes_window_maxima_never_padding),
        cmocka_unit_test(max_pool2d_nan_modes),
        cmocka_unit_test(max_pool2d_orders_negative_zero_below_zero),
        cmocka_unit_test(max_pool2d_matches_reference_with_padding_and_stride),
        cmocka_unit_test(max_pool2d_int8),
        cmocka_unit_test(max_pool2d_refuses_what_tosa_forbids),
        cmocka_unit_test(avg_pool2d_divides_by_the_input_values_only),
        cmocka_unit_test(avg_pool2d_matches_reference_with_padding_and_stride),
        cmocka_unit_test(avg_pool2d_refuses_what_tosa_forbids),
        cmocka_unit_test(depthwise_conv2d_hand_case),
        cmocka_unit_test(depthwise_conv2d_matches_reference),
        cmocka_unit_test(depthwise_conv2d_refuses_what_tosa_forbids),
        cmocka_unit_test(transpose_conv2d_hand_cases),
        cmocka_unit_test(transpose_conv2d_matches_reference),
        cmocka_unit_test(transpose_conv2d_refuses_what_tosa_forbids),
        cmocka_unit_test(conv3d_hand_case),
        cmocka_unit_test(conv3d_matches_reference),
        cmocka_unit_test(conv3d_refuses_what_tosa_forbids),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
