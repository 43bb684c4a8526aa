/* SPDX-License-Identifier: MIT */
/*
 * A driver that reports a tree of the size its params say, for the tests of
 * the core's limits on the sum of what drivers report. Each of `infos` infos
 * has `index` (its number, in decimal) and `props` properties p001, p002, ...
 * whose values are `value-bytes` bytes of 'v'; the last info's last such
 * value has `last-value-bytes` bytes instead, and the last info gets `extra`
 * more properties x001, x002, ... of value "x". So the names and values add
 * up to the sum of 5 + digits(i) over the infos, 4 + value-bytes per p
 * property (with last-value-bytes once), and 5 per x property.
 * Params (decimal; default): infos (1), props (0), value-bytes (1),
 * last-value-bytes (value-bytes), extra (0).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <extres/driver.h>

struct sized {
	unsigned long infos, props, value_bytes, last_value_bytes, extra;
	char *value, *last_value;
};

static int32_t number(const struct extres_host *host,
		      const struct extres_param *params, const char *key,
		      unsigned long dflt, unsigned long max, unsigned long *ret)
{
	const char *s = extres_param_scalar(params, key);
	char *end;

	if (!s) {
		*ret = dflt;
		return 0;
	}
	errno = 0;
	*ret = strtoul(s, &end, 10);
	if (errno || end == s || *end || *ret > max)
		return host->error(host, "param %s: '%s' is not 0 to %lu", key,
				   s, max);
	return 0;
}

static char *filled(unsigned long len)
{
	char *s = malloc(len + 1);

	if (s) {
		memset(s, 'v', len);
		s[len] = '\0';
	}
	return s;
}

static void sized_close(void *handle)
{
	struct sized *d = handle;

	free(d->value);
	free(d->last_value);
	free(d);
}

static int32_t sized_open(const struct extres_host *host,
			  const struct extres_param *params, void **ret_handle)
{
	struct sized *d = calloc(1, sizeof(*d));
	int32_t r;

	if (!d)
		return -ENOMEM;
	r = number(host, params, "infos", 1, 1000000, &d->infos);
	if (r == 0)
		r = number(host, params, "props", 0, 999, &d->props);
	if (r == 0)
		r = number(host, params, "value-bytes", 1, 1 << 20,
			   &d->value_bytes);
	if (r == 0)
		r = number(host, params, "last-value-bytes", d->value_bytes,
			   1 << 20, &d->last_value_bytes);
	if (r == 0)
		r = number(host, params, "extra", 0, 999, &d->extra);
	if (r == 0) {
		d->value = filled(d->value_bytes);
		d->last_value = filled(d->last_value_bytes);
		if (!d->value || !d->last_value)
			r = -ENOMEM;
	}
	if (r < 0) {
		sized_close(d);
		return r;
	}
	*ret_handle = d;
	return 0;
}

static int32_t sized_discover(void *handle, struct extres_sink *sink)
{
	const struct sized *d = handle;
	unsigned long i, k;
	char key[24];
	int32_t r = 0;

	for (i = 0; r == 0 && i < d->infos; i++) {
		int last = i + 1 == d->infos;

		snprintf(key, sizeof(key), "%lu", i);
		r = sink->begin_info(sink);
		if (r == 0)
			r = sink->add_property(sink, "index", key);
		for (k = 1; r == 0 && k <= d->props; k++) {
			snprintf(key, sizeof(key), "p%03lu", k);
			r = sink->add_property(sink, key,
					       last && k == d->props ?
						       d->last_value :
						       d->value);
		}
		for (k = 1; r == 0 && last && k <= d->extra; k++) {
			snprintf(key, sizeof(key), "x%03lu", k);
			r = sink->add_property(sink, key, "x");
		}
	}
	return r;
}

static const struct extres_driver_ops ops = {
	.abi_version = EXTRES_DRIVER_ABI_VERSION,
	.struct_size = sizeof(struct extres_driver_ops),
	.name = "mock_sized",
	.open = sized_open,
	.discover = sized_discover,
	.close = sized_close,
};

EXTRES_DRIVER_EXPORT const struct extres_driver_ops *extres_driver_entry(void);
const struct extres_driver_ops *extres_driver_entry(void)
{
	return &ops;
}
