// matmul_tiles.cpp - choosing the MATMUL kernels' shapes (matmul_tiles.hpp).
#include "matmul_tiles.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>

namespace vaccel::backend::vulkan {
namespace {

// Largest first: more results per invocation reuse each shared-memory load
// more often. Every candidate is a whole number of 64-wide groups, so it is
// whole subgroups for any power-of-two subgroup size up to 64.
// 8 x 8 per invocation reads 2 + 2 vec4 of shared memory per 64 products.
// First: 8 x 4 per invocation, the fastest on an NVIDIA H200 (4096^3 FP32,
// 2026-12-01: 36.3 TFLOP/s against 34.1 for 8 x 8, 35.0 for 128x128x8 and
// 29.4 for 64x64x16; docs/PERFORMANCE.md).
constexpr std::array<MatmulTiles, 8> candidates{{
    {128, 128, 16, 8, 4},  // 512 invocations, 16640 bytes of shared memory
    {128, 128, 16, 8, 8},  // 256 invocations, 16640 bytes of shared memory
    {128, 128, 8, 8, 8},   // 256 invocations, 8320 bytes
    {64, 64, 16, 4, 4},    // 256 invocations, 8448 bytes
    {64, 64, 8, 4, 4},     // 256 invocations, 4224 bytes
    {32, 32, 8, 4, 4},     // 64 invocations, 2176 bytes
    {16, 16, 8, 2, 2},     // 64 invocations, 1152 bytes
    {8, 8, 8, 1, 1},       // 64 invocations, 640 bytes
}};

// The cooperative-matrix kernel's tilings, largest first (for 16x16x16
// fragments; coop_tiles_misfit passes over those another fragment does not
// divide). 128 x 128 blocks reuse each staged element 128 times; the
// smaller ones are for MATMULs the large block does not divide. On an
// NVIDIA H200 (4096^3, 2026-12-01) 4 subgroups of 4 x 4 fragments ran at
// 118 TFLOP/s, 8 of 4 x 2 at 96, a 64-deep stage at 36 (docs/PERFORMANCE.md).
constexpr std::array<CoopTiles, 4> coop_candidates{{
    {128, 128, 32, 64, 64},  // 4 subgroups of 4 x 4 fragments, 18944 bytes
    {128, 128, 32, 64, 32},  // 8 subgroups of 4 x 2 fragments, 18944 bytes
    {64, 64, 32, 32, 32},    // 4 subgroups of 2 x 2 fragments, 9728 bytes
    {32, 32, 16, 32, 32},    // 1 subgroup of 2 x 2 fragments, 2816 bytes
}};

// Each subgroup's FP32 accumulator fragments stay in registers.
constexpr std::uint32_t max_coop_fragments = 16;

Error coop_refusal(std::string_view text, std::string_view why)
{
    return Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE)
        .with_note(fmt::format("VACCEL_VULKAN_COOPMAT_TILES=\"{}\" was refused: {}; give "
                               "\"BM,BN,BK,WM,WN\" with WM dividing BM and WN dividing BN, "
                               "each a whole number of the device's fragments, or unset it to "
                               "let the device's limits choose",
                               text, why));
}

// The direct path has no k steps to prefetch and no tiles to load as vec4.
constexpr MatmulTiles cpu_tiles{32, 32, 8, 4, 4, false, false, false};

// CONV2D on a CPU device: 256 rows x 4 columns a block, 4 x 4 per
// invocation, so the 64 invocations share their 4 weight rows (uniform
// loads) and read 4 pixels each; vec4 loads allowed (the lowering takes
// them when IC and the bases are multiples of 4). BK only sizes the unused
// shared arrays.
constexpr MatmulTiles cpu_conv_tiles{256, 4, 4, 4, 4, false, false, true};

// The streaming kernel: 8 column invocations (with vec4 loads a subgroup of
// 32 reads 4 rows of B, 128 contiguous bytes each) and as many K-slices as
// the invocation budget allows, so that a 4096-wide GEMV still runs 128
// workgroups of 1024 invocations. A CPU device runs a workgroup on one
// thread: 8 slices keep its barriers few.
constexpr std::uint32_t rows_threads = 8;
constexpr std::uint32_t rows_invocations_gpu = 1024;
constexpr std::uint32_t rows_invocations_cpu = 64;

Error override_refusal(std::string_view text, std::string_view why)
{
    return Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE)
        .with_note(fmt::format("VACCEL_VULKAN_MATMUL_TILES=\"{}\" was refused: {}; give "
                               "\"BM,BN,BK,RM,RN[,SHARED[,PREFETCH[,VEC4[,STAGES]]]]\" with RM "
                               "dividing BM, RN dividing BN, each flag 0 or 1 (default 1) "
                               "and STAGES 1 or 2 (default 1), "
                               "or unset it to let the device's limits choose",
                               text, why));
}

Error rows_refusal(std::string_view text, std::string_view why)
{
    return Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE)
        .with_note(fmt::format("VACCEL_VULKAN_MATMUL_ROWS=\"{}\" was refused: {}; give "
                               "\"THREADS,SLICES\": column invocations times a power-of-two "
                               "number of K-slices making whole subgroups within the device's "
                               "invocation and shared-memory limits, or unset it",
                               text, why));
}

// Count positive integers "a,b,...".
template <std::size_t Count>
std::optional<std::array<std::uint32_t, Count>> parse_positive(std::string_view text)
{
    std::array<std::uint32_t, Count> v{};
    const char* p = text.data();
    const char* end = text.data() + text.size();
    for (std::size_t i = 0; i < v.size(); ++i) {
        auto [next, ec] = std::from_chars(p, end, v[i]);
        if (ec != std::errc{} || v[i] == 0) return std::nullopt;
        p = next;
        if (i + 1 < v.size()) {
            if (p == end || *p != ',') return std::nullopt;
            ++p;
        }
    }
    if (p != end) return std::nullopt;
    return v;
}

// "BM,BN,BK,RM,RN", up to three 0/1 flags (SHARED, PREFETCH, VEC4) and
// STAGES, 1 or 2.
std::optional<MatmulTiles> parse_tiles(std::string_view text)
{
    std::array<std::uint32_t, 9> v{0, 0, 0, 0, 0, 1, 1, 1, 1};
    const char* p = text.data();
    const char* end = text.data() + text.size();
    for (std::size_t i = 0; i < v.size(); ++i) {
        auto [next, ec] = std::from_chars(p, end, v[i]);
        if (ec != std::errc{}) return std::nullopt;
        p = next;
        if (p == end && i >= 4) break;  // the flags may be left out
        if (p == end || *p != ',' || i + 1 == v.size()) return std::nullopt;
        ++p;
    }
    if (p != end || v[5] > 1 || v[6] > 1 || v[7] > 1 || v[8] < 1 || v[8] > 2)
        return std::nullopt;
    return MatmulTiles{v[0], v[1], v[2], v[3], v[4], v[5] == 1, v[6] == 1, v[7] == 1, v[8]};
}

}  // namespace

std::string_view rows_misfit(const MatmulRows& r, const MatmulLimits& limits)
{
    if (r.threads == 0 || r.slices == 0) return "a dimension is zero";
    // The slices meet in a halving tree.
    if ((r.slices & (r.slices - 1)) != 0) return "the K-slices are not a power of two";
    if (r.invocations() > limits.max_invocations || r.invocations() > limits.max_group_size_x)
        return "the workgroup exceeds the device's invocation limit";
    if (limits.subgroup_size == 0 || r.invocations() % limits.subgroup_size != 0)
        return "the workgroup is not a whole number of subgroups";
    if (r.shared_bytes() > limits.max_shared_bytes)
        return "the partial sums exceed the device's shared memory";
    return {};
}

std::uint32_t conv_shared_bytes(const MatmulTiles& t)
{
    return t.stages * (t.bk * ((t.bm + 3) / 4 + 1) + t.bk * ((t.bn + 3) / 4 + 1)) * 16;
}

namespace {

// Why `t` cannot run conv2d_gemm.comp on the device, empty when it can: the
// MATMUL's limits with the padded B tile, and the shared arrays declared
// even by the direct path within the limit.
std::string_view conv_tiles_misfit(const MatmulTiles& t, const MatmulLimits& limits)
{
    if (auto why = tiles_misfit(t, limits); !why.empty()) return why;
    if (conv_shared_bytes(t) > limits.max_shared_bytes)
        return "CONV2D's two tiles (both padded) exceed the device's shared memory";
    return {};
}

}  // namespace

std::string_view tiles_misfit(const MatmulTiles& t, const MatmulLimits& limits)
{
    if (t.bm == 0 || t.bn == 0 || t.bk == 0 || t.rm == 0 || t.rn == 0)
        return "a tile dimension is zero";
    if (t.bm % t.rm != 0 || t.bn % t.rn != 0)
        return "the register block does not divide the tile";
    if (t.rm * t.rn > 64) return "more than 64 results per invocation";
    if (t.shared && t.shared_bytes() > limits.max_shared_bytes)
        return "the two tiles exceed the device's shared memory";
    if (t.invocations() > limits.max_invocations || t.invocations() > limits.max_group_size_x)
        return "the workgroup exceeds the device's invocation limit";
    if (limits.subgroup_size == 0 || t.invocations() % limits.subgroup_size != 0)
        return "the workgroup is not a whole number of subgroups";
    return {};
}

Result<MatmulChoice> choose_matmul(const MatmulLimits& limits,
                                   std::optional<std::string_view> override_text,
                                   std::optional<std::string_view> rows_text)
{
    MatmulChoice choice;
    if (override_text) {
        auto parsed = parse_tiles(*override_text);
        if (!parsed)
            return fail(override_refusal(*override_text,
                                         "it is not five integers, up to three 0/1 flags "
                                         "and STAGES 1 or 2"));
        if (auto why = tiles_misfit(*parsed, limits); !why.empty())
            return fail(override_refusal(*override_text, why));
        choice.tiles = *parsed;
    } else if (limits.cpu_device && tiles_misfit(cpu_tiles, limits).empty()) {
        choice.tiles = cpu_tiles;
    } else {
        bool found = false;
        for (const MatmulTiles& t : candidates) {
            if (tiles_misfit(t, limits).empty()) {
                choice.tiles = t;
                found = true;
                break;
            }
        }
        if (!found)
            return fail(Error::of(Errc::unsupported, VACCEL_D_BAD_VALUE, limits.subgroup_size,
                                  limits.max_shared_bytes)
                            .with_note(fmt::format(
                                "no MATMUL tile fits this Vulkan device (subgroup size {}, {} "
                                "bytes of shared memory, {} invocations per workgroup); run "
                                "MATMUL on the cpu device",
                                limits.subgroup_size, limits.max_shared_bytes,
                                limits.max_invocations)));
    }
    // CONV2D: the override's tiles (refused when they do not fit its
    // padded tiles), a CPU device's own, else the MATMUL's when they fit.
    if (override_text) {
        if (auto why = conv_tiles_misfit(choice.tiles, limits); !why.empty())
            return fail(override_refusal(*override_text, why));
        choice.conv = choice.tiles;
    } else if (limits.cpu_device && conv_tiles_misfit(cpu_conv_tiles, limits).empty()) {
        choice.conv = cpu_conv_tiles;
    } else if (conv_tiles_misfit(choice.tiles, limits).empty()) {
        choice.conv = choice.tiles;
    } else {
        for (const MatmulTiles& t : candidates)
            if (conv_tiles_misfit(t, limits).empty()) {
                choice.conv = t;
                break;
            }
    }
    // A slot bound at a multiple of 4 or 8 bytes would misalign vec4 loads.
    if (limits.storage_offset_alignment % 16 != 0) {
        choice.tiles.vec4 = false;
        if (choice.conv) choice.conv->vec4 = false;
    }
    // The streaming kernel: the most slices (a power of two) that fit.
    const std::uint32_t wanted = limits.cpu_device ? rows_invocations_cpu : rows_invocations_gpu;
    for (std::uint32_t slices = wanted / rows_threads; slices >= 1; slices /= 2) {
        const MatmulRows rows{rows_threads, slices};
        if (rows_misfit(rows, limits).empty()) {
            choice.rows = rows;
            break;
        }
    }
    if (rows_text) {
        auto v = parse_positive<2>(*rows_text);
        if (!v) return fail(rows_refusal(*rows_text, "it is not two positive integers"));
        const MatmulRows rows{(*v)[0], (*v)[1]};
        if (auto why = rows_misfit(rows, limits); !why.empty())
            return fail(rows_refusal(*rows_text, why));
        choice.rows = rows;
    }
    return choice;
}

std::optional<CoopMatrixShape> choose_coop_shape(std::span<const CoopMatrixEntry> entries,
                                                 std::uint32_t subgroup_size)
{
    if (subgroup_size == 0) return std::nullopt;
    std::optional<CoopMatrixShape> first;
    for (const CoopMatrixEntry& e : entries) {
        if (!e.ab_fp16 || !e.cd_fp32 || !e.subgroup_scope) continue;
        if (e.m == 0 || e.n == 0 || e.k == 0 || e.m % 8 || e.n % 8 || e.k % 8) continue;
        const CoopMatrixShape shape{e.m, e.n, e.k, subgroup_size};
        if (e.m == 16 && e.n == 16 && e.k == 16) return shape;
        if (!first) first = shape;
    }
    return first;
}

std::string_view coop_tiles_misfit(const CoopTiles& t, const CoopMatrixShape& shape,
                                   const MatmulLimits& limits)
{
    if (t.bm == 0 || t.bn == 0 || t.bk == 0 || t.wm == 0 || t.wn == 0)
        return "a tile dimension is zero";
    if (shape.m == 0 || shape.n == 0 || shape.k == 0 || shape.subgroup_size == 0)
        return "the device lists no usable fragment";
    if (t.bm % t.wm != 0 || t.bn % t.wn != 0)
        return "the sub-blocks do not divide the block";
    if (t.wm % shape.m != 0 || t.wn % shape.n != 0 || t.bk % shape.k != 0)
        return "a sub-block or the stage's depth is not a whole number of fragments";
    // The stage is copied and loaded in uvec4s of 8 halves.
    if (t.bk % 8 != 0 || t.bn % 8 != 0)
        return "BK or BN is not a multiple of 8";
    if ((t.wm / shape.m) * (t.wn / shape.n) > max_coop_fragments)
        return "more than 16 fragments per subgroup";
    if (t.shared_bytes() > limits.max_shared_bytes)
        return "the two staged tiles exceed the device's shared memory";
    const std::uint64_t invocations =
        static_cast<std::uint64_t>(t.subgroups()) * shape.subgroup_size;
    if (invocations > limits.max_invocations || invocations > limits.max_group_size_x)
        return "the subgroups exceed the device's invocation limit";
    // Every invocation copies the same number of uvec4s of each stage.
    if ((t.bm * (t.bk / 8)) % invocations != 0 || (t.bk * (t.bn / 8)) % invocations != 0)
        return "the invocations do not divide each staged tile's uvec4s (8 halves each)";
    return {};
}

Result<std::vector<CoopTiles>> choose_coop_tiles(const CoopMatrixShape& shape,
                                                 const MatmulLimits& limits,
                                                 std::optional<std::string_view> override_text)
{
    std::vector<CoopTiles> fitting;
    if (override_text) {
        auto v = parse_positive<5>(*override_text);
        if (!v) return fail(coop_refusal(*override_text, "it is not five positive integers"));
        const CoopTiles t{(*v)[0], (*v)[1], (*v)[2], (*v)[3], (*v)[4]};
        if (auto why = coop_tiles_misfit(t, shape, limits); !why.empty())
            return fail(coop_refusal(*override_text, why));
        fitting.push_back(t);
        return fitting;
    }
    for (const CoopTiles& t : coop_candidates)
        if (coop_tiles_misfit(t, shape, limits).empty()) fitting.push_back(t);
    return fitting;
}

}  // namespace vaccel::backend::vulkan
