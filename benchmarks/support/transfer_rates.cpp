// transfer_rates.cpp - write and read rates (see transfer_rates.hpp).
#include "transfer_rates.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "latency.hpp"
#include "noop_client.hpp"

namespace vaccel::bench {

namespace {

double gbps(std::uint64_t bytes, std::uint64_t ns) { return static_cast<double>(bytes) / static_cast<double>(ns); }

std::uint64_t median(std::vector<std::uint64_t> v)
{
    std::sort(v.begin(), v.end());
    return v[(v.size() - 1) / 2];
}

Rates rates_of(std::uint64_t bytes, const std::vector<std::uint64_t>& writes,
               const std::vector<std::uint64_t>& reads)
{
    std::vector<std::uint64_t> both;
    for (std::size_t i = 0; i < writes.size(); ++i) both.push_back(writes[i] + reads[i]);
    return {gbps(bytes, median(writes)), gbps(bytes, median(reads)), gbps(2 * bytes, median(both))};
}

}  // namespace

Rates memcpy_rates(std::vector<char>& host, std::vector<char>& back, unsigned repetitions)
{
    std::vector<char> device(host.size());
    std::memset(device.data(), 0, device.size());
    std::vector<std::uint64_t> writes, reads;
    for (unsigned i = 0; i < repetitions + 1; ++i) {
        const std::uint64_t t0 = monotonic_ns();
        std::memcpy(device.data(), host.data(), host.size());
        const std::uint64_t t1 = monotonic_ns();
        std::memcpy(back.data(), device.data(), device.size());
        const std::uint64_t t2 = monotonic_ns();
        if (i == 0) continue;  // warm-up
        writes.push_back(t1 - t0);
        reads.push_back(t2 - t1);
    }
    return rates_of(host.size(), writes, reads);
}

std::optional<Rates> vaccel_rates(const char* transport, std::vector<char>& host,
                                  std::vector<char>& back, unsigned repetitions)
{
    NoopClient client;
    if (!client.open(transport)) return std::nullopt;
    std::uint64_t buffer = 0;
    if (allocate(client.client(), client.context(), host.size(), &buffer) != 0) return std::nullopt;
    std::vector<std::uint64_t> writes, reads;
    for (unsigned i = 0; i < repetitions + 1; ++i) {
        std::memset(back.data(), 0, back.size());
        const std::uint64_t t0 = monotonic_ns();
        int rc = vaccel_buffer_write(client.client(), buffer, 0, host.data(), host.size());
        if (rc != 0) return report("buffer write", rc), std::nullopt;
        const std::uint64_t t1 = monotonic_ns();
        rc = vaccel_buffer_read(client.client(), buffer, 0, back.data(), back.size());
        if (rc != 0) return report("buffer read", rc), std::nullopt;
        const std::uint64_t t2 = monotonic_ns();
        if (std::memcmp(host.data(), back.data(), host.size()) != 0) {
            std::fprintf(stderr, "%s: the bytes read back differ from those written\n", transport);
            return std::nullopt;
        }
        if (i == 0) continue;  // warm-up: the buffer's and the transport's first use
        writes.push_back(t1 - t0);
        reads.push_back(t2 - t1);
    }
    return rates_of(host.size(), writes, reads);
}

}  // namespace vaccel::bench
