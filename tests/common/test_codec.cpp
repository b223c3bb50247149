// test_codec.cpp - the wire codec and the per-op request rules: round trips of
// every opcode, and every way a message can be malformed refused with its
// exact detail.
#include "test_support.hpp"

#include <array>
#include <cstring>
#include <random>
#include <string_view>
#include <vector>

#include "vaccel/common/codec.hpp"
#include "vaccel/common/requests.hpp"

using namespace vaccel;

namespace {

constexpr std::size_t header_bytes = sizeof(vaccel_msg_header);

// A valid request of `opcode`: its args and the payload it must carry.
struct Sample {
    std::vector<std::byte> args;
    std::vector<std::byte> payload;
};

template <class S>
std::vector<std::byte> to_bytes(const S& value)
{
    auto bytes = bytes_of(value);
    return {bytes.begin(), bytes.end()};
}

std::vector<std::byte> pattern(std::size_t n, unsigned seed)
{
    std::vector<std::byte> out(n);
    for (std::size_t i = 0; i < n; ++i)
        out[i] = static_cast<std::byte>((i * 31 + seed) & 0xff);
    return out;
}

Sample sample_request(std::uint32_t opcode)
{
    Sample s;
    s.args.assign(args_size(opcode), std::byte{0});
    switch (opcode) {
    case VACCEL_OP_BUFFER_WRITE: {
        vaccel_buffer_transfer t{};
        t.buffer = 0x10;
        t.offset = 8;
        t.length = 4096;
        s.args = to_bytes(t);
        s.payload = pattern(4096, 1);
        break;
    }
    case VACCEL_OP_BUFFER_READ: {
        vaccel_buffer_transfer t{};
        t.buffer = 0x10;
        t.length = 24;
        s.args = to_bytes(t);
        break;
    }
    case VACCEL_OP_PROGRAM_LOAD: {
        vaccel_program_load l{};
        l.context = 0x20;
        l.format = VACCEL_FORMAT_TOSA;
        l.target.major = 1;
        l.payload_bytes = 77;
        s.args = to_bytes(l);
        s.payload = pattern(77, 2);
        break;
    }
    case VACCEL_OP_SUBMIT: {
        vaccel_submit sub{};
        sub.queue = 0x30;
        sub.program = 0x40;
        sub.binding_count = 4;
        s.args = to_bytes(sub);
        std::array<vaccel_binding, 4> b{};
        for (std::uint32_t i = 0; i < 4; ++i)
            b[i] = vaccel_binding{i, i == 3 ? VACCEL_ACCESS_WRITE : VACCEL_ACCESS_READ,
                                  0x50 + i, 0, 64};
        auto bytes = bytes_of(std::span<const vaccel_binding>(b));
        s.payload.assign(bytes.begin(), bytes.end());
        break;
    }
    case VACCEL_OP_RUN: {
        vaccel_run run{};
        run.queue = 0x30;
        run.program = 0x40;
        run.binding_count = 2;
        s.args = to_bytes(run);
        std::array<vaccel_binding, 2> b{};
        b[0] = vaccel_binding{0, VACCEL_ACCESS_READ, 0x50, 0, 64};
        b[1] = vaccel_binding{1, VACCEL_ACCESS_WRITE, 0x51, 0, 64};
        auto bytes = bytes_of(std::span<const vaccel_binding>(b));
        s.payload.assign(bytes.begin(), bytes.end());
        break;
    }
    case VACCEL_OP_SUBMIT_AFTER: {
        vaccel_submit_after sub{};
        sub.queue = 0x30;
        sub.program = 0x40;
        sub.binding_count = 2;
        sub.gate = 0x45;
        sub.value = 9;
        s.args = to_bytes(sub);
        std::array<vaccel_binding, 2> b{};
        for (std::uint32_t i = 0; i < 2; ++i)
            b[i] = vaccel_binding{i, i == 1 ? VACCEL_ACCESS_WRITE : VACCEL_ACCESS_READ, 0x50 + i,
                                  0, 64};
        auto bytes = bytes_of(std::span<const vaccel_binding>(b));
        s.payload.assign(bytes.begin(), bytes.end());
        break;
    }
    case VACCEL_OP_LAUNCH: {
        vaccel_launch l{};
        l.queue = 0x30;
        l.program = 0x40;
        l.binding_count = 1;
        l.argv_bytes = 14;  // ptr record (9) + u32 record (5)
        l.dims.grid[0] = l.dims.grid[1] = l.dims.grid[2] = 1;
        l.dims.block[0] = l.dims.block[1] = l.dims.block[2] = 1;
        std::memcpy(l.entry, "fill_u32", 8);
        s.args = to_bytes(l);
        const vaccel_binding b{0, VACCEL_ACCESS_WRITE, 0x50, 0, 64};
        auto bytes = bytes_of(std::span<const vaccel_binding>(&b, 1));
        s.payload.assign(bytes.begin(), bytes.end());
        const std::uint8_t argv[14] = {VACCEL_ARG_PTR, 0, 0, 0, 0, 64, 0, 0, 0,
                                       VACCEL_ARG_U32, 7, 0, 0, 0};
        for (std::uint8_t byte : argv)
            s.payload.push_back(std::byte{byte});
        break;
    }
    case VACCEL_OP_EVENT_WAIT: {
        vaccel_event_wait w{};
        w.count = 3;
        w.flags = VACCEL_WAIT_ALL;
        s.args = to_bytes(w);
        std::array<std::uint64_t, 3> events = {0x61, 0x62, 0x63};
        auto bytes = bytes_of(std::span<const std::uint64_t>(events));
        s.payload.assign(bytes.begin(), bytes.end());
        break;
    }
    default:
        // Every other op: a struct with its input handle/index set, no payload.
        if (s.args.size() >= sizeof(vaccel_status) + 8) {
            const std::uint64_t handle = 0x99;
            std::memcpy(s.args.data() + sizeof(vaccel_status), &handle, 4);
        }
        break;
    }
    return s;
}

std::vector<std::byte> encoded(std::uint32_t opcode)
{
    Sample s = sample_request(opcode);
    return encode_request(opcode, 7, 0, s.args, s.payload);
}

void put_header(std::vector<std::byte>& message, const vaccel_msg_header& header)
{
    std::memcpy(message.data(), &header, sizeof(header));
}

vaccel_msg_header get_header(const std::vector<std::byte>& message)
{
    vaccel_msg_header header;
    std::memcpy(&header, message.data(), sizeof(header));
    return header;
}

// ---- round trips --------------------------------------------------------------

void every_opcode_round_trips_as_request(void**)
{
    for (std::uint32_t op = 0; op < VACCEL_OP_COUNT; ++op) {
        Sample s = sample_request(op);
        auto bytes = encode_request(op, 1000 + op, 0xabc, s.args, s.payload);
        assert_int_equal(bytes.size(), header_bytes + s.args.size() + s.payload.size());
        auto view = decode_request(bytes);
        assert_ok(view);
        assert_int_equal(view->header.magic, VACCEL_MSG_MAGIC);
        assert_int_equal(view->header.opcode, op);
        assert_int_equal(view->header.flags, 0);
        assert_int_equal(view->header.seq, 1000 + op);
        assert_int_equal(view->header.session, 0xabc);
        assert_int_equal(view->args.size(), args_size(op));
        assert_memory_equal(view->args.data(), s.args.data(), s.args.size());
        assert_int_equal(view->payload.size(), s.payload.size());
        if (!s.payload.empty())
            assert_memory_equal(view->payload.data(), s.payload.data(), s.payload.size());
    }
}

void every_opcode_round_trips_as_response(void**)
{
    for (std::uint32_t op = 0; op < VACCEL_OP_COUNT; ++op) {
        Sample s = sample_request(op);
        std::vector<std::byte> payload;
        if (op == VACCEL_OP_BUFFER_READ)
            payload = pattern(24, 3);
        auto bytes = encode_response(op, 5, 0, s.args, payload);
        auto view = decode_response(bytes);
        assert_ok(view);
        assert_int_equal(view->header.opcode, op);
        assert_int_equal(view->header.flags, VACCEL_MSG_RESPONSE);
        assert_int_equal(view->header.seq, 5);
        assert_int_equal(view->payload.size(), payload.size());
    }
}

void failed_read_response_carries_no_payload(void**)
{
    vaccel_buffer_transfer t{};
    t.length = 24;
    t.status = Error::of(Errc::out_of_bounds, VACCEL_D_RANGE, 0, 24).to_status();
    assert_ok(decode_response(encode_response(VACCEL_OP_BUFFER_READ, 1, 0, bytes_of(t), {})));
    auto data = pattern(24, 0);
    assert_refused(decode_response(encode_response(VACCEL_OP_BUFFER_READ, 1, 0, bytes_of(t), data)),
                   Errc::invalid_argument, VACCEL_D_BAD_SIZE, 24, 0);
}

void append_writes_messages_back_to_back(void**)
{
    std::vector<std::byte> out;
    Sample a = sample_request(VACCEL_OP_SUBMIT);
    Sample b = sample_request(VACCEL_OP_EVENT_POLL);
    const std::size_t first = append_request(out, VACCEL_OP_SUBMIT, 1, 0, a.args, a.payload);
    const std::size_t second = append_request(out, VACCEL_OP_EVENT_POLL, 2, 0, b.args, b.payload);
    assert_int_equal(out.size(), first + second);
    auto one = decode_request(std::span(out).first(first));
    auto two = decode_request(std::span(out).subspan(first));
    assert_ok(one);
    assert_ok(two);
    assert_int_equal(one->header.seq, 1);
    assert_int_equal(two->header.opcode, VACCEL_OP_EVENT_POLL);
}

void args_as_copies_the_struct(void**)
{
    auto bytes = encoded(VACCEL_OP_SUBMIT);
    auto view = decode_request(bytes);
    auto submit = args_as<vaccel_submit>(*view);
    assert_ok(submit);
    assert_int_equal(submit->binding_count, 4);
    assert_int_equal(submit->queue, 0x30);
    assert_refused(args_as<vaccel_event_wait>(*view), Errc::invalid_argument, VACCEL_D_BAD_SIZE,
                   sizeof(vaccel_submit), sizeof(vaccel_event_wait));
}

// ---- sizes ----------------------------------------------------------------------

void truncated_message_is_refused_at_every_length(void**)
{
    for (std::uint32_t op : {VACCEL_OP_SUBMIT, VACCEL_OP_BUFFER_WRITE, VACCEL_OP_GET_VERSION}) {
        auto bytes = encoded(op);
        for (std::size_t n = 0; n < bytes.size(); ++n) {
            auto span = std::span<const std::byte>(bytes).first(n);
            if (n < header_bytes)
                assert_refused(decode_request(span), Errc::invalid_argument, VACCEL_D_BAD_SIZE,
                               n, header_bytes);
            else
                assert_refused(decode_request(span), Errc::invalid_argument, VACCEL_D_BAD_SIZE,
                               n, bytes.size());
        }
    }
}

void message_one_byte_too_long_is_refused(void**)
{
    auto bytes = encoded(VACCEL_OP_SUBMIT);
    const std::size_t size = bytes.size();
    bytes.push_back(std::byte{0});
    assert_refused(decode_request(bytes), Errc::invalid_argument, VACCEL_D_BAD_SIZE, size + 1,
                   size);
}

void wrong_args_size_is_refused(void**)
{
    Sample s = sample_request(VACCEL_OP_CONTEXT_CREATE);
    auto shorter = std::span<const std::byte>(s.args).first(s.args.size() - 8);
    assert_refused(decode_request(encode_request(VACCEL_OP_CONTEXT_CREATE, 1, 0, shorter, {})),
                   Errc::invalid_argument, VACCEL_D_BAD_SIZE, s.args.size() - 8, s.args.size());
    assert_refused(check_request(VACCEL_OP_CONTEXT_CREATE, shorter), Errc::invalid_argument,
                   VACCEL_D_BAD_SIZE, s.args.size() - 8, s.args.size());
}

void write_payload_shorter_than_length_is_refused(void**)
{
    Sample s = sample_request(VACCEL_OP_BUFFER_WRITE);
    s.payload.pop_back();
    assert_refused(decode_request(encode_request(VACCEL_OP_BUFFER_WRITE, 1, 0, s.args, s.payload)),
                   Errc::invalid_argument, VACCEL_D_BAD_SIZE, 4095, 4096);
}

void submit_payload_not_matching_binding_count_is_refused(void**)
{
    Sample s = sample_request(VACCEL_OP_SUBMIT);
    s.payload.resize(3 * sizeof(vaccel_binding));
    assert_refused(decode_request(encode_request(VACCEL_OP_SUBMIT, 1, 0, s.args, s.payload)),
                   Errc::invalid_argument, VACCEL_D_BAD_SIZE, 3 * sizeof(vaccel_binding),
                   4 * sizeof(vaccel_binding));
}

void payload_on_an_op_without_one_is_refused(void**)
{
    Sample s = sample_request(VACCEL_OP_QUEUE_CREATE);
    auto extra = pattern(8, 0);
    assert_refused(decode_request(encode_request(VACCEL_OP_QUEUE_CREATE, 1, 0, s.args, extra)),
                   Errc::invalid_argument, VACCEL_D_BAD_SIZE, 8, 0);
}

void submit_binding_count_outside_bounds_is_refused(void**)
{
    vaccel_submit sub{};
    assert_refused(request_payload_size(VACCEL_OP_SUBMIT, bytes_of(sub)), Errc::invalid_argument,
                   VACCEL_D_BAD_VALUE, offsetof(vaccel_submit, binding_count), 0);
    sub.binding_count = VACCEL_MAX_BINDINGS + 1;
    auto refused = request_payload_size(VACCEL_OP_SUBMIT, bytes_of(sub));
    assert_refused(refused, Errc::resource_limit, VACCEL_D_LIMIT, VACCEL_MAX_BINDINGS,
                   VACCEL_MAX_BINDINGS + 1);
    assert_int_equal(refused.error().limit, VACCEL_LIMIT_BINDINGS);
    sub.binding_count = VACCEL_MAX_BINDINGS;
    assert_int_equal(*request_payload_size(VACCEL_OP_SUBMIT, bytes_of(sub)),
                     VACCEL_MAX_BINDINGS * sizeof(vaccel_binding));
}

void wait_count_outside_bounds_is_refused(void**)
{
    vaccel_event_wait w{};
    assert_refused(request_payload_size(VACCEL_OP_EVENT_WAIT, bytes_of(w)),
                   Errc::invalid_argument, VACCEL_D_BAD_VALUE, offsetof(vaccel_event_wait, count),
                   0);
    w.count = VACCEL_MAX_WAIT_EVENTS + 1;
    assert_refused(request_payload_size(VACCEL_OP_EVENT_WAIT, bytes_of(w)),
                   Errc::invalid_argument, VACCEL_D_BAD_VALUE, offsetof(vaccel_event_wait, count),
                   VACCEL_MAX_WAIT_EVENTS + 1);
    w.count = VACCEL_MAX_WAIT_EVENTS;
    assert_int_equal(*request_payload_size(VACCEL_OP_EVENT_WAIT, bytes_of(w)),
                     VACCEL_MAX_WAIT_EVENTS * 8);
}

void payload_above_the_wire_maximum_is_refused(void**)
{
    vaccel_buffer_transfer t{};
    t.length = max_payload_bytes + 1;
    assert_refused(request_payload_size(VACCEL_OP_BUFFER_WRITE, bytes_of(t)),
                   Errc::invalid_argument, VACCEL_D_BAD_SIZE, max_payload_bytes + 1,
                   max_payload_bytes);
    assert_refused(response_payload_size(VACCEL_OP_BUFFER_READ, bytes_of(t)),
                   Errc::invalid_argument, VACCEL_D_BAD_SIZE, max_payload_bytes + 1,
                   max_payload_bytes);
    vaccel_program_load l{};
    l.payload_bytes = UINT64_MAX;
    assert_refused(request_payload_size(VACCEL_OP_PROGRAM_LOAD, bytes_of(l)),
                   Errc::invalid_argument, VACCEL_D_BAD_SIZE, UINT64_MAX, max_payload_bytes);
    t.length = max_payload_bytes;
    assert_int_equal(*request_payload_size(VACCEL_OP_BUFFER_WRITE, bytes_of(t)),
                     max_payload_bytes);
}

// ---- DEVICE_TOSA -------------------------------------------------------------

// A response as the engine writes it: a descriptor with a few entries set.
vaccel_device_tosa device_tosa_answer()
{
    vaccel_device_tosa a{};
    a.device = 1;
    a.index = 0;
    a.descriptor.target = {1, 0, VACCEL_TOSA_PRO_FP, VACCEL_TOSA_LEVEL_8K, 0, 0};
    a.descriptor.descriptor_count = 3;
    a.descriptor.envelope = {1, 1, 0, VACCEL_TOSA_RUNTIME_NONE};
    a.descriptor.dtypes[7] = {VACCEL_TOSA_ROLE_ALL, 0};    // FP32
    a.descriptor.operators[15] = {1, 0, 0, 1u << 7};      // ADD on FP32
    a.descriptor.operators[28] = {1, 0, VACCEL_TOSA_OPC_ZERO_SHIFT, (1u << 3) | (1u << 7)};
    return a;
}

void device_tosa_response_round_trips_byte_for_byte(void**)
{
    const vaccel_device_tosa a = device_tosa_answer();
    assert_int_equal(args_size(VACCEL_OP_DEVICE_TOSA), 1144);  // layout.def
    assert_string_equal(op_name(VACCEL_OP_DEVICE_TOSA).data(), "DEVICE_TOSA");
    auto bytes = encode_response(VACCEL_OP_DEVICE_TOSA, 9, 0, bytes_of(a), {});
    assert_int_equal(bytes.size(), header_bytes + sizeof a);
    auto view = decode_response(bytes);
    assert_ok(view);
    assert_int_equal(view->args.size(), sizeof a);
    assert_memory_equal(view->args.data(), &a, sizeof a);
    // The descriptor is output only: a request may carry anything there.
    vaccel_device_tosa q = a;
    assert_ok(check_request(VACCEL_OP_DEVICE_TOSA, bytes_of(q)));
}

void device_tosa_hostile_requests_are_refused(void**)
{
    vaccel_device_tosa q{};
    q.device = 0;
    q.index = 0;
    assert_ok(decode_request(encode_request(VACCEL_OP_DEVICE_TOSA, 1, 0, bytes_of(q), {})));
    // Truncated: 8 bytes short of the struct.
    const auto whole = to_bytes(q);
    const std::span<const std::byte> truncated(whole.data(), whole.size() - 8);
    assert_refused(decode_request(encode_request(VACCEL_OP_DEVICE_TOSA, 1, 0, truncated, {})),
                   Errc::invalid_argument, VACCEL_D_BAD_SIZE, 1136, 1144);
    // A payload the op does not take.
    assert_refused(decode_request(encode_request(VACCEL_OP_DEVICE_TOSA, 1, 0, bytes_of(q),
                                                 pattern(8, 1))),
                   Errc::invalid_argument, VACCEL_D_BAD_SIZE, 8, 0);
    q.pad = 1;  // byte 44
    assert_refused(check_request(VACCEL_OP_DEVICE_TOSA, bytes_of(q)), Errc::invalid_argument,
                   VACCEL_D_RESERVED_NONZERO, 44, 0);
    q.pad = 0;
    q.reserved = 1ull << 56;  // the last byte of reserved: 48 + 7
    assert_refused(check_request(VACCEL_OP_DEVICE_TOSA, bytes_of(q)), Errc::invalid_argument,
                   VACCEL_D_RESERVED_NONZERO, 55, 0);
    q.reserved = 0;
    q.flags = 0x2;
    assert_refused(check_request(VACCEL_OP_DEVICE_TOSA, bytes_of(q)), Errc::invalid_argument,
                   VACCEL_D_UNKNOWN_FLAGS, 0x2, 0);
    q.flags = 0;
    q.status.detail = VACCEL_D_NO_TOSA_DESCRIPTOR;  // a status on entry
    assert_refused(check_request(VACCEL_OP_DEVICE_TOSA, bytes_of(q)), Errc::invalid_argument,
                   VACCEL_D_RESERVED_NONZERO, offsetof(vaccel_status, detail), 0);
    // A response whose reserved bytes are not zero is refused too.
    vaccel_device_tosa a = device_tosa_answer();
    a.reserved = 3;
    assert_refused(decode_response(encode_response(VACCEL_OP_DEVICE_TOSA, 1, 0, bytes_of(a), {})),
                   Errc::invalid_argument, VACCEL_D_RESERVED_NONZERO, 48, 0);
}

// ---- header fields ----------------------------------------------------------

void wrong_magic_is_refused(void**)
{
    auto bytes = encoded(VACCEL_OP_DEVICE_COUNT);
    vaccel_msg_header h = get_header(bytes);
    h.magic = 0x32434156;  // "VAC2"
    put_header(bytes, h);
    assert_refused(decode_request(bytes), Errc::invalid_argument, VACCEL_D_BAD_VALUE, 0,
                   0x32434156);
}

void reserved_header_flag_bits_are_refused(void**)
{
    // Bit 0 is VACCEL_MSG_RESPONSE, bit 1 VACCEL_MSG_PAYLOAD_FD, bit 2
    // VACCEL_MSG_PASSES_FD.
    for (std::uint16_t bit = 3; bit < 16; ++bit) {
        auto bytes = encoded(VACCEL_OP_DEVICE_COUNT);
        vaccel_msg_header h = get_header(bytes);
        h.flags = static_cast<std::uint16_t>(1u << bit);
        put_header(bytes, h);
        assert_refused(decode_request(bytes), Errc::invalid_argument, VACCEL_D_UNKNOWN_FLAGS,
                       1u << bit, 0);
    }
}

void response_bit_must_match_the_direction(void**)
{
    auto request = encoded(VACCEL_OP_DEVICE_COUNT);
    assert_refused(decode_response(request), Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                   offsetof(vaccel_msg_header, flags), 0);
    Sample s = sample_request(VACCEL_OP_DEVICE_COUNT);
    auto response = encode_response(VACCEL_OP_DEVICE_COUNT, 1, 0, s.args, {});
    assert_refused(decode_request(response), Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                   offsetof(vaccel_msg_header, flags), VACCEL_MSG_RESPONSE);
}

void unknown_opcode_is_refused(void**)
{
    for (std::uint32_t op : {std::uint32_t{VACCEL_OP_COUNT}, std::uint32_t{0x7f},
                             std::uint32_t{0xffff}}) {
        auto bytes = encode_request(op, 1, 0, {}, {});
        assert_refused(decode_request(bytes), Errc::invalid_argument, VACCEL_D_UNKNOWN_OPCODE,
                       op, 0);
        assert_int_equal(args_size(op), 0);
        assert_string_equal(op_name(op).data(), "UNKNOWN");
    }
    assert_string_equal(op_name(VACCEL_OP_SUBMIT).data(), "SUBMIT");
}

// ---- args rules ---------------------------------------------------------------

void nonzero_status_in_a_request_is_refused(void**)
{
    vaccel_device_count c{};
    c.status.arg0 = 1;
    assert_refused(decode_request(encode_request(VACCEL_OP_DEVICE_COUNT, 1, 0, bytes_of(c), {})),
                   Errc::invalid_argument, VACCEL_D_RESERVED_NONZERO,
                   offsetof(vaccel_status, arg0), 0);
}

void nonzero_pad_in_args_is_refused(void**)
{
    vaccel_buffer_transfer t{};
    t.length = 4;
    t.pad = 1;
    assert_refused(decode_request(encode_request(VACCEL_OP_BUFFER_WRITE, 1, 0, bytes_of(t),
                                                 pattern(4, 0))),
                   Errc::invalid_argument, VACCEL_D_RESERVED_NONZERO,
                   offsetof(vaccel_buffer_transfer, pad), 0);
}

void nonzero_reserved_words_are_refused_at_their_offset(void**)
{
    vaccel_get_version v{};
    v.reserved[1] = 0x100;  // second byte of the second reserved word
    assert_refused(check_request(VACCEL_OP_GET_VERSION, bytes_of(v)), Errc::invalid_argument,
                   VACCEL_D_RESERVED_NONZERO, offsetof(vaccel_get_version, reserved) + 9, 0);
    vaccel_program_load l{};
    l.target.pad = 1;
    assert_refused(check_request(VACCEL_OP_PROGRAM_LOAD, bytes_of(l)), Errc::invalid_argument,
                   VACCEL_D_RESERVED_NONZERO,
                   offsetof(vaccel_program_load, target) + offsetof(vaccel_tosa_target, pad), 0);
    vaccel_event_poll p{};
    p.pad = 1;
    assert_refused(check_request(VACCEL_OP_EVENT_POLL, bytes_of(p)), Errc::invalid_argument,
                   VACCEL_D_RESERVED_NONZERO, offsetof(vaccel_event_poll, pad), 0);
}

void unknown_flags_in_args_are_refused(void**)
{
    vaccel_context_create c{};
    c.flags = 1;
    assert_refused(check_request(VACCEL_OP_CONTEXT_CREATE, bytes_of(c)), Errc::invalid_argument,
                   VACCEL_D_UNKNOWN_FLAGS, 1, 0);
    vaccel_submit s{};
    s.flags = 0x80000000u;
    assert_refused(check_request(VACCEL_OP_SUBMIT, bytes_of(s)), Errc::invalid_argument,
                   VACCEL_D_UNKNOWN_FLAGS, 0x80000000u, 0);
    vaccel_event_wait w{};
    w.flags = VACCEL_WAIT_ALL | 0x6;
    assert_refused(check_request(VACCEL_OP_EVENT_WAIT, bytes_of(w)), Errc::invalid_argument,
                   VACCEL_D_UNKNOWN_FLAGS, 0x6, 0);
    w.flags = VACCEL_WAIT_ALL;
    assert_ok(check_request(VACCEL_OP_EVENT_WAIT, bytes_of(w)));
    assert_int_equal(op_known_flags(VACCEL_OP_EVENT_WAIT), VACCEL_WAIT_ALL);
}

void output_fields_are_not_checked_in_requests(void**)
{
    vaccel_device_query q{};
    q.info.reserved[0] = 5;  // the whole info is output
    q.info.flags = 3;
    assert_ok(check_request(VACCEL_OP_DEVICE_QUERY, bytes_of(q)));
    vaccel_submit s{};
    s.event = 0x1234;
    assert_ok(check_request(VACCEL_OP_SUBMIT, bytes_of(s)));
}

void user_pointer_on_the_wire_is_refused(void**)
{
    vaccel_buffer_transfer t{};
    t.length = 4;
    t.data = 0x7fff0000;
    assert_ok(check_request(VACCEL_OP_BUFFER_WRITE, bytes_of(t)));  // fine in an ioctl
    assert_refused(decode_request(encode_request(VACCEL_OP_BUFFER_WRITE, 1, 0, bytes_of(t),
                                                 pattern(4, 0))),
                   Errc::invalid_argument, VACCEL_D_RESERVED_NONZERO,
                   offsetof(vaccel_buffer_transfer, data), 0);

    Sample s = sample_request(VACCEL_OP_SUBMIT);
    auto submit = *args_as<vaccel_submit>(MessageView{{}, s.args, {}});
    submit.bindings = 0x1000;
    assert_refused(decode_request(encode_request(VACCEL_OP_SUBMIT, 1, 0, bytes_of(submit),
                                                 s.payload)),
                   Errc::invalid_argument, VACCEL_D_RESERVED_NONZERO,
                   offsetof(vaccel_submit, bindings), 0);

    Sample w = sample_request(VACCEL_OP_EVENT_WAIT);
    auto wait = *args_as<vaccel_event_wait>(MessageView{{}, w.args, {}});
    wait.events = 8;
    assert_refused(decode_request(encode_request(VACCEL_OP_EVENT_WAIT, 1, 0, bytes_of(wait),
                                                 w.payload)),
                   Errc::invalid_argument, VACCEL_D_RESERVED_NONZERO,
                   offsetof(vaccel_event_wait, events), 0);

    Sample l = sample_request(VACCEL_OP_PROGRAM_LOAD);
    auto load = *args_as<vaccel_program_load>(MessageView{{}, l.args, {}});
    load.payload = 1;
    assert_refused(decode_request(encode_request(VACCEL_OP_PROGRAM_LOAD, 1, 0, bytes_of(load),
                                                 l.payload)),
                   Errc::invalid_argument, VACCEL_D_RESERVED_NONZERO,
                   offsetof(vaccel_program_load, payload), 0);
}

void response_with_unknown_error_code_is_refused(void**)
{
    vaccel_device_count c{};
    c.status.error = VACCEL_E_COUNT;
    assert_refused(decode_response(encode_response(VACCEL_OP_DEVICE_COUNT, 1, 0, bytes_of(c), {})),
                   Errc::invalid_argument, VACCEL_D_BAD_VALUE, offsetof(vaccel_status, error),
                   VACCEL_E_COUNT);
    c.status.error = VACCEL_E_BUSY;
    c.status.detail = VACCEL_D_COUNT;
    assert_refused(decode_response(encode_response(VACCEL_OP_DEVICE_COUNT, 1, 0, bytes_of(c), {})),
                   Errc::invalid_argument, VACCEL_D_BAD_VALUE, offsetof(vaccel_status, detail),
                   VACCEL_D_COUNT);
    c.status.detail = VACCEL_D_IN_USE;
    c.status.scope = 1;  // a scope belongs to VACCEL_D_LIMIT only
    assert_refused(decode_response(encode_response(VACCEL_OP_DEVICE_COUNT, 1, 0, bytes_of(c), {})),
                   Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                   offsetof(vaccel_status, scope), 1);
    c.status.error = VACCEL_E_RESOURCE_LIMIT;
    c.status.detail = VACCEL_D_LIMIT;
    c.status.scope = VACCEL_SCOPE_COUNT;  // no such scope kind
    assert_refused(decode_response(encode_response(VACCEL_OP_DEVICE_COUNT, 1, 0, bytes_of(c), {})),
                   Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                   offsetof(vaccel_status, scope), VACCEL_SCOPE_COUNT);
}


// ---- ADMIN and memfd payloads ----------------------------------------------------

vaccel_admin admin_args(std::uint32_t command)
{
    vaccel_admin a{};
    a.command = command;
    return a;
}

std::vector<std::byte> text_bytes(std::string_view text)
{
    const auto* p = reinterpret_cast<const std::byte*>(text.data());
    return {p, p + text.size()};
}

void admin_request_carries_a_document_of_any_size(void**)
{
    const auto doc = text_bytes(R"({"selector":{"uid":1000},"limits":{"contexts":4}})");
    auto bytes = encode_request(VACCEL_OP_ADMIN, 9, 0, bytes_of(admin_args(VACCEL_ADMIN_LIMITS_SET)),
                                doc);
    auto view = decode_request(bytes);
    assert_ok(view);
    assert_int_equal(view->header.opcode, VACCEL_OP_ADMIN);
    assert_int_equal(view->payload.size(), doc.size());
    assert_string_equal(op_name(VACCEL_OP_ADMIN).data(), "ADMIN");
    assert_int_equal(args_size(VACCEL_OP_ADMIN), sizeof(vaccel_admin));
    // An empty document is a document too (the listing commands).
    assert_ok(decode_request(
        encode_request(VACCEL_OP_ADMIN, 1, 0, bytes_of(admin_args(VACCEL_ADMIN_DEVICES)), {})));
    assert_ok(decode_response(encode_response(VACCEL_OP_ADMIN, 1, 0,
                                              bytes_of(admin_args(VACCEL_ADMIN_DEVICES)), doc)));
}

void admin_unknown_command_is_left_to_the_daemon(void**)
{
    assert_ok(decode_request(
        encode_request(VACCEL_OP_ADMIN, 1, 0, bytes_of(admin_args(0x77)), {})));
}

void admin_nonzero_reserved_and_flags_are_refused(void**)
{
    vaccel_admin a = admin_args(VACCEL_ADMIN_SESSIONS);
    a.reserved = 1;
    assert_refused(decode_request(encode_request(VACCEL_OP_ADMIN, 1, 0, bytes_of(a), {})),
                   Errc::invalid_argument, VACCEL_D_RESERVED_NONZERO,
                   offsetof(vaccel_admin, reserved), 0);
    a = admin_args(VACCEL_ADMIN_SESSIONS);
    a.flags = 4;
    assert_refused(decode_request(encode_request(VACCEL_OP_ADMIN, 1, 0, bytes_of(a), {})),
                   Errc::invalid_argument, VACCEL_D_UNKNOWN_FLAGS, 4, 0);
}

void inline_payload_above_the_inline_maximum_is_refused(void**)
{
    vaccel_buffer_transfer t{};
    t.buffer = 1;
    t.length = VACCEL_MSG_INLINE_MAX + 1;
    std::vector<std::byte> data(t.length);
    assert_refused(decode_request(encode_request(VACCEL_OP_BUFFER_WRITE, 1, 0, bytes_of(t), data)),
                   Errc::invalid_argument, VACCEL_D_BAD_SIZE, VACCEL_MSG_INLINE_MAX + 1,
                   VACCEL_MSG_INLINE_MAX);
    t.length = VACCEL_MSG_INLINE_MAX;
    data.resize(t.length);
    assert_ok(decode_request(encode_request(VACCEL_OP_BUFFER_WRITE, 1, 0, bytes_of(t), data)));
}

void payload_fd_write_request_has_no_inline_bytes(void**)
{
    vaccel_buffer_transfer t{};
    t.buffer = 1;
    t.length = 1u << 20;
    std::vector<std::byte> bytes;
    append_request_fd(bytes, VACCEL_OP_BUFFER_WRITE, 3, 0, bytes_of(t), 1u << 20);
    assert_int_equal(bytes.size(), header_bytes + sizeof t);
    auto view = decode_request(bytes);
    assert_ok(view);
    assert_int_equal(view->header.flags, VACCEL_MSG_PAYLOAD_FD);
    assert_int_equal(view->header.payload_bytes, 1u << 20);
    assert_int_equal(view->payload.size(), 0);
    // Inline bytes after a PAYLOAD_FD struct make it oversized.
    bytes.push_back(std::byte{0});
    assert_refused(decode_request(bytes), Errc::invalid_argument, VACCEL_D_BAD_SIZE,
                   header_bytes + sizeof t + 1, header_bytes + sizeof t);
}

void payload_fd_for_a_payload_that_fits_inline_is_refused(void**)
{
    vaccel_buffer_transfer t{};
    t.buffer = 1;
    t.length = 4096;
    std::vector<std::byte> bytes;
    append_request_fd(bytes, VACCEL_OP_BUFFER_WRITE, 3, 0, bytes_of(t), 4096);
    assert_refused(decode_request(bytes), Errc::invalid_argument, VACCEL_D_BAD_SIZE, 4096,
                   VACCEL_MSG_INLINE_MAX);
}

void passes_fd_only_on_a_session_notify_answer(void**)
{
    const vaccel_session_notify args{};
    std::vector<std::byte> answer;
    append_response_passing_fd(answer, VACCEL_OP_SESSION_NOTIFY, 9, 0, bytes_of(args));
    auto view = decode_response(answer);
    assert_ok(view);
    assert_int_equal(view->header.flags, VACCEL_MSG_RESPONSE | VACCEL_MSG_PASSES_FD);
    assert_int_equal(view->payload.size(), 0);
    // The request carries none; nor does any other op's answer.
    auto request = encode_request(VACCEL_OP_SESSION_NOTIFY, 9, 0, bytes_of(args), {});
    vaccel_msg_header h = get_header(request);
    h.flags = VACCEL_MSG_PASSES_FD;
    put_header(request, h);
    assert_refused(decode_request(request), Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                   offsetof(vaccel_msg_header, flags), VACCEL_MSG_PASSES_FD);
    const vaccel_device_count count{};
    std::vector<std::byte> other;
    append_response_passing_fd(other, VACCEL_OP_DEVICE_COUNT, 9, 0, bytes_of(count));
    assert_refused(decode_response(other), Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                   offsetof(vaccel_msg_header, flags), VACCEL_MSG_RESPONSE | VACCEL_MSG_PASSES_FD);
}

void payload_fd_on_an_op_without_a_large_payload_is_refused(void**)
{
    for (std::uint32_t op : {std::uint32_t{VACCEL_OP_DEVICE_COUNT}, std::uint32_t{VACCEL_OP_SUBMIT},
                             std::uint32_t{VACCEL_OP_EVENT_WAIT}}) {
        Sample s = sample_request(op);
        std::vector<std::byte> bytes;
        append_request_fd(bytes, op, 1, 0, s.args, static_cast<std::uint32_t>(s.payload.size()));
        assert_refused(decode_request(bytes), Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                       offsetof(vaccel_msg_header, flags), VACCEL_MSG_PAYLOAD_FD);
    }
}

void payload_fd_read_request_names_the_length_the_file_receives(void**)
{
    vaccel_buffer_transfer t{};
    t.buffer = 1;
    t.length = 8u << 20;
    std::vector<std::byte> bytes;
    append_request_fd(bytes, VACCEL_OP_BUFFER_READ, 1, 0, bytes_of(t), 0);
    assert_ok(decode_request(bytes));
    // The request itself carries no payload: payload_bytes must stay 0.
    bytes.clear();
    append_request_fd(bytes, VACCEL_OP_BUFFER_READ, 1, 0, bytes_of(t), 8u << 20);
    assert_refused(decode_request(bytes), Errc::invalid_argument, VACCEL_D_BAD_SIZE, 8u << 20, 0);
    // Its response announces the length, in the requester's file.
    bytes.clear();
    append_response_fd(bytes, VACCEL_OP_BUFFER_READ, 1, 0, bytes_of(t), 8u << 20);
    auto view = decode_response(bytes);
    assert_ok(view);
    assert_int_equal(view->header.flags, VACCEL_MSG_RESPONSE | VACCEL_MSG_PAYLOAD_FD);
    assert_int_equal(view->header.payload_bytes, 8u << 20);
    // A large read without a file to receive it is malformed, and so is a
    // read beyond the wire maximum.
    t.length = VACCEL_MSG_INLINE_MAX + 1;
    assert_refused(decode_request(encode_request(VACCEL_OP_BUFFER_READ, 1, 0, bytes_of(t), {})),
                   Errc::invalid_argument, VACCEL_D_BAD_SIZE, VACCEL_MSG_INLINE_MAX + 1,
                   VACCEL_MSG_INLINE_MAX);
    t.length = std::uint64_t{1} << 40;
    bytes.clear();
    append_request_fd(bytes, VACCEL_OP_BUFFER_READ, 1, 0, bytes_of(t), 0);
    assert_refused(decode_request(bytes), Errc::invalid_argument, VACCEL_D_BAD_SIZE,
                   std::uint64_t{1} << 40, max_payload_bytes);
    // A small read goes inline, never by file.
    t.length = 64;
    bytes.clear();
    append_request_fd(bytes, VACCEL_OP_BUFFER_READ, 1, 0, bytes_of(t), 0);
    assert_refused(decode_request(bytes), Errc::invalid_argument, VACCEL_D_BAD_SIZE, 64,
                   VACCEL_MSG_INLINE_MAX);
}

void payload_fd_admin_document_above_the_wire_maximum_is_refused(void**)
{
    std::vector<std::byte> bytes;
    append_response_fd(bytes, VACCEL_OP_ADMIN, 1, 0, bytes_of(admin_args(VACCEL_ADMIN_SESSIONS)),
                       (1u << 20));
    assert_ok(decode_response(bytes));
    bytes.clear();
    append_response_fd(bytes, VACCEL_OP_ADMIN, 1, 0, bytes_of(admin_args(VACCEL_ADMIN_SESSIONS)),
                       static_cast<std::uint32_t>(max_payload_bytes + 1));
    assert_refused(decode_response(bytes), Errc::invalid_argument, VACCEL_D_BAD_SIZE,
                   max_payload_bytes + 1, max_payload_bytes);
}

// ---- robustness -----------------------------------------------------------------

// Random bytes, and valid messages with random bytes changed, never crash the
// decoder; whatever it accepts re-encodes to the very same bytes.
void random_bytes_never_crash_and_accepted_bytes_reencode_exactly(void**)
{
    std::mt19937_64 rng(0x5eed);
    std::vector<std::vector<std::byte>> seeds;
    for (std::uint32_t op = 0; op < VACCEL_OP_COUNT; ++op)
        seeds.push_back(encoded(op));
    int accepted = 0;
    for (int round = 0; round < 200000; ++round) {
        std::vector<std::byte> bytes;
        if (round % 4 == 0) {
            bytes.resize(rng() % 400);
            for (auto& b : bytes)
                b = static_cast<std::byte>(rng());
        } else {
            bytes = seeds[rng() % seeds.size()];
            const int flips = 1 + static_cast<int>(rng() % 3);
            for (int f = 0; f < flips; ++f)
                bytes[rng() % std::min<std::size_t>(bytes.size(), 160)] ^=
                    static_cast<std::byte>(1u << (rng() % 8));
            if (rng() % 8 == 0)
                bytes.resize(rng() % (bytes.size() + 8));
        }
        const bool as_response = round % 2 == 1;
        auto view = as_response ? decode_response(bytes) : decode_request(bytes);
        if (!view) {
            const Errc code = view.error().code;
            assert_true(code == Errc::invalid_argument || code == Errc::resource_limit);
            continue;
        }
        ++accepted;
        if (view->header.flags & VACCEL_MSG_PAYLOAD_FD)
            continue;  // re-encoding a file-borne payload is not this test's business
        auto again = as_response
                         ? encode_response(view->header.opcode, view->header.seq,
                                           view->header.session, view->args, view->payload)
                         : encode_request(view->header.opcode, view->header.seq,
                                          view->header.session, view->args, view->payload);
        assert_int_equal(again.size(), bytes.size());
        assert_memory_equal(again.data(), bytes.data(), bytes.size());
    }
    assert_true(accepted > 0);  // mutations of valid messages do get through
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_opcode_round_trips_as_request),
        cmocka_unit_test(every_opcode_round_trips_as_response),
        cmocka_unit_test(failed_read_response_carries_no_payload),
        cmocka_unit_test(append_writes_messages_back_to_back),
        cmocka_unit_test(args_as_copies_the_struct),
        cmocka_unit_test(truncated_message_is_refused_at_every_length),
        cmocka_unit_test(message_one_byte_too_long_is_refused),
        cmocka_unit_test(wrong_args_size_is_refused),
        cmocka_unit_test(write_payload_shorter_than_length_is_refused),
        cmocka_unit_test(submit_payload_not_matching_binding_count_is_refused),
        cmocka_unit_test(payload_on_an_op_without_one_is_refused),
        cmocka_unit_test(submit_binding_count_outside_bounds_is_refused),
        cmocka_unit_test(wait_count_outside_bounds_is_refused),
        cmocka_unit_test(payload_above_the_wire_maximum_is_refused),
        cmocka_unit_test(wrong_magic_is_refused),
        cmocka_unit_test(reserved_header_flag_bits_are_refused),
        cmocka_unit_test(passes_fd_only_on_a_session_notify_answer),
        cmocka_unit_test(response_bit_must_match_the_direction),
        cmocka_unit_test(unknown_opcode_is_refused),
        cmocka_unit_test(nonzero_status_in_a_request_is_refused),
        cmocka_unit_test(nonzero_pad_in_args_is_refused),
        cmocka_unit_test(nonzero_reserved_words_are_refused_at_their_offset),
        cmocka_unit_test(unknown_flags_in_args_are_refused),
        cmocka_unit_test(output_fields_are_not_checked_in_requests),
        cmocka_unit_test(user_pointer_on_the_wire_is_refused),
        cmocka_unit_test(response_with_unknown_error_code_is_refused),
        cmocka_unit_test(admin_request_carries_a_document_of_any_size),
        cmocka_unit_test(admin_unknown_command_is_left_to_the_daemon),
        cmocka_unit_test(admin_nonzero_reserved_and_flags_are_refused),
        cmocka_unit_test(inline_payload_above_the_inline_maximum_is_refused),
        cmocka_unit_test(payload_fd_write_request_has_no_inline_bytes),
        cmocka_unit_test(payload_fd_for_a_payload_that_fits_inline_is_refused),
        cmocka_unit_test(payload_fd_on_an_op_without_a_large_payload_is_refused),
        cmocka_unit_test(payload_fd_read_request_names_the_length_the_file_receives),
        cmocka_unit_test(payload_fd_admin_document_above_the_wire_maximum_is_refused),
        cmocka_unit_test(random_bytes_never_crash_and_accepted_bytes_reencode_exactly),
        cmocka_unit_test(device_tosa_response_round_trips_byte_for_byte),
        cmocka_unit_test(device_tosa_hostile_requests_are_refused),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
