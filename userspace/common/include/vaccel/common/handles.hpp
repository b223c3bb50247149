// handles.hpp - the opaque 64-bit handles a session gives its clients.
//
// Owns: the objects of one kind family stored in a HandleTable (one table per
// session, or per session and kind; the caller chooses). Decides: the bit
// layout of a handle, that a stale, forged or foreign handle is "unknown" and
// never another object, and the error of each refusal.
//
// Handle layout (bit 63 on the left):
//
//   63          48 47    45 44                     20 19                 0
//   +-------------+--------+-------------------------+-------------------+
//   |  table tag  |  kind  |       generation        |    slot index     |
//   |   16 bits   | 3 bits |         25 bits         |      20 bits      |
//   +-------------+--------+-------------------------+-------------------+
//
//  - table tag: taken once per table from a process-wide atomic counter, so a
//    handle made by another table (another session) does not match here. The
//    counter wraps after 65536 tables; a wrapped tag can only make a foreign
//    handle look like one of this table's own objects, never reach into the
//    other table (every lookup reads this table only).
//  - kind: HandleKind, 1..5. Never 0, so a handle is never 0.
//  - generation: per slot, bumped on every remove, so a handle kept after its
//    object was removed no longer matches the slot.
//  - slot index: position in the table; capacity (live objects) is at most
//    2^20 - 1.
//
// Generation exhaustion: when a slot's generation would wrap past 2^25 - 1,
// the slot is retired (never reused) instead of wrapping, so a stale handle
// can never name a later object. Capacity bounds live objects, not slots: a
// retired slot is replaced by a fresh index, so retirement costs memory (one
// slot record each), never capacity, until all 2^20 - 1 indexes are used up
// (about 2^45 removes); only then does insert report ResourceLimit with a
// note. The free list is FIFO, which spreads reuse over all free slots.
//
// Cost: insert, find, lookup and remove are O(1) (no hashing, no search);
// for_each is O(slots ever used).
//
// Thread-safety: none. A table belongs to one session and the session
// serialises its calls (the engine's session lock or the reactor thread).
//
// Invariant: pointers returned by find()/lookup() stay valid until the object
// is removed (slots live in fixed-size chunks that never move), even across
// inserts of other objects.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vaccel.h"
#include "vaccel/common/error.hpp"

namespace vaccel {

enum class HandleKind : std::uint8_t { context = 1, buffer, program, queue, event, gate };

namespace handle_bits {
inline constexpr unsigned index_bits = 20;
inline constexpr unsigned generation_bits = 25;
inline constexpr unsigned kind_bits = 3;
inline constexpr unsigned tag_bits = 16;
static_assert(index_bits + generation_bits + kind_bits + tag_bits == 64);

inline constexpr unsigned generation_shift = index_bits;
inline constexpr unsigned kind_shift = generation_shift + generation_bits;
inline constexpr unsigned tag_shift = kind_shift + kind_bits;

inline constexpr std::uint64_t index_mask = (std::uint64_t{1} << index_bits) - 1;
inline constexpr std::uint64_t generation_mask = (std::uint64_t{1} << generation_bits) - 1;
inline constexpr std::uint64_t kind_mask = (std::uint64_t{1} << kind_bits) - 1;
inline constexpr std::uint64_t tag_mask = (std::uint64_t{1} << tag_bits) - 1;

// The largest capacity a table can have (index_mask itself is never used, so
// an all-ones index can never be a live slot).
inline constexpr std::uint32_t max_capacity = static_cast<std::uint32_t>(index_mask);
// The last generation a slot reaches before it is retired.
inline constexpr std::uint32_t last_generation = static_cast<std::uint32_t>(generation_mask);

constexpr std::uint64_t compose(std::uint32_t tag, HandleKind kind, std::uint32_t generation,
                                std::uint32_t index)
{
    return ((std::uint64_t{tag} & tag_mask) << tag_shift) |
           ((std::uint64_t{static_cast<std::uint8_t>(kind)} & kind_mask) << kind_shift) |
           ((std::uint64_t{generation} & generation_mask) << generation_shift) |
           (std::uint64_t{index} & index_mask);
}
constexpr std::uint32_t index_of(std::uint64_t handle)
{
    return static_cast<std::uint32_t>(handle & index_mask);
}
constexpr std::uint32_t generation_of(std::uint64_t handle)
{
    return static_cast<std::uint32_t>((handle >> generation_shift) & generation_mask);
}
constexpr std::uint8_t kind_of(std::uint64_t handle)
{
    return static_cast<std::uint8_t>((handle >> kind_shift) & kind_mask);
}
constexpr std::uint32_t tag_of(std::uint64_t handle)
{
    return static_cast<std::uint32_t>((handle >> tag_shift) & tag_mask);
}

// The next table tag, process-wide (defined in handles.cpp).
std::uint32_t next_table_tag();
}  // namespace handle_bits

// "context", "buffer", ... ("unknown" for anything else).
std::string_view handle_kind_name(HandleKind kind);

template <class T>
class HandleTable {
public:
    // capacity is clamped to handle_bits::max_capacity.
    explicit HandleTable(std::uint32_t capacity)
        : capacity_(capacity < handle_bits::max_capacity ? capacity : handle_bits::max_capacity),
          tag_(handle_bits::next_table_tag())
    {
    }

    HandleTable(const HandleTable&) = delete;
    HandleTable& operator=(const HandleTable&) = delete;
    HandleTable(HandleTable&&) noexcept = default;
    HandleTable& operator=(HandleTable&&) noexcept = default;

    // Stores `value` and returns its new handle. Full (capacity live objects,
    // or every index retired): ResourceLimit, VACCEL_LIMIT_HANDLES,
    // arg0 = capacity, arg1 = live objects.
    Result<std::uint64_t> insert(HandleKind kind, T value)
    {
        if (size_ >= capacity_)
            return fail(Error::limit_hit(VACCEL_LIMIT_HANDLES, capacity_, size_));
        std::uint32_t index;
        if (free_head_ != no_slot) {
            index = free_head_;
            free_head_ = slot_at(index).next_free;
            if (free_head_ == no_slot)
                free_tail_ = no_slot;
        } else if (used_slots_ < handle_bits::max_capacity) {
            index = used_slots_;
            if ((index >> chunk_shift) >= chunks_.size())
                chunks_.push_back(std::make_unique<Slot[]>(chunk_slots));
            ++used_slots_;
        } else {
            return fail(Error::limit_hit(VACCEL_LIMIT_HANDLES, capacity_, size_)
                            .with_note(std::to_string(retired_) +
                                       " slots retired after exhausting their generations"));
        }
        Slot& slot = slot_at(index);
        slot.value.emplace(std::move(value));
        slot.handle = handle_bits::compose(tag_, kind, slot.generation, index);
        slot.next_free = no_slot;
        ++size_;
        return slot.handle;
    }

    // The live object `handle` names if it is of `kind`; nullptr otherwise.
    T* find(std::uint64_t handle, HandleKind kind)
    {
        Slot* slot = live_slot(handle);
        if (slot == nullptr || handle_bits::kind_of(handle) != static_cast<std::uint8_t>(kind))
            return nullptr;
        return &*slot->value;
    }
    const T* find(std::uint64_t handle, HandleKind kind) const
    {
        return const_cast<HandleTable*>(this)->find(handle, kind);
    }

    // Like find(), with the refusal a client reads: InvalidArgument with
    // D_UNKNOWN_HANDLE (arg0 = handle) for an unknown, stale or foreign
    // handle; D_WRONG_HANDLE_KIND (arg0 = handle) for a live object of
    // another kind.
    Result<T*> lookup(std::uint64_t handle, HandleKind kind)
    {
        Slot* slot = live_slot(handle);
        if (slot == nullptr)
            return fail(Errc::invalid_argument, VACCEL_D_UNKNOWN_HANDLE, handle);
        if (handle_bits::kind_of(handle) != static_cast<std::uint8_t>(kind))
            return fail(Errc::invalid_argument, VACCEL_D_WRONG_HANDLE_KIND, handle);
        return &*slot->value;
    }
    Result<const T*> lookup(std::uint64_t handle, HandleKind kind) const
    {
        auto found = const_cast<HandleTable*>(this)->lookup(handle, kind);
        if (!found)
            return std::unexpected(std::move(found.error()));
        return *found;
    }

    // Takes the object out; its handle (and every copy of it) becomes
    // unknown. nullopt when `handle` names no live object of `kind`.
    std::optional<T> remove(std::uint64_t handle, HandleKind kind)
    {
        Slot* slot = live_slot(handle);
        if (slot == nullptr || handle_bits::kind_of(handle) != static_cast<std::uint8_t>(kind))
            return std::nullopt;
        std::optional<T> out(std::move(*slot->value));
        slot->value.reset();
        slot->handle = 0;
        --size_;
        const std::uint32_t index = handle_bits::index_of(handle);
        if (slot->generation == handle_bits::last_generation) {
            ++retired_;  // never reused: its next generation would wrap
            return out;
        }
        ++slot->generation;
        slot->next_free = no_slot;
        if (free_tail_ == no_slot)
            free_head_ = index;
        else
            slot_at(free_tail_).next_free = index;
        free_tail_ = index;
        return out;
    }

    std::uint32_t size() const { return size_; }
    std::uint32_t capacity() const { return capacity_; }
    // Slots that exhausted their generations and are never reused.
    std::uint32_t retired() const { return retired_; }
    // This table's tag (bits 48..63 of each of its handles).
    std::uint32_t tag() const { return tag_; }

    // Calls f(handle, T&) for every live object, in slot order. f must not
    // insert into or remove from this table.
    template <class F>
    void for_each(F&& f)
    {
        for (std::uint32_t i = 0; i < used_slots_; ++i) {
            Slot& slot = slot_at(i);
            if (slot.handle != 0)
                f(slot.handle, *slot.value);
        }
    }
    template <class F>
    void for_each(F&& f) const
    {
        for (std::uint32_t i = 0; i < used_slots_; ++i) {
            const Slot& slot = slot_at(i);
            if (slot.handle != 0)
                f(slot.handle, static_cast<const T&>(*slot.value));
        }
    }

private:
    static constexpr std::uint32_t no_slot = UINT32_MAX;
    static constexpr unsigned chunk_shift = 6;
    static constexpr std::uint32_t chunk_slots = 1u << chunk_shift;

    // Invariant: handle != 0 exactly when value holds the live object, and
    // then handle is the one insert() returned for it. A free slot is on the
    // free list (next_free links it) unless it is retired.
    struct Slot {
        std::uint64_t handle = 0;
        std::uint32_t generation = 0;
        std::uint32_t next_free = no_slot;
        std::optional<T> value;
    };

    Slot& slot_at(std::uint32_t index)
    {
        return chunks_[index >> chunk_shift][index & (chunk_slots - 1)];
    }
    const Slot& slot_at(std::uint32_t index) const
    {
        return chunks_[index >> chunk_shift][index & (chunk_slots - 1)];
    }
    // The slot whose live handle is exactly `handle`: comparing all 64 bits
    // checks tag, kind, generation and index at once. A handle that differs
    // from the live one only in its kind bits was never issued (forged), so
    // it is unknown too.
    Slot* live_slot(std::uint64_t handle)
    {
        const std::uint32_t index = handle_bits::index_of(handle);
        if (handle == 0 || index >= used_slots_)
            return nullptr;
        Slot& slot = slot_at(index);
        return slot.handle == handle ? &slot : nullptr;
    }

    std::vector<std::unique_ptr<Slot[]>> chunks_;
    std::uint32_t capacity_;
    std::uint32_t tag_;
    std::uint32_t used_slots_ = 0;  // slots ever handed out: [0, used_slots_)
    std::uint32_t size_ = 0;        // live objects
    std::uint32_t retired_ = 0;
    std::uint32_t free_head_ = no_slot;  // FIFO free list: pop at head, push at tail
    std::uint32_t free_tail_ = no_slot;
};

}  // namespace vaccel
