/* SPDX-License-Identifier: MIT */
/*
 * Vetting the mount point before mounting on it.
 *
 * After a crash the old mount stays behind: every access fails with ENOTCONN,
 * yet files the kernel cached still read stale values. A dead mount of ours
 * (fstype fuse.extresd) at the mount point is replaced: where the kernel
 * allows, the new mount goes beneath it before it is detached, so that no
 * reader ever sees the directory underneath (ENOENT for every file); a
 * live one, or a mount of anything else, is refused.
 *
 * Checking and mounting are two steps that daemons started at once would
 * interleave, so a daemon first takes the mount point's lock and holds it
 * for its whole life: resolve, lock, prepare, in that order, before any
 * driver runs.
 */
#ifndef EXTRES_MOUNTPOINT_H
#define EXTRES_MOUNTPOINT_H

#include "base/err.h"
#include "os/runlock.h"

/*
 * Create `path` first when `create` is set (with its parents), then make it
 * absolute as extres_mountpoint_absolute() does. This is the mount point's
 * canonical name: the key of its lock and the path to mount on.
 */
int extres_mountpoint_resolve(const char *path, int create, char **ret,
			      struct extres_err *err);

/* How long a start waits for the extresd already mounted at the mount
 * point to answer before it calls that daemon "not responding". */
#define EXTRES_MOUNTPOINT_PROBE_MS 5000

/*
 * Take the start-up lock of the absolute mount point `mnt` (see runlock.h)
 * in the lock directory `dir`. While another extresd holds it without a
 * mount of ours at `mnt` (it is starting, and may yet fail; or it has
 * unmounted and is releasing what it took), try again every 20 ms for up
 * to `wait_ms`, first asking `stop_requested` (may be NULL), so that a
 * stop signal ends the wait at once.
 *
 * 0 with *ret held; -EBUSY "MNT is already served by a running extresd"
 * when a mount of ours is there or the wait ran out; -ETIMEDOUT "extresd at
 * MNT is not responding" when that mount gives no answer within
 * EXTRES_MOUNTPOINT_PROBE_MS; -EINTR (no message) when stop_requested()
 * said so; else another negative errno with a message. Nothing is taken on
 * failure.
 */
int extres_mountpoint_lock(const char *mnt, const char *dir, int wait_ms,
			   int (*stop_requested)(void),
			   struct extres_runlock *ret, struct extres_err *err);

/*
 * Vet the absolute mount point `mnt` (under its lock): nothing is mounted
 * on it, or a dead extresd mount (left to replace, see
 * extres_mountpoint_replace()); with nothing there, it must be a directory.
 * A live extresd mount there is -EBUSY with the same message as
 * extres_mountpoint_lock() (a daemon that does not take the lock: another
 * user's, or an older version), and -ETIMEDOUT "extresd at MNT is not
 * responding" when it gives no answer within EXTRES_MOUNTPOINT_PROBE_MS;
 * a mount of anything else is -EBUSY; -EINTR (no message) when
 * `stop_requested` (may be NULL), asked while waiting for that answer, said
 * so. On success *ret_dead is 1 when a dead extresd mount is on top, else
 * 0. Errors name the path.
 */
int extres_mountpoint_prepare(const char *mnt, int (*stop_requested)(void),
			      int *ret_dead, struct extres_err *err);

/*
 * Detach the dead extresd mounts on top at `mnt`, one by one, until none is
 * left: for a start that mounts the usual way, or gives up. Errors as
 * extres_mountpoint_prepare() has them; on success *ret_detached is how
 * many were.
 */
int extres_mountpoint_detach_dead(const char *mnt, int (*stop_requested)(void),
				  int *ret_detached, struct extres_err *err);

/* How extres_mountpoint_replace() put the mount in place. */
enum {
	/* Nothing was there. */
	EXTRES_MOUNTPOINT_ATTACHED,
	/* Beneath the dead mount, which was then detached: every reader saw
	 * one mount or the other, never the directory underneath. */
	EXTRES_MOUNTPOINT_BENEATH,
	/* After detaching the dead mount(s): readers saw the directory
	 * underneath in between (the kernel cannot mount beneath). */
	EXTRES_MOUNTPOINT_AFTER_DETACH,
};

/*
 * Attach the detached mount `mnt_fd` (fusemount.h) at the absolute mount
 * point `mnt`, replacing the dead extresd mounts there: beneath the dead
 * one, then detaching it, when `beneath` is set and the kernel can (Linux
 * 6.5+); else detaching them first. Several dead mounts stacked there are
 * detached down to the lowest first. Checks what is there again (the
 * checks of extres_mountpoint_prepare(), with its errors). 0 with *ret_how
 * saying which way, or a negative errno with a message naming the path; on
 * failure after the mount went in place (a dead mount that cannot be
 * detached), *ret_how says so too.
 */
int extres_mountpoint_replace(const char *mnt, int mnt_fd, int beneath,
			      int (*stop_requested)(void), int *ret_how,
			      struct extres_err *err);

/*
 * Make `path` absolute: realpath() of it, or, where that fails with
 * ENOTCONN (a dead mount cannot be resolved), realpath() of its parent plus
 * the last component. On success *ret is malloc'd; errors name the path.
 */
int extres_mountpoint_absolute(const char *path, char **ret,
			       struct extres_err *err);

/* Whether a request to a FUSE mount failed because its connection is gone
 * (the daemon died or stopped): ENOTCONN, ECONNABORTED or ECANCELED. */
int extres_mountpoint_gone_errno(int e);

/*
 * 0 when the absolute path `mnt` is the topmost mount of a live extresd;
 * else -ENOENT (not a mount point), -EINVAL (another file system), -ENOTCONN
 * (a dead extresd mount) or another errno, with a message saying which.
 * Asks the daemon, so blocks for as long as a hung one does: call it under
 * a deadline (deadline.h), as extresctl does.
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

/* The same, also giving the mount's owner: the uid in its "user_id=" super
 * option (FUSE mounts have one), or -1 when it has none. */
int extres_mountinfo_lookup_owner(const char *mountinfo, const char *path,
				  char **ret_fstype, long *ret_owner);

/* The owner (as above) of the topmost mount at the absolute path `mnt`,
 * from /proc/self/mountinfo: 0, or a negative errno with a message
 * (-ENOENT when nothing is mounted there). */
int extres_mountpoint_owner(const char *mnt, long *ret_owner,
			    struct extres_err *err);

/* The minor device number of the topmost mount at the absolute path
 * `mnt`, from /proc/self/mountinfo (for a FUSE mount, the number of its
 * connection under /sys/fs/fuse/connections): 0, or a negative errno with
 * a message. Asks nothing of the mount. */
int extres_mountpoint_dev(const char *mnt, unsigned *ret_minor,
			  struct extres_err *err);

#endif
