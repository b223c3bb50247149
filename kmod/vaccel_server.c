// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/vaccel-server: the attached daemon.
 *
 * Owns the one attached server: its attachment (one live daemon at a
 * time, gated by the node's ownership alone), the version handshake, the
 * detach (the daemon's VACCEL_SRV_IOCTL_DETACH, or the monitor noticing
 * that the serving thread exits or calls exec(), or - before 6.7 - that
 * its ring is being closed), the death path itself (fail everything the
 * daemon held, mark its sessions dead, free the attachment), the payload
 * user copy (pread/pwrite at VACCEL_SRV_PAYLOAD_POS, checked against the
 * slot's generation) and the sysfs attribute `attached`. The request state
 * machine is in vaccel_slot.c.
 */
#include <linux/device.h>
#include <linux/errno.h>
#include <linux/fs.h>
#include <linux/mutex.h>
#include <linux/nospec.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "vaccel_drv.h"

/* attach_lock protects vaccel_attached (the one live server, counted). */
static DEFINE_MUTEX(vaccel_attach_lock);
DECLARE_WAIT_QUEUE_HEAD(vaccel_death_wq);
static struct vaccel_server *vaccel_attached;

/* Process context, may sleep: the last reference frees the server. */
static void vaccel_server_release_ref(struct kref *ref)
{
	struct vaccel_server *server = container_of(ref, struct vaccel_server,
						    ref);

	if (server->task)
		put_task_struct(server->task);
	kfree(server);
}

/* Process context, may sleep. */
void vaccel_server_put(struct vaccel_server *server)
{
	kref_put(&server->ref, vaccel_server_release_ref);
}

/* Any context; a hint that may be stale by the time it is used. */
bool vaccel_server_is_dead(struct vaccel_server *server)
{
	return READ_ONCE(server->dead);
}

/* Client task (open of /dev/vaccel). Returns a counted server or NULL. */
struct vaccel_server *vaccel_server_get_attached(void)
{
	struct vaccel_server *server;

	mutex_lock(&vaccel_attach_lock);
	server = vaccel_attached;
	if (server && !vaccel_server_is_dead(server))
		kref_get(&server->ref);
	else
		server = NULL;
	mutex_unlock(&vaccel_attach_lock);
	return server;
}

/* queue_lock held. Fails every QUEUED request of `server`. */
static void vaccel_server_fail_queued_locked(struct vaccel_server *server,
					     struct list_head *reap)
{
	struct vaccel_session *session, *next_session;
	struct vaccel_request *req, *next;

	list_for_each_entry_safe(req, next, &server->control, node) {
		list_del_init(&req->node);
		vaccel_request_finish_locked(req, -ENODEV, reap);
	}
	list_for_each_entry_safe(session, next_session, &server->turns,
				 turn_node) {
		list_for_each_entry_safe(req, next, &session->queue, node) {
			list_del_init(&req->node);
			vaccel_request_finish_locked(req, -ENODEV, reap);
		}
		list_del_init(&session->turn_node);
	}
	server->queued = 0;
}

/* queue_lock held. Fails every DEFERRED request of `server`. */
static void vaccel_server_fail_deferred_locked(struct vaccel_server *server,
					       struct list_head *reap)
{
	struct vaccel_request *req;
	struct hlist_node *next;
	int bucket;

	hash_for_each_safe(server->deferred, bucket, next, req,
			   deferred_node) {
		hash_del(&req->deferred_node);
		vaccel_request_finish_locked(req, -ENODEV, reap);
	}
	server->deferred_count = 0;
}

/*
 * Any process context. The daemon is gone (or detached): fail everything
 * it held, once. Parked commands complete with -ENODEV (`in_cancel`:
 * io_uring is cancelling them, each in its own call, holding the ring's
 * lock; they are left to those calls); queued, delivered and deferred
 * requests fail with -ENODEV; sessions see server->dead; the attachment
 * is freed, so that another daemon may attach at once.
 */
void vaccel_server_kill(struct vaccel_server *server, bool in_cancel)
{
	struct io_uring_cmd *parked[VACCEL_SRV_MAX_SLOTS];
	unsigned int parked_count = 0;
	bool detach = false;
	LIST_HEAD(reap);
	int i;

	spin_lock(&server->queue_lock);
	if (server->dead) {
		spin_unlock(&server->queue_lock);
		return;
	}
	WRITE_ONCE(server->dead, true);
	for (i = 0; i < VACCEL_SRV_MAX_SLOTS; i++) {
		struct vaccel_slot *slot = &server->slots[i];

		switch (slot->state) {
		case VACCEL_SLOT_PARKED:
			if (in_cancel)
				break;
			parked[parked_count++] = slot->cmd;
			list_del_init(&slot->parked_node);
			slot->cmd = NULL;
			slot->state = VACCEL_SLOT_IDLE;
			break;
		case VACCEL_SLOT_DELIVERING:
			/* Its deliverer completes the command. */
			fallthrough;
		case VACCEL_SLOT_DELIVERED:
			if (slot->req) {
				if (slot->req->session)
					slot->req->session->delivered--;
				vaccel_request_finish_locked(slot->req,
							     -ENODEV, &reap);
			}
			slot->req = NULL;
			if (slot->state == VACCEL_SLOT_DELIVERED)
				slot->state = VACCEL_SLOT_IDLE;
			break;
		case VACCEL_SLOT_IDLE:
			break;
		}
	}
	vaccel_server_fail_queued_locked(server, &reap);
	vaccel_server_fail_deferred_locked(server, &reap);
	spin_unlock(&server->queue_lock);

	for (i = 0; i < parked_count; i++)
		vaccel_cmd_done(parked[i], -ENODEV, IO_URING_F_UNLOCKED);
	vaccel_reap(&reap);
	wake_up_all(&vaccel_death_wq);	/* pollers see the hang-up */

	mutex_lock(&vaccel_attach_lock);
	if (vaccel_attached == server) {
		vaccel_attached = NULL;
		detach = true;
	}
	mutex_unlock(&vaccel_attach_lock);
	if (detach)
		vaccel_server_put(server);	/* the attachment's reference */
	pr_info("vaccel: daemon (pid %d) detached; its sessions now fail with -ENODEV\n",
		server->pid);
}

/*
 * Any context. Whether the daemon behind `server` is going: its serving
 * thread exits or calls exec(), or (before 6.7) its ring is being closed.
 */
static bool vaccel_server_dying(struct vaccel_server *server)
{
	struct vaccel_slot *slot;
	bool dying = false;

	spin_lock(&server->queue_lock);
	if (server->task)
		dying = (READ_ONCE(server->task->flags) & PF_EXITING) ||
			server->task->in_execve;
	/* A parked command is the ring's: it is alive while parked. */
	slot = list_first_entry_or_null(&server->parked, struct vaccel_slot,
					parked_node);
	if (slot && vaccel_cmd_ring_dying(slot->cmd))
		dying = true;
	spin_unlock(&server->queue_lock);
	return dying;
}

/* Workqueue. Watches the serving thread every VACCEL_SRV_MONITOR_MS. */
static void vaccel_server_monitor(struct work_struct *work)
{
	struct vaccel_server *server =
		container_of(to_delayed_work(work), struct vaccel_server,
			     monitor);

	if (vaccel_server_dying(server)) {
		vaccel_server_kill(server, false);
		return;
	}
	if (!vaccel_server_is_dead(server))
		schedule_delayed_work(&server->monitor,
				      msecs_to_jiffies(VACCEL_SRV_MONITOR_MS));
}

/*
 * Daemon task: open of /dev/vaccel-server. One live daemon at a time. The
 * node's mode and owner decide who may open it (uapi/vaccel_server.h,
 * "Access"); no capability is asked.
 */
static int vaccel_server_open(struct inode *inode, struct file *file)
{
	struct vaccel_server *server, *old;
	int i;

	server = kzalloc(sizeof(*server), GFP_KERNEL_ACCOUNT);
	if (!server)
		return -ENOMEM;
	kref_init(&server->ref);	/* the file's */
	spin_lock_init(&server->queue_lock);
	INIT_LIST_HEAD(&server->control);
	INIT_LIST_HEAD(&server->turns);
	INIT_LIST_HEAD(&server->parked);
	INIT_LIST_HEAD(&server->sessions);
	hash_init(server->deferred);
	server->pid = task_tgid_nr(current);
	for (i = 0; i < VACCEL_SRV_MAX_SLOTS; i++) {
		server->slots[i].index = i;
		INIT_LIST_HEAD(&server->slots[i].parked_node);
	}
	INIT_DELAYED_WORK(&server->monitor, vaccel_server_monitor);

	mutex_lock(&vaccel_attach_lock);
	old = vaccel_attached;
	if (old && !vaccel_server_is_dead(old) && vaccel_server_dying(old)) {
		/*
		 * A daemon whose serving thread exits (kill -9, waited for by
		 * whoever restarts it) is ended here, as its monitor would at
		 * its next run: the replacement attaches at once, never
		 * -EBUSY for up to VACCEL_SRV_MONITOR_MS.
		 */
		kref_get(&old->ref);
		mutex_unlock(&vaccel_attach_lock);
		vaccel_server_kill(old, false);
		vaccel_server_put(old);
		mutex_lock(&vaccel_attach_lock);
		old = vaccel_attached;
	}
	if (old && !vaccel_server_is_dead(old)) {
		mutex_unlock(&vaccel_attach_lock);
		kfree(server);
		return -EBUSY;
	}
	/* A dead daemon still attached is on its way out: replace it. */
	kref_get(&server->ref);		/* the attachment's */
	vaccel_attached = server;
	mutex_unlock(&vaccel_attach_lock);
	if (old)
		vaccel_server_put(old);

	file->private_data = server;
	schedule_delayed_work(&server->monitor,
			      msecs_to_jiffies(VACCEL_SRV_MONITOR_MS));
	pr_info("vaccel: daemon attached (pid %d)\n", task_tgid_nr(current));
	return 0;
}

/*
 * Process context (last close of the server file). No command can be
 * parked (each holds the file), so this is a clean detach or the end of a
 * daemon the monitor already handled.
 */
static int vaccel_server_release(struct inode *inode, struct file *file)
{
	struct vaccel_server *server = file->private_data;

	cancel_delayed_work_sync(&server->monitor);
	vaccel_server_kill(server, false);
	vaccel_server_put(server);	/* the file's */
	return 0;
}

/*
 * Daemon task (any of its threads). The request delivered on the slot
 * that `pos` names, with a reference, and the payload offset; NULL when
 * that slot holds no delivered request, or another one than the
 * generation in `pos` names (a stale worker).
 */
static struct vaccel_request *vaccel_server_payload_of(struct vaccel_server *server,
						       loff_t pos, u64 *offset,
						       struct vaccel_slot **at)
{
	u64 index = ((u64)pos >> VACCEL_SRV_SLOT_SHIFT) & 0xff;
	u64 seq = ((u64)pos >> VACCEL_SRV_SEQ_SHIFT) & VACCEL_SRV_SEQ_MASK;
	struct vaccel_request *req = NULL;
	struct vaccel_slot *slot;

	if (pos < 0 || index >= VACCEL_SRV_MAX_SLOTS)
		return NULL;
	slot = &server->slots[array_index_nospec(index, VACCEL_SRV_MAX_SLOTS)];
	*at = slot;
	*offset = (u64)pos & ((1ULL << VACCEL_SRV_SLOT_SHIFT) - 1);
	spin_lock(&server->queue_lock);
	if (slot->state == VACCEL_SLOT_DELIVERED && slot->req &&
	    (slot->req->message.header.seq & VACCEL_SRV_SEQ_MASK) == seq) {
		req = slot->req;
		vaccel_request_get(req);
	}
	spin_unlock(&server->queue_lock);
	return req;
}

/* Any context. Whether `slot` still holds `req` (not committed or failed). */
static bool vaccel_server_still_delivered(struct vaccel_server *server,
					  struct vaccel_slot *slot,
					  struct vaccel_request *req)
{
	bool delivered;

	spin_lock(&server->queue_lock);
	delivered = slot->state == VACCEL_SLOT_DELIVERED && slot->req == req;
	spin_unlock(&server->queue_lock);
	return delivered;
}

/* Bytes one pread/pwrite step moves before it checks the request again. */
#define VACCEL_COPY_STEP	(128 * 1024)

/*
 * Daemon task: pread (`to_daemon`) or pwrite of a delivered request's
 * payload, in steps: before each, the request must still be delivered,
 * so a copy stops the moment its request is committed, deferred or
 * failed. Returns the bytes moved, or an errno when none were.
 */
static ssize_t vaccel_server_copy(struct file *file, char __user *buf,
				  size_t count, loff_t *pos, bool to_daemon)
{
	struct vaccel_server *server = file->private_data;
	struct vaccel_request *req;
	struct vaccel_slot *slot;
	ssize_t done = 0, ret = 0;
	u64 offset;

	req = vaccel_server_payload_of(server, *pos, &offset, &slot);
	if (!req)
		return -ESTALE;
	while ((size_t)done < count) {
		size_t step = min_t(size_t, count - done, VACCEL_COPY_STEP);

		if (!vaccel_server_still_delivered(server, slot, req)) {
			ret = -ESTALE;
			break;
		}
		if (to_daemon)
			ret = vaccel_payload_to_daemon(req, buf + done, step,
						       offset + done);
		else
			ret = vaccel_payload_from_daemon(req, buf + done, step,
							 offset + done);
		if (ret <= 0)
			break;
		done += ret;
		cond_resched();
	}
	vaccel_request_put(req);
	if (done > 0) {
		*pos += done;
		return done;
	}
	return ret;
}

/* Daemon task: pread of a delivered request's payload. */
static ssize_t vaccel_server_read(struct file *file, char __user *dst,
				  size_t count, loff_t *pos)
{
	return vaccel_server_copy(file, dst, count, pos, true);
}

/* Daemon task: pwrite of a BUFFER_READ's data into the client's memory. */
static ssize_t vaccel_server_write(struct file *file, const char __user *src,
				   size_t count, loff_t *pos)
{
	return vaccel_server_copy(file, (char __user *)src, count, pos, false);
}

/*
 * Daemon task: VACCEL_SRV_IOCTL_HELLO, the version handshake (see
 * vaccel_server.h). The module's version is written back whatever the
 * outcome, so a refused daemon can say which one it met.
 */
static long vaccel_server_hello(struct vaccel_server *server,
				struct vaccel_srv_hello __user *arg)
{
	struct vaccel_srv_hello hello;
	bool served;

	if (copy_from_user(&hello, arg, sizeof(hello)))
		return -EFAULT;
	if (hello.flags || hello.reserved[0] || hello.reserved[1])
		return -EINVAL;
	served = hello.major == VACCEL_ABI_MAJOR &&
		 hello.minor >= VACCEL_ABI_MINOR &&
		 hello.protocol == VACCEL_SRV_PROTOCOL;
	hello.major = VACCEL_ABI_MAJOR;
	hello.minor = VACCEL_ABI_MINOR;
	hello.protocol = VACCEL_SRV_PROTOCOL;
	hello.flags = VACCEL_CMD_CANCELABLE ? VACCEL_SRV_HELLO_CANCELABLE : 0;
	if (copy_to_user(arg, &hello, sizeof(hello)))
		return -EFAULT;
	if (!served)
		return -EPROTONOSUPPORT;
	spin_lock(&server->queue_lock);
	server->hello = true;
	spin_unlock(&server->queue_lock);
	return 0;
}

/* Daemon task (any of its threads): HELLO and DETACH. */
static long vaccel_server_ioctl(struct file *file, unsigned int cmd,
				unsigned long arg)
{
	struct vaccel_server *server = file->private_data;

	switch (cmd) {
	case VACCEL_SRV_IOCTL_HELLO:
		return vaccel_server_hello(server, (void __user *)arg);
	case VACCEL_SRV_IOCTL_DETACH:
		vaccel_server_kill(server, false);
		return 0;
	default:
		return -ENOTTY;
	}
}

const struct file_operations vaccel_server_fops = {
	.owner = THIS_MODULE,
	.open = vaccel_server_open,
	.release = vaccel_server_release,
	.read = vaccel_server_read,
	.write = vaccel_server_write,
	.uring_cmd = vaccel_server_uring_cmd,
	.unlocked_ioctl = vaccel_server_ioctl,
	.llseek = noop_llseek,
};

/* sysfs: /sys/class/misc/vaccel-server/attached, "1" while a daemon is. */
static ssize_t attached_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	struct vaccel_server *server = vaccel_server_get_attached();

	if (server)
		vaccel_server_put(server);
	return sysfs_emit(buf, "%d\n", server ? 1 : 0);
}
static DEVICE_ATTR_RO(attached);

static struct attribute *vaccel_server_attrs[] = {
	&dev_attr_attached.attr,
	NULL,
};

static const struct attribute_group vaccel_server_group = {
	.attrs = vaccel_server_attrs,
};

const struct attribute_group *vaccel_server_groups[] = {
	&vaccel_server_group,
	NULL,
};
