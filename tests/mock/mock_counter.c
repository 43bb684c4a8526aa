/* SPDX-License-Identifier: MIT */
/*
 * A driver that tells the tests of another process how the core uses its
 * instances: open() and close() append "open RESOURCE TAG" and "close
 * RESOURCE TAG" lines to the file named by param `log`, and its one info
 * (index 0) shows `tag` and `discoveries`, the number of discover() calls
 * its handle has answered, so that a kept handle counts on while a new one
 * starts again at 1.
 * Params:
 *   log: <path>    required; the file open() and close() append to
 *   tag: <text>    shown as a property and in the log ("-" when unset)
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <extres/driver.h>

struct counter {
	const struct extres_host *host;
	const char *log;
	const char *tag;
	uint64_t discoveries;
};

static int append(const char *path, const char *what, const struct counter *c)
{
	char line[512];
	int fd, n, r = 0;

	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	n = snprintf(line, sizeof(line), "%s %s %s\n", what, c->host->resource,
		     c->tag);
	if (n < 0 || (size_t)n >= sizeof(line))
		r = -ENAMETOOLONG;
	else if (write(fd, line, (size_t)n) != n)
		r = -EIO;
	close(fd);
	return r;
}

static int32_t counter_open(const struct extres_host *host,
			    const struct extres_param *params,
			    void **ret_handle)
{
	const char *tag = extres_param_scalar(params, "tag");
	struct counter *c;
	int r;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->host = host;
	c->log = extres_param_scalar(params, "log");
	c->tag = tag ? tag : "-";
	if (!c->log) {
		free(c);
		return host->error(host, "param log is not set");
	}
	r = append(c->log, "open", c);
	if (r < 0) {
		host->error(host, "cannot append to %s: %s", c->log,
			    strerror(-r));
		free(c);
		return r;
	}
	*ret_handle = c;
	return 0;
}

static int32_t counter_discover(void *handle, struct extres_sink *sink)
{
	struct counter *c = handle;
	char num[24];
	int32_t r;

	snprintf(num, sizeof(num), "%" PRIu64, ++c->discoveries);
	r = sink->begin_info(sink);
	if (r == 0)
		r = sink->add_property(sink, "index", "0");
	if (r == 0)
		r = sink->add_property(sink, "tag", c->tag);
	if (r == 0)
		r = sink->add_property(sink, "discoveries", num);
	return r;
}

static void counter_close(void *handle)
{
	struct counter *c = handle;

	/* Nothing to report a failure to: the test sees the missing line. */
	append(c->log, "close", c);
	free(c);
}

static const struct extres_driver_ops ops = {
	.abi_version = EXTRES_DRIVER_ABI_VERSION,
	.struct_size = sizeof(struct extres_driver_ops),
	.name = "mock_counter",
	.open = counter_open,
	.discover = counter_discover,
	.close = counter_close,
};

EXTRES_DRIVER_EXPORT const struct extres_driver_ops *extres_driver_entry(void);
const struct extres_driver_ops *extres_driver_entry(void)
{
	return &ops;
}
