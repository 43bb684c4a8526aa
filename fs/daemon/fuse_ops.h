/* SPDX-License-Identifier: MIT */
/*
 * The FUSE low-level operations over the served tree (daemon/served.h).
 *
 * The only file that answers requests. Every handler reads the current
 * tree under a read lock that only a swap contends (see struct extres_fs)
 * and waits on nothing else: no I/O, no driver calls. Property files are
 * served so that the kernel keeps them: long entry and attribute timeouts,
 * exact sizes, and open/opendir declined with ENOSYS where the kernel
 * supports that, so hot reads never reach the daemon. Every entry handed
 * to the kernel is counted, and every forget, so that the served state
 * knows which inodes the kernel holds.
 */
#ifndef EXTRES_FUSE_OPS_H
#define EXTRES_FUSE_OPS_H

#include <fuse_lowlevel.h>

#include "daemon/served.h"

/* The operations table; userdata must be a struct extres_fs. */
const struct fuse_lowlevel_ops *extres_fuse_ops(void);

#endif
