// program.cpp - TOSA and kernel programs on a CUDA device (program.hpp).
#include "program.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <string_view>
#include <string>

#include "dispatch.h"
#include "env_switch.hpp"
#include "jit_cache.hpp"
#include "kernels.hpp"
#include "lowering_conv.hpp"
#include "lowering_matmul.hpp"
#include "vaccel/gpu/lowering.hpp"
#include "vaccel/tosa/analysis.hpp"
#include "vaccel/tosa/capability.hpp"
#include "vaccel/tosa/graph.hpp"

namespace vaccel::backend::cuda {
namespace {

// The shared lowering with this device's MATMUL and CONV2D GEMM kernels,
// FP32 products as the device's options say.
tosa::Lowerer lowerer_for(const DeviceCore& device)
{
    const DeviceFacts& facts = device.facts;
    const auto cc = static_cast<std::uint32_t>(10 * facts.compute_major + facts.compute_minor);
    const auto sms = static_cast<std::uint32_t>(facts.multiprocessors > 0 ? facts.multiprocessors : 0);
    const Fp32Math math = device.options.fp32_math;
    return [cc, sms, math](const tosa::OperatorView& view) -> Result<std::vector<tosa::DispatchRequest>> {
        const auto matmul = [cc, sms, math](const tosa::OperatorView& v) {
            return lower_matmul(v, cc, sms, math);
        };
        if (view.op->op != tosa::Op::conv2d) return gpu::lower(view, matmul);
        auto gemm = conv_gemm_enabled(view);
        if (!gemm) return fail(gemm.error());
        if (!*gemm) return gpu::lower(view, matmul);
        auto mma = conv_mma_enabled();
        if (!mma) return fail(mma.error());
        return gpu::lower(view, matmul,
                          [sms, math, fp16_mma = *mma](const tosa::OperatorView& v,
                                                       const gpu::ConvGemm& g) {
                              return lower_conv_gemm(v, g, sms, fp16_mma, math);
                          });
    };
}

// Counts `bytes` more against the context's memory, or refuses.
Status charge_memory(ContextState& context, std::uint64_t bytes)
{
    const std::uint64_t max = context.device->info.limits.max_memory_bytes;
    std::uint64_t used = context.memory_bytes.load();
    do {
        if (bytes > max || used > max - bytes)
            return fail(Error::limit_hit(VACCEL_LIMIT_MEMORY_BYTES, max, used)
                            .with_note(fmt::format("the program's arena needs {} bytes of "
                                                   "device memory; the context uses {} of its "
                                                   "{}; free buffers or unload programs first",
                                                   bytes, used, max)));
    } while (!context.memory_bytes.compare_exchange_weak(used, used + bytes));
    return {};
}

Status make_arena(ProgramState& program, const tosa::ProgramPlan& plan)
{
    ContextState& context = *program.owner;
    const Driver& cu = *context.device->cu;
    if (plan.arena_bytes == 0) return {};
    if (auto ok = charge_memory(context, plan.arena_bytes); !ok) return ok;
    program.arena_bytes = plan.arena_bytes;  // counted: the destructor gives it back
    if (CUresult r = cu.cuMemAlloc(&program.arena, plan.arena_bytes); r != CUDA_SUCCESS) {
        program.arena = 0;
        context.memory_bytes.fetch_sub(plan.arena_bytes);
        program.arena_bytes = 0;
        return fail(context.device->error(
            r, fmt::format("allocating the program's {}-byte arena", plan.arena_bytes)));
    }
    if (CUresult r = cu.cuMemsetD8(program.arena, 0, plan.arena_bytes); r != CUDA_SUCCESS)
        return fail(context.device->error(r, "clearing the program's arena"));
    for (const tosa::ConstantPlan& constant : plan.constants)
        if (CUresult r = cu.cuMemcpyHtoD(program.arena + constant.offset, constant.bytes.data(),
                                         constant.bytes.size());
            r != CUDA_SUCCESS)
            return fail(context.device->error(r, "writing the program's constants"));
    return {};
}

Status resolve_launches(ProgramState& program, const tosa::ProgramPlan& plan)
{
    for (const tosa::Dispatch& d : plan.dispatches) {
        const KernelLaunchShape* shape = kernel_shape(d.kernel.kernel);
        if (shape == nullptr || d.kernel.spec.size() > VACCEL_CUDA_MAX_SPEC)
            return fail(Error::of(Errc::unsupported, VACCEL_D_TOSA_OPERATOR,
                                  static_cast<std::uint64_t>(d.op))
                            .with_note(fmt::format("operator {} ({}) was lowered to kernel {}, "
                                                   "which this CUDA build does not have",
                                                   d.op_index, tosa::op_name(d.op),
                                                   d.kernel.kernel)));
        auto function = context_kernel(*program.owner, *shape);
        if (!function) return fail(function.error());
        CUfunction k_function = nullptr;
        if (!shape->k_function.empty()) {
            KernelLaunchShape ranged = *shape;
            ranged.function = shape->k_function;
            auto found = context_kernel(*program.owner, ranged);
            if (!found) return fail(found.error());
            k_function = *found;
        }
        program.launches.push_back(PlannedLaunch{*function, grid_for(*shape, d.kernel.work),
                                                 shape->block, shape->dynamic_shared, d.kernel,
                                                 d.op_index, d.op, shape->function, k_function});
    }
    return {};
}

// The cubin of a PTX program: from the cache, else compiled by the
// driver's JIT linker (with the context current) and cached.
Result<std::vector<std::byte>> compile_ptx(ContextState& context, std::span<const std::byte> ptx)
{
    DeviceCore& core = *context.device;
    const Driver& cu = *core.cu;
    const JitKey key = jit_key(ptx, core.facts.compute_major, core.facts.compute_minor,
                               cu.version);
    const auto directory = core.options.state_dir.empty() ? std::filesystem::path{}
                                                          : core.options.state_dir / "cuda";
    if (auto cached = jit_cache_read(directory, key)) return std::move(*cached);
    std::string text(reinterpret_cast<const char*>(ptx.data()), ptx.size());
    if (text.find('\0') != std::string::npos)
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_FORMAT, VACCEL_FORMAT_CUDA_PTX)
                        .with_note("a PTX program is text: it contains a NUL byte"));
    std::string log(8192, '\0');
    CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {log.data(), reinterpret_cast<void*>(static_cast<std::uintptr_t>(log.size()))};
    CUlinkState link = nullptr;
    if (CUresult r = cu.cuLinkCreate(2, options, values, &link); r != CUDA_SUCCESS)
        return fail(core.error(r, "starting the PTX compiler"));
    struct Destroy {
        const Driver& cu;
        CUlinkState link;
        ~Destroy() { cu.cuLinkDestroy(link); }
    } destroy{cu, link};
    CUresult r = cu.cuLinkAddData(link, CU_JIT_INPUT_PTX, text.data(), text.size() + 1,
                                  "program.ptx", 0, nullptr, nullptr);
    void* cubin = nullptr;
    std::size_t cubin_bytes = 0;
    if (r == CUDA_SUCCESS) r = cu.cuLinkComplete(link, &cubin, &cubin_bytes);
    if (r != CUDA_SUCCESS) {
        log.resize(std::strlen(log.c_str()));
        const bool refused = r == CUDA_ERROR_INVALID_PTX || r == CUDA_ERROR_INVALID_IMAGE ||
                             r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION ||
                             r == CUDA_ERROR_INVALID_SOURCE || r == CUDA_ERROR_NO_BINARY_FOR_GPU;
        return fail(Error::of(refused ? Errc::invalid_argument : Errc::external, VACCEL_D_FORMAT,
                              VACCEL_FORMAT_CUDA_PTX, static_cast<std::uint64_t>(r))
                        .with_note(fmt::format("the driver could not compile the PTX for \"{}\" "
                                               "(sm_{}{}): {}{}{}",
                                               core.info.name, core.facts.compute_major,
                                               core.facts.compute_minor, cu.describe(r),
                                               log.empty() ? "" : ": ", log)));
    }
    std::vector<std::byte> out(static_cast<const std::byte*>(cubin),
                               static_cast<const std::byte*>(cubin) + cubin_bytes);
    (void)jit_cache_write(directory, key, out);
    return out;
}

}  // namespace

tosa::CapabilityDescriptor cuda_descriptor()
{
    // Every element is addressable at its own width on CUDA: the narrow
    // dtypes need no feature.
    return gpu::gpu_descriptor(gpu::StorageFeatures{true, true});
}

namespace {

// VACCEL_CUDA_GRAPHS: whether runs are recorded as CUDA graphs.
Result<bool> graphs_enabled()
{
    return env_switch("VACCEL_CUDA_GRAPHS", true, "record each run as a CUDA graph",
                      "launch every kernel of every run");
}

}  // namespace

Result<std::shared_ptr<ProgramState>> load_tosa(std::shared_ptr<ContextState> context,
                                                const ProgramDesc& desc)
{
    auto graphs = graphs_enabled();
    if (!graphs) return fail(graphs.error());
    auto profiled = profile_enabled();
    if (!profiled) return fail(profiled.error());
    auto target = tosa::target_from_uapi(desc.target);
    if (!target) return fail(target.error());
    auto graph = tosa::parse(desc.payload);
    if (!graph) return fail(graph.error());
    auto analysis = tosa::analyze(*graph);
    if (!analysis) return fail(analysis.error());
    if (auto admitted = tosa::admit(*graph, *analysis, cuda_descriptor(), *target); !admitted)
        return fail(admitted.error());
    auto fusion = gpu::fusion_chosen();
    if (!fusion) return fail(fusion.error());
    auto plan = tosa::plan_block(*graph, *analysis, tosa::BlockRef{0, 0},
                                 gpu::with_epilogues(tosa::PlanOptions{}, *fusion),
                                 lowerer_for(*context->device));
    if (!plan) return fail(plan.error());
    if (auto ok = within_memory_budget(plan->arena_bytes, desc.memory_budget); !ok)
        return fail(ok.error());
    if (plan->buffer_count() > VACCEL_CUDA_MAX_BUFFERS)
        return fail(Error::limit_hit(VACCEL_LIMIT_BINDINGS, VACCEL_CUDA_MAX_BUFFERS,
                                     plan->buffer_count())
                        .with_note(fmt::format("the program needs {} buffers ({} slots and its "
                                               "arena), more than the {} a CUDA kernel is "
                                               "given; give it fewer inputs and outputs",
                                               plan->buffer_count(), plan->slots.size(),
                                               VACCEL_CUDA_MAX_BUFFERS)));
    auto scope = context->enter();
    if (!scope) return fail(scope.error());
    auto program = std::make_shared<ProgramState>(std::move(context));
    program->use_graphs = *graphs && !*profiled;
    const tosa::Block& block = graph->regions[0].blocks[0];
    for (const tosa::SlotPlan& slot : plan->slots)
        program->slots.push_back(SlotInfo{
            slot.role == tosa::SlotRole::input ? std::uint32_t{VACCEL_SLOT_INPUT}
                                               : std::uint32_t{VACCEL_SLOT_OUTPUT},
            static_cast<std::uint32_t>(slot.dtype), slot.shape, slot.bytes,
            block.tensors[slot.tensor].name});
    if (auto ok = resolve_launches(*program, *plan); !ok) return fail(ok.error());
    if (auto ok = make_arena(*program, *plan); !ok) return fail(ok.error());
    const Driver& cu = *program->owner->device->cu;
    if (CUresult r = cu.cuEventCreate(&program->last_run, CU_EVENT_DISABLE_TIMING);
        r != CUDA_SUCCESS) {
        program->last_run = nullptr;
        return fail(program->owner->device->error(r, "creating the program's event"));
    }
    if (*profiled) {
        auto profile = std::make_unique<ProgramProfile>();
        profile->total_ms.assign(program->launches.size(), 0.0);
        for (std::size_t i = 0; i <= program->launches.size(); ++i) {
            CUevent e = nullptr;
            if (CUresult r = cu.cuEventCreate(&e, CU_EVENT_DEFAULT); r != CUDA_SUCCESS) {
                for (CUevent made : profile->events) cu.cuEventDestroy(made);
                return fail(program->owner->device->error(r, "creating the profile's events"));
            }
            profile->events.push_back(e);
        }
        program->profile = std::move(profile);
    }
    program->counted = true;
    program->owner->device->counters.programs.fetch_add(1);
    return program;
}

Result<std::shared_ptr<ProgramState>> load_kernels(std::shared_ptr<ContextState> context,
                                                   const ProgramDesc& desc)
{
    if (desc.payload.empty())
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_FORMAT, desc.format)
                        .with_note("the kernel program is empty"));
    auto scope = context->enter();
    if (!scope) return fail(scope.error());
    std::vector<std::byte> image;
    if (desc.format == VACCEL_FORMAT_CUDA_PTX) {
        auto cubin = compile_ptx(*context, desc.payload);
        if (!cubin) return fail(cubin.error());
        image = std::move(*cubin);
    } else {
        static constexpr unsigned char elf[4] = {0x7f, 'E', 'L', 'F'};
        if (desc.payload.size() < 4 || std::memcmp(desc.payload.data(), elf, 4) != 0)
            return fail(Error::of(Errc::invalid_argument, VACCEL_D_FORMAT, desc.format)
                            .with_note("a CUBIN program is an ELF file from nvcc -cubin; this "
                                       "one does not start with the ELF magic"));
        image.assign(desc.payload.begin(), desc.payload.end());
    }
    DeviceCore& core = *context->device;
    auto program = std::make_shared<ProgramState>(std::move(context));
    program->format = desc.format;
    if (CUresult r = core.cu->cuModuleLoadData(&program->module, image.data()); r != CUDA_SUCCESS) {
        program->module = nullptr;
        if (r == CUDA_ERROR_NO_BINARY_FOR_GPU || r == CUDA_ERROR_INVALID_IMAGE ||
            r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
            return fail(Error::of(Errc::incompatible, VACCEL_D_FORMAT, desc.format,
                                  static_cast<std::uint64_t>(r))
                            .with_note(fmt::format("the module does not run on \"{}\" (sm_{}{}): "
                                                   "{}; build it for this GPU or load PTX",
                                                   core.info.name, core.facts.compute_major,
                                                   core.facts.compute_minor, core.cu->describe(r))));
        return fail(core.error(r, "loading the kernel module"));
    }
    program->counted = true;
    core.counters.programs.fetch_add(1);
    return program;
}

}  // namespace vaccel::backend::cuda
