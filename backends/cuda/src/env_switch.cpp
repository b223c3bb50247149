// env_switch.cpp - the CUDA backend's on/off environment variables (env_switch.hpp).
#include "env_switch.hpp"

#include <fmt/format.h>

#include <cstdlib>

namespace vaccel::backend::cuda {

Result<bool> env_switch(const char* name, bool default_on, std::string_view on,
                        std::string_view off)
{
    const char* value = std::getenv(name);
    const std::string_view v = value != nullptr ? value : "";
    if (v.empty()) return default_on;
    if (v == "1") return true;
    if (v == "0") return false;
    return fail(Error::of(Errc::invalid_argument, VACCEL_D_BAD_VALUE)
                    .with_note(fmt::format("{}=\"{}\" is neither 1 ({}{}) nor 0 ({}{})", name, v,
                                           on, default_on ? ", the default" : "", off,
                                           default_on ? "" : ", the default")));
}

}  // namespace vaccel::backend::cuda
