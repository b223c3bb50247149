// SPDX-License-Identifier: GPL-2.0
/*
 * The request state machine of /dev/vaccel-server.
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

/*
 * queue_lock held. Ends the holder's (queue's, slot's or the deferred
 * table's) hold on `req` with `result`; the holder's reference moves to
 * `reap`, dropped by the caller after unlocking. An aborted request has
 * nobody to tell.
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

/*
 * queue_lock held. Puts QUEUED `req` on its session's queue (the module's
 * own messages: on server->control), at the tail, or at the head when it
 * is handed back; a session with work takes its place in the turns.
 */
static void vaccel_queue_add_locked(struct vaccel_server *server,
				    struct vaccel_request *req, bool at_head)
{
	struct vaccel_session *session = req->session;
	struct list_head *queue = session ? &session->queue : &server->control;

	req->state = VACCEL_REQ_QUEUED;
	if (at_head)
		list_add(&req->node, queue);
	else
		list_add_tail(&req->node, queue);
	if (session && list_empty(&session->turn_node))
		list_add_tail(&session->turn_node, &server->turns);
	server->queued++;
}

/* queue_lock held. Takes QUEUED `req` off its queue. */
static void vaccel_queue_del_locked(struct vaccel_server *server,
				    struct vaccel_request *req)
{
	struct vaccel_session *session = req->session;

	list_del_init(&req->node);
	server->queued--;
	if (session && list_empty(&session->queue))
		list_del_init(&session->turn_node);
}

/*
 * queue_lock held. The request a free slot takes next, off its queue, or
 * NULL (uapi/vaccel_server.h, 3.): the module's messages first, then the
 * oldest request of the first session in turn order that holds fewer than
 * VACCEL_SRV_SESSION_SLOTS slots; that session then goes to the back.
 */
static struct vaccel_request *vaccel_queue_next_locked(struct vaccel_server *server)
{
	struct vaccel_session *session;
	struct vaccel_request *req;

	req = list_first_entry_or_null(&server->control, struct vaccel_request,
				       node);
	if (req) {
		vaccel_queue_del_locked(server, req);
		return req;
	}
	list_for_each_entry(session, &server->turns, turn_node) {
		if (session->delivered >= VACCEL_SRV_SESSION_SLOTS)
			continue;
		req = list_first_entry(&session->queue, struct vaccel_request,
				       node);
		vaccel_queue_del_locked(server, req);
		if (!list_empty(&session->queue))
			list_move_tail(&session->turn_node, &server->turns);
		return req;
	}
	return NULL;
}

/* queue_lock held. Gives `req` (and the holder's reference) to `slot`. */
static void vaccel_slot_match_locked(struct vaccel_slot *slot,
				     struct vaccel_request *req)
{
	slot->state = VACCEL_SLOT_DELIVERING;
	slot->req = req;
	if (req->session)
		req->session->delivered++;
	if (req->state != VACCEL_REQ_ABORTED)
		req->state = req->waited ? VACCEL_REQ_DELIVERED :
					   VACCEL_REQ_ABORTED;
}

/*
 * queue_lock held. The slot lets go of its request (answered, deferred,
 * handed back or failed); the caller takes over the slot's reference.
 */
static struct vaccel_request *vaccel_slot_unmatch_locked(struct vaccel_slot *slot)
{
	struct vaccel_request *req = slot->req;

	if (req && req->session)
		req->session->delivered--;
	slot->req = NULL;
	return req;
}

/*
 * queue_lock held, server alive. Matches the next queued request with a
 * parked slot when there are both. Returns the command to complete in
 * task, or NULL.
 */
static struct io_uring_cmd *vaccel_server_dispatch_locked(struct vaccel_server *server)
{
	struct vaccel_request *req;
	struct vaccel_slot *slot;

	slot = list_first_entry_or_null(&server->parked, struct vaccel_slot,
					parked_node);
	if (!slot)
		return NULL;
	req = vaccel_queue_next_locked(server);
	if (!req)
		return NULL;
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
	if (!cmd)
		return;
#if VACCEL_CMD_HAS_ISSUE_FLAGS
	io_uring_cmd_complete_in_task(cmd, vaccel_slot_task_work);
#else
	io_uring_cmd_complete_in_task(cmd, vaccel_slot_task_work_legacy);
#endif
}

/*
 * queue_lock held, server alive. Queues `req`, whose holder reference the
 * caller took, and returns the command to kick, or NULL.
 */
static struct io_uring_cmd *vaccel_server_enqueue_locked(struct vaccel_server *server,
							 struct vaccel_request *req)
{
	req->message.header.seq = atomic64_inc_return(&vaccel_next_seq);
	vaccel_queue_add_locked(server, req, false);
	return vaccel_server_dispatch_locked(server);
}

/* Client task (or release). Queues `req`; the daemon will see it. */
int vaccel_server_submit(struct vaccel_server *server,
			 struct vaccel_request *req)
{
	struct io_uring_cmd *cmd;

	spin_lock(&server->queue_lock);
	if (server->dead) {
		spin_unlock(&server->queue_lock);
		return -ENODEV;
	}
	vaccel_request_get(req);	/* the queue's, then the slot's */
	cmd = vaccel_server_enqueue_locked(server, req);
	spin_unlock(&server->queue_lock);
	vaccel_slot_kick(cmd);
	return 0;
}

/*
 * Client task. A WITHDRAW message for `req` (an EVENT_WAIT), or NULL when
 * `req` is no EVENT_WAIT or memory is short (the daemon's wait then ends
 * by its deadline; the answer is discarded).
 */
static struct vaccel_request *vaccel_withdraw_alloc(struct vaccel_request *req)
{
	struct vaccel_srv_withdraw args = {
		.session = req->message.header.session,
		.seq = req->message.header.seq,
	};

	if (req->message.header.opcode != VACCEL_OP_EVENT_WAIT)
		return NULL;
	return vaccel_request_alloc(req->server, VACCEL_OP_WITHDRAW,
				    args.session, &args, sizeof(args));
}

/*
 * Client task. The wait for `req` was cut short by a signal (`fatal`: a
 * fatal one). Takes `req` back if still queued; withdraws it if it is an
 * EVENT_WAIT, or whatever it is if the signal is fatal: aborted while
 * delivered (the answer will be discarded), taken out of the deferred
 * table. A withdrawn EVENT_WAIT is announced with `withdraw` (consumed:
 * set to NULL), an aborted SESSION_OPEN is followed by *close_on_abort
 * (likewise). Returns -ERESTARTSYS (or -EINTR when fatal), the result
 * when `req` is done meanwhile, or -EAGAIN when the daemon holds `req`
 * and must answer it: the caller waits on, killably.
 */
static int vaccel_server_interrupted(struct vaccel_request *req, bool fatal,
				     struct vaccel_request **withdraw,
				     struct vaccel_request **close_on_abort)
{
	bool event_wait = req->message.header.opcode == VACCEL_OP_EVENT_WAIT;
	struct vaccel_server *server = req->server;
	struct io_uring_cmd *cmd = NULL;
	struct io_uring_cmd *cmd2 = NULL;
	int ret = fatal ? -EINTR : -ERESTARTSYS;
	bool taken_back = false;
	LIST_HEAD(reap);

	spin_lock(&server->queue_lock);
	switch (req->state) {
	case VACCEL_REQ_QUEUED:
		vaccel_queue_del_locked(server, req);
		taken_back = true;
		break;
	case VACCEL_REQ_DELIVERED:
	case VACCEL_REQ_DEFERRED:
		if (!fatal && !event_wait) {
			ret = -EAGAIN;
			break;
		}
		if (req->state == VACCEL_REQ_DEFERRED) {
			hash_del(&req->deferred_node);
			server->deferred_count--;
			vaccel_request_finish_locked(req, ret, &reap);
		} else {
			req->state = VACCEL_REQ_ABORTED;
		}
		if (server->dead)
			break;
		if (event_wait && *withdraw) {
			/* The caller's reference becomes the holder's. */
			cmd = vaccel_server_enqueue_locked(server, *withdraw);
			*withdraw = NULL;
		}
		if (close_on_abort && *close_on_abort) {
			cmd2 = vaccel_server_enqueue_locked(server,
							    *close_on_abort);
			*close_on_abort = NULL;
		}
		break;
	case VACCEL_REQ_ABORTED:
		break;
	case VACCEL_REQ_DONE:
		ret = req->result;
		break;
	}
	spin_unlock(&server->queue_lock);
	vaccel_slot_kick(cmd);
	vaccel_slot_kick(cmd2);
	if (taken_back)
		vaccel_request_put(req);	/* the queue's reference */
	vaccel_reap(&reap);
	return ret;
}

/*
 * Client task. Sleeps until `req` is done (the signal rules of vaccel.h,
 * "Signals and /dev/vaccel"): a caught signal takes back a request the
 * daemon has not seen, and withdraws an EVENT_WAIT it holds, both with
 * -ERESTARTSYS; any other request the daemon holds is waited for
 * killably. A fatal signal ends the wait in every state (-EINTR); an
 * aborted SESSION_OPEN sends *close_on_abort (then consumed: NULL). The
 * sleeps are freezable. Returns the request's result otherwise.
 */
int vaccel_server_wait(struct vaccel_request *req,
		       struct vaccel_request **close_on_abort)
{
	struct vaccel_request *withdraw = NULL;
	int ret;

	if (!wait_for_completion_state(&req->done,
				       TASK_INTERRUPTIBLE | TASK_FREEZABLE))
		return req->result;
	withdraw = vaccel_withdraw_alloc(req);
	ret = vaccel_server_interrupted(req, fatal_signal_pending(current),
					&withdraw, close_on_abort);
	if (ret == -EAGAIN) {
		if (!wait_for_completion_state(&req->done,
					       TASK_KILLABLE | TASK_FREEZABLE))
			ret = req->result;
		else
			ret = vaccel_server_interrupted(req, true, &withdraw,
							close_on_abort);
	}
	if (withdraw)
		vaccel_request_put(withdraw);
	return ret;
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
			 * The daemon never saw it: hand it back, first in its
			 * queue, to another parked slot if the buffer was bad;
			 * if the serving thread is exiting the monitor ends
			 * it. A client that is gone needs it no more.
			 */
			vaccel_slot_unmatch_locked(slot);
			slot->state = VACCEL_SLOT_IDLE;
			if (req->waited && req->state == VACCEL_REQ_ABORTED) {
				list_add_tail(&req->node, &reap);
			} else {
				vaccel_queue_add_locked(server, req, true);
				if (ret == -EFAULT)
					kick = vaccel_server_dispatch_locked(server);
			}
		}
	} else {
		/* The death path failed the request meanwhile. */
		slot->req = NULL;
		slot->state = VACCEL_SLOT_IDLE;
		ret = -ENODEV;
	}
	spin_unlock(&server->queue_lock);

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
 * the request it answers. Returns 0 or -EBADMSG.
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
		return -EBADMSG;
	if (status->error >= VACCEL_E_COUNT ||
	    status->detail >= VACCEL_D_COUNT ||
	    status->limit >= VACCEL_LIMIT_COUNT ||
	    VACCEL_SCOPE_KIND(status->scope) >= VACCEL_SCOPE_COUNT)
		return -EBADMSG;
	if (asked->opcode == VACCEL_OP_BUFFER_READ && status->error == VACCEL_OK)
		payload = req->payload.bytes;
	if (asked->opcode == VACCEL_OP_BUFFER_MAP &&
	    status->error == VACCEL_OK) {
		flags |= VACCEL_MSG_PASSES_FD;
		payload = sizeof(struct vaccel_srv_map);
	}
	if (told->flags != flags || told->payload_bytes != payload)
		return -EBADMSG;
	return 0;
}

/*
 * Daemon task (serving thread), so that the descriptor number names a file
 * of the daemon's. An accepted SESSION_OPEN's answer names the session's
 * notify eventfd: takes a reference to it into *notify. Returns 0, or
 * -EBADMSG when the number is no eventfd of the daemon's.
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
		return -EBADMSG;
	*notify = file;
	return 0;
}

/*
 * Daemon task (serving thread), so that the descriptor number names a file
 * of the daemon's. A BUFFER_MAP that succeeded is followed in `buffer` by
 * struct vaccel_srv_map: takes a reference to the file it names into *map
 * and its offset into *offset. Returns 0, -EFAULT, or -EBADMSG when the
 * file cannot back the mapping (uapi/vaccel_server.h, 8.).
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
		return -EBADMSG;
	file = fget(where.fd);
	if (!file)
		return -EBADMSG;
	if (!file->f_op->mmap || (file->f_mode & rw) != rw ||
	    i_size_read(file_inode(file)) < 0 ||
	    (u64)i_size_read(file_inode(file)) < end) {
		fput(file);
		return -EBADMSG;
	}
	*map = file;
	*offset = where.offset;
	return 0;
}

/* What an answer brought beside the op's struct (commit and ANSWER). */
struct vaccel_answer {
	int check;		/* 0, -EBADMSG or -EFAULT */
	struct file *notify;	/* SESSION_OPEN's eventfd, or NULL */
	struct file *map;	/* BUFFER_MAP's file, or NULL */
	u64 map_offset;
};

/*
 * Daemon task (serving thread). Reads the answer of `req` from `buffer`
 * into server->scratch and checks it. Invariant: only the serving thread
 * gets here, one command at a time, so server->scratch has one user.
 */
static void vaccel_answer_read(struct vaccel_server *server,
			       struct vaccel_request *req, u64 buffer,
			       struct vaccel_answer *answer)
{
	struct vaccel_wire *reply = &server->scratch;

	memset(answer, 0, sizeof(*answer));
	/* message_bytes <= sizeof(*reply) (request alloc) */
	if (copy_from_user(reply, u64_to_user_ptr(buffer), req->message_bytes))
		answer->check = -EFAULT;
	else
		answer->check = vaccel_reply_check(req, reply);
	if (!answer->check)
		answer->check = vaccel_reply_notify(req, reply,
						    &answer->notify);
	if (!answer->check)
		answer->check = vaccel_reply_map(req, reply, buffer,
						 &answer->map,
						 &answer->map_offset);
}

/*
 * queue_lock held. Ends `req` (taken from its slot or the deferred table;
 * its holder reference goes to `reap`) with `answer`: the daemon's answer
 * if it was usable and a client waits, else -EIO (status External).
 */
static void vaccel_answer_apply_locked(struct vaccel_server *server,
				       struct vaccel_request *req,
				       struct vaccel_answer *answer,
				       struct list_head *reap)
{
	int result = -EIO;

	if (answer->check) {
		vaccel_status_set(&req->reply.status, VACCEL_E_EXTERNAL,
				  VACCEL_D_NONE, 0, 0);
	} else if (req->state == VACCEL_REQ_DELIVERED ||
		   req->state == VACCEL_REQ_DEFERRED) {
		memcpy(&req->reply, &server->scratch.args,
		       req->message.header.args_bytes);
		req->answered = true;
		req->notify = answer->notify;	/* the request's now */
		answer->notify = NULL;
		req->map = answer->map;		/* likewise */
		answer->map = NULL;
		req->map_file_offset = answer->map_offset;
		result = vaccel_error_to_errno(server->scratch.args.status.error);
	}
	vaccel_request_finish_locked(req, result, reap);
}

/* Process context. Drops what an answer brought and nobody took. */
static void vaccel_answer_drop(struct vaccel_answer *answer)
{
	if (answer->notify)
		fput(answer->notify);	/* refused, or aborted */
	if (answer->map)
		fput(answer->map);
}

/* queue_lock held. Whether the daemon may defer `req` (spec 6.). */
static bool vaccel_deferrable(const struct vaccel_request *req)
{
	u16 op = req->message.header.opcode;

	return op == VACCEL_OP_EVENT_WAIT || op == VACCEL_OP_RUN;
}

/*
 * Daemon task (serving thread). COMMIT_AND_FETCH, first half: takes the
 * answer of the request delivered on `slot` from `buffer`, or with
 * VACCEL_SRV_CMD_DEFER moves that request to the deferred table. Returns
 * 0 (the slot is idle and may fetch), -EBADMSG or -EFAULT (refused: the
 * client's call fails with -EIO, the slot is idle), -EINVAL (no delivered
 * request: nothing changed) or -ENODEV.
 */
static int vaccel_slot_commit(struct vaccel_server *server,
			      struct vaccel_slot *slot, u64 buffer, u32 flags)
{
	struct vaccel_answer answer = { 0 };
	struct vaccel_request *req;
	LIST_HEAD(reap);
	int ret;

	spin_lock(&server->queue_lock);
	req = slot->state == VACCEL_SLOT_DELIVERED ? slot->req : NULL;
	if (req)
		vaccel_request_get(req);
	spin_unlock(&server->queue_lock);
	if (!req)
		return -EINVAL;

	if (!(flags & VACCEL_SRV_CMD_DEFER))
		vaccel_answer_read(server, req, buffer, &answer);
	else if (!vaccel_deferrable(req))
		answer.check = -EBADMSG;
	ret = answer.check;

	spin_lock(&server->queue_lock);
	if (slot->req != req) {
		ret = -ENODEV;	/* failed by the death path meanwhile */
	} else if ((flags & VACCEL_SRV_CMD_DEFER) && !ret) {
		vaccel_slot_unmatch_locked(slot);
		slot->state = VACCEL_SLOT_IDLE;
		if (req->state == VACCEL_REQ_ABORTED) {
			vaccel_request_finish_locked(req, -EINTR, &reap);
		} else {
			/* The slot's reference becomes the table's. */
			req->state = VACCEL_REQ_DEFERRED;
			hash_add(server->deferred, &req->deferred_node,
				 req->message.header.seq);
			server->deferred_count++;
		}
	} else {
		vaccel_slot_unmatch_locked(slot);
		slot->state = VACCEL_SLOT_IDLE;
		vaccel_answer_apply_locked(server, req, &answer, &reap);
	}
	spin_unlock(&server->queue_lock);

	vaccel_answer_drop(&answer);
	vaccel_request_put(req);
	vaccel_reap(&reap);
	return ret;
}

/* queue_lock held. The deferred request `seq` names, or NULL. */
static struct vaccel_request *vaccel_deferred_find_locked(struct vaccel_server *server,
							  u64 seq)
{
	struct vaccel_request *req;

	hash_for_each_possible(server->deferred, req, deferred_node, seq)
		if (req->message.header.seq == seq)
			return req;
	return NULL;
}

/*
 * Daemon task (serving thread). VACCEL_SRV_ANSWER: the answer in `buffer`
 * of a deferred request. Returns 0, -ENOENT (no deferred request has that
 * seq: withdrawn), -EBADMSG or -EFAULT (refused: the client's call fails
 * with -EIO).
 */
static int vaccel_server_answer(struct vaccel_server *server, u64 buffer)
{
	struct vaccel_answer answer = { 0 };
	struct vaccel_msg_header header;
	struct vaccel_request *req;
	LIST_HEAD(reap);
	int ret;

	if (copy_from_user(&header, u64_to_user_ptr(buffer), sizeof(header)))
		return -EFAULT;
	spin_lock(&server->queue_lock);
	req = vaccel_deferred_find_locked(server, header.seq);
	if (req)
		vaccel_request_get(req);
	spin_unlock(&server->queue_lock);
	if (!req)
		return -ENOENT;

	vaccel_answer_read(server, req, buffer, &answer);
	ret = answer.check;

	spin_lock(&server->queue_lock);
	if (req->state == VACCEL_REQ_DEFERRED) {
		hash_del(&req->deferred_node);
		server->deferred_count--;
		vaccel_answer_apply_locked(server, req, &answer, &reap);
	} else {
		ret = -ENOENT;	/* withdrawn, or failed by death, meanwhile */
	}
	spin_unlock(&server->queue_lock);

	vaccel_answer_drop(&answer);
	vaccel_request_put(req);
	vaccel_reap(&reap);
	return ret;
}

/*
 * Daemon task (serving thread). Parks `cmd` on `slot`, or hands it the
 * next queued request at once. Returns -EIOCBQUEUED (the command is
 * taken care of) or an error for the caller to complete it with.
 */
static int vaccel_slot_fetch(struct vaccel_server *server,
			     struct vaccel_slot *slot, struct io_uring_cmd *cmd,
			     u64 buffer, unsigned int issue_flags)
{
	struct vaccel_cmd_pdu *pdu = (struct vaccel_cmd_pdu *)cmd->pdu;
	struct vaccel_request *req;

	/* Before the lock: io_uring's cancel list has its own locking. */
	vaccel_cmd_cancelable(cmd, issue_flags);
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
	req = vaccel_queue_next_locked(server);
	if (!req) {
		slot->state = VACCEL_SLOT_PARKED;
		list_add_tail(&slot->parked_node, &server->parked);
		spin_unlock(&server->queue_lock);
		return -EIOCBQUEUED;
	}
	vaccel_slot_match_locked(slot, req);
	spin_unlock(&server->queue_lock);
	vaccel_slot_deliver(server, slot, cmd, issue_flags);
	return -EIOCBQUEUED;
}

/*
 * Daemon task: the serving thread's uring_cmd issue. Returns -EIOCBQUEUED
 * when the command is taken care of, else the result to complete it with.
 */
static int vaccel_server_command(struct vaccel_server *server,
				 struct io_uring_cmd *cmd,
				 const struct vaccel_srv_cmd *args,
				 unsigned int issue_flags)
{
	u32 known_flags = 0;
	u32 index = args->slot;
	struct vaccel_slot *slot;
	int ret = 0;

	if (cmd->cmd_op == VACCEL_SRV_COMMIT_AND_FETCH)
		known_flags = VACCEL_SRV_CMD_DEFER;
	else if (cmd->cmd_op != VACCEL_SRV_FETCH &&
		 cmd->cmd_op != VACCEL_SRV_ANSWER)
		return -EOPNOTSUPP;
	if (index >= VACCEL_SRV_MAX_SLOTS || (args->flags & ~known_flags) ||
	    (cmd->cmd_op == VACCEL_SRV_ANSWER && index != 0) ||
	    !args->buffer ||
	    !access_ok(u64_to_user_ptr(args->buffer), VACCEL_SRV_BUFFER_BYTES))
		return -EINVAL;
	slot = &server->slots[array_index_nospec(index, VACCEL_SRV_MAX_SLOTS)];

	/* The serving thread only: never an io_uring worker (SQPOLL, io-wq). */
	if (current->flags & PF_IO_WORKER)
		return -EPERM;
	spin_lock(&server->queue_lock);
	if (server->dead)
		ret = -ENODEV;
	else if (!server->hello)
		ret = -EPROTO;
	else if (!server->task)
		server->task = get_task_struct(current);
	else if (server->task != current)
		ret = -EPERM;
	spin_unlock(&server->queue_lock);
	if (ret)
		return ret;

	if (cmd->cmd_op == VACCEL_SRV_ANSWER)
		return vaccel_server_answer(server, args->buffer);
	if (cmd->cmd_op == VACCEL_SRV_COMMIT_AND_FETCH) {
		ret = vaccel_slot_commit(server, slot, args->buffer,
					 args->flags);
		if (ret)
			return ret;
	}
	return vaccel_slot_fetch(server, slot, cmd, args->buffer, issue_flags);
}

/*
 * io_uring cancels `cmd` (6.7+: its ring is closing, or its task calls
 * exec()): the daemon can serve no more. The command completes here, with
 * the caller's issue_flags (io_uring holds the ring's lock); the other
 * parked commands are left to their own cancel calls.
 */
static void vaccel_server_cancel(struct vaccel_server *server,
				 struct io_uring_cmd *cmd,
				 unsigned int issue_flags)
{
	bool parked = false;
	int i;

	vaccel_server_kill(server, true);
	spin_lock(&server->queue_lock);
	for (i = 0; i < VACCEL_SRV_MAX_SLOTS; i++) {
		struct vaccel_slot *slot = &server->slots[i];

		if (slot->state == VACCEL_SLOT_PARKED && slot->cmd == cmd) {
			list_del_init(&slot->parked_node);
			slot->cmd = NULL;
			slot->state = VACCEL_SLOT_IDLE;
			parked = true;
		}
	}
	spin_unlock(&server->queue_lock);
	/* A command being delivered is completed by its deliverer. */
	if (parked)
		vaccel_cmd_done(cmd, -ENODEV, issue_flags);
}

/* Daemon task: io_uring issue (or cancel) of IORING_OP_URING_CMD. */
int vaccel_server_uring_cmd(struct io_uring_cmd *cmd,
			    unsigned int issue_flags)
{
	const struct vaccel_srv_cmd *sqe_args = vaccel_cmd_bytes(cmd);
	struct vaccel_server *server = cmd->file->private_data;
	struct vaccel_srv_cmd args;
	int ret;

	if (vaccel_cmd_is_cancel(issue_flags)) {
		vaccel_server_cancel(server, cmd, issue_flags);
		return 0;
	}
	/* The SQE is not ours after this call: read it once, now. */
	args.slot = READ_ONCE(sqe_args->slot);
	args.flags = READ_ONCE(sqe_args->flags);
	args.buffer = READ_ONCE(sqe_args->buffer);

	ret = vaccel_server_command(server, cmd, &args, issue_flags);
	if (ret != -EIOCBQUEUED)
		vaccel_cmd_done(cmd, ret, issue_flags);
	return -EIOCBQUEUED;
}
