/* SPDX-License-Identifier: MIT */
/*
 * A FUSE mount made by hand with the new mount API (fsopen, fsconfig,
 * fsmount), detached until it is put in place, so that it can replace a dead
 * mount in one step (mountpoint.h, extres_mountpoint_replace()). libfuse
 * then serves it through the descriptor ("/dev/fd/N" as its mount point),
 * and neither mounts nor unmounts it.
 */
#ifndef EXTRES_FUSEMOUNT_H
#define EXTRES_FUSEMOUNT_H

#include <stddef.h>

#include "base/err.h"

struct extres_fusemount {
	int fuse_fd; /* the connection: /dev/fuse */
	int mnt_fd; /* the detached mount */
};

/*
 * Open /dev/fuse and make a detached FUSE mount of it, read-only or not,
 * from the mount options `opts` (libfuse's -o options, one per item,
 * unescaped; later ones win, as in libfuse; nosuid and nodev by default,
 * as libfuse has them), owned by the caller's uid and gid. On success both
 * descriptors of *ret are the caller's (O_CLOEXEC).
 *
 * -EOPNOTSUPP with a message naming the option when one is not a mount
 * option this makes (libfuse may still make it: mount the usual way);
 * -ENOSYS or -EPERM (no new mount API, no privilege) with a message; else
 * another negative errno with a message. Nothing is left open on failure.
 */
int extres_fusemount_make(const char *const *opts, size_t n_opts,
			  struct extres_fusemount *ret, struct extres_err *err);

/*
 * End the connection `fuse_fd` (requests still waiting fail at once) and
 * detach the mount at `mnt` unless it is gone already, as libfuse's unmount
 * does. `fuse_fd` is left open on /dev/null, for its owner (libfuse's
 * session) to close. 0, or a negative errno with a message.
 */
int extres_fusemount_unmount(const char *mnt, int fuse_fd,
			     struct extres_err *err);

#endif
