// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/vaccel: sessions and the contract's ioctls.
 *
 * Owns a session (one open file): its SESSION_OPEN at open, its
 * SESSION_CLOSE at release, its references (the file and each of its
 * requests), and its limits (max_sessions sessions in all,
 * max_sessions_per_user per uid (vaccel_users.c); at most
 * VACCEL_SRV_SESSION_REQUESTS requests each). Decides whether an ioctl is well formed before
 * anything is forwarded - exact size, zero status, zero pad/reserved
 * fields, known flags, counts and payload caps; the same rules, in the
 * same order, as userspace/common/src/requests.cpp - then pins or copies
 * its payload and forwards it. A locally refused ioctl writes the contract
 * status into the caller's struct and returns its errno; an unknown ioctl
 * number returns -ENOTTY; a known number with another size returns
 * -EINVAL; a payload pointer that cannot be pinned returns -EFAULT with
 * status InvalidArgument / VACCEL_D_BAD_VALUE (arg0 = the pointer field's
 * offset, arg1 = the pointer); one into a mapping of a file that is not
 * shmem (vaccel_request.c says why) returns -EOPNOTSUPP with status
 * Unsupported / VACCEL_D_BAD_VALUE (the same args). A BUFFER_MAP answer's file enters the
 * session's map table (vaccel_map.c), which mmap() of the file serves.
 */
#include <linux/cgroup.h>
#include <linux/compat.h>
#include <linux/cred.h>
#include <linux/err.h>
#include <linux/errno.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/nospec.h>
#include <linux/pid.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/uidgid.h>

#include "vaccel_drv.h"

#define VACCEL_FIELD_NONE	U16_MAX

/* The layout rules of one op's struct. */
struct vaccel_op_rule {
	u16 size;
	u16 reserved_at;	/* a pad/reserved range, if reserved_bytes */
	u16 reserved_bytes;
	u16 reserved2_at;	/* a second one, if reserved2_bytes */
	u16 reserved2_bytes;
	u16 flags_at;		/* offset of the __u32 flags, or NONE */
	u32 known_flags;
	u16 pointer_at;		/* offset of the __u64 user pointer, or NONE */
};

/* A rule with no pad/reserved range, flags or user pointer. */
#define VACCEL_PLAIN(type) {						\
	.size = sizeof(struct type),					\
	.flags_at = VACCEL_FIELD_NONE,					\
	.pointer_at = VACCEL_FIELD_NONE,				\
}

#define VACCEL_PAD(type, field)						\
	.reserved_at = offsetof(struct type, field),			\
	.reserved_bytes = sizeof_field(struct type, field)
#define VACCEL_FLAGS(type)	.flags_at = offsetof(struct type, flags)
#define VACCEL_NO_FLAGS		.flags_at = VACCEL_FIELD_NONE
#define VACCEL_POINTER(type, field) \
	.pointer_at = offsetof(struct type, field)
#define VACCEL_NO_POINTER	.pointer_at = VACCEL_FIELD_NONE
#define VACCEL_GATE_VALUE {					\
	.size = sizeof(struct vaccel_gate_value),			\
	VACCEL_PAD(vaccel_gate_value, pad),				\
	.reserved2_at = offsetof(struct vaccel_gate_value, reserved),	\
	.reserved2_bytes = sizeof_field(struct vaccel_gate_value, reserved), \
	VACCEL_FLAGS(vaccel_gate_value), VACCEL_NO_POINTER,		\
}
#define VACCEL_TRANSFER {						\
	.size = sizeof(struct vaccel_buffer_transfer),			\
	VACCEL_PAD(vaccel_buffer_transfer, pad),			\
	VACCEL_FLAGS(vaccel_buffer_transfer),				\
	VACCEL_POINTER(vaccel_buffer_transfer, data),			\
}

/* Index = enum vaccel_op; mirrors the table of requests.cpp. */
static const struct vaccel_op_rule vaccel_op_rules[VACCEL_OP_COUNT] = {
	[VACCEL_OP_GET_VERSION] = {
		.size = sizeof(struct vaccel_get_version),
		VACCEL_PAD(vaccel_get_version, reserved),
		VACCEL_NO_FLAGS, VACCEL_NO_POINTER,
	},
	[VACCEL_OP_DEVICE_COUNT] = {
		.size = sizeof(struct vaccel_device_count),
		VACCEL_PAD(vaccel_device_count, pad),
		VACCEL_NO_FLAGS, VACCEL_NO_POINTER,
	},
	[VACCEL_OP_DEVICE_QUERY] = {
		.size = sizeof(struct vaccel_device_query),
		VACCEL_PAD(vaccel_device_query, pad),
		VACCEL_NO_FLAGS, VACCEL_NO_POINTER,
	},
	[VACCEL_OP_CONTEXT_CREATE] = {
		.size = sizeof(struct vaccel_context_create),
		VACCEL_FLAGS(vaccel_context_create), VACCEL_NO_POINTER,
	},
	[VACCEL_OP_CONTEXT_DESTROY] = VACCEL_PLAIN(vaccel_handle_release),
	[VACCEL_OP_BUFFER_ALLOC] = {
		.size = sizeof(struct vaccel_buffer_alloc),
		VACCEL_PAD(vaccel_buffer_alloc, pad),
		VACCEL_FLAGS(vaccel_buffer_alloc), VACCEL_NO_POINTER,
	},
	[VACCEL_OP_BUFFER_FREE] = VACCEL_PLAIN(vaccel_handle_release),
	[VACCEL_OP_BUFFER_WRITE] = VACCEL_TRANSFER,
	[VACCEL_OP_BUFFER_READ] = VACCEL_TRANSFER,
	[VACCEL_OP_PROGRAM_LOAD] = {
		.size = sizeof(struct vaccel_program_load),
		.reserved_at = offsetof(struct vaccel_program_load, target) +
			       offsetof(struct vaccel_tosa_target, pad),
		.reserved_bytes = sizeof_field(struct vaccel_tosa_target, pad),
		VACCEL_FLAGS(vaccel_program_load),
		VACCEL_POINTER(vaccel_program_load, payload),
	},
	[VACCEL_OP_PROGRAM_UNLOAD] = VACCEL_PLAIN(vaccel_handle_release),
	[VACCEL_OP_PROGRAM_SLOT] = VACCEL_PLAIN(vaccel_program_slot),
	[VACCEL_OP_QUEUE_CREATE] = {
		.size = sizeof(struct vaccel_queue_create),
		VACCEL_PAD(vaccel_queue_create, pad),
		VACCEL_FLAGS(vaccel_queue_create), VACCEL_NO_POINTER,
	},
	[VACCEL_OP_QUEUE_DESTROY] = VACCEL_PLAIN(vaccel_handle_release),
	[VACCEL_OP_SUBMIT] = {
		.size = sizeof(struct vaccel_submit),
		VACCEL_FLAGS(vaccel_submit),
		VACCEL_POINTER(vaccel_submit, bindings),
	},
	[VACCEL_OP_EVENT_POLL] = {
		.size = sizeof(struct vaccel_event_poll),
		VACCEL_PAD(vaccel_event_poll, pad),
		VACCEL_NO_FLAGS, VACCEL_NO_POINTER,
	},
	[VACCEL_OP_EVENT_WAIT] = {
		.size = sizeof(struct vaccel_event_wait),
		VACCEL_FLAGS(vaccel_event_wait),
		.known_flags = VACCEL_WAIT_ALL,
		VACCEL_POINTER(vaccel_event_wait, events),
	},
	[VACCEL_OP_EVENT_DESTROY] = VACCEL_PLAIN(vaccel_handle_release),
	[VACCEL_OP_CONTEXT_LIMITS] = {
		.size = sizeof(struct vaccel_context_limits),
		VACCEL_PAD(vaccel_context_limits, pad),
		VACCEL_NO_FLAGS, VACCEL_NO_POINTER,
	},
	[VACCEL_OP_GATE_CREATE] = {
		.size = sizeof(struct vaccel_gate_create),
		/* pad and reserved are adjacent but for the gate handle */
		VACCEL_PAD(vaccel_gate_create, pad),
		.reserved2_at = offsetof(struct vaccel_gate_create, reserved),
		.reserved2_bytes = sizeof_field(struct vaccel_gate_create,
						reserved),
		VACCEL_FLAGS(vaccel_gate_create), VACCEL_NO_POINTER,
	},
	[VACCEL_OP_GATE_RAISE] = VACCEL_GATE_VALUE,
	[VACCEL_OP_GATE_VALUE] = VACCEL_GATE_VALUE,
	[VACCEL_OP_GATE_DESTROY] = VACCEL_PLAIN(vaccel_handle_release),
	[VACCEL_OP_SUBMIT_AFTER] = {
		.size = sizeof(struct vaccel_submit_after),
		VACCEL_PAD(vaccel_submit_after, reserved),
		VACCEL_FLAGS(vaccel_submit_after),
		VACCEL_POINTER(vaccel_submit_after, bindings),
	},
	[VACCEL_OP_LAUNCH] = {
		.size = sizeof(struct vaccel_launch),
		/* pad and reserved[] are adjacent: one range */
		.reserved_at = offsetof(struct vaccel_launch, pad),
		.reserved_bytes = sizeof_field(struct vaccel_launch, pad) +
				  sizeof_field(struct vaccel_launch, reserved),
		VACCEL_FLAGS(vaccel_launch),
		VACCEL_POINTER(vaccel_launch, payload),
	},
	[VACCEL_OP_DEVICE_TOSA] = {
		.size = sizeof(struct vaccel_device_tosa),
		/* pad and reserved are adjacent: one range */
		.reserved_at = offsetof(struct vaccel_device_tosa, pad),
		.reserved_bytes = sizeof_field(struct vaccel_device_tosa, pad) +
				  sizeof_field(struct vaccel_device_tosa, reserved),
		VACCEL_FLAGS(vaccel_device_tosa), VACCEL_NO_POINTER,
	},
	[VACCEL_OP_RUN] = {
		.size = sizeof(struct vaccel_run),
		/* failure lies between pad and reserved: two ranges */
		VACCEL_PAD(vaccel_run, pad),
		.reserved2_at = offsetof(struct vaccel_run, reserved),
		.reserved2_bytes = sizeof_field(struct vaccel_run, reserved),
		VACCEL_FLAGS(vaccel_run),
		VACCEL_POINTER(vaccel_run, bindings),
	},
	[VACCEL_OP_BUFFER_MAP] = {
		.size = sizeof(struct vaccel_buffer_map),
		VACCEL_PAD(vaccel_buffer_map, pad),
		.reserved2_at = offsetof(struct vaccel_buffer_map, reserved),
		.reserved2_bytes = sizeof_field(struct vaccel_buffer_map,
						reserved),
		VACCEL_FLAGS(vaccel_buffer_map), VACCEL_NO_POINTER,
	},
};

static atomic64_t vaccel_next_session = ATOMIC64_INIT(0);

/* Any context. Offset of the first non-zero byte in [at, at + bytes). */
static int vaccel_first_nonzero(const u8 *args, u16 at, u16 bytes)
{
	u16 i;

	for (i = at; i < at + bytes; i++)
		if (args[i])
			return i;
	return -1;
}

/* Any context. */
static u64 vaccel_args_u64(const void *args, u16 at)
{
	u64 value;

	memcpy(&value, (const u8 *)args + at, sizeof(value));
	return value;
}

/*
 * Client task. The checks of check_request() and request_payload_size(),
 * in that order. Returns 0 or -errno with `status` filled.
 */
static int vaccel_args_check(u32 op, const struct vaccel_op_rule *rule,
			     const union vaccel_args *args,
			     struct vaccel_status *status)
{
	const u8 *bytes = (const u8 *)args;
	u32 flags, count;
	u64 payload;
	int at;

	at = vaccel_first_nonzero(bytes, 0, sizeof(struct vaccel_status));
	if (at < 0 && rule->reserved_bytes)
		at = vaccel_first_nonzero(bytes, rule->reserved_at,
					  rule->reserved_bytes);
	if (at < 0 && rule->reserved2_bytes)
		at = vaccel_first_nonzero(bytes, rule->reserved2_at,
					  rule->reserved2_bytes);
	if (at >= 0) {
		vaccel_status_set(status, VACCEL_E_INVALID_ARGUMENT,
				  VACCEL_D_RESERVED_NONZERO, at, 0);
		return -EINVAL;
	}
	if (rule->flags_at != VACCEL_FIELD_NONE) {
		memcpy(&flags, bytes + rule->flags_at, sizeof(flags));
		if (flags & ~rule->known_flags) {
			vaccel_status_set(status, VACCEL_E_INVALID_ARGUMENT,
					  VACCEL_D_UNKNOWN_FLAGS,
					  flags & ~rule->known_flags, 0);
			return -EINVAL;
		}
	}

	switch (op) {
	case VACCEL_OP_BUFFER_WRITE:
	case VACCEL_OP_BUFFER_READ:
		payload = args->buffer_transfer.length;
		break;
	case VACCEL_OP_PROGRAM_LOAD:
		payload = args->program_load.payload_bytes;
		break;
	case VACCEL_OP_SUBMIT:
	case VACCEL_OP_SUBMIT_AFTER:
	case VACCEL_OP_RUN:
		/* binding_count sits at the same offset in all three structs */
		BUILD_BUG_ON(offsetof(struct vaccel_submit, binding_count) !=
			     offsetof(struct vaccel_submit_after,
				      binding_count));
		BUILD_BUG_ON(offsetof(struct vaccel_submit, binding_count) !=
			     offsetof(struct vaccel_run, binding_count));
		count = args->submit.binding_count;
		if (count == 0) {
			vaccel_status_set(status, VACCEL_E_INVALID_ARGUMENT,
					  VACCEL_D_BAD_VALUE,
					  offsetof(struct vaccel_submit,
						   binding_count), 0);
			return -EINVAL;
		}
		if (count > VACCEL_MAX_BINDINGS) {
			vaccel_status_set(status, VACCEL_E_RESOURCE_LIMIT,
					  VACCEL_D_LIMIT, VACCEL_MAX_BINDINGS,
					  count);
			status->limit = VACCEL_LIMIT_BINDINGS;
			return -EDQUOT;
		}
		return 0;
	case VACCEL_OP_LAUNCH:
		count = args->launch.binding_count;
		if (count > VACCEL_MAX_BINDINGS) {
			vaccel_status_set(status, VACCEL_E_RESOURCE_LIMIT,
					  VACCEL_D_LIMIT, VACCEL_MAX_BINDINGS,
					  count);
			status->limit = VACCEL_LIMIT_BINDINGS;
			return -EDQUOT;
		}
		if (args->launch.argv_bytes > VACCEL_MAX_KERNEL_ARGS_BYTES) {
			vaccel_status_set(status, VACCEL_E_RESOURCE_LIMIT,
					  VACCEL_D_LIMIT,
					  VACCEL_MAX_KERNEL_ARGS_BYTES,
					  args->launch.argv_bytes);
			status->limit = VACCEL_LIMIT_KERNEL_ARGS_BYTES;
			return -EDQUOT;
		}
		return 0;
	case VACCEL_OP_EVENT_WAIT:
		count = args->event_wait.count;
		if (count == 0 || count > VACCEL_MAX_WAIT_EVENTS) {
			vaccel_status_set(status, VACCEL_E_INVALID_ARGUMENT,
					  VACCEL_D_BAD_VALUE,
					  offsetof(struct vaccel_event_wait,
						   count), count);
			return -EINVAL;
		}
		return 0;
	default:
		return 0;
	}
	if (payload > VACCEL_SRV_PAYLOAD_MAX) {
		vaccel_status_set(status, VACCEL_E_INVALID_ARGUMENT,
				  VACCEL_D_BAD_SIZE, payload,
				  VACCEL_SRV_PAYLOAD_MAX);
		return -EINVAL;
	}
	return 0;
}

/*
 * Client task. Records (large) or copies (small) the bytes the op's user
 * pointer names and sets the header's payload_bytes. The counts were
 * bounded by vaccel_args_check().
 */
static int vaccel_args_take_payload(struct vaccel_request *req, u32 op,
				    u64 uaddr)
{
	union vaccel_args *args = &req->message.args;
	u64 bytes = 0;
	int ret = 0;

	switch (op) {
	case VACCEL_OP_BUFFER_WRITE:
		bytes = args->buffer_transfer.length;
		ret = vaccel_request_user_payload(req, uaddr, bytes, false);
		break;
	case VACCEL_OP_BUFFER_READ:
		/* The data comes back by pwrite; the request carries none. */
		ret = vaccel_request_user_payload(req, uaddr,
						  args->buffer_transfer.length,
						  true);
		break;
	case VACCEL_OP_PROGRAM_LOAD:
		bytes = args->program_load.payload_bytes;
		ret = vaccel_request_user_payload(req, uaddr, bytes, false);
		break;
	case VACCEL_OP_SUBMIT:
	case VACCEL_OP_SUBMIT_AFTER:
	case VACCEL_OP_RUN:
		bytes = (u64)args->submit.binding_count *
			sizeof(struct vaccel_binding);
		ret = vaccel_request_copy_payload(req, uaddr, bytes);
		break;
	case VACCEL_OP_LAUNCH:
		bytes = (u64)args->launch.binding_count *
			sizeof(struct vaccel_binding) + args->launch.argv_bytes;
		ret = vaccel_request_copy_payload(req, uaddr, bytes);
		break;
	case VACCEL_OP_EVENT_WAIT:
		bytes = (u64)args->event_wait.count * sizeof(__u64);
		ret = vaccel_request_copy_payload(req, uaddr, bytes);
		break;
	default:
		break;
	}
	req->message.header.payload_bytes = bytes;
	return ret;
}

/*
 * Client task. A BUFFER_MAP the daemon answered with the buffer's file:
 * enters it into the session's table and shows the client its token
 * instead of the daemon's offset. Returns 0 or -errno with `status` set.
 */
static int vaccel_map_answered(struct vaccel_session *session,
			       struct vaccel_request *req,
			       struct vaccel_status *status)
{
	struct vaccel_buffer_map *answer = &req->reply.buffer_map;
	u64 token;
	int ret;

	ret = vaccel_maps_add(session, req->map, req->map_file_offset,
			      answer->map_bytes, &token);
	if (ret == -EDQUOT) {
		vaccel_status_set(status, VACCEL_E_RESOURCE_LIMIT,
				  VACCEL_D_LIMIT, VACCEL_SRV_MAPS_MAX,
				  VACCEL_SRV_MAPS_MAX + 1);
		status->limit = VACCEL_LIMIT_HANDLES;
		return ret;
	}
	if (ret) {
		vaccel_status_set(status, VACCEL_E_OUT_OF_MEMORY,
				  VACCEL_D_NONE, 0, 0);
		return ret;
	}
	answer->map_offset = token;
	return 0;
}

/* Client task: an ioctl on /dev/vaccel. */
static long vaccel_client_ioctl(struct file *file, unsigned int cmd,
				unsigned long arg)
{
	struct vaccel_session *session = file->private_data;
	void __user *argp = (void __user *)arg;
	const struct vaccel_op_rule *rule;
	struct vaccel_request *req;
	struct vaccel_status status;
	union vaccel_args *args;
	u64 uaddr = 0;
	u32 op;
	int ret;

	op = _IOC_NR(cmd);
	if (_IOC_TYPE(cmd) != VACCEL_IOCTL_BASE || op >= VACCEL_OP_COUNT ||
	    _IOC_DIR(cmd) != (_IOC_READ | _IOC_WRITE))
		return -ENOTTY;
	op = array_index_nospec(op, VACCEL_OP_COUNT);
	rule = &vaccel_op_rules[op];
	if (_IOC_SIZE(cmd) != rule->size)
		return -EINVAL;

	if (atomic_inc_return(&session->requests) >
	    VACCEL_SRV_SESSION_REQUESTS) {
		atomic_dec(&session->requests);
		vaccel_status_set(&status, VACCEL_E_BUSY, VACCEL_D_LIMIT,
				  VACCEL_SRV_SESSION_REQUESTS, 0);
		if (copy_to_user(argp, &status, sizeof(status)))
			return -EFAULT;
		return -EBUSY;
	}
	req = vaccel_request_alloc(session->server, op, session->id, NULL,
				   rule->size);
	if (!req) {
		atomic_dec(&session->requests);
		return -ENOMEM;
	}
	/* The request's session reference; its release ends the count. */
	kref_get(&session->ref);
	req->session = session;
	args = &req->message.args;
	/* rule->size == _IOC_SIZE(cmd) <= sizeof(*args) (vaccel_main.c) */
	if (copy_from_user(args, argp, rule->size)) {
		ret = -EFAULT;
		goto out;
	}
	ret = vaccel_args_check(op, rule, args, &status);
	if (ret)
		goto refuse;
	if (vaccel_server_is_dead(session->server)) {
		ret = -ENODEV;
		vaccel_status_set(&status, VACCEL_E_DEVICE_LOST,
				  VACCEL_D_PEER_GONE, 0, 0);
		goto refuse;
	}
	if (rule->pointer_at != VACCEL_FIELD_NONE) {
		uaddr = vaccel_args_u64(args, rule->pointer_at);
		ret = vaccel_args_take_payload(req, op, uaddr);
		if (ret) {
			if (ret == -ENOMEM)
				vaccel_status_set(&status,
						  VACCEL_E_OUT_OF_MEMORY,
						  VACCEL_D_NONE, 0, 0);
			else if (ret == -EOPNOTSUPP)
				vaccel_status_set(&status,
						  VACCEL_E_UNSUPPORTED,
						  VACCEL_D_BAD_VALUE,
						  rule->pointer_at, uaddr);
			else
				vaccel_status_set(&status,
						  VACCEL_E_INVALID_ARGUMENT,
						  VACCEL_D_BAD_VALUE,
						  rule->pointer_at, uaddr);
			goto refuse;
		}
		/* The wire carries no user pointers. */
		memset((u8 *)args + rule->pointer_at, 0, sizeof(u64));
	}

	req->waited = true;
	ret = vaccel_server_submit(session->server, req);
	if (!ret)
		ret = vaccel_server_wait(req, NULL);
	if (ret == -EINTR || ret == -ERESTARTSYS)
		goto out;	/* a signal: the call restarts, or fails as is */
	if (req->answered && req->map) {
		ret = vaccel_map_answered(session, req, &status);
		if (ret)
			goto refuse;
	}
	if (req->answered) {
		if (rule->pointer_at != VACCEL_FIELD_NONE)
			memcpy((u8 *)&req->reply + rule->pointer_at, &uaddr,
			       sizeof(uaddr));
		/* rule->size was checked against _IOC_SIZE(cmd) above */
		if (copy_to_user(argp, &req->reply, rule->size))
			ret = -EFAULT;
		goto out;
	}
	if (ret == -ENODEV)
		vaccel_status_set(&status, VACCEL_E_DEVICE_LOST,
				  VACCEL_D_PEER_GONE, 0, 0);
	else
		status = req->reply.status;
refuse:
	/* sizeof(status) <= rule->size: every struct starts with it */
	if (copy_to_user(argp, &status, sizeof(status)))
		ret = -EFAULT;
out:
	vaccel_request_put(req);
	return ret;
}

/* Client task. The opener's cgroup2 cgroup, as the initial namespace sees it. */
static void vaccel_session_cgroup(struct vaccel_srv_session_open *open)
{
#ifdef CONFIG_CGROUPS
	struct cgroup *cgrp;
	int ret;

	rcu_read_lock();
	cgrp = task_dfl_cgroup(current);
	open->cgroup_id = cgroup_id(cgrp);
	ret = cgroup_path(cgrp, open->cgroup, sizeof(open->cgroup));
	rcu_read_unlock();
	if (ret >= 0)
		return;
#endif
	strscpy(open->cgroup, "/", sizeof(open->cgroup));
}

/* Sessions alive (a file or a request holds them), for max_sessions. */
static atomic_t vaccel_sessions_alive = ATOMIC_INIT(0);

/* Any context. */
int vaccel_sessions_alive_count(void)
{
	return atomic_read(&vaccel_sessions_alive);
}

/* Process context: the last reference frees what the file left. */
static void vaccel_session_free(struct kref *ref)
{
	struct vaccel_session *session = container_of(ref,
						      struct vaccel_session,
						      ref);
	struct vaccel_server *server = session->server;

	spin_lock(&server->queue_lock);
	list_del(&session->server_node);
	spin_unlock(&server->queue_lock);
	vaccel_server_put(server);
	vaccel_user_uncharge(session->uid);
	kfree(session);
	atomic_dec(&vaccel_sessions_alive);
}

/* Process context, may sleep; never with queue_lock held. */
void vaccel_session_put(struct vaccel_session *session)
{
	kref_put(&session->ref, vaccel_session_free);
}

/*
 * Client task. A new session of `server` (whose reference it takes over on
 * success), charged to the caller's memory cgroup and to `uid`; or
 * ERR_PTR(-ENFILE) past max_sessions, ERR_PTR(-EDQUOT) past
 * max_sessions_per_user, ERR_PTR(-ENOMEM).
 */
static struct vaccel_session *vaccel_session_alloc(struct vaccel_server *server,
						   kuid_t uid)
{
	struct vaccel_session *session;
	int ret = -ENFILE;

	if (atomic_inc_return(&vaccel_sessions_alive) > vaccel_max_sessions())
		goto refuse;
	ret = vaccel_user_charge(uid);
	if (ret)
		goto refuse;
	session = kzalloc(sizeof(*session), GFP_KERNEL_ACCOUNT);
	if (!session) {
		vaccel_user_uncharge(uid);
		ret = -ENOMEM;
		goto refuse;
	}
	kref_init(&session->ref);	/* the file's */
	session->server = server;
	session->uid = uid;		/* given back by vaccel_session_free */
	session->id = atomic64_inc_return(&vaccel_next_session);
	session->pid = task_tgid_nr(current);
	INIT_LIST_HEAD(&session->queue);
	INIT_LIST_HEAD(&session->turn_node);
	vaccel_maps_init(session);
	spin_lock(&server->queue_lock);
	list_add_tail(&session->server_node, &server->sessions);
	spin_unlock(&server->queue_lock);
	return session;
refuse:
	atomic_dec(&vaccel_sessions_alive);
	return ERR_PTR(ret);
}

/*
 * Client task: open of /dev/vaccel. The daemon learns of the session (and
 * may refuse it) before the open returns. -ENFILE past max_sessions,
 * -EDQUOT past max_sessions_per_user (the opener's effective uid, the uid
 * SESSION_OPEN names).
 */
static int vaccel_client_open(struct inode *inode, struct file *file)
{
	struct vaccel_srv_session_close *close_args;
	struct vaccel_srv_session_open *open_args;
	struct vaccel_request *open = NULL;
	struct vaccel_request *close = NULL;
	struct vaccel_session *session;
	struct vaccel_server *server;
	int ret = -ENOMEM;

	if (!vaccel_client_may_open())
		return -EACCES;
	server = vaccel_server_get_attached();
	if (!server)
		return -ENODEV;
	session = vaccel_session_alloc(server, file->f_cred->euid);
	if (IS_ERR(session)) {
		vaccel_server_put(server);
		return PTR_ERR(session);
	}

	open = vaccel_request_alloc(server, VACCEL_OP_SESSION_OPEN,
				    session->id, NULL,
				    sizeof(struct vaccel_srv_session_open));
	close = vaccel_request_alloc(server, VACCEL_OP_SESSION_CLOSE,
				     session->id, NULL,
				     sizeof(struct vaccel_srv_session_close));
	if (!open || !close)
		goto fail;
	open_args = &open->message.args.session_open;
	open_args->session = session->id;
	open_args->pid = task_tgid_nr(current);
	open_args->uid = from_kuid_munged(&init_user_ns, file->f_cred->euid);
	open_args->gid = from_kgid_munged(&init_user_ns, file->f_cred->egid);
	vaccel_session_cgroup(open_args);
	open_args->notify_fd = -1;	/* an answer that echoes it names none */
	close_args = &close->message.args.session_close;
	close_args->session = session->id;

	open->waited = true;
	ret = vaccel_server_submit(server, open);
	if (!ret)
		ret = vaccel_server_wait(open, &close);
	if (ret)
		goto fail;
	session->notify = open->notify;	/* the session's now */
	open->notify = NULL;
	vaccel_request_put(open);
	session->close = close;
	file->private_data = session;
	return 0;

fail:
	if (open)
		vaccel_request_put(open);
	if (close)
		vaccel_request_put(close);
	vaccel_session_put(session);	/* also the server's reference */
	return ret;
}

/*
 * Process context: last close of a session's file (exit of a killed client
 * included). Sends SESSION_CLOSE without waiting for the answer; requests
 * of the session still held by the daemon keep the session's memory.
 */
static int vaccel_client_release(struct inode *inode, struct file *file)
{
	struct vaccel_session *session = file->private_data;

	if (!vaccel_server_is_dead(session->server))
		vaccel_server_submit(session->server, session->close);
	vaccel_request_put(session->close);
	if (session->notify)
		fput(session->notify);
	vaccel_maps_release(session);
	vaccel_session_put(session);	/* the file's */
	return 0;
}

/*
 * Any task: poll() of a session. Readable when the daemon's notify eventfd
 * is (an event of the session completed since its last EVENT_POLL or
 * EVENT_WAIT reached the daemon); error and hang-up once the daemon is gone.
 * A session the daemon gave no eventfd (it had none to give) is always
 * readable: its client polls its events more often than needed, but never
 * sleeps through a completion.
 */
static __poll_t vaccel_client_poll(struct file *file, poll_table *wait)
{
	struct vaccel_session *session = file->private_data;

	poll_wait(file, &vaccel_death_wq, wait);
	if (vaccel_server_is_dead(session->server))
		return EPOLLERR | EPOLLHUP;
	if (!session->notify)
		return EPOLLIN | EPOLLRDNORM;
	return vfs_poll(session->notify, wait) & (EPOLLIN | EPOLLRDNORM);
}

const struct file_operations vaccel_client_fops = {
	.owner = THIS_MODULE,
	.open = vaccel_client_open,
	.release = vaccel_client_release,
	.unlocked_ioctl = vaccel_client_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.poll = vaccel_client_poll,
	.mmap = vaccel_client_mmap,
	.llseek = noop_llseek,
};
