/*
 * vaccel/vaccel.h - libvaccel, the client library of the accelerator contract.
 *
 * One call per contract operation, named vaccel_<object>_<verb>(). Every call
 * returns 0 or a negative errno (the mapping is in uapi/vaccel.h); out
 * parameters come last. The only hidden state is the per-thread detail of the
 * last failed call: vaccel_last_status() returns it as the contract's
 * struct vaccel_status, and vaccel_last_error_message() as a sentence a person
 * can act on ("buffer 0x...: 3 in-flight submissions read it; wait on their
 * events before writing").
 *
 * A vaccel_client is one session: every handle it returns is meaningful only
 * through that client. A client may be shared by several threads.
 *
 * Transports: VACCEL_TRANSPORT=embedded runs the engine and the backends in
 * the calling process. (Socket and kernel transports come with the daemon
 * and the kernel module.)
 */
#ifndef VACCEL_VACCEL_H
#define VACCEL_VACCEL_H

#include <stddef.h>
#include <stdint.h>

#include "vaccel.h" /* uapi: structs, enums, flags */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vaccel_client vaccel_client;

/* Transport names accepted by vaccel_client_open(); NULL = automatic
 * ($VACCEL_TRANSPORT if set, else the best one reachable). */
#define VACCEL_TRANSPORT_EMBEDDED "embedded"

int vaccel_client_open(const char *transport, vaccel_client **client);
/* Releases everything the session still owns (waiting for in-flight work). */
void vaccel_client_close(vaccel_client *client);
/* The transport the client uses: "embedded", ... */
const char *vaccel_client_transport(const vaccel_client *client);

/* Errors. */
const char *vaccel_strerror(int negative_errno_or_contract_code);
/* The contract error name: "ResourceLimit", "Busy", ... */
const char *vaccel_error_name(uint32_t contract_error);
/* Detail of this thread's last failed call (all zero after a success). */
const struct vaccel_status *vaccel_last_status(void);
/* That detail as a sentence; "" when the last call succeeded. */
const char *vaccel_last_error_message(void);

/* ABI and devices. */
int vaccel_get_version(vaccel_client *client, struct vaccel_get_version *out);
int vaccel_device_count(vaccel_client *client, uint32_t *count);
int vaccel_device_info(vaccel_client *client, uint32_t index, struct vaccel_device_info *info);

/* Contexts. */
int vaccel_context_create(vaccel_client *client, uint32_t device, uint64_t *context);
int vaccel_context_destroy(vaccel_client *client, uint64_t context);
int vaccel_context_limits(vaccel_client *client, uint64_t context,
			  struct vaccel_context_limits *out);

/* Buffers. `req` carries context, bytes, alignment, domain, usage, access
 * (status and outputs zero); on success the outputs are filled in. */
int vaccel_buffer_alloc(vaccel_client *client, struct vaccel_buffer_alloc *req);
int vaccel_buffer_free(vaccel_client *client, uint64_t buffer);
int vaccel_buffer_write(vaccel_client *client, uint64_t buffer, uint64_t offset,
			const void *data, uint64_t length);
int vaccel_buffer_read(vaccel_client *client, uint64_t buffer, uint64_t offset,
		       void *data, uint64_t length);

/* Programs. `target` may be NULL (the device's default target). */
int vaccel_program_load(vaccel_client *client, uint64_t context, uint32_t format,
			const struct vaccel_tosa_target *target, const void *payload,
			uint64_t payload_bytes, uint64_t *program,
			uint32_t *input_count, uint32_t *output_count);
int vaccel_program_unload(vaccel_client *client, uint64_t program);
int vaccel_program_slot(vaccel_client *client, uint64_t program, uint32_t slot,
			struct vaccel_program_slot *out);

/* Queues. */
int vaccel_queue_create(vaccel_client *client, uint64_t context, uint64_t *queue);
int vaccel_queue_destroy(vaccel_client *client, uint64_t queue);

/* Submissions and events. deadline_ns: absolute CLOCK_MONOTONIC, 0 = none. */
int vaccel_submit(vaccel_client *client, uint64_t queue, uint64_t program,
		  const struct vaccel_binding *bindings, uint32_t binding_count,
		  uint64_t deadline_ns, uint64_t *event);
/* state: enum vaccel_event_state; failure (may be NULL) filled for FAILED. */
int vaccel_event_poll(vaccel_client *client, uint64_t event, uint32_t *state,
		      struct vaccel_status *failure);
/* Waits until all (VACCEL_WAIT_ALL) or any of the events are done, or the
 * absolute CLOCK_MONOTONIC timeout passes (-ETIME, DeadlineExpired with
 * VACCEL_D_WAIT_TIMEOUT). timeout_ns 0 = do not block. */
int vaccel_event_wait(vaccel_client *client, const uint64_t *events, uint32_t count,
		      uint32_t flags, uint64_t timeout_ns, uint32_t *first_done);
int vaccel_event_destroy(vaccel_client *client, uint64_t event);

/* Now + relative nanoseconds on CLOCK_MONOTONIC, for timeouts/deadlines. */
uint64_t vaccel_deadline_after_ns(uint64_t relative_ns);

#ifdef __cplusplus
}
#endif

#endif /* VACCEL_VACCEL_H */
