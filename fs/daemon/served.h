/* SPDX-License-Identifier: MIT */
/*
 * The tree the mount serves, and what the kernel holds of it.
 *
 * The request handlers (fuse_ops.c) read the current tree; the control
 * thread swaps in a new one and tells the kernel what changed. Trees
 * replaced live on, retired, with just what readers may still ask for:
 * listings that started in them, and the files the kernel still knows by a
 * number the new tree lost. And a notifier thread hands the kernel each
 * value's bytes as soon as the kernel knows its inode, so that its first
 * read needs no request.
 */
#ifndef EXTRES_SERVED_H
#define EXTRES_SERVED_H

#include <fuse_lowlevel.h>
#include <pthread.h>

#include "daemon/known.h"
#include "daemon/polled.h"
#include "daemon/pusher.h"
#include "os/proc_cache.h"
#include "tree/tree.h"

struct extres_transport;

#define EXTRES_FS_RETIRED 16
/* Changed files primed per swap: a lookup each (tens of microseconds), so a
 * swap that changes every value of a large tree stays quick. */
#define EXTRES_FS_PRIME 256

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
	/* What the trees it replaced still owe readers: each as
	 * extres_tree_retire() leaves it, in a ring of the last
	 * EXTRES_FS_RETIRED, oldest freed first. */
	struct extres_tree *retired[EXTRES_FS_RETIRED];
	size_t next_retired;
	/* The inodes the kernel knows, and the thread that pushes bytes. */
	struct extres_known known;
	struct extres_pusher pusher;
	/* Open files readers poll until their value changes. */
	struct extres_polled polled;
	/* What /proc says of the processes that read /self. */
	struct extres_proc_cache procs;
	/* Set by extres_fs_start_push(): the session, and where it is
	 * mounted (the caller's string, which outlives the pushes). */
	struct fuse_session *se;
	const char *mountpoint;
	/* Set in init() from the kernel's capabilities; read-only after. */
	int no_open;
	int no_opendir;
	/* How requests come (daemon/transport.h): libfuse hands our read
	 * and writev this struct, not the daemon's. */
	struct extres_transport *transport;
};

/* 0, or a negative errno. `tree` (may be NULL until extres_fs_swap()) is
 * owned by fs from now on. */
int extres_fs_init(struct extres_fs *fs, struct extres_tree *tree);
/* Stops the notifier, frees the trees. */
void extres_fs_destroy(struct extres_fs *fs);

/* Start the notifier thread for session `se`, mounted at `mountpoint`. 0 or
 * a negative errno (the mount then works, with every first read a
 * request). */
int extres_fs_start_push(struct extres_fs *fs, struct fuse_session *se,
			 const char *mountpoint);
/* Stop it (before the session goes); safe if never started, and twice. */
void extres_fs_stop_push(struct extres_fs *fs);

/*
 * The node with this inode number: in the current tree, else in a retired
 * one, newest first. A larger file that changed has a new number; the
 * kernel may still ask for the old one on behalf of a reader who opened it
 * before, and gets the old bytes, whole. Call with the lock held.
 */
const struct extres_node *extres_fs_node(const struct extres_fs *fs,
					 uint64_t ino);

/*
 * The tree that lists directory `ino` as the tree whose serial is `serial`
 * (modulo 2^31) did, or NULL when that tree is gone. Call with the lock
 * held.
 */
const struct extres_tree *extres_fs_listing(const struct extres_fs *fs,
					    uint64_t serial, uint64_t ino);
#define EXTRES_FS_SERIAL_MASK 0x7fffffffULL

/*
 * The kernel is handed an entry for `n` of the current tree (a lookup
 * reply, an entry of a readdirplus reply): count it. Call before replying
 * (the kernel may forget it as soon as it has it), and extres_fs_forget(fs,
 * n->ino, 1) if the reply fails. 1 when the kernel did not know the inode
 * and its bytes are worth pushing: then call extres_fs_push() after the
 * reply (the kernel holds the inode only once it has processed that).
 */
int extres_fs_given(struct extres_fs *fs, const struct extres_node *n);

/* Queue the bytes of `ino` for the notifier thread. */
void extres_fs_push(struct extres_fs *fs, uint64_t ino);

/* The kernel forgot `ino` `n` times. */
void extres_fs_forget(struct extres_fs *fs, uint64_t ino, uint64_t n);

/*
 * Serve `tree` from now on, then tell the kernel what changed since the
 * previous tree: dropped names (inval_entry: gone, or a changed file, which
 * has a new number) and changed directories (inval_inode: attributes and
 * listings), so that readers see each new value with its new size at once.
 * Then a changed file the kernel knew under its old number is looked up
 * again through the mount (up to EXTRES_FS_PRIME of them), so the kernel
 * holds the new inode, and its bytes are stored: the next reader finds
 * name and bytes cached, and asks the daemon nothing. `se` may be NULL (not
 * mounted yet). Never call this
 * from a request handler: the kernel waits for the daemon while it
 * invalidates. The previous tree is retired, the oldest retired one freed,
 * and the bytes of files the kernel forgot let go. Readers polling a file
 * whose value changed (a number the new tree lacks) are woken. Only one
 * thread may swap;
 * that thread may read fs->tree without the lock.
 */
void extres_fs_swap(struct extres_fs *fs, struct fuse_session *se,
		    struct extres_tree *tree);

#endif
