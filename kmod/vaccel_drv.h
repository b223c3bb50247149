/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared types of vaccel.ko.
 *
 * Owns the definitions of a request (one forwarded message and its state
 * machine), a slot (one daemon command), a server (one attached daemon) and
 * a session (one open of /dev/vaccel). Decides who owns a request in each
 * state; the functions that move it live in vaccel_server.c.
 */
#ifndef VACCEL_DRV_H
#define VACCEL_DRV_H

#include <linux/completion.h>
#include <linux/hashtable.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mm_types.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "vaccel.h"
#include "vaccel_server.h"
#include "vaccel_compat.h"

/* Every struct a message may carry after its header. */
union vaccel_args {
	struct vaccel_status status;
	struct vaccel_get_version get_version;
	struct vaccel_device_count device_count;
	struct vaccel_device_query device_query;
	struct vaccel_context_create context_create;
	struct vaccel_handle_release handle_release;
	struct vaccel_buffer_alloc buffer_alloc;
	struct vaccel_buffer_transfer buffer_transfer;
	struct vaccel_program_load program_load;
	struct vaccel_program_slot program_slot;
	struct vaccel_queue_create queue_create;
	struct vaccel_submit submit;
	struct vaccel_event_poll event_poll;
	struct vaccel_event_wait event_wait;
	struct vaccel_context_limits context_limits;
	struct vaccel_gate_create gate_create;
	struct vaccel_gate_value gate_value;
	struct vaccel_submit_after submit_after;
	struct vaccel_launch launch;
	struct vaccel_device_tosa device_tosa;
	struct vaccel_run run;
	struct vaccel_buffer_map buffer_map;
	struct vaccel_srv_session_open session_open;
	struct vaccel_srv_session_close session_close;
	struct vaccel_srv_withdraw withdraw;
};

/* A message as the daemon reads it from (and writes it to) its buffer. */
struct vaccel_wire {
	struct vaccel_msg_header header;
	union vaccel_args args;
};

/*
 * Small payloads (bindings, wait handles, a launch's bindings and argument
 * buffer) are copied, never pinned.
 */
#define VACCEL_COPIED_PAYLOAD_MAX \
	(VACCEL_MAX_BINDINGS * sizeof(struct vaccel_binding) + \
	 VACCEL_MAX_KERNEL_ARGS_BYTES)

/*
 * The state of a request. Protected by its server's queue_lock.
 */
enum vaccel_request_state {
	/*
	 * On its session's queue (or the server's control queue), waiting for
	 * a slot. Owned by the module: the waiting client may take it back
	 * and free it.
	 */
	VACCEL_REQ_QUEUED,
	/*
	 * On a slot (slot->req, the slot holds a reference), from the moment a
	 * command is chosen to carry it to the daemon's commit. Owned by the
	 * daemon: its payload may be read or written through the slot. Ends
	 * by a commit (-> done), a deferral (-> deferred) or the daemon's
	 * death (-> done, -ENODEV).
	 */
	VACCEL_REQ_DELIVERED,
	/*
	 * Committed with VACCEL_SRV_CMD_DEFER: in server->deferred (keyed by
	 * seq, which holds a reference), no slot, no payload access; ends by
	 * an ANSWER (-> done), a withdrawal by its client (-> done) or death.
	 */
	VACCEL_REQ_DEFERRED,
	/*
	 * Delivered, but nobody waits for the answer: the client was killed
	 * or withdrew it, or the request never had a waiter (SESSION_CLOSE,
	 * WITHDRAW). Still owned by
	 * the daemon until it commits; the answer is then discarded and the
	 * last reference frees the request and its pins.
	 */
	VACCEL_REQ_ABORTED,
	/*
	 * Answered (reply and result valid) or failed (result only). Owned by
	 * the waiting client; neither queue nor slot refers to it any more.
	 */
	VACCEL_REQ_DONE,
};

/*
 * Where a request's payload lives while the request is alive: a copy
 * (small payloads), or the client's memory, named by address in the
 * client's mm. Client pages are pinned only for the span of one copy
 * (vaccel_payload_to_daemon), never while the request waits.
 */
struct vaccel_payload {
	u64 bytes;		/* bytes the daemon may read or write */
	bool writable;		/* BUFFER_READ: the daemon writes the data */
	void *copy;		/* copied small payload, or NULL */
	u64 uaddr;		/* the client's address of byte 0 */
	struct mm_struct *mm;	/* the client's mm (mmgrab), or NULL */
};

struct vaccel_server;
struct vaccel_session;

/*
 * One forwarded message. References: the waiting client (if any), the
 * queue or the slot that holds it, and short-lived ones taken by whoever
 * copies its payload or message outside queue_lock.
 */
struct vaccel_request {
	struct kref ref;
	/* a session's queue, server->control, or a reap list */
	struct list_head node;
	struct hlist_node deferred_node;	/* server->deferred */
	enum vaccel_request_state state;
	bool waited;			/* a client sleeps on `done` */
	struct vaccel_server *server;	/* counted reference */
	/*
	 * The session whose queue and slot share it uses (counted), or NULL
	 * for the module's own messages (server->control).
	 */
	struct vaccel_session *session;
	struct completion done;
	bool answered;			/* reply holds the daemon's answer */
	int result;			/* 0 or -errno, valid when done */
	u32 message_bytes;		/* header + args */
	struct vaccel_wire message;	/* what the daemon reads */
	union vaccel_args reply;	/* the daemon's answer */
	struct vaccel_payload payload;
	/*
	 * SESSION_OPEN answered: the daemon's notify eventfd, resolved at the
	 * commit (a counted file reference). The opener takes it; the last
	 * reference of the request puts it otherwise.
	 */
	struct file *notify;
	/*
	 * BUFFER_MAP answered: the buffer's file, resolved at the commit (a
	 * counted reference, put with the request), and the buffer's offset
	 * in it. The client's ioctl enters it in the session's map table.
	 */
	struct file *map;
	u64 map_file_offset;
};

enum vaccel_slot_state {
	VACCEL_SLOT_IDLE,	/* no command, no request */
	VACCEL_SLOT_PARKED,	/* a command waits for a request (cmd) */
	/*
	 * A command and a request are matched; whoever matched them (the
	 * daemon's task work or its uring_cmd call) copies the message and
	 * completes the command. The death path leaves the command alone.
	 */
	VACCEL_SLOT_DELIVERING,
	VACCEL_SLOT_DELIVERED,	/* the daemon holds the request (req) */
};

struct vaccel_slot {
	enum vaccel_slot_state state;
	u32 index;
	struct io_uring_cmd *cmd;	/* PARKED, DELIVERING */
	u64 buffer;			/* daemon address of the message */
	struct vaccel_request *req;	/* DELIVERING, DELIVERED */
	struct list_head parked_node;	/* server->parked while PARKED */
};

/* One attached daemon: one open file of /dev/vaccel-server. */
struct vaccel_server {
	struct kref ref;
	/*
	 * queue_lock protects: dead, task, queue, parked, every slot and the
	 * state of every request this server holds.
	 */
	spinlock_t queue_lock;
	bool dead;			/* no more requests; sessions failed */
	bool hello;			/* the daemon's HELLO was accepted */
	struct task_struct *task;	/* the serving thread (counted) */
	pid_t pid;			/* the daemon's, for debugfs */
	/* QUEUED module messages (OPEN, CLOSE, WITHDRAW): they go first */
	struct list_head control;
	/* sessions with QUEUED requests, in turn order (round robin) */
	struct list_head turns;
	unsigned int queued;		/* QUEUED requests, all queues */
	struct list_head parked;	/* PARKED slots */
	DECLARE_HASHTABLE(deferred, 8);	/* DEFERRED requests, by seq */
	struct list_head sessions;	/* sessions opened through it (debugfs) */
	unsigned int deferred_count;
	struct vaccel_slot slots[VACCEL_SRV_MAX_SLOTS];
	struct delayed_work monitor;
	struct vaccel_wire scratch;	/* a commit being read; serving thread */
};

/* What a command carries in io_uring_cmd.pdu, set when it is parked. */
struct vaccel_cmd_pdu {
	struct vaccel_server *server;	/* alive: the command holds its file */
	u32 slot;
};

/*
 * One open of /dev/vaccel. References: the file, and every request of the
 * session (so its queue and slot count outlive a released file whose
 * requests are still delivered). The file's release sends SESSION_CLOSE and
 * releases notify and the maps; the last reference frees the rest.
 */
struct vaccel_session {
	struct kref ref;
	u64 id;
	struct vaccel_server *server;	/* counted; dead server = dead session */
	/* Under server->queue_lock: */
	struct list_head queue;		/* QUEUED requests, oldest first */
	struct list_head turn_node;	/* on server->turns while queue is not empty */
	unsigned int delivered;		/* requests on slots (<= SESSION_SLOTS) */
	atomic_t requests;		/* in the module (<= SESSION_REQUESTS) */
	struct list_head server_node;	/* server->sessions, under queue_lock */
	pid_t pid;			/* the opener's, for debugfs */
	kuid_t uid;			/* charged to (vaccel_users.c) */
	struct vaccel_request *close;	/* SESSION_CLOSE, made at open */
	/*
	 * The daemon's notify eventfd for this session (counted), or NULL:
	 * poll() reports it readable. Set at open, put at release.
	 */
	struct file *notify;
	/*
	 * The files BUFFER_MAP handed to this session (struct vaccel_map),
	 * keyed by token >> PAGE_SHIFT; map_lock protects maps, map_count
	 * and map_next (the last key given, never reused).
	 */
	struct mutex map_lock;
	struct xarray maps;
	unsigned int map_count;
	unsigned long map_next;
};

/* Woken when a server dies, so that pollers of its sessions see it. */
extern wait_queue_head_t vaccel_death_wq;

/* vaccel_request.c */
struct vaccel_request *vaccel_request_alloc(struct vaccel_server *server,
					    u16 opcode, u64 session,
					    const void *args, u32 args_bytes);
void vaccel_request_get(struct vaccel_request *req);
void vaccel_request_put(struct vaccel_request *req);
int vaccel_request_user_payload(struct vaccel_request *req, u64 uaddr,
				u64 bytes, bool writable);
int vaccel_request_copy_payload(struct vaccel_request *req, u64 uaddr,
				u64 bytes);
ssize_t vaccel_payload_to_daemon(struct vaccel_request *req, char __user *dst,
				 size_t count, u64 offset);
ssize_t vaccel_payload_from_daemon(struct vaccel_request *req,
				   const char __user *src, size_t count,
				   u64 offset);
void vaccel_status_set(struct vaccel_status *status, u32 error, u32 detail,
		       u64 arg0, u64 arg1);
int vaccel_error_to_errno(u32 error);
int vaccel_requests_alive_count(void);

/* vaccel_server.c */
extern const struct file_operations vaccel_server_fops;
extern const struct attribute_group *vaccel_server_groups[];
struct vaccel_server *vaccel_server_get_attached(void);
void vaccel_server_put(struct vaccel_server *server);
bool vaccel_server_is_dead(struct vaccel_server *server);
void vaccel_server_kill(struct vaccel_server *server, bool in_cancel);

/* vaccel_slot.c */
void vaccel_request_finish_locked(struct vaccel_request *req, int result,
				  struct list_head *reap);
void vaccel_reap(struct list_head *reap);
int vaccel_server_submit(struct vaccel_server *server,
			 struct vaccel_request *req);
int vaccel_server_wait(struct vaccel_request *req,
		       struct vaccel_request **close_on_abort);
int vaccel_server_uring_cmd(struct io_uring_cmd *cmd,
			    unsigned int issue_flags);

/* vaccel_client.c */
extern const struct file_operations vaccel_client_fops;
void vaccel_session_put(struct vaccel_session *session);
int vaccel_sessions_alive_count(void);

/* vaccel_map.c */
void vaccel_maps_init(struct vaccel_session *session);
int vaccel_maps_add(struct vaccel_session *session, struct file *file,
		    u64 offset, u64 bytes, u64 *token);
void vaccel_maps_release(struct vaccel_session *session);
int vaccel_client_mmap(struct file *file, struct vm_area_struct *vma);

/* vaccel_debugfs.c */
void vaccel_debugfs_init(void);
void vaccel_debugfs_exit(void);

/* vaccel_main.c */
bool vaccel_client_may_open(void);
unsigned int vaccel_max_sessions(void);
unsigned int vaccel_max_sessions_per_user(void);

/* vaccel_users.c */
struct seq_file;
int vaccel_user_charge(kuid_t uid);
void vaccel_user_uncharge(kuid_t uid);
void vaccel_users_show(struct seq_file *m);

#endif /* VACCEL_DRV_H */
