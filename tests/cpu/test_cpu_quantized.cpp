// test_cpu_quantized.cpp - the integer profile's tensor operators on the CPU
// backend: MATMUL (INT8 -> INT32, INT16 -> INT48), CONV2D,
// DEPTHWISE_CONV2D, TRANSPOSE_CONV2D and CONV3D (INT8 x INT8 -> INT32,
// INT8 x INT4 -> INT32, INT16 x INT8 -> INT48), AVG_POOL2D (INT8, INT16) and
// MAX_POOL2D (INT16), through the Backend interface only, and their refusals
// of what TOSA 1.0 forbids.
//
// Expected values are exact (docs/operators.md): hand-derived in the
// comments, or computed by the naive int64 references below, written from
// TOSA 1.0's formulas in another form than the kernels: the input is padded
// explicitly with input_zp (so padding contributes zero, as the
// specification's bounds check has it) and read densely; TRANSPOSE_CONV2D
// scatters every input pixel into the output as the specification writes
// it. INT4 packing and the INT48 byte layout are encoded here independently
// of the backend.
#include <algorithm>
#include <limits>

#include "raw_run_support.hpp"

using namespace cpu_test;

namespace {

using Dims = std::vector<std::int64_t>;
using Ints = std::vector<std::int32_t>;
using Values = std::vector<std::int64_t>;

// ------------------------------------------------------------ byte layouts

// `values` as little-endian elements of `dtype` (INT48: 6 bytes; INT4: two
// per byte, element 2i in the low nibble of byte i, as TOSA serializes it).
Bytes encode(DType dtype, const Values& values)
{
    Bytes bytes;
    if (dtype == DType::int4) {
        bytes.assign((values.size() + 1) / 2, 0);
        for (std::size_t i = 0; i < values.size(); ++i) {
            const auto nibble = static_cast<std::uint8_t>(values[i] & 0xF);
            bytes[i / 2] |= static_cast<std::uint8_t>(i % 2 == 0 ? nibble : nibble << 4);
        }
        return bytes;
    }
    const std::size_t width = dtype == DType::int8    ? 1
                              : dtype == DType::int16 ? 2
                              : dtype == DType::int32 ? 4
                                                      : 6;
    for (const std::int64_t value : values) {
        auto bits = static_cast<std::uint64_t>(value);
        for (std::size_t b = 0; b < width; ++b, bits >>= 8)
            bytes.push_back(static_cast<std::uint8_t>(bits & 0xFF));
    }
    return bytes;
}

// Little-endian signed elements of 1, 2, 4 or 6 bytes.
Values decode(DType dtype, const Bytes& bytes)
{
    const std::size_t width = dtype == DType::int8    ? 1
                              : dtype == DType::int16 ? 2
                              : dtype == DType::int32 ? 4
                                                      : 6;
    Values values;
    for (std::size_t at = 0; at + width <= bytes.size(); at += width) {
        std::int64_t value = 0;
        for (std::size_t b = width; b-- > 0;) value = value * 256 + bytes[at + b];
        const std::int64_t range = std::int64_t{1} << (8 * width);
        if (value >= range / 2) value -= range;
        values.push_back(value);
    }
    return values;
}

void assert_values(const Values& got, const Values& want)
{
    assert_int_equal(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i)
        if (got[i] != want[i])
            fail_msg("element %zu: got %lld, want %lld", i, static_cast<long long>(got[i]),
                     static_cast<long long>(want[i]));
}

// Deterministic values in [lo, hi].
Values sample_ints(std::size_t count, std::uint32_t seed, std::int64_t lo, std::int64_t hi)
{
    Values values(count);
    std::uint32_t state = seed * 2654435761u + 7u;
    for (std::int64_t& v : values) {
        state = state * 1664525u + 1013904223u;
        v = lo + static_cast<std::int64_t>((state >> 8) % static_cast<std::uint32_t>(hi - lo + 1));
    }
    return values;
}

// ------------------------------------------------------------------ graphs

// A zero-point constant [1] of `dtype`, written by a CONST operator.
std::uint32_t zp_const(tosa::GraphBuilder& g, const char* name, DType dtype, std::int64_t value)
{
    const std::uint32_t t = g.tensor(name, {1}, dtype, encode(dtype, {value}));
    g.op(Op::const_, {}, {t});
    return t;
}

// A, B graph inputs -> MATMUL (operator 2, after the zero points) -> out.
tosa::Graph matmul_graph(DType in, DType out, Dims a, Dims b, Dims c, std::int64_t a_zp,
                         std::int64_t b_zp)
{
    tosa::GraphBuilder g;
    const auto ta = g.tensor("a", std::move(a), in);
    const auto tb = g.tensor("b", std::move(b), in);
    const auto tc = g.tensor("c", std::move(c), out);
    const auto za = zp_const(g, "a_zp", in, a_zp);
    const auto zb = zp_const(g, "b_zp", in, b_zp);
    g.op(Op::matmul, {ta, tb, za, zb}, {tc});
    g.input(ta);
    g.input(tb);
    g.output(tc);
    return g.finish();
}

// One integer convolution's operands.
struct ConvCase {
    Op op = Op::conv2d;
    DType input = DType::int8;
    DType weight = DType::int8;
    DType acc = DType::int32;  // bias and output too
    Dims in, w, bias, out;
    tosa::Attributes attributes;
    std::int64_t input_zp = 0, weight_zp = 0;
    Values weight_values;  // a constant weight when non-empty (INT4: always)
};

// in, [weight,] bias graph inputs -> `op` (after the zero points and any
// weight constant) -> out.
tosa::Graph conv_graph(const ConvCase& c)
{
    tosa::GraphBuilder g;
    const auto input = g.tensor("in", c.in, c.input);
    std::uint32_t w;
    if (c.weight_values.empty()) {
        w = g.tensor("weight", c.w, c.weight);
    } else {
        w = g.tensor("weight", c.w, c.weight, encode(c.weight, c.weight_values));
        g.op(Op::const_, {}, {w});
    }
    const auto bias = g.tensor("bias", c.bias, c.acc);
    const auto output = g.tensor("out", c.out, c.acc);
    const auto izp = zp_const(g, "input_zp", c.input, c.input_zp);
    const auto wzp = zp_const(g, "weight_zp", c.weight, c.weight_zp);
    g.op(c.op, {input, w, bias, izp, wzp}, {output}, c.attributes);
    g.input(input);
    if (c.weight_values.empty()) g.input(w);
    g.input(bias);
    g.output(output);
    return g.finish();
}

tosa::Graph avg_pool_graph(DType dtype, Dims in, Dims out, tosa::Attributes attributes,
                           std::int64_t input_zp, std::int64_t output_zp)
{
    tosa::GraphBuilder g;
    const auto input = g.tensor("in", std::move(in), dtype);
    const auto output = g.tensor("out", std::move(out), dtype);
    const auto izp = zp_const(g, "input_zp", dtype, input_zp);
    const auto ozp = zp_const(g, "output_zp", dtype, output_zp);
    g.op(Op::avg_pool2d, {input, izp, ozp}, {output}, attributes);
    g.input(input);
    g.output(output);
    return g.finish();
}

tosa::Attributes transpose_attr(Ints out_pad, Ints stride, DType acc)
{
    tosa::Attributes attributes;
    attributes.present = true;
    attributes.out_pad = std::move(out_pad);
    attributes.stride = std::move(stride);
    attributes.acc_type = acc;
    return attributes;
}

// Runs `graph` once; inputs as values of the given dtypes, the one output
// decoded from `out`.
Values run_values(tosa::Graph graph, const std::vector<std::pair<DType, Values>>& inputs,
                  DType out)
{
    Rig rig;
    auto program = rig.must_load(std::move(graph));
    std::vector<Bytes> raw;
    for (const auto& [dtype, values] : inputs) raw.push_back(encode(dtype, values));
    auto outputs = run_ok(rig, *program, raw);
    rig.finish(program);
    return decode(out, outputs[0]);
}

// ------------------------------------------------------ int64 references

std::int64_t at4(const Values& v, const Dims& s, std::int64_t a, std::int64_t b, std::int64_t c,
                 std::int64_t d)
{
    return v[static_cast<std::size_t>(((a * s[1] + b) * s[2] + c) * s[3] + d)];
}

// NHWC input padded by [top, bottom, left, right] with `fill`.
Values pad_nhwc(const Values& in, const Dims& s, const Ints& pad, std::int64_t fill, Dims& padded)
{
    padded = {s[0], s[1] + pad[0] + pad[1], s[2] + pad[2] + pad[3], s[3]};
    Values out(elements(padded), fill);
    for (std::int64_t n = 0; n < s[0]; ++n)
        for (std::int64_t y = 0; y < s[1]; ++y)
            for (std::int64_t x = 0; x < s[2]; ++x)
                for (std::int64_t c = 0; c < s[3]; ++c)
                    out[static_cast<std::size_t>(
                        ((n * padded[1] + y + pad[0]) * padded[2] + x + pad[2]) * padded[3] + c)] =
                        at4(in, s, n, y, x, c);
    return out;
}

// CONV2D (depthwise: weight [KH,KW,C,M]) per TOSA 1.0, from a padded input.
Values conv2d_reference(const ConvCase& c, const Values& in, const Values& w, const Values& bias,
                        bool depthwise)
{
    const auto& a = c.attributes;
    Dims p;
    const Values padded = pad_nhwc(in, c.in, a.pad, c.input_zp, p);
    const std::int64_t kh = depthwise ? c.w[0] : c.w[1];
    const std::int64_t kw = depthwise ? c.w[1] : c.w[2];
    const std::int64_t oc_count = c.out[3];
    Values out;
    for (std::int64_t n = 0; n < c.out[0]; ++n)
        for (std::int64_t oy = 0; oy < c.out[1]; ++oy)
            for (std::int64_t ox = 0; ox < c.out[2]; ++ox)
                for (std::int64_t oc = 0; oc < oc_count; ++oc) {
                    std::int64_t acc = bias[static_cast<std::size_t>(bias.size() == 1 ? 0 : oc)];
                    for (std::int64_t ky = 0; ky < kh; ++ky)
                        for (std::int64_t kx = 0; kx < kw; ++kx) {
                            const std::int64_t y = oy * a.stride[0] + ky * a.dilation[0];
                            const std::int64_t x = ox * a.stride[1] + kx * a.dilation[1];
                            if (depthwise) {
                                const std::int64_t m = c.w[3];
                                const std::int64_t ic = oc / m;
                                acc += (at4(padded, p, n, y, x, ic) - c.input_zp) *
                                       (at4(w, c.w, ky, kx, ic, oc % m) - c.weight_zp);
                                continue;
                            }
                            for (std::int64_t ic = 0; ic < c.in[3]; ++ic)
                                acc += (at4(padded, p, n, y, x, ic) - c.input_zp) *
                                       (at4(w, c.w, oc, ky, kx, ic) - c.weight_zp);
                        }
                    out.push_back(acc);
                }
    return out;
}

// TRANSPOSE_CONV2D as TOSA 1.0 writes it: each input pixel scattered into
// output (iy * stride + out_pad_top + ky, ix * stride + out_pad_left + kx).
Values transpose_reference(const ConvCase& c, const Values& in, const Values& w,
                           const Values& bias)
{
    const auto& a = c.attributes;
    Values out(elements(c.out));
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = bias[bias.size() == 1 ? 0 : i % static_cast<std::size_t>(c.out[3])];
    for (std::int64_t n = 0; n < c.in[0]; ++n)
        for (std::int64_t iy = 0; iy < c.in[1]; ++iy)
            for (std::int64_t ix = 0; ix < c.in[2]; ++ix)
                for (std::int64_t oc = 0; oc < c.out[3]; ++oc)
                    for (std::int64_t ky = 0; ky < c.w[1]; ++ky)
                        for (std::int64_t kx = 0; kx < c.w[2]; ++kx) {
                            const std::int64_t oy = iy * a.stride[0] + a.out_pad[0] + ky;
                            const std::int64_t ox = ix * a.stride[1] + a.out_pad[2] + kx;
                            if (oy < 0 || oy >= c.out[1] || ox < 0 || ox >= c.out[2]) continue;
                            for (std::int64_t ic = 0; ic < c.in[3]; ++ic)
                                out[static_cast<std::size_t>(
                                    ((n * c.out[1] + oy) * c.out[2] + ox) * c.out[3] + oc)] +=
                                    (at4(in, c.in, n, iy, ix, ic) - c.input_zp) *
                                    (at4(w, c.w, oc, ky, kx, ic) - c.weight_zp);
                        }
    return out;
}

// CONV3D per TOSA 1.0, reading input_zp where a tap falls on padding (which
// then contributes zero).
Values conv3d_reference(const ConvCase& c, const Values& in, const Values& w, const Values& bias)
{
    const auto& a = c.attributes;
    const auto index5 = [](const Dims& s, std::int64_t i0, std::int64_t i1, std::int64_t i2,
                           std::int64_t i3, std::int64_t i4) {
        return static_cast<std::size_t>((((i0 * s[1] + i1) * s[2] + i2) * s[3] + i3) * s[4] + i4);
    };
    Values out;
    for (std::int64_t n = 0; n < c.out[0]; ++n)
        for (std::int64_t od = 0; od < c.out[1]; ++od)
            for (std::int64_t oy = 0; oy < c.out[2]; ++oy)
                for (std::int64_t ox = 0; ox < c.out[3]; ++ox)
                    for (std::int64_t oc = 0; oc < c.out[4]; ++oc) {
                        std::int64_t acc =
                            bias[static_cast<std::size_t>(bias.size() == 1 ? 0 : oc)];
                        for (std::int64_t kd = 0; kd < c.w[1]; ++kd)
                            for (std::int64_t ky = 0; ky < c.w[2]; ++ky)
                                for (std::int64_t kx = 0; kx < c.w[3]; ++kx)
                                    for (std::int64_t ic = 0; ic < c.in[4]; ++ic) {
                                        const std::int64_t d =
                                            od * a.stride[0] - a.pad[0] + kd * a.dilation[0];
                                        const std::int64_t y =
                                            oy * a.stride[1] - a.pad[2] + ky * a.dilation[1];
                                        const std::int64_t x =
                                            ox * a.stride[2] - a.pad[4] + kx * a.dilation[2];
                                        const bool inside = d >= 0 && d < c.in[1] && y >= 0 &&
                                                            y < c.in[2] && x >= 0 && x < c.in[3];
                                        const std::int64_t value =
                                            inside ? in[index5(c.in, n, d, y, x, ic)] : c.input_zp;
                                        acc += (value - c.input_zp) *
                                               (w[index5(c.w, oc, kd, ky, kx, ic)] - c.weight_zp);
                                    }
                        out.push_back(acc);
                    }
    return out;
}

// TOSA 1.0 reciprocal_scale and apply_scale_32 (double_round false).
std::int64_t spec_divide(std::int64_t sum, std::int64_t count)
{
    std::int64_t k = 0;
    while ((std::int64_t{1} << k) < count) ++k;  // (1 << k) / 2 < count <= 1 << k
    const std::int64_t multiplier = (((std::int64_t{1} << 30) + 1) << k) / count;
    const std::int64_t shift = 30 + k;
    // |sum| < 2^31 here, so the product fits int64.
    return (sum * multiplier + (std::int64_t{1} << (shift - 1))) >> shift;
}

Values avg_pool_reference(const Values& in, const Dims& s, const Dims& out_shape,
                          const tosa::Attributes& a, std::int64_t izp, std::int64_t ozp,
                          std::int64_t lo, std::int64_t hi)
{
    Values out;
    for (std::int64_t n = 0; n < out_shape[0]; ++n)
        for (std::int64_t oy = 0; oy < out_shape[1]; ++oy)
            for (std::int64_t ox = 0; ox < out_shape[2]; ++ox)
                for (std::int64_t c = 0; c < s[3]; ++c) {
                    std::int64_t sum = 0;
                    std::int64_t count = 0;
                    for (std::int64_t ky = 0; ky < a.kernel[0]; ++ky)
                        for (std::int64_t kx = 0; kx < a.kernel[1]; ++kx) {
                            const std::int64_t y = oy * a.stride[0] - a.pad[0] + ky;
                            const std::int64_t x = ox * a.stride[1] - a.pad[2] + kx;
                            if (y < 0 || y >= s[1] || x < 0 || x >= s[2]) continue;
                            sum += at4(in, s, n, y, x, c) - izp;
                            ++count;
                        }
                    out.push_back(std::clamp(spec_divide(sum, count) + ozp, lo, hi));
                }
    return out;
}

// ------------------------------------------------------------------ MATMUL

void matmul_int8_with_zero_points(void**)
{
    // Hand check first: A [1,1,2] {3, -128}, B [1,2,1] {127, -5}, A_zp -3,
    // B_zp 7: (3+3)(127-7) + (-128+3)(-5-7) = 720 + 1500 = 2220.
    assert_values(run_values(matmul_graph(DType::int8, DType::int32, {1, 1, 2}, {1, 2, 1},
                                          {1, 1, 1}, -3, 7),
                             {{DType::int8, {3, -128}}, {DType::int8, {127, -5}}}, DType::int32),
                  {2220});
    // [2,3,4] x [2,4,5] against the int64 loop.
    const Values a = sample_ints(24, 1, -128, 127);
    const Values b = sample_ints(40, 2, -128, 127);
    Values want;
    for (std::int64_t n = 0; n < 2; ++n)
        for (std::int64_t h = 0; h < 3; ++h)
            for (std::int64_t w = 0; w < 5; ++w) {
                std::int64_t acc = 0;
                for (std::int64_t k = 0; k < 4; ++k)
                    acc += (a[static_cast<std::size_t>((n * 3 + h) * 4 + k)] + 3) *
                           (b[static_cast<std::size_t>((n * 4 + k) * 5 + w)] - 7);
                want.push_back(acc);
            }
    assert_values(run_values(matmul_graph(DType::int8, DType::int32, {2, 3, 4}, {2, 4, 5},
                                          {2, 3, 5}, -3, 7),
                             {{DType::int8, a}, {DType::int8, b}}, DType::int32),
                  want);
}

void matmul_int16_writes_int48_bytes(void**)
{
    // A [1,2,2] {{-32768,-32768},{-32768,1}}, B [1,2,2] {{-32768,3},{-32768,-5}}:
    //   c00 = 2^30 + 2^30 = 2^31           -> 00 00 00 80 00 00
    //   c01 = -98304 + 163840 = 65536      -> 00 00 01 00 00 00
    //   c10 = 2^30 - 32768 = 0x3FFF8000   -> 00 80 FF 3F 00 00
    //   c11 = -98304 - 5 = -98309 = 2^48 - 0x18005 = 0xFFFFFFFE7FFB -> FB 7F FE FF FF FF
    Rig rig;
    auto program = rig.must_load(
        matmul_graph(DType::int16, DType::int48, {1, 2, 2}, {1, 2, 2}, {1, 2, 2}, 0, 0));
    const auto slots = program->slots();
    assert_int_equal(slots[2].dtype, static_cast<std::uint32_t>(DType::int48));
    assert_int_equal(slots[2].bytes, 24);  // 4 elements of 6 bytes
    const auto out = run_ok(rig, *program,
                            {encode(DType::int16, {-32768, -32768, -32768, 1}),
                             encode(DType::int16, {-32768, 3, -32768, -5})});
    const Bytes want{0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
                     0x00, 0x80, 0xFF, 0x3F, 0x00, 0x00, 0xFB, 0x7F, 0xFE, 0xFF, 0xFF, 0xFF};
    assert_int_equal(out[0].size(), want.size());
    assert_memory_equal(out[0].data(), want.data(), want.size());
    rig.finish(program);
}

// ------------------------------------------------------------ convolutions

Values run_conv(const ConvCase& c, const Values& in, const Values& w, const Values& bias)
{
    std::vector<std::pair<DType, Values>> inputs{{c.input, in}};
    if (c.weight_values.empty()) inputs.emplace_back(c.weight, w);
    inputs.emplace_back(c.acc, bias);
    return run_values(conv_graph(c), inputs, c.acc);
}

void conv2d_int8_hand_case(void**)
{
    // in [1,1,2,1] {3,-2}, input_zp 1; weight [1,1,2,1] {4,-1}, weight_zp 2;
    // bias {10}: (3-1)(4-2) + (-2-1)(-1-2) + 10 = 4 + 9 + 10 = 23.
    ConvCase c;
    c.in = {1, 1, 2, 1}, c.w = {1, 1, 2, 1}, c.bias = {1}, c.out = {1, 1, 1, 1};
    c.attributes = tosa::conv_attr({0, 0, 0, 0}, {1, 1}, {1, 1}, DType::int32);
    c.input_zp = 1, c.weight_zp = 2;
    assert_values(run_conv(c, {3, -2}, {4, -1}, {10}), {23});
    // Past the INT32 range (unpredictable in TOSA 1.0) the result saturates:
    // 13 + (2^31 - 11) = 2^31 + 2 -> 2^31 - 1; in {-6, 1}: (-6-1)(4-2) +
    // (1-1)(-1-2) = -14, and -14 + (-2^31 + 12) = -2^31 - 2 -> -2^31.
    assert_values(run_conv(c, {3, -2}, {4, -1}, {2147483647 - 10}), {2147483647});
    assert_values(run_conv(c, {-6, 1}, {4, -1}, {-2147483647 - 1 + 12}), {-2147483647 - 1});
}

void conv2d_int8_padding_stride_dilation(void**)
{
    // in [2,5,6,3], weight [4,2,3,3], pad [1,1,0,1], stride [2,1],
    // dilation [2,2]: OH = (5-1+2-2)/2+1 = 3, OW = (6-1+1-4)/1+1 = 3.
    ConvCase c;
    c.in = {2, 5, 6, 3}, c.w = {4, 2, 3, 3}, c.bias = {4}, c.out = {2, 3, 3, 4};
    c.attributes = tosa::conv_attr({1, 1, 0, 1}, {2, 1}, {2, 2}, DType::int32);
    c.input_zp = -7, c.weight_zp = 5;
    const Values in = sample_ints(elements(c.in), 3, -128, 127);
    const Values w = sample_ints(elements(c.w), 4, -128, 127);
    const Values bias{-100000, 0, 7, 2000000};
    assert_values(run_conv(c, in, w, bias), conv2d_reference(c, in, w, bias, false));
}

void conv2d_int16_accumulates_in_int48(void**)
{
    // Bias beyond INT32 ([1]: shared by every channel): 2^40 + 5.
    ConvCase c;
    c.input = DType::int16, c.acc = DType::int48;
    c.in = {1, 4, 4, 2}, c.w = {3, 3, 3, 2}, c.bias = {1}, c.out = {1, 4, 4, 3};
    c.attributes = tosa::conv_attr({1, 1, 1, 1}, {1, 1}, {1, 1}, DType::int48);
    const Values in = sample_ints(elements(c.in), 5, -32768, 32767);
    const Values w = sample_ints(elements(c.w), 6, -128, 127);
    const Values bias{(std::int64_t{1} << 40) + 5};
    const Values want = conv2d_reference(c, in, w, bias, false);
    assert_true(std::ranges::any_of(want, [](std::int64_t v) { return v > INT32_MAX; }));
    assert_values(run_conv(c, in, w, bias), want);
}

void conv2d_int4_weights_unpack_low_nibble_first(void**)
{
    // weight [1,1,1,3] {7,-7,-1} packs to bytes 0x97 (7 low, -7 = 0x9 high)
    // and 0x0F (-1 low, padding high); in {1,2,3}: 7 - 14 - 3 = -10.
    assert_true((encode(DType::int4, {7, -7, -1}) == Bytes{0x97, 0x0F}));
    ConvCase c;
    c.weight = DType::int4;
    c.in = {1, 1, 1, 3}, c.w = {1, 1, 1, 3}, c.bias = {1}, c.out = {1, 1, 1, 1};
    c.attributes = tosa::conv_attr({0, 0, 0, 0}, {1, 1}, {1, 1}, DType::int32);
    c.weight_values = {7, -7, -1};
    assert_values(run_conv(c, {1, 2, 3}, {}, {0}), {-10});
    // An odd count of larger weights, with input_zp, against the reference.
    ConvCase big = c;
    // weight [5,1,3,3]: 45 values; OH = 3, OW = 1.
    big.in = {1, 3, 3, 3}, big.w = {5, 1, 3, 3}, big.bias = {5}, big.out = {1, 3, 1, 5};
    big.input_zp = 9;
    big.weight_values = sample_ints(elements(big.w), 7, -7, 7);
    const Values in = sample_ints(elements(big.in), 8, -128, 127);
    const Values bias = sample_ints(5, 9, -1000, 1000);
    assert_values(run_conv(big, in, {}, bias),
                  conv2d_reference(big, in, big.weight_values, bias, false));
}

void depthwise_conv2d_int8_and_int16(void**)
{
    // in [1,4,5,2], weight [3,2,2,3] (M = 3, 6 channels), pad [1,1,0,1],
    // stride [1,2], dilation [1,1]: OH = (4-1+2-2)/1+1 = 4, OW = (5-1+1-1)/2+1 = 3.
    ConvCase c;
    c.op = Op::depthwise_conv2d;
    c.in = {1, 4, 5, 2}, c.w = {3, 2, 2, 3}, c.bias = {6}, c.out = {1, 4, 3, 6};
    c.attributes = tosa::conv_attr({1, 1, 0, 1}, {1, 2}, {1, 1}, DType::int32);
    c.input_zp = 12, c.weight_zp = -4;
    const Values in = sample_ints(elements(c.in), 10, -128, 127);
    const Values w = sample_ints(elements(c.w), 11, -128, 127);
    const Values bias = sample_ints(6, 12, -5000, 5000);
    assert_values(run_conv(c, in, w, bias), conv2d_reference(c, in, w, bias, true));

    ConvCase wide = c;
    wide.input = DType::int16, wide.acc = DType::int48;
    wide.attributes.acc_type = DType::int48;
    wide.input_zp = 0, wide.weight_zp = 7;
    const Values in16 = sample_ints(elements(c.in), 13, -32768, 32767);
    const Values bias48{-(std::int64_t{1} << 45), 1, 2, 3, 4, std::int64_t{1} << 44};
    assert_values(run_conv(wide, in16, w, bias48), conv2d_reference(wide, in16, w, bias48, true));
}

void transpose_conv2d_int8_and_int16(void**)
{
    // in [1,3,2,2], weight [3,3,2,2], out_pad [0,1,-1,0], stride [2,3]:
    // OH = (3-1)*2 + 0 + 1 + 3 = 8, OW = (2-1)*3 - 1 + 0 + 2 = 4.
    ConvCase c;
    c.op = Op::transpose_conv2d;
    c.in = {1, 3, 2, 2}, c.w = {3, 3, 2, 2}, c.bias = {3}, c.out = {1, 8, 4, 3};
    c.attributes = transpose_attr({0, 1, -1, 0}, {2, 3}, DType::int32);
    c.input_zp = -128, c.weight_zp = 127;
    const Values in = sample_ints(elements(c.in), 14, -128, 127);
    const Values w = sample_ints(elements(c.w), 15, -128, 127);
    const Values bias = sample_ints(3, 16, -9, 9);
    assert_values(run_conv(c, in, w, bias), transpose_reference(c, in, w, bias));

    ConvCase wide = c;
    wide.input = DType::int16, wide.acc = DType::int48;
    wide.attributes.acc_type = DType::int48;
    wide.input_zp = 0;
    const Values in16 = sample_ints(elements(c.in), 17, -32768, 32767);
    assert_values(run_conv(wide, in16, w, bias), transpose_reference(wide, in16, w, bias));
}

void conv3d_int8_int4_and_int16(void**)
{
    // in [1,3,4,3,2], weight [2,2,2,2,2], pad [1,0,0,1,1,0], stride [1,1,2],
    // dilation [1,2,1]: OD = (3-1+1-1)+1 = 3, OH = (4-1+1-2)+1 = 3,
    // OW = (3-1+1-1)/2+1 = 2.
    ConvCase c;
    c.op = Op::conv3d;
    c.in = {1, 3, 4, 3, 2}, c.w = {2, 2, 2, 2, 2}, c.bias = {2}, c.out = {1, 3, 3, 2, 2};
    c.attributes = tosa::conv_attr({1, 0, 0, 1, 1, 0}, {1, 1, 2}, {1, 2, 1}, DType::int32);
    c.input_zp = 3, c.weight_zp = -2;
    const Values in = sample_ints(elements(c.in), 18, -128, 127);
    const Values w = sample_ints(elements(c.w), 19, -128, 127);
    const Values bias{-77, 1234};
    assert_values(run_conv(c, in, w, bias), conv3d_reference(c, in, w, bias));

    ConvCase packed = c;  // 32 INT4 weights, weight_zp 0 (TOSA 1.0: INT8 only)
    packed.weight = DType::int4, packed.weight_zp = 0;
    packed.weight_values = sample_ints(elements(c.w), 20, -7, 7);
    assert_values(run_conv(packed, in, {}, bias),
                  conv3d_reference(packed, in, packed.weight_values, bias));

    ConvCase wide = c;
    wide.input = DType::int16, wide.acc = DType::int48;
    wide.attributes.acc_type = DType::int48;
    wide.input_zp = 0;
    const Values in16 = sample_ints(elements(c.in), 21, -32768, 32767);
    const Values bias48{std::int64_t{1} << 46, -(std::int64_t{1} << 46)};
    assert_values(run_conv(wide, in16, w, bias48), conv3d_reference(wide, in16, w, bias48));
}

// ------------------------------------------------------------------- pools

void avg_pool2d_int8_rounds_as_tosa(void**)
{
    // in [1,1,4,1] {4,1,-4,-1} (input_zp 0), kernel [1,2], stride [1,2]:
    // sums 5 and -5 over 2. reciprocal_scale(2): k = 1, multiplier
    // (2^30+1)*2/2 = 2^30+1, shift 31; 5: (5*(2^30+1) + 2^30) >> 31 =
    // (6*2^30 + 5) >> 31 = 3; -5: (-4*2^30 - 5) >> 31 = -3 (floor).
    assert_values(run_values(avg_pool_graph(DType::int8, {1, 1, 4, 1}, {1, 1, 2, 1},
                                            tosa::pool_attr({1, 2}, {1, 2}, {0, 0, 0, 0},
                                                            DType::int32),
                                            0, 0),
                             {{DType::int8, {4, 1, -4, -1}}}, DType::int8),
                  {3, -3});
    // Zero points and clamping: in {100,120,-128,-128}, input_zp -50 ->
    // sums 150+170 = 320 and -78-78 = -156 over 2: 160 and -78; output_zp
    // -20: 140 clamps to 127, -98 stays.
    assert_values(run_values(avg_pool_graph(DType::int8, {1, 1, 4, 1}, {1, 1, 2, 1},
                                            tosa::pool_attr({1, 2}, {1, 2}, {0, 0, 0, 0},
                                                            DType::int32),
                                            -50, -20),
                             {{DType::int8, {100, 120, -128, -128}}}, DType::int8),
                  {127, -98});
    // Padding is not counted: in [1,5,5,2], kernel [3,3], stride [2,2],
    // pad [1,1,1,1] -> [1,3,3,2], against the reference.
    const auto attributes = tosa::pool_attr({3, 3}, {2, 2}, {1, 1, 1, 1}, DType::int32);
    const Values in = sample_ints(50, 22, -128, 127);
    assert_values(run_values(avg_pool_graph(DType::int8, {1, 5, 5, 2}, {1, 3, 3, 2},
                                            attributes, 5, -3),
                             {{DType::int8, in}}, DType::int8),
                  avg_pool_reference(in, {1, 5, 5, 2}, {1, 3, 3, 2}, attributes, 5, -3, -128,
                                     127));
}

void avg_pool2d_int16(void**)
{
    // count 3: reciprocal_scale(3) = (1431655766, 32); 4 -> 1, 5 -> 2 (by
    // hand: (5*1431655766 + 2^31) >> 32 = 9305762478 >> 32 = 2).
    assert_values(run_values(avg_pool_graph(DType::int16, {1, 1, 6, 1}, {1, 1, 2, 1},
                                            tosa::pool_attr({1, 3}, {1, 3}, {0, 0, 0, 0},
                                                            DType::int32),
                                            0, 0),
                             {{DType::int16, {1, 1, 2, 1, 2, 2}}}, DType::int16),
                  {1, 2});
    const auto attributes = tosa::pool_attr({2, 3}, {1, 1}, {1, 0, 2, 1}, DType::int32);
    const Values in = sample_ints(3 * 4 * 3, 23, -32768, 32767);
    // OH = (3+1+0-2)/1+1 = 3, OW = (4+2+1-3)/1+1 = 5.
    assert_values(run_values(avg_pool_graph(DType::int16, {1, 3, 4, 3}, {1, 3, 5, 3},
                                            attributes, 0, 0),
                             {{DType::int16, in}}, DType::int16),
                  avg_pool_reference(in, {1, 3, 4, 3}, {1, 3, 5, 3}, attributes, 0, 0, -32768,
                                     32767));
}

void max_pool2d_int16(void**)
{
    // in [1,2,4,1], kernel [2,2], stride [2,2], pad [0,0,1,1]: windows
    // {pad,-32768,pad,300} -> 300, {-5,-6,-7,-8} -> -5, {32767,pad,-1,pad} -> 32767.
    tosa::GraphBuilder g;
    const auto input = g.tensor("in", {1, 2, 4, 1}, DType::int16);
    const auto output = g.tensor("out", {1, 1, 3, 1}, DType::int16);
    g.op(Op::max_pool2d, {input}, {output}, tosa::pool_attr({2, 2}, {2, 2}, {0, 0, 1, 1}));
    g.input(input);
    g.output(output);
    assert_values(run_values(g.finish(),
                             {{DType::int16, {-32768, -5, -6, 32767, 300, -7, -8, -1}}},
                             DType::int16),
                  {300, -5, 32767});
}

// ------------------------------------------------------- INT48 values

void int48_flows_through_reshape_to_an_output(void**)
{
    // CONV2D INT16 -> INT48 [1,1,1,2] -> RESHAPE [2] -> output: in {-3},
    // weight {5, -7}, bias {2^47 - 20, -2^47 + 30} (INT48 graph input):
    // 2^47 - 35 and -2^47 + 51; a sum past 2^47 - 1 saturates.
    tosa::GraphBuilder g;
    const auto input = g.tensor("in", {1, 1, 1, 1}, DType::int16);
    const auto w = g.tensor("weight", {2, 1, 1, 1}, DType::int8);
    const auto bias = g.tensor("bias", {2}, DType::int48);
    const auto conv = g.tensor("conv", {1, 1, 1, 2}, DType::int48);
    const auto out = g.tensor("out", {2}, DType::int48);
    const auto izp = zp_const(g, "input_zp", DType::int16, 0);
    const auto wzp = zp_const(g, "weight_zp", DType::int8, 0);
    g.op(Op::conv2d, {input, w, bias, izp, wzp}, {conv},
         tosa::conv_attr({0, 0, 0, 0}, {1, 1}, {1, 1}, DType::int48));
    Bytes shape(8);
    const std::int64_t two = 2;
    std::memcpy(shape.data(), &two, 8);
    const auto target = g.tensor("shape", {1}, DType::shape, shape);
    g.op(Op::const_shape, {}, {target});
    g.op(Op::reshape, {conv, target}, {out});
    g.input(input);
    g.input(w);
    g.input(bias);
    g.output(out);
    Rig rig;
    auto program = rig.must_load(g.finish());
    const auto slots = program->slots();
    assert_int_equal(slots[2].bytes, 12);
    assert_int_equal(slots[3].bytes, 12);
    const std::int64_t top = (std::int64_t{1} << 47) - 1;
    auto outputs = run_ok(rig, *program,
                          {encode(DType::int16, {-3}), encode(DType::int8, {5, -7}),
                           encode(DType::int48, {top - 19, -top + 29})});
    assert_values(decode(DType::int48, outputs[0]), {top - 34, -top + 50});
    // -3 * -7 = 21 over top - 19 passes 2^47 - 1: saturated.
    outputs = run_ok(rig, *program,
                     {encode(DType::int16, {-3}), encode(DType::int8, {5, -7}),
                      encode(DType::int48, {0, top - 19})});
    assert_values(decode(DType::int48, outputs[0]), {-15, top});
    rig.finish(program);
}

// ----------------------------------------------------------------- refusals

void refuses_what_tosa_forbids(void**)
{
    Rig rig;
    // MATMUL INT16 with a non-zero zero point (operator 2).
    assert_malformed(rig.load(matmul_graph(DType::int16, DType::int48, {1, 1, 1}, {1, 1, 1},
                                           {1, 1, 1}, 0, 4)),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (MATMUL): B_zp 'b_zp' is 4; TOSA 1.0 allows a non-zero zero "
                     "point only for INT8 operands, this one is INT16: set it to 0");
    ConvCase c;
    c.in = {1, 2, 2, 1}, c.w = {1, 1, 1, 1}, c.bias = {1}, c.out = {1, 2, 2, 1};
    c.attributes = tosa::conv_attr({0, 0, 0, 0}, {1, 1}, {1, 1}, DType::int48);
    assert_malformed(rig.load(conv_graph(c)), VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (CONV2D): acc_type is INT48; TOSA 1.0 accumulates INT8 data of "
                     "this operator in INT32: set acc_type to INT32");
    ConvCase wide = c;
    wide.input = DType::int16, wide.acc = DType::int48, wide.input_zp = -1;
    assert_malformed(rig.load(conv_graph(wide)), VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (CONV2D): input_zp 'input_zp' is -1; TOSA 1.0 allows a non-zero "
                     "zero point only for INT8 operands, this one is INT16: set it to 0");
    ConvCase packed = c;
    packed.op = Op::depthwise_conv2d;
    packed.w = {1, 1, 1, 1};
    packed.weight = DType::int4, packed.weight_values = {3}, packed.weight_zp = -8;
    packed.attributes.acc_type = DType::int32;
    assert_malformed(rig.load(conv_graph(packed)), VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 3 (DEPTHWISE_CONV2D): weight_zp 'weight_zp' is -8; TOSA 1.0 "
                     "allows a non-zero zero point only for INT8 operands, this one is INT4: set "
                     "it to 0");
    // AVG_POOL2D accumulates INT16 in INT32, not INT48; INT16 zero points are 0.
    assert_malformed(rig.load(avg_pool_graph(DType::int16, {1, 2, 2, 1}, {1, 1, 1, 1},
                                             tosa::pool_attr({2, 2}, {1, 1}, {0, 0, 0, 0},
                                                             DType::int48),
                                             0, 0)),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (AVG_POOL2D): acc_type is INT48; TOSA 1.0 accumulates INT16 "
                     "data of this operator in INT32: set acc_type to INT32");
    assert_malformed(rig.load(avg_pool_graph(DType::int16, {1, 2, 2, 1}, {1, 1, 1, 1},
                                             tosa::pool_attr({2, 2}, {1, 1}, {0, 0, 0, 0},
                                                             DType::int32),
                                             0, 1)),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (AVG_POOL2D): output_zp 'output_zp' is 1; TOSA 1.0 allows a "
                     "non-zero zero point only for INT8 operands, this one is INT16: set it to 0");
    // The geometry rules of the FP32 operators hold as well.
    ConvCase strided = c;
    strided.in = {1, 4, 4, 1}, strided.out = {1, 2, 2, 1};
    strided.attributes = tosa::conv_attr({0, 0, 0, 0}, {2, 2}, {1, 1}, DType::int32);
    strided.op = Op::conv3d;
    strided.in = {1, 1, 4, 4, 1}, strided.w = {1, 1, 1, 1, 1}, strided.out = {1, 1, 2, 2, 1};
    strided.attributes = tosa::conv_attr({0, 0, 0, 0, 0, 0}, {1, 2, 2}, {1, 1, 1}, DType::int32);
    assert_malformed(rig.load(conv_graph(strided)), VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (CONV3D): along the height the padded input less the kernel "
                     "extent is 3, not a multiple of the stride 2; TOSA 1.0 requires an exact "
                     "division: change the padding");
    // A combination TOSA 1.0 does not define: INT16 input with INT4 weights.
    ConvCase mixed = c;
    mixed.input = DType::int16, mixed.acc = DType::int48, mixed.weight = DType::int4;
    mixed.weight_values = {1};
    mixed.attributes.acc_type = DType::int48;
    assert_refused(rig.load(conv_graph(mixed)), Errc::unsupported, VACCEL_D_TOSA_DTYPE,
                   DType::int4, Op::conv2d);
    // Zero points are constants of one element.
    {
        tosa::GraphBuilder g;
        const auto ta = g.tensor("a", {1, 1, 1}, DType::int8);
        const auto tb = g.tensor("b", {1, 1, 1}, DType::int8);
        const auto tc = g.tensor("c", {1, 1, 1}, DType::int32);
        const auto za = g.tensor("a_zp", {1}, DType::int8);
        const auto zb = g.tensor("b_zp", {2}, DType::int8, {0, 0});
        g.op(Op::const_, {}, {zb});
        g.op(Op::matmul, {ta, tb, za, zb}, {tc});
        g.input(ta);
        g.input(tb);
        g.input(za);
        g.output(tc);
        tosa::Graph graph = g.finish();
        assert_malformed(rig.load(graph), VACCEL_TOSA_BAD_ATTRIBUTE,
                         "operator 1 (MATMUL): A_zp 'a_zp' must be a constant");
        graph.regions[0].blocks[0].inputs.pop_back();
        graph.regions[0].blocks[0].tensors[za].data = {0};
        assert_malformed(rig.load(graph), VACCEL_TOSA_BAD_ATTRIBUTE,
                         "operator 1 (MATMUL): B_zp 'b_zp' must have one element, has shape [2]");
    }
    // MATMUL INT8 into INT48 is no TOSA 1.0 pair either.
    assert_refused(rig.load(matmul_graph(DType::int8, DType::int48, {1, 1, 1}, {1, 1, 1},
                                         {1, 1, 1}, 0, 0)),
                   Errc::unsupported, VACCEL_D_TOSA_DTYPE, DType::int8, Op::matmul);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(matmul_int8_with_zero_points),
        cmocka_unit_test(matmul_int16_writes_int48_bytes),
        cmocka_unit_test(conv2d_int8_hand_case),
        cmocka_unit_test(conv2d_int8_padding_stride_dilation),
        cmocka_unit_test(conv2d_int16_accumulates_in_int48),
        cmocka_unit_test(conv2d_int4_weights_unpack_low_nibble_first),
        cmocka_unit_test(depthwise_conv2d_int8_and_int16),
        cmocka_unit_test(transpose_conv2d_int8_and_int16),
        cmocka_unit_test(conv3d_int8_int4_and_int16),
        cmocka_unit_test(avg_pool2d_int8_rounds_as_tosa),
        cmocka_unit_test(avg_pool2d_int16),
        cmocka_unit_test(max_pool2d_int16),
        cmocka_unit_test(int48_flows_through_reshape_to_an_output),
        cmocka_unit_test(refuses_what_tosa_forbids),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
