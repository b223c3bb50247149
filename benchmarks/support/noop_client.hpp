// noop_client.hpp - a libvaccel client ready to submit the smallest work.
//
// Owns: one vaccel_client (C API, any transport) with a context on the
// first device whose driver starts with `driver` ("vaccel-cpu" unless told
// otherwise; "vaccel-vulkan" for the first Vulkan device), the no-op
// program (c = a + b on [1] floats, or on `elements` floats when asked,
// built with the TOSA GraphBuilder), a queue, its two input buffers and
// `outputs` output
// buffers, so that up to `outputs` submissions can be in flight at once (a
// written buffer is held by its submission until it completes). Decides:
// every failure is printed with libvaccel's own sentence and reported as
// false / the negative errno; nothing is retried.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "vaccel/vaccel.h"

namespace vaccel::bench {

// The TOSA 1.0 flatbuffer of c = a + b, a, b, c of shape [elements], FP32.
std::vector<std::uint8_t> noop_program(std::int64_t elements = 1);

class NoopClient {
public:
    NoopClient() = default;
    ~NoopClient() { close(); }
    NoopClient(const NoopClient&) = delete;
    NoopClient& operator=(const NoopClient&) = delete;

    // `transport`: "socket" or "embedded" (vaccel_client_open's names).
    // With `kernel` (a PTX module holding an empty `noop` kernel), submit()
    // launches noop on one thread instead of running the TOSA program.
    // `elements`: the ADD's length (its buffers hold elements floats).
    bool open(const char* transport, unsigned outputs = 1, const char* driver = "vaccel-cpu",
              const std::vector<std::uint8_t>& kernel = {}, std::int64_t elements = 1);
    void close();

    // Submits the program writing output `output`; 0 or the negative errno.
    int submit(unsigned output, std::uint64_t* event);
    // Waits (1 s at most) for one event.
    int wait(std::uint64_t event);
    int destroy(std::uint64_t event);
    // vaccel_run of the same work: submission and wait in one request.
    int run(unsigned output);

    vaccel_client* client() const { return client_; }
    std::uint64_t context() const { return context_; }
    std::uint64_t input(unsigned slot) const { return slot == 0 ? a_ : b_; }
    std::uint64_t output(unsigned i) const { return outputs_[i]; }
    // The device the context is on, as vaccel_device_info reported it.
    const struct vaccel_device_info& device() const { return device_; }

private:
    std::array<vaccel_binding, 3> bind(unsigned output) const;

    vaccel_client* client_ = nullptr;
    std::uint64_t context_ = 0;
    struct vaccel_device_info device_{};
    std::uint64_t program_ = 0;
    bool launches_ = false;  // program_ is the noop kernel
    std::uint64_t queue_ = 0;
    std::uint64_t a_ = 0, b_ = 0;
    std::uint64_t bytes_ = 4;  // of each buffer
    std::vector<std::uint64_t> outputs_;
};

// Prints "what: <libvaccel's message>" to stderr for a failed call and
// returns `rc` (negative errno).
int report(const char* what, int rc);

// Allocates a host buffer of `bytes` with every usage in `context`.
int allocate(vaccel_client* client, std::uint64_t context, std::uint64_t bytes,
             std::uint64_t* buffer);

}  // namespace vaccel::bench
