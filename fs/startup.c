/* SPDX-License-Identifier: MIT */
#include "startup.h"

#include <errno.h>
#include <stdlib.h>

#include "driver.h"
#include "snapshot.h"

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

int extres_allocate_all(const struct extres_config *config, pid_t owner,
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
		r = extres_alloc_take(res, infos, owner, &a->items[a->n], err);
		extres_infos_free(infos);
		infos = NULL;
		if (r < 0)
			goto fail;
		a->n++;
	}
	*ret = a;
	return 0;
fail:
	/* Roll back: a half-started daemon must hold nothing. The first
	 * error is the one worth reporting, so release into a scratch. */
	extres_release_all(a, NULL);
	extres_allocations_free(a);
	return r;
}

int extres_allocations_tree(const struct extres_allocations *a,
			    struct timespec mtime, struct extres_tree **ret,
			    struct extres_err *err)
{
	struct extres_snapshot_resource *res;
	size_t i;
	int r;

	res = calloc(a->n ? a->n : 1, sizeof(*res));
	if (!res)
		return extres_err_set(err, ENOMEM, "out of memory");
	for (i = 0; i < a->n; i++) {
		res[i].name = a->items[i]->resource;
		res[i].infos = a->items[i]->infos;
		res[i].n_infos = a->items[i]->n;
	}
	r = extres_snapshot_build(res, a->n, mtime, ret, err);
	free(res);
	return r;
}
