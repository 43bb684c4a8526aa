/* SPDX-License-Identifier: MIT */
/*
 * The FUSE low-level operations over an extres_tree.
 *
 * The only file that replies to the kernel. Every handler reads the current
 * tree under a read lock that only a swap contends (see struct extres_fs)
 * and waits on nothing else: no I/O, no driver calls. Property files are
 * served so that the kernel keeps them: long entry and attribute timeouts,
 * exact sizes, and open/opendir declined with ENOSYS where the kernel
 * supports that, so hot reads never reach the daemon.
 */
#ifndef EXTRES_FUSE_OPS_H
#define EXTRES_FUSE_OPS_H

#include <fuse_lowlevel.h>
#include <pthread.h>

#include "tree/tree.h"

#define EXTRES_FS_RETIRED 16

/* The part of the daemon's state the file system sees (the session's
 * userdata). */
struct extres_fs {
	/*
	 * The tree being served; swapped whole, never modified in place.
	 * Handlers hold `lock` for reading while they use it (microseconds,
	 * no I/O), so a swap under the write lock knows the old tree is
	 * unused afterwards and can be freed at once.
	 */
	pthread_rwlock_t lock;
	struct extres_tree *tree;
	/* What the trees it replaced still owe readers of files that changed
	 * since they opened them (a changed file has a new inode number) and
	 * listings that started in them: each kept as extres_tree_retire()
	 * leaves it, in a ring of the last EXTRES_FS_RETIRED, oldest freed
	 * first. */
	struct extres_tree *retired[EXTRES_FS_RETIRED];
	size_t next_retired;
	/* Set in init() from the kernel's capabilities; read-only after. */
	int no_open;
	int no_opendir;
};

/* The operations table; userdata must be a struct extres_fs. */
const struct fuse_lowlevel_ops *extres_fuse_ops(void);

/* 0, or a negative errno. `tree` (may be NULL until extres_fs_swap()) is
 * owned by fs from now on. */
int extres_fs_init(struct extres_fs *fs, struct extres_tree *tree);
/* Frees the tree. */
void extres_fs_destroy(struct extres_fs *fs);

/*
 * Serve `tree` from now on, then tell the kernel what changed since the
 * previous tree: dropped names (inval_entry) and changed files and
 * directories (inval_inode: attributes, cached pages and listings), so that
 * readers see each new value with its new size at once. `se` may be NULL
 * (not mounted yet). Never call this from a request handler: the kernel
 * waits for the daemon while it invalidates. The previous tree is retired
 * (what it lost to `tree` still answered by inode number, and its listings
 * still read) and the oldest retired one freed. Only one
 * thread may swap; that thread may read fs->tree without the lock.
 */
void extres_fs_swap(struct extres_fs *fs, struct fuse_session *se,
		    struct extres_tree *tree);

#endif
