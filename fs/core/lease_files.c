/* SPDX-License-Identifier: MIT */
/* The files a lease operation locks together, in the one order every lease
 * uses, and what is done to all of them at once. */
#include "core/lease_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int extres_lease_id(pid_t pid, uint64_t starttime, char **ret)
{
	return asprintf(ret, "%d-%" PRIu64, (int)pid, starttime) < 0 ? -ENOMEM :
								       0;
}

int extres_lease_queue_path(const char *file, char **ret)
{
	return asprintf(ret, "%s.queue", file) < 0 ? -ENOMEM : 0;
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

int extres_lease_files_lock(struct lease_files *f, int create,
			    unsigned timeout_ms, struct extres_err *err)
{
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

		if (create)
			r = extres_coord_lock(x->path, timeout_ms, x->group,
					      &x->c, err);
		else
			r = extres_coord_lock_existing(x->path, timeout_ms,
						       x->group, &x->c, err);
		if (r == -ENOENT && !create)
			r = 0;
		else if (r < 0)
			extres_err_prefix(err, -r, "resource '%s'",
					  x->resource);
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
