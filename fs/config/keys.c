/* SPDX-License-Identifier: MIT */
/* Sorting the flat keys out: repeats, each resource's keys, and warnings
 * for unknown keys and for resources configured but not listed. */
#include "config/loader.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "base/text.h"

/* The keys under external-resource.<name>. other than param.*. */
const char *const extres_cfg_slot_keys[N_SLOTS] = {
	[SLOT_AMOUNT] = "amount",
	[SLOT_DRIVER] = "driver",
	[SLOT_FACTORY_CLASS] = "driver-factory.class",
	[SLOT_DRIVER_CLASS] = "driver.class",
	[SLOT_KUBERNETES] = "kubernetes.config-key",
	[SLOT_KUBERNETES_OLD] = "kubernetes.key",
	[SLOT_YARN] = "yarn.config-key",
	[SLOT_YARN_OLD] = "yarn.key",
	[SLOT_COORD_FILE] = "coordination-file",
	[SLOT_COORD_KEY] = "coordination-key",
	[SLOT_ENV_VAR] = "env-var",
	[SLOT_REFRESH] = "refresh-interval",
	[SLOT_POOL] = "pool",
	[SLOT_CDI_KIND] = "cdi.kind",
	[SLOT_CDI_BASE] = "cdi.base-spec",
	[SLOT_REPLICAS] = "replicas",
	[SLOT_SHARING] = "sharing-strategy",
	[SLOT_MPS_PIPE] = "mps.pipe-directory",
	[SLOT_MPS_LOG] = "mps.log-directory",
};

/* What each slot's value must be, for messages. The driver alone may also
 * be a mapping (Flink's driver.class). */
const char *const extres_cfg_slot_expected[N_SLOTS] = {
	[SLOT_AMOUNT] = "an amount (N, N-M, N- or all)",
	[SLOT_DRIVER] = "a driver name or path",
	[SLOT_FACTORY_CLASS] = "a class name",
	[SLOT_DRIVER_CLASS] = "a class name",
	[SLOT_KUBERNETES] = "a Kubernetes resource name",
	[SLOT_KUBERNETES_OLD] = "a Kubernetes resource name",
	[SLOT_YARN] = "a YARN resource name",
	[SLOT_YARN_OLD] = "a YARN resource name",
	[SLOT_COORD_FILE] = "a path",
	[SLOT_COORD_KEY] = "a property name",
	[SLOT_ENV_VAR] = "a variable name",
	[SLOT_REFRESH] = "a number of seconds",
	[SLOT_POOL] = "true or false",
	[SLOT_CDI_KIND] = "a CDI kind (vendor/class)",
	[SLOT_CDI_BASE] = "a path",
	[SLOT_REPLICAS] = "a number of shares per device",
	[SLOT_SHARING] = "time-slicing or mps",
	[SLOT_MPS_PIPE] = "an absolute path",
	[SLOT_MPS_LOG] = "an absolute path",
};

/*
 * Prefixes of known keys: in a nested file, `param:` with every member
 * commented out reads as a null value, which is no mistake.
 */
static const char *const resource_sections[] = {
	"param", "kubernetes", "yarn", "driver-factory", "cdi", "mps",
};

static int ours(const char *key)
{
	return extres_starts_with(key, "external-resource") ||
	       strcmp(key, "extres") == 0 ||
	       extres_starts_with(key, EXTRES_PREFIX);
}

struct key_ref {
	const char *key;
	size_t seq;
};

static int compare_key_refs(const void *a, const void *b)
{
	const struct key_ref *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	if (c)
		return c;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * The last of a repeated key wins, wherever it came from (a flat key and the
 * same key nested count as one). Sorting keeps this O(n log n) for big files.
 */
int extres_cfg_mark_repeats(struct loader *l)
{
	struct extres_flat *items = l->flat.items;
	size_t n = l->flat.n, i;
	struct key_ref *refs;
	int r = 0;

	if (n < 2)
		return 0;
	refs = calloc(n, sizeof(*refs));
	if (!refs)
		return extres_cfg_oom(l);
	/* A section holds no value: its members are entries of their own. */
	for (i = 0, n = 0; i < l->flat.n; i++)
		if (!items[i].section)
			refs[n++] = (struct key_ref){ items[i].key, i };
	qsort(refs, n, sizeof(*refs), compare_key_refs);
	for (i = 0; i + 1 < n && r == 0; i++) {
		struct extres_flat *prev = &items[refs[i].seq];
		const struct extres_flat *next = &items[refs[i + 1].seq];

		if (strcmp(prev->key, next->key) != 0)
			continue;
		prev->superseded = 1;
		if (ours(prev->key))
			r = extres_cfg_warn(
				l, next->line, next->column,
				"key '%s' is set again (previously at line %u, column %u); the last value wins",
				next->key, prev->line, prev->column);
	}
	free(refs);
	return r;
}

const struct extres_flat *extres_cfg_find_key(const struct loader *l,
					      const char *key)
{
	size_t i;

	for (i = 0; i < l->flat.n; i++)
		if (!l->flat.items[i].superseded && !l->flat.items[i].section &&
		    strcmp(l->flat.items[i].key, key) == 0)
			return &l->flat.items[i];
	return NULL;
}

/*
 * The listed resource that `rest` (a key without "external-resource.")
 * belongs to, or -1. The longest name wins, as names may hold dots. On a
 * match *ret_suffix is what follows "<name>.", or NULL for the bare name.
 */
static int owner_of(const struct loader *l, const char *rest,
		    const char **ret_suffix)
{
	const struct extres_config *c = l->config;
	size_t best_len = 0, i;
	int best = -1;

	for (i = 0; i < c->n_resources; i++) {
		const char *name = c->resources[i].name;
		size_t len = strlen(name);

		if (len > best_len && strncmp(rest, name, len) == 0 &&
		    (rest[len] == '.' || rest[len] == '\0')) {
			best = (int)i;
			best_len = len;
		}
	}
	if (best >= 0)
		*ret_suffix = rest[best_len] ? rest + best_len + 1 : NULL;
	return best;
}

/* The slot key nearest to `suffix`, or NULL. */
static const char *near_slot(const char *suffix)
{
	return extres_nearest(suffix, extres_cfg_slot_keys, N_SLOTS);
}

int extres_cfg_near_key(const struct loader *l, const char *key, char **ret)
{
	static const char *const extres_keys[] = { "mountpoint", "cdi-spec-dir",
						   "lock-timeout",
						   "transport" };
	const char *suffix = NULL, *near = NULL;
	int index, r = 0;

	*ret = NULL;
	if (extres_starts_with(key, RESOURCE_PREFIX)) {
		index = owner_of(l, key + strlen(RESOURCE_PREFIX), &suffix);
		if (index >= 0 && suffix && (near = near_slot(suffix)))
			r = asprintf(ret, RESOURCE_PREFIX "%s.%s",
				     l->config->resources[index].name, near);
	} else if (extres_starts_with(key, EXTRES_PREFIX)) {
		near = extres_nearest(key + strlen(EXTRES_PREFIX), extres_keys,
				      ARRAY_SIZE(extres_keys));
		if (near)
			r = asprintf(ret, EXTRES_PREFIX "%s", near);
	}
	if (r < 0) {
		*ret = NULL;
		return -ENOMEM;
	}
	return 0;
}

const struct extres_flat *extres_cfg_typo_of(const struct loader *l,
					     const char *name, const char *slot)
{
	size_t i, len = strlen(name);

	for (i = 0; i < l->flat.n; i++) {
		const struct extres_flat *e = &l->flat.items[i];
		const char *rest = e->key + strlen(RESOURCE_PREFIX), *suffix;

		if (e->superseded || e->section ||
		    !extres_starts_with(e->key, RESOURCE_PREFIX) ||
		    strncmp(rest, name, len) != 0 || rest[len] != '.')
			continue;
		suffix = rest + len + 1;
		if (!extres_starts_with(suffix, "param.") &&
		    near_slot(suffix) == slot)
			return e;
	}
	return NULL;
}

/* An unknown key, with the known key it may be a typo of. */
static int warn_unknown(struct loader *l, const struct extres_flat *e)
{
	char *near;
	int r;

	if (extres_cfg_near_key(l, e->key, &near) < 0)
		return extres_cfg_oom(l);
	r = extres_cfg_warn_unknown_near(l, e, near);
	free(near);
	return r;
}

static int add_param(struct loader *l, size_t index,
		     const struct extres_flat *e, const char *key)
{
	struct extres_param *params = l->config->resources[index].params;
	struct extres_param member;
	int r;

	r = extres_param_from_yaml(&l->yaml, e->value, &member, l->err);
	if (r < 0)
		return r;
	member.key = strdup(key);
	if (!member.key || extres_param_append(params, &member) < 0) {
		extres_param_clear(&member);
		return extres_cfg_oom(l);
	}
	return 0;
}

static int note_unlisted(struct loader *l, const struct extres_flat *e,
			 const char *name, size_t len)
{
	struct unlisted *u;

	u = extres_cfg_grow(l->unlisted, l->n_unlisted, sizeof(*u));
	if (!u)
		return extres_cfg_oom(l);
	l->unlisted = u;
	u[l->n_unlisted] = (struct unlisted){ name, len, l->n_unlisted, e->line,
					      e->column };
	l->n_unlisted++;
	return 0;
}

static int resource_key(struct loader *l, const struct extres_flat *e,
			const char *rest)
{
	const char *suffix;
	size_t i;
	int index;

	index = owner_of(l, rest, &suffix);
	/* A section's members are entries of their own: only a key that
	 * takes one value has something to say about it. */
	if (e->section) {
		if (index < 0 || !suffix)
			return 0;
		for (i = 0; i < N_SLOTS; i++)
			if (i != SLOT_DRIVER &&
			    strcmp(suffix, extres_cfg_slot_keys[i]) == 0)
				return extres_cfg_wrong_kind(
					l, e, extres_cfg_slot_expected[i]);
		return 0;
	}
	if (index < 0) {
		size_t len = strcspn(rest, ".");

		if (len == 0)
			return warn_unknown(l, e);
		if (rest[len] == '\0' && extres_yaml_is_null(e->value))
			return 0;
		return note_unlisted(l, e, rest, len);
	}
	if (!suffix)
		return extres_yaml_is_null(e->value) ? 0 : warn_unknown(l, e);
	if (extres_starts_with(suffix, "param."))
		return add_param(l, (size_t)index, e,
				 suffix + strlen("param."));
	for (i = 0; i < N_SLOTS; i++) {
		if (strcmp(suffix, extres_cfg_slot_keys[i]) == 0) {
			l->keys[index].slot[i] = e;
			return 0;
		}
	}
	for (i = 0; i < ARRAY_SIZE(resource_sections); i++)
		if (strcmp(suffix, resource_sections[i]) == 0 &&
		    extres_yaml_is_null(e->value))
			return 0;
	return warn_unknown(l, e);
}

int extres_cfg_sort_keys(struct loader *l)
{
	size_t i;
	int r = 0;

	for (i = 0; i < l->flat.n && r == 0; i++) {
		const struct extres_flat *e = &l->flat.items[i];
		const char *key = e->key;

		if (e->superseded || strcmp(key, LIST_KEY) == 0 ||
		    strcmp(key, OLD_LIST_KEY) == 0)
			continue;
		if (extres_starts_with(key, RESOURCE_PREFIX))
			r = resource_key(l, e, key + strlen(RESOURCE_PREFIX));
		else if (e->section &&
			 strcmp(key, EXTRES_PREFIX "mountpoint") == 0)
			r = extres_cfg_wrong_kind(l, e, MOUNTPOINT_EXPECTED);
		else if (e->section &&
			 strcmp(key, EXTRES_PREFIX "cdi-spec-dir") == 0)
			r = extres_cfg_wrong_kind(l, e, MOUNTPOINT_EXPECTED);
		else if (e->section &&
			 strcmp(key, EXTRES_PREFIX "lock-timeout") == 0)
			r = extres_cfg_wrong_kind(l, e, LOCK_TIMEOUT_EXPECTED);
		else if (e->section && strcmp(key, COORD_GROUP_KEY) == 0)
			r = extres_cfg_wrong_kind(l, e, COORD_GROUP_EXPECTED);
		else if (e->section && strcmp(key, TRANSPORT_KEY) == 0)
			r = extres_cfg_wrong_kind(l, e, TRANSPORT_EXPECTED);
		else if (e->section)
			continue;
		else if (strcmp(key, EXTRES_PREFIX "mountpoint") == 0)
			l->mountpoint = e;
		else if (strcmp(key, EXTRES_PREFIX "cdi-spec-dir") == 0)
			l->cdi_spec_dir = e;
		else if (strcmp(key, EXTRES_PREFIX "lock-timeout") == 0)
			l->lock_timeout = e;
		else if (strcmp(key, COORD_GROUP_KEY) == 0)
			l->coordination_group = e;
		else if (strcmp(key, TRANSPORT_KEY) == 0)
			l->transport = e;
		else if (extres_starts_with(key, EXTRES_PREFIX) ||
			 extres_starts_with(key, LIST_KEY "."))
			r = warn_unknown(l, e);
		else if (strcmp(key, "extres") == 0 ||
			 strcmp(key, "external-resource") == 0)
			r = extres_yaml_is_null(e->value) ? 0 :
							    warn_unknown(l, e);
		/* Everything else belongs to Flink: not ours to judge. */
	}
	return r;
}

static int compare_unlisted(const void *a, const void *b)
{
	const struct unlisted *x = a, *y = b;
	int c = memcmp(x->name, y->name, x->len < y->len ? x->len : y->len);

	if (c)
		return c;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int same_name(const struct unlisted *a, const struct unlisted *b)
{
	return a->len == b->len && memcmp(a->name, b->name, a->len) == 0;
}

/* One warning per unlisted name, at its first key. */
int extres_cfg_warn_unlisted(struct loader *l)
{
	size_t i;
	int r;

	if (l->n_unlisted == 0)
		return 0;
	qsort(l->unlisted, l->n_unlisted, sizeof(*l->unlisted),
	      compare_unlisted);
	for (i = 0; i < l->n_unlisted; i++) {
		const struct unlisted *u = &l->unlisted[i];

		if (i > 0 && same_name(&u[-1], u))
			continue;
		r = extres_cfg_warn(
			l, u->line, u->column,
			"resource '%.*s' is configured but not listed in %s (ignored)",
			(int)u->len, u->name, l->list_key);
		if (r < 0)
			return r;
	}
	return 0;
}
