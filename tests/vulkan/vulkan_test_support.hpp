// vulkan_test_support.hpp - what the Vulkan device tests share: the one
// Vulkan device they run on (lavapipe in `make test`, the machine's GPU in
// `make test-gpu`), a Rig over it, and running one graph on it and on the
// CPU backend with the same inputs.
#pragma once

#include <cstring>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "vaccel/backend/vulkan.hpp"
#include "../cpu/cpu_test_support.hpp"

namespace vulkan_test {

using namespace cpu_test;

// The one Vulkan device the loader offers (ctest points it at lavapipe).
inline std::unique_ptr<Backend> lavapipe(VulkanOptions options = {})
{
    VulkanDevices found = open_vulkan_devices(options);
    if (found.devices.size() != 1)
        fail_msg("expected exactly one Vulkan device (lavapipe, or the GPU under make "
                 "test-gpu), found %zu: %s",
                 found.devices.size(), found.unavailable.c_str());
    return std::move(found.devices[0]);
}

// A Rig (cpu_test_support.hpp) over the Vulkan device.
inline Rig vulkan_rig(VulkanOptions options = {})
{
    return rig_on(lavapipe(options));
}

using GraphMaker = std::function<tosa::Graph()>;
using Bytes = TensorBytes;

// Runs `make()` on the CPU and on the Vulkan device with the same raw
// inputs; returns {cpu outputs, vulkan outputs}. Both rigs end with every
// counter zero.
inline std::pair<std::vector<Bytes>, std::vector<Bytes>> both(const GraphMaker& make,
                                                              const std::vector<Bytes>& inputs)
{
    std::vector<std::span<const std::byte>> spans(inputs.begin(), inputs.end());
    Rig cpu(1);
    auto p1 = cpu.must_load(make());
    auto want = cpu.run_raw(*p1, spans);
    cpu.finish(p1);
    Rig gpu = vulkan_rig();
    auto p2 = gpu.must_load(make());
    auto got = gpu.run_raw(*p2, spans);
    gpu.finish(p2);
    return {std::move(want), std::move(got)};
}


// Bit for bit (tolerance 0), else |got - want| <= tolerance * (1 + |want|).
inline void compare(const Bytes& got, const Bytes& want, float tolerance, const char* what)
{
    assert_int_equal(got.size(), want.size());
    if (tolerance == 0) {
        if (std::memcmp(got.data(), want.data(), got.size()) != 0) {
            print_error("%s differs from the CPU\n", what);
            if (got.size() % 4 == 0) assert_exactly(floats(got), floats(want));
            fail_msg("%s: bytes differ", what);
        }
    } else {
        assert_close(floats(got), floats(want), tolerance);
    }
}

}  // namespace vulkan_test
