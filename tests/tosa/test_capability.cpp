// test_capability.cpp - the capability descriptors (targets, the FP32, FP16
// and FP8 tiers) and admit(): the tiers' exact contents, the fixtures, and
// every refusal with its exact code, detail, arg0 and arg1.
#include <algorithm>
#include <cstring>
#include <string>

#include "vaccel/tosa/analysis.hpp"
#include "vaccel/tosa/capability.hpp"

#include "support.hpp"

using namespace vaccel;
using namespace vaccel::tosa;
using namespace vaccel::tosa::test;

namespace {

constexpr std::uint64_t u(Op op) { return static_cast<std::uint64_t>(op); }
constexpr std::uint64_t u(DType dtype) { return static_cast<std::uint64_t>(dtype); }

Analysis analyze_ok(const Graph& graph)
{
    auto analysis = analyze(graph);
    if (!analysis) fail_msg("analyze refused: %s", analysis.error().note.c_str());
    return std::move(*analysis);
}

Status admit_graph(const Graph& graph, const CapabilityDescriptor& descriptor)
{
    return admit(graph, analyze_ok(graph), descriptor);
}

void expect_admitted(const Status& status)
{
    if (!status) fail_msg("admit refused: %s", status.error().note.c_str());
}

void expect_refused(const Status& status, Errc code, std::uint32_t detail, std::uint64_t arg0,
                    std::uint64_t arg1, const char* note_part)
{
    if (status) fail_msg("admit accepted a graph it must refuse (%s)", note_part);
    const Error& e = status.error();
    if (e.code != code || e.detail != detail || e.arg0 != arg0 || e.arg1 != arg1 ||
        e.limit != VACCEL_LIMIT_NONE)
        fail_msg("expected code %u detail %u arg0 %llu arg1 %llu, got code %u detail %u arg0 "
                 "%llu arg1 %llu (%s)",
                 static_cast<unsigned>(code), detail, static_cast<unsigned long long>(arg0),
                 static_cast<unsigned long long>(arg1), static_cast<unsigned>(e.code), e.detail,
                 static_cast<unsigned long long>(e.arg0), static_cast<unsigned long long>(e.arg1),
                 e.note.c_str());
    if (e.note.find(note_part) == std::string::npos)
        fail_msg("note \"%s\" does not contain \"%s\"", e.note.c_str(), note_part);
}

void expect_operator(const Status& s, Op op, DType dtype, const char* note_part)
{
    expect_refused(s, Errc::unsupported, VACCEL_D_TOSA_OPERATOR, u(op), u(dtype), note_part);
}

void expect_dtype(const Status& s, DType dtype, Op op, const char* note_part)
{
    expect_refused(s, Errc::unsupported, VACCEL_D_TOSA_DTYPE, u(dtype), u(op), note_part);
}

void expect_graph(const Status& s, std::uint32_t reason, std::uint64_t arg1, const char* note_part)
{
    expect_refused(s, Errc::unsupported, VACCEL_D_TOSA_GRAPH, reason, arg1, note_part);
}

std::vector<Op> ops_of(const CapabilityDescriptor& d)
{
    std::vector<Op> ops;
    for (const OperatorCapability& c : d.operators) ops.push_back(c.op);
    return ops;
}

// The reference design's 42, in its order.
const std::vector<Op> the_42 = {
    Op::argmax, Op::matmul, Op::max_pool2d, Op::clamp, Op::erf, Op::sigmoid, Op::tanh,
    Op::add, Op::logical_and, Op::logical_or, Op::logical_xor, Op::maximum, Op::minimum,
    Op::mul, Op::pow, Op::sub, Op::abs, Op::ceil, Op::cos, Op::exp, Op::floor, Op::log,
    Op::logical_not, Op::negate, Op::reciprocal, Op::rsqrt, Op::sin, Op::select, Op::equal,
    Op::greater, Op::greater_equal, Op::reduce_max, Op::reduce_min, Op::reduce_product,
    Op::reduce_sum, Op::concat, Op::reshape, Op::reverse, Op::transpose, Op::const_,
    Op::const_shape, Op::identity,
};

const std::vector<Op> the_fp8_11 = {
    Op::matmul, Op::concat, Op::reshape, Op::reverse, Op::transpose, Op::const_,
    Op::const_shape, Op::identity, Op::cast, Op::max_pool2d, Op::argmax,
};

std::uint16_t constraints_of(const CapabilityDescriptor& d, Op op)
{
    const OperatorCapability* c = d.operator_capability(op);
    assert_non_null(c);
    return c->constraints;
}

// Whether a tier exposes the dtype at a program boundary (the reference design's
// supports_tosa_dtype: the FP16 or the FP8 tier, as input or output).
bool boundary_dtype(DType dtype)
{
    const CapabilityDescriptor fp16 = fp16_tier(), fp8 = fp8_tier();
    return fp16.supports_dtype(dtype, Role::input) || fp16.supports_dtype(dtype, Role::output) ||
           fp8.supports_dtype(dtype, Role::input) || fp8.supports_dtype(dtype, Role::output);
}

std::vector<std::uint8_t> zeros(std::size_t n) { return std::vector<std::uint8_t>(n, 0); }

std::vector<std::uint8_t> shape_bytes(std::vector<std::int64_t> values)
{
    std::vector<std::uint8_t> bytes(values.size() * 8);
    if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
}

// in -> OP -> out, one block; the dtypes given.
Graph unary(Op op, DType in_dtype, DType out_dtype, std::vector<std::int64_t> shape = {4})
{
    GraphBuilder b;
    const auto in = b.tensor("in", shape, in_dtype);
    const auto out = b.tensor("out", shape, out_dtype);
    b.op(op, {in}, {out});
    b.input(in);
    b.output(out);
    return b.finish();
}

Graph binary(Op op, DType dtype, DType out_dtype)
{
    GraphBuilder b;
    const auto x = b.tensor("x", {4}, dtype);
    const auto y = b.tensor("y", {4}, dtype);
    const auto out = b.tensor("out", {4}, out_dtype);
    b.op(op, {x, y}, {out});
    b.input(x);
    b.input(y);
    b.output(out);
    return b.finish();
}

// [1,2,3] x [1,3,2] -> [1,2,2] with the given zero points (bytes of `dtype`).
Graph matmul(DType dtype, DType out_dtype, std::vector<std::uint8_t> a_zp,
             std::vector<std::uint8_t> b_zp)
{
    GraphBuilder b;
    const auto a = b.tensor("a", {1, 2, 3}, dtype);
    const auto w = b.tensor("b", {1, 3, 2}, dtype);
    const auto azp = b.tensor("a_zp", {1}, dtype, std::move(a_zp));
    const auto bzp = b.tensor("b_zp", {1}, dtype, std::move(b_zp));
    const auto out = b.tensor("out", {1, 2, 2}, out_dtype);
    b.op(Op::matmul, {a, w, azp, bzp}, {out});
    b.input(a);
    b.input(w);
    b.output(out);
    return b.finish();
}

// x * y with an INT8 shift of `shift`.
Graph mul_with_shift(std::uint8_t shift)
{
    GraphBuilder b;
    const auto x = b.tensor("x", {4}, DType::fp32);
    const auto y = b.tensor("y", {4}, DType::fp32);
    const auto s = b.tensor("shift", {1}, DType::int8, {shift});
    const auto out = b.tensor("out", {4}, DType::fp32);
    b.op(Op::mul, {x, y, s}, {out});
    b.input(x);
    b.input(y);
    b.output(out);
    return b.finish();
}

// ----- targets --------------------------------------------------------------

void targets_validate_and_round_trip(void**)
{
    for (const Target& target : {fp32_target(), fp8_target(), integer_target()}) {
        const vaccel_tosa_target raw = target.to_uapi();
        const auto back = target_from_uapi(raw);
        assert_true(back.has_value());
        assert_true(*back == target);
    }
    assert_false(fp32_target() == integer_target());
    assert_false(fp32_target() == fp8_target());
    assert_int_equal(fp32_target().major, 1);
    assert_int_equal(fp32_target().minor, 0);
    assert_int_equal(fp32_target().profiles, VACCEL_TOSA_PRO_FP);
    assert_int_equal(fp32_target().level, VACCEL_TOSA_LEVEL_8K);
    assert_int_equal(fp32_target().extensions, 0);
    assert_int_equal(fp8_target().extensions, VACCEL_TOSA_EXT_FP8E4M3 | VACCEL_TOSA_EXT_FP8E5M2);
    assert_int_equal(integer_target().profiles, VACCEL_TOSA_PRO_INT);

    // All zero (the device default) is kept as it is.
    const auto zero = target_from_uapi(vaccel_tosa_target{});
    assert_true(zero.has_value() && zero->is_zero());

    // Unknown bits, no profile, an unknown level, a non-zero pad.
    vaccel_tosa_target raw = fp32_target().to_uapi();
    raw.profiles |= 1u << 5;
    raw.extensions |= 1ull << 40;
    auto refused = target_from_uapi(raw);
    assert_false(refused.has_value());
    assert_int_equal(refused.error().code, Errc::incompatible);
    assert_int_equal(refused.error().detail, VACCEL_D_TARGET);
    assert_int_equal(refused.error().arg0, 1u << 5);
    assert_int_equal(refused.error().arg1, 1ull << 40);
    for (int which = 0; which < 3; ++which) {
        raw = fp32_target().to_uapi();
        if (which == 0) raw.profiles = 0;
        if (which == 1) raw.level = 7;
        if (which == 2) raw.pad = 1;
        refused = target_from_uapi(raw);
        assert_false(refused.has_value());
        assert_int_equal(refused.error().code, Errc::incompatible);
        assert_int_equal(refused.error().detail, VACCEL_D_TARGET);
        assert_int_equal(refused.error().arg0, 0);
        assert_int_equal(refused.error().arg1, 0);
    }
    assert_string_equal(target_text(fp8_target()).c_str(),
                        "TOSA 1.0 FP level 8K +FP8E4M3 +FP8E5M2");
}

// ----- the tiers ------------------------------------------------------------

void fp32_tier_names_the_shared_operator_set(void**)
{
    const CapabilityDescriptor d = fp32_tier();
    assert_int_equal(d.operators.size(), 42);
    assert_true(ops_of(d) == the_42);
    for (Op op : {Op::identity, Op::matmul, Op::max_pool2d, Op::argmax, Op::erf, Op::concat,
                  Op::transpose})
        assert_true(d.supports_operator(op));
    for (Op op : {Op::conv2d, Op::avg_pool2d, Op::cast, Op::rescale, Op::pad})
        assert_false(d.supports_operator(op));
    // Constraints: exactly four operators carry one.
    using C = OperatorConstraint;
    for (Op op : the_42) {
        const std::uint16_t c = constraints_of(d, op);
        if (op == Op::matmul || op == Op::negate)
            assert_int_equal(c, constraint_bit(C::zero_zero_points));
        else if (op == Op::mul)
            assert_int_equal(c, constraint_bit(C::zero_shift));
        else if (op == Op::reshape)
            assert_int_equal(c, constraint_bit(C::constant_parameters));
        else
            assert_int_equal(c, 0);
    }
    // Dtypes.
    const std::vector<DTypeCapability> dtypes = {
        {DType::fp32, all_roles, false},
        {DType::boolean, all_roles, false},
        {DType::int32, all_roles, false},
        {DType::int8, role_bit(Role::constant), true},
    };
    assert_true(d.dtypes == dtypes);
    assert_true(boundary_dtype(DType::fp32));
    assert_true(boundary_dtype(DType::fp16));
    assert_true(boundary_dtype(DType::boolean));
    assert_true(boundary_dtype(DType::int32));
    // INT8 is a compile-time parameter only (MUL's shift), never a boundary dtype.
    assert_false(boundary_dtype(DType::int8));
    assert_true(d.supports_dtype(DType::int8, Role::constant));
    assert_false(d.supports_dtype(DType::int8, Role::intermediate));
    assert_true(d.dtype(DType::int8)->parameter_only);
    assert_false(d.supports_dtype(DType::fp16, Role::input));
    assert_true(d.target == fp32_target());
    assert_true((d.graph == GraphEnvelope{1, 1, false, RuntimeConditionSupport::none}));
    assert_false(d.allows_control_flow());
    assert_false(d.allows_variables());
}

void fp16_tier_extends_the_fp32_boundary(void**)
{
    const CapabilityDescriptor d = fp16_tier();
    for (DType dtype : {DType::fp32, DType::fp16, DType::boolean, DType::int32}) {
        assert_true(d.supports_dtype(dtype, Role::input));
        assert_true(d.supports_dtype(dtype, Role::output));
        assert_true(d.supports_dtype(dtype, Role::intermediate));
        assert_true(d.supports_dtype(dtype, Role::constant));
    }
    const std::vector<DTypeCapability> dtypes = {
        {DType::fp32, all_roles, false},    {DType::fp16, all_roles, false},
        {DType::boolean, all_roles, false}, {DType::int32, all_roles, false},
        {DType::int8, role_bit(Role::constant), true},
    };
    assert_true(d.dtypes == dtypes);
    assert_true(d.target == fp32_target());  // the same identity as FP32
    assert_true(d.operators == fp32_tier().operators);
    assert_int_equal(d.operators.size(), 42);
    assert_true(d.graph == fp32_tier().graph);
    assert_false(fp32_tier().supports_dtype(DType::fp16, Role::input));
}

void fp8_tier_is_matmul_and_data_movement(void**)
{
    const CapabilityDescriptor d = fp8_tier();
    assert_int_equal(d.operators.size(), 11);
    assert_true(ops_of(d) == the_fp8_11);
    assert_int_equal(constraints_of(d, Op::matmul),
                     constraint_bit(OperatorConstraint::zero_zero_points));
    assert_int_equal(constraints_of(d, Op::reshape),
                     constraint_bit(OperatorConstraint::constant_parameters));
    for (Op op : the_fp8_11)
        if (op != Op::matmul && op != Op::reshape) assert_int_equal(constraints_of(d, op), 0);
    // No elementwise lane takes FP8.
    for (Op op : {Op::add, Op::mul, Op::exp, Op::equal, Op::select, Op::reduce_sum})
        assert_false(d.supports_operator(op));
    const std::vector<DTypeCapability> dtypes = {
        {DType::fp8e4m3, all_roles, false},
        {DType::fp8e5m2, all_roles, false},
        {DType::fp16, all_roles, false},
        {DType::int32, all_roles, false},
    };
    assert_true(d.dtypes == dtypes);
    assert_false(d.supports_dtype(DType::fp32, Role::input));
    assert_false(d.supports_dtype(DType::int8, Role::constant));
    assert_true(d.target == fp8_target());
    assert_false(d.target == fp32_target());
    assert_true((d.graph == GraphEnvelope{1, 1, false, RuntimeConditionSupport::none}));
}

void descriptors_are_values(void**)
{
    assert_true(fp32_tier() == fp32_tier());
    assert_false(fp32_tier() == fp16_tier());
    assert_false(fp16_tier() == fp8_tier());
    CapabilityDescriptor copy = fp32_tier();
    assert_true(copy == fp32_tier());
    copy.operators.push_back({Op::conv2d, 0});
    assert_false(copy == fp32_tier());
    assert_true(copy.supports_operator(Op::conv2d));
    assert_false(fp32_tier().supports_operator(Op::conv2d));
    copy = fp32_tier();
    copy.graph.max_blocks = 2;
    assert_false(copy == fp32_tier());
}

// ----- admission: the fixtures ----------------------------------------------

void fixtures_add_admit_under_fp32(void**)
{
    for (const std::string* path : {&add_tflite, &add_tf}) {
        const Graph graph = parse_ok(read_fixture(*path));
        expect_admitted(admit_graph(graph, fp32_tier()));
        expect_admitted(admit_graph(graph, fp16_tier()));
        // FP32 tensors are outside the FP8 tier.
        expect_dtype(admit_graph(graph, fp8_tier()), DType::fp32, Op::add, "input of block");
    }
}

void fixture_conv2d_is_refused_by_fp32(void**)
{
    // CONV2D is not among the reference design's 42 (its test asserts so); the CONSTs
    // are skipped, the boundary is FP32, so the operator is the refusal.
    const Graph graph = parse_ok(read_fixture(conv2d));
    expect_operator(admit_graph(graph, fp32_tier()), Op::conv2d, DType::fp32,
                    "(CONV2D) of block 'main'");
    expect_operator(admit_graph(graph, fp16_tier()), Op::conv2d, DType::fp32, "CONV2D on FP32");
    // With CONV2D added the rest of the file is inside the tier.
    CapabilityDescriptor wider = fp32_tier();
    wider.operators.push_back({Op::conv2d, constraint_bit(OperatorConstraint::zero_zero_points)});
    expect_admitted(admit_graph(graph, wider));
}

void fixture_maxpool_int8_is_refused_by_fp32(void**)
{
    // MAX_POOL2D is in the tier; its INT8 input is not (INT8 is parameter-only).
    const Graph graph = parse_ok(read_fixture(maxpool2d));
    expect_dtype(admit_graph(graph, fp32_tier()), DType::int8, Op::max_pool2d,
                 "input of block 'main' (region 'main') 'TosaInput_0' is INT8");
    expect_dtype(admit_graph(graph, fp16_tier()), DType::int8, Op::max_pool2d, "no input role");
    expect_dtype(admit_graph(graph, fp8_tier()), DType::int8, Op::max_pool2d, "in no role");
}

void fixture_lstm_is_outside_every_single_block_envelope(void**)
{
    const Graph graph = parse_ok(read_fixture(lstm));
    const Analysis analysis = analyze_ok(graph);
    // Three regions (main, while cond, while body): the FP32 envelope is one.
    expect_graph(admit(graph, analysis, fp32_tier()), VACCEL_TOSA_REGIONS, 0,
                 "the graph has 3 regions");
    expect_graph(admit(graph, analysis, fp16_tier()), VACCEL_TOSA_REGIONS, 0, "3 regions");
    expect_graph(admit(graph, analysis, fp8_tier()), VACCEL_TOSA_REGIONS, 0, "3 regions");

    // Widening the envelope step by step reaches each later refusal.
    CapabilityDescriptor d = fp32_tier();
    d.graph.max_regions = 3;
    expect_graph(admit(graph, analysis, d), VACCEL_TOSA_REGIONS, 0, "the graph has 3 blocks");
    d.graph.max_blocks = 3;
    expect_graph(admit(graph, analysis, d), VACCEL_TOSA_CONTROL_FLOW, u(Op::while_loop),
                 "operator 25 (WHILE_LOOP) of block 'main' (region 'main'): control flow");
    d.target.extensions |= VACCEL_TOSA_EXT_CONTROLFLOW;
    // No VARIABLE operator: IDENTITY reads and writes the variable tensors.
    expect_graph(admit(graph, analysis, d), VACCEL_TOSA_VARIABLES, u(Op::variable),
                 "is a variable; variables need the VARIABLE extension");
    d.target.extensions |= VACCEL_TOSA_EXT_VARIABLE;
    // Main and the cond block have no runtime condition; the body's GATHER does.
    expect_operator(admit(graph, analysis, d), Op::gather, DType::fp32,
                    "operator 6 (GATHER) of block 'tosa.while_loop_body_region_bb0' (region "
                    "'tosa.while_loop_body_region'): its indices must be in range at run time");
    d.graph.runtime_conditions = RuntimeConditionSupport::advisory_only;
    // Then main's operators in execution order: WHILE_LOOP (first result INT32,
    // the loop counter) is the first outside the 42.
    expect_operator(admit(graph, analysis, d), Op::while_loop, DType::int32,
                    "operator 25 (WHILE_LOOP) of block 'main' (region 'main'): WHILE_LOOP on "
                    "INT32 is not among the operators TOSA 1.0 FP level 8K +VARIABLE "
                    "+CONTROLFLOW admits");
    // The 42 plus the file's other operators, with the FP32 tier's dtypes:
    // admitted; the body's captured copies of main's constants (RESHAPE's
    // shapes among them) count as serialized constants.
    CapabilityDescriptor more = d;
    for (std::uint32_t op = 1; op < op_count; ++op)
        if (!more.supports_operator(static_cast<Op>(op)))
            more.operators.push_back({static_cast<Op>(op), 0});
    expect_admitted(admit(graph, analysis, more));
    // Every operator and dtype listed: the file is admitted.
    CapabilityDescriptor all = d;
    all.operators.clear();
    for (std::uint32_t op = 1; op < op_count; ++op)
        all.operators.push_back({static_cast<Op>(op), 0});
    all.dtypes.clear();
    for (std::uint32_t dtype = 1; dtype <= 12; ++dtype)
        all.dtypes.push_back({static_cast<DType>(dtype), all_roles, false});
    expect_admitted(admit(graph, analysis, all));
}

// ----- admission: targets ---------------------------------------------------

void rejects_other_targets_first(void**)
{
    const Graph graph = parse_ok(read_fixture(add_tflite));
    const Analysis analysis = analyze_ok(graph);
    for (const Target& other : {integer_target(), fp8_target()})
        expect_refused(admit(graph, analysis, fp32_tier(), other), Errc::incompatible,
                       VACCEL_D_TARGET, 0, 0, "this tier is TOSA 1.0 FP level 8K");
    expect_admitted(admit(graph, analysis, fp32_tier(), Target{}));
    expect_admitted(admit(graph, analysis, fp32_tier(), fp32_target()));
    // FP16 shares the FP32 identity.
    expect_admitted(admit(graph, analysis, fp16_tier(), fp32_target()));
    // The target comes before everything, even a graph far outside the tier.
    const Graph lstm_graph = parse_ok(read_fixture(lstm));
    expect_refused(admit(lstm_graph, analyze_ok(lstm_graph), fp32_tier(), integer_target()),
                   Errc::incompatible, VACCEL_D_TARGET, 0, 0, "asks for TOSA 1.0 INT level 8K");

    // A graph of another version is not of the target.
    Graph old = graph;
    old.version.minor = 80;
    old.version.major = 0;
    expect_refused(admit(old, analysis, fp32_tier()), Errc::incompatible, VACCEL_D_TARGET, 0, 80,
                   "the graph is TOSA 0.80");
}

// ----- admission: the reference design's cases ------------------------------------------

void admits_fp32_identity_and_refuses_mistyped_ones(void**)
{
    expect_admitted(admit_graph(unary(Op::identity, DType::fp32, DType::fp32), fp32_tier()));
    // INT8 identity under the floating-point tiers: never relabeled.
    expect_dtype(admit_graph(unary(Op::identity, DType::int8, DType::int8), fp32_tier()),
                 DType::int8, Op::identity, "'in' is INT8");
    // FP16 is the FP16 tier's, not FP32's.
    const Graph half = unary(Op::identity, DType::fp16, DType::fp16);
    expect_dtype(admit_graph(half, fp32_tier()), DType::fp16, Op::identity,
                 "'in' is FP16, which TOSA 1.0 FP level 8K admits in no role");
    expect_admitted(admit_graph(half, fp16_tier()));
    expect_admitted(admit_graph(half, fp8_tier()));  // FP16 is an FP8-tier dtype too
}

void admits_matmul_with_zero_zero_points_only(void**)
{
    expect_admitted(admit_graph(matmul(DType::fp32, DType::fp32, zeros(4), zeros(4)), fp32_tier()));
    // Signed zero is zero.
    expect_admitted(admit_graph(
        matmul(DType::fp32, DType::fp32, {0, 0, 0, 0x80}, zeros(4)), fp32_tier()));
    expect_graph(admit_graph(matmul(DType::fp32, DType::fp32, zeros(4), {0, 0, 0x80, 0x3f}),
                             fp32_tier()),
                 VACCEL_TOSA_BAD_ATTRIBUTE, u(Op::matmul),
                 "operator 0 (MATMUL) of block 'main' (region 'main'): zero point operand 3 "
                 "('b_zp') is not a serialized zero");
    expect_admitted(admit_graph(matmul(DType::fp16, DType::fp16, zeros(2), zeros(2)), fp16_tier()));
    // FP8 x FP8 -> FP16 under the FP8 tier only.
    const Graph fp8 = matmul(DType::fp8e4m3, DType::fp16, {0x80}, zeros(1));
    expect_admitted(admit_graph(fp8, fp8_tier()));
    expect_dtype(admit_graph(fp8, fp32_tier()), DType::fp8e4m3, Op::matmul, "'a' is FP8E4M3");
    expect_graph(admit_graph(matmul(DType::fp8e5m2, DType::fp16, zeros(1), {1}), fp8_tier()),
                 VACCEL_TOSA_BAD_ATTRIBUTE, u(Op::matmul), "('b_zp') is not a serialized zero");
}

void admits_mul_with_a_zero_int8_shift_only(void**)
{
    expect_admitted(admit_graph(mul_with_shift(0), fp32_tier()));
    expect_graph(admit_graph(mul_with_shift(1), fp32_tier()), VACCEL_TOSA_BAD_ATTRIBUTE,
                 u(Op::mul), "the shift operand ('shift') is not a serialized zero");
    // INT8 anywhere but a compile-time operand is refused.
    GraphBuilder b;
    const auto x = b.tensor("x", {1}, DType::fp32);
    const auto k = b.tensor("k", {1}, DType::int8, {0});
    const auto out = b.tensor("out", {1}, DType::fp32);
    b.op(Op::mul, {x, k, k}, {out});  // k as the multiplicand too
    b.input(x);
    b.output(out);
    expect_dtype(admit_graph(b.finish(), fp32_tier()), DType::int8, Op::mul,
                 "operand 1 'k' is INT8, which TOSA 1.0 FP level 8K admits in only compile-time "
                 "operator parameters");
}

void admits_negate_with_zero_zero_points(void**)
{
    for (DType dtype : {DType::fp32, DType::fp16}) {
        const std::size_t size = dtype == DType::fp32 ? 4 : 2;
        GraphBuilder b;
        const auto in = b.tensor("in", {4}, dtype);
        const auto izp = b.tensor("in_zp", {1}, dtype, zeros(size));
        auto ozp_bytes = zeros(size);
        const auto ozp = b.tensor("out_zp", {1}, dtype, ozp_bytes);
        const auto out = b.tensor("out", {4}, dtype);
        b.op(Op::negate, {in, izp, ozp}, {out});
        b.input(in);
        b.output(out);
        Graph graph = b.finish();
        expect_admitted(admit_graph(graph, fp16_tier()));
        graph.regions[0].blocks[0].tensors[ozp].data[0] = 1;
        expect_graph(admit_graph(graph, fp16_tier()), VACCEL_TOSA_BAD_ATTRIBUTE, u(Op::negate),
                     "zero point operand 2 ('out_zp')");
    }
}

void reshape_needs_a_constant_shape(void**)
{
    const auto build = [](bool constant) {
        GraphBuilder b;
        const auto in = b.tensor("in", {2, 3}, DType::fp32);
        const auto shape = constant ? b.tensor("shape", {2}, DType::shape, shape_bytes({3, 2}))
                                    : b.tensor("shape", {2}, DType::shape);
        const auto out = b.tensor("out", {3, 2}, DType::fp32);
        b.op(Op::reshape, {in, shape}, {out});
        b.input(in);
        if (!constant) b.input(shape);
        b.output(out);
        return b.finish();
    };
    // SHAPE values are not tensors to the descriptor: no role check.
    expect_admitted(admit_graph(build(true), fp32_tier()));
    expect_graph(admit_graph(build(false), fp32_tier()), VACCEL_TOSA_BAD_ATTRIBUTE,
                 u(Op::reshape), "operand 1 ('shape') is not a serialized constant");
}

void admits_the_reference_float_cases(void**)
{
    // MAX_POOL2D, ARGMAX (INT32 result), comparisons (BOOL), SELECT, POW
    // (its domain condition is not counted), CLAMP, REDUCE, TRANSPOSE.
    {
        GraphBuilder b;
        const auto in = b.tensor("in", {1, 4, 4, 1}, DType::fp32);
        const auto out = b.tensor("out", {1, 2, 2, 1}, DType::fp32);
        b.op(Op::max_pool2d, {in}, {out}, pool_attr({2, 2}, {2, 2}, {0, 0, 0, 0}));
        b.input(in);
        b.output(out);
        expect_admitted(admit_graph(b.finish(), fp32_tier()));
    }
    {
        GraphBuilder b;
        const auto in = b.tensor("in", {2, 3}, DType::fp32);
        const auto out = b.tensor("out", {2}, DType::int32);
        b.op(Op::argmax, {in}, {out}, axis_attr(1));
        b.input(in);
        b.output(out);
        expect_admitted(admit_graph(b.finish(), fp32_tier()));
    }
    {
        GraphBuilder b;
        const auto x = b.tensor("x", {4}, DType::fp32);
        const auto y = b.tensor("y", {4}, DType::fp32);
        const auto p = b.tensor("p", {4}, DType::boolean);
        const auto w = b.tensor("w", {4}, DType::fp32);
        const auto out = b.tensor("out", {4}, DType::fp32);
        b.op(Op::greater, {x, y}, {p});
        b.op(Op::pow, {x, y}, {w});
        b.op(Op::select, {p, w, y}, {out});
        b.input(x);
        b.input(y);
        b.output(out);
        expect_admitted(admit_graph(b.finish(), fp32_tier()));
    }
    expect_admitted(admit_graph(binary(Op::pow, DType::fp16, DType::fp16), fp16_tier()));
    expect_admitted(admit_graph(unary(Op::tanh, DType::fp32, DType::fp32), fp32_tier()));
}

// ----- admission: order and roles -------------------------------------------

void the_boundary_comes_before_the_operators(void**)
{
    // FP16 in, CAST, FP32 out: the FP32 tier refuses the input (CAST reads it)...
    const Graph cast = unary(Op::cast, DType::fp16, DType::fp32);
    expect_dtype(admit_graph(cast, fp32_tier()), DType::fp16, Op::cast, "input of block 'main'");
    // ...the FP16 tier the operator, judged on its result's dtype.
    expect_operator(admit_graph(cast, fp16_tier()), Op::cast, DType::fp32,
                    "operator 0 (CAST) of block 'main' (region 'main'): CAST on FP32 is not "
                    "among the operators");
    // The FP8 tier lists CAST: FP8 -> FP16 passes, FP32 results do not.
    expect_admitted(admit_graph(unary(Op::cast, DType::fp8e5m2, DType::fp16), fp8_tier()));
    expect_dtype(admit_graph(cast, fp8_tier()), DType::fp32, Op::cast, "output of block");

    // An output's dtype is judged before the operator that produces it.
    expect_dtype(admit_graph(unary(Op::cast, DType::fp32, DType::int8), fp32_tier()), DType::int8,
                 Op::cast, "output of block 'main' (region 'main') 'out' is INT8");
    // An FP8 elementwise operator: in no tier's list.
    expect_operator(admit_graph(binary(Op::add, DType::fp8e4m3, DType::fp8e4m3), fp8_tier()),
                    Op::add, DType::fp8e4m3, "ADD on FP8E4M3");
}

void intermediates_and_constants_take_their_roles(void**)
{
    // An INT8 intermediate: refused at the operator that reads it... or writes
    // it: the first in order is the writer (its result).
    CapabilityDescriptor d = fp32_tier();
    d.operators.push_back({Op::cast, 0});
    GraphBuilder b;
    const auto in = b.tensor("in", {4}, DType::fp32);
    const auto mid = b.tensor("mid", {4}, DType::int8);
    const auto out = b.tensor("out", {4}, DType::fp32);
    b.op(Op::cast, {in}, {mid});
    b.op(Op::cast, {mid}, {out});
    b.input(in);
    b.output(out);
    expect_dtype(admit_graph(b.finish(), d), DType::int8, Op::cast,
                 "operator 0 (CAST) of block 'main' (region 'main'): result 0 'mid' is INT8, "
                 "which TOSA 1.0 FP level 8K admits in no intermediate role");

    // A constant of a dtype allowed only as input is refused as a constant.
    CapabilityDescriptor inputs_only = fp32_tier();
    inputs_only.dtypes[0].roles = role_bit(Role::input) | role_bit(Role::output) |
                                  role_bit(Role::intermediate);
    GraphBuilder c;
    const auto x = c.tensor("x", {2}, DType::fp32);
    const float k_values[] = {1, 2};
    const auto k = c.constant_f32("k", {2}, k_values);
    const auto y = c.tensor("y", {2}, DType::fp32);
    c.op(Op::add, {x, k}, {y});
    c.input(x);
    c.output(y);
    expect_dtype(admit_graph(c.finish(), inputs_only), DType::fp32, Op::add,
                 "operand 1 'k' is FP32, which TOSA 1.0 FP level 8K admits in no constant role");
}

void dead_operators_and_constants_are_not_judged(void**)
{
    GraphBuilder b;
    const auto in = b.tensor("in", {4}, DType::fp32);
    const auto out = b.tensor("out", {4}, DType::fp32);
    const auto unused = b.tensor("unused", {4}, DType::fp32);
    b.op(Op::exp, {in}, {out});
    b.op(Op::cast, {in}, {unused});  // dead: CAST is outside the tier, but never runs
    b.input(in);
    b.output(out);
    expect_admitted(admit_graph(b.finish(), fp32_tier()));

    // CONST / CONST_SHAPE only carry data; a tier without them still admits.
    GraphBuilder c;
    const auto x = c.tensor("x", {2}, DType::fp32);
    const float k_values[] = {1, 2};
    const auto k = c.constant_f32("k", {2}, k_values);
    const auto y = c.tensor("y", {2}, DType::fp32);
    c.op(Op::const_, {}, {k});
    c.op(Op::add, {x, k}, {y});
    c.input(x);
    c.output(y);
    CapabilityDescriptor d = fp32_tier();
    std::erase_if(d.operators, [](const OperatorCapability& o) { return o.op == Op::const_; });
    expect_admitted(admit_graph(c.finish(), d));
}

// ----- admission: envelope and runtime conditions ---------------------------

void too_many_regions_or_blocks(void**)
{
    Graph graph = unary(Op::tanh, DType::fp32, DType::fp32);
    const Analysis one = analyze_ok(graph);
    Graph two_regions = graph;
    two_regions.regions.push_back(graph.regions[0]);
    two_regions.regions[1].name = "second";
    expect_graph(admit(two_regions, analyze_ok(two_regions), fp32_tier()), VACCEL_TOSA_REGIONS, 0,
                 "the graph has 2 regions; TOSA 1.0 FP level 8K admits 1 to 1");
    Graph two_blocks = graph;
    two_blocks.regions[0].blocks.push_back(graph.regions[0].blocks[0]);
    two_blocks.regions[0].blocks[1].name = "other";
    expect_graph(admit(two_blocks, analyze_ok(two_blocks), fp32_tier()), VACCEL_TOSA_REGIONS, 0,
                 "the graph has 2 blocks");
    Graph empty = graph;
    empty.regions.clear();
    expect_graph(admit(empty, Analysis{}, fp32_tier()), VACCEL_TOSA_REGIONS, 0,
                 "the graph has 0 regions");
    // A wider envelope takes them.
    CapabilityDescriptor d = fp32_tier();
    d.graph.max_regions = 2;
    d.graph.max_blocks = 2;
    expect_admitted(admit(two_regions, analyze_ok(two_regions), d));
    expect_admitted(admit(graph, one, d));
}

void control_flow_needs_its_extension(void**)
{
    const Graph graph = cond_if_graph({1}, {2});
    const Analysis analysis = analyze_ok(graph);
    expect_graph(admit(graph, analysis, fp32_tier()), VACCEL_TOSA_REGIONS, 0, "3 regions");
    CapabilityDescriptor d = fp32_tier();
    d.graph.max_regions = d.graph.max_blocks = 3;
    expect_graph(admit(graph, analysis, d), VACCEL_TOSA_CONTROL_FLOW, u(Op::cond_if),
                 "operator 0 (COND_IF) of block 'main' (region 'main'): control flow needs the "
                 "CONTROLFLOW extension");
    d.target.extensions |= VACCEL_TOSA_EXT_CONTROLFLOW;
    // Past the envelope: COND_IF is not among the 42.
    expect_operator(admit(graph, analysis, d), Op::cond_if, DType::fp32, "COND_IF on FP32");
    d.operators.push_back({Op::cond_if, 0});
    expect_admitted(admit(graph, analysis, d));
    // The branch blocks are judged too.
    std::erase_if(d.operators, [](const OperatorCapability& o) { return o.op == Op::log; });
    expect_operator(admit(graph, analysis, d), Op::log, DType::fp32,
                    "operator 0 (LOG) of block 'else_bb' (region 'else')");
}

void variables_need_their_extension(void**)
{
    GraphBuilder b;
    const auto in = b.tensor("in", {2}, DType::fp32);
    const float initial[] = {0, 0};
    const auto state = b.constant_f32("state", {2}, initial);
    b.block().tensors[state].variable = true;
    const auto r = b.tensor("r", {2}, DType::fp32);
    const auto out = b.tensor("out", {2}, DType::fp32);
    b.op(Op::variable, {}, {state});
    b.op(Op::variable_read, {state}, {r});
    b.op(Op::add, {in, r}, {out});
    b.input(in);
    b.output(out);
    const Graph graph = b.finish();
    const Analysis analysis = analyze_ok(graph);
    expect_graph(admit(graph, analysis, fp32_tier()), VACCEL_TOSA_VARIABLES, u(Op::variable),
                 "operator 0 (VARIABLE) of block 'main' (region 'main'): variables need the "
                 "VARIABLE extension");
    // With the extension, reading state is a runtime condition the tier refuses.
    CapabilityDescriptor d = fp32_tier();
    d.target.extensions |= VACCEL_TOSA_EXT_VARIABLE;
    expect_operator(admit(graph, analysis, d), Op::variable_read, DType::fp32,
                    "operator 1 (VARIABLE_READ) of block 'main' (region 'main'): it reads or "
                    "writes variable state at run time");
    d.graph.runtime_conditions = RuntimeConditionSupport::advisory_only;
    expect_operator(admit(graph, analysis, d), Op::variable, DType::fp32,
                    "VARIABLE on FP32 is not among");
}

void runtime_conditions_come_before_the_operator_list(void**)
{
    // INTDIV's divisor must be non-zero at run time; the condition counts
    // even for a dead operator, and before the operator list.
    GraphBuilder b;
    const auto x = b.tensor("x", {4}, DType::fp32);
    const auto out = b.tensor("out", {4}, DType::fp32);
    const auto i = b.tensor("i", {4}, DType::int32);
    const auto q = b.tensor("q", {4}, DType::int32);
    b.op(Op::exp, {x}, {out});
    b.op(Op::intdiv, {i, i}, {q});  // dead
    b.input(x);
    b.input(i);
    b.output(out);
    const Graph graph = b.finish();
    const Analysis analysis = analyze_ok(graph);
    expect_operator(admit(graph, analysis, fp32_tier()), Op::intdiv, DType::int32,
                    "operator 1 (INTDIV) of block 'main' (region 'main'): its divisor must be "
                    "non-zero at run time");
    CapabilityDescriptor d = fp32_tier();
    d.graph.runtime_conditions = RuntimeConditionSupport::advisory_only;
    expect_admitted(admit(graph, analysis, d));  // dead: never judged as an operator

    // MUL on INT32: a condition on the product, judged before its dtype.
    GraphBuilder m;
    const auto a = m.tensor("a", {4}, DType::int32);
    const auto s = m.tensor("s", {1}, DType::int8, {0});
    const auto p = m.tensor("p", {4}, DType::int32);
    m.op(Op::mul, {a, a, s}, {p});
    m.input(a);
    m.output(p);
    expect_operator(admit_graph(m.finish(), fp32_tier()), Op::mul, DType::int32,
                    "INT32 product");
    // Shifts.
    expect_operator(admit_graph(binary(Op::logical_left_shift, DType::int32, DType::int32),
                                fp32_tier()),
                    Op::logical_left_shift, DType::int32, "shift amount");
}

void graphs_and_analyses_must_match(void**)
{
    const Graph graph = unary(Op::tanh, DType::fp32, DType::fp32);
    expect_refused(admit(graph, Analysis{}, fp32_tier()), Errc::invalid_argument,
                   VACCEL_D_BAD_VALUE, 0, 0, "does not belong");
}

}  // namespace

int main()
{
    const CMUnitTest tests[] = {
        cmocka_unit_test(targets_validate_and_round_trip),
        cmocka_unit_test(fp32_tier_names_the_shared_operator_set),
        cmocka_unit_test(fp16_tier_extends_the_fp32_boundary),
        cmocka_unit_test(fp8_tier_is_matmul_and_data_movement),
        cmocka_unit_test(descriptors_are_values),
        cmocka_unit_test(fixtures_add_admit_under_fp32),
        cmocka_unit_test(fixture_conv2d_is_refused_by_fp32),
        cmocka_unit_test(fixture_maxpool_int8_is_refused_by_fp32),
        cmocka_unit_test(fixture_lstm_is_outside_every_single_block_envelope),
        cmocka_unit_test(rejects_other_targets_first),
        cmocka_unit_test(admits_fp32_identity_and_refuses_mistyped_ones),
        cmocka_unit_test(admits_matmul_with_zero_zero_points_only),
        cmocka_unit_test(admits_mul_with_a_zero_int8_shift_only),
        cmocka_unit_test(admits_negate_with_zero_zero_points),
        cmocka_unit_test(reshape_needs_a_constant_shape),
        cmocka_unit_test(admits_the_reference_float_cases),
        cmocka_unit_test(the_boundary_comes_before_the_operators),
        cmocka_unit_test(intermediates_and_constants_take_their_roles),
        cmocka_unit_test(dead_operators_and_constants_are_not_judged),
        cmocka_unit_test(too_many_regions_or_blocks),
        cmocka_unit_test(control_flow_needs_its_extension),
        cmocka_unit_test(variables_need_their_extension),
        cmocka_unit_test(runtime_conditions_come_before_the_operator_list),
        cmocka_unit_test(graphs_and_analyses_must_match),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
