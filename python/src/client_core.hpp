// client_core.hpp - one libvaccel client shared by Python objects and threads.
//
// Owns: the vaccel_client* (closing it releases every context, buffer,
// program and queue it still has), its one context per device, and the
// count of live views into its mapped buffers. Decides:
//  - a call holds the client open (Hold: a shared lock) for its whole
//    duration; close() takes the lock exclusively, so it waits for calls in
//    progress and no call ever sees a closed vaccel_client*
//    (vaccel_client_close must not race another call on the client);
//  - after close() every call is refused: InvalidArgument (VACCEL_D_NONE),
//    "the vaccel client is closed";
//  - close() with NumPy arrays, memoryviews or DLPack tensors still viewing
//    mapped buffers refuses every later call at once, but libvaccel's close
//    (which unmaps every buffer) waits until the last view is gone: no view
//    ever points at unmapped memory, and closing never fails for them;
//  - contexts are made on first use, one per device, and live until the
//    client closes, so every program and buffer of one device can be bound
//    together (bindings must share the queue's context); their queues are
//    the client's QueuePool's (queue_pool.hpp).
// Lifetime: ProgramCore and BufferCore hold a shared_ptr to it; the client
// closes when the last of them, and the Python Client, are gone.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>

#include "call_failure.hpp"

namespace vaccel::python {

class QueuePool;

class ClientCore {
public:
    // Opens a client over `transport` (nullopt: libvaccel's automatic
    // choice). `socket_path` names the daemon's socket (nullopt:
    // $VACCEL_SOCKET, else the default); it is passed to libvaccel, never
    // put in the environment. Call without the GIL.
    static std::shared_ptr<ClientCore> open(const std::optional<std::string>& transport,
                                            const std::optional<std::string>& socket_path);
    ~ClientCore();
    ClientCore(const ClientCore&) = delete;
    ClientCore& operator=(const ClientCore&) = delete;

    // The client held open for one call; refused once closed.
    class Hold {
    public:
        vaccel_client* get() const { return client_; }

    private:
        friend class ClientCore;
        Hold(std::shared_lock<std::shared_mutex> lock, vaccel_client* client)
            : lock_(std::move(lock)), client_(client)
        {
        }
        std::shared_lock<std::shared_mutex> lock_;
        vaccel_client* client_;
    };
    // Call without the GIL (the lock may wait for close()).
    Hold hold() const;
    // The same, or nothing once closed (for releases: a closed client
    // released everything already).
    std::optional<Hold> try_hold() const;

    // Closes the client (see above); closing a closed client does nothing.
    // Call without the GIL.
    void close();
    bool closed() const;
    // The last view of a mapped buffer is gone (`views` fell to 0): a close
    // that waited for it happens now. Called without a Hold on this thread.
    void view_released();
    const std::string& transport() const { return transport_; }

    // The context of `device`, made on first use. Needs a Hold.
    std::uint64_t context(const Hold& hold, std::uint32_t device);

    // The queues runs take (a run's QueueLease needs a Hold).
    QueuePool& queues() { return *queues_; }

    // Live views into mapped buffers of this client (see close()).
    std::atomic<std::int64_t> views{0};

private:
    ClientCore(vaccel_client* client, std::string transport);

    mutable std::shared_mutex lifetime_;  // shared: a call; exclusive: close
    bool closed_ = false;                 // calls are refused
    vaccel_client* client_;               // nullptr once libvaccel closed it
    const std::string transport_;
    std::mutex contexts_mutex_;  // guards contexts_ (and serializes their creation)
    std::map<std::uint32_t, std::uint64_t> contexts_;
    const std::unique_ptr<QueuePool> queues_;
};

// The refusal of any call on a closed client.
CallFailure client_closed();

}  // namespace vaccel::python
