// execute.cpp - running one accepted submission on a worker thread.
//
// Decides the deadline semantics: the deadline is checked before the first
// operator, before every operator and once more before the outputs are
// copied. Every operator writes only the run's arena; output slots are
// written in one final copy after the last check, so a submission that ends
// DeadlineExpired has written nothing to its output buffers. A failure after
// acceptance (deadline, out of memory, a GATHER/SCATTER index outside the
// tensor or repeated, which TOSA 1.0 leaves unpredictable) ends the event
// failed with that error.
// Values are addressed by byte (plan.hpp); each step views them as the
// element type its kernel takes (float, BOOL bytes, int32, int8).
#include <fmt/format.h>

#include <cstring>
#include <memory>
#include <new>

#include "builtin_kernels.hpp"
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

class Run {
public:
    explicit Run(Submission& submission)
        : submission_(submission), plan_(*submission.program->plan)
    {
    }

    Status execute();

private:
    std::byte* at(std::uint32_t value) const { return pointers_[value]; }
    float* f32(std::uint32_t value) const { return reinterpret_cast<float*>(pointers_[value]); }
    std::uint8_t* boolean(std::uint32_t value) const
    {
        return reinterpret_cast<std::uint8_t*>(pointers_[value]);
    }
    Shape shape(std::uint32_t value) const { return plan_.values[value].shape; }
    Status step(const Step& step);
    Status data_step(const Step& step);
    Error index_error(const Step& step, const IndexFault& fault) const;

    Submission& submission_;
    const Plan& plan_;
    // An arena of the program's pool, given back when the run ends.
    class Lease {
    public:
        Lease() = default;
        explicit Lease(ArenaPool& pool) : pool_(&pool), arena_(pool.take()) {}
        Lease(Lease&& other) noexcept = default;
        Lease& operator=(Lease&& other) noexcept
        {
            release();
            pool_ = other.pool_;
            arena_ = std::move(other.arena_);
            return *this;
        }
        ~Lease() { release(); }
        std::byte* get() const { return arena_.get(); }

    private:
        void release()
        {
            if (pool_ && arena_) pool_->give(std::move(arena_));
        }
        ArenaPool* pool_ = nullptr;
        ArenaPool::Arena arena_;
    };
    Lease arena_;
    std::vector<std::byte*> pointers_;  // per value
    std::vector<std::unique_ptr<std::byte[]>> realigned_;  // inputs bound at unaligned offsets
};

Status Run::step(const Step& s)
{
    const Value& out = plan_.values[s.output];
    float* output = f32(s.output);
    switch (s.kind) {
    case StepKind::binary:
        binary(s.binary, f32(s.inputs[0]), shape(s.inputs[0]), f32(s.inputs[1]),
               shape(s.inputs[1]), output, out.shape, s.nan_propagate);
        break;
    case StepKind::compare:
        compare(s.compare, f32(s.inputs[0]), shape(s.inputs[0]), f32(s.inputs[1]),
                shape(s.inputs[1]), boolean(s.output), out.shape);
        break;
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
        transpose(f32(s.inputs[0]), shape(s.inputs[0]), s.perms, output);
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
    case StepKind::concat: {
        std::vector<const float*> inputs;
        std::vector<Shape> shapes;
        for (std::uint32_t v : s.inputs) {
            inputs.push_back(f32(v));
            shapes.push_back(shape(v));
        }
        concat(inputs, shapes, s.axis, output);
        break;
    }
    case StepKind::slice:
        slice(f32(s.inputs[0]), shape(s.inputs[0]), s.start, output, out.shape);
        break;
    case StepKind::pad:
        pad(f32(s.inputs[0]), shape(s.inputs[0]), s.start, s.pad_value, output, out.shape);
        break;
    case StepKind::tile: tile(f32(s.inputs[0]), shape(s.inputs[0]), output, out.shape); break;
    case StepKind::reverse:
        reverse(f32(s.inputs[0]), shape(s.inputs[0]), s.axis, output);
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
    }
    return {};
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

Status Run::execute()
{
    if (deadline_passed(submission_)) return fail(deadline_error("before it started running"));

    arena_ = Lease(*submission_.program->arenas);
    if (!arena_.get())
        return fail(Error::of(Errc::out_of_memory, VACCEL_D_EXECUTION, 0)
                        .with_note(fmt::format("the {}-byte working arena could not be allocated",
                                               plan_.arena_bytes)));
    pointers_.resize(plan_.values.size());
    for (std::size_t v = 0; v < plan_.values.size(); ++v) {
        const Value& value = plan_.values[v];
        switch (value.home) {
        case Home::arena: pointers_[v] = arena_.get() + value.offset; break;
        case Home::constant:
            // Kernels take mutable pointers; constants are only ever read.
            pointers_[v] = const_cast<std::byte*>(plan_.constants.data()) + value.offset;
            break;
        case Home::slot: {
            std::byte* data = submission_.slot_data[value.slot];
            if (reinterpret_cast<std::uintptr_t>(data) % 4 == 0) {
                pointers_[v] = data;
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

    for (const Step& s : plan_.steps) {
        if (deadline_passed(submission_))
            return fail(deadline_error(fmt::format("before operator {}", s.op_index)));
        try {
            if (auto done = step(s); !done) return done;
        } catch (const std::bad_alloc&) {
            return fail(Error::of(Errc::out_of_memory, VACCEL_D_EXECUTION, s.op_index)
                            .with_note(fmt::format("operator {} ran out of memory", s.op_index)));
        }
    }
    if (deadline_passed(submission_))
        return fail(deadline_error("before its outputs were written"));

    for (std::uint32_t slot = plan_.input_count; slot < plan_.slots.size(); ++slot) {
        const Value& value = plan_.values[plan_.slot_values[slot]];
        std::memcpy(submission_.slot_data[slot], at(plan_.slot_values[slot]), value.bytes);
    }
    return {};
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
    Status outcome = submission.kernel ? run_kernel(*submission.kernel, submission.deadline_ns)
                                       : Run(submission).execute();
    if (outcome)
        finish(submission, EventState::complete);
    else
        finish(submission, EventState::failed, std::move(outcome.error()));
}

}  // namespace vaccel::backend::cpu
