/* SPDX-License-Identifier: MIT */
/*
 * A well-behaved driver: two infos (index 0 and 1, each with a "name").
 * Params, for the tests of the host side:
 *   fail: discover     discover() fails with a message
 *   log: <text>        open() logs <text> as a warning
 *   echo-host: yes     info 0 also shows what the host told open()
 *   run: <path>        open() asks the host whether it may run <path>
 *                      (check_trusted_path) and fails as the host says
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <extres/driver.h>

struct mock {
	const struct extres_host *host;
	int fail_discover;
	int echo_host;
};

static int32_t mock_open(const struct extres_host *host,
			 const struct extres_param *params, void **ret_handle)
{
	const char *fail = extres_param_scalar(params, "fail");
	const char *log = extres_param_scalar(params, "log");
	const char *echo = extres_param_scalar(params, "echo-host");
	const char *run = extres_param_scalar(params, "run");
	struct mock *m;
	int32_t r;

	if (fail && strcmp(fail, "discover") != 0)
		return host->error(host, "unknown fail mode '%s'", fail);
	if (run) {
		r = host->check_trusted_path(host, run, "test program");
		if (r < 0)
			return r;
	}
	/* Allocated so that a missing close() shows up as a leak. */
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->host = host;
	m->fail_discover = fail != NULL;
	m->echo_host = echo && strcmp(echo, "yes") == 0;
	if (log)
		host->log(host, EXTRES_LOG_WARNING, "%s", log);
	*ret_handle = m;
	return 0;
}

static int32_t echo_host(const struct extres_host *host,
			 struct extres_sink *sink)
{
	char num[3][32];
	int32_t r;

	snprintf(num[0], sizeof(num[0]), "%" PRIu64, host->amount);
	snprintf(num[1], sizeof(num[1]), "%" PRIu32, host->abi_version);
	snprintf(num[2], sizeof(num[2]), "%" PRIu32, host->struct_size);
	r = sink->add_property(sink, "resource", host->resource);
	if (r == 0)
		r = sink->add_property(sink, "amount", num[0]);
	if (r == 0)
		r = sink->add_property(sink, "config-path", host->config_path);
	if (r == 0)
		r = sink->add_property(sink, "config-dir", host->config_dir);
	if (r == 0)
		r = sink->add_property(sink, "abi-version", num[1]);
	if (r == 0)
		r = sink->add_property(sink, "host-size", num[2]);
	return r;
}

static int32_t mock_discover(void *handle, struct extres_sink *sink)
{
	static const char *const names[] = { "mock0", "mock1" };
	static const char *const indexes[] = { "0", "1" };
	struct mock *m = handle;
	int32_t r;
	int i;

	if (m->fail_discover) {
		m->host->error(m->host, "discovery failed on purpose");
		return -EIO;
	}
	for (i = 0; i < 2; i++) {
		r = sink->begin_info(sink);
		if (r == 0)
			r = sink->add_property(sink, "index", indexes[i]);
		if (r == 0)
			r = sink->add_property(sink, "name", names[i]);
		if (r == 0 && i == 0 && m->echo_host)
			r = echo_host(m->host, sink);
		if (r < 0)
			return r;
	}
	return 0;
}

static void mock_close(void *handle)
{
	free(handle);
}

static const struct extres_driver_ops ops = {
	.abi_version = EXTRES_DRIVER_ABI_VERSION,
	.struct_size = sizeof(struct extres_driver_ops),
	.name = "mock_good",
	.open = mock_open,
	.discover = mock_discover,
	.close = mock_close,
};

EXTRES_DRIVER_EXPORT const struct extres_driver_ops *extres_driver_entry(void);
const struct extres_driver_ops *extres_driver_entry(void)
{
	return &ops;
}
