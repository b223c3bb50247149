// SPDX-License-Identifier: GPL-2.0
/*
 * vm_fastpath.c - ABI 1.4's fast path through /dev/vaccel (RUN and
 * BUFFER_MAP), run inside the VM against vacceld serving the CPU.
 *
 * Raw ioctls on the module's node and mmap() of its tokens; prints one line
 * "VMTEST <step> PASS|FAIL" per step (run-vm-test.sh reads it) and one
 * "vm_fastpath: ..." line per failed check. The run and map steps load the
 * ADD fixture (a [1,4,4,1] + b [1,4,4,4] = c [1,4,4,4], fp32), whose exact
 * result the client computes itself. Steps:
 *   smoke       against tests/vm/mini_server.c, the module alone: RUN's
 *               bindings reach the server; the module's own refusals of
 *               RUN; BUFFER_MAP of mini_server's memfd: its bytes through
 *               the mapping both ways, one token however often it is
 *               mapped, bad offsets, growth by mremap(),
 *               lengths, private mappings and foreign tokens refused, a
 *               refusal passed through, answers naming a read-only file, a
 *               file too small or an unaligned offset failed with EIO, the
 *               mapping alive after close
 *   run MODEL   VACCEL_IOCTL_RUN: exact output bytes over several rounds;
 *               refusals by the module (count, flags, reserved, pointer)
 *               and by the daemon (unknown handles) say why and leave
 *               state 0; a run whose work fails (its deadline passes after
 *               acceptance) ends FAILED with the failure and writes nothing
 *   map MODEL   VACCEL_IOCTL_BUFFER_MAP: Host buffers mapped through the
 *               node; inputs written and the output read through the
 *               mappings, exact bytes; BUFFER_WRITE/READ see the same
 *               pages; the same buffer gives the same token; made-up
 *               offsets, longer lengths, private mappings and another
 *               session's tokens fail with EINVAL; an unknown buffer is
 *               refused; a Device buffer is refused with VACCEL_D_DOMAIN
 *               (where the device has Device memory); a mapping outlives
 *               the session's close
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vaccel_server.h"

static int failures;

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			printf("vm_fastpath: line %d: ", __LINE__);	\
			printf(__VA_ARGS__);				\
			printf("\n");					\
			failures++;					\
		}							\
	} while (0)

#define A_FLOATS 16
#define B_FLOATS 64

/* The ADD fixture loaded in one session. */
struct add {
	int fd;
	uint64_t context, program, queue;
	uint64_t a, b, c;
};

static int report(const char *step)
{
	printf("VMTEST %s %s\n", step, failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}

static int call(int fd, unsigned long cmd, void *args)
{
	return ioctl(fd, cmd, args) ? -errno : 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void *read_whole(const char *path, size_t *bytes)
{
	struct stat st;
	void *data = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 0) {
		data = malloc(st.st_size);
		if (data && read(fd, data, st.st_size) != st.st_size) {
			free(data);
			data = NULL;
		}
		*bytes = st.st_size;
	}
	if (fd >= 0)
		close(fd);
	return data;
}

static uint64_t buffer_alloc(int fd, uint64_t context, uint64_t bytes,
			     uint32_t domain, struct vaccel_buffer_alloc *alloc)
{
	memset(alloc, 0, sizeof(*alloc));
	alloc->context = context;
	alloc->bytes = bytes;
	alloc->domain = domain;
	alloc->usage = VACCEL_USAGE_ALL;
	alloc->access = VACCEL_ACCESS_RW;
	return call(fd, VACCEL_IOCTL_BUFFER_ALLOC, alloc) ? 0 : alloc->buffer;
}

/* A session with the ADD program, a queue and Host buffers a, b, c. */
static int add_prepare(struct add *s, const char *model)
{
	struct vaccel_context_create context = { 0 };
	struct vaccel_program_load load = { 0 };
	struct vaccel_queue_create queue = { 0 };
	struct vaccel_buffer_alloc alloc;
	static const uint64_t slot_bytes[3] = { 64, 256, 256 };
	size_t bytes = 0;
	void *artifact;
	int ret;

	memset(s, 0, sizeof(*s));
	s->fd = open("/dev/vaccel", O_RDWR | O_CLOEXEC);
	CHECK(s->fd >= 0, "open /dev/vaccel: %s", strerror(errno));
	if (s->fd < 0)
		return -1;
	ret = call(s->fd, VACCEL_IOCTL_CONTEXT_CREATE, &context);
	CHECK(ret == 0, "CONTEXT_CREATE: %d", ret);
	s->context = context.context;
	artifact = read_whole(model, &bytes);
	CHECK(artifact != NULL, "cannot read %s", model);
	if (!artifact)
		return -1;
	load.context = s->context;
	load.format = VACCEL_FORMAT_TOSA;
	load.payload = (uint64_t)(uintptr_t)artifact;
	load.payload_bytes = bytes;
	ret = call(s->fd, VACCEL_IOCTL_PROGRAM_LOAD, &load);
	free(artifact);
	CHECK(ret == 0 && load.input_count == 2 && load.output_count == 1,
	      "PROGRAM_LOAD: %d, %u inputs, %u outputs", ret, load.input_count,
	      load.output_count);
	if (ret)
		return -1;
	s->program = load.program;
	for (uint32_t i = 0; i < 3; i++) {
		struct vaccel_program_slot slot = { 0 };

		slot.program = s->program;
		slot.slot = i;
		ret = call(s->fd, VACCEL_IOCTL_PROGRAM_SLOT, &slot);
		CHECK(ret == 0 && slot.bytes == slot_bytes[i],
		      "PROGRAM_SLOT %u: %d, %llu bytes", i, ret,
		      (unsigned long long)slot.bytes);
	}
	queue.context = s->context;
	ret = call(s->fd, VACCEL_IOCTL_QUEUE_CREATE, &queue);
	CHECK(ret == 0, "QUEUE_CREATE: %d", ret);
	s->queue = queue.queue;
	s->a = buffer_alloc(s->fd, s->context, 64, VACCEL_DOMAIN_HOST, &alloc);
	s->b = buffer_alloc(s->fd, s->context, 256, VACCEL_DOMAIN_HOST, &alloc);
	s->c = buffer_alloc(s->fd, s->context, 256, VACCEL_DOMAIN_HOST, &alloc);
	CHECK(s->a && s->b && s->c, "BUFFER_ALLOC of a, b, c");
	return failures ? -1 : 0;
}

/* Round `round`'s inputs and their exact sum (small values: exact fp32). */
static void add_values(int round, float *a, float *b, float *c)
{
	for (int i = 0; i < A_FLOATS; i++)
		a[i] = (float)(round * 3 + i);
	for (int i = 0; i < B_FLOATS; i++) {
		b[i] = 0.5f * (float)i - (float)round;
		c[i] = a[i / 4] + b[i];
	}
}

static void add_bindings(const struct add *s, struct vaccel_binding *bind)
{
	memset(bind, 0, 3 * sizeof(*bind));
	bind[0] = (struct vaccel_binding){ 0, VACCEL_ACCESS_READ, s->a, 0, 64 };
	bind[1] = (struct vaccel_binding){ 1, VACCEL_ACCESS_READ, s->b, 0, 256 };
	bind[2] = (struct vaccel_binding){ 2, VACCEL_ACCESS_WRITE, s->c, 0, 256 };
}

static void run_init(const struct add *s, struct vaccel_run *run,
		     struct vaccel_binding *bind, uint64_t deadline_ns)
{
	memset(run, 0, sizeof(*run));
	run->queue = s->queue;
	run->program = s->program;
	run->bindings = (uint64_t)(uintptr_t)bind;
	run->binding_count = 3;
	run->deadline_ns = deadline_ns;
}

static int transfer(int fd, unsigned long cmd, uint64_t buffer, void *data,
		    uint64_t length)
{
	struct vaccel_buffer_transfer xfer = { 0 };

	xfer.buffer = buffer;
	xfer.length = length;
	xfer.data = (uint64_t)(uintptr_t)data;
	return call(fd, cmd, &xfer);
}

static const struct vaccel_status zero_status;

static uint64_t fnv1a(const void *data, size_t n)
{
	const unsigned char *bytes = data;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= bytes[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* RUN refused: ret, error, detail, arg0 as given; state still 0. */
static void expect_refused(const char *what, int ret, const struct vaccel_run *run,
			   int want_ret, uint32_t error, uint32_t detail,
			   uint64_t arg0)
{
	CHECK(ret == want_ret && run->status.error == error &&
	      run->status.detail == detail && run->status.arg0 == arg0 &&
	      run->state == 0,
	      "%s: ret %d error %u detail %u arg0 %llu state %u (want %d %u %u %llu, state 0)",
	      what, ret, run->status.error, run->status.detail,
	      (unsigned long long)run->status.arg0, run->state, want_ret,
	      error, detail, (unsigned long long)arg0);
}

/* The module's own refusals of RUN: nothing reaches the daemon. */
static void run_module_refusals(const struct add *s)
{
	struct vaccel_binding bind[3];
	struct vaccel_run run;
	int ret;

	add_bindings(s, bind);
	run_init(s, &run, bind, 0);
	run.binding_count = 0;
	ret = call(s->fd, VACCEL_IOCTL_RUN, &run);
	expect_refused("RUN of 0 bindings", ret, &run, -EINVAL,
		       VACCEL_E_INVALID_ARGUMENT, VACCEL_D_BAD_VALUE,
		       offsetof(struct vaccel_run, binding_count));

	run_init(s, &run, bind, 0);
	run.binding_count = VACCEL_MAX_BINDINGS + 1;
	ret = call(s->fd, VACCEL_IOCTL_RUN, &run);
	expect_refused("RUN past the bindings maximum", ret, &run, -EDQUOT,
		       VACCEL_E_RESOURCE_LIMIT, VACCEL_D_LIMIT,
		       VACCEL_MAX_BINDINGS);

	run_init(s, &run, bind, 0);
	run.flags = 4;
	ret = call(s->fd, VACCEL_IOCTL_RUN, &run);
	expect_refused("RUN with unknown flags", ret, &run, -EINVAL,
		       VACCEL_E_INVALID_ARGUMENT, VACCEL_D_UNKNOWN_FLAGS, 4);

	run_init(s, &run, bind, 0);
	run.reserved[1] = 9;
	ret = call(s->fd, VACCEL_IOCTL_RUN, &run);
	expect_refused("RUN with reserved set", ret, &run, -EINVAL,
		       VACCEL_E_INVALID_ARGUMENT, VACCEL_D_RESERVED_NONZERO,
		       offsetof(struct vaccel_run, reserved) + 8);

	run_init(s, &run, bind, 0);
	run.bindings = 16;	/* unmapped */
	ret = call(s->fd, VACCEL_IOCTL_RUN, &run);
	expect_refused("RUN with a bad bindings pointer", ret, &run, -EFAULT,
		       VACCEL_E_INVALID_ARGUMENT, VACCEL_D_BAD_VALUE,
		       offsetof(struct vaccel_run, bindings));
}

/* Refused by the daemon: nothing ran. */
static void run_refusals(const struct add *s)
{
	struct vaccel_binding bind[3];
	struct vaccel_run run;
	int ret;

	run_module_refusals(s);
	add_bindings(s, bind);
	run_init(s, &run, bind, 0);
	bind[1].buffer = s->c + 1000;
	ret = call(s->fd, VACCEL_IOCTL_RUN, &run);
	expect_refused("RUN binding an unknown buffer", ret, &run, -EINVAL,
		       VACCEL_E_INVALID_ARGUMENT, VACCEL_D_UNKNOWN_HANDLE,
		       s->c + 1000);
	CHECK(!memcmp(&run.failure, &zero_status, sizeof(zero_status)),
	      "a refused RUN has a failure (error %u)", run.failure.error);

	add_bindings(s, bind);
	run_init(s, &run, bind, 0);
	run.queue = s->queue + 1000;
	ret = call(s->fd, VACCEL_IOCTL_RUN, &run);
	expect_refused("RUN on an unknown queue", ret, &run, -EINVAL,
		       VACCEL_E_INVALID_ARGUMENT, VACCEL_D_UNKNOWN_HANDLE,
		       s->queue + 1000);
}

/*
 * A run whose work fails: a deadline that passes between the acceptance
 * and the first operator. The margin between the two is not known, so it
 * is searched: a refused run (the deadline passed at the submit) widens
 * it, a completed one narrows it. Returns whether a FAILED run was seen.
 */
static int run_fails(const struct add *s)
{
	float a[A_FLOATS], b[B_FLOATS], c[B_FLOATS], sentinel[B_FLOATS];
	unsigned int refused = 0, completed = 0;
	struct vaccel_binding bind[3];
	struct vaccel_run run;
	uint64_t margin = 1000;
	int ret;

	add_values(7, a, b, c);
	transfer(s->fd, VACCEL_IOCTL_BUFFER_WRITE, s->a, a, sizeof(a));
	transfer(s->fd, VACCEL_IOCTL_BUFFER_WRITE, s->b, b, sizeof(b));
	for (int attempt = 0; attempt < 2000; attempt++) {
		for (int i = 0; i < B_FLOATS; i++)
			sentinel[i] = -1000.0f - (float)attempt;
		transfer(s->fd, VACCEL_IOCTL_BUFFER_WRITE, s->c, sentinel,
			 sizeof(sentinel));
		add_bindings(s, bind);
		run_init(s, &run, bind, now_ns() + margin);
		ret = call(s->fd, VACCEL_IOCTL_RUN, &run);
		if (ret == -ETIME && run.state == 0 &&
		    run.status.error == VACCEL_E_DEADLINE_EXPIRED) {
			refused++;
			margin += margin / 4 + 1000;
			continue;
		}
		CHECK(ret == 0 && run.status.error == VACCEL_OK,
		      "RUN with a deadline: %d error %u detail %u", ret,
		      run.status.error, run.status.detail);
		if (ret)
			return 0;
		if (run.state == VACCEL_EVENT_COMPLETE) {
			completed++;
			margin -= margin / 5;
			continue;
		}
		CHECK(run.state == VACCEL_EVENT_FAILED &&
		      run.failure.error == VACCEL_E_DEADLINE_EXPIRED &&
		      run.failure.detail == VACCEL_D_DEADLINE,
		      "failed RUN: state %u failure error %u detail %u",
		      run.state, run.failure.error, run.failure.detail);
		transfer(s->fd, VACCEL_IOCTL_BUFFER_READ, s->c, c, sizeof(c));
		CHECK(!memcmp(c, sentinel, sizeof(c)),
		      "a RUN that failed wrote its output");
		printf("vm_fastpath: a RUN failed by its deadline (margin %llu ns) after %u refused and %u completed\n",
		       (unsigned long long)margin, refused, completed);
		return 1;
	}
	printf("vm_fastpath: no RUN failed after acceptance in 2000 tries (%u refused, %u completed, margin %llu ns)\n",
	       refused, completed, (unsigned long long)margin);
	return 0;
}

static int step_run(const char *model)
{
	float a[A_FLOATS], b[B_FLOATS], want[B_FLOATS], got[B_FLOATS];
	struct vaccel_binding bind[3];
	struct vaccel_run run;
	struct add s;
	int ret;

	if (add_prepare(&s, model))
		return report("run");
	for (int round = 0; round < 4; round++) {
		add_values(round, a, b, want);
		ret = transfer(s.fd, VACCEL_IOCTL_BUFFER_WRITE, s.a, a, sizeof(a));
		ret |= transfer(s.fd, VACCEL_IOCTL_BUFFER_WRITE, s.b, b, sizeof(b));
		CHECK(ret == 0, "round %d: BUFFER_WRITE", round);
		add_bindings(&s, bind);
		run_init(&s, &run, bind, 0);
		ret = call(s.fd, VACCEL_IOCTL_RUN, &run);
		CHECK(ret == 0 && run.status.error == VACCEL_OK &&
		      run.state == VACCEL_EVENT_COMPLETE &&
		      !memcmp(&run.failure, &zero_status, sizeof(zero_status)),
		      "round %d: RUN %d error %u detail %u state %u failure %u",
		      round, ret, run.status.error, run.status.detail,
		      run.state, run.failure.error);
		CHECK(run.bindings == (uint64_t)(uintptr_t)bind,
		      "round %d: RUN did not give the bindings pointer back",
		      round);
		memset(got, 0, sizeof(got));
		ret = transfer(s.fd, VACCEL_IOCTL_BUFFER_READ, s.c, got,
			       sizeof(got));
		CHECK(ret == 0 && !memcmp(got, want, sizeof(got)),
		      "round %d: output differs (c[0] %g, want %g; c[63] %g, want %g)",
		      round, got[0], want[0], got[63], want[63]);
	}
	run_refusals(&s);
	CHECK(run_fails(&s), "no RUN whose work failed was seen");
	close(s.fd);
	return report("run");
}

static int buffer_map(int fd, uint64_t buffer, struct vaccel_buffer_map *map)
{
	memset(map, 0, sizeof(*map));
	map->buffer = buffer;
	return call(fd, VACCEL_IOCTL_BUFFER_MAP, map);
}

/* Maps `buffer` through the node; NULL on failure. */
static void *map_buffer(int fd, uint64_t buffer, uint64_t bytes,
			uint64_t *token)
{
	struct vaccel_buffer_map map;
	void *at;
	int ret;

	ret = buffer_map(fd, buffer, &map);
	CHECK(ret == 0 && map.status.error == VACCEL_OK &&
	      map.map_bytes == bytes && map.map_offset != 0 &&
	      map.map_offset % 4096 == 0,
	      "BUFFER_MAP %llu: %d error %u detail %u offset %llu bytes %llu",
	      (unsigned long long)buffer, ret, map.status.error,
	      map.status.detail, (unsigned long long)map.map_offset,
	      (unsigned long long)map.map_bytes);
	if (ret)
		return NULL;
	*token = map.map_offset;
	at = mmap(NULL, map.map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		  (off_t)map.map_offset);
	CHECK(at != MAP_FAILED, "mmap of token %llu: %s",
	      (unsigned long long)map.map_offset, strerror(errno));
	return at == MAP_FAILED ? NULL : at;
}

static void map_refusals(const struct add *s, uint64_t token)
{
	struct vaccel_buffer_alloc alloc;
	struct vaccel_buffer_map map;
	uint64_t device;
	void *at;
	int other, ret;

	ret = buffer_map(s->fd, s->c + 1000, &map);
	CHECK(ret == -EINVAL && map.status.detail == VACCEL_D_UNKNOWN_HANDLE &&
	      map.map_offset == 0,
	      "BUFFER_MAP of an unknown buffer: %d detail %u", ret,
	      map.status.detail);
	memset(&map, 0, sizeof(map));
	map.buffer = s->a;
	map.reserved[0] = 1;
	ret = call(s->fd, VACCEL_IOCTL_BUFFER_MAP, &map);
	CHECK(ret == -EINVAL && map.status.detail == VACCEL_D_RESERVED_NONZERO,
	      "BUFFER_MAP with reserved set: %d detail %u", ret,
	      map.status.detail);

	device = buffer_alloc(s->fd, s->context, 256, VACCEL_DOMAIN_DEVICE,
			      &alloc);
	if (!device && alloc.status.error == VACCEL_E_UNSUPPORTED) {
		printf("vm_fastpath: the device has no Device domain: the VACCEL_D_DOMAIN refusal is not exercised here\n");
	} else {
		CHECK(device != 0, "BUFFER_ALLOC in the Device domain: error %u",
		      alloc.status.error);
		ret = buffer_map(s->fd, device, &map);
		CHECK(ret == -ENOEXEC &&
		      map.status.error == VACCEL_E_INCOMPATIBLE &&
		      map.status.detail == VACCEL_D_DOMAIN &&
		      map.status.arg0 == device &&
		      map.status.arg1 == VACCEL_DOMAIN_DEVICE,
		      "BUFFER_MAP of a Device buffer: %d error %u detail %u",
		      ret, map.status.error, map.status.detail);
	}

	errno = 0;
	at = mmap(NULL, 4096, PROT_READ, MAP_SHARED, s->fd, token + 4096 * 1000);
	CHECK(at == MAP_FAILED && errno == EINVAL,
	      "mmap at a made-up offset: %p %s", at, strerror(errno));
	at = mmap(NULL, 4096, PROT_READ, MAP_SHARED, s->fd, 0);
	CHECK(at == MAP_FAILED && errno == EINVAL, "mmap at offset 0: %p %s",
	      at, strerror(errno));
	at = mmap(NULL, 3 * 4096, PROT_READ, MAP_SHARED, s->fd, token);
	CHECK(at == MAP_FAILED && errno == EINVAL,
	      "mmap longer than the buffer: %p %s", at, strerror(errno));
	at = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, s->fd, token);
	CHECK(at == MAP_FAILED && errno == EINVAL,
	      "private mmap of a token: %p %s", at, strerror(errno));
	other = open("/dev/vaccel", O_RDWR | O_CLOEXEC);
	CHECK(other >= 0, "second session: %s", strerror(errno));
	if (other >= 0) {
		at = mmap(NULL, 4096, PROT_READ, MAP_SHARED, other, token);
		CHECK(at == MAP_FAILED && errno == EINVAL,
		      "mmap of another session's token: %p %s", at,
		      strerror(errno));
		close(other);
	}
}

static int step_map(const char *model)
{
	float a[A_FLOATS], b[B_FLOATS], want[B_FLOATS], got[B_FLOATS];
	uint64_t token_a = 0, token_b = 0, token_c = 0, again = 0;
	float *ma, *mb, *mc, *mc2;
	struct vaccel_binding bind[3];
	struct vaccel_run run;
	struct add s;
	int ret;

	if (add_prepare(&s, model))
		return report("map");
	ma = map_buffer(s.fd, s.a, 64, &token_a);
	mb = map_buffer(s.fd, s.b, 256, &token_b);
	mc = map_buffer(s.fd, s.c, 256, &token_c);
	if (!ma || !mb || !mc)
		return report("map");
	CHECK(token_a != token_b && token_b != token_c && token_a != token_c,
	      "tokens %llu %llu %llu are not distinct",
	      (unsigned long long)token_a, (unsigned long long)token_b,
	      (unsigned long long)token_c);
	mc2 = map_buffer(s.fd, s.c, 256, &again);
	CHECK(again == token_c, "the same buffer mapped twice: tokens %llu and %llu",
	      (unsigned long long)token_c, (unsigned long long)again);

	for (int round = 0; round < 3; round++) {
		add_values(round + 10, a, b, want);
		memcpy(ma, a, sizeof(a));
		memcpy(mb, b, sizeof(b));
		memset(mc, 0, sizeof(got));
		add_bindings(&s, bind);
		run_init(&s, &run, bind, 0);
		ret = call(s.fd, VACCEL_IOCTL_RUN, &run);
		CHECK(ret == 0 && run.state == VACCEL_EVENT_COMPLETE,
		      "round %d: RUN on mapped buffers: %d state %u failure %u",
		      round, ret, run.state, run.failure.error);
		CHECK(!memcmp(mc, want, sizeof(want)),
		      "round %d: output through the mapping differs (c[0] %g, want %g)",
		      round, mc[0], want[0]);
		if (mc2)
			CHECK(!memcmp(mc2, want, sizeof(want)),
			      "round %d: the second mapping of c differs", round);
		ret = transfer(s.fd, VACCEL_IOCTL_BUFFER_READ, s.c, got,
			       sizeof(got));
		CHECK(ret == 0 && !memcmp(got, want, sizeof(got)),
		      "round %d: BUFFER_READ differs from the mapping", round);
	}
	/* BUFFER_WRITE lands in the mapped pages. */
	add_values(42, a, b, want);
	ret = transfer(s.fd, VACCEL_IOCTL_BUFFER_WRITE, s.b, b, sizeof(b));
	CHECK(ret == 0 && !memcmp(mb, b, sizeof(b)),
	      "BUFFER_WRITE is not seen through the mapping (%d)", ret);

	map_refusals(&s, token_c);

	/* The mapping holds the buffer's file, not the session. */
	memcpy(got, mc, sizeof(got));
	close(s.fd);
	CHECK(!memcmp(mc, got, sizeof(got)),
	      "the mapping changed when the session closed");
	munmap(ma, 64);
	munmap(mb, 256);
	munmap(mc, 256);
	if (mc2)
		munmap(mc2, 256);
	return report("map");
}

/* mini_server's BUFFER_MAP buffer 1: 5000 bytes, byte i = i * 13 + 3. */
#define SMOKE_MAP_BYTES 5000

/* Bytes 1 .. SMOKE_MAP_BYTES - 2 (the test writes the first and last). */
static int smoke_pattern(const unsigned char *at)
{
	for (size_t i = 1; i < SMOKE_MAP_BYTES - 1; i++)
		if (at[i] != (unsigned char)(i * 13 + 3))
			return 0;
	return 1;
}

static void smoke_map(int fd)
{
	unsigned char *at, *again;
	struct vaccel_buffer_map map;
	uint64_t token = 0;
	void *bad;
	int other, ret;

	at = map_buffer(fd, 1, SMOKE_MAP_BYTES, &token);
	if (!at)
		return;
	CHECK(smoke_pattern(at) && at[0] == 3, "the mapping does not show the memfd's bytes");
	at[0] = 0xee;
	at[SMOKE_MAP_BYTES - 1] = 0xdd;
	/* One token however often: the table does not grow. */
	for (int i = 0; i < 256; i++) {
		ret = buffer_map(fd, 1, &map);
		if (ret || map.map_offset != token) {
			CHECK(0, "BUFFER_MAP %d of the same buffer: %d token %llu (first %llu)",
			      i, ret, (unsigned long long)map.map_offset,
			      (unsigned long long)token);
			break;
		}
	}
	again = mmap(NULL, 2 * 4096, PROT_READ, MAP_SHARED, fd, (off_t)token);
	CHECK(again != MAP_FAILED && again[0] == 0xee &&
	      again[SMOKE_MAP_BYTES - 1] == 0xdd && smoke_pattern(again),
	      "a second mapping does not share the first's pages");
	if (again != MAP_FAILED)
		munmap(again, 2 * 4096);

	bad = mmap(NULL, 3 * 4096, PROT_READ, MAP_SHARED, fd, (off_t)token);
	CHECK(bad == MAP_FAILED && errno == EINVAL,
	      "mmap past the buffer's pages: %p %s", bad, strerror(errno));
	bad = mremap(at, 2 * 4096, 3 * 4096, MREMAP_MAYMOVE);
	CHECK(bad == MAP_FAILED, "mremap grew a mapping past its buffer");
	bad = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, (off_t)(token + 4096));
	CHECK(bad == MAP_FAILED && errno == EINVAL,
	      "mmap at a made-up offset: %p %s", bad, strerror(errno));
	bad = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(bad == MAP_FAILED && errno == EINVAL, "mmap at 0: %p %s", bad,
	      strerror(errno));
	bad = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd,
		   (off_t)token);
	CHECK(bad == MAP_FAILED && errno == EINVAL, "private mmap: %p %s", bad,
	      strerror(errno));
	other = open("/dev/vaccel", O_RDWR | O_CLOEXEC);
	CHECK(other >= 0, "second session: %s", strerror(errno));
	if (other >= 0) {
		bad = mmap(NULL, 4096, PROT_READ, MAP_SHARED, other,
			   (off_t)token);
		CHECK(bad == MAP_FAILED && errno == EINVAL,
		      "mmap of another session's token: %p %s", bad,
		      strerror(errno));
		close(other);
	}

	ret = buffer_map(fd, 3, &map);
	CHECK(ret == -ENOEXEC && map.status.error == VACCEL_E_INCOMPATIBLE &&
	      map.status.detail == VACCEL_D_DOMAIN && map.status.arg0 == 3 &&
	      map.status.arg1 == VACCEL_DOMAIN_DEVICE && map.map_offset == 0,
	      "BUFFER_MAP of a Device buffer: %d error %u detail %u", ret,
	      map.status.error, map.status.detail);
	ret = buffer_map(fd, 7, &map);
	CHECK(ret == -EINVAL && map.status.detail == VACCEL_D_UNKNOWN_HANDLE,
	      "BUFFER_MAP of an unknown buffer: %d detail %u", ret,
	      map.status.detail);
	/* Files the module must refuse: the client gets an I/O error. */
	for (uint64_t buffer = 5; buffer <= 8; buffer++) {
		if (buffer == 7)
			continue;
		ret = buffer_map(fd, buffer, &map);
		CHECK(ret == -EIO && map.status.error == VACCEL_E_EXTERNAL &&
		      map.map_offset == 0,
		      "BUFFER_MAP answered with a bad file (buffer %llu): %d error %u",
		      (unsigned long long)buffer, ret, map.status.error);
	}
	ret = buffer_map(fd, 1, &map);
	CHECK(ret == 0 && map.map_offset == token,
	      "BUFFER_MAP after refused commits: %d token %llu", ret,
	      (unsigned long long)map.map_offset);

	close(fd);
	CHECK(at[0] == 0xee && smoke_pattern(at) &&
	      at[SMOKE_MAP_BYTES - 1] == 0xdd,
	      "the mapping changed when the session closed");
	munmap(at, SMOKE_MAP_BYTES);
}

static int step_smoke(void)
{
	struct vaccel_binding bind[3];
	struct vaccel_run run;
	struct add s;
	int ret;

	memset(&s, 0, sizeof(s));
	s.fd = open("/dev/vaccel", O_RDWR | O_CLOEXEC);
	CHECK(s.fd >= 0, "open /dev/vaccel: %s", strerror(errno));
	if (s.fd < 0)
		return report("smoke-fastpath");
	s.queue = 5;
	s.program = 6;
	s.a = 1;
	s.b = 2;
	s.c = 3;
	add_bindings(&s, bind);
	run_init(&s, &run, bind, 0);
	ret = call(s.fd, VACCEL_IOCTL_RUN, &run);
	CHECK(ret == 0 && run.state == VACCEL_EVENT_COMPLETE &&
	      run.status.arg0 == fnv1a(bind, sizeof(bind)) &&
	      run.status.arg1 == sizeof(bind) &&
	      run.bindings == (uint64_t)(uintptr_t)bind,
	      "RUN through mini_server: %d state %u bytes %llu",
	      ret, run.state, (unsigned long long)run.status.arg1);
	run_module_refusals(&s);
	smoke_map(s.fd);	/* closes the session */
	return report("smoke-fastpath");
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "smoke"))
		return step_smoke();
	if (argc == 3 && !strcmp(argv[1], "run"))
		return step_run(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "map"))
		return step_map(argv[2]);
	fprintf(stderr, "usage: vm_fastpath smoke | run|map MODEL\n");
	return 2;
}
