// env_switch.hpp - the CUDA backend's on/off environment variables
// (VACCEL_CUDA_GRAPHS, VACCEL_CUDA_PROFILE), read one way.
//
// Decides: "1" is on, "0" off, unset or empty the variable's default; any
// other value is InvalidArgument (VACCEL_D_BAD_VALUE) naming the variable,
// the value and what 1 and 0 mean.
#pragma once

#include <string_view>

#include "vaccel/common/error.hpp"

namespace vaccel::backend::cuda {

// `name`'s switch; `on` and `off` say what 1 and 0 do, the default marked.
Result<bool> env_switch(const char* name, bool default_on, std::string_view on,
                        std::string_view off);

}  // namespace vaccel::backend::cuda
