// daemon_seeds.cpp - the seed inputs of fuzz_daemon: valid conversations a
// client has with the daemon, so the fuzzer starts deep in dispatch rather
// than at the intake's first refusal.
//
// Owns: the seeds. Decides: each seed is one connection's worth of
// well-formed requests (daemon_input.hpp), handles named by order of issue:
// version and devices; a full run (context, buffers, writes, a small ADD
// program, queue, submit, wait, poll, read, releases); limits and slots;
// gates and a built-in kernel launch; the admin listings, LIMITS_SET last
// (it ends an input); a mapped buffer used through its memfd; and payloads
// in files, memfds sealed or not and resized, and files that are no memfd.
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon_input.hpp"
#include "test_programs.hpp"
#include "vaccel/common/codec.hpp"

namespace vaccel::fuzz {

namespace {

// Handles in order of issue in the run seed.
constexpr std::uint16_t context = 0, buffer_a = 1, buffer_b = 2, buffer_c = 3, program = 4,
                        queue = 5, event = 6;

class Conversation {
public:
    template <class Args>
    Conversation& request(std::uint32_t opcode, const Args& args,
                          std::span<const std::byte> payload = {})
    {
        append_record(input_, encode_request(opcode, seq_++, 0, bytes_of(args), payload));
        return *this;
    }
    Conversation& admin(std::uint32_t command, std::string_view document = {})
    {
        vaccel_admin args{};
        args.command = command;
        return request(VACCEL_OP_ADMIN, args, std::as_bytes(std::span(document)));
    }
    Conversation& release(std::uint32_t opcode, std::uint16_t handle)
    {
        vaccel_handle_release args{};
        args.handle = issued_handle(handle);
        return request(opcode, args);
    }
    // A request whose payload travels in the file the directive before it
    // attached (VACCEL_MSG_PAYLOAD_FD, `payload_bytes` of it).
    template <class Args>
    Conversation& request_with_file(std::uint32_t opcode, const Args& args,
                                    std::uint32_t payload_bytes)
    {
        std::vector<std::byte> datagram;
        append_request_fd(datagram, opcode, seq_++, 0, bytes_of(args), payload_bytes);
        append_record(input_, datagram);
        return *this;
    }
    Conversation& directive(Directive kind, const std::vector<std::byte>& operands = {})
    {
        append_directive(input_, kind, operands);
        return *this;
    }
    const std::vector<std::byte>& bytes() const { return input_; }

private:
    std::vector<std::byte> input_;
    std::uint64_t seq_ = 1;
};

vaccel_buffer_alloc alloc_request(std::uint64_t bytes)
{
    vaccel_buffer_alloc args{};
    args.context = issued_handle(context);
    args.bytes = bytes;
    args.domain = VACCEL_DOMAIN_HOST;
    args.usage = VACCEL_USAGE_ALL;
    args.access = VACCEL_ACCESS_RW;
    return args;
}

Conversation version_and_devices()
{
    Conversation c;
    c.request(VACCEL_OP_GET_VERSION, vaccel_get_version{});
    c.request(VACCEL_OP_DEVICE_COUNT, vaccel_device_count{});
    vaccel_device_query query{};
    c.request(VACCEL_OP_DEVICE_QUERY, query);
    vaccel_device_tosa tosa{};
    c.request(VACCEL_OP_DEVICE_TOSA, tosa);
    return c;
}

Conversation full_run()
{
    Conversation c;
    c.request(VACCEL_OP_CONTEXT_CREATE, vaccel_context_create{});
    for (int i = 0; i < 3; ++i) c.request(VACCEL_OP_BUFFER_ALLOC, alloc_request(16));
    const float values[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    for (const std::uint16_t buffer : {buffer_a, buffer_b}) {
        vaccel_buffer_transfer write{};
        write.buffer = issued_handle(buffer);
        write.length = sizeof values;
        c.request(VACCEL_OP_BUFFER_WRITE, write, std::as_bytes(std::span(values)));
    }
    const auto artifact = test::add_program(4);
    vaccel_program_load load{};
    load.context = issued_handle(context);
    load.format = VACCEL_FORMAT_TOSA;
    load.payload_bytes = artifact.size();
    c.request(VACCEL_OP_PROGRAM_LOAD, load, artifact);
    vaccel_queue_create queue_args{};
    queue_args.context = issued_handle(context);
    c.request(VACCEL_OP_QUEUE_CREATE, queue_args);
    const vaccel_binding bindings[3] = {
        {0, VACCEL_ACCESS_READ, issued_handle(buffer_a), 0, 16},
        {1, VACCEL_ACCESS_READ, issued_handle(buffer_b), 0, 16},
        {2, VACCEL_ACCESS_WRITE, issued_handle(buffer_c), 0, 16},
    };
    vaccel_submit submit{};
    submit.queue = issued_handle(queue);
    submit.program = issued_handle(program);
    submit.binding_count = 3;
    c.request(VACCEL_OP_SUBMIT, submit, std::as_bytes(std::span(bindings)));
    const std::uint64_t events[1] = {issued_handle(event)};
    vaccel_event_wait wait{};
    wait.count = 1;
    wait.flags = VACCEL_WAIT_ALL;
    wait.timeout_ns = ~0ull >> 1;
    c.request(VACCEL_OP_EVENT_WAIT, wait, std::as_bytes(std::span(events)));
    vaccel_event_poll poll{};
    poll.event = issued_handle(event);
    c.request(VACCEL_OP_EVENT_POLL, poll);
    vaccel_buffer_transfer read{};
    read.buffer = issued_handle(buffer_c);
    read.length = 16;
    c.request(VACCEL_OP_BUFFER_READ, read);
    c.release(VACCEL_OP_EVENT_DESTROY, event);
    c.release(VACCEL_OP_QUEUE_DESTROY, queue);
    c.release(VACCEL_OP_PROGRAM_UNLOAD, program);
    for (const std::uint16_t buffer : {buffer_a, buffer_b, buffer_c})
        c.release(VACCEL_OP_BUFFER_FREE, buffer);
    c.release(VACCEL_OP_CONTEXT_DESTROY, context);
    return c;
}

Conversation limits_and_slots()
{
    Conversation c;
    c.request(VACCEL_OP_CONTEXT_CREATE, vaccel_context_create{});
    vaccel_context_limits limits{};
    limits.context = issued_handle(context);
    c.request(VACCEL_OP_CONTEXT_LIMITS, limits);
    const auto artifact = test::matmul_program(4);
    vaccel_program_load load{};
    load.context = issued_handle(context);
    load.format = VACCEL_FORMAT_TOSA;
    load.payload_bytes = artifact.size();
    c.request(VACCEL_OP_PROGRAM_LOAD, load, artifact);
    for (std::uint32_t slot = 0; slot < 3; ++slot) {
        vaccel_program_slot query{};
        query.program = issued_handle(1);
        query.slot = slot;
        c.request(VACCEL_OP_PROGRAM_SLOT, query);
    }
    return c;
}

// Handles in order of issue in the gates-and-launch seed: the context and
// three buffers as in the run seed, then these.
constexpr std::uint16_t gate = 4, add = 5, builtin = 6, lane = 7, held = 8, filled = 9;

Conversation gates_and_launch()
{
    Conversation c;
    c.request(VACCEL_OP_CONTEXT_CREATE, vaccel_context_create{});
    for (int i = 0; i < 3; ++i) c.request(VACCEL_OP_BUFFER_ALLOC, alloc_request(16));
    vaccel_gate_create create{};
    create.context = issued_handle(context);
    c.request(VACCEL_OP_GATE_CREATE, create);
    const auto artifact = test::add_program(4);
    vaccel_program_load load{};
    load.context = issued_handle(context);
    load.format = VACCEL_FORMAT_TOSA;
    load.payload_bytes = artifact.size();
    c.request(VACCEL_OP_PROGRAM_LOAD, load, artifact);
    constexpr std::string_view library = "vaccel.builtin";
    load.format = VACCEL_FORMAT_CPU_BUILTIN;
    load.payload_bytes = library.size();
    c.request(VACCEL_OP_PROGRAM_LOAD, load, std::as_bytes(std::span(library)));
    vaccel_queue_create queue_args{};
    queue_args.context = issued_handle(context);
    c.request(VACCEL_OP_QUEUE_CREATE, queue_args);
    const vaccel_binding bindings[3] = {
        {0, VACCEL_ACCESS_READ, issued_handle(buffer_a), 0, 16},
        {1, VACCEL_ACCESS_READ, issued_handle(buffer_b), 0, 16},
        {2, VACCEL_ACCESS_WRITE, issued_handle(buffer_c), 0, 16},
    };
    vaccel_submit_after after{};
    after.queue = issued_handle(lane);
    after.program = issued_handle(add);
    after.binding_count = 3;
    after.gate = issued_handle(gate);
    after.value = 2;
    c.request(VACCEL_OP_SUBMIT_AFTER, after, std::as_bytes(std::span(bindings)));
    vaccel_gate_value raise{};
    raise.gate = issued_handle(gate);
    raise.value = 2;
    c.request(VACCEL_OP_GATE_RAISE, raise);
    raise.value = 0;
    c.request(VACCEL_OP_GATE_VALUE, raise);
    // fill_u32(ptr slot 0 bytes 16, u32 7, u32 4) into buffer a.
    vaccel_launch launch{};
    launch.queue = issued_handle(lane);
    launch.program = issued_handle(builtin);
    launch.binding_count = 1;
    launch.dims = vaccel_launch_dims{{1, 1, 1}, {4, 1, 1}, 0, 0};
    std::memcpy(launch.entry, "fill_u32", 8);
    const vaccel_binding target{0, VACCEL_ACCESS_WRITE, issued_handle(buffer_a), 0, 16};
    const std::uint8_t argv[] = {VACCEL_ARG_PTR, 0, 0, 0, 0, 16, 0, 0, 0, VACCEL_ARG_U32, 7,
                                 0,              0, 0, VACCEL_ARG_U32, 4, 0, 0, 0};
    launch.argv_bytes = sizeof argv;
    std::vector<std::byte> payload(sizeof target + sizeof argv);
    std::memcpy(payload.data(), &target, sizeof target);
    std::memcpy(payload.data() + sizeof target, argv, sizeof argv);
    c.request(VACCEL_OP_LAUNCH, launch, payload);
    const std::uint64_t events[2] = {issued_handle(held), issued_handle(filled)};
    vaccel_event_wait wait{};
    wait.count = 2;
    wait.flags = VACCEL_WAIT_ALL;
    wait.timeout_ns = ~0ull >> 1;
    c.request(VACCEL_OP_EVENT_WAIT, wait, std::as_bytes(std::span(events)));
    c.release(VACCEL_OP_EVENT_DESTROY, held);
    c.release(VACCEL_OP_EVENT_DESTROY, filled);
    c.release(VACCEL_OP_GATE_DESTROY, gate);
    return c;
}

void put_u32(std::vector<std::byte>& out, std::uint32_t value)
{
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::byte>((value >> (8 * i)) & 0xff));
}

// attach_memfd's operands: `seals`, a file of `size` bytes of `fill`
// starting with `head`.
std::vector<std::byte> memfd_operands(std::uint8_t seals, std::uint32_t size,
                                      std::span<const std::byte> head = {},
                                      std::byte fill = std::byte{0x33})
{
    std::vector<std::byte> out{static_cast<std::byte>(seals), fill};
    put_u32(out, size);
    out.insert(out.end(), head.begin(), head.end());
    return out;
}

std::vector<std::byte> at_operands(std::uint32_t offset, std::span<const std::byte> bytes)
{
    std::vector<std::byte> out;
    put_u32(out, offset);
    out.insert(out.end(), bytes.begin(), bytes.end());
    return out;
}

// A buffer mapped, used through its mapping (written, a hole punched, an
// attempt to shrink and to grow its file), and read and bound after each.
Conversation mapped_buffer()
{
    Conversation c;
    c.request(VACCEL_OP_CONTEXT_CREATE, vaccel_context_create{});
    for (int i = 0; i < 3; ++i) c.request(VACCEL_OP_BUFFER_ALLOC, alloc_request(16));
    vaccel_buffer_map map{};
    map.buffer = issued_handle(buffer_a);
    c.request(VACCEL_OP_BUFFER_MAP, map);
    const float values[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    c.directive(Directive::write_mapping, at_operands(0, std::as_bytes(std::span(values))));
    vaccel_buffer_transfer read{};
    read.buffer = issued_handle(buffer_a);
    read.length = 16;
    c.request(VACCEL_OP_BUFFER_READ, read);
    std::vector<std::byte> zero;
    put_u32(zero, 0);
    c.directive(Directive::resize_mapping, zero);
    c.request(VACCEL_OP_BUFFER_READ, read);
    std::vector<std::byte> larger;
    put_u32(larger, 1u << 20);
    c.directive(Directive::resize_mapping, larger);
    std::vector<std::byte> hole;
    put_u32(hole, 0);
    put_u32(hole, 4096);
    c.directive(Directive::punch_mapping, hole);
    c.request(VACCEL_OP_BUFFER_READ, read);
    vaccel_buffer_transfer write{};
    write.buffer = issued_handle(buffer_b);
    write.length = sizeof values;
    c.request(VACCEL_OP_BUFFER_WRITE, write, std::as_bytes(std::span(values)));
    const auto artifact = test::add_program(4);
    vaccel_program_load load{};
    load.context = issued_handle(context);
    load.format = VACCEL_FORMAT_TOSA;
    load.payload_bytes = artifact.size();
    c.request(VACCEL_OP_PROGRAM_LOAD, load, artifact);
    vaccel_queue_create queue_args{};
    queue_args.context = issued_handle(context);
    c.request(VACCEL_OP_QUEUE_CREATE, queue_args);
    const vaccel_binding bindings[3] = {
        {0, VACCEL_ACCESS_READ, issued_handle(buffer_a), 0, 16},
        {1, VACCEL_ACCESS_READ, issued_handle(buffer_b), 0, 16},
        {2, VACCEL_ACCESS_WRITE, issued_handle(buffer_c), 0, 16},
    };
    vaccel_submit submit{};
    submit.queue = issued_handle(queue);
    submit.program = issued_handle(program);
    submit.binding_count = 3;
    c.request(VACCEL_OP_SUBMIT, submit, std::as_bytes(std::span(bindings)));
    const std::uint64_t events[1] = {issued_handle(event)};
    vaccel_event_wait wait{};
    wait.count = 1;
    wait.flags = VACCEL_WAIT_ALL;
    wait.timeout_ns = ~0ull >> 1;
    c.request(VACCEL_OP_EVENT_WAIT, wait, std::as_bytes(std::span(events)));
    c.release(VACCEL_OP_BUFFER_FREE, buffer_a);
    return c;
}

// Payloads in files: memfds sealed (as libvaccel's) and not, shrunk, grown
// and rewritten between uses; a program in a memfd; files that are no memfd.
Conversation payload_files()
{
    constexpr std::uint32_t bytes = 2 * VACCEL_MSG_INLINE_MAX;  // only above it: a file
    Conversation c;
    c.request(VACCEL_OP_CONTEXT_CREATE, vaccel_context_create{});
    c.request(VACCEL_OP_BUFFER_ALLOC, alloc_request(bytes));
    vaccel_buffer_transfer write{};
    write.buffer = issued_handle(1);
    write.length = bytes;
    c.directive(Directive::attach_memfd, memfd_operands(seal_shrink | seal_seal, bytes));
    c.request_with_file(VACCEL_OP_BUFFER_WRITE, write, bytes);
    std::vector<std::byte> small;
    put_u32(small, 4096);
    c.directive(Directive::resize_payload, small);  // refused by its seal
    c.directive(Directive::reattach);
    c.request_with_file(VACCEL_OP_BUFFER_WRITE, write, bytes);
    c.directive(Directive::attach_memfd, memfd_operands(0, bytes));
    c.directive(Directive::resize_payload, small);  // now shorter than announced
    c.directive(Directive::reattach);
    c.request_with_file(VACCEL_OP_BUFFER_WRITE, write, bytes);
    const std::byte marks[8] = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4},
                                std::byte{5}, std::byte{6}, std::byte{7}, std::byte{8}};
    c.directive(Directive::rewrite_payload, at_operands(bytes - 8, marks));  // grown back
    c.directive(Directive::reattach);
    c.request_with_file(VACCEL_OP_BUFFER_WRITE, write, bytes);
    c.directive(Directive::attach_memfd, memfd_operands(seal_shrink | seal_grow, bytes));
    c.request_with_file(VACCEL_OP_BUFFER_READ, write, 0);
    c.directive(Directive::attach_memfd,
                memfd_operands(seal_shrink | seal_grow | seal_write, bytes));
    c.request_with_file(VACCEL_OP_BUFFER_READ, write, 0);  // a file it cannot write
    // A program in a memfd, padded past the inline size.
    const auto artifact = test::add_program(4);
    vaccel_program_load load{};
    load.context = issued_handle(0);
    load.format = VACCEL_FORMAT_TOSA;
    load.payload_bytes = bytes;
    c.directive(Directive::attach_memfd,
                memfd_operands(seal_shrink, bytes, artifact, std::byte{0}));
    c.request_with_file(VACCEL_OP_PROGRAM_LOAD, load, bytes);
    c.directive(Directive::rewrite_payload, at_operands(0, marks));  // now garbage
    c.directive(Directive::reattach);
    c.request_with_file(VACCEL_OP_PROGRAM_LOAD, load, bytes);
    for (std::uint8_t kind = 0; kind < other_file_count; ++kind) {
        c.directive(Directive::attach_other, {static_cast<std::byte>(kind)});
        c.request_with_file(VACCEL_OP_BUFFER_WRITE, write, bytes);
    }
    c.request(VACCEL_OP_GET_VERSION, vaccel_get_version{});
    return c;
}

Conversation admin_listings()
{
    Conversation c;
    c.admin(VACCEL_ADMIN_DEVICES);
    c.admin(VACCEL_ADMIN_SESSIONS);
    c.admin(VACCEL_ADMIN_LIMITS_GET);
    c.admin(VACCEL_ADMIN_METRICS);
    c.admin(VACCEL_ADMIN_LIMITS_RESET, R"({"selector":{"gid":4242}})");
    c.admin(VACCEL_ADMIN_LIMITS_SET,
            R"({"selector":{"uid":1000},"limits":{"contexts":2,"memory_bytes":1048576,)"
            R"("buffers":8,"programs":2,"queues":2,"events":16,"weight":50}})");
    return c;
}

}  // namespace

bool write_daemon_seeds(const char* directory)
{
    std::error_code error;
    std::filesystem::create_directories(directory, error);
    const std::pair<const char*, Conversation> seeds[] = {
        {"version_and_devices", version_and_devices()},
        {"full_run", full_run()},
        {"limits_and_slots", limits_and_slots()},
        {"gates_and_launch", gates_and_launch()},
        {"admin_listings", admin_listings()},
        {"mapped_buffer", mapped_buffer()},
        {"payload_files", payload_files()},
    };
    for (const auto& [name, conversation] : seeds) {
        std::ofstream file(std::filesystem::path(directory) / name,
                           std::ios::binary | std::ios::trunc);
        file.write(reinterpret_cast<const char*>(conversation.bytes().data()),
                   std::streamsize(conversation.bytes().size()));
        if (!file.good()) {
            std::fprintf(stderr, "fuzz_daemon: cannot write the seed %s into %s\n", name,
                         directory);
            return false;
        }
    }
    return true;
}

}  // namespace vaccel::fuzz
