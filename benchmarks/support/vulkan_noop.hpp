// vulkan_noop.hpp - the floor of a no-op GPU submission: an empty command
// buffer given to the queue with vkQueueSubmit and waited for with
// vkWaitForFences, in this process, straight on the Vulkan API.
//
// Owns its own VkInstance and VkDevice on the first physical device of the
// asked type (discrete GPU first, as the backend ranks them), a compute
// queue, one command buffer recorded once and one fence. Decides: the
// instance is never destroyed (kept until the process exits), because some
// drivers cannot be loaded again into a process once the loader unloads
// them (docs/adr/0013-vulkan-backend.md), and a benchmark may open the
// backend afterwards.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vaccel::bench {

struct VulkanNoopFloor {
    std::string device;                 // the device's name
    std::vector<std::uint64_t> samples; // ns per submit + wait + fence reset
};

// `iterations` measured round trips after `warmup`; an empty result (and a
// reason on stderr) when there is no Vulkan device.
VulkanNoopFloor vulkan_noop_floor(unsigned iterations, unsigned warmup);

}  // namespace vaccel::bench
