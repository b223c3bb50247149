// server_node.hpp - the kernel transport of vacceld's peers
// (server_node.cpp): the attached /dev/vaccel-server, its slots, and the
// sessions the vaccel module opened on it.
#pragma once

#include <array>
#include <expected>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

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
    // Detaches (when detach() did not run) and frees the buffers the module
    // can no longer write into.
    ~ServerNode() override;
    // The dispatcher its sessions' requests go to; before arm_fetches().
    void serve(Dispatcher& dispatcher) { dispatcher_ = &dispatcher; }
    // Parks one FETCH per slot. The first names the calling thread the
    // module's serving thread.
    void arm_fetches();
    // Lets go of the module (VACCEL_SRV_IOCTL_DETACH), then closes the
    // node: the module fails what reaches it from now on, and another
    // daemon may attach at once. Call it while the reactor's ring still
    // exists (its parked commands complete with -ENODEV).
    void detach();
    const std::string& node_path() const { return path; }

    const char* name() const override { return "kernel"; }
    void deliver(Peer& c, Reply& reply) override;
    void forget(Peer& c) override;
    bool always_flush() const override { return true; }
    // A wait that did not end at its dispatch gives back its slot at once
    // (COMMIT_AND_FETCH with VACCEL_SRV_CMD_DEFER); its reply goes out
    // later with VACCEL_SRV_ANSWER.
    void waiting(Peer& c, const Request& request) override;

private:
    explicit ServerNode(Reactor& reactor) : reactor_(reactor) {}
    void slot_command(std::uint32_t slot, std::uint32_t op, std::uint32_t flags = 0);
    void on_slot_done(std::uint32_t slot, int res);
    void on_detached();
    void on_delivered(std::uint32_t slot, std::span<const std::byte> message);
    void on_session_open(std::uint32_t slot, std::span<const std::byte> message);
    void on_session_close(std::uint32_t slot, std::span<const std::byte> message);
    void on_withdraw(std::uint32_t slot, std::span<const std::byte> message);
    // Every request the module delivered is answered exactly once, closing
    // or not: the module discards what nobody waits for. A reply for the
    // request its slot holds commits on that slot; one for a deferred
    // request goes out with answer().
    void commit(Reply reply);
    void answer(std::uint64_t seq, const Reply& reply);
    void on_answered(std::uint64_t seq, int res);
    // The module no longer holds deferred request `seq` (its deferral was
    // refused): its wait ends here with no answer.
    void end_deferred(std::uint64_t seq);

    Reactor& reactor_;
    Dispatcher* dispatcher_ = nullptr;

    // The 4096-byte buffer of one command.
    struct alignas(64) SlotBuffer {
        std::array<std::byte, VACCEL_SRV_BUFFER_BYTES> bytes;
    };
    // A slot's state and who owns its buffer meanwhile:
    //  - parked: a FETCH or COMMIT_AND_FETCH is in flight: the module owns
    //    the buffer (it reads the answer at the commit's issue and writes
    //    the next request at delivery);
    //  - serving: request `seq` was delivered: the daemon owns the buffer
    //    until it commits or defers that request;
    //  - retired: the module refused to fetch on it (or detached us); never
    //    used again.
    enum class SlotState : std::uint8_t { parked, serving, retired };
    struct Slot {
        SlotState state = SlotState::retired;
        std::uint32_t op = 0;     // the command in flight (parked)
        std::uint32_t flags = 0;  // its flags (VACCEL_SRV_CMD_DEFER)
        std::uint64_t seq = 0;    // serving: the delivered request's; parked: the committed one's
        // A BUFFER_MAP answer's file, whose number the commit names: kept
        // open until that command completes (the module resolves the number
        // when the ring issues the commit, which may be after commit()).
        UniqueFd passing;
    };

    // The buffers of ANSWER commands: the module reads one while the ring
    // issues its SQE, which may be after answer() returned, so each is
    // taken from here and given back when its command completed. Grows to
    // the most answers in flight at once (a few).
    class AnswerBuffers {
    public:
        SlotBuffer* take();
        void give_back(SlotBuffer* buffer) { free_.push_back(buffer); }
        // Answers issued and not completed.
        std::size_t in_flight() const { return all_.size() - free_.size(); }
        // Leaves every buffer allocated (the module may still read one).
        void abandon();

    private:
        std::vector<std::unique_ptr<SlotBuffer>> all_;
        std::vector<SlotBuffer*> free_;
    };

    std::string path;
    UniqueFd fd;
    // Ownership: owned, but leaked on purpose (~ServerNode) unless the
    // module confirmed the detach: until then a command parked in the
    // module may still be completed into its buffer - kernels that cannot
    // cancel a uring_cmd keep it parked until this process's serving
    // thread exits, after the reactor and the Server are gone. After a
    // DETACH that succeeded the module no longer writes into them.
    std::unique_ptr<SlotBuffer[]> buffers;
    bool detach_confirmed = false;
    std::array<Slot, VACCEL_SRV_MAX_SLOTS> slots{};
    AnswerBuffers answers;
    bool detached = false;  // the module let go of us (-ENODEV): nothing more to commit
    std::uint32_t retired = 0;  // slots whose FETCH the node refused
    // Module session id -> peer id, for sessions not yet finished.
    std::unordered_map<std::uint64_t, std::uint64_t> sessions;
    // Deferred requests not yet answered: seq -> module session id.
    std::unordered_map<std::uint64_t, std::uint64_t> deferred;
};

}  // namespace vaccel::daemon
