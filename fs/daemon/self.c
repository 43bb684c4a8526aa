/* SPDX-License-Identifier: MIT */
#include "daemon/self.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "os/proc.h"
#include "tree/snapshot.h"

int extres_self_match(const struct extres_tree *t, pid_t pid,
		      uint64_t starttime, char *buf, size_t *ret_len)
{
	const struct extres_node *dir =
		extres_tree_lookup(t, EXTRES_ROOT_INO, EXTRES_SNAPSHOT_LEASES);
	char id[EXTRES_SELF_TARGET_MAX - sizeof(EXTRES_SNAPSHOT_LEASES)];
	int len;

	/* "none" alone: nobody here holds a lease. */
	if (!dir || dir->n_children <= 1)
		return -ENOENT;
	snprintf(id, sizeof(id), "%d-%" PRIu64, (int)pid, starttime);
	if (!extres_tree_lookup(t, dir->ino, id))
		return 0;
	len = snprintf(buf, EXTRES_SELF_TARGET_MAX, "%s/%s",
		       EXTRES_SNAPSHOT_LEASES, id);
	*ret_len = (size_t)len;
	return 1;
}

size_t extres_self_resolve(pid_t tid,
			   const struct extres_tree *(*lock)(void *ctx),
			   void (*unlock)(void *ctx), void *ctx, char *buf)
{
	struct extres_proc_stat st;
	size_t len = 0, depth;
	pid_t pid = tid;
	int r = 0;

	for (depth = 0; r == 0 && depth < EXTRES_SELF_MAX_DEPTH && pid > 1;
	     depth++) {
		if (extres_proc_stat_full(pid, &st) < 0)
			break;
		/* A lease is a process's: a thread's own start time is not
		 * it. */
		if (depth == 0 && st.thread) {
			if (extres_proc_tgid(tid, &pid) < 0 ||
			    extres_proc_stat_full(pid, &st) < 0)
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
