/* SPDX-License-Identifier: MIT */
/*
 * extresctl top's screen: a snapshot as lines that fit the width given (80
 * columns for the table; wider terminals get wider names), sorted and
 * filtered as asked. The same lines serve the terminal and a pipe.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/top.h"

static const char *const sort_names[TOP_N_SORTS] = {
	[TOP_SORT_RESOURCE] = "resource",
	[TOP_SORT_HEALTH] = "health",
	[TOP_SORT_HOLDER] = "holder",
};

const char *top_sort_name(int sort)
{
	return sort >= 0 && sort < TOP_N_SORTS ? sort_names[sort] : "?";
}

/* Lines written so far, against the height. */
struct out {
	FILE *f;
	int width, height, lines;
};

/* One line cut to the width: the text given, then "\n". */
static void put(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void put(struct out *o, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	size_t len;

	if (o->height && o->lines >= o->height)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	len = strlen(line);
	if ((int)len > o->width)
		len = (size_t)o->width;
	/* Trailing blanks would only wrap a narrow terminal. */
	while (len && line[len - 1] == ' ')
		len--;
	fprintf(o->f, "%.*s\n", (int)len, line);
	o->lines++;
}

/* `s` in a column of `w`: cut with '+' when longer, "-" when NULL. */
static const char *cell(char *buf, size_t size, const char *s, int w)
{
	if (!s || !*s)
		s = "-";
	if ((int)strlen(s) <= w || w < 2)
		snprintf(buf, size, "%s", s);
	else
		snprintf(buf, size, "%.*s+", w - 1, s);
	return buf;
}

/* "2026-11-29T05:06:25Z" -> "05:06:25" (UTC, as the view writes it). */
static const char *clock_of(const char *since, char *buf, size_t size)
{
	const char *t = since ? strchr(since, 'T') : NULL;

	if (!t || strlen(t) < 9)
		return since;
	snprintf(buf, size, "%.8s", t + 1);
	return buf;
}

static int healthy(const struct top_dev *d)
{
	return !d->health || strcmp(d->health, "ok") == 0;
}

static int compare_devs(const void *a, const void *b, void *arg)
{
	const struct top_dev *x = *(const struct top_dev *const *)a,
			     *y = *(const struct top_dev *const *)b;
	int c = 0, sort_by = *(const int *)arg;

	if (sort_by == TOP_SORT_HEALTH)
		c = healthy(x) - healthy(y);
	else if (sort_by == TOP_SORT_HOLDER)
		c = strcmp(x->user ? x->user : "~", y->user ? y->user : "~");
	if (c == 0)
		c = strcmp(x->res, y->res);
	/* Then the snapshot's order: the mount's, holders after. */
	return c ? c : (x < y ? -1 : x > y);
}

void top_render(const struct top_snap *s, const char *mnt,
		const struct top_view *view, FILE *f)
{
	/* The key line of a terminal is kept a row of its own. */
	struct out o = { f, view->width,
			 view->interactive && view->height > 1 ?
				 view->height - 1 :
				 view->height,
			 0 };
	char c[9][256], holder[64], hms[16];
	const struct top_dev **rows;
	int name_w = 12 + (view->width > 80 ? (view->width - 80) / 2 : 0);
	size_t i, n = 0, shown_waiters = 0;

	put(&o, "extres top %s  generation %s  reloads %s  conflicts %s", mnt,
	    s->generation ? s->generation : "-", s->reloads ? s->reloads : "-",
	    s->conflicts ? s->conflicts : "-");
	if (s->error) {
		put(&o, "error: %s", s->error);
		return;
	}
	put(&o, "last reload %s  unhealthy %s  sort %s  filter %s",
	    s->last_reload ? s->last_reload : "-",
	    s->unhealthy ? s->unhealthy : "-", top_sort_name(view->sort),
	    view->filter ? view->filter : "all");
	put(&o, "%-7s %-3s %-4s %-*s %-7s %-9s %-8s %-13s %s", "RES", "DEV",
	    "KEY", name_w, "NAME", "HEALTH", "COMMAND", "USER", "LEASE",
	    "SINCE");
	rows = calloc(s->n_devs + 1, sizeof(*rows));
	for (i = 0; rows && i < s->n_devs; i++)
		if (!view->filter || strcmp(s->devs[i].res, view->filter) == 0)
			rows[n++] = &s->devs[i];
	if (n)
		qsort_r(rows, n, sizeof(*rows), compare_devs,
			(void *)&view->sort);
	for (i = 0; i < n; i++) {
		const struct top_dev *d = rows[i];

		/* A lease's id; else the kind of holder, or a line whose
		 * owner is gone. */
		if (d->state && strcmp(d->state, "live") != 0)
			snprintf(holder, sizeof(holder), "(%s)", d->state);
		else if (d->lease)
			snprintf(holder, sizeof(holder), "%s", d->lease);
		else if (d->kind)
			snprintf(holder, sizeof(holder), "(%s)", d->kind);
		else
			snprintf(holder, sizeof(holder), "-");
		put(&o, "%-7s %-3s %-4s %-*s %-7s %-9s %-8s %-13s %s",
		    cell(c[0], sizeof(c[0]), d->res, 7),
		    cell(c[1], sizeof(c[1]), d->info, 3),
		    cell(c[2], sizeof(c[2]), d->key, 4), name_w,
		    cell(c[3], sizeof(c[3]), d->name, name_w),
		    cell(c[4], sizeof(c[4]), d->health, 7),
		    cell(c[5], sizeof(c[5]), d->command, 9),
		    cell(c[6], sizeof(c[6]), d->user, 8),
		    cell(c[7], sizeof(c[7]), holder, 13),
		    cell(c[8], sizeof(c[8]),
			 clock_of(d->since, hms, sizeof(hms)), 8));
	}
	free(rows);
	for (i = 0; i < s->n_waiters; i++) {
		const struct top_waiter *w = &s->waiters[i];

		if (view->filter && strcmp(w->res, view->filter) != 0)
			continue;
		put(&o, "waiting %s: ticket %s pid %d %s %s", w->res, w->ticket,
		    (int)w->pid, w->user, w->command);
		shown_waiters++;
	}
	if (!shown_waiters)
		put(&o, "waiting: none");
	for (i = 0; i < s->n_conflict; i++)
		put(&o, "conflict %s", s->conflict[i]);
	if (view->interactive) {
		/* The key line stays at the bottom. */
		o.height = 0;
		put(&o, "q quit  s sort  f filter resource  a all");
	}
}

const char *top_next_resource(const struct top_snap *s, const char *cur)
{
	const char *best = NULL;
	size_t i;

	/* The smallest name after `cur`, in the order names sort. */
	for (i = 0; i < s->n_devs; i++) {
		const char *r = s->devs[i].res;

		if (cur && strcmp(r, cur) <= 0)
			continue;
		if (!best || strcmp(r, best) < 0)
			best = r;
	}
	return best;
}
