// engine_support.hpp - the helpers the engine tests share.
//
// Owns: a device manager over a real CPU backend, typed Session::call() and the assertion
// of a refusal field by field.
#pragma once


#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "vaccel/backend/cpu.hpp"
#include "vaccel/engine/device_manager.hpp"
#include "vaccel/engine/session.hpp"

#include "cmocka.hpp"

namespace vaccel::test {

// A manager of its own (not shared with other tests) over one CPU backend.
inline std::shared_ptr<engine::DeviceManager> cpu_devices()
{
    std::vector<std::unique_ptr<backend::Backend>> backends;
    backends.push_back(backend::open_cpu_backend(backend::CpuOptions{2}));
    return std::make_shared<engine::DeviceManager>(std::move(backends));
}

template <class T>
Status call(engine::Session& session, std::uint32_t opcode, T& args,
            std::span<const std::byte> in = {}, std::span<std::byte> out = {})
{
    return session.call(opcode, std::as_writable_bytes(std::span(&args, 1)), in, out);
}

inline std::uint64_t make_context(engine::Session& session, std::uint32_t device = 0)
{
    vaccel_context_create args{};
    args.device = device;
    assert_true(call(session, VACCEL_OP_CONTEXT_CREATE, args).has_value());
    return args.context;
}

inline vaccel_buffer_alloc buffer_request(std::uint64_t context, std::uint64_t bytes)
{
    vaccel_buffer_alloc args{};
    args.context = context;
    args.bytes = bytes;
    args.domain = VACCEL_DOMAIN_HOST;
    args.usage = VACCEL_USAGE_ALL;
    args.access = VACCEL_ACCESS_RW;
    return args;
}

inline std::uint64_t make_buffer(engine::Session& session, std::uint64_t context,
                                 std::uint64_t bytes)
{
    vaccel_buffer_alloc args = buffer_request(context, bytes);
    assert_true(call(session, VACCEL_OP_BUFFER_ALLOC, args).has_value());
    return args.buffer;
}

inline Status release(engine::Session& session, std::uint32_t opcode, std::uint64_t handle)
{
    vaccel_handle_release args{};
    args.handle = handle;
    return call(session, opcode, args);
}

inline std::uint64_t load_program(engine::Session& session, std::uint64_t context,
                                  const std::vector<std::byte>& artifact)
{
    vaccel_program_load args{};
    args.context = context;
    args.format = VACCEL_FORMAT_TOSA;
    args.payload_bytes = artifact.size();
    assert_true(call(session, VACCEL_OP_PROGRAM_LOAD, args, artifact).has_value());
    return args.program;
}

inline vaccel_context_limits context_limits(engine::Session& session, std::uint64_t context)
{
    vaccel_context_limits args{};
    args.context = context;
    assert_true(call(session, VACCEL_OP_CONTEXT_LIMITS, args).has_value());
    return args;
}

}  // namespace vaccel::test

// A Status that must be a refusal with exactly these fields.
#define assert_refused(expr, errc, detail_, arg0_, arg1_)                                     \
    do {                                                                                      \
        auto refused_ = (expr);                                                               \
        if (refused_.has_value())                                                             \
            fail_msg("%s: expected a refusal, got success", #expr);                          \
        const ::vaccel::Error& e_ = refused_.error();                                         \
        if (e_.code != (errc) || e_.detail != static_cast<uint32_t>(detail_) ||                \
            e_.arg0 != static_cast<uint64_t>(arg0_) || e_.arg1 != static_cast<uint64_t>(arg1_)) \
            fail_msg("%s: got \"%s\" (code %u detail %u arg0 %llu arg1 %llu)", #expr,          \
                     ::vaccel::describe(e_).c_str(), static_cast<unsigned>(e_.code),           \
                     e_.detail, static_cast<unsigned long long>(e_.arg0),                      \
                     static_cast<unsigned long long>(e_.arg1));                                \
    } while (0)

#define assert_ok(expr)                                                                       \
    do {                                                                                      \
        auto ok_ = (expr);                                                                    \
        if (!ok_.has_value())                                                                 \
            fail_msg("%s: unexpected refusal \"%s\"", #expr,                                  \
                     ::vaccel::describe(ok_.error()).c_str());                                \
    } while (0)
