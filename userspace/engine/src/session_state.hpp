// session_state.hpp - what a session holds, shared by the per-op handlers.
//
// Owns: the records of one session's objects and the session's accounting.
// Decides: the owning relationships (who is whose child) and how a handle
// is turned into a record of the expected kind.
//
// Records live in ONE HandleTable<Object> per session; a record's handle
// kind and its variant alternative always agree (insert() is only called
// through SessionState::insert<R>()).
//
// Ownership and children:
//   context  <- buffers, programs, queues, events, gates (ContextRecord::children)
//   queue    <- events                                    (QueueRecord::events)
// A record is removed only when its child count is zero, so the raw parent
// pointers below never dangle.
// Invariant: pointers into the table stay valid until that object is removed
// (HandleTable keeps slots in chunks that never move).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <variant>
#include <vector>

#include "vaccel/backend/backend.hpp"
#include "vaccel/common/error.hpp"
#include "vaccel/common/handles.hpp"
#include "vaccel/common/limits.hpp"
#include "vaccel/engine/device_manager.hpp"
#include "vaccel/engine/event_watch.hpp"
#include "vaccel/engine/limit_policy.hpp"
#include "vaccel/engine/tenants.hpp"

namespace vaccel::engine {

struct ContextRecord {
    static constexpr HandleKind kind = HandleKind::context;
    Device* device = nullptr;
    std::unique_ptr<backend::Context> object;
    // This context's caps (device ∩ the policy's per-context level) and use;
    // its parent is the tenant's totals on the device, so every charge here
    // counts there too (tenants.hpp). Held by pointer because Accounting is
    // not movable (it owns a mutex).
    std::unique_ptr<Accounting> accounting;
    std::uint32_t children = 0;  // buffers + programs + queues + events + gates alive
};

struct BufferRecord {
    static constexpr HandleKind kind = HandleKind::buffer;
    ContextRecord* owner = nullptr;
    std::uint64_t context = 0;
    std::unique_ptr<backend::Buffer> object;
    std::uint64_t charged_bytes = 0;  // memory_bytes charged to the owner
};

struct ProgramRecord {
    static constexpr HandleKind kind = HandleKind::program;
    ContextRecord* owner = nullptr;
    std::uint64_t context = 0;
    std::unique_ptr<backend::Program> object;
    std::uint64_t charged_bytes = 0;  // its device memory, on the client's memory limit
};

struct QueueRecord {
    static constexpr HandleKind kind = HandleKind::queue;
    ContextRecord* owner = nullptr;
    std::uint64_t context = 0;
    std::unique_ptr<backend::Queue> object;
    std::uint32_t events = 0;  // events made on this queue, alive
};

struct EventRecord {
    static constexpr HandleKind kind = HandleKind::event;
    ContextRecord* owner = nullptr;
    QueueRecord* queue = nullptr;
    std::unique_ptr<backend::Event> object;
    std::shared_ptr<EventWatch> watch;  // shared with the backend's submission
    // Made by RUN (its ticket): the client never saw this handle, and the
    // client's EVENT_POLL, EVENT_WAIT and EVENT_DESTROY refuse it as unknown
    // (client_event()). The RUN that made it destroys it once it is done.
    bool run_ticket = false;
};

struct GateRecord {
    static constexpr HandleKind kind = HandleKind::gate;
    ContextRecord* owner = nullptr;
    std::uint64_t context = 0;
    std::unique_ptr<backend::Gate> object;
};

using Object =
    std::variant<ContextRecord, BufferRecord, ProgramRecord, QueueRecord, EventRecord, GateRecord>;

struct SessionState {
    SessionState(std::shared_ptr<DeviceManager> manager, SessionIdentity who,
                 std::shared_ptr<const LimitPolicy> limit_policy, TenantSeat seat,
                 std::uint32_t capacity);

    std::shared_ptr<DeviceManager> devices;
    const SessionIdentity identity;
    const std::shared_ptr<const LimitPolicy> policy;  // never null
    // The session's place in its tenant (never empty). Ownership: declared
    // before everything that charges the tenant, so it is given back last,
    // after every record and accounting of the session is gone.
    TenantSeat tenant;

    // Guards objects, every record in it and session_contexts' pairing with
    // the table. Lock order: this, then a Device's mutex, then an
    // EventWatch's (device_manager.hpp).
    mutable std::mutex mutex;
    HandleTable<Object> objects;
    // The session's contexts per device (parent: the tenant's totals there).
    std::vector<std::unique_ptr<Accounting>> session_contexts;

    // Which device each live handle's object lives on, for Session::route().
    // Guarded by route_mutex, a leaf lock never held across a backend call,
    // so a transport's I/O thread may consult it without ever waiting on a
    // device. Kept in step with `objects` by insert()/erase().
    // Indexed by the handle's slot index (a slot holds one live object at a
    // time), so routing an object made in a reused slot allocates nothing.
    struct Route {
        std::uint64_t handle = 0;  // 0: no live object in this slot
        std::uint32_t device = 0;
    };
    mutable std::mutex route_mutex;
    std::vector<Route> route;

    // The device of the live object `handle` names, if any. Caller holds
    // route_mutex.
    std::optional<std::uint32_t> route_of(std::uint64_t handle) const
    {
        const std::uint64_t slot = handle & handle_bits::index_mask;
        if (slot < route.size() && route[slot].handle == handle)
            return route[slot].device;
        return std::nullopt;
    }

    // Woken whenever any event of this session completes (may be null):
    // what makes the session's file descriptor readable. Set once, before
    // the first submission.
    std::shared_ptr<Waiter> completion_listener;

    // Counters for the admin channel (any thread, relaxed).
    std::atomic<std::uint64_t> submissions{0};  // accepted submissions
    std::atomic<std::uint64_t> errors{0};       // refusals returned to the client

    // The caps of a new context on `device` (device ∩ per-context policy).
    vaccel_device_limits effective_limits(const Device& device) const;
    // Re-reads the tenant's totals from the policy in force, asked about the
    // tenant's representative, as every refresh is (tenants.hpp).
    void refresh_totals() { tenant->set_totals(policy->totals(tenant->representative())); }

    // Refuses (ResourceLimit, VACCEL_LIMIT_HANDLES) when insert() could not
    // succeed, so a handle is known to be available before the backend is
    // called. Caller holds `mutex`.
    Status reserve_handle() const;

    // The record `handle` names if it is of kind R. Caller holds `mutex`.
    template <class R>
    Result<R*> lookup(std::uint64_t handle)
    {
        auto found = objects.lookup(handle, R::kind);
        if (!found)
            return std::unexpected(std::move(found.error()));
        return &std::get<R>(**found);
    }

    // Stores a record. Caller holds `mutex` and has passed reserve_handle().
    template <class R>
    Result<std::uint64_t> insert(R record)
    {
        std::uint32_t device = 0;
        if constexpr (std::is_same_v<R, ContextRecord>)
            device = record.device->index();
        else
            device = record.owner->device->index();
        auto handle = objects.insert(R::kind, Object(std::in_place_type<R>, std::move(record)));
        if (handle) {
            const std::uint64_t slot = *handle & handle_bits::index_mask;
            std::lock_guard lock(route_mutex);
            if (slot >= route.size())
                route.resize(slot + 1);
            route[slot] = Route{*handle, device};
        }
        return handle;
    }

    // Removes the record `handle` names (it must be live and of kind R).
    template <class R>
    void erase(std::uint64_t handle)
    {
        objects.remove(handle, R::kind);
        const std::uint64_t slot = handle & handle_bits::index_mask;
        std::lock_guard lock(route_mutex);
        if (slot < route.size() && route[slot].handle == handle)
            route[slot] = Route{};
    }
};

// Backends know no handles: a refusal naming a buffer (VACCEL_D_IN_FLIGHT,
// arg0 = the buffer) carries its Buffer::identity(). Replaces it with the
// client's handle when it is `buffer`'s; anything else unchanged.
inline Error name_buffer(Error error, const backend::Buffer* buffer, std::uint64_t handle)
{
    if (error.detail == VACCEL_D_IN_FLIGHT && buffer != nullptr && error.arg0 == buffer->identity())
        error.arg0 = handle;
    return error;
}

// Teardown in dependency order; called by ~Session with no other caller left.
void release_all(SessionState& state);
// The first half of teardown, without blocking: cancels the session's work
// that has not started and subscribes `waiter` to what still runs. True when
// nothing is pending (the destructor then waits for nothing).
bool quiesce(SessionState& state, const std::shared_ptr<Waiter>& waiter);

}  // namespace vaccel::engine
