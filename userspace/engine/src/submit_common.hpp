// submit_common.hpp - the steps SUBMIT, SUBMIT_AFTER and LAUNCH share.
//
// Owns nothing. Each step is one stage of the order submit_ops.cpp documents;
// callers hold the session lock.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "session_state.hpp"
#include "vaccel/common/recycling.hpp"
#include "vaccel/common/small_vector.hpp"
#include "vaccel/common/validation.hpp"

namespace vaccel::engine::ops {

// The queue and program of a submission, and their (shared) context.
// Bindings and what is checked of them: inline up to the wire's bound.
using Bindings = SmallVector<backend::Binding, VACCEL_MAX_BINDINGS>;
using BindingFactsList = SmallVector<validate::BindingFacts, VACCEL_MAX_BINDINGS>;
using SlotSpecs = SmallVector<validate::SlotSpec, VACCEL_MAX_BINDINGS>;
using WireBindings = SmallVector<vaccel_binding, VACCEL_MAX_BINDINGS>;

struct Target {
    QueueRecord* queue = nullptr;
    ProgramRecord* program = nullptr;
    ContextRecord* context = nullptr;
};

// Stage 1: handles known, same context, device usable.
Result<Target> resolve_target(SessionState& state, std::uint64_t queue, std::uint64_t program);
// Stage 3: deadline honoured by the device.
Status check_deadline(const Target& target, std::uint64_t deadline_ns);
// Stages 4-5: count within the effective limit, buffers known and the
// context's.
Status resolve_bindings(SessionState& state, const Target& target,
                        std::span<const vaccel_binding> wire, Bindings& bindings);
// The facts validate::bindings/launch_bindings need; buffers are identified
// by their handles, so refusals name handles.
BindingFactsList binding_facts(std::span<const backend::Binding> bindings,
                               std::span<const vaccel_binding> wire);
// Stage 7: a handle is available and one event is charged.
Result<Charge> charge_event(SessionState& state, const Target& target);
// After the backend answered: a refusal (buffers named by handle) or the
// event recorded, its handle in event_out, the charge committed; an
// indeterminate acceptance returns its error with arg0 = the handle.
Status record_event(SessionState& state, const Target& target, Charge& charge,
                    Result<backend::Submitted> submitted, std::shared_ptr<EventWatch> watch,
                    std::span<const backend::Binding> bindings,
                    std::span<const vaccel_binding> wire, __u64& event_out);

// Stage 7 and the hand-over, for a SubmitDesc or LaunchDesc filled but for
// its sink: charges the event, gives the work the event's watch, makes
// `call` (the backend's submit or launch) under the device's serialisation
// and records the outcome.
template <class Desc, class Call>
Status hand_over(SessionState& state, const Target& target, Desc& desc, Call call,
                 std::span<const backend::Binding> bindings, std::span<const vaccel_binding> wire,
                 __u64& event_out)
{
    auto charge = charge_event(state, target);
    if (!charge)
        return fail(std::move(charge.error()));
    auto watch = std::allocate_shared<EventWatch>(Recycling<EventWatch>{}, state.completion_listener);
    desc.sink = watch;
    auto submitted = target.context->device->call([&](backend::Backend& b) { return call(b, desc); });
    return record_event(state, target, *charge, std::move(submitted), std::move(watch), bindings,
                        wire, event_out);
}

}  // namespace vaccel::engine::ops
