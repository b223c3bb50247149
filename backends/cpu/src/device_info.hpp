// device_info.hpp - what the CPU backend says about itself.
//
// Decides the CPU device's identity (name, driver, a uuid derived from the
// name so it is stable across runs on one machine), its memory and limits,
// and the one TOSA target it admits.
#pragma once

#include <cstdint>

#include "vaccel.h"

namespace vaccel::backend::cpu {

inline constexpr vaccel_tosa_target cpu_tosa_target{1, 0, VACCEL_TOSA_PRO_FP, VACCEL_TOSA_LEVEL_8K,
                                                    0, 0};
inline constexpr std::uint32_t min_buffer_alignment = 64;

vaccel_device_info describe_cpu(unsigned threads, unsigned instance);

}  // namespace vaccel::backend::cpu
