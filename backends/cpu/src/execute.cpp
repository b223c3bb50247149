// execute.cpp - running one accepted submission on a worker thread.
//
// Decides the deadline semantics: the deadline is checked before the first
// operator, before every operator and once more before the outputs are
// copied. Every operator writes only the run's arena; output slots are
// written in one final copy after the last check, so a submission that ends
// DeadlineExpired has written nothing to its output buffers. A failure after
// acceptance (deadline, out of memory, a GATHER/SCATTER index outside the
// tensor or repeated, an INTDIV by zero or a shift amount outside the
// element's width, which TOSA 1.0 leaves unpredictable) ends the event
// failed with that error.
// Values are addressed by byte (plan.hpp); each step views them as the
// element type its kernel takes (float, BOOL bytes, int32, int8). A step on
// FP16, BF16 or FP8 values runs the FP32 kernel on widened copies and
// narrows its result (narrow_step below).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <memory>
#include <new>

#include "builtin_kernels.hpp"
#include "float_formats.hpp"
#include "scheduler.hpp"
#include "submission.hpp"

namespace vaccel::backend::cpu {

namespace {

bool deadline_passed(const Submission& submission)
{
    return submission.deadline_ns != 0 && monotonic_ns() >= submission.deadline_ns;
}

Error deadline_error(std::string_view when)
{
    return Error::of(Errc::deadline_expired, VACCEL_D_DEADLINE)
        .with_note(fmt::format("the submission's deadline passed {}; nothing was written to its "
                               "outputs",
                               when));
}

// An arena of the program's pool, given back when the run ends.
class Lease {
public:
    explicit Lease(ArenaPool& pool) : pool_(pool), arena_(pool.take()) {}
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease()
    {
        if (arena_) pool_.give(std::move(arena_));
    }
    std::byte* get() const { return arena_.get(); }

private:
    ArenaPool& pool_;
    ArenaPool::Arena arena_;
};

// What every block of one run shares.
struct RunContext {
    Submission& submission;
    const Plan& program;                // the main plan; nested plans inside it
    std::byte* arena = nullptr;         // every block's range of one arena
    std::vector<std::byte*> variables;  // per program variable: this run's copy
};

// One block of a run: the main block (top) or a block control flow runs.
class Run {
public:
    // `slots`: a pointer per slot of `plan` (inputs, then outputs); top: the
    // submission's bound buffers. `captured`: per captured index of `plan`.
    Run(RunContext& context, const Plan& plan, std::span<std::byte* const> slots,
        std::span<std::byte* const> captured, bool top)
        : context_(context), submission_(context.submission), plan_(plan), slots_(slots),
          captured_(captured), top_(top)
    {
    }

    Status execute();

private:
    std::byte* at(std::uint32_t value) const { return pointers_[value]; }
    float* f32(std::uint32_t value) const { return reinterpret_cast<float*>(pointers_[value]); }
    std::int32_t* i32(std::uint32_t value) const
    {
        return reinterpret_cast<std::int32_t*>(pointers_[value]);
    }
    std::uint8_t* boolean(std::uint32_t value) const
    {
        return reinterpret_cast<std::uint8_t*>(pointers_[value]);
    }
    Shape shape(std::uint32_t value) const { return plan_.values[value].shape; }
    Status bind_values();
    Status step(const Step& step);
    Status narrow_step(const Step& step);
    Status data_step(const Step& step);
    // Integer tensor operators (kernels_qconv.hpp): MATMUL, the convolutions
    // and AVG_POOL2D on INT8/INT16 data, MAX_POOL2D on INT16.
    bool integer_tensor_step(const Step& step) const;
    void int_tensor_step(const Step& step);
    Status integer_step(const Step& step);
    Error integer_error(const Step& step, const IntFault& fault) const;
    Status cond_if(const Step& step);
    Status while_loop(const Step& step);
    Status run_block(const BlockCall& call, std::span<std::byte* const> slots);
    void write_outputs();
    Error index_error(const Step& step, const IndexFault& fault) const;

    RunContext& context_;
    Submission& submission_;
    const Plan& plan_;
    std::span<std::byte* const> slots_;
    std::span<std::byte* const> captured_;
    bool top_;
    // Per value; inline for small plans, so a run of one (the ones that
    // run on the caller's thread) allocates nothing.
    SmallVector<std::byte*, 64> pointers_;
    std::vector<std::unique_ptr<std::byte[]>> realigned_;  // inputs bound at unaligned offsets
};

Status Run::step(const Step& s)
{
    if (integer_tensor_step(s)) {
        int_tensor_step(s);
        return {};
    }
    const Value& out = plan_.values[s.output];
    float* output = f32(s.output);
    switch (s.kind) {
    case StepKind::binary:
        if (out.dtype == tosa::DType::int32)
            binary(s.binary, i32(s.inputs[0]), shape(s.inputs[0]), i32(s.inputs[1]),
                   shape(s.inputs[1]), i32(s.output), out.shape);
        else
            binary(s.binary, f32(s.inputs[0]), shape(s.inputs[0]), f32(s.inputs[1]),
                   shape(s.inputs[1]), output, out.shape, s.nan_propagate);
        break;
    case StepKind::compare:
        if (plan_.values[s.inputs[0]].dtype == tosa::DType::int32)
            compare(s.compare, i32(s.inputs[0]), shape(s.inputs[0]), i32(s.inputs[1]),
                    shape(s.inputs[1]), boolean(s.output), out.shape);
        else
            compare(s.compare, f32(s.inputs[0]), shape(s.inputs[0]), f32(s.inputs[1]),
                    shape(s.inputs[1]), boolean(s.output), out.shape);
        break;
    case StepKind::cond_if: return cond_if(s);
    case StepKind::while_loop: return while_loop(s);
    case StepKind::select:
        select(boolean(s.inputs[0]), shape(s.inputs[0]), f32(s.inputs[1]), shape(s.inputs[1]),
               f32(s.inputs[2]), shape(s.inputs[2]), output, out.shape);
        break;
    case StepKind::unary: unary(s.unary, f32(s.inputs[0]), output, out.elements); break;
    case StepKind::matmul: {
        const Value& a = plan_.values[s.inputs[0]];
        const Value& b = plan_.values[s.inputs[1]];
        matmul(f32(s.inputs[0]), f32(s.inputs[1]), output, a.shape[0], a.shape[1], a.shape[2],
               b.shape[2]);
        break;
    }
    case StepKind::copy: std::memcpy(at(s.output), at(s.inputs[0]), out.bytes); break;
    case StepKind::transpose:
        transpose(at(s.inputs[0]), shape(s.inputs[0]), s.perms, at(s.output),
                  element_bytes(out.dtype));
        break;
    case StepKind::clamp:
        clamp(f32(s.inputs[0]), output, out.elements, s.min, s.max, s.nan_propagate);
        break;
    case StepKind::reduce:
        reduce(s.reduce, f32(s.inputs[0]), shape(s.inputs[0]), s.axis, output, s.nan_propagate);
        break;
    case StepKind::argmax:
        argmax(f32(s.inputs[0]), shape(s.inputs[0]), s.axis,
               reinterpret_cast<std::int32_t*>(at(s.output)), s.nan_propagate);
        break;
    case StepKind::conv2d:
        conv2d(f32(s.inputs[0]), f32(s.inputs[1]), f32(s.inputs[2]), output, s.conv);
        break;
    // Data layout: moves of elements of the output's dtype.
    case StepKind::concat: {
        std::vector<const std::byte*> inputs;
        std::vector<Shape> shapes;
        for (std::uint32_t v : s.inputs) {
            inputs.push_back(at(v));
            shapes.push_back(shape(v));
        }
        concat(inputs, shapes, s.axis, at(s.output), element_bytes(out.dtype));
        break;
    }
    case StepKind::slice:
        slice(at(s.inputs[0]), shape(s.inputs[0]), s.start, at(s.output), out.shape,
              element_bytes(out.dtype));
        break;
    case StepKind::pad:
        pad(at(s.inputs[0]), shape(s.inputs[0]), s.start, s.pad_value.data(), at(s.output),
            out.shape, element_bytes(out.dtype));
        break;
    case StepKind::tile:
        tile(at(s.inputs[0]), shape(s.inputs[0]), at(s.output), out.shape,
             element_bytes(out.dtype));
        break;
    case StepKind::reverse:
        reverse(at(s.inputs[0]), shape(s.inputs[0]), s.axis, at(s.output),
                element_bytes(out.dtype));
        break;
    // Pools and the convolutions beyond CONV2D.
    case StepKind::max_pool2d:
        if (out.dtype == tosa::DType::int8)
            max_pool2d(reinterpret_cast<const std::int8_t*>(at(s.inputs[0])),
                       reinterpret_cast<std::int8_t*>(at(s.output)), s.pool);
        else
            max_pool2d(f32(s.inputs[0]), output, s.pool, s.nan_propagate);
        break;
    case StepKind::avg_pool2d: avg_pool2d(f32(s.inputs[0]), output, s.pool); break;
    case StepKind::depthwise_conv2d:
        depthwise_conv2d(f32(s.inputs[0]), f32(s.inputs[1]), f32(s.inputs[2]), output, s.conv);
        break;
    case StepKind::transpose_conv2d:
        transpose_conv2d(f32(s.inputs[0]), f32(s.inputs[1]), f32(s.inputs[2]), output, s.conv);
        break;
    case StepKind::conv3d:
        conv3d(f32(s.inputs[0]), f32(s.inputs[1]), f32(s.inputs[2]), output, s.conv3d);
        break;
    case StepKind::gather:
    case StepKind::scatter:
    case StepKind::cast:
    case StepKind::logical:
    case StepKind::logical_not:
    case StepKind::reduce_bool:
    case StepKind::resize:
    case StepKind::fft2d:
    case StepKind::rfft2d: return data_step(s);
    case StepKind::rescale:
    case StepKind::table:
    case StepKind::int_binary:
    case StepKind::int_unary:
    case StepKind::int_clamp:
    case StepKind::int_reduce:
    case StepKind::int_argmax:
    case StepKind::select_any: return integer_step(s);
    }
    return {};
}

// ---- Integer tensor operators

bool Run::integer_tensor_step(const Step& s) const
{
    switch (s.kind) {
    case StepKind::matmul:
    case StepKind::conv2d:
    case StepKind::depthwise_conv2d:
    case StepKind::transpose_conv2d:
    case StepKind::conv3d:
    case StepKind::avg_pool2d:
    case StepKind::max_pool2d: {
        const tosa::DType data = plan_.values[s.inputs[0]].dtype;
        return data == tosa::DType::int16 ||
               (data == tosa::DType::int8 && s.kind != StepKind::max_pool2d);
    }
    default: return false;
    }
}

void Run::int_tensor_step(const Step& s)
{
    const std::byte* in = at(s.inputs[0]);
    std::byte* out = at(s.output);
    // Weights are INT8 values (INT4 ones were unpacked at load).
    const auto* weight = s.inputs.size() > 1 ? reinterpret_cast<const std::int8_t*>(at(s.inputs[1]))
                                             : nullptr;
    const std::byte* bias = s.inputs.size() > 2 ? at(s.inputs[2]) : nullptr;
    switch (s.kind) {
    case StepKind::matmul: {
        const Value& a = plan_.values[s.inputs[0]];
        matmul_int(in, at(s.inputs[1]), out, a.shape[0], a.shape[1], a.shape[2],
                   plan_.values[s.inputs[1]].shape[2], s.quant);
        break;
    }
    case StepKind::conv2d: conv2d_int(in, weight, bias, out, s.conv, s.quant); break;
    case StepKind::depthwise_conv2d:
        depthwise_conv2d_int(in, weight, bias, out, s.conv, s.quant);
        break;
    case StepKind::transpose_conv2d:
        transpose_conv2d_int(in, weight, bias, out, s.conv, s.quant);
        break;
    case StepKind::conv3d: conv3d_int(in, weight, bias, out, s.conv3d, s.quant); break;
    case StepKind::avg_pool2d: avg_pool2d_int(in, out, s.pool, s.quant); break;
    case StepKind::max_pool2d:
        max_pool2d(reinterpret_cast<const std::int16_t*>(in), reinterpret_cast<std::int16_t*>(out),
                   s.pool);
        break;
    default: break;
    }
}

// A division by zero or a shift amount outside the element's width: TOSA 1.0
// leaves the result unpredictable (REQUIRE); the submission fails instead.
Error Run::integer_error(const Step& s, const IntFault& fault) const
{
    const bool divide = fault.kind == IntFault::Kind::division_by_zero;
    const tosa::DType dtype = plan_.values[s.inputs[0]].dtype;
    const std::string what =
        divide ? fmt::format("element {} divides by zero; TOSA 1.0 INTDIV requires a non-zero "
                             "divisor",
                             fault.position)
               : fmt::format("element {} shifts by {}; TOSA 1.0 requires a shift of 0 to {} "
                             "for {}",
                             fault.position, fault.value, 8 * element_bytes(dtype) - 1,
                             tosa::dtype_name(dtype));
    const std::string_view name =
        divide ? "INTDIV"
        : s.integer.binary == IntBinary::arithmetic_right_shift ? "ARITHMETIC_RIGHT_SHIFT"
        : s.integer.binary == IntBinary::logical_left_shift     ? "LOGICAL_LEFT_SHIFT"
                                                                 : "LOGICAL_RIGHT_SHIFT";
    return Error::of(Errc::invalid_argument, VACCEL_D_EXECUTION, s.op_index, fault.position)
        .with_note(fmt::format("operator {} ({}): {}; nothing was written to the outputs: fix "
                               "the operand",
                               s.op_index, name, what));
}

Status Run::integer_step(const Step& s)
{
    const Value& out = plan_.values[s.output];
    const Value& in = plan_.values[s.inputs[0]];
    switch (s.kind) {
    case StepKind::rescale: {
        const std::uint64_t channels = in.shape.empty() ? 1 : in.shape.back();
        rescale(s.integer.rescale, in.dtype, at(s.inputs[0]), out.dtype, at(s.output),
                out.elements, channels);
        return {};
    }
    case StepKind::table:
        table(in.dtype, at(s.inputs[0]), at(s.inputs[1]), at(s.output), out.elements);
        return {};
    case StepKind::int_binary: {
        const IntFault fault = int_binary(s.integer, in.dtype, at(s.inputs[0]), in.shape,
                                          at(s.inputs[1]), shape(s.inputs[1]), at(s.output),
                                          out.shape);
        if (fault.kind != IntFault::Kind::none) return fail(integer_error(s, fault));
        return {};
    }
    case StepKind::int_unary:
        int_unary(s.integer, in.dtype, at(s.inputs[0]), at(s.output), out.elements);
        return {};
    case StepKind::int_clamp:
        int_clamp(s.integer, in.dtype, at(s.inputs[0]), at(s.output), out.elements);
        return {};
    case StepKind::int_reduce:
        int_reduce(s.integer.reduce, in.dtype, at(s.inputs[0]), in.shape, s.axis, at(s.output));
        return {};
    case StepKind::int_argmax:
        int_argmax(in.dtype, at(s.inputs[0]), in.shape, s.axis, i32(s.output));
        return {};
    case StepKind::select_any:
        select_elements(boolean(s.inputs[0]), in.shape, at(s.inputs[1]), shape(s.inputs[1]),
                        at(s.inputs[2]), shape(s.inputs[2]), at(s.output), out.shape,
                        element_bytes(out.dtype));
        return {};
    default: return {};
    }
}

// ---- Narrow floats (docs/adr/0011-narrow-floats-on-the-cpu.md) ---------

// FP32 working copies for steps on FP16, BF16 and FP8 values, one set per
// worker thread. The vectors only grow (to the largest step the thread has
// run), so after warm-up a run allocates nothing for them.
struct NarrowScratch {
    std::vector<float> floats;
    std::vector<std::uint32_t> values;  // the narrow values of the current step
    std::vector<std::byte*> homes;      // their own bytes, while redirected
};

NarrowScratch& narrow_scratch()
{
    thread_local NarrowScratch scratch;
    return scratch;
}

// Points every narrow operand at an FP32 copy of it and a narrow result at
// FP32 scratch, runs the FP32 step, narrows the result into its own bytes
// (round to nearest even, float_formats.hpp) and restores the pointers.
// Widening is exact, so data movement (TRANSPOSE, PAD, ...) keeps every
// value; the result of arithmetic is rounded once from its FP32 value.
Status Run::narrow_step(const Step& s)
{
    const Value& out = plan_.values[s.output];
    if (s.kind == StepKind::cast) {
        cast_narrow(plan_.values[s.inputs[0]].dtype, at(s.inputs[0]), out.dtype, at(s.output),
                    out.elements);
        return {};
    }
    NarrowScratch& scratch = narrow_scratch();
    scratch.values.clear();
    scratch.homes.clear();
    const auto take = [&](std::uint32_t v) {
        const bool seen = std::ranges::find(scratch.values, v) != scratch.values.end();
        if (is_narrow_float(plan_.values[v].dtype) && !seen) scratch.values.push_back(v);
    };
    for (std::uint32_t v : s.inputs) take(v);
    take(s.output);
    // One range per value, each from a multiple of 16 floats (64 bytes).
    const auto rounded = [](std::uint64_t n) { return (n + 15) / 16 * 16; };
    std::uint64_t total = 0;
    for (std::uint32_t v : scratch.values) total += rounded(plan_.values[v].elements);
    if (scratch.floats.size() < total) scratch.floats.resize(total);
    std::uint64_t offset = 0;
    for (std::uint32_t v : scratch.values) {
        float* wide = scratch.floats.data() + offset;
        offset += rounded(plan_.values[v].elements);
        if (v != s.output) widen(plan_.values[v].dtype, at(v), wide, plan_.values[v].elements);
        scratch.homes.push_back(pointers_[v]);
        pointers_[v] = reinterpret_cast<std::byte*>(wide);
    }
    Status done = step(s);
    for (std::size_t i = 0; i < scratch.values.size(); ++i) {
        const std::uint32_t v = scratch.values[i];
        if (v == s.output && done) narrow(out.dtype, f32(v), scratch.homes[i], out.elements);
        pointers_[v] = scratch.homes[i];
    }
    return done;
}

// GATHER and SCATTER refuse an index TOSA 1.0 leaves unpredictable (REQUIRE)
// rather than reading or writing outside the tensor.
Error Run::index_error(const Step& s, const IndexFault& fault) const
{
    const bool gather = s.kind == StepKind::gather;
    const std::int64_t k = plan_.values[s.inputs[0]].shape[1];
    std::string why = fault.kind == IndexFault::Kind::duplicate
                          ? fmt::format("index {} appears twice in batch {} (position {}); TOSA "
                                        "1.0 SCATTER requires each index at most once per batch",
                                        fault.index, fault.batch, fault.position)
                          : fmt::format("index {} at [{}, {}] is outside [0, {}); TOSA 1.0 {} "
                                        "requires 0 <= index < K",
                                        fault.index, fault.batch, fault.position, k,
                                        gather ? "GATHER" : "SCATTER");
    return Error::of(fault.kind == IndexFault::Kind::duplicate ? Errc::invalid_argument
                                                               : Errc::out_of_bounds,
                     VACCEL_D_EXECUTION, s.op_index,
                     static_cast<std::uint64_t>(static_cast<std::int64_t>(fault.index)))
        .with_note(fmt::format("operator {} ({}): {}; nothing was written to the outputs: fix the "
                               "indices input",
                               s.op_index, gather ? "GATHER" : "SCATTER", why));
}

Status Run::data_step(const Step& s)
{
    const Value& out = plan_.values[s.output];
    switch (s.kind) {
    case StepKind::gather: {
        const Value& values = plan_.values[s.inputs[0]];
        const Value& indices = plan_.values[s.inputs[1]];
        const IndexFault fault =
            gather(at(s.inputs[0]), reinterpret_cast<const std::int32_t*>(at(s.inputs[1])),
                   at(s.output), values.shape[0], values.shape[1], indices.shape[1],
                   values.shape[2], element_bytes(values.dtype));
        if (fault.kind != IndexFault::Kind::none) return fail(index_error(s, fault));
        return {};
    }
    case StepKind::scatter: {
        const Value& values = plan_.values[s.inputs[0]];
        const Value& indices = plan_.values[s.inputs[1]];
        const IndexFault fault =
            scatter(at(s.inputs[0]), reinterpret_cast<const std::int32_t*>(at(s.inputs[1])),
                    at(s.inputs[2]), at(s.output), values.shape[0], values.shape[1],
                    indices.shape[1], values.shape[2], element_bytes(values.dtype));
        if (fault.kind != IndexFault::Kind::none) return fail(index_error(s, fault));
        return {};
    }
    case StepKind::cast:
        cast(plan_.values[s.inputs[0]].dtype, at(s.inputs[0]), out.dtype, at(s.output),
             out.elements);
        return {};
    case StepKind::logical:
        logical(s.logical, boolean(s.inputs[0]), shape(s.inputs[0]), boolean(s.inputs[1]),
                shape(s.inputs[1]), boolean(s.output), out.shape);
        return {};
    case StepKind::logical_not:
        logical_not(boolean(s.inputs[0]), boolean(s.output), out.elements);
        return {};
    case StepKind::reduce_bool:
        reduce_bool(s.reduce_all, boolean(s.inputs[0]), shape(s.inputs[0]), s.axis,
                    boolean(s.output));
        return {};
    case StepKind::resize: resize(f32(s.inputs[0]), f32(s.output), s.resize); return {};
    case StepKind::fft2d:
        fft2d(f32(s.inputs[0]), f32(s.inputs[1]), f32(s.output), f32(s.output_imag),
              out.shape[0], out.shape[1], out.shape[2], s.inverse);
        return {};
    case StepKind::rfft2d: {
        const Value& in = plan_.values[s.inputs[0]];
        rfft2d(f32(s.inputs[0]), f32(s.output), f32(s.output_imag), in.shape[0], in.shape[1],
               in.shape[2]);
        return {};
    }
    default: return {};
    }
}

Status Run::bind_values()
{
    pointers_.resize(plan_.values.size());
    for (std::size_t v = 0; v < plan_.values.size(); ++v) {
        const Value& value = plan_.values[v];
        switch (value.home) {
        case Home::arena: pointers_[v] = context_.arena + value.offset; break;
        case Home::constant:
            // Kernels take mutable pointers; constants are only ever read.
            pointers_[v] = const_cast<std::byte*>(plan_.constants.data()) + value.offset;
            break;
        case Home::state: pointers_[v] = context_.variables[value.slot]; break;
        case Home::captured: pointers_[v] = captured_[value.slot]; break;
        case Home::slot: {
            std::byte* data = slots_[value.slot];
            if (!top_ || reinterpret_cast<std::uintptr_t>(data) % 4 == 0) {
                pointers_[v] = data;  // nested blocks' slots are arena values: aligned
                break;
            }
            auto& copy = realigned_.emplace_back(new (std::nothrow) std::byte[value.bytes + 4]);
            if (!copy)
                return fail(Error::of(Errc::out_of_memory, VACCEL_D_EXECUTION, 0)
                                .with_note("an input bound at an unaligned offset could not be "
                                           "copied"));
            std::memcpy(copy.get(), data, value.bytes);
            pointers_[v] = copy.get();
            break;
        }
        }
    }
    return {};
}

Status Run::execute()
{
    if (deadline_passed(submission_)) return fail(deadline_error("before it started running"));
    if (auto bound = bind_values(); !bound) return bound;
    for (const Step& s : plan_.steps) {
        if (deadline_passed(submission_))
            return fail(deadline_error(fmt::format("before operator {}", s.op_index)));
        try {
            if (auto done = s.narrow_float ? narrow_step(s) : step(s); !done) return done;
        } catch (const std::bad_alloc&) {
            return fail(Error::of(Errc::out_of_memory, VACCEL_D_EXECUTION, s.op_index)
                            .with_note(fmt::format("operator {} ran out of memory", s.op_index)));
        }
    }
    if (deadline_passed(submission_))
        return fail(deadline_error("before its outputs were written"));
    write_outputs();
    return {};
}

// Copies the staged outputs to the output slots. A nested block's output
// slots can be the very bytes its inputs are read from (a WHILE_LOOP body
// gets the loop values as both), and an output may be an input passed
// through: every source that overlaps some destination is copied aside
// first, so no output is copied from bytes an earlier one overwrote.
void Run::write_outputs()
{
    struct Copy {
        std::byte* to;
        const std::byte* from;
        std::uint64_t bytes;
    };
    SmallVector<Copy, VACCEL_MAX_BINDINGS> copies;
    for (std::uint32_t slot = plan_.input_count; slot < plan_.slots.size(); ++slot) {
        const std::uint32_t value = plan_.slot_values[slot];
        copies.push_back({slots_[slot], at(value), plan_.values[value].bytes});
    }
    std::vector<std::vector<std::byte>> aside;
    if (!top_) {
        const auto overlaps = [](const Copy& a, const std::byte* p, std::uint64_t n) {
            return a.to < p + n && p < a.to + a.bytes;
        };
        for (Copy& copy : copies) {
            const bool clobbered = std::ranges::any_of(copies, [&](const Copy& other) {
                return &other != &copy && overlaps(other, copy.from, copy.bytes);
            });
            if (!clobbered) continue;
            aside.emplace_back(copy.from, copy.from + copy.bytes);
            copy.from = aside.back().data();
        }
    }
    for (const Copy& copy : copies)
        if (copy.to != copy.from) std::memcpy(copy.to, copy.from, copy.bytes);
}

Status Run::run_block(const BlockCall& call, std::span<std::byte* const> slots)
{
    const Plan& block = context_.program.nested[call.block];
    std::vector<std::byte*> captured;
    captured.reserve(call.captures.size());
    for (std::uint32_t value : call.captures) captured.push_back(at(value));
    return Run(context_, block, slots, captured, false).execute();
}

// COND_IF: the condition picks then (calls[0]) or else (calls[1]); the block
// reads the other operands and writes the results.
Status Run::cond_if(const Step& s)
{
    std::vector<std::byte*> slots;
    for (std::size_t i = 1; i < s.inputs.size(); ++i) slots.push_back(at(s.inputs[i]));
    for (std::uint32_t value : s.results) slots.push_back(at(value));
    return run_block(s.calls[*boolean(s.inputs[0]) != 0 ? 0 : 1], slots);
}

// WHILE_LOOP: the results hold the loop values. The condition block
// (calls[0]) reads them into one BOOL; while it is true the body (calls[1])
// reads them and writes their next values over them. The deadline is checked
// before every iteration: a loop that does not end is ended by it.
Status Run::while_loop(const Step& s)
{
    for (std::size_t i = 0; i < s.results.size(); ++i)
        if (at(s.results[i]) != at(s.inputs[i]))
            std::memcpy(at(s.results[i]), at(s.inputs[i]), plan_.values[s.results[i]].bytes);
    std::vector<std::byte*> loop;
    for (std::uint32_t value : s.results) loop.push_back(at(value));
    std::uint8_t more = 0;
    std::vector<std::byte*> cond_slots = loop;
    cond_slots.push_back(reinterpret_cast<std::byte*>(&more));
    std::vector<std::byte*> body_slots = loop;
    body_slots.insert(body_slots.end(), loop.begin(), loop.end());
    for (std::uint64_t iteration = 0;; ++iteration) {
        if (deadline_passed(submission_))
            return fail(deadline_error(fmt::format("in iteration {} of operator {} (WHILE_LOOP)",
                                                   iteration, s.op_index)));
        if (auto checked = run_block(s.calls[0], cond_slots); !checked) return checked;
        if (more == 0) return {};
        if (auto ran = run_block(s.calls[1], body_slots); !ran) return ran;
    }
}

// Runs a TOSA program: an arena from the program's pool, and for a program
// with variables, this run's copy of them. Runs of one program with
// variables are serialized on its state mutex; the copy is committed only
// when the run succeeds, so a failed or expired run changes no state.
Status run_program(Submission& submission)
{
    ProgramState& program = *submission.program;
    const Plan& plan = *program.plan;
    if (deadline_passed(submission)) return fail(deadline_error("before it started running"));
    Lease arena(*program.arenas);
    if (!arena.get())
        return fail(Error::of(Errc::out_of_memory, VACCEL_D_EXECUTION, 0)
                        .with_note(fmt::format("the {}-byte working arena could not be allocated",
                                               plan.arena_bytes)));
    RunContext context{submission, plan, arena.get(), {}};
    std::unique_lock<std::mutex> state;
    std::vector<std::vector<std::byte>> working;
    if (!plan.variables.empty()) {
        state = std::unique_lock(program.state_mutex);
        working = program.variables;
        for (auto& bytes : working) context.variables.push_back(bytes.data());
    }
    Status outcome = Run(context, plan, submission.slot_data, {}, true).execute();
    if (outcome && !plan.variables.empty()) program.variables = std::move(working);
    return outcome;
}

}  // namespace

void run_submission(Submission& submission)
{
    // Cancelled or ended by a device loss while queued: nothing to do.
    if (!submission.move(Submission::Phase::queued, Submission::Phase::running))
        return;
    if (submission.backend->lost.load(std::memory_order_acquire)) {
        finish(submission, EventState::failed, device_lost_error(submission.backend->info));
        return;
    }
    Status outcome;
    if (submission.kernel) {
        outcome = run_kernel(*submission.kernel, submission.deadline_ns);
    } else {
        const auto started = std::chrono::steady_clock::now();
        outcome = run_program(submission);
        const auto took = std::chrono::steady_clock::now() - started;
        if (outcome)
            submission.program->last_run_ns.store(
                static_cast<std::uint64_t>(
                    std::chrono::duration_cast<std::chrono::nanoseconds>(took).count()),
                std::memory_order_relaxed);
    }
    if (outcome)
        finish(submission, EventState::complete);
    else
        finish(submission, EventState::failed, std::move(outcome.error()));
}

}  // namespace vaccel::backend::cpu
