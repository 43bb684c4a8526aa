/* SPDX-License-Identifier: MIT */
/*
 * The immutable in-memory tree served by the mount: directories and read-only
 * files, each with a stable inode number.
 *
 * A builder collects nodes; extres_tree_seal() turns it into a tree that is
 * never modified again, so any number of threads may read it without locks.
 * A change (a reload) builds a new tree and swaps it in.
 *
 * Inode numbers come from a hash of the node's path (root: EXTRES_ROOT_INO).
 * A tree built to replace another keeps the number of every directory that
 * stays and of every file whose bytes stay the same, so the kernel's cached
 * entries stay right; a file whose bytes changed gets a new number, so that
 * a reader who has the old file open keeps reading the old bytes whole (see
 * extres_tree_seal()). The tree knows nothing of resources or FUSE.
 */
#ifndef EXTRES_TREE_H
#define EXTRES_TREE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "base/err.h"

#define EXTRES_ROOT_INO 1

/* A tree holds one per file and directory, tens of thousands of them: what
 * only a directory has shares the place of what only a file has. */
struct extres_node {
	uint64_t ino;
	uint64_t parent; /* the parent's inode number; root: itself */
	const char *name; /* "" for the root */
	union {
		/* Files: the content (not NUL-terminated for readers; len
		 * is size); symlinks: the target. */
		const char *data;
		/* Directories: children in insertion order (readdir
		 * order). */
		const struct extres_node **children;
	};
	union {
		size_t size; /* files and symlinks */
		size_t n_subdirs; /* directories, whose size is 0 */
	};
	mode_t mode; /* S_IFDIR | 0555, S_IFREG | 0444 or less, S_IFLNK | 0777 */
	uint32_t n_children; /* directories; 0 for the others */
	/* When this node last changed (see extres_tree_seal()), in ns since
	 * the epoch: half a struct timespec. */
	int64_t mtime_ns;
};

struct extres_tree;
struct extres_tree_builder;

/* 0 or -ENOMEM. The builder starts with the root, id 0. */
int extres_tree_builder_new(struct extres_tree_builder **ret);
/* Accepts NULL. */
void extres_tree_builder_free(struct extres_tree_builder *b);

/*
 * Add a directory or a file (content copied) under the node with id `parent`
 * and return the new node's id in *ret_id (may be NULL). Names must be valid
 * file names (non-empty, no '/', not "." or "..", at most 255 bytes): -EINVAL
 * with a message naming the name otherwise. Names must also be unique in their
 * directory; extres_tree_seal() checks that (-EEXIST).
 */
int extres_tree_add_dir(struct extres_tree_builder *b, size_t parent,
			const char *name, size_t *ret_id,
			struct extres_err *err);
int extres_tree_add_file(struct extres_tree_builder *b, size_t parent,
			 const char *name, const char *data, size_t size,
			 size_t *ret_id, struct extres_err *err);

/* A symbolic link to `target` (copied; its content and size), mode
 * S_IFLNK | 0777. */
int extres_tree_add_symlink(struct extres_tree_builder *b, size_t parent,
			    const char *name, const char *target,
			    size_t *ret_id, struct extres_err *err);

/* The same as extres_tree_add_file() with permissions `perm` instead of
 * 0444 (only read bits: -EINVAL otherwise), for a file that not every user
 * may read. */
int extres_tree_add_file_perm(struct extres_tree_builder *b, size_t parent,
			      const char *name, const char *data, size_t size,
			      mode_t perm, size_t *ret_id,
			      struct extres_err *err);

/*
 * Freeze the builder into a tree; the builder is consumed (freed) whether or
 * not this succeeds. `prev` is the tree this one replaces, or NULL:
 *  - a file with the same path, bytes and mode as in prev keeps its inode number
 *    and time stamp; a changed or new file gets a number prev never used,
 *    and `now`;
 *  - a directory at a path prev has keeps its number; it keeps its time
 *    stamp too if its children are the same names with the same numbers,
 *    in the same order, and gets `now` otherwise.
 * -EEXIST with a message naming it when a directory holds a name twice.
 */
int extres_tree_seal(struct extres_tree_builder *b, struct timespec now,
		     const struct extres_tree *prev, struct extres_tree **ret,
		     struct extres_err *err);

/* What changed from `old` to `new`, for telling the kernel. */
/* The same inode, changed: a directory whose children changed. */
#define EXTRES_TREE_CHANGED 1
/* The name no longer leads to this inode (gone, or a changed file): drop
 * it. */
#define EXTRES_TREE_REMOVED 2

/*
 * Call `fn` for every node of `old` that `new` changed or removed, parents
 * before children, with the node in old and, when changed, the node with
 * its number in new (NULL when removed). A removed directory is reported
 * once, not its contents. Stops at and returns the first negative value
 * `fn` returns, else 0.
 */
int extres_tree_diff(const struct extres_tree *old,
		     const struct extres_tree *new,
		     int (*fn)(void *ctx, int what,
			       const struct extres_node *old,
			       const struct extres_node *node),
		     void *ctx);

/* Accepts NULL. */
void extres_tree_free(struct extres_tree *t);

/*
 * What of `old` must outlive it once `new` replaced it: a tree with old's
 * serial that holds only the nodes of old that new lost (files whose bytes
 * changed, and whatever was removed) and the directories whose
 * listing changed (their children as names, numbers and modes; a child
 * that new still has carries no bytes and is not found by number). A lost
 * file is kept, with its bytes, only if `in_use(ctx, ino)` says a reader
 * may still ask for it; else it is only a name in its directory's listing.
 * extres_tree_get() on the result finds exactly the nodes kept;
 * extres_tree_lookup() finds nothing; extres_tree_size() counts them. So a
 * directory it lacks lists in old as it does in the next tree of the line.
 * Neither tree is changed, and the result shares nothing with them. 0 or
 * -ENOMEM.
 */
int extres_tree_retire(const struct extres_tree *old,
		       const struct extres_tree *new,
		       int (*in_use)(void *ctx, uint64_t ino), void *ctx,
		       struct extres_tree **ret);

/*
 * Free the bytes of every file of retired tree `t` that `in_use(ctx, ino)`
 * no longer claims; extres_tree_get() no longer finds them. The only change
 * ever made to a tree after it is sealed: call it with no reader of `t`.
 */
void extres_tree_shed(struct extres_tree *t,
		      int (*in_use)(void *ctx, uint64_t ino), void *ctx);

/* The node with this inode number, or NULL. O(1). */
const struct extres_node *extres_tree_get(const struct extres_tree *t,
					  uint64_t ino);

/* The child `name` of directory `parent`, or NULL. O(1). */
const struct extres_node *extres_tree_lookup(const struct extres_tree *t,
					     uint64_t parent, const char *name);

/* Fill *st for `n` (ino, mode, nlink, size, blocks, the node's time stamp
 * as atime, mtime and ctime, uid/gid 0). */
void extres_tree_stat(const struct extres_node *n, struct stat *st);

/* Number of nodes, root included. */
size_t extres_tree_size(const struct extres_tree *t);

/* The tree's place in its line: 0 for a tree built without a predecessor,
 * one more than the predecessor's otherwise. */
uint64_t extres_tree_serial(const struct extres_tree *t);

#endif
