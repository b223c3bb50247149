// test_epilogues.cpp - elementwise chains folded into their producers
// (tosa/plan.hpp's epilogues, vaccel/gpu/lowering_epilogue.hpp):
//  - the planner's rules, on plans made with the GPU filter: which chains
//    it folds (one reader, not a block output, operands ready before the
//    producer, at most max_epilogue_stages links) and which it leaves;
//  - on the Vulkan device (lavapipe in `make test`): each chain's bytes
//    with fusion equal the same graph's bytes without it
//    (VACCEL_GPU_FUSION=0), bit for bit, and match the CPU backend within
//    the operators' tolerance; the plan says what it fused.
#include <cmath>
#include <cstdlib>

#include "lowering.hpp"
#include "vaccel/gpu/lowering_epilogue.hpp"
#include "vaccel/tosa/analysis.hpp"
#include "vaccel/tosa/plan.hpp"
#include "epilogue_graphs.hpp"
#include "vulkan_test_support.hpp"

namespace {

using namespace vulkan_test;
using namespace epilogue_test;

tosa::ProgramPlan plan_of(const tosa::Graph& graph)
{
    auto analysis = tosa::analyze(graph);
    assert_ok(analysis);
    auto plan = tosa::plan_block(graph, *analysis, tosa::BlockRef{0, 0},
                                 backend::gpu::with_epilogues({}, true));
    assert_ok(plan);
    return std::move(*plan);
}

// The operators each dispatch computes: its own, then those it fused.
std::vector<std::vector<Op>> dispatch_ops(const tosa::Graph& graph, const tosa::ProgramPlan& plan)
{
    const tosa::Block& block = graph.regions[0].blocks[0];
    std::vector<std::vector<Op>> ops;
    for (const tosa::Dispatch& d : plan.dispatches) {
        std::vector<Op> one{d.op};
        for (std::uint32_t e : d.fused) one.push_back(block.operators[e].op);
        ops.push_back(one);
    }
    return ops;
}

void the_planner_folds_chains_with_one_reader(void**)
{
    {
        const auto graph = conv_residual_relu();
        const auto plan = plan_of(graph);
        assert_true(dispatch_ops(graph, plan) ==
                    (std::vector<std::vector<Op>>{{Op::conv2d, Op::add, Op::clamp}}));
    }
    {
        const auto graph = matmul_bias_residual();
        const auto plan = plan_of(graph);
        assert_true(dispatch_ops(graph, plan) ==
                    (std::vector<std::vector<Op>>{{Op::matmul, Op::add, Op::add, Op::mul}}));
        // Every result of the chain is the block output's slot.
        const tosa::Block& block = graph.regions[0].blocks[0];
        const auto y = block.outputs[0];
        for (std::uint32_t t = 0; t < block.tensors.size(); ++t)
            if (block.tensors[t].name == "m" || block.tensors[t].name == "mr")
                assert_true(plan.locations[t] == plan.locations[y]);
    }
    {
        const auto graph = long_chain();
        const auto plan = plan_of(graph);
        assert_true(dispatch_ops(graph, plan) ==
                    (std::vector<std::vector<Op>>{{Op::sub, Op::sub, Op::tanh, Op::maximum},
                                                  {Op::sigmoid, Op::pow}}));
    }
}

void the_planner_leaves_what_it_cannot_fold(void**)
{
    // The intermediate is a block output, read twice, or the second operand
    // is made after the producer: nothing folds.
    tosa::GraphBuilder g;
    const auto x = f32(g, "x", {8});
    const auto a = f32(g, "a", {8});
    const auto b = f32(g, "b", {8});
    const auto c = f32(g, "c", {8});
    const auto d = f32(g, "d", {8});
    const auto e = f32(g, "e", {8});
    const auto late = f32(g, "late", {8});
    const auto f = f32(g, "f", {8});
    g.op(Op::exp, {x}, {a});
    g.op(Op::abs, {a}, {b});       // a is a block output: not folded
    g.op(Op::negate, {b, zero_point(g, "zp1"), zero_point(g, "zp2")}, {c});
    g.op(Op::add, {c, c}, {d});    // c read twice: not folded into NEGATE
    g.op(Op::floor, {x}, {e});
    g.op(Op::ceil, {x}, {late});
    g.op(Op::sub, {e, late}, {f}); // late made after FLOOR: not folded into it
    g.input(x);
    g.output(a);
    g.output(d);
    g.output(f);
    const auto graph = g.finish();
    const auto plan = plan_of(graph);
    const auto ops = dispatch_ops(graph, plan);
    // ABS folds into nothing before it but takes NEGATE (b has one reader);
    // CEIL takes the SUB (its other operand e was made before it).
    assert_true(ops == (std::vector<std::vector<Op>>{{Op::exp},
                                                     {Op::abs, Op::negate},
                                                     {Op::add},
                                                     {Op::floor},
                                                     {Op::ceil, Op::sub}}));
    // A broadcast the stages cannot read (a column, [3, 1] over [3, 4]) is left.
    tosa::GraphBuilder h;
    const auto p = f32(h, "p", {3, 4});
    const auto col = f32(h, "col", {3, 1});
    const auto q = f32(h, "q", {3, 4});
    const auto z = f32(h, "z", {3, 4});
    h.op(Op::exp, {p}, {q});
    h.op(Op::mul, {q, col, mul_shift(h, "shift")}, {z});
    h.input(p);
    h.input(col);
    h.output(z);
    const auto column = h.finish();
    assert_true(dispatch_ops(column, plan_of(column)) ==
                (std::vector<std::vector<Op>>{{Op::exp}, {Op::mul}}));
}

void fused_chains_equal_unfused_ones_on_the_device(void**)
{
    epilogue_test::check_every_chain([] { return vulkan_rig(); });
}

void a_fused_plan_dispatches_less(void**)
{
    // The device's own plan, as loaded: fewer dispatches with fusion.
    auto dispatches = [](const char* fusion, bool conv_tiles = true) {
        setenv("VACCEL_GPU_FUSION", fusion, 1);
        const auto graph = conv_residual_relu();
        auto analysis = tosa::analyze(graph);
        assert_ok(analysis);
        auto fused = backend::gpu::fusion_chosen();
        assert_ok(fused);
        auto plan = tosa::plan_block(
            graph, *analysis, tosa::BlockRef{0, 0}, backend::gpu::with_epilogues({}, *fused),
            [conv_tiles](const tosa::OperatorView& view) {
                backend::vulkan::MatmulChoice choice;
                if (conv_tiles) choice.conv = backend::vulkan::MatmulTiles{64, 64, 16, 4, 4};
                return backend::vulkan::lower(view, choice);
            });
        assert_ok(plan);
        unsetenv("VACCEL_GPU_FUSION");
        return plan->dispatches.size();
    };
    // Unfused: CONV2D, ADD, CLAMP. Fused: the CONV2D GEMM kernel alone,
    // which applies the ADD and the CLAMP at its store; on a device without
    // conv tiles, the direct kernel (no epilogue of its own) and one pass.
    assert_int_equal(dispatches("0"), 3);
    assert_int_equal(dispatches("1"), 1);
    assert_int_equal(dispatches("1", false), 2);
    setenv("VACCEL_GPU_FUSION", "yes", 1);
    auto refused = backend::gpu::fusion_chosen();
    unsetenv("VACCEL_GPU_FUSION");
    assert_false(refused.has_value());
    assert_true(refused.error().note.find("VACCEL_GPU_FUSION=\"yes\"") != std::string::npos);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_planner_folds_chains_with_one_reader),
        cmocka_unit_test(the_planner_leaves_what_it_cannot_fold),
        cmocka_unit_test(fused_chains_equal_unfused_ones_on_the_device),
        cmocka_unit_test(a_fused_plan_dispatches_less),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
