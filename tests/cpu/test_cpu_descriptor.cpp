// test_cpu_descriptor.cpp - the CPU's TOSA capability descriptor is what its admission admits.
//
// Specifies: the derivation of descriptor.hpp on small hand-made tables
// (every value hand-derived in the comments), and on the real table that the
// descriptor and load_program agree operator by operator.
#include <algorithm>
#include <array>

#include "admission.hpp"
#include "descriptor.hpp"

#include "cpu_test_support.hpp"  // last: see cpu_test_support.hpp

using namespace cpu_test;
using vaccel::backend::cpu::AdmittedOperator;
using vaccel::backend::cpu::derive_descriptor;
using tosa::Role;

namespace {

bool fp32_bool_int32(DType d)
{
    return d == DType::fp32 || d == DType::boolean || d == DType::int32;
}

std::uint8_t roles(std::initializer_list<Role> list)
{
    std::uint8_t bits = 0;
    for (Role r : list) bits |= tosa::role_bit(r);
    return bits;
}

void small_fp32_table_gives_its_operators_dtypes_and_roles(void**)
{
    const DType f = DType::fp32;
    const std::vector<AdmittedOperator> rows{
        {Op::add, f, {f, f}, false},
        {Op::mul, f, {f, f, DType::int8}, false},
        {Op::const_, DType::int8, {}, false},
        {Op::equal, DType::boolean, {f, f}, false},
    };
    const tosa::CapabilityDescriptor d = derive_descriptor(rows, fp32_bool_int32);
    // Only FP32 is computed on: profile FP; no extended dtype or operator.
    assert_true(d.target == (tosa::Target{1, 0, VACCEL_TOSA_PRO_FP, VACCEL_TOSA_LEVEL_8K, 0}));
    assert_string_equal(tosa::target_text(d.target).c_str(), "TOSA 1.0 FP level 8K");
    // Operators ascend by Op value: ADD 15, EQUAL 46... MUL 28, CONST 67.
    const std::vector<tosa::OperatorCapability> ops{
        {Op::add, 0, {f}},
        {Op::mul, tosa::constraint_bit(tosa::OperatorConstraint::zero_shift), {DType::int8, f}},
        {Op::equal, 0, {DType::boolean, f}},
        {Op::const_, 0, {DType::int8}},
    };
    assert_true(d.operators == ops);
    assert_false(d.supports_operator(Op::sub));  // not a row
    // BOOL (1): a slot dtype, produced by EQUAL, consumed by nothing: input,
    // output. INT8 (3): only a CONST: constant, parameter only. FP32 (7):
    // slot, produced by ADD and consumed by ADD: input, output,
    // intermediate; no CONST row makes it: not constant.
    const std::vector<tosa::DTypeCapability> dtypes{
        {DType::boolean, roles({Role::input, Role::output}), false},
        {DType::int8, roles({Role::constant}), true},
        {f, roles({Role::input, Role::output, Role::intermediate}), false},
    };
    assert_true(d.dtypes == dtypes);
    assert_true(d.graph == (tosa::GraphEnvelope{1, 1, false, tosa::RuntimeConditionSupport::advisory_only}));
}

void integer_and_extended_rows_set_profiles_and_extensions(void**)
{
    const DType i = DType::int32;
    const std::vector<AdmittedOperator> rows{
        {Op::add, i, {i, i}, false},               // integers from integers: INT
        {Op::cast, DType::bf16, {i}, false},       // a BF16 result: FP, +BF16
        {Op::identity, DType::int16, {DType::int16}, false},  // INT16: INT, +INT16
        {Op::cond_if, i, {DType::boolean}, false},  // control flow: +CONTROLFLOW
    };
    const tosa::CapabilityDescriptor d = derive_descriptor(rows, fp32_bool_int32);
    assert_int_equal(d.target.profiles, VACCEL_TOSA_PRO_INT | VACCEL_TOSA_PRO_FP);
    assert_int_equal(d.target.extensions,
                     VACCEL_TOSA_EXT_BF16 | VACCEL_TOSA_EXT_INT16 | VACCEL_TOSA_EXT_CONTROLFLOW);
    assert_string_equal(tosa::target_text(d.target).c_str(),
                        "TOSA 1.0 INT FP level 8K +INT16 +BF16 +CONTROLFLOW");
    // INT32 (5): slot dtype, produced by ADD and consumed by ADD/CAST: all
    // but constant. INT16 (4): not a slot dtype; IDENTITY makes and takes
    // it: intermediate only, and that is not parameter-only.
    const tosa::DTypeCapability* int16 = d.dtype(DType::int16);
    assert_non_null(int16);
    assert_int_equal(int16->roles, tosa::role_bit(Role::intermediate));
    assert_false(int16->parameter_only);
    assert_int_equal(d.dtype(i)->roles, roles({Role::input, Role::output, Role::intermediate}));
}

void every_row_of_the_real_table_is_an_operator_and_nothing_else_is(void**)
{
    const tosa::CapabilityDescriptor& d = backend::cpu::cpu_descriptor();
    const auto rows = backend::cpu::admitted_operators();
    for (const AdmittedOperator& row : rows) {
        const tosa::OperatorCapability* c = d.operator_capability(row.op);
        if (c == nullptr) fail_msg("%s is in the table, not in the descriptor",
                                   std::string(tosa::op_name(row.op)).c_str());
        assert_true(std::ranges::find(c->dtypes, row.dtype) != c->dtypes.end());
        for (DType input : row.inputs)
            assert_true(std::ranges::find(c->dtypes, input) != c->dtypes.end());
    }
    for (const tosa::OperatorCapability& c : d.operators)
        if (std::ranges::none_of(rows, [&](const AdmittedOperator& r) { return r.op == c.op; }))
            fail_msg("%s is in the descriptor, not in the table",
                     std::string(tosa::op_name(c.op)).c_str());
}

void the_backend_reports_the_derived_descriptor_and_its_target(void**)
{
    Rig rig;
    const auto descriptors = rig.backend->tosa_descriptors();
    assert_int_equal(descriptors.size(), 1);
    assert_true(descriptors[0] == backend::cpu::cpu_descriptor());
    // The CPU runs the float and integer profiles: TOSA 1.0 INT FP, level 8K,
    // control flow and variables (blocks in any number).
    assert_int_equal(descriptors[0].target.profiles, VACCEL_TOSA_PRO_INT | VACCEL_TOSA_PRO_FP);
    assert_true(descriptors[0].allows_control_flow() && descriptors[0].allows_variables());
    assert_int_equal(descriptors[0].graph.max_blocks, UINT32_MAX);
    const vaccel_tosa_target uapi = descriptors[0].target.to_uapi();
    assert_memory_equal(&uapi, &rig.backend->device_info().tosa_targets[0], sizeof uapi);
    // Facts of the table that other rows cannot change: ADD on FP32 with
    // no constraint, no zero-shift on MUL (INT32 MUL takes any shift),
    // RESHAPE's constant shape, and FP32 in every role.
    const tosa::OperatorCapability* add = descriptors[0].operator_capability(Op::add);
    assert_non_null(add);
    assert_int_equal(add->constraints, 0);
    assert_true(std::ranges::find(add->dtypes, DType::fp32) != add->dtypes.end());
    assert_int_equal(descriptors[0].operator_capability(Op::mul)->constraints, 0);
    assert_int_equal(descriptors[0].operator_capability(Op::reshape)->constraints,
                     tosa::constraint_bit(tosa::OperatorConstraint::constant_parameters));
    assert_int_equal(descriptors[0].dtype(DType::fp32)->roles, tosa::all_roles);
    assert_null(descriptors[0].dtype(DType::shape));  // shapes are not tensors to a descriptor
    rig.finish();
}

// in [2] -> op -> out [2], all FP32.
tosa::Graph unary_fp32(Op op)
{
    tosa::GraphBuilder g;
    const auto in = f32(g, "in", {2});
    const auto out = f32(g, "out", {2});
    g.op(op, {in}, {out});
    g.input(in);
    g.output(out);
    return g.finish();
}

void load_program_agrees_with_the_descriptor_on_every_operator(void**)
{
    // Every TOSA 1.0 operator but the data carriers and the control-flow /
    // variable ones (which need regions or state a one-operator graph
    // cannot give), as a one-input FP32 operator: one the descriptor lacks
    // is refused as an operator; one it lists on FP32 alone (SHAPE
    // operands aside) is not. (An operator it lists with other dtypes, such
    // as ARGMAX's INT32 result, may take FP32 only as an operand.)
    Rig rig;
    const tosa::CapabilityDescriptor& d = backend::cpu::cpu_descriptor();
    for (std::uint32_t v = 1; v < tosa::op_count; ++v) {
        const Op op = static_cast<Op>(v);
        if (op == Op::const_ || op == Op::const_shape || op == Op::cond_if ||
            op == Op::while_loop || op == Op::variable || op == Op::variable_read ||
            op == Op::variable_write || op == Op::custom)
            continue;
        const tosa::OperatorCapability* c = d.operator_capability(op);
        const bool fp32_only =
            c != nullptr && std::ranges::all_of(c->dtypes, [](DType t) {
                return t == DType::fp32 || t == DType::shape;
            });
        auto loaded = rig.load(unary_fp32(op));
        const bool refused_as_operator =
            !loaded && loaded.error().detail == VACCEL_D_TOSA_OPERATOR &&
            loaded.error().arg0 == v;
        if (c == nullptr && !refused_as_operator)
            fail_msg("%s: the descriptor lacks it, load_program does not refuse it",
                     std::string(tosa::op_name(op)).c_str());
        if (fp32_only && refused_as_operator)
            fail_msg("%s: the descriptor lists it on FP32, load_program refuses it",
                     std::string(tosa::op_name(op)).c_str());
        if (loaded) assert_ok(rig.backend->unload_program(*loaded));
    }
    rig.finish();
}

void fp8_add_is_refused_naming_operator_and_dtype(void**)
{
    // The descriptor's ADD does not take FP8E4M3 ...
    const tosa::OperatorCapability* add =
        backend::cpu::cpu_descriptor().operator_capability(Op::add);
    assert_non_null(add);
    assert_true(std::ranges::find(add->dtypes, DType::fp8e4m3) == add->dtypes.end());
    // ... and a graph of one FP8E4M3 ADD is refused with both named.
    Rig rig;
    tosa::GraphBuilder g;
    const auto a = g.tensor("a", {4}, DType::fp8e4m3);
    const auto b = g.tensor("b", {4}, DType::fp8e4m3);
    const auto out = g.tensor("out", {4}, DType::fp8e4m3);
    g.op(Op::add, {a, b}, {out});
    g.input(a);
    g.input(b);
    g.output(out);
    auto loaded = rig.load(g.finish());
    assert_refused(loaded, Errc::unsupported, VACCEL_D_TOSA_OPERATOR, Op::add, DType::fp8e4m3);
    assert_string_equal(loaded.error().note.c_str(),
                        "TOSA operator ADD on FP8E4M3 is not supported by the CPU backend");
    assert_string_equal(describe(loaded.error()).c_str(),
                        "Unsupported: TOSA operator ADD on FP8E4M3 is not supported by this device; "
                        "run the model on a device that offers it, or change the model (TOSA "
                        "operator ADD on FP8E4M3 is not supported by the CPU backend)");
    rig.finish();
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(small_fp32_table_gives_its_operators_dtypes_and_roles),
        cmocka_unit_test(integer_and_extended_rows_set_profiles_and_extensions),
        cmocka_unit_test(every_row_of_the_real_table_is_an_operator_and_nothing_else_is),
        cmocka_unit_test(the_backend_reports_the_derived_descriptor_and_its_target),
        cmocka_unit_test(load_program_agrees_with_the_descriptor_on_every_operator),
        cmocka_unit_test(fp8_add_is_refused_naming_operator_and_dtype),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
