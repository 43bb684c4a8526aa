/* SPDX-License-Identifier: MIT */
/*
 * Refreshing: the properties of the allocated devices read again, by a
 * timer per resource whose refresh-interval is set, and whenever a driver
 * asks (host->request_refresh(), through the wake-up descriptor). The
 * devices themselves never change here; what changed is rendered once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "host/instance.h"
#include "daemon/extresd.h"

/* The least time between two refreshes a driver asked for. */
#define REFRESH_ASK_GAP_MS 100

static int same_properties(const struct extres_info *a,
			   const struct extres_info *b)
{
	size_t i;

	if (a->n_props != b->n_props)
		return 0;
	for (i = 0; i < a->n_props; i++)
		if (strcmp(a->props[i].key, b->props[i].key) != 0 ||
		    strcmp(a->props[i].value, b->props[i].value) != 0)
			return 0;
	return 1;
}

static int same_infos(const struct extres_infos *a,
		      const struct extres_infos *b)
{
	size_t i;

	if (!a || a->n != b->n)
		return 0;
	for (i = 0; i < a->n; i++)
		if (!same_properties(&a->items[i], &b->items[i]))
			return 0;
	return 1;
}

/*
 * Give each allocated device of resource i the properties the driver
 * reports for it now: the candidate with the same coordination key, if it
 * is still the same device (a driver that numbers by position, like sysfs,
 * may hand the key to another device when one disappears). A device not
 * found keeps its last values. What the driver found is kept as the
 * resource's candidate list. Returns the number of those (>= 0) and sets
 * *changed, or a negative errno after logging.
 */
static int refresh_resource(struct extresd *d, size_t i, int *changed)
{
	const struct extres_resource_config *rc = &d->config->resources[i];
	struct extres_allocation *a = d->allocs->items[i];
	struct extres_infos *infos = NULL;
	struct extres_err err;
	int stale = 0, r;
	size_t j, k;

	/* The instance the allocation came from, still open: a refresh is
	 * one discover() call. */
	r = extres_driver_discover(d->allocs->drivers[i], &infos, &err);
	if (r < 0) {
		extres_log(EXTRES_LOG_WARNING,
			   "refresh of '%s' failed, keeping its values: %s",
			   rc->name, err.msg);
		return r;
	}
	for (j = 0; j < a->n; j++) {
		const char *key =
			extres_info_get(&a->infos[j], a->coordination_key);
		struct extres_info fresh;

		for (k = 0; key && k < infos->n; k++) {
			const char *v = extres_info_get(&infos->items[k],
							a->coordination_key);

			if (v && strcmp(v, key) == 0)
				break;
		}
		if (!key || k == infos->n ||
		    !extres_driver_info_same_device(
			    &infos->driver, &a->infos[j], &infos->items[k])) {
			stale++;
			continue;
		}
		if (same_properties(&a->infos[j], &infos->items[k]))
			continue;
		if (extres_info_copy(&infos->items[k], &fresh) < 0) {
			extres_log(EXTRES_LOG_ERR, "out of memory");
			break;
		}
		extres_info_clear(&a->infos[j]);
		a->infos[j] = fresh;
		*changed = 1;
	}
	/* What leases beside us show (daemon/holders.c) comes from here. */
	if (!same_infos(d->allocs->found[i], infos))
		*changed = 1;
	extres_infos_free(d->allocs->found[i]);
	d->allocs->found[i] = infos;
	return stale;
}

/* Refresh resource i now; *changed set when what it shows changed. Says
 * when devices stop being reported as they were, and when they are again,
 * not at every refresh. */
static void refresh_one(struct extresd *d, size_t i, int *changed)
{
	int stale = refresh_resource(d, i, changed);

	if (stale < 0 || (size_t)stale == d->refresh_stale[i])
		return;
	if (stale)
		extres_log(
			EXTRES_LOG_WARNING,
			"refresh of '%s': %d of its devices are no longer reported as they were; keeping their last values",
			d->config->resources[i].name, stale);
	else
		extres_log(EXTRES_LOG_NOTICE,
			   "refresh of '%s': every device is reported again",
			   d->config->resources[i].name);
	d->refresh_stale[i] = (size_t)stale;
}

/* What refreshes changed is shown once; a device renumbered under a held
 * line is a conflict now, not when the coordination file next changes. */
static void after(struct extresd *d, int changed)
{
	if (!changed)
		return;
	extresd_check_lines(d);
	extresd_changed(d);
}

static void on_interval(struct extres_source *s, void *ctx)
{
	struct extresd *d = ctx;
	int changed = 0;
	size_t i;

	for (i = 0; i < d->src.n_refresh && d->src.refresh[i] != s; i++)
		;
	if (i == d->src.n_refresh)
		return;
	refresh_one(d, i, &changed);
	/* From now, not from when it was due: a slow driver must not make
	 * refreshes pile up. */
	extres_source_set_delay(s,
				(long long)d->config->resources[i].refresh_ms);
	after(d, changed);
}

/*
 * A driver that heard of a change (host->request_refresh()) is asked now,
 * whatever its interval, or once the gap since the last such refresh is
 * over (the request waits, and the ask timer comes for it); not a script
 * that coordinates by itself, which would take more devices.
 */
static void on_ask(struct extres_source *s, void *ctx)
{
	struct extresd *d = ctx;
	long long now = extres_loop_now(d->loop), gap;
	int changed = 0;
	size_t i;

	for (i = 0; i < d->src.n_refresh; i++) {
		gap = d->refresh_asked[i] + REFRESH_ASK_GAP_MS - now;
		if (gap > 0) {
			extres_source_set_delay_min(d->src.ask, gap);
			continue;
		}
		if (!extres_driver_take_refresh_request(
			    d->allocs->drivers[i]) ||
		    d->allocs->items[i]->recorded_by_driver)
			continue;
		d->refresh_asked[i] = now;
		refresh_one(d, i, &changed);
		if (d->src.refresh[i] &&
		    extres_source_time(d->src.refresh[i]) >= 0)
			extres_source_set_delay(
				d->src.refresh[i],
				(long long)d->config->resources[i].refresh_ms);
	}
	/* The transport's outcome is known only after the mount. */
	if (d->front->transport_changed(d->front->ctx))
		changed = 1;
	after(d, changed);
}

static void drop_timers(struct extresd *d)
{
	size_t i;

	for (i = 0; i < d->src.n_refresh; i++)
		extres_source_free(d->src.refresh[i]);
	free(d->src.refresh);
	d->src.refresh = NULL;
	d->src.n_refresh = 0;
}

void extresd_refresh_schedule(struct extresd *d)
{
	size_t n = d->config->n_resources, i;

	drop_timers(d);
	free(d->refresh_stale);
	free(d->refresh_asked);
	d->src.refresh = calloc(n ? n : 1, sizeof(*d->src.refresh));
	d->refresh_stale = calloc(n ? n : 1, sizeof(*d->refresh_stale));
	d->refresh_asked = calloc(n ? n : 1, sizeof(*d->refresh_asked));
	if (!d->src.refresh || !d->refresh_stale || !d->refresh_asked) {
		extres_log(
			EXTRES_LOG_ERR,
			"out of memory: refreshes are off until the next reload");
		free(d->src.refresh);
		d->src.refresh = NULL;
		return;
	}
	d->src.n_refresh = n;
	for (i = 0; i < n; i++) {
		const struct extres_resource_config *rc =
			&d->config->resources[i];

		/* Instances a reload kept heard of it already. */
		extres_driver_set_wake_fd(d->allocs->drivers[i],
					  extres_source_fd(d->src.kick));
		if (!rc->refresh_ms)
			continue;
		/* Running such a script again takes more devices. */
		if (d->allocs->items[i]->recorded_by_driver) {
			extres_log(
				EXTRES_LOG_WARNING,
				"refresh-interval of '%s' ignored: its discovery script coordinates by itself",
				rc->name);
			continue;
		}
		if (extres_loop_add_timer(d->loop, on_interval, d,
					  &d->src.refresh[i]) < 0) {
			extres_log(EXTRES_LOG_ERR,
				   "cannot schedule the refresh of '%s'",
				   rc->name);
			continue;
		}
		extres_source_set_delay(d->src.refresh[i],
					(long long)rc->refresh_ms);
	}
	/* Requests that came before (a driver that asked at start). */
	extres_source_set_delay(d->src.ask, 0);
}

static void on_kick(struct extres_source *s, void *ctx)
{
	struct extresd *d = ctx;

	/* What was asked is in the drivers' flags: the count only wakes. */
	on_ask(d->src.ask, d);
}

int extresd_refresh_add(struct extresd *d)
{
	int r = extres_loop_add_event(d->loop, on_kick, d, &d->src.kick);

	if (r == 0)
		r = extres_loop_add_timer(d->loop, on_ask, d, &d->src.ask);
	return r;
}
