/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vaccel_drv.h - shared types of vaccel.ko.
 *
 * Owns the definitions of a request (one forwarded message and its state
 * machine), a slot (one daemon command), a server (one attached daemon) and
 * a session (one open of /dev/vaccel). Decides who owns a request in each
 * state; the functions that move it live in vaccel_server.c.
 */
#ifndef VACCEL_DRV_H
#define VACCEL_DRV_H

#include <linux/completion.h>
#include <linux/io_uring.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mm_types.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/version.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "vaccel.h"
#include "vaccel_server.h"

/*
 * The module is written for Linux 6.1.y. io_uring_cmd_done() and the
 * uring_cmd task work callback gained `issue_flags` in 6.1.23
 * ("block/io_uring: pass in issue_flags for uring_cmd task_work
 * handling"); 6.1.0 .. 6.1.22 have the older forms. The guard reads the
 * full version (sublevel included) from <linux/version.h>.
 */
#if LINUX_VERSION_MAJOR != 6 || LINUX_VERSION_PATCHLEVEL != 1
#error "vaccel.ko is written for Linux 6.1.y (the uring_cmd API differs elsewhere)"
#endif
#if LINUX_VERSION_SUBLEVEL >= 23
#define VACCEL_CMD_HAS_ISSUE_FLAGS 1
#else
#define VACCEL_CMD_HAS_ISSUE_FLAGS 0
#endif

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
	 * On server->queue, waiting for a parked command. Owned by the module:
	 * the waiting client may take it back (abort) and free it.
	 */
	VACCEL_REQ_QUEUED,
	/*
	 * On a slot (slot->req, the slot holds a reference), from the moment a
	 * command is chosen to carry it to the daemon's commit. Owned by the
	 * daemon: its payload may be read or written through the slot. Ends
	 * by a commit (-> done) or the daemon's death (-> done, -ENODEV).
	 */
	VACCEL_REQ_DELIVERED,
	/*
	 * Delivered, but nobody waits for the answer: the client was killed,
	 * or the request never had a waiter (SESSION_CLOSE). Still owned by
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

/* Where a request's payload lives while the request is alive. */
struct vaccel_payload {
	u64 bytes;		/* bytes the daemon may read or write */
	bool writable;		/* BUFFER_READ: the daemon writes the data */
	void *copy;		/* copied small payload, or NULL */
	struct page **pages;	/* pinned client pages, or NULL */
	unsigned long page_count;
	unsigned int first_offset;	/* offset of byte 0 in pages[0] */
};

struct vaccel_server;

/*
 * One forwarded message. References: the waiting client (if any), the
 * queue or the slot that holds it, and short-lived ones taken by whoever
 * copies its payload or message outside queue_lock.
 */
struct vaccel_request {
	struct kref ref;
	struct list_head node;		/* server->queue, or a reap list */
	enum vaccel_request_state state;
	bool waited;			/* a client sleeps on `done` */
	struct vaccel_server *server;	/* counted reference */
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
	struct list_head queue;		/* QUEUED requests, oldest first */
	struct list_head parked;	/* PARKED slots */
	struct vaccel_slot slots[VACCEL_SRV_MAX_SLOTS];
	struct delayed_work monitor;
	struct vaccel_wire scratch;	/* a commit being read; serving thread */
};

/* What a command carries in io_uring_cmd.pdu, set when it is parked. */
struct vaccel_cmd_pdu {
	struct vaccel_server *server;	/* alive: the command holds its file */
	u32 slot;
};

/* One open of /dev/vaccel. */
struct vaccel_session {
	u64 id;
	struct vaccel_server *server;	/* counted; dead server = dead session */
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
int vaccel_request_pin(struct vaccel_request *req, u64 uaddr, u64 bytes,
		       bool writable);
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
struct vaccel_server *vaccel_server_get_attached(void);
void vaccel_server_put(struct vaccel_server *server);
bool vaccel_server_is_dead(struct vaccel_server *server);

/* vaccel_slot.c */
void vaccel_cmd_done(struct io_uring_cmd *cmd, ssize_t ret,
		     unsigned int issue_flags);
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

/* vaccel_map.c */
void vaccel_maps_init(struct vaccel_session *session);
int vaccel_maps_add(struct vaccel_session *session, struct file *file,
		    u64 offset, u64 bytes, u64 *token);
void vaccel_maps_release(struct vaccel_session *session);
int vaccel_client_mmap(struct file *file, struct vm_area_struct *vma);

/* vaccel_main.c */
bool vaccel_client_may_open(void);

#endif /* VACCEL_DRV_H */
