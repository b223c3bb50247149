// test_cpu_plan.cpp - the CPU backend on the shared plan (docs/adr/0010-shared-plan.md):
// intermediates packed by lifetime, views without steps, staged outputs,
// and arenas made once per loaded program. Values are small integers so
// every expected output is exact and derived by hand.
#include "arena_pool.hpp"
#include "objects.hpp"
#include "plan.hpp"

#include "cpu_test_support.hpp"

using namespace cpu_test;
using vaccel::backend::cpu::ArenaPool;
using vaccel::backend::cpu::CpuProgram;
using vaccel::backend::cpu::Home;

namespace {

// x[4] -> a = x + c1 -> b = a * c2 -> c = b - x -> r = RESHAPE(c) [2,2]
//   -> y = r + c3 [2,2]: y = (x + c1) * c2 - x + c3.
// a dies after b is made (position 1), so c (written at position 2) takes
// a's bytes; r is c under another shape.
tosa::Graph chain()
{
    tosa::GraphBuilder g;
    const auto x = f32(g, "x", {4});
    const float one[] = {1, 1, 1, 1}, two[] = {2, 2, 2, 2}, ten[] = {10, 20, 30, 40};
    const auto c1 = g.constant_f32("c1", {4}, one);
    const auto c2 = g.constant_f32("c2", {4}, two);
    const auto c3 = g.constant_f32("c3", {2, 2}, ten);
    const auto a = f32(g, "a", {4});
    const auto b = f32(g, "b", {4});
    const auto c = f32(g, "c", {4});
    const auto r = f32(g, "r", {2, 2});
    const auto y = f32(g, "y", {2, 2});
    g.op(Op::add, {x, c1}, {a});
    g.op(Op::mul, {a, c2, mul_shift(g, "shift")}, {b});
    g.op(Op::sub, {b, x}, {c});
    g.op(Op::reshape, {c, shape_const(g, "shape", {2, 2})}, {r});
    g.op(Op::add, {r, c3}, {y});
    g.input(x);
    g.output(y);
    return g.finish();
}

void intermediates_share_bytes_and_views_take_no_step(void**)
{
    auto plan = vaccel::backend::cpu::compile(chain());
    assert_ok(plan);
    const auto& p = **plan;
    // ADD, MUL, SUB, ADD: the RESHAPE is a view, the CONSTs carry data.
    assert_int_equal(p.steps.size(), 4);
    const auto arena_offset = [&](std::uint32_t step) {
        const auto& v = p.values[p.steps[step].output];
        assert_true(v.home == Home::arena);
        return v.offset;
    };
    // a (step 0) and c (step 2) share bytes; b (step 1) does not.
    assert_int_equal(arena_offset(0), arena_offset(2));
    assert_int_not_equal(arena_offset(0), arena_offset(1));
    // The last ADD reads c through the view: the same bytes.
    assert_int_equal(p.values[p.steps[3].inputs[0]].offset, arena_offset(2));
    // Three constants in the arena (c1, c2, c3), the shift is compile-time.
    assert_int_equal(p.arena_constants.size(), 3);
    // 256-byte regions: c1 0, a 256 (dead after step 1), c2 512, b 768 (dead
    // after step 2), c 256 (a's bytes), c3 1024 (a constant never takes
    // earlier bytes), y 768 (b's bytes): five regions in all.
    assert_int_equal(p.arena_bytes, 5 * 256);
    assert_int_equal(p.values[p.steps[3].output].offset, arena_offset(1));
}

void a_chain_with_reused_bytes_computes_exactly(void**)
{
    Rig rig;
    auto program = rig.must_load(chain());
    auto& cpu = dynamic_cast<CpuProgram&>(*program);
    assert_int_equal(cpu.state->arenas->made(), 1);  // made at load
    for (int round = 0; round < 3; ++round) {
        const std::vector<float> x{1.0f + round, -2, 3, 0.5f};
        const auto out = rig.run(*program, {x});
        // (x + 1) * 2 - x + c3 = x + 2 + c3
        const std::vector<float> expected{x[0] + 12, 20, 35, 42.5f};
        assert_true(out[0] == expected);
    }
    // Runs one after the other reuse the load-time arena.
    assert_int_equal(cpu.state->arenas->made(), 1);
    rig.finish(program);
}

void the_pool_lends_distinct_arenas_with_constants(void**)
{
    auto plan = vaccel::backend::cpu::compile(chain());
    assert_ok(plan);
    ArenaPool pool(*plan);
    ArenaPool::Arena first = pool.take();
    ArenaPool::Arena second = pool.take();
    assert_non_null(first.get());
    assert_non_null(second.get());
    assert_ptr_not_equal(first.get(), second.get());
    assert_int_equal(pool.made(), 2);
    // Every arena carries the constants at the plan's offsets (c3 = 10 20 30 40).
    for (const auto& constant : (*plan)->arena_constants) {
        assert_memory_equal(first.get() + constant.offset, constant.bytes.data(),
                            constant.bytes.size());
        assert_memory_equal(second.get() + constant.offset, constant.bytes.data(),
                            constant.bytes.size());
    }
    std::byte* kept = first.get();
    pool.give(std::move(first));
    ArenaPool::Arena again = pool.take();
    assert_ptr_equal(again.get(), kept);
    assert_int_equal(pool.made(), 2);
    pool.give(std::move(again));
    pool.give(std::move(second));
}

// An output that is also an input, and an output read by a later operator:
// both staged, both exact.
void staged_outputs_cover_passthrough_and_reread(void**)
{
    tosa::GraphBuilder g;
    const auto x = f32(g, "x", {3});
    const auto a = f32(g, "a", {3});
    const auto y = f32(g, "y", {3});
    g.op(Op::negate, {x, zero_point(g, "in_zp"), zero_point(g, "out_zp")}, {a});
    g.op(Op::abs, {a}, {y});
    g.input(x);
    g.output(a);
    g.output(x);
    g.output(y);
    Rig rig;
    auto program = rig.must_load(g.finish());
    const auto out = rig.run(*program, {{1.5f, -2.0f, 0.0f}});
    assert_true((out[0] == std::vector<float>{-1.5f, 2.0f, -0.0f}));
    assert_true((out[1] == std::vector<float>{1.5f, -2.0f, 0.0f}));
    assert_true((out[2] == std::vector<float>{1.5f, 2.0f, 0.0f}));
    rig.finish(program);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(intermediates_share_bytes_and_views_take_no_step),
        cmocka_unit_test(a_chain_with_reused_bytes_computes_exactly),
        cmocka_unit_test(the_pool_lends_distinct_arenas_with_constants),
        cmocka_unit_test(staged_outputs_cover_passthrough_and_reread),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
