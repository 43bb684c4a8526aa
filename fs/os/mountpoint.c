/* SPDX-License-Identifier: MIT */
#include "os/mountpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "os/deadline.h"
#include "base/fileio.h"

#define OUR_FSTYPE "fuse.extresd"
#define ALREADY_SERVED "%s is already served by a running extresd"
#define NOT_RESPONDING "extresd at %s is not responding (no answer within %d s)"
#define LOCK_RETRY_MS 20

/* Linux 6.5; the headers of older systems lack it. */
#ifndef MOVE_MOUNT_BENEATH
#define MOVE_MOUNT_BENEATH 0x00000200
#endif

/* Decode mountinfo's octal escapes in place. */
static void unescape(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
				      (s[3] - '0'));
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = '\0';
}

/* Fields: id parent dev root MOUNTPOINT opts [optional...] - FSTYPE src super */
static int parse_line(char *line, long *id, long *parent, char **dev,
		      char **mnt, char **fstype, char **super)
{
	char *save = NULL, *tok;
	int field = 0;

	*dev = *mnt = *fstype = *super = NULL;
	*id = *parent = -1;
	for (tok = strtok_r(line, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save), field++) {
		if (field <= 1)
			*(field ? parent : id) = strtol(tok, NULL, 10);
		if (field == 2)
			*dev = tok;
		if (field == 4)
			*mnt = tok;
		if (field >= 6 && strcmp(tok, "-") == 0) {
			*fstype = strtok_r(NULL, " ", &save);
			if (*fstype && strtok_r(NULL, " ", &save))
				*super = strtok_r(NULL, " ", &save);
			break;
		}
	}
	return *dev && *mnt && *fstype ? 0 : -EINVAL;
}

/* The N of a "user_id=N" super option (a FUSE mount's owner), or -1. */
static long user_id_of(const char *super)
{
	const char *p = super;
	char *end;
	long uid;

	while (p && *p) {
		if (strncmp(p, "user_id=", 8) == 0) {
			errno = 0;
			uid = strtol(p + 8, &end, 10);
			if (!errno && end != p + 8 && uid >= 0 &&
			    (*end == ',' || *end == '\0'))
				return uid;
			return -1;
		}
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	return -1;
}

int extres_mountinfo_lookup(const char *mountinfo, const char *path,
			    char **ret_fstype)
{
	long owner;

	return extres_mountinfo_lookup_owner(mountinfo, path, ret_fstype,
					     &owner);
}

/* A mount at the path looked up. */
struct entry {
	long id, parent;
	const char *dev, *fstype, *super;
};

/*
 * The mounts stacked at `path`: the top one (the one no other mount there
 * is mounted on: with MOVE_MOUNT_BENEATH, later lines are not always
 * higher) and the one right beneath it. Returns the number of mounts there,
 * pointing into the decoded `copy`; *top and *below are NULL when none.
 */
static int stack_at(char *copy, const char *path, struct entry **ret_all,
		    const struct entry **top, const struct entry **below)
{
	struct entry *all = NULL, *grown;
	char *line, *save = NULL;
	int n = 0, i, j;

	*top = *below = NULL;
	for (line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		struct entry e;
		char *dev, *mnt, *fstype, *super;

		if (parse_line(line, &e.id, &e.parent, &dev, &mnt, &fstype,
			       &super) < 0)
			continue;
		unescape(mnt);
		if (strcmp(mnt, path) != 0)
			continue;
		grown = realloc(all, (size_t)(n + 1) * sizeof(*all));
		if (!grown) {
			free(all);
			return -ENOMEM;
		}
		all = grown;
		e.dev = dev;
		e.fstype = fstype;
		e.super = super;
		all[n++] = e;
	}
	for (i = n - 1; i >= 0 && !*top; i--) {
		for (j = 0; j < n && all[j].parent != all[i].id; j++)
			;
		if (j == n)
			*top = &all[i];
	}
	for (i = 0; *top && i < n; i++)
		if (all[i].id == (*top)->parent)
			*below = &all[i];
	*ret_all = all;
	return n;
}

int extres_mountinfo_lookup_owner(const char *mountinfo, const char *path,
				  char **ret_fstype, long *ret_owner)
{
	char *copy = strdup(mountinfo);
	const struct entry *top, *below;
	struct entry *all = NULL;
	int r;

	if (!copy)
		return -ENOMEM;
	r = stack_at(copy, path, &all, &top, &below);
	if (r > 0) {
		*ret_fstype = strdup(top->fstype);
		*ret_owner = user_id_of(top->super);
		r = *ret_fstype ? 1 : -ENOMEM;
	}
	free(all);
	free(copy);
	return r;
}

static int read_mountinfo(char **ret, struct extres_err *err)
{
	size_t len;
	int fd, r;

	fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return extres_err_set(err, errno, "/proc/self/mountinfo: %s",
				      strerror(errno));
	r = extres_read_all(fd, SIZE_MAX, ret, &len);
	close(fd);
	if (r == -ENOMEM)
		return extres_err_set(err, ENOMEM, "out of memory");
	if (r < 0)
		return extres_err_set(err, -r, "/proc/self/mountinfo: %s",
				      strerror(-r));
	return 0;
}

static int mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	char *p;

	if (strlen(path) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, path);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int extres_mountpoint_absolute(const char *path, char **ret,
			       struct extres_err *err)
{
	char real[PATH_MAX], *dcopy = NULL, *bcopy = NULL, *out = NULL;
	const char *base;
	int r = 0;

	if (realpath(path, real)) {
		out = strdup(real);
		goto done;
	}
	if (!extres_mountpoint_gone_errno(errno))
		return extres_err_set(err, errno, "mount point %s: %s", path,
				      strerror(errno));
	dcopy = strdup(path);
	bcopy = strdup(path);
	if (!dcopy || !bcopy) {
		r = extres_err_set(err, ENOMEM, "out of memory");
		goto done;
	}
	base = basename(bcopy);
	if (!realpath(dirname(dcopy), real)) {
		r = extres_err_set(err, errno, "mount point %s: %s", path,
				   strerror(errno));
		goto done;
	}
	if (asprintf(&out, "%s/%s", strcmp(real, "/") == 0 ? "" : real, base) <
	    0)
		out = NULL;
done:
	free(dcopy);
	free(bcopy);
	if (r < 0)
		return r;
	if (!out)
		return extres_err_set(err, ENOMEM, "out of memory");
	*ret = out;
	return 0;
}

int extres_mountpoint_resolve(const char *path, int create, char **ret,
			      struct extres_err *err)
{
	int r;

	if (create) {
		r = mkdir_p(path);
		if (r < 0)
			return extres_err_set(
				err, -r, "cannot create mount point %s: %s",
				path, strerror(-r));
	}
	return extres_mountpoint_absolute(path, ret, err);
}

/* 1 with *ret_fstype (and *ret_owner, see extres_mountinfo_lookup_owner())
 * when something is mounted at `mnt`, 0 when nothing. */
static int mounted_fstype(const char *mnt, char **ret_fstype, long *ret_owner,
			  struct extres_err *err)
{
	char *info = NULL;
	long owner;
	int r;

	r = read_mountinfo(&info, err);
	if (r < 0)
		return r;
	r = extres_mountinfo_lookup_owner(info, mnt, ret_fstype,
					  ret_owner ? ret_owner : &owner);
	free(info);
	if (r < 0)
		return extres_err_set(err, ENOMEM, "out of memory");
	return r;
}

/* Whether the mount right beneath the top one at `mnt` is one of ours: 1,
 * 0 or a negative errno with a message. */
static int ours_beneath(const char *mnt, struct extres_err *err)
{
	const struct entry *top, *below;
	struct entry *all = NULL;
	char *info = NULL;
	int r;

	r = read_mountinfo(&info, err);
	if (r < 0)
		return r;
	r = stack_at(info, mnt, &all, &top, &below);
	if (r >= 0)
		r = below && strcmp(below->fstype, OUR_FSTYPE) == 0;
	free(all);
	free(info);
	if (r < 0)
		return extres_err_set(err, ENOMEM, "out of memory");
	return r;
}

int extres_mountpoint_owner(const char *mnt, long *ret_owner,
			    struct extres_err *err)
{
	char *fstype = NULL;
	int r = mounted_fstype(mnt, &fstype, ret_owner, err);

	free(fstype);
	if (r == 0)
		return extres_err_set(err, ENOENT, "nothing is mounted at %s",
				      mnt);
	return r < 0 ? r : 0;
}

int extres_mountpoint_dev(const char *mnt, unsigned *ret_minor,
			  struct extres_err *err)
{
	const struct entry *top, *below;
	struct entry *all = NULL;
	char *info = NULL, *end;
	unsigned long minor;
	int r;

	r = read_mountinfo(&info, err);
	if (r < 0)
		return r;
	r = stack_at(info, mnt, &all, &top, &below);
	if (r < 0) {
		r = extres_err_set(err, ENOMEM, "out of memory");
	} else if (r == 0) {
		r = extres_err_set(err, ENOENT, "nothing is mounted at %s",
				   mnt);
	} else {
		/* "MAJOR:MINOR"; FUSE mounts have major 0. */
		end = strchr(top->dev, ':');
		errno = 0;
		minor = end ? strtoul(end + 1, &end, 10) : 0;
		if (!end || *end || errno || minor > UINT32_MAX)
			r = extres_err_set(
				err, EINVAL,
				"/proc/self/mountinfo: %s: bad device '%s'",
				mnt, top->dev);
		else
			*ret_minor = (unsigned)minor;
	}
	free(all);
	free(info);
	return r < 0 ? r : 0;
}

/* Over io_uring a connection is aborted only once the kernel has torn its
 * queues down, a moment after the daemon's death or stop: a request made
 * in that moment gets ECONNABORTED, or ECANCELED when it was on its way to
 * a queue of the dying daemon. */
int extres_mountpoint_gone_errno(int e)
{
	return e == ENOTCONN || e == ECONNABORTED || e == ECANCELED;
}

/* In the probe's child: statfs always reaches the daemon (stat may be
 * answered from the kernel's cache even when the daemon is dead). Exit 1
 * for a dead mount, 0 for any answer. */
static int probe_child(void *arg, struct extres_deadline_child *c)
{
	struct statfs sfs;

	(void)c;
	return statfs(arg, &sfs) < 0 && extres_mountpoint_gone_errno(errno);
}

/*
 * Whether the extresd mount at `mnt` answers, asked with a deadline: a hung
 * daemon must not hang us (statfs would block for good, deaf to SIGTERM,
 * which the daemon blocks). 0 when it answers, -ENOTCONN when its daemon is
 * gone, -EINTR when stop_requested() said so (no message); else -ETIMEDOUT
 * or another errno, with a message.
 */
static int probe(const char *mnt, int (*stop_requested)(void),
		 struct extres_err *err)
{
	const struct extres_deadline dl = {
		.step_ms = EXTRES_MOUNTPOINT_PROBE_MS,
		.stop_requested = stop_requested,
	};
	int r;

	r = extres_deadline_run(&dl, probe_child, (void *)mnt);
	if (r == 0)
		return 0;
	if (r == 1)
		return -ENOTCONN;
	if (r == -EINTR)
		return r;
	if (r == -ETIMEDOUT)
		return extres_err_set(err, ETIMEDOUT, NOT_RESPONDING, mnt,
				      EXTRES_MOUNTPOINT_PROBE_MS / 1000);
	if (r > 0)
		r = -EIO;
	return extres_err_set(err, -r,
			      "cannot check the extresd mount at %s: %s", mnt,
			      strerror(-r));
}

int extres_mountpoint_lock(const char *mnt, const char *dir, int wait_ms,
			   int (*stop_requested)(void),
			   struct extres_runlock *ret, struct extres_err *err)
{
	const struct timespec nap = { 0, LOCK_RETRY_MS * 1000000L };
	char *fstype = NULL;
	int waited = 0, served, r;

	for (;;) {
		r = extres_runlock_try(ret, dir, mnt, err);
		if (r != -EWOULDBLOCK)
			break;
		/* The holder has mounted (or is detaching a dead mount of
		 * ours, on its way to mount): it serves the mount point.
		 * Before that it may still fail, and after its unmount it
		 * only releases what it took: either way, worth a short
		 * wait rather than a refusal. */
		r = mounted_fstype(mnt, &fstype, NULL, err);
		if (r < 0)
			break;
		served = r == 1 && strcmp(fstype, OUR_FSTYPE) == 0;
		free(fstype);
		fstype = NULL;
		/* A dead mount is on its way out with its holder; one that
		 * does not answer is no reason to wait, but to say so. */
		if (served) {
			r = probe(mnt, stop_requested, err);
			if (r == -ENOTCONN)
				served = 0;
			else if (r < 0)
				break;
		}
		if (served || waited >= wait_ms) {
			r = extres_err_set(err, EBUSY, ALREADY_SERVED, mnt);
			break;
		}
		if (stop_requested && stop_requested()) {
			r = -EINTR;
			break;
		}
		nanosleep(&nap, NULL);
		waited += LOCK_RETRY_MS;
	}
	return r;
}

/*
 * What is on top at `mnt`: 0 nothing; 1 a dead extresd mount; -EBUSY
 * (another file system, or a live extresd: refused with a message), or
 * -ETIMEDOUT, -EINTR or another errno as probe() has them.
 */
static int top_dead(const char *mnt, int (*stop_requested)(void),
		    struct extres_err *err)
{
	char *fstype = NULL;
	int r;

	r = mounted_fstype(mnt, &fstype, NULL, err);
	if (r <= 0)
		return r;
	if (strcmp(fstype, OUR_FSTYPE) != 0) {
		r = extres_err_set(
			err, EBUSY,
			"%s is already a mount point (%s); refusing to mount over it",
			mnt, fstype);
		free(fstype);
		return r;
	}
	free(fstype);
	r = probe(mnt, stop_requested, err);
	if (r == 0)
		return extres_err_set(err, EBUSY, ALREADY_SERVED, mnt);
	return r == -ENOTCONN ? 1 : r;
}

static int detach_top(const char *mnt, struct extres_err *err)
{
	if (umount2(mnt, MNT_DETACH) == 0)
		return 0;
	return extres_err_set(err, errno,
			      "cannot detach the dead extresd mount at %s: %s",
			      mnt, strerror(errno));
}

int extres_mountpoint_prepare(const char *mnt, int (*stop_requested)(void),
			      int *ret_dead, struct extres_err *err)
{
	struct stat st;
	int r;

	r = top_dead(mnt, stop_requested, err);
	if (r < 0)
		return r;
	/* The dead mount stays until the new one replaces it: the directory
	 * under it was one when it was mounted. */
	if (r == 0 && stat(mnt, &st) < 0)
		return extres_err_set(err, errno, "mount point %s: %s", mnt,
				      strerror(errno));
	if (r == 0 && !S_ISDIR(st.st_mode))
		return extres_err_set(err, ENOTDIR,
				      "mount point %s is not a directory", mnt);
	*ret_dead = r;
	return 0;
}

int extres_mountpoint_detach_dead(const char *mnt, int (*stop_requested)(void),
				  int *ret_detached, struct extres_err *err)
{
	int detached = 0, r;

	/* Several dead mounts may be stacked after repeated crashes. */
	while ((r = top_dead(mnt, stop_requested, err)) == 1) {
		r = detach_top(mnt, err);
		if (r < 0)
			return r;
		detached++;
	}
	if (r < 0)
		return r;
	*ret_detached = detached;
	return 0;
}

int extres_mountpoint_replace(const char *mnt, int mnt_fd, int beneath,
			      int (*stop_requested)(void), int *ret_how,
			      struct extres_err *err)
{
	int how = EXTRES_MOUNTPOINT_ATTACHED, r;

	while ((r = top_dead(mnt, stop_requested, err)) == 1) {
		r = ours_beneath(mnt, err);
		if (r < 0)
			return r;
		/* Ours beneath: a dead one too, since only one extresd
		 * serves a mount point. Mounted beneath the top alone, ours
		 * would have it above it when ours goes. */
		if (r == 0 && beneath &&
		    syscall(SYS_move_mount, mnt_fd, "", AT_FDCWD, mnt,
			    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_BENEATH) ==
			    0) {
			*ret_how = EXTRES_MOUNTPOINT_BENEATH;
			return detach_top(mnt, err);
		}
		/* Before 6.5 the kernel knows no such flag (EINVAL), before
		 * 5.2 no such call; nor may one mount beneath a mount that
		 * is locked, or that would propagate over itself (EINVAL). */
		if (r == 0 && beneath && errno != EINVAL && errno != ENOSYS)
			return extres_err_set(
				err, errno,
				"cannot mount beneath the dead extresd mount at %s: %s",
				mnt, strerror(errno));
		r = detach_top(mnt, err);
		if (r < 0)
			return r;
		how = EXTRES_MOUNTPOINT_AFTER_DETACH;
	}
	if (r < 0)
		return r;
	if (syscall(SYS_move_mount, mnt_fd, "", AT_FDCWD, mnt,
		    MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return extres_err_set(err, errno, "cannot mount %s: %s", mnt,
				      strerror(errno));
	*ret_how = how;
	return 0;
}

int extres_mountpoint_check_live(const char *mnt, struct extres_err *err)
{
	char *fstype = NULL;
	struct statfs sfs;
	int r;

	r = mounted_fstype(mnt, &fstype, NULL, err);
	if (r < 0)
		return r;
	if (r == 0)
		return extres_err_set(
			err, ENOENT,
			"%s is not a mount point: no extresd serves it", mnt);
	if (strcmp(fstype, OUR_FSTYPE) != 0) {
		r = extres_err_set(err, EINVAL,
				   "%s is a %s mount, not an extresd one (%s)",
				   mnt, fstype, OUR_FSTYPE);
		free(fstype);
		return r;
	}
	free(fstype);
	/* statfs always reaches the daemon; a stat may be answered from the
	 * kernel's cache after the daemon died. */
	if (statfs(mnt, &sfs) == 0)
		return 0;
	if (!extres_mountpoint_gone_errno(errno))
		return extres_err_set(err, errno, "%s: %s", mnt,
				      strerror(errno));
	return extres_err_set(
		err, ENOTCONN,
		"%s: the extresd mount is dead (Transport endpoint is not connected): its daemon is gone; the next extresd started on it detaches it, or run 'fusermount3 -u %s'",
		mnt, mnt);
}
