// lowering_storage.hpp - how the GPU kernels store each dtype, which
// dtypes each kind of operator runs on, and the descriptor that follows
// (docs/adr/0013-vulkan-backend.md, Storage and dtypes).
//
// Decides:
//  - storage: FP32 and INT32 are 4-byte words; FP16, BF16 and INT16 are
//    2-byte elements, FP8E4M3, FP8E5M2 and INT8 1-byte elements, loaded and
//    stored at their own width by the "_narrow" kernel variants (8- and
//    16-bit storage views, features storageBuffer8BitAccess and
//    storageBuffer16BitAccess); BOOL stays a byte written with atomics on its
//    word, by every variant. An operator whose operands are all 4-byte or
//    BOOL runs the plain variant, which needs neither feature;
//  - floats are widened to FP32 on load and rounded to nearest even on
//    store, with the CPU's rules (docs/adr/0011-narrow-floats-on-the-cpu.md);
//  - dtypes: arithmetic, comparisons, CLAMP, SELECT and REDUCE_* on FP32,
//    FP16 and BF16; copies on those, FP8E4M3, FP8E5M2, INT32 and BOOL;
//    MAX_POOL2D and ARGMAX on the four narrow floats and FP32; CAST on the
//    CPU's pairs among FP32, FP16, BF16, FP8E4M3, FP8E5M2, INT8, INT16,
//    INT32 and BOOL;
//  - a device without both storage features advertises the FP32 tier
//    alone; with them, FP16, BF16, FP8E4M3, FP8E5M2, INT8 and INT16 and CAST.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "vaccel/common/error.hpp"
#include "vaccel/tosa/capability.hpp"

namespace vaccel::backend::gpu {

// The storage features a device offers (and that are enabled when it does).
struct StorageFeatures {
    bool storage_8bit = false;   // storageBuffer8BitAccess
    bool storage_16bit = false;  // storageBuffer16BitAccess
    bool narrow() const { return storage_8bit && storage_16bit; }
};

// common.glsl's DT_* code of a dtype the kernels store; nullopt otherwise.
std::optional<std::uint32_t> kernel_dtype(tosa::DType dtype);
// Bytes per element as the kernels address it (BOOL: 1).
std::uint32_t element_bytes(tosa::DType dtype);
// 8- or 16-bit elements other than BOOL: only the narrow variants run them.
bool needs_narrow_storage(tosa::DType dtype);

// The dtype families of the rules above.
bool arithmetic_dtype(tosa::DType dtype);  // FP32, FP16, BF16
bool copy_dtype(tosa::DType dtype);        // arithmetic, FP8, INT32, BOOL
bool pool_dtype(tosa::DType dtype);        // FP32 and the four narrow floats
// CAST from -> to as the CPU runs it (TOSA 1.0 defines no FP16 <-> BF16 and
// no FP8 <-> integer).
bool cast_pair(tosa::DType from, tosa::DType to);

// One element of a float attribute (CLAMP's bounds) in its own encoding,
// widened to FP32 exactly; nullopt when `bytes` is not one element.
std::optional<float> attribute_float(tosa::DType dtype, const std::vector<std::uint8_t>& bytes);

// `fp32` (the FP32 tier as lowered) extended with the narrow dtypes and CAST
// when the device has the storage features, each operator stating the
// dtypes it runs (OperatorCapability::dtypes); `fp32` unchanged otherwise.
tosa::CapabilityDescriptor with_storage(tosa::CapabilityDescriptor fp32, StorageFeatures features);

}  // namespace vaccel::backend::gpu
