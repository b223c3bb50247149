/*
 * vaccel/vaccel.h - libvaccel, the client library of the accelerator contract.
 *
 * vaccel shares accelerators (GPUs and the CPU) between processes. A client
 * opens a session, creates a context on a device, allocates buffers in it,
 * loads a program (a TOSA 1.0 flatbuffer, or a kernel program to launch), and submits the program with its
 * buffers bound to the program's slots on a queue; each submission yields an
 * event to poll or wait on. Every call maps to one operation of the contract
 * in uapi/vaccel.h (the same structs, enums and flags).
 *
 * Conventions
 *  - One call per contract operation, named vaccel_<object>_<verb>().
 *  - Every call returns 0 or a negative errno (the mapping is in
 *    uapi/vaccel.h: -EINVAL InvalidArgument, -EDQUOT ResourceLimit, -EBUSY
 *    Busy, -ETIME DeadlineExpired, ...). Out-parameters come last and are
 *    written only on success unless said otherwise.
 *  - The only hidden state is the per-thread outcome of the last call:
 *    vaccel_last_status() returns it as the contract's struct vaccel_status
 *    (error, detail, limit, arg0, arg1: exactly which limit, handle, binding
 *    or operator), and vaccel_last_error_message() as a sentence a person
 *    can act on, e.g. "ResourceLimit: ... buffers ... limit 2, 2 in use".
 *  - Handles are opaque, non-zero 64-bit values, meaningful only through the
 *    client that made them. A handle of another client, or one already
 *    released, is refused with -EINVAL (VACCEL_D_UNKNOWN_HANDLE).
 *  - Times are absolute CLOCK_MONOTONIC nanoseconds; vaccel_deadline_after_ns()
 *    makes one from a relative delay.
 *
 * Objects and their lifetimes
 *    client ─┬─ context ─┬─ buffer   (bytes, domain, usage, allowed access)
 *            │           ├─ program  (slots: inputs first, then outputs)
 *            │           ├─ gate     (a timeline the host raises)
 *            │           └─ queue ── event (one per submission or launch)
 *  A context cannot be destroyed while it has buffers, programs, queues or
 *  events (-EBUSY, VACCEL_D_IN_USE, arg0 = how many); a queue not while its
 *  events live; a buffer or program not while a pending submission uses it;
 *  an event not while pending. A refused release leaves the object alive and
 *  its handle valid. vaccel_client_close() releases everything still open,
 *  waiting for in-flight work first.
 *
 * A minimal run (error checks omitted):
 *
 *    vaccel_client *c;  uint64_t ctx, in, out, prog, q, ev;
 *    vaccel_client_open(NULL, &c);
 *    vaccel_context_create(c, 0, &ctx);
 *    struct vaccel_buffer_alloc req = { .context = ctx, .bytes = 16,
 *        .domain = VACCEL_DOMAIN_HOST, .usage = VACCEL_USAGE_ALL,
 *        .access = VACCEL_ACCESS_RW };
 *    vaccel_buffer_alloc(c, &req);  in = req.buffer;
 *    vaccel_buffer_alloc(c, &req);  out = req.buffer;
 *    vaccel_buffer_write(c, in, 0, input, 16);
 *    vaccel_program_load(c, ctx, VACCEL_FORMAT_TOSA, NULL, tosa, tosa_bytes,
 *                        &prog, NULL, NULL);
 *    vaccel_queue_create(c, ctx, &q);
 *    struct vaccel_binding b[2] = {
 *        { .slot = 0, .access = VACCEL_ACCESS_READ,  .buffer = in,  .bytes = 16 },
 *        { .slot = 1, .access = VACCEL_ACCESS_WRITE, .buffer = out, .bytes = 16 } };
 *    vaccel_submit(c, q, prog, b, 2, 0, &ev);
 *    vaccel_event_wait(c, &ev, 1, VACCEL_WAIT_ALL, vaccel_deadline_after_ns(1000000000), NULL);
 *    vaccel_buffer_read(c, out, 0, output, 16);
 *    vaccel_client_close(c);        (releases ev, q, prog, buffers, ctx)
 *
 * Threads: a client may be shared by several threads; calls on it may run
 * concurrently (a thread blocked in vaccel_event_wait() does not hold up
 * another thread's submissions). The last-status record is per thread.
 *
 * Transports: "kernel" issues ioctls on /dev/vaccel ($VACCEL_DEVICE, else
 * VACCEL_DEVICE_DEFAULT), which the kernel module vaccel.ko forwards to the
 * daemon: buffers, programs and bindings move straight between the caller's
 * memory and the daemon, and a container needs only that device node.
 * "socket" talks to the daemon, vacceld, over its Unix socket
 * ($VACCEL_SOCKET, else VACCEL_SOCKET_DEFAULT). Over both, devices are
 * shared with other processes under the daemon's limits. The admin channel
 * (vaccel_admin()) is the daemon's socket: a kernel client opens a socket
 * connection of its own for it on its first admin call. "embedded" runs the
 * engine and the backends in the calling process (no limits across
 * processes, no admin channel). vaccel_client_open(NULL, ...) takes
 * $VACCEL_TRANSPORT if set, else the kernel when /dev/vaccel opens (the
 * module is loaded and a daemon serves it), else the socket when the daemon
 * accepts a connection, else embedded. A daemon named explicitly is never
 * replaced by embedded: with $VACCEL_SOCKET or $VACCEL_DEVICE set (or a
 * socket path given to vaccel_client_open_at) the automatic choice is the
 * kernel, else the socket, and with neither there it is refused as the
 * named socket (or node, when only it was named) is. If the daemon goes away, every
 * pending and later call of its clients fails promptly with -ENODEV
 * (DeviceLost, VACCEL_D_PEER_GONE); open a new client once a daemon serves
 * again.
 *
 * Linking: -lvaccel. The library exports only the vaccel_* symbols below.
 * A header-only C++ layer with RAII objects is in <vaccel/vaccel.hpp>.
 */
#ifndef VACCEL_VACCEL_H
#define VACCEL_VACCEL_H

#include <stddef.h>
#include <stdint.h>

/* The contract (uapi/vaccel.h): structs, enums, flags. Angle brackets on
 * purpose: a quoted include would find this very file first. */
#include <vaccel.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the library's exported symbols (it is built with hidden visibility). */
#if defined(__GNUC__)
#define VACCEL_API __attribute__((visibility("default")))
#else
#define VACCEL_API
#endif

/* ------------------------------------------------------------------ */
/* Clients                                                             */
/* ------------------------------------------------------------------ */

/* One session with the engine. Opaque. */
typedef struct vaccel_client vaccel_client;

/* Transport names accepted by vaccel_client_open(); NULL = automatic
 * ($VACCEL_TRANSPORT if set and not empty, else "kernel" when /dev/vaccel
 * opens, else "socket" when the daemon's socket accepts a connection, else
 * "embedded"; never "embedded" when $VACCEL_SOCKET or $VACCEL_DEVICE is
 * set). */
#define VACCEL_TRANSPORT_EMBEDDED "embedded"
#define VACCEL_TRANSPORT_SOCKET "socket"
#define VACCEL_TRANSPORT_KERNEL "kernel"

/* Where the daemon listens unless $VACCEL_SOCKET names another path. */
#define VACCEL_SOCKET_DEFAULT "/run/vaccel/vacceld.sock"
/* The kernel module's client node unless $VACCEL_DEVICE names another. */
#define VACCEL_DEVICE_DEFAULT "/dev/vaccel"

/* Opens a session over `transport` (see above) and stores it in *client.
 * "socket" with no daemon accepting at the socket is -ENODEV (DeviceLost,
 * VACCEL_D_PEER_GONE), with a message naming the path and why connecting
 * failed. "kernel" with no /dev/vaccel, or no daemon serving it, is -ENODEV
 * too; a node the caller may not open is -EACCES (PermissionDenied); each
 * with a message naming the node. An unknown name is -EPROTONOSUPPORT, with
 * a message naming it. Never silently replaced by another transport. */
VACCEL_API int vaccel_client_open(const char *transport, vaccel_client **client);
/* vaccel_client_open() with the daemon's socket given: `socket_path` is
 * where the "socket" transport connects, whether named or the automatic
 * choice (NULL or "": $VACCEL_SOCKET if set, else VACCEL_SOCKET_DEFAULT);
 * with a path given the automatic choice never falls back to embedded.
 * No environment variable is read for a path given, so threads may open
 * clients to different daemons at once. Same refusals as
 * vaccel_client_open(). */
VACCEL_API int vaccel_client_open_at(const char *transport, const char *socket_path,
				     vaccel_client **client);
/* Releases everything the session still owns (waiting for in-flight work),
 * then the client. NULL is ignored. Call it once no other call on the
 * client is running. */
VACCEL_API void vaccel_client_close(vaccel_client *client);
/* The transport the client uses: "kernel", "socket" or "embedded". */
VACCEL_API const char *vaccel_client_transport(const vaccel_client *client);

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

/* "Name: meaning" of a contract error, given either as the negative errno a
 * call returned or as the contract code (enum vaccel_error); for an errno the
 * contract does not use, the C library's text. Never NULL; static storage. */
VACCEL_API const char *vaccel_strerror(int negative_errno_or_contract_code);
/* The contract error name: "ResourceLimit", "Busy", ... ("Unknown" past the
 * enum). */
VACCEL_API const char *vaccel_error_name(uint32_t contract_error);
/* The outcome of this thread's last call: all zero after a success. The
 * pointer is per thread and stays valid for the thread's life. */
VACCEL_API const struct vaccel_status *vaccel_last_status(void);
/* That outcome as a sentence: what was refused, why, what to do; "" when the
 * last call succeeded. Valid until this thread's next vaccel_* call. */
VACCEL_API const char *vaccel_last_error_message(void);
/* Any status (e.g. the failure of an event) as such a sentence, written into
 * buf (NUL-terminated, truncated to size). Returns the length of the whole
 * sentence, like snprintf. */
VACCEL_API int vaccel_status_message(const struct vaccel_status *status, char *buf,
				     size_t size);

/* ------------------------------------------------------------------ */
/* ABI and devices                                                     */
/* ------------------------------------------------------------------ */

/* ABI major/minor and the VACCEL_CAP_* the devices offer. */
VACCEL_API int vaccel_get_version(vaccel_client *client, struct vaccel_get_version *out);
/* Devices are numbered 0 .. count - 1; accelerators before the CPU. */
VACCEL_API int vaccel_device_count(vaccel_client *client, uint32_t *count);
/* Identity, memory, limits, admitted formats and TOSA targets of a device.
 * An index past the end is -EINVAL (VACCEL_D_NO_DEVICE, arg0 = index,
 * arg1 = count). */
VACCEL_API int vaccel_device_info(vaccel_client *client, uint32_t index,
				  struct vaccel_device_info *info);
/* TOSA capability descriptor `index` of device `device` (ABI 1.2,
 * VACCEL_CAP_TOSA_DESCRIPTORS): the target, per TOSA dtype its roles, per
 * TOSA operator whether it is admitted with its constraints and dtypes, and
 * the graph envelope; descriptor->descriptor_count says how many the device
 * has. An unknown device is -EINVAL (VACCEL_D_NO_DEVICE); an index past the
 * descriptors is -EINVAL (VACCEL_D_NO_TOSA_DESCRIPTOR, arg0 = index,
 * arg1 = count; a device that runs no TOSA programs has none). */
VACCEL_API int vaccel_device_tosa(vaccel_client *client, uint32_t device, uint32_t index,
				  struct vaccel_tosa_descriptor *descriptor);

/* ------------------------------------------------------------------ */
/* Contexts                                                            */
/* ------------------------------------------------------------------ */

/* A context on device `device`: the unit of limits (buffers, memory,
 * programs, queues, events are counted per context). */
VACCEL_API int vaccel_context_create(vaccel_client *client, uint32_t device, uint64_t *context);
/* -EBUSY (VACCEL_D_IN_USE, arg0 = children) while it owns anything. */
VACCEL_API int vaccel_context_destroy(vaccel_client *client, uint64_t context);
/* The context's effective limits (device limits narrowed by policy) and its
 * current use. */
VACCEL_API int vaccel_context_limits(vaccel_client *client, uint64_t context,
				     struct vaccel_context_limits *out);

/* ------------------------------------------------------------------ */
/* Buffers                                                             */
/* ------------------------------------------------------------------ */

/* `req` carries context, bytes, alignment (0 = device default), domain,
 * usage and access (status and outputs may be left zero); on success the
 * outputs are filled in: buffer (the handle), allocation_bytes,
 * measured_alignment, properties. `req->status` is the outcome in either
 * case. Beyond a limit: -EDQUOT with status.limit naming it
 * (VACCEL_LIMIT_BUFFERS, _MEMORY_BYTES, _BUFFER_BYTES), arg0 = the limit,
 * arg1 = in use. */
VACCEL_API int vaccel_buffer_alloc(vaccel_client *client, struct vaccel_buffer_alloc *req);
/* -EBUSY while a pending submission binds it. */
VACCEL_API int vaccel_buffer_free(vaccel_client *client, uint64_t buffer);
/* Copies `length` bytes into the buffer at `offset` (needs
 * VACCEL_USAGE_TRANSFER_DST). Past the end: -ERANGE (VACCEL_D_RANGE);
 * while a pending submission binds the buffer: -EBUSY. length 0 is -EINVAL. */
VACCEL_API int vaccel_buffer_write(vaccel_client *client, uint64_t buffer, uint64_t offset,
				   const void *data, uint64_t length);
/* Copies `length` bytes out of the buffer (needs VACCEL_USAGE_TRANSFER_SRC);
 * the same refusals as vaccel_buffer_write(). */
VACCEL_API int vaccel_buffer_read(vaccel_client *client, uint64_t buffer, uint64_t offset,
				  void *data, uint64_t length);

/* Maps a Host or Shared buffer into this process: *address is its first
 * byte, valid for the buffer's size until vaccel_buffer_unmap() or
 * vaccel_buffer_free() (which unmaps it). Mapping a mapped buffer returns
 * the same address. Bytes written through the mapping are what the next
 * submission reads; results a submission wrote are there once its event is
 * done. Do not touch bytes a pending submission binds (as for
 * vaccel_buffer_write(), but nothing can refuse it: the outcome is
 * undefined). A Device buffer: -ENOEXEC (VACCEL_E_INCOMPATIBLE,
 * VACCEL_D_DOMAIN). The buffer's bytes count once against the memory
 * limit, mapped or not. Embedded: the buffer's own memory; socket: the
 * buffer's memfd; /dev/vaccel: the module maps the same pages. */
VACCEL_API int vaccel_buffer_map(vaccel_client *client, uint64_t buffer, void **address);
/* Unmaps what vaccel_buffer_map() mapped; -EINVAL (VACCEL_D_BAD_VALUE) if
 * the buffer is not mapped in this client. */
VACCEL_API int vaccel_buffer_unmap(vaccel_client *client, uint64_t buffer);

/* ------------------------------------------------------------------ */
/* Programs                                                            */
/* ------------------------------------------------------------------ */

/* Loads an artifact (`format`: enum vaccel_program_format) into a context.
 * `target` may be NULL (the device's default target). On success *program
 * is the handle and, where not NULL, *input_count / *output_count the
 * number of slots: slots 0 .. inputs - 1 are read, the rest written. A
 * refused artifact says why: the TOSA version found (VACCEL_D_TOSA_VERSION),
 * the operator or dtype not admitted (VACCEL_D_TOSA_OPERATOR/_DTYPE), a
 * malformed file (VACCEL_D_TOSA_MALFORMED). */
VACCEL_API int vaccel_program_load(vaccel_client *client, uint64_t context, uint32_t format,
				   const struct vaccel_tosa_target *target, const void *payload,
				   uint64_t payload_bytes, uint64_t *program,
				   uint32_t *input_count, uint32_t *output_count);
/* -EBUSY while a pending submission runs it. */
VACCEL_API int vaccel_program_unload(vaccel_client *client, uint64_t program);
/* One slot of the program's binding interface: role, dtype, shape, the
 * exact bytes a binding must cover, and the tensor's name. `out` is written
 * in either case (its status is the outcome). */
VACCEL_API int vaccel_program_slot(vaccel_client *client, uint64_t program, uint32_t slot,
				   struct vaccel_program_slot *out);

/* ------------------------------------------------------------------ */
/* Queues                                                              */
/* ------------------------------------------------------------------ */

VACCEL_API int vaccel_queue_create(vaccel_client *client, uint64_t context, uint64_t *queue);
/* -EBUSY (VACCEL_D_IN_USE, arg0 = events) while events submitted on it live. */
VACCEL_API int vaccel_queue_destroy(vaccel_client *client, uint64_t queue);

/* ------------------------------------------------------------------ */
/* Submissions and events                                              */
/* ------------------------------------------------------------------ */

/* Runs `program` on `queue` with `bindings` (one per slot: inputs READ,
 * outputs WRITE, each covering exactly the slot's bytes; all buffers of the
 * queue's context). deadline_ns: absolute CLOCK_MONOTONIC, 0 = none. Either
 * refused (nothing happened; the status names the binding and the rule) or
 * accepted: *event then reports the outcome, failures included.
 * Device loss: -ENODEV (VACCEL_D_DEVICE_STATE) once the device is lost; and
 * -ENODEV with VACCEL_D_INDETERMINATE when the device failed while taking
 * the work: then *event IS set (arg0 is the same handle) and reports the
 * outcome; wait on it and destroy it. The same holds for
 * vaccel_submit_after() and vaccel_launch(). */
VACCEL_API int vaccel_submit(vaccel_client *client, uint64_t queue, uint64_t program,
			     const struct vaccel_binding *bindings, uint32_t binding_count,
			     uint64_t deadline_ns, uint64_t *event);
/* vaccel_submit() and the wait for the work's end in one request, with no
 * event handle to destroy. Returns 0 when the work completed. Refused: the
 * same errors as vaccel_submit() (nothing ran; *failure is zeroed).
 * Accepted but failed or cancelled: the negative errno of *failure (may be
 * NULL), which says why, as vaccel_event_poll() would. deadline_ns is the
 * submission's deadline (absolute CLOCK_MONOTONIC, 0 = none), as in
 * vaccel_submit(); the call returns when the work has ended either way. */
VACCEL_API int vaccel_run(vaccel_client *client, uint64_t queue, uint64_t program,
			  const struct vaccel_binding *bindings, uint32_t binding_count,
			  uint64_t deadline_ns, struct vaccel_status *failure);
/* state: enum vaccel_event_state; failure (may be NULL) says why for
 * VACCEL_EVENT_FAILED and VACCEL_EVENT_CANCELLED (VACCEL_E_CANCELLED, with
 * VACCEL_D_GATE_DESTROYED or VACCEL_D_SESSION_CLOSED) and is zero
 * otherwise. Never blocks. */
VACCEL_API int vaccel_event_poll(vaccel_client *client, uint64_t event, uint32_t *state,
				 struct vaccel_status *failure);
/* Waits until all (VACCEL_WAIT_ALL) or any (flags 0) of the `count` events
 * are done (complete, failed or cancelled), or the absolute CLOCK_MONOTONIC
 * timeout passes: -ETIME, DeadlineExpired with VACCEL_D_WAIT_TIMEOUT,
 * arg0 = events not yet done. timeout_ns 0 = do not block (just look).
 * Sleeps without spinning. *first_done (may be NULL) is set to the index of
 * the first event found done whenever at least one is, also on -ETIME. */
VACCEL_API int vaccel_event_wait(vaccel_client *client, const uint64_t *events, uint32_t count,
				 uint32_t flags, uint64_t timeout_ns, uint32_t *first_done);
/* -EBUSY (VACCEL_D_NOT_COMPLETE, arg0 = the event) while pending. */
VACCEL_API int vaccel_event_destroy(vaccel_client *client, uint64_t event);

/* ------------------------------------------------------------------ */
/* Host gates                                                          */
/* ------------------------------------------------------------------ */

/* A gate is a 64-bit timeline of a context, starting at 0, that only the
 * host moves. vaccel_submit_after() work starts once its gate reaches the
 * value it names; until then the work is accepted and holds its buffers
 * (vaccel_buffer_write on them is -EBUSY as for any in-flight binding).
 * Gates count against the context's `gates` limit (-EDQUOT,
 * VACCEL_LIMIT_GATES). Requires VACCEL_CAP_GATES on the device. */
VACCEL_API int vaccel_gate_create(vaccel_client *client, uint64_t context, uint64_t *gate);
/* Raises the gate to `value`. A value at or below the current one changes
 * nothing, so raises may arrive in any order. */
VACCEL_API int vaccel_gate_raise(vaccel_client *client, uint64_t gate, uint64_t value);
VACCEL_API int vaccel_gate_value(vaccel_client *client, uint64_t gate, uint64_t *value);
/* Destroys the gate. Work still waiting on it is cancelled: its events end
 * VACCEL_EVENT_CANCELLED with failure VACCEL_E_CANCELLED /
 * VACCEL_D_GATE_DESTROYED (arg1 = the value it awaited); none waits
 * forever. */
VACCEL_API int vaccel_gate_destroy(vaccel_client *client, uint64_t gate);
/* vaccel_submit() that starts once `gate` (of the queue's context) reaches
 * `value`. The same refusals as vaccel_submit(), and -ENOEXEC
 * (VACCEL_D_BINDING_CONTEXT, arg0 = the gate) for another context's gate. */
VACCEL_API int vaccel_submit_after(vaccel_client *client, uint64_t queue, uint64_t program,
				   const struct vaccel_binding *bindings, uint32_t binding_count,
				   uint64_t gate, uint64_t value, uint64_t *event);

/* ------------------------------------------------------------------ */
/* Kernel launch                                                       */
/* ------------------------------------------------------------------ */

/* Runs entry point `entry` of a kernel program (VACCEL_FORMAT_CUDA_PTX,
 * _CUDA_CUBIN or the CPU's _CPU_BUILTIN, loaded with an all-zero target)
 * over `dims`. `argv` is argv_bytes of tagged arguments (uapi/vaccel.h,
 * "Kernel launch": tag 0x01..0x07 and the little-endian value, no padding;
 * at most VACCEL_MAX_KERNEL_ARGS records and VACCEL_MAX_KERNEL_ARGS_BYTES
 * bytes). A pointer record (0x07: u32 slot, u32 bytes) stands for the
 * device address of the buffer bound at that slot plus the binding's
 * offset; the kernel touches at most `bytes` from there. Bindings name
 * buffers by slot, with the access the kernel needs (READ, WRITE or both).
 * Refusals: an unknown entry is -EINVAL (VACCEL_D_KERNEL_ENTRY); malformed
 * argv -EINVAL (VACCEL_D_KERNEL_ARG_TAG, _TRUNCATED, _TRAILING); too many
 * records or bytes -EDQUOT (VACCEL_LIMIT_KERNEL_ARGS / _BYTES); a pointer to
 * an unbound slot -EINVAL (VACCEL_D_KERNEL_ARG_POINTER); more bytes than its
 * binding -ERANGE (VACCEL_D_RANGE); dims with a 0 or a product past 32 bits
 * -EINVAL (VACCEL_D_LAUNCH_DIMS). Otherwise as vaccel_submit(). */
VACCEL_API int vaccel_launch(vaccel_client *client, uint64_t queue, uint64_t program,
			     const char *entry, const struct vaccel_launch_dims *dims,
			     const void *argv, uint32_t argv_bytes,
			     const struct vaccel_binding *bindings, uint32_t binding_count,
			     uint64_t deadline_ns, uint64_t *event);

/* A descriptor to poll (poll, epoll, an event loop) that becomes readable
 * when an event of this client completes, fails or is cancelled, for
 * submissions made after the first call. It stays readable until the
 * client's next vaccel_event_poll() or vaccel_event_wait() starts, which
 * clears it before looking: a completion after that makes it readable
 * again, so none is missed. Poll it; never read, write or close it (the
 * client owns it: over the socket an eventfd the daemon passed, through
 * /dev/vaccel the client's own file, in process an eventfd). Returns the
 * descriptor (the same one on every call) or a negative errno. */
VACCEL_API int vaccel_client_fd(vaccel_client *client);

/* Now + relative nanoseconds on CLOCK_MONOTONIC (saturating), for timeouts
 * and deadlines. */
VACCEL_API uint64_t vaccel_deadline_after_ns(uint64_t relative_ns);

/* ------------------------------------------------------------------ */
/* Administration (the daemon's admin channel)                         */
/* ------------------------------------------------------------------ */

/* One admin command (enum vaccel_admin_command) with its request document
 * (UTF-8 JSON, NUL-terminated; NULL or "" for the listings), answered by the
 * daemon to root and to members of its admin group. On success *response is
 * the answer (JSON; Prometheus text for VACCEL_ADMIN_METRICS), malloc'd and
 * NUL-terminated, to be freed with vaccel_free(), and *response_bytes (may
 * be NULL) its length without the NUL. docs/protocol.md describes the
 * documents. Refusals: -EOPNOTSUPP over the embedded transport (admin needs
 * the daemon); -EACCES (PermissionDenied, VACCEL_D_NOT_ADMIN, arg0 = uid,
 * arg1 = gid) for anyone else; -EINVAL (VACCEL_D_ADMIN_REQUEST, arg0 = byte
 * offset of the fault) for a document the daemon cannot use. *response is
 * NULL after a refusal. */
VACCEL_API int vaccel_admin(vaccel_client *client, uint32_t command, const char *request_json,
			    char **response, size_t *response_bytes);
/* Frees what libvaccel allocated for the caller (vaccel_admin's response).
 * NULL is ignored. */
VACCEL_API void vaccel_free(void *memory);

#ifdef __cplusplus
}
#endif

#endif /* VACCEL_VACCEL_H */
