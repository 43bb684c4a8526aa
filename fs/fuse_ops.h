/* SPDX-License-Identifier: MIT */
/*
 * The FUSE low-level operations over an extres_tree.
 *
 * The only file that replies to the kernel. Every handler reads the current
 * tree through one atomic load and never blocks: no locks, no I/O, no driver
 * calls. Property files are served so that the kernel keeps them: long entry
 * and attribute timeouts, exact sizes, and open/opendir declined with ENOSYS
 * where the kernel supports that, so hot reads never reach the daemon.
 */
#ifndef EXTRES_FUSE_OPS_H
#define EXTRES_FUSE_OPS_H

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

#include "tree.h"

/* The part of the daemon's state the file system sees (the session's
 * userdata). */
struct extres_fs {
	/* The tree being served; swapped whole, never modified in place. */
	struct extres_tree *_Atomic tree;
	/* Set in init() from the kernel's capabilities; read-only after. */
	int no_open;
	int no_opendir;
};

/* The operations table; userdata must be a struct extres_fs. */
const struct fuse_lowlevel_ops *extres_fuse_ops(void);

#endif
