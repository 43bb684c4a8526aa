/* SPDX-License-Identifier: MIT */
/*
 * The file interface's layout, from allocated infos to a tree:
 *
 *   /<resource>/           one directory per configured resource, in order
 *   /<resource>/<n>/       one directory per allocated info, 0..amount-1
 *   /<resource>/<n>/<key>  one file per property: the value and "\n"
 *   /.meta/<file>          what the daemon shows besides (status, views):
 *                          under a hidden name, so that `ls` and globs see
 *                          only resources
 *
 * and, built with extres_snapshot_build_self(), a process's own lease:
 *
 *   /self                  a symlink, to .leases/none in the tree; the
 *                          daemon answers its readlink per caller
 *   /.leases/none/         empty: where a process without a lease lands
 *   /.leases/<id>/<resource>/<n>/<key>
 *                          each lease's devices, laid out like the top
 */
#ifndef EXTRES_SNAPSHOT_H
#define EXTRES_SNAPSHOT_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "base/err.h"
#include "host/infos.h"
#include "tree/tree.h"

struct extres_snapshot_resource {
	const char *name;
	const struct extres_info *infos;
	size_t n_infos;
};

/* A file under /.meta, or under a directory of it: `name` is "FILE",
 * "DIR/FILE" (DIR made at its first mention, in order), or "DIR/" for the
 * directory alone (so that an empty one is still there). */
struct extres_snapshot_file {
	const char *name;
	const char *data;
	size_t len;
	mode_t perm; /* 0: 0444, every user reads it; else e.g. 0400 */
};

/* Build the tree for `n` resources; `prev` (or NULL) is the tree it will
 * replace, for time stamps (see extres_tree_seal()). 0, or a negative errno
 * with a message (duplicate or invalid names; out of memory); nothing leaks. */
int extres_snapshot_build(const struct extres_snapshot_resource *res, size_t n,
			  struct timespec mtime, const struct extres_tree *prev,
			  struct extres_tree **ret, struct extres_err *err);

/* The same with the files `meta` in /.meta (none: no /.meta at all). */
int extres_snapshot_build_meta(const struct extres_snapshot_resource *res,
			       size_t n,
			       const struct extres_snapshot_file *meta,
			       size_t n_meta, struct timespec mtime,
			       const struct extres_tree *prev,
			       struct extres_tree **ret,
			       struct extres_err *err);

/* A lease's devices, resource by resource (n_infos of each: the lease's
 * devices of that resource, in its order). `id` must be a valid file name
 * other than "none". */
struct extres_snapshot_lease {
	const char *id;
	const struct extres_snapshot_resource *res;
	size_t n_res;
};

/* Where /self leads for a process without a lease, and the directory the
 * leases are in. */
#define EXTRES_SNAPSHOT_LEASES ".leases"
#define EXTRES_SNAPSHOT_NO_LEASE ".leases/none"

/* The same with /self and /.leases (see above), before /.meta. */
int extres_snapshot_build_self(
	const struct extres_snapshot_resource *res, size_t n,
	const struct extres_snapshot_file *meta, size_t n_meta,
	const struct extres_snapshot_lease *leases, size_t n_leases,
	struct timespec mtime, const struct extres_tree *prev,
	struct extres_tree **ret, struct extres_err *err);

#endif
