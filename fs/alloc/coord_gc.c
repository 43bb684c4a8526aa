/* SPDX-License-Identifier: MIT */
#include "alloc/coord_gc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/lease_line.h"

static int is_gone(int state)
{
	return state == EXTRES_OWNER_DEAD || state == EXTRES_OWNER_REUSED ||
	       state == EXTRES_OWNER_ZOMBIE || state == EXTRES_OWNER_UNPROVEN;
}

/* The owner state of line e of the locked file c: a waiter's line (a
 * queue's) counts as live only while its process proves it. */
static int state_in(const struct extres_coord *c,
		    const struct extres_coord_entry *e)
{
	int state = extres_coord_owner_state(e);

	if (state == EXTRES_OWNER_LIVE && e->lease &&
	    strcmp(e->lease, EXTRES_LEASE_WAITING) == 0 &&
	    !extres_lease_waiter_proven(c->fd, e))
		return EXTRES_OWNER_UNPROVEN;
	return state;
}

/* Whether gc with `flags` drops a line whose owner is in `state`. */
static int drops(unsigned flags, int state)
{
	return is_gone(state) || ((flags & EXTRES_COORD_GC_UNPARSABLE) &&
				  state == EXTRES_OWNER_UNPARSABLE);
}

void extres_coord_items_free(struct extres_coord_item *items, size_t n)
{
	size_t i;

	if (!items)
		return;
	for (i = 0; i < n; i++)
		extres_coord_entry_clear(&items[i].entry);
	free(items);
}

int extres_coord_list(const char *path, unsigned timeout_ms, gid_t group,
		      struct extres_coord_item **ret_items, size_t *ret_n,
		      struct extres_err *err)
{
	struct extres_coord_item *items = NULL;
	struct extres_coord *c = NULL;
	size_t i, n = 0;
	int r;

	r = extres_coord_lock_existing(path, timeout_ms, group, &c, err);
	if (r < 0)
		goto out;
	if (c->n) {
		items = calloc(c->n, sizeof(*items));
		if (!items) {
			r = extres_err_set(err, ENOMEM, "out of memory");
			goto out;
		}
	}
	/* The entries move to the caller; the emptied slots free as nothing. */
	for (i = 0; i < c->n; i++) {
		items[i].state = state_in(c, &c->entries[i]);
		items[i].entry = c->entries[i];
		memset(&c->entries[i], 0, sizeof(c->entries[i]));
	}
	n = c->n;
	*ret_items = items;
	*ret_n = n;
	items = NULL;
out:
	extres_coord_close(c);
	free(items);
	return r;
}

int extres_coord_gc(const char *path, unsigned flags, unsigned timeout_ms,
		    gid_t group, struct extres_coord_item **ret_removed,
		    size_t *ret_n_removed, size_t *ret_kept,
		    struct extres_err *err)
{
	struct extres_coord_item *removed = NULL;
	struct extres_coord *c = NULL;
	size_t i, k = 0, n_removed = 0;
	int *states = NULL;
	int r;

	r = extres_coord_lock_existing(path, timeout_ms, group, &c, err);
	if (r < 0)
		goto out;
	if (c->n) {
		states = calloc(c->n, sizeof(*states));
		if (!states) {
			r = extres_err_set(err, ENOMEM, "out of memory");
			goto out;
		}
	}
	/* Judge every owner once, so that what is reported is what was
	 * decided. */
	for (i = 0; i < c->n; i++) {
		states[i] = state_in(c, &c->entries[i]);
		if (drops(flags, states[i]))
			n_removed++;
	}
	if (n_removed) {
		removed = calloc(n_removed, sizeof(*removed));
		if (!removed) {
			r = extres_err_set(err, ENOMEM, "out of memory");
			goto out;
		}
	}
	/* Backwards, so that removing shifts only entries already seen and
	 * `removed` fills from its end in file order. */
	k = n_removed;
	for (i = c->n; i-- > 0;) {
		if (!drops(flags, states[i]))
			continue;
		k--;
		removed[k].state = states[i];
		removed[k].entry = c->entries[i];
		memset(&c->entries[i], 0, sizeof(c->entries[i]));
		extres_coord_remove(c, i);
	}
	if (n_removed && !(flags & EXTRES_COORD_GC_DRY_RUN)) {
		r = extres_coord_write(c, err);
		if (r < 0)
			goto out;
	}
	*ret_removed = removed;
	*ret_n_removed = n_removed;
	*ret_kept = c->n;
	removed = NULL;
out:
	extres_coord_close(c);
	extres_coord_items_free(removed, n_removed);
	free(states);
	return r;
}
