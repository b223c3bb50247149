// raw_cuda.hpp - the CUDA floors the CUDA figures are measured against, on
// the same device opened directly through the driver API in this process
// (no vaccel code between the program and the driver).
//
// Owns: a CUDA context on the device with the given UUID (else the first),
// a stream, and the module of the test kernels (tests/cuda/kernels, PTX).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace vaccel::bench {

class RawCuda {
public:
    // Exits with the driver's error when the device cannot be opened.
    RawCuda(const std::array<std::uint8_t, 16>& uuid, const std::vector<std::uint8_t>& ptx);
    ~RawCuda();
    RawCuda(const RawCuda&) = delete;
    RawCuda& operator=(const RawCuda&) = delete;

    // Median seconds of cuLaunchKernel(noop, 1 thread) + cuStreamSynchronize.
    double launch_sync_seconds(int iterations);
    // Median seconds of cuMemcpyDtoD of `bytes` between two device buffers.
    double copy_seconds(std::uint64_t bytes, int runs);
    const std::string& name() const { return name_; }

private:
    struct State;
    State* state_;
    std::string name_;
};

// The bytes of a file (the test kernels' PTX); exits when it cannot be read.
std::vector<std::uint8_t> read_file(const std::string& path);

}  // namespace vaccel::bench
