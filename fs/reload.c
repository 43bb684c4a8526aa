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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "extresd.h"
#include "log.h"
#include "snapshot.h"

/* The text of .meta/status: `key value` lines, stable for scripts. */
static int status_text(const struct extresd *d, char **ret, size_t *ret_len)
{
	char *text = NULL;
	int n;

	n = asprintf(&text,
		     "pid %d\n"
		     "config %s\n"
		     "generation %lu\n"
		     "reloads %lu\n"
		     "last-reload %s\n",
		     (int)getpid(), d->config->path, d->generation, d->reloads,
		     d->last_reload);
	if (n < 0)
		return -ENOMEM;
	*ret = text;
	*ret_len = (size_t)n;
	return 0;
}

int extresd_publish(struct extresd *d)
{
	struct extres_snapshot_resource *res = NULL;
	struct extres_tree *tree = NULL;
	struct extres_err err;
	struct timespec now;
	char *status = NULL;
	size_t len = 0, i;
	int r;

	res = calloc(d->allocs->n ? d->allocs->n : 1, sizeof(*res));
	r = res ? status_text(d, &status, &len) : -ENOMEM;
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "out of memory");
		goto out;
	}
	for (i = 0; i < d->allocs->n; i++) {
		res[i].name = d->allocs->items[i]->resource;
		res[i].infos = d->allocs->items[i]->infos;
		res[i].n_infos = d->allocs->items[i]->n;
		res[i].driver = d->config->resources[i].driver;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	/* Only this thread swaps trees, so reading the current one for its
	 * time stamps needs no lock. */
	r = extres_snapshot_build_meta(res, d->allocs->n, status, len, now,
				       d->fs.tree, &tree, &err);
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
		goto out;
	}
	extres_fs_swap(&d->fs, d->se, tree);
out:
	free(status);
	free(res);
	return r;
}

/* Keep the outcome for .meta/status: one line, whatever the message. */
static void set_last_reload(struct extresd *d, const char *what,
			    const char *msg)
{
	char *p;

	/* Bounded on purpose: the status stays one short line. */
	snprintf(d->last_reload, sizeof(d->last_reload), "%s%s%.480s", what,
		 msg ? ": " : "", msg ? msg : "");
	for (p = d->last_reload; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
}

static int try_reload(struct extresd *d)
{
	struct extres_config *config = NULL;
	struct extres_allocations *allocs = NULL, *old;
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
		extres_log(EXTRES_LOG_NOTICE,
			   "extres.mountpoint changed; it takes effect at the next start");
	r = extres_reallocate_all(config, d->allocs, d->owner, &allocs, &err);
	if (r < 0)
		goto fail;

	/* Commit: serve the new state, then hand back what it dropped. */
	old = d->allocs;
	extres_config_free(d->config);
	d->config = config;
	d->allocs = allocs;
	d->generation++;
	set_last_reload(d, "ok", NULL);
	extresd_publish(d);
	if (extres_release_dropped(old, allocs, &err) < 0)
		extres_log(EXTRES_LOG_ERR, "after reload: %s", err.msg);
	extres_allocations_free(old);
	return 0;
fail:
	extres_config_free(config);
	extres_log(EXTRES_LOG_ERR, "reload failed, still serving generation %lu: %s",
		   d->generation, err.msg);
	set_last_reload(d, "failed", err.msg);
	return r;
}

void extresd_reload(void *ctx)
{
	struct extresd *d = ctx;

	extres_log(EXTRES_LOG_INFO, "reloading %s", d->config->path);
	d->reloads++;
	if (try_reload(d) < 0)
		/* Only the status changes. */
		extresd_publish(d);
	else
		extres_log(EXTRES_LOG_INFO, "reloaded: generation %lu",
			   d->generation);
}
