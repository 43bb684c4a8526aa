/* SPDX-License-Identifier: MIT */
/*
 * Keeping our coordination-file lines, and telling when we cannot.
 *
 * Runs on the control thread (like reloads, which change the allocations):
 * when the guard (daemon/guard.h) saw one of our files change, after every
 * start and reload, and once a second while a conflict lasts (the recheck
 * timer), since the other holder's exit changes nothing in the file. A
 * conflict cannot be undone from here (the other process may be using the
 * device already), so it is made loud: the log, .meta/status, `extresctl
 * status` (exit 1) and systemd's STATUS=.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>

#include "daemon/extresd.h"
#include "base/log.h"
#include "os/sdnotify.h"

/* How often conflicts are looked at again while there are some. */
#define RECHECK_MS 1000

/* Look again in a second, or never (`again` 0). */
static void recheck(struct extresd *d, int again)
{
	if (!d->src.recheck)
		return;
	if (again)
		extres_source_set_delay(d->src.recheck, RECHECK_MS);
	else
		extres_source_set_time(d->src.recheck, -1);
}

/* Log each line of `text` that `old` does not have. */
static void log_new_lines(const char *text, const char *old)
{
	const char *p, *nl;

	for (p = text; p && *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl)
			break;
		if (old && memmem(old, strlen(old), p, (size_t)(nl - p + 1)))
			continue;
		extres_log(EXTRES_LOG_ERR, "conflict: %.*s", (int)(nl - p), p);
	}
}

static void notify_status(const char *conflicts)
{
	char state[600];
	const char *nl;

	if (!conflicts) {
		extres_sd_notify("STATUS=");
		return;
	}
	nl = strchr(conflicts, '\n');
	snprintf(state, sizeof(state), "STATUS=conflict: %.*s",
		 nl ? (int)(nl - conflicts) : (int)strlen(conflicts),
		 conflicts);
	extres_sd_notify(state);
}

void extresd_check_lines(struct extresd *d)
{
	char *all = NULL, *one, *grown;
	size_t len = 0, restored, i, n;
	struct extres_err err;
	int failed = 0;

	for (i = 0; d->allocs && i < d->allocs->n; i++) {
		const char *file = d->allocs->items[i]->coordination_file;
		struct extres_alloc_seen seen;

		if (extres_alloc_guard(d->allocs->items[i], d->allocs->found[i],
				       &one, &restored, &seen, &err) < 0) {
			/* Keep what we knew: a file we cannot read now says
			 * nothing new about conflicts. */
			extres_log(EXTRES_LOG_ERR, "checking our lines: %s",
				   err.msg);
			failed = 1;
			continue;
		}
		/* Seen now, by the one check that looks at our lines; someone
		 * else's change also changes who holds what. */
		if (seen.found.st.st_ino &&
		    !extres_guard_known(&d->guard, file, &seen.found))
			extresd_holders_schedule(d, EXTRESD_HOLDERS_DELAY_MS);
		if (seen.left.st.st_ino)
			extres_guard_seen(&d->guard, file, &seen.left);
		extres_file_state_clear(&seen.found);
		extres_file_state_clear(&seen.left);
		/* Our write wakes nobody (extresd_guard_settle()): the
		 * holders are read again for it here. */
		if (restored)
			extresd_holders_schedule(d, EXTRESD_HOLDERS_DELAY_MS);
		if (restored)
			extres_log(
				EXTRES_LOG_WARNING,
				"resource '%s': %zu line%s of ours had gone from %s; written back",
				d->allocs->items[i]->resource, restored,
				restored == 1 ? "" : "s",
				d->allocs->items[i]->coordination_file);
		if (!one)
			continue;
		n = strlen(one);
		grown = realloc(all, len + n + 1);
		if (!grown) {
			free(one);
			failed = 1;
			continue;
		}
		all = grown;
		memcpy(all + len, one, n + 1);
		len += n;
		free(one);
	}
	recheck(d, failed || all);
	/* Our own writes (lines put back) are seen now, not as a wake-up. */
	extresd_guard_settle(d);
	if (failed) {
		free(all);
		return;
	}
	if ((!all && !d->conflicts) ||
	    (all && d->conflicts && strcmp(all, d->conflicts) == 0)) {
		free(all);
		return;
	}
	if (all)
		log_new_lines(all, d->conflicts);
	else
		extres_log(EXTRES_LOG_NOTICE, "conflicts resolved");
	free(d->conflicts);
	d->conflicts = all;
	notify_status(all);
	extresd_changed(d);
}

static void on_recheck(struct extres_source *s, void *ctx)
{
	extresd_check_lines(ctx);
}

/* A file changed: check our lines now, the holders soon. */
static void on_change(struct extresd *d)
{
	extresd_check_lines(d);
	extresd_holders_schedule(d, EXTRESD_HOLDERS_DELAY_MS);
}

static void on_guard(struct extres_source *s, void *ctx)
{
	struct extresd *d = ctx;

	if (extres_guard_changed(&d->guard))
		on_change(d);
}

void extresd_guard_settle(struct extresd *d)
{
	/* A change found here is checked at once, from the loop: not from
	 * inside the check that settles. */
	if (extres_guard_changed(&d->guard)) {
		if (d->src.recheck)
			extres_source_set_delay(d->src.recheck, 0);
		extresd_holders_schedule(d, EXTRESD_HOLDERS_DELAY_MS);
	}
}

int extresd_guard_add(struct extresd *d)
{
	int r = extres_loop_add_timer(d->loop, on_recheck, d, &d->src.recheck);

	if (r == 0 && d->guard.fd >= 0)
		r = extres_loop_add_io(d->loop, d->guard.fd, EPOLLIN, on_guard,
				       d, &d->src.guard);
	return r;
}
