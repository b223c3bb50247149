// execute.cpp - running one accepted submission on a worker thread.
//
// Decides the deadline semantics: the deadline is checked before the first
// operator, before every operator and once more before the outputs are
// copied. Every operator writes only the per-run arena; output slots are
// written in one final copy after the last check, so a submission that ends
// DeadlineExpired has written nothing to its output buffers. A failure after
// acceptance (deadline, out of memory) ends the event failed with that error.
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
    float* at(std::uint32_t value) const { return pointers_[value]; }
    void step(const Step& step);

    Submission& submission_;
    const Plan& plan_;
    std::unique_ptr<float[]> arena_;
    std::vector<float*> pointers_;  // per value
    std::vector<std::unique_ptr<float[]>> realigned_;  // inputs bound at offsets not float-aligned
};

void Run::step(const Step& s)
{
    const Value& out = plan_.values[s.output];
    float* output = at(s.output);
    switch (s.kind) {
    case StepKind::add:
    case StepKind::sub:
    case StepKind::mul: {
        const Binary op = s.kind == StepKind::add   ? Binary::add
                          : s.kind == StepKind::sub ? Binary::sub
                                                    : Binary::mul;
        const Value& a = plan_.values[s.inputs[0]];
        const Value& b = plan_.values[s.inputs[1]];
        binary(op, at(s.inputs[0]), a.shape, at(s.inputs[1]), b.shape, output, out.shape);
        break;
    }
    case StepKind::matmul: {
        const Value& a = plan_.values[s.inputs[0]];
        const Value& b = plan_.values[s.inputs[1]];
        matmul(at(s.inputs[0]), at(s.inputs[1]), output, a.shape[0], a.shape[1], a.shape[2],
               b.shape[2]);
        break;
    }
    case StepKind::copy:
        std::memcpy(output, at(s.inputs[0]), out.elements * sizeof(float));
        break;
    case StepKind::transpose:
        transpose(at(s.inputs[0]), plan_.values[s.inputs[0]].shape, s.perms, output);
        break;
    case StepKind::clamp:
        clamp(at(s.inputs[0]), output, out.elements, s.min, s.max, s.nan_propagate);
        break;
    case StepKind::sigmoid: unary(Unary::sigmoid, at(s.inputs[0]), output, out.elements); break;
    case StepKind::tanh: unary(Unary::tanh, at(s.inputs[0]), output, out.elements); break;
    case StepKind::reduce_sum:
        reduce_sum(at(s.inputs[0]), plan_.values[s.inputs[0]].shape, s.axis, output);
        break;
    case StepKind::conv2d:
        conv2d(at(s.inputs[0]), at(s.inputs[1]), at(s.inputs[2]), output, s.conv);
        break;
    }
}

Status Run::execute()
{
    if (deadline_passed(submission_)) return fail(deadline_error("before it started running"));

    arena_.reset(new (std::nothrow) float[plan_.arena_floats == 0 ? 1 : plan_.arena_floats]);
    if (!arena_)
        return fail(Error::of(Errc::out_of_memory, VACCEL_D_EXECUTION, 0)
                        .with_note(fmt::format("the {}-byte working arena could not be allocated",
                                               plan_.arena_floats * sizeof(float))));
    pointers_.resize(plan_.values.size());
    for (std::size_t v = 0; v < plan_.values.size(); ++v) {
        const Value& value = plan_.values[v];
        switch (value.home) {
        case Home::arena: pointers_[v] = arena_.get() + value.offset; break;
        case Home::constant:
            // Kernels take float*; constants are only ever read.
            pointers_[v] = const_cast<float*>(plan_.constants.data()) + value.offset;
            break;
        case Home::slot: {
            std::byte* data = submission_.slot_data[value.slot];
            if (reinterpret_cast<std::uintptr_t>(data) % alignof(float) == 0) {
                pointers_[v] = reinterpret_cast<float*>(data);
                break;
            }
            auto& copy = realigned_.emplace_back(new (std::nothrow) float[value.elements + 1]);
            if (!copy)
                return fail(Error::of(Errc::out_of_memory, VACCEL_D_EXECUTION, 0)
                                .with_note("an input bound at an unaligned offset could not be "
                                           "copied"));
            std::memcpy(copy.get(), data, value.elements * sizeof(float));
            pointers_[v] = copy.get();
            break;
        }
        }
    }

    for (const Step& s : plan_.steps) {
        if (deadline_passed(submission_))
            return fail(deadline_error(fmt::format("before operator {}", s.op_index)));
        try {
            step(s);
        } catch (const std::bad_alloc&) {
            return fail(Error::of(Errc::out_of_memory, VACCEL_D_EXECUTION, s.op_index)
                            .with_note(fmt::format("operator {} ran out of memory", s.op_index)));
        }
    }
    if (deadline_passed(submission_))
        return fail(deadline_error("before its outputs were written"));

    for (std::uint32_t slot = plan_.input_count; slot < plan_.slots.size(); ++slot) {
        const Value& value = plan_.values[plan_.slot_values[slot]];
        std::memcpy(submission_.slot_data[slot], at(plan_.slot_values[slot]),
                    value.elements * sizeof(float));
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
