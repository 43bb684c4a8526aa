/* SPDX-License-Identifier: MIT */
/* The coordination file's entries in memory, and whether their owners live;
 * opening, locking and rewriting the file is coord_file.c. */
#include "alloc/coord.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "os/proc.h"

void extres_coord_entry_clear(struct extres_coord_entry *e)
{
	if (!e)
		return;
	free(e->line);
	free(e->key);
	free(e->lease);
	free(e->uuid);
	memset(e, 0, sizeof(*e));
}

#define LEASE_TAG "lease="
#define UUID_TAG "uuid="

/* The value of word f (flen bytes) when it is `tag` and a non-empty value:
 * 1 with *ret a copy (or NULL when out of memory: -1), else 0. A tag seen
 * twice keeps its first value, as a reader that stops at the first would. */
static int tagged(const char *f, size_t flen, const char *tag, char **ret)
{
	size_t tlen = strlen(tag);

	if (*ret || flen <= tlen || memcmp(f, tag, tlen) != 0)
		return 0;
	*ret = strndup(f + tlen, flen - tlen);
	return *ret ? 1 : -1;
}

#define SHARE_TAG "share="
#define SHARE_TAG_LEN (sizeof(SHARE_TAG) - 1)

/* share=I/N's value into *e: 1 <= I <= N <= EXTRES_COORD_MAX_SHARES, or
 * nothing (a malformed share is no share: the line holds the device). */
static void parse_share(const char *v, size_t len, struct extres_coord_entry *e)
{
	const char *slash = memchr(v, '/', len);
	uint64_t i, n;

	if (!slash ||
	    extres_parse_dec(v, (size_t)(slash - v), EXTRES_COORD_MAX_SHARES,
			     &i) < 0 ||
	    extres_parse_dec(slash + 1, len - (size_t)(slash + 1 - v),
			     EXTRES_COORD_MAX_SHARES, &n) < 0 ||
	    i < 1 || i > n)
		return;
	e->share_i = (unsigned)i;
	e->share_n = (unsigned)n;
}

int extres_coord_parse_line(const char *line, size_t len,
			    struct extres_coord_entry *e)
{
	struct extres_coord_entry n = { 0 };
	const char *p = line, *end = line + len, *f[3];
	size_t flen[3];
	uint64_t pid, starttime;
	int r = 0;

	n.line = malloc(len + 1);
	if (!n.line)
		return -ENOMEM;
	memcpy(n.line, line, len);
	n.line[len] = '\0';
	n.line_len = len;

	/* A NUL cannot be part of a key; such a line is kept as it is. */
	if (memchr(line, '\0', len) ||
	    !extres_next_word(&p, end, &f[0], &flen[0]) ||
	    !extres_next_word(&p, end, &f[1], &flen[1]) ||
	    extres_parse_dec(f[1], flen[1], INT_MAX, &pid) < 0 || pid == 0)
		goto out;
	if (extres_next_word(&p, end, &f[2], &flen[2]) &&
	    extres_parse_dec(f[2], flen[2], UINT64_MAX, &starttime) == 0) {
		n.has_starttime = 1;
		n.starttime = starttime;
		/* After STARTTIME, name=value words in any order; tags we
		 * do not know belong to others (or to a newer extres). */
		while (r >= 0 && extres_next_word(&p, end, &f[2], &flen[2])) {
			if (!n.share_n && flen[2] > SHARE_TAG_LEN &&
			    memcmp(f[2], SHARE_TAG, SHARE_TAG_LEN) == 0) {
				parse_share(f[2] + SHARE_TAG_LEN,
					    flen[2] - SHARE_TAG_LEN, &n);
				continue;
			}
			r = tagged(f[2], flen[2], LEASE_TAG, &n.lease);
			if (r == 0)
				r = tagged(f[2], flen[2], UUID_TAG, &n.uuid);
		}
	}
	n.key = r < 0 ? NULL : strndup(f[0], flen[0]);
	if (!n.key) {
		free(n.line);
		free(n.lease);
		free(n.uuid);
		return -ENOMEM;
	}
	n.pid = (pid_t)pid;
	n.parsed = 1;
out:
	*e = n;
	return 0;
}

static int state_of(const struct extres_coord_entry *e,
		    const struct extres_proc_probe *p)
{
	if (p->gone)
		return EXTRES_OWNER_DEAD;
	if (p->unreadable)
		return EXTRES_OWNER_LIVE;
	if (p->state == 'Z')
		return EXTRES_OWNER_ZOMBIE;
	if (p->state == 'X')
		return EXTRES_OWNER_DEAD;
	if (e->has_starttime && e->starttime != p->starttime)
		return EXTRES_OWNER_REUSED;
	return EXTRES_OWNER_LIVE;
}

int extres_coord_owner_state(const struct extres_coord_entry *e)
{
	struct extres_proc_probe p;

	if (!e->parsed)
		return EXTRES_OWNER_UNPARSABLE;
	extres_proc_probe(e->pid, &p);
	return state_of(e, &p);
}

const char *extres_coord_owner_state_name(int state)
{
	switch (state) {
	case EXTRES_OWNER_LIVE:
		return "live";
	case EXTRES_OWNER_DEAD:
		return "dead";
	case EXTRES_OWNER_REUSED:
		return "reused";
	case EXTRES_OWNER_ZOMBIE:
		return "zombie";
	case EXTRES_OWNER_UNPARSABLE:
		return "unparsable";
	case EXTRES_OWNER_UNPROVEN:
		return "unproven";
	default:
		return "unknown";
	}
}

int extres_coord_is_taken(const struct extres_coord *c, const char *key)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		const struct extres_coord_entry *e = &c->entries[i];

		if (e->parsed && strcmp(e->key, key) == 0 &&
		    extres_coord_owner_state(e) == EXTRES_OWNER_LIVE)
			return 1;
	}
	return 0;
}

/* Whether `s` is a non-empty word (no whitespace, no NUL inside). */
static int is_word(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (extres_is_space(s[i]))
			return 0;
	return i > 0;
}

int extres_coord_add(struct extres_coord *c, const char *key, pid_t pid,
		     uint64_t starttime)
{
	return extres_coord_add_tagged(c, key, pid, starttime, NULL, NULL);
}

int extres_coord_add_lease(struct extres_coord *c, const char *key, pid_t pid,
			   uint64_t starttime, const char *lease)
{
	return extres_coord_add_tagged(c, key, pid, starttime, lease, NULL);
}

int extres_coord_add_tagged(struct extres_coord *c, const char *key, pid_t pid,
			    uint64_t starttime, const char *lease,
			    const char *uuid)
{
	return extres_coord_add_share(c, key, pid, starttime, lease, uuid, 0,
				      0);
}

int extres_coord_add_share(struct extres_coord *c, const char *key, pid_t pid,
			   uint64_t starttime, const char *lease,
			   const char *uuid, unsigned share_i, unsigned share_n)
{
	struct extres_coord_entry e = { 0 }, *entries;
	int r;

	if (!is_word(key) || pid <= 0 || (lease && !is_word(lease)) ||
	    (uuid && !is_word(uuid)) ||
	    (share_n && (share_i < 1 || share_i > share_n ||
			 share_n > EXTRES_COORD_MAX_SHARES)) ||
	    (!share_n && share_i))
		return -EINVAL;
	/* A tab, not a space, before the start time: Flink frees an index
	 * with `sed -i "/INDEX /d"`, which must never match inside our
	 * line (PID 981 and index 1). Its `grep "^INDEX "` and
	 * `awk '{print $2}'` read the line as before. */
	if (share_n)
		r = asprintf(&e.line,
			     "%s %d\t%" PRIu64 "%s%s%s%s\t" SHARE_TAG "%u/%u",
			     key, (int)pid, starttime,
			     lease ? "\t" LEASE_TAG : "", lease ? lease : "",
			     uuid ? "\t" UUID_TAG : "", uuid ? uuid : "",
			     share_i, share_n);
	else
		r = asprintf(&e.line, "%s %d\t%" PRIu64 "%s%s%s%s", key,
			     (int)pid, starttime, lease ? "\t" LEASE_TAG : "",
			     lease ? lease : "", uuid ? "\t" UUID_TAG : "",
			     uuid ? uuid : "");
	if (r < 0)
		return -ENOMEM;
	e.line_len = strlen(e.line);
	e.key = strdup(key);
	e.lease = lease ? strdup(lease) : NULL;
	e.uuid = uuid ? strdup(uuid) : NULL;
	entries = e.key && (!lease || e.lease) && (!uuid || e.uuid) ?
			  realloc(c->entries, (c->n + 1) * sizeof(*entries)) :
			  NULL;
	if (!entries) {
		extres_coord_entry_clear(&e);
		return -ENOMEM;
	}
	e.parsed = 1;
	e.pid = pid;
	e.has_starttime = 1;
	e.starttime = starttime;
	e.share_i = share_i;
	e.share_n = share_n;
	entries[c->n++] = e;
	c->entries = entries;
	return 0;
}

void extres_coord_remove(struct extres_coord *c, size_t i)
{
	if (i >= c->n)
		return;
	extres_coord_entry_clear(&c->entries[i]);
	memmove(&c->entries[i], &c->entries[i + 1],
		(c->n - i - 1) * sizeof(*c->entries));
	c->n--;
}

size_t extres_coord_reclaim(struct extres_coord *c)
{
	struct extres_proc_probe *probes;
	size_t i = c->n, removed = 0, n_probes = 0, k;
	int state;

	/* Many lines usually share one owner: read /proc once per PID. If
	 * the cache cannot be had, probe every line instead. */
	probes = calloc(c->n ? c->n : 1, sizeof(*probes));
	while (i-- > 0) {
		const struct extres_coord_entry *e = &c->entries[i];
		struct extres_proc_probe one, *p = &one;

		if (!e->parsed)
			continue;
		for (k = 0; probes && k < n_probes; k++)
			if (probes[k].pid == e->pid)
				break;
		if (probes && k < n_probes) {
			p = &probes[k];
		} else {
			extres_proc_probe(e->pid, p);
			if (probes)
				probes[n_probes++] = one;
		}
		state = state_of(e, p);
		if (state == EXTRES_OWNER_DEAD ||
		    state == EXTRES_OWNER_REUSED ||
		    state == EXTRES_OWNER_ZOMBIE) {
			extres_coord_remove(c, i);
			removed++;
		}
	}
	free(probes);
	return removed;
}

int extres_coord_has_key(const struct extres_coord *c, const char *key)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->entries[i].parsed && strcmp(c->entries[i].key, key) == 0)
			return 1;
	return 0;
}

int extres_coord_recorded_for(const struct extres_coord *c, const char *key,
			      pid_t owner, uint64_t starttime)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		const struct extres_coord_entry *e = &c->entries[i];

		if (e->parsed && e->pid == owner && e->has_starttime &&
		    e->starttime == starttime && strcmp(e->key, key) == 0)
			return 1;
	}
	return 0;
}

int extres_coord_entry_of(const struct extres_coord_entry *e, pid_t owner,
			  uint64_t starttime)
{
	return e->parsed && e->pid == owner &&
	       (!e->has_starttime || e->starttime == starttime);
}

int extres_coord_has_line_of(const struct extres_coord *c, const char *key,
			     pid_t owner)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->entries[i].parsed && c->entries[i].pid == owner &&
		    strcmp(c->entries[i].key, key) == 0)
			return 1;
	return 0;
}

pid_t extres_coord_other_holder(const struct extres_coord *c, const char *key,
				pid_t owner, uint64_t starttime)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		const struct extres_coord_entry *e = &c->entries[i];

		if (e->parsed && strcmp(e->key, key) == 0 &&
		    !extres_coord_entry_of(e, owner, starttime) &&
		    extres_coord_owner_state(e) == EXTRES_OWNER_LIVE)
			return e->pid;
	}
	return 0;
}
