// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/debug/vaccel/: what the module holds.
 *
 * Read-only views for operators and tests, never an interface programs
 * depend on:
 *  - requests, sessions: objects alive now (a leak shows as a count that
 *    does not return to its value once the clients are gone);
 *  - state: the attached daemon, its queues and every slot's state, then
 *    one line per session (queued, delivered, in the module);
 *  - users: max_sessions_per_user, then one line per uid holding
 *    sessions, with their count (what the per-user cap is charged).
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "vaccel_drv.h"

static struct dentry *vaccel_debugfs_dir;

static const char *const vaccel_slot_state_name[] = {
	[VACCEL_SLOT_IDLE] = "idle",
	[VACCEL_SLOT_PARKED] = "parked",
	[VACCEL_SLOT_DELIVERING] = "delivering",
	[VACCEL_SLOT_DELIVERED] = "delivered",
};

static int vaccel_debugfs_requests_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "%d\n", vaccel_requests_alive_count());
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vaccel_debugfs_requests);

static int vaccel_debugfs_sessions_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "%d\n", vaccel_sessions_alive_count());
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vaccel_debugfs_sessions);

static int vaccel_debugfs_users_show(struct seq_file *m, void *unused)
{
	vaccel_users_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vaccel_debugfs_users);

/* Reader task. Snapshot under queue_lock: the lines never sleep. */
static int vaccel_debugfs_state_show(struct seq_file *m, void *unused)
{
	struct vaccel_server *server = vaccel_server_get_attached();
	struct vaccel_session *session;
	struct vaccel_request *req;
	unsigned int queued;
	int i;

	if (!server) {
		seq_puts(m, "daemon: none attached\n");
		return 0;
	}
	spin_lock(&server->queue_lock);
	seq_printf(m, "daemon: pid %d hello %d dead %d queued %u deferred %u\n",
		   server->pid, server->hello, server->dead, server->queued,
		   server->deferred_count);
	seq_puts(m, "slots:");
	for (i = 0; i < VACCEL_SRV_MAX_SLOTS; i++)
		seq_printf(m, " %s",
			   vaccel_slot_state_name[server->slots[i].state]);
	seq_puts(m, "\n");
	list_for_each_entry(session, &server->sessions, server_node) {
		queued = 0;
		list_for_each_entry(req, &session->queue, node)
			queued++;
		seq_printf(m, "session %llu: pid %d queued %u delivered %u requests %d\n",
			   session->id, session->pid, queued,
			   session->delivered,
			   atomic_read(&session->requests));
	}
	spin_unlock(&server->queue_lock);
	vaccel_server_put(server);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vaccel_debugfs_state);

/* Process context (insmod). debugfs failures are not the module's. */
void vaccel_debugfs_init(void)
{
	vaccel_debugfs_dir = debugfs_create_dir("vaccel", NULL);
	debugfs_create_file("requests", 0400, vaccel_debugfs_dir, NULL,
			    &vaccel_debugfs_requests_fops);
	debugfs_create_file("sessions", 0400, vaccel_debugfs_dir, NULL,
			    &vaccel_debugfs_sessions_fops);
	debugfs_create_file("state", 0400, vaccel_debugfs_dir, NULL,
			    &vaccel_debugfs_state_fops);
	debugfs_create_file("users", 0400, vaccel_debugfs_dir, NULL,
			    &vaccel_debugfs_users_fops);
}

/* Process context (rmmod). */
void vaccel_debugfs_exit(void)
{
	debugfs_remove_recursive(vaccel_debugfs_dir);
}
