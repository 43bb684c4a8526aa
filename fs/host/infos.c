/* SPDX-License-Identifier: MIT */
#include "host/infos.h"

#include <errno.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"

/*
 * What an info's props array starts with. Built property by property, the
 * array and each key and value are blocks of their own; packed
 * (extres_infos_pack()), the array, keys and values are one immutable
 * block, shared by every copy and freed by the last clear. Thousands of
 * devices of tens of properties would otherwise cost a block per key and
 * per value, and a copy of all of them per holder.
 */
struct props_head {
	atomic_size_t refs; /* packed: the copies sharing it */
	size_t packed;
	struct extres_property props[];
};

static struct props_head *head_of(const struct extres_property *props)
{
	return (struct props_head *)((char *)props -
				     offsetof(struct props_head, props));
}

int extres_infos_new(struct extres_infos **ret)
{
	struct extres_infos *infos = calloc(1, sizeof(*infos));

	if (!infos)
		return -ENOMEM;
	*ret = infos;
	return 0;
}

void extres_info_clear(struct extres_info *info)
{
	struct props_head *head;
	size_t i;

	if (!info || !info->props)
		return;
	head = head_of(info->props);
	if (!head->packed) {
		for (i = 0; i < info->n_props; i++) {
			free(info->props[i].key);
			free(info->props[i].value);
		}
		free(head);
	} else if (atomic_fetch_sub(&head->refs, 1) == 1) {
		free(head);
	}
	info->props = NULL;
	info->n_props = 0;
}

void extres_infos_free(struct extres_infos *infos)
{
	size_t i;

	if (!infos)
		return;
	for (i = 0; i < infos->n; i++)
		extres_info_clear(&infos->items[i]);
	free(infos->items);
	extres_driver_info_clear(&infos->driver);
	free(infos);
}

/* -E2BIG, saying by how much, when `size` passes a limit on the sum. */
static int check_size(const struct extres_infos_size *size,
		      struct extres_err *err)
{
	if (size->entries > EXTRES_MAX_ENTRIES)
		return extres_err_set(
			err, E2BIG,
			"%zu infos and properties, more than the %d extres serves",
			size->entries, EXTRES_MAX_ENTRIES);
	if (size->bytes > EXTRES_MAX_BYTES)
		return extres_err_set(
			err, E2BIG,
			"%zu bytes of property names and values, more than the %u extres serves",
			size->bytes, EXTRES_MAX_BYTES);
	return 0;
}

int extres_infos_size_add(struct extres_infos_size *size,
			  const struct extres_info *infos, size_t n,
			  struct extres_err *err)
{
	size_t i, k;

	/* Each term is bounded by the per-info limits, and the sum is
	 * checked after every info: it cannot wrap. */
	for (i = 0; i < n; i++) {
		size->entries += 1 + infos[i].n_props;
		for (k = 0; k < infos[i].n_props; k++)
			size->bytes += strlen(infos[i].props[k].key) +
				       infos[i].props[k].value_len;
		if (check_size(size, err) < 0)
			return -E2BIG;
	}
	return 0;
}

int extres_infos_begin(struct extres_infos *infos, struct extres_err *err)
{
	struct extres_infos_size size = infos->size;

	if (infos->n >= EXTRES_MAX_INFOS)
		return extres_err_set(err, E2BIG,
				      "more than %d infos (the limit)",
				      EXTRES_MAX_INFOS);
	size.entries++;
	if (check_size(&size, err) < 0)
		return -E2BIG;
	if (infos->n == infos->cap) {
		size_t cap = infos->cap ? infos->cap * 2 : 8;
		struct extres_info *items =
			realloc(infos->items, cap * sizeof(*items));

		if (!items)
			return extres_err_set(err, ENOMEM, "out of memory");
		infos->items = items;
		infos->cap = cap;
	}
	memset(&infos->items[infos->n++], 0, sizeof(struct extres_info));
	infos->size = size;
	return 0;
}

static int check_key(const char *key, struct extres_err *err)
{
	const char *problem;

	/* An empty name is not worth quoting; a long one is cut short. */
	if (!*key)
		return extres_err_set(err, EINVAL, "empty property name");
	if (strlen(key) > EXTRES_MAX_KEY_LEN)
		return extres_err_set(
			err, EINVAL,
			"property name '%.40s...' is longer than %d bytes", key,
			EXTRES_MAX_KEY_LEN);
	problem = extres_name_problem(key);
	if (problem)
		return extres_err_set(err, EINVAL, "property name '%s' %s", key,
				      problem);
	return 0;
}

static int check_value(const char *key, const char *value, size_t len,
		       struct extres_err *err)
{
	/* An empty value is a fact ("no NVLink peers"), but `index` names
	 * the device. */
	if (len == 0 && strcmp(key, "index") == 0)
		return extres_err_set(
			err, EINVAL,
			"property 'index' has an empty value (it names the device)");
	if (len > EXTRES_MAX_VALUE_LEN)
		return extres_err_set(
			err, EINVAL,
			"property '%s' has a value of %zu bytes (limit %d)",
			key, len, EXTRES_MAX_VALUE_LEN);
	/* One value per file: a newline would make `cat` print two lines. */
	if (memchr(value, '\n', len))
		return extres_err_set(
			err, EINVAL, "property '%s' has a value with a newline",
			key);
	return 0;
}

int extres_infos_add(struct extres_infos *infos, const char *key,
		     const char *value, struct extres_err *err)
{
	struct extres_infos_size size = infos->size;
	struct extres_info *info;
	struct extres_property *props, *p;
	struct props_head *head;
	size_t len;
	int r;

	if (infos->n == 0)
		return extres_err_set(err, EINVAL,
				      "property '%s' given before any info",
				      key);
	info = &infos->items[infos->n - 1];
	r = check_key(key, err);
	if (r < 0)
		return r;
	len = strlen(value);
	r = check_value(key, value, len, err);
	if (r < 0)
		return r;
	if (extres_info_get(info, key))
		return extres_err_set(err, EINVAL,
				      "property '%s' given twice in info %zu",
				      key, infos->n - 1);
	if (info->n_props >= EXTRES_MAX_PROPERTIES)
		return extres_err_set(err, E2BIG,
				      "info %zu has more than %d properties",
				      infos->n - 1, EXTRES_MAX_PROPERTIES);
	size.entries++;
	size.bytes += strlen(key) + len;
	if (check_size(&size, err) < 0)
		return extres_err_prefix(err, E2BIG,
					 "property '%s' of info %zu", key,
					 infos->n - 1);
	/* A packed info is complete: extres_infos_pack() comes last. */
	if (info->props && head_of(info->props)->packed)
		return extres_err_set(err, EINVAL,
				      "property '%s' added to a packed info",
				      key);
	head = realloc(info->props ? head_of(info->props) : NULL,
		       sizeof(*head) + (info->n_props + 1) * sizeof(*props));
	if (!head)
		return extres_err_set(err, ENOMEM, "out of memory");
	head->packed = 0;
	props = info->props = head->props;
	p = &props[info->n_props];
	p->key = strdup(key);
	p->value = strdup(value);
	if (!p->key || !p->value) {
		free(p->key);
		free(p->value);
		return extres_err_set(err, ENOMEM, "out of memory");
	}
	p->value_len = len;
	info->n_props++;
	infos->size = size;
	return 0;
}

const char *extres_info_get(const struct extres_info *info, const char *key)
{
	size_t i;

	for (i = 0; i < info->n_props; i++)
		if (strcmp(info->props[i].key, key) == 0)
			return info->props[i].value;
	return NULL;
}

int extres_info_healthy(const struct extres_info *info)
{
	const char *v = extres_info_get(info, EXTRES_HEALTH_KEY);

	return !v || strcmp(v, EXTRES_HEALTH_OK) == 0;
}

const char *extres_info_uuid(const struct extres_info *info)
{
	const char *v = extres_info_get(info, EXTRES_UUID_KEY);
	size_t i;

	for (i = 0; v && v[i]; i++)
		if (extres_is_space(v[i]))
			return NULL;
	return v && v[0] ? v : NULL;
}

/* `src` copied into one new packed block. */
static int pack(const struct extres_info *src, struct extres_info *ret)
{
	struct props_head *head;
	size_t i, bytes = sizeof(*head) + src->n_props * sizeof(head->props[0]);
	char *text;

	if (!src->n_props) {
		*ret = (struct extres_info){ 0 };
		return 0;
	}
	/* Each term is bounded by the limits on an info: no overflow. */
	for (i = 0; i < src->n_props; i++)
		bytes += strlen(src->props[i].key) + 1 +
			 src->props[i].value_len + 1;
	head = malloc(bytes);
	if (!head)
		return -ENOMEM;
	atomic_init(&head->refs, 1);
	head->packed = 1;
	text = (char *)&head->props[src->n_props];
	for (i = 0; i < src->n_props; i++) {
		const struct extres_property *p = &src->props[i];
		size_t key_len = strlen(p->key);

		head->props[i].key = memcpy(text, p->key, key_len + 1);
		text += key_len + 1;
		head->props[i].value = memcpy(text, p->value, p->value_len + 1);
		text += p->value_len + 1;
		head->props[i].value_len = p->value_len;
	}
	*ret = (struct extres_info){ .n_props = src->n_props,
				     .props = head->props };
	return 0;
}

int extres_infos_pack(struct extres_infos *infos)
{
	struct extres_info packed;
	size_t i;

	for (i = 0; i < infos->n; i++) {
		if (!infos->items[i].props ||
		    head_of(infos->items[i].props)->packed)
			continue;
		if (pack(&infos->items[i], &packed) < 0)
			return -ENOMEM;
		extres_info_clear(&infos->items[i]);
		infos->items[i] = packed;
	}
	return 0;
}

int extres_info_copy(const struct extres_info *src, struct extres_info *ret)
{
	if (!src->props || !head_of(src->props)->packed)
		return pack(src, ret);
	atomic_fetch_add(&head_of(src->props)->refs, 1);
	*ret = *src;
	return 0;
}
