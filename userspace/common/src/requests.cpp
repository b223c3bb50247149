// requests.cpp - the per-opcode table of struct layouts and payload rules.
//
// Decides, from uapi/vaccel.h, which bytes of each op's struct are pad or
// reserved, where its flags field and its user pointer are, and what payload
// a message of that op carries. Every offset comes from offsetof, so the
// table follows the header (tests/abi pins the header itself).
#include "vaccel/common/requests.hpp"

#include <array>
#include <cstring>

#include "vaccel/common/validation.hpp"

namespace vaccel {
namespace {

struct Field {
    std::uint16_t offset = 0;
    std::uint16_t bytes = 0;
};

inline constexpr std::uint16_t none = UINT16_MAX;

// One op's layout rules. At most two pad/reserved ranges per struct.
struct OpRule {
    std::string_view name;
    std::uint16_t size = 0;
    std::array<Field, 2> reserved{};
    std::uint16_t flags = none;    // offset of the __u32 flags field
    std::uint32_t known_flags = 0; // flags the op defines
    std::uint16_t pointer = none;  // offset of the __u64 user pointer
};

#define VACCEL_AT(type, field) static_cast<std::uint16_t>(offsetof(type, field))
#define VACCEL_FIELD(type, field) \
    Field { VACCEL_AT(type, field), static_cast<std::uint16_t>(sizeof(type::field)) }
#define VACCEL_SIZE(type) static_cast<std::uint16_t>(sizeof(type))

constexpr OpRule release_rule(std::string_view name)
{
    return OpRule{name, VACCEL_SIZE(vaccel_handle_release), {}, none, 0, none};
}

constexpr OpRule transfer_rule(std::string_view name)
{
    return OpRule{name,
                  VACCEL_SIZE(vaccel_buffer_transfer),
                  {VACCEL_FIELD(vaccel_buffer_transfer, pad)},
                  VACCEL_AT(vaccel_buffer_transfer, flags),
                  0,
                  VACCEL_AT(vaccel_buffer_transfer, data)};
}

constexpr OpRule gate_value_rule(std::string_view name)
{
    return OpRule{name,
                  VACCEL_SIZE(vaccel_gate_value),
                  {VACCEL_FIELD(vaccel_gate_value, pad), VACCEL_FIELD(vaccel_gate_value, reserved)},
                  VACCEL_AT(vaccel_gate_value, flags),
                  0,
                  none};
}

// Index = enum vaccel_op.
const std::array<OpRule, VACCEL_OP_COUNT> rules = {
    OpRule{"GET_VERSION", VACCEL_SIZE(vaccel_get_version),
           {VACCEL_FIELD(vaccel_get_version, reserved)}, none, 0, none},
    OpRule{"DEVICE_COUNT", VACCEL_SIZE(vaccel_device_count),
           {VACCEL_FIELD(vaccel_device_count, pad)}, none, 0, none},
    OpRule{"DEVICE_QUERY", VACCEL_SIZE(vaccel_device_query),
           {VACCEL_FIELD(vaccel_device_query, pad)}, none, 0, none},
    OpRule{"CONTEXT_CREATE", VACCEL_SIZE(vaccel_context_create), {},
           VACCEL_AT(vaccel_context_create, flags), 0, none},
    release_rule("CONTEXT_DESTROY"),
    OpRule{"BUFFER_ALLOC", VACCEL_SIZE(vaccel_buffer_alloc),
           {VACCEL_FIELD(vaccel_buffer_alloc, pad)}, VACCEL_AT(vaccel_buffer_alloc, flags), 0,
           none},
    release_rule("BUFFER_FREE"),
    transfer_rule("BUFFER_WRITE"),
    transfer_rule("BUFFER_READ"),
    OpRule{"PROGRAM_LOAD", VACCEL_SIZE(vaccel_program_load),
           {Field{static_cast<std::uint16_t>(offsetof(vaccel_program_load, target) +
                                             offsetof(vaccel_tosa_target, pad)),
                  static_cast<std::uint16_t>(sizeof(vaccel_tosa_target::pad))}},
           VACCEL_AT(vaccel_program_load, flags), 0, VACCEL_AT(vaccel_program_load, payload)},
    release_rule("PROGRAM_UNLOAD"),
    OpRule{"PROGRAM_SLOT", VACCEL_SIZE(vaccel_program_slot), {}, none, 0, none},
    OpRule{"QUEUE_CREATE", VACCEL_SIZE(vaccel_queue_create),
           {VACCEL_FIELD(vaccel_queue_create, pad)}, VACCEL_AT(vaccel_queue_create, flags), 0,
           none},
    release_rule("QUEUE_DESTROY"),
    OpRule{"SUBMIT", VACCEL_SIZE(vaccel_submit), {}, VACCEL_AT(vaccel_submit, flags), 0,
           VACCEL_AT(vaccel_submit, bindings)},
    OpRule{"EVENT_POLL", VACCEL_SIZE(vaccel_event_poll), {VACCEL_FIELD(vaccel_event_poll, pad)},
           none, 0, none},
    OpRule{"EVENT_WAIT", VACCEL_SIZE(vaccel_event_wait), {}, VACCEL_AT(vaccel_event_wait, flags),
           VACCEL_WAIT_ALL, VACCEL_AT(vaccel_event_wait, events)},
    release_rule("EVENT_DESTROY"),
    OpRule{"CONTEXT_LIMITS", VACCEL_SIZE(vaccel_context_limits),
           {VACCEL_FIELD(vaccel_context_limits, pad)}, none, 0, none},
    OpRule{"GATE_CREATE", VACCEL_SIZE(vaccel_gate_create),
           {VACCEL_FIELD(vaccel_gate_create, pad), VACCEL_FIELD(vaccel_gate_create, reserved)},
           VACCEL_AT(vaccel_gate_create, flags), 0, none},
    gate_value_rule("GATE_RAISE"),
    gate_value_rule("GATE_VALUE"),
    release_rule("GATE_DESTROY"),
    OpRule{"SUBMIT_AFTER", VACCEL_SIZE(vaccel_submit_after),
           {VACCEL_FIELD(vaccel_submit_after, reserved)}, VACCEL_AT(vaccel_submit_after, flags), 0,
           VACCEL_AT(vaccel_submit_after, bindings)},
    // pad and reserved[] are adjacent: one range. dims.flags is checked
    // with the dims (validate::launch_dims).
    OpRule{"LAUNCH", VACCEL_SIZE(vaccel_launch),
           {Field{VACCEL_AT(vaccel_launch, pad),
                  static_cast<std::uint16_t>(sizeof(vaccel_launch::pad) +
                                             sizeof(vaccel_launch::reserved))}},
           VACCEL_AT(vaccel_launch, flags), 0, VACCEL_AT(vaccel_launch, payload)},
    // pad and reserved are adjacent: one range. The descriptor is output
    // only and not looked at in a request.
    OpRule{"DEVICE_TOSA", VACCEL_SIZE(vaccel_device_tosa),
           {Field{VACCEL_AT(vaccel_device_tosa, pad),
                  static_cast<std::uint16_t>(sizeof(vaccel_device_tosa::pad) +
                                             sizeof(vaccel_device_tosa::reserved))}},
           VACCEL_AT(vaccel_device_tosa, flags), 0, none},
    // pad and reserved[] are not adjacent (failure lies between): two ranges.
    OpRule{"RUN", VACCEL_SIZE(vaccel_run),
           {VACCEL_FIELD(vaccel_run, pad), VACCEL_FIELD(vaccel_run, reserved)},
           VACCEL_AT(vaccel_run, flags), 0, VACCEL_AT(vaccel_run, bindings)},
    OpRule{"BUFFER_MAP", VACCEL_SIZE(vaccel_buffer_map),
           {VACCEL_FIELD(vaccel_buffer_map, pad), VACCEL_FIELD(vaccel_buffer_map, reserved)},
           VACCEL_AT(vaccel_buffer_map, flags), 0, none},
};

// VACCEL_OP_ADMIN sits apart from the ioctl ops (a wire opcode only). Its
// `command` is not checked here: an unknown command is the admin service's
// refusal (a response), not a malformed message.
const OpRule admin_rule{"ADMIN", VACCEL_SIZE(vaccel_admin), {VACCEL_FIELD(vaccel_admin, reserved)},
                        VACCEL_AT(vaccel_admin, flags), 0, none};

// VACCEL_OP_SESSION_NOTIFY: a wire opcode only, like ADMIN.
const OpRule notify_rule{"SESSION_NOTIFY", VACCEL_SIZE(vaccel_session_notify),
                         {VACCEL_FIELD(vaccel_session_notify, pad),
                          VACCEL_FIELD(vaccel_session_notify, reserved)},
                         VACCEL_AT(vaccel_session_notify, flags), 0, none};

#undef VACCEL_AT
#undef VACCEL_FIELD
#undef VACCEL_SIZE

const OpRule* rule_of(std::uint32_t opcode)
{
    if (opcode == VACCEL_OP_ADMIN)
        return &admin_rule;
    if (opcode == VACCEL_OP_SESSION_NOTIFY)
        return &notify_rule;
    return opcode < rules.size() ? &rules[opcode] : nullptr;
}

template <class T>
T load(std::span<const std::byte> bytes, std::size_t offset)
{
    T value;
    std::memcpy(&value, bytes.data() + offset, sizeof(T));
    return value;
}

// Known opcode and exact size; returns the op's rule.
Result<const OpRule*> known_and_sized(std::uint32_t opcode, std::span<const std::byte> args)
{
    const OpRule* rule = rule_of(opcode);
    if (rule == nullptr)
        return fail(Errc::invalid_argument, VACCEL_D_UNKNOWN_OPCODE, opcode);
    if (args.size() != rule->size)
        return fail(Errc::invalid_argument, VACCEL_D_BAD_SIZE, args.size(), rule->size);
    return rule;
}

Status reserved_and_flags(const OpRule& rule, std::span<const std::byte> args)
{
    for (const Field& field : rule.reserved) {
        if (field.bytes == 0)
            continue;
        if (auto zeroed = validate::zero(args, field.offset, field.bytes); !zeroed)
            return zeroed;
    }
    if (rule.flags != none) {
        const auto flags = load<std::uint32_t>(args, rule.flags);
        if (const std::uint32_t unknown = flags & ~rule.known_flags; unknown != 0)
            return fail(Errc::invalid_argument, VACCEL_D_UNKNOWN_FLAGS, unknown);
    }
    return {};
}

Result<std::size_t> capped(std::uint64_t bytes)
{
    if (bytes > max_payload_bytes)
        return fail(Errc::invalid_argument, VACCEL_D_BAD_SIZE, bytes, max_payload_bytes);
    return static_cast<std::size_t>(bytes);
}

}  // namespace

std::size_t args_size(std::uint32_t opcode)
{
    const OpRule* rule = rule_of(opcode);
    return rule == nullptr ? 0 : rule->size;
}

std::string_view op_name(std::uint32_t opcode)
{
    const OpRule* rule = rule_of(opcode);
    return rule == nullptr ? std::string_view{"UNKNOWN"} : rule->name;
}

bool payload_is_document(std::uint32_t opcode)
{
    return opcode == VACCEL_OP_ADMIN;
}

bool payload_may_use_fd(std::uint32_t opcode, bool response)
{
    switch (opcode) {
    case VACCEL_OP_BUFFER_WRITE:
    case VACCEL_OP_PROGRAM_LOAD:
        return !response;
    case VACCEL_OP_BUFFER_READ:
    case VACCEL_OP_ADMIN:
        return true;
    default:
        return false;
    }
}

std::uint32_t op_known_flags(std::uint32_t opcode)
{
    const OpRule* rule = rule_of(opcode);
    return rule == nullptr ? 0 : rule->known_flags;
}

Status check_request(std::uint32_t opcode, std::span<const std::byte> args)
{
    auto rule = known_and_sized(opcode, args);
    if (!rule)
        return fail(std::move(rule.error()));
    if (auto status = validate::zero(args, 0, sizeof(vaccel_status)); !status)
        return status;
    return reserved_and_flags(**rule, args);
}

Status check_request_wire(std::uint32_t opcode, std::span<const std::byte> args)
{
    if (auto checked = check_request(opcode, args); !checked)
        return checked;
    const OpRule& rule = *rule_of(opcode);
    if (rule.pointer != none && load<std::uint64_t>(args, rule.pointer) != 0)
        return fail(Error::of(Errc::invalid_argument, VACCEL_D_RESERVED_NONZERO, rule.pointer)
                        .with_note("user pointers must be zero on the wire"));
    return {};
}

Status check_response(std::uint32_t opcode, std::span<const std::byte> args)
{
    auto rule = known_and_sized(opcode, args);
    if (!rule)
        return fail(std::move(rule.error()));
    const auto status = load<vaccel_status>(args, 0);
    if (status.error >= VACCEL_E_COUNT)
        return fail(Errc::invalid_argument, VACCEL_D_BAD_VALUE, offsetof(vaccel_status, error),
                    status.error);
    if (status.detail >= VACCEL_D_COUNT)
        return fail(Errc::invalid_argument, VACCEL_D_BAD_VALUE, offsetof(vaccel_status, detail),
                    status.detail);
    if (status.limit >= VACCEL_LIMIT_COUNT)
        return fail(Errc::invalid_argument, VACCEL_D_BAD_VALUE, offsetof(vaccel_status, limit),
                    status.limit);
    if (VACCEL_SCOPE_KIND(status.scope) >= VACCEL_SCOPE_COUNT ||
        (status.detail != VACCEL_D_LIMIT && status.scope != 0))
        return fail(Errc::invalid_argument, VACCEL_D_BAD_VALUE, offsetof(vaccel_status, scope),
                    status.scope);
    return reserved_and_flags(**rule, args);
}

Result<std::size_t> request_payload_size(std::uint32_t opcode, std::span<const std::byte> args)
{
    auto rule = known_and_sized(opcode, args);
    if (!rule)
        return fail(std::move(rule.error()));
    switch (opcode) {
    case VACCEL_OP_BUFFER_WRITE:
        return capped(load<std::uint64_t>(args, offsetof(vaccel_buffer_transfer, length)));
    case VACCEL_OP_PROGRAM_LOAD:
        return capped(load<std::uint64_t>(args, offsetof(vaccel_program_load, payload_bytes)));
    case VACCEL_OP_SUBMIT:
    case VACCEL_OP_SUBMIT_AFTER:
    case VACCEL_OP_RUN: {
        // binding_count sits at the same offset in all three structs.
        static_assert(offsetof(vaccel_submit, binding_count) ==
                      offsetof(vaccel_submit_after, binding_count));
        static_assert(offsetof(vaccel_submit, binding_count) ==
                      offsetof(vaccel_run, binding_count));
        const auto count = load<std::uint32_t>(args, offsetof(vaccel_submit, binding_count));
        if (count == 0)
            return fail(Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                        offsetof(vaccel_submit, binding_count), 0);
        if (count > VACCEL_MAX_BINDINGS)
            return fail(Error::limit_hit(VACCEL_LIMIT_BINDINGS, VACCEL_MAX_BINDINGS, count));
        return std::size_t{count} * sizeof(vaccel_binding);
    }
    case VACCEL_OP_LAUNCH: {
        const auto count = load<std::uint32_t>(args, offsetof(vaccel_launch, binding_count));
        const auto argv = load<std::uint32_t>(args, offsetof(vaccel_launch, argv_bytes));
        if (count > VACCEL_MAX_BINDINGS)
            return fail(Error::limit_hit(VACCEL_LIMIT_BINDINGS, VACCEL_MAX_BINDINGS, count));
        if (argv > VACCEL_MAX_KERNEL_ARGS_BYTES)
            return fail(Error::limit_hit(VACCEL_LIMIT_KERNEL_ARGS_BYTES,
                                         VACCEL_MAX_KERNEL_ARGS_BYTES, argv));
        return std::size_t{count} * sizeof(vaccel_binding) + argv;
    }
    case VACCEL_OP_EVENT_WAIT: {
        const auto count = load<std::uint32_t>(args, offsetof(vaccel_event_wait, count));
        if (count == 0 || count > VACCEL_MAX_WAIT_EVENTS)
            return fail(Errc::invalid_argument, VACCEL_D_BAD_VALUE,
                        offsetof(vaccel_event_wait, count), count);
        return std::size_t{count} * sizeof(std::uint64_t);
    }
    default:
        // ADMIN included: its document has no size fixed by the struct
        // (payload_is_document()).
        return std::size_t{0};
    }
}

Result<std::size_t> response_payload_size(std::uint32_t opcode, std::span<const std::byte> args)
{
    auto rule = known_and_sized(opcode, args);
    if (!rule)
        return fail(std::move(rule.error()));
    if (opcode != VACCEL_OP_BUFFER_READ)
        return std::size_t{0};
    if (load<std::uint32_t>(args, offsetof(vaccel_status, error)) != VACCEL_OK)
        return std::size_t{0};
    return capped(load<std::uint64_t>(args, offsetof(vaccel_buffer_transfer, length)));
}

}  // namespace vaccel
