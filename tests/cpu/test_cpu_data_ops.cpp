// test_cpu_data_ops.cpp - GATHER SCATTER, CAST, LOGICAL_AND/OR/XOR/NOT and
// REDUCE_ALL/ANY on the CPU backend, through the Backend interface only.
//
// Every expected value is derived by hand in the comment beside it (CAST's
// rounding and wrapping agree with NumPy: np.rint, then np.clip for the
// saturating float conversions, astype for the wrapping integer ones).
// Everything here is exact: these operators copy, convert or compare.
#include <algorithm>
#include <fstream>
#include <iterator>
#include <limits>

#include "raw_run_support.hpp"

using namespace cpu_test;

namespace {

constexpr float nan = std::numeric_limits<float>::quiet_NaN();
constexpr float inf = std::numeric_limits<float>::infinity();
using Shape = std::vector<std::int64_t>;

// values [N,K,C] (dtype) and indices [N,W] INT32 graph inputs -> GATHER.
tosa::Graph gather_graph(std::vector<std::int64_t> values_shape, DType dtype,
                         std::vector<std::int64_t> indices_shape,
                         std::vector<std::int64_t> out_shape, DType indices_dtype = DType::int32)
{
    tosa::GraphBuilder g;
    const auto values = g.tensor("values", std::move(values_shape), dtype);
    const auto indices = g.tensor("indices", std::move(indices_shape), indices_dtype);
    const auto out = g.tensor("out", std::move(out_shape), dtype);
    g.op(Op::gather, {values, indices}, {out});
    g.input(values);
    g.input(indices);
    g.output(out);
    return g.finish();
}

tosa::Graph scatter_graph(std::vector<std::int64_t> values_shape, DType dtype,
                          std::vector<std::int64_t> indices_shape,
                          std::vector<std::int64_t> input_shape,
                          std::vector<std::int64_t> out_shape)
{
    tosa::GraphBuilder g;
    const auto values = g.tensor("values_in", std::move(values_shape), dtype);
    const auto indices = g.tensor("indices", std::move(indices_shape), DType::int32);
    const auto input = g.tensor("input", std::move(input_shape), dtype);
    const auto out = g.tensor("values_out", std::move(out_shape), dtype);
    g.op(Op::scatter, {values, indices, input}, {out});
    g.input(values);
    g.input(indices);
    g.input(input);
    g.output(out);
    return g.finish();
}

// A submission that must fail while running, leaving its output untouched.
void assert_run_fails(Rig& rig, Program& program, const std::vector<Bytes>& inputs, Errc code,
                      std::uint64_t op_index, std::int64_t index, const char* note)
{
    const RawRun run = run_raw(rig, program, inputs);
    assert_int_equal(static_cast<unsigned>(run.status.state),
                     static_cast<unsigned>(EventState::failed));
    const Error& e = run.status.failure;
    if (e.code != code || e.detail != VACCEL_D_EXECUTION || e.arg0 != op_index ||
        e.arg1 != static_cast<std::uint64_t>(index))
        fail_msg("got code %u detail %u arg0 %llu arg1 %llu (%s)", static_cast<unsigned>(e.code),
                 e.detail, static_cast<unsigned long long>(e.arg0),
                 static_cast<unsigned long long>(e.arg1), e.note.c_str());
    assert_string_equal(e.note.c_str(), note);
    for (const Bytes& output : run.outputs)
        for (std::uint8_t byte : output) assert_int_equal(byte, 0xA5);
}

// ---------------------------------------------------------------- GATHER

void gather_fp32_picks_rows_per_batch(void**)
{
    Rig rig;
    auto program = rig.must_load(gather_graph({2, 3, 2}, DType::fp32, {2, 4}, {2, 4, 2}));
    // values[n][k] = {10n + k, -(10n + k)}.
    const std::vector<float> values{0, -0.0f, 1, -1, 2, -2, 10, -10, 11, -11, 12, -12};
    const std::vector<std::int32_t> indices{2, 0, 0, 1, 1, 2, 2, 0};
    const auto out = run_ok(rig, *program, {to_bytes(values), to_bytes(indices)});
    // batch 0: rows 2 0 0 1; batch 1: rows 1 2 2 0 (of batch 1).
    assert_exactly(from_bytes<float>(out[0]), {2, -2, 0, -0.0f, 0, -0.0f, 1, -1,  //
                                               11, -11, 12, -12, 12, -12, 10, -10});
    rig.finish(program);
}

void gather_int32_values_and_size_one_axes(void**)
{
    Rig rig;
    auto program = rig.must_load(gather_graph({1, 3, 1}, DType::int32, {1, 1}, {1, 1, 1}));
    const std::vector<std::int32_t> values{7, std::numeric_limits<std::int32_t>::min(), -9};
    for (const std::int32_t k : {0, 1, 2}) {
        const auto out = run_ok(rig, *program, {to_bytes(values), to_bytes(std::vector{k})});
        assert_int_equal(from_bytes<std::int32_t>(out[0])[0], values[static_cast<std::size_t>(k)]);
    }
    rig.finish(program);
}

// The GATHER of the LSTM fixture (tests/fixtures/tosa/v1.0-lstm_stateful_13x21x3_f32),
// whose graph as a whole (WHILE_LOOP, variables) the CPU backend does not
// run: the GATHER and the RESHAPE that writes its indices, copied with their
// tensors' names, shapes, dtypes and the SHAPE constant into a one-block
// graph whose inputs are the values and the RESHAPE's INT32 scalar.
tosa::Graph lstm_gather_graph()
{
    const std::string path = std::string(VACCEL_TOSA_FIXTURES) +
                             "/v1.0-lstm_stateful_13x21x3_f32/flatbuffer-tflite/"
                             "test_lstm_stateful_13x21x3_f32.tosa";
    std::ifstream file(path, std::ios::binary);
    if (!file) fail_msg("cannot open %s", path.c_str());
    const std::vector<char> bytes{std::istreambuf_iterator<char>(file),
                                  std::istreambuf_iterator<char>()};
    auto parsed = tosa::parse(std::as_bytes(std::span(bytes)));
    assert_ok(parsed);
    for (const tosa::Region& region : parsed->regions)
        for (const tosa::Block& block : region.blocks)
            for (const tosa::Operator& gather : block.operators) {
                if (gather.op != Op::gather) continue;
                const auto writer = std::ranges::find_if(block.operators, [&](const auto& op) {
                    return op.outputs.size() == 1 && op.outputs[0] == gather.inputs[1];
                });
                assert_true(writer != block.operators.end() && writer->op == Op::reshape);
                const tosa::Tensor& values = block.tensors[gather.inputs[0]];
                const tosa::Tensor& indices = block.tensors[gather.inputs[1]];
                const tosa::Tensor& out = block.tensors[gather.outputs[0]];
                const tosa::Tensor& scalar = block.tensors[writer->inputs[0]];
                const tosa::Tensor& shape = block.tensors[writer->inputs[1]];
                // The form this test covers.
                assert_true(values.dtype == DType::fp32 && values.shape == (Shape{1, 21, 39}));
                assert_true(indices.dtype == DType::int32 && indices.shape == (Shape{1, 1}));
                assert_true(out.dtype == DType::fp32 && out.shape == (Shape{1, 1, 39}));
                assert_true(scalar.dtype == DType::int32 && scalar.shape.empty());
                assert_true(shape.dtype == DType::shape && !shape.data.empty());
                tosa::GraphBuilder g;
                const auto v = g.tensor(values.name, values.shape, values.dtype);
                const auto k = g.tensor(scalar.name, scalar.shape, scalar.dtype);
                const auto sh = g.tensor(shape.name, shape.shape, shape.dtype, shape.data);
                g.op(Op::const_shape, {}, {sh});
                const auto i = g.tensor(indices.name, indices.shape, indices.dtype);
                const auto o = g.tensor(out.name, out.shape, out.dtype);
                g.op(Op::reshape, {k, sh}, {i});
                g.op(Op::gather, {v, i}, {o});
                g.input(v);
                g.input(k);
                g.output(o);
                return g.finish();
            }
    fail_msg("the LSTM fixture has no GATHER");
    return {};
}

void gather_of_the_lstm_fixture_form(void**)
{
    Rig rig;
    auto program = rig.must_load(lstm_gather_graph());
    const std::vector<float> values = sample(21 * 39, 5);
    for (const std::int32_t k : {0, 5, 20}) {
        const auto out = run_ok(rig, *program, {to_bytes(values), to_bytes(std::vector{k})});
        const std::vector<float> row(values.begin() + k * 39, values.begin() + (k + 1) * 39);
        assert_exactly(from_bytes<float>(out[0]), row);
    }
    // Operator 2 is the GATHER (0 is the CONST_SHAPE, 1 the RESHAPE).
    assert_run_fails(rig, *program, {to_bytes(values), to_bytes(std::vector<std::int32_t>{21})},
                     Errc::out_of_bounds, 2, 21,
                     "operator 2 (GATHER): index 21 at [0, 0] is outside [0, 21); TOSA 1.0 "
                     "GATHER requires 0 <= index < K; nothing was written to the outputs: fix "
                     "the indices input");
    rig.finish(program);
}

// Constant INT32 indices (a CONST operator); RESHAPE and IDENTITY on INT32
// and BOOL values copy them.
void gather_with_constant_indices_and_integer_copies(void**)
{
    Rig rig;
    tosa::GraphBuilder g;
    const auto values = f32(g, "values", {1, 4, 1});
    const auto indices =
        g.tensor("indices", {1, 3}, DType::int32, to_bytes(std::vector<std::int32_t>{3, 3, 0}));
    g.op(Op::const_, {}, {indices});
    const auto copied = g.tensor("copied", {1, 3}, DType::int32);
    g.op(Op::identity, {indices}, {copied});
    const auto out = f32(g, "out", {1, 3, 1});
    g.op(Op::gather, {values, copied}, {out});
    const auto flags = g.tensor("flags", {2, 2}, DType::boolean);
    const auto flat_shape = shape_const(g, "flat_shape", {4});
    const auto flat = g.tensor("flat", {4}, DType::boolean);
    g.op(Op::reshape, {flags, flat_shape}, {flat});
    const auto same = g.tensor("same", {4}, DType::boolean);
    g.op(Op::identity, {flat}, {same});
    g.input(values);
    g.input(flags);
    g.output(out);
    g.output(same);
    auto program = rig.must_load(g.finish());
    const auto outputs =
        run_ok(rig, *program, {to_bytes(std::vector<float>{0.5f, 1.5f, 2.5f, 3.5f}), Bytes{1, 0, 0, 1}});
    assert_exactly(from_bytes<float>(outputs[0]), {3.5f, 3.5f, 0.5f});
    assert_true(outputs[1] == (Bytes{1, 0, 0, 1}));
    rig.finish(program);
}

void gather_index_out_of_range_fails_the_submission(void**)
{
    Rig rig;
    auto program = rig.must_load(gather_graph({2, 3, 2}, DType::fp32, {2, 2}, {2, 2, 2}));
    const Bytes values = to_bytes(sample(12, 1));
    assert_run_fails(rig, *program, {values, to_bytes(std::vector<std::int32_t>{0, 1, 2, -1})},
                     Errc::out_of_bounds, 0, -1,
                     "operator 0 (GATHER): index -1 at [1, 1] is outside [0, 3); TOSA 1.0 GATHER "
                     "requires 0 <= index < K; nothing was written to the outputs: fix the "
                     "indices input");
    assert_run_fails(rig, *program, {values, to_bytes(std::vector<std::int32_t>{3, 0, 0, 0})},
                     Errc::out_of_bounds, 0, 3,
                     "operator 0 (GATHER): index 3 at [0, 0] is outside [0, 3); TOSA 1.0 GATHER "
                     "requires 0 <= index < K; nothing was written to the outputs: fix the "
                     "indices input");
    // The program still runs good indices afterwards.
    const auto out = run_ok(rig, *program, {to_bytes(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8,
                                                                        9, 10, 11, 12}),
                                            to_bytes(std::vector<std::int32_t>{2, 2, 0, 1})});
    assert_exactly(from_bytes<float>(out[0]), {5, 6, 5, 6, 7, 8, 9, 10});
    rig.finish(program);
}

void gather_refusals(void**)
{
    Rig rig;
    assert_malformed(rig.load(gather_graph({3, 2}, DType::fp32, {1, 2}, {1, 2, 2})),
                     VACCEL_TOSA_BAD_SHAPE,
                     "operator 0 (GATHER): values [3,2] and indices [1,2] are not [N,K,C] and "
                     "[N,W]");
    assert_malformed(rig.load(gather_graph({2, 3, 2}, DType::fp32, {1, 2}, {1, 2, 2})),
                     VACCEL_TOSA_BAD_SHAPE,
                     "operator 0 (GATHER): values [2,3,2] and indices [1,2] are not [N,K,C] and "
                     "[N,W]");
    assert_malformed(rig.load(gather_graph({2, 3, 2}, DType::fp32, {2, 2}, {2, 3, 2})),
                     VACCEL_TOSA_BAD_SHAPE,
                     "operator 0 (GATHER): output 'out' is declared [2,3,2] but the operands "
                     "give [2,2,2]");
    // FP32 indices: refused by their dtype.
    auto fp32_indices =
        rig.load(gather_graph({2, 3, 2}, DType::fp32, {2, 2}, {2, 2, 2}, DType::fp32));
    assert_refused(fp32_indices, Errc::unsupported, VACCEL_D_TOSA_DTYPE, DType::fp32, Op::gather);
    assert_string_equal(fp32_indices.error().note.c_str(),
                        "input 1 ('indices') of operator 0 (GATHER) has dtype FP32; the CPU "
                        "backend runs GATHER with INT32 there");
    // BOOL values: not in the table.
    assert_refused(rig.load(gather_graph({2, 3, 2}, DType::boolean, {2, 2}, {2, 2, 2})),
                   Errc::unsupported, VACCEL_D_TOSA_OPERATOR, Op::gather, DType::boolean);
    rig.finish();
}

// ---------------------------------------------------------------- SCATTER

void scatter_fp32_replaces_the_indexed_rows(void**)
{
    Rig rig;
    auto program =
        rig.must_load(scatter_graph({2, 4, 2}, DType::fp32, {2, 2}, {2, 2, 2}, {2, 4, 2}));
    const std::vector<float> values(16, 0.5f);
    const std::vector<std::int32_t> indices{3, 0, 1, 2};
    const std::vector<float> input{1, 2, 3, 4, 5, 6, 7, 8};
    const auto out =
        run_ok(rig, *program, {to_bytes(values), to_bytes(indices), to_bytes(input)});
    // batch 0: row 3 <- {1,2}, row 0 <- {3,4}; batch 1: row 1 <- {5,6}, row 2 <- {7,8}.
    assert_exactly(from_bytes<float>(out[0]), {3, 4, 0.5f, 0.5f, 0.5f, 0.5f, 1, 2,  //
                                               0.5f, 0.5f, 5, 6, 7, 8, 0.5f, 0.5f});
    rig.finish(program);
}

void scatter_int32_with_w_equal_k(void**)
{
    Rig rig;
    auto program = rig.must_load(scatter_graph({1, 3, 1}, DType::int32, {1, 3}, {1, 3, 1}, {1, 3, 1}));
    const auto out = run_ok(rig, *program,
                            {to_bytes(std::vector<std::int32_t>{0, 0, 0}),
                             to_bytes(std::vector<std::int32_t>{2, 0, 1}),
                             to_bytes(std::vector<std::int32_t>{-7, 8, 9})});
    // out[2] = -7, out[0] = 8, out[1] = 9.
    assert_true(from_bytes<std::int32_t>(out[0]) == (std::vector<std::int32_t>{8, 9, -7}));
    rig.finish(program);
}

// INT8 and INT16 elements are copied at their own width.
void gather_and_scatter_on_int8_and_int16(void**)
{
    Rig rig;
    auto gather8 = rig.must_load(gather_graph({1, 3, 2}, DType::int8, {1, 2}, {1, 2, 2}));
    const auto g8 = run_ok(rig, *gather8, {to_bytes(std::vector<std::int8_t>{1, -2, 3, -4, 5, -128}),
                                           to_bytes(std::vector<std::int32_t>{2, 0})});
    assert_true(from_bytes<std::int8_t>(g8[0]) == (std::vector<std::int8_t>{5, -128, 1, -2}));
    auto gather16 = rig.must_load(gather_graph({1, 3, 1}, DType::int16, {1, 2}, {1, 2, 1}));
    const auto g16 = run_ok(rig, *gather16, {to_bytes(std::vector<std::int16_t>{-300, 7, 32767}),
                                             to_bytes(std::vector<std::int32_t>{2, 1})});
    assert_true(from_bytes<std::int16_t>(g16[0]) == (std::vector<std::int16_t>{32767, 7}));
    auto scatter16 =
        rig.must_load(scatter_graph({1, 3, 1}, DType::int16, {1, 1}, {1, 1, 1}, {1, 3, 1}));
    const auto s16 = run_ok(rig, *scatter16, {to_bytes(std::vector<std::int16_t>{1, 2, 3}),
                                              to_bytes(std::vector<std::int32_t>{1}),
                                              to_bytes(std::vector<std::int16_t>{-32768})});
    assert_true(from_bytes<std::int16_t>(s16[0]) == (std::vector<std::int16_t>{1, -32768, 3}));
    auto scatter8 =
        rig.must_load(scatter_graph({1, 2, 2}, DType::int8, {1, 1}, {1, 1, 2}, {1, 2, 2}));
    const auto s8 = run_ok(rig, *scatter8, {to_bytes(std::vector<std::int8_t>{1, 2, 3, 4}),
                                            to_bytes(std::vector<std::int32_t>{0}),
                                            to_bytes(std::vector<std::int8_t>{-1, 127})});
    assert_true(from_bytes<std::int8_t>(s8[0]) == (std::vector<std::int8_t>{-1, 127, 3, 4}));
    for (auto* p : {&gather8, &gather16, &scatter16}) assert_ok(rig.backend->unload_program(*p));
    rig.finish(scatter8);
}

void scatter_duplicate_or_out_of_range_index_fails_the_submission(void**)
{
    Rig rig;
    auto program =
        rig.must_load(scatter_graph({2, 4, 2}, DType::fp32, {2, 2}, {2, 2, 2}, {2, 4, 2}));
    const Bytes values = to_bytes(std::vector<float>(16, 0.5f));
    const Bytes input = to_bytes(sample(8, 3));
    assert_run_fails(rig, *program, {values, to_bytes(std::vector<std::int32_t>{0, 1, 3, 3}), input},
                     Errc::invalid_argument, 0, 3,
                     "operator 0 (SCATTER): index 3 appears twice in batch 1 (position 1); TOSA "
                     "1.0 SCATTER requires each index at most once per batch; nothing was "
                     "written to the outputs: fix the indices input");
    assert_run_fails(rig, *program, {values, to_bytes(std::vector<std::int32_t>{0, 4, 1, 2}), input},
                     Errc::out_of_bounds, 0, 4,
                     "operator 0 (SCATTER): index 4 at [0, 1] is outside [0, 4); TOSA 1.0 "
                     "SCATTER requires 0 <= index < K; nothing was written to the outputs: fix "
                     "the indices input");
    // The same index in two different batches is fine.
    const auto out = run_ok(rig, *program,
                            {values, to_bytes(std::vector<std::int32_t>{1, 2, 1, 2}),
                             to_bytes(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8})});
    assert_exactly(from_bytes<float>(out[0]), {0.5f, 0.5f, 1, 2, 3, 4, 0.5f, 0.5f,  //
                                               0.5f, 0.5f, 5, 6, 7, 8, 0.5f, 0.5f});
    rig.finish(program);
}

void scatter_refusals(void**)
{
    Rig rig;
    assert_malformed(rig.load(scatter_graph({2, 4, 2}, DType::fp32, {2, 2}, {2, 2, 3}, {2, 4, 2})),
                     VACCEL_TOSA_BAD_SHAPE,
                     "operator 0 (SCATTER): values_in [2,4,2], indices [2,2] and input [2,2,3] "
                     "are not [N,K,C], [N,W] and [N,W,C]");
    assert_malformed(rig.load(scatter_graph({1, 2, 1}, DType::fp32, {1, 3}, {1, 3, 1}, {1, 2, 1})),
                     VACCEL_TOSA_BAD_SHAPE,
                     "operator 0 (SCATTER): indices [1,3] write 3 rows into 2 rows per batch; "
                     "TOSA 1.0 SCATTER writes each row at most once");
    assert_malformed(rig.load(scatter_graph({2, 4, 2}, DType::fp32, {2, 2}, {2, 2, 2}, {2, 2, 2})),
                     VACCEL_TOSA_BAD_SHAPE,
                     "operator 0 (SCATTER): output 'values_out' is declared [2,2,2] but the "
                     "operands give [2,4,2]");
    rig.finish();
}

// ---------------------------------------------------------------- CAST

tosa::Graph cast_graph(DType from, DType to, std::vector<std::int64_t> shape,
                       std::vector<std::int64_t> out_shape = {})
{
    tosa::GraphBuilder g;
    const auto in = g.tensor("in", shape, from);
    const auto out = g.tensor("out", out_shape.empty() ? shape : out_shape, to);
    g.op(Op::cast, {in}, {out});
    g.input(in);
    g.output(out);
    return g.finish();
}

template <class From, class To>
void expect_cast(DType from, DType to, const std::vector<From>& in, const std::vector<To>& want)
{
    Rig rig;
    auto program = rig.must_load(cast_graph(from, to, {static_cast<std::int64_t>(in.size())}));
    const std::vector<To> got = from_bytes<To>(run_ok(rig, *program, {to_bytes(in)})[0]);
    assert_int_equal(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i)
        if (std::memcmp(&got[i], &want[i], sizeof(To)) != 0)
            fail_msg("CAST %s -> %s element %zu: got %.9g, want %.9g",
                     std::string(tosa::dtype_name(from)).c_str(),
                     std::string(tosa::dtype_name(to)).c_str(), i, static_cast<double>(got[i]),
                     static_cast<double>(want[i]));
    rig.finish(program);
}

void cast_fp32_to_integers_rounds_half_to_even_and_saturates(void**)
{
    // 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> -0 = 0, -1.5 -> -2, -2.5 -> -2
    // (ties to even); 3.7 -> 4, -3.7 -> -4 (nearest); NaN -> 0; the rest
    // saturate at the type's limits.
    const std::vector<float> common{0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 3.7f, -3.7f, nan};
    auto with = [&](std::vector<float> extra) {
        std::vector<float> all = common;
        all.insert(all.end(), extra.begin(), extra.end());
        return all;
    };
    // 127.5 rounds to 128, above INT8 max; -128.5 to -128 (even).
    expect_cast<float, std::int8_t>(
        DType::fp32, DType::int8, with({126.5f, 127.5f, 1000.0f, -128.5f, -129.0f, inf, -inf}),
        {0, 2, 2, 0, -2, -2, 4, -4, 0, 126, 127, 127, -128, -128, 127, -128});
    expect_cast<float, std::int16_t>(
        DType::fp32, DType::int16, with({32766.5f, 32767.5f, -32768.5f, -40000.0f, inf, -inf}),
        {0, 2, 2, 0, -2, -2, 4, -4, 0, 32766, 32767, -32768, -32768, 32767, -32768});
    // 2147483520 is the largest float below 2^31; 2^31 and beyond saturate.
    expect_cast<float, std::int32_t>(
        DType::fp32, DType::int32,
        with({2147483520.0f, 2147483648.0f, 3.0e9f, -2147483648.0f, -2147483904.0f, inf, -inf,
              16777216.0f}),
        {0, 2, 2, 0, -2, -2, 4, -4, 0, 2147483520, 2147483647, 2147483647,
         std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::min(),
         2147483647, std::numeric_limits<std::int32_t>::min(), 16777216});
}

void cast_integers_to_fp32_round_to_nearest(void**)
{
    expect_cast<std::int8_t, float>(DType::int8, DType::fp32, {-128, -1, 0, 127},
                                    {-128.0f, -1.0f, 0.0f, 127.0f});
    expect_cast<std::int16_t, float>(DType::int16, DType::fp32, {-32768, -300, 32767},
                                     {-32768.0f, -300.0f, 32767.0f});
    // 2^24 + 1 is a tie between 2^24 and 2^24 + 2: even mantissa 2^24;
    // 2^24 + 3 -> 2^24 + 4; INT32 max -> 2^31.
    expect_cast<std::int32_t, float>(
        DType::int32, DType::fp32,
        {16777217, 16777219, 2147483647, std::numeric_limits<std::int32_t>::min(), -7, 0},
        {16777216.0f, 16777220.0f, 2147483648.0f, -2147483648.0f, -7.0f, 0.0f});
}

void cast_integer_narrowing_wraps_and_widening_sign_extends(void**)
{
    // Low 8 bits: 300 = 0x12C -> 0x2C = 44; -129 = 0x...FF7F -> 0x7F = 127;
    // 128 -> -128; 255 -> -1.
    expect_cast<std::int32_t, std::int8_t>(DType::int32, DType::int8, {300, -129, 128, 255, -1, 5},
                                           {44, 127, -128, -1, -1, 5});
    // 70000 = 0x11170 -> 0x1170 = 4464; -32769 -> 32767; 32768 -> -32768.
    expect_cast<std::int32_t, std::int16_t>(DType::int32, DType::int16,
                                            {70000, -32769, 32768, -2}, {4464, 32767, -32768, -2});
    expect_cast<std::int16_t, std::int8_t>(DType::int16, DType::int8, {300, -129, 127, -128},
                                           {44, 127, 127, -128});
    expect_cast<std::int8_t, std::int16_t>(DType::int8, DType::int16, {-128, -1, 127},
                                           {-128, -1, 127});
    expect_cast<std::int8_t, std::int32_t>(DType::int8, DType::int32, {-128, -1, 127},
                                           {-128, -1, 127});
    expect_cast<std::int16_t, std::int32_t>(DType::int16, DType::int32, {-32768, -1, 32767},
                                            {-32768, -1, 32767});
}

void cast_to_and_from_bool(void**)
{
    // To BOOL is x != 0 (256 is not truncated to its low byte); from BOOL 0 or 1.
    expect_cast<std::int32_t, std::uint8_t>(DType::int32, DType::boolean, {0, 5, -1, 256},
                                            {0, 1, 1, 1});
    expect_cast<std::int16_t, std::uint8_t>(DType::int16, DType::boolean, {0, -32768, 256},
                                            {0, 1, 1});
    expect_cast<std::int8_t, std::uint8_t>(DType::int8, DType::boolean, {0, -128, 1}, {0, 1, 1});
    expect_cast<std::uint8_t, std::int32_t>(DType::boolean, DType::int32, {0, 1}, {0, 1});
    expect_cast<std::uint8_t, std::int16_t>(DType::boolean, DType::int16, {1, 0}, {1, 0});
    expect_cast<std::uint8_t, std::int8_t>(DType::boolean, DType::int8, {0, 1}, {0, 1});
}

// A CONST INT16 tensor cast to INT32 (sign-extended).
void cast_of_an_int16_constant(void**)
{
    Rig rig;
    tosa::GraphBuilder g;
    const auto in = g.tensor("in", {3}, DType::int16, to_bytes(std::vector<std::int16_t>{-2, 0, 300}));
    g.op(Op::const_, {}, {in});
    const auto out = g.tensor("out", {3}, DType::int32);
    g.op(Op::cast, {in}, {out});
    g.output(out);
    auto program = rig.must_load(g.finish());
    assert_true(from_bytes<std::int32_t>(run_ok(rig, *program, {})[0]) ==
                (std::vector<std::int32_t>{-2, 0, 300}));
    rig.finish(program);
}

void cast_of_a_pair_outside_tosa_is_refused(void**)
{
    Rig rig;
    // TOSA 1.0 CAST has no FP32 <-> BOOL and no same-dtype pair.
    auto refused = rig.load(cast_graph(DType::fp32, DType::boolean, {2}));
    assert_refused(refused, Errc::unsupported, VACCEL_D_TOSA_OPERATOR, Op::cast, DType::boolean);
    assert_string_equal(refused.error().note.c_str(),
                        "TOSA operator CAST from FP32 to BOOL is not supported by the CPU "
                        "backend (docs/operators.md lists the pairs it runs)");
    assert_refused(rig.load(cast_graph(DType::boolean, DType::fp32, {2})), Errc::unsupported,
                   VACCEL_D_TOSA_OPERATOR, Op::cast, DType::fp32);
    assert_refused(rig.load(cast_graph(DType::int32, DType::int32, {2})), Errc::unsupported,
                   VACCEL_D_TOSA_OPERATOR, Op::cast, DType::int32);
    // TOSA 1.0 has no FP8 -> integer CAST (FP16 and BF16 pairs: test_cpu_half.cpp).
    assert_refused(rig.load(cast_graph(DType::fp8e4m3, DType::int32, {2})), Errc::unsupported,
                   VACCEL_D_TOSA_OPERATOR, Op::cast, DType::int32);
    assert_malformed(rig.load(cast_graph(DType::int32, DType::fp32, {2, 3}, {3, 2})),
                     VACCEL_TOSA_BAD_SHAPE,
                     "operator 0 (CAST): output 'out' is declared [3,2] but the operands give "
                     "[2,3]");
    rig.finish();
}

// ---------------------------------------------------------------- logical

tosa::Graph logical_graph(Op op, std::vector<std::int64_t> sa, std::vector<std::int64_t> sb,
                          std::vector<std::int64_t> so, DType dtype = DType::boolean)
{
    tosa::GraphBuilder g;
    const auto a = g.tensor("a", std::move(sa), dtype);
    const auto b = g.tensor("b", std::move(sb), dtype);
    const auto out = g.tensor("out", std::move(so), DType::boolean);
    g.op(op, {a, b}, {out});
    g.input(a);
    g.input(b);
    g.output(out);
    return g.finish();
}

void logical_and_or_xor_truth_tables_with_broadcast(void**)
{
    Rig rig;
    // a [4,1] = {0,0,1,1} against b [1,2] = {0,1}: out[i][j] = a[i] op b[j].
    const Bytes a{0, 0, 1, 1};
    const Bytes b{0, 1};
    const struct {
        Op op;
        Bytes want;
    } cases[] = {
        {Op::logical_and, {0, 0, 0, 0, 0, 1, 0, 1}},
        {Op::logical_or, {0, 1, 0, 1, 1, 1, 1, 1}},
        {Op::logical_xor, {0, 1, 0, 1, 1, 0, 1, 0}},
    };
    for (const auto& c : cases) {
        auto program = rig.must_load(logical_graph(c.op, {4, 1}, {1, 2}, {4, 2}));
        assert_true(run_ok(rig, *program, {a, b})[0] == c.want);
        assert_ok(rig.backend->unload_program(program));
    }
    // Rank 0.
    auto scalar = rig.must_load(logical_graph(Op::logical_xor, {}, {}, {}));
    assert_true(run_ok(rig, *scalar, {Bytes{1}, Bytes{1}})[0] == Bytes{0});
    rig.finish(scalar);
}

void logical_not_flips(void**)
{
    Rig rig;
    tosa::GraphBuilder g;
    const auto in = g.tensor("in", {2, 2}, DType::boolean);
    const auto out = g.tensor("out", {2, 2}, DType::boolean);
    g.op(Op::logical_not, {in}, {out});
    g.input(in);
    g.output(out);
    auto program = rig.must_load(g.finish());
    assert_true(run_ok(rig, *program, {Bytes{0, 1, 1, 0}})[0] == (Bytes{1, 0, 0, 1}));
    rig.finish(program);
}

tosa::Graph reduce_bool_graph(Op op, std::vector<std::int64_t> in_shape,
                              std::vector<std::int64_t> out_shape, std::int32_t axis)
{
    tosa::GraphBuilder g;
    const auto in = g.tensor("in", std::move(in_shape), DType::boolean);
    const auto out = g.tensor("out", std::move(out_shape), DType::boolean);
    g.op(op, {in}, {out}, tosa::axis_attr(axis));
    g.input(in);
    g.output(out);
    return g.finish();
}

void reduce_all_and_any_along_each_axis(void**)
{
    Rig rig;
    // in [2,3] = {1,1,1, 0,1,0}.
    const Bytes in{1, 1, 1, 0, 1, 0};
    auto all1 = rig.must_load(reduce_bool_graph(Op::reduce_all, {2, 3}, {2, 1}, 1));
    auto any1 = rig.must_load(reduce_bool_graph(Op::reduce_any, {2, 3}, {2, 1}, 1));
    auto all0 = rig.must_load(reduce_bool_graph(Op::reduce_all, {2, 3}, {1, 3}, 0));
    auto any0 = rig.must_load(reduce_bool_graph(Op::reduce_any, {2, 3}, {1, 3}, 0));
    assert_true(run_ok(rig, *all1, {in})[0] == (Bytes{1, 0}));
    assert_true(run_ok(rig, *any1, {in})[0] == (Bytes{1, 1}));
    assert_true(run_ok(rig, *all0, {in})[0] == (Bytes{0, 1, 0}));
    assert_true(run_ok(rig, *any0, {in})[0] == (Bytes{1, 1, 1}));
    assert_true(run_ok(rig, *any1, {Bytes(6, 0)})[0] == (Bytes{0, 0}));
    for (auto* p : {&all1, &any1, &all0}) assert_ok(rig.backend->unload_program(*p));
    assert_ok(rig.backend->unload_program(any0));
    // A size-1 axis copies.
    auto one = rig.must_load(reduce_bool_graph(Op::reduce_all, {1, 2}, {1, 2}, 0));
    assert_true(run_ok(rig, *one, {Bytes{0, 1}})[0] == (Bytes{0, 1}));
    rig.finish(one);
}

void logical_refusals(void**)
{
    Rig rig;
    // FP32 operands with a BOOL output: refused by the operand dtype.
    assert_refused(rig.load(logical_graph(Op::logical_and, {2}, {2}, {2}, DType::fp32)),
                   Errc::unsupported, VACCEL_D_TOSA_DTYPE, DType::fp32, Op::logical_and);
    assert_malformed(rig.load(logical_graph(Op::logical_or, {2, 3}, {3, 2}, {2, 3})),
                     VACCEL_TOSA_BAD_SHAPE,
                     "operator 0 (LOGICAL_OR): operands [2,3] and [3,2] do not broadcast "
                     "(dimension 0)");
    assert_malformed(rig.load(reduce_bool_graph(Op::reduce_any, {2, 3}, {2, 1}, 2)),
                     VACCEL_TOSA_BAD_ATTRIBUTE, "operator 0 (REDUCE_ANY): axis 2 is outside rank 2");
    assert_malformed(rig.load(reduce_bool_graph(Op::reduce_all, {2, 3}, {2, 3}, 1)),
                     VACCEL_TOSA_BAD_SHAPE,
                     "operator 0 (REDUCE_ALL): output 'out' is declared [2,3] but the operands "
                     "give [2,1]");
    rig.finish();
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gather_fp32_picks_rows_per_batch),
        cmocka_unit_test(gather_int32_values_and_size_one_axes),
        cmocka_unit_test(gather_of_the_lstm_fixture_form),
        cmocka_unit_test(gather_with_constant_indices_and_integer_copies),
        cmocka_unit_test(gather_index_out_of_range_fails_the_submission),
        cmocka_unit_test(gather_refusals),
        cmocka_unit_test(scatter_fp32_replaces_the_indexed_rows),
        cmocka_unit_test(scatter_int32_with_w_equal_k),
        cmocka_unit_test(gather_and_scatter_on_int8_and_int16),
        cmocka_unit_test(scatter_duplicate_or_out_of_range_index_fails_the_submission),
        cmocka_unit_test(scatter_refusals),
        cmocka_unit_test(cast_fp32_to_integers_rounds_half_to_even_and_saturates),
        cmocka_unit_test(cast_integers_to_fp32_round_to_nearest),
        cmocka_unit_test(cast_integer_narrowing_wraps_and_widening_sign_extends),
        cmocka_unit_test(cast_to_and_from_bool),
        cmocka_unit_test(cast_of_an_int16_constant),
        cmocka_unit_test(cast_of_a_pair_outside_tosa_is_refused),
        cmocka_unit_test(logical_and_or_xor_truth_tables_with_broadcast),
        cmocka_unit_test(logical_not_flips),
        cmocka_unit_test(reduce_all_and_any_along_each_axis),
        cmocka_unit_test(logical_refusals),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
