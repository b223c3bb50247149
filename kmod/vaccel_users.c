// SPDX-License-Identifier: GPL-2.0
/*
 * The per-user cap on open sessions.
 *
 * Owns the count of sessions each user holds: a session is charged to the
 * effective uid (as the initial user namespace sees it) of the task that
 * opened it, at open, and given back when the session is freed (its file
 * closed and its last request gone), so the count is exactly the sessions
 * alive of that uid. Decides whether an open may proceed:
 * max_sessions_per_user (vaccel_main.c) sessions per uid at once, root's
 * included (a daemon-side `sessions` rule per tenant refines this; the cap
 * is the backstop for tenants no rule names). An open past it fails with
 * -EDQUOT, the errno of a contract ResourceLimit, and a rate-limited log
 * line naming the uid and the cap. A cap of 0 leaves only max_sessions.
 *
 * Invariant: an entry exists exactly while its uid holds a session; its
 * count is changed only under vaccel_users_lock.
 */
#include <linux/hashtable.h>
#include <linux/printk.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uidgid.h>

#include "vaccel_drv.h"

struct vaccel_user {
	struct hlist_node node;
	kuid_t uid;
	unsigned int sessions;
};

static DEFINE_SPINLOCK(vaccel_users_lock);
static DEFINE_HASHTABLE(vaccel_users, 6);

/* vaccel_users_lock held. */
static struct vaccel_user *vaccel_user_find_locked(kuid_t uid)
{
	struct vaccel_user *user;

	hash_for_each_possible(vaccel_users, user, node, __kuid_val(uid))
		if (uid_eq(user->uid, uid))
			return user;
	return NULL;
}

/*
 * Client task (open), may sleep. Charges one session to `uid`. Returns 0,
 * -EDQUOT past the cap, or -ENOMEM.
 */
int vaccel_user_charge(kuid_t uid)
{
	unsigned int cap = vaccel_max_sessions_per_user();
	struct vaccel_user *fresh, *user;
	unsigned int held = 0;

	/* Allocated before the lock: a new uid's entry, freed if not needed. */
	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL_ACCOUNT);
	if (!fresh)
		return -ENOMEM;
	spin_lock(&vaccel_users_lock);
	user = vaccel_user_find_locked(uid);
	if (user)
		held = user->sessions;
	if (cap && held >= cap) {
		spin_unlock(&vaccel_users_lock);
		kfree(fresh);
		pr_info_ratelimited("vaccel: uid %u refused a session: it holds %u, max_sessions_per_user is %u\n",
				    from_kuid_munged(&init_user_ns, uid), held,
				    cap);
		return -EDQUOT;
	}
	if (!user) {
		user = fresh;
		fresh = NULL;
		user->uid = uid;
		hash_add(vaccel_users, &user->node, __kuid_val(uid));
	}
	user->sessions++;
	spin_unlock(&vaccel_users_lock);
	kfree(fresh);
	return 0;
}

/* Process context (a session freed). Gives back what charge took. */
void vaccel_user_uncharge(kuid_t uid)
{
	struct vaccel_user *user;

	spin_lock(&vaccel_users_lock);
	user = vaccel_user_find_locked(uid);
	if (WARN_ON_ONCE(!user || !user->sessions)) {
		spin_unlock(&vaccel_users_lock);
		return;
	}
	if (--user->sessions) {
		spin_unlock(&vaccel_users_lock);
		return;
	}
	hash_del(&user->node);
	spin_unlock(&vaccel_users_lock);
	kfree(user);
}

/* Reader task (debugfs `users`): one line per uid holding sessions. */
void vaccel_users_show(struct seq_file *m)
{
	struct vaccel_user *user;
	int bucket;

	seq_printf(m, "max_sessions_per_user %u\n",
		   vaccel_max_sessions_per_user());
	spin_lock(&vaccel_users_lock);
	hash_for_each(vaccel_users, bucket, user, node)
		seq_printf(m, "uid %u sessions %u\n",
			   from_kuid_munged(&init_user_ns, user->uid),
			   user->sessions);
	spin_unlock(&vaccel_users_lock);
}
