/* SPDX-License-Identifier: MIT */
#include "os/trust.h"

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The kernel's own limit on symlinks followed in one lookup. */
#define MAX_LINKS 40

/* How strict the walk is; see extres_check_trusted_shared(). */
struct rules {
	int shared; /* a data file: our groups may write, the end may be missing */
	gid_t *groups; /* shared: the daemon's groups (egid first) */
	int n_groups;
	gid_t group; /* shared: extres.coordination-group, or EXTRES_NO_GROUP */
};

static int trusted_uid(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/* Whether the write bits of `st` give nobody but trusted users a way in:
 * never world-writable; group-writable only for a shared file whose group
 * is one of the daemon's own (its members are as trusted as we are) or the
 * one the operator named as trusted (root is in no such group). */
static int writers_trusted(const struct rules *ru, const struct stat *st)
{
	int i;

	if (st->st_mode & S_IWOTH)
		return 0;
	if (!(st->st_mode & S_IWGRP))
		return 1;
	if (ru->shared && ru->group != EXTRES_NO_GROUP &&
	    st->st_gid == ru->group)
		return 1;
	for (i = 0; ru->shared && i < ru->n_groups; i++)
		if (ru->groups[i] == st->st_gid)
			return 1;
	return 0;
}

/*
 * getgrnam_r() or getgrgid_r() (`name` NULL), with a buffer grown until the
 * entry fits. 0 with *ret_gid and, when `ret_name` is not NULL, the name
 * (malloc'd); -ENOENT for no such group.
 */
static int group_lookup(const char *name, gid_t gid, gid_t *ret_gid,
			char **ret_name)
{
	struct group gr, *found = NULL;
	size_t size = 1024;
	char *buf = NULL, *grown;
	int r;

	for (;;) {
		grown = realloc(buf, size);
		if (!grown) {
			r = -ENOMEM;
			goto out;
		}
		buf = grown;
		r = name ? getgrnam_r(name, &gr, buf, size, &found) :
			   getgrgid_r(gid, &gr, buf, size, &found);
		if (r != ERANGE)
			break;
		/* A group with thousands of members; past this, a broken
		 * database. */
		if (size >= (1u << 24)) {
			r = -ERANGE;
			goto out;
		}
		size *= 2;
	}
	if (r > 0) {
		r = -r;
		goto out;
	}
	if (!found) {
		r = -ENOENT;
		goto out;
	}
	if (ret_name && !(*ret_name = strdup(gr.gr_name))) {
		r = -ENOMEM;
		goto out;
	}
	*ret_gid = gr.gr_gid;
	r = 0;
out:
	free(buf);
	return r;
}

int extres_group_gid(const char *name, gid_t *ret_gid)
{
	if (!name || !*name)
		return -EINVAL;
	return group_lookup(name, 0, ret_gid, NULL);
}

/* After a refusal of an entry that its group may write: the one setting
 * that makes root (who is in no group) trust that group's members. */
static void hint_group(const struct rules *ru, const struct stat *st,
		       struct extres_err *err)
{
	char *name = NULL;
	gid_t gid;

	if (!ru->shared || (st->st_mode & S_IWOTH) || !(st->st_mode & S_IWGRP))
		return;
	if (group_lookup(NULL, st->st_gid, &gid, &name) == 0)
		extres_err_append(
			err,
			"; if members of group %s may write coordination files, set extres.coordination-group: %s (see extres.yaml(5))",
			name, name);
	else
		extres_err_append(
			err,
			"; if members of group %u may write coordination files, name that group in extres.coordination-group (see extres.yaml(5))",
			(unsigned)st->st_gid);
	free(name);
}

static int lookup_failed(const char *path, const char *what, int errnum,
			 struct extres_err *err)
{
	return extres_err_set(err, errnum, "%s %s: %s", what, path,
			      strerror(errnum));
}

/* The rules for an entry passed on the way: its owner can always replace
 * what lies below it, and a directory that others may write without the
 * sticky bit lets them rename or remove any entry in it. */
static int check_passed(const struct rules *ru, const char *path,
			const char *what, const char *entry,
			const struct stat *st, struct extres_err *err)
{
	const char *kind = S_ISDIR(st->st_mode) ? "directory" : "symlink";
	unsigned mode = st->st_mode & 07777;

	/* The file at the end has its own rules, in check_final(). */
	if (!S_ISDIR(st->st_mode) && !S_ISLNK(st->st_mode))
		return 0;
	if (!trusted_uid(st->st_uid))
		extres_err_set(err, EPERM, "%s %s is owned by uid %u", kind,
			       entry, (unsigned)st->st_uid);
	else if (S_ISDIR(st->st_mode) && !writers_trusted(ru, st) &&
		 !(mode & S_ISVTX))
		extres_err_set(
			err, EPERM,
			"directory %s is %s-writable without the sticky bit (mode %04o)",
			entry, (mode & S_IWOTH) ? "world" : "group", mode);
	else
		return 0;
	extres_err_prefix(err, EPERM, "%s %s could be modified by another user",
			  what, path);
	if (trusted_uid(st->st_uid))
		hint_group(ru, st, err);
	return -EPERM;
}

/* The rules for the file itself: the sticky bit means nothing on a file. */
static int check_final(const struct rules *ru, const char *path,
		       const char *what, const char *real,
		       const struct stat *st, struct extres_err *err)
{
	unsigned mode = st->st_mode & 07777;

	if (!trusted_uid(st->st_uid))
		extres_err_set(err, EPERM, "it is owned by uid %u (mode %04o)",
			       (unsigned)st->st_uid, mode);
	else if (!writers_trusted(ru, st))
		extres_err_set(err, EPERM, "it is %s-writable (mode %04o)",
			       (mode & S_IWOTH) ? "world" : "group", mode);
	else
		return 0;
	if (strcmp(real, path) != 0)
		extres_err_prefix(
			err, EPERM,
			"%s %s (resolved to %s) could be modified by another user",
			what, path, real);
	else
		extres_err_prefix(err, EPERM,
				  "%s %s could be modified by another user",
				  what, path);
	if (trusted_uid(st->st_uid))
		hint_group(ru, st, err);
	return -EPERM;
}

/* "/a/b" -> "/a", "/a" -> "/": `cur` never holds a symlink or "..", so
 * cutting text is the same as going to the real parent. */
static void go_up(char *cur)
{
	char *slash = strrchr(cur, '/');

	if (slash == cur)
		cur[1] = '\0';
	else if (slash)
		*slash = '\0';
}

/*
 * realpath(), one entry at a time, checking each: `cur` is the real path
 * walked so far (every entry in it checked), `pending` what is left. A symlink
 * puts its target in front of what is left and goes on from "/" or `cur`.
 */
static int walk(const struct rules *ru, const char *path, const char *what,
		struct extres_err *err)
{
	char cur[PATH_MAX], pending[PATH_MAX], entry[PATH_MAX],
		target[PATH_MAX];
	const char *p = pending;
	unsigned links = 0;
	struct stat st;
	int n, r;

	if (!what)
		what = "file";
	if (!path || !*path)
		return extres_err_set(err, EINVAL, "%s: empty path", what);

	if (path[0] == '/') {
		n = snprintf(pending, sizeof(pending), "%s", path);
	} else {
		if (!getcwd(cur, sizeof(cur)))
			return lookup_failed(path, what, errno, err);
		n = snprintf(pending, sizeof(pending), "%s/%s", cur, path);
	}
	if (n < 0 || (size_t)n >= sizeof(pending))
		return lookup_failed(path, what, ENAMETOOLONG, err);

	strcpy(cur, "/");
	if (lstat(cur, &st) < 0)
		return lookup_failed(path, what, errno, err);
	r = check_passed(ru, path, what, cur, &st, err);
	if (r < 0)
		return r;

	for (;;) {
		const char *name, *rest;
		size_t len;
		int more;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		name = p;
		while (*p && *p != '/')
			p++;
		len = (size_t)(p - name);
		for (rest = p; *rest == '/'; rest++)
			;
		more = *rest != '\0';

		if (!S_ISDIR(st.st_mode))
			return lookup_failed(path, what, ENOTDIR, err);
		if (len == 1 && name[0] == '.')
			continue;
		if (len == 2 && name[0] == '.' && name[1] == '.') {
			go_up(cur);
			if (lstat(cur, &st) < 0)
				return lookup_failed(path, what, errno, err);
			continue;
		}

		n = snprintf(entry, sizeof(entry), "%s%s%.*s", cur,
			     strcmp(cur, "/") == 0 ? "" : "/", (int)len, name);
		if (n < 0 || (size_t)n >= sizeof(entry))
			return lookup_failed(path, what, ENAMETOOLONG, err);
		if (lstat(entry, &st) < 0) {
			/* A shared file not made yet: what decides who may
			 * make it is the directory, checked already. */
			if (errno == ENOENT && ru->shared && !more)
				return 0;
			return lookup_failed(path, what, errno, err);
		}
		/* A symlink's target cannot be changed in place, but its
		 * owner can remove and replace it. */
		r = check_passed(ru, path, what, entry, &st, err);
		if (r < 0)
			return r;

		if (S_ISLNK(st.st_mode)) {
			ssize_t t;

			if (++links > MAX_LINKS)
				return lookup_failed(path, what, ELOOP, err);
			t = readlink(entry, target, sizeof(target));
			if (t < 0)
				return lookup_failed(path, what, errno, err);
			if ((size_t)t >= sizeof(target))
				return lookup_failed(path, what, ENAMETOOLONG,
						     err);
			target[t] = '\0';
			n = snprintf(entry, sizeof(entry), "%s%s%s", target,
				     more ? "/" : "", rest);
			if (n < 0 || (size_t)n >= sizeof(entry))
				return lookup_failed(path, what, ENAMETOOLONG,
						     err);
			memcpy(pending, entry, (size_t)n + 1);
			p = pending;
			if (target[0] == '/')
				strcpy(cur, "/");
			/* The walk goes on in the directory holding the link. */
			if (lstat(cur, &st) < 0)
				return lookup_failed(path, what, errno, err);
			continue;
		}
		memcpy(cur, entry, (size_t)n + 1);
	}
	return check_final(ru, path, what, cur, &st, err);
}

int extres_check_trusted(const char *path, const char *what,
			 struct extres_err *err)
{
	const struct rules ru = { .group = EXTRES_NO_GROUP };

	return walk(&ru, path, what, err);
}

int extres_check_trusted_shared(const char *path, const char *what, gid_t group,
				struct extres_err *err)
{
	struct rules ru = { .shared = 1, .group = group };
	int n, r;

	n = getgroups(0, NULL);
	ru.groups = calloc((size_t)(n > 0 ? n : 0) + 1, sizeof(*ru.groups));
	if (!ru.groups)
		return extres_err_set(err, ENOMEM, "out of memory");
	ru.groups[0] = getegid();
	ru.n_groups = 1;
	if (n > 0) {
		n = getgroups(n, ru.groups + 1);
		ru.n_groups += n > 0 ? n : 0;
	}
	r = walk(&ru, path, what, err);
	free(ru.groups);
	return r;
}
