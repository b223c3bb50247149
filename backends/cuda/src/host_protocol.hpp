// host_protocol.hpp - the messages between vacceld's CUDA backend and a
// CUDA host process (docs/adr/0018-cuda-backend.md, "One process per
// vaccel context").
//
// Decides:
//  - one SOCK_SEQPACKET socketpair per host: every message is one packet of
//    at most max_message bytes, a Header then its body; the daemon sends
//    requests and waits for the reply carrying the same id; the host also
//    sends `completed` messages (id = the event) whenever an event ends;
//  - bulk bytes (buffer contents, program payloads) never travel in
//    packets: they pass through a shared memory window (a memfd of
//    window_bytes the daemon creates and the host maps), one chunk per
//    request;
//  - bodies are written and read field by field (Writer, Reader); a Reader
//    that runs past its packet reports it, and the receiver refuses the
//    message rather than guessing.
//  - the window is sealed by the daemon (F_SEAL_SHRINK, F_SEAL_GROW,
//    F_SEAL_SEAL) before the host exists, so a host cannot truncate it
//    under the daemon's mapping (a SIGBUS in vacceld);
//  - a host holds every accepted submission and launch until the daemon
//    releases it (Op::release, or the request's last byte, 1, when the
//    scheduler released it before sending): the daemon's device scheduler decides when
//    each context's work reaches the device. A submission's reply says in
//    how many segments it goes (slicing.hpp); each release starts one, and
//    the host reports each segment's end but the last (Op::segment_ended); SUBMIT_AFTER gates are kept by
//    the daemon, which sends such work as it sends any and releases it once
//    the gate is reached (or ends it with Op::end_held);
//  - the daemon side waits for nothing without a deadline
//    (send_packet_before, receive_packet_before; host_proxy.hpp says how
//    long).
// A host trusts its daemon (the daemon started it, alone holds the other
// end). The daemon does not trust a host (it runs a client's kernels in a
// process a driver bug or a fault may have corrupted): every message is
// read to its exact end, every field range-checked, and a message that
// breaks the protocol ends the host (host_proxy.cpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "vaccel/common/error.hpp"

namespace vaccel::backend::cuda::host {

inline constexpr std::size_t max_message = 64 * 1024;
inline constexpr std::uint64_t window_bytes = 16ull << 20;

enum class Op : std::uint32_t {
    hello = 1,       // host -> daemon, once: the context exists, or why not
    reply = 2,       // host -> daemon: the answer to request `id`
    completed = 3,   // host -> daemon: event `id` ended
    allocate = 10,
    free_buffer = 11,
    write = 12,      // window -> buffer
    read = 13,       // buffer -> window
    payload = 14,    // appends window bytes to the program being loaded
    load = 15,
    unload = 16,
    queue_create = 17,
    queue_destroy = 18,
    gate_create = 19,
    gate_raise = 20,
    gate_destroy = 21,
    submit = 22,
    launch = 23,
    event_destroy = 24,
    cancel = 25,
    // daemon -> host, no reply (id = the event): the device scheduler's word
    // that accepted work may go on its stream now, or must end unstarted
    // (its gate was destroyed: the state and the reason follow).
    release = 26,
    end_held = 27,
    // host -> daemon (id = the event, then the segment's index, u32): one
    // segment of work cut into segments ended and the work goes on (the
    // submit reply said how many segments; the last one's end is
    // `completed`). Each release after the first starts the next segment.
    segment_ended = 28,
};

struct Header {
    Op op;
    std::uint32_t pad;
    std::uint64_t id;  // request id, or the event of `completed`
};

class Writer {
public:
    explicit Writer(Op op, std::uint64_t id = 0)
    {
        bytes_.reserve(256);
        put(Header{op, 0, id});
    }
    template <class T>
    Writer& put(const T& value)
    {
        static_assert(std::is_trivially_copyable_v<T>);
        const std::size_t at = bytes_.size();
        bytes_.resize(at + sizeof(T));
        std::memcpy(bytes_.data() + at, &value, sizeof(T));
        return *this;
    }
    Writer& text(std::string_view s);
    Writer& error(const Error& e);
    Writer& blob(std::span<const std::byte> b);
    std::span<const std::byte> bytes() const { return bytes_; }

private:
    std::vector<std::byte> bytes_;
};

class Reader {
public:
    explicit Reader(std::span<const std::byte> packet) : data_(packet) {}
    template <class T>
    T get()
    {
        static_assert(std::is_trivially_copyable_v<T>);
        T value{};
        if (!ok_ || data_.size() - at_ < sizeof(T)) {
            ok_ = false;
            return value;
        }
        std::memcpy(&value, data_.data() + at_, sizeof(T));
        at_ += sizeof(T);
        return value;
    }
    std::string text();
    Error error();
    std::vector<std::byte> blob();
    // False once a read ran past the packet.
    bool ok() const { return ok_; }
    // Every read was in the packet and the packet holds nothing more.
    bool done() const { return ok_ && at_ == data_.size(); }

private:
    std::span<const std::byte> data_;
    std::size_t at_ = 0;
    bool ok_ = true;
};

// Longest note a refusal carries (Writer::error cuts longer ones).
inline constexpr std::size_t max_note = 8192;

// A refusal a peer may send: a known code other than ok, a known detail and
// limit kind, a note of at most max_note bytes.
bool well_formed(const Error& e);

// One packet on `fd`; false when the peer is gone (or the packet did not fit).
bool send_packet(int fd, std::span<const std::byte> packet);
// The next packet, or nothing when the peer is gone.
std::optional<std::vector<std::byte>> receive_packet(int fd);

// The daemon's side: the same, bounded by `deadline`.
enum class Sent { ok, gone, expired };
Sent send_packet_before(int fd, std::span<const std::byte> packet,
                        std::chrono::steady_clock::time_point deadline);
struct Received {
    std::optional<std::vector<std::byte>> packet;  // nothing: gone or expired
    bool expired = false;
};
Received receive_packet_before(int fd, std::chrono::steady_clock::time_point deadline);

}  // namespace vaccel::backend::cuda::host
