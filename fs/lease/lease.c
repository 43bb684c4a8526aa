/* SPDX-License-Identifier: MIT */
/* Taking a lease: the queues, then the coordination files, all locked at
 * once, and all or nothing. */
#include "lease/lease.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "alloc/alloc_internal.h"
#include "lease/lease_internal.h"
#include "alloc/share.h"
#include "os/locks.h"
#include "os/proc.h"

/* How many holders a message names per resource; the rest are counted. */
#define MAX_NAMED 8

int extres_lease_check(const struct extres_lease_want *wants, size_t n,
		       struct extres_err *err)
{
	size_t i, j;
	int r;

	for (i = 0; i < n; i++) {
		const struct extres_resource_config *res = wants[i].res;
		const struct extres_infos *c = wants[i].candidates;

		for (j = 0; j < i; j++)
			if (strcmp(wants[j].res->name, res->name) == 0)
				return extres_err_set(
					err, EINVAL,
					"resource '%s' is named twice",
					res->name);
		if (!res->coordination_file)
			return extres_err_set(
				err, EINVAL,
				"resource '%s' has no coordination-file: a lease is taken only through one (set external-resource.%s.coordination-file)",
				res->name, res->name);
		if (wants[i].n < 1 || wants[i].n > c->n)
			return extres_err_set(err, ERANGE,
					      "resource '%s': wanted %" PRIu64
					      ", but it has %zu device%s",
					      res->name, wants[i].n, c->n,
					      c->n == 1 ? "" : "s");
		if (wants[i].share && (wants[i].n != 1 || res->replicas < 2))
			return extres_err_set(
				err, EINVAL,
				"resource '%s' is not shared (external-resource.%s.replicas is %u): ask for whole devices",
				res->name, res->name, res->replicas);
		r = extres_alloc_check_keys(res, res->coordination_key, c, err);
		if (r < 0)
			return r;
	}
	return 0;
}

void extres_lease_busy_clear(struct extres_lease_busy *b)
{
	free(b->warning);
	free(b->text);
	free(b->pids);
	memset(b, 0, sizeof(*b));
}

void extres_lease_free(struct extres_lease *l)
{
	size_t i;

	if (!l)
		return;
	for (i = 0; i < l->n; i++)
		extres_allocation_free(l->parts[i]);
	free(l->parts);
	free(l->id);
	free(l);
}

/* What an attempt found in the way, as it is collected. */
struct obstacles {
	FILE *text;
	char *buf;
	size_t len;
	pid_t *pids;
	size_t n_pids;
	int any;
	int relook;
};

static void watch_pid(struct obstacles *o, pid_t pid)
{
	size_t i;

	for (i = 0; i < o->n_pids; i++)
		if (o->pids[i] == pid)
			return;
	if (o->n_pids < EXTRES_LEASE_MAX_WATCH)
		o->pids[o->n_pids++] = pid;
}

/* "PID 12 (cmd)" */
static void name_holder(struct obstacles *o, pid_t pid)
{
	char who[320];

	extres_proc_describe(pid, who, sizeof(who));
	fputs(who, o->text);
}

/* A queue line's ticket, or -1 for a line that has none. */
static int ticket_of(const struct extres_coord_entry *e, uint64_t *ret)
{
	if (!e->parsed)
		return -1;
	return extres_parse_dec(e->key, strlen(e->key), UINT64_MAX / 2, ret);
}

/* Whether line e of queue c is a waiter that counts (with its ticket):
 * one that its process proves. */
static int counts(const struct extres_coord *c,
		  const struct extres_coord_entry *e, uint64_t *ret)
{
	return ticket_of(e, ret) == 0 && extres_lease_waiter_proven(c->fd, e);
}

/* Whether process `pid` is stopped (Ctrl-Z, SIGSTOP, a tracer). */
static int stopped(pid_t pid)
{
	char state = 0;

	return extres_proc_stat(pid, &state, NULL) == 0 &&
	       (state == 'T' || state == 't');
}

/* Whether waiter a (ticket, pid) comes before b. */
static int before(uint64_t ta, pid_t pa, uint64_t tb, pid_t pb)
{
	return ta < tb || (ta == tb && pa < pb);
}

/*
 * The queues' part of an attempt, all of them locked: drop the lines that
 * no live waiter proves, put `w` (NULL: a run that does not wait) in line
 * where it is not, and note every running waiter ahead of it (stopped
 * ones are passed over). 0 or -ENOMEM.
 */
static int queue_step(struct lease_files *q,
		      const struct extres_lease_waiter *w, struct obstacles *o)
{
	uint64_t mine = 0, max = 0, t;
	size_t i, k, ahead = 0, named = 0;
	int missing = 0, found;

	for (i = 0; i < q->n; i++) {
		struct extres_coord *c = q->items[i].c;

		if (!c)
			continue;
		found = 0;
		for (k = c->n; k-- > 0;) {
			const struct extres_coord_entry *e = &c->entries[k];

			if (w && extres_lease_is_waiter_line(e, w) &&
			    ticket_of(e, &t) == 0) {
				found = 1;
				mine = t;
			} else if (!counts(c, e, &t)) {
				/* Forged, or its waiter is gone. */
				if (w) {
					extres_coord_remove(c, k);
					q->items[i].dirty = 1;
				}
				continue;
			}
			if (t > max)
				max = t;
		}
		missing |= !found;
	}
	/* Put back in line everywhere with one ticket, later than anyone's:
	 * the same order in every queue. */
	for (i = 0; w && missing && i < q->n; i++) {
		struct extres_coord *c = q->items[i].c;
		char key[24];

		for (k = c->n; k-- > 0;)
			if (extres_lease_is_waiter_line(&c->entries[k], w))
				extres_coord_remove(c, k);
		snprintf(key, sizeof(key), "%" PRIu64, max + 1);
		if (extres_coord_add_lease(c, key, w->pid, w->starttime,
					   EXTRES_LEASE_WAITING) < 0)
			return -ENOMEM;
		q->items[i].dirty = 1;
		mine = max + 1;
	}
	for (i = 0; i < q->n; i++) {
		const struct extres_coord *c = q->items[i].c;

		for (k = 0; c && k < c->n; k++) {
			const struct extres_coord_entry *e = &c->entries[k];

			if ((w && extres_lease_is_waiter_line(e, w)) ||
			    !counts(c, e, &t) ||
			    (w && !before(t, e->pid, mine, w->pid)) ||
			    stopped(e->pid))
				continue;
			ahead++;
			o->relook = 1;
			watch_pid(o, e->pid);
			if (named++ >= MAX_NAMED)
				continue;
			fputs(named == 1 ? "earlier waiters in the queue: " :
					   ", ",
			      o->text);
			name_holder(o, e->pid);
		}
	}
	if (ahead) {
		if (named > MAX_NAMED)
			fprintf(o->text, ", and %zu more", ahead - MAX_NAMED);
		fputc('\n', o->text);
		o->any = 1;
	}
	return 0;
}

/* Name the live holders of the candidates of `want`, which came short. */
static void note_holders(const struct extres_lease_want *want,
			 const struct extres_coord *c, const char *lease,
			 size_t picked, struct obstacles *o)
{
	const char *key = want->res->coordination_key, *v;
	size_t i, k, named = 0, held = 0;

	if (want->share)
		fprintf(o->text,
			"resource '%s': wanted a share (%u per device), found none free on %zu devices (coordination file %s)",
			want->res->name, want->res->replicas,
			want->candidates->n, want->res->coordination_file);
	else
		fprintf(o->text,
			"resource '%s': wanted %" PRIu64
			", found %zu free of %zu (coordination file %s)",
			want->res->name, want->n, picked, want->candidates->n,
			want->res->coordination_file);
	for (i = 0; i < want->candidates->n; i++) {
		v = extres_info_get(&want->candidates->items[i], key);
		for (k = 0; k < c->n; k++) {
			const struct extres_coord_entry *e = &c->entries[k];

			/* Lines added by this attempt are not holders. */
			if (!e->parsed || strcmp(e->key, v) != 0 ||
			    (e->lease && strcmp(e->lease, lease) == 0))
				continue;
			held++;
			watch_pid(o, e->pid);
			if (named++ >= MAX_NAMED)
				continue;
			fprintf(o->text, "%s%s %s by ",
				named == 1 ? "; held: " : ", ", key, v);
			name_holder(o, e->pid);
		}
	}
	if (named > MAX_NAMED)
		fprintf(o->text, ", and %zu more", held - MAX_NAMED);
	for (i = 0, k = 0; i < want->candidates->n; i++)
		k += !extres_info_healthy(&want->candidates->items[i]);
	if (k)
		fprintf(o->text, "; %zu not healthy (%s)", k,
			EXTRES_HEALTH_KEY);
	fputc('\n', o->text);
	o->any = 1;
}

/* A new allocation for `want` of the candidates `picked`. */
static int new_part(const struct extres_lease_want *want, const size_t *picked,
		    unsigned share_i, pid_t owner, uint64_t starttime,
		    unsigned timeout_ms, struct extres_allocation **ret)
{
	struct extres_allocation *a = calloc(1, sizeof(*a));
	size_t i;

	if (!a)
		return -ENOMEM;
	if (share_i) {
		a->share_i = share_i;
		a->share_n = want->res->replicas;
	}
	a->owner = owner;
	a->owner_starttime = starttime;
	a->lock_timeout_ms = timeout_ms;
	a->coordination_gid = want->res->coordination_gid;
	a->resource = strdup(want->res->name);
	a->coordination_file = strdup(want->res->coordination_file);
	a->coordination_key = strdup(want->res->coordination_key);
	a->infos = calloc(want->n, sizeof(*a->infos));
	if (!a->resource || !a->coordination_file || !a->coordination_key ||
	    !a->infos ||
	    extres_driver_info_copy(&want->candidates->driver, &a->driver) < 0)
		goto fail;
	for (i = 0; i < want->n; i++) {
		if (extres_info_copy(&want->candidates->items[picked[i]],
				     &a->infos[i]) < 0)
			goto fail;
		a->n++;
	}
	*ret = a;
	return 0;
fail:
	extres_allocation_free(a);
	return -ENOMEM;
}

/*
 * The coordination files' part, all of them locked: pick every want's
 * devices, recording each pick in memory at once so that a later want on
 * the same file cannot pick it again. Fills `picked` (per want, want->n
 * candidate numbers); 1 when every want got its devices, 0 when one came
 * short (noted in `o`), or -ENOMEM.
 */
static int pick_step(const struct extres_lease_want *wants, size_t n,
		     struct lease_files *cf, pid_t owner, uint64_t starttime,
		     const char *lease, size_t **picked, unsigned *shares,
		     struct obstacles *o)
{
	size_t i, j, got;
	int all = 1;

	for (i = 0; i < cf->n; i++)
		if (extres_coord_reclaim(cf->items[i].c))
			cf->items[i].dirty = 1;
	for (i = 0; i < n; i++) {
		struct extres_coord *c = cf->items[cf->of_want[i]].c;
		const char *key = wants[i].res->coordination_key, *v;

		got = 0;
		if (wants[i].share &&
		    extres_share_pick(c, wants[i].candidates, key,
				      wants[i].res->replicas, &j, &shares[i])) {
			v = extres_info_get(&wants[i].candidates->items[j],
					    key);
			if (extres_coord_add_share(
				    c, v, owner, starttime, lease,
				    extres_info_uuid(
					    &wants[i].candidates->items[j]),
				    shares[i], wants[i].res->replicas) < 0)
				return -ENOMEM;
			picked[i][got++] = j;
		}
		for (j = 0; !wants[i].share && j < wants[i].candidates->n &&
			    got < wants[i].n;
		     j++) {
			v = extres_info_get(&wants[i].candidates->items[j],
					    key);
			if (extres_coord_has_key(c, v) ||
			    !extres_info_healthy(
				    &wants[i].candidates->items[j]))
				continue;
			if (extres_coord_add_tagged(
				    c, v, owner, starttime, lease,
				    extres_info_uuid(
					    &wants[i].candidates->items[j])) <
			    0)
				return -ENOMEM;
			picked[i][got++] = j;
		}
		if (got < wants[i].n) {
			note_holders(&wants[i], c, lease, got, o);
			all = 0;
		}
		cf->items[cf->of_want[i]].dirty = 1;
	}
	return all;
}

static int new_lease(const struct extres_lease_want *wants, size_t n,
		     pid_t owner, uint64_t starttime, unsigned timeout_ms,
		     char *id, size_t **picked, const unsigned *shares,
		     struct extres_lease **ret)
{
	struct extres_lease *l = calloc(1, sizeof(*l));
	size_t i;

	if (!l)
		return -ENOMEM;
	l->id = id;
	l->owner = owner;
	l->starttime = starttime;
	l->parts = calloc(n ? n : 1, sizeof(*l->parts));
	if (!l->parts)
		goto fail;
	for (i = 0; i < n; i++) {
		if (new_part(&wants[i], picked[i], shares[i], owner, starttime,
			     timeout_ms, &l->parts[i]) < 0)
			goto fail;
		l->n++;
	}
	*ret = l;
	return 0;
fail:
	l->id = NULL;
	extres_lease_free(l);
	return -ENOMEM;
}

static size_t **picked_new(const struct extres_lease_want *wants, size_t n)
{
	size_t **p = calloc(n ? n : 1, sizeof(*p)), i;

	for (i = 0; p && i < n; i++) {
		p[i] = calloc(wants[i].n ? wants[i].n : 1, sizeof(**p));
		if (!p[i]) {
			while (i-- > 0)
				free(p[i]);
			free(p);
			return NULL;
		}
	}
	return p;
}

static void picked_free(size_t **p, size_t n)
{
	size_t i;

	for (i = 0; p && i < n; i++)
		free(p[i]);
	free(p);
}

int extres_lease_try(const struct extres_lease_want *wants, size_t n,
		     pid_t owner, uint64_t starttime,
		     const struct extres_lease_waiter *waiter,
		     unsigned lock_timeout_ms, struct extres_lease **ret,
		     struct extres_lease_busy *busy, struct extres_err *err)
{
	struct lease_files q = { 0 }, cf = { 0 };
	struct obstacles o = { 0 };
	struct extres_err warn;
	size_t **picked = NULL, i;
	unsigned *shares = calloc(n ? n : 1, sizeof(*shares));
	char *id = NULL;
	int r;

	memset(busy, 0, sizeof(*busy));
	o.pids = calloc(EXTRES_LEASE_MAX_WATCH, sizeof(*o.pids));
	o.text = open_memstream(&o.buf, &o.len);
	picked = picked_new(wants, n);
	if (!o.pids || !o.text || !picked || !shares ||
	    extres_lease_id(owner, starttime, &id) < 0) {
		r = extres_err_set(err, ENOMEM, "out of memory");
		goto out;
	}
	r = extres_lease_files_init(&q, wants, n, 1, err);
	if (r == 0)
		r = extres_lease_files_init(&cf, wants, n, 0, err);
	for (i = 0; r == 0 && waiter && i < q.n && i < waiter->n_fds; i++)
		q.items[i].keep = &waiter->fds[i];
	/* Queues first, then coordination files: the one order. */
	warn.msg[0] = '\0';
	if (r == 0)
		r = extres_lease_files_lock(&q, waiter != NULL, lock_timeout_ms,
					    err, waiter ? NULL : &warn);
	if (warn.msg[0] &&
	    asprintf(
		    &busy->warning,
		    "%s; going on without the queue (a run that waits cannot use it)",
		    warn.msg) < 0) {
		busy->warning = NULL;
		r = extres_err_set(err, ENOMEM, "out of memory");
	}
	if (r < 0)
		goto out;
	/* Proven before the line is there for anyone to see: taken under
	 * the queue's lock. A byte someone else write-locks leaves the
	 * line unproven: the others then pass it over, no worse. */
	for (i = 0; waiter && i < q.n; i++)
		if (q.items[i].c)
			extres_lock_proof_take(q.items[i].c->fd,
					       EXTRES_LEASE_WAITER_PROOF);
	if (queue_step(&q, waiter, &o) < 0) {
		r = extres_err_set(err, ENOMEM, "out of memory");
		goto out;
	}
	if (!o.any) {
		r = extres_lease_files_lock(&cf, 1, lock_timeout_ms, err, NULL);
		if (r < 0)
			goto out;
		r = pick_step(wants, n, &cf, owner, starttime, id, picked,
			      shares, &o);
		if (r < 0) {
			r = extres_err_set(err, ENOMEM, "out of memory");
			goto out;
		}
	}
	if (o.any) {
		/* Only the waiter's place in line is written. */
		r = extres_lease_files_write(&q, err);
		if (r < 0)
			goto out;
		fclose(o.text);
		o.text = NULL;
		busy->text = o.buf;
		busy->pids = o.pids;
		busy->n_pids = o.n_pids;
		busy->relook = o.relook;
		o.buf = NULL;
		o.pids = NULL;
		r = -EBUSY;
		goto out;
	}
	r = new_lease(wants, n, owner, starttime, lock_timeout_ms, id, picked,
		      shares, ret);
	if (r < 0) {
		r = extres_err_set(err, ENOMEM, "out of memory");
		goto out;
	}
	id = NULL;
	r = extres_lease_files_write(&cf, err);
	if (r < 0) {
		extres_lease_free(*ret);
		*ret = NULL;
		goto out;
	}
	/* Taken: out of every line. A failure here leaves a line that
	 * names this waiter, which ends soon and is then dropped. */
	for (i = 0; waiter && i < q.n; i++) {
		struct extres_coord *c = q.items[i].c;
		size_t k;

		for (k = c->n; k-- > 0;)
			if (extres_lease_is_waiter_line(&c->entries[k],
							waiter)) {
				extres_coord_remove(c, k);
				q.items[i].dirty = 1;
			}
	}
	extres_lease_files_write(&q, NULL);
out:
	/* The coordination files are unlocked first: a lease taken holds
	 * the queues no longer than it must. */
	extres_lease_files_clear(&cf);
	extres_lease_files_clear(&q);
	if (o.text)
		fclose(o.text);
	free(o.buf);
	free(o.pids);
	picked_free(picked, n);
	free(shares);
	free(id);
	return r;
}
