// lowering_spatial.hpp - the GPU lowering of the float profile's spatial
// and indexing operators beyond the FP32 tier: CONV2D, DEPTHWISE_CONV2D,
// AVG_POOL2D, RESIZE, GATHER, PAD, SLICE and TILE.
//
// Decides (docs/adr/0013-vulkan-backend.md):
//  - kernels: conv2d (CONV2D and DEPTHWISE_CONV2D), avg_pool2d, resize,
//    gather and pad_tile (PAD, SLICE and TILE), each one invocation per
//    result element, with the CPU device's accumulation order
//    (kernels/vulkan/*.comp and kernels/cuda/*.cu say it per kernel);
//  - SLICE is lowered on pad_tile, as a PAD whose leading counts are minus
//    its start, not on the elementwise kernel: the same index math with no
//    second spec layout to keep in step; PAD is one dispatch (the fill and
//    the copy decided per element), so it needs no fill-then-copy ordering;
//    TILE wants a modulo per dimension, which no stride expresses;
//  - dtypes: the arithmetic runs on FP32; GATHER copies FP32 and INT32 (what
//    the CPU device admits among the GPU storage dtypes); PAD, SLICE and
//    TILE copy FP32, INT32 and BOOL; anything else is the dtype refusal of
//    lowering.hpp;
//  - attributes and shapes are checked here with the CPU device's rules
//    (analyze() leaves the convolutions, pools, GATHER and RESIZE
//    unchecked): InvalidArgument, VACCEL_D_TOSA_GRAPH, arg0 =
//    VACCEL_TOSA_BAD_SHAPE or VACCEL_TOSA_BAD_ATTRIBUTE, arg1 = Op; zero
//    points and shape operands are the descriptor's constraints, refused by
//    admission before lowering;
//  - GATHER's indices are a REQUIRE condition (the descriptor says
//    advisory_only): an index outside [0, K) gives a row of zeros, never a
//    read outside the values (the CPU device reports it instead).
#pragma once

#include <optional>
#include <vector>

#include "vaccel/common/error.hpp"
#include "vaccel/tosa/capability.hpp"
#include "vaccel/tosa/plan.hpp"

namespace vaccel::backend::gpu {

// The dispatches of `view` when its operator is one of this file's, else
// nullopt (lower() goes on to its own refusal).
std::optional<Result<std::vector<tosa::DispatchRequest>>> lower_spatial(
    const tosa::OperatorView& view);

// Adds this file's operators, with the dtypes their kernels run and the
// constraints the lowering relies on, to the GPU descriptor, and makes
// GATHER's index condition advisory.
void add_spatial_operators(tosa::CapabilityDescriptor& descriptor);

}  // namespace vaccel::backend::gpu
