/* SPDX-License-Identifier: MIT */
#include "views/holders.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/text.h"
#include "alloc/lease_line.h"
#include "os/proc.h"

int extres_holder_kind(const struct extres_coord_entry *e, int state,
		       pid_t self, uint64_t self_starttime, const char *comm,
		       const char *exe)
{
	if (e->lease)
		return EXTRES_HOLDER_LEASE;
	if (state != EXTRES_OWNER_LIVE)
		return EXTRES_HOLDER_OTHER;
	/* A script that coordinates by itself records our PID without a
	 * start time: that line is ours too. */
	if (e->pid == self &&
	    (!e->has_starttime || e->starttime == self_starttime))
		return EXTRES_HOLDER_DAEMON;
	if ((comm && strcmp(comm, "extresd") == 0) ||
	    (exe && strcmp(exe, "extresd") == 0))
		return EXTRES_HOLDER_EXTRESD;
	return EXTRES_HOLDER_OTHER;
}

const char *extres_holder_kind_name(int kind)
{
	static const char *const names[] = { "daemon", "lease", "extresd",
					     "other" };

	return kind >= 0 && kind <= EXTRES_HOLDER_OTHER ? names[kind] : "other";
}

static void holder_clear(struct extres_holder *x)
{
	free(x->resource);
	free(x->key);
	free(x->lease);
	free(x->uuid);
	free(x->user);
	free(x->command);
}

void extres_holders_clear(struct extres_holders *h)
{
	size_t i;

	for (i = 0; i < h->n; i++)
		holder_clear(&h->items[i]);
	free(h->items);
	h->items = NULL;
	h->n = 0;
}

/* The user's name, or its number when the user database has none. */
static char *user_name(uid_t uid)
{
	struct passwd pw, *found = NULL;
	char buf[1024], *name;

	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &found) == 0 && found &&
	    found->pw_name[0])
		return strdup(found->pw_name);
	if (asprintf(&name, "%u", (unsigned)uid) < 0)
		return NULL;
	return name;
}

/* What /proc and the user database say of a live owner; best effort. */
static int describe_owner(struct extres_holder *x,
			  const struct extres_coord_entry *e,
			  const struct extres_holders_ctx *ctx,
			  const struct extres_holder *prev)
{
	struct extres_proc_info info;

	x->kind = extres_holder_kind(e, x->state, ctx->self,
				     ctx->self_starttime, NULL, NULL);
	if (x->state != EXTRES_OWNER_LIVE ||
	    extres_proc_info(e->pid, &info) < 0)
		return 0;
	x->kind = extres_holder_kind(e, x->state, ctx->self,
				     ctx->self_starttime, info.comm, info.exe);
	if (info.comm[0]) {
		x->command = strdup(info.comm);
		if (!x->command)
			return -ENOMEM;
	}
	if (ctx->boot_time && ctx->ticks > 0)
		x->since = (int64_t)(ctx->boot_time +
				     info.starttime / (uint64_t)ctx->ticks);
	if (!info.has_uid)
		return 0;
	x->has_uid = 1;
	x->uid = info.uid;
	/* A device per line, often one owner for many: ask the user
	 * database once per run of lines. */
	if (prev && prev->has_uid && prev->uid == info.uid && prev->user)
		x->user = strdup(prev->user);
	else
		x->user = user_name(info.uid);
	return x->user ? 0 : -ENOMEM;
}

int extres_holders_add_file(struct extres_holders *h, const char *resource,
			    const struct extres_coord *c,
			    const struct extres_holders_ctx *ctx)
{
	struct extres_holder *items, *x;
	size_t i, n = 0;
	int r;

	for (i = 0; i < c->n; i++)
		n += c->entries[i].parsed ? 1 : 0;
	if (n == 0)
		return 0;
	items = realloc(h->items, (h->n + n) * sizeof(*items));
	if (!items)
		return -ENOMEM;
	h->items = items;
	for (i = 0; i < c->n; i++) {
		const struct extres_coord_entry *e = &c->entries[i];

		if (!e->parsed)
			continue;
		x = &h->items[h->n];
		*x = (struct extres_holder){
			.pid = e->pid,
			.has_starttime = e->has_starttime,
			.starttime = e->starttime,
			.since = -1,
			.share_i = e->share_i,
			.share_n = e->share_n,
		};
		x->state = extres_coord_owner_state(e);
		x->resource = strdup(resource);
		x->key = strdup(e->key);
		x->lease = e->lease ? strdup(e->lease) : NULL;
		x->uuid = e->uuid ? strdup(e->uuid) : NULL;
		r = !x->resource || !x->key || (e->lease && !x->lease) ||
				    (e->uuid && !x->uuid) ?
			    -ENOMEM :
			    describe_owner(x, e, ctx,
					   h->n ? &h->items[h->n - 1] : NULL);
		/* Anyone who may write the file can write a line naming
		 * any process: it holds the device, but is no lease. */
		if (x->kind == EXTRES_HOLDER_LEASE &&
		    x->state == EXTRES_OWNER_LIVE &&
		    !extres_lease_line_proven(c->fd, e))
			x->kind = EXTRES_HOLDER_OTHER;
		if (r < 0) {
			holder_clear(x);
			return r;
		}
		h->n++;
	}
	return 0;
}

/* `s` (or "-" for NULL): any user chose these bytes (the file's, and a
 * command's name), and the view is lines of tab-separated UTF-8. */
static void put_field(FILE *f, const char *s)
{
	if (!s || !*s) {
		fputc('-', f);
		return;
	}
	extres_put_line_text(f, s, strlen(s));
}

static void format_since(int64_t since, char *buf, size_t size)
{
	time_t t = (time_t)since;
	struct tm tm;

	if (since < 0 || !gmtime_r(&t, &tm) ||
	    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, size, "-");
}

int extres_holders_text(const struct extres_holders *h, char **ret_text,
			size_t *ret_len)
{
	char *text = NULL, since[32];
	size_t len = 0, i;
	int r = 0;
	FILE *f;

	f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	for (i = 0; i < h->n; i++) {
		const struct extres_holder *x = &h->items[i];

		format_since(x->since, since, sizeof(since));
		put_field(f, x->resource);
		fputc('\t', f);
		put_field(f, x->key);
		fprintf(f, "\t%d\t", (int)x->pid);
		put_field(f, x->user);
		fputc('\t', f);
		put_field(f, x->command);
		fprintf(f, "\t%s\t%s\t", since,
			extres_holder_kind_name(x->kind));
		put_field(f, x->lease);
		fprintf(f, "\t%s\t", extres_coord_owner_state_name(x->state));
		if (x->share_n)
			fprintf(f, "%u/%u\n", x->share_i, x->share_n);
		else
			fputs("-\n", f);
	}
	r = extres_memstream_close(f, &text);
	if (r < 0)
		return r;
	*ret_text = text;
	*ret_len = len;
	return 0;
}

static void json_opt_string(struct extres_json *json, const char *key,
			    const char *s)
{
	extres_json_key(json, key);
	if (s)
		extres_json_string(json, s);
	else
		extres_json_null(json);
}

void extres_holders_json(struct extres_json *json,
			 const struct extres_holders *h)
{
	char since[32];
	size_t i;

	extres_json_begin_array(json);
	for (i = 0; h && i < h->n; i++) {
		const struct extres_holder *x = &h->items[i];

		format_since(x->since, since, sizeof(since));
		extres_json_begin_object(json);
		json_opt_string(json, "resource", x->resource);
		json_opt_string(json, "key", x->key);
		extres_json_key(json, "pid");
		extres_json_uint(json, (uint64_t)x->pid);
		extres_json_key(json, "uid");
		if (x->has_uid)
			extres_json_uint(json, x->uid);
		else
			extres_json_null(json);
		json_opt_string(json, "user", x->user);
		json_opt_string(json, "command", x->command);
		json_opt_string(json, "since", x->since < 0 ? NULL : since);
		json_opt_string(json, "kind", extres_holder_kind_name(x->kind));
		json_opt_string(json, "lease", x->lease);
		json_opt_string(json, "state",
				extres_coord_owner_state_name(x->state));
		extres_json_key(json, "share");
		if (x->share_n) {
			extres_json_begin_object(json);
			extres_json_key(json, "index");
			extres_json_uint(json, x->share_i);
			extres_json_key(json, "of");
			extres_json_uint(json, x->share_n);
			extres_json_end_object(json);
		} else {
			extres_json_null(json);
		}
		extres_json_end_object(json);
	}
	extres_json_end_array(json);
}
