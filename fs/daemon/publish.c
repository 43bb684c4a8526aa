/* SPDX-License-Identifier: MIT */
/*
 * Publishing: render the tree for the daemon's state and serve it.
 *
 * Jobs do not render: they say that something changed (extresd_changed()),
 * and one deferred source renders once before the loop sleeps again, so
 * that a guard check, a holders re-read and a refresh that land together
 * cost one tree, and no change is rendered twice. Start-up and a reload's
 * commit render at once (extresd_publish()), the reload because it rolls
 * back when that fails.
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "daemon/extresd.h"
#include "tree/snapshot.h"

/*
 * How long the control thread must go without a publish before freed
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

static int render(struct extresd *d)
{
	struct extres_snapshot_resource *res = NULL;
	struct extresd_leases leases = { 0 };
	struct extresd_meta meta = { 0 };
	struct extres_tree *tree = NULL;
	struct extres_err err;
	struct timespec now;
	size_t i;
	int r;

	d->renders++;
	extresd_cdi_bases_update(d);
	if (!d->nfd_expires) {
		d->nfd_expires = (int64_t)time(NULL) + NFD_TTL_S;
		if (d->src.nfd)
			extres_source_set_delay(d->src.nfd, NFD_RENEW_MS);
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
	r = extres_snapshot_build_self(
		res, d->allocs->n, meta.files, meta.n, leases.items, leases.n,
		now, d->front->current(d->front->ctx), &tree, &err);
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
		goto out;
	}
	d->front->swap(d->front->ctx, tree);
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
	 * other publish came meanwhile.
	 */
	if (d->src.trim)
		extres_source_set_delay(d->src.trim, TRIM_DELAY_MS);
	return r;
}

int extresd_serve_first(struct extresd *d)
{
	int r;

	/* From now on our lines and the holders are watched (before they
	 * are read, so that no change goes unseen); a file that cannot be
	 * is no reason not to serve. */
	extresd_watch_files(d);
	if (extresd_holders_read(d) == -EINTR)
		return -EINTR;
	d->loaded_at = time(NULL);
	/* Conflicts found now show in the first tree. */
	extresd_check_lines(d);
	r = extresd_publish(d);
	if (r < 0)
		return r;
	extresd_refresh_schedule(d);
	return 0;
}

int extresd_publish(struct extresd *d)
{
	/* This render shows whatever a marked one would. */
	d->dirty = 0;
	return render(d);
}

void extresd_changed(struct extresd *d)
{
	d->dirty = 1;
	if (d->src.publish)
		extres_source_trigger(d->src.publish);
}

static void on_publish(struct extres_source *s, void *ctx)
{
	struct extresd *d = ctx;
	long long due =
		d->src.holders ? extres_source_time(d->src.holders) : -1;

	/* A coordination file changed and the holders are read again in a
	 * moment: that read renders what the guard found too, once. */
	if (due >= 0 &&
	    due - extres_loop_now(d->loop) <= EXTRESD_HOLDERS_DELAY_MS)
		return;
	if (d->dirty)
		extresd_publish(d);
}

static void on_trim(struct extres_source *s, void *ctx)
{
	malloc_trim(0);
}

/* Before .meta/nfd expires, from the wall clock now. */
static void on_nfd(struct extres_source *s, void *ctx)
{
	struct extresd *d = ctx;

	d->nfd_expires = 0;
	extresd_changed(d);
}

int extresd_publish_add(struct extresd *d)
{
	int r = extres_loop_add_defer(d->loop, on_publish, d, &d->src.publish);

	if (r == 0)
		r = extres_loop_add_timer(d->loop, on_trim, d, &d->src.trim);
	if (r == 0)
		r = extres_loop_add_timer(d->loop, on_nfd, d, &d->src.nfd);
	return r;
}
