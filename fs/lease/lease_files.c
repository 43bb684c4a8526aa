/* SPDX-License-Identifier: MIT */
/* The files a lease operation locks together, in the one order every lease
 * uses, and what is done to all of them at once. */
#include "lease/lease_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <grp.h>
#include <pwd.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int extres_lease_queue_path(const char *file, char **ret)
{
	return asprintf(ret, "%s.queue", file) < 0 ? -ENOMEM : 0;
}

int extres_lease_waiter_init(struct extres_lease_waiter *w, size_t n)
{
	size_t i;

	w->fds = calloc(n ? n : 1, sizeof(*w->fds));
	if (!w->fds)
		return -ENOMEM;
	w->n_fds = n;
	for (i = 0; i < n; i++)
		w->fds[i] = -1;
	return 0;
}

void extres_lease_waiter_clear(struct extres_lease_waiter *w)
{
	size_t i;

	for (i = 0; w->fds && i < w->n_fds; i++)
		if (w->fds[i] >= 0)
			close(w->fds[i]);
	free(w->fds);
	w->fds = NULL;
	w->n_fds = 0;
}

int extres_lease_is_waiter_line(const struct extres_coord_entry *e,
				const struct extres_lease_waiter *w)
{
	return e->parsed && e->pid == w->pid && e->has_starttime &&
	       e->starttime == w->starttime && e->lease &&
	       strcmp(e->lease, EXTRES_LEASE_WAITING) == 0;
}

/* The file `path` already in the set (by name, or by device and inode:
 * two spellings of one file must share one lock, or the second flock
 * would wait for the first), or -1. */
static ssize_t find_file(const struct lease_files *f, const char *path,
			 const struct stat *st, int known)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		const struct lease_file *x = &f->items[i];

		if (strcmp(x->path, path) == 0 ||
		    (known && x->known && x->dev == st->st_dev &&
		     x->ino == st->st_ino))
			return (ssize_t)i;
	}
	return -1;
}

int extres_lease_files_init(struct lease_files *f,
			    const struct extres_lease_want *wants, size_t n,
			    int queues, struct extres_err *err)
{
	struct stat st;
	char *path = NULL;
	ssize_t k;
	size_t i;
	int known, r = 0;

	memset(f, 0, sizeof(*f));
	f->queues = queues;
	f->items = calloc(n ? n : 1, sizeof(*f->items));
	f->of_want = calloc(n ? n : 1, sizeof(*f->of_want));
	if (!f->items || !f->of_want)
		goto oom;
	for (i = 0; i < n; i++) {
		const char *file = wants[i].res->coordination_file;

		if (queues) {
			if (extres_lease_queue_path(file, &path) < 0)
				goto oom;
		} else if (!(path = strdup(file))) {
			goto oom;
		}
		known = stat(path, &st) == 0;
		k = find_file(f, path, &st, known);
		if (k >= 0) {
			free(path);
			path = NULL;
			f->of_want[i] = (size_t)k;
			continue;
		}
		f->items[f->n] = (struct lease_file){
			.path = path,
			.resource = wants[i].res->name,
			.group = wants[i].res->coordination_gid,
			.dev = known ? st.st_dev : 0,
			.ino = known ? st.st_ino : 0,
			.known = known,
		};
		path = NULL;
		f->of_want[i] = f->n++;
	}
	return 0;
oom:
	free(path);
	extres_lease_files_clear(f);
	r = extres_err_set(err, ENOMEM, "out of memory");
	return r;
}

static int by_path(const void *a, const void *b)
{
	const struct lease_file *const *x = a, *const *y = b;

	return strcmp((*x)->path, (*y)->path);
}

/* A user's or group's name, or its number, into buf. */
static const char *user_of(uid_t uid, char *buf, size_t size)
{
	struct passwd *pw = getpwuid(uid);

	if (pw)
		snprintf(buf, size, "uid %u (%s)", (unsigned)uid, pw->pw_name);
	else
		snprintf(buf, size, "uid %u", (unsigned)uid);
	return buf;
}

static const char *group_of(gid_t gid, char *buf, size_t size)
{
	struct group *gr = getgrgid(gid);

	if (gr)
		snprintf(buf, size, "%s", gr->gr_name);
	else
		snprintf(buf, size, "%u", (unsigned)gid);
	return buf;
}

/*
 * A queue that is refused (anyone may create one first in a sticky
 * directory such as /var/tmp, a symbolic link or a file all may write):
 * say whose it is and how root replaces it, with the coordination file's
 * group, so that nobody but root and that group can take it again.
 */
static void queue_advice(const struct lease_file *x, int r,
			 struct extres_err *err)
{
	char owner[96], group[64], msg[sizeof(err->msg)];
	struct stat st, cf;
	size_t len = strlen(x->path) - strlen(".queue");
	char *file;

	if ((r != -EPERM && r != -ELOOP && r != -EINVAL && r != -EMLINK) ||
	    lstat(x->path, &st) < 0)
		return;
	snprintf(group, sizeof(group), "GROUP");
	file = strndup(x->path, len);
	if (file && stat(file, &cf) == 0)
		group_of(cf.st_gid, group, sizeof(group));
	free(file);
	memcpy(msg, err->msg, sizeof(msg));
	extres_err_set(
		err, -r,
		"%s; the queue is owned by %s: as root, replace it with `rm -f %s && install -m 0660 -o root -g %s /dev/null %s`",
		msg, user_of(st.st_uid, owner, sizeof(owner)), x->path, group,
		x->path);
}

int extres_lease_files_lock(struct lease_files *f, int create,
			    unsigned timeout_ms, struct extres_err *err,
			    struct extres_err *warn)
{
	struct extres_err one;
	struct lease_file **order;
	size_t i;
	int r = 0;

	order = calloc(f->n ? f->n : 1, sizeof(*order));
	if (!order)
		return extres_err_set(err, ENOMEM, "out of memory");
	for (i = 0; i < f->n; i++)
		order[i] = &f->items[i];
	qsort(order, f->n, sizeof(*order), by_path);
	for (i = 0; i < f->n && r == 0; i++) {
		struct lease_file *x = order[i];

		if (x->keep)
			r = extres_coord_lock_kept(x->path, create, timeout_ms,
						   x->group, x->keep, &x->c,
						   &one);
		else if (create)
			r = extres_coord_lock(x->path, timeout_ms, x->group,
					      &x->c, &one);
		else
			r = extres_coord_lock_existing(x->path, timeout_ms,
						       x->group, &x->c, &one);
		if (r == -ENOENT && !create)
			r = 0;
		if (r == 0 || r == -EINTR) {
			if (r < 0)
				*err = one;
			continue;
		}
		if (f->queues)
			queue_advice(x, r, &one);
		extres_err_prefix(&one, -r, "resource '%s'", x->resource);
		if (warn) {
			if (!warn->msg[0])
				*warn = one;
			r = 0;
		} else {
			*err = one;
		}
	}
	free(order);
	return r;
}

int extres_lease_files_write(struct lease_files *f, struct extres_err *err)
{
	struct extres_err one;
	int first = 0, r;
	size_t i;

	for (i = 0; i < f->n; i++) {
		struct lease_file *x = &f->items[i];

		if (!x->c || !x->dirty)
			continue;
		r = extres_coord_write(x->c, &one);
		if (r < 0 && first == 0) {
			first = r;
			extres_err_set(err, -r, "resource '%s': %s",
				       x->resource, one.msg);
		}
		if (r == 0)
			x->dirty = 0;
	}
	return first;
}

void extres_lease_files_clear(struct lease_files *f)
{
	size_t i;

	for (i = 0; f->items && i < f->n; i++) {
		extres_coord_close(f->items[i].c);
		free(f->items[i].path);
	}
	free(f->items);
	free(f->of_want);
	memset(f, 0, sizeof(*f));
}
