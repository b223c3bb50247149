// matmul_tiles.hpp - the MATMUL kernels' shapes, chosen from the device's
// limits (pure: no device, tested on fixtures).
//
// Decides (docs/adr/0013-vulkan-backend.md, "MATMUL kernels"):
//  - the tiled kernel (kernels/vulkan/matmul_tiled.comp) computes a BM x BN
//    block of results per workgroup, stepping over C by BK with both input
//    tiles in shared memory, and each invocation holds RM x RN results in
//    registers, so a workgroup is (BM / RM) * (BN / RN) invocations;
//  - a CPU device (lavapipe) takes 32 x 32 blocks of 4 x 4 per invocation
//    read straight from the buffers: its workgroup barriers are costly and
//    its shared memory is the same memory, so the shared-memory tile made
//    the 512^3 MATMUL of vulkan.programs slower there;
//  - otherwise the first candidate (largest first) that fits is taken: its
//    two FP32 tiles within maxComputeSharedMemorySize, its invocations
//    within maxComputeWorkGroupInvocations and maxComputeWorkGroupSize[0],
//    and a whole number of subgroups (subgroup size read from the device);
//  - the streaming kernel (matmul_rows.comp) is used for H <= max_rows: a
//    workgroup is THREADS column invocations x SLICES K-slices; each
//    invocation owns 1 consecutive result column of every row (4 when the
//    lowering can read B as 16-byte vectors), the slices split C and meet
//    in a fixed-order tree in shared memory (deterministic, no atomics).
//    8 column threads (a subgroup of 32 reads 4 rows of 128 contiguous
//    bytes of B) and as many slices as 1024 invocations, the device's
//    invocation limits and its shared memory allow; 8 x 8 on a CPU device;
//  - VACCEL_VULKAN_MATMUL_TILES="BM,BN,BK,RM,RN[,SHARED]" overrides the choice (for
//    tuning on a GPU), and VACCEL_VULKAN_MATMUL_ROWS="THREADS,SLICES"
//    the streaming kernel's shape; an override that does not fit is
//    refused, never silently replaced.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "vaccel/common/error.hpp"

namespace vaccel::backend::vulkan {

// What the choice reads of a device.
struct MatmulLimits {
    std::uint32_t max_shared_bytes = 0;       // maxComputeSharedMemorySize
    std::uint32_t max_invocations = 0;        // maxComputeWorkGroupInvocations
    std::uint32_t max_group_size_x = 0;       // maxComputeWorkGroupSize[0]
    std::uint32_t subgroup_size = 0;          // VkPhysicalDeviceVulkan11Properties
    bool subgroup_arithmetic_in_compute = false;  // supportedOperations & stages (informative)
    bool cpu_device = false;  // VK_PHYSICAL_DEVICE_TYPE_CPU (lavapipe)
};

struct MatmulTiles {
    std::uint32_t bm = 0, bn = 0, bk = 0, rm = 0, rn = 0;
    // false: registers only, no shared memory and no barriers (CPU devices).
    bool shared = true;

    std::uint32_t invocations() const { return (bm / rm) * (bn / rn); }
    // Two FP32 tiles: A's BK rows of BM + 1 (one word of padding against
    // bank conflicts, matmul_tiled.comp) and B's BK x BN.
    std::uint32_t shared_bytes() const { return (bk * (bm + 1) + bk * bn) * 4; }
    friend bool operator==(const MatmulTiles&, const MatmulTiles&) = default;
};

// The streaming kernel: a workgroup per `threads` (x4 with vector loads)
// consecutive results of every row.
struct MatmulRows {
    std::uint32_t threads = 0;  // column invocations of a workgroup
    std::uint32_t slices = 0;   // K-slices, a power of two
    std::uint32_t invocations() const { return threads * slices; }
    // One row at a time: up to 4 FP32 partial sums per invocation.
    std::uint32_t shared_bytes() const { return invocations() * 4 * 4; }
    friend bool operator==(const MatmulRows&, const MatmulRows&) = default;
};

// The streaming kernel's columns per invocation: 4 when every B row and
// B's base are 16-byte aligned FP32 (a vec4 load), else 1.
constexpr std::uint32_t rows_vector_width = 4;

// One entry of vkGetPhysicalDeviceCooperativeMatrixPropertiesNV.
struct CoopMatrixEntry {
    std::uint32_t m = 0, n = 0, k = 0;
    bool ab_fp16 = false;     // A and B types are FP16
    bool cd_fp32 = false;     // C and D types are FP32
    bool subgroup_scope = false;
};

// The cooperative-matrix kernel (matmul_coop.comp): fragments of m x n
// results, k deep; a subgroup computes 2 x 2 fragments.
struct CoopMatrixShape {
    std::uint32_t m = 0, n = 0, k = 0;
    std::uint32_t invocations = 0;  // one subgroup
    static constexpr std::uint32_t fragments = 2;  // per dimension
    friend bool operator==(const CoopMatrixShape&, const CoopMatrixShape&) = default;
};

// The FP16 x FP16 + FP32 shape at subgroup scope to use: 16x16x16 when
// listed, else the first such entry; none when none is listed. `m`, `n` and
// `k` must be multiples of 8 (16-byte aligned rows of FP16).
std::optional<CoopMatrixShape> choose_coop_shape(std::span<const CoopMatrixEntry> entries,
                                                 std::uint32_t subgroup_size);

struct MatmulChoice {
    MatmulTiles tiles;
    // FP16 x FP16 -> FP32 on cooperative matrices when the device offers
    // them (VK_NV_cooperative_matrix), for shapes the block divides.
    std::optional<CoopMatrixShape> coop;
    std::optional<MatmulRows> rows;  // absent: no shape fits the device
    std::uint32_t max_rows = 4;      // H at or below this takes the streaming kernel
    friend bool operator==(const MatmulChoice&, const MatmulChoice&) = default;
};

// Why a candidate does not fit, empty when it does.
std::string_view tiles_misfit(const MatmulTiles& tiles, const MatmulLimits& limits);

// Why a streaming shape does not fit, empty when it does.
std::string_view rows_misfit(const MatmulRows& rows, const MatmulLimits& limits);

// The choice for a device; `override_text` is the environment variable's
// value when set. Refused (InvalidArgument, VACCEL_D_BAD_VALUE) when the
// override is malformed or does not fit, or (Unsupported, VACCEL_D_BAD_VALUE)
// when no candidate fits at all.
Result<MatmulChoice> choose_matmul(const MatmulLimits& limits,
                                   std::optional<std::string_view> override_text = std::nullopt,
                                   std::optional<std::string_view> rows_text = std::nullopt);

}  // namespace vaccel::backend::vulkan
