/* SPDX-License-Identifier: MIT */
#include "os/runlock.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* Each try that finds the file gone after locking it means that a holder
 * let go meanwhile: progress, yet not worth looping on forever. */
#define MAX_TRIES 16

/* FNV-1a: the name only has to tell one host's mount points apart, and
 * its 16 hex digits fit in a file name whatever the path's length. */
static uint64_t key_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* Refuse `path` unless it is a directory, not a symlink, owned by `uid`
 * and writable by nobody else; create it with `mode` first if `create`. */
static int check_dir(const char *path, uid_t uid, int create, mode_t mode,
		     struct extres_err *err)
{
	struct stat st;
	int fd = -1, made = 0, r = 0;

	if (create && mkdir(path, mode) == 0) {
		made = 1;
	} else if (create && errno != EEXIST) {
		r = extres_err_set(err, errno,
				   "cannot create the lock directory %s: %s",
				   path, strerror(errno));
		goto out;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		/* O_DIRECTORY answers ENOTDIR before O_NOFOLLOW's ELOOP. */
		if ((e == ENOTDIR || e == ELOOP) && lstat(path, &st) == 0 &&
		    S_ISLNK(st.st_mode))
			r = extres_err_set(
				err, ELOOP,
				"lock directory %s is a symbolic link; refusing it",
				path);
		else
			r = extres_err_set(err, e, "lock directory %s: %s",
					   path, strerror(e));
	} else if (made && fchmod(fd, mode) < 0) {
		/* mkdir()'s mode went through the umask. */
		r = extres_err_set(err, errno, "lock directory %s: chmod: %s",
				   path, strerror(errno));
	} else if (fstat(fd, &st) < 0) {
		r = extres_err_set(err, errno, "lock directory %s: %s", path,
				   strerror(errno));
	} else if (st.st_uid != uid) {
		r = extres_err_set(
			err, EPERM,
			"lock directory %s is owned by uid %u, not %u; refusing it",
			path, (unsigned)st.st_uid, (unsigned)uid);
	} else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		r = extres_err_set(
			err, EPERM,
			"lock directory %s is writable by group or others (mode %04o); refusing it",
			path, (unsigned)(st.st_mode & 07777));
	}
out:
	if (fd >= 0)
		close(fd);
	return r;
}

int extres_runlock_dir(uid_t uid, const char *xdg_runtime_dir, char **ret,
		       struct extres_err *err)
{
	const char *xdg = xdg_runtime_dir;
	char *dir = NULL;
	int r;

	if (uid == 0) {
		dir = strdup(EXTRES_RUNLOCK_ROOT_DIR);
		r = dir ? check_dir(dir, uid, 1, 0755, err) :
			  extres_err_set(err, ENOMEM, "out of memory");
	} else if (!xdg || !*xdg) {
		r = extres_err_set(
			err, ENOENT,
			"XDG_RUNTIME_DIR is not set: extresd run by a user other than root keeps its lock file in $XDG_RUNTIME_DIR/extresd (a login session sets it; else set it to a directory only you can write)");
	} else if (xdg[0] != '/') {
		r = extres_err_set(err, EINVAL,
				   "XDG_RUNTIME_DIR=%s is not an absolute path",
				   xdg);
	} else {
		r = check_dir(xdg, uid, 0, 0, err);
		if (r == 0 && asprintf(&dir, "%s/extresd", xdg) < 0) {
			dir = NULL;
			r = extres_err_set(err, ENOMEM, "out of memory");
		}
		if (r == 0)
			r = check_dir(dir, uid, 1, 0700, err);
	}
	if (r < 0)
		free(dir);
	else
		*ret = dir;
	return r;
}

int extres_runlock_try(struct extres_runlock *l, const char *dir,
		       const char *key, struct extres_err *err)
{
	struct stat fst, pst;
	char *path = NULL;
	int fd = -1, tries, r = -EWOULDBLOCK;

	if (asprintf(&path, "%s/%016" PRIx64 ".lock", dir, key_hash(key)) < 0)
		return extres_err_set(err, ENOMEM, "out of memory");
	for (tries = 0; tries < MAX_TRIES; tries++) {
		fd = open(path,
			  O_RDWR | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
			  0644);
		if (fd < 0) {
			r = extres_err_set(err, errno, "lock file %s: %s", path,
					   strerror(errno));
			goto out;
		}
		if (fstat(fd, &fst) < 0) {
			r = extres_err_set(err, errno, "lock file %s: %s", path,
					   strerror(errno));
			goto out;
		}
		if (!S_ISREG(fst.st_mode)) {
			r = extres_err_set(err, EINVAL,
					   "lock file %s is not a regular file",
					   path);
			goto out;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			r = errno == EWOULDBLOCK ?
				    -EWOULDBLOCK :
				    extres_err_set(err, errno,
						   "cannot lock %s: %s", path,
						   strerror(errno));
			goto out;
		}
		/* A holder's clean exit removes the file: if it did so
		 * between our open and our lock, what we locked is no longer
		 * the lock, and whoever opens the name now gets a new file. */
		if (lstat(path, &pst) == 0) {
			if (pst.st_dev == fst.st_dev &&
			    pst.st_ino == fst.st_ino)
				break;
		} else if (errno != ENOENT) {
			r = extres_err_set(err, errno, "lock file %s: %s", path,
					   strerror(errno));
			goto out;
		}
		close(fd);
		fd = -1;
	}
	if (fd < 0)
		goto out; /* r: -EWOULDBLOCK */
	if (ftruncate(fd, 0) < 0 || dprintf(fd, "%s\n", key) < 0) {
		r = extres_err_set(err, errno, "lock file %s: %s", path,
				   strerror(errno));
		goto out;
	}
	l->fd = fd;
	l->path = path;
	fd = -1;
	path = NULL;
	r = 0;
out:
	if (fd >= 0)
		close(fd);
	free(path);
	return r;
}

void extres_runlock_release(struct extres_runlock *l)
{
	if (l->fd >= 0) {
		/* Remove it while still holding it: whoever locks the old
		 * file next finds the name gone (or on a new file) and tries
		 * again there. */
		unlink(l->path);
		close(l->fd);
	}
	free(l->path);
	l->fd = -1;
	l->path = NULL;
}
