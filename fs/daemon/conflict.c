/* SPDX-License-Identifier: MIT */
/*
 * Keeping our coordination-file lines, and telling when we cannot.
 *
 * Runs on the control thread (like reloads, which change the allocations):
 * when the guard (daemon/guard.h) saw one of our files change, after every
 * start and reload, and once a second while a conflict lasts, since the
 * other holder's exit changes nothing in the file. A conflict cannot be
 * undone from here (the other process may be using the device already), so
 * it is made loud: the log, .meta/status, `extresctl status` (exit 1) and
 * systemd's STATUS=.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/extresd.h"
#include "base/log.h"
#include "os/sdnotify.h"
#include "base/clock.h"

/* How often conflicts are looked at again while there are some. */
#define RECHECK_MS 1000

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
		if (extres_alloc_guard(d->allocs->items[i], d->allocs->found[i],
				       &one, &restored, &err) < 0) {
			/* Keep what we knew: a file we cannot read now says
			 * nothing new about conflicts. */
			extres_log(EXTRES_LOG_ERR, "checking our lines: %s",
				   err.msg);
			failed = 1;
			continue;
		}
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
	if (failed) {
		free(all);
		d->guard_due = extres_now_ms() + RECHECK_MS;
		return;
	}
	d->guard_due = all ? extres_now_ms() + RECHECK_MS : 0;
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
	extresd_publish(d);
}

long long extresd_guard_tick(struct extresd *d)
{
	long long left;

	if (!d->guard_due)
		return -1;
	left = d->guard_due - extres_now_ms();
	if (left > 0)
		return left;
	extresd_check_lines(d);
	return d->guard_due ? RECHECK_MS : -1;
}
