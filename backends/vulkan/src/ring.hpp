// ring.hpp - a context's submission ring: 64 preallocated slots, each a
// command pool with its segments' command buffers and fences, a descriptor
// pool and a timestamp query pool.
//
// Decides (docs/adr/0013-vulkan-backend.md, Submission):
//  - depth 64 per context; a submission takes a slot at submit and gives it
//    back when it ends (completed, failed, cancelled or refused); with all 64
//    taken the next submit is refused (ResourceLimit), never waited for;
//  - free slots are reused in the order they were given back (FIFO);
//  - the descriptor pool of a slot holds one set of up to `descriptors`
//    storage buffers (the bound slots plus the arena, tuning.hpp); the set is
//    allocated per use with the program's layout and freed by the reset;
//  - a submission is cut into up to max_segments segments (scheduler.hpp),
//    each one command buffer with its own fence and two timestamps (its
//    start and end on the device); a slot is made with one segment and
//    grows on demand (grow()), never shrinks.
// Ownership and locking: the free list is guarded by the ring's mutex. A
// slot's Vulkan objects belong to whoever took it: the submitting thread
// records into it, then the thread that ends the submission (the completion
// thread, or the one that cancels it) resets it and gives it back. Each slot
// has its own command pool, so that reset never races a recording into
// another slot (command pools are externally synchronised). A slot is reset
// only once its fence signalled or it never reached the queue; a slot whose
// work may still run (device lost) is retired, never reused.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "vaccel/common/error.hpp"

namespace vaccel::backend::vulkan {

struct DeviceCore;

inline constexpr std::uint32_t ring_depth = 64;
// The most segments one submission is cut into (scheduler.hpp).
inline constexpr std::uint32_t max_segments = 64;

struct RingSlot {
    VkCommandPool pool = VK_NULL_HANDLE;
    std::vector<VkCommandBuffer> commands;  // one per segment made so far
    std::vector<VkFence> fences;            // likewise
    VkDescriptorPool descriptors = VK_NULL_HANDLE;
    // 2 * max_segments timestamps (start, end of each segment); null when
    // the queue has no timestamps (DeviceCore::timestamps).
    VkQueryPool timestamps = VK_NULL_HANDLE;
    std::uint32_t used = 1;  // segments recorded since the last reset
};

class SubmissionRing {
public:
    // Creates every slot; `descriptors` storage buffers per set.
    static Result<std::unique_ptr<SubmissionRing>> create(DeviceCore& core,
                                                          std::uint32_t descriptors);
    SubmissionRing(const SubmissionRing&) = delete;
    SubmissionRing& operator=(const SubmissionRing&) = delete;
    ~SubmissionRing();

    // A free slot's index, or nothing when all are taken.
    std::optional<std::uint32_t> take();
    // Makes the slot hold at least `segments` command buffers and fences
    // (the slot's owner calls it before recording that many).
    Status grow(std::uint32_t index, std::uint32_t segments);
    // Resets the slot (fences, command pool, descriptor pool) and frees it.
    void give_back(std::uint32_t index);
    // Never reused: its work may still be on the device.
    void retire(std::uint32_t index);
    RingSlot& slot(std::uint32_t index) { return slots_[index]; }
    std::uint32_t in_use() const;
    std::uint32_t retired() const;

private:
    explicit SubmissionRing(DeviceCore& core) : core_(core) {}
    DeviceCore& core_;
    std::vector<RingSlot> slots_;  // fixed after create()
    mutable std::mutex mutex_;     // guards free_ and retired_
    std::deque<std::uint32_t> free_;
    std::uint32_t retired_ = 0;
};

// The refusal of a submission on a context whose ring is full.
Error ring_full_error();

}  // namespace vaccel::backend::vulkan
