// server_node.hpp - the kernel transport of vacceld's peers
// (server_node.cpp): the attached /dev/vaccel-server, its slots, and the
// sessions the vaccel module opened on it.
#pragma once

#include <array>
#include <expected>
#include <memory>
#include <string>

#include "dispatcher.hpp"
#include "vaccel/daemon/server.hpp"
#include "vaccel_server.h"

namespace vaccel::daemon {

class ServerNode final : public PeerTransport {
public:
    // Opens the node as `options` ask: null when not attached (off, absent,
    // busy or refused and not required); the error is for the operator.
    static std::expected<std::unique_ptr<ServerNode>, std::string> attach(
        const ServerOptions& options, Reactor& reactor);
    // The dispatcher its sessions' requests go to; before arm_fetches().
    void serve(Dispatcher& dispatcher) { dispatcher_ = &dispatcher; }
    // Parks one FETCH per slot. The first names the calling thread the
    // module's serving thread.
    void arm_fetches();
    // The module fails whatever reaches the node from now on.
    void detach();
    const std::string& node_path() const { return path; }

    const char* name() const override { return "kernel"; }
    void deliver(Peer& c, Reply& reply) override;
    void forget(Peer& c) override { sessions.erase(c.module_session); }
    bool always_flush() const override { return true; }

private:
    explicit ServerNode(Reactor& reactor) : reactor_(reactor) {}
    void slot_command(std::uint32_t slot, std::uint32_t op);
    void on_slot_done(std::uint32_t slot, int res);
    void on_delivered(std::uint32_t slot, std::span<const std::byte> message);
    void on_session_open(std::uint32_t slot, std::span<const std::byte> message);
    void on_session_close(std::uint32_t slot, std::span<const std::byte> message);
    // Every request the module delivered is answered exactly once, closing
    // or not: the module discards what nobody waits for.
    void commit(Reply reply);

    Reactor& reactor_;
    Dispatcher* dispatcher_ = nullptr;

    // The 4096-byte command buffer of each slot.
    struct alignas(64) SlotBuffer {
        std::array<std::byte, VACCEL_SRV_BUFFER_BYTES> bytes;
    };
    // A slot's state and who owns its buffer meanwhile:
    //  - parked: a FETCH or COMMIT_AND_FETCH is in flight: the module owns
    //    the buffer (it reads the answer at the commit's issue and writes
    //    the next request at delivery);
    //  - serving: a request was delivered: the daemon owns the buffer until
    //    it commits the one answer;
    //  - retired: the module refused to fetch on it (or detached us); never
    //    used again.
    enum class SlotState : std::uint8_t { parked, serving, retired };
    struct Slot {
        SlotState state = SlotState::retired;
        bool committing = false;  // the command in flight is a COMMIT_AND_FETCH
        // A BUFFER_MAP answer's file, whose number the commit names: kept
        // open until that command completes (the module resolves the number
        // when the ring issues the commit, which may be after commit()).
        UniqueFd passing;
    };

    std::string path;
    UniqueFd fd;
    // Ownership: never freed (allocated at attach, leaked on purpose). A
    // command parked in the module cannot be cancelled on 6.1: it stays
    // parked until this process's serving thread exits, and a delivery may
    // write a request into its buffer up to that moment - after the
    // reactor and the Server are gone.
    SlotBuffer* buffers = nullptr;
    std::array<Slot, VACCEL_SRV_MAX_SLOTS> slots{};
    bool detached = false;  // the module let go of us (-ENODEV): nothing more to commit
    std::uint32_t retired = 0;  // slots whose FETCH the node refused
    // Module session id -> peer id, for sessions not yet finished.
    std::unordered_map<std::uint64_t, std::uint64_t> sessions;
};

}  // namespace vaccel::daemon
