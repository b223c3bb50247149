// SPDX-License-Identifier: GPL-2.0
/*
 * vaccel_slot.c - the request state machine of /dev/vaccel-server.
 *
 * Owns every change of a request's state and of a slot's state: queueing
 * (client side), matching a request with a parked command, delivering the
 * message into the daemon's buffer (task work in the serving thread),
 * taking a request back when its client is killed, and the commit of an
 * answer. The states and their owners are documented in vaccel_drv.h; the
 * protocol in uapi/vaccel_server.h.
 */
#include <linux/errno.h>
#include <linux/eventfd.h>
#include <linux/file.h>
#include <linux/mm.h>
#include <linux/nospec.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/uaccess.h>

#include "vaccel_drv.h"

/* Message sequence numbers, unique among all requests of this module. */
static atomic64_t vaccel_next_seq = ATOMIC64_INIT(0);

/* Any context. Completes a command taken out of a slot. */
void vaccel_cmd_done(struct io_uring_cmd *cmd, ssize_t ret,
		     unsigned int issue_flags)
{
#if VACCEL_CMD_HAS_ISSUE_FLAGS
	io_uring_cmd_done(cmd, ret, 0, issue_flags);
#else
	io_uring_cmd_done(cmd, ret, 0);
#endif
}

/*
 * queue_lock held. Ends the holder's (queue's or slot's) hold on `req`
 * with `result`; the holder's reference moves to `reap`, dropped by the
 * caller after unlocking. An aborted request has nobody to tell.
 */
void vaccel_request_finish_locked(struct vaccel_request *req, int result,
				  struct list_head *reap)
{
	req->result = result;
	if (req->state != VACCEL_REQ_ABORTED) {
		req->state = VACCEL_REQ_DONE;
		complete(&req->done);
	}
	list_add_tail(&req->node, reap);
}

/* Process context; drops the references collected by *_locked helpers. */
void vaccel_reap(struct list_head *reap)
{
	struct vaccel_request *req, *next;

	list_for_each_entry_safe(req, next, reap, node) {
		list_del_init(&req->node);
		vaccel_request_put(req);
	}
}

/* queue_lock held. Gives `req` (and the slot's reference) to `slot`. */
static void vaccel_slot_match_locked(struct vaccel_slot *slot,
				     struct vaccel_request *req)
{
	slot->state = VACCEL_SLOT_DELIVERING;
	slot->req = req;
	req->state = req->waited ? VACCEL_REQ_DELIVERED : VACCEL_REQ_ABORTED;
}

/*
 * queue_lock held, server alive. Puts `req` (whose holder reference the
 * caller already took) on a parked slot, else on the queue (at its head
 * when it is handed back). Returns the command to complete in task, or
 * NULL.
 */
static struct io_uring_cmd *vaccel_server_place_locked(struct vaccel_server *server,
						       struct vaccel_request *req,
						       bool at_head)
{
	struct vaccel_slot *slot;

	slot = list_first_entry_or_null(&server->parked, struct vaccel_slot,
					parked_node);
	if (!slot) {
		req->state = VACCEL_REQ_QUEUED;
		if (at_head)
			list_add(&req->node, &server->queue);
		else
			list_add_tail(&req->node, &server->queue);
		return NULL;
	}
	list_del_init(&slot->parked_node);
	vaccel_slot_match_locked(slot, req);
	return slot->cmd;
}

static void vaccel_slot_task_work(struct io_uring_cmd *cmd,
				  unsigned int issue_flags);

#if !VACCEL_CMD_HAS_ISSUE_FLAGS
static void vaccel_slot_task_work_legacy(struct io_uring_cmd *cmd)
{
	vaccel_slot_task_work(cmd, 0);
}
#endif

/* Any process context. Runs the delivery of `cmd` in the serving thread. */
static void vaccel_slot_kick(struct io_uring_cmd *cmd)
{
#if VACCEL_CMD_HAS_ISSUE_FLAGS
	io_uring_cmd_complete_in_task(cmd, vaccel_slot_task_work);
#else
	io_uring_cmd_complete_in_task(cmd, vaccel_slot_task_work_legacy);
#endif
}

/* Client task (or release). Queues `req`; the daemon will see it. */
int vaccel_server_submit(struct vaccel_server *server,
			 struct vaccel_request *req)
{
	struct io_uring_cmd *cmd;

	req->message.header.seq = atomic64_inc_return(&vaccel_next_seq);
	spin_lock(&server->queue_lock);
	if (server->dead) {
		spin_unlock(&server->queue_lock);
		return -ENODEV;
	}
	vaccel_request_get(req);	/* the queue's, then the slot's */
	cmd = vaccel_server_place_locked(server, req, false);
	spin_unlock(&server->queue_lock);
	if (cmd)
		vaccel_slot_kick(cmd);
	return 0;
}

/*
 * Client task. Sleeps killably until `req` is done. On a fatal signal the
 * request is taken back if still queued, else marked aborted (the daemon's
 * answer will be discarded); an aborted SESSION_OPEN sends *close_on_abort
 * (which is then consumed: set to NULL). Returns the request's result, or
 * -EINTR when the wait was cut short.
 */
int vaccel_server_wait(struct vaccel_request *req,
		       struct vaccel_request **close_on_abort)
{
	struct vaccel_server *server = req->server;
	struct io_uring_cmd *cmd = NULL;
	bool taken_back = false;

	if (!wait_for_completion_killable(&req->done))
		return req->result;

	spin_lock(&server->queue_lock);
	switch (req->state) {
	case VACCEL_REQ_QUEUED:
		list_del_init(&req->node);
		taken_back = true;
		break;
	case VACCEL_REQ_DELIVERED:
		req->state = VACCEL_REQ_ABORTED;
		if (close_on_abort && *close_on_abort && !server->dead) {
			struct vaccel_request *close = *close_on_abort;

			close->message.header.seq =
				atomic64_inc_return(&vaccel_next_seq);
			/* The caller's reference becomes the holder's. */
			cmd = vaccel_server_place_locked(server, close, false);
			*close_on_abort = NULL;
		}
		break;
	case VACCEL_REQ_ABORTED:
		break;
	case VACCEL_REQ_DONE:
		spin_unlock(&server->queue_lock);
		return req->result;
	}
	spin_unlock(&server->queue_lock);
	if (cmd)
		vaccel_slot_kick(cmd);
	if (taken_back)
		vaccel_request_put(req);	/* the queue's reference */
	return -EINTR;
}

/*
 * Daemon task: the serving thread (its task work, or its uring_cmd call).
 * `slot` is DELIVERING with `cmd`: copy the request's message into the
 * daemon's buffer and complete `cmd` with the bytes written. If the copy
 * cannot happen, the request goes back to the queue (or, when nobody needs
 * it any more, is dropped) and `cmd` fails.
 */
static void vaccel_slot_deliver(struct vaccel_server *server,
				struct vaccel_slot *slot,
				struct io_uring_cmd *cmd,
				unsigned int issue_flags)
{
	struct io_uring_cmd *kick = NULL;
	struct vaccel_request *req;
	ssize_t ret = -ENODEV;
	bool serving;
	LIST_HEAD(reap);

	spin_lock(&server->queue_lock);
	req = slot->req;
	if (req)
		vaccel_request_get(req);	/* for the copy below */
	serving = current == server->task &&
		  !(current->flags & PF_EXITING) && !server->dead;
	spin_unlock(&server->queue_lock);

	if (req && serving) {
		/* message_bytes <= sizeof(struct vaccel_wire) (request alloc) */
		if (copy_to_user(u64_to_user_ptr(slot->buffer), &req->message,
				 req->message_bytes))
			ret = -EFAULT;
		else
			ret = req->message_bytes;
	}

	spin_lock(&server->queue_lock);
	slot->cmd = NULL;
	if (req && slot->req == req) {
		if (ret > 0) {
			slot->state = VACCEL_SLOT_DELIVERED;
		} else {
			/*
			 * The daemon never saw it: hand it back, to another
			 * parked slot if the buffer was bad, to the queue if
			 * the serving thread is exiting (the monitor ends it).
			 */
			slot->req = NULL;
			slot->state = VACCEL_SLOT_IDLE;
			if (req->waited && req->state == VACCEL_REQ_ABORTED) {
				list_add_tail(&req->node, &reap);
			} else if (ret == -EFAULT) {
				kick = vaccel_server_place_locked(server, req,
								  true);
			} else {
				req->state = VACCEL_REQ_QUEUED;
				list_add(&req->node, &server->queue);
			}
		}
	} else {
		/* The death path failed the request meanwhile. */
		slot->req = NULL;
		slot->state = VACCEL_SLOT_IDLE;
		ret = -ENODEV;
	}
	spin_unlock(&server->queue_lock);

	if (kick)
		vaccel_slot_kick(kick);
	if (req)
		vaccel_request_put(req);
	vaccel_reap(&reap);
	vaccel_cmd_done(cmd, ret, issue_flags);
}

/* Daemon task work (or io_uring's fallback worker if the daemon exits). */
static void vaccel_slot_task_work(struct io_uring_cmd *cmd,
				  unsigned int issue_flags)
{
	struct vaccel_cmd_pdu *pdu = (struct vaccel_cmd_pdu *)cmd->pdu;
	struct vaccel_server *server = pdu->server;
	struct vaccel_slot *slot = &server->slots[pdu->slot];
	bool delivering;

	spin_lock(&server->queue_lock);
	delivering = slot->cmd == cmd &&
		     slot->state == VACCEL_SLOT_DELIVERING;
	spin_unlock(&server->queue_lock);
	if (WARN_ON_ONCE(!delivering)) {
		vaccel_cmd_done(cmd, -EIO, issue_flags);
		return;
	}
	vaccel_slot_deliver(server, slot, cmd, issue_flags);
}

/*
 * Daemon task. Checks a response read from the daemon's buffer against
 * the request it answers. Returns 0 or -EINVAL.
 */
static int vaccel_reply_check(const struct vaccel_request *req,
			      const struct vaccel_wire *reply)
{
	const struct vaccel_msg_header *asked = &req->message.header;
	const struct vaccel_msg_header *told = &reply->header;
	const struct vaccel_status *status = &reply->args.status;
	u32 flags = VACCEL_MSG_RESPONSE;
	u32 payload = 0;

	if (told->magic != VACCEL_MSG_MAGIC ||
	    told->opcode != asked->opcode || told->seq != asked->seq ||
	    told->args_bytes != asked->args_bytes)
		return -EINVAL;
	if (status->error >= VACCEL_E_COUNT ||
	    status->detail >= VACCEL_D_COUNT ||
	    status->limit >= VACCEL_LIMIT_COUNT || status->pad != 0)
		return -EINVAL;
	if (asked->opcode == VACCEL_OP_BUFFER_READ && status->error == VACCEL_OK)
		payload = req->payload.bytes;
	if (asked->opcode == VACCEL_OP_BUFFER_MAP &&
	    status->error == VACCEL_OK) {
		flags |= VACCEL_MSG_PASSES_FD;
		payload = sizeof(struct vaccel_srv_map);
	}
	if (told->flags != flags || told->payload_bytes != payload)
		return -EINVAL;
	return 0;
}

/*
 * Daemon task (serving thread), so that the descriptor number names a file
 * of the daemon's. An accepted SESSION_OPEN's answer names the session's
 * notify eventfd: takes a reference to it into *notify. Returns 0, or
 * -EINVAL when the number is no eventfd of the daemon's.
 */
static int vaccel_reply_notify(const struct vaccel_request *req,
			       const struct vaccel_wire *reply,
			       struct file **notify)
{
	const struct vaccel_srv_session_open *open = &reply->args.session_open;
	struct file *file;

	if (req->message.header.opcode != VACCEL_OP_SESSION_OPEN ||
	    open->status.error != VACCEL_OK || open->notify_fd < 0)
		return 0;
	file = eventfd_fget(open->notify_fd);
	if (IS_ERR(file))
		return -EINVAL;
	*notify = file;
	return 0;
}

/*
 * Daemon task (serving thread), so that the descriptor number names a file
 * of the daemon's. A BUFFER_MAP that succeeded is followed in `buffer` by
 * struct vaccel_srv_map: takes a reference to the file it names into *map
 * and its offset into *offset. Returns 0, -EFAULT, or -EINVAL when the
 * file cannot back the mapping (uapi/vaccel_server.h, step 6).
 */
static int vaccel_reply_map(const struct vaccel_request *req,
			    const struct vaccel_wire *reply, u64 buffer,
			    struct file **map, u64 *offset)
{
	const struct vaccel_buffer_map *answer = &reply->args.buffer_map;
	const fmode_t rw = FMODE_READ | FMODE_WRITE;
	struct vaccel_srv_map where;
	struct file *file;
	u64 end;

	if (req->message.header.opcode != VACCEL_OP_BUFFER_MAP ||
	    answer->status.error != VACCEL_OK)
		return 0;
	/* In the buffer: message_bytes + sizeof(where) <= its size (init). */
	if (copy_from_user(&where, u64_to_user_ptr(buffer + req->message_bytes),
			   sizeof(where)))
		return -EFAULT;
	if (where.fd < 0 || where.pad != 0 || !PAGE_ALIGNED(where.offset) ||
	    check_add_overflow(where.offset, answer->map_bytes, &end))
		return -EINVAL;
	file = fget(where.fd);
	if (!file)
		return -EINVAL;
	if (!file->f_op->mmap || (file->f_mode & rw) != rw ||
	    i_size_read(file_inode(file)) < 0 ||
	    (u64)i_size_read(file_inode(file)) < end) {
		fput(file);
		return -EINVAL;
	}
	*map = file;
	*offset = where.offset;
	return 0;
}

/*
 * Daemon task (serving thread). COMMIT_AND_FETCH: takes the answer of the
 * request delivered on `slot` from `buffer`. Returns 0 when the slot may
 * fetch again, or the command's error. The request is done either way.
 */
static int vaccel_slot_commit(struct vaccel_server *server,
			      struct vaccel_slot *slot, u64 buffer)
{
	/*
	 * Invariant: only the serving thread gets here, one command at a
	 * time, so server->scratch has one user.
	 */
	struct vaccel_wire *reply = &server->scratch;
	struct file *notify = NULL;
	struct file *map = NULL;
	struct vaccel_request *req;
	u64 map_offset = 0;
	int ret = 0;
	LIST_HEAD(reap);

	spin_lock(&server->queue_lock);
	req = slot->state == VACCEL_SLOT_DELIVERED ? slot->req : NULL;
	if (req)
		vaccel_request_get(req);
	spin_unlock(&server->queue_lock);
	if (!req)
		return -EINVAL;

	/* message_bytes <= sizeof(*reply) (request alloc) */
	if (copy_from_user(reply, u64_to_user_ptr(buffer), req->message_bytes))
		ret = -EFAULT;
	else
		ret = vaccel_reply_check(req, reply);
	if (!ret)
		ret = vaccel_reply_notify(req, reply, &notify);
	if (!ret)
		ret = vaccel_reply_map(req, reply, buffer, &map, &map_offset);

	spin_lock(&server->queue_lock);
	if (slot->req == req) {
		int result = -EIO;

		slot->req = NULL;
		slot->state = VACCEL_SLOT_IDLE;
		if (ret) {
			vaccel_status_set(&req->reply.status, VACCEL_E_EXTERNAL,
					  VACCEL_D_NONE, 0, 0);
		} else if (req->state == VACCEL_REQ_DELIVERED) {
			memcpy(&req->reply, &reply->args,
			       req->message.header.args_bytes);
			req->answered = true;
			req->notify = notify;	/* the request's now */
			notify = NULL;
			req->map = map;		/* likewise */
			map = NULL;
			req->map_file_offset = map_offset;
			result = vaccel_error_to_errno(reply->args.status.error);
		}
		vaccel_request_finish_locked(req, result, &reap);
	} else {
		ret = -ENODEV;	/* failed by the death path meanwhile */
	}
	spin_unlock(&server->queue_lock);

	if (notify)
		fput(notify);	/* nobody took it: refused, or aborted */
	if (map)
		fput(map);
	vaccel_request_put(req);
	vaccel_reap(&reap);
	return ret;
}

/*
 * Daemon task (serving thread). Parks `cmd` on `slot`, or hands it the
 * oldest queued request at once. Returns -EIOCBQUEUED (the command is
 * taken care of) or an error for the caller to complete it with.
 */
static int vaccel_slot_fetch(struct vaccel_server *server,
			     struct vaccel_slot *slot, struct io_uring_cmd *cmd,
			     u64 buffer, unsigned int issue_flags)
{
	struct vaccel_cmd_pdu *pdu = (struct vaccel_cmd_pdu *)cmd->pdu;
	struct vaccel_request *req;

	spin_lock(&server->queue_lock);
	if (server->dead) {
		spin_unlock(&server->queue_lock);
		return -ENODEV;
	}
	if (slot->state != VACCEL_SLOT_IDLE) {
		spin_unlock(&server->queue_lock);
		return -EBUSY;
	}
	slot->buffer = buffer;
	slot->cmd = cmd;
	pdu->server = server;
	pdu->slot = slot->index;
	req = list_first_entry_or_null(&server->queue, struct vaccel_request,
				       node);
	if (!req) {
		slot->state = VACCEL_SLOT_PARKED;
		list_add_tail(&slot->parked_node, &server->parked);
		spin_unlock(&server->queue_lock);
		return -EIOCBQUEUED;
	}
	list_del_init(&req->node);
	vaccel_slot_match_locked(slot, req);
	spin_unlock(&server->queue_lock);
	vaccel_slot_deliver(server, slot, cmd, issue_flags);
	return -EIOCBQUEUED;
}

/* Daemon task: the serving thread's uring_cmd issue. */
static int vaccel_server_command(struct vaccel_server *server,
				 struct io_uring_cmd *cmd,
				 const struct vaccel_srv_cmd *args,
				 unsigned int issue_flags)
{
	struct vaccel_slot *slot;
	u32 index = args->slot;
	int ret = 0;

	if (cmd->cmd_op != VACCEL_SRV_FETCH &&
	    cmd->cmd_op != VACCEL_SRV_COMMIT_AND_FETCH)
		return -EOPNOTSUPP;
	if (index >= VACCEL_SRV_MAX_SLOTS || args->flags != 0 ||
	    !args->buffer ||
	    !access_ok(u64_to_user_ptr(args->buffer), VACCEL_SRV_BUFFER_BYTES))
		return -EINVAL;
	slot = &server->slots[array_index_nospec(index, VACCEL_SRV_MAX_SLOTS)];

	spin_lock(&server->queue_lock);
	if (server->dead)
		ret = -ENODEV;
	else if (!server->hello)
		ret = -EPROTO;
	else if (!server->task)
		server->task = get_task_struct(current);
	else if (server->task != current)
		ret = -EINVAL;
	spin_unlock(&server->queue_lock);
	if (ret)
		return ret;

	if (cmd->cmd_op == VACCEL_SRV_COMMIT_AND_FETCH) {
		ret = vaccel_slot_commit(server, slot, args->buffer);
		if (ret)
			return ret;
	}
	return vaccel_slot_fetch(server, slot, cmd, args->buffer, issue_flags);
}

/* Daemon task: io_uring issue of IORING_OP_URING_CMD. */
int vaccel_server_uring_cmd(struct io_uring_cmd *cmd,
			    unsigned int issue_flags)
{
	const struct vaccel_srv_cmd *sqe_args = cmd->cmd;
	struct vaccel_server *server = cmd->file->private_data;
	struct vaccel_srv_cmd args;
	int ret;

	/* The SQE is not ours after this call: read it once, now. */
	args.slot = READ_ONCE(sqe_args->slot);
	args.flags = READ_ONCE(sqe_args->flags);
	args.buffer = READ_ONCE(sqe_args->buffer);

	ret = vaccel_server_command(server, cmd, &args, issue_flags);
	if (ret != -EIOCBQUEUED)
		vaccel_cmd_done(cmd, ret, issue_flags);
	return -EIOCBQUEUED;
}
