// test_cpu_operators_more.cpp - the operators added after the first set:
// MAXIMUM MINIMUM POW, EQUAL GREATER GREATER_EQUAL SELECT, ABS NEGATE EXP LOG
// RECIPROCAL RSQRT CEIL FLOOR SIN COS ERF, REDUCE_MAX REDUCE_MIN
// REDUCE_PRODUCT ARGMAX, CONCAT SLICE PAD TILE REVERSE, each run through the
// Backend interface and compared with values derived independently of the
// kernels.
//
// Exact comparisons (bit for bit; any NaN matches any NaN) for everything
// but the transcendental operators. Those are compared with NumPy float64
// (math.erf for ERF) results of the same float32 inputs, computed ahead of
// time with python3/numpy 1.24 on the development machine and written here
// as literals, within a bound in float32 ULPs of the reference value (see
// ulp_error below; a reference beyond FLT_MAX or an Inf/NaN must match
// exactly):
//   EXP, LOG, SIN, COS, RSQRT, POW: 2 ULP; ERF: 5 ULP.
// These are this test's bounds (docs/operators.md lists them): glibc's float
// functions stay within 1 ULP on these inputs, and the bounds leave room
// for a libm that is not correctly rounded.
#include <cmath>
#include <limits>
#include <string>

#include "cpu_test_support.hpp"

using namespace cpu_test;

namespace {

constexpr float nan = std::numeric_limits<float>::quiet_NaN();
constexpr float inf = std::numeric_limits<float>::infinity();
constexpr std::uint32_t propagate = 1;
constexpr std::uint32_t ignore = 2;

using Bytes = std::vector<std::uint8_t>;

template <class T>
Bytes to_bytes(const std::vector<T>& values)
{
    Bytes bytes(values.size() * sizeof(T));
    if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
}

template <class T>
std::vector<T> from_bytes(const Bytes& bytes)
{
    std::vector<T> values(bytes.size() / sizeof(T));
    if (!bytes.empty()) std::memcpy(values.data(), bytes.data(), bytes.size());
    return values;
}

// Runs a program on raw slot contents (any dtype) and returns the raw
// contents of each output slot.
std::vector<Bytes> run_bytes(Rig& rig, Program& program, const std::vector<Bytes>& inputs)
{
    const auto slots = program.slots();
    std::vector<std::unique_ptr<Buffer>> owned;
    std::vector<Buffer*> raw;
    for (std::uint32_t s = 0; s < slots.size(); ++s) {
        // A buffer of at least one byte, for empty (zero-element) slots.
        owned.push_back(rig.buffer(slots[s].bytes == 0 ? 1 : slots[s].bytes));
        if (s < program.input_count()) {
            assert_int_equal(inputs[s].size(), slots[s].bytes);
            if (!inputs[s].empty())
                assert_ok(rig.backend->write_buffer(*owned.back(), 0,
                                                    std::as_bytes(std::span(inputs[s]))));
        }
        raw.push_back(owned.back().get());
    }
    auto event = cpu_test::submit(*rig.backend, *rig.queue, program, rig.bind(program, raw), 0);
    assert_ok(event);
    const EventStatus status = rig.wait(**event);
    if (status.state != EventState::complete)
        fail_msg("submission ended in state %u: %s", static_cast<unsigned>(status.state),
                 status.failure.note.c_str());
    assert_ok(rig.backend->destroy_event(*event));
    std::vector<Bytes> outputs;
    for (std::uint32_t s = program.input_count(); s < slots.size(); ++s) {
        Bytes bytes(slots[s].bytes);
        if (!bytes.empty())
            assert_ok(rig.backend->read_buffer(*owned[s], 0,
                                               std::as_writable_bytes(std::span(bytes))));
        outputs.push_back(std::move(bytes));
    }
    for (auto& b : owned) assert_ok(rig.backend->free_buffer(b));
    return outputs;
}

// Bit-exact, except that any NaN matches any NaN (the sign and payload of
// a NaN are not specified by TOSA).
void assert_same(const std::vector<float>& got, const std::vector<float>& want)
{
    assert_int_equal(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (std::isnan(want[i]) && std::isnan(got[i])) continue;
        if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0)
            fail_msg("element %zu: got %.9g, want %.9g", i, static_cast<double>(got[i]),
                     static_cast<double>(want[i]));
    }
}

// The error of `got` in float32 ULPs of the float64 reference `want` (the
// spacing of floats at |want|). A reference that is NaN, infinite, or
// beyond the float range must be matched exactly (returns 0 or infinity).
double ulp_error(float got, double want)
{
    if (std::isnan(want)) return std::isnan(got) ? 0.0 : inf;
    const float rounded = static_cast<float>(want);
    if (std::isinf(rounded)) return got == rounded ? 0.0 : inf;
    if (std::isnan(got) || std::isinf(got)) return inf;
    const float magnitude = std::fabs(rounded);
    const double ulp = static_cast<double>(std::nextafter(magnitude, inf) - magnitude);
    return std::fabs(static_cast<double>(got) - want) / ulp;
}

void assert_ulps(const std::vector<float>& got, const std::vector<double>& want, double bound)
{
    assert_int_equal(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double error = ulp_error(got[i], want[i]);
        if (!(error <= bound))
            fail_msg("element %zu: got %.9g, want %.17g (%.2f ULP, bound %.1f)", i,
                     static_cast<double>(got[i]), want[i], error, bound);
    }
}

tosa::Attributes nan_attr(std::uint32_t mode)
{
    tosa::Attributes attributes;
    attributes.present = true;
    attributes.nan_mode = mode;
    return attributes;
}

tosa::Attributes axis_nan_attr(std::int32_t axis, std::uint32_t mode)
{
    tosa::Attributes attributes = tosa::axis_attr(axis);
    attributes.nan_mode = mode;
    return attributes;
}

// in -> op -> out, FP32 in and out of the given shapes.
tosa::Graph unary_graph(Op op, std::vector<std::int64_t> in_shape,
                        std::vector<std::int64_t> out_shape, tosa::Attributes attributes = {},
                        DType out_dtype = DType::fp32)
{
    tosa::GraphBuilder g;
    const auto in = f32(g, "in", std::move(in_shape));
    const auto out = g.tensor("out", std::move(out_shape), out_dtype);
    g.op(op, {in}, {out}, attributes);
    g.input(in);
    g.output(out);
    return g.finish();
}

// a, b -> op -> out, all FP32 but the output (BOOL for comparisons).
tosa::Graph binary_graph(Op op, std::vector<std::int64_t> sa, std::vector<std::int64_t> sb,
                         std::vector<std::int64_t> so, tosa::Attributes attributes = {},
                         DType out_dtype = DType::fp32)
{
    tosa::GraphBuilder g;
    const auto a = f32(g, "a", std::move(sa));
    const auto b = f32(g, "b", std::move(sb));
    const auto out = g.tensor("out", std::move(so), out_dtype);
    g.op(op, {a, b}, {out}, attributes);
    g.input(a);
    g.input(b);
    g.output(out);
    return g.finish();
}

std::vector<float> run_unary(Op op, std::vector<std::int64_t> shape, const std::vector<float>& in)
{
    Rig rig;
    auto program = rig.must_load(unary_graph(op, shape, shape));
    auto out = rig.run(*program, {in})[0];
    rig.finish(program);
    return out;
}

void assert_malformed(Result<std::unique_ptr<Program>> refused, std::uint32_t reason,
                      const char* note)
{
    assert_refused(refused, Errc::invalid_argument, VACCEL_D_TOSA_MALFORMED, reason, 0);
    assert_string_equal(refused.error().note.c_str(), note);
}

// ---------------------------------------------------------------- MAXIMUM, MINIMUM, POW

// a [2,3] against b [1,3] (broadcast along dimension 0).
const std::vector<float> mm_a{1.0f, -2.0f, nan, 0.5f, inf, -inf};
const std::vector<float> mm_b{0.0f, -3.0f, 4.0f};

void maximum_minimum_propagate_nan_and_broadcast(void**)
{
    Rig rig;
    auto max = rig.must_load(binary_graph(Op::maximum, {2, 3}, {1, 3}, {2, 3}, nan_attr(propagate)));
    auto min = rig.must_load(binary_graph(Op::minimum, {2, 3}, {1, 3}, {2, 3}, nan_attr(propagate)));
    assert_same(rig.run(*max, {mm_a, mm_b})[0], {1.0f, -2.0f, nan, 0.5f, inf, 4.0f});
    assert_same(rig.run(*min, {mm_a, mm_b})[0], {0.0f, -3.0f, nan, 0.0f, -3.0f, -inf});
    assert_ok(rig.backend->unload_program(max));
    rig.finish(min);
}

void maximum_minimum_ignore_nan_take_the_number(void**)
{
    Rig rig;
    auto max = rig.must_load(binary_graph(Op::maximum, {2, 3}, {1, 3}, {2, 3}, nan_attr(ignore)));
    auto min = rig.must_load(binary_graph(Op::minimum, {2, 3}, {1, 3}, {2, 3}, nan_attr(ignore)));
    assert_same(rig.run(*max, {mm_a, mm_b})[0], {1.0f, -2.0f, 4.0f, 0.5f, inf, 4.0f});
    assert_same(rig.run(*min, {mm_a, mm_b})[0], {0.0f, -3.0f, 4.0f, 0.0f, -3.0f, -inf});
    // Both NaN stays NaN; NaN in the second operand gives the first.
    const auto both = rig.run(*max, {{nan, 1.0f, nan, 2.0f, 3.0f, 4.0f}, {nan, nan, 5.0f}})[0];
    assert_same(both, {nan, 1.0f, 5.0f, 2.0f, 3.0f, 5.0f});
    assert_ok(rig.backend->unload_program(max));
    rig.finish(min);
}

void maximum_of_rank0_and_rank4_broadcast(void**)
{
    Rig rig;
    auto scalar = rig.must_load(binary_graph(Op::maximum, {}, {}, {}, nan_attr(propagate)));
    assert_same(rig.run(*scalar, {{-1.5f}, {-2.5f}})[0], {-1.5f});
    assert_ok(rig.backend->unload_program(scalar));
    auto rank4 = rig.must_load(
        binary_graph(Op::minimum, {1, 2, 1, 2}, {2, 1, 2, 1}, {2, 2, 2, 2}, nan_attr(propagate)));
    // out[i][j][k][l] = min(a[0][j][0][l], b[i][0][k][0])
    const std::vector<float> a{1, 2, 3, 4};  // [j][l]
    const std::vector<float> b{2.5f, 0, 5, 3.5f};  // [i][k]
    const std::vector<float> want{1, 2, 0, 0, 2.5f, 2.5f, 0, 0,   //
                                  1, 2, 1, 2, 3, 4, 3, 3.5f};
    assert_same(rig.run(*rank4, {a, b})[0], want);
    rig.finish(rank4);
}

void maximum_nan_mode_must_be_propagate_or_ignore(void**)
{
    Rig rig;
    for (const std::uint32_t mode : {0u, 3u}) {
        const std::string note = "operator 0 (MAXIMUM): nan_mode " + std::to_string(mode) +
                                 " is neither PROPAGATE (1) nor IGNORE (2)";
        assert_malformed(rig.load(binary_graph(Op::maximum, {2}, {2}, {2}, nan_attr(mode))),
                         VACCEL_TOSA_BAD_ATTRIBUTE, note.c_str());
    }
    assert_malformed(rig.load(binary_graph(Op::minimum, {2, 3}, {3, 2}, {2, 3}, nan_attr(1))),
                     VACCEL_TOSA_BAD_SHAPE,
                     "operator 0 (MINIMUM): operands [2,3] and [3,2] do not broadcast "
                     "(dimension 0)");
    rig.finish();
}

// NumPy float64 np.power of the float32 inputs.
void pow_matches_numpy(void**)
{
    Rig rig;
    auto program = rig.must_load(binary_graph(Op::pow, {8}, {8}, {8}));
    const std::vector<float> x{2.0f, 0.5f, 10.0f, 3.700000047683716f, 2.0f, 0.0f, nan, 1.5f};
    const std::vector<float> y{3.0f, -2.0f, -1.5f, 2.200000047683716f, inf, -1.0f, 2.0f, 0.5f};
    const std::vector<double> want{8.0, 4.0, 0.03162277660168379, 17.78458896794279, inf, inf,
                                   std::numeric_limits<double>::quiet_NaN(), 1.224744871391589};
    assert_ulps(rig.run(*program, {x, y})[0], want, 2.0);
    rig.finish(program);
}

void pow_broadcasts_the_exponent(void**)
{
    Rig rig;
    auto program = rig.must_load(binary_graph(Op::pow, {2, 3}, {1, 3}, {2, 3}));
    const std::vector<float> x{1.5f, 2.0f, 2.5f, 3.0f, 3.5f, 4.0f};
    const std::vector<float> y{0.5f, -1.0f, 3.25f};
    const std::vector<double> want{1.224744871391589,  0.5, 19.647397338795866,
                                   1.7320508075688772, 0.2857142857142857, 90.50966799187809};
    assert_ulps(rig.run(*program, {x, y})[0], want, 2.0);
    rig.finish(program);
}

// ---------------------------------------------------------------- comparisons, SELECT

// a [2,3] against b [1,3]: (1,0) (2,3) (nan,nan) / (-0,0) (inf,3) (3,nan).
void comparisons_give_bool_bytes_with_broadcast_and_nan(void**)
{
    Rig rig;
    const std::vector<float> a{1.0f, 2.0f, nan, -0.0f, inf, 3.0f};
    const std::vector<float> b{0.0f, 3.0f, nan};
    const struct {
        Op op;
        Bytes want;
    } cases[] = {
        {Op::equal, {0, 0, 0, 1, 0, 0}},
        {Op::greater, {1, 0, 0, 0, 1, 0}},
        {Op::greater_equal, {1, 0, 0, 1, 1, 0}},
    };
    for (const auto& c : cases) {
        auto program = rig.must_load(
            binary_graph(c.op, {2, 3}, {1, 3}, {2, 3}, {}, DType::boolean));
        const auto slots = program->slots();
        assert_int_equal(slots[2].bytes, 6);  // one byte per BOOL element
        assert_int_equal(slots[2].dtype, static_cast<std::uint32_t>(DType::boolean));
        const auto out = run_bytes(rig, *program, {to_bytes(a), to_bytes(b)})[0];
        assert_true(out == c.want);
        assert_ok(rig.backend->unload_program(program));
    }
    rig.finish();
}

void comparison_of_rank0_operands(void**)
{
    Rig rig;
    auto program = rig.must_load(binary_graph(Op::greater_equal, {}, {}, {}, {}, DType::boolean));
    assert_true(run_bytes(rig, *program, {to_bytes(std::vector<float>{2.0f}),
                                          to_bytes(std::vector<float>{2.0f})})[0] == Bytes{1});
    assert_true(run_bytes(rig, *program, {to_bytes(std::vector<float>{-inf}),
                                          to_bytes(std::vector<float>{nan})})[0] == Bytes{0});
    rig.finish(program);
}

void select_broadcasts_condition_and_operands(void**)
{
    Rig rig;
    tosa::GraphBuilder g;
    const auto c = g.tensor("c", {2, 1}, DType::boolean);
    const auto a = f32(g, "a", {2, 3});
    const auto b = f32(g, "b", {1, 3});
    const auto out = f32(g, "out", {2, 3});
    g.op(Op::select, {c, a, b}, {out});
    g.input(c);
    g.input(a);
    g.input(b);
    g.output(out);
    auto program = rig.must_load(g.finish());
    assert_int_equal(program->slots()[0].bytes, 2);
    const std::vector<float> va{1, 2, 3, 4, 5, 6};
    const std::vector<float> vb{-1, -2, nan};
    const auto out_bytes = run_bytes(rig, *program, {Bytes{1, 0}, to_bytes(va), to_bytes(vb)})[0];
    assert_same(from_bytes<float>(out_bytes), {1, 2, 3, -1, -2, nan});
    rig.finish(program);
}

// relu(x) = select(x > 0, x, 0): a BOOL intermediate in the arena, a BOOL
// constant-free FP32 graph.
void greater_feeds_select_inside_one_graph(void**)
{
    Rig rig;
    tosa::GraphBuilder g;
    const auto x = f32(g, "x", {5});
    const float zero_values[] = {0.0f};
    const auto zero = g.constant_f32("zero", {1}, zero_values);
    g.op(Op::const_, {}, {zero});
    const auto positive = g.tensor("positive", {5}, DType::boolean);
    const auto out = f32(g, "out", {5});
    g.op(Op::greater, {x, zero}, {positive});
    g.op(Op::select, {positive, x, zero}, {out});
    g.input(x);
    g.output(out);
    auto program = rig.must_load(g.finish());
    assert_same(rig.run(*program, {{-1.0f, 2.5f, nan, 0.0f, inf}})[0], {0, 2.5f, 0, 0, inf});
    rig.finish(program);
}

void select_with_a_bool_constant_condition(void**)
{
    Rig rig;
    tosa::GraphBuilder g;
    const auto c = g.tensor("c", {3}, DType::boolean, {0, 1, 0});
    g.op(Op::const_, {}, {c});
    const auto a = f32(g, "a", {3});
    const auto b = f32(g, "b", {3});
    const auto out = f32(g, "out", {3});
    g.op(Op::select, {c, a, b}, {out});
    g.input(a);
    g.input(b);
    g.output(out);
    auto program = rig.must_load(g.finish());
    assert_same(rig.run(*program, {{1, 2, 3}, {4, 5, 6}})[0], {4, 2, 6});
    rig.finish(program);
}

void comparison_on_int16_is_refused_naming_the_dtype(void**)
{
    Rig rig;
    tosa::GraphBuilder g;
    const auto a = g.tensor("a", {4}, DType::int16);
    const auto b = g.tensor("b", {4}, DType::int16);
    const auto out = g.tensor("out", {4}, DType::boolean);
    g.op(Op::equal, {a, b}, {out});
    g.input(a);
    g.input(b);
    g.output(out);
    auto refused = rig.load(g.finish());
    assert_refused(refused, Errc::unsupported, VACCEL_D_TOSA_DTYPE, DType::int16, Op::equal);
    assert_string_equal(refused.error().note.c_str(),
                        "input 0 ('a') of operator 0 (EQUAL) of dtype INT16 is not supported by "
                        "the CPU backend for this operator (docs/operators.md lists the dtypes "
                        "each operator takes); convert the model to FP32");
    // A comparison declared with an FP32 output is not the admitted form.
    assert_refused(rig.load(binary_graph(Op::greater, {2}, {2}, {2})), Errc::unsupported,
                   VACCEL_D_TOSA_OPERATOR, Op::greater, DType::fp32);
    rig.finish();
}

void select_with_fp32_condition_is_refused(void**)
{
    Rig rig;
    tosa::GraphBuilder g;
    const auto c = f32(g, "c", {2});
    const auto a = f32(g, "a", {2});
    const auto out = f32(g, "out", {2});
    g.op(Op::select, {c, a, a}, {out});
    g.input(c);
    g.input(a);
    g.output(out);
    assert_refused(rig.load(g.finish()), Errc::unsupported, VACCEL_D_TOSA_DTYPE, DType::fp32,
                   Op::select);
    rig.finish();
}

void select_with_two_operands_is_malformed(void**)
{
    Rig rig;
    tosa::GraphBuilder g;
    const auto c = g.tensor("c", {2}, DType::boolean);
    const auto a = f32(g, "a", {2});
    const auto out = f32(g, "out", {2});
    g.op(Op::select, {c, a}, {out});
    g.input(c);
    g.input(a);
    g.output(out);
    assert_malformed(rig.load(g.finish()), VACCEL_TOSA_ARITY,
                     "operator 0 (SELECT) has 2 inputs and 1 outputs; TOSA 1.0 defines 3 and 1");
    rig.finish();
}

// ---------------------------------------------------------------- elementwise unary

const std::vector<float> simple_in{-1.5f, 2.5f, -0.0f, inf, -inf, 0.4999999701976776f, -7.0f, nan};

void abs_ceil_floor_reciprocal_are_exact(void**)
{
    assert_same(run_unary(Op::abs, {8}, simple_in),
                {1.5f, 2.5f, 0.0f, inf, inf, 0.4999999701976776f, 7.0f, nan});
    assert_same(run_unary(Op::ceil, {2, 4}, simple_in),
                {-1.0f, 3.0f, -0.0f, inf, -inf, 1.0f, -7.0f, nan});
    assert_same(run_unary(Op::floor, {2, 2, 2}, simple_in),
                {-2.0f, 2.0f, -0.0f, inf, -inf, 0.0f, -7.0f, nan});
    // 1/x rounded once (IEEE division), values from NumPy float32.
    assert_same(run_unary(Op::reciprocal, {1, 2, 2, 2}, simple_in),
                {-0.6666666865348816f, 0.4000000059604645f, -inf, 0.0f, -0.0f,
                 2.000000238418579f, -0.1428571492433548f, nan});
    assert_same(run_unary(Op::abs, {}, {-3.25f}), {3.25f});
    assert_same(run_unary(Op::reciprocal, {1}, {0.0f}), {inf});
}

tosa::Graph negate_graph(float input_zp, float output_zp, bool with_zero_points = true)
{
    tosa::GraphBuilder g;
    const auto in = f32(g, "in", {2, 3});
    const auto out = f32(g, "out", {2, 3});
    if (with_zero_points)
        g.op(Op::negate, {in, zero_point(g, "izp", input_zp), zero_point(g, "ozp", output_zp)},
             {out});
    else
        g.op(Op::negate, {in}, {out});
    g.input(in);
    g.output(out);
    return g.finish();
}

void negate_flips_the_sign_bit(void**)
{
    Rig rig;
    auto program = rig.must_load(negate_graph(0.0f, -0.0f));
    assert_same(rig.run(*program, {{1.5f, -2.0f, 0.0f, -0.0f, inf, -inf}})[0],
                {-1.5f, 2.0f, -0.0f, 0.0f, -inf, inf});
    const auto out = rig.run(*program, {{nan, 0, 0, 0, 0, 0}})[0];
    assert_true(std::isnan(out[0]));
    rig.finish(program);
}

void negate_zero_points_must_be_zero_constants(void**)
{
    Rig rig;
    assert_malformed(rig.load(negate_graph(1.0f, 0.0f)), VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (NEGATE): input1_zp 'izp' must be zero for FP32");
    assert_malformed(rig.load(negate_graph(0.0f, -3.0f)), VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (NEGATE): output_zp 'ozp' must be zero for FP32");
    assert_malformed(rig.load(negate_graph(0.0f, 0.0f, false)), VACCEL_TOSA_ARITY,
                     "operator 0 (NEGATE) has 1 inputs and 1 outputs; TOSA 1.0 defines 3 and 1");
    rig.finish();
}

// The references below are NumPy float64 (math.erf for ERF) of the float32
// inputs; bounds in the header comment.
void exp_matches_numpy(void**)
{
    const std::vector<float> in{0.0f, 1.0f, -1.0f, 0.5f, -2.5f, 10.0f, 88.0f, -100.0f, 89.0f,
                                inf, -inf, nan};
    const std::vector<double> want{1.0, 2.718281828459045, 0.3678794411714424, 1.6487212707001282,
                                   0.0820849986238988, 22026.465794806718, 1.651636254994002e+38,
                                   3.720075976020836e-44, 4.4896128191743455e+38, inf, 0.0,
                                   std::numeric_limits<double>::quiet_NaN()};
    assert_ulps(run_unary(Op::exp, {3, 4}, in), want, 2.0);
}

void log_matches_numpy(void**)
{
    const std::vector<float> in{1.0f, 2.0f, 0.5f, 10.0f, 1.0000000031710769e-30f,
                                3.0000000054977558e+38f, 0.10000000149011612f, 0.0f, -1.0f, inf,
                                nan};
    const double qnan = std::numeric_limits<double>::quiet_NaN();
    const std::vector<double> want{0.0, 0.6931471805599453, -0.6931471805599453,
                                   2.3025850929940455, -69.07755278665029, 88.59684582427442,
                                   -2.3025850780928847, -inf, qnan, inf, qnan};
    assert_ulps(run_unary(Op::log, {11}, in), want, 2.0);
}

const std::vector<float> trig_in{0.0f, 0.5f, -1.0f, 3.1415927410125732f, 100.0f, -1000.0f,
                                 1.000000013351432e-10f, inf, nan};

void sin_matches_numpy(void**)
{
    const double qnan = std::numeric_limits<double>::quiet_NaN();
    const std::vector<double> want{0.0, 0.47942553860420295, -0.8414709848078965,
                                   -8.742278000372475e-08, -0.5063656411097587,
                                   -0.8268795405320026, 1.000000013351432e-10, qnan, qnan};
    assert_ulps(run_unary(Op::sin, {9}, trig_in), want, 2.0);
}

void cos_matches_numpy(void**)
{
    const double qnan = std::numeric_limits<double>::quiet_NaN();
    const std::vector<double> want{1.0, 0.8775825618903725, 0.5403023058681397,
                                   -0.9999999999999961, 0.8623188722876839, 0.5623790762907028,
                                   1.0, qnan, qnan};
    assert_ulps(run_unary(Op::cos, {3, 3}, trig_in), want, 2.0);
}

void erf_matches_numpy(void**)
{
    const std::vector<float> in{0.0f, 0.10000000149011612f, 0.5f, -1.0f, 2.0f, 3.5f, -6.0f,
                                9.999999682655225e-21f, inf, -inf, nan};
    const std::vector<double> want{0.0, 0.11246291768297051, 0.5204998778130465,
                                   -0.8427007929497149, 0.9953222650189527, 0.9999992569016276,
                                   -1.0, 1.1283791312869893e-20, 1.0, -1.0,
                                   std::numeric_limits<double>::quiet_NaN()};
    assert_ulps(run_unary(Op::erf, {11, 1}, in), want, 5.0);
}

void rsqrt_matches_numpy(void**)
{
    const std::vector<float> in{1.0f, 4.0f, 2.0f, 0.25f, 1.0000000031710769e-30f,
                                3.0000000054977558e+38f, 7.0f, 0.0f, -0.0f, -1.0f, inf, nan};
    const double qnan = std::numeric_limits<double>::quiet_NaN();
    const std::vector<double> want{1.0, 0.5, 0.7071067811865475, 2.0, 999999998414461.5,
                                   5.77350268660604e-20, 0.3779644730092272, inf, -inf, qnan,
                                   0.0, qnan};
    assert_ulps(run_unary(Op::rsqrt, {2, 6}, in), want, 2.0);
}

// TOSA 1.0 defines no FP8 EXP (FP16 runs: test_cpu_half.cpp).
void unary_on_fp8_is_refused_naming_the_operator(void**)
{
    Rig rig;
    tosa::GraphBuilder g;
    const auto in = g.tensor("in", {2}, DType::fp8e4m3);
    const auto out = g.tensor("out", {2}, DType::fp8e4m3);
    g.op(Op::exp, {in}, {out});
    g.input(in);
    g.output(out);
    auto refused = rig.load(g.finish());
    assert_refused(refused, Errc::unsupported, VACCEL_D_TOSA_OPERATOR, Op::exp, DType::fp8e4m3);
    assert_string_equal(refused.error().note.c_str(),
                        "TOSA operator EXP on FP8E4M3 is not supported by the CPU backend");
    assert_malformed(rig.load(unary_graph(Op::floor, {2, 3}, {3, 2})), VACCEL_TOSA_BAD_SHAPE,
                     "operator 0 (FLOOR): output 'out' is declared [3,2] but the operands give "
                     "[2,3]");
    rig.finish();
}

// ---------------------------------------------------------------- reductions, ARGMAX

// [2,3,2] over axis 1: columns (x0, x2, x4) and (x1, x3, x5) per outer row.
const std::vector<float> r_in{1, -1, 5, nan, 3, 2,  //
                              nan, 4, -0.5f, 8, 2, 0.25f};

void reduce_max_min_propagate_nan(void**)
{
    Rig rig;
    auto max = rig.must_load(unary_graph(Op::reduce_max, {2, 3, 2}, {2, 1, 2},
                                         axis_nan_attr(1, propagate)));
    auto min = rig.must_load(unary_graph(Op::reduce_min, {2, 3, 2}, {2, 1, 2},
                                         axis_nan_attr(1, propagate)));
    assert_same(rig.run(*max, {r_in})[0], {5, nan, nan, 8});
    assert_same(rig.run(*min, {r_in})[0], {1, nan, nan, 0.25f});
    assert_ok(rig.backend->unload_program(max));
    rig.finish(min);
}

void reduce_max_min_ignore_nan(void**)
{
    Rig rig;
    auto max = rig.must_load(unary_graph(Op::reduce_max, {2, 3, 2}, {2, 1, 2},
                                         axis_nan_attr(1, ignore)));
    auto min = rig.must_load(unary_graph(Op::reduce_min, {2, 3, 2}, {2, 1, 2},
                                         axis_nan_attr(1, ignore)));
    assert_same(rig.run(*max, {r_in})[0], {5, 2, 2, 8});
    assert_same(rig.run(*min, {r_in})[0], {1, -1, -0.5f, 0.25f});
    // All NaN along the axis: NaN.
    auto all = rig.must_load(unary_graph(Op::reduce_max, {3}, {1}, axis_nan_attr(0, ignore)));
    assert_same(rig.run(*all, {{nan, nan, nan}})[0], {nan});
    assert_ok(rig.backend->unload_program(all));
    assert_ok(rig.backend->unload_program(max));
    rig.finish(min);
}

void reduce_max_over_last_axis_of_rank4(void**)
{
    Rig rig;
    auto program = rig.must_load(
        unary_graph(Op::reduce_max, {1, 2, 1, 3}, {1, 2, 1, 1}, axis_nan_attr(3, propagate)));
    assert_same(rig.run(*program, {{-inf, -5, -7, 0.5f, inf, 1}})[0], {-5, inf});
    rig.finish(program);
}

void reduce_product_multiplies_in_order(void**)
{
    Rig rig;
    auto program =
        rig.must_load(unary_graph(Op::reduce_product, {3, 2}, {1, 2}, tosa::axis_attr(0)));
    assert_same(rig.run(*program, {{1.5f, -2, 4, 0.5f, -0.5f, 3}})[0], {-3.0f, -3.0f});
    assert_same(rig.run(*program, {{inf, 2, 0, 2, 1, nan}})[0], {nan, nan});  // inf*0, NaN
    assert_ok(rig.backend->unload_program(program));
    auto single = rig.must_load(unary_graph(Op::reduce_product, {4}, {1}, tosa::axis_attr(0)));
    assert_same(rig.run(*single, {{2, 3, -0.25f, 8}})[0], {-12.0f});
    rig.finish(single);
}

void reductions_refuse_a_bad_axis_or_nan_mode(void**)
{
    Rig rig;
    assert_malformed(rig.load(unary_graph(Op::reduce_product, {2, 3}, {2, 1}, tosa::axis_attr(2))),
                     VACCEL_TOSA_BAD_ATTRIBUTE, "operator 0 (REDUCE_PRODUCT): axis 2 is outside "
                                                "rank 2");
    assert_malformed(rig.load(unary_graph(Op::reduce_min, {2, 3}, {2, 1},
                                          axis_nan_attr(-1, propagate))),
                     VACCEL_TOSA_BAD_ATTRIBUTE, "operator 0 (REDUCE_MIN): axis -1 is outside "
                                                "rank 2");
    assert_malformed(rig.load(unary_graph(Op::reduce_max, {2, 3}, {2, 1}, tosa::axis_attr(1))),
                     VACCEL_TOSA_BAD_ATTRIBUTE, "operator 0 (REDUCE_MAX): nan_mode 0 is neither "
                                                "PROPAGATE (1) nor IGNORE (2)");
    assert_malformed(rig.load(unary_graph(Op::reduce_max, {2, 3}, {2, 3},
                                          axis_nan_attr(1, propagate))),
                     VACCEL_TOSA_BAD_SHAPE, "operator 0 (REDUCE_MAX): output 'out' is declared "
                                            "[2,3] but the operands give [2,1]");
    rig.finish();
}

std::vector<std::int32_t> run_argmax(std::vector<std::int64_t> in_shape,
                                     std::vector<std::int64_t> out_shape, std::int32_t axis,
                                     std::uint32_t mode, const std::vector<float>& in)
{
    Rig rig;
    auto program = rig.must_load(
        unary_graph(Op::argmax, in_shape, out_shape, axis_nan_attr(axis, mode), DType::int32));
    assert_int_equal(program->slots()[1].bytes, elements(out_shape) * 4);
    auto out = from_bytes<std::int32_t>(run_bytes(rig, *program, {to_bytes(in)})[0]);
    rig.finish(program);
    return out;
}

void argmax_gives_the_first_largest_index_as_int32(void**)
{
    // [2,4] over axis 1: ties go to the first index; -inf rows give 0.
    assert_true(run_argmax({3, 4}, {3}, 1, propagate,
                           {1, 5, 5, -1, -inf, -inf, -inf, -inf, 0, -0.0f, 2, inf}) ==
                (std::vector<std::int32_t>{1, 0, 3}));
    // [3,2] over axis 0.
    assert_true(run_argmax({3, 2}, {2}, 0, propagate, {1, 9, 7, -2, 3, 9}) ==
                (std::vector<std::int32_t>{1, 0}));
    // Rank 1 to rank 0.
    assert_true(run_argmax({5}, {}, 0, propagate, {0.5f, -1, 0.75f, 0.25f, 0.75f}) ==
                (std::vector<std::int32_t>{2}));
    // Rank 4 over axis 2.
    assert_true(run_argmax({1, 2, 3, 1}, {1, 2, 1}, 2, propagate, {1, 3, 2, 6, 5, 4}) ==
                (std::vector<std::int32_t>{1, 0}));
}

void argmax_nan_modes(void**)
{
    const std::vector<float> in{1, nan, 7, nan,  //
                                nan, nan, nan, nan};
    // PROPAGATE: the first NaN wins.
    assert_true(run_argmax({2, 4}, {2}, 1, propagate, in) == (std::vector<std::int32_t>{1, 0}));
    // IGNORE: NaNs are skipped; all NaN gives 0.
    assert_true(run_argmax({2, 4}, {2}, 1, ignore, in) == (std::vector<std::int32_t>{2, 0}));
}

void argmax_refusals(void**)
{
    Rig rig;
    assert_malformed(rig.load(unary_graph(Op::argmax, {2, 3}, {2}, axis_nan_attr(2, propagate),
                                          DType::int32)),
                     VACCEL_TOSA_BAD_ATTRIBUTE, "operator 0 (ARGMAX): axis 2 is outside rank 2");
    assert_malformed(rig.load(unary_graph(Op::argmax, {2, 3}, {2}, axis_nan_attr(1, 5),
                                          DType::int32)),
                     VACCEL_TOSA_BAD_ATTRIBUTE, "operator 0 (ARGMAX): nan_mode 5 is neither "
                                                "PROPAGATE (1) nor IGNORE (2)");
    assert_malformed(rig.load(unary_graph(Op::argmax, {2, 3}, {2, 1},
                                          axis_nan_attr(1, propagate), DType::int32)),
                     VACCEL_TOSA_BAD_SHAPE, "operator 0 (ARGMAX): output 'out' is declared "
                                            "[2,1] but the operands give [2]");
    // An FP32 output is not ARGMAX's admitted form (INT32 indices).
    assert_refused(rig.load(unary_graph(Op::argmax, {2, 3}, {2}, axis_nan_attr(1, propagate))),
                   Errc::unsupported, VACCEL_D_TOSA_OPERATOR, Op::argmax, DType::fp32);
    // An INT48 input (no ARGMAX takes it).
    tosa::GraphBuilder g;
    const auto in = g.tensor("in", {2, 3}, DType::int48);
    const auto out = g.tensor("out", {2}, DType::int32);
    g.op(Op::argmax, {in}, {out}, axis_nan_attr(1, propagate));
    g.input(in);
    g.output(out);
    assert_refused(rig.load(g.finish()), Errc::unsupported, VACCEL_D_TOSA_DTYPE, DType::int48,
                   Op::argmax);
    rig.finish();
}

// ---------------------------------------------------------------- CONCAT SLICE PAD TILE REVERSE

tosa::Graph concat_graph(const std::vector<std::vector<std::int64_t>>& shapes,
                         std::vector<std::int64_t> out_shape, std::int32_t axis)
{
    tosa::GraphBuilder g;
    std::vector<std::uint32_t> inputs;
    for (std::size_t i = 0; i < shapes.size(); ++i)
        inputs.push_back(g.tensor("in" + std::to_string(i), shapes[i], DType::fp32));
    const auto out = f32(g, "out", std::move(out_shape));
    g.op(Op::concat, inputs, {out}, tosa::axis_attr(axis));
    for (auto t : inputs) g.input(t);
    g.output(out);
    return g.finish();
}

void concat_joins_any_number_of_inputs(void**)
{
    Rig rig;
    auto three = rig.must_load(concat_graph({{2, 1}, {2, 2}, {2, 3}}, {2, 6}, 1));
    assert_same(rig.run(*three, {{1, 2}, {3, 4, 5, 6}, {7, 8, 9, 10, 11, 12}})[0],
                {1, 3, 4, 7, 8, 9, 2, 5, 6, 10, 11, 12});
    assert_ok(rig.backend->unload_program(three));
    auto first = rig.must_load(concat_graph({{1, 2}, {2, 2}}, {3, 2}, 0));
    assert_same(rig.run(*first, {{1, 2}, {3, 4, 5, 6}})[0], {1, 2, 3, 4, 5, 6});
    assert_ok(rig.backend->unload_program(first));
    auto one = rig.must_load(concat_graph({{3}}, {3}, 0));
    assert_same(rig.run(*one, {{nan, -0.0f, inf}})[0], {nan, -0.0f, inf});
    assert_ok(rig.backend->unload_program(one));
    auto rank4 = rig.must_load(concat_graph({{1, 2, 1, 1}, {1, 2, 2, 1}}, {1, 2, 3, 1}, 2));
    assert_same(rig.run(*rank4, {{1, 2}, {3, 4, 5, 6}})[0], {1, 3, 4, 2, 5, 6});
    rig.finish(rank4);
}

void concat_refusals(void**)
{
    Rig rig;
    assert_malformed(rig.load(concat_graph({{2, 1}, {2, 2}}, {2, 3}, 2)), VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 0 (CONCAT): axis 2 is outside rank 2");
    assert_malformed(rig.load(concat_graph({{2, 1}, {3, 2}}, {2, 3}, 1)), VACCEL_TOSA_BAD_SHAPE,
                     "operator 0 (CONCAT): input 1 [3,2] does not match input 0 [2,1] but "
                     "along axis 1");
    assert_malformed(rig.load(concat_graph({{2, 1}, {2, 2}}, {2, 4}, 1)), VACCEL_TOSA_BAD_SHAPE,
                     "operator 0 (CONCAT): output 'out' is declared [2,4] but the operands give "
                     "[2,3]");
    assert_malformed(rig.load(concat_graph({}, {2}, 0)), VACCEL_TOSA_ARITY,
                     "operator 0 (CONCAT) has 0 inputs and 1 outputs; TOSA 1.0 defines one or "
                     "more and 1");
    rig.finish();
}

tosa::Graph slice_graph(std::vector<std::int64_t> in_shape, std::vector<std::int64_t> start,
                        std::vector<std::int64_t> size, std::vector<std::int64_t> out_shape)
{
    tosa::GraphBuilder g;
    const auto in = f32(g, "in", std::move(in_shape));
    const auto out = f32(g, "out", std::move(out_shape));
    g.op(Op::slice, {in, shape_const(g, "start", std::move(start)),
                     shape_const(g, "size", std::move(size))},
         {out});
    g.input(in);
    g.output(out);
    return g.finish();
}

void slice_takes_a_window(void**)
{
    Rig rig;
    auto program = rig.must_load(slice_graph({3, 4}, {1, 1}, {2, 2}, {2, 2}));
    assert_same(rig.run(*program, {{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}})[0], {5, 6, 9, 10});
    assert_ok(rig.backend->unload_program(program));
    // Rank 4: in[i][j][k][l] = 1000i + 100j + 10k + l, shape [2,2,3,2].
    std::vector<float> in;
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)
            for (int k = 0; k < 3; ++k)
                for (int l = 0; l < 2; ++l) in.push_back(1000.0f * i + 100.0f * j + 10.0f * k + l);
    auto rank4 = rig.must_load(slice_graph({2, 2, 3, 2}, {1, 0, 1, 1}, {1, 2, 2, 1}, {1, 2, 2, 1}));
    assert_same(rig.run(*rank4, {in})[0], {1011, 1021, 1111, 1121});
    assert_ok(rig.backend->unload_program(rank4));
    // The whole tensor.
    auto whole = rig.must_load(slice_graph({3}, {0}, {3}, {3}));
    assert_same(rig.run(*whole, {{1, 2, 3}})[0], {1, 2, 3});
    rig.finish(whole);
}

void slice_refusals(void**)
{
    Rig rig;
    assert_malformed(rig.load(slice_graph({3, 4}, {2, 1}, {2, 2}, {2, 2})),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (SLICE): start [2,1] and size [2,2] do not lie within the "
                     "input [3,4] (dimension 0)");
    assert_malformed(rig.load(slice_graph({3, 4}, {-1, 0}, {1, 1}, {1, 1})),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (SLICE): start [-1,0] and size [1,1] do not lie within the "
                     "input [3,4] (dimension 0)");
    assert_malformed(rig.load(slice_graph({3, 4}, {0, 0}, {1, 0}, {1, 0})),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (SLICE): start [0,0] and size [1,0] do not lie within the "
                     "input [3,4] (dimension 1)");
    assert_malformed(rig.load(slice_graph({3, 4}, {0}, {1, 1}, {1, 1})), VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (SLICE): start 'start' has 1 elements; the input's rank needs 2");
    assert_malformed(rig.load(slice_graph({3, 4}, {0, 0}, {1, 2}, {2, 1})), VACCEL_TOSA_BAD_SHAPE,
                     "operator 2 (SLICE): output 'out' is declared [2,1] but the operands give "
                     "[1,2]");
    // A start that is not a constant: the only non-constant SHAPE a graph
    // can carry is a graph input, which admission refuses by its dtype.
    tosa::GraphBuilder g;
    const auto in = f32(g, "in", {3});
    const auto start = g.tensor("start", {1}, DType::shape);
    const auto out = f32(g, "out", {1});
    g.op(Op::slice, {in, start, shape_const(g, "size", {1})}, {out});
    g.input(in);
    g.input(start);
    g.output(out);
    assert_refused(rig.load(g.finish()), Errc::unsupported, VACCEL_D_TOSA_DTYPE, DType::shape,
                   Op::unknown);
    // SLICE with an FP32 start.
    tosa::GraphBuilder h;
    const auto in2 = f32(h, "in", {3});
    const auto bad = f32(h, "start", {1});
    const auto out2 = f32(h, "out", {1});
    h.op(Op::slice, {in2, bad, shape_const(h, "size", {1})}, {out2});
    h.input(in2);
    h.input(bad);
    h.output(out2);
    assert_refused(rig.load(h.finish()), Errc::unsupported, VACCEL_D_TOSA_DTYPE, DType::fp32,
                   Op::slice);
    rig.finish();
}

tosa::Graph pad_graph(std::vector<std::int64_t> in_shape, std::vector<std::int64_t> padding,
                      std::vector<std::int64_t> out_shape, float value,
                      std::vector<std::int64_t> value_shape = {1})
{
    tosa::GraphBuilder g;
    const auto in = f32(g, "in", std::move(in_shape));
    const auto out = f32(g, "out", std::move(out_shape));
    const std::vector<float> values(elements(value_shape), value);
    const auto pad_const = g.constant_f32("pad_const", value_shape, values);
    g.op(Op::const_, {}, {pad_const});
    g.op(Op::pad, {in, shape_const(g, "padding", std::move(padding)), pad_const}, {out});
    g.input(in);
    g.output(out);
    return g.finish();
}

void pad_surrounds_with_the_constant(void**)
{
    Rig rig;
    auto program = rig.must_load(pad_graph({2, 2}, {1, 0, 0, 2}, {3, 4}, -1.5f));
    assert_same(rig.run(*program, {{1, 2, 3, 4}})[0],
                {-1.5f, -1.5f, -1.5f, -1.5f, 1, 2, -1.5f, -1.5f, 3, 4, -1.5f, -1.5f});
    assert_ok(rig.backend->unload_program(program));
    auto rank1 = rig.must_load(pad_graph({2}, {2, 1}, {5}, nan));
    assert_same(rig.run(*rank1, {{7, 8}})[0], {nan, nan, 7, 8, nan});
    assert_ok(rig.backend->unload_program(rank1));
    auto none = rig.must_load(pad_graph({1, 2, 1, 1}, {0, 0, 0, 0, 0, 0, 0, 0}, {1, 2, 1, 1}, 9));
    assert_same(rig.run(*none, {{5, 6}})[0], {5, 6});
    rig.finish(none);
}

void pad_refusals(void**)
{
    Rig rig;
    assert_malformed(rig.load(pad_graph({2, 2}, {1, 0, -1, 0}, {3, 1}, 0)),
                     VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (PAD): padding [1,0,-1,0] must be >= 0");
    assert_malformed(rig.load(pad_graph({2, 2}, {1, 0}, {3, 2}, 0)), VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (PAD): padding 'padding' has 2 elements; the input's rank needs "
                     "4");
    assert_malformed(rig.load(pad_graph({2}, {1, 0}, {3}, 0, {2})), VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 2 (PAD): pad_const 'pad_const' must be a constant of shape [1], "
                     "is [2]");
    const std::int64_t huge = std::numeric_limits<std::int64_t>::max();
    assert_malformed(rig.load(pad_graph({2}, {1, huge}, {3}, 0)), VACCEL_TOSA_BAD_ATTRIBUTE,
                     ("operator 2 (PAD): padding [1," + std::to_string(huge) +
                      "] overflows the shape")
                         .c_str());
    assert_malformed(rig.load(pad_graph({2}, {1, 0}, {4}, 0)), VACCEL_TOSA_BAD_SHAPE,
                     "operator 2 (PAD): output 'out' is declared [4] but the operands give [3]");
    // pad_const from a graph input rather than a constant.
    tosa::GraphBuilder g;
    const auto in = f32(g, "in", {2});
    const auto value = f32(g, "value", {1});
    const auto out = f32(g, "out", {3});
    g.op(Op::pad, {in, shape_const(g, "padding", {1, 0}), value}, {out});
    g.input(in);
    g.input(value);
    g.output(out);
    assert_malformed(rig.load(g.finish()), VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 1 (PAD): pad_const 'value' must be a constant of shape [1], is [1]");
    rig.finish();
}

tosa::Graph tile_graph(std::vector<std::int64_t> in_shape, std::vector<std::int64_t> multiples,
                       std::vector<std::int64_t> out_shape)
{
    tosa::GraphBuilder g;
    const auto in = f32(g, "in", std::move(in_shape));
    const auto out = f32(g, "out", std::move(out_shape));
    g.op(Op::tile, {in, shape_const(g, "multiples", std::move(multiples))}, {out});
    g.input(in);
    g.output(out);
    return g.finish();
}

void tile_repeats_along_each_dimension(void**)
{
    Rig rig;
    auto program = rig.must_load(tile_graph({2, 2}, {2, 3}, {4, 6}));
    assert_same(rig.run(*program, {{1, 2, 3, 4}})[0],
                {1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4});
    assert_ok(rig.backend->unload_program(program));
    auto rank3 = rig.must_load(tile_graph({1, 2, 1}, {2, 1, 2}, {2, 2, 2}));
    assert_same(rig.run(*rank3, {{5, nan}})[0], {5, 5, nan, nan, 5, 5, nan, nan});
    rig.finish(rank3);
}

void tile_refusals(void**)
{
    Rig rig;
    assert_malformed(rig.load(tile_graph({2, 2}, {0, 1}, {0, 2})), VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 1 (TILE): multiples [0,1] must each be >= 1");
    const std::int64_t huge = std::int64_t{1} << 62;
    assert_malformed(rig.load(tile_graph({2, 4}, {1, huge}, {2, 4})), VACCEL_TOSA_BAD_ATTRIBUTE,
                     ("operator 1 (TILE): multiples [1," + std::to_string(huge) +
                      "] overflow the shape")
                         .c_str());
    assert_malformed(rig.load(tile_graph({2, 2}, {2}, {4, 2})), VACCEL_TOSA_BAD_ATTRIBUTE,
                     "operator 1 (TILE): multiples 'multiples' has 1 elements; the input's rank "
                     "needs 2");
    assert_malformed(rig.load(tile_graph({2, 2}, {2, 1}, {2, 4})), VACCEL_TOSA_BAD_SHAPE,
                     "operator 1 (TILE): output 'out' is declared [2,4] but the operands give "
                     "[4,2]");
    rig.finish();
}

void reverse_flips_one_axis(void**)
{
    Rig rig;
    const std::vector<float> in{1, 2, 3, 4, 5, 6};  // [2,3]
    auto rows = rig.must_load(unary_graph(Op::reverse, {2, 3}, {2, 3}, tosa::axis_attr(0)));
    assert_same(rig.run(*rows, {in})[0], {4, 5, 6, 1, 2, 3});
    assert_ok(rig.backend->unload_program(rows));
    auto columns = rig.must_load(unary_graph(Op::reverse, {2, 3}, {2, 3}, tosa::axis_attr(1)));
    assert_same(rig.run(*columns, {in})[0], {3, 2, 1, 6, 5, 4});
    assert_ok(rig.backend->unload_program(columns));
    auto rank4 =
        rig.must_load(unary_graph(Op::reverse, {1, 2, 2, 1}, {1, 2, 2, 1}, tosa::axis_attr(2)));
    assert_same(rig.run(*rank4, {{1, 2, 3, 4}})[0], {2, 1, 4, 3});
    rig.finish(rank4);
}

void reverse_refuses_a_bad_axis(void**)
{
    Rig rig;
    assert_malformed(rig.load(unary_graph(Op::reverse, {2, 3}, {2, 3}, tosa::axis_attr(2))),
                     VACCEL_TOSA_BAD_ATTRIBUTE, "operator 0 (REVERSE): axis 2 is outside rank 2");
    assert_malformed(rig.load(unary_graph(Op::reverse, {}, {}, tosa::axis_attr(0))),
                     VACCEL_TOSA_BAD_ATTRIBUTE, "operator 0 (REVERSE): axis 0 is outside rank 0");
    rig.finish();
}

// ---------------------------------------------------------------- every new operator, INT48

// Each operator added here on INT48 data (no float operator takes it; FP16
// and BF16 run since test_cpu_half.cpp): refused naming the operator and
// the dtype. Where the output is INT48 the operator/dtype pair is unknown
// (D_TOSA_OPERATOR); where the output keeps its admitted dtype (BOOL for the
// comparisons, INT32 for ARGMAX) the INT48 operand is named (D_TOSA_DTYPE).
void every_new_operator_on_int48_is_refused(void**)
{
    Rig rig;
    const Op fp16_out[] = {Op::maximum, Op::minimum,    Op::pow,        Op::abs,
                           Op::exp,     Op::log,        Op::reciprocal, Op::rsqrt,
                           Op::ceil,    Op::floor,      Op::sin,        Op::cos,
                           Op::erf,     Op::reduce_max, Op::reduce_min, Op::reduce_product,
                           Op::concat,  Op::reverse,    Op::negate,     Op::select,
                           Op::slice,   Op::pad,        Op::tile};
    for (const Op op : fp16_out) {
        tosa::GraphBuilder g;
        const auto in = g.tensor("in", {2}, DType::int48);
        const auto out = g.tensor("out", {2}, DType::int48);
        g.op(op, {in}, {out}, axis_nan_attr(0, propagate));
        g.input(in);
        g.output(out);
        auto refused = rig.load(g.finish());
        assert_refused(refused, Errc::unsupported, VACCEL_D_TOSA_OPERATOR, op, DType::int48);
        const std::string note = "TOSA operator " + std::string(tosa::op_name(op)) +
                                 " on INT48 is not supported by the CPU backend";
        assert_string_equal(refused.error().note.c_str(), note.c_str());
    }
    const struct {
        Op op;
        DType out;
        std::size_t operands;
    } named_operand[] = {
        {Op::equal, DType::boolean, 2},
        {Op::greater, DType::boolean, 2},
        {Op::greater_equal, DType::boolean, 2},
        {Op::argmax, DType::int32, 1},
    };
    for (const auto& c : named_operand) {
        tosa::GraphBuilder g;
        std::vector<std::uint32_t> inputs;
        for (std::size_t i = 0; i < c.operands; ++i)
            inputs.push_back(g.tensor("in" + std::to_string(i), {2}, DType::int48));
        const auto out = g.tensor("out", {2}, c.out);
        g.op(c.op, inputs, {out}, axis_nan_attr(0, propagate));
        for (auto t : inputs) g.input(t);
        g.output(out);
        assert_refused(rig.load(g.finish()), Errc::unsupported, VACCEL_D_TOSA_DTYPE, DType::int48,
                       c.op);
    }
    rig.finish();
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(maximum_minimum_propagate_nan_and_broadcast),
        cmocka_unit_test(maximum_minimum_ignore_nan_take_the_number),
        cmocka_unit_test(maximum_of_rank0_and_rank4_broadcast),
        cmocka_unit_test(maximum_nan_mode_must_be_propagate_or_ignore),
        cmocka_unit_test(pow_matches_numpy),
        cmocka_unit_test(pow_broadcasts_the_exponent),
        cmocka_unit_test(comparisons_give_bool_bytes_with_broadcast_and_nan),
        cmocka_unit_test(comparison_of_rank0_operands),
        cmocka_unit_test(select_broadcasts_condition_and_operands),
        cmocka_unit_test(greater_feeds_select_inside_one_graph),
        cmocka_unit_test(select_with_a_bool_constant_condition),
        cmocka_unit_test(comparison_on_int16_is_refused_naming_the_dtype),
        cmocka_unit_test(select_with_fp32_condition_is_refused),
        cmocka_unit_test(select_with_two_operands_is_malformed),
        cmocka_unit_test(abs_ceil_floor_reciprocal_are_exact),
        cmocka_unit_test(negate_flips_the_sign_bit),
        cmocka_unit_test(negate_zero_points_must_be_zero_constants),
        cmocka_unit_test(exp_matches_numpy),
        cmocka_unit_test(log_matches_numpy),
        cmocka_unit_test(sin_matches_numpy),
        cmocka_unit_test(cos_matches_numpy),
        cmocka_unit_test(erf_matches_numpy),
        cmocka_unit_test(rsqrt_matches_numpy),
        cmocka_unit_test(unary_on_fp8_is_refused_naming_the_operator),
        cmocka_unit_test(reduce_max_min_propagate_nan),
        cmocka_unit_test(reduce_max_min_ignore_nan),
        cmocka_unit_test(reduce_max_over_last_axis_of_rank4),
        cmocka_unit_test(reduce_product_multiplies_in_order),
        cmocka_unit_test(reductions_refuse_a_bad_axis_or_nan_mode),
        cmocka_unit_test(argmax_gives_the_first_largest_index_as_int32),
        cmocka_unit_test(argmax_nan_modes),
        cmocka_unit_test(argmax_refusals),
        cmocka_unit_test(concat_joins_any_number_of_inputs),
        cmocka_unit_test(concat_refusals),
        cmocka_unit_test(slice_takes_a_window),
        cmocka_unit_test(slice_refusals),
        cmocka_unit_test(pad_surrounds_with_the_constant),
        cmocka_unit_test(pad_refusals),
        cmocka_unit_test(tile_repeats_along_each_dimension),
        cmocka_unit_test(tile_refusals),
        cmocka_unit_test(reverse_flips_one_axis),
        cmocka_unit_test(reverse_refuses_a_bad_axis),
        cmocka_unit_test(every_new_operator_on_int48_is_refused),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
