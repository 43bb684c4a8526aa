/* SPDX-License-Identifier: MIT */
#include "host/infos.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"

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
	size_t i;

	if (!info)
		return;
	for (i = 0; i < info->n_props; i++) {
		free(info->props[i].key);
		free(info->props[i].value);
	}
	free(info->props);
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
	props = realloc(info->props, (info->n_props + 1) * sizeof(*props));
	if (!props)
		return extres_err_set(err, ENOMEM, "out of memory");
	info->props = props;
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

int extres_info_copy(const struct extres_info *src, struct extres_info *ret)
{
	struct extres_info copy = { 0 };
	size_t i;

	if (src->n_props) {
		copy.props = calloc(src->n_props, sizeof(*copy.props));
		if (!copy.props)
			return -ENOMEM;
	}
	for (i = 0; i < src->n_props; i++) {
		struct extres_property *p = &copy.props[i];

		p->key = strdup(src->props[i].key);
		p->value = strdup(src->props[i].value);
		copy.n_props = i + 1;
		if (!p->key || !p->value) {
			extres_info_clear(&copy);
			return -ENOMEM;
		}
		p->value_len = src->props[i].value_len;
	}
	*ret = copy;
	return 0;
}
