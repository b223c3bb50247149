// transfer_rates.hpp - a buffer's write and read rates beside memcpy's.
//
// Decides: GB/s are 10^9 bytes/s of the median of the repetitions (after
// one unmeasured warm-up); every destination is touched before timing, so
// page faults of first use are counted nowhere; bytes read back through
// vaccel are compared with those written.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace vaccel::bench {

struct Rates {
    double write = 0, read = 0, both = 0;  // GB/s
};

// memcpy of `host` into a host buffer of the same size and back into `back`.
Rates memcpy_rates(std::vector<char>& host, std::vector<char>& back, unsigned repetitions);

// vaccel_buffer_write of `host` then vaccel_buffer_read into `back` through
// `transport` ("socket" or "embedded"); nullopt after a failure (printed).
std::optional<Rates> vaccel_rates(const char* transport, std::vector<char>& host,
                                  std::vector<char>& back, unsigned repetitions);

}  // namespace vaccel::bench
