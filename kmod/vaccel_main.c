// SPDX-License-Identifier: GPL-2.0
/*
 * The module vaccel.ko: module parameters and the two device nodes.
 *
 * Owns the registration of /dev/vaccel (clients) and /dev/vaccel-server
 * (the daemon: mode 0600, root's unless a udev rule says otherwise), the
 * debugfs directory, and the module's limits. Decides who may open
 * /dev/vaccel:
 *  - client_mode (default 0660): the mode devtmpfs gives /dev/vaccel (the
 *    udev rule in dist/udev/ gives it group `vaccel`);
 *  - client_group (default -1, none): when set to a gid, only members of
 *    that group (and CAP_SYS_ADMIN) may open /dev/vaccel. The check is
 *    made at open because devtmpfs creates the node owned by root:root;
 *    a udev rule may also give the node that group and mode 0660.
 * And how many sessions may be open at once: max_sessions in all (-ENFILE
 * past it) and max_sessions_per_user per uid (-EDQUOT past it, root's
 * included, so that no one user, root or a container's uid 0 mapped to
 * it, locks the others out; vaccel_users.c).
 * The kernel transport itself is described in uapi/vaccel_server.h.
 */
#include <linux/build_bug.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/moduleparam.h>

#include "vaccel_drv.h"

static ushort client_mode = 0660;
module_param(client_mode, ushort, 0444);
MODULE_PARM_DESC(client_mode, "Mode of /dev/vaccel (default 0660)");

static uint max_sessions = 4096;
module_param(max_sessions, uint, 0644);
MODULE_PARM_DESC(max_sessions,
		 "Open sessions of /dev/vaccel at once, all clients (default 4096)");

/* Any context. */
unsigned int vaccel_max_sessions(void)
{
	return READ_ONCE(max_sessions);
}

static uint max_sessions_per_user = 64;
module_param(max_sessions_per_user, uint, 0644);
MODULE_PARM_DESC(max_sessions_per_user,
		 "Open sessions of /dev/vaccel at once, per uid, root included; 0: no per-uid cap (default 64)");

/* Any context. */
unsigned int vaccel_max_sessions_per_user(void)
{
	return READ_ONCE(max_sessions_per_user);
}

static int client_group = -1;
module_param(client_group, int, 0444);
MODULE_PARM_DESC(client_group,
		 "If >= 0: only this gid's members and root may open /dev/vaccel");

/* Client task (open of /dev/vaccel). */
bool vaccel_client_may_open(void)
{
	kgid_t gid;

	if (client_group < 0)
		return true;
	gid = make_kgid(&init_user_ns, client_group);
	return (gid_valid(gid) && in_group_p(gid)) || capable(CAP_SYS_ADMIN);
}

static struct miscdevice vaccel_server_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "vaccel-server",
	.fops = &vaccel_server_fops,
	.mode = 0600,
	.groups = vaccel_server_groups,
};

static struct miscdevice vaccel_client_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "vaccel",
	.fops = &vaccel_client_fops,
};

/* Process context (insmod). */
static int __init vaccel_init(void)
{
	int ret;

	BUILD_BUG_ON(sizeof(struct vaccel_wire) > VACCEL_SRV_BUFFER_BYTES);
	/* A BUFFER_MAP answer and its struct vaccel_srv_map fit a buffer. */
	BUILD_BUG_ON(sizeof(struct vaccel_wire) +
		     sizeof(struct vaccel_srv_map) > VACCEL_SRV_BUFFER_BYTES);
	BUILD_BUG_ON(sizeof(struct vaccel_srv_map) != 16);
	BUILD_BUG_ON(sizeof(struct vaccel_cmd_pdu) >
		     sizeof_field(struct io_uring_cmd, pdu));
	BUILD_BUG_ON(sizeof(struct vaccel_srv_cmd) != 16);
	BUILD_BUG_ON(sizeof(struct vaccel_srv_session_open) != 328);
	BUILD_BUG_ON(sizeof(struct vaccel_srv_session_close) != 40);
	BUILD_BUG_ON(sizeof(struct vaccel_srv_withdraw) != 48);
	BUILD_BUG_ON(sizeof(struct vaccel_srv_hello) != 32);
	BUILD_BUG_ON(VACCEL_SRV_MAX_SLOTS > 256);	/* 8 bits of the position */
	BUILD_BUG_ON(VACCEL_MAX_BINDINGS * sizeof(struct vaccel_binding) >
		     VACCEL_COPIED_PAYLOAD_MAX);
	BUILD_BUG_ON(VACCEL_MAX_WAIT_EVENTS * sizeof(__u64) >
		     VACCEL_COPIED_PAYLOAD_MAX);
	BUILD_BUG_ON(VACCEL_SRV_PAYLOAD_MAX >= (1ULL << VACCEL_SRV_SLOT_SHIFT));

	vaccel_client_dev.mode = client_mode & 0777;
	ret = misc_register(&vaccel_server_dev);
	if (ret)
		return ret;
	ret = misc_register(&vaccel_client_dev);
	if (ret) {
		misc_deregister(&vaccel_server_dev);
		return ret;
	}
	vaccel_debugfs_init();
	pr_info("vaccel: ABI %d.%d, server protocol %d, /dev/vaccel mode %04o\n",
		VACCEL_ABI_MAJOR, VACCEL_ABI_MINOR, VACCEL_SRV_PROTOCOL,
		vaccel_client_dev.mode);
	return 0;
}

/*
 * Process context (rmmod). Every file is closed, so nothing is attached
 * and every request has been freed.
 */
static void __exit vaccel_exit(void)
{
	int alive = vaccel_requests_alive_count();

	vaccel_debugfs_exit();
	misc_deregister(&vaccel_client_dev);
	misc_deregister(&vaccel_server_dev);
	WARN_ON(alive != 0);
	pr_info("vaccel: unloaded (%d requests alive)\n", alive);
}

module_init(vaccel_init);
module_exit(vaccel_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("vaccel: /dev/vaccel forwarded to the vacceld daemon over io_uring");
MODULE_AUTHOR("The vaccel project");
