// program.hpp - loading programs on a CUDA device.
//
// Decides (docs/adr/0018-cuda-backend.md):
//  - TOSA: parse, analyze, admit against the shared GPU descriptor with
//    every narrow dtype (CUDA addresses 8- and 16-bit elements natively),
//    plan block 0 with the shared lowering and this backend's MATMUL, then
//    resolve each dispatch to its kernel and launch shape, allocate and
//    fill the arena. The arena counts against the context's memory limit,
//    before it is allocated;
//  - a run of a TOSA program is one CUDA graph launch (one per segment in
//    a context host that cuts runs, slicing.hpp): its launches are
//    recorded (stream capture) the first time the program runs on a set of
//    buffers and replayed after (ProgramState::recorded);
//    VACCEL_CUDA_GRAPHS=0 launches every kernel of every run instead (the
//    baseline the benchmarks measure graphs against), 1 or unset records;
//    any other value is refused at load;
//  - PTX is compiled for the device by the driver's JIT linker once and the
//    cubin kept (jit_cache.hpp); a compile error is refused with the
//    linker's log. CUBIN is loaded as it is; one built for another GPU is
//    refused as Incompatible.
// Called without the device serialisation (backend.hpp): touches only the
// context (its session's) and atomics.
#pragma once

#include <memory>

#include "objects.hpp"

namespace vaccel::backend::cuda {

Result<std::shared_ptr<ProgramState>> load_tosa(std::shared_ptr<ContextState> context,
                                                const ProgramDesc& desc);
Result<std::shared_ptr<ProgramState>> load_kernels(std::shared_ptr<ContextState> context,
                                                   const ProgramDesc& desc);

// The TOSA descriptor of every CUDA device.
tosa::CapabilityDescriptor cuda_descriptor();

}  // namespace vaccel::backend::cuda
