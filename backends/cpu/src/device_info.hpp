// device_info.hpp - what the CPU backend says about itself.
//
// Decides the CPU device's identity (name, driver, a uuid derived from the
// name so it is stable across runs on one machine), its memory and limits,
// and its one TOSA target: its capability descriptor's (descriptor.hpp).
#pragma once

#include <cstdint>

#include "vaccel.h"

namespace vaccel::backend::cpu {

inline constexpr std::uint32_t min_buffer_alignment = 64;

vaccel_device_info describe_cpu(unsigned threads, unsigned instance);

}  // namespace vaccel::backend::cpu
