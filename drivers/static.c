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

#include "lib/text.h"

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
	const char *path = host->config_path;

	if (p->key[0] == '\0')
		return host->error(host, "%s:%u:%u: param.devices[%u]: empty property name",
				   path, p->line, p->column, item);
	if (p->key[0] == '.')
		return host->error(host, "%s:%u:%u: param.devices[%u]: property name '%s' starts with '.'",
				   path, p->line, p->column, item, p->key);
	if (strchr(p->key, '/'))
		return host->error(host, "%s:%u:%u: param.devices[%u]: property name '%s' contains '/'",
				   path, p->line, p->column, item, p->key);
	if (p->value[0] == '\0')
		return host->error(host, "%s:%u:%u: param.devices[%u].%s: empty value",
				   path, p->line, p->column, item, p->key);
	if (strchr(p->value, '\n'))
		return host->error(host, "%s:%u:%u: param.devices[%u].%s: value has a newline",
				   path, p->line, p->column, item, p->key);
	return 0;
}

static int32_t check_devices(const struct extres_host *host,
			     const struct extres_param *devices)
{
	const char *path = host->config_path;
	uint32_t i, j, k;
	int32_t r;

	if (devices->kind != EXTRES_PARAM_SEQUENCE)
		return host->error(host, "%s:%u:%u: param.devices must be a sequence of mappings, one per device",
				   path, devices->line, devices->column);
	for (i = 0; i < devices->count; i++) {
		const struct extres_param *item = &devices->items[i];

		if (item->kind != EXTRES_PARAM_MAPPING)
			return host->error(host, "%s:%u:%u: param.devices[%u] must be a mapping of property: value",
					   path, item->line, item->column, i);
		if (item->count == 0)
			return host->error(host, "%s:%u:%u: param.devices[%u] has no properties",
					   path, item->line, item->column, i);
		for (j = 0; j < item->count; j++) {
			const struct extres_param *p = &item->items[j];

			if (p->kind != EXTRES_PARAM_SCALAR)
				return host->error(host, "%s:%u:%u: param.devices[%u].%s must be a scalar value",
						   path, p->line, p->column, i, p->key);
			r = check_property(host, p, i);
			if (r < 0)
				return r;
			for (k = 0; k < j; k++)
				if (strcmp(item->items[k].key, p->key) == 0)
					return host->error(host, "%s:%u:%u: param.devices[%u]: property '%s' given twice",
							   path, p->line, p->column, i, p->key);
		}
	}
	return 0;
}

/* Trim and keep one index; empty ones are dropped, as Flink does. */
static int32_t add_index(const struct extres_host *host, struct static_driver *d,
			 const struct extres_param *at, const char *s, size_t len)
{
	const char *path = host->config_path;
	char *index;
	size_t i;

	while (len > 0 && text_is_space(*s))
		s++, len--;
	while (len > 0 && text_is_space(s[len - 1]))
		len--;
	if (len == 0)
		return 0;
	/* An index names one device, in a file name and in the coordination
	 * file's "INDEX PID" lines: it cannot hold a blank. */
	for (i = 0; i < len; i++)
		if (text_is_space(s[i]))
			return host->error(host, "%s:%u:%u: param.indexes: index '%.*s' contains whitespace",
					   path, at->line, at->column, (int)len, s);
	for (i = 0; i < d->n_indexes; i++)
		if (strlen(d->indexes[i]) == len && memcmp(d->indexes[i], s, len) == 0)
			return host->error(host, "%s:%u:%u: param.indexes lists index '%.*s' twice",
					   path, at->line, at->column, (int)len, s);
	index = strndup(s, len);
	if (!index)
		return -ENOMEM;
	d->indexes[d->n_indexes++] = index;
	return 0;
}

static int32_t parse_indexes(const struct extres_host *host,
			     struct static_driver *d,
			     const struct extres_param *indexes)
{
	size_t bound = 0;
	const char *s, *comma;
	uint32_t i;
	int32_t r;

	if (indexes->kind == EXTRES_PARAM_SCALAR) {
		bound = 1;
		for (s = indexes->value; *s; s++)
			bound += *s == ',';
	} else if (indexes->kind == EXTRES_PARAM_SEQUENCE) {
		bound = indexes->count;
	} else {
		return host->error(host, "%s:%u:%u: param.indexes must be a list like '0,1,2' or a sequence of indexes",
				   host->config_path, indexes->line, indexes->column);
	}
	d->indexes = calloc(bound ? bound : 1, sizeof(*d->indexes));
	if (!d->indexes)
		return -ENOMEM;

	if (indexes->kind == EXTRES_PARAM_SCALAR) {
		for (s = indexes->value;; s = comma + 1) {
			comma = strchrnul(s, ',');
			r = add_index(host, d, indexes, s, (size_t)(comma - s));
			if (r < 0)
				return r;
			if (*comma == '\0')
				return 0;
		}
	}
	for (i = 0; i < indexes->count; i++) {
		const struct extres_param *item = &indexes->items[i];

		if (item->kind != EXTRES_PARAM_SCALAR)
			return host->error(host, "%s:%u:%u: param.indexes[%u] must be a scalar index",
					   host->config_path, item->line, item->column, i);
		r = add_index(host, d, item, item->value, strlen(item->value));
		if (r < 0)
			return r;
	}
	return 0;
}

static int32_t static_open(const struct extres_host *host,
			   const struct extres_param *params, void **ret_handle)
{
	const char *path = host->config_path;
	const struct extres_param *devices = NULL, *indexes = NULL;
	struct static_driver *d = NULL;
	uint32_t i;
	int32_t r;

	for (i = 0; i < params->count; i++) {
		const struct extres_param *p = &params->items[i];

		/* A later repeat wins, as everywhere in the config. */
		if (strcmp(p->key, "devices") == 0)
			devices = p;
		else if (strcmp(p->key, "indexes") == 0)
			indexes = p;
		/* A mapping under either arrives flattened into dotted keys. */
		else if (text_starts_with(p->key, "devices."))
			return host->error(host, "%s:%u:%u: param.devices must be a sequence, not a mapping (found param.%s)",
					   path, p->line, p->column, p->key);
		else if (text_starts_with(p->key, "indexes."))
			return host->error(host, "%s:%u:%u: param.indexes must be a list, not a mapping (found param.%s)",
					   path, p->line, p->column, p->key);
		else
			host->log(host, EXTRES_LOG_WARNING,
				  "%s:%u:%u: unknown key param.%s ignored", path,
				  p->line, p->column, p->key);
	}
	if (devices && indexes) {
		const struct extres_param *later =
			devices > indexes ? devices : indexes;

		return host->error(host, "%s:%u:%u: param.devices and param.indexes are both given; use one of them",
				   path, later->line, later->column);
	}
	if (!devices && !indexes)
		return host->error(host, "%s: neither param.devices nor param.indexes is given; one of them must list the devices",
				   path);

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

/* The properties that name a device itself, not its place in a list: the
 * ones extresd has always compared on a refresh. */
static const char *const identity_keys[] = {
	"uuid", "path", "pci.bus_id", "serial", "unique_id", NULL,
};

EXTRES_DRIVER_REGISTER(.name = "static", .open = static_open,
		       .discover = static_discover, .close = static_close,
		       .identity_keys = identity_keys)
