/* SPDX-License-Identifier: MIT */
/*
 * A driver that breaks the sink's rules in the way param `mode` says:
 *   slash              a key with '/'            dot    a key starting with '.'
 *   dup                a key twice in one info   empty  an empty index
 *   newline            a value with a newline    null   a NULL value
 *   before-begin       a property before any begin_info()
 *   many               5000 infos, past the core's limit
 *   ignore-sink-error  a bad key, then carries on and returns 0
 *   errno              fails with -ENODEV without calling host->error()
 *   positive           returns 1 instead of 0 or -errno
 *   zero               reports no infos at all (not an error)
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <extres/driver.h>

static int32_t mock_open(const struct extres_host *host,
			 const struct extres_param *params, void **ret_handle)
{
	const char *mode = extres_param_scalar(params, "mode");

	if (!mode)
		return host->error(host, "param 'mode' is required");
	/* The param tree stays valid until close(): keep a pointer to it. */
	*ret_handle = (void *)mode;
	return 0;
}

static int32_t one_info(struct extres_sink *sink, const char *key,
			const char *value)
{
	int32_t r = sink->begin_info(sink);

	if (r == 0)
		r = sink->add_property(sink, "index", "0");
	if (r == 0)
		r = sink->add_property(sink, key, value);
	return r;
}

static int32_t mock_discover(void *handle, struct extres_sink *sink)
{
	const char *mode = handle;
	char index[16];
	int32_t r;
	int i;

	if (strcmp(mode, "slash") == 0)
		return one_info(sink, "a/b", "x");
	if (strcmp(mode, "dot") == 0)
		return one_info(sink, ".x", "x");
	if (strcmp(mode, "dup") == 0)
		return one_info(sink, "index", "1");
	if (strcmp(mode, "empty") == 0) {
		r = sink->begin_info(sink);
		return r == 0 ? sink->add_property(sink, "index", "") : r;
	}
	if (strcmp(mode, "newline") == 0)
		return one_info(sink, "name", "two\nlines");
	if (strcmp(mode, "null") == 0)
		return one_info(sink, "name", NULL);
	if (strcmp(mode, "before-begin") == 0)
		return sink->add_property(sink, "index", "0");
	if (strcmp(mode, "many") == 0) {
		for (i = 0; i < 5000; i++) {
			snprintf(index, sizeof(index), "%d", i);
			r = sink->begin_info(sink);
			if (r == 0)
				r = sink->add_property(sink, "index", index);
			if (r < 0)
				return r;
		}
		return 0;
	}
	if (strcmp(mode, "ignore-sink-error") == 0) {
		one_info(sink, "a/b", "x");
		one_info(sink, "good", "x");
		return 0;
	}
	if (strcmp(mode, "errno") == 0)
		return -ENODEV;
	if (strcmp(mode, "positive") == 0)
		return 1;
	return 0;
}

static void mock_close(void *handle)
{
}

static const struct extres_driver_ops ops = {
	.abi_version = EXTRES_DRIVER_ABI_VERSION,
	.struct_size = sizeof(struct extres_driver_ops),
	.name = "mock_bad_props",
	.open = mock_open,
	.discover = mock_discover,
	.close = mock_close,
};

EXTRES_DRIVER_EXPORT const struct extres_driver_ops *extres_driver_entry(void);
const struct extres_driver_ops *extres_driver_entry(void)
{
	return &ops;
}
