// bench_vulkan.cpp - the Vulkan backend on any Vulkan device, each figure
// beside a baseline measured in the same run (or given on the command line).
//
// Through the Backend interface (what a submission costs: bindings checked,
// command buffer recorded, submitted, completion thread), wall clock from
// submit to the completion sink, the median of --runs after three warm-ups:
//  (a) FP32 MATMUL [1,N,N] x [1,N,N] in GFLOP/s (2 N^3 flops); baseline:
//      --anchor-fp32 (cuBLAS, from benchmarks/torch_anchor.py), when given;
//  (b) FP16 x FP16 -> FP32 MATMUL, same shape, on cooperative matrices
//      where the device offers them; baseline: the same with
//      VACCEL_VULKAN_COOPMAT=0 (the scalar FP16 kernel), and (a), from this
//      run (and --anchor-fp16 when given);
//  (c) ADD of two FP32 tensors of --add-bytes each into a third: effective
//      bandwidth counts reads + writes, 3 x bytes; baseline: one
//      vkCmdCopyBuffer of the same bytes between two device-local buffers on
//      the same device opened directly, counted the same way (read + write,
//      2 x bytes), ratio = ADD's GB/s / the copy's GB/s;
//  (d) GEMV, MATMUL [1,1,C] x [1,C,W] (the streaming kernel), time;
//      baseline: the memory-bound floor, its bytes (A, B and the result)
//      moved at the copy's effective bandwidth from (c);
//  (e) submission latency of a tiny program (ADD of one element), submit to
//      completion; baseline: vkQueueSubmit of an empty command buffer +
//      vkWaitForFences on the same device opened directly;
//  (f) FP32 CONV2D, each --conv shape (default: ResNet-50's stem and one
//      3x3 layer per stage, and a 1x1 bottleneck, at --conv-batch), in
//      GFLOP/s (2 M OC K flops, M = N*OH*OW, K = KH*KW*IC) on the implicit
//      GEMM kernel; baseline: the same program with VACCEL_VULKAN_CONV=direct
//      (the one-invocation-per-result kernel), from this run.
// Inputs are random for MATMUL and zero (fresh memory) for ADD. Nothing is
// asserted beyond every run completing: the figures are the result.
// --tiles sets VACCEL_VULKAN_MATMUL_TILES
// ("BM,BN,BK,RM,RN[,SHARED[,PREFETCH[,VEC4[,STAGES]]]]") and --rows
// VACCEL_VULKAN_MATMUL_ROWS ("THREADS,SLICES") for tuning
// (backends/vulkan/src/matmul_tiles.hpp); VACCEL_VULKAN_COOPMAT=0 keeps FP16
// off cooperative matrices. --coop-tiles BM,BN,BK,WM,WN (repeatable) measures
// (b) again with VACCEL_VULKAN_COOPMAT_TILES set to each value in turn, one
// line each, to sweep the cooperative-matrix tilings in one run; a tiling
// the device refuses ends the run with the refusal. --conv takes
// "N,H,W,IC,OC,K,STRIDE,PAD" (a K x K kernel, PAD before and at most PAD
// after), repeatable; --no-conv leaves (f) out.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "support/backend_runs.hpp"
#include "support/raw_vulkan.hpp"
#include "vaccel/backend/vulkan.hpp"
#include "vaccel/tosa/builder.hpp"
#include "vaccel/tosa/graph.hpp"

namespace {

using namespace vaccel;
using namespace vaccel::backend;
using tosa::DType;
using namespace vaccel::bench;

// One CONV2D of (f): NHWC input, K x K kernel, the same stride on both
// axes, PAD before (top, left) and after less what the last stride leaves
// over (TOSA wants the padded extent a whole number of strides: ResNet's
// 224x224 stem, 7x7 at stride 2, is padded [3, 2, 3, 2]).
struct ConvShape {
    std::int64_t n, h, w, ic, oc, k, stride, pad;
    std::int64_t pad_after(std::int64_t extent) const
    {
        return pad - (extent + 2 * pad - k) % stride;
    }
    std::int64_t oh() const { return (h + pad + pad_after(h) - k) / stride + 1; }
    std::int64_t ow() const { return (w + pad + pad_after(w) - k) / stride + 1; }
    double flop() const
    {
        return 2.0 * static_cast<double>(n * oh() * ow()) * static_cast<double>(oc) *
               static_cast<double>(k * k * ic);
    }
};

std::optional<ConvShape> parse_conv(const std::string& text)
{
    std::int64_t v[8];
    char tail = 0;
    if (std::sscanf(text.c_str(), "%ld,%ld,%ld,%ld,%ld,%ld,%ld,%ld%c", &v[0], &v[1], &v[2], &v[3],
                    &v[4], &v[5], &v[6], &v[7], &tail) != 8)
        return std::nullopt;
    const ConvShape c{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]};
    if (c.n < 1 || c.h < 1 || c.w < 1 || c.ic < 1 || c.oc < 1 || c.k < 1 || c.stride < 1 ||
        c.pad < 0 || c.pad >= c.k || c.h + 2 * c.pad < c.k || c.w + 2 * c.pad < c.k ||
        c.pad_after(c.h) < 0 || c.pad_after(c.w) < 0)
        return std::nullopt;
    return c;
}

// x, w, b in, y out; zero points serialized zeros.
tosa::Graph conv_graph(const ConvShape& c)
{
    tosa::GraphBuilder g;
    const auto x = g.tensor("x", {c.n, c.h, c.w, c.ic}, DType::fp32);
    const auto w = g.tensor("w", {c.oc, c.k, c.k, c.ic}, DType::fp32);
    const auto b = g.tensor("b", {c.oc}, DType::fp32);
    const auto zero = [&g](const char* name) {
        const auto t = g.tensor(name, {1}, DType::fp32, std::vector<std::uint8_t>(4, 0));
        g.op(tosa::Op::const_, {}, {t});
        return t;
    };
    const auto y = g.tensor("y", {c.n, c.oh(), c.ow(), c.oc}, DType::fp32);
    const auto p = static_cast<std::int32_t>(c.pad), s = static_cast<std::int32_t>(c.stride);
    const auto bottom = static_cast<std::int32_t>(c.pad_after(c.h));
    const auto right = static_cast<std::int32_t>(c.pad_after(c.w));
    g.op(tosa::Op::conv2d, {x, w, b, zero("x_zp"), zero("w_zp")}, {y},
         tosa::conv_attr({p, bottom, p, right}, {s, s}, {1, 1}));
    for (auto t : {x, w, b}) g.input(t);
    g.output(y);
    return g.finish();
}

}  // namespace

int main(int argc, char** argv)
{
    CLI::App app{"The Vulkan backend's MATMUL, ADD, GEMV, latency and CONV2D beside same-run "
                 "baselines"};
    std::string device = "vulkan:0";
    std::int64_t n = 4096, gemv_c = 4096, gemv_w = 4096;
    std::uint64_t add_bytes = 1ull << 30;
    int runs = 5, latency_runs = 1000;
    double anchor_fp32 = 0, anchor_fp16 = 0;
    std::string tiles, rows;
    std::vector<std::string> coop_tiles;
    std::vector<std::string> convs;
    std::int64_t conv_batch = 8;
    bool no_conv = false;
    app.add_option("--device", device, "vulkan:N, in the backend's serving order (GPUs first)")
        ->capture_default_str();
    app.add_option("--matmul", n, "N of the N^3 MATMULs")->capture_default_str()->check(CLI::Range(1, 65536));
    app.add_option("--add-bytes", add_bytes, "bytes of each ADD operand and of the copy")
        ->capture_default_str()->check(CLI::Range(4ull, 1ull << 34));
    app.add_option("--gemv-c", gemv_c, "C of the GEMV [1,1,C] x [1,C,W]")->capture_default_str();
    app.add_option("--gemv-w", gemv_w, "W of the GEMV")->capture_default_str();
    app.add_option("--runs", runs, "measured runs per figure (median)")->capture_default_str()->check(CLI::Range(1, 10000));
    app.add_option("--latency-runs", latency_runs, "measured runs of the latency figures")
        ->capture_default_str()->check(CLI::Range(1, 1000000));
    app.add_option("--anchor-fp32", anchor_fp32, "cuBLAS FP32 GFLOP/s from torch_anchor.py");
    app.add_option("--anchor-fp16", anchor_fp16, "cuBLAS FP16 GFLOP/s from torch_anchor.py");
    app.add_option("--tiles", tiles, "VACCEL_VULKAN_MATMUL_TILES for this run: "
                                     "BM,BN,BK,RM,RN[,SHARED[,PREFETCH[,VEC4[,STAGES]]]]");
    app.add_option("--rows", rows, "VACCEL_VULKAN_MATMUL_ROWS for this run (the GEMV kernel): "
                                   "THREADS,SLICES (column invocations x K-slices)");
    app.add_option("--coop-tiles", coop_tiles,
                   "VACCEL_VULKAN_COOPMAT_TILES to measure (b) with, after the device's "
                   "choice: BM,BN,BK,WM,WN, repeatable");
    app.add_option("--conv", convs,
                   "a CONV2D for (f): N,H,W,IC,OC,K,STRIDE,PAD (K x K kernel), repeatable; "
                   "default ResNet-50 layers at --conv-batch");
    app.add_option("--conv-batch", conv_batch, "N of the default (f) shapes")
        ->capture_default_str()->check(CLI::Range(1, 1024));
    app.add_flag("--no-conv", no_conv, "leave (f) out");
    CLI11_PARSE(app, argc, argv);
    set_program_name("bench_vulkan");
    if (!tiles.empty()) setenv("VACCEL_VULKAN_MATMUL_TILES", tiles.c_str(), 1);
    if (!rows.empty()) setenv("VACCEL_VULKAN_MATMUL_ROWS", rows.c_str(), 1);

    std::size_t index = 0;
    if (device.rfind("vulkan:", 0) != 0 || device.size() == 7 ||
        device.find_first_not_of("0123456789", 7) != std::string::npos) {
        std::fprintf(stderr, "bench_vulkan: --device %s: give vulkan:N (N a number)\n",
                     device.c_str());
        return 2;
    }
    index = std::stoul(device.substr(7));
    VulkanDevices found = open_vulkan_devices({});
    if (index >= found.devices.size()) {
        std::fprintf(stderr, "bench_vulkan: --device %s: %zu Vulkan device(s) served%s%s\n",
                     device.c_str(), found.devices.size(), found.unavailable.empty() ? "" : ": ",
                     found.unavailable.c_str());
        return 1;
    }
    Backend& backend = *found.devices[index];
    const vaccel_device_info& info = backend.device_info();
    std::array<std::uint8_t, 16> uuid{};
    std::memcpy(uuid.data(), info.uuid, uuid.size());
    vaccel::bench::RawVulkan raw(uuid);
    const char* tiles_env = std::getenv("VACCEL_VULKAN_MATMUL_TILES");
    const char* rows_env = std::getenv("VACCEL_VULKAN_MATMUL_ROWS");
    const char* coop_env_tiles = std::getenv("VACCEL_VULKAN_COOPMAT_TILES");
    std::printf("bench_vulkan on %s (%s), median of %d runs after 3 warm-ups, wall clock submit "
                "to completion; MATMUL tiles: %s; GEMV kernel: %s; cooperative-matrix tiles: "
                "%s\n",
                info.name, device.c_str(), runs, tiles_env ? tiles_env : "the device's choice",
                rows_env ? rows_env : "the device's choice",
                coop_env_tiles ? coop_env_tiles : "the device's choice");

    // (a), (b)
    const double flop = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
    const double fp32_s = median_seconds(backend, matmul_graph(DType::fp32, DType::fp32, n, n, n), runs, true);
    const double fp32_gf = flop / fp32_s / 1e9;
    std::printf("(a) MATMUL FP32 %lldx%lldx%lld: %.1f GFLOP/s (%.3f ms) | baseline: %s\n",
                static_cast<long long>(n), static_cast<long long>(n), static_cast<long long>(n),
                fp32_gf, fp32_s * 1e3, anchor_text(anchor_fp32, fp32_gf).c_str());
    std::fflush(stdout);
    const double fp16_s = median_seconds(backend, matmul_graph(DType::fp16, DType::fp32, n, n, n), runs, true);
    const double fp16_gf = flop / fp16_s / 1e9;
    // The same MATMUL with cooperative matrices turned off: the scalar kernel.
    const char* coop_env = std::getenv("VACCEL_VULKAN_COOPMAT");
    const std::string coop_saved = coop_env ? coop_env : "";
    setenv("VACCEL_VULKAN_COOPMAT", "0", 1);
    const double scalar_s = median_seconds(backend, matmul_graph(DType::fp16, DType::fp32, n, n, n), runs, true);
    if (coop_env) setenv("VACCEL_VULKAN_COOPMAT", coop_saved.c_str(), 1);
    else unsetenv("VACCEL_VULKAN_COOPMAT");
    const double scalar_gf = flop / scalar_s / 1e9;
    std::printf("(b) MATMUL FP16xFP16->FP32 %lld^3 (cooperative matrices where offered and the "
                "shape divides): %.1f GFLOP/s (%.3f ms) | baseline: scalar FP16 kernel %.1f "
                "GFLOP/s, ratio %.2fx; FP32 (a) ratio %.2fx; %s\n",
                static_cast<long long>(n), fp16_gf, fp16_s * 1e3, scalar_gf, fp16_gf / scalar_gf,
                fp16_gf / fp32_gf, anchor_text(anchor_fp16, fp16_gf).c_str());
    std::fflush(stdout);
    // (b) again per cooperative-matrix tiling asked for.
    const char* coop_tiles_env = std::getenv("VACCEL_VULKAN_COOPMAT_TILES");
    const std::string coop_tiles_saved = coop_tiles_env ? coop_tiles_env : "";
    for (const std::string& t : coop_tiles) {
        setenv("VACCEL_VULKAN_COOPMAT_TILES", t.c_str(), 1);
        const double s =
            median_seconds(backend, matmul_graph(DType::fp16, DType::fp32, n, n, n), runs, true);
        const double gf = flop / s / 1e9;
        std::printf("(b) with VACCEL_VULKAN_COOPMAT_TILES=%s: %.1f GFLOP/s (%.3f ms), ratio %.2fx "
                    "to (b); %s\n",
                    t.c_str(), gf, s * 1e3, gf / fp16_gf, anchor_text(anchor_fp16, gf).c_str());
        std::fflush(stdout);
    }
    if (coop_tiles_env) setenv("VACCEL_VULKAN_COOPMAT_TILES", coop_tiles_saved.c_str(), 1);
    else unsetenv("VACCEL_VULKAN_COOPMAT_TILES");

    // (c)
    const auto elements = static_cast<std::int64_t>(add_bytes / 4);
    const double bytes = static_cast<double>(elements) * 4;
    const double add_s = median_seconds(backend, add_graph(elements), runs, false);
    const double copy_s = raw.copy_seconds(static_cast<std::uint64_t>(bytes), runs);
    const double add_gbs = 3 * bytes / add_s / 1e9;    // two reads + one write
    const double copy_gbs = 2 * bytes / copy_s / 1e9;  // one read + one write
    std::printf("(c) ADD FP32 2x%.0f MiB -> %.0f MiB: %.1f GB/s effective (3x%.0f MiB moved in "
                "%.3f ms) | baseline: vkCmdCopyBuffer of %.0f MiB device to device %.1f GB/s "
                "effective (2x%.0f MiB in %.3f ms), ratio %.2fx\n",
                bytes / 1048576, bytes / 1048576, add_gbs, bytes / 1048576, add_s * 1e3,
                bytes / 1048576, copy_gbs, bytes / 1048576, copy_s * 1e3, add_gbs / copy_gbs);
    std::fflush(stdout);

    // (d)
    const double gemv_s = median_seconds(
        backend, matmul_graph(DType::fp32, DType::fp32, 1, gemv_c, gemv_w), runs, true);
    const double gemv_bytes = 4.0 * static_cast<double>(gemv_c * gemv_w + gemv_c + gemv_w);
    const double floor_s = gemv_bytes / (copy_gbs * 1e9);
    std::printf("(d) GEMV FP32 1x%lldx%lld: %.1f us | baseline: memory-bound floor %.1f us "
                "(%.1f MiB at the copy's %.1f GB/s), ratio floor/ours %.2fx\n",
                static_cast<long long>(gemv_c), static_cast<long long>(gemv_w), gemv_s * 1e6,
                floor_s * 1e6, gemv_bytes / 1048576, copy_gbs, floor_s / gemv_s);
    std::fflush(stdout);

    // (e)
    const double noop_s = median_seconds(backend, add_graph(1), latency_runs, false);
    const double empty_s = raw.empty_submit_seconds(latency_runs);
    std::printf("(e) submit + completion latency, ADD of one element through the backend: %.1f "
                "us | baseline: empty vkQueueSubmit + vkWaitForFences %.1f us, ratio %.2fx\n",
                noop_s * 1e6, empty_s * 1e6, noop_s / empty_s);
    std::fflush(stdout);

    // (f)
    if (no_conv) return 0;
    std::vector<ConvShape> shapes;
    if (convs.empty()) {
        const std::int64_t b = conv_batch;
        shapes = {{b, 224, 224, 3, 64, 7, 2, 3},  {b, 56, 56, 64, 64, 3, 1, 1},
                  {b, 56, 56, 256, 64, 1, 1, 0},  {b, 28, 28, 128, 128, 3, 1, 1},
                  {b, 14, 14, 256, 256, 3, 1, 1}, {b, 7, 7, 512, 512, 3, 1, 1}};
    }
    for (const std::string& text : convs) {
        auto c = parse_conv(text);
        if (!c) {
            std::fprintf(stderr, "bench_vulkan: --conv %s: give N,H,W,IC,OC,K,STRIDE,PAD with "
                                 "PAD < K, the padded input at least K and PAD at least "
                                 "what the last stride leaves over\n",
                         text.c_str());
            return 2;
        }
        shapes.push_back(*c);
    }
    const char* conv_env = std::getenv("VACCEL_VULKAN_CONV");
    const std::string conv_saved = conv_env ? conv_env : "";
    for (const ConvShape& c : shapes) {
        const tosa::Graph graph = conv_graph(c);
        unsetenv("VACCEL_VULKAN_CONV");
        const double gemm_s = median_seconds(backend, graph, runs, true);
        setenv("VACCEL_VULKAN_CONV", "direct", 1);
        const double direct_s = median_seconds(backend, graph, runs, true);
        const double gemm_gf = c.flop() / gemm_s / 1e9, direct_gf = c.flop() / direct_s / 1e9;
        std::printf("(f) CONV2D FP32 %ldx%ldx%ldx%ld -> %ld, %ldx%ld stride %ld pad %ld: %.1f "
                    "GFLOP/s (%.3f ms) implicit GEMM | baseline: direct kernel %.1f GFLOP/s "
                    "(%.3f ms), ratio %.2fx\n",
                    c.n, c.h, c.w, c.ic, c.oc, c.k, c.k, c.stride, c.pad, gemm_gf, gemm_s * 1e3,
                    direct_gf, direct_s * 1e3, gemm_gf / direct_gf);
        std::fflush(stdout);
    }
    if (conv_env) setenv("VACCEL_VULKAN_CONV", conv_saved.c_str(), 1);
    else unsetenv("VACCEL_VULKAN_CONV");
    return 0;
}
