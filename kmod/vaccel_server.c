// SPDX-License-Identifier: GPL-2.0
/*
 * vaccel_server.c - /dev/vaccel-server: the attached daemon.
 *
 * Owns the one attached server: its attachment (one live daemon at a
 * time), the monitor that notices the serving thread's death, the death
 * path itself (fail everything the daemon held, mark its sessions dead),
 * and the payload user copy (pread/pwrite at VACCEL_SRV_PAYLOAD_POS). The
 * request state machine is in vaccel_slot.c.
 */
#include <linux/capability.h>
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

/*
 * Any process context. The daemon is gone (or detached): fail everything
 * it held, once. Parked commands complete with -ENODEV; queued and
 * delivered requests fail with -ENODEV; sessions see server->dead.
 */
static void vaccel_server_kill(struct vaccel_server *server)
{
	struct io_uring_cmd *parked[VACCEL_SRV_MAX_SLOTS];
	struct vaccel_request *req, *next;
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
			parked[parked_count++] = slot->cmd;
			list_del_init(&slot->parked_node);
			slot->cmd = NULL;
			slot->state = VACCEL_SLOT_IDLE;
			break;
		case VACCEL_SLOT_DELIVERING:
			/* Its deliverer completes the command. */
			fallthrough;
		case VACCEL_SLOT_DELIVERED:
			if (slot->req)
				vaccel_request_finish_locked(slot->req,
							     -ENODEV, &reap);
			slot->req = NULL;
			if (slot->state == VACCEL_SLOT_DELIVERED)
				slot->state = VACCEL_SLOT_IDLE;
			break;
		case VACCEL_SLOT_IDLE:
			break;
		}
	}
	list_for_each_entry_safe(req, next, &server->queue, node) {
		list_del_init(&req->node);
		vaccel_request_finish_locked(req, -ENODEV, &reap);
	}
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
	pr_info("vaccel: daemon detached; its sessions now fail with -ENODEV\n");
}

/* Workqueue. Watches the serving thread every VACCEL_SRV_MONITOR_MS. */
static void vaccel_server_monitor(struct work_struct *work)
{
	struct vaccel_server *server =
		container_of(to_delayed_work(work), struct vaccel_server,
			     monitor);
	bool dying;

	spin_lock(&server->queue_lock);
	dying = server->task && (READ_ONCE(server->task->flags) & PF_EXITING);
	spin_unlock(&server->queue_lock);
	if (dying) {
		vaccel_server_kill(server);
		return;
	}
	if (!vaccel_server_is_dead(server))
		schedule_delayed_work(&server->monitor,
				      msecs_to_jiffies(VACCEL_SRV_MONITOR_MS));
}

/* Daemon task: open of /dev/vaccel-server. One live daemon at a time. */
static int vaccel_server_open(struct inode *inode, struct file *file)
{
	struct vaccel_server *server, *old;
	int i;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	server = kzalloc(sizeof(*server), GFP_KERNEL);
	if (!server)
		return -ENOMEM;
	kref_init(&server->ref);	/* the file's */
	spin_lock_init(&server->queue_lock);
	INIT_LIST_HEAD(&server->queue);
	INIT_LIST_HEAD(&server->parked);
	for (i = 0; i < VACCEL_SRV_MAX_SLOTS; i++) {
		server->slots[i].index = i;
		INIT_LIST_HEAD(&server->slots[i].parked_node);
	}
	INIT_DELAYED_WORK(&server->monitor, vaccel_server_monitor);

	mutex_lock(&vaccel_attach_lock);
	old = vaccel_attached;
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
	vaccel_server_kill(server);
	vaccel_server_put(server);	/* the file's */
	return 0;
}

/*
 * Daemon task (any of its threads). The request delivered on the slot
 * that `pos` names, with a reference, and the payload offset; NULL if
 * that slot holds none.
 */
static struct vaccel_request *vaccel_server_payload_of(struct vaccel_server *server,
						       loff_t pos, u64 *offset)
{
	u64 index = (u64)pos >> VACCEL_SRV_SLOT_SHIFT;
	struct vaccel_request *req = NULL;
	struct vaccel_slot *slot;

	if (pos < 0 || index >= VACCEL_SRV_MAX_SLOTS)
		return NULL;
	slot = &server->slots[array_index_nospec(index, VACCEL_SRV_MAX_SLOTS)];
	*offset = (u64)pos & ((1ULL << VACCEL_SRV_SLOT_SHIFT) - 1);
	spin_lock(&server->queue_lock);
	if (slot->state == VACCEL_SLOT_DELIVERED && slot->req) {
		req = slot->req;
		vaccel_request_get(req);
	}
	spin_unlock(&server->queue_lock);
	return req;
}

/* Daemon task: pread of a delivered request's payload. */
static ssize_t vaccel_server_read(struct file *file, char __user *dst,
				  size_t count, loff_t *pos)
{
	struct vaccel_request *req;
	ssize_t ret;
	u64 offset;

	req = vaccel_server_payload_of(file->private_data, *pos, &offset);
	if (!req)
		return -EINVAL;
	ret = vaccel_payload_to_daemon(req, dst, count, offset);
	vaccel_request_put(req);
	if (ret > 0)
		*pos += ret;
	return ret;
}

/* Daemon task: pwrite of a BUFFER_READ's data into the client's pages. */
static ssize_t vaccel_server_write(struct file *file, const char __user *src,
				   size_t count, loff_t *pos)
{
	struct vaccel_request *req;
	ssize_t ret;
	u64 offset;

	req = vaccel_server_payload_of(file->private_data, *pos, &offset);
	if (!req)
		return -EINVAL;
	ret = vaccel_payload_from_daemon(req, src, count, offset);
	vaccel_request_put(req);
	if (ret > 0)
		*pos += ret;
	return ret;
}

/*
 * Daemon task: VACCEL_SRV_IOCTL_HELLO, the version handshake (see
 * vaccel_server.h). The module's version is written back whatever the
 * outcome, so a refused daemon can say which one it met.
 */
static long vaccel_server_ioctl(struct file *file, unsigned int cmd,
				unsigned long arg)
{
	struct vaccel_server *server = file->private_data;
	struct vaccel_srv_hello hello;
	bool served;

	if (cmd != VACCEL_SRV_IOCTL_HELLO)
		return -ENOTTY;
	if (copy_from_user(&hello, (void __user *)arg, sizeof(hello)))
		return -EFAULT;
	if (hello.flags || hello.pad || hello.reserved[0] || hello.reserved[1])
		return -EINVAL;
	served = hello.major == VACCEL_ABI_MAJOR &&
		 hello.minor >= VACCEL_ABI_MINOR;
	hello.major = VACCEL_ABI_MAJOR;
	hello.minor = VACCEL_ABI_MINOR;
	if (copy_to_user((void __user *)arg, &hello, sizeof(hello)))
		return -EFAULT;
	if (!served)
		return -EPROTONOSUPPORT;
	spin_lock(&server->queue_lock);
	server->hello = true;
	spin_unlock(&server->queue_lock);
	return 0;
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
