// error.cpp - names, meanings, errno mapping and sentences of contract errors.
//
// Decides the text a person reads for every (error, detail) pair: what was
// refused, why, and what to do, built only from the values that travel in
// struct vaccel_status (so libvaccel can rebuild it on the far side).
#include "vaccel/common/error.hpp"

#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include "tosa_names.hpp"
#include "vaccel/common/handles.hpp"

namespace vaccel {

std::string_view error_name(Errc code)
{
    switch (code) {
    case Errc::ok: return "Ok";
    case Errc::unsupported: return "Unsupported";
    case Errc::incompatible: return "Incompatible";
    case Errc::invalid_argument: return "InvalidArgument";
    case Errc::out_of_bounds: return "OutOfBounds";
    case Errc::out_of_memory: return "OutOfMemory";
    case Errc::resource_limit: return "ResourceLimit";
    case Errc::device_lost: return "DeviceLost";
    case Errc::busy: return "Busy";
    case Errc::permission_denied: return "PermissionDenied";
    case Errc::deadline_expired: return "DeadlineExpired";
    case Errc::external: return "External";
    case Errc::cancelled: return "Cancelled";
    }
    return "UnknownError";
}

std::string_view error_meaning(Errc code)
{
    switch (code) {
    case Errc::ok: return "the call succeeded";
    case Errc::unsupported: return "the device does not offer this at all";
    case Errc::incompatible: return "the device offers this, but not for these arguments";
    case Errc::invalid_argument: return "an argument is malformed or names nothing";
    case Errc::out_of_bounds: return "a range lies outside the object it addresses";
    case Errc::out_of_memory: return "the device or host ran out of memory";
    case Errc::resource_limit: return "a configured limit would be exceeded";
    case Errc::device_lost: return "the device stopped working; its objects are gone";
    case Errc::busy: return "the object is in use; retry after the work using it is done";
    case Errc::permission_denied: return "the object does not allow this use";
    case Errc::deadline_expired: return "the deadline passed before the work was done";
    case Errc::external: return "a lower layer (driver, runtime, system) reported an error";
    case Errc::cancelled: return "the work was cancelled before it started and never ran";
    }
    return "an error this version does not know";
}

int error_errno(Errc code)
{
    switch (code) {
    case Errc::ok: return 0;
    case Errc::unsupported: return -EOPNOTSUPP;
    case Errc::incompatible: return -ENOEXEC;
    case Errc::invalid_argument: return -EINVAL;
    case Errc::out_of_bounds: return -ERANGE;
    case Errc::out_of_memory: return -ENOMEM;
    case Errc::resource_limit: return -EDQUOT;
    case Errc::device_lost: return -ENODEV;
    case Errc::busy: return -EBUSY;
    case Errc::permission_denied: return -EACCES;
    case Errc::deadline_expired: return -ETIME;
    case Errc::external: return -EIO;
    case Errc::cancelled: return -ECANCELED;
    }
    return -EIO;
}

std::string_view limit_name(std::uint32_t kind)
{
    switch (kind) {
    case VACCEL_LIMIT_NONE: return "none";
    case VACCEL_LIMIT_CONTEXTS: return "contexts";
    case VACCEL_LIMIT_MEMORY_BYTES: return "memory bytes";
    case VACCEL_LIMIT_BUFFERS: return "buffers";
    case VACCEL_LIMIT_PROGRAMS: return "programs";
    case VACCEL_LIMIT_QUEUES: return "queues";
    case VACCEL_LIMIT_EVENTS: return "events";
    case VACCEL_LIMIT_BINDINGS: return "bindings";
    case VACCEL_LIMIT_BUFFER_BYTES: return "buffer bytes";
    case VACCEL_LIMIT_ARTIFACT_BYTES: return "artifact bytes";
    case VACCEL_LIMIT_HANDLES: return "handles";
    case VACCEL_LIMIT_GATES: return "gates";
    case VACCEL_LIMIT_KERNEL_ARGS: return "kernel arguments";
    case VACCEL_LIMIT_KERNEL_ARGS_BYTES: return "kernel argument bytes";
    case VACCEL_LIMIT_SESSIONS: return "sessions";
    }
    return "unknown limit";
}

vaccel_status Error::to_status() const
{
    vaccel_status status{};
    status.error = static_cast<std::uint32_t>(code);
    status.detail = detail;
    status.limit = limit;
    status.scope = scope;
    status.arg0 = arg0;
    status.arg1 = arg1;
    return status;
}

// A status from the far side. An error number this version does not know
// becomes External with domain 0 and the raw number as its code, so it is
// never mistaken for success or for another contract error.
Error Error::from_status(const vaccel_status& status)
{
    if (status.error >= VACCEL_E_COUNT)
        return Error{Errc::external, VACCEL_D_NONE, VACCEL_LIMIT_NONE, 0, 0, status.error, {}};
    return Error{static_cast<Errc>(status.error), status.detail, status.limit, status.scope,
                 status.arg0, status.arg1, {}};
}

namespace {

std::string access_text(std::uint64_t access)
{
    switch (access) {
    case 0: return "none";
    case VACCEL_ACCESS_READ: return "read";
    case VACCEL_ACCESS_WRITE: return "write";
    case VACCEL_ACCESS_RW: return "read+write";
    }
    return fmt::format("0x{:x}", access);
}

std::string usage_text(std::uint64_t usage)
{
    if (usage == 0)
        return "none";
    std::string out;
    auto add = [&](std::uint64_t bit, std::string_view name) {
        if ((usage & bit) == 0)
            return;
        if (!out.empty())
            out += '+';
        out += name;
        usage &= ~bit;
    };
    add(VACCEL_USAGE_STORAGE, "storage");
    add(VACCEL_USAGE_TRANSFER_SRC, "transfer-src");
    add(VACCEL_USAGE_TRANSFER_DST, "transfer-dst");
    if (usage != 0)
        out += fmt::format("{}0x{:x}", out.empty() ? "" : "+", usage);
    return out;
}

std::string op_text(std::uint64_t op)
{
    std::string_view name = tosa_names::op(op);
    return name.empty() ? fmt::format("#{}", op) : std::string(name);
}

std::string dtype_text(std::uint64_t dtype)
{
    std::string_view name = tosa_names::dtype(dtype);
    return name.empty() ? fmt::format("#{}", dtype) : std::string(name);
}

std::string_view format_text(std::uint64_t format)
{
    switch (format) {
    case VACCEL_FORMAT_TOSA: return "TOSA";
    case VACCEL_FORMAT_CUDA_PTX: return "CUDA PTX";
    }
    return "unknown";
}

std::string_view tosa_reason_text(std::uint64_t reason)
{
    switch (reason) {
    case VACCEL_TOSA_NOT_FLATBUFFER: return "the bytes are not a valid TOSA flatbuffer";
    case VACCEL_TOSA_NO_IDENTIFIER: return "the file identifier is not \"TOSA\"";
    case VACCEL_TOSA_UNKNOWN_TENSOR: return "an operator names a tensor that does not exist";
    case VACCEL_TOSA_BAD_SHAPE: return "a shape is negative, dynamic or mismatched";
    case VACCEL_TOSA_BAD_DATA: return "constant data is shorter than its shape";
    case VACCEL_TOSA_BAD_ATTRIBUTE: return "an attribute is missing or inconsistent";
    case VACCEL_TOSA_REGIONS: return "it has more regions or blocks than admitted";
    case VACCEL_TOSA_CYCLE: return "its operators form a cycle, so no execution order exists";
    case VACCEL_TOSA_EXTERNAL_DATA: return "it keeps tensor data outside the file";
    case VACCEL_TOSA_ARITY: return "an operator has the wrong number of operands";
    case VACCEL_TOSA_CONTROL_FLOW:
        return "it uses control flow (COND_IF, WHILE_LOOP), which this device does not admit";
    case VACCEL_TOSA_VARIABLES: return "it uses variables, which this device does not admit";
    }
    return "the reason is not known to this version";
}

// What to do about a limit, by kind.
std::string_view limit_remedy(std::uint32_t kind)
{
    switch (kind) {
    case VACCEL_LIMIT_CONTEXTS: return "destroy a context or raise the limit";
    case VACCEL_LIMIT_MEMORY_BYTES: return "free a buffer or raise the limit";
    case VACCEL_LIMIT_BUFFERS: return "free a buffer or raise the limit";
    case VACCEL_LIMIT_PROGRAMS: return "unload a program or raise the limit";
    case VACCEL_LIMIT_QUEUES: return "destroy a queue or raise the limit";
    case VACCEL_LIMIT_EVENTS: return "destroy finished events or raise the limit";
    case VACCEL_LIMIT_HANDLES: return "release objects this session no longer needs";
    case VACCEL_LIMIT_BINDINGS: return "bind fewer buffers per submission";
    case VACCEL_LIMIT_BUFFER_BYTES: return "allocate a smaller buffer";
    case VACCEL_LIMIT_ARTIFACT_BYTES: return "load a smaller program";
    case VACCEL_LIMIT_GATES: return "destroy a gate or raise the limit";
    case VACCEL_LIMIT_KERNEL_ARGS: return "pass fewer kernel arguments";
    case VACCEL_LIMIT_KERNEL_ARGS_BYTES:
        return "pass fewer kernel arguments (a record is 5 or 9 bytes)";
    }
    return "lower the use or raise the limit";
}

// Limits on a single request compare the amount asked; the others the use.
bool limit_is_per_request(std::uint32_t kind)
{
    return kind == VACCEL_LIMIT_BINDINGS || kind == VACCEL_LIMIT_BUFFER_BYTES ||
           kind == VACCEL_LIMIT_ARTIFACT_BYTES || kind == VACCEL_LIMIT_KERNEL_ARGS_BYTES;
}

std::string handle_text(std::uint64_t handle)
{
    auto kind = handle_bits::kind_of(handle);
    if (kind >= static_cast<std::uint8_t>(HandleKind::context) &&
        kind <= static_cast<std::uint8_t>(HandleKind::gate))
        return fmt::format("0x{:x} (a {})", handle,
                           handle_kind_name(static_cast<HandleKind>(kind)));
    return fmt::format("0x{:x}", handle);
}

bool is_tenant_scope(std::uint32_t scope)
{
    const std::uint32_t kind = VACCEL_SCOPE_KIND(scope);
    return kind >= VACCEL_SCOPE_UID && kind <= VACCEL_SCOPE_CONTAINER;
}

// Who the tenant is: the daemon's note when it travelled (in process, in
// the daemon's own logs), else what the scope kind tells this process.
std::string tenant_name(const Error& e)
{
    if (!e.note.empty())
        return e.note;
    switch (VACCEL_SCOPE_KIND(e.scope)) {
    case VACCEL_SCOPE_UID: return fmt::format("uid {}", ::getuid());
    case VACCEL_SCOPE_GID: return fmt::format("gid {}", ::getgid());
    case VACCEL_SCOPE_CGROUP: return "this process's cgroup";
    case VACCEL_SCOPE_CONTAINER: return "this container";
    }
    return "this tenant";
}

std::string_view tenant_remedy(std::uint32_t kind)
{
    switch (kind) {
    case VACCEL_LIMIT_CONTEXTS: return "destroy contexts there or raise the rule";
    case VACCEL_LIMIT_MEMORY_BYTES:
    case VACCEL_LIMIT_BUFFERS: return "free buffers there or raise the rule";
    case VACCEL_LIMIT_PROGRAMS: return "unload programs there or raise the rule";
    case VACCEL_LIMIT_QUEUES: return "destroy queues there or raise the rule";
    case VACCEL_LIMIT_EVENTS: return "wait for or destroy events there or raise the rule";
    case VACCEL_LIMIT_GATES: return "destroy gates there or raise the rule";
    case VACCEL_LIMIT_SESSIONS: return "close a session or raise the rule";
    }
    return "lower the use or raise the rule";
}

// "uid 1000 holds 60.0 MiB of its 64.0 MiB memory on device 0 across 3
// sessions; free buffers there or raise the rule".
std::string tenant_limit_sentence(const Error& e)
{
    const std::string who = tenant_name(e);
    const std::uint32_t sessions = VACCEL_SCOPE_SESSIONS(e.scope);
    const std::string across =
        fmt::format("across {} session{}", sessions, sessions == 1 ? "" : "s");
    if (e.limit == VACCEL_LIMIT_SESSIONS)
        return fmt::format("{} has {} of its {} sessions open; {}", who, e.arg1, e.arg0,
                           tenant_remedy(e.limit));
    const std::string where = fmt::format("on device {}", VACCEL_SCOPE_DEVICE_INDEX(e.scope));
    if (e.limit == VACCEL_LIMIT_MEMORY_BYTES)
        return fmt::format("{} holds {} of its {} of memory {} {}; {}", who, bytes_text(e.arg1),
                           bytes_text(e.arg0), where, across, tenant_remedy(e.limit));
    return fmt::format("{} holds {} of its {} {} {} {}; {}", who, e.arg1, e.arg0,
                       limit_name(e.limit), where, across, tenant_remedy(e.limit));
}

// The sentence after "Name: ", without the note.
std::string detail_sentence(const Error& e)
{
    const auto a0 = e.arg0;
    const auto a1 = e.arg1;
    switch (e.detail) {
    case VACCEL_D_NONE:
        if (e.code == Errc::external)
            return fmt::format("a lower layer (domain {}) reported error code {}; see its "
                               "documentation for that code",
                               a0, a1);
        return std::string(error_meaning(e.code));
    case VACCEL_D_UNKNOWN_HANDLE:
        return fmt::format("handle 0x{:x} is unknown in this session (never created here, "
                           "already released, or from another session); pass a handle this "
                           "session created and still holds",
                           a0);
    case VACCEL_D_WRONG_HANDLE_KIND:
        return fmt::format("handle {} names another kind of object than this call takes; pass "
                           "a handle of the kind the call expects",
                           handle_text(a0));
    case VACCEL_D_RESERVED_NONZERO:
        return fmt::format("byte {} of the argument struct is a status, pad, reserved or "
                           "(on the wire) pointer field and is not zero; zero the whole struct "
                           "before filling in its inputs",
                           a0);
    case VACCEL_D_UNKNOWN_FLAGS:
        return fmt::format("flags 0x{:x} are not defined by this ABI version; clear them", a0);
    case VACCEL_D_BAD_SIZE:
        return fmt::format("a size of {} bytes was given where {} was expected; send exactly "
                           "the size the contract defines (the header and library must match "
                           "the daemon's ABI version)",
                           a0, a1);
    case VACCEL_D_UNKNOWN_OPCODE:
        return fmt::format("opcode {} is not defined by this ABI version; use an operation the "
                           "daemon reports, or upgrade it",
                           a0);
    case VACCEL_D_NO_DEVICE:
        return fmt::format("device index {} does not exist (there are {} devices); pick an "
                           "index below {}",
                           a0, a1, a1);
    case VACCEL_D_BAD_VALUE:
        return fmt::format("the field at byte {} of the argument struct holds {} (0x{:x}), "
                           "which is not a valid value for it; use one of the values the "
                           "contract defines",
                           a0, a1, a1);
    case VACCEL_D_RANGE:
        if (a1 == 0)
            return fmt::format("the range at offset {} is empty (0 bytes); ask for at least "
                               "one byte",
                               a0);
        return fmt::format("{} bytes at offset {} do not fit inside the buffer; keep offset "
                           "plus length within the buffer's size",
                           a1, a0);
    case VACCEL_D_IN_USE:
        return fmt::format("the object is still used by {} others (child objects or work in "
                           "flight); release those or wait for their events first",
                           a0);
    case VACCEL_D_IN_FLIGHT:
        return fmt::format("buffer 0x{:x}: {} in-flight submissions use it; wait on their "
                           "events before writing",
                           a0, a1);
    case VACCEL_D_ACCESS:
        return fmt::format("{} access was asked where only {} is allowed; bind with the "
                           "allowed access, or allocate the buffer allowing it",
                           access_text(a0), access_text(a1));
    case VACCEL_D_USAGE:
        return fmt::format("the buffer's usage is {} but {} is needed; allocate the buffer "
                           "with that usage",
                           usage_text(a1), usage_text(a0));
    case VACCEL_D_BINDING_SLOT:
        return fmt::format("binding {} names slot {}, which the program does not have; bind "
                           "only the program's slots",
                           a0, a1);
    case VACCEL_D_BINDING_DUPLICATE:
        return fmt::format("binding {} binds slot {}, which an earlier binding already bound; "
                           "bind each slot once",
                           a0, a1);
    case VACCEL_D_BINDING_ALIAS:
        return fmt::format("binding {} uses the same buffer as binding {} and one of them "
                           "writes it; give every written slot a buffer of its own",
                           a0, a1);
    case VACCEL_D_BINDING_SIZE:
        return fmt::format("binding {} does not cover exactly the {} bytes its slot needs; "
                           "bind exactly the slot's bytes",
                           a0, a1);
    case VACCEL_D_BINDING_MISSING:
        return fmt::format("slot {} of the program's {} slots is not bound; bind every slot",
                           a0, a1);
    case VACCEL_D_BINDING_CONTEXT:
        return fmt::format("binding {} names a buffer of another context; bind buffers of the "
                           "queue's context",
                           a0);
    case VACCEL_D_LIMIT:
        if (is_tenant_scope(e.scope))
            return tenant_limit_sentence(e);
        if (VACCEL_SCOPE_KIND(e.scope) == VACCEL_SCOPE_DEVICE)
            return fmt::format("device {} has all its {} {} in use, by every tenant together; "
                               "use another device or wait for contexts to end",
                               VACCEL_SCOPE_DEVICE_INDEX(e.scope), a0, limit_name(e.limit));
        // The parser stops at the first record past the limit, so it knows
        // only that there are more (arg1 is that record's index).
        if (e.limit == VACCEL_LIMIT_KERNEL_ARGS)
            return fmt::format("{} limit is {} and the argument buffer holds more (record {}, "
                               "counting from 0, is past it); {}",
                               limit_name(e.limit), a0, a1, limit_remedy(e.limit));
        if (limit_is_per_request(e.limit))
            return fmt::format("{} limit is {} and {} were asked; {}", limit_name(e.limit), a0,
                               a1, limit_remedy(e.limit));
        return fmt::format("{} limit is {} and {} {} in use; {}", limit_name(e.limit), a0, a1,
                           a1 == 1 ? "is" : "are", limit_remedy(e.limit));
    case VACCEL_D_TOSA_VERSION:
        return fmt::format("TOSA version {}.{} is not supported (only 1.0 is); convert the "
                           "model to TOSA 1.0",
                           a0, a1);
    case VACCEL_D_TOSA_MALFORMED:
        return fmt::format("the TOSA file is malformed: {}; export the model again",
                           tosa_reason_text(a0));
    case VACCEL_D_TOSA_OPERATOR:
        return fmt::format("TOSA operator {} on {} is not supported by this device; run the "
                           "model on a device that offers it, or change the model",
                           op_text(a0), dtype_text(a1));
    case VACCEL_D_TOSA_DTYPE:
        return fmt::format("TOSA data type {} (used by operator {}) is not supported by this "
                           "device; run the model on a device that offers it, or convert the "
                           "model",
                           dtype_text(a0), op_text(a1));
    case VACCEL_D_TOSA_GRAPH:
        return fmt::format("the TOSA graph is not admitted: {}; simplify the model",
                           tosa_reason_text(a0));
    case VACCEL_D_FORMAT:
        return fmt::format("program format {} ({}) is not offered by this device; pick a "
                           "device whose formats include it",
                           a0, format_text(a0));
    case VACCEL_D_TARGET:
        return "the program's TOSA target (version, profiles, level, extensions) is not "
               "admitted by this device; load it with a target the device lists, or all zero "
               "for the device's default";
    case VACCEL_D_WAIT_TIMEOUT:
        return fmt::format("{} events were not done when the timeout passed; wait again with "
                           "a later timeout",
                           a0);
    case VACCEL_D_DEADLINE:
        return "deadlines are not honoured on this device; submit with deadline 0 or use a "
               "device that reports deadline support";
    case VACCEL_D_NOT_COMPLETE:
        return fmt::format("event 0x{:x} is not complete yet; wait on it first", a0);
    case VACCEL_D_EXECUTION:
        return fmt::format("operator {} of the program failed while executing; check the "
                           "inputs it was given",
                           a0);
    case VACCEL_D_KERNEL_ARG_TAG:
        return fmt::format("byte {} of the kernel arguments is 0x{:02x}, which is no argument "
                           "tag (0x{:02x} to 0x{:02x}); start every argument with its tag and "
                           "give exactly its value bytes after it",
                           a0, a1, VACCEL_ARG_I32, VACCEL_ARG_PTR);
    case VACCEL_D_KERNEL_ARG_TRUNCATED:
        return fmt::format("the kernel argument whose tag is at byte {} lacks {} of its value "
                           "bytes: the argument buffer ends first; send every value whole and "
                           "argv_bytes covering all of them",
                           a0, a1);
    case VACCEL_D_KERNEL_ARG_TRAILING:
        return fmt::format("the kernel arguments end in {} zero bytes from byte {} that belong "
                           "to no argument; set argv_bytes to end at the last argument, "
                           "without padding",
                           a1, a0);
    case VACCEL_D_KERNEL_ARG_POINTER:
        return fmt::format("kernel argument {} points into slot {}, which no binding of this "
                           "launch carries; bind a buffer at that slot or name a bound one",
                           a0, a1);
    case VACCEL_D_KERNEL_ENTRY:
        return "the kernel program has no entry point of that name; launch one of the "
               "entries it defines (names are case-sensitive)";
    case VACCEL_D_KERNEL_SIGNATURE:
        return fmt::format("the kernel arguments do not match the entry's parameters (argument "
                           "{}, expected {}); pass exactly the parameters it declares, in order",
                           a0, a1);
    case VACCEL_D_DOMAIN:
        return fmt::format("buffer {:#x} lives in domain {} ({}), which cannot be mapped into "
                           "the client; allocate it in the Host or Shared domain to map it, or "
                           "move its bytes with buffer write and read",
                           a0, a1, a1 == VACCEL_DOMAIN_DEVICE ? "Device" : "unknown");
    case VACCEL_D_DEVICE_NOT_GRANTED: {
        std::string given;
        for (unsigned i = 0; i < 64; ++i)
            if ((a1 >> i) & 1u)
                given += fmt::format("{}{}", given.empty() ? "" : ", ", i);
        return fmt::format("device {} was not given to this session's container (it was given "
                           "device{} {}); start the container with --device "
                           "vaccel.dev/accel={} (or =all) to use it, or pick a device it was "
                           "given",
                           a0, given.find(',') == std::string::npos ? "" : "s",
                           given.empty() ? "none" : given, a0);
    }
    case VACCEL_D_NO_TOSA_DESCRIPTOR:
        if (a1 == 0)
            return fmt::format("the device offers no TOSA capability descriptor (descriptor {} "
                               "was asked); it runs no TOSA programs, pick a device whose "
                               "formats include tosa",
                               a0);
        return fmt::format("TOSA descriptor index {} does not exist (the device has {}); pick "
                           "an index below {}",
                           a0, a1, a1);
    case VACCEL_D_LAUNCH_DIMS:
        return fmt::format("the launch dimensions at byte {} are invalid ({}): every grid and "
                           "block dimension is at least 1 and each product fits in 32 bits",
                           a0, a1);
    case VACCEL_D_DEVICE_STATE:
        return fmt::format("device {} was lost (a fault or reset) and serves nothing more; use "
                           "another device, or restart the daemon to reset it",
                           a0);
    case VACCEL_D_INDETERMINATE:
        return fmt::format("the device failed while taking the work, so whether it was taken "
                           "is unknown; event 0x{:x} reports the outcome: wait on it, then "
                           "destroy it",
                           a0);
    case VACCEL_D_GATE_DESTROYED:
        return fmt::format("the gate this work waited on was destroyed before it reached {}; "
                           "the work never ran. Keep a gate alive until its submissions start",
                           a1);
    case VACCEL_D_SESSION_CLOSED:
        return "the session ended before the work started, so it never ran";
    case VACCEL_D_PEER_GONE:
        return "the daemon went away and this session ended; open a new session (a restarted "
               "daemon serves new sessions)";
    }
    return fmt::format("{} (detail {}, arg0 {}, arg1 {})", error_meaning(e.code), e.detail, a0,
                       a1);
}

}  // namespace

std::string bytes_text(std::uint64_t bytes)
{
    if (bytes < 1024)
        return fmt::format("{} byte{}", bytes, bytes == 1 ? "" : "s");
    constexpr std::string_view units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double value = static_cast<double>(bytes) / 1024.0;
    std::size_t unit = 0;
    while (value >= 1024.0 && unit + 1 < std::size(units)) {
        value /= 1024.0;
        ++unit;
    }
    return fmt::format("{:.1f} {}", value, units[unit]);
}

std::string describe(const Error& error)
{
    std::string text = fmt::format("{}: {}", error_name(error.code), detail_sentence(error));
    // A tenant refusal's note is the tenant's name, already in the sentence.
    const bool named = error.detail == VACCEL_D_LIMIT && is_tenant_scope(error.scope);
    if (!error.note.empty() && !named) {
        text += " (";
        text += error.note;
        text += ')';
    }
    return text;
}

}  // namespace vaccel
