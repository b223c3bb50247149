// seqpacket_floor.hpp - the floor of any request forwarded to vacceld.
//
// Owns: a bare ping-pong of fixed-size messages over a SOCK_SEQPACKET
// socketpair between this process and a forked echo process. Nothing a
// daemon does can make a request/response round trip cheaper than this, so
// the daemon benchmarks print their figures beside it, measured in the same
// run. Decides: the parent's CPU affinity is restored afterwards, so a
// pinned measurement does not leak into the next one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vaccel::bench {

struct PingPong {
    std::size_t message_bytes = 64;
    unsigned round_trips = 20000;
    unsigned warmup = 1000;
    int cpu = -1;  // >= 0: both processes pinned to this CPU
};

// One sample (ns) per round trip; empty on a system error (printed).
std::vector<std::uint64_t> seqpacket_ping_pong(const PingPong& options);

}  // namespace vaccel::bench
