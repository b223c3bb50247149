// kernels.cpp - the CUDA TOSA kernels by KernelId (kernels.hpp).
#include "kernels.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "lowering_conv.hpp"
#include "lowering_matmul.hpp"
#include "vaccel/gpu/lowering.hpp"

namespace vaccel::backend::cuda {
namespace {

// The fatbins kernels/cuda/CMakeLists.txt embeds (bin2c arrays, one per
// kernels/cuda/<module>.cu), by module name.
#include "fatbins.inc"

struct Fatbin {
    std::string_view module;
    std::span<const unsigned char> bytes;
};
#define VACCEL_CUDA_FATBIN(name) Fatbin{#name, vaccel_cuda_fatbin_##name},
const Fatbin fatbins[] = {VACCEL_CUDA_FATBINS(VACCEL_CUDA_FATBIN)};
#undef VACCEL_CUDA_FATBIN

using gpu::KernelId;
constexpr std::uint32_t id(KernelId k) { return static_cast<std::uint32_t>(k); }

struct Entry {
    std::uint32_t id;
    KernelLaunchShape shape;
};
const std::array shared_kernels{
    Entry{id(KernelId::elementwise), {"elementwise", "vaccel_elementwise"}},
    Entry{id(KernelId::elementwise_narrow), {"elementwise", "vaccel_elementwise"}},
    Entry{id(KernelId::reduce), {"reduce", "vaccel_reduce"}},
    Entry{id(KernelId::reduce_narrow), {"reduce", "vaccel_reduce"}},
    Entry{id(KernelId::max_pool2d), {"max_pool2d", "vaccel_max_pool2d"}},
    Entry{id(KernelId::max_pool2d_narrow), {"max_pool2d", "vaccel_max_pool2d"}},
    Entry{id(KernelId::conv2d), {"conv2d", "vaccel_conv2d"}},
    Entry{id(KernelId::avg_pool2d), {"avg_pool2d", "vaccel_avg_pool2d"}},
    Entry{id(KernelId::resize), {"resize", "vaccel_resize"}},
    Entry{id(KernelId::gather), {"gather", "vaccel_gather"}},
    Entry{id(KernelId::pad_tile), {"pad_tile", "vaccel_pad_tile"}},
};

std::vector<Entry> all_kernels()
{
    std::vector<Entry> all(shared_kernels.begin(), shared_kernels.end());
    for (const MatmulKernel& m : matmul_kernels())
        all.push_back({m.id, {m.module, m.function, m.block_threads, m.dynamic_shared_bytes, false,
                              m.only_cc, m.k_function != nullptr ? m.k_function : ""}});
    for (const ConvKernel& c : conv_kernels())
        all.push_back({c.id, {c.module, c.function, c.block_threads, 0, false}});
    return all;
}

}  // namespace

const KernelLaunchShape* kernel_shape(std::uint32_t kernel)
{
    static const std::vector<Entry> table = all_kernels();
    for (const Entry& e : table)
        if (e.id == kernel) return &e.shape;
    return nullptr;
}

std::span<const unsigned char> kernel_fatbin(std::string_view module)
{
    for (const Fatbin& f : fatbins)
        if (f.module == module) return f.bytes;
    return {};
}

std::uint32_t grid_for(const KernelLaunchShape& shape, std::uint64_t work)
{
    const std::uint64_t blocks = (work + shape.block - 1) / shape.block;
    if (shape.grid_stride) return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(blocks, 1, 65535));
    return static_cast<std::uint32_t>(std::max<std::uint64_t>(blocks, 1));
}

Result<CUfunction> context_kernel(ContextState& context, const KernelLaunchShape& shape)
{
    const Driver& cu = *context.device->cu;
    const DeviceFacts& facts = context.device->facts;
    if (shape.only_cc != 0 &&
        static_cast<std::uint32_t>(facts.compute_major * 10 + facts.compute_minor) != shape.only_cc)
        return fail(Error::of(Errc::unsupported)
                        .with_note(fmt::format("kernel {} runs on compute capability {}.{} only, "
                                               "this device is {}.{}",
                                               shape.function, shape.only_cc / 10,
                                               shape.only_cc % 10, facts.compute_major,
                                               facts.compute_minor)));
    std::lock_guard lock(context.modules_mutex);
    auto found = context.modules.find(shape.module);
    if (found == context.modules.end()) {
        const auto bytes = kernel_fatbin(shape.module);
        if (bytes.empty())
            return fail(Error::of(Errc::unsupported)
                            .with_note(fmt::format("the CUDA kernels of \"{}\" were not built "
                                                   "into this vacceld",
                                                   shape.module)));
        // bin2c's arrays are byte-aligned; the driver reads the image's
        // header as 8-byte words, so it loads from an aligned copy.
        std::vector<std::uint64_t> image((bytes.size() + 7) / 8);
        std::memcpy(image.data(), bytes.data(), bytes.size());
        CUmodule module = nullptr;
        if (CUresult r = cu.cuModuleLoadData(&module, image.data()); r != CUDA_SUCCESS)
            return fail(context.device->error(
                r, fmt::format("loading the \"{}\" kernels (the driver could not run their "
                               "sm_90 code or compile their PTX for this device)",
                               shape.module)));
        found = context.modules.emplace(std::string(shape.module), module).first;
    }
    CUfunction function = nullptr;
    const std::string name(shape.function);
    if (CUresult r = cu.cuModuleGetFunction(&function, found->second, name.c_str());
        r != CUDA_SUCCESS)
        return fail(context.device->error(r, fmt::format("finding kernel {}", name)));
    if (shape.dynamic_shared > 48 * 1024) {
        if (CUresult r = cu.cuFuncSetAttribute(function,
                                               CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                               static_cast<int>(shape.dynamic_shared));
            r != CUDA_SUCCESS)
            return fail(context.device->error(
                r, fmt::format("giving kernel {} {} bytes of shared memory", name,
                               shape.dynamic_shared)));
    }
    return function;
}

}  // namespace vaccel::backend::cuda
