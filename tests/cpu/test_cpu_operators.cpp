// test_cpu_operators.cpp - each admitted FP32 operator against values computed here with plain loops.
//
// Elementwise results must match bit for bit; MATMUL and REDUCE_SUM, whose
// summation order is the kernel's business, within a small tolerance.
#include <cmath>
#include <cstring>
#include <limits>
#include <span>

#include "cpu_test_support.hpp"

using namespace cpu_test;

namespace {

// Index of (a, b, c, d) in a rank-4 shape, with broadcast: a dimension of 1 is read at 0.
std::size_t at4(const std::vector<std::int64_t>& s, std::int64_t a, std::int64_t b,
                std::int64_t c, std::int64_t d)
{
    a = s[0] == 1 ? 0 : a;
    b = s[1] == 1 ? 0 : b;
    c = s[2] == 1 ? 0 : c;
    d = s[3] == 1 ? 0 : d;
    return static_cast<std::size_t>(((a * s[1] + b) * s[2] + c) * s[3] + d);
}

// out = a (op) b in a graph of one binary operator, rank 4.
template <class F>
void check_binary_rank4(Op op, std::vector<std::int64_t> sa, std::vector<std::int64_t> sb,
                        std::vector<std::int64_t> so, F f)
{
    Rig rig;
    tosa::GraphBuilder g;
    const auto a = f32(g, "a", sa);
    const auto b = f32(g, "b", sb);
    const auto out = f32(g, "out", so);
    if (op == Op::mul)
        g.op(op, {a, b, mul_shift(g, "shift")}, {out});
    else
        g.op(op, {a, b}, {out});
    g.input(a);
    g.input(b);
    g.output(out);
    auto program = rig.must_load(g.finish());
    const auto va = sample(elements(sa), 1);
    const auto vb = sample(elements(sb), 2);
    std::vector<float> want(elements(so));
    for (std::int64_t i = 0; i < so[0]; ++i)
        for (std::int64_t j = 0; j < so[1]; ++j)
            for (std::int64_t k = 0; k < so[2]; ++k)
                for (std::int64_t l = 0; l < so[3]; ++l)
                    want[at4(so, i, j, k, l)] = f(va[at4(sa, i, j, k, l)], vb[at4(sb, i, j, k, l)]);
    assert_exactly(rig.run(*program, {va, vb})[0], want);
    rig.finish(program);
}

// A graph of one single-input operator: in -> op -> out.
std::unique_ptr<Program> load_unary(Rig& rig, Op op, std::vector<std::int64_t> in_shape,
                                    std::vector<std::int64_t> out_shape,
                                    tosa::Attributes attributes = {})
{
    tosa::GraphBuilder g;
    const auto in = f32(g, "in", in_shape);
    const auto out = f32(g, "out", out_shape);
    g.op(op, {in}, {out}, attributes);
    g.input(in);
    g.output(out);
    return rig.must_load(g.finish());
}

void add_broadcasts_rank4_dims_of_one(void**)
{
    check_binary_rank4(Op::add, {1, 4, 1, 3}, {2, 1, 5, 3}, {2, 4, 5, 3},
                       [](float x, float y) { return x + y; });
}

void sub_broadcasts_second_operand(void**)
{
    check_binary_rank4(Op::sub, {2, 3, 4, 5}, {1, 3, 1, 1}, {2, 3, 4, 5},
                       [](float x, float y) { return x - y; });
}

void mul_broadcasts_both_operands(void**)
{
    check_binary_rank4(Op::mul, {3, 1, 2, 1}, {1, 4, 1, 5}, {3, 4, 2, 5},
                       [](float x, float y) { return x * y; });
}

void add_rank1_broadcasts_a_single_element(void**)
{
    Rig rig;
    tosa::GraphBuilder g;
    const auto a = f32(g, "a", {7});
    const auto b = f32(g, "b", {1});
    const auto out = f32(g, "out", {7});
    g.op(Op::add, {a, b}, {out});
    g.input(a);
    g.input(b);
    g.output(out);
    auto program = rig.must_load(g.finish());
    const auto va = sample(7, 3);
    const std::vector<float> vb{0.375f};
    std::vector<float> want(7);
    for (int i = 0; i < 7; ++i) want[i] = va[i] + vb[0];
    assert_exactly(rig.run(*program, {va, vb})[0], want);
    rig.finish(program);
}

void matmul_of_1x1_matrices(void**)
{
    Rig rig;
    tosa::GraphBuilder g;
    const auto a = f32(g, "a", {1, 1, 1});
    const auto b = f32(g, "b", {1, 1, 1});
    const auto out = f32(g, "out", {1, 1, 1});
    g.op(Op::matmul, {a, b, zero_point(g, "a_zp"), zero_point(g, "b_zp")}, {out});
    g.input(a);
    g.input(b);
    g.output(out);
    auto program = rig.must_load(g.finish());
    assert_exactly(rig.run(*program, {{1.5f}, {-2.25f}})[0], {-3.375f});
    rig.finish(program);
}

void matmul_batch3_non_square(void**)
{
    constexpr int N = 3, H = 5, C = 7, W = 4;
    Rig rig;
    tosa::GraphBuilder g;
    const auto a = f32(g, "a", {N, H, C});
    const auto b = f32(g, "b", {N, C, W});
    const auto out = f32(g, "out", {N, H, W});
    g.op(Op::matmul, {a, b, zero_point(g, "a_zp"), zero_point(g, "b_zp")}, {out});
    g.input(a);
    g.input(b);
    g.output(out);
    auto program = rig.must_load(g.finish());
    const auto va = sample(N * H * C, 4);
    const auto vb = sample(N * C * W, 5);
    std::vector<float> want(N * H * W);
    for (int n = 0; n < N; ++n)
        for (int h = 0; h < H; ++h)
            for (int w = 0; w < W; ++w) {
                double sum = 0;
                for (int c = 0; c < C; ++c)
                    sum += static_cast<double>(va[(n * H + h) * C + c]) * vb[(n * C + c) * W + w];
                want[(n * H + h) * W + w] = static_cast<float>(sum);
            }
    assert_close(rig.run(*program, {va, vb})[0], want, 1e-5f);
    rig.finish(program);
}

void reshape_rank4_to_rank2_keeps_order(void**)
{
    Rig rig;
    tosa::GraphBuilder g;
    const auto in = f32(g, "in", {2, 1, 3, 4});
    const auto out = f32(g, "out", {6, 4});
    g.op(Op::reshape, {in, shape_const(g, "shape", {6, 4})}, {out});
    g.input(in);
    g.output(out);
    auto program = rig.must_load(g.finish());
    const auto v = sample(24, 6);
    assert_exactly(rig.run(*program, {v})[0], v);
    rig.finish(program);
}

void transpose_rank4_permutes_dimensions(void**)
{
    Rig rig;
    const std::vector<std::int64_t> s{2, 3, 4, 5};
    const std::vector<std::int32_t> perms{2, 0, 3, 1};
    const std::vector<std::int64_t> o{4, 2, 5, 3};
    auto program = load_unary(rig, Op::transpose, s, o, tosa::transpose_attr(perms));
    const auto v = sample(120, 7);
    std::vector<float> want(120);
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 4; ++k)
                for (int l = 0; l < 5; ++l)
                    // out[k][i][l][j] = in[i][j][k][l]
                    want[((k * 2 + i) * 5 + l) * 3 + j] = v[((i * 3 + j) * 4 + k) * 5 + l];
    assert_exactly(rig.run(*program, {v})[0], want);
    rig.finish(program);
}

void identity_copies_its_input(void**)
{
    Rig rig;
    auto program = load_unary(rig, Op::identity, {3, 1}, {3, 1});
    const std::vector<float> v{1.0f, -0.0f, 3.5f};
    assert_exactly(rig.run(*program, {v})[0], v);
    rig.finish(program);
}

void clamp_bounds_and_propagates_nan(void**)
{
    Rig rig;
    auto program = load_unary(rig, Op::clamp, {6}, {6}, tosa::clamp_f32_attr(-1.0f, 0.5f));
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const auto out = rig.run(*program, {{-3.0f, -1.0f, 0.25f, 0.5f, 7.0f, nan}})[0];
    assert_exactly(std::vector<float>(out.begin(), out.begin() + 5),
                   {-1.0f, -1.0f, 0.25f, 0.5f, 0.5f});
    assert_true(std::isnan(out[5]));
    rig.finish(program);
}

void clamp_ignoring_nan_gives_min(void**)
{
    Rig rig;
    tosa::Attributes attributes = tosa::clamp_f32_attr(-1.0f, 0.5f);
    attributes.nan_mode = 2;  // IGNORE
    auto program = load_unary(rig, Op::clamp, {1, 1, 1, 3}, {1, 1, 1, 3}, attributes);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    assert_exactly(rig.run(*program, {{nan, 2.0f, -0.0f}})[0], {-1.0f, 0.5f, -0.0f});
    rig.finish(program);
}

void sigmoid_matches_its_formula(void**)
{
    Rig rig;
    auto program = load_unary(rig, Op::sigmoid, {2, 5}, {2, 5});
    auto v = sample(10, 8);
    v[0] = 0.0f;
    v[1] = -30.0f;
    std::vector<float> want(10);
    for (int i = 0; i < 10; ++i) want[i] = 1.0f / (1.0f + std::exp(-v[i]));
    assert_exactly(rig.run(*program, {v})[0], want);
    rig.finish(program);
}

void tanh_matches_its_formula(void**)
{
    Rig rig;
    auto program = load_unary(rig, Op::tanh, {10}, {10});
    const auto v = sample(10, 9);
    std::vector<float> want(10);
    for (int i = 0; i < 10; ++i) want[i] = std::tanh(v[i]);
    assert_exactly(rig.run(*program, {v})[0], want);
    rig.finish(program);
}

void reduce_sum_over_first_axis(void**)
{
    Rig rig;
    auto program = load_unary(rig, Op::reduce_sum, {4, 3, 2}, {1, 3, 2}, tosa::axis_attr(0));
    const auto v = sample(24, 10);
    std::vector<float> want(6, 0.0f);
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 6; ++j) want[j] += v[i * 6 + j];
    assert_close(rig.run(*program, {v})[0], want, 1e-6f);
    rig.finish(program);
}

void reduce_sum_over_last_axis(void**)
{
    Rig rig;
    auto program = load_unary(rig, Op::reduce_sum, {4, 3, 5}, {4, 3, 1}, tosa::axis_attr(2));
    const auto v = sample(60, 11);
    std::vector<float> want(12, 0.0f);
    for (int i = 0; i < 12; ++i)
        for (int k = 0; k < 5; ++k) want[i] += v[i * 5 + k];
    assert_close(rig.run(*program, {v})[0], want, 1e-6f);
    rig.finish(program);
}

// Reductions over a long axis, where the GPUs read one axis with a team of
// threads (docs/adr/0017-shared-gpu-lowering.md): sums against a float64
// loop, MAX/MIN/ARGMAX exactly, ARGMAX with ties (the first index wins) and
// NaNs under both nan modes; one shape with the axis innermost, one with
// elements after it.
void long_axis_reductions(void**)
{
    const float nan = std::numeric_limits<float>::quiet_NaN();
    struct Shape {
        std::int64_t outer, axis, inner;
    };
    for (const Shape s : {Shape{5, 300, 1}, Shape{2, 100, 3}}) {
        const std::vector<std::int64_t> in_shape{s.outer, s.axis, s.inner};
        const std::vector<std::int64_t> out_shape{s.outer, 1, s.inner};
        const auto results = static_cast<std::size_t>(s.outer * s.inner);
        auto v = sample(static_cast<std::size_t>(s.outer * s.axis * s.inner), 12);
        // Element k of the axis of result r.
        auto elem = [&](std::size_t r, std::int64_t k) -> float& {
            const auto o = static_cast<std::int64_t>(r) / s.inner;
            const auto i = static_cast<std::int64_t>(r) % s.inner;
            return v[static_cast<std::size_t>((o * s.axis + k) * s.inner + i)];
        };
        // Result 0: its largest value twice (indices 7 and 40); result 1: a
        // NaN at index 9 and the largest value at 3; result 2: all NaN.
        elem(0, 7) = elem(0, 40) = 50.0f;
        elem(1, 9) = nan;
        elem(1, 3) = 60.0f;
        for (std::int64_t k = 0; k < s.axis; ++k) elem(2, k) = nan;
        auto sum_of = [&](std::size_t r) {
            double acc = 0;
            for (std::int64_t k = 0; k < s.axis; ++k)
                acc += elem(r, k);
            return static_cast<float>(acc);
        };
        auto extreme = [&](std::size_t r, bool largest, bool ignore) {
            float best = nan;
            bool first = true;
            for (std::int64_t k = 0; k < s.axis; ++k) {
                const float x = elem(r, k);
                if (std::isnan(x)) {
                    if (!ignore) return nan;
                    continue;
                }
                if (first || (largest ? x > best : x < best)) best = x;
                first = false;
            }
            return best;
        };
        auto first_max = [&](std::size_t r, bool ignore) {
            std::int32_t index = 0;
            float best = 0;
            bool have = false;
            for (std::int64_t k = 0; k < s.axis; ++k) {
                const float x = elem(r, k);
                if (std::isnan(x)) {
                    if (!ignore) return static_cast<std::int32_t>(k);
                    continue;
                }
                if (!have || x > best) {
                    best = x;
                    index = static_cast<std::int32_t>(k);
                }
                have = true;
            }
            return index;
        };
        Rig rig;
        auto sum = load_unary(rig, Op::reduce_sum, in_shape, out_shape, tosa::axis_attr(1));
        auto sums = rig.run(*sum, {v})[0];
        for (std::size_t r = 0; r < results; ++r) {
            if (r == 1 || r == 2) {
                assert_true(std::isnan(sums[r]));
                continue;
            }
            const float want = sum_of(r);
            if (std::fabs(sums[r] - want) > 1e-4f * (1.0f + std::fabs(want)))
                fail_msg("sum %zu: got %.9g, want %.9g", r, static_cast<double>(sums[r]),
                         static_cast<double>(want));
        }
        assert_ok(rig.backend->unload_program(sum));
        for (const std::uint8_t mode : {std::uint8_t{1}, std::uint8_t{2}}) {
            const bool ignore = mode == 2;
            for (const Op op : {Op::reduce_max, Op::reduce_min}) {
                tosa::Attributes attr = tosa::axis_attr(1);
                attr.nan_mode = mode;
                auto program = load_unary(rig, op, in_shape, out_shape, attr);
                const auto got = rig.run(*program, {v})[0];
                for (std::size_t r = 0; r < results; ++r) {
                    const float want = extreme(r, op == Op::reduce_max, ignore);
                    if (std::isnan(want) ? !std::isnan(got[r]) : got[r] != want)
                        fail_msg("%s nan_mode %u, result %zu: got %.9g, want %.9g",
                                 tosa::op_name(op).data(), mode, r,
                                 static_cast<double>(got[r]), static_cast<double>(want));
                }
                assert_ok(rig.backend->unload_program(program));
            }
            tosa::GraphBuilder g;
            const auto in = f32(g, "x", in_shape);
            const auto out = g.tensor("out", {s.outer, s.inner}, DType::int32);
            tosa::Attributes attr = tosa::axis_attr(1);
            attr.nan_mode = mode;
            g.op(Op::argmax, {in}, {out}, attr);
            g.input(in);
            g.output(out);
            auto program = rig.must_load(g.finish());
            const auto got = rig.run_raw(*program, {std::as_bytes(std::span(v))})[0];
            std::vector<std::int32_t> indices(results);
            std::memcpy(indices.data(), got.data(), got.size());
            for (std::size_t r = 0; r < results; ++r)
                if (indices[r] != first_max(r, ignore))
                    fail_msg("ARGMAX nan_mode %u, result %zu: got %d, want %d", mode, r,
                             indices[r], first_max(r, ignore));
            // The tie resolves to the first index.
            assert_int_equal(indices[0], 7);
            assert_ok(rig.backend->unload_program(program));
        }
        rig.finish();
    }
}

// matmul -> add (bias) -> sigmoid, plus an operator no output depends on.
void chained_operators_run_in_dependency_order(void**)
{
    Rig rig;
    tosa::GraphBuilder g;
    const auto a = f32(g, "a", {1, 2, 3});
    const auto b = f32(g, "b", {1, 3, 2});
    const float bias_values[] = {0.5f, -0.5f};
    const auto bias = g.constant_f32("bias", {1, 1, 2}, bias_values);
    const auto product = f32(g, "product", {1, 2, 2});
    const auto biased = f32(g, "biased", {1, 2, 2});
    const auto unused = f32(g, "unused", {1, 2, 2});
    const auto out = f32(g, "out", {1, 2, 2});
    // Declared out of order on purpose: the consumer before its producer.
    g.op(Op::sigmoid, {biased}, {out});
    g.op(Op::const_, {}, {bias});
    g.op(Op::add, {product, bias}, {biased});
    g.op(Op::tanh, {product}, {unused});
    g.op(Op::matmul, {a, b, zero_point(g, "a_zp"), zero_point(g, "b_zp")}, {product});
    g.input(a);
    g.input(b);
    g.output(out);
    auto program = rig.must_load(g.finish());
    const std::vector<float> va{1, 2, 3, 4, 5, 6};
    const std::vector<float> vb{1, 0, 0, 1, 1, 1};
    std::vector<float> want(4);
    for (int h = 0; h < 2; ++h)
        for (int w = 0; w < 2; ++w) {
            float sum = 0;
            for (int c = 0; c < 3; ++c) sum += va[h * 3 + c] * vb[c * 2 + w];
            want[h * 2 + w] = 1.0f / (1.0f + std::exp(-(sum + bias_values[w])));
        }
    // Small integers: the matmul is exact, so the whole chain is.
    assert_exactly(rig.run(*program, {va, vb})[0], want);
    rig.finish(program);
}

// A graph output that is also read by a later operator.
void intermediate_output_is_written_too(void**)
{
    Rig rig;
    tosa::GraphBuilder g;
    const auto in = f32(g, "in", {4});
    const auto t = f32(g, "t", {4});
    const auto out = f32(g, "out", {4});
    g.op(Op::tanh, {in}, {t});
    g.op(Op::add, {t, in}, {out});
    g.input(in);
    g.output(t);
    g.output(out);
    auto program = rig.must_load(g.finish());
    const auto v = sample(4, 12);
    std::vector<float> want_t(4), want_out(4);
    for (int i = 0; i < 4; ++i) {
        want_t[i] = std::tanh(v[i]);
        want_out[i] = want_t[i] + v[i];
    }
    const auto outputs = rig.run(*program, {v});
    assert_exactly(outputs[0], want_t);
    assert_exactly(outputs[1], want_out);
    rig.finish(program);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(add_broadcasts_rank4_dims_of_one),
        cmocka_unit_test(sub_broadcasts_second_operand),
        cmocka_unit_test(mul_broadcasts_both_operands),
        cmocka_unit_test(add_rank1_broadcasts_a_single_element),
        cmocka_unit_test(matmul_of_1x1_matrices),
        cmocka_unit_test(matmul_batch3_non_square),
        cmocka_unit_test(reshape_rank4_to_rank2_keeps_order),
        cmocka_unit_test(transpose_rank4_permutes_dimensions),
        cmocka_unit_test(identity_copies_its_input),
        cmocka_unit_test(clamp_bounds_and_propagates_nan),
        cmocka_unit_test(clamp_ignoring_nan_gives_min),
        cmocka_unit_test(sigmoid_matches_its_formula),
        cmocka_unit_test(tanh_matches_its_formula),
        cmocka_unit_test(reduce_sum_over_first_axis),
        cmocka_unit_test(reduce_sum_over_last_axis),
        cmocka_unit_test(long_axis_reductions),
        cmocka_unit_test(chained_operators_run_in_dependency_order),
        cmocka_unit_test(intermediate_output_is_written_too),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
