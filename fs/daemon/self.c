/* SPDX-License-Identifier: MIT */
#include "daemon/self.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "os/proc_cache.h"
#include "tree/snapshot.h"

/* The directory of `t`'s leases, or NULL when nobody holds one ("none"
 * alone). */
static const struct extres_node *leases_of(const struct extres_tree *t)
{
	const struct extres_node *dir =
		extres_tree_lookup(t, EXTRES_ROOT_INO, EXTRES_SNAPSHOT_LEASES);

	return dir && dir->n_children > 1 ? dir : NULL;
}

int extres_self_match(const struct extres_tree *t, pid_t pid,
		      uint64_t starttime, char *buf, size_t *ret_len)
{
	const struct extres_node *dir = leases_of(t);
	char id[EXTRES_SELF_TARGET_MAX - sizeof(EXTRES_SNAPSHOT_LEASES)];
	int len;

	if (!dir)
		return -ENOENT;
	snprintf(id, sizeof(id), "%d-%" PRIu64, (int)pid, starttime);
	if (!extres_tree_lookup(t, dir->ino, id))
		return 0;
	len = snprintf(buf, EXTRES_SELF_TARGET_MAX, "%s/%s",
		       EXTRES_SNAPSHOT_LEASES, id);
	*ret_len = (size_t)len;
	return 1;
}

/*
 * Each step asks what /proc says of one process, through the cache
 * (os/proc_cache.h). Between a child's step and its parent's, the parent
 * may exit, as it could when each step read /proc: it is then gone (the
 * walk ends), a zombie (its start time unchanged), or, once its PID is
 * reused, another process. The cache leaves that window as it was. It adds
 * only the kernel's own: a kept parent is trusted until the parent's pidfd
 * polls readable, which comes a few microseconds after the kernel gives
 * the child another parent, inside the parent's exit.
 */
size_t extres_self_resolve(struct extres_proc_cache *procs, pid_t tid,
			   const struct extres_tree *(*lock)(void *ctx),
			   void (*unlock)(void *ctx), void *ctx, char *buf)
{
	struct extres_proc_ident st;
	size_t len = 0, depth;
	pid_t pid = tid;
	int r;

	/* Without leases, who asks does not matter: no /proc to read. */
	r = leases_of(lock(ctx)) ? 0 : -ENOENT;
	unlock(ctx);
	for (depth = 0; r == 0 && depth < EXTRES_SELF_MAX_DEPTH && pid > 1;
	     depth++) {
		if (extres_proc_cache_get(procs, pid, &st) < 0)
			break;
		/* A lease is a process's: a thread's own start time is not
		 * it. */
		if (depth == 0 && st.thread) {
			pid = st.tgid;
			if (extres_proc_cache_get(procs, pid, &st) < 0)
				break;
		}
		r = extres_self_match(lock(ctx), pid, st.starttime, buf, &len);
		unlock(ctx);
		pid = st.ppid;
	}
	if (r <= 0) {
		len = sizeof(EXTRES_SNAPSHOT_NO_LEASE) - 1;
		memcpy(buf, EXTRES_SNAPSHOT_NO_LEASE, len);
	}
	return len;
}
