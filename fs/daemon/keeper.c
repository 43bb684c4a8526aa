/* SPDX-License-Identifier: MIT */
/*
 * Writing back the lines of live leases that someone else removed.
 *
 * Flink's script frees a device whose recorded owner died with
 * `sed -i "/KEY /d"`, which drops every line of that key: on a shared
 * device, the lines of the other share holders too, who still use it. The
 * daemon re-reads a followed file after every change (daemon/holders.c);
 * under that same lock, a lease line the last read showed whose owner
 * still runs with the recorded start time, and which is gone now, is
 * written back as it was, as the guard writes back lines of the daemon's
 * own (daemon/conflict.c).
 */
#include <errno.h>
#include <string.h>

#include "base/log.h"
#include "daemon/extresd.h"

/* Whether `c` still has holder x's line. */
static int still_there(const struct extres_coord *c,
		       const struct extres_holder *x)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		const struct extres_coord_entry *e = &c->entries[i];

		if (e->parsed && e->pid == x->pid && e->has_starttime &&
		    e->starttime == x->starttime && e->lease &&
		    strcmp(e->lease, x->lease) == 0 &&
		    strcmp(e->key, x->key) == 0)
			return 1;
	}
	return 0;
}

/* Whether holder x's owner is the process it recorded, still running. */
static int owner_runs(const struct extres_holder *x)
{
	struct extres_coord_entry e = {
		.parsed = 1,
		.pid = x->pid,
		.has_starttime = 1,
		.starttime = x->starttime,
	};

	return extres_coord_owner_state(&e) == EXTRES_OWNER_LIVE;
}

int extresd_keep_leases(const struct extres_holders *prev, const char *resource,
			struct extres_coord *c, struct extres_err *err)
{
	size_t i, kept = 0;
	int r = 0;

	for (i = 0; prev && i < prev->n && r == 0; i++) {
		const struct extres_holder *x = &prev->items[i];

		if (x->kind != EXTRES_HOLDER_LEASE ||
		    x->state != EXTRES_OWNER_LIVE || !x->lease ||
		    !x->has_starttime || strcmp(x->resource, resource) != 0 ||
		    still_there(c, x) || !owner_runs(x))
			continue;
		r = extres_coord_add_share(c, x->key, x->pid, x->starttime,
					   x->lease, x->uuid, x->share_i,
					   x->share_n);
		if (r == 0)
			kept++;
	}
	if (r < 0)
		return extres_err_set(err, -r, "out of memory");
	if (!kept)
		return 0;
	r = extres_coord_write(c, err);
	if (r < 0)
		return r;
	extres_log(
		EXTRES_LOG_WARNING,
		"resource '%s': %zu line%s of live leases had gone from %s; written back",
		resource, kept, kept == 1 ? "" : "s", c->path);
	return (int)kept;
}
