/* SPDX-License-Identifier: MIT */
/*
 * Following the coordination files of the resources we serve, to show who
 * holds each device (.meta/holders, extres.json's "holders").
 *
 * Runs on the control thread only: the files are read under their lock,
 * with a deadline, never in a request handler. A change the guard's
 * inotify descriptor reports arms one re-read (the holders timer) 50 ms
 * later, however many changes follow meanwhile, so a burst of writes costs
 * one rebuild of the tree; the tree is published only when the text
 * changed.
 * An owner's exit changes nothing in the file, so while holders other than
 * this daemon are live their processes are looked at every
 * HOLDERS_PROBE_MS, and a change of state re-reads the files. Nor does an
 * exec, which renames the owner: extresctl run records its command's
 * process before it execs, so a name that changed re-reads them too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc/lease_line.h"
#include "base/log.h"
#include "base/text.h"
#include "daemon/extresd.h"
#include "os/proc.h"

/* How often live owners are looked at. */
#define HOLDERS_PROBE_MS 1000
/* The first look after a read comes sooner: a holder that was just
 * recorded often execs at once (extresctl run's command, once the mount
 * shows its lease), and shows its old name until then. */
#define HOLDERS_FIRST_PROBE_MS 100
/* The longest wait for a file's lock here: someone holding it forever must
 * not hold up reloads for long, and the next try comes soon anyway. */
#define HOLDERS_LOCK_MS 1000u
#define HOLDERS_RETRY_MS 5000

/* Arm timer `s` (NULL: no loop yet) `delay_ms` from now; -1 disarms. */
static void arm(struct extres_source *s, long long delay_ms)
{
	if (!s)
		return;
	if (delay_ms < 0)
		extres_source_set_time(s, -1);
	else
		extres_source_set_delay(s, delay_ms);
}

/* The coordination file resource i follows: its allocation's, or a
 * pool's, which records nothing of ours. */
static const char *followed(const struct extresd *d, size_t i)
{
	const struct extres_allocation *a = d->allocs->items[i];

	return a->coordination_file ? a->coordination_file :
				      d->config->resources[i].coordination_file;
}

void extresd_watch_files(struct extresd *d)
{
	const char **files;
	struct extres_err err;
	size_t i, n = d->allocs ? d->allocs->n : 0;

	files = calloc(n ? n : 1, sizeof(*files));
	if (!files) {
		extres_log(EXTRES_LOG_ERR, "out of memory");
		return;
	}
	for (i = 0; i < n; i++)
		files[i] = followed(d, i);
	if (extres_guard_watch(&d->guard, files, n, &err) < 0)
		extres_log(EXTRES_LOG_WARNING, "%s", err.msg);
	free(files);
}

/* Log a failure once, not at every retry; NULL: it is over. */
static void note_error(struct extresd *d, const char *msg)
{
	if (extres_same_text(msg, d->holders_error))
		return;
	if (msg)
		extres_log(EXTRES_LOG_WARNING, "cannot read the holders: %s",
			   msg);
	free(d->holders_error);
	d->holders_error = msg ? strdup(msg) : NULL;
}

static int read_all(struct extresd *d, struct extres_holders *h,
		    struct extres_err *err)
{
	struct extres_file_state found = { 0 }, left = { 0 };
	int known;
	struct extres_holders_ctx ctx = {
		.self = d->owner,
		.ticks = sysconf(_SC_CLK_TCK),
	};
	struct extres_coord *c;
	const char *file;
	unsigned timeout;
	size_t i;
	int r = 0;

	if (extres_proc_starttime(d->owner, &ctx.self_starttime) < 0)
		ctx.self_starttime = 0;
	if (extres_proc_boot_time(&ctx.boot_time) < 0)
		ctx.boot_time = 0;
	for (i = 0; r == 0 && i < d->allocs->n; i++) {
		file = followed(d, i);
		if (!file)
			continue;
		timeout = d->config->lock_timeout_ms < HOLDERS_LOCK_MS ?
				  d->config->lock_timeout_ms :
				  HOLDERS_LOCK_MS;
		r = extres_coord_lock_existing(
			file, timeout, d->config->coordination_gid, &c, err);
		if (r == -ENOENT) {
			/* Nobody took anything yet. */
			r = 0;
			continue;
		}
		if (r < 0)
			break;
		/* Someone else's change that the guard has not checked yet
		 * stays unseen here, so that it does (extresd_guard_settle()):
		 * only our own writes are marked as seen. */
		known = extres_file_state_take(c->fd, EXTRES_COORD_MAX_SIZE,
					       &found) == 0 &&
			extres_guard_known(&d->guard, file, &found);
		extres_file_state_clear(&found);
		/* What cannot be written back now is tried at the next
		 * change: the holders are shown all the same. */
		if (extresd_keep_leases(&d->holders,
					d->allocs->items[i]->resource, c,
					err) < 0)
			extres_log(EXTRES_LOG_WARNING, "%s", err->msg);
		r = extres_holders_add_file(h, d->allocs->items[i]->resource, c,
					    &ctx);
		/* As we left it: the lease lines kept are our own writes. */
		if (known && extres_file_state_take(
				     c->fd, EXTRES_COORD_MAX_SIZE, &left) == 0)
			extres_guard_seen(&d->guard, file, &left);
		extres_file_state_clear(&left);
		extres_coord_close(c);
		if (r < 0)
			extres_err_set(err, -r, "out of memory");
	}
	return r;
}

/* Look at the live owners again: 1 when one is gone, was replaced or
 * has another name. */
static int owners_changed(const struct extres_holders *h, int *ret_watch)
{
	char state, comm[EXTRES_PROC_COMM_SIZE];
	uint64_t starttime;
	int named;
	size_t i;

	*ret_watch = 0;
	for (i = 0; i < h->n; i++) {
		const struct extres_holder *x = &h->items[i];

		if (x->state != EXTRES_OWNER_LIVE ||
		    x->kind == EXTRES_HOLDER_DAEMON)
			continue;
		*ret_watch = 1;
		/* The name first: a start time that still matches after it
		 * proves that the name was the holder's. */
		named = extres_proc_comm(x->pid, comm, sizeof(comm)) == 0;
		if (extres_proc_stat(x->pid, &state, &starttime) < 0 ||
		    state == 'Z' || state == 'X' ||
		    (x->has_starttime && starttime != x->starttime))
			return 1;
		if (named &&
		    !extres_same_text(comm[0] ? comm : NULL, x->command))
			return 1;
	}
	return 0;
}

int extresd_holders_read(struct extresd *d)
{
	struct extres_holders h = { 0 };
	struct extres_err err;
	char *text = NULL;
	size_t len = 0;
	int r, watch;

	arm(d->src.holders, -1);
	r = read_all(d, &h, &err);
	extresd_guard_settle(d);
	if (r == -EINTR) {
		/* A stop: the control thread ends next. */
		extres_holders_clear(&h);
		return r;
	}
	if (r < 0) {
		note_error(d, err.msg);
		extres_holders_clear(&h);
		arm(d->src.holders, HOLDERS_RETRY_MS);
		return r;
	}
	note_error(d, NULL);
	r = extres_holders_text(&h, &text, &len);
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "cannot show the holders: %s",
			   strerror(-r));
		extres_holders_clear(&h);
		return r;
	}
	owners_changed(&h, &watch);
	arm(d->src.probe, watch ? HOLDERS_FIRST_PROBE_MS : -1);
	extres_holders_clear(&d->holders);
	d->holders = h;
	if (d->holders_text && len == d->holders_len &&
	    memcmp(text, d->holders_text, len) == 0) {
		free(text);
		return 0;
	}
	free(d->holders_text);
	d->holders_text = text;
	d->holders_len = len;
	return 1;
}

void extresd_holders_schedule(struct extresd *d, long long delay_ms)
{
	if (d->src.holders)
		extres_source_set_delay_min(d->src.holders, delay_ms);
}

static void on_holders(struct extres_source *s, void *ctx)
{
	struct extresd *d = ctx;

	/* Also what waited for this read (extresd_changed()). */
	if (extresd_holders_read(d) > 0 || d->dirty)
		extresd_changed(d);
}

static void on_probe(struct extres_source *s, void *ctx)
{
	struct extresd *d = ctx;
	int watch;

	if (!owners_changed(&d->holders, &watch)) {
		arm(s, watch ? HOLDERS_PROBE_MS : -1);
		return;
	}
	on_holders(d->src.holders, d);
	/* A holder that renames itself over and over re-reads the files
	 * once a probe period, not at each first probe. */
	if (extres_source_time(s) >= 0)
		arm(s, HOLDERS_PROBE_MS);
}

int extresd_holders_add(struct extresd *d)
{
	int r = extres_loop_add_timer(d->loop, on_holders, d, &d->src.holders);

	if (r == 0)
		r = extres_loop_add_timer(d->loop, on_probe, d, &d->src.probe);
	return r;
}

/* Whether holder x is a live lease whose id names its owner: only such
 * an id is a directory name, and only such a lease can be found by a
 * process's PID and start time. */
static int lease_of(const struct extres_holder *x)
{
	uint64_t starttime;
	pid_t pid;

	return x->kind == EXTRES_HOLDER_LEASE &&
	       x->state == EXTRES_OWNER_LIVE && x->lease &&
	       extres_lease_id_parse(x->lease, &pid, &starttime) == 0 &&
	       pid == x->pid &&
	       (!x->has_starttime || starttime == x->starttime);
}

/* The info among `infos` (n of them) whose `ckey` is `key`, or NULL. */
static const struct extres_info *find_info(const struct extres_info *infos,
					   size_t n, const char *ckey,
					   const char *key)
{
	const char *v;
	size_t i;

	for (i = 0; i < n; i++) {
		v = extres_info_get(&infos[i], ckey);
		if (v && strcmp(v, key) == 0)
			return &infos[i];
	}
	return NULL;
}

/* Whether `info` may be the device a line recording `uuid` (or none)
 * was written for. */
static int same_uuid(const struct extres_info *info, const char *uuid)
{
	const char *now = info ? extres_info_uuid(info) : NULL;

	return !uuid || !now || strcmp(now, uuid) == 0;
}

/* What resource k knows of device `key`, recorded as `uuid` (or none): the
 * info it serves, else the one its driver last found (a lease beside a
 * daemon with its own amount holds devices the daemon discovered and did
 * not take), or NULL. Never one with another uuid: after a renumbering the
 * key names another device, and the holder does not use that one. */
static const struct extres_info *known_info(const struct extres_allocations *as,
					    size_t k, const char *key,
					    const char *uuid)
{
	const struct extres_allocation *a = as->items[k];
	const struct extres_info *info;

	info = find_info(a->infos, a->n, a->coordination_key, key);
	if (!same_uuid(info, uuid))
		info = NULL;
	if (!info && as->found[k])
		info = find_info(as->found[k]->items, as->found[k]->n,
				 a->coordination_key, key);
	return same_uuid(info, uuid) ? info : NULL;
}

/* The property a share's device shows under self/: which share of how
 * many (alloc/share.h). */
static char share_key[] = "share";

/* Info `in` of share holder `x`, with its `share` property added (unless
 * the driver has one). 0 or -ENOMEM. */
static int add_share(struct extresd_leases *l, size_t i,
		     const struct extres_holder *x, struct extres_info *in)
{
	struct extres_property *p;
	char *text;
	int len;

	if (!x->share_n || extres_info_get(in, share_key))
		return 0;
	len = asprintf(&text, "%u/%u", x->share_i, x->share_n);
	if (len < 0)
		return -ENOMEM;
	p = calloc(in->n_props + 1, sizeof(*p));
	if (!p) {
		free(text);
		return -ENOMEM;
	}
	memcpy(p, in->props, in->n_props * sizeof(*p));
	p[in->n_props] =
		(struct extres_property){ share_key, text, (size_t)len };
	l->share_props[i] = p;
	l->share_text[i] = text;
	in->props = p;
	in->n_props++;
	return 0;
}

const struct extres_info *extresd_holder_info(const struct extresd *d, size_t k,
					      const struct extres_holder *x)
{
	return known_info(d->allocs, k, x->key, x->uuid);
}

int extresd_leases_build(const struct extresd *d, struct extresd_leases *l)
{
	const struct extres_holders *h = &d->holders;
	size_t n = h->n ? h->n : 1, n_res = 0, n_infos = 0, i, j, k;
	const struct extres_allocation *a;
	const struct extres_info *info;
	unsigned char *done;

	memset(l, 0, sizeof(*l));
	l->items = calloc(n, sizeof(*l->items));
	l->res = calloc(n, sizeof(*l->res));
	l->infos = calloc(n, sizeof(*l->infos));
	l->props = calloc(n, sizeof(*l->props));
	l->share_props = calloc(n, sizeof(*l->share_props));
	l->share_text = calloc(n, sizeof(*l->share_text));
	l->n_slots = n;
	done = calloc(n, 1);
	if (!l->items || !l->res || !l->infos || !l->props || !l->share_props ||
	    !l->share_text || !done) {
		free(done);
		extresd_leases_free(l);
		return -ENOMEM;
	}
	/* Leases in the order first seen; in each, resources in config
	 * order, and devices in the file's order: every lease's resources,
	 * and every resource's infos, are runs of the arrays. */
	for (i = 0; i < h->n; i++) {
		struct extres_snapshot_lease *le = &l->items[l->n];
		const char *id = h->items[i].lease;

		if (done[i] || !lease_of(&h->items[i]))
			continue;
		le->id = id;
		le->res = &l->res[n_res];
		for (k = 0; k < d->allocs->n; k++) {
			struct extres_snapshot_resource *sr = &l->res[n_res];

			a = d->allocs->items[k];
			*sr = (struct extres_snapshot_resource){
				.name = a->resource,
				.infos = &l->infos[n_infos],
			};
			for (j = i; j < h->n; j++) {
				const struct extres_holder *x = &h->items[j];
				struct extres_info *in = &l->infos[n_infos];

				if (done[j] || !lease_of(x) ||
				    strcmp(x->lease, id) != 0 ||
				    strcmp(x->resource, a->resource) != 0)
					continue;
				done[j] = 1;
				info = known_info(d->allocs, k, x->key,
						  x->uuid);
				if (info) {
					*in = *info;
				} else {
					l->props[n_infos] =
						(struct extres_property){
							a->coordination_key,
							x->key,
							strlen(x->key),
						};
					in->n_props = 1;
					in->props = &l->props[n_infos];
				}
				if (add_share(l, n_infos, x, in) < 0) {
					free(done);
					extresd_leases_free(l);
					return -ENOMEM;
				}
				n_infos++;
				sr->n_infos++;
			}
			if (sr->n_infos) {
				le->n_res++;
				n_res++;
			}
		}
		l->n++;
	}
	free(done);
	return 0;
}

void extresd_leases_free(struct extresd_leases *l)
{
	size_t i;

	/* Every info has a slot: as many as holders, at least one. */
	for (i = 0; l->share_props && i < l->n_slots; i++) {
		free(l->share_props[i]);
		free(l->share_text[i]);
	}
	free(l->share_props);
	free(l->share_text);
	free(l->items);
	free(l->res);
	free(l->infos);
	free(l->props);
	memset(l, 0, sizeof(*l));
}

void extresd_holders_free(struct extresd *d)
{
	extres_holders_clear(&d->holders);
	free(d->holders_text);
	free(d->holders_error);
	d->holders_text = NULL;
	d->holders_error = NULL;
}
