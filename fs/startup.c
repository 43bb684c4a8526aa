/* SPDX-License-Identifier: MIT */
#include "startup.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"

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
	for (i = 0; i < a->n; i++)
		extres_allocation_free(a->items[i]);
	free(a->items);
	free(a);
}

int extres_release_all(struct extres_allocations *a, struct extres_err *err)
{
	struct extres_err one;
	int first = 0;
	size_t i;

	/* Newest first, the reverse of taking. */
	for (i = a->n; i-- > 0;) {
		int r = extres_alloc_release(a->items[i], &one);

		if (r < 0 && first == 0) {
			first = r;
			extres_err_set(err, -r, "%s", one.msg);
		}
	}
	return first;
}

/* The allocation `old` holds for resource `name`, or NULL. */
static struct extres_allocation *
find_allocation(const struct extres_allocations *old, const char *name)
{
	size_t i;

	for (i = 0; old && i < old->n; i++)
		if (strcmp(old->items[i]->resource, name) == 0)
			return old->items[i];
	return NULL;
}

int extres_allocate_all(const struct extres_config *config, pid_t owner,
			struct extres_allocations **ret,
			struct extres_err *err)
{
	return extres_reallocate_all(config, NULL, owner, ret, err);
}

int extres_reallocate_all(const struct extres_config *config,
			  const struct extres_allocations *old, pid_t owner,
			  struct extres_allocations **ret,
			  struct extres_err *err)
{
	struct extres_allocations *a;
	struct extres_infos *infos = NULL;
	size_t i;
	int r;

	a = calloc(1, sizeof(*a));
	if (!a)
		return extres_err_set(err, ENOMEM, "out of memory");
	a->items = calloc(config->n_resources ? config->n_resources : 1,
			  sizeof(*a->items));
	if (!a->items) {
		r = extres_err_set(err, ENOMEM, "out of memory");
		goto fail;
	}
	for (i = 0; i < config->n_resources; i++) {
		const struct extres_resource_config *res = &config->resources[i];

		r = extres_discover_resource(config, res, &infos, err);
		if (r < 0)
			goto fail;
		r = extres_alloc_retake(res, infos, find_allocation(old, res->name),
					owner, &a->items[a->n], err);
		extres_infos_free(infos);
		infos = NULL;
		if (r < 0)
			goto fail;
		a->n++;
	}
	*ret = a;
	return 0;
fail:
	/* Roll back: hand back only what this call took; what `old` holds
	 * stays held. The first error is the one worth reporting. */
	for (i = a->n; i-- > 0;)
		extres_alloc_release_except(
			a->items[i], find_allocation(old, a->items[i]->resource),
			NULL);
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

	for (i = old->n; i-- > 0;) {
		int r = extres_alloc_release_except(
			old->items[i], find_allocation(now, old->items[i]->resource),
			&one);

		if (r < 0 && first == 0) {
			first = r;
			extres_err_set(err, -r, "%s", one.msg);
		}
	}
	return first;
}
