/* SPDX-License-Identifier: MIT */
/*
 * The "static" driver: infos an operator lists by hand in the config.
 *
 *   param.devices:          one mapping per info, property: value, in order
 *     - {index: 0, uuid: GPU-aaaa}
 *     - {index: 1, uuid: GPU-bbbb}
 *   param.indexes: 0,1,2    shorthand for infos with only `index`
 *                           (a YAML sequence of scalars works too)
 *
 * Everything is checked in open(), where the config positions are at hand,
 * so that a mistake is reported with file:line:col rather than at discovery.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <extres/driver.h>
#include <extres/driver_util.h>

#include "lib/identity.h"
#include "lib/param_list.h"
#include "text_scan.h"

static const char *const known_params[] = { "devices", "indexes", NULL };

struct static_driver {
	/* The param tree outlives the handle (see extres_param), so devices
	 * are served straight from it. NULL when indexes are given. */
	const struct extres_param *devices;
	size_t n_indexes;
	char **indexes;
};

static void static_free(struct static_driver *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->n_indexes; i++)
		free(d->indexes[i]);
	free(d->indexes);
	free(d);
}

/* The core's rules for a property (see struct extres_sink), checked here
 * too so that the message can point at the line. */
static int32_t check_property(const struct extres_host *host,
			      const struct extres_param *p, uint32_t item)
{
	if (p->key[0] == '\0')
		return extres_param_error(
			host, p, "param.devices[%u]: empty property name",
			item);
	if (p->key[0] == '.')
		return extres_param_error(
			host, p,
			"param.devices[%u]: property name '%s' starts with '.'",
			item, p->key);
	if (strchr(p->key, '/'))
		return extres_param_error(
			host, p,
			"param.devices[%u]: property name '%s' contains '/'",
			item, p->key);
	if (p->value[0] == '\0')
		return extres_param_error(host, p,
					  "param.devices[%u].%s: empty value",
					  item, p->key);
	if (strchr(p->value, '\n'))
		return extres_param_error(
			host, p, "param.devices[%u].%s: value has a newline",
			item, p->key);
	return 0;
}

static int32_t check_devices(const struct extres_host *host,
			     const struct extres_param *devices)
{
	uint32_t i, j, k;
	int32_t r;

	if (devices->kind != EXTRES_PARAM_SEQUENCE)
		return extres_param_error(
			host, devices,
			"param.devices must be a sequence of mappings, one per device");
	for (i = 0; i < devices->count; i++) {
		const struct extres_param *item = &devices->items[i];

		if (item->kind != EXTRES_PARAM_MAPPING)
			return extres_param_error(
				host, item,
				"param.devices[%u] must be a mapping of property: value",
				i);
		if (item->count == 0)
			return extres_param_error(
				host, item,
				"param.devices[%u] has no properties", i);
		for (j = 0; j < item->count; j++) {
			const struct extres_param *p = &item->items[j];

			if (p->kind != EXTRES_PARAM_SCALAR)
				return extres_param_error(
					host, p,
					"param.devices[%u].%s must be a scalar value",
					i, p->key);
			r = check_property(host, p, i);
			if (r < 0)
				return r;
			for (k = 0; k < j; k++)
				if (strcmp(item->items[k].key, p->key) == 0)
					return extres_param_error(
						host, p,
						"param.devices[%u]: property '%s' given twice",
						i, p->key);
		}
	}
	return 0;
}

/* Keep one index, already trimmed by param_list_next(). */
static int32_t add_index(const struct extres_host *host,
			 struct static_driver *d, const struct extres_param *at,
			 const char *s, size_t len)
{
	char *index;
	size_t i;

	/* An index names one device, in a file name and in the coordination
	 * file's "INDEX PID" lines: it cannot hold a blank. */
	for (i = 0; i < len; i++)
		if (text_is_space(s[i]))
			return extres_param_error(
				host, at,
				"param.indexes: index '%.*s' contains whitespace",
				(int)len, s);
	for (i = 0; i < d->n_indexes; i++)
		if (strlen(d->indexes[i]) == len &&
		    memcmp(d->indexes[i], s, len) == 0)
			return extres_param_error(
				host, at,
				"param.indexes lists index '%.*s' twice",
				(int)len, s);
	index = strndup(s, len);
	if (!index)
		return -ENOMEM;
	d->indexes[d->n_indexes++] = index;
	return 0;
}

static const struct param_list_words indexes_words = {
	.name = "indexes",
	.example = "0,1,2",
	.items = "indexes",
	.item = "a scalar index",
};

static int32_t parse_indexes(const struct extres_host *host,
			     struct static_driver *d,
			     const struct extres_param *indexes)
{
	struct param_list_cursor cursor = PARAM_LIST_START;
	const struct extres_param *at;
	const char *s;
	size_t bound, len;
	int32_t r;

	r = param_list_check(host, &indexes_words, indexes, &bound);
	if (r < 0)
		return r;
	d->indexes = calloc(bound, sizeof(*d->indexes));
	if (!d->indexes)
		return -ENOMEM;
	while (param_list_next(indexes, &cursor, &at, &s, &len)) {
		r = add_index(host, d, at, s, len);
		if (r < 0)
			return r;
	}
	return 0;
}

static int32_t static_open(const struct extres_host *host,
			   const struct extres_param *params, void **ret_handle)
{
	const struct extres_param *devices, *indexes, *p;
	struct static_driver *d = NULL;
	int32_t r;

	p = param_list_flattened(params, known_params);
	if (p && text_starts_with(p->key, "devices."))
		return extres_param_error(
			host, p,
			"param.devices must be a sequence, not a mapping (found param.%s)",
			p->key);
	if (p)
		return extres_param_error(
			host, p,
			"param.indexes must be a list, not a mapping (found param.%s)",
			p->key);
	extres_params_warn_unknown(host, params, known_params);
	devices = extres_param_get(params, "devices");
	indexes = extres_param_get(params, "indexes");
	if (devices && indexes) {
		const struct extres_param *later =
			devices > indexes ? devices : indexes;

		return extres_param_error(
			host, later,
			"param.devices and param.indexes are both given; use one of them");
	}
	if (!devices && !indexes)
		return host->error(
			host,
			"%s: neither param.devices nor param.indexes is given; one of them must list the devices",
			host->config_path);

	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	if (devices) {
		r = check_devices(host, devices);
		d->devices = devices;
	} else {
		r = parse_indexes(host, d, indexes);
	}
	if (r < 0)
		goto fail;
	*ret_handle = d;
	return 0;
fail:
	static_free(d);
	return r;
}

static int32_t static_discover(void *handle, struct extres_sink *sink)
{
	const struct static_driver *d = handle;
	uint32_t i, j;
	size_t n;
	int32_t r;

	if (d->devices) {
		for (i = 0; i < d->devices->count; i++) {
			const struct extres_param *item = &d->devices->items[i];

			r = sink->begin_info(sink);
			for (j = 0; r == 0 && j < item->count; j++)
				r = sink->add_property(sink, item->items[j].key,
						       item->items[j].value);
			if (r < 0)
				return r;
		}
		return 0;
	}
	for (n = 0; n < d->n_indexes; n++) {
		r = sink->begin_info(sink);
		if (r == 0)
			r = sink->add_property(sink, "index", d->indexes[n]);
		if (r < 0)
			return r;
	}
	return 0;
}

static void static_close(void *handle)
{
	static_free(handle);
}

EXTRES_DRIVER_REGISTER(.name = "static", .open = static_open,
		       .discover = static_discover, .close = static_close,
		       .identity_keys = identity_keys_usual)
