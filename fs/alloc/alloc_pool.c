/* SPDX-License-Identifier: MIT */
/*
 * A node pool: every device the driver finds is served and none is taken,
 * so that the mount lists the node's inventory, .meta/holders says who
 * holds each device, and `extresctl run` leases them out through the
 * coordination file. Nothing is written to the file: the allocation has no
 * coordination file of its own, so that release, the guard and a reload
 * have nothing of ours to keep there.
 */
#include <errno.h>
#include <stdlib.h>

#include "config/config.h"
#include "alloc/alloc_internal.h"

int extres_alloc_pool(const struct extres_resource_config *res,
		      const struct extres_infos *candidates, pid_t owner,
		      struct extres_allocation **ret, struct extres_err *err)
{
	const char *key =
		res->coordination_key ? res->coordination_key : "index";
	size_t *picked, n, i;
	int r;

	/* Such a script records every device it returns for us: a pool
	 * would hold the whole node. */
	if (candidates->driver.coord_file)
		return extres_err_set(
			err, EINVAL,
			"resource '%s': external-resource.%s.pool is true, but its discovery script coordinates by itself (in %s), which takes every device it returns; drop --enable-coordination from its args",
			res->name, res->name, candidates->driver.coord_file);
	r = extres_alloc_check_keys(res, key, candidates, err);
	if (r < 0)
		return r;
	n = candidates->n < EXTRES_MAX_AMOUNT ? candidates->n :
						EXTRES_MAX_AMOUNT;
	picked = calloc(n ? n : 1, sizeof(*picked));
	if (!picked)
		return extres_err_set(err, ENOMEM, "out of memory");
	for (i = 0; i < n; i++)
		picked[i] = i;
	r = extres_alloc_new(res, 0, owner, 0, candidates, picked, n, ret);
	free(picked);
	if (r < 0)
		return extres_err_set(err, -r, "out of memory");
	return 0;
}
