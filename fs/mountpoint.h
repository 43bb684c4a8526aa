/* SPDX-License-Identifier: MIT */
/*
 * Vetting the mount point before mounting on it.
 *
 * After a crash the old mount stays behind: every access fails with ENOTCONN,
 * yet files the kernel cached still read stale values. So before mounting,
 * a dead mount of ours (fstype fuse.extresd) at the mount point is detached;
 * a live one, or a mount of anything else, is refused.
 */
#ifndef EXTRES_MOUNTPOINT_H
#define EXTRES_MOUNTPOINT_H

#include "err.h"

/*
 * Make `path` absolute (it may be a dead mount, where realpath() fails),
 * create it first when `create` is set, detach dead extresd mounts on it,
 * and check that what is left is a directory that nothing is mounted on.
 * On success *ret_path is the malloc'd absolute path and *ret_detached the
 * number of dead mounts detached. Errors name the path.
 */
int extres_mountpoint_prepare(const char *path, int create, char **ret_path,
			      int *ret_detached, struct extres_err *err);

/*
 * Make `path` absolute: realpath() of it, or, where that fails with
 * ENOTCONN (a dead mount cannot be resolved), realpath() of its parent plus
 * the last component. On success *ret is malloc'd; errors name the path.
 */
int extres_mountpoint_absolute(const char *path, char **ret,
			       struct extres_err *err);

/*
 * 0 when the absolute path `mnt` is the topmost mount of a live extresd;
 * else -ENOENT (not a mount point), -EINVAL (another file system), -ENOTCONN
 * (a dead extresd mount) or another errno, with a message saying which.
 */
int extres_mountpoint_check_live(const char *mnt, struct extres_err *err);

/*
 * Find the topmost mount at `path` in the text of a /proc/PID/mountinfo.
 * Returns 1 with the malloc'd fstype in *ret_fstype, 0 when nothing is
 * mounted there, or -ENOMEM. Mount points are compared after decoding the
 * kernel's octal escapes (\040 for a space).
 */
int extres_mountinfo_lookup(const char *mountinfo, const char *path,
			    char **ret_fstype);

#endif
