/* SPDX-License-Identifier: MIT */
#include "os/fusemount.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

/* Mount attributes, each set or cleared by one option (libfuse's names). */
static const struct {
	const char *on, *off;
	unsigned int attr;
} attrs[] = {
	{ "nosuid", "suid", MOUNT_ATTR_NOSUID },
	{ "nodev", "dev", MOUNT_ATTR_NODEV },
	{ "noexec", "exec", MOUNT_ATTR_NOEXEC },
	{ "nodiratime", "diratime", MOUNT_ATTR_NODIRATIME },
};

/* Access-time modes: one of them, the last named. */
static const struct {
	const char *name;
	unsigned int attr;
} atimes[] = {
	{ "relatime", MOUNT_ATTR_RELATIME },
	{ "noatime", MOUNT_ATTR_NOATIME },
	{ "strictatime", MOUNT_ATTR_STRICTATIME },
	{ "atime", MOUNT_ATTR_RELATIME },
};

/* Passed to the kernel as they are: flags, then "key=value" options. The
 * superblock flags are the kernel's own names for them. */
static const char *const kernel_flags[] = { "default_permissions",
					    "allow_other",
					    "sync",
					    "async",
					    "dirsync",
					    "lazytime",
					    "nolazytime" };
static const char *const kernel_keys[] = { "max_read",	 "blksize",
					   "context",	 "fscontext",
					   "defcontext", "rootcontext" };

static int set(int fs, unsigned int cmd, const char *key, const char *value,
	       struct extres_err *err)
{
	if (fsconfig(fs, cmd, key, value, 0) == 0)
		return 0;
	return extres_err_set(err, errno, "FUSE mount option %s%s%s: %s", key,
			      value ? "=" : "", value ? value : "",
			      strerror(errno));
}

/* The name of a "key=value" option, or the whole flag, matched in `list`. */
static int in_list(const char *const *list, size_t n, const char *opt,
		   size_t len)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strlen(list[i]) == len && strncmp(list[i], opt, len) == 0)
			return 1;
	return 0;
}

/* Apply one option: to the superblock's parameters (fsconfig) or to the
 * mount's attributes (*attr). */
static int apply(int fs, const char *opt, unsigned int *attr, int *ro,
		 struct extres_err *err)
{
	const char *eq = strchr(opt, '=');
	size_t i, len = eq ? (size_t)(eq - opt) : strlen(opt);

	for (i = 0; !eq && i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		if (strcmp(opt, attrs[i].on) == 0) {
			*attr |= attrs[i].attr;
			return 0;
		}
		if (strcmp(opt, attrs[i].off) == 0) {
			*attr &= ~attrs[i].attr;
			return 0;
		}
	}
	for (i = 0; !eq && i < sizeof(atimes) / sizeof(atimes[0]); i++) {
		if (strcmp(opt, atimes[i].name) == 0) {
			*attr = (*attr & ~MOUNT_ATTR__ATIME) | atimes[i].attr;
			return 0;
		}
	}
	if (!eq && (strcmp(opt, "ro") == 0 || strcmp(opt, "rw") == 0)) {
		*ro = opt[1] == 'o';
		return 0;
	}
	/* libfuse lets root and the owner in (allow_other to the kernel)
	 * and turns the others away itself. */
	if (!eq && strcmp(opt, "allow_root") == 0)
		return set(fs, FSCONFIG_SET_FLAG, "allow_other", NULL, err);
	if (!eq &&
	    in_list(kernel_flags,
		    sizeof(kernel_flags) / sizeof(kernel_flags[0]), opt, len))
		return set(fs, FSCONFIG_SET_FLAG, opt, NULL, err);
	if (eq && strncmp(opt, "fsname=", 7) == 0)
		return set(fs, FSCONFIG_SET_STRING, "source", eq + 1, err);
	if (eq &&
	    (strncmp(opt, "subtype=", 8) == 0 ||
	     in_list(kernel_keys, sizeof(kernel_keys) / sizeof(kernel_keys[0]),
		     opt, len))) {
		char key[32];

		snprintf(key, sizeof(key), "%.*s", (int)len, opt);
		return set(fs, FSCONFIG_SET_STRING, key, eq + 1, err);
	}
	return extres_err_set(err, EOPNOTSUPP,
			      "mount option '%s' is not one to make by hand",
			      opt);
}

/* Whether a later "key=value" option has the key of opts[i]: the kernel
 * refuses a second source or subtype, and the last one wins in libfuse. */
static int named_later(const char *const *opts, size_t n, size_t i)
{
	const char *eq = strchr(opts[i], '=');
	size_t len = eq ? (size_t)(eq - opts[i]) + 1 : 0;
	size_t j;

	for (j = i + 1; len && j < n; j++)
		if (strncmp(opts[j], opts[i], len) == 0)
			return 1;
	return 0;
}

int extres_fusemount_make(const char *const *opts, size_t n_opts,
			  struct extres_fusemount *ret, struct extres_err *err)
{
	unsigned int attr = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
	int dev = -1, fs = -1, mnt = -1, ro = 0, r = 0;
	char num[24];
	size_t i;

	dev = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (dev < 0) {
		r = extres_err_set(err, errno, "/dev/fuse: %s",
				   strerror(errno));
		goto out;
	}
	fs = fsopen("fuse", FSOPEN_CLOEXEC);
	if (fs < 0) {
		r = extres_err_set(err, errno, "cannot make a FUSE mount: %s",
				   strerror(errno));
		goto out;
	}
	snprintf(num, sizeof(num), "%d", dev);
	r = set(fs, FSCONFIG_SET_STRING, "fd", num, err);
	if (r == 0)
		r = set(fs, FSCONFIG_SET_STRING, "rootmode", "40000", err);
	snprintf(num, sizeof(num), "%u", (unsigned)getuid());
	if (r == 0)
		r = set(fs, FSCONFIG_SET_STRING, "user_id", num, err);
	snprintf(num, sizeof(num), "%u", (unsigned)getgid());
	if (r == 0)
		r = set(fs, FSCONFIG_SET_STRING, "group_id", num, err);
	for (i = 0; r == 0 && i < n_opts; i++)
		if (!named_later(opts, n_opts, i))
			r = apply(fs, opts[i], &attr, &ro, err);
	if (r == 0 && ro)
		r = set(fs, FSCONFIG_SET_FLAG, "ro", NULL, err);
	if (r == 0)
		r = set(fs, FSCONFIG_CMD_CREATE, NULL, NULL, err);
	if (r < 0)
		goto out;
	mnt = fsmount(fs, FSMOUNT_CLOEXEC, attr | (ro ? MOUNT_ATTR_RDONLY : 0));
	if (mnt < 0)
		r = extres_err_set(err, errno, "cannot make a FUSE mount: %s",
				   strerror(errno));
out:
	if (fs >= 0)
		close(fs);
	if (r < 0) {
		if (dev >= 0)
			close(dev);
		return r;
	}
	ret->fuse_fd = dev;
	ret->mnt_fd = mnt;
	return 0;
}

int extres_fusemount_unmount(const char *mnt, int fuse_fd,
			     struct extres_err *err)
{
	struct pollfd p = { .fd = fuse_fd };
	int gone, null, r = 0;

	/* POLLERR: unmounted already (fusermount3 -u), or aborted. */
	gone = poll(&p, 1, 0) == 1 && (p.revents & POLLERR);
	/* The connection ends with its last descriptor, which fails the
	 * requests still waiting (a readiness probe) rather than leave them
	 * waiting on a loop that is over. The number stays taken: the
	 * session closes it. */
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || dup3(null, fuse_fd, O_CLOEXEC) < 0)
		r = extres_err_set(err, errno, "cannot close /dev/fuse: %s",
				   strerror(errno));
	if (null >= 0)
		close(null);
	if (!gone && umount2(mnt, MNT_DETACH) < 0 && r == 0)
		r = extres_err_set(err, errno, "cannot unmount %s: %s", mnt,
				   strerror(errno));
	return r;
}
