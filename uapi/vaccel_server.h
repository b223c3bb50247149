/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * vaccel_server.h - the daemon side of the kernel transport:
 * /dev/vaccel-server, served by vacceld through io_uring.
 *
 * Included by the kernel module (kmod/) and by the daemon. Only "vaccel.h"
 * (and through it <linux/types.h> and <linux/ioctl.h>) is included.
 *
 * The node is root only (mode 0600) and has one attached daemon at a time:
 * a second open while a daemon is attached fails with -EBUSY.
 *
 * Protocol (the ublk pattern):
 *
 *  0. The daemon opens /dev/vaccel-server and says which contract it serves
 *     with VACCEL_SRV_IOCTL_HELLO (struct vaccel_srv_hello): the module
 *     accepts a daemon of its own VACCEL_ABI_MAJOR whose minor is at least
 *     its own (the daemon then serves every op the module forwards), and
 *     answers -EPROTONOSUPPORT otherwise, with its own version written
 *     back either way. Until a HELLO succeeded, FETCH fails with -EPROTO.
 *  1. The daemon, from ONE thread (the thread
 *     that owns its io_uring ring; no SQPOLL, no IOSQE_ASYNC), submits one
 *     IORING_OP_URING_CMD per slot with sqe->cmd_op = VACCEL_SRV_FETCH and
 *     struct vaccel_srv_cmd in sqe->cmd (16 bytes; SQE128 not needed). The
 *     first FETCH names that thread the serving thread; commands from any
 *     other thread complete with -EINVAL.
 *  2. A request (a client ioctl, or a session open/close the module
 *     originates) completes one parked command. The module runs the
 *     completion as task work in the serving thread and copies the request
 *     message into the command's `buffer`: struct vaccel_msg_header
 *     (opcode, flags 0, args_bytes, payload_bytes, seq unique among this
 *     module's requests, session = module session id) followed by the op's
 *     struct from vaccel.h (user-pointer fields zeroed). The CQE's res is
 *     the number of bytes written (header + args_bytes), or a negative errno.
 *  3. Payload bytes are not in `buffer`. The daemon reads them with
 *     pread(server_fd, dst, n, VACCEL_SRV_PAYLOAD_POS(slot, offset)): the
 *     module copies them once, from the client's pinned pages (or from the
 *     module's copy for small payloads), into dst. payload_bytes tells how
 *     many there are:
 *       BUFFER_WRITE: length bytes; PROGRAM_LOAD: payload_bytes bytes;
 *       SUBMIT and RUN: binding_count struct vaccel_binding;
 *       EVENT_WAIT: count __u64 handles; every other op: none.
 *     For BUFFER_READ (payload_bytes 0 in the request) the daemon writes the
 *     data with pwrite(server_fd, src, n, VACCEL_SRV_PAYLOAD_POS(slot, off)),
 *     off + n <= length, straight into the client's pinned destination,
 *     BEFORE it commits. pread/pwrite on a slot that holds no delivered
 *     request fail with -EINVAL, and so does pwrite for any op but
 *     BUFFER_READ; beyond the payload pread returns 0 (end) and pwrite
 *     fails with -ENOSPC. Any thread of the daemon may pread/pwrite.
 *  4. The daemon answers with sqe->cmd_op = VACCEL_SRV_COMMIT_AND_FETCH on
 *     the same slot: `buffer` then holds the response: a header with
 *     flags = VACCEL_MSG_RESPONSE, the request's opcode, seq and args_bytes,
 *     payload_bytes = length for a BUFFER_READ that succeeded (and as in
 *     6. for a BUFFER_MAP that did) and 0 otherwise, followed by the op's
 *     struct with its status filled (the contract error, detail, limit,
 *     args) and its out fields. The module
 *     copies the struct back to the client (its user pointers restored) and
 *     the ioctl returns 0 or the errno of status.error (the mapping in
 *     vaccel.h). The same command then parks again, or completes at once
 *     with the next queued request. The buffer of a COMMIT_AND_FETCH may
 *     differ from the slot's previous one; it is the buffer of the next
 *     delivery.
 *  5. RUN is answered only once its work has ended (state COMPLETE, FAILED
 *     or CANCELLED, failure filled) or when it is refused (state 0); the
 *     client sleeps killably meanwhile, as for EVENT_WAIT.
 *  6. BUFFER_MAP: an answer that succeeded has flags = VACCEL_MSG_RESPONSE
 *     | VACCEL_MSG_PASSES_FD and payload_bytes = sizeof(struct
 *     vaccel_srv_map), that struct following the op's struct in `buffer`.
 *     It names the buffer's file (a descriptor number in the serving
 *     thread's table, resolved by the module at the commit: a file that
 *     can be mmap()ed, open for reading and writing, holding at least
 *     offset + map_bytes bytes) and the page-aligned offset of the
 *     buffer's first byte in it; the file's pages from there to map_bytes
 *     rounded up to pages must hold this buffer alone (the client sees and
 *     may write all of them). The daemon may close its descriptor once
 *     the commit was issued: the module holds the file. The module keeps
 *     the file in the client's session and gives the client, in
 *     map_offset, a page-aligned token unique in that session (the
 *     daemon's map_offset is not shown to it; map_bytes is the daemon's).
 *     An mmap() of the client's /dev/vaccel file at that offset, MAP_SHARED
 *     and at most map_bytes rounded up to pages long, maps the file's pages
 *     at the daemon's offset: the client and the daemon share the buffer's
 *     memory. Any other offset, a longer length or a private mapping fails
 *     with -EINVAL. A session holds VACCEL_SRV_MAPS_MAX distinct
 *     mappings (the same file, offset and size give the same token; one
 *     no longer referenced by the daemon or by a mapping is forgotten);
 *     past that BUFFER_MAP fails with -EDQUOT (VACCEL_E_RESOURCE_LIMIT,
 *     VACCEL_D_LIMIT, limit VACCEL_LIMIT_HANDLES, arg0 the maximum). The
 *     files are released when the session's file is released and its
 *     mappings are gone. A refused BUFFER_MAP is an ordinary answer (flags
 *     VACCEL_MSG_RESPONSE, payload_bytes 0); a successful one without a
 *     file is a commit the module cannot use.
 *
 * A commit the module cannot use (bad magic, flags, opcode, seq or size; a
 * status outside its enums; a buffer it cannot read) completes the command
 * with -EINVAL or -EFAULT and fails the client's call with -EIO (status
 * VACCEL_E_EXTERNAL); the slot is then idle and needs a new FETCH.
 * FETCH on a slot whose request is not yet committed fails with -EBUSY;
 * COMMIT_AND_FETCH on a slot without a delivered request with -EINVAL.
 *
 * Ownership of a request, per state (see enum vaccel_request_state in
 * kmod/vaccel_drv.h):
 *  - queued: the module; no slot, waiting for a parked command;
 *  - delivered: the daemon, from the fetch completion to its commit; its
 *    payload may be read (and for BUFFER_READ written) through its slot;
 *  - aborted: still the daemon's until it commits, but nobody waits: the
 *    client was killed (fatal signal) or the message needs no answer
 *    reader (SESSION_CLOSE); the answer is discarded, the pins are released
 *    at the commit; pread/pwrite still work until then;
 *  - done: the client's; the daemon no longer sees it.
 *
 * Sessions: every open of /dev/vaccel is one session. Before the open
 * returns, the module sends VACCEL_OP_SESSION_OPEN (struct
 * vaccel_srv_session_open: who opened it); a refusal (status.error) fails
 * the open with its errno. When the file is released the module sends
 * VACCEL_OP_SESSION_CLOSE and does not wait for the answer. Every client
 * request's header.session names its session. The daemon must:
 *  - release everything a session owned on SESSION_CLOSE, after the
 *    session's requests still delivered to it have been answered (a killed
 *    client's request may still be delivered when its CLOSE arrives);
 *  - answer SESSION_CLOSE of a session it does not know with VACCEL_OK (an
 *    OPEN whose opener was killed before the open was delivered is followed
 *    by a CLOSE all the same);
 *  - answer every delivered request exactly once, EVENT_WAIT included (a
 *    long wait is fine: the client sleeps killably).
 *
 * Daemon death: a monitor in the module checks the serving thread every
 * VACCEL_SRV_MONITOR_MS. When that thread is exiting (kill -9 included), or
 * when the server file is released, the module
 *  - completes every parked command with -ENODEV;
 *  - fails every queued and delivered request with -ENODEV (status
 *    VACCEL_E_DEVICE_LOST, detail VACCEL_D_PEER_GONE): waiting clients
 *    return within about one monitor period;
 *  - marks the sessions opened through that daemon dead: their later
 *    ioctls fail at once with -ENODEV (same status).
 * A newly attached daemon (a fresh open of /dev/vaccel-server) serves new
 * opens of /dev/vaccel only; no state carries over. While no daemon is
 * attached, opening /dev/vaccel fails with -ENODEV.
 *
 * To detach, the daemon ends its serving thread (or exits). Parked
 * commands hold the server file open, so closing the ring or the file
 * while the serving thread lives leaves them parked (kernel 6.1 has no
 * uring_cmd cancellation) until that thread exits.
 */
#ifndef VACCEL_UAPI_VACCEL_SERVER_H
#define VACCEL_UAPI_VACCEL_SERVER_H

#include "vaccel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* sqe->cmd_op of IORING_OP_URING_CMD on /dev/vaccel-server. */
#define VACCEL_SRV_FETCH		0x01	/* park; completes with a request */
#define VACCEL_SRV_COMMIT_AND_FETCH	0x02	/* answer, then park again */

#define VACCEL_SRV_MAX_SLOTS	64	/* slots 0 .. VACCEL_SRV_MAX_SLOTS - 1 */
#define VACCEL_SRV_BUFFER_BYTES	4096	/* size of each command's buffer */
#define VACCEL_SRV_MONITOR_MS	100	/* daemon death check period */

/* The most payload one request carries (1 GiB, the wire's limit). */
#define VACCEL_SRV_PAYLOAD_MAX	(1ULL << 30)

/* pread/pwrite position of byte `offset` of the payload on `slot`. */
#define VACCEL_SRV_SLOT_SHIFT	32
#define VACCEL_SRV_PAYLOAD_POS(slot, offset) \
	(((__u64)(slot) << VACCEL_SRV_SLOT_SHIFT) + (__u64)(offset))

/* The 16-byte sqe->cmd payload of both commands. */
struct vaccel_srv_cmd {
	__u32 slot;	/* 0 .. VACCEL_SRV_MAX_SLOTS - 1 */
	__u32 flags;	/* none defined, must be 0 */
	__u64 buffer;	/* daemon memory of VACCEL_SRV_BUFFER_BYTES */
};

/* VACCEL_SRV_IOCTL_HELLO. */
struct vaccel_srv_hello {
	__u32 major;		/* in: the daemon's ABI; out: the module's */
	__u32 minor;
	__u32 flags;		/* in: none defined, must be 0 */
	__u32 pad;
	__u64 reserved[2];	/* must be 0 */
};

#define VACCEL_SRV_IOCTL_HELLO \
	_IOWR(VACCEL_IOCTL_BASE, 0x40, struct vaccel_srv_hello)

/* Session lifecycle messages the module originates (wire opcodes). */
#define VACCEL_OP_SESSION_OPEN	0x30
#define VACCEL_OP_SESSION_CLOSE	0x31

#define VACCEL_SRV_CGROUP_LEN	256

/*
 * Who opened a session, seen from the initial namespaces: pid (thread
 * group id), the opener's effective uid and gid (as SO_PEERCRED reports
 * them) and its cgroup2 cgroup: id (the cgroup directory's inode number)
 * and path from the cgroup2 root ("/" for the root), NUL-terminated,
 * truncated if longer.
 */
struct vaccel_srv_session_open {
	struct vaccel_status status;	/* out: the daemon's answer */
	__u64 session;
	__u32 pid;
	__u32 uid;
	__u32 gid;
	__u32 pad;
	__u64 cgroup_id;
	char cgroup[VACCEL_SRV_CGROUP_LEN];
	/*
	 * out: an eventfd of the daemon's (a descriptor number in the serving
	 * thread's table, resolved by the module at the commit) that is
	 * readable when an event of the session completed and not yet cleared
	 * (see VACCEL_OP_SESSION_NOTIFY in vaccel.h); poll() on the client's
	 * /dev/vaccel file reports it. -1: none (what the module sends in).
	 */
	__s32 notify_fd;
	__u32 pad2;
};

/* Follows the op's struct in a BUFFER_MAP answer that succeeded. */
struct vaccel_srv_map {
	__s32 fd;	/* the daemon's descriptor of the buffer's file */
	__u32 pad;	/* must be 0 */
	__u64 offset;	/* the buffer's first byte in it, page-aligned */
};

/* Distinct mappings one session may hold (BUFFER_MAP through the module). */
#define VACCEL_SRV_MAPS_MAX	4096

struct vaccel_srv_session_close {
	struct vaccel_status status;	/* out: the daemon's answer */
	__u64 session;
};

#ifdef __cplusplus
}
#endif

#endif /* VACCEL_UAPI_VACCEL_SERVER_H */
