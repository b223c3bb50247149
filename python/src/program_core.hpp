// program_core.hpp - one loaded TOSA program and the lanes that run it.
//
// Owns: the program handle (unloaded by close() or the destructor while the
// client is open), its slots (vaccel_program_slot, read once at load), and
// its lanes: a lane holds, per slot, a staging buffer made on first need,
// and is used by one run at a time. Decides:
//  - a run binds each slot to what the caller gives: a Buffer of the same
//    client directly (zero copy), or host bytes, which go through the
//    lane's staging buffer; staging buffers are Device memory where the
//    device has it, else Shared, else Host (the rule of vaccelctl run);
//  - a staging buffer that is not Device memory is mapped once and the
//    bytes are copied through the mapping (the run is then one request on
//    every transport); a Device one, or one the device cannot map, moves
//    its bytes by vaccel_buffer_write before and vaccel_buffer_read after.
//    Either way only the run that owns the lane touches them, and never
//    while its submission is pending;
//  - concurrent runs take different lanes, so they never share a staging
//    buffer (a run that finds no idle lane makes one), and different queues
//    (the client's QueuePool, which waits at the queue limit);
//  - after close() every call is refused: InvalidArgument,
//    VACCEL_D_UNKNOWN_HANDLE, arg0 = the program's handle.
// Locks: the client's Hold, then lifetime_ (shared: a run; exclusive:
// close), then lanes_mutex_ or the QueuePool's (never both); all without
// the GIL.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "client_core.hpp"

namespace vaccel::python {

class BufferCore;

struct SlotInfo {
    std::uint32_t slot = 0;
    std::uint32_t role = 0;   // enum vaccel_slot_role
    std::uint32_t dtype = 0;  // TOSA DType
    std::vector<std::int64_t> shape;
    std::uint64_t bytes = 0;  // exactly what a binding covers
    std::string name;
};

// What one slot is bound to for one run: exactly one of the three.
struct SlotSource {
    BufferCore* buffer = nullptr;  // bound as it is
    const void* input = nullptr;   // host bytes written to the staging buffer
    void* output = nullptr;        // host bytes read from the staging buffer
};

class ProgramCore {
public:
    // Loads a TOSA flatbuffer in the context of `device`. Call without the GIL.
    static std::shared_ptr<ProgramCore> load(std::shared_ptr<ClientCore> client,
                                             std::uint32_t device, const void* payload,
                                             std::size_t bytes);
    ~ProgramCore();
    ProgramCore(const ProgramCore&) = delete;
    ProgramCore& operator=(const ProgramCore&) = delete;

    // One run, every slot bound (`sources` in slot order). Call without the GIL.
    void run(const std::vector<SlotSource>& sources);
    // Unloads the program and releases its lanes. Call without the GIL.
    void close();
    bool closed() const;

    const std::vector<SlotInfo>& slots() const { return slots_; }
    std::uint32_t input_count() const { return input_count_; }
    std::uint32_t device() const { return device_; }
    std::uint64_t handle() const { return handle_; }
    std::uint64_t context() const { return context_; }
    std::size_t lanes() const;
    const std::shared_ptr<ClientCore>& client() const { return client_; }

private:
    struct Staging {
        std::uint64_t buffer = 0;  // 0 until first needed
        void* mapped = nullptr;    // its mapping, or nullptr: write/read instead
    };
    struct Lane {
        std::vector<Staging> staging;  // per slot
    };
    class LaneLease;

    ProgramCore(std::shared_ptr<ClientCore> client, std::uint32_t device,
                std::uint64_t context, std::uint32_t staging_domain);
    Lane& take_lane();
    void give_back(Lane& lane);
    const Staging& staging(const ClientCore::Hold& hold, Lane& lane, std::uint32_t slot);
    void release_all(const ClientCore::Hold& hold);
    CallFailure released() const;
    std::string slot_text(std::uint32_t slot) const;

    const std::shared_ptr<ClientCore> client_;
    const std::uint32_t device_;
    const std::uint64_t context_;
    const std::uint32_t staging_domain_;  // enum vaccel_domain
    std::uint64_t handle_ = 0;
    std::uint32_t input_count_ = 0;
    std::vector<SlotInfo> slots_;

    mutable std::shared_mutex lifetime_;  // shared: a run; exclusive: close
    bool unloaded_ = false;

    mutable std::mutex lanes_mutex_;  // guards everything below
    std::vector<std::unique_ptr<Lane>> lanes_;  // every lane, idle or not
    std::vector<Lane*> idle_;
};

}  // namespace vaccel::python
