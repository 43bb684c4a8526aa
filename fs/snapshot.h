/* SPDX-License-Identifier: MIT */
/*
 * The file interface's layout, from allocated infos to a tree:
 *
 *   /<resource>/           one directory per configured resource, in order
 *   /<resource>/<n>/       one directory per allocated info, 0..amount-1
 *   /<resource>/<n>/<key>  one file per property: the value and "\n"
 */
#ifndef EXTRES_SNAPSHOT_H
#define EXTRES_SNAPSHOT_H

#include <stddef.h>
#include <time.h>

#include "err.h"
#include "infos.h"
#include "tree.h"

struct extres_snapshot_resource {
	const char *name;
	const struct extres_info *infos;
	size_t n_infos;
};

/* Build the tree for `n` resources. 0, or a negative errno with a message
 * (duplicate or invalid names; out of memory); nothing leaks. */
int extres_snapshot_build(const struct extres_snapshot_resource *res, size_t n,
			  struct timespec mtime, struct extres_tree **ret,
			  struct extres_err *err);

#endif
