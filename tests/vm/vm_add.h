/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vm_add.h - what the VM test's raw-ioctl helpers share: checks that count
 * failures, ioctl() as -errno, clocks, and the ADD fixture loaded in one
 * /dev/vaccel session (context, program, queue, Host buffers a, b, c),
 * run by SUBMIT and EVENT_WAIT or by RUN, with host gates to hold a
 * submission back. Compiles as 64-bit and as 32-bit (vm_compat32.c) C:
 * pointers go through uintptr_t into the uapi's __u64 fields.
 *
 * The includer defines VM_PROGRAM (the prefix of its failure lines).
 */
#ifndef VM_ADD_H
#define VM_ADD_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vaccel_server.h"

static int failures;

/* One line "<program>: line N: <why>" per failed check, counted. */
#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			printf(VM_PROGRAM ": line %d: ", __LINE__);	\
			printf(__VA_ARGS__);				\
			printf("\n");					\
			__atomic_add_fetch(&failures, 1,		\
					   __ATOMIC_RELAXED);		\
		}							\
	} while (0)

/* The ADD fixture: a [1,4,4,1] + b [1,4,4,4] = c [1,4,4,4], fp32. */
#define ADD_A_BYTES 64
#define ADD_B_BYTES 256
#define ADD_C_BYTES 256

static inline int report(const char *step)
{
	printf("VMTEST %s %s\n", step, failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}

/* ioctl() as 0 or -errno. */
static inline int call(int fd, unsigned long cmd, void *args)
{
	return ioctl(fd, cmd, args) ? -errno : 0;
}

static inline uint64_t ptr(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* A whole file, malloc()ed; NULL if it cannot be read. */
static inline void *read_whole(const char *path, size_t *bytes)
{
	struct stat st;
	void *data = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 0) {
		data = malloc((size_t)st.st_size);
		if (data && read(fd, data, (size_t)st.st_size) != st.st_size) {
			free(data);
			data = NULL;
		}
		*bytes = (size_t)st.st_size;
	}
	if (fd >= 0)
		close(fd);
	return data;
}

/* The data bytes of a version 1 .npy file; NULL (said why) otherwise. */
static inline void *npy_data(const char *path, size_t *bytes)
{
	size_t size = 0, start;
	unsigned char *all = read_whole(path, &size);
	void *data;

	if (!all || size < 10 || memcmp(all, "\x93NUMPY\x01", 7)) {
		CHECK(0, "%s is not a version 1 .npy file", path);
		free(all);
		return NULL;
	}
	start = 10 + (all[8] | (size_t)all[9] << 8);
	if (start > size) {
		CHECK(0, "%s: header past the end", path);
		free(all);
		return NULL;
	}
	*bytes = size - start;
	data = malloc(*bytes + 1);
	memcpy(data, all + start, *bytes);
	free(all);
	return data;
}

/* The ADD fixture loaded in one session. */
struct add {
	int fd;
	uint64_t context, program, queue;
	uint64_t a, b, c;
};

static inline uint64_t buffer_alloc(int fd, uint64_t context, uint64_t bytes)
{
	struct vaccel_buffer_alloc alloc;
	int ret;

	memset(&alloc, 0, sizeof(alloc));
	alloc.context = context;
	alloc.bytes = bytes;
	alloc.domain = VACCEL_DOMAIN_HOST;
	alloc.usage = VACCEL_USAGE_ALL;
	alloc.access = VACCEL_ACCESS_RW;
	ret = call(fd, VACCEL_IOCTL_BUFFER_ALLOC, &alloc);
	CHECK(ret == 0 && alloc.buffer, "BUFFER_ALLOC of %llu bytes: %d error %u detail %u",
	      (unsigned long long)bytes, ret, alloc.status.error,
	      alloc.status.detail);
	return ret ? 0 : alloc.buffer;
}

/* The ADD program, a queue and buffers a, b, c in session `fd`. */
static inline int add_prepare_on(struct add *s, int fd, const char *model)
{
	struct vaccel_context_create context;
	struct vaccel_program_load load;
	struct vaccel_queue_create queue;
	size_t bytes = 0;
	void *artifact;
	int ret;

	memset(s, 0, sizeof(*s));
	s->fd = fd;
	memset(&context, 0, sizeof(context));
	ret = call(fd, VACCEL_IOCTL_CONTEXT_CREATE, &context);
	CHECK(ret == 0, "CONTEXT_CREATE: %d", ret);
	if (ret)
		return -1;
	s->context = context.context;
	artifact = read_whole(model, &bytes);
	CHECK(artifact != NULL, "cannot read %s", model);
	if (!artifact)
		return -1;
	memset(&load, 0, sizeof(load));
	load.context = s->context;
	load.format = VACCEL_FORMAT_TOSA;
	load.payload = ptr(artifact);
	load.payload_bytes = bytes;
	ret = call(fd, VACCEL_IOCTL_PROGRAM_LOAD, &load);
	free(artifact);
	CHECK(ret == 0 && load.input_count == 2 && load.output_count == 1,
	      "PROGRAM_LOAD: %d error %u detail %u, %u inputs, %u outputs",
	      ret, load.status.error, load.status.detail, load.input_count,
	      load.output_count);
	if (ret)
		return -1;
	s->program = load.program;
	memset(&queue, 0, sizeof(queue));
	queue.context = s->context;
	ret = call(fd, VACCEL_IOCTL_QUEUE_CREATE, &queue);
	CHECK(ret == 0, "QUEUE_CREATE: %d", ret);
	s->queue = queue.queue;
	s->a = buffer_alloc(fd, s->context, ADD_A_BYTES);
	s->b = buffer_alloc(fd, s->context, ADD_B_BYTES);
	s->c = buffer_alloc(fd, s->context, ADD_C_BYTES);
	return ret || !s->a || !s->b || !s->c ? -1 : 0;
}

/* A new session with the ADD fixture; -1 (said why) on failure. */
static inline int add_prepare(struct add *s, const char *model)
{
	int fd = open("/dev/vaccel", O_RDWR | O_CLOEXEC);

	CHECK(fd >= 0, "open /dev/vaccel: %s", strerror(errno));
	if (fd < 0)
		return -1;
	if (add_prepare_on(s, fd, model)) {
		close(fd);
		return -1;
	}
	return 0;
}

static inline void add_bindings(const struct add *s, struct vaccel_binding *bind)
{
	memset(bind, 0, 3 * sizeof(*bind));
	bind[0].slot = 0;
	bind[0].access = VACCEL_ACCESS_READ;
	bind[0].buffer = s->a;
	bind[0].bytes = ADD_A_BYTES;
	bind[1].slot = 1;
	bind[1].access = VACCEL_ACCESS_READ;
	bind[1].buffer = s->b;
	bind[1].bytes = ADD_B_BYTES;
	bind[2].slot = 2;
	bind[2].access = VACCEL_ACCESS_WRITE;
	bind[2].buffer = s->c;
	bind[2].bytes = ADD_C_BYTES;
}

static inline int transfer(int fd, unsigned long cmd, uint64_t buffer,
			   void *data, uint64_t length)
{
	struct vaccel_buffer_transfer xfer;

	memset(&xfer, 0, sizeof(xfer));
	xfer.buffer = buffer;
	xfer.length = length;
	xfer.data = ptr(data);
	return call(fd, cmd, &xfer);
}

/* One RUN of the program on a, b, c as they are; 0 or -errno. */
static inline int add_run(const struct add *s)
{
	struct vaccel_binding bind[3];
	struct vaccel_run run;
	int ret;

	add_bindings(s, bind);
	memset(&run, 0, sizeof(run));
	run.queue = s->queue;
	run.program = s->program;
	run.bindings = ptr(bind);
	run.binding_count = 3;
	ret = call(s->fd, VACCEL_IOCTL_RUN, &run);
	if (ret == 0 && run.state != VACCEL_EVENT_COMPLETE)
		return -EIO;
	return ret;
}

/* A new gate of the session's context; 0 on failure (said why). */
static inline uint64_t gate_create(const struct add *s)
{
	struct vaccel_gate_create gate;
	int ret;

	memset(&gate, 0, sizeof(gate));
	gate.context = s->context;
	ret = call(s->fd, VACCEL_IOCTL_GATE_CREATE, &gate);
	CHECK(ret == 0 && gate.gate, "GATE_CREATE: %d error %u detail %u", ret,
	      gate.status.error, gate.status.detail);
	return ret ? 0 : gate.gate;
}

static inline int gate_raise(const struct add *s, uint64_t gate, uint64_t value)
{
	struct vaccel_gate_value raise;

	memset(&raise, 0, sizeof(raise));
	raise.gate = gate;
	raise.value = value;
	return call(s->fd, VACCEL_IOCTL_GATE_RAISE, &raise);
}

/* An ADD submission that starts when `gate` reaches 1: its event, or 0. */
static inline uint64_t submit_gated(const struct add *s, uint64_t gate)
{
	struct vaccel_binding bind[3];
	struct vaccel_submit_after submit;
	int ret;

	add_bindings(s, bind);
	memset(&submit, 0, sizeof(submit));
	submit.queue = s->queue;
	submit.program = s->program;
	submit.bindings = ptr(bind);
	submit.binding_count = 3;
	submit.gate = gate;
	submit.value = 1;
	ret = call(s->fd, VACCEL_IOCTL_SUBMIT_AFTER, &submit);
	CHECK(ret == 0 && submit.event, "SUBMIT_AFTER: %d error %u detail %u",
	      ret, submit.status.error, submit.status.detail);
	return ret ? 0 : submit.event;
}

/* EVENT_WAIT for `event` until the absolute `deadline_ns`; 0 or -errno. */
static inline int event_wait(int fd, uint64_t event, uint64_t deadline_ns,
			     struct vaccel_event_wait *wait)
{
	memset(wait, 0, sizeof(*wait));
	wait->events = ptr(&event);
	wait->count = 1;
	wait->flags = VACCEL_WAIT_ALL;
	wait->timeout_ns = deadline_ns;
	return call(fd, VACCEL_IOCTL_EVENT_WAIT, wait);
}

/* The state of `event` (enum vaccel_event_state), or -errno. */
static inline int event_state(int fd, uint64_t event)
{
	struct vaccel_event_poll poll;
	int ret;

	memset(&poll, 0, sizeof(poll));
	poll.event = event;
	ret = call(fd, VACCEL_IOCTL_EVENT_POLL, &poll);
	return ret ? ret : (int)poll.state;
}

#endif /* VM_ADD_H */
