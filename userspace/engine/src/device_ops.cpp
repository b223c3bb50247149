// device_ops.cpp - GET_VERSION, DEVICE_COUNT, DEVICE_QUERY, DEVICE_TOSA.
//
// Owns nothing. Decides: these ops read immutable device data only, so they
// run without the session lock; a session sees every device the manager
// opened, indexed by position.
#include "ops.hpp"

#include <fmt/format.h>

namespace vaccel::engine::ops {

Status get_version(SessionState& state, vaccel_get_version& args)
{
    args.major = VACCEL_ABI_MAJOR;
    args.minor = VACCEL_ABI_MINOR;
    args.capabilities = state.devices->capabilities();
    return {};
}

Status device_count(SessionState& state, vaccel_device_count& args)
{
    args.count = state.devices->count();
    return {};
}

Status device_query(SessionState& state, vaccel_device_query& args)
{
    auto device = state.devices->lookup(args.index);
    if (!device)
        return fail(std::move(device.error()));
    args.info = (*device)->info();
    args.info.state = static_cast<std::uint32_t>((*device)->state());
    return {};
}

Status device_tosa(SessionState& state, vaccel_device_tosa& args)
{
    auto device = state.devices->lookup(args.device);
    if (!device)
        return fail(std::move(device.error()));
    const auto descriptors = (*device)->tosa_descriptors();
    if (args.index >= descriptors.size())
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_NO_TOSA_DESCRIPTOR, args.index,
                              descriptors.size())
                        .with_note(fmt::format("device {} ({}) has {} TOSA descriptor{}",
                                               args.device, (*device)->info().name,
                                               descriptors.size(),
                                               descriptors.size() == 1 ? "" : "s")));
    args.descriptor = descriptors[args.index];
    return {};
}

}  // namespace vaccel::engine::ops
