// test_cpu_resize_fft.cpp - RESIZE, FFT2D and RFFT2D on the CPU backend,
// through the Backend interface only.
//
// Expected values: hand-derived where the comment says so; otherwise NumPy
// float64 (numpy 1.24, python3 on the development machine) on the same
// float32 inputs, written here as literals: np.fft.fft2, np.fft.ifft2 times
// H * W (TOSA's inverse is not scaled) and np.fft.rfft2; for RESIZE the TOSA
// 1.0 formula evaluated in float64; for larger FFTs TOSA 1.0's defining sum
// evaluated directly in double here (direct_dft). The inputs are cpu_test::sample(count,
// seed), reproduced bit for bit by the generator. Tolerances
// (docs/operators.md): RESIZE NEAREST_NEIGHBOR exact; BILINEAR and the FFTs
// |got - want| <= 1e-6 * (1 + |want|) (the kernels accumulate in float, or in
// double and round once, so the bound covers the float rounding only).
#include <cmath>

#include "raw_run_support.hpp"

using namespace cpu_test;

namespace {

constexpr std::uint32_t nearest = 1;
constexpr std::uint32_t bilinear = 2;

tosa::Attributes resize_attr(std::uint32_t mode)
{
    tosa::Attributes attributes;
    attributes.present = true;
    attributes.resize_mode = mode;
    return attributes;
}

tosa::Graph resize_graph(std::vector<std::int64_t> in_shape, std::vector<std::int64_t> out_shape,
                         std::vector<std::int64_t> scale, std::vector<std::int64_t> offset,
                         std::vector<std::int64_t> border, std::uint32_t mode)
{
    tosa::GraphBuilder g;
    const auto in = f32(g, "in", std::move(in_shape));
    const auto s = shape_const(g, "scale", std::move(scale));
    const auto o = shape_const(g, "offset", std::move(offset));
    const auto b = shape_const(g, "border", std::move(border));
    const auto out = f32(g, "out", std::move(out_shape));
    g.op(Op::resize, {in, s, o, b}, {out}, resize_attr(mode));
    g.input(in);
    g.output(out);
    return g.finish();
}

const std::vector<double> fft_forward_real{
    -5.16589928, 2.07942537, 17.2791729, -3.65621872, 0.112791538, 2.0311298, -4.34744692,
    8.26560946, -8.7873323, 6.05381948, -11.3546712, 1.40404409, -12.8391206, 2.98852032,
    -7.87102294, -8.19045872, 1.07830667, 5.36149288, 7.10656261, -8.30921069, -6.27300453,
    -1.4068358, -3.09348631, -10.6942516, 0.877581835, 20.9027294, 5.91561961, -14.5444604,
    -9.99026752, -6.91292083, 3.73812652, 7.59098015, -9.48382139, 3.25178231, 6.22330666,
    -8.85013082, 7.29353333, -0.846360099, -3.25775576, -10.4864151, 4.46776366,
    -9.63396478, 3.33630824, -6.18709944, 4.13530612, -3.8904674, 12.5120952, 7.38615893,
    2.57789469, 3.83163749, -11.0982099, -1.05815445, -1.15267372, 3.36020173, -1.94260788,
    -10.9079539, 2.88484502, 2.22776352, -5.63217092, 6.18762196, 8.9253819, 7.21333851,
    -11.1713593, -4.24718178};
const std::vector<double> fft_forward_imag{
    3.18603158, 8.83268839, 2.75716472, -4.79303206, 3.04478431, 9.29268449, -9.49648261,
    -7.22619592, -2.76386595, -7.7183738, -9.0485692, 2.38081764, -1.07511568, -8.72983882,
    7.14094782, -5.0052483, 2.11707997, -6.63863128, 3.43098664, 2.45164157, -11.0744622,
    1.25294059, 3.6808002, 2.97626733, 1.41748524, 6.41966831, -7.72477293, 1.62369828,
    -7.47617435, 3.06801403, -2.7446332, -1.41465859, -1.23821759, 2.16306805, 4.64814067,
    -5.30265344, -4.38576388, -4.34181856, 4.82054639, -12.0436548, 7.45640945, 11.738215,
    2.63789272, 0.692920026, 3.9213438, 1.24899667, 9.60316658, -0.871427354, 10.4887993,
    2.38123906, -0.672285318, -0.56868215, -1.56997609, -12.5689312, 6.59565568, 11.466196,
    -2.70437145, 8.38484465, 3.6869092, 0.851716606, -6.10721779, -0.27252804, 4.3474679,
    -1.17673501};
const std::vector<double> fft_inverse_real{
    -5.16589928, 8.26560946, -4.34744692, 2.0311298, 0.112791538, -3.65621872, 17.2791729,
    2.07942537, 0.877581835, 7.59098015, 3.73812652, -6.91292083, -9.99026752, -14.5444604,
    5.91561961, 20.9027294, 1.07830667, -10.6942516, -3.09348631, -1.4068358, -6.27300453,
    -8.30921069, 7.10656261, 5.36149288, -8.7873323, -8.19045872, -7.87102294, 2.98852032,
    -12.8391206, 1.40404409, -11.3546712, 6.05381948, -9.48382139, -10.4864151, -3.25775576,
    -0.846360099, 7.29353333, -8.85013082, 6.22330666, 3.25178231, 2.88484502, -4.24718178,
    -11.1713593, 7.21333851, 8.9253819, 6.18762196, -5.63217092, 2.22776352, 2.57789469,
    -10.9079539, -1.94260788, 3.36020173, -1.15267372, -1.05815445, -11.0982099, 3.83163749,
    4.46776366, 7.38615893, 12.5120952, -3.8904674, 4.13530612, -6.18709944, 3.33630824,
    -9.63396478};
const std::vector<double> fft_inverse_imag{
    3.18603158, -7.22619592, -9.49648261, 9.29268449, 3.04478431, -4.79303206, 2.75716472,
    8.83268839, 1.41748524, -1.41465859, -2.7446332, 3.06801403, -7.47617435, 1.62369828,
    -7.72477293, 6.41966831, 2.11707997, 2.97626733, 3.6808002, 1.25294059, -11.0744622,
    2.45164157, 3.43098664, -6.63863128, -2.76386595, -5.0052483, 7.14094782, -8.72983882,
    -1.07511568, 2.38081764, -9.0485692, -7.7183738, -1.23821759, -12.0436548, 4.82054639,
    -4.34181856, -4.38576388, -5.30265344, 4.64814067, 2.16306805, -2.70437145, -1.17673501,
    4.3474679, -0.27252804, -6.10721779, 0.851716606, 3.6869092, 8.38484465, 10.4887993,
    11.466196, 6.59565568, -12.5689312, -1.56997609, -0.56868215, -0.672285318, 2.38123906,
    7.45640945, -0.871427354, 9.60316658, 1.24899667, 3.9213438, 0.692920026, 2.63789272,
    11.738215};
const std::vector<double> rfft_real{
    1.19543338, 4.0895978, -6.64999008, -3.51329479, 4.59592843, 0.759969473, 0.151386762,
    -1.19550276, -3.08231738, 1.31790376};
const std::vector<double> rfft_imag{
    0, 0.79578471, -4.99867797, -2.1563251, 0, 0, -0.743021499, 0.0298764706, 3.52121734, 0};
const std::vector<double> resize_bilinear_want{
    -0.476658185, -1.83173331, -0.124101215, -1.44689759, 0.581012726, -0.677226146,
    0.203270064, -1.10827984, -1.26076984, -1.92614675, -0.310071945, -1.48433598,
    1.59132385, -0.600714445, 1.09319687, -1.4905053, -1.5257163, -1.0871923, -0.639518844,
    -0.641668717, 1.13287608, 0.249378443, -0.213037597, 0.00492310524, -1.65818954,
    -0.667715073, -0.804242293, -0.220335086, 0.903652191, 0.674424887, -0.86615483,
    0.752637307};
const std::vector<float> resize_nearest_want{
    -0.084602356, -1.78452659, -0.084602356, -1.78452659, 0.0758571625, -0.715481997,
    -0.400468588, -1.01800966, -1.26076984, -1.92614675, -1.26076984, -1.92614675,
    1.59132385, -0.600714445, 0.844133377, -1.93540072, -1.65818954, -0.667715073,
    -1.65818954, -0.667715073, 0.903652191, 0.674424887, -1.75105834, 0.791743517,
    -1.65818954, -0.667715073, -1.65818954, -0.667715073, 0.903652191, 0.674424887,
    -1.75105834, 0.791743517};

// ---------------------------------------------------------------- RESIZE

// A 2x upscale with half-pixel centres: scale [4,2,4,2], offset [-1,-1],
// border [1,1] give OH = ((2-1)*4 + 1 + 1) / 2 + 1 = 4. Along each axis the
// outputs sample at y = 2*oy - 1 over 4: iy, dy = (-1, 3/4), (0, 1/4),
// (0, 3/4), (1, 1/4); clamped rows (0,0), (0,1), (0,1), (1,1).
void resize_2x_upscale_by_hand(void**)
{
    Rig rig;
    auto near = rig.must_load(
        resize_graph({1, 2, 2, 1}, {1, 4, 4, 1}, {4, 2, 4, 2}, {-1, -1}, {1, 1}, nearest));
    auto bil = rig.must_load(
        resize_graph({1, 2, 2, 1}, {1, 4, 4, 1}, {4, 2, 4, 2}, {-1, -1}, {1, 1}, bilinear));
    const std::vector<float> in{1, 2, 3, 4};
    // NEAREST takes iy1 where dy >= 1/2: rows 0, 0, 1, 1 (and columns alike).
    assert_exactly(rig.run(*near, {in})[0], {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
    // BILINEAR: row 0 -> {1, 1.25, 1.75, 2}, row 1 -> {3, 3.25, 3.75, 4};
    // output rows weigh them 1:0, 3/4:1/4, 1/4:3/4, 0:1 (all exact in float).
    assert_exactly(rig.run(*bil, {in})[0], {1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f,  //
                                            2.5f, 2.75f, 3.25f, 3.5f, 3, 3.25f, 3.75f, 4});
    assert_ok(rig.backend->unload_program(near));
    rig.finish(bil);
}

// Scale 3/2 with offset [1,-1] and border [1,-1]: OH = (2*3 - 1 + 1)/2 + 1
// = 4, OW = (2*3 + 1 - 1)/2 + 1 = 4, two channels.
void resize_non_dyadic_scale_matches_numpy(void**)
{
    Rig rig;
    auto near = rig.must_load(
        resize_graph({1, 3, 3, 2}, {1, 4, 4, 2}, {3, 2, 3, 2}, {1, -1}, {1, -1}, nearest));
    auto bil = rig.must_load(
        resize_graph({1, 3, 3, 2}, {1, 4, 4, 2}, {3, 2, 3, 2}, {1, -1}, {1, -1}, bilinear));
    const std::vector<float> in = sample(18, 21);
    assert_exactly(rig.run(*near, {in})[0], resize_nearest_want);
    assert_near(rig.run(*bil, {in})[0], resize_bilinear_want, 1e-6);
    assert_ok(rig.backend->unload_program(near));
    rig.finish(bil);
}

// A 1x1 image upscaled: every output is the one input value (both modes),
// for each of two batches and channels (values with short mantissas, so
// BILINEAR's four weighted terms, 1/16, 3/16, 3/16 and 9/16 of it, sum exactly).
void resize_of_a_single_pixel(void**)
{
    Rig rig;
    for (const std::uint32_t mode : {nearest, bilinear}) {
        auto program = rig.must_load(
            resize_graph({2, 1, 1, 2}, {2, 2, 2, 2}, {4, 2, 4, 2}, {-1, -1}, {1, 1}, mode));
        const std::vector<float> in{1.5f, -7.0f, 3.25f, 1024.0f};
        std::vector<float> want;
        for (int n = 0; n < 2; ++n)
            for (int p = 0; p < 4; ++p) want.insert(want.end(), {in[2 * n], in[2 * n + 1]});
        assert_exactly(rig.run(*program, {in})[0], want);
        assert_ok(rig.backend->unload_program(program));
    }
    rig.finish();
}

void resize_refusals(void**)
{
    Rig rig;
    const auto refused = [&](std::vector<std::int64_t> out_shape, std::vector<std::int64_t> scale,
                             std::vector<std::int64_t> offset, std::vector<std::int64_t> border,
                             std::uint32_t mode, std::uint32_t reason, const char* note) {
        assert_malformed(rig.load(resize_graph({1, 2, 2, 1}, std::move(out_shape),
                                               std::move(scale), std::move(offset),
                                               std::move(border), mode)),
                         reason, note);
    };
    refused({1, 4, 4, 1}, {4, 2, 4, 2}, {-1, -1}, {1, 1}, 0, VACCEL_TOSA_BAD_ATTRIBUTE,
            "operator 3 (RESIZE): mode 0 is neither NEAREST_NEIGHBOR (1) nor BILINEAR (2)");
    refused({1, 4, 4, 1}, {4, 0, 4, 2}, {-1, -1}, {1, 1}, bilinear, VACCEL_TOSA_BAD_ATTRIBUTE,
            "operator 3 (RESIZE): scale [4,0,4,2], offset [-1,-1], border [1,1]: TOSA 1.0 "
            "requires every scale value > 0");
    refused({1, 4, 4, 1}, {4096, 2, 4, 2}, {-1, -1}, {1, 1}, bilinear, VACCEL_TOSA_BAD_ATTRIBUTE,
            "operator 3 (RESIZE): scale [4096,2,4,2], offset [-1,-1], border [1,1]: TOSA 1.0 "
            "requires scale_y_n, scale_x_n <= 2048");
    refused({1, 1, 1, 1}, {1, 16, 1, 16}, {0, 0}, {0, 0}, bilinear, VACCEL_TOSA_BAD_ATTRIBUTE,
            "operator 3 (RESIZE): scale [1,16,1,16], offset [0,0], border [0,0]: TOSA 1.0 "
            "requires scale_d < 16 * scale_n (at most a 1/16 downscale)");
    refused({1, 4, 4, 1}, {4, 2, 4, 2}, {64, -1}, {1, 1}, bilinear, VACCEL_TOSA_BAD_ATTRIBUTE,
            "operator 3 (RESIZE): scale [4,2,4,2], offset [64,-1], border [1,1]: TOSA 1.0 "
            "requires -scale_n <= offset < 16 * scale_n");
    refused({1, 4, 4, 1}, {4, 2, 4, 2}, {-1, -1}, {4, 1}, bilinear, VACCEL_TOSA_BAD_ATTRIBUTE,
            "operator 3 (RESIZE): scale [4,2,4,2], offset [-1,-1], border [4,1]: TOSA 1.0 "
            "requires -16 * scale_n <= border < scale_n");
    // (2-1)*4 + 1 + 0 = 5 is not a multiple of 2.
    refused({1, 4, 4, 1}, {4, 2, 4, 2}, {-1, -1}, {0, 1}, bilinear, VACCEL_TOSA_BAD_ATTRIBUTE,
            "operator 3 (RESIZE): scale [4,2,4,2], offset [-1,-1], border [0,1]: TOSA 1.0 "
            "requires (IH - 1) * scale_y_n - offset_y + border_y to be a multiple of "
            "scale_y_d, and likewise along x");
    refused({1, 3, 4, 1}, {4, 2, 4, 2}, {-1, -1}, {1, 1}, bilinear, VACCEL_TOSA_BAD_SHAPE,
            "operator 3 (RESIZE): output 'out' is declared [1,3,4,1] but the operands give "
            "[1,4,4,1]");
    // An image without rows: offset -4 and border 0 would give one output row.
    assert_malformed(rig.load(resize_graph({1, 0, 2, 1}, {1, 1, 4, 1}, {4, 2, 4, 2}, {-4, -1},
                                           {0, 1}, bilinear)),
                     VACCEL_TOSA_BAD_SHAPE,
                     "operator 3 (RESIZE): input [1,0,2,1] has no rows or columns to sample");
    // A scale operand of the wrong length.
    refused({1, 4, 4, 1}, {4, 2, 4}, {-1, -1}, {1, 1}, bilinear, VACCEL_TOSA_BAD_ATTRIBUTE,
            "operator 3 (RESIZE): scale 'scale' has 3 elements; the input's rank needs 4");
    rig.finish();
}

// ---------------------------------------------------------------- FFT2D, RFFT2D

tosa::Attributes fft_attr(bool inverse)
{
    tosa::Attributes attributes;
    attributes.present = true;
    attributes.inverse = inverse;
    return attributes;
}

tosa::Graph fft_graph(std::vector<std::int64_t> shape, bool inverse,
                      std::vector<std::int64_t> imag_shape = {},
                      std::vector<std::int64_t> out_imag_shape = {})
{
    tosa::GraphBuilder g;
    const auto re = f32(g, "in_real", shape);
    const auto im = f32(g, "in_imag", imag_shape.empty() ? shape : imag_shape);
    const auto out_re = f32(g, "out_real", shape);
    const auto out_im = f32(g, "out_imag", out_imag_shape.empty() ? shape : out_imag_shape);
    g.op(Op::fft2d, {re, im}, {out_re, out_im}, fft_attr(inverse));
    g.input(re);
    g.input(im);
    g.output(out_re);
    g.output(out_im);
    return g.finish();
}

tosa::Graph rfft_graph(std::vector<std::int64_t> shape, std::vector<std::int64_t> out_shape)
{
    tosa::GraphBuilder g;
    const auto in = f32(g, "in", std::move(shape));
    const auto out_re = f32(g, "out_real", out_shape);
    const auto out_im = f32(g, "out_imag", out_shape);
    tosa::Attributes attributes;
    attributes.present = true;
    g.op(Op::rfft2d, {in}, {out_re, out_im}, attributes);
    g.input(in);
    g.output(out_re);
    g.output(out_im);
    return g.finish();
}

void fft2d_forward_and_inverse_match_numpy(void**)
{
    Rig rig;
    auto forward = rig.must_load(fft_graph({2, 4, 8}, false));
    auto inverse = rig.must_load(fft_graph({2, 4, 8}, true));
    const std::vector<float> re = sample(64, 11);
    const std::vector<float> im = sample(64, 12);
    const auto f = rig.run(*forward, {re, im});
    assert_near(f[0], fft_forward_real, 1e-6);
    assert_near(f[1], fft_forward_imag, 1e-6);
    const auto i = rig.run(*inverse, {re, im});
    assert_near(i[0], fft_inverse_real, 1e-6);
    assert_near(i[1], fft_inverse_imag, 1e-6);
    assert_ok(rig.backend->unload_program(forward));
    rig.finish(inverse);
}

// TOSA 1.0's definition evaluated directly in double: out[ky][kx] = sum over
// y, x of in[y][x] e^(-+2 pi i ((ky y mod H) / H + (kx x mod W) / W)), for
// the first out_w frequencies along W.
void direct_dft(const std::vector<float>& re, const std::vector<float>& im, std::int64_t h,
                std::int64_t w, std::int64_t out_w, bool inverse, std::vector<double>& out_re,
                std::vector<double>& out_im)
{
    const double sign = inverse ? -1.0 : 1.0;
    const double pi = 3.14159265358979323846;
    for (std::int64_t ky = 0; ky < h; ++ky)
        for (std::int64_t kx = 0; kx < out_w; ++kx) {
            double sum_re = 0.0;
            double sum_im = 0.0;
            for (std::int64_t y = 0; y < h; ++y)
                for (std::int64_t x = 0; x < w; ++x) {
                    const double a = sign * 2.0 * pi *
                                     (static_cast<double>(ky * y % h) / static_cast<double>(h) +
                                      static_cast<double>(kx * x % w) / static_cast<double>(w));
                    const double vr = re[static_cast<std::size_t>(y * w + x)];
                    const double vi = im.empty() ? 0.0 : im[static_cast<std::size_t>(y * w + x)];
                    sum_re += vr * std::cos(a) + vi * std::sin(a);
                    sum_im += -vr * std::sin(a) + vi * std::cos(a);
                }
            out_re.push_back(sum_re);
            out_im.push_back(sum_im);
        }
}

// 16 x 32 (FFT2D, both directions) and 8 x 16 (RFFT2D) planes against the
// direct evaluation above. The direct sums' own rounding (about 1e-13 here)
// is far inside the bound.
void larger_transforms_match_the_direct_definition(void**)
{
    Rig rig;
    const std::vector<float> re = sample(512, 31);
    const std::vector<float> im = sample(512, 32);
    for (const bool inverse : {false, true}) {
        auto program = rig.must_load(fft_graph({1, 16, 32}, inverse));
        const auto out = rig.run(*program, {re, im});
        std::vector<double> want_re;
        std::vector<double> want_im;
        direct_dft(re, im, 16, 32, 32, inverse, want_re, want_im);
        assert_near(out[0], want_re, 1e-6);
        assert_near(out[1], want_im, 1e-6);
        assert_ok(rig.backend->unload_program(program));
    }
    auto program = rig.must_load(rfft_graph({1, 8, 16}, {1, 8, 9}));
    const std::vector<float> real(re.begin(), re.begin() + 128);
    const auto out = rig.run(*program, {real});
    std::vector<double> want_re;
    std::vector<double> want_im;
    direct_dft(real, {}, 8, 16, 9, false, want_re, want_im);
    assert_near(out[0], want_re, 1e-6);
    assert_near(out[1], want_im, 1e-6);
    rig.finish(program);
}

// Size-1 axes by hand: a 1x1 transform is the identity; a 1x2 one gives
// (a + b, a - b) on both parts.
void fft2d_of_size_one_axes(void**)
{
    Rig rig;
    auto one = rig.must_load(fft_graph({3, 1, 1}, false));
    const auto same = rig.run(*one, {{1.5f, -2.0f, 0.25f}, {0.0f, 4.0f, -1.0f}});
    assert_exactly(same[0], {1.5f, -2.0f, 0.25f});
    assert_exactly(same[1], {0.0f, 4.0f, -1.0f});
    assert_ok(rig.backend->unload_program(one));
    auto pair = rig.must_load(fft_graph({1, 1, 2}, true));
    const auto sums = rig.run(*pair, {{3.0f, 1.0f}, {0.5f, 2.0f}});
    assert_exactly(sums[0], {4.0f, 2.0f});
    assert_exactly(sums[1], {2.5f, -1.5f});
    rig.finish(pair);
}

void rfft2d_matches_numpy(void**)
{
    Rig rig;
    auto program = rig.must_load(rfft_graph({1, 2, 8}, {1, 2, 5}));
    const auto out = rig.run(*program, {sample(16, 13)});
    assert_near(out[0], rfft_real, 1e-6);
    assert_near(out[1], rfft_imag, 1e-6);
    assert_ok(rig.backend->unload_program(program));
    // [1,1,1] -> [1,1,1]: the value itself, no imaginary part.
    auto one = rig.must_load(rfft_graph({2, 1, 1}, {2, 1, 1}));
    const auto single = rig.run(*one, {{-3.5f, 2.0f}});
    assert_exactly(single[0], {-3.5f, 2.0f});
    assert_exactly(single[1], {0.0f, 0.0f});
    rig.finish(one);
}

void fft_refusals(void**)
{
    Rig rig;
    assert_malformed(rig.load(fft_graph({1, 6, 4}, false)), VACCEL_TOSA_BAD_SHAPE,
                     "operator 0 (FFT2D): input [1,6,4]: height and width must be powers of "
                     "two, 6 is not");
    assert_malformed(rig.load(fft_graph({1, 4, 4}, false, {1, 4, 2})), VACCEL_TOSA_BAD_SHAPE,
                     "operator 0 (FFT2D): input_real [1,4,4] and input_imag [1,4,2] differ");
    assert_malformed(rig.load(fft_graph({1, 4, 4}, false, {}, {1, 4, 2})), VACCEL_TOSA_BAD_SHAPE,
                     "operator 0 (FFT2D): output 'out_imag' is declared [1,4,2] but the operands "
                     "give [1,4,4]");
    assert_malformed(rig.load(fft_graph({4, 4}, false)), VACCEL_TOSA_BAD_SHAPE,
                     "operator 0 (FFT2D): input [4,4] must be [N,H,W]");
    assert_malformed(rig.load(rfft_graph({1, 4, 8}, {1, 4, 8})), VACCEL_TOSA_BAD_SHAPE,
                     "operator 0 (RFFT2D): output 'out_real' is declared [1,4,8] but the "
                     "operands give [1,4,5]");
    assert_malformed(rig.load(rfft_graph({1, 4, 12}, {1, 4, 7})), VACCEL_TOSA_BAD_SHAPE,
                     "operator 0 (RFFT2D): input [1,4,12]: height and width must be powers of "
                     "two, 12 is not");
    rig.finish();
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(resize_2x_upscale_by_hand),
        cmocka_unit_test(resize_non_dyadic_scale_matches_numpy),
        cmocka_unit_test(resize_of_a_single_pixel),
        cmocka_unit_test(resize_refusals),
        cmocka_unit_test(fft2d_forward_and_inverse_match_numpy),
        cmocka_unit_test(larger_transforms_match_the_direct_definition),
        cmocka_unit_test(fft2d_of_size_one_axes),
        cmocka_unit_test(rfft2d_matches_numpy),
        cmocka_unit_test(fft_refusals),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
