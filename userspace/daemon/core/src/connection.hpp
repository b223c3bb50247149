// connection.hpp - what the reactor keeps per client connection and per
// parked wait (private to the server).
//
// Ownership: every field is the reactor thread's. Jobs on other threads
// never point into a Connection: they carry its id and a shared_ptr to its
// Session, and come back through Reactor::post(). A Connection is removed
// only when no operation of the reactor still points into it (no receive,
// no send in flight) and no job of it is out (jobs == 0).
#pragma once

#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include "vaccel/daemon/server.hpp"

namespace vaccel::daemon {

// An EVENT_WAIT the daemon holds until its events are done or it times out.
// States: checking (a look is queued or running on a device worker: counted
// in Connection::jobs) or parked (waiting for a completion or the timer).
struct Server::ParkedWait {
    Request request;
    std::vector<std::uint64_t> handles;
    std::uint32_t flags = 0;
    std::uint64_t timeout_ns = 0;  // absolute CLOCK_MONOTONIC; 0 = poll once
    OpId timer = 0;                // armed timer, 0 = none
    bool checking = false;
    bool expired = false;          // the timer fired: the next look is the last
};

struct Server::Connection {
    std::uint64_t id = 0;
    UniqueFd fd;
    std::shared_ptr<engine::Session> session;
    std::uint32_t weight = 100;  // lane weight on the device workers

    // Receiving. Invariant: rx and rx_buffer are untouched while receiving.
    Message rx;
    std::vector<std::byte> rx_buffer;
    OpId recv_op = 0;
    bool receiving = false;

    // Sending, one message at a time. Invariant: tx and in_transit are
    // untouched while sending.
    std::deque<Reply> outbox;
    Message tx;
    Reply in_transit;
    bool sending = false;

    std::uint32_t jobs = 0;  // requests out on a worker or the chores thread
    std::unordered_map<std::uint64_t, ParkedWait> waits;
    std::uint64_t next_wait = 1;

    bool closing = false;
    bool flush = false;  // closing: still send the replies of work in flight

    std::size_t outstanding() const { return jobs + waits.size() + outbox.size(); }
};

}  // namespace vaccel::daemon
