// test_programs.cpp - TOSA programs on the Vulkan device (Mesa lavapipe),
// each operator checked against the CPU backend on the same graph and
// inputs; plus barriers, deadlines, refusals and release.
//
// Tolerances: ADD SUB MUL MAXIMUM MINIMUM ABS NEGATE CEIL FLOOR CLAMP, the
// comparisons, SELECT, every copy, REDUCE_MAX/MIN, ARGMAX and MAX_POOL2D are
// exact (one IEEE operation per element, or none). The transcendental
// functions use the device's builtins: |got - want| <= 2e-6 * (1 + |want|)
// (ERF is an approximation with absolute error below 1.5e-7). REDUCE_SUM /
// PRODUCT and MATMUL accumulate in index order as the CPU's reference loop
// may not: 1e-5 * (1 + |want|).
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "lowering.hpp"
#include "vaccel/backend/vulkan.hpp"
#include "vaccel/tosa/analysis.hpp"
#include "vaccel/tosa/plan.hpp"
#include "vulkan_test_support.hpp"

namespace {

using namespace vulkan_test;

tosa::Attributes nan_propagate(tosa::Attributes a = {})
{
    a.nan_mode = 1;  // PROPAGATE
    return a;
}

// ----- elementwise -------------------------------------------------------

tosa::Graph binary(Op op, std::vector<std::int64_t> a_shape, std::vector<std::int64_t> b_shape,
                   std::vector<std::int64_t> out_shape, DType out_dtype = DType::fp32)
{
    tosa::GraphBuilder g;
    const auto a = f32(g, "a", a_shape);
    const auto b = f32(g, "b", b_shape);
    const auto out = g.tensor("out", out_shape, out_dtype);
    std::vector<std::uint32_t> ins{a, b};
    if (op == Op::mul) ins.push_back(mul_shift(g, "shift"));
    tosa::Attributes attr;
    if (op == Op::maximum || op == Op::minimum) attr = nan_propagate();
    g.op(op, ins, {out}, attr);
    g.input(a);
    g.input(b);
    g.output(out);
    return g.finish();
}

void binary_operators_broadcast_like_the_cpu(void**)
{
    // b [1,3,1] broadcasts over a [2,3,4]; a second case broadcasts a.
    const struct { Op op; float tolerance; } cases[] = {
        {Op::add, 0}, {Op::sub, 0}, {Op::mul, 0}, {Op::maximum, 0}, {Op::minimum, 0},
        {Op::pow, 2e-6f},
    };
    for (const auto& c : cases) {
        auto a = sample(24, 1), b = sample(3, 2);
        if (c.op == Op::pow) {
            // Positive bases (both cases swap the operands): TOSA leaves pow
            // of a negative base undefined, and NaN signs differ by device.
            for (float& v : a) v = std::abs(v) + 0.25f;
            for (float& v : b) v = std::abs(v) + 0.25f;
        }
        auto [want, got] = both([&] { return binary(c.op, {2, 3, 4}, {1, 3, 1}, {2, 3, 4}); },
                                {raw(a), raw(b)});
        compare(got[0], want[0], c.tolerance, "binary broadcast b");
        auto [want2, got2] = both([&] { return binary(c.op, {1, 3, 1}, {2, 3, 4}, {2, 3, 4}); },
                                  {raw(b), raw(a)});
        compare(got2[0], want2[0], c.tolerance, "binary broadcast a");
    }
}

void comparisons_store_one_byte_per_bool(void**)
{
    // 5 elements: the last word of the result is partly used.
    const std::vector<float> a{1, 2, 3, -1, 0.5f}, b{1, 1, 4, -1, 0.25f};
    // Hand-derived: EQUAL 1 0 0 1 0; GREATER 0 1 0 0 1; GREATER_EQUAL 1 1 0 1 1.
    const struct { Op op; std::uint8_t want[5]; } cases[] = {
        {Op::equal, {1, 0, 0, 1, 0}},
        {Op::greater, {0, 1, 0, 0, 1}},
        {Op::greater_equal, {1, 1, 0, 1, 1}},
    };
    for (const auto& c : cases) {
        Rig gpu = vulkan_rig();
        auto p = gpu.must_load(binary(c.op, {5}, {5}, {5}, DType::boolean));
        const std::vector<std::span<const std::byte>> in{bytes_of(a), bytes_of(b)};
        auto out = gpu.run_raw(*p, in);
        assert_int_equal(out[0].size(), 5);
        assert_memory_equal(out[0].data(), c.want, 5);
        gpu.finish(p);
    }
}

tosa::Graph unary(Op op, std::vector<std::int64_t> shape)
{
    tosa::GraphBuilder g;
    const auto x = f32(g, "x", shape);
    const auto out = f32(g, "out", shape);
    std::vector<std::uint32_t> ins{x};
    tosa::Attributes attr;
    if (op == Op::negate) {
        ins.push_back(zero_point(g, "in_zp"));
        ins.push_back(zero_point(g, "out_zp"));
    }
    if (op == Op::clamp) attr = tosa::clamp_f32_attr(-0.5f, 0.75f);
    g.op(op, ins, {out}, attr);
    g.input(x);
    g.output(out);
    return g.finish();
}

void unary_operators_match_the_cpu(void**)
{
    const struct { Op op; float tolerance; bool positive; } cases[] = {
        {Op::abs, 0, false},        {Op::negate, 0, false},      {Op::ceil, 0, false},
        {Op::floor, 0, false},      {Op::clamp, 0, false},       {Op::exp, 2e-6f, false},
        {Op::log, 2e-6f, true},     {Op::reciprocal, 2e-6f, false}, {Op::rsqrt, 2e-6f, true},
        {Op::sin, 2e-6f, false},    {Op::cos, 2e-6f, false},     {Op::sigmoid, 2e-6f, false},
        {Op::tanh, 2e-6f, false},   {Op::erf, 2e-6f, false},
    };
    for (const auto& c : cases) {
        auto x = sample(70, 3);  // 70: more than one workgroup of 64
        if (c.positive)
            for (float& v : x) v = std::abs(v) + 0.125f;
        auto [want, got] = both([&] { return unary(c.op, {7, 10}); }, {raw(x)});
        compare(got[0], want[0], c.tolerance, "unary");
    }
}

// The dense path (contiguous FP32 operands, elementwise.comp's DENSE) on an
// odd length: 257 quads of uvec4 and a scalar tail of 3. Each binary
// operator's result is compared bit for bit with the general path's (b
// [1,n] broadcast over a [2,n]: row 0 is the same computation) and with the
// CPU's; each unary operator's with the CPU's, bit for bit where both
// round exactly and within the transcendental tolerance elsewhere.
std::vector<std::byte> run_vulkan(const tosa::Graph& graph,
                                  const std::vector<std::vector<std::byte>>& inputs)
{
    std::vector<std::span<const std::byte>> spans(inputs.begin(), inputs.end());
    Rig gpu = vulkan_rig();
    auto p = gpu.must_load(graph);
    auto out = gpu.run_raw(*p, spans);
    gpu.finish(p);
    return std::move(out[0]);
}

void the_dense_path_is_bit_identical_to_the_general_path(void**)
{
    constexpr std::int64_t n = 1031;  // 4 * 257 + 3
    const struct { Op op; float tolerance; } binaries[] = {
        {Op::add, 0}, {Op::sub, 0}, {Op::mul, 0}, {Op::maximum, 0}, {Op::minimum, 0},
        {Op::pow, 2e-6f},
    };
    for (const auto& c : binaries) {
        auto a = sample(2 * static_cast<std::size_t>(n), 11), b = sample(static_cast<std::size_t>(n), 12);
        if (c.op == Op::pow)  // positive bases: TOSA leaves pow of negatives undefined
            for (float& v : a) v = std::abs(v) + 0.125f;
        const std::vector<float> a0(a.begin(), a.begin() + n);
        auto [want, dense] = both([&] { return binary(c.op, {1, n}, {1, n}, {1, n}); },
                                  {raw(a0), raw(b)});
        compare(dense[0], want[0], c.tolerance, "dense binary vs cpu");
        auto general = run_vulkan(binary(c.op, {2, n}, {1, n}, {2, n}), {raw(a), raw(b)});
        general.resize(static_cast<std::size_t>(n) * 4);  // row 0
        compare(dense[0], general, 0, "dense binary vs the general path");
    }
    const struct { Op op; float tolerance; bool positive; } unaries[] = {
        {Op::abs, 0, false},     {Op::negate, 0, false},       {Op::ceil, 0, false},
        {Op::floor, 0, false},   {Op::clamp, 0, false},        {Op::exp, 2e-6f, false},
        {Op::log, 2e-6f, true},  {Op::reciprocal, 2e-6f, false}, {Op::rsqrt, 2e-6f, true},
        {Op::sin, 2e-6f, false}, {Op::cos, 2e-6f, false},      {Op::sigmoid, 2e-6f, false},
        {Op::tanh, 2e-6f, false}, {Op::erf, 2e-6f, false},
    };
    for (const auto& c : unaries) {
        auto x = sample(static_cast<std::size_t>(n), 13);
        if (c.positive)
            for (float& v : x) v = std::abs(v) + 0.125f;
        auto [want, got] = both([&] { return unary(c.op, {n}); }, {raw(x)});
        compare(got[0], want[0], c.tolerance, "dense unary vs cpu");
    }
}

void select_and_logic_follow_a_bool_condition(void**)
{
    // cond = a > b; then SELECT(cond, a, b) = max(a, b) and NOT cond.
    const auto make = [] {
        tosa::GraphBuilder g;
        const auto a = f32(g, "a", {3, 5});
        const auto b = f32(g, "b", {3, 5});
        const auto cond = g.tensor("cond", {3, 5}, DType::boolean);
        const auto picked = f32(g, "picked", {3, 5});
        const auto negated = g.tensor("negated", {3, 5}, DType::boolean);
        const auto both_ = g.tensor("both", {3, 5}, DType::boolean);
        g.op(Op::greater, {a, b}, {cond});
        g.op(Op::select, {cond, a, b}, {picked});
        g.op(Op::logical_not, {cond}, {negated});
        g.op(Op::logical_and, {cond, negated}, {both_});
        g.input(a);
        g.input(b);
        g.output(picked);
        g.output(negated);
        g.output(both_);
        return g.finish();
    };
    const auto a = sample(15, 4), b = sample(15, 5);
    auto [want, got] = both(make, {raw(a), raw(b)});
    std::vector<float> hand(15);
    std::vector<std::uint8_t> not_hand(15);
    for (int i = 0; i < 15; ++i) {
        hand[i] = a[i] > b[i] ? a[i] : b[i];
        not_hand[i] = a[i] > b[i] ? 0 : 1;
    }
    assert_exactly(floats(got[0]), hand);
    assert_memory_equal(got[1].data(), not_hand.data(), 15);
    const std::vector<std::uint8_t> zeros(15, 0);  // x AND NOT x
    assert_memory_equal(got[2].data(), zeros.data(), 15);
    compare(got[0], want[0], 0, "select");
}

// ----- data movement ------------------------------------------------------

void transpose_concat_reverse_move_exactly(void**)
{
    const auto make = [] {
        tosa::GraphBuilder g;
        const auto x = f32(g, "x", {2, 3, 4});
        const auto y = f32(g, "y", {2, 1, 4});
        const auto t = f32(g, "t", {4, 2, 3});
        const auto c = f32(g, "c", {2, 4, 4});
        const auto r = f32(g, "r", {2, 3, 4});
        g.op(Op::transpose, {x}, {t}, tosa::transpose_attr({2, 0, 1}));
        g.op(Op::concat, {x, y}, {c}, tosa::axis_attr(1));
        g.op(Op::reverse, {x}, {r}, tosa::axis_attr(2));
        g.input(x);
        g.input(y);
        g.output(t);
        g.output(c);
        g.output(r);
        return g.finish();
    };
    const auto x = sample(24, 6), y = sample(8, 7);
    auto [want, got] = both(make, {raw(x), raw(y)});
    for (int i = 0; i < 3; ++i) compare(got[i], want[i], 0, "data movement");
    // Hand-checked corners: t[3][1][2] = x[1][2][3]; r[0][0][0] = x[0][0][3].
    assert_true(floats(got[0])[3 * 6 + 1 * 3 + 2] == x[1 * 12 + 2 * 4 + 3]);
    assert_true(floats(got[2])[0] == x[3]);
}

// ----- reductions, MATMUL, MAX_POOL2D ---------------------------------------

void reductions_and_argmax_match_the_cpu(void**)
{
    const struct { Op op; float tolerance; } cases[] = {
        {Op::reduce_sum, 1e-5f}, {Op::reduce_product, 1e-5f}, {Op::reduce_max, 0},
        {Op::reduce_min, 0},
    };
    const auto x = sample(60, 8);
    for (int axis = 0; axis < 3; ++axis) {
        for (const auto& c : cases) {
            std::vector<std::int64_t> out_shape{3, 4, 5};
            out_shape[axis] = 1;
            auto make = [&] {
                tosa::GraphBuilder g;
                const auto in = f32(g, "x", {3, 4, 5});
                const auto out = f32(g, "out", out_shape);
                tosa::Attributes attr = tosa::axis_attr(axis);
                if (c.op == Op::reduce_max || c.op == Op::reduce_min) attr = nan_propagate(attr);
                g.op(c.op, {in}, {out}, attr);
                g.input(in);
                g.output(out);
                return g.finish();
            };
            auto [want, got] = both(make, {raw(x)});
            compare(got[0], want[0], c.tolerance, "reduce");
        }
        std::vector<std::int64_t> idx_shape{3, 4, 5};
        idx_shape.erase(idx_shape.begin() + axis);
        auto make = [&] {
            tosa::GraphBuilder g;
            const auto in = f32(g, "x", {3, 4, 5});
            const auto out = g.tensor("out", idx_shape, DType::int32);
            g.op(Op::argmax, {in}, {out}, nan_propagate(tosa::axis_attr(axis)));
            g.input(in);
            g.output(out);
            return g.finish();
        };
        auto [want, got] = both(make, {raw(x)});
        assert_int_equal(got[0].size(), want[0].size());
        assert_memory_equal(got[0].data(), want[0].data(), got[0].size());
    }
}

void matmul_matches_the_cpu(void**)
{
    const auto make = [] {
        tosa::GraphBuilder g;
        const auto a = f32(g, "a", {2, 5, 7});
        const auto b = f32(g, "b", {2, 7, 9});
        const auto out = f32(g, "out", {2, 5, 9});
        g.op(Op::matmul, {a, b, zero_point(g, "a_zp"), zero_point(g, "b_zp")}, {out});
        g.input(a);
        g.input(b);
        g.output(out);
        return g.finish();
    };
    auto [want, got] = both(make, {raw(sample(70, 9)), raw(sample(126, 10))});
    compare(got[0], want[0], 1e-5f, "matmul");
}

void max_pool2d_matches_the_cpu(void**)
{
    // 3x3 kernel, stride 2, padding 1 on every side: 7x7 -> 4x4.
    const auto make = [] {
        tosa::GraphBuilder g;
        const auto x = f32(g, "x", {1, 7, 7, 3});
        const auto out = f32(g, "out", {1, 4, 4, 3});
        g.op(Op::max_pool2d, {x}, {out}, tosa::pool_attr({3, 3}, {2, 2}, {1, 1, 1, 1}));
        g.input(x);
        g.output(out);
        return g.finish();
    };
    auto [want, got] = both(make, {raw(sample(147, 11))});
    compare(got[0], want[0], 0, "max_pool2d");
}

// ----- plan: barriers and arena reuse --------------------------------------

void a_chain_reusing_arena_bytes_is_ordered_by_barriers(void**)
{
    // x -> t1 = x + x -> t2 = t1 * x -> t3 = t2 - x -> t4 = max(t3, t1) -> ... : the
    // packer hands dead intermediates' bytes to later ones, so a missing
    // barrier (RAW or WAR) changes the result.
    const auto make = [] {
        tosa::GraphBuilder g;
        const auto x = f32(g, "x", {1000});
        std::uint32_t prev = x, before = x;
        for (int i = 0; i < 12; ++i) {
            const auto next = f32(g, fmt::format("t{}", i).c_str(), {1000});
            const Op op = i % 3 == 0 ? Op::add : (i % 3 == 1 ? Op::sub : Op::maximum);
            g.op(op, {prev, before}, {next}, op == Op::maximum ? nan_propagate() : tosa::Attributes{});
            before = prev;
            prev = next;
        }
        g.input(x);
        g.output(prev);
        return g.finish();
    };
    // The plan this test relies on: barriers, and arena bytes handed from
    // dead intermediates to later ones (the arena is smaller than the sum
    // of its regions).
    {
        const tosa::Graph graph = make();
        auto analysis = tosa::analyze(graph);
        assert_ok(analysis);
        auto plan = tosa::plan_block(graph, *analysis, tosa::BlockRef{0, 0}, {},
                                     [](const tosa::OperatorView& view) {
                                         return vaccel::backend::vulkan::lower(view, {});
                                     });
        assert_ok(plan);
        std::uint64_t regions = 0;
        for (const auto& r : plan->regions) regions += r.bytes;
        assert_true(plan->arena_bytes < regions);
        std::size_t barriers = 0;
        for (const auto& d : plan->dispatches) barriers += d.barrier_before ? 1 : 0;
        assert_true(barriers >= 11);  // every step reads its predecessor
    }
    const auto x = sample(1000, 12);
    auto [want, got] = both(make, {raw(x)});
    compare(got[0], want[0], 0, "chain");
    // Independently: the same recurrence in float on the host.
    std::vector<float> prev = x, before = x;
    for (int i = 0; i < 12; ++i) {
        std::vector<float> next(1000);
        for (int e = 0; e < 1000; ++e)
            next[e] = i % 3 == 0 ? prev[e] + before[e]
                                 : (i % 3 == 1 ? prev[e] - before[e] : std::max(prev[e], before[e]));
        before = prev;
        prev = next;
    }
    assert_exactly(floats(got[0]), prev);
}

// out = x + c with c a CONST [4] = 1 2 3 4 (hand-derived sums), twice;
// `staged` uploads the constants through a staging buffer, as on a device
// whose arena memory is not host-visible.
void run_with_a_constant(bool staged)
{
    tosa::GraphBuilder g;
    const auto x = f32(g, "x", {4});
    const float values[] = {1, 2, 3, 4};
    const auto c = g.constant_f32("c", {4}, values);
    g.op(Op::const_, {}, {c});
    const auto out = f32(g, "out", {4});
    g.op(Op::add, {x, c}, {out});
    g.input(x);
    g.output(out);
    VulkanOptions options;
    options.stage_all_transfers = staged;
    Rig gpu = vulkan_rig(options);
    auto p = gpu.must_load(g.finish());
    for (int run = 0; run < 2; ++run) {
        auto got = gpu.run(*p, {{10, 20, 30, 40}});
        assert_exactly(got[0], {11, 22, 33, 44});
    }
    gpu.finish(p);
}

void constants_are_uploaded_into_the_arena_at_load(void**) { run_with_a_constant(false); }
void constants_are_uploaded_through_staging_too(void**) { run_with_a_constant(true); }

void edge_values_propagate_like_the_cpu(void**)
{
    // NaN, infinities, signed zeros and huge values; NaNs compare equal
    // whatever their sign and payload (those are the device's).
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    const std::vector<float> x{nan, inf, -inf, 0.0f, -0.0f, 100.0f, -100.0f, 1e-30f};
    const std::vector<float> y{1.0f, nan, 2.0f, -0.0f, 0.0f, inf, -inf, nan};
    const auto same = [](const std::vector<std::byte>& got, const std::vector<std::byte>& want) {
        const auto g = floats(got), w = floats(want);
        assert_int_equal(g.size(), w.size());
        for (std::size_t i = 0; i < g.size(); ++i)
            // Vulkan lets a device flush subnormal results to zero (lavapipe
            // does: exp(-100) is 3.78e-44 on the CPU, 0 here).
            if (!(std::isnan(g[i]) && std::isnan(w[i])) && std::memcmp(&g[i], &w[i], 4) != 0 &&
                !(g[i] == 0 && std::fpclassify(w[i]) == FP_SUBNORMAL))
                fail_msg("element %zu: got %.9g, want %.9g", i, static_cast<double>(g[i]),
                         static_cast<double>(w[i]));
    };
    for (Op op : {Op::maximum, Op::minimum, Op::add, Op::mul}) {
        auto [want, got] = both([&] { return binary(op, {8}, {8}, {8}); }, {raw(x), raw(y)});
        same(got[0], want[0]);
    }
    for (Op op : {Op::abs, Op::negate, Op::clamp, Op::exp, Op::reciprocal, Op::floor}) {
        auto [want, got] = both([&] { return unary(op, {8}); }, {raw(x)});
        same(got[0], want[0]);
    }
    // REDUCE_MAX over an axis holding a NaN is NaN.
    auto make = [] {
        tosa::GraphBuilder g;
        const auto in = f32(g, "x", {2, 4});
        const auto out = f32(g, "out", {2, 1});
        g.op(Op::reduce_max, {in}, {out}, nan_propagate(tosa::axis_attr(1)));
        g.input(in);
        g.output(out);
        return g.finish();
    };
    auto [want, got] = both(make, {raw(x)});
    same(got[0], want[0]);
    assert_true(std::isnan(floats(got[0])[0]));  // row 0 holds the NaN
    assert_true(floats(got[0])[1] == 100.0f);    // row 1: max(0, -0, 100, -100, 1e-30)
}

void two_runs_of_one_program_in_flight_share_its_arena_in_order(void**)
{
    // y = (x + x) * x through an arena intermediate; both runs submitted
    // before either is waited for, on different buffers.
    const auto make = [] {
        tosa::GraphBuilder g;
        const auto x = f32(g, "x", {4096});
        const auto t = f32(g, "t", {4096});
        const auto y = f32(g, "y", {4096});
        g.op(Op::add, {x, x}, {t});
        g.op(Op::mul, {t, x, mul_shift(g, "shift")}, {y});
        g.input(x);
        g.output(y);
        return g.finish();
    };
    Rig gpu = vulkan_rig();
    auto p = gpu.must_load(make());
    const auto x1 = sample(4096, 13), x2 = sample(4096, 14);
    auto in1 = gpu.buffer_with(x1), in2 = gpu.buffer_with(x2);
    auto out1 = gpu.buffer(4096 * 4), out2 = gpu.buffer(4096 * 4);
    auto e1 = cpu_test::submit(*gpu.backend, *gpu.queue, *p, gpu.bind(*p, {in1.get(), out1.get()}), 0);
    auto e2 = cpu_test::submit(*gpu.backend, *gpu.queue, *p, gpu.bind(*p, {in2.get(), out2.get()}), 0);
    assert_ok(e1);
    assert_ok(e2);
    for (auto* e : {&*e1, &*e2}) {
        assert_int_equal(static_cast<int>(gpu.wait(**e).state), static_cast<int>(EventState::complete));
        assert_ok(gpu.backend->destroy_event(*e));
    }
    std::vector<float> want1(4096), want2(4096);
    for (int i = 0; i < 4096; ++i) {
        want1[i] = (x1[i] + x1[i]) * x1[i];  // exact in float: one rounding each
        want2[i] = (x2[i] + x2[i]) * x2[i];
    }
    assert_exactly(gpu.read(*out1, 4096), want1);
    assert_exactly(gpu.read(*out2, 4096), want2);
    for (auto* b : {&in1, &in2, &out1, &out2}) assert_ok(gpu.backend->free_buffer(*b));
    gpu.finish(p);
}

void bad_pools_and_misaligned_bindings_are_refused(void**)
{
    // MAX_POOL2D 2x2 stride 2 on 5x5 without padding gives 2x2, not 3x3.
    tosa::GraphBuilder g;
    const auto x = f32(g, "x", {1, 5, 5, 1});
    const auto out = f32(g, "out", {1, 3, 3, 1});
    g.op(Op::max_pool2d, {x}, {out}, tosa::pool_attr({2, 2}, {2, 2}, {0, 0, 0, 0}));
    g.input(x);
    g.output(out);
    Rig gpu = vulkan_rig();
    assert_refused(gpu.load(g.finish()), Errc::invalid_argument, VACCEL_D_TOSA_GRAPH,
                   VACCEL_TOSA_BAD_SHAPE, static_cast<std::uint64_t>(Op::max_pool2d));
    // A binding at byte offset 4 of a buffer: lavapipe's storage offset
    // alignment is larger than 4, so the descriptor cannot start there.
    auto p = gpu.must_load(unary(Op::abs, {4}));
    auto in = gpu.buffer(64), outb = gpu.buffer(16);
    auto bindings = gpu.bind(*p, {in.get(), outb.get()});
    bindings[0].offset = 4;
    assert_refused(cpu_test::submit(*gpu.backend, *gpu.queue, *p, bindings, 0),
                   Errc::invalid_argument, VACCEL_D_BAD_VALUE, offsetof(vaccel_binding, offset), 4);
    assert_ok(gpu.backend->free_buffer(in));
    assert_ok(gpu.backend->free_buffer(outb));
    gpu.finish(p);
}

// ----- the contract -----------------------------------------------------------

void the_device_advertises_the_fp32_tier_it_runs(void**)
{
    auto backend = lavapipe();
    const auto descriptors = backend->tosa_descriptors();
    assert_int_equal(descriptors.size(), 1);
    // Lavapipe has 8- and 16-bit storage, so the tier comes with the narrow
    // dtypes and CAST (test_programs_half.cpp checks those), and the spatial operators
    // (test_programs_spatial.cpp); every operator
    // and dtype of the FP32 tier is there.
    for (const auto& op : tosa::fp32_tier().operators)
        assert_true(descriptors[0].supports_operator(op.op));
    for (const auto& dtype : tosa::fp32_tier().dtypes)
        assert_true((descriptors[0].dtype(dtype.dtype)->roles & dtype.roles) == dtype.roles);
    // FP16 MATMUL on every device (test_matmul.cpp).
    assert_true(descriptors[0].operator_capability(Op::matmul)->dtypes ==
                (std::vector<DType>{DType::fp32, DType::fp16}));
    const vaccel_device_info& info = backend->device_info();
    assert_int_equal(info.formats, VACCEL_FORMAT_BIT(VACCEL_FORMAT_TOSA) |
                                       VACCEL_FORMAT_BIT(VACCEL_FORMAT_SPIRV));
    assert_int_equal(info.tosa_target_count, 1);
    assert_true((info.tosa_targets[0].profiles & tosa::fp32_target().profiles) != 0);
}

void a_past_deadline_is_refused_and_nothing_is_retained(void**)
{
    Rig gpu = vulkan_rig();
    auto p = gpu.must_load(unary(Op::abs, {4}));
    auto in = gpu.buffer(16), out = gpu.buffer(16);
    const auto bindings = gpu.bind(*p, {in.get(), out.get()});
    assert_refused(cpu_test::submit(*gpu.backend, *gpu.queue, *p, bindings, 1),
                   Errc::deadline_expired, VACCEL_D_DEADLINE, 0, 0);
    assert_int_equal(gpu.backend->live().events, 0);
    assert_int_equal(in->in_flight(), 0);
    assert_ok(gpu.backend->free_buffer(in));
    assert_ok(gpu.backend->free_buffer(out));
    gpu.finish(p);
}

void busy_objects_are_refused_while_a_run_is_in_flight(void**)
{
    // A large MATMUL (512^3 multiply-adds, hundreds of milliseconds on
    // lavapipe) is still running when submit returns.
    constexpr std::int64_t n = 512;
    tosa::GraphBuilder g;
    const auto a = f32(g, "a", {1, n, n});
    const auto b = f32(g, "b", {1, n, n});
    const auto out = f32(g, "out", {1, n, n});
    g.op(Op::matmul, {a, b, zero_point(g, "a_zp"), zero_point(g, "b_zp")}, {out});
    g.input(a);
    g.input(b);
    g.output(out);
    Rig gpu = vulkan_rig();
    auto p = gpu.must_load(g.finish());
    auto ba = gpu.buffer(n * n * 4), bb = gpu.buffer(n * n * 4), bo = gpu.buffer(n * n * 4);
    auto sink = std::make_shared<CallbackSink>();
    auto event = cpu_test::submit(*gpu.backend, *gpu.queue, *p,
                                  gpu.bind(*p, {ba.get(), bb.get(), bo.get()}), 0, sink);
    assert_ok(event);
    assert_int_equal(static_cast<int>(gpu.backend->poll(**event).state),
                     static_cast<int>(EventState::pending));
    assert_refused(gpu.backend->unload_program(p), Errc::busy, VACCEL_D_IN_USE, 1, 0);
    assert_refused(gpu.backend->free_buffer(bo), Errc::busy, VACCEL_D_IN_FLIGHT, bo->identity(), 1);
    std::vector<std::byte> scratch(4);
    assert_refused(gpu.backend->read_buffer(*bo, 0, scratch), Errc::busy, VACCEL_D_IN_FLIGHT,
                   bo->identity(), 1);
    assert_refused(gpu.backend->destroy_event(*event), Errc::busy, VACCEL_D_NOT_COMPLETE, 0, 0);
    const EventStatus status = gpu.wait(**event);
    assert_int_equal(static_cast<int>(status.state), static_cast<int>(EventState::complete));
    // The sink ran exactly once, before or as poll saw the event terminal.
    assert_int_equal(sink->count.load(), 1);
    assert_ok(gpu.backend->destroy_event(*event));
    for (auto* buffer : {&ba, &bb, &bo}) assert_ok(gpu.backend->free_buffer(*buffer));
    gpu.finish(p);  // every live counter back to zero
}

void operators_without_a_kernel_for_the_dtype_are_refused_at_load(void**)
{
    // INT32 ADD lies in the tier (INT32 is a tier dtype) but no kernel adds integers.
    tosa::GraphBuilder g;
    const auto a = g.tensor("a", {4}, DType::int32);
    const auto b = g.tensor("b", {4}, DType::int32);
    const auto out = g.tensor("out", {4}, DType::int32);
    g.op(Op::add, {a, b}, {out});
    g.input(a);
    g.input(b);
    g.output(out);
    Rig gpu = vulkan_rig();
    assert_refused(gpu.load(g.finish()), Errc::unsupported, VACCEL_D_TOSA_DTYPE,
                   static_cast<std::uint64_t>(DType::int32), static_cast<std::uint64_t>(Op::add));
    gpu.finish();
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(binary_operators_broadcast_like_the_cpu),
        cmocka_unit_test(comparisons_store_one_byte_per_bool),
        cmocka_unit_test(unary_operators_match_the_cpu),
        cmocka_unit_test(the_dense_path_is_bit_identical_to_the_general_path),
        cmocka_unit_test(select_and_logic_follow_a_bool_condition),
        cmocka_unit_test(transpose_concat_reverse_move_exactly),
        cmocka_unit_test(reductions_and_argmax_match_the_cpu),
        cmocka_unit_test(matmul_matches_the_cpu),
        cmocka_unit_test(max_pool2d_matches_the_cpu),
        cmocka_unit_test(a_chain_reusing_arena_bytes_is_ordered_by_barriers),
        cmocka_unit_test(constants_are_uploaded_into_the_arena_at_load),
        cmocka_unit_test(constants_are_uploaded_through_staging_too),
        cmocka_unit_test(edge_values_propagate_like_the_cpu),
        cmocka_unit_test(two_runs_of_one_program_in_flight_share_its_arena_in_order),
        cmocka_unit_test(bad_pools_and_misaligned_bindings_are_refused),
        cmocka_unit_test(the_device_advertises_the_fp32_tier_it_runs),
        cmocka_unit_test(a_past_deadline_is_refused_and_nothing_is_retained),
        cmocka_unit_test(busy_objects_are_refused_while_a_run_is_in_flight),
        cmocka_unit_test(operators_without_a_kernel_for_the_dtype_are_refused_at_load),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
