// program_ops.cpp - PROGRAM_LOAD, PROGRAM_UNLOAD, PROGRAM_SLOT.
//
// Owns nothing beyond the handlers. Decides: an artifact larger than the
// context's effective max_artifact_bytes is refused before the backend
// parses it (ResourceLimit, VACCEL_LIMIT_ARTIFACT_BYTES, arg0 = the limit,
// arg1 = the artifact's size); admission itself (format, target, operators)
// is the backend's. A program's own device memory (its arena) counts against
// the client's memory limit like a buffer's: the backend is told what the
// limit has left and refuses a program needing more before allocating it;
// the engine then charges what the program holds (Program::device_bytes) and
// gives it back at unload. A slot index past the program's slots is InvalidArgument
// with VACCEL_D_BAD_VALUE (arg0 = the field id of `slot`, arg1 = the index).
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

#include "ops.hpp"

namespace vaccel::engine::ops {

Status program_load_admits(SessionState& state, const vaccel_program_load& args)
{
    auto found = state.lookup<ContextRecord>(args.context);
    if (!found)
        return fail(std::move(found.error()));
    ContextRecord& context = **found;
    if (auto ok = context.device->usable(); !ok)
        return ok;
    const vaccel_device_limits limits = context.accounting->limits();
    if (args.payload_bytes > limits.max_artifact_bytes)
        return fail(Error::limit_hit(VACCEL_LIMIT_ARTIFACT_BYTES, limits.max_artifact_bytes,
                                     args.payload_bytes));
    return {};
}

Status program_load(SessionState& state, vaccel_program_load& args,
                    std::span<const std::byte> artifact)
{
    auto found = state.lookup<ContextRecord>(args.context);
    if (!found)
        return fail(std::move(found.error()));
    ContextRecord& context = **found;
    Accounting& accounting = *context.accounting;
    if (auto ok = context.device->usable(); !ok)
        return ok;

    const vaccel_device_limits limits = accounting.limits();
    if (args.payload_bytes > limits.max_artifact_bytes)
        return fail(Error::limit_hit(VACCEL_LIMIT_ARTIFACT_BYTES, limits.max_artifact_bytes,
                                     args.payload_bytes));
    if (auto handle = state.reserve_handle(); !handle)
        return handle;
    auto charge = accounting.reserve(Resource::programs, 1);
    if (!charge)
        return fail(std::move(charge.error()));

    backend::ProgramDesc desc;
    desc.format = args.format;
    desc.target = args.target;
    desc.payload = artifact;
    // What this context and its tenant may still take, whichever is less.
    desc.memory_budget = accounting.room(Resource::memory_bytes);
    // Compiling takes the session lock only, never the device's: other
    // sessions keep using the device meanwhile (device_manager.hpp).
    auto program = context.device->load(*context.object, desc);
    if (!program)
        return fail(std::move(program.error()));
    // Charged now; another call of the session may have taken memory since
    // the budget was read, so this can still be refused (and the program
    // unloaded).
    const std::uint64_t device_bytes = (*program)->device_bytes();
    auto memory_charge = accounting.reserve(Resource::memory_bytes, device_bytes);
    if (!memory_charge) {
        (void)context.device->call([&](backend::Backend& b) { return b.unload_program(*program); });
        return fail(std::move(memory_charge.error()));
    }

    const auto slots = (*program)->slots();
    const std::uint32_t inputs = (*program)->input_count();
    ProgramRecord record;
    record.owner = &context;
    record.context = args.context;
    record.object = std::move(*program);
    record.charged_bytes = device_bytes;
    auto handle = state.insert(std::move(record));  // cannot fail: reserve_handle() passed
    charge->commit();
    memory_charge->commit();
    ++context.children;
    args.program = *handle;
    args.input_count = inputs;
    args.output_count = static_cast<std::uint32_t>(slots.size()) - inputs;
    return {};
}

Status program_unload(SessionState& state, vaccel_handle_release& args)
{
    auto found = state.lookup<ProgramRecord>(args.handle);
    if (!found)
        return fail(std::move(found.error()));
    ProgramRecord& program = **found;
    ContextRecord& context = *program.owner;
    auto released = context.device->call(
        [&](backend::Backend& b) { return b.unload_program(program.object); });
    if (!released)
        return released;  // Busy: a submission in flight runs it; the handle stays valid
    context.accounting->release(Resource::programs, 1);
    context.accounting->release(Resource::memory_bytes, program.charged_bytes);
    --context.children;
    state.erase<ProgramRecord>(args.handle);
    return {};
}

Status program_slot(SessionState& state, vaccel_program_slot& args)
{
    auto found = state.lookup<ProgramRecord>(args.program);
    if (!found)
        return fail(std::move(found.error()));
    // Slot descriptions are immutable once loaded: no backend call needed.
    const auto slots = (*found)->object->slots();
    if (args.slot >= slots.size())
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                              offsetof(vaccel_program_slot, slot), args.slot)
                        .with_note("the program has " + std::to_string(slots.size()) + " slots"));
    const backend::SlotInfo& slot = slots[args.slot];
    args.role = slot.role;
    args.dtype = slot.dtype;
    args.rank = static_cast<std::uint32_t>(slot.shape.size());
    for (std::size_t i = 0; i < VACCEL_MAX_RANK; ++i)
        args.shape[i] = i < slot.shape.size() ? slot.shape[i] : 0;
    args.bytes = slot.bytes;
    const std::size_t length = std::min(slot.name.size(), std::size_t{VACCEL_NAME_LEN - 1});
    std::memcpy(args.name, slot.name.data(), length);
    args.name[length] = '\0';
    return {};
}

}  // namespace vaccel::engine::ops
