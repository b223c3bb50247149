// test_cpu_gemm_operators.cpp - MATMUL and CONV2D (the BLAS-backed operators)
// against float64 references computed here with plain loops.
//
// The BLAS sums each output's K products in an order of its own (blocked,
// threaded, with FMA), so results are held to the bound of a float dot
// product of n terms summed in any order (docs/operators.md):
// |got - exact| <= gamma(n) * sum |term|, gamma(n) = n*u / (1 - n*u),
// u = 2^-24; exact and sum |term| are the float64 sums of the same float
// inputs. A wrong or missing term is off by about one |term| (~1 here), far
// beyond the bound (~K^2 * 6e-8 * |term|).
#include <cmath>

#include "cpu_test_support.hpp"

using namespace cpu_test;

namespace {

// One output's float64 value and the sum of its terms' magnitudes.
struct Reference {
    std::vector<double> exact;
    std::vector<double> magnitude;
};

void assert_within_dot_bound(const std::vector<float>& got, const Reference& want,
                             std::int64_t terms)
{
    assert_int_equal(got.size(), want.exact.size());
    const double u = std::ldexp(1.0, -24);
    const double n = static_cast<double>(terms);
    const double gamma = n * u / (1.0 - n * u);
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double error = std::fabs(static_cast<double>(got[i]) - want.exact[i]);
        if (!(error <= gamma * want.magnitude[i]))
            fail_msg("element %zu: got %.9g, want %.9g (error %.3g > bound %.3g)", i,
                     static_cast<double>(got[i]), want.exact[i], error,
                     gamma * want.magnitude[i]);
    }
}

// [n, h, c] x [n, c, w] in float64.
Reference matmul_reference(const std::vector<float>& a, const std::vector<float>& b,
                           std::int64_t n, std::int64_t h, std::int64_t c, std::int64_t w)
{
    Reference r{std::vector<double>(static_cast<std::size_t>(n * h * w)),
                std::vector<double>(static_cast<std::size_t>(n * h * w))};
    for (std::int64_t batch = 0; batch < n; ++batch)
        for (std::int64_t row = 0; row < h; ++row)
            for (std::int64_t col = 0; col < w; ++col) {
                double sum = 0, magnitude = 0;
                for (std::int64_t k = 0; k < c; ++k) {
                    const auto at_a = static_cast<std::size_t>((batch * h + row) * c + k);
                    const auto at_b = static_cast<std::size_t>((batch * c + k) * w + col);
                    const double term = static_cast<double>(a[at_a]) * b[at_b];
                    sum += term;
                    magnitude += std::fabs(term);
                }
                const auto at = static_cast<std::size_t>((batch * h + row) * w + col);
                r.exact[at] = sum;
                r.magnitude[at] = magnitude;
            }
    return r;
}

void check_matmul(std::int64_t n, std::int64_t h, std::int64_t c, std::int64_t w)
{
    Rig rig;
    tosa::GraphBuilder g;
    const auto a = f32(g, "a", {n, h, c});
    const auto b = f32(g, "b", {n, c, w});
    const auto out = f32(g, "out", {n, h, w});
    g.op(Op::matmul, {a, b, zero_point(g, "a_zp"), zero_point(g, "b_zp")}, {out});
    g.input(a);
    g.input(b);
    g.output(out);
    auto program = rig.must_load(g.finish());
    const auto va = sample(static_cast<std::size_t>(n * h * c), 11);
    const auto vb = sample(static_cast<std::size_t>(n * c * w), 12);
    assert_within_dot_bound(rig.run(*program, {va, vb})[0], matmul_reference(va, vb, n, h, c, w),
                            c);
    rig.finish(program);
}

void matmul_batch4_non_square(void**) { check_matmul(4, 33, 300, 17); }

// 2 x 192 x 256 x 160: large enough (M*N*K > 64^3) that OpenBLAS splits each
// product over its threads.
void matmul_batch2_large_enough_to_thread(void**) { check_matmul(2, 192, 256, 160); }

// A wide, short product: one row of A.
void matmul_single_row(void**) { check_matmul(3, 1, 129, 250); }

struct Conv {
    std::vector<std::int64_t> input;   // [N, IH, IW, IC]
    std::vector<std::int64_t> weight;  // [OC, KH, KW, IC]
    std::int64_t bias = 0;             // OC or 1
    std::vector<std::int32_t> pad;     // top, bottom, left, right
    std::vector<std::int32_t> stride;  // y, x
    std::vector<std::int32_t> dilation;
    std::int64_t oh = 0, ow = 0;       // derived by hand in each test
};

// TOSA 1.0 CONV2D in float64: out[n, oy, ox, oc] = bias + sum over (ky, kx,
// ic) of the padded input at (oy*sy - top + ky*dy, ox*sx - left + kx*dx) times
// the weight; the bias counts as a term of the sum.
Reference conv_reference(const Conv& c, const std::vector<float>& in, const std::vector<float>& w,
                         const std::vector<float>& bias)
{
    const std::int64_t n = c.input[0], ih = c.input[1], iw = c.input[2], ic = c.input[3];
    const std::int64_t oc = c.weight[0], kh = c.weight[1], kw = c.weight[2];
    const auto count = static_cast<std::size_t>(n * c.oh * c.ow * oc);
    Reference r{std::vector<double>(count), std::vector<double>(count)};
    std::size_t at = 0;
    for (std::int64_t b = 0; b < n; ++b)
        for (std::int64_t oy = 0; oy < c.oh; ++oy)
            for (std::int64_t ox = 0; ox < c.ow; ++ox)
                for (std::int64_t o = 0; o < oc; ++o, ++at) {
                    double sum = bias[static_cast<std::size_t>(c.bias == 1 ? 0 : o)];
                    double magnitude = std::fabs(sum);
                    for (std::int64_t ky = 0; ky < kh; ++ky)
                        for (std::int64_t kx = 0; kx < kw; ++kx) {
                            const std::int64_t y = oy * c.stride[0] - c.pad[0] + ky * c.dilation[0];
                            const std::int64_t x = ox * c.stride[1] - c.pad[2] + kx * c.dilation[1];
                            if (y < 0 || y >= ih || x < 0 || x >= iw) continue;  // padding: 0
                            for (std::int64_t i = 0; i < ic; ++i) {
                                const auto at_in =
                                    static_cast<std::size_t>(((b * ih + y) * iw + x) * ic + i);
                                const auto at_w =
                                    static_cast<std::size_t>(((o * kh + ky) * kw + kx) * ic + i);
                                const double term = static_cast<double>(in[at_in]) * w[at_w];
                                sum += term;
                                magnitude += std::fabs(term);
                            }
                        }
                    r.exact[at] = sum;
                    r.magnitude[at] = magnitude;
                }
    return r;
}

// A CONV2D whose input, weight and bias are all graph inputs.
void check_conv(const Conv& c)
{
    Rig rig;
    tosa::GraphBuilder g;
    const auto in = f32(g, "in", c.input);
    const auto w = f32(g, "w", c.weight);
    const auto bias = f32(g, "bias", {c.bias});
    const auto out = f32(g, "out", {c.input[0], c.oh, c.ow, c.weight[0]});
    g.op(Op::conv2d, {in, w, bias, zero_point(g, "in_zp"), zero_point(g, "w_zp")}, {out},
         tosa::conv_attr(c.pad, c.stride, c.dilation));
    g.input(in);
    g.input(w);
    g.input(bias);
    g.output(out);
    auto program = rig.must_load(g.finish());
    const auto vin = sample(elements(c.input), 21);
    const auto vw = sample(elements(c.weight), 22);
    const auto vbias = sample(static_cast<std::size_t>(c.bias), 23);
    const std::int64_t terms = c.weight[1] * c.weight[2] * c.weight[3] + 1;
    assert_within_dot_bound(rig.run(*program, {vin, vw, vbias})[0],
                            conv_reference(c, vin, vw, vbias), terms);
    rig.finish(program);
}

// Padded height 11 + 2 + 0 = 13, dilated kernel height (3-1)*2 + 1 = 5:
// oh = (13 - 5) / 2 + 1 = 5; padded width 10 + 1 + 2 = 13, dilated kernel
// width (2-1)*2 + 1 = 3: ow = (13 - 3) / 2 + 1 = 6 (both exact divisions,
// as TOSA 1.0 requires; the last column reads the input's last column and
// right padding).
void conv2d_stride2_dilation2_asymmetric_pad(void**)
{
    check_conv({{2, 11, 10, 3}, {5, 3, 2, 3}, 5, {2, 0, 1, 2}, {2, 2}, {2, 2}, 5, 6});
}

// bias [1] is added to every output channel; SAME padding keeps 6 x 7.
void conv2d_bias_of_one_broadcasts(void**)
{
    check_conv({{1, 6, 7, 4}, {3, 3, 3, 4}, 1, {1, 1, 1, 1}, {1, 1}, {1, 1}, 6, 7});
}

// 2 x 70 x 64 = 8960 output rows of 3*3*16 = 144 patch values: conv2d.cpp
// gathers at most 2^18 / 144 = 1820 rows at a time, so five blocks, the
// last one partial (8960 - 4 * 1820 = 1680 rows).
void conv2d_im2col_in_several_blocks(void**)
{
    check_conv({{2, 70, 64, 16}, {24, 3, 3, 16}, 24, {1, 1, 1, 1}, {1, 1}, {1, 1}, 70, 64});
}

// 1x1, stride 1, no padding: the input rows go to the GEMM as they are.
void conv2d_1x1_stride1_is_one_gemm(void**)
{
    check_conv({{2, 9, 7, 20}, {13, 1, 1, 20}, 13, {0, 0, 0, 0}, {1, 1}, {1, 1}, 9, 7});
}

// 1x1 with stride 2 (oh = (9-1)/2 + 1 = 5, ow = (7-1)/2 + 1 = 4) and with
// padding (pad 1 all round: 11 x 9, border outputs are the bias alone) take
// the im2col path.
void conv2d_1x1_strided_or_padded_gathers(void**)
{
    check_conv({{2, 9, 7, 20}, {13, 1, 1, 20}, 13, {0, 0, 0, 0}, {2, 2}, {1, 1}, 5, 4});
    check_conv({{1, 9, 7, 20}, {13, 1, 1, 20}, 1, {1, 1, 1, 1}, {1, 1}, {1, 1}, 11, 9});
}

// KH*KW*C = 2 * 1 * (2^30 + 1) = 2^31 + 2 products per output: more than
// the BLAS's 32-bit index can count. Refused at load, before any memory for
// the (16 GiB) operands is needed.
void conv2d_patch_longer_than_the_blas_index_is_refused(void**)
{
    Rig rig;
    tosa::GraphBuilder g;
    const std::int64_t channels = (std::int64_t{1} << 30) + 1;
    const auto in = f32(g, "in", {1, 2, 1, channels});
    const auto w = f32(g, "w", {1, 2, 1, channels});
    const auto bias = f32(g, "bias", {1});
    const auto out = f32(g, "out", {1, 1, 1, 1});
    g.op(Op::conv2d, {in, w, bias, zero_point(g, "in_zp"), zero_point(g, "w_zp")}, {out},
         tosa::conv_attr({0, 0, 0, 0}, {1, 1}, {1, 1}));
    g.input(in);
    g.input(w);
    g.input(bias);
    g.output(out);
    auto refused = rig.load(g.finish());
    assert_refused(refused, Errc::invalid_argument, VACCEL_D_TOSA_MALFORMED,
                   VACCEL_TOSA_BAD_SHAPE, 0);
    assert_string_equal(refused.error().note.c_str(),
                        "operator 2 (CONV2D): weight [1,2,1,1073741825]: KH*KW*C must be at "
                        "most 2147483647 (the BLAS's 32-bit index); split the input channels "
                        "over several convolutions");
    rig.finish();
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(matmul_batch4_non_square),
        cmocka_unit_test(matmul_batch2_large_enough_to_thread),
        cmocka_unit_test(matmul_single_row),
        cmocka_unit_test(conv2d_stride2_dilation2_asymmetric_pad),
        cmocka_unit_test(conv2d_bias_of_one_broadcasts),
        cmocka_unit_test(conv2d_im2col_in_several_blocks),
        cmocka_unit_test(conv2d_1x1_stride1_is_one_gemm),
        cmocka_unit_test(conv2d_1x1_strided_or_padded_gathers),
        cmocka_unit_test(conv2d_patch_longer_than_the_blas_index_is_refused),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
