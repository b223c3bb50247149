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
//  - the cooperative-matrix kernel (matmul_coop.comp) takes the fitting
//    tilings of a fixed list, largest first (128x128 blocks staged 32 deep
//    down to 32x32x16 in one subgroup), and the lowerer the first whose
//    block divides the MATMUL;
//  - on a GPU the kernel keeps A's tile transposed in shared memory (rows
//    padded to whole vec4s) and reads runs of 4 rows and columns as vec4
//    when RM and RN are multiples of 4; it issues the next k step's loads
//    before the current step's products (PREFETCH) and, where the lowerer
//    finds FP32 with C, W and both bases multiples of 4, reads the tiles
//    from the buffers as vec4 (VEC4: allowed by the tiles, taken by shape;
//    never on a device whose storage-buffer offset alignment is not a
//    multiple of 16 bytes, where a slot's start may not be);
//  - VACCEL_VULKAN_MATMUL_TILES=
//    "BM,BN,BK,RM,RN[,SHARED[,PREFETCH[,VEC4[,STAGES]]]]" overrides the
//    choice (for tuning on a GPU; each flag 0 or 1, default 1; STAGES 1 or
//    2, default 1: a second shared stage), VACCEL_VULKAN_MATMUL_ROWS=
//    "THREADS,SLICES" the streaming kernel's shape, and
//    VACCEL_VULKAN_COOPMAT_TILES="BM,BN,BK,WM,WN" the cooperative-matrix
//    kernel's; an override that does not fit is refused, never silently
//    replaced;
//  - CONV2D as an implicit GEMM (kernels/vulkan/conv2d_gemm.comp,
//    lowering_conv.hpp) runs the tiled kernel's tiles: the MATMUL's (the
//    override included, so one override tunes both) when its padded tiles
//    fit (conv_shared_bytes), else the first candidate whose do; a CPU
//    device takes 256 x 4 blocks of 4 x 4 read straight from the buffers,
//    one column of invocations, so every invocation of a workgroup reads
//    the same weights (one load for all of them on lavapipe) and the
//    input's rows differ, with vec4 loads where the channels allow.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

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
    // minStorageBufferOffsetAlignment: slots are bound at multiples of it,
    // so vec4 loads are 16-byte aligned only when it is a multiple of 16.
    std::uint64_t storage_offset_alignment = 16;
};

struct MatmulTiles {
    std::uint32_t bm = 0, bn = 0, bk = 0, rm = 0, rn = 0;
    // false: registers only, no shared memory and no barriers (CPU devices).
    bool shared = true;
    // The next k step loaded into registers before this step's products.
    bool prefetch = true;
    // vec4 loads from the buffers allowed (the lowerer takes them only for
    // FP32 shapes and bases that are multiples of 4).
    bool vec4 = true;
    // Shared stages: 1, or 2 (the next step stored while this one is read,
    // one barrier a step instead of two, twice the shared memory).
    std::uint32_t stages = 1;

    std::uint32_t invocations() const { return (bm / rm) * (bn / rn); }
    // Per stage two FP32 tiles in whole vec4 rows (matmul_tiled.comp): A's
    // BK rows of BM rounded up to 4 plus 4 words of padding against bank
    // conflicts, and B's BK rows of BN rounded up to 4.
    std::uint32_t shared_bytes() const
    {
        return stages * (bk * ((bm + 3) / 4 + 1) + bk * ((bn + 3) / 4)) * 16;
    }
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

// The cooperative-matrix kernel's fragment (matmul_coop.comp): m x n
// results, k deep, computed by one subgroup of `subgroup_size`.
struct CoopMatrixShape {
    std::uint32_t m = 0, n = 0, k = 0;
    std::uint32_t subgroup_size = 0;  // the device's
    friend bool operator==(const CoopMatrixShape&, const CoopMatrixShape&) = default;
};

// The FP16 x FP16 + FP32 shape at subgroup scope to use: 16x16x16 when
// listed, else the first such entry; none when none is listed. `m`, `n` and
// `k` must be multiples of 8 (whole uvec4s of FP16 in the staged tiles).
std::optional<CoopMatrixShape> choose_coop_shape(std::span<const CoopMatrixEntry> entries,
                                                 std::uint32_t subgroup_size);

// The cooperative-matrix kernel's tiling: a workgroup computes a bm x bn
// block, staging A's bm x bk and B's bk x bn FP16 tiles in shared memory
// (each row padded by 8 halves against bank conflicts); its
// (bm / wm) * (bn / wn) subgroups each own a wm x wn sub-block of
// fragments.
struct CoopTiles {
    std::uint32_t bm = 0, bn = 0, bk = 0, wm = 0, wn = 0;
    std::uint32_t subgroups() const { return (bm / wm) * (bn / wn); }
    std::uint32_t shared_bytes() const { return (bm * (bk + 8) + bk * (bn + 8)) * 2; }
    friend bool operator==(const CoopTiles&, const CoopTiles&) = default;
};

// Why `tiles` cannot run `shape` on the device, empty when it can: every
// dimension a whole number of fragments (and of 8 halves), at most 16
// fragments per subgroup (their FP32 accumulators live in registers), the
// stage within maxComputeSharedMemorySize, the subgroups within the
// invocation limits, and their invocations dividing each staged tile's
// uvec4s of 8 halves (each copies as many).
std::string_view coop_tiles_misfit(const CoopTiles& tiles, const CoopMatrixShape& shape,
                                   const MatmulLimits& limits);

// The tilings to try for `shape`, largest first (the lowerer takes the
// first whose block divides the MATMUL): the candidates that fit, or only
// `override_text` (VACCEL_VULKAN_COOPMAT_TILES="BM,BN,BK,WM,WN"), refused
// (InvalidArgument, VACCEL_D_BAD_VALUE) when malformed or when it does not
// fit. Empty when no candidate fits.
Result<std::vector<CoopTiles>> choose_coop_tiles(const CoopMatrixShape& shape,
                                                 const MatmulLimits& limits,
                                                 std::optional<std::string_view> override_text =
                                                     std::nullopt);

// conv2d_gemm.comp's shared memory per stage: both tiles k-major, each row
// of whole vec4s plus one vec4 of padding (its B tile is stored transposed
// too, as W's rows are contiguous along K).
std::uint32_t conv_shared_bytes(const MatmulTiles& tiles);

struct MatmulChoice {
    MatmulTiles tiles;
    // CONV2D's implicit GEMM; absent: CONV2D keeps the direct kernel.
    std::optional<MatmulTiles> conv;
    // FP16 x FP16 -> FP32 on cooperative matrices when the device offers
    // them (VK_NV_cooperative_matrix), for shapes one of `coop_tiles`
    // divides (the first that does).
    std::optional<CoopMatrixShape> coop;
    std::vector<CoopTiles> coop_tiles;
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
