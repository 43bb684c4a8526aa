/* SPDX-License-Identifier: MIT */
/*
 * Publishing the served tree, and reloading the configuration.
 *
 * A reload is all or nothing: the new config is loaded and every resource
 * discovered and allocated (devices still offered stay where they are) before
 * anything is served or released; on any failure the running tree and
 * allocations stay exactly as they were. Only then is the new tree swapped
 * in, the kernel told what changed, and what is no longer wanted released.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/extresd.h"
#include "base/log.h"
#include "base/text.h"
#include "host/instance.h"
#include "os/sdnotify.h"
#include "tree/snapshot.h"
#include "base/clock.h"

/*
 * How long the control thread must be idle after a publish before freed
 * pages go back to the system. Trimming at once made the next reload of a
 * burst fault in again, page by page, the memory this one had just given
 * back: some 5,000 page faults, ~10 ms, at 4,096 devices.
 */
#define TRIM_DELAY_MS 250

/*
 * How long .meta/nfd holds (its expiry line), and how often it is made
 * anew: NFD's worker reads it every minute by default, and drops the
 * labels of a file that expired, so a daemon gone for good (not
 * restarted) takes its labels with it within NFD_TTL_S.
 */
#define NFD_TTL_S 600
#define NFD_RENEW_MS (NFD_TTL_S * 1000LL / 2)

/* The least time between two refreshes a driver asked for. */
#define REFRESH_ASK_GAP_MS 100

int extresd_publish(struct extresd *d)
{
	struct extres_snapshot_resource *res = NULL;
	struct extresd_leases leases = { 0 };
	struct extresd_meta meta = { 0 };
	struct extres_tree *tree = NULL;
	struct extres_err err;
	struct timespec now;
	size_t i;
	int r;

	extresd_cdi_bases_update(d);
	if (!d->nfd_expires) {
		d->nfd_expires = (int64_t)time(NULL) + NFD_TTL_S;
		d->nfd_due = extres_now_ms() + NFD_RENEW_MS;
	}
	res = calloc(d->allocs->n ? d->allocs->n : 1, sizeof(*res));
	r = res ? extresd_meta_files(d, &meta) : -ENOMEM;
	if (r == 0)
		r = extresd_leases_build(d, &leases);
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "cannot build .meta: %s",
			   strerror(-r));
		goto out;
	}
	for (i = 0; i < d->allocs->n; i++) {
		res[i].name = d->allocs->items[i]->resource;
		res[i].infos = d->allocs->items[i]->infos;
		res[i].n_infos = d->allocs->items[i]->n;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	/* Only this thread swaps trees, so reading the current one for its
	 * time stamps needs no lock. */
	r = extres_snapshot_build_self(res, d->allocs->n, meta.files, meta.n,
				       leases.items, leases.n, now, d->fs.tree,
				       &tree, &err);
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
		goto out;
	}
	extres_fs_swap(&d->fs, d->se, tree);
	for (i = 0; i < meta.n; i++)
		if (strcmp(meta.files[i].name, "cdi.json") == 0)
			extresd_cdi_sync(d, meta.files[i].data);
out:
	extresd_leases_free(&leases);
	extresd_meta_free(&meta);
	free(res);
	/*
	 * A reload holds two configs, two allocations and two trees for a
	 * moment, then frees one of each, in pieces all over the heap that
	 * glibc keeps until its top is free. Hand the free pages back, or a
	 * daemon that reloaded once keeps its peak for good: soon, when no
	 * other reload came meanwhile (extresd_refresh()).
	 */
	d->trim_due = extres_now_ms() + TRIM_DELAY_MS;
	return r;
}

/*
 * Keep the outcome: .meta/status, which every user reads, says only whether
 * the last reload failed and when ("ok", "failed at TIME"); the reason
 * (`msg`), which may quote a script's output or a config only root reads,
 * goes to .meta/error (root only), on one line.
 */
static void set_last_reload(struct extresd *d, const char *msg)
{
	char when[32] = "?";
	struct tm tm;
	time_t now;
	char *p;

	d->last_error[0] = '\0';
	if (!msg) {
		snprintf(d->last_reload, sizeof(d->last_reload), "ok");
		return;
	}
	now = time(NULL);
	if (gmtime_r(&now, &tm))
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(d->last_reload, sizeof(d->last_reload), "failed at %s", when);
	snprintf(d->last_error, sizeof(d->last_error), "%s", msg);
	for (p = d->last_error; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
}

static int try_reload(struct extresd *d)
{
	struct extres_config *config = NULL, *old_config;
	struct extres_allocations *allocs = NULL, *old;
	int64_t old_loaded_at = d->loaded_at;
	struct extres_err err;
	size_t i;
	int r;

	r = extres_config_load(d->config->path, &config, &err);
	if (r < 0)
		goto fail;
	for (i = 0; i < config->n_warnings; i++)
		extres_log(EXTRES_LOG_WARNING, "%s", config->warnings[i]);
	if ((config->mountpoint == NULL) != (d->config->mountpoint == NULL) ||
	    (config->mountpoint &&
	     strcmp(config->mountpoint, d->config->mountpoint) != 0))
		extres_log(
			EXTRES_LOG_NOTICE,
			"extres.mountpoint changed; it takes effect at the next start");
	r = extres_reallocate_all(config, d->config, d->allocs, d->owner,
				  &allocs, &err);
	if (r < 0)
		goto fail;

	/* Commit: serve the new state, then hand back what it dropped. */
	old = d->allocs;
	old_config = d->config;
	d->config = config;
	d->allocs = allocs;
	d->generation++;
	d->loaded_at = time(NULL);
	set_last_reload(d, NULL);
	/* The new lines show in the same tree; a file we cannot read now
	 * keeps the last holders shown. */
	extresd_holders_read(d);
	r = extresd_publish(d);
	if (r < 0) {
		/* The old tree is still served: so stays the old state. */
		d->config = old_config;
		d->allocs = old;
		d->generation--;
		d->loaded_at = old_loaded_at;
		extres_release_dropped(allocs, old, NULL);
		extres_allocations_free(allocs);
		extres_err_set(&err, -r, "cannot build the new tree: %s",
			       strerror(-r));
		goto fail;
	}
	extres_config_free(old_config);
	/* Intervals may have changed: schedule afresh. */
	free(d->refresh_due);
	d->refresh_due = NULL;
	if (extres_release_dropped(old, allocs, &err) < 0)
		extres_log(EXTRES_LOG_ERR, "after reload: %s", err.msg);
	extres_allocations_free(old);
	extresd_watch_files(d);
	extresd_check_lines(d);
	/* What was released went from the files after the publish. */
	extresd_holders_schedule(d, 0);
	return 0;
fail:
	extres_config_free(config);
	if (r == -EINTR) {
		/* A stop came: everything is as before, and the control
		 * thread reads the signal next and ends the session. */
		extres_log(
			EXTRES_LOG_NOTICE,
			"reload called off by a stop request, still serving generation %lu: %s",
			d->generation, err.msg);
		snprintf(d->last_reload, sizeof(d->last_reload), "stopped");
		d->last_error[0] = '\0';
		return r;
	}
	extres_log(EXTRES_LOG_ERR,
		   "reload failed, still serving generation %lu: %s",
		   d->generation, err.msg);
	set_last_reload(d, err.msg);
	return r;
}

void extresd_reload(void *ctx)
{
	struct extresd *d = ctx;

	extres_log(EXTRES_LOG_INFO, "reloading %s", d->config->path);
	extres_sd_notify("RELOADING=1");
	d->reloads++;
	if (try_reload(d) < 0) {
		/* Only the status and the counters change. */
		d->reload_failures++;
		extresd_publish(d);
	} else {
		extres_log(EXTRES_LOG_INFO, "reloaded: generation %lu",
			   d->generation);
	}
	extres_sd_notify("READY=1");
}

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

long long extresd_refresh(void *ctx)
{
	struct extresd *d = ctx;
	long long now = extres_now_ms(), next = extresd_guard_tick(d);
	long long held = extresd_holders_tick(d);
	size_t n = d->config->n_resources, i;
	int changed = 0;

	if (!d->refresh_due) {
		d->refresh_due = calloc(n ? n : 1, sizeof(*d->refresh_due));
		free(d->refresh_stale);
		d->refresh_stale = calloc(n ? n : 1, sizeof(*d->refresh_stale));
		free(d->refresh_asked);
		d->refresh_asked = calloc(n ? n : 1, sizeof(*d->refresh_asked));
		if (!d->refresh_due || !d->refresh_stale || !d->refresh_asked) {
			free(d->refresh_due);
			d->refresh_due = NULL;
			return 1000; /* try again later */
		}
		for (i = 0; i < n; i++) {
			const struct extres_resource_config *rc =
				&d->config->resources[i];

			/* Instances a reload kept heard of it already. */
			extres_driver_set_wake_fd(d->allocs->drivers[i],
						  d->control.kickfd);
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
			d->refresh_due[i] = now + (long long)rc->refresh_ms;
		}
	}
	if (held >= 0 && (next < 0 || held < next))
		next = held;
	for (i = 0; i < n; i++) {
		long long due = d->refresh_due[i];
		long long gap = d->refresh_asked[i] + REFRESH_ASK_GAP_MS - now;
		/* A driver that heard of a change (host->request_refresh())
		 * is asked now, whatever its interval, or once the gap since
		 * the last such refresh is over (the request waits, and the
		 * wake-up below comes for it); not a script that coordinates
		 * by itself, which would take more devices. */
		int asked = gap <= 0 &&
			    extres_driver_take_refresh_request(
				    d->allocs->drivers[i]) &&
			    !d->allocs->items[i]->recorded_by_driver;

		if (asked)
			d->refresh_asked[i] = now;
		else if (gap > 0 && (next < 0 || gap < next))
			next = gap;

		if (!due && !asked)
			continue;
		if (asked || due <= now) {
			int stale = refresh_resource(d, i, &changed);

			/* Say it when it starts and when it ends, not at
			 * every interval. */
			if (stale >= 0 &&
			    (size_t)stale != d->refresh_stale[i]) {
				if (stale)
					extres_log(
						EXTRES_LOG_WARNING,
						"refresh of '%s': %d of its devices are no longer reported as they were; keeping their last values",
						d->config->resources[i].name,
						stale);
				else
					extres_log(
						EXTRES_LOG_NOTICE,
						"refresh of '%s': every device is reported again",
						d->config->resources[i].name);
				d->refresh_stale[i] = (size_t)stale;
			}
			now = extres_now_ms();
			/* From now, not from `due`: a slow driver must not
			 * make refreshes pile up. */
			if (due)
				due = d->refresh_due[i] =
					now + (long long)d->config->resources[i]
						      .refresh_ms;
		}
		if (due && (next < 0 || due - now < next))
			next = due - now;
	}
	/* The transport's outcome is known only after the mount. */
	if (extres_transport_take_changed(&d->transport))
		changed = 1;
	now = extres_now_ms();
	if (d->nfd_due && d->nfd_due <= now) {
		/* Before it expires, from the wall clock now. */
		d->nfd_expires = 0;
		changed = 1;
	}
	if (changed) {
		/* A device renumbered under a held line is a conflict now,
		 * not when the coordination file next changes. */
		extresd_check_lines(d);
		extresd_publish(d);
		extres_transport_settled(&d->transport);
	}
	if (d->nfd_due) {
		now = extres_now_ms();
		if (next < 0 || d->nfd_due - now < next)
			next = d->nfd_due - now > 0 ? d->nfd_due - now : 0;
	}
	if (d->trim_due) {
		now = extres_now_ms();
		if (d->trim_due <= now) {
			malloc_trim(0);
			d->trim_due = 0;
		} else if (next < 0 || d->trim_due - now < next) {
			next = d->trim_due - now;
		}
	}
	return next;
}
