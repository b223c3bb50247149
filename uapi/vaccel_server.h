/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * The daemon side of the kernel transport:
 * /dev/vaccel-server, served by vacceld through io_uring.
 *
 * Included by the kernel module (kmod/) and by the daemon. Only "vaccel.h"
 * (and through it <linux/types.h> and <linux/ioctl.h>) is included.
 *
 * Access: the node is mode 0600, owned by root unless a udev rule names
 * another owner (dist/udev/). Ownership is the whole gate: no capability is
 * asked, so a daemon whose unit grants none (dist/vacceld.service) attaches
 * as the node's owner. One daemon is attached at a time: a second open while
 * one is attached fails with -EBUSY.
 *
 * Protocol (the ublk pattern), VACCEL_SRV_PROTOCOL 2:
 *
 *  0. The daemon opens /dev/vaccel-server and says what it speaks with
 *     VACCEL_SRV_IOCTL_HELLO (struct vaccel_srv_hello): the module accepts
 *     a daemon of its own VACCEL_ABI_MAJOR whose minor is at least its own
 *     (the daemon then serves every op the module forwards) and whose
 *     `protocol` is VACCEL_SRV_PROTOCOL; otherwise it answers
 *     -EPROTONOSUPPORT. Its own ABI and protocol are written back either
 *     way, with `flags` saying what it can do (VACCEL_SRV_HELLO_*). Until a
 *     HELLO succeeded, every command fails with -EPROTO.
 *  1. Commands are IORING_OP_URING_CMD SQEs on the node with struct
 *     vaccel_srv_cmd in sqe->cmd (16 bytes; SQE128 not needed), all issued
 *     by ONE thread: the first command names its issuer the serving thread.
 *     A command issued by any other thread, by an io_uring worker (SQPOLL,
 *     IOSQE_ASYNC, a punt to io-wq) fails with -EPERM and changes nothing.
 *     A command whose slot, flags or buffer are malformed fails with
 *     -EINVAL and changes nothing. The daemon parks one VACCEL_SRV_FETCH
 *     per slot.
 *  2. A request (a client ioctl, or a session message the module
 *     originates) completes one parked command: the module copies the
 *     request message into the command's `buffer`, from task work in the
 *     serving thread: struct vaccel_msg_header (opcode, flags 0, args_bytes,
 *     payload_bytes, seq unique among this module's requests, session = the
 *     module's session id) followed by the op's struct from vaccel.h (user
 *     pointers zeroed). The CQE's res is the number of bytes written
 *     (header + args_bytes), or a negative errno.
 *  3. Fairness: every session has its own queue. A slot that fetches takes
 *     the oldest request of the next session, round robin, that has fewer
 *     than VACCEL_SRV_SESSION_SLOTS requests delivered and not yet
 *     committed or deferred; the module's own session messages go first. So
 *     one session never holds more than that many slots, and a session with
 *     work waits for at most one turn of the others.
 *  4. Payload bytes are not in `buffer`. The daemon reads them with
 *     pread(server_fd, dst, n, VACCEL_SRV_PAYLOAD_POS(slot, seq, offset)),
 *     seq being the request's header.seq: the module copies them once, from
 *     the client's memory (or from the module's copy for small payloads)
 *     into dst. payload_bytes tells how many there are:
 *       BUFFER_WRITE: length bytes; PROGRAM_LOAD: payload_bytes bytes;
 *       SUBMIT and RUN: binding_count struct vaccel_binding;
 *       EVENT_WAIT: count __u64 handles; every other op: none.
 *     For BUFFER_READ (payload_bytes 0 in the request) the daemon writes the
 *     data with pwrite(server_fd, src, n, VACCEL_SRV_PAYLOAD_POS(slot, seq,
 *     off)), off + n <= length, straight into the client's destination,
 *     BEFORE it commits. pread/pwrite whose position names a slot that holds
 *     no delivered request, or another request than seq's (a stale worker),
 *     fail with -ESTALE; pwrite for any op but BUFFER_READ fails with
 *     -EINVAL; beyond the payload pread returns 0 (end) and pwrite fails
 *     with -ENOSPC. A copy stops (short count, or -ESTALE when nothing was
 *     copied) the moment its request is committed, deferred or failed. The
 *     client's pages are pinned only for the span of one copy: a request
 *     waiting in the module pins nothing. Any thread of the daemon may
 *     pread/pwrite. A payload in the client's memory lives in anonymous,
 *     shmem or hugetlb memory only (the client's ioctl is refused with
 *     -EOPNOTSUPP otherwise); a copy that finds a file of another
 *     filesystem mapped there since (the client remapped the range) fails
 *     with -EOPNOTSUPP and touches none of its pages, -EFAULT when the
 *     range is no longer mapped at all.
 *  5. The daemon answers with VACCEL_SRV_COMMIT_AND_FETCH on the same slot:
 *     `buffer` holds the response: a header with flags =
 *     VACCEL_MSG_RESPONSE, the request's opcode, seq and args_bytes,
 *     payload_bytes = length for a BUFFER_READ that succeeded (and as in 8.
 *     for a BUFFER_MAP that did) and 0 otherwise, followed by the op's
 *     struct with its status filled (the contract error, detail, limit,
 *     args) and its out fields. The module copies the struct back to the
 *     client (its user pointers restored) and the ioctl returns 0 or the
 *     errno of status.error (the mapping in vaccel.h). The same command
 *     then parks again, or completes at once with the next request. The
 *     buffer of a COMMIT_AND_FETCH may differ from the slot's previous one;
 *     it is the buffer of the next delivery. Results of a COMMIT_AND_FETCH:
 *       > 0       the answer was taken and the next request delivered;
 *       -EBADMSG  the answer was refused (bad magic, flags, opcode, seq or
 *                 size; a status outside its enums; an unusable file), or
 *       -EFAULT   the buffer could not be read: either way the client's
 *                 call failed with -EIO (status VACCEL_E_EXTERNAL), the
 *                 slot is idle and the daemon parks a new FETCH on it;
 *       -EINVAL   no delivered request on the slot, or a malformed command:
 *                 nothing changed;
 *       -ENODEV   the module let go of the daemon (below).
 *     Once an answer is taken the fetch cannot fail but with -ENODEV.
 *     FETCH fails with -EBUSY on a slot whose request is not committed.
 *  6. Deferral: EVENT_WAIT and RUN may wait long in the daemon. Instead of
 *     keeping a slot, the daemon commits them with COMMIT_AND_FETCH and
 *     flags = VACCEL_SRV_CMD_DEFER (`buffer` is not read; the payload must
 *     have been read before): the request leaves the slot, which fetches
 *     again at once, and waits in the module, keyed by its seq, for its
 *     answer. Deferring any other op is refused as in 5. (-EBADMSG). The
 *     daemon answers a deferred request with VACCEL_SRV_ANSWER (slot 0,
 *     flags 0), `buffer` holding the response as in 5.; the module reads it
 *     while the SQE is issued, and the command completes at once with 0;
 *     -ENOENT when no deferred request has that seq (its client withdrew
 *     it: normal); -EBADMSG or -EFAULT when the answer was refused (the
 *     client's call fails with -EIO); -EINVAL, -ENODEV as above. ANSWER
 *     never parks and never fetches.
 *  7. RUN is answered only once its work has ended (state COMPLETE, FAILED
 *     or CANCELLED, failure filled) or when it is refused (state 0).
 *  8. BUFFER_MAP: an answer that succeeded has flags = VACCEL_MSG_RESPONSE
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
 *     file is refused as in 5.
 *
 * Ownership of a request, per state (see enum vaccel_request_state in
 * kmod/vaccel_drv.h):
 *  - queued: the module; on its session's queue, waiting for a slot;
 *  - delivered: the daemon, from the fetch completion to its commit or
 *    deferral; its payload may be read (and for BUFFER_READ written)
 *    through its slot;
 *  - deferred: the daemon's to answer, holding no slot; no payload access;
 *  - aborted: still the daemon's until it commits, but nobody waits: the
 *    client was killed or withdrew it, or the message needs no answer
 *    reader (module-originated); the answer is discarded;
 *  - done: the client's; the daemon no longer sees it.
 *
 * Withdrawal: a client interrupted by a signal (vaccel.h, "Signals") takes
 * back a queued request unseen. A delivered or deferred EVENT_WAIT it
 * withdraws is announced with VACCEL_OP_WITHDRAW (struct
 * vaccel_srv_withdraw: session and seq): the daemon stops that wait and
 * answers the WITHDRAW with VACCEL_OK (seq unknown included); its later
 * ANSWER of the withdrawn seq, if any, gets -ENOENT.
 *
 * Limits: a session has at most VACCEL_SRV_SESSION_REQUESTS requests in the
 * module at once (queued, delivered or deferred); past that the ioctl fails
 * at once with -EBUSY (VACCEL_E_BUSY, VACCEL_D_LIMIT, arg0 the maximum).
 * The module's memory for sessions and requests is charged to the memory
 * cgroup of the client that caused it. The module holds at most
 * max_sessions sessions in all and max_sessions_per_user (module
 * parameters: 4096, 64) per effective uid, root's included; an open past
 * either fails before any SESSION_OPEN is sent (-ENFILE, -EDQUOT), so a
 * daemon's own per-tenant session limit sees only opens the module let
 * through.
 *
 * Sessions: every open of /dev/vaccel is one session. Before the open
 * returns, the module sends VACCEL_OP_SESSION_OPEN (struct
 * vaccel_srv_session_open: who opened it); a refusal (status.error) fails
 * the open with its errno. When the file is released the module sends
 * VACCEL_OP_SESSION_CLOSE and does not wait for the answer. Every client
 * request's header.session names its session. The daemon must:
 *  - release everything a session owned on SESSION_CLOSE, after the
 *    session's requests still delivered or deferred to it have been
 *    answered (a killed client's request may still be delivered when its
 *    CLOSE arrives);
 *  - answer SESSION_CLOSE of a session it does not know with VACCEL_OK (an
 *    OPEN whose opener was killed before the open was delivered is followed
 *    by a CLOSE all the same);
 *  - answer every delivered request exactly once, by commit or by deferral
 *    and ANSWER.
 *
 * Detach and death: the module lets go of the daemon when
 *  - the daemon calls VACCEL_SRV_IOCTL_DETACH (what a daemon does before it
 *    closes its ring, exits or exec()s);
 *  - the serving thread exits or calls exec() (kill -9 included), seen by a
 *    monitor every VACCEL_SRV_MONITOR_MS;
 *  - the parked commands are cancelled by io_uring (the ring closed, or
 *    exec()), where the kernel can cancel them (VACCEL_SRV_HELLO_CANCELABLE);
 *  - the server file is released.
 * It then completes every parked command with -ENODEV, fails every queued,
 * delivered and deferred request with -ENODEV (status VACCEL_E_DEVICE_LOST,
 * detail VACCEL_D_PEER_GONE): waiting clients return at once, or within
 * about one monitor period; marks the sessions opened through that daemon
 * dead: their later ioctls fail at once with -ENODEV (same status); and
 * frees the attachment: a new daemon may open /dev/vaccel-server at once,
 * and serves new opens of /dev/vaccel. No state carries over. While no
 * daemon is attached, opening /dev/vaccel fails with -ENODEV.
 */
#ifndef VACCEL_UAPI_VACCEL_SERVER_H
#define VACCEL_UAPI_VACCEL_SERVER_H

#include "vaccel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this protocol; HELLO must name it. */
#define VACCEL_SRV_PROTOCOL	2

/* sqe->cmd_op of IORING_OP_URING_CMD on /dev/vaccel-server. */
#define VACCEL_SRV_FETCH		0x01	/* park; completes with a request */
#define VACCEL_SRV_COMMIT_AND_FETCH	0x02	/* answer, then park again */
#define VACCEL_SRV_ANSWER		0x03	/* answer a deferred request */

/* vaccel_srv_cmd.flags of COMMIT_AND_FETCH: defer, do not answer (6.). */
#define VACCEL_SRV_CMD_DEFER	(1U << 0)

#define VACCEL_SRV_MAX_SLOTS	64	/* slots 0 .. VACCEL_SRV_MAX_SLOTS - 1 */
#define VACCEL_SRV_BUFFER_BYTES	4096	/* size of each command's buffer */
#define VACCEL_SRV_MONITOR_MS	100	/* daemon death check period */
/* Slots one session's requests may hold at once (3.). */
#define VACCEL_SRV_SESSION_SLOTS	8
/* Requests one session may have in the module at once ("Limits"). */
#define VACCEL_SRV_SESSION_REQUESTS	1024

/* The most payload one request carries (1 GiB, the wire's limit). */
#define VACCEL_SRV_PAYLOAD_MAX	(1ULL << 30)

/*
 * pread/pwrite position of byte `offset` of the payload of request `seq`
 * on `slot`: offset in bits 0..31, slot in bits 32..39, the low 23 bits of
 * seq (the slot's generation) in bits 40..62.
 */
#define VACCEL_SRV_SLOT_SHIFT	32
#define VACCEL_SRV_SEQ_SHIFT	40
#define VACCEL_SRV_SEQ_MASK	((1ULL << 23) - 1)
#define VACCEL_SRV_PAYLOAD_POS(slot, seq, offset) \
	((((__u64)(seq) & VACCEL_SRV_SEQ_MASK) << VACCEL_SRV_SEQ_SHIFT) + \
	 ((__u64)(slot) << VACCEL_SRV_SLOT_SHIFT) + (__u64)(offset))

/* The 16-byte sqe->cmd payload of every command. */
struct vaccel_srv_cmd {
	__u32 slot;	/* 0 .. VACCEL_SRV_MAX_SLOTS - 1; ANSWER: 0 */
	__u32 flags;	/* COMMIT_AND_FETCH: VACCEL_SRV_CMD_DEFER; else 0 */
	__u64 buffer;	/* daemon memory of VACCEL_SRV_BUFFER_BYTES */
};

/* VACCEL_SRV_IOCTL_HELLO. */
struct vaccel_srv_hello {
	__u32 major;		/* in: the daemon's ABI; out: the module's */
	__u32 minor;
	__u32 flags;		/* in: must be 0; out: VACCEL_SRV_HELLO_* */
	__u32 protocol;		/* in: VACCEL_SRV_PROTOCOL; out: the module's */
	__u64 reserved[2];	/* must be 0 */
};

/* HELLO out flags: io_uring cancels parked commands on ring close/exec. */
#define VACCEL_SRV_HELLO_CANCELABLE	(1U << 0)

#define VACCEL_SRV_IOCTL_HELLO \
	_IOWR(VACCEL_IOCTL_BASE, 0x40, struct vaccel_srv_hello)
/* Lets go of the calling daemon now ("Detach and death"); no argument. */
#define VACCEL_SRV_IOCTL_DETACH	_IO(VACCEL_IOCTL_BASE, 0x41)

/* Session lifecycle messages the module originates (wire opcodes). */
#define VACCEL_OP_SESSION_OPEN	0x30
#define VACCEL_OP_SESSION_CLOSE	0x31
#define VACCEL_OP_WITHDRAW	0x32

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

/* A client withdrew the EVENT_WAIT `seq` of `session` ("Withdrawal"). */
struct vaccel_srv_withdraw {
	struct vaccel_status status;	/* out: the daemon's answer */
	__u64 session;
	__u64 seq;
};

#ifdef __cplusplus
}
#endif

#endif /* VACCEL_UAPI_VACCEL_SERVER_H */
