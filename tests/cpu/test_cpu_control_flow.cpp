// test_cpu_control_flow.cpp - COND_IF, WHILE_LOOP and variables on the CPU
// backend: blocks run by control flow, tensors read from the enclosing
// block, state that persists across submissions and is committed only by a
// run that succeeds, loops ended by the deadline, loop values that swap,
// and the stateful LSTM fixture against TFLite's output. Expected values are
// exact (small integers and powers of two) and derived in the comments.
#include <cmath>
#include <fstream>
#include <iterator>

#include "raw_run_support.hpp"

using namespace cpu_test;

namespace {

// A block built with the GraphBuilder, named and placed in its own region.
tosa::Region region_of(const std::string& name, tosa::GraphBuilder& builder)
{
    tosa::Graph built = builder.finish();
    tosa::Region region;
    region.name = name;
    region.blocks = std::move(built.regions.front().blocks);
    region.blocks.front().name = name + "_bb";
    return region;
}

// Declares, in a nested block, a tensor of the enclosing block it reads by
// name (as producers write them: the parser makes it a captured copy).
std::uint32_t captured(tosa::GraphBuilder& g, const std::string& name,
                       std::vector<std::int64_t> shape, DType dtype)
{
    const std::uint32_t t = g.tensor(name, std::move(shape), dtype);
    g.block().tensors[t].captured = true;
    return t;
}

Bytes i32_scalar(std::int32_t v) { return to_bytes(std::vector<std::int32_t>{v}); }
Bytes f32s(std::vector<float> v) { return to_bytes(v); }

// COND_IF(p, x): then = x + c (c = [10, 20] of main, read by name), else = |x|.
tosa::Graph cond_if_graph()
{
    tosa::GraphBuilder g;
    const auto p = g.tensor("p", {1}, DType::boolean);
    const auto x = f32(g, "x", {2});
    const float ten[] = {10, 20};
    g.constant_f32("c", {2}, ten);
    const auto y = f32(g, "y", {2});
    tosa::Attributes branches;
    branches.then_graph = "then";
    branches.else_graph = "else";
    g.op(Op::cond_if, {p, x}, {y}, branches);
    g.input(p);
    g.input(x);
    g.output(y);
    tosa::Graph graph = g.finish();

    tosa::GraphBuilder then_block;
    const auto tin = f32(then_block, "in", {2});
    const auto tc = captured(then_block, "c", {2}, DType::fp32);
    const auto tout = f32(then_block, "out", {2});
    then_block.op(Op::add, {tin, tc}, {tout});
    then_block.input(tin);
    then_block.output(tout);
    graph.regions.push_back(region_of("then", then_block));

    tosa::GraphBuilder else_block;
    const auto ein = f32(else_block, "in", {2});
    const auto eout = f32(else_block, "out", {2});
    else_block.op(Op::abs, {ein}, {eout});
    else_block.input(ein);
    else_block.output(eout);
    graph.regions.push_back(region_of("else", else_block));
    return graph;
}

void cond_if_runs_the_branch_the_condition_picks(void**)
{
    Rig rig;
    auto program = rig.must_load(cond_if_graph());
    const Bytes x = f32s({-1.5f, 2.0f});
    auto taken = run_ok(rig, *program, {Bytes{1}, x});
    assert_true((from_bytes<float>(taken[0]) == std::vector<float>{8.5f, 22.0f}));
    auto other = run_ok(rig, *program, {Bytes{0}, x});
    assert_true((from_bytes<float>(other[0]) == std::vector<float>{1.5f, 2.0f}));
    rig.finish(program);
}

// WHILE_LOOP over (i INT32, acc FP32 [2]): while limit > i (limit = 5, a
// constant of main the condition reads by name): i + 1, acc + acc.
// From i0 the body runs 5 - i0 times (none when i0 >= 5): acc * 2^(5 - i0).
// `swap` adds loop values a, b that the body passes through swapped.
tosa::Graph counting_loop(bool swap = false)
{
    tosa::GraphBuilder g;
    const auto i0 = g.tensor("i0", {}, DType::int32);
    const auto acc0 = f32(g, "acc0", {2});
    std::vector<std::uint8_t> five(4);
    five[0] = 5;
    g.tensor("limit", {}, DType::int32, five);
    const auto i_end = g.tensor("i_end", {}, DType::int32);
    const auto acc_end = f32(g, "acc_end", {2});
    std::vector<std::uint32_t> inputs{i0, acc0}, outputs{i_end, acc_end};
    if (swap) {
        inputs.push_back(g.tensor("a0", {1}, DType::int32));
        inputs.push_back(g.tensor("b0", {1}, DType::int32));
        outputs.push_back(g.tensor("a_end", {1}, DType::int32));
        outputs.push_back(g.tensor("b_end", {1}, DType::int32));
    }
    tosa::Attributes loop;
    loop.cond_graph = "cond";
    loop.body_graph = "body";
    g.op(Op::while_loop, inputs, outputs, loop);
    for (auto t : inputs) g.input(t);
    for (auto t : outputs) g.output(t);
    tosa::Graph graph = g.finish();

    tosa::GraphBuilder cond;
    std::vector<std::uint32_t> cond_in{cond.tensor("i", {}, DType::int32), f32(cond, "acc", {2})};
    if (swap) {
        cond_in.push_back(cond.tensor("a", {1}, DType::int32));
        cond_in.push_back(cond.tensor("b", {1}, DType::int32));
    }
    const auto limit = captured(cond, "limit", {}, DType::int32);
    const auto more = cond.tensor("more", {}, DType::boolean);
    cond.op(Op::greater, {limit, cond_in[0]}, {more});
    for (auto t : cond_in) cond.input(t);
    cond.output(more);
    graph.regions.push_back(region_of("cond", cond));

    tosa::GraphBuilder body;
    const auto i = body.tensor("i", {}, DType::int32);
    const auto acc = f32(body, "acc", {2});
    std::vector<std::uint8_t> one(4);
    one[0] = 1;
    const auto step = body.tensor("one", {}, DType::int32, one);
    const auto next_i = body.tensor("next_i", {}, DType::int32);
    const auto next_acc = f32(body, "next_acc", {2});
    body.op(Op::add, {i, step}, {next_i});
    body.op(Op::add, {acc, acc}, {next_acc});
    body.input(i);
    body.input(acc);
    body.output(next_i);
    body.output(next_acc);
    if (swap) {
        const auto a = body.tensor("a", {1}, DType::int32);
        const auto b = body.tensor("b", {1}, DType::int32);
        body.input(a);
        body.input(b);
        body.output(b);  // the next a is this b, the next b this a
        body.output(a);
    }
    graph.regions.push_back(region_of("body", body));
    return graph;
}

void while_loop_counts_with_a_captured_limit(void**)
{
    Rig rig;
    auto program = rig.must_load(counting_loop());
    for (std::int32_t start : {0, 3, 5, 9}) {
        auto out = run_ok(rig, *program, {i32_scalar(start), f32s({1.0f, -0.75f})});
        const std::int32_t runs = std::max(0, 5 - start);
        const float factor = std::ldexp(1.0f, runs);
        assert_int_equal(from_bytes<std::int32_t>(out[0])[0], std::max(start, 5));
        assert_true((from_bytes<float>(out[1]) == std::vector<float>{factor, -0.75f * factor}));
    }
    rig.finish(program);
}

// Five iterations swap (a, b) five times: an odd count ends swapped, and no
// output may be copied from bytes an earlier output overwrote.
void loop_values_passed_through_swapped_stay_intact(void**)
{
    Rig rig;
    auto program = rig.must_load(counting_loop(true));
    auto out = run_ok(rig, *program,
                      {i32_scalar(0), f32s({1, 1}), i32_scalar(111), i32_scalar(222)});
    assert_int_equal(from_bytes<std::int32_t>(out[2])[0], 222);
    assert_int_equal(from_bytes<std::int32_t>(out[3])[0], 111);
    out = run_ok(rig, *program, {i32_scalar(1), f32s({1, 1}), i32_scalar(111), i32_scalar(222)});
    assert_int_equal(from_bytes<std::int32_t>(out[2])[0], 111);  // four swaps
    assert_int_equal(from_bytes<std::int32_t>(out[3])[0], 222);
    rig.finish(program);
}

// A loop whose condition is always true (5 > 0 on constants) ends only by
// the deadline: DeadlineExpired, nothing written to the outputs.
void a_loop_that_never_ends_is_ended_by_the_deadline(void**)
{
    tosa::Graph graph = counting_loop();
    // The body no longer counts: i stays below the limit forever.
    tosa::Block& body = graph.regions[2].blocks[0];
    body.operators[0].op = Op::maximum;  // max(i, 1): 1 while i <= 1
    body.operators[0].attributes.nan_mode = 1;
    Rig rig;
    auto program = rig.must_load(graph);
    auto in0 = rig.buffer(4);
    auto in1 = rig.buffer(8);
    auto out0 = rig.buffer(4);
    auto out1 = rig.buffer(8);
    const Bytes zero = i32_scalar(0);
    const Bytes start = f32s({1, 2});
    assert_ok(rig.backend->write_buffer(*in0, 0, std::as_bytes(std::span(zero))));
    assert_ok(rig.backend->write_buffer(*in1, 0, std::as_bytes(std::span(start))));
    const std::vector<float> untouched{-7.0f, -7.0f};
    assert_ok(rig.backend->write_buffer(*out1, 0, bytes_of(untouched)));
    auto event = cpu_test::submit(*rig.backend, *rig.queue, *program,
                                  rig.bind(*program, {in0.get(), in1.get(), out0.get(), out1.get()}),
                                  now_ns() + 50'000'000);
    assert_ok(event);
    const EventStatus status = rig.wait(**event);
    assert_int_equal(static_cast<int>(status.state), static_cast<int>(EventState::failed));
    assert_int_equal(static_cast<int>(status.failure.code), static_cast<int>(Errc::deadline_expired));
    assert_true(rig.read(*out1, 2) == untouched);
    assert_ok(rig.backend->destroy_event(*event));
    for (auto* b : {&in0, &in1, &out0, &out1}) assert_ok(rig.backend->free_buffer(*b));
    rig.finish(program);
}

// state = IDENTITY(var); sum = state + x; var = IDENTITY(sum); GATHER(table,
// idx) -> g. Outputs sum and g. The variable starts at [100, 200].
tosa::Graph accumulator()
{
    tosa::GraphBuilder g;
    const float initial[] = {100, 200};
    const auto var = g.constant_f32("var", {2}, initial);
    g.block().tensors[var].variable = true;
    g.block().tensors[var].variable_name = "acc";
    const auto x = f32(g, "x", {2});
    const auto state = f32(g, "state", {2});
    const auto sum = f32(g, "sum", {2});
    g.op(Op::identity, {var}, {state});
    g.op(Op::add, {state, x}, {sum});
    g.op(Op::identity, {sum}, {var});
    const float rows[] = {1, 2, 3};
    const auto table = g.constant_f32("table", {1, 3, 1}, rows);
    const auto idx = g.tensor("idx", {1, 1}, DType::int32);
    const auto picked = f32(g, "picked", {1, 1, 1});
    g.op(Op::gather, {table, idx}, {picked});
    g.input(x);
    g.input(idx);
    g.output(sum);
    g.output(picked);
    return g.finish();
}

void variables_persist_and_only_successful_runs_commit(void**)
{
    Rig rig;
    auto program = rig.must_load(accumulator());
    auto out = run_ok(rig, *program, {f32s({1, 2}), i32_scalar(2)});
    assert_true((from_bytes<float>(out[0]) == std::vector<float>{101, 202}));
    assert_true((from_bytes<float>(out[1]) == std::vector<float>{3}));
    // An index outside [0, 3) fails the run: the variable keeps [101, 202].
    RawRun failed = run_raw(rig, *program, {f32s({1000, 1000}), i32_scalar(7)});
    assert_int_equal(static_cast<int>(failed.status.state), static_cast<int>(EventState::failed));
    out = run_ok(rig, *program, {f32s({1, 2}), i32_scalar(0)});
    assert_true((from_bytes<float>(out[0]) == std::vector<float>{102, 204}));
    // A second load starts from the declaration again.
    auto again = rig.must_load(accumulator());
    out = run_ok(rig, *again, {f32s({0, 0}), i32_scalar(0)});
    assert_true((from_bytes<float>(out[0]) == std::vector<float>{100, 200}));
    assert_ok(rig.backend->unload_program(again));
    rig.finish(program);
}

// The real stateful LSTM: WHILE_LOOP over 21 time steps with GATHER, two
// CONV2Ds, SLICE, SIGMOID, TANH and MUL in the body, two variables, and the
// body reading 20 tensors of main by name. TFLite's output, within the
// float tolerance of the ops involved (docs/operators.md: rel 1e-5).
std::vector<float> read_f32_npy(const std::string& path)
{
    std::ifstream file(path, std::ios::binary);
    if (!file) fail_msg("cannot open %s", path.c_str());
    const std::vector<char> bytes{std::istreambuf_iterator<char>(file), {}};
    const std::size_t header = static_cast<unsigned char>(bytes[8]) |
                               static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8;
    const std::string dict(bytes.data() + 10, header);
    assert_true(dict.find("'descr': '<f4'") != std::string::npos);
    std::vector<float> values((bytes.size() - 10 - header) / 4);
    std::memcpy(values.data(), bytes.data() + 10 + header, values.size() * 4);
    return values;
}

void lstm_fixture_matches_tflite(void**)
{
    const std::string dir = std::string(VACCEL_TOSA_FIXTURES) + "/v1.0-lstm_stateful_13x21x3_f32";
    std::ifstream file(dir + "/flatbuffer-tflite/test_lstm_stateful_13x21x3_f32.tosa",
                       std::ios::binary);
    const std::vector<char> bytes{std::istreambuf_iterator<char>(file), {}};
    assert_true(!bytes.empty());
    Rig rig;
    ProgramDesc desc;
    desc.payload = std::as_bytes(std::span(bytes));
    auto loaded = rig.backend->load_program(*rig.context, desc);
    assert_ok(loaded);
    auto program = std::move(*loaded);
    const std::vector<float> input = read_f32_npy(dir + "/placeholder_0.npy");
    const std::vector<float> expected = read_f32_npy(dir + "/tflite_result.npy");
    assert_int_equal(input.size(), 13 * 21 * 3);
    assert_int_equal(expected.size(), 13 * 2);
    const auto out = rig.run(*program, {input});
    double worst = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) {
        const double error = std::fabs(double(out[0][i]) - expected[i]) /
                             std::max(1.0, std::fabs(double(expected[i])));
        worst = std::max(worst, error);
    }
    if (worst > 1e-5) fail_msg("largest relative error %g", worst);
    rig.finish(program);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cond_if_runs_the_branch_the_condition_picks),
        cmocka_unit_test(while_loop_counts_with_a_captured_limit),
        cmocka_unit_test(loop_values_passed_through_swapped_stay_intact),
        cmocka_unit_test(a_loop_that_never_ends_is_ended_by_the_deadline),
        cmocka_unit_test(variables_persist_and_only_successful_runs_commit),
        cmocka_unit_test(lstm_fixture_matches_tflite),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
