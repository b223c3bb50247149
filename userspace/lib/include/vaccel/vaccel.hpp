// vaccel/vaccel.hpp - a thin, header-only C++ layer over libvaccel's C API.
//
// Owns nothing beyond what it wraps. Decides:
//  - every object (Client, Context, Buffer, Program, Queue, Event) owns its
//    handle and releases it in its destructor; objects move, never copy.
//    A release refused in a destructor (Busy) is left to the client, whose
//    close releases everything; call release() to see the refusal yourself.
//    An Event's destructor first waits for the event to finish, so dropping
//    an Event never leaves its buffers bound.
//  - every call returns vaccel::Expected<T>: the value, or a ClientError
//    carrying the negative errno, the contract status and the sentence
//    vaccel_last_error_message() gave.
// Ownership: objects keep a raw vaccel_client*; the Client must outlive
// every object made through it (declare it first).
#pragma once

#include <cstddef>
#include <cstdint>
#include <expected>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "vaccel/vaccel.h"

namespace vaccel {

struct ClientError {
    int code = 0;             // negative errno the call returned
    vaccel_status status{};   // the contract error and its detail
    std::string message;      // a sentence a person can act on

    // The refusal of this thread's last call, which returned `rc`.
    static ClientError last(int rc)
    {
        return ClientError{rc, *vaccel_last_status(), vaccel_last_error_message()};
    }
};

template <class T>
using Expected = std::expected<T, ClientError>;

namespace detail {

inline Expected<void> check(int rc)
{
    if (rc != 0)
        return std::unexpected(ClientError::last(rc));
    return {};
}

// A handle plus the client it belongs to; releases with Release on drop.
template <int (*Release)(vaccel_client*, std::uint64_t)>
class Owned {
public:
    Owned() = default;
    Owned(vaccel_client* client, std::uint64_t handle) : client_(client), handle_(handle) {}
    Owned(Owned&& other) noexcept
        : client_(std::exchange(other.client_, nullptr)), handle_(std::exchange(other.handle_, 0))
    {
    }
    Owned& operator=(Owned&& other) noexcept
    {
        if (this != &other) {
            drop();
            client_ = std::exchange(other.client_, nullptr);
            handle_ = std::exchange(other.handle_, 0);
        }
        return *this;
    }
    ~Owned() { drop(); }

    std::uint64_t handle() const { return handle_; }
    vaccel_client* client() const { return client_; }
    explicit operator bool() const { return handle_ != 0; }

    // Releases now; on refusal (e.g. Busy) the object stays owned here.
    Expected<void> release()
    {
        if (handle_ == 0)
            return {};
        if (auto done = check(Release(client_, handle_)); !done)
            return done;
        handle_ = 0;
        return {};
    }

private:
    void drop()
    {
        if (handle_ != 0)
            (void)Release(client_, handle_);
        handle_ = 0;
    }

    vaccel_client* client_ = nullptr;
    std::uint64_t handle_ = 0;
};

}  // namespace detail

class Event : public detail::Owned<vaccel_event_destroy> {
public:
    using Owned::Owned;
    Event(Event&&) noexcept = default;
    Event& operator=(Event&& other) noexcept
    {
        finish();
        Owned::operator=(std::move(other));
        return *this;
    }
    ~Event() { finish(); }

    // enum vaccel_event_state; *failure (if given) says why for FAILED.
    Expected<std::uint32_t> poll(vaccel_status* failure = nullptr) const
    {
        std::uint32_t state = 0;
        if (auto done = detail::check(vaccel_event_poll(client(), handle(), &state, failure)); !done)
            return std::unexpected(done.error());
        return state;
    }
    // Waits until done or the absolute CLOCK_MONOTONIC timeout (0 = look).
    Expected<void> wait(std::uint64_t timeout_ns) const
    {
        const std::uint64_t event = handle();
        return detail::check(
            vaccel_event_wait(client(), &event, 1, VACCEL_WAIT_ALL, timeout_ns, nullptr));
    }

private:
    void finish()
    {
        if (handle() != 0)
            (void)wait(UINT64_MAX);
    }
};

class Buffer : public detail::Owned<vaccel_buffer_free> {
public:
    Buffer() = default;
    Buffer(vaccel_client* client, const struct vaccel_buffer_alloc& made)
        : Owned(client, made.buffer), info_(made)
    {
    }

    // The allocation as made: bytes asked, allocation_bytes, properties, ...
    const struct vaccel_buffer_alloc& info() const { return info_; }
    std::uint64_t bytes() const { return info_.bytes; }

    Expected<void> write(std::uint64_t offset, std::span<const std::byte> data)
    {
        return detail::check(vaccel_buffer_write(client(), handle(), offset, data.data(), data.size()));
    }
    Expected<void> read(std::uint64_t offset, std::span<std::byte> data) const
    {
        return detail::check(vaccel_buffer_read(client(), handle(), offset, data.data(), data.size()));
    }

    // A binding of the whole buffer (or [offset, offset + bytes)) to `slot`.
    vaccel_binding bind(std::uint32_t slot, std::uint32_t access, std::uint64_t offset = 0,
                        std::uint64_t bytes = 0) const
    {
        return vaccel_binding{slot, access, handle(), offset, bytes != 0 ? bytes : info_.bytes - offset};
    }

private:
    struct vaccel_buffer_alloc info_{};
};

class Program : public detail::Owned<vaccel_program_unload> {
public:
    Program() = default;
    Program(vaccel_client* client, std::uint64_t handle, std::uint32_t inputs, std::uint32_t outputs)
        : Owned(client, handle), inputs_(inputs), outputs_(outputs)
    {
    }

    std::uint32_t input_count() const { return inputs_; }
    std::uint32_t output_count() const { return outputs_; }

    Expected<struct vaccel_program_slot> slot(std::uint32_t index) const
    {
        struct vaccel_program_slot out{};
        if (auto done = detail::check(vaccel_program_slot(client(), handle(), index, &out)); !done)
            return std::unexpected(done.error());
        return out;
    }

private:
    std::uint32_t inputs_ = 0;
    std::uint32_t outputs_ = 0;
};

// A host gate: work submitted after (gate, value) starts once the gate
// reaches value. Destroying it cancels what still waits on it.
class Gate : public detail::Owned<vaccel_gate_destroy> {
public:
    using Owned::Owned;

    // Raising to a value at or below the current one changes nothing.
    Expected<void> raise(std::uint64_t value)
    {
        return detail::check(vaccel_gate_raise(client(), handle(), value));
    }
    Expected<std::uint64_t> value() const
    {
        std::uint64_t out = 0;
        if (auto done = detail::check(vaccel_gate_value(client(), handle(), &out)); !done)
            return std::unexpected(done.error());
        return out;
    }
};

class Queue : public detail::Owned<vaccel_queue_destroy> {
public:
    using Owned::Owned;

    Expected<Event> submit_after(const Program& program, std::span<const vaccel_binding> bindings,
                                 const Gate& gate, std::uint64_t value)
    {
        std::uint64_t event = 0;
        if (auto done = detail::check(vaccel_submit_after(
                client(), handle(), program.handle(), bindings.data(),
                static_cast<std::uint32_t>(bindings.size()), gate.handle(), value, &event));
            !done)
            return std::unexpected(done.error());
        return Event(client(), event);
    }

    // argv: the tagged argument bytes (uapi "Kernel launch").
    Expected<Event> launch(const Program& program, const char* entry,
                           const vaccel_launch_dims& dims, std::span<const std::byte> argv,
                           std::span<const vaccel_binding> bindings, std::uint64_t deadline_ns = 0)
    {
        std::uint64_t event = 0;
        if (auto done = detail::check(vaccel_launch(
                client(), handle(), program.handle(), entry, &dims, argv.data(),
                static_cast<std::uint32_t>(argv.size()), bindings.data(),
                static_cast<std::uint32_t>(bindings.size()), deadline_ns, &event));
            !done)
            return std::unexpected(done.error());
        return Event(client(), event);
    }

    // deadline_ns: absolute CLOCK_MONOTONIC, 0 = none.
    Expected<Event> submit(const Program& program, std::span<const vaccel_binding> bindings,
                           std::uint64_t deadline_ns = 0)
    {
        std::uint64_t event = 0;
        if (auto done = detail::check(vaccel_submit(client(), handle(), program.handle(),
                                                    bindings.data(),
                                                    static_cast<std::uint32_t>(bindings.size()),
                                                    deadline_ns, &event));
            !done)
            return std::unexpected(done.error());
        return Event(client(), event);
    }
};

// What a buffer is for; the defaults suit an ordinary host buffer.
struct BufferSpec {
    std::uint64_t bytes = 0;
    std::uint32_t domain = VACCEL_DOMAIN_HOST;
    std::uint32_t usage = VACCEL_USAGE_ALL;
    std::uint32_t access = VACCEL_ACCESS_RW;
    std::uint64_t alignment = 0;  // 0 = the device default
};

class Context : public detail::Owned<vaccel_context_destroy> {
public:
    using Owned::Owned;

    Expected<Buffer> alloc_buffer(const BufferSpec& spec)
    {
        struct vaccel_buffer_alloc req{};
        req.context = handle();
        req.bytes = spec.bytes;
        req.alignment = spec.alignment;
        req.domain = spec.domain;
        req.usage = spec.usage;
        req.access = spec.access;
        if (auto done = detail::check(vaccel_buffer_alloc(client(), &req)); !done)
            return std::unexpected(done.error());
        return Buffer(client(), req);
    }

    // `target` nullptr = the device's default target.
    Expected<Program> load_program(std::uint32_t format, std::span<const std::byte> payload,
                                   const vaccel_tosa_target* target = nullptr)
    {
        std::uint64_t program = 0;
        std::uint32_t inputs = 0, outputs = 0;
        if (auto done = detail::check(vaccel_program_load(client(), handle(), format, target,
                                                          payload.data(), payload.size(),
                                                          &program, &inputs, &outputs));
            !done)
            return std::unexpected(done.error());
        return Program(client(), program, inputs, outputs);
    }

    Expected<Queue> create_queue()
    {
        std::uint64_t queue = 0;
        if (auto done = detail::check(vaccel_queue_create(client(), handle(), &queue)); !done)
            return std::unexpected(done.error());
        return Queue(client(), queue);
    }

    Expected<Gate> create_gate()
    {
        std::uint64_t gate = 0;
        if (auto done = detail::check(vaccel_gate_create(client(), handle(), &gate)); !done)
            return std::unexpected(done.error());
        return Gate(client(), gate);
    }

    Expected<struct vaccel_context_limits> limits() const
    {
        struct vaccel_context_limits out{};
        if (auto done = detail::check(vaccel_context_limits(client(), handle(), &out)); !done)
            return std::unexpected(done.error());
        return out;
    }
};

class Client {
public:
    // nullptr = $VACCEL_TRANSPORT, else the default transport.
    static Expected<Client> open(const char* transport = nullptr)
    {
        vaccel_client* client = nullptr;
        if (auto done = detail::check(vaccel_client_open(transport, &client)); !done)
            return std::unexpected(done.error());
        return Client(client);
    }

    Client(Client&& other) noexcept : client_(std::exchange(other.client_, nullptr)) {}
    Client& operator=(Client&& other) noexcept
    {
        if (this != &other) {
            vaccel_client_close(client_);
            client_ = std::exchange(other.client_, nullptr);
        }
        return *this;
    }
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;
    ~Client() { vaccel_client_close(client_); }

    vaccel_client* get() const { return client_; }
    const char* transport() const { return vaccel_client_transport(client_); }

    // One admin command (enum vaccel_admin_command) with its request
    // document; the daemon's answer. Needs the socket transport.
    Expected<std::string> admin(std::uint32_t command, const std::string& request = {}) const
    {
        char* response = nullptr;
        std::size_t bytes = 0;
        const int rc = vaccel_admin(client_, command, request.empty() ? nullptr : request.c_str(),
                                    &response, &bytes);
        if (rc != 0)
            return std::unexpected(ClientError::last(rc));
        std::string answer(response, bytes);
        vaccel_free(response);
        return answer;
    }

    Expected<struct vaccel_get_version> version() const
    {
        struct vaccel_get_version out{};
        if (auto done = detail::check(vaccel_get_version(client_, &out)); !done)
            return std::unexpected(done.error());
        return out;
    }
    Expected<std::uint32_t> device_count() const
    {
        std::uint32_t count = 0;
        if (auto done = detail::check(vaccel_device_count(client_, &count)); !done)
            return std::unexpected(done.error());
        return count;
    }
    Expected<struct vaccel_device_info> device_info(std::uint32_t index) const
    {
        struct vaccel_device_info info{};
        if (auto done = detail::check(vaccel_device_info(client_, index, &info)); !done)
            return std::unexpected(done.error());
        return info;
    }
    Expected<struct vaccel_tosa_descriptor> device_tosa(std::uint32_t device,
                                                        std::uint32_t index) const
    {
        struct vaccel_tosa_descriptor descriptor{};
        if (auto done = detail::check(vaccel_device_tosa(client_, device, index, &descriptor));
            !done)
            return std::unexpected(done.error());
        return descriptor;
    }
    // Every TOSA descriptor of `device`, in order (none for a device that
    // runs no TOSA programs).
    Expected<std::vector<struct vaccel_tosa_descriptor>> device_tosa_all(std::uint32_t device) const
    {
        std::vector<struct vaccel_tosa_descriptor> all;
        auto first = device_tosa(device, 0);
        if (!first && first.error().status.detail == VACCEL_D_NO_TOSA_DESCRIPTOR)
            return all;  // the device has none
        if (!first)
            return std::unexpected(first.error());
        all.push_back(*first);
        for (std::uint32_t i = 1; i < first->descriptor_count; ++i) {
            auto next = device_tosa(device, i);
            if (!next)
                return std::unexpected(next.error());
            all.push_back(*next);
        }
        return all;
    }
    Expected<Context> create_context(std::uint32_t device = 0)
    {
        std::uint64_t context = 0;
        if (auto done = detail::check(vaccel_context_create(client_, device, &context)); !done)
            return std::unexpected(done.error());
        return Context(client_, context);
    }

    // Waits for all (VACCEL_WAIT_ALL) or any of `events`; returns the index
    // of the first one done.
    Expected<std::uint32_t> wait(std::span<const Event* const> events, std::uint32_t flags,
                                 std::uint64_t timeout_ns)
    {
        std::vector<std::uint64_t> handles;
        handles.reserve(events.size());
        for (const Event* event : events)
            handles.push_back(event->handle());
        std::uint32_t first = 0;
        if (auto done = detail::check(vaccel_event_wait(client_, handles.data(),
                                                        static_cast<std::uint32_t>(handles.size()),
                                                        flags, timeout_ns, &first));
            !done)
            return std::unexpected(done.error());
        return first;
    }

private:
    explicit Client(vaccel_client* client) : client_(client) {}
    vaccel_client* client_ = nullptr;
};

}  // namespace vaccel
