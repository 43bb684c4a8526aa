/* SPDX-License-Identifier: MIT */
/*
 * The vendors' generated CDI specs that .meta/cdi.json builds on
 * (config/cdi_base.h): per resource, the one its cdi.base-spec names, else
 * the first of its driver's cdi_base_specs that exists. Read at start and
 * after each reload, on the thread that publishes: a spec generated later
 * is taken up by the next reload. A resource whose driver names specs of
 * which none exists is said in .meta/status ("cdi-base-missing RESOURCE
 * COMMAND"), so that `extresctl cdi` can tell the operator what to run.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/extresd.h"
#include "base/log.h"
#include "config/cdi_base.h"
#include "host/driver_info.h"

void extresd_cdi_bases_free(struct extresd *d)
{
	size_t i;

	for (i = 0; i < d->cdi_bases.n; i++)
		extres_cdi_base_free(d->cdi_bases.base[i]);
	free(d->cdi_bases.base);
	free(d->cdi_bases.missing);
	memset(&d->cdi_bases, 0, sizeof(d->cdi_bases));
}

void extresd_cdi_bases_update(struct extresd *d)
{
	struct extres_err err;
	const char *path;
	size_t n = d->allocs->n, i;
	int missing;

	if (d->cdi_bases.loaded && d->cdi_bases.generation == d->generation &&
	    d->cdi_bases.n == n)
		return;
	extresd_cdi_bases_free(d);
	d->cdi_bases.base = calloc(n ? n : 1, sizeof(*d->cdi_bases.base));
	d->cdi_bases.missing = calloc(n ? n : 1, 1);
	if (!d->cdi_bases.base || !d->cdi_bases.missing) {
		extres_log(EXTRES_LOG_ERR, "CDI base specs: out of memory");
		extresd_cdi_bases_free(d);
		return;
	}
	d->cdi_bases.n = n;
	for (i = 0; i < n; i++) {
		if (d->config->resources[i].pool)
			continue;
		path = extres_driver_info_cdi_base(
			&d->allocs->items[i]->driver,
			d->config->resources[i].cdi_base_spec, &missing);
		d->cdi_bases.missing[i] = (unsigned char)missing;
		/* Without it the spec still gives the nodes and variables;
		 * the reason is in the log, once per start or reload. */
		if (path &&
		    extres_cdi_base_load(path, &d->cdi_bases.base[i], &err) < 0)
			extres_log(EXTRES_LOG_ERR,
				   "resource '%s': CDI spec to build on: %s",
				   d->config->resources[i].name, err.msg);
	}
	d->cdi_bases.generation = d->generation;
	d->cdi_bases.loaded = 1;
}
