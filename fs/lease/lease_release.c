/* SPDX-License-Identifier: MIT */
/* Ending a lease: its lines out of the coordination files, a waiter's out
 * of the queues. */
#include "lease/lease.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lease/lease_internal.h"

/* 1 if `e` is one of the lease's lines: its id, owner and start time. */
static int is_lease_line(const struct extres_lease *l,
			 const struct extres_coord_entry *e)
{
	return e->parsed && e->pid == l->owner && e->has_starttime &&
	       e->starttime == l->starttime && e->lease &&
	       strcmp(e->lease, l->id) == 0;
}

/* Remove every line `match` accepts from each locked file of `f`; then
 * write what changed. */
static int drop_lines(struct lease_files *f,
		      int (*match)(const void *arg,
				   const struct extres_coord_entry *e),
		      const void *arg, struct extres_err *err)
{
	size_t i, k;

	for (i = 0; i < f->n; i++) {
		struct extres_coord *c = f->items[i].c;

		for (k = c ? c->n : 0; k-- > 0;)
			if (match(arg, &c->entries[k])) {
				extres_coord_remove(c, k);
				f->items[i].dirty = 1;
			}
	}
	return extres_lease_files_write(f, err);
}

static int match_lease(const void *arg, const struct extres_coord_entry *e)
{
	return is_lease_line(arg, e);
}

static int match_waiter(const void *arg, const struct extres_coord_entry *e)
{
	return extres_lease_is_waiter_line(e, arg);
}

/* Lock each file of `f` on its own (a release must not wait for every
 * lock before it drops anything), drop the matching lines, unlock. */
static int drop_each(struct lease_files *f, unsigned timeout_ms,
		     int (*match)(const void *arg,
				  const struct extres_coord_entry *e),
		     const void *arg, struct extres_err *err)
{
	struct extres_err one;
	int first = 0, r;
	size_t i;

	for (i = 0; i < f->n; i++) {
		struct lease_files single = { .n = 1, .items = &f->items[i] };

		r = extres_lease_files_lock(&single, 0, timeout_ms, &one, NULL);
		if (r == 0)
			r = drop_lines(&single, match, arg, &one);
		extres_coord_close(f->items[i].c);
		f->items[i].c = NULL;
		if (r < 0 && first == 0) {
			first = r;
			extres_err_set(err, -r, "%s", one.msg);
		}
	}
	return first;
}

int extres_lease_release(struct extres_lease *l, unsigned lock_timeout_ms,
			 struct extres_err *err)
{
	struct extres_lease_want *wants;
	struct lease_files f;
	size_t i, n = 0;
	int r;

	if (!l || l->n == 0)
		return 0;
	/* The files, as the wants the lease was taken for would name
	 * them. */
	wants = calloc(l->n, sizeof(*wants));
	if (!wants)
		return extres_err_set(err, ENOMEM, "out of memory");
	for (i = 0; i < l->n; i++) {
		struct extres_resource_config *res = calloc(1, sizeof(*res));

		if (!res) {
			r = extres_err_set(err, ENOMEM, "out of memory");
			goto out;
		}
		res->name = l->parts[i]->resource;
		res->coordination_file = l->parts[i]->coordination_file;
		res->coordination_gid = l->parts[i]->coordination_gid;
		wants[n++].res = res;
	}
	r = extres_lease_files_init(&f, wants, n, 0, err);
	if (r == 0) {
		r = drop_each(&f, lock_timeout_ms, match_lease, l, err);
		extres_lease_files_clear(&f);
	}
out:
	for (i = 0; i < n; i++)
		free((void *)wants[i].res);
	free(wants);
	return r;
}

int extres_lease_queue_leave(const struct extres_lease_want *wants, size_t n,
			     const struct extres_lease_waiter *waiter,
			     unsigned lock_timeout_ms, struct extres_err *err)
{
	struct lease_files f;
	int r;

	r = extres_lease_files_init(&f, wants, n, 1, err);
	if (r < 0)
		return r;
	r = drop_each(&f, lock_timeout_ms, match_waiter, waiter, err);
	extres_lease_files_clear(&f);
	return r;
}
