// cuda_test_support.hpp - what the CUDA device tests share: the first CUDA
// device, a Rig over it, the test kernels (tests/cuda/kernels, built by
// nvcc into PTX and cubin) and running a graph on it and on the CPU.
//
// A machine without a CUDA device skips these tests (exit 77, which ctest
// reports as skipped, by name); with VACCEL_REQUIRE_GPU=1 (`make test-gpu`)
// a missing device fails them instead.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <vector>

#include "vaccel/backend/cuda.hpp"
#include "../cpu/cpu_test_support.hpp"

namespace cuda_test {

using namespace cpu_test;
using kernel_args::Arg;

// Exits 77 (skipped) when there is no CUDA device, naming why.
inline void require_device()
{
    static const CudaDevices found = [] { return open_cuda_devices(); }();
    if (!found.devices.empty()) return;
    const char* required = std::getenv("VACCEL_REQUIRE_GPU");
    if (required != nullptr && std::string(required) == "1")
        fail_msg("no CUDA device, and VACCEL_REQUIRE_GPU=1: %s", found.unavailable.c_str());
    std::printf("skipped: no CUDA device here (%s)\n", found.unavailable.c_str());
    std::fflush(stdout);
    std::_Exit(77);
}

// The first CUDA device, opened afresh.
inline std::unique_ptr<Backend> cuda_device(CudaOptions options = {})
{
    require_device();
    CudaDevices found = open_cuda_devices(options);
    if (found.devices.empty()) fail_msg("no CUDA device: %s", found.unavailable.c_str());
    return std::move(found.devices[0]);
}

// A Rig (cpu_test_support.hpp) over the first CUDA device.
inline Rig cuda_rig(CudaOptions options = {})
{
    return rig_on(cuda_device(options));
}

// tests/cuda/kernels/<name> as built (".ptx" or ".cubin").
inline std::vector<std::byte> kernel_file(const std::string& name)
{
    const std::string path = std::string(VACCEL_CUDA_TEST_KERNELS_DIR) + "/" + name;
    std::ifstream in(path, std::ios::binary);
    if (!in) fail_msg("cannot read %s", path.c_str());
    std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::byte> out(raw.size());
    std::memcpy(out.data(), raw.data(), raw.size());
    return out;
}

inline Result<std::unique_ptr<Program>> load_kernel(Rig& rig, std::uint32_t format,
                                                    std::span<const std::byte> module)
{
    ProgramDesc desc;
    desc.format = format;
    desc.payload = module;
    return rig.backend->load_program(*rig.context, desc);
}

// launch_kernels as PTX (compiled by the driver) or as an sm_90 cubin.
inline std::unique_ptr<Program> must_load_kernels(Rig& rig, bool cubin = false)
{
    const auto module = kernel_file(cubin ? "launch_kernels.cubin" : "launch_kernels.ptx");
    auto program = load_kernel(rig, cubin ? VACCEL_FORMAT_CUDA_CUBIN : VACCEL_FORMAT_CUDA_PTX,
                               module);
    assert_ok(program);
    return std::move(*program);
}

inline vaccel_launch_dims dims(std::uint32_t grid_x, std::uint32_t block_x = 64,
                               std::uint32_t grid_y = 1)
{
    vaccel_launch_dims d{};
    d.grid[0] = grid_x;
    d.grid[1] = grid_y;
    d.grid[2] = 1;
    d.block[0] = block_x;
    d.block[1] = d.block[2] = 1;
    return d;
}

}  // namespace cuda_test
