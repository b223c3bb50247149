// object_calls.cpp - the C calls for version, devices, contexts, buffers,
// programs and queues.
//
// Owns nothing. Decides how each call crosses the transport: the uapi struct
// is filled here, user pointers never travel inside it (their bytes go as
// payload, as on the wire), and transfers larger than one message may carry
// (max_payload_bytes) are split into several, in order.
#include <algorithm>
#include <cstring>

#include "client.hpp"
#include "vaccel/common/requests.hpp"

using namespace vaccel;
using lib::invoke;

namespace {

int null_argument(const char* call, const char* what)
{
    return lib::record_local(Errc::invalid_argument,
                             std::string(call) + ": " + what + " is NULL");
}

std::span<const std::byte> bytes_of(const void* data, std::uint64_t length)
{
    return {static_cast<const std::byte*>(data), static_cast<std::size_t>(length)};
}

}  // namespace

extern "C" {

int vaccel_get_version(vaccel_client* client, struct vaccel_get_version* out)
{
    if (out == nullptr)
        return null_argument("vaccel_get_version", "out");
    struct vaccel_get_version args{};
    const int rc = invoke(client, VACCEL_OP_GET_VERSION, args);
    *out = args;
    return rc;
}

int vaccel_device_count(vaccel_client* client, uint32_t* count)
{
    if (count == nullptr)
        return null_argument("vaccel_device_count", "count");
    struct vaccel_device_count args{};
    const int rc = invoke(client, VACCEL_OP_DEVICE_COUNT, args);
    if (rc == 0)
        *count = args.count;
    return rc;
}

int vaccel_device_info(vaccel_client* client, uint32_t index, struct vaccel_device_info* info)
{
    if (info == nullptr)
        return null_argument("vaccel_device_info", "info");
    vaccel_device_query args{};
    args.index = index;
    const int rc = invoke(client, VACCEL_OP_DEVICE_QUERY, args);
    if (rc == 0)
        *info = args.info;
    return rc;
}

int vaccel_device_tosa(vaccel_client* client, uint32_t device, uint32_t index,
                       struct vaccel_tosa_descriptor* descriptor)
{
    if (descriptor == nullptr)
        return null_argument("vaccel_device_tosa", "descriptor");
    struct vaccel_device_tosa args{};
    args.device = device;
    args.index = index;
    const int rc = invoke(client, VACCEL_OP_DEVICE_TOSA, args);
    if (rc == 0)
        *descriptor = args.descriptor;
    return rc;
}

int vaccel_context_create(vaccel_client* client, uint32_t device, uint64_t* context)
{
    if (context == nullptr)
        return null_argument("vaccel_context_create", "context");
    struct vaccel_context_create args{};
    args.device = device;
    const int rc = invoke(client, VACCEL_OP_CONTEXT_CREATE, args);
    if (rc == 0)
        *context = args.context;
    return rc;
}

int vaccel_context_destroy(vaccel_client* client, uint64_t context)
{
    vaccel_handle_release args{};
    args.handle = context;
    return invoke(client, VACCEL_OP_CONTEXT_DESTROY, args);
}

int vaccel_context_limits(vaccel_client* client, uint64_t context,
                          struct vaccel_context_limits* out)
{
    if (out == nullptr)
        return null_argument("vaccel_context_limits", "out");
    struct vaccel_context_limits args{};
    args.context = context;
    const int rc = invoke(client, VACCEL_OP_CONTEXT_LIMITS, args);
    *out = args;
    return rc;
}

int vaccel_buffer_alloc(vaccel_client* client, struct vaccel_buffer_alloc* req)
{
    if (req == nullptr)
        return null_argument("vaccel_buffer_alloc", "req");
    struct vaccel_buffer_alloc args = *req;
    const int rc = invoke(client, VACCEL_OP_BUFFER_ALLOC, args);
    *req = args;
    return rc;
}

int vaccel_buffer_free(vaccel_client* client, uint64_t buffer)
{
    vaccel_handle_release args{};
    args.handle = buffer;
    const int rc = invoke(client, VACCEL_OP_BUFFER_FREE, args);
    // Freeing a mapped buffer unmaps it (its pages are gone from the device).
    if (rc == 0)
        lib::forget_mapping(client, buffer);
    return rc;
}

int vaccel_buffer_write(vaccel_client* client, uint64_t buffer, uint64_t offset, const void* data,
                        uint64_t length)
{
    if (data == nullptr && length != 0)
        return null_argument("vaccel_buffer_write", "data");
    // One message per max_payload_bytes; length 0 goes through once so the
    // engine refuses it like any transport would.
    uint64_t done = 0;
    do {
        const uint64_t piece = std::min<uint64_t>(length - done, max_payload_bytes);
        vaccel_buffer_transfer args{};
        args.buffer = buffer;
        args.offset = offset + done;
        args.length = piece;
        const int rc = invoke(client, VACCEL_OP_BUFFER_WRITE, args,
                              bytes_of(static_cast<const std::byte*>(data) + done, piece));
        if (rc != 0)
            return rc;
        done += piece;
    } while (done < length);
    return 0;
}

int vaccel_buffer_read(vaccel_client* client, uint64_t buffer, uint64_t offset, void* data,
                       uint64_t length)
{
    if (data == nullptr && length != 0)
        return null_argument("vaccel_buffer_read", "data");
    uint64_t done = 0;
    do {
        const uint64_t piece = std::min<uint64_t>(length - done, max_payload_bytes);
        vaccel_buffer_transfer args{};
        args.buffer = buffer;
        args.offset = offset + done;
        args.length = piece;
        std::span<std::byte> out(static_cast<std::byte*>(data) + done, piece);
        const int rc = invoke(client, VACCEL_OP_BUFFER_READ, args, {}, out);
        if (rc != 0)
            return rc;
        done += piece;
    } while (done < length);
    return 0;
}

int vaccel_program_load(vaccel_client* client, uint64_t context, uint32_t format,
                        const struct vaccel_tosa_target* target, const void* payload,
                        uint64_t payload_bytes, uint64_t* program, uint32_t* input_count,
                        uint32_t* output_count)
{
    if (program == nullptr)
        return null_argument("vaccel_program_load", "program");
    if (payload == nullptr && payload_bytes != 0)
        return null_argument("vaccel_program_load", "payload");
    struct vaccel_program_load args{};
    args.context = context;
    args.format = format;
    if (target != nullptr)
        args.target = *target;
    args.payload_bytes = payload_bytes;
    const int rc =
        invoke(client, VACCEL_OP_PROGRAM_LOAD, args, bytes_of(payload, payload_bytes));
    if (rc != 0)
        return rc;
    *program = args.program;
    if (input_count != nullptr)
        *input_count = args.input_count;
    if (output_count != nullptr)
        *output_count = args.output_count;
    return 0;
}

int vaccel_program_unload(vaccel_client* client, uint64_t program)
{
    vaccel_handle_release args{};
    args.handle = program;
    return invoke(client, VACCEL_OP_PROGRAM_UNLOAD, args);
}

int vaccel_program_slot(vaccel_client* client, uint64_t program, uint32_t slot,
                        struct vaccel_program_slot* out)
{
    if (out == nullptr)
        return null_argument("vaccel_program_slot", "out");
    struct vaccel_program_slot args{};
    args.program = program;
    args.slot = slot;
    const int rc = invoke(client, VACCEL_OP_PROGRAM_SLOT, args);
    *out = args;
    return rc;
}

int vaccel_queue_create(vaccel_client* client, uint64_t context, uint64_t* queue)
{
    if (queue == nullptr)
        return null_argument("vaccel_queue_create", "queue");
    struct vaccel_queue_create args{};
    args.context = context;
    const int rc = invoke(client, VACCEL_OP_QUEUE_CREATE, args);
    if (rc == 0)
        *queue = args.queue;
    return rc;
}

int vaccel_queue_destroy(vaccel_client* client, uint64_t queue)
{
    vaccel_handle_release args{};
    args.handle = queue;
    return invoke(client, VACCEL_OP_QUEUE_DESTROY, args);
}

}  // extern "C"
