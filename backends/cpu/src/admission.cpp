// admission.cpp - the CPU backend's admitted TOSA set and execution order.
//
// Decides: which operator runs on which dtype (the table below, keyed by the
// operator's output dtype; docs/operators.md lists it), the dtype of every
// operand, the operand counts (CONCAT: one or more, all of the output's
// dtype), and that graph
// inputs and outputs are FP32, BOOL, INT8, INT16, INT32 or INT48. An operator/dtype
// outside the table is Unsupported / D_TOSA_OPERATOR (arg0 op, arg1 dtype);
// CAST has one row per source dtype, and a pair outside them is refused the
// same way; an operand of another dtype is Unsupported / D_TOSA_DTYPE (arg0
// dtype, arg1 op); a wrong operand count is InvalidArgument /
// D_TOSA_MALFORMED / TOSA_ARITY.
#include "admission.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <queue>
#include <ranges>

namespace vaccel::backend::cpu {

using tosa::DType;
using tosa::Op;

Error malformed(std::uint32_t reason, std::string note)
{
    return Error::of(Errc::invalid_argument, VACCEL_D_TOSA_MALFORMED, reason)
        .with_note(std::move(note));
}

namespace {

// One admitted operator: the dtype its output carries, its operand counts
// and the dtype each input must have (in order).
struct Admitted {
    Op op;
    DType dtype;
    std::vector<DType> inputs;  // variadic: any number >= 1, each of inputs[0]
    std::size_t outputs;
    bool variadic = false;
};

// TOSA 1.0's integer profile (kernels_int.hpp): the operator/dtype pairs of
// the specification's type tables for the integer elementwise, reduction and
// selection operators, and the data layout operators on every stored dtype;
// docs/operators.md, "Integer operators".
void add_integer_rows(std::vector<Admitted>& set)
{
    const DType b = DType::boolean;
    const DType i8 = DType::int8;
    const DType i16 = DType::int16;
    const DType i32 = DType::int32;
    // RESCALE: input, multiplier (INT16 without scale32, INT32 with it),
    // shift, input_zp (the input's dtype), output_zp (the output's).
    for (const DType out : {i8, i16, i32})
        for (const DType in : {i8, i16, i32})
            for (const DType multiplier : {i16, i32})
                set.push_back({Op::rescale, out, {in, multiplier, i8, in, out}, 1});
    set.push_back({Op::table, i8, {i8, i8}, 1});     // input, 256 entries
    set.push_back({Op::table, i32, {i16, i16}, 1});  // input, 513 entries
    for (const DType in : {i8, i16, i32})
        set.push_back({Op::mul, i32, {in, in, i8}, 1});  // input1, input2, shift
    set.push_back({Op::intdiv, i32, {i32, i32}, 1});
    for (const DType t : {i8, i16, i32}) {
        for (const Op op : {Op::arithmetic_right_shift, Op::logical_left_shift,
                            Op::logical_right_shift, Op::bitwise_and, Op::bitwise_or,
                            Op::bitwise_xor})
            set.push_back({op, t, {t, t}, 1});
        set.push_back({Op::bitwise_not, t, {t}, 1});
        set.push_back({Op::negate, t, {t, t, t}, 1});  // input1, input1_zp, output_zp
        set.push_back({Op::reduce_max, t, {t}, 1});
        set.push_back({Op::reduce_min, t, {t}, 1});
    }
    set.push_back({Op::clz, i32, {i32}, 1});
    set.push_back({Op::abs, i32, {i32}, 1});
    set.push_back({Op::clamp, i8, {i8}, 1});
    set.push_back({Op::clamp, i16, {i16}, 1});
    set.push_back({Op::reduce_sum, i32, {i32}, 1});
    set.push_back({Op::argmax, i32, {i8}, 1});
    set.push_back({Op::argmax, i32, {i16}, 1});
    for (const DType t : {i8, i16, i32, b}) set.push_back({Op::select, t, {b, t, t}, 1});
    // Data layout on every stored dtype besides FP32 (moves of elements).
    const DType shape = DType::shape;
    for (const DType t : {i8, i16, i32, b}) {
        set.push_back({Op::concat, t, {t}, 1, true});
        set.push_back({Op::slice, t, {t, shape, shape}, 1});  // input, start, size
        set.push_back({Op::pad, t, {t, shape, t}, 1});        // input, padding, pad_const
        set.push_back({Op::tile, t, {t, shape}, 1});          // input, multiples
        set.push_back({Op::reverse, t, {t}, 1});
        set.push_back({Op::transpose, t, {t}, 1});
    }
    for (const DType t : {i8, i16}) {
        set.push_back({Op::reshape, t, {t, shape}, 1});
        set.push_back({Op::identity, t, {t}, 1});
    }
}

// ---- Narrow floats: FP16, BF16, FP8E4M3, FP8E5M2 ------------------------
// The rows TOSA 1.0 defines for them (PRO-FP, EXT-BF16, EXT-FP8E4M3,
// EXT-FP8E5M2) among the operators the backend runs on FP32. Each runs on FP32
// copies of its operands and narrows its result
// (docs/adr/0011-narrow-floats-on-the-cpu.md).
void add_narrow_float_rows(std::vector<Admitted>& set)
{
    const DType f = DType::fp32;
    const DType b = DType::boolean;
    const DType i8 = DType::int8;
    const DType i16 = DType::int16;
    const DType i32 = DType::int32;
    const DType fp8[] = {DType::fp8e4m3, DType::fp8e5m2};
    const DType fp16 = DType::fp16;
    // Every float operator of the FP32 set but FFT2D and RFFT2D, on FP16 and BF16.
    for (const DType h : {DType::fp16, DType::bf16}) {
        for (const Op op : {Op::add, Op::sub, Op::maximum, Op::minimum, Op::pow})
            set.push_back({op, h, {h, h}, 1});
        set.push_back({Op::mul, h, {h, h, i8}, 1});  // shift: a zero INT8 constant
        for (const Op op : {Op::equal, Op::greater, Op::greater_equal})
            set.push_back({op, b, {h, h}, 1});
        set.push_back({Op::select, h, {b, h, h}, 1});
        for (const Op op : {Op::abs, Op::ceil, Op::floor, Op::exp, Op::log, Op::reciprocal,
                            Op::rsqrt, Op::sin, Op::cos, Op::erf, Op::sigmoid, Op::tanh,
                            Op::clamp, Op::reduce_sum, Op::reduce_max, Op::reduce_min,
                            Op::reduce_product})
            set.push_back({op, h, {h}, 1});
        set.push_back({Op::negate, h, {h, h, h}, 1});  // input, input_zp, output_zp
        set.push_back({Op::resize, h, {h, DType::shape, DType::shape, DType::shape}, 1});
        // MATMUL: BF16 accumulates in FP32 and yields FP32; FP16 yields FP16
        // (FP16 accumulator) or FP32 (FP32 accumulator).
        set.push_back({Op::matmul, f, {h, h, h, h}, 1});
        if (h == fp16) set.push_back({Op::matmul, h, {h, h, h, h}, 1});
        // Convolutions: input, weight, bias, input_zp, weight_zp.
        for (const Op op : {Op::conv2d, Op::depthwise_conv2d, Op::transpose_conv2d, Op::conv3d})
            set.push_back({op, h, {h, h, h, h, h}, 1});
        set.push_back({Op::avg_pool2d, h, {h, h, h}, 1});
        // CAST between FP32 and each integer type (TOSA 1.0 has no FP16 <-> BF16).
        set.push_back({Op::cast, h, {f}, 1});
        set.push_back({Op::cast, f, {h}, 1});
        for (const DType i : {i8, i16, i32}) {
            set.push_back({Op::cast, h, {i}, 1});
            set.push_back({Op::cast, i, {h}, 1});
        }
    }
    // FP8: MATMUL and the convolutions yield FP16 (FP16 accumulator);
    // AVG_POOL2D keeps FP8 (FP16 accumulator); CAST to and from the floats.
    for (const DType e : fp8) {
        set.push_back({Op::matmul, fp16, {e, e, e, e}, 1});
        for (const Op op : {Op::conv2d, Op::depthwise_conv2d, Op::transpose_conv2d, Op::conv3d})
            set.push_back({op, fp16, {e, e, fp16, e, e}, 1});
        set.push_back({Op::avg_pool2d, e, {e, e, e}, 1});
        for (const DType wide : {f, DType::fp16, DType::bf16}) {
            set.push_back({Op::cast, e, {wide}, 1});
            set.push_back({Op::cast, wide, {e}, 1});
        }
    }
    // Data layout and the operators every float type has.
    for (const DType n : {DType::fp16, DType::bf16, DType::fp8e4m3, DType::fp8e5m2}) {
        set.push_back({Op::const_, n, {}, 1});
        set.push_back({Op::identity, n, {n}, 1});
        set.push_back({Op::reshape, n, {n, DType::shape}, 1});
        set.push_back({Op::transpose, n, {n}, 1});
        set.push_back({Op::reverse, n, {n}, 1});
        set.push_back({Op::tile, n, {n, DType::shape}, 1});
        set.push_back({Op::slice, n, {n, DType::shape, DType::shape}, 1});
        set.push_back({Op::pad, n, {n, DType::shape, n}, 1});
        set.push_back({Op::concat, n, {n}, 1, true});
        set.push_back({Op::gather, n, {n, i32}, 1});
        set.push_back({Op::scatter, n, {n, i32, n}, 1});
        set.push_back({Op::max_pool2d, n, {n}, 1});
        set.push_back({Op::argmax, i32, {n}, 1});
    }
}

const std::vector<Admitted>& admitted_set()
{
    static const std::vector<Admitted> set = [] {
        const DType f = DType::fp32;
        const DType b = DType::boolean;
        const DType i8 = DType::int8;
        const DType i16 = DType::int16;
        const DType i32 = DType::int32;
        const DType i4 = DType::int4;    // integer tensor operators
        const DType i48 = DType::int48;  // integer tensor operators
        std::vector<Admitted> rows{
            {Op::add, f, {f, f}, 1},
            {Op::sub, f, {f, f}, 1},
            {Op::mul, f, {f, f, DType::int8}, 1},
            {Op::matmul, f, {f, f, f, f}, 1},
            {Op::reshape, f, {f, DType::shape}, 1},
            {Op::transpose, f, {f}, 1},
            {Op::const_, f, {}, 1},
            {Op::const_, DType::int8, {}, 1},
            {Op::const_, DType::shape, {}, 1},
            {Op::const_shape, DType::shape, {}, 1},
            {Op::identity, f, {f}, 1},
            {Op::clamp, f, {f}, 1},
            {Op::sigmoid, f, {f}, 1},
            {Op::tanh, f, {f}, 1},
            {Op::reduce_sum, f, {f}, 1},
            {Op::conv2d, f, {f, f, f, f, f}, 1},
            {Op::const_, DType::boolean, {}, 1},
            {Op::maximum, f, {f, f}, 1},
            {Op::minimum, f, {f, f}, 1},
            {Op::pow, f, {f, f}, 1},
            {Op::equal, DType::boolean, {f, f}, 1},
            {Op::greater, DType::boolean, {f, f}, 1},
            {Op::greater_equal, DType::boolean, {f, f}, 1},
            {Op::select, f, {DType::boolean, f, f}, 1},
            {Op::abs, f, {f}, 1},
            {Op::negate, f, {f, f, f}, 1},  // input, input_zp, output_zp
            {Op::exp, f, {f}, 1},
            {Op::log, f, {f}, 1},
            {Op::reciprocal, f, {f}, 1},
            {Op::rsqrt, f, {f}, 1},
            {Op::ceil, f, {f}, 1},
            {Op::floor, f, {f}, 1},
            {Op::sin, f, {f}, 1},
            {Op::cos, f, {f}, 1},
            {Op::erf, f, {f}, 1},
            {Op::reduce_max, f, {f}, 1},
            {Op::reduce_min, f, {f}, 1},
            {Op::reduce_product, f, {f}, 1},
            {Op::argmax, DType::int32, {f}, 1},
            {Op::concat, f, {f}, 1, true},
            {Op::slice, f, {f, DType::shape, DType::shape}, 1},  // input, start, size
            {Op::pad, f, {f, DType::shape, f}, 1},               // input, padding, pad_const
            {Op::tile, f, {f, DType::shape}, 1},                 // input, multiples
            {Op::reverse, f, {f}, 1},
            // Pools and the convolutions beyond CONV2D (kernels_spatial.hpp).
            {Op::max_pool2d, f, {f}, 1},
            {Op::max_pool2d, DType::int8, {DType::int8}, 1},
            {Op::avg_pool2d, f, {f, f, f}, 1},               // input, input_zp, output_zp
            {Op::depthwise_conv2d, f, {f, f, f, f, f}, 1},   // input, weight, bias, zero points
            {Op::transpose_conv2d, f, {f, f, f, f, f}, 1},   // input, weight, bias, zero points
            {Op::conv3d, f, {f, f, f, f, f}, 1},             // input, weight, bias, zero points
            // INT32 arithmetic and comparison (loop counters, indices).
            {Op::add, i32, {i32, i32}, 1},
            {Op::sub, i32, {i32, i32}, 1},
            {Op::maximum, i32, {i32, i32}, 1},
            {Op::minimum, i32, {i32, i32}, 1},
            {Op::equal, b, {i32, i32}, 1},
            {Op::greater, b, {i32, i32}, 1},
            {Op::greater_equal, b, {i32, i32}, 1},
            // Indexing, conversion, logical, resampling and Fourier operators.
            {Op::gather, f, {f, i32}, 1},                 // values, indices
            {Op::gather, i32, {i32, i32}, 1},
            {Op::gather, i16, {i16, i32}, 1},
            {Op::gather, i8, {i8, i32}, 1},
            {Op::scatter, f, {f, i32, f}, 1},             // values_in, indices, input
            {Op::scatter, i32, {i32, i32, i32}, 1},
            {Op::scatter, i16, {i16, i32, i16}, 1},
            {Op::scatter, i8, {i8, i32, i8}, 1},
            {Op::cast, b, {i8}, 1},
            {Op::cast, b, {i16}, 1},
            {Op::cast, b, {i32}, 1},
            {Op::cast, i8, {b}, 1},
            {Op::cast, i8, {i16}, 1},
            {Op::cast, i8, {i32}, 1},
            {Op::cast, i8, {f}, 1},
            {Op::cast, i16, {b}, 1},
            {Op::cast, i16, {i8}, 1},
            {Op::cast, i16, {i32}, 1},
            {Op::cast, i16, {f}, 1},
            {Op::cast, i32, {b}, 1},
            {Op::cast, i32, {i8}, 1},
            {Op::cast, i32, {i16}, 1},
            {Op::cast, i32, {f}, 1},
            {Op::cast, f, {i8}, 1},
            {Op::cast, f, {i16}, 1},
            {Op::cast, f, {i32}, 1},
            {Op::logical_and, b, {b, b}, 1},
            {Op::logical_or, b, {b, b}, 1},
            {Op::logical_xor, b, {b, b}, 1},
            {Op::logical_not, b, {b}, 1},
            {Op::reduce_all, b, {b}, 1},
            {Op::reduce_any, b, {b}, 1},
            // RESIZE: input, scale, offset, border.
            {Op::resize, f, {f, DType::shape, DType::shape, DType::shape}, 1},
            {Op::fft2d, f, {f, f}, 2},                    // real, imaginary -> real, imaginary
            {Op::rfft2d, f, {f}, 2},                      // real -> real, imaginary
            {Op::const_, i32, {}, 1},
            {Op::const_, i16, {}, 1},
            {Op::reshape, i32, {i32, DType::shape}, 1},
            {Op::reshape, b, {b, DType::shape}, 1},
            {Op::identity, i32, {i32}, 1},
            {Op::identity, b, {b}, 1},
            // Integer tensor operators (kernels_qconv.hpp): TOSA 1.0's integer
            // profile combinations; zero points have the dtype of what they
            // shift (INT4 weights: an INT4 weight_zp), bias the output's.
            {Op::matmul, i32, {i8, i8, i8, i8}, 1},          // A, B, A_zp, B_zp
            {Op::matmul, i48, {i16, i16, i16, i16}, 1},
            {Op::conv2d, i32, {i8, i8, i32, i8, i8}, 1},     // input, weight, bias, zero points
            {Op::conv2d, i32, {i8, i4, i32, i8, i4}, 1},
            {Op::conv2d, i48, {i16, i8, i48, i16, i8}, 1},
            {Op::depthwise_conv2d, i32, {i8, i8, i32, i8, i8}, 1},
            {Op::depthwise_conv2d, i32, {i8, i4, i32, i8, i4}, 1},
            {Op::depthwise_conv2d, i48, {i16, i8, i48, i16, i8}, 1},
            {Op::transpose_conv2d, i32, {i8, i8, i32, i8, i8}, 1},
            {Op::transpose_conv2d, i32, {i8, i4, i32, i8, i4}, 1},
            {Op::transpose_conv2d, i48, {i16, i8, i48, i16, i8}, 1},
            {Op::conv3d, i32, {i8, i8, i32, i8, i8}, 1},
            {Op::conv3d, i32, {i8, i4, i32, i8, i4}, 1},
            {Op::conv3d, i48, {i16, i8, i48, i16, i8}, 1},
            {Op::avg_pool2d, i8, {i8, i8, i8}, 1},           // input, input_zp, output_zp
            {Op::avg_pool2d, i16, {i16, i16, i16}, 1},
            {Op::max_pool2d, i16, {i16}, 1},
            {Op::const_, i4, {}, 1},
            {Op::const_, i48, {}, 1},
            {Op::identity, i48, {i48}, 1},
            {Op::reshape, i48, {i48, DType::shape}, 1},
        };
        add_integer_rows(rows);
        add_narrow_float_rows(rows);
        return rows;
    }();
    return set;
}

bool inputs_match(const tosa::Block& block, const tosa::Operator& op, const Admitted& entry)
{
    if (entry.variadic || op.inputs.size() != entry.inputs.size()) return false;
    for (std::size_t i = 0; i < op.inputs.size(); ++i)
        if (block.tensors[op.inputs[i]].dtype != entry.inputs[i]) return false;
    return true;
}

// The table row an operator is admitted by. Where one operator/output dtype
// has several rows (CAST from each source dtype), the row whose inputs match;
// none matching is an operator/dtype pair outside the table (end()). Where it
// has one row, that row: a mismatched input is then refused by its dtype.
std::vector<Admitted>::const_iterator find_admitted(const tosa::Block& block,
                                                    const tosa::Operator& op, DType dtype)
{
    const auto& set = admitted_set();
    const auto same = [&](const Admitted& a) { return a.op == op.op && a.dtype == dtype; };
    const auto first = std::ranges::find_if(set, same);
    if (first == set.end() || std::ranges::count_if(set, same) == 1) return first;
    const auto matching = std::ranges::find_if(
        set, [&](const Admitted& a) { return same(a) && inputs_match(block, op, a); });
    // CAST is admitted per pair; any other operator reports its first
    // operand of a dtype no row takes.
    return matching != set.end() || op.op == Op::cast ? matching : first;
}

// The dtype an operator is admitted on: its first output's, else its first input's.
DType operator_dtype(const tosa::Block& block, const tosa::Operator& op)
{
    if (!op.outputs.empty() && op.outputs[0] < block.tensors.size())
        return block.tensors[op.outputs[0]].dtype;
    if (!op.inputs.empty() && op.inputs[0] < block.tensors.size())
        return block.tensors[op.inputs[0]].dtype;
    return DType::unknown;
}

Error unsupported_dtype(DType dtype, Op op, std::string_view where)
{
    return Error::of(Errc::unsupported, VACCEL_D_TOSA_DTYPE, static_cast<std::uint32_t>(dtype),
                     static_cast<std::uint32_t>(op))
        .with_note(fmt::format("{} of dtype {} is not supported by the CPU backend for this "
                               "operator (docs/operators.md lists the dtypes each operator "
                               "takes); convert the model to FP32",
                               where, tosa::dtype_name(dtype)));
}

// The dtypes a graph input or output may have: the ones values are stored in
// (INT8: MAX_POOL2D's data; FP16, BF16 and FP8 in their own encoding).
bool slot_dtype(DType dtype)
{
    return dtype == DType::fp32 || dtype == DType::boolean || dtype == DType::int8 ||
           dtype == DType::int16 || dtype == DType::int32 ||
           dtype == DType::int48 ||  // 6 bytes, little endian (kernels_qconv.hpp)
           dtype == DType::fp16 || dtype == DType::bf16 || dtype == DType::fp8e4m3 ||
           dtype == DType::fp8e5m2;
}

}  // namespace

std::vector<AdmittedOperator> admitted_operators()
{
    std::vector<AdmittedOperator> rows;
    for (const Admitted& a : admitted_set()) rows.push_back({a.op, a.dtype, a.inputs, a.variadic});
    // Control flow and state carry values of every stored dtype: admit_block()
    // takes them before the table, and these rows say so to the descriptor.
    for (const DType d : {DType::boolean, DType::int8, DType::int16, DType::int32, DType::int48,
                          DType::fp16, DType::bf16, DType::fp32, DType::fp8e4m3,
                          DType::fp8e5m2}) {
        if (!slot_dtype(d)) continue;
        rows.push_back({Op::cond_if, d, {DType::boolean, d}, true});
        rows.push_back({Op::while_loop, d, {d}, true});
        rows.push_back({Op::variable, d, {}, false});
        rows.push_back({Op::variable_read, d, {d}, false});
        rows.push_back({Op::variable_write, d, {d}, false});
    }
    return rows;
}

bool admitted_slot_dtype(DType dtype)
{
    return slot_dtype(dtype);
}

Status admit_block(const tosa::Block& block)
{
    for (std::size_t index = 0; index < block.operators.size(); ++index) {
        const tosa::Operator& op = block.operators[index];
        for (std::uint32_t tensor : op.inputs)
            if (tensor >= block.tensors.size())
                return fail(malformed(VACCEL_TOSA_UNKNOWN_TENSOR,
                                      fmt::format("operator {} ({}) reads tensor index {}, which "
                                                  "does not exist",
                                                  index, tosa::op_name(op.op), tensor)));
        for (std::uint32_t tensor : op.outputs)
            if (tensor >= block.tensors.size())
                return fail(malformed(VACCEL_TOSA_UNKNOWN_TENSOR,
                                      fmt::format("operator {} ({}) writes tensor index {}, "
                                                  "which does not exist",
                                                  index, tosa::op_name(op.op), tensor)));
        if (op.op == Op::cond_if || op.op == Op::while_loop || op.op == Op::variable ||
            op.op == Op::variable_read || op.op == Op::variable_write) {
            // Control flow and state carry values of any stored dtype; the
            // blocks they run are admitted on their own.
            for (const auto* operands : {&op.inputs, &op.outputs})
                for (std::uint32_t tensor : *operands)
                    if (!slot_dtype(block.tensors[tensor].dtype))
                        return fail(unsupported_dtype(
                            block.tensors[tensor].dtype, op.op,
                            fmt::format("tensor '{}' of operator {} ({})",
                                        block.tensors[tensor].name, index,
                                        tosa::op_name(op.op))));
            continue;
        }
        const DType dtype = operator_dtype(block, op);
        const auto& set = admitted_set();
        const auto entry = find_admitted(block, op, dtype);
        if (entry == set.end())
            return fail(Error::of(Errc::unsupported, VACCEL_D_TOSA_OPERATOR,
                                  static_cast<std::uint32_t>(op.op),
                                  static_cast<std::uint32_t>(dtype))
                            .with_note(
                                op.op == Op::cast && !op.inputs.empty()
                                    ? fmt::format("TOSA operator CAST from {} to {} is not "
                                                  "supported by the CPU backend (docs/"
                                                  "operators.md lists the pairs it runs)",
                                                  tosa::dtype_name(
                                                      block.tensors[op.inputs[0]].dtype),
                                                  tosa::dtype_name(dtype))
                                    : fmt::format("TOSA operator {} on {} is not supported by "
                                                  "the CPU backend",
                                                  tosa::op_name(op.op),
                                                  tosa::dtype_name(dtype))));
        const bool arity_ok = entry->variadic ? !op.inputs.empty()
                                              : op.inputs.size() == entry->inputs.size();
        if (!arity_ok || op.outputs.size() != entry->outputs)
            return fail(Error::of(Errc::invalid_argument, VACCEL_D_TOSA_MALFORMED,
                                  VACCEL_TOSA_ARITY)
                            .with_note(fmt::format("operator {} ({}) has {} inputs and {} "
                                                   "outputs; TOSA 1.0 defines {} and {}",
                                                   index, tosa::op_name(op.op), op.inputs.size(),
                                                   op.outputs.size(),
                                                   entry->variadic
                                                       ? std::string("one or more")
                                                       : std::to_string(entry->inputs.size()),
                                                   entry->outputs)));
        for (std::size_t i = 0; i < op.inputs.size(); ++i) {
            const tosa::Tensor& tensor = block.tensors[op.inputs[i]];
            const DType expected = entry->inputs[entry->variadic ? 0 : i];
            // An operand that is not data (indices, a condition, a shape):
            // name the dtype it needs rather than suggesting FP32.
            if (tensor.dtype != expected && expected != DType::fp32)
                return fail(Error::of(Errc::unsupported, VACCEL_D_TOSA_DTYPE,
                                      static_cast<std::uint32_t>(tensor.dtype),
                                      static_cast<std::uint32_t>(op.op))
                                .with_note(fmt::format("input {} ('{}') of operator {} ({}) has "
                                                       "dtype {}; the CPU backend runs {} with "
                                                       "{} there",
                                                       i, tensor.name, index,
                                                       tosa::op_name(op.op),
                                                       tosa::dtype_name(tensor.dtype),
                                                       tosa::op_name(op.op),
                                                       tosa::dtype_name(expected))));
            if (tensor.dtype != expected)
                return fail(unsupported_dtype(
                    tensor.dtype, op.op,
                    fmt::format("input {} ('{}') of operator {} ({})", i, tensor.name, index,
                                tosa::op_name(op.op))));
        }
    }
    for (std::uint32_t tensor : block.inputs) {
        if (tensor >= block.tensors.size())
            return fail(malformed(VACCEL_TOSA_UNKNOWN_TENSOR,
                                  fmt::format("block input index {} names no tensor", tensor)));
        if (!slot_dtype(block.tensors[tensor].dtype))
            return fail(unsupported_dtype(block.tensors[tensor].dtype, Op::unknown,
                                          fmt::format("graph input '{}'",
                                                      block.tensors[tensor].name)));
    }
    for (std::uint32_t tensor : block.outputs) {
        if (tensor >= block.tensors.size())
            return fail(malformed(VACCEL_TOSA_UNKNOWN_TENSOR,
                                  fmt::format("block output index {} names no tensor", tensor)));
        if (!slot_dtype(block.tensors[tensor].dtype))
            return fail(unsupported_dtype(block.tensors[tensor].dtype, Op::unknown,
                                          fmt::format("graph output '{}'",
                                                      block.tensors[tensor].name)));
    }
    return {};
}

Result<ExecutionOrder> order_block(const tosa::Block& block)
{
    const std::size_t tensor_count = block.tensors.size();
    const std::size_t op_count = block.operators.size();
    constexpr std::uint32_t none = UINT32_MAX;

    std::vector<std::uint32_t> producer(tensor_count, none);
    std::vector<bool> is_input(tensor_count, false);
    for (std::uint32_t tensor : block.inputs) is_input[tensor] = true;
    for (std::uint32_t index = 0; index < op_count; ++index) {
        for (std::uint32_t tensor : block.operators[index].outputs) {
            if (producer[tensor] != none || is_input[tensor])
                return fail(Error::of(Errc::invalid_argument, VACCEL_D_TOSA_GRAPH,
                                      VACCEL_TOSA_CYCLE)
                                .with_note(fmt::format(
                                    "tensor '{}' is written by operator {} but already {}; "
                                    "each tensor must have one producer",
                                    block.tensors[tensor].name, index,
                                    is_input[tensor] ? "a graph input"
                                                     : fmt::format("written by operator {}",
                                                                   producer[tensor]))));
            producer[tensor] = index;
        }
    }

    ExecutionOrder order;
    order.constant.assign(tensor_count, false);
    // Data makes a constant only where no computing operator writes the
    // tensor: the output of a CONST/CONST_SHAPE, or a tensor nobody writes.
    // A CONST_SHAPE of no elements (the shape of a rank-0 RESHAPE) has no
    // bytes.
    for (std::size_t t = 0; t < tensor_count; ++t) {
        const bool by_const = producer[t] != none &&
                              (block.operators[producer[t]].op == Op::const_ ||
                               block.operators[producer[t]].op == Op::const_shape);
        const bool computed = producer[t] != none && !by_const;
        const bool has_data = !block.tensors[t].data.empty() ||
                              (producer[t] != none &&
                               block.operators[producer[t]].op == Op::const_shape &&
                               block.tensors[t].element_count() == 0);
        order.constant[t] = has_data && !is_input[t] && !computed;
    }

    // A tensor is available when it is a graph input, or its producer ran.
    // A read of a tensor nobody writes is malformed.
    for (std::uint32_t index = 0; index < op_count; ++index)
        for (std::uint32_t tensor : block.operators[index].inputs)
            if (producer[tensor] == none && !is_input[tensor] && !order.constant[tensor])
                return fail(malformed(VACCEL_TOSA_UNKNOWN_TENSOR,
                                      fmt::format("operator {} ({}) reads tensor '{}', which no "
                                                  "operator writes and which is not a graph "
                                                  "input",
                                                  index, tosa::op_name(block.operators[index].op),
                                                  block.tensors[tensor].name)));
    for (std::uint32_t tensor : block.outputs)
        if (producer[tensor] == none && !is_input[tensor] && !order.constant[tensor])
            return fail(malformed(VACCEL_TOSA_UNKNOWN_TENSOR,
                                  fmt::format("graph output '{}' is written by no operator",
                                              block.tensors[tensor].name)));

    // Kahn's algorithm; the smallest ready operator index goes first, so the
    // order is the declared one whenever that order is valid.
    std::vector<std::uint32_t> waiting(op_count, 0);
    std::vector<std::vector<std::uint32_t>> consumers(op_count);
    for (std::uint32_t index = 0; index < op_count; ++index) {
        for (std::uint32_t tensor : block.operators[index].inputs) {
            if (producer[tensor] == none) continue;
            ++waiting[index];
            consumers[producer[tensor]].push_back(index);
        }
    }
    std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>> ready;
    for (std::uint32_t index = 0; index < op_count; ++index)
        if (waiting[index] == 0) ready.push(index);
    std::vector<std::uint32_t> all;
    while (!ready.empty()) {
        const std::uint32_t index = ready.top();
        ready.pop();
        all.push_back(index);
        for (std::uint32_t consumer : consumers[index])
            if (--waiting[consumer] == 0) ready.push(consumer);
    }
    if (all.size() != op_count) {
        const auto stuck = std::ranges::find_if(
            std::views::iota(std::uint32_t{0}, static_cast<std::uint32_t>(op_count)),
            [&](std::uint32_t index) { return waiting[index] != 0; });
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_TOSA_GRAPH, VACCEL_TOSA_CYCLE)
                        .with_note(fmt::format("operator {} ({}) depends on its own output "
                                               "through a cycle; a TOSA graph must be acyclic",
                                               *stuck,
                                               tosa::op_name(block.operators[*stuck].op))));
    }

    // Live operators: those some graph output depends on.
    std::vector<bool> live(op_count, false);
    std::vector<std::uint32_t> stack;
    for (std::uint32_t tensor : block.outputs)
        if (producer[tensor] != none) stack.push_back(producer[tensor]);
    while (!stack.empty()) {
        const std::uint32_t index = stack.back();
        stack.pop_back();
        if (live[index]) continue;
        live[index] = true;
        for (std::uint32_t tensor : block.operators[index].inputs)
            if (producer[tensor] != none) stack.push_back(producer[tensor]);
    }
    for (std::uint32_t index : all)
        if (live[index]) order.operators.push_back(index);
    return order;
}

}  // namespace vaccel::backend::cpu
