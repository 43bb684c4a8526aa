/* SPDX-License-Identifier: MIT */
#include "alloc/transaction.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include "host/instance.h"
#include "base/clock.h"

int extres_discover_resource(const struct extres_config *config,
			     const struct extres_resource_config *res,
			     struct extres_infos **ret_infos,
			     struct extres_err *err)
{
	struct extres_driver *drv = NULL;
	int r;

	r = extres_driver_open(config, res, &drv, err);
	if (r < 0)
		return r;
	r = extres_driver_discover(drv, ret_infos, err);
	extres_driver_close(drv);
	return r;
}

void extres_allocations_free(struct extres_allocations *a)
{
	size_t i;

	if (!a)
		return;
	for (i = 0; i < a->n; i++) {
		extres_allocation_free(a->items[i]);
		extres_driver_close(a->drivers[i]);
		extres_infos_free(a->found[i]);
	}
	free(a->items);
	free(a->drivers);
	free(a->found);
	free(a);
}

/* The index of the allocation `old` holds for resource `name`, or -1. */
static ssize_t find_index(const struct extres_allocations *old,
			  const char *name)
{
	size_t i;

	for (i = 0; old && i < old->n; i++)
		if (strcmp(old->items[i]->resource, name) == 0)
			return (ssize_t)i;
	return -1;
}

/* The allocation `old` holds for resource `name`, or NULL. */
static struct extres_allocation *
find_allocation(const struct extres_allocations *old, const char *name)
{
	ssize_t k = find_index(old, name);

	return k < 0 ? NULL : old->items[k];
}

int extres_allocate_all(const struct extres_config *config, pid_t owner,
			struct extres_allocations **ret, struct extres_err *err)
{
	return extres_reallocate_all(config, NULL, NULL, owner, ret, err);
}

static const struct extres_resource_config *
find_resource(const struct extres_config *config, const char *name)
{
	size_t i;

	for (i = 0; config && i < config->n_resources; i++)
		if (strcmp(config->resources[i].name, name) == 0)
			return &config->resources[i];
	return NULL;
}

/* One resource of a (re)allocation; see extres_reallocate_all(). `prev`
 * and `prev_drv` are what `old` has for it (NULL: nothing). Sets
 * *unrecorded when prev's lines were taken out of the script's file, and
 * *ret_found to what the driver found when it was run. */
static int allocate_one(const struct extres_config *config,
			const struct extres_resource_config *res,
			const struct extres_config *old_config,
			struct extres_allocation *prev,
			struct extres_driver *prev_drv, pid_t owner,
			struct extres_allocation **ret,
			struct extres_driver **ret_drv,
			struct extres_infos **ret_found, int *unrecorded,
			struct extres_err *err)
{
	const struct extres_resource_config *was =
		find_resource(old_config, res->name);
	struct extres_infos *infos = NULL;
	struct extres_driver *drv = NULL;
	int r;

	if (prev && prev->recorded_by_driver && was &&
	    extres_resource_config_same(was, res)) {
		/* Its script is not run again: the instance is only kept,
		 * whatever became of the config's trust meanwhile. */
		*ret = extres_allocation_dup(prev);
		if (!*ret)
			return extres_err_set(err, ENOMEM, "out of memory");
		*ret_drv = extres_driver_ref(prev_drv);
		return 0;
	}
	if (prev_drv && extres_driver_serves(prev_drv, config, res))
		drv = extres_driver_ref(prev_drv);
	else {
		r = extres_driver_open(config, res, &drv, err);
		if (r < 0)
			return r;
	}
	if (prev && prev->recorded_by_driver) {
		r = extres_alloc_unrecord(prev, err);
		if (r < 0)
			goto out;
		*unrecorded = 1;
	}
	r = extres_driver_discover(drv, &infos, err);
	if (r == 0)
		r = extres_alloc_retake(res, infos, prev, owner, ret, err);
out:
	if (r < 0) {
		extres_infos_free(infos);
		extres_driver_close(drv);
	} else {
		*ret_drv = drv;
		*ret_found = infos;
	}
	return r;
}

/* Two resources whose drivers' default variables clash are known only
 * once the drivers have said them: the whole start-up or reload fails. */
static int check_env(const struct extres_config *config,
		     const struct extres_allocations *a, struct extres_err *err)
{
	const struct extres_driver_info **drivers;
	size_t i;
	int r;

	drivers = calloc(a->n ? a->n : 1, sizeof(*drivers));
	if (!drivers)
		return extres_err_set(err, ENOMEM, "out of memory");
	for (i = 0; i < a->n; i++)
		drivers[i] = &a->items[i]->driver;
	r = extres_driver_info_check_env(config, drivers, err);
	free(drivers);
	return r;
}

int extres_reallocate_all(const struct extres_config *config,
			  const struct extres_config *old_config,
			  struct extres_allocations *old, pid_t owner,
			  struct extres_allocations **ret,
			  struct extres_err *err)
{
	struct extres_infos_size size = { 0 };
	struct extres_allocations *a;
	unsigned char *unrecorded = NULL;
	size_t i;
	int r;

	a = calloc(1, sizeof(*a));
	if (!a)
		return extres_err_set(err, ENOMEM, "out of memory");
	a->items = calloc(config->n_resources ? config->n_resources : 1,
			  sizeof(*a->items));
	a->drivers = calloc(config->n_resources ? config->n_resources : 1,
			    sizeof(*a->drivers));
	a->found = calloc(config->n_resources ? config->n_resources : 1,
			  sizeof(*a->found));
	unrecorded = calloc(old && old->n ? old->n : 1, 1);
	if (!a->items || !a->drivers || !a->found || !unrecorded) {
		r = extres_err_set(err, ENOMEM, "out of memory");
		goto fail;
	}
	for (i = 0; i < config->n_resources; i++) {
		const struct extres_resource_config *res =
			&config->resources[i];
		ssize_t k = find_index(old, res->name);
		int un = 0;

		r = allocate_one(
			config, res, old_config, k < 0 ? NULL : old->items[k],
			k < 0 ? NULL : old->drivers[k], owner, &a->items[a->n],
			&a->drivers[a->n], &a->found[a->n], &un, err);
		if (un)
			unrecorded[k] = 1;
		if (r < 0)
			goto fail;
		a->n++;
		/* Each discovery kept to the limits; the tree holds them all. */
		r = extres_infos_size_add(&size, a->items[a->n - 1]->infos,
					  a->items[a->n - 1]->n, err);
		if (r < 0) {
			extres_err_prefix(err, -r,
					  "resource '%s' and those before it",
					  res->name);
			goto fail;
		}
	}
	r = check_env(config, a, err);
	if (r < 0)
		goto fail;
	free(unrecorded);
	*ret = a;
	return 0;
fail:
	/* Roll back: hand back only what this call took; what `old` holds
	 * stays held. The first error is the one to report; a failed
	 * release is added to it, since it leaves lines behind. */
	for (i = a->n; i-- > 0;) {
		struct extres_err rb;

		if (extres_alloc_release_except(
			    a->items[i],
			    find_allocation(old, a->items[i]->resource),
			    &rb) < 0)
			extres_err_append(err, "; rolling back failed too: %s",
					  rb.msg);
	}
	/* Put back what a self-coordinating script was to pick again. */
	for (i = 0; unrecorded && old && i < old->n; i++) {
		struct extres_err rb;

		if (unrecorded[i] &&
		    extres_alloc_record(old->items[i], &rb) < 0)
			extres_err_append(
				err, "; recording '%s' again failed too: %s",
				old->items[i]->resource, rb.msg);
	}
	free(unrecorded);
	extres_allocations_free(a);
	return r;
}

int extres_release_dropped(struct extres_allocations *old,
			   const struct extres_allocations *now,
			   struct extres_err *err)
{
	struct extres_err one;
	int first = 0;
	size_t i;

	/* Newest first, the reverse of taking. */
	for (i = old->n; i-- > 0;) {
		int r = extres_alloc_release_except(
			old->items[i],
			find_allocation(now, old->items[i]->resource), &one);

		if (r < 0 && first == 0) {
			first = r;
			extres_err_set(err, -r, "%s", one.msg);
		}
	}
	return first;
}

/* Nothing is kept: every allocation releases all of its lines. */
int extres_release_all_within(struct extres_allocations *a, unsigned budget_ms,
			      struct extres_err *err)
{
	long long end = extres_now_ms() + budget_ms, left;
	struct extres_allocation *item;
	struct extres_err one;
	int first = 0, r;
	size_t i;

	/* Newest first, the reverse of taking. */
	for (i = a->n; i-- > 0;) {
		item = a->items[i];
		left = end - extres_now_ms();
		left = left > 0 ? left : 0;
		if (item->lock_timeout_ms > left)
			item->lock_timeout_ms = (unsigned)left;
		r = extres_alloc_release(item, &one);
		if (r < 0 && first == 0) {
			first = r;
			extres_err_set(err, -r, "%s", one.msg);
		}
	}
	return first;
}
