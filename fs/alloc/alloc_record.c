/* SPDX-License-Identifier: MIT */
/*
 * An allocation's lines in its coordination file: recording them, putting
 * back those someone removed (the guard), and releasing them.
 */
#include "alloc/alloc_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "alloc/coord.h"
#include "host/infos.h"

/* Every candidate must carry a key that fits in one field of a line. */
int extres_alloc_check_keys(const struct extres_resource_config *res,
			    const char *key,
			    const struct extres_infos *candidates,
			    struct extres_err *err)
{
	const char *v;
	size_t i, j;

	for (i = 0; i < candidates->n; i++) {
		v = extres_info_get(&candidates->items[i], key);
		if (!v)
			return extres_err_set(
				err, EINVAL,
				"resource '%s': info %zu has no property '%s' (the coordination key)",
				res->name, i, key);
		if (!*v)
			return extres_err_set(
				err, EINVAL,
				"resource '%s': info %zu has an empty '%s' (the coordination key), which cannot be recorded in the coordination file",
				res->name, i, key);
		for (j = 0; v[j]; j++)
			if (extres_is_space(v[j]))
				return extres_err_set(
					err, EINVAL,
					"resource '%s': info %zu has '%s' = '%s', which contains whitespace and cannot be recorded in the coordination file",
					res->name, i, key, v);
	}
	return 0;
}

int extres_alloc_holds(const struct extres_allocation *a, const char *key)
{
	const char *v;
	size_t i;

	for (i = 0; a && i < a->n; i++) {
		v = extres_info_get(&a->infos[i], a->coordination_key);
		if (v && strcmp(v, key) == 0)
			return 1;
	}
	return 0;
}

/*
 * Whether `e` is one of `a`'s lines: its key, and its owner by PID and start
 * time, so that a process that reused our PID later keeps its lines. A
 * script's two-field line (Flink's format) with our PID is ours as well: the
 * PID is alive (it is us), so it cannot be anybody else's.
 */
static int is_our_line(const struct extres_allocation *a,
		       const struct extres_coord_entry *e)
{
	if (!e->parsed || e->pid != a->owner || !extres_alloc_holds(a, e->key))
		return 0;
	if (e->has_starttime)
		return e->starttime == a->owner_starttime;
	return a->recorded_by_driver;
}

int extres_alloc_release(struct extres_allocation *a, struct extres_err *err)
{
	return extres_alloc_release_except(a, NULL, err);
}

/* Whether `keep` holds `key` through the same lines as `a`. */
static int kept_by(const struct extres_allocation *a,
		   const struct extres_allocation *keep, const char *key)
{
	return keep && keep->coordination_file && keep->owner == a->owner &&
	       keep->owner_starttime == a->owner_starttime &&
	       strcmp(keep->coordination_file, a->coordination_file) == 0 &&
	       strcmp(keep->coordination_key, a->coordination_key) == 0 &&
	       extres_alloc_holds(keep, key);
}

int extres_alloc_release_except(struct extres_allocation *a,
				const struct extres_allocation *keep,
				struct extres_err *err)
{
	struct extres_coord *c = NULL;
	const struct extres_coord_entry *e;
	size_t i, removed = 0;
	int r;

	if (!a || a->released || !a->coordination_file) {
		if (a)
			a->released = 1;
		return 0;
	}
	r = extres_coord_lock_existing(a->coordination_file, a->lock_timeout_ms,
				       a->coordination_gid, &c, err);
	/* Nothing is recorded in a file that is not there. */
	if (r == -ENOENT) {
		a->released = 1;
		return 0;
	}
	if (r < 0)
		return extres_err_prefix(err, -r, "resource '%s'", a->resource);
	/* Key, pid and start time must all match, so that a process that
	 * reused our PID later keeps its lines. */
	for (i = c->n; i-- > 0;) {
		e = &c->entries[i];
		if (!is_our_line(a, e) || kept_by(a, keep, e->key))
			continue;
		extres_coord_remove(c, i);
		removed++;
	}
	if (removed) {
		r = extres_coord_write(c, err);
		if (r < 0)
			extres_err_prefix(err, -r, "resource '%s'",
					  a->resource);
	}
	if (r == 0)
		a->released = 1;
	extres_coord_close(c);
	return r;
}

int extres_alloc_unrecord(struct extres_allocation *a, struct extres_err *err)
{
	int released = a->released, r;

	a->released = 0;
	r = extres_alloc_release_except(a, NULL, err);
	a->released = released;
	return r;
}

int extres_alloc_record(const struct extres_allocation *a,
			struct extres_err *err)
{
	struct extres_coord *c = NULL;
	size_t i;
	int r;

	if (!a->coordination_file)
		return 0;
	r = extres_coord_lock(a->coordination_file, a->lock_timeout_ms,
			      a->coordination_gid, &c, err);
	if (r < 0)
		return extres_err_prefix(err, -r, "resource '%s'", a->resource);
	extres_coord_reclaim(c);
	for (i = 0; i < a->n && r == 0; i++) {
		const char *v =
			extres_info_get(&a->infos[i], a->coordination_key);

		if (v && !extres_coord_has_key(c, v))
			r = extres_coord_add_tagged(
				c, v, a->owner, a->owner_starttime, NULL,
				extres_info_uuid(&a->infos[i]));
	}
	if (r == 0)
		r = extres_coord_write(c, err);
	else
		r = extres_err_set(err, -r, "out of memory");
	extres_coord_close(c);
	return r;
}

/* Append "msg\n" to the malloc'd *text of *len bytes. 0 or -ENOMEM. */
static int append_line(char **text, size_t *len, const char *msg)
{
	size_t n = strlen(msg);
	char *grown = realloc(*text, *len + n + 2);

	if (!grown)
		return -ENOMEM;
	memcpy(grown + *len, msg, n);
	grown[*len + n] = '\n';
	grown[*len + n + 1] = '\0';
	*text = grown;
	*len += n + 1;
	return 0;
}

/* The info among `found` whose `key` property is `value`, or NULL. */
static const struct extres_info *found_info(const struct extres_infos *found,
					    const char *key, const char *value)
{
	const char *v;
	size_t i;

	for (i = 0; found && i < found->n; i++) {
		v = extres_info_get(&found->items[i], key);
		if (v && strcmp(v, value) == 0)
			return &found->items[i];
	}
	return NULL;
}

/*
 * Lines that name their device's uuid and whose key the driver now gives
 * to another device: the GPU that line's owner uses is not the one at that
 * index any more (one fell off the bus, the rest renumbered). Only live
 * owners count: a dead one's line is reclaimed by the next allocator.
 */
static int uuid_conflicts(const struct extres_allocation *a,
			  const struct extres_coord *c,
			  const struct extres_infos *found, char **text,
			  size_t *len)
{
	const struct extres_info *info;
	char who[320], *msg;
	const char *now;
	size_t k;
	int r = 0;

	for (k = 0; found && k < c->n && r == 0; k++) {
		const struct extres_coord_entry *e = &c->entries[k];

		if (!e->parsed || !e->uuid)
			continue;
		info = found_info(found, a->coordination_key, e->key);
		now = info ? extres_info_uuid(info) : NULL;
		if (!now || strcmp(now, e->uuid) == 0 ||
		    extres_coord_owner_state(e) != EXTRES_OWNER_LIVE)
			continue;
		extres_proc_describe(e->pid, who, sizeof(who));
		if (asprintf(
			    &msg,
			    "resource '%s': device %s %s recorded as %s=%s by %s now names %s=%s in coordination file %s",
			    a->resource, a->coordination_key, e->key,
			    EXTRES_UUID_KEY, e->uuid, who, EXTRES_UUID_KEY, now,
			    a->coordination_file) < 0)
			return -ENOMEM;
		r = append_line(text, len, msg);
		free(msg);
	}
	return r;
}

int extres_alloc_guard(struct extres_allocation *a,
		       const struct extres_infos *found, char **ret_conflicts,
		       size_t *ret_restored, struct extres_alloc_seen *ret_seen,
		       struct extres_err *err)
{
	struct extres_coord *c = NULL;
	char *conflicts = NULL;
	size_t restored = 0, len = 0, i;
	struct extres_err one;
	const char *v;
	pid_t holder;
	int r;

	*ret_conflicts = NULL;
	*ret_restored = 0;
	if (ret_seen)
		memset(ret_seen, 0, sizeof(*ret_seen));
	if (a->released || !a->coordination_file)
		return 0;
	/* Created again if somebody removed it: our lines belong there. */
	r = extres_coord_lock(a->coordination_file, a->lock_timeout_ms,
			      a->coordination_gid, &c, err);
	if (r < 0)
		return extres_err_prefix(err, -r, "resource '%s'", a->resource);
	/* Empty when it cannot be read: the caller takes it as not looked
	 * at. */
	if (ret_seen)
		(void)extres_file_state_take(c->fd, EXTRES_COORD_MAX_SIZE,
					     &ret_seen->found);
	for (i = 0; i < a->n; i++) {
		v = extres_info_get(&a->infos[i], a->coordination_key);
		if (!v)
			continue;
		holder = extres_coord_other_holder(c, v, a->owner,
						   a->owner_starttime);
		if (holder) {
			extres_alloc_held_error(a->resource,
						a->coordination_key, v, holder,
						a->coordination_file, &one);
			if (append_line(&conflicts, &len, one.msg) < 0) {
				r = extres_err_set(err, ENOMEM,
						   "out of memory");
				goto out;
			}
			continue;
		}
		if (extres_coord_recorded_for(c, v, a->owner,
					      a->owner_starttime) ||
		    (a->recorded_by_driver &&
		     extres_coord_has_line_of(c, v, a->owner)))
			continue;
		r = extres_coord_add_tagged(c, v, a->owner, a->owner_starttime,
					    NULL,
					    extres_info_uuid(&a->infos[i]));
		if (r < 0) {
			r = extres_err_set(err, -r, "out of memory");
			goto out;
		}
		restored++;
	}
	if (restored) {
		r = extres_coord_write(c, err);
		if (r < 0) {
			extres_err_prefix(err, -r, "resource '%s'",
					  a->resource);
			goto out;
		}
	}
	if (uuid_conflicts(a, c, found, &conflicts, &len) < 0) {
		r = extres_err_set(err, ENOMEM, "out of memory");
		goto out;
	}
	*ret_conflicts = conflicts;
	conflicts = NULL;
	*ret_restored = restored;
	if (ret_seen)
		(void)extres_file_state_take(c->fd, EXTRES_COORD_MAX_SIZE,
					     &ret_seen->left);
out:
	if (r < 0 && ret_seen)
		extres_file_state_clear(&ret_seen->found);
	free(conflicts);
	extres_coord_close(c);
	return r;
}
