/* SPDX-License-Identifier: MIT */
/*
 * /self, like /proc/self: where it leads depends on who asks. A process
 * that holds a lease (extresctl run), or whose nearest such ancestor does,
 * finds its lease's devices there, laid out like the top level; any other
 * process finds .leases/none, an empty directory.
 *
 * The FUSE layer answers READLINK of /self with extres_self_resolve(): the
 * requesting process and its ancestors are read from /proc/PID/stat one
 * by one (at most EXTRES_SELF_MAX_DEPTH of them), outside the tree's lock,
 * and each is looked up in the tree under the lock, so that the nearest
 * leaseholder ends the walk and a tree without leases ends it at once.
 * These small reads of /proc are the only I/O a request does, and a
 * process asked about before is mostly not read again (os/proc_cache.h).
 */
#ifndef EXTRES_SELF_H
#define EXTRES_SELF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "os/proc_cache.h"
#include "tree/tree.h"

/* Ancestors looked at: deeper process trees than this find no lease. */
#define EXTRES_SELF_MAX_DEPTH 32
/* ".leases/" and an id "PID-STARTTIME", with room. */
#define EXTRES_SELF_TARGET_MAX 64

/*
 * Where /self leads in `t` for process pid/starttime: 1 with
 * ".leases/PID-STARTTIME" in buf (EXTRES_SELF_TARGET_MAX bytes, not
 * NUL-ended) and its length in *ret_len when `t` holds that lease; 0 when
 * not; -ENOENT when `t` holds no lease at all. Pure over `t`.
 */
int extres_self_match(const struct extres_tree *t, pid_t pid,
		      uint64_t starttime, char *buf, size_t *ret_len);

/*
 * The target of /self for thread `tid` (FUSE names the calling thread;
 * its process counts), into buf (EXTRES_SELF_TARGET_MAX bytes, not
 * NUL-ended); returns the length. What /proc says of each process comes
 * through `procs` (NULL: read each time). `lock` returns the current tree,
 * held until `unlock`; both get `ctx`; neither is held while /proc is
 * read.
 */
size_t extres_self_resolve(struct extres_proc_cache *procs, pid_t tid,
			   const struct extres_tree *(*lock)(void *ctx),
			   void (*unlock)(void *ctx), void *ctx, char *buf);

#endif
