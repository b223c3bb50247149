// validation.hpp - the argument rules every backend applies the same way.
//
// Owns nothing; decides the order and the error of each refusal so that all
// backends reject the same request with the same error (the reference design's order:
// per-binding reasons first, then the aggregate count, then aliasing).
#pragma once

#include <cstdint>
#include <span>

#include "vaccel.h"
#include "vaccel/common/error.hpp"

namespace vaccel::validate {

// A buffer request against a device: bytes > 0 and <= max_buffer_bytes
// (ResourceLimit/BUFFER_BYTES above it); alignment 0 or a power of two no
// larger than VACCEL_MAX_ALIGNMENT (a larger one would let the allocation
// grow far past the bytes that are accounted);
// a known domain the device offers (Unsupported otherwise); usage non-empty
// and known; access non-empty and known. Other refusals are D_BAD_VALUE with
// arg0 = offsetof(vaccel_buffer_alloc, <field>) and arg1 = the value: an
// unknown domain is InvalidArgument, a known one the device's memory_caps
// lack (HOST needs HOST_VISIBLE, DEVICE needs DEVICE_LOCAL, SHARED needs
// SHARED) is Unsupported.
Status buffer_desc(const vaccel_device_info& device, std::uint64_t bytes, std::uint64_t alignment,
                   std::uint32_t domain, std::uint32_t usage, std::uint32_t access);

// A byte range [offset, offset + length) inside `size` bytes, computed without
// overflow. length == 0 is InvalidArgument; past the end is OutOfBounds
// (VACCEL_D_RANGE, arg0 = offset, arg1 = length). Returns the end offset.
Result<std::uint64_t> range(std::uint64_t size, std::uint64_t offset, std::uint64_t length);

// What a program expects at one slot.
struct SlotSpec {
    std::uint32_t role = 0;    // enum vaccel_slot_role
    std::uint64_t bytes = 0;   // exact bytes a binding must cover
};

// One binding with the facts about its buffer the rules need.
struct BindingFacts {
    std::uint32_t slot = 0;
    std::uint32_t access = 0;        // VACCEL_ACCESS_* (submit: READ or WRITE)
    std::uint64_t buffer = 0;        // identity of the buffer (handle or address)
    std::uint64_t buffer_bytes = 0;  // the buffer's size
    std::uint32_t buffer_usage = 0;  // VACCEL_USAGE_*
    std::uint32_t buffer_access = 0; // access the buffer allows
    std::uint64_t offset = 0;
    std::uint64_t bytes = 0;
};

// The binding list of a submission against its program's slots:
//  1. count 1..max_bindings: none at all is InvalidArgument (D_BAD_VALUE,
//     arg0 = offsetof(vaccel_submit, binding_count), arg1 = 0); above
//     max_bindings ResourceLimit (VACCEL_LIMIT_BINDINGS, arg0 = max,
//     arg1 = count);
//  2. per binding, in order: access is exactly READ or WRITE (InvalidArgument,
//     D_BAD_VALUE, arg0 = offsetof(vaccel_binding, access), arg1 = access),
//     allowed by the buffer (PermissionDenied, D_ACCESS, access, allowed),
//     buffer has STORAGE usage (PermissionDenied, D_USAGE, STORAGE, usage),
//     range inside the buffer (range() above: OutOfBounds or, for 0 bytes,
//     InvalidArgument), slot exists (Incompatible, D_BINDING_SLOT, index,
//     slot), slot not bound twice (InvalidArgument, D_BINDING_DUPLICATE,
//     index, slot), access matches the slot's role (Incompatible, D_ACCESS,
//     access, the role's access), bytes equal the slot's (Incompatible,
//     D_BINDING_SIZE, index, slot bytes);
//  3. every slot bound (Incompatible, D_BINDING_MISSING, first unbound slot,
//     slot count);
//  4. a buffer written by one binding appears in no other binding
//     (Incompatible, D_BINDING_ALIAS, arg0 = binding, arg1 = earlier binding).
Status bindings(std::span<const SlotSpec> slots, std::span<const BindingFacts> bindings,
                std::uint32_t max_bindings);

// The binding list of a kernel launch (no program slots to match):
//  1. count <= max_bindings (ResourceLimit, VACCEL_LIMIT_BINDINGS); none at
//     all is fine (a kernel may take no pointers);
//  2. per binding, in order: access is READ, WRITE or both (InvalidArgument,
//     D_BAD_VALUE), then the buffer checks of bindings() (access allowed,
//     STORAGE usage, range), then the slot not bound twice
//     (InvalidArgument, D_BINDING_DUPLICATE);
//  3. a written buffer appears in no other binding (D_BINDING_ALIAS).
// Whether a pointer record names a bound slot is kernel_args::lay_out's.
Status launch_bindings(std::span<const BindingFacts> bindings, std::uint32_t max_bindings);

// Grid and block of a launch: flags zero (InvalidArgument, D_UNKNOWN_FLAGS),
// every dimension at least 1 and each product within 32 bits
// (InvalidArgument, D_LAUNCH_DIMS, arg0 = offset of the field in
// vaccel_launch, arg1 = the value or the product).
Status launch_dims(const vaccel_launch_dims& dims);

// Reserved bytes and pad fields must be zero: returns InvalidArgument with
// D_RESERVED_NONZERO naming the first offending byte offset in `whole`.
Status zero(std::span<const std::byte> whole, std::size_t offset, std::size_t length);

}  // namespace vaccel::validate
