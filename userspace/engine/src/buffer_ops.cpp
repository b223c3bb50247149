// buffer_ops.cpp - BUFFER_ALLOC, BUFFER_FREE, BUFFER_WRITE, BUFFER_READ.
//
// Owns nothing beyond the handlers. Decides:
//  - a buffer request is validated against the device with the context's
//    EFFECTIVE limits (max_buffer_bytes may be narrowed by policy), then the
//    context is charged one buffer and the requested bytes rounded up to
//    the requested alignment (the real allocation size is only known after
//    the backend call, and a check must come before it; validation caps the
//    alignment at VACCEL_MAX_ALIGNMENT, so the rounding cannot overflow).
//  - transfers go straight to the backend, which refuses Busy while a
//    submission binds the buffer and checks range and usage.
//  - BUFFER_MAP asks the backend for the buffer's shareable memory; Device
//    buffers are refused before the backend is asked.
#include "ops.hpp"

#include "vaccel/common/validation.hpp"

namespace vaccel::engine::ops {

Status buffer_alloc(SessionState& state, vaccel_buffer_alloc& args)
{
    auto found = state.lookup<ContextRecord>(args.context);
    if (!found)
        return fail(std::move(found.error()));
    ContextRecord& context = **found;
    if (auto ok = context.device->usable(); !ok)
        return ok;
    Accounting& accounting = *context.accounting;

    vaccel_device_info device = context.device->info();
    device.limits = accounting.limits();
    if (auto valid = validate::buffer_desc(device, args.bytes, args.alignment, args.domain,
                                           args.usage, args.access);
        !valid)
        return valid;
    if (auto handle = state.reserve_handle(); !handle)
        return handle;
    auto buffer_charge = accounting.reserve(Resource::buffers, 1);
    if (!buffer_charge)
        return fail(std::move(buffer_charge.error()));
    const std::uint64_t granule = args.alignment == 0 ? 1 : args.alignment;
    const std::uint64_t charged = (args.bytes + granule - 1) / granule * granule;
    auto memory_charge = accounting.reserve(Resource::memory_bytes, charged);
    if (!memory_charge)
        return fail(std::move(memory_charge.error()));

    backend::BufferDesc desc;
    desc.bytes = args.bytes;
    desc.alignment = args.alignment;
    desc.domain = args.domain;
    desc.usage = args.usage;
    desc.access = args.access;
    backend::BufferInfo info;
    auto buffer = context.device->call([&](backend::Backend& b) {
        return b.allocate_buffer(*context.object, desc, info);
    });
    if (!buffer)
        return fail(std::move(buffer.error()));

    BufferRecord record;
    record.owner = &context;
    record.context = args.context;
    record.object = std::move(*buffer);
    record.charged_bytes = charged;
    auto handle = state.insert(std::move(record));  // cannot fail: reserve_handle() passed
    buffer_charge->commit();
    memory_charge->commit();
    ++context.children;
    args.buffer = *handle;
    args.allocation_bytes = info.allocation_bytes;
    args.measured_alignment = info.measured_alignment;
    args.properties = info.properties;
    return {};
}

Status buffer_free(SessionState& state, vaccel_handle_release& args)
{
    auto found = state.lookup<BufferRecord>(args.handle);
    if (!found)
        return fail(std::move(found.error()));
    BufferRecord& buffer = **found;
    ContextRecord& context = *buffer.owner;
    auto released =
        context.device->call([&](backend::Backend& b) { return b.free_buffer(buffer.object); });
    if (!released)  // Busy: still bound by a submission in flight; the handle stays valid
        return fail(name_buffer(std::move(released.error()), buffer.object.get(), args.handle));
    context.accounting->release(Resource::buffers, 1);
    context.accounting->release(Resource::memory_bytes, buffer.charged_bytes);
    --context.children;
    state.erase<BufferRecord>(args.handle);
    return {};
}

Status buffer_write(SessionState& state, vaccel_buffer_transfer& args,
                    std::span<const std::byte> data)
{
    auto found = state.lookup<BufferRecord>(args.buffer);
    if (!found)
        return fail(std::move(found.error()));
    BufferRecord& buffer = **found;
    if (auto ok = buffer.owner->device->usable(); !ok)
        return ok;
    auto written = buffer.owner->device->call(
        [&](backend::Backend& b) { return b.write_buffer(*buffer.object, args.offset, data); });
    if (!written)
        return fail(name_buffer(std::move(written.error()), buffer.object.get(), args.buffer));
    return {};
}

Status buffer_transfer_admits(SessionState& state, const vaccel_buffer_transfer& args)
{
    auto found = state.lookup<BufferRecord>(args.buffer);
    if (!found)
        return fail(std::move(found.error()));
    BufferRecord& buffer = **found;
    if (auto ok = buffer.owner->device->usable(); !ok)
        return ok;
    if (auto end = validate::range(buffer.object->desc().bytes, args.offset, args.length); !end)
        return fail(std::move(end.error()));
    return {};
}

Status buffer_read(SessionState& state, vaccel_buffer_transfer& args, std::span<std::byte> data)
{
    auto found = state.lookup<BufferRecord>(args.buffer);
    if (!found)
        return fail(std::move(found.error()));
    BufferRecord& buffer = **found;
    if (auto ok = buffer.owner->device->usable(); !ok)
        return ok;
    auto read = buffer.owner->device->call(
        [&](backend::Backend& b) { return b.read_buffer(*buffer.object, args.offset, data); });
    if (!read)
        return fail(name_buffer(std::move(read.error()), buffer.object.get(), args.buffer));
    return {};
}

Status buffer_map(SessionState& state, vaccel_buffer_map& args, backend::MappableMemory* memory)
{
    auto found = state.lookup<BufferRecord>(args.buffer);
    if (!found)
        return fail(std::move(found.error()));
    BufferRecord& buffer = **found;
    const backend::BufferDesc& desc = buffer.object->desc();
    if (desc.domain == VACCEL_DOMAIN_DEVICE)
        return fail(Error::of(Errc::incompatible, VACCEL_D_DOMAIN, args.buffer, desc.domain));
    auto mapped = buffer.owner->device->call(
        [&](backend::Backend& b) { return b.map_buffer(*buffer.object); });
    if (!mapped)
        return fail(name_buffer(std::move(mapped.error()), buffer.object.get(), args.buffer));
    // The mapping is charged nothing: the buffer's bytes were charged at
    // allocation and count once, mapped or not.
    args.map_offset = mapped->offset;
    args.map_bytes = desc.bytes;
    if (memory != nullptr)
        *memory = *mapped;
    return {};
}

}  // namespace vaccel::engine::ops
