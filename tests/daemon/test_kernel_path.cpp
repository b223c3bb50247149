// test_kernel_path.cpp - the daemon's side of the kernel transport, in
// process: intake of the messages the vaccel module delivers
// (take_kernel_request), payloads moved by pread/pwrite at a slot's
// position, and how the server attaches to the node.
//
// The module itself only runs in the VM test (tests/vm). Here the "server
// node" is a sparse memfd: pread/pwrite at VACCEL_SRV_PAYLOAD_POS(slot,
// seq, offset) of it are the very calls exchange.cpp makes on
// /dev/vaccel-server, so the byte positions (slot and request generation),
// sizes and reply headers are checked for real.
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <numeric>
#include <thread>

#include "daemon_support.hpp"
#include "vaccel/daemon/exchange.hpp"
#include "vaccel/daemon/server.hpp"
#include "vaccel/engine/session.hpp"
#include "vaccel_server.h"

using namespace vaccel;
using namespace vaccel::daemon;

namespace {

// A message as the module copies it into a slot's buffer: header (flags 0,
// session = the module's id) + the op's struct.
template <class S>
std::vector<std::byte> module_message(std::uint32_t opcode, const S& args,
                                      std::uint32_t payload_bytes, std::uint64_t seq = 7,
                                      std::uint64_t session = 3)
{
    vaccel_msg_header header{};
    header.magic = VACCEL_MSG_MAGIC;
    header.opcode = static_cast<std::uint16_t>(opcode);
    header.args_bytes = sizeof(S);
    header.payload_bytes = payload_bytes;
    header.seq = seq;
    header.session = session;
    std::vector<std::byte> message(sizeof header + sizeof(S));
    std::memcpy(message.data(), &header, sizeof header);
    std::memcpy(message.data() + sizeof header, &args, sizeof(S));
    return message;
}

vaccel_msg_header header_of(const Reply& reply)
{
    vaccel_msg_header header{};
    std::memcpy(&header, reply.bytes.data(), sizeof header);
    return header;
}

template <class S>
S args_of(const Reply& reply)
{
    S args{};
    assert_int_equal(reply.bytes.size(), sizeof(vaccel_msg_header) + sizeof(S));
    std::memcpy(&args, reply.bytes.data() + sizeof(vaccel_msg_header), sizeof(S));
    return args;
}

// A sparse file standing in for /dev/vaccel-server, holding the positions
// of every slot for requests of seq below 128.
UniqueFd node_stand_in()
{
    UniqueFd fd(::memfd_create("vaccel-node", MFD_CLOEXEC));
    assert_true(static_cast<bool>(fd));
    assert_int_equal(::ftruncate(fd.get(), static_cast<off_t>(VACCEL_SRV_PAYLOAD_POS(0, 128, 0))), 0);
    return fd;
}

// The payload of request `seq` delivered on `slot`, where the module shows it.
void put_payload(int fd, std::uint32_t slot, std::uint64_t seq, const std::vector<std::byte>& bytes)
{
    assert_int_equal(::pwrite(fd, bytes.data(), bytes.size(),
                              static_cast<off_t>(VACCEL_SRV_PAYLOAD_POS(slot, seq, 0))),
                     static_cast<ssize_t>(bytes.size()));
}

// A Session with one context and one buffer of `size` bytes.
struct Workspace {
    std::shared_ptr<engine::DeviceManager> devices;
    std::unique_ptr<engine::Session> session;
    std::uint64_t buffer = 0;

    explicit Workspace(std::uint64_t size)
    {
        backend::Selection selection;
        selection.settings["cpu"].emplace("threads", "1");
        devices = *engine::DeviceManager::open(selection);
        session = std::make_unique<engine::Session>(devices);
        vaccel_context_create create{};
        assert_true(session->call(VACCEL_OP_CONTEXT_CREATE, std::as_writable_bytes(std::span(&create, 1)), {}, {})
                        .has_value());
        vaccel_buffer_alloc alloc{};
        alloc.context = create.context;
        alloc.bytes = size;
        alloc.domain = VACCEL_DOMAIN_HOST;
        alloc.usage = VACCEL_USAGE_ALL;
        alloc.access = VACCEL_ACCESS_RW;
        assert_true(session->call(VACCEL_OP_BUFFER_ALLOC, std::as_writable_bytes(std::span(&alloc, 1)), {}, {})
                        .has_value());
        buffer = alloc.buffer;
    }
};

// ---- intake -------------------------------------------------------------------------------

void kernel_request_keeps_its_payload_on_the_slot(void**)
{
    vaccel_buffer_transfer write{};
    write.buffer = 1;
    write.length = 4096;
    const auto message = module_message(VACCEL_OP_BUFFER_WRITE, write, 4096, 99, 12);
    auto request = take_kernel_request(message, ServerSlot{-1, 4});
    assert_true(request.has_value());
    assert_int_equal(request->opcode(), VACCEL_OP_BUFFER_WRITE);
    assert_int_equal(request->header.seq, 99);
    assert_int_equal(request->header.session, 12);
    assert_int_equal(request->args.size(), sizeof write);
    assert_true(request->payload.empty());
    assert_true(request->payload_on_slot());
    assert_int_equal(request->server_slot->slot, 4);
}

void kernel_request_with_header_flags_is_refused_unknown_flags(void**)
{
    vaccel_device_count count{};
    auto message = module_message(VACCEL_OP_DEVICE_COUNT, count, 0);
    const std::uint16_t flags = VACCEL_MSG_RESPONSE;
    std::memcpy(message.data() + offsetof(vaccel_msg_header, flags), &flags, sizeof flags);
    auto request = take_kernel_request(message, ServerSlot{-1, 0});
    assert_false(request.has_value());
    assert_int_equal(static_cast<int>(request.error().code), VACCEL_E_INVALID_ARGUMENT);
    assert_int_equal(request.error().detail, VACCEL_D_UNKNOWN_FLAGS);
    assert_int_equal(request.error().arg0, VACCEL_MSG_RESPONSE);
}

void kernel_admin_message_is_refused_unknown_opcode(void**)
{
    vaccel_admin admin{};
    const auto message = module_message(VACCEL_OP_ADMIN, admin, 0);
    auto request = take_kernel_request(message, ServerSlot{-1, 0});
    assert_false(request.has_value());
    assert_int_equal(request.error().detail, VACCEL_D_UNKNOWN_OPCODE);
    assert_int_equal(request.error().arg0, VACCEL_OP_ADMIN);
}

void kernel_request_announcing_another_payload_size_is_refused_bad_size(void**)
{
    vaccel_buffer_transfer write{};
    write.length = 100;
    const auto message = module_message(VACCEL_OP_BUFFER_WRITE, write, 99);
    auto request = take_kernel_request(message, ServerSlot{-1, 0});
    assert_false(request.has_value());
    assert_int_equal(request.error().detail, VACCEL_D_BAD_SIZE);
    assert_int_equal(request.error().arg0, 99);
    assert_int_equal(request.error().arg1, 100);
}

void kernel_request_with_reserved_bytes_set_is_refused(void**)
{
    vaccel_buffer_transfer read{};
    read.length = 8;
    read.pad = 1;
    const auto message = module_message(VACCEL_OP_BUFFER_READ, read, 0);
    auto request = take_kernel_request(message, ServerSlot{-1, 0});
    assert_false(request.has_value());
    assert_int_equal(request.error().detail, VACCEL_D_RESERVED_NONZERO);
    assert_int_equal(request.error().arg0, offsetof(vaccel_buffer_transfer, pad));
}

void kernel_event_wait_reads_its_handles_at_intake(void**)
{
    UniqueFd node = node_stand_in();
    const std::uint64_t handles[3] = {11, 22, 33};
    put_payload(node.get(), 6, 7, std::vector<std::byte>(reinterpret_cast<const std::byte*>(handles),
                                                      reinterpret_cast<const std::byte*>(handles) + sizeof handles));
    vaccel_event_wait wait{};
    wait.count = 3;
    const auto message = module_message(VACCEL_OP_EVENT_WAIT, wait, sizeof handles);
    auto request = take_kernel_request(message, ServerSlot{node.get(), 6});
    assert_true(request.has_value());
    assert_int_equal(request->payload.size(), sizeof handles);
    assert_memory_equal(request->payload.data(), handles, sizeof handles);
}

// The position names the request by its seq: bytes the module shows for
// another request on the same slot (another generation) are not this
// request's payload. The stand-in ends with request 8's payload on slot 2,
// so request 9 on that slot finds nothing there (the module itself would
// answer -ESTALE).
void kernel_payload_is_read_at_the_position_of_the_requests_own_seq(void**)
{
    UniqueFd node(::memfd_create("vaccel-node", MFD_CLOEXEC));
    assert_true(static_cast<bool>(node));
    const std::uint64_t handles[2] = {5, 6};
    const std::vector<std::byte> bytes(reinterpret_cast<const std::byte*>(handles),
                                       reinterpret_cast<const std::byte*>(handles) + sizeof handles);
    put_payload(node.get(), 2, 8, bytes);
    vaccel_event_wait wait{};
    wait.count = 2;
    auto other = take_kernel_request(module_message(VACCEL_OP_EVENT_WAIT, wait, sizeof handles, 9),
                                     ServerSlot{node.get(), 2});
    assert_false(other.has_value());
    assert_int_equal(other.error().detail, VACCEL_D_BAD_SIZE);
    assert_int_equal(other.error().arg0, 0);
    assert_int_equal(other.error().arg1, sizeof handles);
    auto own = take_kernel_request(module_message(VACCEL_OP_EVENT_WAIT, wait, sizeof handles, 8),
                                   ServerSlot{node.get(), 2});
    assert_true(own.has_value());
    assert_int_equal(own->server_slot->seq, 8);
    assert_int_equal(own->payload.size(), sizeof handles);
    assert_memory_equal(own->payload.data(), handles, sizeof handles);
}

void kernel_submit_reads_its_bindings_at_intake(void**)
{
    UniqueFd node = node_stand_in();
    vaccel_binding bindings[2] = {};
    bindings[0].slot = 0;
    bindings[0].access = VACCEL_ACCESS_READ;
    bindings[0].buffer = 7;
    bindings[0].bytes = 16;
    bindings[1].slot = 1;
    bindings[1].access = VACCEL_ACCESS_WRITE;
    bindings[1].buffer = 8;
    bindings[1].bytes = 16;
    put_payload(node.get(), 5, 7, std::vector<std::byte>(reinterpret_cast<const std::byte*>(bindings),
                                                      reinterpret_cast<const std::byte*>(bindings) + sizeof bindings));
    vaccel_submit submit{};
    submit.queue = 1;
    submit.program = 2;
    submit.binding_count = 2;
    const auto message = module_message(VACCEL_OP_SUBMIT, submit, sizeof bindings);
    auto request = take_kernel_request(message, ServerSlot{node.get(), 5});
    assert_true(request.has_value());
    assert_false(request->payload_on_slot());
    assert_int_equal(request->payload.size(), sizeof bindings);
    assert_memory_equal(request->payload.data(), bindings, sizeof bindings);
}

void kernel_echo_of_a_short_message_still_holds_a_status(void**)
{
    const std::byte three[3] = {};
    Request echo = kernel_echo(three, ServerSlot{-1, 2});
    assert_int_equal(echo.args.size(), sizeof(vaccel_status));
    Reply reply = refusal(echo, Error::of(Errc::invalid_argument, VACCEL_D_BAD_SIZE, 3, 32));
    assert_int_equal(*reply.slot, 2);
    assert_int_equal(header_of(reply).flags, VACCEL_MSG_RESPONSE);
}

// ---- payloads through the slot --------------------------------------------------------------

void kernel_buffer_write_then_read_move_bytes_at_the_slot_positions(void**)
{
    UniqueFd node = node_stand_in();
    Workspace work(1000);
    std::vector<std::byte> data(1000);
    for (std::size_t i = 0; i < data.size(); ++i)
        data[i] = static_cast<std::byte>(i * 7 + 1);
    put_payload(node.get(), 3, 41, data);

    vaccel_buffer_transfer write{};
    write.buffer = work.buffer;
    write.length = data.size();
    auto request = take_kernel_request(module_message(VACCEL_OP_BUFFER_WRITE, write, 1000, 41),
                                       ServerSlot{node.get(), 3});
    assert_true(request.has_value());
    Reply written = execute(*work.session, *request);
    assert_int_equal(*written.slot, 3);
    assert_int_equal(header_of(written).seq, 41);
    assert_int_equal(header_of(written).flags, VACCEL_MSG_RESPONSE);
    assert_int_equal(header_of(written).payload_bytes, 0);
    assert_int_equal(args_of<vaccel_buffer_transfer>(written).status.error, VACCEL_OK);

    vaccel_buffer_transfer read{};
    read.buffer = work.buffer;
    read.length = data.size();
    request = take_kernel_request(module_message(VACCEL_OP_BUFFER_READ, read, 0, 42),
                                  ServerSlot{node.get(), 5});
    assert_true(request.has_value());
    Reply answered = execute(*work.session, *request);
    assert_int_equal(*answered.slot, 5);
    assert_int_equal(header_of(answered).seq, 42);
    assert_int_equal(header_of(answered).args_bytes, sizeof read);
    assert_int_equal(header_of(answered).flags, VACCEL_MSG_RESPONSE);
    assert_int_equal(header_of(answered).payload_bytes, 1000);
    assert_int_equal(args_of<vaccel_buffer_transfer>(answered).status.error, VACCEL_OK);
    std::vector<std::byte> back(1000);
    assert_int_equal(::pread(node.get(), back.data(), back.size(),
                             static_cast<off_t>(VACCEL_SRV_PAYLOAD_POS(5, 42, 0))),
                     1000);
    assert_memory_equal(back.data(), data.data(), data.size());
}

void kernel_buffer_read_that_fails_announces_no_payload(void**)
{
    UniqueFd node = node_stand_in();
    Workspace work(100);
    vaccel_buffer_transfer read{};
    read.buffer = work.buffer;
    read.length = 200;  // past the buffer's end
    auto request = take_kernel_request(module_message(VACCEL_OP_BUFFER_READ, read, 0),
                                       ServerSlot{node.get(), 1});
    assert_true(request.has_value());
    Reply answered = execute(*work.session, *request);
    assert_int_equal(header_of(answered).payload_bytes, 0);
    assert_int_equal(args_of<vaccel_buffer_transfer>(answered).status.error, VACCEL_E_OUT_OF_BOUNDS);
}

void kernel_payload_shorter_than_announced_is_refused_bad_size(void**)
{
    // The stand-in ends 10 bytes into the payload of request 7 on slot 7.
    UniqueFd node(::memfd_create("vaccel-node", MFD_CLOEXEC));
    assert_int_equal(::ftruncate(node.get(), static_cast<off_t>(VACCEL_SRV_PAYLOAD_POS(7, 7, 10))), 0);
    Workspace work(100);
    vaccel_buffer_transfer write{};
    write.buffer = work.buffer;
    write.length = 100;
    auto request = take_kernel_request(module_message(VACCEL_OP_BUFFER_WRITE, write, 100),
                                       ServerSlot{node.get(), 7});
    assert_true(request.has_value());
    Reply written = execute(*work.session, *request);
    const auto status = args_of<vaccel_buffer_transfer>(written).status;
    assert_int_equal(status.error, VACCEL_E_INVALID_ARGUMENT);
    assert_int_equal(status.detail, VACCEL_D_BAD_SIZE);
    assert_int_equal(status.arg0, 10);
    assert_int_equal(status.arg1, 100);
}

// ---- check first, then copy ----------------------------------------------------------------

// The most this process has ever had resident, in KiB.
long peak_resident_kib()
{
    rusage usage{};
    assert_int_equal(::getrusage(RUSAGE_SELF, &usage), 0);
    return usage.ru_maxrss;
}

// A 1 GiB transfer the request's own fields already refuse: the refusal
// comes before any payload is allocated or read. The stand-in node is
// empty, so a read of the payload would have answered BAD_SIZE instead,
// and staging 1 GiB would have raised the peak resident size by 1 GiB.
void kernel_transfer_refused_by_its_handle_or_range_reads_no_payload(void**)
{
    UniqueFd node(::memfd_create("vaccel-node", MFD_CLOEXEC));
    assert_true(static_cast<bool>(node));
    Workspace work(100);
    const long peak_before = peak_resident_kib();
    constexpr std::uint32_t gib = 1u << 30;

    vaccel_buffer_transfer write{};
    write.buffer = work.buffer + 1000;  // no such buffer
    write.length = gib;
    auto request = take_kernel_request(module_message(VACCEL_OP_BUFFER_WRITE, write, gib, 50),
                                       ServerSlot{node.get(), 1});
    assert_true(request.has_value());
    auto status = args_of<vaccel_buffer_transfer>(execute(*work.session, *request)).status;
    assert_int_equal(status.error, VACCEL_E_INVALID_ARGUMENT);
    assert_int_equal(status.detail, VACCEL_D_UNKNOWN_HANDLE);
    assert_int_equal(status.arg0, work.buffer + 1000);

    write.buffer = work.buffer;  // 100 bytes long
    write.offset = 8;
    request = take_kernel_request(module_message(VACCEL_OP_BUFFER_WRITE, write, gib, 51),
                                  ServerSlot{node.get(), 1});
    assert_true(request.has_value());
    status = args_of<vaccel_buffer_transfer>(execute(*work.session, *request)).status;
    assert_int_equal(status.error, VACCEL_E_OUT_OF_BOUNDS);
    assert_int_equal(status.detail, VACCEL_D_RANGE);
    assert_int_equal(status.arg0, 8);
    assert_int_equal(status.arg1, gib);

    vaccel_buffer_transfer read{};
    read.buffer = work.buffer;
    read.length = gib;
    request = take_kernel_request(module_message(VACCEL_OP_BUFFER_READ, read, 0, 52),
                                  ServerSlot{node.get(), 1});
    assert_true(request.has_value());
    Reply answered = execute(*work.session, *request);
    assert_int_equal(header_of(answered).payload_bytes, 0);
    assert_int_equal(args_of<vaccel_buffer_transfer>(answered).status.error, VACCEL_E_OUT_OF_BOUNDS);

    vaccel_program_load load{};
    load.context = 12345;  // no such context
    load.format = VACCEL_FORMAT_TOSA;
    load.payload_bytes = gib;
    request = take_kernel_request(module_message(VACCEL_OP_PROGRAM_LOAD, load, gib, 53),
                                  ServerSlot{node.get(), 1});
    assert_true(request.has_value());
    status = args_of<vaccel_program_load>(execute(*work.session, *request)).status;
    assert_int_equal(status.error, VACCEL_E_INVALID_ARGUMENT);
    assert_int_equal(status.arg0, 12345);

    // Nothing was written to the node either (a BUFFER_READ's pwrite).
    struct stat st {};
    assert_int_equal(::fstat(node.get(), &st), 0);
    assert_int_equal(st.st_size, 0);
    assert_true(peak_resident_kib() - peak_before < 64 * 1024);
}

// ---- attaching ------------------------------------------------------------------------------

std::filesystem::path temp_dir()
{
    char pattern[] = "/tmp/vaccel-kpath-XXXXXX";
    return ::mkdtemp(pattern);
}

void server_requiring_the_kernel_transport_refuses_to_start_without_the_node(void**)
{
    const auto dir = temp_dir();
    ServerOptions options;
    options.socket_path = (dir / "s.sock").string();
    options.config_path = dir / "vacceld.toml";
    options.cpu_threads = 1;
    options.kernel = KernelTransport::required;
    options.server_node = (dir / "no-such-node").string();
    auto server = Server::create(options);
    assert_false(server.has_value());
    assert_non_null(std::strstr(server.error().c_str(), "no-such-node does not exist"));
    assert_false(std::filesystem::exists(options.socket_path));
    std::filesystem::remove_all(dir);
}

void server_without_the_node_serves_the_socket_alone(void**)
{
    const auto dir = temp_dir();
    ServerOptions options;
    options.socket_path = (dir / "s.sock").string();
    options.config_path = dir / "vacceld.toml";
    options.cpu_threads = 1;
    options.server_node = (dir / "no-such-node").string();
    auto server = Server::create(options);
    assert_true(server.has_value());
    assert_false((*server)->kernel_attached());
    assert_true(std::filesystem::exists(options.socket_path));
    server->reset();
    std::filesystem::remove_all(dir);
}

// A node that is not the module refuses the version handshake
// (VACCEL_SRV_IOCTL_HELLO): the daemon does not attach to it and serves the
// socket alone.
void server_serves_the_socket_alone_when_the_node_refuses_the_handshake(void**)
{
    const auto dir = temp_dir();
    vaccel::test::write_text(dir / "node", "");
    ServerOptions options;
    options.socket_path = (dir / "s.sock").string();
    options.config_path = dir / "vacceld.toml";
    options.cpu_threads = 1;
    options.devices = std::vector<std::string>{"cpu"};  // the CPU alone, whatever else is here
    options.server_node = (dir / "node").string();
    auto server = Server::create(options);
    if (!server)
        fail_msg("Server::create: %s", server.error().c_str());
    assert_false((*server)->kernel_attached());
    int status = -1;
    std::thread reactor([&] { status = (*server)->run(); });
    {
        vaccel::test::WireClient client(options.socket_path);
        vaccel_device_count count{};
        auto r = client.call(VACCEL_OP_DEVICE_COUNT, count);
        assert_int_equal(r.as<vaccel_device_count>().count, 1);
        (*server)->request_stop();
        assert_true(client.closed_by_peer());
    }
    reactor.join();
    assert_int_equal(status, 0);
    server->reset();
    std::filesystem::remove_all(dir);
}

}  // namespace

int main()
{
    const CMUnitTest tests[] = {
        cmocka_unit_test(kernel_request_keeps_its_payload_on_the_slot),
        cmocka_unit_test(kernel_request_with_header_flags_is_refused_unknown_flags),
        cmocka_unit_test(kernel_admin_message_is_refused_unknown_opcode),
        cmocka_unit_test(kernel_request_announcing_another_payload_size_is_refused_bad_size),
        cmocka_unit_test(kernel_request_with_reserved_bytes_set_is_refused),
        cmocka_unit_test(kernel_event_wait_reads_its_handles_at_intake),
        cmocka_unit_test(kernel_payload_is_read_at_the_position_of_the_requests_own_seq),
        cmocka_unit_test(kernel_submit_reads_its_bindings_at_intake),
        cmocka_unit_test(kernel_echo_of_a_short_message_still_holds_a_status),
        cmocka_unit_test(kernel_buffer_write_then_read_move_bytes_at_the_slot_positions),
        cmocka_unit_test(kernel_buffer_read_that_fails_announces_no_payload),
        cmocka_unit_test(kernel_payload_shorter_than_announced_is_refused_bad_size),
        cmocka_unit_test(kernel_transfer_refused_by_its_handle_or_range_reads_no_payload),
        cmocka_unit_test(server_requiring_the_kernel_transport_refuses_to_start_without_the_node),
        cmocka_unit_test(server_without_the_node_serves_the_socket_alone),
        cmocka_unit_test(server_serves_the_socket_alone_when_the_node_refuses_the_handshake),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
