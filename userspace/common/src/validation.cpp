// validation.cpp - the shared argument rules (see validation.hpp for the order).
//
// Field ids in D_BAD_VALUE refusals are byte offsets in the uapi struct the
// value came from (vaccel_buffer_alloc for buffer descriptors, vaccel_binding
// and vaccel_submit for bindings), as requests.hpp defines them.
#include "vaccel/common/validation.hpp"

#include <cstddef>
#include <cstring>
#include <string>

namespace vaccel::validate {
namespace {

constexpr bool is_power_of_two(std::uint64_t value) { return value != 0 && (value & (value - 1)) == 0; }

// The memory capability a domain needs from the device.
std::uint32_t domain_capability(std::uint32_t domain)
{
    switch (domain) {
    case VACCEL_DOMAIN_HOST: return VACCEL_MEM_HOST_VISIBLE;
    case VACCEL_DOMAIN_DEVICE: return VACCEL_MEM_DEVICE_LOCAL;
    case VACCEL_DOMAIN_SHARED: return VACCEL_MEM_SHARED;
    }
    return 0;
}

std::uint32_t access_for_role(std::uint32_t role)
{
    switch (role) {
    case VACCEL_SLOT_INPUT: return VACCEL_ACCESS_READ;
    case VACCEL_SLOT_OUTPUT: return VACCEL_ACCESS_WRITE;
    }
    return 0;  // an unknown role admits no access
}

std::unexpected<Error> bad_binding_value(std::size_t field, std::uint64_t value, std::size_t index)
{
    return fail(Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE, field, value)
                    .with_note("binding " + std::to_string(index)));
}

}  // namespace

Status buffer_desc(const vaccel_device_info& device, std::uint64_t bytes, std::uint64_t alignment,
                   std::uint32_t domain, std::uint32_t usage, std::uint32_t access)
{
    if (bytes == 0)
        return fail(Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                    offsetof(vaccel_buffer_alloc, bytes), 0);
    if (bytes > device.limits.max_buffer_bytes)
        return fail(Error::limit_hit(VACCEL_LIMIT_BUFFER_BYTES, device.limits.max_buffer_bytes,
                                     bytes));
    if (alignment != 0 && (!is_power_of_two(alignment) || alignment > VACCEL_MAX_ALIGNMENT))
        return fail(Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                    offsetof(vaccel_buffer_alloc, alignment), alignment);
    const std::uint32_t needed = domain_capability(domain);
    if (needed == 0)
        return fail(Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                    offsetof(vaccel_buffer_alloc, domain), domain);
    if ((device.memory_caps & needed) == 0)
        return fail(Errc::unsupported, VACCEL_D_BAD_VALUE, offsetof(vaccel_buffer_alloc, domain),
                    domain);
    if (usage == 0 || (usage & ~std::uint32_t{VACCEL_USAGE_ALL}) != 0)
        return fail(Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                    offsetof(vaccel_buffer_alloc, usage), usage);
    if (access == 0 || (access & ~std::uint32_t{VACCEL_ACCESS_RW}) != 0)
        return fail(Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                    offsetof(vaccel_buffer_alloc, access), access);
    return {};
}

Result<std::uint64_t> range(std::uint64_t size, std::uint64_t offset, std::uint64_t length)
{
    if (length == 0)
        return fail(Errc::invalid_argument, VACCEL_D_RANGE, offset, 0);
    // offset + length > size, without computing offset + length first.
    if (offset > size || length > size - offset)
        return fail(Errc::out_of_bounds, VACCEL_D_RANGE, offset, length);
    return offset + length;
}

namespace {

// The checks of one binding against its buffer, shared by submit and launch.
Status binding_buffer(const BindingFacts& b, std::size_t i)
{
    if ((b.access & ~b.buffer_access) != 0)
        return fail(Errc::permission_denied, VACCEL_D_ACCESS, b.access, b.buffer_access);
    if ((b.buffer_usage & VACCEL_USAGE_STORAGE) == 0)
        return fail(Errc::permission_denied, VACCEL_D_USAGE, VACCEL_USAGE_STORAGE,
                    b.buffer_usage);
    if (auto end = range(b.buffer_bytes, b.offset, b.bytes); !end)
        return fail(std::move(end.error()).with_note("binding " + std::to_string(i)));
    return {};
}

Status no_written_alias(std::span<const BindingFacts> bindings)
{
    for (std::size_t i = 1; i < bindings.size(); ++i) {
        for (std::size_t j = 0; j < i; ++j) {
            if (bindings[j].buffer == bindings[i].buffer &&
                ((bindings[i].access & VACCEL_ACCESS_WRITE) != 0 ||
                 (bindings[j].access & VACCEL_ACCESS_WRITE) != 0))
                return fail(Errc::incompatible, VACCEL_D_BINDING_ALIAS, i, j);
        }
    }
    return {};
}

}  // namespace

Status bindings(std::span<const SlotSpec> slots, std::span<const BindingFacts> bindings,
                std::uint32_t max_bindings)
{
    // 1. The count. No bindings at all is a malformed submission, not a limit.
    // The reference design refuse 0 in the same check as "above max" (ResourceLimit);
    // we keep it InvalidArgument on purpose: D_LIMIT would claim a limit was
    // hit with 0 asked, zero can never succeed whatever the limits (launch
    // even admits it), and it matches the wire checks (requests.cpp, kmod)
    // and every other zero count or length (range, buffer bytes, EVENT_WAIT).
    if (bindings.empty())
        return fail(Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                    offsetof(vaccel_submit, binding_count), 0);
    if (bindings.size() > max_bindings)
        return fail(Error::limit_hit(VACCEL_LIMIT_BINDINGS, max_bindings, bindings.size()));

    // 2. Each binding, most specific reason first.
    for (std::size_t i = 0; i < bindings.size(); ++i) {
        const BindingFacts& b = bindings[i];
        if (b.access != VACCEL_ACCESS_READ && b.access != VACCEL_ACCESS_WRITE)
            return bad_binding_value(offsetof(vaccel_binding, access), b.access, i);
        if (auto ok = binding_buffer(b, i); !ok)
            return ok;
        if (b.slot >= slots.size())
            return fail(Errc::incompatible, VACCEL_D_BINDING_SLOT, i, b.slot);
        // Earlier bindings passed every check above, so a scan finds the
        // first one that took this slot (n <= max_bindings, no allocation).
        for (std::size_t j = 0; j < i; ++j)
            if (bindings[j].slot == b.slot)
                return fail(Errc::invalid_argument, VACCEL_D_BINDING_DUPLICATE, i, b.slot);
        const SlotSpec& slot = slots[b.slot];
        const std::uint32_t expected = access_for_role(slot.role);
        if (b.access != expected)
            return fail(Errc::incompatible, VACCEL_D_ACCESS, b.access, expected);
        if (b.bytes != slot.bytes)
            return fail(Errc::incompatible, VACCEL_D_BINDING_SIZE, i, slot.bytes);
    }

    // 3. Every slot bound. Bindings are distinct valid slots here, so fewer
    // bindings than slots means at least one slot is missing: name the first.
    if (bindings.size() < slots.size()) {
        for (std::size_t s = 0; s < slots.size(); ++s) {
            bool bound = false;
            for (const BindingFacts& b : bindings)
                bound = bound || b.slot == s;
            if (!bound)
                return fail(Errc::incompatible, VACCEL_D_BINDING_MISSING, s, slots.size());
        }
    }

    // 4. A written buffer appears in no other binding, whatever the ranges.
    return no_written_alias(bindings);
}

Status launch_bindings(std::span<const BindingFacts> bindings, std::uint32_t max_bindings)
{
    if (bindings.size() > max_bindings)
        return fail(Error::limit_hit(VACCEL_LIMIT_BINDINGS, max_bindings, bindings.size()));
    for (std::size_t i = 0; i < bindings.size(); ++i) {
        const BindingFacts& b = bindings[i];
        if (b.access == 0 || (b.access & ~VACCEL_ACCESS_RW) != 0)
            return bad_binding_value(offsetof(vaccel_binding, access), b.access, i);
        if (auto ok = binding_buffer(b, i); !ok)
            return ok;
        for (std::size_t j = 0; j < i; ++j)
            if (bindings[j].slot == b.slot)
                return fail(Errc::invalid_argument, VACCEL_D_BINDING_DUPLICATE, i, b.slot);
    }
    return no_written_alias(bindings);
}

Status launch_dims(const vaccel_launch_dims& dims)
{
    constexpr std::uint64_t base = offsetof(vaccel_launch, dims);
    if (dims.flags != 0)
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_UNKNOWN_FLAGS, dims.flags)
                        .with_note("launch dims.flags defines no flags; pass 0"));
    auto product = [&](const std::uint32_t (&d)[3], std::uint64_t at, std::string_view what) -> Status {
        std::uint64_t total = 1;
        for (std::size_t i = 0; i < 3; ++i) {
            if (d[i] == 0)
                return fail(Error::of(Errc::invalid_argument, VACCEL_D_LAUNCH_DIMS, at + 4 * i, 0)
                                .with_note(std::string(what) + "[" + std::to_string(i) +
                                           "] is 0; every dimension is at least 1"));
            total *= d[i];
            if (total > UINT32_MAX)
                return fail(Error::of(Errc::invalid_argument, VACCEL_D_LAUNCH_DIMS, at, total)
                                .with_note(std::string(what) +
                                           " has more than 2^32 - 1 elements in all"));
        }
        return {};
    };
    if (auto ok = product(dims.grid, base + offsetof(vaccel_launch_dims, grid), "grid"); !ok)
        return ok;
    return product(dims.block, base + offsetof(vaccel_launch_dims, block), "block");
}

Status zero(std::span<const std::byte> whole, std::size_t offset, std::size_t length)
{
    if (offset > whole.size() || length > whole.size() - offset)
        return fail(Errc::invalid_argument, VACCEL_D_BAD_SIZE, whole.size(), offset + length);
    // Eight bytes at a time; only a non-zero word is searched byte by byte.
    const std::size_t end = offset + length;
    std::size_t i = offset;
    for (; i + 8 <= end; i += 8) {
        std::uint64_t word;
        std::memcpy(&word, whole.data() + i, 8);
        if (word != 0)
            break;
    }
    for (; i < end; ++i)
        if (whole[i] != std::byte{0})
            return fail(Errc::invalid_argument, VACCEL_D_RESERVED_NONZERO, i);
    return {};
}

}  // namespace vaccel::validate
