// test_analysis.cpp - analyze(): values, order, liveness, variables, control
// flow and shape checks, on the real fixtures and on built graphs; every
// refusal with its exact code, detail, arg0 and arg1.
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include "vaccel/tosa/analysis.hpp"

#include "support.hpp"

using namespace vaccel;
using namespace vaccel::tosa;
using namespace vaccel::tosa::test;

namespace {

using Indices = std::vector<std::uint32_t>;

Analysis analyze_ok(const Graph& graph)
{
    auto analysis = analyze(graph);
    if (!analysis) fail_msg("analyze refused: %s", analysis.error().note.c_str());
    return std::move(*analysis);
}

void expect_refusal(const Result<Analysis>& result, Errc code, std::uint32_t detail,
                    std::uint64_t arg0, const char* note_part)
{
    if (result.has_value()) fail_msg("analyze accepted a graph it must refuse (%s)", note_part);
    const Error& error = result.error();
    // arg1 is always 0: the operator index travels in the note.
    if (error.code != code || error.detail != detail || error.arg0 != arg0 || error.arg1 != 0 ||
        error.limit != VACCEL_LIMIT_NONE) {
        fail_msg("expected code %u detail %u arg0 %llu arg1 0, got code %u detail %u arg0 %llu "
                 "arg1 %llu (%s)",
                 static_cast<unsigned>(code), detail, static_cast<unsigned long long>(arg0),
                 static_cast<unsigned>(error.code), error.detail,
                 static_cast<unsigned long long>(error.arg0),
                 static_cast<unsigned long long>(error.arg1), error.note.c_str());
    }
    if (error.note.find(note_part) == std::string::npos) {
        fail_msg("note \"%s\" does not contain \"%s\"", error.note.c_str(), note_part);
    }
}

void expect_malformed(const Result<Analysis>& result, std::uint32_t reason, const char* note_part)
{
    expect_refusal(result, Errc::invalid_argument, VACCEL_D_TOSA_MALFORMED, reason, note_part);
}

void expect_cycle(const Result<Analysis>& result, const char* note_part)
{
    expect_refusal(result, Errc::invalid_argument, VACCEL_D_TOSA_GRAPH, VACCEL_TOSA_CYCLE,
                   note_part);
}

void expect_indices(const Indices& actual, const Indices& expected)
{
    if (actual == expected) return;
    std::string a, e;
    for (auto i : actual) a += std::to_string(i) + " ";
    for (auto i : expected) e += std::to_string(i) + " ";
    fail_msg("indices [%s] differ from the expected [%s]", a.c_str(), e.c_str());
}

std::vector<std::uint8_t> shape_bytes(std::vector<std::int64_t> values)
{
    std::vector<std::uint8_t> bytes(values.size() * 8);
    if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
}

// The facts every analysis must satisfy whatever the graph: the order is a
// permutation of the block's operators that puts every producer of an
// operator's (explicit or implicit) inputs first and keeps each variable's
// accesses in declared order; live_order is order without the dead.
void expect_consistent(const Graph& graph, const Analysis& analysis)
{
    assert_int_equal(analysis.regions.size(), graph.regions.size());
    for (std::size_t r = 0; r < graph.regions.size(); ++r) {
        assert_int_equal(analysis.regions[r].blocks.size(), graph.regions[r].blocks.size());
        for (std::size_t b = 0; b < graph.regions[r].blocks.size(); ++b) {
            const Block& block = graph.regions[r].blocks[b];
            const BlockAnalysis& info = analysis.regions[r].blocks[b];
            const std::size_t count = block.operators.size();
            assert_int_equal(info.order.size(), count);
            std::vector<std::size_t> position(count, count);
            for (std::size_t k = 0; k < count; ++k) {
                assert_true(info.order[k] < count);
                assert_int_equal(position[info.order[k]], count);  // each once
                position[info.order[k]] = k;
            }
            for (std::uint32_t i = 0; i < count; ++i) {
                Indices reads = block.operators[i].inputs;
                const auto& implicit = info.operators[i].implicit_inputs;
                reads.insert(reads.end(), implicit.begin(), implicit.end());
                for (std::uint32_t t : reads) {
                    const std::uint32_t producer = info.values[t].producer;
                    if (producer != no_operator) assert_true(position[producer] < position[i]);
                    assert_true(std::ranges::find(info.values[t].consumers, i) !=
                                info.values[t].consumers.end());
                }
            }
            for (const Variable& variable : info.variables) {
                for (std::uint32_t reader : variable.readers) {
                    for (std::uint32_t writer : variable.writers) {
                        if (reader == writer) continue;
                        assert_true((reader < writer) == (position[reader] < position[writer]));
                    }
                }
            }
            Indices live;
            for (std::uint32_t i : info.order) {
                if (!info.operators[i].dead) live.push_back(i);
            }
            expect_indices(info.live_order, live);
        }
    }
}

Indices iota(std::uint32_t count)
{
    Indices indices(count);
    for (std::uint32_t i = 0; i < count; ++i) indices[i] = i;
    return indices;
}

// ----- the real fixtures ----------------------------------------------------

void expect_add_analysis(const std::string& path)
{
    const Graph graph = parse_ok(read_fixture(path));
    const Analysis analysis = analyze_ok(graph);
    expect_consistent(graph, analysis);
    assert_int_equal(analysis.regions.size(), 1);
    assert_string_equal(analysis.regions[0].name.c_str(), "main");
    const BlockAnalysis& block = analysis.regions[0].blocks[0];
    assert_string_equal(block.name.c_str(), "main");
    expect_indices(block.order, {0});
    expect_indices(block.live_order, {0});
    assert_true(block.dead.empty());
    assert_true(block.constants.empty());
    assert_true(block.variables.empty());
    assert_false(block.side_effects);
    expect_indices(block.inputs, {0, 1});
    expect_indices(block.outputs, {2});
    // TosaInput_0 [1,4,4,1] broadcasts against TosaInput_1 [1,4,4,4].
    assert_int_equal(block.values[0].kind, ValueKind::block_input);
    assert_int_equal(block.values[0].elements, 16);
    assert_int_equal(block.values[0].bytes, 64);
    expect_indices(block.values[0].consumers, {0});
    assert_int_equal(block.values[2].kind, ValueKind::computed);
    assert_int_equal(block.values[2].producer, 0);
    assert_int_equal(block.values[2].bytes, 256);
    assert_true(block.values[2].consumers.empty());
}

void analyze_add_fixtures(void**)
{
    expect_add_analysis(add_tflite);
    expect_add_analysis(add_tf);
}

void analyze_conv2d_fixture(void**)
{
    const Graph graph = parse_ok(read_fixture(conv2d));
    const Analysis analysis = analyze_ok(graph);
    expect_consistent(graph, analysis);
    const Block& block = graph.regions[0].blocks[0];
    const BlockAnalysis& info = analysis.regions[0].blocks[0];
    expect_indices(info.order, {0, 1, 2, 3});
    assert_true(info.dead.empty());
    Indices constants = {tensor_index(block, "layer_0"), tensor_index(block, "layer_1"),
                         tensor_index(block, "layer_2")};
    std::ranges::sort(constants);
    expect_indices(info.constants, constants);
    const Value& zero_point = info.values[tensor_index(block, "layer_2")];
    assert_int_equal(zero_point.kind, ValueKind::constant);
    assert_int_equal(zero_point.producer, 2);
    expect_indices(zero_point.consumers, {3});  // read twice by CONV2D, listed once
    const Value& output = info.values[tensor_index(block, "TosaOutput_0")];
    assert_int_equal(output.producer, 3);
    assert_int_equal(output.elements, 32 * 32 * 16);
    assert_int_equal(output.bytes, 32 * 32 * 16 * 4);
}

void analyze_maxpool_int8_fixture(void**)
{
    const Graph graph = parse_ok(read_fixture(maxpool2d));
    const Analysis analysis = analyze_ok(graph);
    expect_consistent(graph, analysis);
    const BlockAnalysis& info = analysis.regions[0].blocks[0];
    expect_indices(info.order, {0});
    assert_true(info.dead.empty());
    assert_int_equal(info.values[0].bytes, 16 * 16 * 16);  // INT8: one byte each
    assert_int_equal(info.values[1].bytes, 8 * 8 * 16);
}

void analyze_lstm_fixture(void**)
{
    const Graph graph = parse_ok(read_fixture(lstm));
    const Analysis analysis = analyze_ok(graph);
    expect_consistent(graph, analysis);
    assert_int_equal(analysis.regions.size(), 3);
    for (const RegionAnalysis& region : analysis.regions) assert_int_equal(region.blocks.size(), 1);
    const Block& main = graph.regions[0].blocks[0];
    const BlockAnalysis& info = analysis.regions[0].blocks[0];
    const BlockAnalysis& cond = analysis.regions[1].blocks[0];
    const BlockAnalysis& body = analysis.regions[2].blocks[0];
    assert_int_equal(info.operators.size(), 29);
    assert_int_equal(cond.operators.size(), 1);
    assert_int_equal(body.operators.size(), 28);
    // The file lists every block in a valid order, and every operator feeds
    // a block output or a variable.
    expect_indices(info.order, iota(29));
    expect_indices(cond.order, iota(1));
    expect_indices(body.order, iota(28));
    assert_true(info.dead.empty());
    assert_true(cond.dead.empty());
    assert_true(body.dead.empty());

    // The WHILE_LOOP runs the cond and body regions' blocks.
    constexpr std::uint32_t loop = 25;
    assert_int_equal(main.operators[loop].op, Op::while_loop);
    assert_true(info.operators[loop].blocks == (std::vector<BlockRef>{{1, 0}, {2, 0}}));
    // The loop reads main's layer_24 (a TRANSPOSE result, through the body)
    // and layer_19 (through the cond) by name: implicit inputs, and their
    // only consumer.
    const std::uint32_t layer_24 = tensor_index(main, "layer_24");
    const std::uint32_t layer_19 = tensor_index(main, "layer_19");
    const auto& implicit = info.operators[loop].implicit_inputs;
    assert_true(std::ranges::find(implicit, layer_24) != implicit.end());
    assert_true(std::ranges::find(implicit, layer_19) != implicit.end());
    assert_true(std::ranges::find(implicit, tensor_index(main, "TosaInput_0")) == implicit.end());
    expect_indices(info.values[layer_24].consumers, {loop});
    assert_int_equal(info.values[layer_24].producer, 24);
    assert_int_equal(info.values[layer_24].kind, ValueKind::computed);
    assert_int_equal(cond.captured.size(), 1);
    assert_int_equal(body.captured.size(), 20);
    assert_int_equal(body.values[tensor_index(graph.regions[2].blocks[0], "layer_24")].kind,
                     ValueKind::captured);

    // Two variables, each read (IDENTITY into the loop) before it is
    // written (IDENTITY from the loop's results): the writes are side effects.
    assert_int_equal(info.variables.size(), 2);
    const Variable& first = info.variables[0];
    assert_string_equal(first.name.c_str(), "lstm/Variable_1");
    assert_int_equal(first.tensor, tensor_index(main, "Variable_1"));
    expect_indices(first.readers, {23});
    expect_indices(first.writers, {27});
    assert_true(first.declarations.empty());
    const Variable& second = info.variables[1];
    assert_string_equal(second.name.c_str(), "lstm/Variable");
    expect_indices(second.readers, {22});
    expect_indices(second.writers, {28});
    assert_int_equal(info.values[second.tensor].kind, ValueKind::variable);
    assert_int_equal(info.values[second.tensor].producer, no_operator);
    assert_true(info.operators[27].side_effect);
    assert_true(info.operators[28].side_effect);
    assert_false(info.operators[loop].side_effect);  // the body writes no variable
    assert_true(info.side_effects);
    assert_false(body.side_effects);
    // The nested blocks declare the same variables but never touch them.
    assert_int_equal(body.variables.size(), 2);
    assert_true(body.variables[0].readers.empty() && body.variables[0].writers.empty());

    // Constants: CONST / CONST_SHAPE outputs, SHAPE values 8 bytes each.
    assert_int_equal(info.constants.size(), 22);
    const Value& shape = info.values[tensor_index(main, "layer_0")];
    assert_int_equal(shape.kind, ValueKind::constant);
    assert_int_equal(shape.producer, 0);
    assert_int_equal(shape.bytes, 24);
    assert_int_equal(info.values[tensor_index(main, "TosaInput_0")].kind,
                     ValueKind::block_input);
}

// ----- built graphs: structure --------------------------------------------

void refuses_a_cycle(void**)
{
    GraphBuilder b;
    const auto in = b.tensor("in", {2}, DType::fp32);
    const auto x = b.tensor("x", {2}, DType::fp32);
    const auto y = b.tensor("y", {2}, DType::fp32);
    b.op(Op::add, {in, y}, {x});
    b.op(Op::sub, {x, in}, {y});
    b.input(in);
    b.output(x);
    expect_cycle(analyze(b.finish()),
                 "operator 0 (ADD) of block 'main' refused: it depends on itself through the cycle "
                 "0 (ADD) -> 1 (SUB) -> 0");
}

void refuses_an_operator_reading_its_own_output(void**)
{
    GraphBuilder b;
    const auto in = b.tensor("in", {2}, DType::fp32);
    const auto x = b.tensor("x", {2}, DType::fp32);
    b.op(Op::add, {in, in}, {b.tensor("unused", {2}, DType::fp32)});
    b.op(Op::add, {in, x}, {x});
    b.input(in);
    b.output(x);
    expect_cycle(analyze(b.finish()), "the cycle 1 (ADD) -> 1");
}

void refuses_a_second_producer(void**)
{
    GraphBuilder b;
    const auto in = b.tensor("in", {2}, DType::fp32);
    const auto x = b.tensor("x", {2}, DType::fp32);
    b.op(Op::add, {in, in}, {x});
    b.op(Op::sub, {in, in}, {x});
    b.input(in);
    b.output(x);
    expect_cycle(analyze(b.finish()), "operator 1 (SUB) of block 'main' refused: it writes "
                                      "tensor 'x', which is already written by operator 0");

    GraphBuilder c;
    const auto a = c.tensor("a", {2}, DType::fp32);
    c.op(Op::negate, {a, a, a}, {a});
    c.input(a);
    c.output(a);
    expect_cycle(analyze(c.finish()), "already a block input");
}

void refuses_unknown_tensors(void**)
{
    {
        GraphBuilder b;
        const auto in = b.tensor("in", {2}, DType::fp32);
        const auto out = b.tensor("out", {2}, DType::fp32);
        b.op(Op::add, {in, 42}, {out});
        b.input(in);
        b.output(out);
        expect_malformed(analyze(b.finish()), VACCEL_TOSA_UNKNOWN_TENSOR,
                         "operator 0 (ADD) of block 'main' refused: it reads tensor index 42");
    }
    {
        GraphBuilder b;
        const auto in = b.tensor("in", {2}, DType::fp32);
        b.op(Op::abs, {in}, {7});
        b.input(in);
        expect_malformed(analyze(b.finish()), VACCEL_TOSA_UNKNOWN_TENSOR,
                         "it writes tensor index 7");
    }
    {
        GraphBuilder b;
        b.input(b.tensor("in", {2}, DType::fp32));
        b.output(3);
        expect_malformed(analyze(b.finish()), VACCEL_TOSA_UNKNOWN_TENSOR,
                         "block 'main' refused: its output list names tensor index 3");
    }
    {
        // A name no operator writes, not an input, constant or variable.
        GraphBuilder b;
        const auto in = b.tensor("in", {2}, DType::fp32);
        const auto ghost = b.tensor("ghost", {2}, DType::fp32);
        const auto out = b.tensor("out", {2}, DType::fp32);
        b.op(Op::add, {in, ghost}, {out});
        b.input(in);
        b.output(out);
        expect_malformed(analyze(b.finish()), VACCEL_TOSA_UNKNOWN_TENSOR,
                         "operator 0 (ADD) of block 'main' refused: it reads tensor 'ghost'");
    }
    {
        GraphBuilder b;
        b.input(b.tensor("in", {2}, DType::fp32));
        b.output(b.tensor("out", {2}, DType::fp32));
        expect_malformed(analyze(b.finish()), VACCEL_TOSA_UNKNOWN_TENSOR,
                         "its output 'out' is written by no operator");
    }
    {
        GraphBuilder b;
        const auto in = b.tensor("in", {2}, DType::fp32);
        b.tensor("in", {3}, DType::fp32);
        b.input(in);
        expect_malformed(analyze(b.finish()), VACCEL_TOSA_UNKNOWN_TENSOR,
                         "tensor name 'in' is declared twice");
    }
    {
        GraphBuilder b;
        const auto in = b.tensor("in", {2}, DType::fp32);
        b.op(static_cast<Op>(76), {in}, {in});
        b.input(in);
        expect_refusal(analyze(b.finish()), Errc::invalid_argument, VACCEL_D_TOSA_OPERATOR, 76,
                       "operator 0 of block 'main' refused: Op 76 is not a TOSA 1.0 operator");
    }
    {
        GraphBuilder b;
        const auto in = b.tensor("in", {2}, DType::fp32);
        b.op(Op::variable_write, {in}, {});
        b.input(in);
        expect_malformed(analyze(b.finish()), VACCEL_TOSA_UNKNOWN_TENSOR,
                         "operator 0 (VARIABLE_WRITE) of block 'main' refused: it names no "
                         "variable tensor");
    }
}

void refuses_bad_tensors(void**)
{
    const auto with_tensor = [](std::vector<std::int64_t> shape, DType dtype,
                                std::vector<std::uint8_t> data = {}) {
        GraphBuilder b;
        b.input(b.tensor("t", std::move(shape), dtype, std::move(data)));
        return analyze(b.finish());
    };
    // Element counts: over 2^40, and over what 64 bits hold.
    expect_malformed(with_tensor({1 << 20, 1 << 20, 2}, DType::int8), VACCEL_TOSA_BAD_SHAPE,
                     "tensor 't' of block 'main' refused: its shape [1048576,1048576,2] has more "
                     "than 2^40 elements");
    // 2^40 elements times 2^31 - 1 wraps 64 bits: refused, never a small count.
    constexpr std::int64_t big = std::numeric_limits<std::int32_t>::max();
    expect_malformed(with_tensor({1 << 20, 1 << 20, big}, DType::fp32), VACCEL_TOSA_BAD_SHAPE,
                     "more than 2^40 elements");
    expect_malformed(with_tensor({big + 1}, DType::fp32), VACCEL_TOSA_BAD_SHAPE,
                     "dimension 0 is 2147483648");
    // Dynamic: Unsupported; other negatives: malformed.
    expect_refusal(with_tensor({4, -1}, DType::fp32), Errc::unsupported, VACCEL_D_TOSA_MALFORMED,
                   VACCEL_TOSA_BAD_SHAPE, "dimension 1 is dynamic (-1)");
    expect_malformed(with_tensor({-3}, DType::fp32), VACCEL_TOSA_BAD_SHAPE, "dimension 0 is -3");
    expect_refusal(with_tensor({2}, DType::unknown), Errc::invalid_argument, VACCEL_D_TOSA_DTYPE,
                   0, "DType 0 is not a TOSA 1.0 element type");
    expect_refusal(with_tensor({2}, static_cast<DType>(13)), Errc::invalid_argument,
                   VACCEL_D_TOSA_DTYPE, 13, "DType 13");
    // Data of the wrong packed size: INT4 [3] is two bytes.
    expect_malformed(with_tensor({3}, DType::int4, {0, 0, 0}), VACCEL_TOSA_BAD_DATA,
                     "needs 2 bytes of INT4 data, it holds 3");
}

void computes_packed_byte_sizes(void**)
{
    GraphBuilder b;
    const std::vector<std::pair<std::vector<std::int64_t>, DType>> cases = {
        {{3}, DType::int4},  {{4}, DType::int4},   {{5}, DType::boolean}, {{2}, DType::int48},
        {{3}, DType::shape}, {{}, DType::fp16},    {{0, 4}, DType::fp32}, {{2, 3}, DType::bf16},
        {{7}, DType::fp8e4m3},
    };
    for (std::size_t i = 0; i < cases.size(); ++i) {
        b.input(b.tensor("t" + std::to_string(i), cases[i].first, cases[i].second));
    }
    const Analysis analysis = analyze_ok(b.finish());
    const auto& values = analysis.regions[0].blocks[0].values;
    const std::vector<std::pair<std::uint64_t, std::uint64_t>> expected = {
        {3, 2}, {4, 2}, {5, 5}, {2, 12}, {3, 24}, {1, 2}, {0, 0}, {6, 12}, {7, 7},
    };
    for (std::size_t i = 0; i < expected.size(); ++i) {
        assert_int_equal(values[i].elements, expected[i].first);
        assert_int_equal(values[i].bytes, expected[i].second);
    }
}

void refuses_a_const_without_data(void**)
{
    GraphBuilder b;
    const auto c = b.tensor("c", {2}, DType::fp32);
    b.op(Op::const_, {}, {c});
    b.output(c);
    expect_malformed(analyze(b.finish()), VACCEL_TOSA_BAD_DATA,
                     "operator 0 (CONST) of block 'main' refused: its output 'c' carries no data");
}

// The shape operand of a RESHAPE to rank 0 has no elements, so no bytes:
// that is not a constant without data.
void a_const_of_no_elements_needs_no_data(void**)
{
    GraphBuilder b;
    const auto in = b.tensor("in", {1}, DType::fp32);
    const auto shape = b.tensor("shape", {0}, DType::shape);
    const auto out = b.tensor("out", {}, DType::fp32);
    b.op(Op::const_shape, {}, {shape});
    b.op(Op::reshape, {in, shape}, {out});
    b.input(in);
    b.output(out);
    assert_true(analyze(b.finish()).has_value());
}

void finds_dead_operators(void**)
{
    GraphBuilder b;
    const auto in = b.tensor("in", {2}, DType::fp32);
    const auto a = b.tensor("a", {2}, DType::fp32);
    const auto d = b.tensor("d", {2}, DType::fp32);
    const auto e = b.tensor("e", {2}, DType::fp32);
    const auto shift = b.tensor("shift", {1}, DType::int8, {0});
    const float initial[] = {0, 0};
    const auto state = b.constant_f32("state", {2}, initial);
    b.block().tensors[state].variable = true;
    b.block().tensors[state].variable_name = "counter";
    const auto r = b.tensor("r", {2}, DType::fp32);
    const auto w = b.tensor("w", {2}, DType::fp32);
    b.op(Op::const_, {}, {shift});                 // 0: dead (only the dead MUL reads it)
    b.op(Op::add, {in, in}, {a});                  // 1: live (block output)
    b.op(Op::sub, {in, in}, {d});                  // 2: dead, feeds only dead operators
    b.op(Op::mul, {d, d, shift}, {e});             // 3: dead
    b.op(Op::negate, {in, shift, shift}, {w});     // 4: live (written into the variable)
    b.op(Op::variable_write, {w}, {state});        // 5: live, a side effect
    b.op(Op::variable_read, {state}, {r});         // 6: dead: nobody reads r
    b.input(in);
    b.output(a);
    const Graph graph = b.finish();
    const Analysis analysis = analyze_ok(graph);
    expect_consistent(graph, analysis);
    const BlockAnalysis& info = analysis.regions[0].blocks[0];
    expect_indices(info.dead, {2, 3, 6});
    // The shift is live through the NEGATE that the variable write keeps.
    expect_indices(info.live_order, {0, 1, 4, 5});
    assert_true(info.operators[5].side_effect);
    assert_false(info.operators[6].side_effect);
    assert_true(info.operators[6].dead);
    assert_true(info.side_effects);
    assert_int_equal(info.variables.size(), 1);
    assert_string_equal(info.variables[0].name.c_str(), "counter");
    assert_int_equal(info.variables[0].tensor, state);
    expect_indices(info.variables[0].writers, {5});
    expect_indices(info.variables[0].readers, {6});
    assert_int_equal(info.values[state].kind, ValueKind::variable);
    assert_int_equal(info.values[state].producer, no_operator);
    expect_indices(info.values[shift].consumers, {3, 4});
    expect_indices(info.constants, {shift});
}

void keeps_custom_and_variable_declarations_live(void**)
{
    GraphBuilder b;
    const auto in = b.tensor("in", {2}, DType::fp32);
    const auto x = b.tensor("x", {2}, DType::fp32);
    const float initial[] = {1, 2};
    const auto state = b.constant_f32("state", {2}, initial);
    b.block().tensors[state].variable = true;
    b.op(Op::custom, {in}, {x});      // unknown effects: kept
    b.op(Op::variable, {}, {state});  // declares state: kept
    b.input(in);
    const Graph graph = b.finish();
    const BlockAnalysis info = analyze_ok(graph).regions[0].blocks[0];
    assert_true(info.dead.empty());
    assert_true(info.operators[0].side_effect);
    assert_int_equal(info.variables.size(), 1);
    assert_string_equal(info.variables[0].name.c_str(), "state");  // no variable_name: the tensor's
    expect_indices(info.variables[0].declarations, {1});
    assert_true(info.variables[0].readers.empty());
}

void orders_variable_accesses_as_declared(void**)
{
    const float initial[] = {0, 0};
    {
        // A read listed after a write sees it: it waits for the write, which
        // waits for its value (listed last).
        GraphBuilder b;
        const auto in = b.tensor("in", {2}, DType::fp32);
        const auto state = b.constant_f32("state", {2}, initial);
        b.block().tensors[state].variable = true;
        const auto v = b.tensor("v", {2}, DType::fp32);
        const auto r = b.tensor("r", {2}, DType::fp32);
        b.op(Op::identity, {v}, {state});
        b.op(Op::identity, {state}, {r});
        b.op(Op::add, {in, in}, {v});
        b.input(in);
        b.output(r);
        const Graph graph = b.finish();
        const Analysis analysis = analyze_ok(graph);
        expect_consistent(graph, analysis);
        expect_indices(analysis.regions[0].blocks[0].order, {2, 0, 1});
    }
    {
        // A write listed after a read waits for it, though nothing else
        // holds the write back.
        GraphBuilder b;
        const auto in = b.tensor("in", {2}, DType::fp32);
        const auto state = b.constant_f32("state", {2}, initial);
        b.block().tensors[state].variable = true;
        const auto u = b.tensor("u", {2}, DType::fp32);
        const auto r = b.tensor("r", {2}, DType::fp32);
        b.op(Op::add, {state, u}, {r});
        b.op(Op::identity, {in}, {state});
        b.op(Op::add, {in, in}, {u});
        b.input(in);
        b.output(r);
        const Graph graph = b.finish();
        const Analysis analysis = analyze_ok(graph);
        expect_consistent(graph, analysis);
        const BlockAnalysis& info = analysis.regions[0].blocks[0];
        expect_indices(info.order, {2, 0, 1});
        expect_indices(info.variables[0].readers, {0});
        expect_indices(info.variables[0].writers, {1});
    }
}

// ----- built graphs: control flow -------------------------------------------

Region one_block_region(std::string name, Block block)
{
    Region region;
    region.name = std::move(name);
    region.blocks.push_back(std::move(block));
    return region;
}

Tensor tensor_of(std::string name, std::vector<std::int64_t> shape, DType dtype = DType::fp32)
{
    Tensor tensor;
    tensor.name = std::move(name);
    tensor.shape = std::move(shape);
    tensor.dtype = dtype;
    return tensor;
}

// A copy of an enclosing block's tensor, as the parser makes one.
Tensor captured_copy(const Tensor& declared)
{
    Tensor copy = declared;
    copy.captured = true;
    return copy;
}

Operator op_of(Op op, Indices inputs, Indices outputs, Attributes attributes = {})
{
    attributes.present = true;
    return Operator{op, std::move(attributes), std::move(inputs), std::move(outputs), {}};
}

Attributes loop_attr(std::string cond, std::string body)
{
    Attributes attributes;
    attributes.cond_graph = std::move(cond);
    attributes.body_graph = std::move(body);
    return attributes;
}

// main: y = WHILE_LOOP(x) with cond and body reading main's constant `k`
// (whose CONST is listed after the loop) by name; the body's ADD writes the
// variable `state` of main when `write_state`.
Graph loop_graph(bool write_state = false)
{
    GraphBuilder b;
    const auto x = b.tensor("x", {2}, DType::fp32);
    const auto y = b.tensor("y", {2}, DType::fp32);
    const float values[] = {1, 2};
    const auto k = b.constant_f32("k", {2}, values);
    b.op(Op::while_loop, {x}, {y}, loop_attr("cond", "body"));
    b.op(Op::const_, {}, {k});
    b.input(x);
    b.output(y);
    Graph graph = b.finish();
    const Tensor& declared = graph.regions[0].blocks[0].tensors[k];

    Block cond;
    cond.name = "cond_bb";
    cond.tensors = {tensor_of("c_in", {2}), tensor_of("g", {2}, DType::boolean),
                    tensor_of("flag", {1}, DType::boolean), captured_copy(declared)};
    cond.operators = {op_of(Op::greater, {0, 3}, {1}), op_of(Op::reduce_any, {1}, {2})};
    cond.inputs = {0};
    cond.outputs = {2};

    Block body;
    body.name = "body_bb";
    body.tensors = {tensor_of("b_in", {2}), tensor_of("b_out", {2}), captured_copy(declared)};
    body.operators = {op_of(Op::add, {0, 2}, {1})};
    body.inputs = {0};
    body.outputs = {1};
    if (write_state) {
        Tensor state = tensor_of("state", {2});
        state.variable = true;
        state.data = f32_bytes(values);
        body.tensors.push_back(state);
        body.operators.push_back(op_of(Op::identity, {1}, {3}));
    }
    graph.regions.push_back(one_block_region("cond", std::move(cond)));
    graph.regions.push_back(one_block_region("body", std::move(body)));
    return graph;
}

void analyzes_a_while_loop_and_its_captures(void**)
{
    const Graph graph = loop_graph();
    const Analysis analysis = analyze_ok(graph);
    expect_consistent(graph, analysis);
    const BlockAnalysis& main = analysis.regions[0].blocks[0];
    assert_true(main.operators[0].blocks == (std::vector<BlockRef>{{1, 0}, {2, 0}}));
    // `k` is read by the loop's blocks: the loop waits for its CONST.
    expect_indices(main.operators[0].implicit_inputs, {2});
    expect_indices(main.values[2].consumers, {0});
    expect_indices(main.order, {1, 0});
    assert_true(main.dead.empty());
    assert_false(main.operators[0].side_effect);
    const BlockAnalysis& cond = analysis.regions[1].blocks[0];
    expect_indices(cond.captured, {3});
    assert_int_equal(cond.values[3].kind, ValueKind::captured);
    assert_int_equal(cond.values[2].elements, 1);
}

void a_loop_whose_body_writes_a_variable_is_a_side_effect(void**)
{
    Graph graph = loop_graph(true);
    graph.regions[0].blocks[0].outputs.clear();  // nothing reads the loop's result
    const Analysis analysis = analyze_ok(graph);
    const BlockAnalysis& main = analysis.regions[0].blocks[0];
    assert_true(analysis.regions[2].blocks[0].side_effects);
    assert_true(main.operators[0].side_effect);
    assert_true(main.dead.empty());  // the loop and the CONST it reads stay
    expect_indices(analysis.regions[2].blocks[0].variables[0].writers, {1});

    Graph quiet = loop_graph(false);
    quiet.regions[0].blocks[0].outputs.clear();
    expect_indices(analyze_ok(quiet).regions[0].blocks[0].dead, {0, 1});
}

void captures_pass_through_intermediate_blocks(void**)
{
    // main -> loop (body "outer") -> loop (body "inner"), inner reads main's `k`.
    Graph graph = loop_graph();
    Block& body = graph.regions[2].blocks[0];
    const Tensor k = body.tensors[2];
    // The body now runs an inner loop instead of reading k itself.
    body.tensors = {tensor_of("b_in", {2}), tensor_of("b_out", {2})};
    body.operators = {op_of(Op::while_loop, {0}, {1}, loop_attr("cond", "inner"))};
    Block inner;
    inner.name = "inner_bb";
    inner.tensors = {tensor_of("i_in", {2}), tensor_of("i_out", {2}), k};
    inner.operators = {op_of(Op::sub, {0, 2}, {1})};
    inner.inputs = {0};
    inner.outputs = {1};
    graph.regions.push_back(one_block_region("inner", std::move(inner)));
    const Analysis analysis = analyze_ok(graph);
    expect_consistent(graph, analysis);
    // The intermediate body declares no `k`: the outer loop still reads it.
    expect_indices(analysis.regions[0].blocks[0].operators[0].implicit_inputs, {2});
    expect_indices(analysis.regions[0].blocks[0].order, {1, 0});
    assert_true(analysis.regions[2].blocks[0].operators[0].implicit_inputs.empty());
}

void refuses_an_undefined_capture(void**)
{
    // main's `k` loses its CONST: the loop's blocks read a tensor nothing defines.
    Graph graph = loop_graph();
    Block& main = graph.regions[0].blocks[0];
    main.operators.pop_back();
    main.tensors[2].data.clear();
    expect_malformed(analyze(graph), VACCEL_TOSA_UNKNOWN_TENSOR,
                     "operator 0 (WHILE_LOOP) of block 'main' refused: it reads tensor 'k' (by "
                     "name, in a block it runs)");
}

void refuses_an_unknown_block_reference(void**)
{
    Graph graph = loop_graph();
    graph.regions[0].blocks[0].operators[0].attributes.body_graph = "nowhere";
    expect_malformed(analyze(graph), VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 0 (WHILE_LOOP) of block 'main' refused: its body_graph 'nowhere' "
                     "names no region");

    Graph empty = loop_graph();
    empty.regions[0].blocks[0].operators[0].attributes.cond_graph.clear();
    expect_malformed(analyze(empty), VACCEL_TOSA_BAD_ATTRIBUTE, "its cond_graph ''");

    // A block name resolves too (the region's name is tried first).
    Graph by_block = loop_graph();
    by_block.regions[0].blocks[0].operators[0].attributes.body_graph = "body_bb";
    expect_consistent(by_block, analyze_ok(by_block));
}

void refuses_recursive_block_references(void**)
{
    {
        // The body runs a loop whose body is itself.
        Graph graph = loop_graph();
        Block& body = graph.regions[2].blocks[0];
        body.operators.push_back(op_of(Op::while_loop, {0}, {1}, loop_attr("cond", "body")));
        expect_cycle(analyze(graph), "operator 1 (WHILE_LOOP) of block 'body_bb' refused: it runs "
                                     "block 'body_bb' of region 'body'");
    }
    {
        // body -> inner -> body, through a COND_IF.
        Graph graph = loop_graph();
        graph.regions[2].blocks[0].operators.push_back(
            op_of(Op::while_loop, {0}, {1}, loop_attr("cond", "inner")));
        Block inner;
        inner.name = "inner_bb";
        inner.tensors = {tensor_of("p", {}, DType::boolean), tensor_of("v", {2})};
        Attributes branches;
        branches.then_graph = "body";
        branches.else_graph = "body";
        inner.operators = {op_of(Op::cond_if, {0}, {1}, branches)};
        graph.regions.push_back(one_block_region("inner", std::move(inner)));
        expect_cycle(analyze(graph), "recursive control flow nests without end");
    }
}

void checks_while_loop_shapes(void**)
{
    {
        Graph graph = loop_graph();
        graph.regions[0].blocks[0].tensors[1].shape = {3};  // main's y
        expect_malformed(analyze(graph), VACCEL_TOSA_BAD_SHAPE,
                         "operator 0 (WHILE_LOOP) of block 'main' refused: result 0 'y' of block "
                         "'main' is [3], the operator's is [2]");
    }
    {
        Graph graph = loop_graph();
        graph.regions[2].blocks[0].tensors[0].shape = {1};  // the ADD broadcasts [1] + [2]
        expect_malformed(analyze(graph), VACCEL_TOSA_BAD_SHAPE,
                         "operator 0 (WHILE_LOOP) of block 'main' refused: input 0 'b_in' of "
                         "block 'body_bb' is [1], the operator's is [2]");
    }
    {
        Graph graph = loop_graph();
        graph.regions[1].blocks[0].outputs = {1};  // cond yields g [2]
        expect_malformed(analyze(graph), VACCEL_TOSA_BAD_SHAPE,
                         "cond block 'cond_bb' yields 'g' [2]; it must hold one element");
    }
    {
        Graph graph = loop_graph();
        graph.regions[2].blocks[0].outputs = {1, 0};
        expect_malformed(analyze(graph), VACCEL_TOSA_ARITY,
                         "operator 0 (WHILE_LOOP) of block 'main' refused: it carries 1 values");
    }
}

void checks_cond_if(void**)
{
    const auto build = cond_if_graph;
    const Graph good = build({}, {2});
    const Analysis analysis = analyze_ok(good);
    assert_true(analysis.regions[0].blocks[0].operators[0].blocks ==
                (std::vector<BlockRef>{{1, 0}, {2, 0}}));
    expect_malformed(analyze(build({2}, {2})), VACCEL_TOSA_BAD_SHAPE,
                     "condition 'p' is [2]; it must hold one element");
    expect_malformed(analyze(build({1}, {3})), VACCEL_TOSA_BAD_SHAPE,
                     "output 0 'out' of block 'then_bb' is [2], the operator's is [3]");
    Graph arity = build({}, {2});
    arity.regions[0].blocks[0].operators[0].inputs = {0};
    expect_malformed(analyze(arity), VACCEL_TOSA_ARITY,
                     "it passes 0 values and takes 1 results; block 'then_bb' takes 1");
}

// ----- built graphs: operator shapes ----------------------------------------

// One operator over tensors of the given shapes (FP32 unless given).
struct OneOp {
    GraphBuilder b;
    std::vector<std::uint32_t> inputs;

    std::uint32_t in(std::vector<std::int64_t> shape, DType dtype = DType::fp32,
                     std::vector<std::uint8_t> data = {})
    {
        const auto index = b.tensor("in" + std::to_string(inputs.size()), std::move(shape), dtype,
                                    data);
        if (data.empty()) b.input(index);
        inputs.push_back(index);
        return index;
    }
    std::uint32_t shape_const(std::vector<std::int64_t> values)
    {
        const auto count = static_cast<std::int64_t>(values.size());
        return in({count}, DType::shape, shape_bytes(std::move(values)));
    }
    Result<Analysis> run(Op op, std::vector<std::int64_t> output, Attributes attributes = {},
                         DType dtype = DType::fp32)
    {
        const auto out = b.tensor("out", std::move(output), dtype);
        b.op(op, inputs, {out}, std::move(attributes));
        b.output(out);
        return analyze(b.finish());
    }
};

std::vector<std::uint8_t> one_int8() { return {0}; }

void checks_broadcasting(void**)
{
    {
        OneOp g;
        g.in({2, 1});
        g.in({1, 3});
        assert_true(g.run(Op::add, {2, 3}).has_value());
    }
    {
        OneOp g;
        g.in({2, 3});
        g.in({2, 4});
        expect_malformed(g.run(Op::sub, {2, 4}), VACCEL_TOSA_BAD_SHAPE,
                         "operator 0 (SUB) of block 'main' refused: operand 'in1' [2,4] does not "
                         "broadcast with [2,3] (dimension 1)");
    }
    {
        OneOp g;
        g.in({2, 3});
        g.in({3});
        expect_malformed(g.run(Op::maximum, {2, 3}), VACCEL_TOSA_BAD_SHAPE,
                         "differ in rank; TOSA broadcasting needs equal ranks");
    }
    {
        OneOp g;
        g.in({2, 3});
        g.in({1, 3});
        expect_malformed(g.run(Op::greater, {1, 3}, {}, DType::boolean), VACCEL_TOSA_BAD_SHAPE,
                         "output 'out' is declared [1,3] but the operands give [2,3]");
    }
    {
        OneOp g;
        g.in({2, 3});
        g.in({2, 3});
        g.in({1}, DType::int8, one_int8());
        assert_true(g.run(Op::mul, {2, 3}).has_value());
    }
    {
        OneOp g;
        g.in({2, 3});
        g.in({2, 3});
        g.in({}, DType::int8, one_int8());
        expect_malformed(g.run(Op::mul, {2, 3}), VACCEL_TOSA_BAD_SHAPE,
                         "shift 'in2' has shape []; TOSA 1.0 defines [1]");
    }
    {
        OneOp g;
        g.in({2, 1}, DType::boolean);
        g.in({1, 3});
        g.in({2, 3});
        assert_true(g.run(Op::select, {2, 3}).has_value());
    }
    {
        OneOp g;
        g.in({2});
        expect_malformed(g.run(Op::add, {2}), VACCEL_TOSA_ARITY,
                         "operator 0 (ADD) of block 'main' refused: it has 1 inputs and 1 "
                         "outputs; TOSA 1.0 defines 2 and 1");
    }
}

void checks_unary_shapes(void**)
{
    {
        OneOp g;
        g.in({2, 3});
        assert_true(g.run(Op::sigmoid, {2, 3}).has_value());
    }
    {
        OneOp g;
        g.in({2, 3});
        expect_malformed(g.run(Op::cast, {3, 2}, {}, DType::fp16), VACCEL_TOSA_BAD_SHAPE,
                         "output 'out' is declared [3,2] but the operands give [2,3]");
    }
    {
        OneOp g;
        g.in({4});
        g.in({1}, DType::fp32, f32_bytes(std::vector<float>{0}));
        g.in({2}, DType::fp32, f32_bytes(std::vector<float>{0, 0}));
        expect_malformed(g.run(Op::negate, {4}), VACCEL_TOSA_BAD_SHAPE,
                         "output_zp 'in2' has shape [2]");
    }
    {
        OneOp g;
        g.in({4, 5});
        expect_malformed(g.run(Op::reverse, {4, 5}, axis_attr(2)), VACCEL_TOSA_BAD_ATTRIBUTE,
                         "axis 2 is outside rank 2");
    }
}

void checks_matmul(void**)
{
    const auto zero = f32_bytes(std::vector<float>{0});
    const auto build = [&](std::vector<std::int64_t> a, std::vector<std::int64_t> b,
                           std::vector<std::int64_t> out) {
        OneOp g;
        g.in(std::move(a));
        g.in(std::move(b));
        g.in({1}, DType::fp32, zero);
        g.in({1}, DType::fp32, zero);
        return g.run(Op::matmul, std::move(out));
    };
    assert_true(build({2, 3, 4}, {2, 4, 5}, {2, 3, 5}).has_value());
    expect_malformed(build({1, 2, 3}, {1, 4, 5}, {1, 2, 5}), VACCEL_TOSA_BAD_SHAPE,
                     "operator 0 (MATMUL) of block 'main' refused: A [1,2,3] and B [1,4,5] are "
                     "not [N,H,C] and [N,C,W]");
    expect_malformed(build({2, 3, 4}, {1, 4, 5}, {2, 3, 5}), VACCEL_TOSA_BAD_SHAPE,
                     "A [2,3,4] and B [1,4,5]");
    expect_malformed(build({3, 4}, {4, 5}, {3, 5}), VACCEL_TOSA_BAD_SHAPE, "A [3,4]");
    expect_malformed(build({2, 3, 4}, {2, 4, 5}, {2, 5, 3}), VACCEL_TOSA_BAD_SHAPE,
                     "output 'out' is declared [2,5,3] but the operands give [2,3,5]");
}

void checks_transpose(void**)
{
    {
        OneOp g;
        g.in({2, 3, 4});
        assert_true(g.run(Op::transpose, {4, 2, 3}, transpose_attr({2, 0, 1})).has_value());
    }
    {
        OneOp g;
        g.in({2, 3, 4});
        expect_malformed(g.run(Op::transpose, {2, 3, 4}, transpose_attr({2, 0, 1})),
                         VACCEL_TOSA_BAD_SHAPE, "declared [2,3,4] but the operands give [4,2,3]");
    }
    {
        OneOp g;
        g.in({2, 3, 4});
        expect_malformed(g.run(Op::transpose, {2, 3, 4}, transpose_attr({0, 0, 1})),
                         VACCEL_TOSA_BAD_ATTRIBUTE, "perms [0,0,1] is not a permutation of 0..2");
    }
}

void checks_reshape(void**)
{
    {
        OneOp g;
        g.in({2, 6});
        g.shape_const({3, 4});
        assert_true(g.run(Op::reshape, {3, 4}).has_value());
    }
    {
        OneOp g;
        g.in({2, 6});
        g.shape_const({4, 3});
        expect_malformed(g.run(Op::reshape, {3, 4}), VACCEL_TOSA_BAD_SHAPE,
                         "output 'out' is declared [3,4] but the shape operand 'in1' is [4,3]");
    }
    {
        OneOp g;
        g.in({2, 6});
        g.shape_const({3, -1});
        expect_malformed(g.run(Op::reshape, {3, 4}), VACCEL_TOSA_BAD_SHAPE, "no -1");
    }
    {
        OneOp g;
        g.in({2, 6});
        g.shape_const({5, 2});
        expect_malformed(g.run(Op::reshape, {5, 2}), VACCEL_TOSA_BAD_SHAPE,
                         "reshape from [2,6] to [5,2] changes the element count");
    }
    {
        // A shape operand computed at run time: only the element count is known.
        OneOp g;
        g.in({2, 6});
        g.in({2}, DType::shape);
        assert_true(g.run(Op::reshape, {12}).has_value());
    }
}

void checks_concat(void**)
{
    {
        OneOp g;
        g.in({2, 3});
        g.in({2, 5});
        assert_true(g.run(Op::concat, {2, 8}, axis_attr(1)).has_value());
    }
    {
        OneOp g;
        g.in({2, 3});
        g.in({2, 5});
        expect_malformed(g.run(Op::concat, {2, 9}, axis_attr(1)), VACCEL_TOSA_BAD_SHAPE,
                         "the inputs sum to 8 along axis 1, output 'out' [2,9] has 9");
    }
    {
        OneOp g;
        g.in({2, 3});
        g.in({3, 5});
        expect_malformed(g.run(Op::concat, {2, 8}, axis_attr(1)), VACCEL_TOSA_BAD_SHAPE,
                         "input 1 'in1' [3,5] does not fit output [2,8] outside axis 1");
    }
    {
        OneOp g;
        g.in({2, 3});
        expect_malformed(g.run(Op::concat, {2, 3}, axis_attr(2)), VACCEL_TOSA_BAD_ATTRIBUTE,
                         "axis 2 is outside rank 2");
    }
}

void checks_slice_pad_tile(void**)
{
    const auto pad_const = f32_bytes(std::vector<float>{0});
    {
        OneOp g;
        g.in({4, 5});
        g.shape_const({1, 2});
        g.shape_const({3, 3});
        assert_true(g.run(Op::slice, {3, 3}).has_value());
    }
    {
        OneOp g;
        g.in({4, 5});
        g.shape_const({1, 3});
        g.shape_const({3, 3});
        expect_malformed(g.run(Op::slice, {3, 3}), VACCEL_TOSA_BAD_SHAPE,
                         "start [1,3] and size [3,3] leave input [4,5] in dimension 1");
    }
    {
        OneOp g;
        g.in({4, 5});
        g.shape_const({0, 0});
        g.shape_const({2, 2});
        expect_malformed(g.run(Op::slice, {2, 3}), VACCEL_TOSA_BAD_SHAPE,
                         "output 'out' is declared [2,3] but the operands give [2,2]");
    }
    {
        OneOp g;
        g.in({4, 5});
        g.shape_const({0});
        g.shape_const({2, 2});
        expect_malformed(g.run(Op::slice, {2, 2}), VACCEL_TOSA_BAD_SHAPE,
                         "start has 1 values for an input of rank 2; it needs 2");
    }
    {
        OneOp g;
        g.in({2, 3});
        g.shape_const({1, 0, 2, 2});
        g.in({1}, DType::fp32, pad_const);
        assert_true(g.run(Op::pad, {3, 7}).has_value());
    }
    {
        OneOp g;
        g.in({2, 3});
        g.shape_const({1, 0, 2, 2});
        g.in({1}, DType::fp32, pad_const);
        expect_malformed(g.run(Op::pad, {3, 6}), VACCEL_TOSA_BAD_SHAPE,
                         "declared [3,6] but the operands give [3,7]");
    }
    {
        OneOp g;
        g.in({2, 3});
        g.shape_const({1, -1, 0, 0});
        g.in({1}, DType::fp32, pad_const);
        expect_malformed(g.run(Op::pad, {2, 3}), VACCEL_TOSA_BAD_SHAPE,
                         "padding [1,-1,0,0] must hold values in 0..2^31-1");
    }
    {
        OneOp g;
        g.in({2, 3});
        g.shape_const({2, 3});
        assert_true(g.run(Op::tile, {4, 9}).has_value());
    }
    {
        OneOp g;
        g.in({2, 3});
        g.shape_const({2, 3});
        expect_malformed(g.run(Op::tile, {4, 3}), VACCEL_TOSA_BAD_SHAPE,
                         "declared [4,3] but the operands give [4,9]");
    }
    {
        OneOp g;
        g.in({2, 3});
        g.in({2}, DType::shape);  // computed multiples: only the rank is known
        expect_malformed(g.run(Op::tile, {4}), VACCEL_TOSA_BAD_SHAPE, "differ in rank");
    }
}

void checks_reductions(void**)
{
    {
        OneOp g;
        g.in({2, 3, 4});
        assert_true(g.run(Op::reduce_sum, {2, 1, 4}, axis_attr(1)).has_value());
    }
    {
        OneOp g;
        g.in({2, 3, 4});
        expect_malformed(g.run(Op::reduce_max, {2, 4}, axis_attr(1)), VACCEL_TOSA_BAD_SHAPE,
                         "output 'out' is declared [2,4] but the operands give [2,1,4]");
    }
    {
        OneOp g;
        g.in({2, 3, 4});
        assert_true(g.run(Op::argmax, {2, 4}, axis_attr(1), DType::int32).has_value());
    }
    {
        OneOp g;
        g.in({2, 3, 4});
        expect_malformed(g.run(Op::argmax, {2, 1, 4}, axis_attr(1), DType::int32),
                         VACCEL_TOSA_BAD_SHAPE, "the operands give [2,4]");
    }
    {
        OneOp g;
        g.in({5});
        assert_true(g.run(Op::argmax, {}, axis_attr(0), DType::int32).has_value());
    }
    {
        OneOp g;
        g.in({2, 3});
        expect_malformed(g.run(Op::reduce_sum, {2, 3}, axis_attr(-1)), VACCEL_TOSA_BAD_ATTRIBUTE,
                         "operator 0 (REDUCE_SUM) of block 'main' refused: axis -1 is outside "
                         "rank 2");
    }
}

void accepts_unchecked_operators_as_declared(void**)
{
    // MAX_POOL2D is not shape-checked: a declared output the window
    // arithmetic would not give is accepted.
    OneOp g;
    g.in({1, 4, 4, 1});
    assert_true(g.run(Op::max_pool2d, {1, 7, 7, 1}, pool_attr({2, 2}, {2, 2}, {0, 0, 0, 0}))
                    .has_value());
}

void value_kind_names(void**)
{
    assert_string_equal(std::string(value_kind_name(ValueKind::block_input)).c_str(),
                        "block input");
    assert_string_equal(std::string(value_kind_name(ValueKind::captured)).c_str(), "captured");
}

}  // namespace

int main()
{
    const CMUnitTest tests[] = {
        cmocka_unit_test(analyze_add_fixtures),
        cmocka_unit_test(analyze_conv2d_fixture),
        cmocka_unit_test(analyze_maxpool_int8_fixture),
        cmocka_unit_test(analyze_lstm_fixture),
        cmocka_unit_test(refuses_a_cycle),
        cmocka_unit_test(refuses_an_operator_reading_its_own_output),
        cmocka_unit_test(refuses_a_second_producer),
        cmocka_unit_test(refuses_unknown_tensors),
        cmocka_unit_test(refuses_bad_tensors),
        cmocka_unit_test(computes_packed_byte_sizes),
        cmocka_unit_test(refuses_a_const_without_data),
        cmocka_unit_test(a_const_of_no_elements_needs_no_data),
        cmocka_unit_test(finds_dead_operators),
        cmocka_unit_test(keeps_custom_and_variable_declarations_live),
        cmocka_unit_test(orders_variable_accesses_as_declared),
        cmocka_unit_test(analyzes_a_while_loop_and_its_captures),
        cmocka_unit_test(a_loop_whose_body_writes_a_variable_is_a_side_effect),
        cmocka_unit_test(captures_pass_through_intermediate_blocks),
        cmocka_unit_test(refuses_an_undefined_capture),
        cmocka_unit_test(refuses_an_unknown_block_reference),
        cmocka_unit_test(refuses_recursive_block_references),
        cmocka_unit_test(checks_while_loop_shapes),
        cmocka_unit_test(checks_cond_if),
        cmocka_unit_test(checks_broadcasting),
        cmocka_unit_test(checks_unary_shapes),
        cmocka_unit_test(checks_matmul),
        cmocka_unit_test(checks_transpose),
        cmocka_unit_test(checks_reshape),
        cmocka_unit_test(checks_concat),
        cmocka_unit_test(checks_slice_pad_tile),
        cmocka_unit_test(checks_reductions),
        cmocka_unit_test(accepts_unchecked_operators_as_declared),
        cmocka_unit_test(value_kind_names),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
