/* SPDX-License-Identifier: MIT */
/*
 * Reloading the configuration (SIGHUP, on the control thread).
 *
 * A reload is all or nothing: the new config is loaded and every resource
 * discovered and allocated (devices still offered stay where they are) before
 * anything is served or released; on any failure the running tree and
 * allocations stay exactly as they were. Only then is the new tree swapped
 * in, the kernel told what changed, and what is no longer wanted released.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/extresd.h"
#include "base/log.h"
#include "os/sdnotify.h"

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
	 * keeps the last holders shown. Conflicts too, and this render shows
	 * all of it: one per reload. */
	extresd_holders_read(d);
	extresd_watch_files(d);
	extresd_check_lines(d);
	r = extresd_publish(d);
	if (r < 0) {
		/* The old tree is still served: so stays the old state. */
		d->config = old_config;
		d->allocs = old;
		d->generation--;
		d->loaded_at = old_loaded_at;
		extres_release_dropped(allocs, old, NULL);
		extres_allocations_free(allocs);
		extresd_watch_files(d);
		extresd_check_lines(d);
		extres_err_set(&err, -r, "cannot build the new tree: %s",
			       strerror(-r));
		goto fail;
	}
	extres_config_free(old_config);
	/* Intervals may have changed: schedule afresh. */
	extresd_refresh_schedule(d);
	if (extres_release_dropped(old, allocs, &err) < 0)
		extres_log(EXTRES_LOG_ERR, "after reload: %s", err.msg);
	extres_allocations_free(old);
	/* What was released went from the files after the publish: shown
	 * when it changed what the holders are. */
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

void extresd_reload(struct extresd *d)
{
	extres_log(EXTRES_LOG_INFO, "reloading %s", d->config->path);
	extres_sd_notify("RELOADING=1");
	d->reloads++;
	if (try_reload(d) < 0) {
		/* Only the status and the counters change. */
		d->reload_failures++;
		extresd_changed(d);
	} else {
		extres_log(EXTRES_LOG_INFO, "reloaded: generation %lu",
			   d->generation);
	}
	extres_sd_notify("READY=1");
}
