/* SPDX-License-Identifier: MIT */
#include "alloc/alloc.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/text.h"
#include "alloc/alloc_internal.h"
#include "alloc/coord.h"

void extres_allocation_free(struct extres_allocation *a)
{
	size_t i;

	if (!a)
		return;
	for (i = 0; i < a->n; i++)
		extres_info_clear(&a->infos[i]);
	free(a->infos);
	free(a->resource);
	free(a->coordination_file);
	free(a->coordination_key);
	extres_driver_info_clear(&a->driver);
	free(a);
}

struct extres_allocation *
extres_allocation_dup(const struct extres_allocation *a)
{
	struct extres_allocation *d = calloc(1, sizeof(*d));
	size_t i;

	if (!d)
		return NULL;
	*d = *a;
	d->n = 0;
	d->driver = (struct extres_driver_info){ 0 };
	d->resource = strdup(a->resource);
	d->coordination_key = strdup(a->coordination_key);
	d->coordination_file =
		a->coordination_file ? strdup(a->coordination_file) : NULL;
	d->infos = calloc(a->n ? a->n : 1, sizeof(*d->infos));
	if (!d->resource || !d->coordination_key || !d->infos ||
	    extres_driver_info_copy(&a->driver, &d->driver) < 0 ||
	    (a->coordination_file && !d->coordination_file))
		goto fail;
	for (i = 0; i < a->n; i++) {
		if (extres_info_copy(&a->infos[i], &d->infos[i]) < 0)
			goto fail;
		d->n++;
	}
	return d;
fail:
	extres_allocation_free(d);
	return NULL;
}

int extres_alloc_new(const struct extres_resource_config *res, int coordinated,
		     pid_t owner, uint64_t starttime,
		     const struct extres_infos *candidates,
		     const size_t *picked, size_t n_picked,
		     struct extres_allocation **ret)
{
	struct extres_allocation *a = calloc(1, sizeof(*a));
	size_t i;
	int r = -ENOMEM;

	if (!a)
		return -ENOMEM;
	a->owner = owner;
	a->owner_starttime = starttime;
	a->lock_timeout_ms = res->lock_timeout_ms;
	a->coordination_gid = res->coordination_gid;
	a->resource = strdup(res->name);
	a->coordination_key =
		strdup(res->coordination_key ? res->coordination_key : "index");
	if (!a->resource || !a->coordination_key)
		goto fail;
	if (coordinated &&
	    !(a->coordination_file = strdup(res->coordination_file)))
		goto fail;
	if (extres_driver_info_copy(&candidates->driver, &a->driver) < 0)
		goto fail;
	a->infos = calloc(n_picked ? n_picked : 1, sizeof(*a->infos));
	if (!a->infos)
		goto fail;
	for (i = 0; i < n_picked; i++) {
		r = extres_info_copy(&candidates->items[picked[i]],
				     &a->infos[i]);
		if (r < 0)
			goto fail;
		a->n++;
	}
	*ret = a;
	return 0;
fail:
	extres_allocation_free(a);
	return r;
}

/*
 * The candidates by the value of their coordination key, and which of those
 * values are picked: a reload of thousands of devices looks each one up, and
 * a linear search per lookup made it quadratic.
 */
struct key_index {
	/* The candidates that have the key, sorted by value, then by their
	 * position, so that the first of a value is the first candidate
	 * holding it. */
	struct keyed {
		const char *value;
		size_t i;
	} * sorted;
	size_t n_sorted;
	/* Per candidate: where its value starts in `sorted`, or SIZE_MAX
	 * when it has no such key. */
	size_t *first;
	/* Per start of a value in `sorted`: a candidate with that value is
	 * picked. */
	unsigned char *value_taken;
	/* Per candidate: it is picked. */
	unsigned char *picked;
};

static int compare_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	int c = strcmp(x->value, y->value);

	if (c)
		return c;
	return x->i < y->i ? -1 : x->i > y->i;
}

static void key_index_clear(struct key_index *x)
{
	free(x->sorted);
	free(x->first);
	free(x->value_taken);
	free(x->picked);
	memset(x, 0, sizeof(*x));
}

static int key_index_init(struct key_index *x,
			  const struct extres_infos *candidates,
			  const char *key)
{
	size_t n = candidates->n ? candidates->n : 1, i, start = 0;
	const char *v;

	memset(x, 0, sizeof(*x));
	x->sorted = calloc(n, sizeof(*x->sorted));
	x->first = calloc(n, sizeof(*x->first));
	x->value_taken = calloc(n, 1);
	x->picked = calloc(n, 1);
	if (!x->sorted || !x->first || !x->value_taken || !x->picked) {
		key_index_clear(x);
		return -ENOMEM;
	}
	for (i = 0; i < candidates->n; i++) {
		x->first[i] = SIZE_MAX;
		v = extres_info_get(&candidates->items[i], key);
		if (v)
			x->sorted[x->n_sorted++] = (struct keyed){ v, i };
	}
	qsort(x->sorted, x->n_sorted, sizeof(*x->sorted), compare_keyed);
	for (i = 0; i < x->n_sorted; i++) {
		if (strcmp(x->sorted[i].value, x->sorted[start].value) != 0)
			start = i;
		x->first[x->sorted[i].i] = start;
	}
	return 0;
}

/* Where `value` starts in x->sorted, or -1 if no candidate holds it. */
static ssize_t key_index_find(const struct key_index *x, const char *value)
{
	size_t lo = 0, hi = x->n_sorted, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (strcmp(x->sorted[mid].value, value) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == x->n_sorted || strcmp(x->sorted[lo].value, value) != 0)
		return -1;
	return (ssize_t)lo;
}

/* 1 if a picked candidate holds `value` as its key. */
static int key_index_taken(const struct key_index *x, const char *value)
{
	ssize_t k = key_index_find(x, value);

	return k >= 0 && x->value_taken[k];
}

static void key_index_pick(struct key_index *x, size_t i)
{
	x->picked[i] = 1;
	if (x->first[i] != SIZE_MAX)
		x->value_taken[x->first[i]] = 1;
}

/* The candidate holding `value` as its key, if no candidate with that key
 * is picked yet; else -1. */
static ssize_t find_candidate(const struct key_index *x, const char *value)
{
	ssize_t k = key_index_find(x, value);

	return k < 0 || x->value_taken[k] ? -1 : (ssize_t)x->sorted[k].i;
}

int extres_alloc_held_error(const char *resource, const char *key,
			    const char *v, pid_t holder, const char *file,
			    struct extres_err *err)
{
	char who[320];

	extres_proc_describe(holder, who, sizeof(who));
	return extres_err_set(
		err, EBUSY,
		"resource '%s': device %s %s is held by %s in coordination file %s",
		resource, key, v, who, file);
}

/* Whether `prev` was taken the way `res` would take now, so that its
 * devices can simply stay where they are. */
static int can_keep(const struct extres_resource_config *res, int coordinated,
		    const char *key, pid_t owner,
		    const struct extres_allocation *prev)
{
	if (!prev || prev->owner != owner ||
	    strcmp(prev->coordination_key, key))
		return 0;
	if (!coordinated)
		return prev->coordination_file == NULL;
	return prev->coordination_file &&
	       strcmp(prev->coordination_file, res->coordination_file) == 0;
}

/* The start time recorded with `owner`'s lines, with a message naming it. */
static int owner_starttime(const struct extres_resource_config *res,
			   pid_t owner, uint64_t *ret, struct extres_err *err)
{
	int r = extres_proc_starttime(owner, ret);

	if (r < 0)
		return extres_err_set(
			err, -r,
			"resource '%s': cannot read the start time of process %d: %s",
			res->name, (int)owner, strerror(-r));
	return 0;
}

int extres_alloc_take(const struct extres_resource_config *res,
		      const struct extres_infos *candidates, pid_t owner,
		      struct extres_allocation **ret, struct extres_err *err)
{
	return extres_alloc_retake(res, candidates, NULL, owner, ret, err);
}

/*
 * A script that is said to coordinate by itself has returned `candidates`.
 * Trust nothing it claims: under the lock of the file it uses, every device
 * taken must be recorded for this daemon, which the script records as its
 * $PPID. A device the script did not record (it ignored the flag, or knows
 * another spelling) is recorded here; one a live other owner holds is
 * skipped, so a script that returns more devices than the amount still
 * yields a disjoint set, and too few left is an error naming the holders.
 */
/*
 * The script recorded every device it returned under our PID before we
 * looked: the lines for those we do not take (all of them when the take
 * fails: `taken` 0) go again, unless the allocation we keep (`prev`)
 * holds them. Returns how many went.
 */
static size_t drop_untaken(struct extres_coord *c, const struct key_index *x,
			   int taken, const struct extres_allocation *prev,
			   pid_t self, uint64_t starttime)
{
	const struct extres_coord_entry *e;
	size_t i, n = 0;

	for (i = c->n; i-- > 0;) {
		e = &c->entries[i];
		if (!extres_coord_entry_of(e, self, starttime) ||
		    key_index_find(x, e->key) < 0 ||
		    (taken && key_index_taken(x, e->key)) ||
		    extres_alloc_holds(prev, e->key))
			continue;
		extres_coord_remove(c, i);
		n++;
	}
	return n;
}

/* Rewrite the locked file; an error names the resource. */
static int write_file(struct extres_coord *c,
		      const struct extres_resource_config *res,
		      struct extres_err *err)
{
	int r = extres_coord_write(c, err);

	if (r < 0)
		extres_err_prefix(err, -r, "resource '%s'", res->name);
	return r;
}

static int take_from_script(const struct extres_resource_config *res,
			    const struct extres_infos *candidates,
			    const struct extres_allocation *prev,
			    struct extres_allocation **ret,
			    struct extres_err *err)
{
	const char *key =
		res->coordination_key ? res->coordination_key : "index";
	struct extres_allocation *a = NULL;
	struct extres_coord *c = NULL;
	struct key_index x = { 0 };
	size_t *picked = NULL, n_picked = 0, n_added = 0, i;
	pid_t self = getpid(), holder, first_holder = 0;
	const char *v, *first_held = NULL;
	char *file = NULL;
	uint64_t starttime;
	int r;

	picked = calloc(candidates->n ? candidates->n : 1, sizeof(*picked));
	file = strdup(candidates->driver.coord_file);
	if (!picked || !file || key_index_init(&x, candidates, key) < 0) {
		r = extres_err_set(err, ENOMEM, "out of memory");
		goto out;
	}
	r = extres_alloc_check_keys(res, key, candidates, err);
	if (r == 0)
		r = owner_starttime(res, self, &starttime, err);
	if (r < 0)
		goto out;
	r = extres_coord_lock(file, res->lock_timeout_ms, res->coordination_gid,
			      &c, err);
	if (r < 0) {
		extres_err_prefix(err, -r, "resource '%s'", res->name);
		goto out;
	}
	extres_coord_reclaim(c);
	for (i = 0; i < candidates->n && n_picked < res->amount.max; i++) {
		v = extres_info_get(&candidates->items[i], key);
		if (key_index_taken(&x, v))
			continue;
		holder = extres_coord_other_holder(c, v, self, starttime);
		if (holder) {
			if (!first_holder) {
				first_holder = holder;
				first_held = v;
			}
			continue;
		}
		if (!extres_coord_recorded_for(c, v, self, starttime) &&
		    !extres_coord_has_key(c, v)) {
			r = extres_coord_add_tagged(
				c, v, self, starttime, NULL,
				extres_info_uuid(&candidates->items[i]));
			if (r < 0) {
				r = extres_err_set(err, -r, "out of memory");
				goto out;
			}
			n_added++;
		}
		key_index_pick(&x, i);
		picked[n_picked++] = i;
	}
	if (n_picked < res->amount.min) {
		char who[320] = "", wanted[EXTRES_AMOUNT_TEXT_MAX];
		struct extres_err ignored;

		/* Nothing is taken: the script's lines for us go, as far as
		 * the file can be written; the take's own error is what
		 * counts. */
		if (drop_untaken(c, &x, 0, prev, self, starttime))
			extres_coord_write(c, &ignored);

		if (first_holder)
			extres_proc_describe(first_holder, who, sizeof(who));
		r = extres_err_set(
			err, first_holder ? EBUSY : ENOSPC,
			"resource '%s': wanted %s, found %zu free of the %zu its discovery script returned (coordination file %s)%s%s%s%s%s",
			res->name, extres_amount_wanted(&res->amount, wanted),
			n_picked, candidates->n, file,
			first_holder ? "; device " : "",
			first_holder ? key : "", first_holder ? " " : "",
			first_holder ? first_held : "",
			first_holder ? " is held by " : "");
		if (first_holder)
			extres_err_append(err, "%s", who);
		goto out;
	}
	r = extres_alloc_new(res, 0, self, starttime, candidates, picked,
			     n_picked, &a);
	if (r < 0) {
		r = extres_err_set(err, -r, "out of memory");
		goto out;
	}
	a->recorded_by_driver = 1;
	a->coordination_file = file;
	file = NULL;
	if (drop_untaken(c, &x, 1, prev, self, starttime) || n_added) {
		r = write_file(c, res, err);
		if (r < 0)
			goto out;
	}
	*ret = a;
	a = NULL;
out:
	extres_coord_close(c);
	extres_allocation_free(a);
	key_index_clear(&x);
	free(file);
	free(picked);
	return r;
}

int extres_alloc_retake(const struct extres_resource_config *res,
			const struct extres_infos *candidates,
			const struct extres_allocation *prev, pid_t owner,
			struct extres_allocation **ret, struct extres_err *err)
{
	const char *key =
		res->coordination_key ? res->coordination_key : "index";
	const char *self_file = candidates->driver.coord_file;
	int coordinated = res->coordination_file && !self_file;
	struct extres_allocation *a = NULL;
	struct extres_coord *c = NULL;
	struct key_index x = { 0 };
	size_t *picked = NULL, n_picked = 0, i;
	unsigned char *unrecorded = NULL;
	uint64_t starttime = 0;
	size_t n_kept = 0, n_sick = 0;
	const char *v;
	ssize_t k;
	int r;

	if (res->pool)
		return extres_alloc_pool(res, candidates, owner, ret, err);
	if (self_file)
		return take_from_script(res, candidates, prev, ret, err);
	if (!can_keep(res, coordinated, key, owner, prev))
		prev = NULL;
	picked = calloc(candidates->n ? candidates->n : 1, sizeof(*picked));
	unrecorded = calloc(candidates->n ? candidates->n : 1, 1);
	if (!picked || !unrecorded || key_index_init(&x, candidates, key) < 0) {
		free(picked);
		free(unrecorded);
		return extres_err_set(err, ENOMEM, "out of memory");
	}

	if (coordinated) {
		r = extres_alloc_check_keys(res, key, candidates, err);
		if (r < 0)
			goto out;
		r = owner_starttime(res, owner, &starttime, err);
		if (r < 0)
			goto out;
		r = extres_coord_lock(res->coordination_file,
				      res->lock_timeout_ms,
				      res->coordination_gid, &c, err);
		if (r < 0) {
			extres_err_prefix(err, -r, "resource '%s'", res->name);
			goto out;
		}
		/* This is also how a crashed holder's entries go away. */
		extres_coord_reclaim(c);
	}

	/* What we hold and the driver still offers stays, in its old order,
	 * so info numbers do not churn; its properties are the new ones. A
	 * held device whose line went missing (removed by hand, or by Flink's
	 * script) is kept only if nobody else recorded it since, and is then
	 * recorded again. */
	for (i = 0; prev && i < prev->n && n_picked < res->amount.max; i++) {
		v = extres_info_get(&prev->infos[i], key);
		k = v ? find_candidate(&x, v) : -1;
		if (k < 0)
			continue;
		if (coordinated &&
		    !extres_coord_recorded_for(c, v, owner, starttime)) {
			pid_t holder = extres_coord_other_holder(c, v, owner,
								 starttime);

			/* Ours, and somebody else's too: a reload must not
			 * quietly hand the device over (the guard reports
			 * it); the operator decides. */
			if (holder) {
				r = extres_alloc_held_error(
					res->name, key, v, holder,
					res->coordination_file, err);
				goto out;
			}
			unrecorded[n_picked] = 1;
		}
		key_index_pick(&x, (size_t)k);
		picked[n_picked++] = (size_t)k;
	}
	n_kept = n_picked;
	for (i = 0; i < candidates->n && n_picked < res->amount.max; i++) {
		if (x.picked[i])
			continue;
		/* A device held already stays (above); a sick one is not
		 * handed to anyone new. */
		if (!extres_info_healthy(&candidates->items[i])) {
			n_sick++;
			continue;
		}
		if (coordinated) {
			v = extres_info_get(&candidates->items[i], key);
			/* Reclaimed above: every recorded key is held. */
			if (extres_coord_has_key(c, v) ||
			    key_index_taken(&x, v))
				continue;
		}
		key_index_pick(&x, i);
		picked[n_picked++] = i;
	}
	if (n_picked < res->amount.min) {
		char wanted[EXTRES_AMOUNT_TEXT_MAX];

		extres_amount_wanted(&res->amount, wanted);
		/* Nothing is written, not even the reclaimed lines: a failed
		 * allocation leaves the file as it found it. */
		if (coordinated)
			r = extres_err_set(
				err, ENOSPC,
				"resource '%s': wanted %s, found %zu free of %zu (coordination file %s)",
				res->name, wanted, n_picked, candidates->n,
				res->coordination_file);
		else
			r = extres_err_set(
				err, ENOSPC,
				"resource '%s': wanted %s, found %zu",
				res->name, wanted, n_picked);
		if (n_sick)
			extres_err_append(err, "; %zu not healthy (%s)", n_sick,
					  EXTRES_HEALTH_KEY);
		goto out;
	}

	r = extres_alloc_new(res, coordinated, owner, starttime, candidates,
			     picked, n_picked, &a);
	if (r < 0) {
		r = extres_err_set(err, -r, "out of memory");
		goto out;
	}
	if (coordinated) {
		/* Kept devices are recorded already, unless found missing. */
		for (i = 0; i < n_picked; i++) {
			if (i < n_kept && !unrecorded[i])
				continue;
			v = extres_info_get(&candidates->items[picked[i]], key);
			r = extres_coord_add_tagged(
				c, v, owner, starttime, NULL,
				extres_info_uuid(
					&candidates->items[picked[i]]));
			if (r < 0) {
				r = extres_err_set(err, -r, "out of memory");
				goto out;
			}
		}
		r = write_file(c, res, err);
		if (r < 0)
			goto out;
	}
	*ret = a;
	a = NULL;
out:
	extres_coord_close(c);
	extres_allocation_free(a);
	key_index_clear(&x);
	free(unrecorded);
	free(picked);
	return r;
}
