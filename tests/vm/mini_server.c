// SPDX-License-Identifier: GPL-2.0
/*
 * mini_server.c - the kernel module's own smoke-test server.
 *
 * NOT the daemon: vacceld serves /dev/vaccel-server for real (see
 * uapi/vaccel_server.h). This program exists only so that tests/vm can
 * exercise vaccel.ko on its own: it attaches to /dev/vaccel-server, parks
 * one VACCEL_SRV_FETCH per slot on an io_uring ring and answers:
 *  - SESSION_OPEN / SESSION_CLOSE: OK (each logged);
 *  - GET_VERSION: this ABI, no capabilities; DEVICE_COUNT: 1;
 *  - DEVICE_TOSA: a descriptor with ADD on FP32 and the last operator
 *    entry set, count 1;
 *  - BUFFER_WRITE: preads the payload from the server node and answers OK
 *    with status.arg0 = FNV-1a 64 of the bytes, arg1 = bytes read; a
 *    pread that fails is answered External / VACCEL_D_NONE with arg1 =
 *    its errno. A write to buffer HELD_BUFFER (9) is held before its
 *    pread: "mini_server: holding a write" is printed, and the pread
 *    waits until the file HELD_RELEASE exists (the whole server waits);
 *  - BUFFER_READ: pwrites byte i = (offset + i) * 7 + 1 into the client's
 *    destination, answers OK;
 *  - EVENT_WAIT: defers it (VACCEL_SRV_CMD_DEFER: the slot fetches again)
 *    and answers it with VACCEL_SRV_ANSWER at its absolute deadline
 *    (timeout_ns, at most 60 s away) with DeadlineExpired /
 *    VACCEL_D_WAIT_TIMEOUT; a deadline already past is answered at once the
 *    same way, on its slot; an ANSWER the module refuses as withdrawn
 *    (-ENOENT) is counted and printed;
 *  - WITHDRAW: answered OK (the withdrawn wait's ANSWER then gets -ENOENT);
 *  - RUN: preads the bindings and answers COMPLETE with status.arg0 =
 *    FNV-1a 64 of them, arg1 = bytes read;
 *  - BUFFER_MAP: buffer 1 is MAP_BYTES bytes at page 1 of a memfd whose
 *    byte i of the buffer is (i * 13 + 3): answered with the memfd passed
 *    (struct vaccel_srv_map); buffer 3 is refused as a Device buffer
 *    (Incompatible / VACCEL_D_DOMAIN); buffers 5, 6 and 8 are answered
 *    with a file the module must refuse (read-only; smaller than the
 *    buffer; an offset not page-aligned): the commit fails with -EBADMSG
 *    and the slot fetches again; any other is unknown;
 *  - anything else: Unsupported / VACCEL_D_UNKNOWN_OPCODE.
 * With an argument, SIGUSR1 makes it let go of the module without exiting,
 * so that the module's detach paths can be seen from outside:
 *  - detach: VACCEL_SRV_IOCTL_DETACH, then it sleeps;
 *  - close-ring: closes its io_uring ring (the parked commands with it),
 *    then sleeps: the module must notice and detach it;
 *  - exec: exec()s `busybox sleep 30` from the serving thread, which must
 *    not hang on the parked commands.
 * Prints "mini_server: ready" once every slot is parked. Exits 0 when the
 * module detaches it (-ENODEV), 1 on any protocol error.
 *
 * Single thread: the thread that submits the fetches is the serving thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "vaccel_server.h"

#define SLOTS 8
#define TIMER_TAG (1ULL << 32)	/* user_data of a deferred wait's timer */
#define ANSWER_TAG (1ULL << 33)	/* user_data of a deferred wait's ANSWER */
#define DEFERRED_MAX 256

struct slot {
	union {
		struct vaccel_msg_header header;
		unsigned char bytes[VACCEL_SRV_BUFFER_BYTES];
	} buffer __attribute__((aligned(64)));
	struct __kernel_timespec delay;
};

/* BUFFER_MAP's buffer 1: MAP_BYTES at page 1 of map_fd (3 pages). */
#define MAP_BYTES 5000
#define MAP_FILE_OFFSET 4096

static struct slot slots[SLOTS];
/* Deferred EVENT_WAITs: the request, then its answer; the timer's delay. */
static struct slot deferred[DEFERRED_MAX];
static int deferred_used[DEFERRED_MAX];
static int server_fd;
static int map_fd;
static int read_only_fd;
static int refusal_due[SLOTS];	/* a commit the module must refuse */
static struct io_uring ring;

static struct io_uring_sqe *sqe_get(void)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

	if (!sqe) {
		io_uring_submit(&ring);
		sqe = io_uring_get_sqe(&ring);
	}
	if (!sqe) {
		fprintf(stderr, "mini_server: no free SQE\n");
		exit(1);
	}
	return sqe;
}

/* Queues command `op` (liburing 2.3 has no prep for it). */
static void command(unsigned int op, unsigned int index, unsigned int flags,
		    void *buffer, uint64_t data)
{
	struct io_uring_sqe *sqe = sqe_get();
	struct vaccel_srv_cmd cmd = {
		.slot = index,
		.flags = flags,
		.buffer = (uint64_t)(uintptr_t)buffer,
	};

	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, server_fd, NULL, 0, 0);
	sqe->cmd_op = op;
	sqe->__pad1 = 0;
	memcpy(sqe->cmd, &cmd, sizeof(cmd));
	io_uring_sqe_set_data64(sqe, data);
}

/* Queues FETCH or COMMIT_AND_FETCH on `index`. */
static void slot_command(unsigned int index, unsigned int op)
{
	command(op, index, 0, slots[index].buffer.bytes, index);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void *args_of(struct slot *slot)
{
	return slot->buffer.bytes + sizeof(struct vaccel_msg_header);
}

/* Turns the request in the slot's buffer into its response and commits. */
static void slot_answer(unsigned int index, uint32_t error, uint32_t detail,
			uint64_t arg0, uint64_t arg1, uint32_t payload)
{
	struct slot *slot = &slots[index];
	struct vaccel_status *status = args_of(slot);

	memset(status, 0, sizeof(*status));
	status->error = error;
	status->detail = detail;
	status->arg0 = arg0;
	status->arg1 = arg1;
	slot->buffer.header.flags = VACCEL_MSG_RESPONSE;
	slot->buffer.header.payload_bytes = payload;
	slot_command(index, VACCEL_SRV_COMMIT_AND_FETCH);
}

#define HELD_BUFFER	9
#define HELD_RELEASE	"/tmp/release-write"

/*
 * FNV-1a 64 of the payload, read from the server node in pieces; -errno
 * of a pread that failed.
 */
static int payload_checksum(unsigned int index, uint64_t bytes,
			    uint64_t *hash, uint64_t *read_bytes)
{
	static unsigned char chunk[256 * 1024];
	uint64_t h = 0xcbf29ce484222325ULL, done = 0;

	while (done < bytes) {
		size_t want = bytes - done < sizeof(chunk) ?
			      bytes - done : sizeof(chunk);
		ssize_t got = pread(server_fd, chunk, want,
				    VACCEL_SRV_PAYLOAD_POS(index, slots[index].buffer.header.seq, done));

		if (got < 0) {
			int error = errno;

			perror("mini_server: pread");
			return -error;
		}
		if (got == 0)
			break;
		for (ssize_t i = 0; i < got; i++) {
			h ^= chunk[i];
			h *= 0x100000001b3ULL;
		}
		done += got;
	}
	*hash = h;
	*read_bytes = done;
	return 0;
}

static int read_fill(unsigned int index, uint64_t length)
{
	static unsigned char chunk[256 * 1024];
	uint64_t done = 0;

	while (done < length) {
		size_t want = length - done < sizeof(chunk) ?
			      length - done : sizeof(chunk);
		ssize_t put;

		for (size_t i = 0; i < want; i++)
			chunk[i] = (unsigned char)((done + i) * 7 + 1);
		put = pwrite(server_fd, chunk, want,
			     VACCEL_SRV_PAYLOAD_POS(index, slots[index].buffer.header.seq, done));
		if (put <= 0) {
			perror("mini_server: pwrite");
			return -1;
		}
		done += put;
	}
	return 0;
}

/* Defers the EVENT_WAIT on `index`, to be answered at its deadline. */
static void event_wait_later(unsigned int index)
{
	struct vaccel_event_wait *wait = args_of(&slots[index]);
	uint64_t now = now_ns(), delay;
	struct io_uring_sqe *sqe;
	unsigned int d;

	for (d = 0; d < DEFERRED_MAX && deferred_used[d]; d++)
		;
	if (wait->timeout_ns <= now || d == DEFERRED_MAX) {
		slot_answer(index, VACCEL_E_DEADLINE_EXPIRED,
			    VACCEL_D_WAIT_TIMEOUT, wait->count, 0, 0);
		return;
	}
	deferred_used[d] = 1;
	memcpy(deferred[d].buffer.bytes, slots[index].buffer.bytes,
	       sizeof(deferred[d].buffer.bytes));
	delay = wait->timeout_ns - now;
	if (delay > 60ULL * 1000000000ULL)
		delay = 60ULL * 1000000000ULL;
	deferred[d].delay.tv_sec = delay / 1000000000ULL;
	deferred[d].delay.tv_nsec = delay % 1000000000ULL;
	sqe = sqe_get();
	io_uring_prep_timeout(sqe, &deferred[d].delay, 0, 0);
	io_uring_sqe_set_data64(sqe, TIMER_TAG | d);
	command(VACCEL_SRV_COMMIT_AND_FETCH, index, VACCEL_SRV_CMD_DEFER,
		slots[index].buffer.bytes, index);
}

/* The deferred wait `d` reached its deadline: its ANSWER. */
static void event_wait_answer(unsigned int d)
{
	struct vaccel_event_wait *wait = args_of(&deferred[d]);
	uint32_t count = wait->count;

	memset(&wait->status, 0, sizeof(wait->status));
	wait->status.error = VACCEL_E_DEADLINE_EXPIRED;
	wait->status.detail = VACCEL_D_WAIT_TIMEOUT;
	wait->status.arg0 = count;
	deferred[d].buffer.header.flags = VACCEL_MSG_RESPONSE;
	deferred[d].buffer.header.payload_bytes = 0;
	command(VACCEL_SRV_ANSWER, 0, 0, deferred[d].buffer.bytes,
		ANSWER_TAG | d);
}

/* BUFFER_MAP: buffer 1 passes map_fd; 3 is a Device buffer. */
static void buffer_map(unsigned int index)
{
	struct slot *slot = &slots[index];
	struct vaccel_buffer_map *map = args_of(slot);
	struct vaccel_srv_map where = {
		.fd = map_fd, .offset = MAP_FILE_OFFSET,
	};

	if (map->buffer == 3) {
		slot_answer(index, VACCEL_E_INCOMPATIBLE, VACCEL_D_DOMAIN, 3,
			    VACCEL_DOMAIN_DEVICE, 0);
		return;
	}
	if (map->buffer == 5)
		where.fd = read_only_fd;
	if (map->buffer == 8)
		where.offset = 100;
	refusal_due[index] = map->buffer != 1;
	if (map->buffer != 1 && map->buffer != 5 && map->buffer != 6 &&
	    map->buffer != 8) {
		slot_answer(index, VACCEL_E_INVALID_ARGUMENT,
			    VACCEL_D_UNKNOWN_HANDLE, map->buffer, 0, 0);
		refusal_due[index] = 0;
		return;
	}
	map->map_offset = MAP_FILE_OFFSET;	/* the module replaces it */
	map->map_bytes = map->buffer == 6 ? 3 * 4096 : MAP_BYTES;
	memcpy((unsigned char *)map + sizeof(*map), &where, sizeof(where));
	memset(map, 0, sizeof(map->status));
	slot->buffer.header.flags = VACCEL_MSG_RESPONSE | VACCEL_MSG_PASSES_FD;
	slot->buffer.header.payload_bytes = sizeof(where);
	slot_command(index, VACCEL_SRV_COMMIT_AND_FETCH);
}

/* The memfd behind BUFFER_MAP's buffer 1. */
static int map_file(void)
{
	static unsigned char bytes[3 * 4096];
	char path[64];

	for (unsigned int i = 0; i < MAP_BYTES; i++)
		bytes[MAP_FILE_OFFSET + i] = (unsigned char)(i * 13 + 3);
	map_fd = memfd_create("mini_server-map", MFD_CLOEXEC);
	if (map_fd < 0 || write(map_fd, bytes, sizeof(bytes)) != sizeof(bytes)) {
		perror("mini_server: memfd");
		return -1;
	}
	/* The same memfd, opened again for reading only. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", map_fd);
	read_only_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (read_only_fd < 0) {
		perror("mini_server: a read-only file");
		return -1;
	}
	return 0;
}

/* A request arrived on `index` (res bytes in its buffer). */
static int slot_serve(unsigned int index, int res)
{
	struct slot *slot = &slots[index];
	struct vaccel_msg_header *header = &slot->buffer.header;
	uint64_t hash, bytes;

	if (res < (int)sizeof(*header) || header->magic != VACCEL_MSG_MAGIC ||
	    res != (int)(sizeof(*header) + header->args_bytes)) {
		fprintf(stderr, "mini_server: malformed request (%d bytes)\n",
			res);
		return -1;
	}
	switch (header->opcode) {
	case VACCEL_OP_SESSION_OPEN: {
		struct vaccel_srv_session_open *open = args_of(slot);

		printf("mini_server: session %llu open pid %u uid %u gid %u cgroup %s\n",
		       (unsigned long long)open->session, open->pid, open->uid,
		       open->gid, open->cgroup);
		slot_answer(index, VACCEL_OK, 0, 0, 0, 0);
		break;
	}
	case VACCEL_OP_SESSION_CLOSE:
		printf("mini_server: session %llu closed\n",
		       (unsigned long long)header->session);
		slot_answer(index, VACCEL_OK, 0, 0, 0, 0);
		break;
	case VACCEL_OP_GET_VERSION: {
		struct vaccel_get_version *version = args_of(slot);

		version->major = VACCEL_ABI_MAJOR;
		version->minor = VACCEL_ABI_MINOR;
		version->capabilities = 0;
		slot_answer(index, VACCEL_OK, 0, 0, 0, 0);
		break;
	}
	case VACCEL_OP_DEVICE_COUNT: {
		struct vaccel_device_count *count = args_of(slot);

		count->count = 1;
		slot_answer(index, VACCEL_OK, 0, 0, 0, 0);
		break;
	}
	case VACCEL_OP_DEVICE_TOSA: {
		struct vaccel_device_tosa *tosa = args_of(slot);

		/* ADD (15) on FP32 (bit 7), and the last operator entry: the
		 * whole struct crosses the module both ways.
		 */
		tosa->descriptor.target.major = 1;
		tosa->descriptor.descriptor_count = 1;
		tosa->descriptor.operators[15].present = 1;
		tosa->descriptor.operators[15].dtypes = 1U << 7;
		tosa->descriptor.operators[VACCEL_TOSA_MAX_OPS - 1].present = 1;
		slot_answer(index, VACCEL_OK, 0, 0, 0, 0);
		break;
	}
	case VACCEL_OP_BUFFER_WRITE: {
		struct vaccel_buffer_transfer *write = args_of(slot);
		int ret;

		if (write->buffer == HELD_BUFFER) {
			printf("mini_server: holding a write\n");
			while (access(HELD_RELEASE, F_OK) != 0)
				usleep(10000);
			unlink(HELD_RELEASE);
		}
		ret = payload_checksum(index, header->payload_bytes, &hash,
				       &bytes);
		if (ret)
			slot_answer(index, VACCEL_E_EXTERNAL, VACCEL_D_NONE, 0,
				    (uint64_t)-ret, 0);
		else
			slot_answer(index, VACCEL_OK, 0, hash, bytes, 0);
		break;
	}
	case VACCEL_OP_BUFFER_READ: {
		struct vaccel_buffer_transfer *read = args_of(slot);

		if (read_fill(index, read->length))
			return -1;
		slot_answer(index, VACCEL_OK, 0, 0, 0, read->length);
		break;
	}
	case VACCEL_OP_EVENT_WAIT:
		event_wait_later(index);
		break;
	case VACCEL_OP_WITHDRAW: {
		struct vaccel_srv_withdraw *withdraw = args_of(slot);

		printf("mini_server: session %llu withdrew wait %llu\n",
		       (unsigned long long)withdraw->session,
		       (unsigned long long)withdraw->seq);
		slot_answer(index, VACCEL_OK, 0, 0, 0, 0);
		break;
	}
	case VACCEL_OP_RUN: {
		struct vaccel_run *run = args_of(slot);

		if (payload_checksum(index, header->payload_bytes, &hash,
				     &bytes))
			return -1;
		run->state = VACCEL_EVENT_COMPLETE;
		slot_answer(index, VACCEL_OK, 0, hash, bytes, 0);
		break;
	}
	case VACCEL_OP_BUFFER_MAP:
		buffer_map(index);
		break;
	default:
		slot_answer(index, VACCEL_E_UNSUPPORTED,
			    VACCEL_D_UNKNOWN_OPCODE, header->opcode, 0, 0);
		break;
	}
	return 0;
}

static volatile sig_atomic_t let_go_asked;

static void on_usr1(int sig)
{
	(void)sig;
	let_go_asked = 1;
}

/* SIGUSR1 with an argument: lets go of the module as `how` says. */
static int let_go(const char *how)
{
	if (!strcmp(how, "detach")) {
		if (ioctl(server_fd, VACCEL_SRV_IOCTL_DETACH) < 0) {
			perror("mini_server: detach");
			return 1;
		}
		printf("mini_server: detached by ioctl\n");
	} else if (!strcmp(how, "close-ring")) {
		io_uring_queue_exit(&ring);
		printf("mini_server: ring closed\n");
	} else if (!strcmp(how, "exec")) {
		printf("mini_server: exec\n");
		fflush(stdout);
		execl("/bin/busybox", "sleep", "30", (char *)NULL);
		perror("mini_server: exec");
		return 1;
	}
	fflush(stdout);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	struct io_uring_cqe *cqe;
	unsigned int i;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (map_file())
		return 1;
	if (argc > 1) {
		struct sigaction usr1 = { .sa_handler = on_usr1 };

		sigaction(SIGUSR1, &usr1, NULL);	/* no SA_RESTART */
	}
	server_fd = open("/dev/vaccel-server", O_RDWR | O_CLOEXEC);
	if (server_fd < 0) {
		perror("mini_server: open /dev/vaccel-server");
		return 1;
	}
	{
		struct vaccel_srv_hello hello = {
			.major = VACCEL_ABI_MAJOR, .minor = VACCEL_ABI_MINOR,
			.protocol = VACCEL_SRV_PROTOCOL,
		};

		if (ioctl(server_fd, VACCEL_SRV_IOCTL_HELLO, &hello) < 0) {
			fprintf(stderr, "mini_server: hello refused: %s "
				"(module ABI %u.%u)\n", strerror(errno),
				hello.major, hello.minor);
			return 1;
		}
	}
	ret = io_uring_queue_init(4 * SLOTS, &ring, 0);
	if (ret < 0) {
		fprintf(stderr, "mini_server: io_uring: %s\n", strerror(-ret));
		return 1;
	}
	for (i = 0; i < SLOTS; i++)
		slot_command(i, VACCEL_SRV_FETCH);
	io_uring_submit(&ring);
	printf("mini_server: ready\n");

	for (;;) {
		uint64_t data;
		int res;

		ret = io_uring_wait_cqe(&ring, &cqe);
		if (ret == -EINTR && let_go_asked && argc > 1)
			return let_go(argv[1]);
		if (ret == -EINTR)
			continue;
		if (ret < 0) {
			fprintf(stderr, "mini_server: wait: %s\n",
				strerror(-ret));
			return 1;
		}
		data = io_uring_cqe_get_data64(cqe);
		res = cqe->res;
		io_uring_cqe_seen(&ring, cqe);

		if (data & TIMER_TAG) {
			event_wait_answer(data & 0xffff);
		} else if (data & ANSWER_TAG) {
			if (res == -ENOENT)
				printf("mini_server: the module refused an ANSWER: withdrawn\n");
			else if (res < 0 && res != -ENODEV) {
				fprintf(stderr, "mini_server: ANSWER: %s\n",
					strerror(-res));
				return 1;
			}
			deferred_used[data & 0xffff] = 0;
		} else if (res == -ENODEV) {
			printf("mini_server: detached\n");
			return 0;
		} else if (res == -EBADMSG && refusal_due[data]) {
			printf("mini_server: slot %llu: the module refused a bad map commit\n",
			       (unsigned long long)data);
			refusal_due[data] = 0;
			slot_command(data, VACCEL_SRV_FETCH);
		} else if (res < 0) {
			fprintf(stderr, "mini_server: slot %llu: %s\n",
				(unsigned long long)data, strerror(-res));
			return 1;
		} else {
			if (refusal_due[data])
				printf("mini_server: slot %llu: the module took a map commit it must refuse\n",
				       (unsigned long long)data);
			refusal_due[data] = 0;
			if (slot_serve(data, res))
				return 1;
		}
		io_uring_submit(&ring);
	}
}
