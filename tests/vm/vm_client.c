// SPDX-License-Identifier: GPL-2.0
/*
 * vm_client.c - the kernel module's smoke-test client, run inside the VM.
 *
 * Drives /dev/vaccel with raw ioctls and prints one line
 * "VMTEST <step> PASS|FAIL" per step it runs; the harness (run-vm-test.sh)
 * reads those lines from the serial log. basic, concurrent, client-kill and
 * daemon-death need tests/vm/mini_server.c behind the module (the module's
 * own smoke steps, "smoke-" in the log); hostile and unprivileged run
 * against either server, and hostile-daemon against vacceld. Steps:
 *   basic              versions, device count, a 1 MiB write and a read
 *                      through the user copy, one daemon at a time
 *   unprivileged       uid 65534 cannot open /dev/vaccel-server
 *   hostile [ROUNDS]   uid 65534: wrong sizes, unknown commands, reserved
 *                      bits, bad pointers, ROUNDS (10000) random ioctls:
 *                      errors only
 *   hostile-daemon ROUNDS
 *                      the same against vacceld, plus foreign and stale
 *                      handles (refused as unknown, the owner's objects
 *                      untouched)
 *   concurrent         8 clients x 200 rounds of version, write, read
 *   client-kill        clients killed while queued and while delivered;
 *                      the others and the server carry on
 *   open-only          opens one session and exits (no line printed)
 *   daemon-death PID SERVER LOG
 *                      kill -9 of the server while a client waits: -ENODEV
 *                      (PEER_GONE, not its 30 s deadline; the delay after
 *                      the kill is printed, not checked), old sessions
 *                      dead, a restarted server serves new opens
 *   payload-remap LOG DIR
 *                      a BUFFER_WRITE from anonymous memory passes the
 *                      ioctl's check; while mini_server holds it (LOG: its
 *                      log says "holding a write") the client maps a file
 *                      of DIR (a ramfs) over the range; the copy must
 *                      refuse it (mini_server's pread: EOPNOTSUPP) and not
 *                      read the file's bytes
 *   session-cap        the module's per-user cap on sessions (default 64,
 *                      max_sessions_per_user): uid 4001 opens 64, its 65th
 *                      open fails with EDQUOT, uid 4002 still opens; once
 *                      4001 closes one it opens one again (and no more);
 *                      debugfs `users` counts each uid's sessions exactly
 *                      and forgets a uid that holds none
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vaccel_server.h"

static int failures;

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			printf("vm_client: line %d: ", __LINE__);	\
			printf(__VA_ARGS__);				\
			printf("\n");					\
			failures++;					\
		}							\
	} while (0)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* ioctl() as 0 or -errno. */
static int call(int fd, unsigned long cmd, void *args)
{
	return ioctl(fd, cmd, args) ? -errno : 0;
}

static int session_open(void)
{
	return open("/dev/vaccel", O_RDWR | O_CLOEXEC);
}

static uint64_t fnv1a(const unsigned char *bytes, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= bytes[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static const char *step_name;	/* overrides the step's own name */

static int report(const char *step)
{
	if (step_name)
		step = step_name;
	printf("VMTEST %s %s\n", step, failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}

static int step_basic(void)
{
	struct vaccel_get_version version = { 0 };
	struct vaccel_device_count count = { 0 };
	struct vaccel_device_tosa tosa;
	struct vaccel_buffer_transfer xfer;
	size_t write_bytes = (1 << 20) + 123, read_bytes = 100000;
	unsigned char *data;
	int fd, ret, second;

	fd = session_open();
	CHECK(fd >= 0, "open /dev/vaccel: %s", strerror(errno));
	if (fd < 0)
		return report("basic");
	ret = call(fd, VACCEL_IOCTL_GET_VERSION, &version);
	CHECK(ret == 0 && version.major == VACCEL_ABI_MAJOR &&
	      version.minor == VACCEL_ABI_MINOR,
	      "GET_VERSION: %d %u.%u", ret, version.major, version.minor);
	ret = call(fd, VACCEL_IOCTL_DEVICE_COUNT, &count);
	CHECK(ret == 0 && count.count == 1, "DEVICE_COUNT: %d %u", ret,
	      count.count);

	/* DEVICE_TOSA: 1144 bytes each way; mini_server's descriptor. */
	memset(&tosa, 0, sizeof(tosa));
	tosa.index = 0;
	ret = call(fd, VACCEL_IOCTL_DEVICE_TOSA, &tosa);
	CHECK(ret == 0 && tosa.descriptor.descriptor_count == 1 &&
	      tosa.descriptor.target.major == 1 &&
	      tosa.descriptor.operators[15].present == 1 &&
	      tosa.descriptor.operators[15].dtypes == (1U << 7) &&
	      tosa.descriptor.operators[VACCEL_TOSA_MAX_OPS - 1].present == 1,
	      "DEVICE_TOSA: %d count %u", ret,
	      tosa.descriptor.descriptor_count);
	memset(&tosa, 0, sizeof(tosa));
	tosa.reserved = 1;	/* refused by the module itself */
	ret = call(fd, VACCEL_IOCTL_DEVICE_TOSA, &tosa);
	CHECK(ret == -EINVAL &&
	      tosa.status.detail == VACCEL_D_RESERVED_NONZERO &&
	      tosa.status.arg0 == offsetof(struct vaccel_device_tosa, reserved),
	      "DEVICE_TOSA with reserved set: %d detail %u arg0 %llu", ret,
	      tosa.status.detail, (unsigned long long)tosa.status.arg0);

	/* Odd start and length: the pinned range crosses page edges. */
	data = malloc(write_bytes + 7);
	for (size_t i = 0; i < write_bytes; i++)
		data[7 + i] = (unsigned char)(i * 31 + 5);
	memset(&xfer, 0, sizeof(xfer));
	xfer.buffer = 1;
	xfer.length = write_bytes;
	xfer.data = (uint64_t)(uintptr_t)(data + 7);
	ret = call(fd, VACCEL_IOCTL_BUFFER_WRITE, &xfer);
	CHECK(ret == 0 && xfer.status.arg0 == fnv1a(data + 7, write_bytes) &&
	      xfer.status.arg1 == write_bytes,
	      "BUFFER_WRITE: %d sum %llx bytes %llu", ret,
	      (unsigned long long)xfer.status.arg0,
	      (unsigned long long)xfer.status.arg1);
	CHECK(xfer.data == (uint64_t)(uintptr_t)(data + 7),
	      "BUFFER_WRITE: the data pointer was not given back");

	memset(data, 0, write_bytes + 7);
	memset(&xfer, 0, sizeof(xfer));
	xfer.buffer = 1;
	xfer.length = read_bytes;
	xfer.data = (uint64_t)(uintptr_t)(data + 3);
	ret = call(fd, VACCEL_IOCTL_BUFFER_READ, &xfer);
	CHECK(ret == 0, "BUFFER_READ: %d", ret);
	for (size_t i = 0; i < read_bytes && ret == 0; i++) {
		if (data[3 + i] != (unsigned char)(i * 7 + 1)) {
			CHECK(0, "BUFFER_READ: byte %zu is %u", i, data[3 + i]);
			break;
		}
	}
	CHECK(data[2] == 0 && data[3 + read_bytes] == 0,
	      "BUFFER_READ wrote outside its range");
	free(data);

	second = open("/dev/vaccel-server", O_RDWR);
	CHECK(second < 0 && errno == EBUSY,
	      "a second daemon attached (fd %d, %s)", second, strerror(errno));
	if (second >= 0)
		close(second);
	close(fd);
	return report("basic");
}

static void drop_privileges(void)
{
	if (setgid(65534) || setuid(65534)) {
		printf("vm_client: cannot become uid 65534: %s\n",
		       strerror(errno));
		exit(1);
	}
}

static int step_unprivileged(void)
{
	int fd;

	drop_privileges();
	fd = open("/dev/vaccel-server", O_RDWR);
	CHECK(fd < 0 && (errno == EACCES || errno == EPERM),
	      "uid 65534 opened /dev/vaccel-server (fd %d, %s)", fd,
	      strerror(errno));
	fd = session_open();
	CHECK(fd >= 0, "uid 65534 cannot open /dev/vaccel: %s",
	      strerror(errno));
	if (fd >= 0)
		close(fd);
	return report("unprivileged");
}

/* The contract's own ioctl numbers, for the random round. */
static const unsigned long known_cmds[] = {
	VACCEL_IOCTL_GET_VERSION, VACCEL_IOCTL_DEVICE_COUNT,
	VACCEL_IOCTL_DEVICE_QUERY, VACCEL_IOCTL_CONTEXT_CREATE,
	VACCEL_IOCTL_CONTEXT_DESTROY, VACCEL_IOCTL_BUFFER_ALLOC,
	VACCEL_IOCTL_BUFFER_FREE, VACCEL_IOCTL_BUFFER_WRITE,
	VACCEL_IOCTL_BUFFER_READ, VACCEL_IOCTL_PROGRAM_LOAD,
	VACCEL_IOCTL_PROGRAM_UNLOAD, VACCEL_IOCTL_PROGRAM_SLOT,
	VACCEL_IOCTL_QUEUE_CREATE, VACCEL_IOCTL_QUEUE_DESTROY,
	VACCEL_IOCTL_SUBMIT, VACCEL_IOCTL_EVENT_POLL,
	VACCEL_IOCTL_EVENT_WAIT, VACCEL_IOCTL_EVENT_DESTROY,
	VACCEL_IOCTL_CONTEXT_LIMITS, VACCEL_IOCTL_GATE_CREATE,
	VACCEL_IOCTL_GATE_RAISE, VACCEL_IOCTL_GATE_VALUE,
	VACCEL_IOCTL_GATE_DESTROY, VACCEL_IOCTL_SUBMIT_AFTER,
	VACCEL_IOCTL_LAUNCH, VACCEL_IOCTL_DEVICE_TOSA,
};

#define KNOWN_CMDS (sizeof(known_cmds) / sizeof(known_cmds[0]))

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void hostile_fixed(int fd)
{
	struct vaccel_get_version version;
	struct vaccel_buffer_transfer xfer;
	struct vaccel_submit submit;
	struct vaccel_event_wait wait;
	struct vaccel_program_load load;
	char small[8] = { 0 };
	int ret;

	/* Wrong size for a known number: -EINVAL; unknown numbers: -ENOTTY. */
	ret = call(fd, _IOWR(VACCEL_IOCTL_BASE, VACCEL_OP_GET_VERSION,
			     char[8]), small);
	CHECK(ret == -EINVAL, "wrong size: %d", ret);
	ret = call(fd, _IOWR(VACCEL_IOCTL_BASE, 0x50, struct vaccel_status),
		   small);
	CHECK(ret == -ENOTTY, "unknown nr: %d", ret);
	ret = call(fd, _IOWR('x', 0, struct vaccel_get_version), &version);
	CHECK(ret == -ENOTTY, "foreign type: %d", ret);
	ret = call(fd, _IOR(VACCEL_IOCTL_BASE, VACCEL_OP_GET_VERSION,
			    struct vaccel_get_version), &version);
	CHECK(ret == -ENOTTY, "wrong direction: %d", ret);

	/* Status not zero on entry. */
	memset(&version, 0, sizeof(version));
	version.status.arg1 = 1;
	ret = call(fd, VACCEL_IOCTL_GET_VERSION, &version);
	CHECK(ret == -EINVAL && version.status.error ==
	      VACCEL_E_INVALID_ARGUMENT && version.status.detail ==
	      VACCEL_D_RESERVED_NONZERO && version.status.arg0 ==
	      offsetof(struct vaccel_status, arg1),
	      "status not zero: %d detail %u at %llu", ret,
	      version.status.detail, (unsigned long long)version.status.arg0);

	/* Reserved bytes. */
	memset(&version, 0, sizeof(version));
	version.reserved[1] = 1ULL << 40;
	ret = call(fd, VACCEL_IOCTL_GET_VERSION, &version);
	CHECK(ret == -EINVAL && version.status.detail ==
	      VACCEL_D_RESERVED_NONZERO && version.status.arg0 ==
	      offsetof(struct vaccel_get_version, reserved) + 8 + 5,
	      "reserved: %d detail %u at %llu", ret, version.status.detail,
	      (unsigned long long)version.status.arg0);

	/* Unknown flags. */
	memset(&xfer, 0, sizeof(xfer));
	xfer.length = 16;
	xfer.data = (uint64_t)(uintptr_t)small;
	xfer.flags = 0x80;
	ret = call(fd, VACCEL_IOCTL_BUFFER_WRITE, &xfer);
	CHECK(ret == -EINVAL && xfer.status.detail == VACCEL_D_UNKNOWN_FLAGS &&
	      xfer.status.arg0 == 0x80, "flags: %d detail %u", ret,
	      xfer.status.detail);
	memset(&wait, 0, sizeof(wait));
	wait.count = 1;
	wait.flags = VACCEL_WAIT_ALL | 2;
	ret = call(fd, VACCEL_IOCTL_EVENT_WAIT, &wait);
	CHECK(ret == -EINVAL && wait.status.arg0 == 2, "wait flags: %d", ret);

	/* Bad pointers: the struct, then the payload. */
	ret = call(fd, VACCEL_IOCTL_GET_VERSION, NULL);
	CHECK(ret == -EFAULT, "NULL struct: %d", ret);
	ret = call(fd, VACCEL_IOCTL_GET_VERSION, (void *)0xffff800000000000ULL);
	CHECK(ret == -EFAULT, "kernel address struct: %d", ret);
	memset(&xfer, 0, sizeof(xfer));
	xfer.length = 4096;
	xfer.data = 0xffff888000000000ULL;
	ret = call(fd, VACCEL_IOCTL_BUFFER_WRITE, &xfer);
	CHECK(ret == -EFAULT && xfer.status.detail == VACCEL_D_BAD_VALUE &&
	      xfer.status.arg0 == offsetof(struct vaccel_buffer_transfer, data),
	      "kernel data pointer: %d", ret);
	memset(&xfer, 0, sizeof(xfer));
	xfer.length = 1 << 20;
	xfer.data = 0x1000;	/* unmapped */
	ret = call(fd, VACCEL_IOCTL_BUFFER_READ, &xfer);
	CHECK(ret == -EFAULT, "unmapped read destination: %d", ret);
	memset(&load, 0, sizeof(load));
	load.payload_bytes = (1ULL << 30) + 1;
	load.payload = (uint64_t)(uintptr_t)small;
	ret = call(fd, VACCEL_IOCTL_PROGRAM_LOAD, &load);
	CHECK(ret == -EINVAL && load.status.detail == VACCEL_D_BAD_SIZE,
	      "payload cap: %d", ret);

	/* Counts. */
	memset(&submit, 0, sizeof(submit));
	submit.binding_count = VACCEL_MAX_BINDINGS + 1;
	ret = call(fd, VACCEL_IOCTL_SUBMIT, &submit);
	CHECK(ret == -EDQUOT && submit.status.limit == VACCEL_LIMIT_BINDINGS,
	      "bindings: %d", ret);
	memset(&submit, 0, sizeof(submit));
	ret = call(fd, VACCEL_IOCTL_SUBMIT, &submit);
	CHECK(ret == -EINVAL && submit.status.detail == VACCEL_D_BAD_VALUE,
	      "no bindings: %d", ret);
	memset(&submit, 0, sizeof(submit));
	submit.binding_count = 2;
	submit.bindings = 8;
	ret = call(fd, VACCEL_IOCTL_SUBMIT, &submit);
	CHECK(ret == -EFAULT, "bad bindings pointer: %d", ret);
	memset(&wait, 0, sizeof(wait));
	wait.count = VACCEL_MAX_WAIT_EVENTS + 1;
	ret = call(fd, VACCEL_IOCTL_EVENT_WAIT, &wait);
	CHECK(ret == -EINVAL && wait.status.detail == VACCEL_D_BAD_VALUE,
	      "wait count: %d", ret);
}

/* `rounds` ioctls of random numbers and contents. Only errors may follow. */
static void hostile_random(int fd, int rounds)
{
	static unsigned char args[4096] __attribute__((aligned(8)));
	static unsigned char scratch[8192];
	unsigned int answered = 0, refused = 0;

	for (int round = 0; round < rounds; round++) {
		unsigned long cmd;
		size_t size;
		int ret;

		switch (rng() % 4) {
		case 0:	/* anything in the vaccel type */
			cmd = _IOC(rng() % 4, VACCEL_IOCTL_BASE, rng() % 0x40,
				   rng() % 1024);
			break;
		case 1:	/* anything at all */
			cmd = (unsigned long)rng();
			break;
		default: /* a real command */
			cmd = known_cmds[rng() % KNOWN_CMDS];
			break;
		}
		size = _IOC_SIZE(cmd);
		for (size_t i = 0; i < sizeof(args); i += 8) {
			uint64_t v = rng();

			memcpy(args + i, &v, 8);
		}
		if (rng() % 2) {
			/* Mostly well formed: zero status, small values. */
			memset(args, 0, sizeof(struct vaccel_status));
			for (size_t i = 32; i + 8 <= size && i < sizeof(args);
			     i += 8) {
				uint64_t v = rng();

				switch (v % 5) {
				case 0:
					v = 0;
					break;
				case 1:
					v = (v >> 8) % 70;
					break;
				case 2:
					v = (uint64_t)(uintptr_t)scratch +
					    (v >> 8) % 4096;
					break;
				default:
					break;
				}
				memcpy(args + i, &v, 8);
			}
			if (cmd == VACCEL_IOCTL_EVENT_WAIT) {
				struct vaccel_event_wait *w = (void *)args;

				w->timeout_ns = 0;	/* answered at once */
			}
			if (cmd == VACCEL_IOCTL_BUFFER_READ ||
			    cmd == VACCEL_IOCTL_BUFFER_WRITE) {
				struct vaccel_buffer_transfer *t = (void *)args;

				t->length %= 4096;
			}
		}
		ret = ioctl(fd, cmd, args);
		if (ret == 0)
			answered++;
		else
			refused++;
		CHECK(ret == 0 || (ret == -1 && errno > 0),
		      "random ioctl %#lx returned %d", cmd, ret);
	}
	printf("vm_client: random ioctls: %u succeeded, %u refused\n",
	       answered, refused);
}

/* A context with one 16-byte buffer in session `fd`; 0 on failure. */
static uint64_t owned_buffer(int fd)
{
	struct vaccel_context_create context = { 0 };
	struct vaccel_buffer_alloc alloc = { 0 };
	int ret;

	ret = call(fd, VACCEL_IOCTL_CONTEXT_CREATE, &context);
	CHECK(ret == 0, "CONTEXT_CREATE: %d", ret);
	alloc.context = context.context;
	alloc.bytes = 16;
	alloc.domain = VACCEL_DOMAIN_HOST;
	alloc.usage = VACCEL_USAGE_ALL;
	alloc.access = VACCEL_ACCESS_RW;
	ret = call(fd, VACCEL_IOCTL_BUFFER_ALLOC, &alloc);
	CHECK(ret == 0 && alloc.buffer != 0, "BUFFER_ALLOC: %d", ret);
	return ret == 0 ? alloc.buffer : 0;
}

/* A transfer of 16 bytes at `data` on `buffer`; 0 or -errno. */
static int transfer(int fd, unsigned long cmd, uint64_t buffer, void *data,
		    struct vaccel_buffer_transfer *xfer)
{
	memset(xfer, 0, sizeof(*xfer));
	xfer->buffer = buffer;
	xfer->length = 16;
	xfer->data = (uint64_t)(uintptr_t)data;
	return call(fd, cmd, xfer);
}

/* A handle of another session, and one already freed: both unknown. */
static void hostile_handles(int owner)
{
	unsigned char bytes[16], back[16];
	struct vaccel_buffer_transfer xfer;
	struct vaccel_handle_release release;
	uint64_t mine, freed;
	int other, ret;

	for (int i = 0; i < 16; i++)
		bytes[i] = (unsigned char)(0xa0 + i);
	mine = owned_buffer(owner);
	freed = owned_buffer(owner);
	ret = transfer(owner, VACCEL_IOCTL_BUFFER_WRITE, mine, bytes, &xfer);
	CHECK(ret == 0, "owner's write: %d", ret);

	other = session_open();
	CHECK(other >= 0, "second session: %s", strerror(errno));
	if (other < 0)
		return;
	ret = transfer(other, VACCEL_IOCTL_BUFFER_READ, mine, back, &xfer);
	CHECK(ret == -EINVAL && xfer.status.detail == VACCEL_D_UNKNOWN_HANDLE &&
	      xfer.status.arg0 == mine,
	      "foreign read: %d detail %u", ret, xfer.status.detail);
	memset(&release, 0, sizeof(release));
	release.handle = mine;
	ret = call(other, VACCEL_IOCTL_BUFFER_FREE, &release);
	CHECK(ret == -EINVAL && release.status.detail == VACCEL_D_UNKNOWN_HANDLE,
	      "foreign free: %d detail %u", ret, release.status.detail);
	close(other);

	memset(&release, 0, sizeof(release));
	release.handle = freed;
	ret = call(owner, VACCEL_IOCTL_BUFFER_FREE, &release);
	CHECK(ret == 0, "free: %d", ret);
	memset(&release, 0, sizeof(release));
	release.handle = freed;
	ret = call(owner, VACCEL_IOCTL_BUFFER_FREE, &release);
	CHECK(ret == -EINVAL && release.status.detail == VACCEL_D_UNKNOWN_HANDLE &&
	      release.status.arg0 == freed,
	      "stale free: %d detail %u", ret, release.status.detail);
	ret = transfer(owner, VACCEL_IOCTL_BUFFER_WRITE, freed, bytes, &xfer);
	CHECK(ret == -EINVAL && xfer.status.detail == VACCEL_D_UNKNOWN_HANDLE,
	      "stale write: %d detail %u", ret, xfer.status.detail);

	memset(back, 0, sizeof(back));
	ret = transfer(owner, VACCEL_IOCTL_BUFFER_READ, mine, back, &xfer);
	CHECK(ret == 0 && !memcmp(back, bytes, sizeof(bytes)),
	      "owner's buffer after the foreign calls: %d", ret);
}

static int step_hostile(int rounds, int daemon)
{
	struct vaccel_get_version version = { 0 };
	int fd, ret;

	drop_privileges();
	fd = session_open();
	CHECK(fd >= 0, "open: %s", strerror(errno));
	if (fd < 0)
		return report("hostile");
	hostile_fixed(fd);
	if (daemon)
		hostile_handles(fd);
	hostile_random(fd, rounds);
	ret = call(fd, VACCEL_IOCTL_GET_VERSION, &version);
	CHECK(ret == 0 && version.major == VACCEL_ABI_MAJOR, "serving after: %d", ret);
	close(fd);
	return report("hostile");
}

/* A child that opens a session, says so on `ready`, and waits. */
static pid_t waiter_start(uint64_t deadline_ns, int expect)
{
	int pipefd[2];
	pid_t pid;
	char byte;

	if (pipe(pipefd))
		return -1;
	pid = fork();
	if (pid == 0) {
		struct vaccel_event_wait wait = { 0 };
		uint64_t handle = 1;
		int fd, ret;

		close(pipefd[0]);
		if (write(pipefd[1], "r", 1) != 1)
			_exit(2);
		fd = session_open();	/* queued while every slot is held */
		if (fd < 0)
			_exit(2);
		wait.events = (uint64_t)(uintptr_t)&handle;
		wait.count = 1;
		wait.timeout_ns = deadline_ns;
		ret = call(fd, VACCEL_IOCTL_EVENT_WAIT, &wait);
		if (ret != expect) {
			printf("vm_client: waiter %d: %d, wanted %d\n",
			       getpid(), ret, expect);
			_exit(1);
		}
		if (expect == -ENODEV) {
			struct vaccel_get_version version = { 0 };

			if (wait.status.error != VACCEL_E_DEVICE_LOST ||
			    wait.status.detail != VACCEL_D_PEER_GONE)
				_exit(3);
			/* The session stays dead: at once -ENODEV again. */
			if (call(fd, VACCEL_IOCTL_GET_VERSION, &version) !=
			    -ENODEV)
				_exit(4);
		}
		_exit(0);
	}
	close(pipefd[1]);
	if (read(pipefd[0], &byte, 1) != 1)
		pid = -1;
	close(pipefd[0]);
	return pid;
}

static int step_client_kill(void)
{
	struct vaccel_get_version version = { 0 };
	uint64_t deadline = now_ns() + 15000000000ULL;
	pid_t waiters[10];
	int status, fd, ret;

	/* 8 slots: waiters 0..7 are delivered, 8 and 9 stay queued. */
	for (int i = 0; i < 10; i++) {
		waiters[i] = waiter_start(deadline, -ETIME);
		CHECK(waiters[i] > 0, "fork");
		sleep_ms(50);
	}
	sleep_ms(300);
	/* Still waiting, all of them: the kills find them in their waits. */
	for (int i = 0; i < 10; i++)
		CHECK(waitpid(waiters[i], &status, WNOHANG) == 0,
		      "waiter %d ended before the kills (status %#x)", i, status);
	kill(waiters[9], SIGKILL);	/* queued */
	kill(waiters[2], SIGKILL);	/* delivered */
	kill(waiters[5], SIGKILL);	/* delivered */
	for (int i = 0; i < 10; i++) {
		if (waitpid(waiters[i], &status, 0) != waiters[i])
			CHECK(0, "waitpid");
		else if (i == 2 || i == 5 || i == 9)
			CHECK(WIFSIGNALED(status), "waiter %d not killed: %#x",
			      i, status);
		else
			CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			      "waiter %d: status %#x", i, status);
	}
	fd = session_open();
	CHECK(fd >= 0, "open after kills: %s", strerror(errno));
	ret = call(fd, VACCEL_IOCTL_GET_VERSION, &version);
	CHECK(ret == 0, "serving after kills: %d", ret);
	close(fd);
	return report("client-kill");
}

/* One client's share of the concurrent step; returns failures. */
static int concurrent_client(unsigned int id)
{
	static unsigned char data[65536 + 16];
	struct vaccel_get_version version;
	struct vaccel_buffer_transfer xfer;
	int fd = session_open(), bad = 0;

	if (fd < 0)
		return 1;
	rng_state ^= (uint64_t)id * 0x100000001b3ULL + 1;
	for (int round = 0; round < 200 && !bad; round++) {
		size_t bytes = 1 + rng() % 65536, at = rng() % 16;

		memset(&version, 0, sizeof(version));
		if (call(fd, VACCEL_IOCTL_GET_VERSION, &version) ||
		    version.major != VACCEL_ABI_MAJOR)
			bad++;
		for (size_t i = 0; i < bytes; i++)
			data[at + i] = (unsigned char)(i ^ id ^ round);
		memset(&xfer, 0, sizeof(xfer));
		xfer.length = bytes;
		xfer.data = (uint64_t)(uintptr_t)(data + at);
		if (call(fd, VACCEL_IOCTL_BUFFER_WRITE, &xfer) ||
		    xfer.status.arg0 != fnv1a(data + at, bytes))
			bad++;
		memset(&xfer, 0, sizeof(xfer));
		xfer.length = bytes;
		xfer.data = (uint64_t)(uintptr_t)(data + at);
		if (call(fd, VACCEL_IOCTL_BUFFER_READ, &xfer))
			bad++;
		for (size_t i = 0; i < bytes && !bad; i++)
			if (data[at + i] != (unsigned char)(i * 7 + 1))
				bad++;
	}
	close(fd);
	return bad;
}

/* 8 clients x 200 rounds of version, write and read, all checked. */
static int step_concurrent(void)
{
	pid_t children[8];
	int status;

	for (unsigned int i = 0; i < 8; i++) {
		children[i] = fork();
		if (children[i] == 0)
			_exit(concurrent_client(i) ? 1 : 0);
		CHECK(children[i] > 0, "fork");
	}
	for (unsigned int i = 0; i < 8; i++) {
		if (children[i] <= 0)
			continue;
		waitpid(children[i], &status, 0);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "client %u: status %#x", i, status);
	}
	return report("concurrent");
}

static pid_t server_start(const char *path, const char *log)
{
	pid_t pid = fork();

	if (pid == 0) {
		int out = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);

		if (out >= 0) {
			dup2(out, 1);
			dup2(out, 2);
		}
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static int step_daemon_death(pid_t server, const char *path, const char *log)
{
	struct vaccel_get_version version = { 0 };
	uint64_t killed, returned;
	int idle, fd, status, ret;
	pid_t waiter, restarted;

	idle = session_open();
	CHECK(idle >= 0, "open: %s", strerror(errno));
	waiter = waiter_start(now_ns() + 30000000000ULL, -ENODEV);
	CHECK(waiter > 0, "fork");
	sleep_ms(300);

	kill(server, SIGKILL);
	killed = now_ns();
	waitpid(waiter, &status, 0);
	returned = now_ns();
	/* Exit 0: -ENODEV with PEER_GONE, so the loss ended the wait. */
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "waiter: status %#x", status);
	printf("vm_client: waiter returned %llu ms after the kill\n",
	       (unsigned long long)((returned - killed) / 1000000));
	waitpid(server, &status, 0);

	ret = call(idle, VACCEL_IOCTL_GET_VERSION, &version);
	CHECK(ret == -ENODEV && version.status.error == VACCEL_E_DEVICE_LOST,
	      "old session: %d", ret);
	fd = session_open();
	CHECK(fd < 0 && errno == ENODEV, "open with no daemon: %d %s", fd,
	      strerror(errno));
	if (fd >= 0)
		close(fd);

	restarted = server_start(path, log);
	for (int i = 0; i < 100; i++) {
		fd = session_open();
		if (fd >= 0)
			break;
		sleep_ms(50);
	}
	CHECK(fd >= 0, "open after restart: %s", strerror(errno));
	memset(&version, 0, sizeof(version));
	ret = fd >= 0 ? call(fd, VACCEL_IOCTL_GET_VERSION, &version) : -1;
	CHECK(ret == 0 && version.major == VACCEL_ABI_MAJOR, "new session: %d", ret);
	memset(&version, 0, sizeof(version));
	ret = call(idle, VACCEL_IOCTL_GET_VERSION, &version);
	CHECK(ret == -ENODEV, "old session under the new daemon: %d", ret);
	if (fd >= 0)
		close(fd);
	close(idle);

	kill(restarted, SIGKILL);
	waitpid(restarted, &status, 0);
	return report("daemon-death");
}

#define REMAP_BYTES	(16 * 4096)

struct held_write {
	int fd;
	unsigned char *data;
	struct vaccel_buffer_transfer xfer;
	int ret;
};

static void *held_write_main(void *arg)
{
	struct held_write *w = arg;

	memset(&w->xfer, 0, sizeof(w->xfer));
	w->xfer.buffer = 9;	/* mini_server's HELD_BUFFER */
	w->xfer.length = REMAP_BYTES;
	w->xfer.data = (uint64_t)(uintptr_t)w->data;
	w->ret = call(w->fd, VACCEL_IOCTL_BUFFER_WRITE, &w->xfer);
	return NULL;
}

/* Whether `path` holds a line containing `text` (60 s at most). */
static int log_shows(const char *path, const char *text)
{
	char line[512];

	for (int tries = 0; tries < 6000; tries++) {
		FILE *file = fopen(path, "r");

		while (file && fgets(line, sizeof(line), file)) {
			if (strstr(line, text)) {
				fclose(file);
				return 1;
			}
		}
		if (file)
			fclose(file);
		sleep_ms(10);
	}
	return 0;
}

static int step_payload_remap(const char *log, const char *dir)
{
	unsigned char page[4096];
	struct held_write w = { 0 };
	pthread_t thread;
	char path[512];
	void *remapped;
	int file, release;

	snprintf(path, sizeof(path), "%s/vm-remap", dir);
	file = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	memset(page, 0xa5, sizeof(page));
	for (int i = 0; file >= 0 && i < REMAP_BYTES / 4096; i++)
		CHECK(write(file, page, sizeof(page)) == sizeof(page),
		      "cannot write %s", path);
	w.fd = session_open();
	w.data = mmap(NULL, REMAP_BYTES, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(file >= 0 && w.fd >= 0 && w.data != MAP_FAILED,
	      "setup: %s", strerror(errno));
	if (failures)
		return report("payload-remap");
	memset(w.data, 0x11, REMAP_BYTES);
	CHECK(pthread_create(&thread, NULL, held_write_main, &w) == 0,
	      "pthread_create");
	CHECK(log_shows(log, "mini_server: holding a write"),
	      "mini_server never held the write");
	/* The ioctl's check passed; now a file lies under the payload. */
	remapped = mmap(w.data, REMAP_BYTES, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_FIXED, file, 0);
	CHECK(remapped == w.data, "MAP_FIXED of %s: %s", path, strerror(errno));
	close(file);
	release = open("/tmp/release-write", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	CHECK(release >= 0, "cannot release the held write: %s", strerror(errno));
	if (release >= 0)
		close(release);
	pthread_join(thread, NULL);
	CHECK(w.ret == -EIO && w.xfer.status.error == VACCEL_E_EXTERNAL &&
	      w.xfer.status.arg1 == EOPNOTSUPP,
	      "a write whose range became a ramfs file after its check: %d (error %u arg1 %llu), not the copy refused with EOPNOTSUPP",
	      w.ret, w.xfer.status.error,
	      (unsigned long long)w.xfer.status.arg1);
	close(w.fd);
	return report("payload-remap");
}

#define CAP_UID		4001
#define OTHER_UID	4002
#define USERS_FILE	"/sys/kernel/debug/vaccel/users"
#define CAP_PARAM	"/sys/module/vaccel/parameters/max_sessions_per_user"

/* A number in a small file, or -1. */
static long file_number(const char *path)
{
	FILE *file = fopen(path, "r");
	long value = -1;

	if (file) {
		if (fscanf(file, "%ld", &value) != 1)
			value = -1;
		fclose(file);
	}
	return value;
}

/* The sessions debugfs `users` counts for `uid` (0 if no line); -1 if unreadable. */
static long user_sessions(unsigned int uid)
{
	FILE *file = fopen(USERS_FILE, "r");
	unsigned int line_uid;
	long sessions = 0, count;
	char line[128];

	if (!file)
		return -1;
	while (fgets(line, sizeof(line), file))
		if (sscanf(line, "uid %u sessions %ld", &line_uid, &count) == 2 &&
		    line_uid == uid)
			sessions = count;
	fclose(file);
	return sessions;
}

/* open() of /dev/vaccel as effective uid `uid` (gid 65534, the node's). */
static int open_as(unsigned int uid, int *error)
{
	int fd;

	if (setegid(65534) || seteuid(uid)) {
		printf("vm_client: cannot become uid %u: %s\n", uid,
		       strerror(errno));
		exit(1);
	}
	fd = open("/dev/vaccel", O_RDWR | O_CLOEXEC);
	*error = fd < 0 ? errno : 0;
	if (seteuid(0) || setegid(0)) {
		printf("vm_client: cannot become root again: %s\n",
		       strerror(errno));
		exit(1);
	}
	return fd;
}

static int step_session_cap(void)
{
	long cap = file_number(CAP_PARAM);
	int fds[64], other, again, error;
	long held;

	CHECK(cap == 64, "%s reads %ld, not the default 64", CAP_PARAM, cap);
	if (cap != 64)
		return report("session-cap");
	CHECK(user_sessions(CAP_UID) == 0 && user_sessions(OTHER_UID) == 0,
	      "%s counts sessions of uid %u (%ld) or %u (%ld) before they open any",
	      USERS_FILE, CAP_UID, user_sessions(CAP_UID), OTHER_UID,
	      user_sessions(OTHER_UID));
	for (int i = 0; i < 64; i++) {
		fds[i] = open_as(CAP_UID, &error);
		CHECK(fds[i] >= 0, "uid %u's open %d of 64: %s", CAP_UID, i + 1,
		      strerror(error));
	}
	held = user_sessions(CAP_UID);
	CHECK(held == 64, "%s counts %ld sessions of uid %u, not 64", USERS_FILE,
	      held, CAP_UID);
	again = open_as(CAP_UID, &error);
	CHECK(again < 0 && error == EDQUOT,
	      "uid %u's 65th open: fd %d (%s), not EDQUOT", CAP_UID, again,
	      again < 0 ? strerror(error) : "opened");
	if (again >= 0)
		close(again);
	CHECK(user_sessions(CAP_UID) == 64,
	      "the refused open changed uid %u's count to %ld", CAP_UID,
	      user_sessions(CAP_UID));
	other = open_as(OTHER_UID, &error);
	CHECK(other >= 0, "uid %u cannot open while uid %u holds its cap: %s",
	      OTHER_UID, CAP_UID, strerror(error));
	CHECK(user_sessions(OTHER_UID) == 1, "%s counts %ld sessions of uid %u, not 1",
	      USERS_FILE, user_sessions(OTHER_UID), OTHER_UID);
	close(fds[17]);
	CHECK(user_sessions(CAP_UID) == 63,
	      "after one close %s counts %ld sessions of uid %u, not 63",
	      USERS_FILE, user_sessions(CAP_UID), CAP_UID);
	fds[17] = open_as(CAP_UID, &error);
	CHECK(fds[17] >= 0, "uid %u cannot open again after a close: %s",
	      CAP_UID, strerror(error));
	again = open_as(CAP_UID, &error);
	CHECK(again < 0 && error == EDQUOT,
	      "uid %u's open past its cap after the reopen: fd %d (%s), not EDQUOT",
	      CAP_UID, again, again < 0 ? strerror(error) : "opened");
	if (again >= 0)
		close(again);
	for (int i = 0; i < 64; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (other >= 0)
		close(other);
	CHECK(user_sessions(CAP_UID) == 0 && user_sessions(OTHER_UID) == 0,
	      "after every close %s still counts uid %u: %ld, uid %u: %ld",
	      USERS_FILE, CAP_UID, user_sessions(CAP_UID), OTHER_UID,
	      user_sessions(OTHER_UID));
	return report("session-cap");
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	step_name = getenv("VMTEST_STEP");
	if (argc >= 2 && !strcmp(argv[1], "basic"))
		return step_basic();
	if (argc >= 2 && !strcmp(argv[1], "unprivileged"))
		return step_unprivileged();
	if (argc >= 2 && !strcmp(argv[1], "hostile"))
		return step_hostile(argc >= 3 ? atoi(argv[2]) : 10000, 0);
	if (argc >= 3 && !strcmp(argv[1], "hostile-daemon"))
		return step_hostile(atoi(argv[2]), 1);
	if (argc >= 2 && !strcmp(argv[1], "concurrent"))
		return step_concurrent();
	if (argc >= 2 && !strcmp(argv[1], "client-kill"))
		return step_client_kill();
	if (argc >= 2 && !strcmp(argv[1], "open-only")) {
		int fd = session_open();

		return fd >= 0 ? 0 : 1;
	}
	if (argc >= 4 && !strcmp(argv[1], "payload-remap"))
		return step_payload_remap(argv[2], argv[3]);
	if (argc >= 2 && !strcmp(argv[1], "session-cap"))
		return step_session_cap();
	if (argc >= 5 && !strcmp(argv[1], "daemon-death"))
		return step_daemon_death(atoi(argv[2]), argv[3], argv[4]);
	fprintf(stderr, "usage: vm_client basic|unprivileged|hostile [ROUNDS]|"
		"hostile-daemon ROUNDS|concurrent|client-kill|open-only|"
		"daemon-death PID SERVER LOG|payload-remap LOG DIR|session-cap\n");
	return 2;
}
